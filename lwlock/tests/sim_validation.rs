//! lwsim validation on the project's locks: determinism, the TAS/ticket-vs-MCS shape and exact
//! deterministic costs of the atomic and classic LWLocks. (The simulator's own checks, the
//! analytic limits of one hot line and of own lines and its determinism without a lock, are the
//! lwsim crate's tests.) Only in `--cfg lwsim` builds (`ci/sim.sh`):
//!
//! ```text
//! RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim cargo test --release -p lwlock --test sim_validation
//! ```
#![cfg(lwsim)]

use lwlock::reference::sweep::{run_lock, Padded, Point, Workload};
use lwlock::reference::{McsLock, QSpinLock, TasLock, TicketLock};
use lwlock::sync::lwsim::{self, Profile, SimConfig};
use lwlock::{Mode, RawAtomicLwLock, RawClassicLwLock, RawLwLock};
use std::sync::Arc;

fn profile(name: &str) -> Profile {
    Profile::builtin(name).unwrap()
}

fn mix(threads: usize, duration_ns: u64) -> Workload {
    Workload {
        threads,
        duration_ns,
        shared_permille: 950,
        cs_ns: 50,
        think_ns: 200,
        touch_data: true,
    }
}

/// Same seed and profile: identical counters, to the picosecond.
#[test]
fn determinism_same_seed_same_counters() {
    let p = profile("xeon-2s-broadwell");
    let w = mix(16, 200_000);
    let a = run_lock::<RawAtomicLwLock>(SimConfig::new(p.clone(), 16).seed(7), &w);
    let b = run_lock::<RawAtomicLwLock>(SimConfig::new(p.clone(), 16).seed(7), &w);
    assert_eq!(a.ops, b.ops);
    assert_eq!(a.report.fingerprint(), b.report.fingerprint());
    // With more threads than cores: the classic lock sleeps on futexes and wakeups queue on
    // busy cores; a TAS lock never sleeps, so slices end and holders get preempted.
    let w = Workload {
        threads: 12,
        duration_ns: 8_000_000,
        shared_permille: 500,
        cs_ns: 2_000,
        think_ns: 500,
        touch_data: true,
    };
    let a = run_lock::<RawClassicLwLock>(SimConfig::new(p.clone(), 4).seed(3), &w);
    let b = run_lock::<RawClassicLwLock>(SimConfig::new(p.clone(), 4).seed(3), &w);
    assert_eq!(a.ops, b.ops);
    assert_eq!(a.report.fingerprint(), b.report.fingerprint());
    let t = a.report.total();
    assert!(
        t.futex_sleeps > 0 && t.context_switches() > 0,
        "{}",
        a.report.summary()
    );
    let a = run_lock::<TasLock>(SimConfig::new(p.clone(), 4).seed(3), &w);
    let b = run_lock::<TasLock>(SimConfig::new(p.clone(), 4).seed(3), &w);
    assert_eq!(a.report.fingerprint(), b.report.fingerprint());
    assert!(a.report.total().preemptions > 0, "{}", a.report.summary());
}

/// The child of [`determinism_across_processes`]: prints the fingerprint of one run.
#[test]
#[ignore = "run as a child process by determinism_across_processes"]
fn determinism_child() {
    if std::env::var_os("LWSIM_DETERMINISM_CHILD").is_none() {
        return;
    }
    let p = run_lock::<RawAtomicLwLock>(
        SimConfig::new(profile("xeon-2s-broadwell"), 64),
        &mix(64, 10_000_000),
    );
    println!("FINGERPRINT {} {:?}", p.ops, p.report.fingerprint());
}

/// Two processes (different ASLR layouts: no result may depend on an address beyond which
/// line it is in) give identical counters. Found a PRNG seeded by an address in `s_lock`.
#[test]
fn determinism_across_processes() {
    let exe = std::env::current_exe().unwrap();
    let run = || {
        let out = std::process::Command::new(&exe)
            .args(["determinism_child", "--exact", "--ignored", "--nocapture"])
            .env("LWSIM_DETERMINISM_CHILD", "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        stdout
            .lines()
            .find(|l| l.starts_with("FINGERPRINT"))
            .unwrap_or_else(|| panic!("child printed no fingerprint: {stdout}"))
            .to_string()
    };
    let (a, b) = (run(), run());
    assert_eq!(a, b, "two processes disagree");
}

thread_local! {
    /// Every [`LoggedTas`] release's virtual time (ns), in the order they ran.
    static RELEASES: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The TAS lock with a log: each release records the clock at which it returned, so the test
/// can count the window's operations apart from the sweep's own counting.
#[derive(Debug, Default)]
struct LoggedTas(TasLock);

// SAFETY: forwards to the TAS lock; the log is written by the releasing thread after its
// release (all simulated threads run on the simulation's one OS thread, whose log it is).
unsafe impl RawLwLock for LoggedTas {
    const NAME: &'static str = "logged-tas";
    fn with_tranche(t: lwlock::Tranche) -> Self {
        LoggedTas(TasLock::with_tranche(t))
    }
    fn acquire(&self, mode: Mode) -> bool {
        self.0.acquire(mode)
    }
    fn conditional_acquire(&self, mode: Mode) -> bool {
        self.0.conditional_acquire(mode)
    }
    fn acquire_or_wait(&self, mode: Mode) -> lwlock::AcquireOrWait {
        self.0.acquire_or_wait(mode)
    }
    unsafe fn release(&self, mode: Mode) {
        // SAFETY: the caller holds the lock in `mode`.
        unsafe { self.0.release(mode) };
        let t = lwlock::sync::clock_nanos();
        RELEASES.with(|r| r.borrow_mut().push(t));
    }
    fn is_locked(&self) -> bool {
        self.0.is_locked()
    }
    fn is_locked_exclusive(&self) -> bool {
        self.0.is_locked_exclusive()
    }
    fn tranche(&self) -> lwlock::Tranche {
        self.0.tranche()
    }
}

/// The sweep counts only the operations begun and finished inside the window (as lwbench's
/// engine counts between its window's edges), not every completed one: a TAS lock at 64
/// threads, whose waiters at the deadline all finish an operation after it, counts exactly the
/// releases the log places at or before the deadline, the tail is most of the threads, and the
/// per-operation counters are the window's (less traffic than the whole run's). Deterministic.
#[test]
fn sweep_counts_only_the_window() {
    let p = profile("xeon-2s-broadwell");
    let w = Workload::exclusive_short(64);
    let w = Workload {
        duration_ns: 100_000,
        ..w
    };
    let run = || {
        RELEASES.with(|r| r.borrow_mut().clear());
        let pt = run_lock::<LoggedTas>(SimConfig::new(p.clone(), 64).seed(5), &w);
        (pt, RELEASES.with(|r| r.take()))
    };
    let (a, log) = run();
    let inside = log.iter().filter(|&&t| t <= w.duration_ns).count() as u64;
    println!(
        "tas 64 threads, 100 us: {} ops inside the window, {} after it (every completed one: {})",
        a.ops,
        a.tail_ops,
        log.len()
    );
    assert_eq!(a.ops, inside, "ops counted != releases inside the window");
    assert_eq!(a.ops + a.tail_ops, log.len() as u64);
    assert_eq!(a.per_thread.iter().sum::<u64>(), a.ops);
    assert!(
        a.tail_ops >= 32,
        "most of the 64 threads wait at the deadline: tail {}",
        a.tail_ops
    );
    let lock_window = a.window_line("lock").unwrap().transfers();
    let lock_run = a.report.line("lock").unwrap().transfers();
    assert!(
        lock_window < lock_run,
        "the window's lock-line transfers ({lock_window}) must exclude the tail's ({lock_run} in all)"
    );
    let (b, _) = run();
    assert_eq!(
        (a.ops, &a.per_thread, a.tail_ops),
        (b.ops, &b.per_thread, b.tail_ops)
    );
    assert_eq!(a.window, b.window);
    assert_eq!(a.window_lines, b.window_lines);
}

/// The explicit spin-wait hint (`lwlock::sync::spin_wait_while`, lwsim's spin jumps): the locks
/// that spin on a line they hold (MCS and the queued spinlock on their own queue node and the
/// lock word, the ticket lock on `serving`) give the same figures with and without jumps, to the
/// picosecond, counter by counter, including the window's counters read while some threads are
/// in a jump; only the scheduler's steps drop (several-fold for MCS and the queued spinlock,
/// whose waiters spin on a line nobody writes until the hand-off; less for the ticket lock, whose
/// every waiter re-fetches `serving` at each hand-off, served by the L3 in overlap on this
/// profile, so its waiters spin briefly between hand-offs). The TAS lock (every probe an RMW)
/// takes no jump: even its steps are the same.
#[test]
fn spin_jumps_leave_every_figure_unchanged() {
    fn both<L: RawLwLock + 'static>(p: &Profile, cores: usize, w: &Workload) -> (u64, u64) {
        let run = |on: bool| run_lock::<L>(SimConfig::new(p.clone(), cores).spin_jumps(on), w);
        let (a, b) = (run(true), run(false));
        assert_eq!(a.per_thread, b.per_thread, "{}", L::NAME);
        assert_eq!(a.tail_ops, b.tail_ops, "{}", L::NAME);
        assert_eq!(a.window, b.window, "{}", L::NAME);
        assert_eq!(a.window_lines, b.window_lines, "{}", L::NAME);
        assert_eq!(a.report.per_core, b.report.per_core, "{}", L::NAME);
        assert_eq!(a.report.lines, b.report.lines, "{}", L::NAME);
        assert_eq!(a.report.end_ps, b.report.end_ps, "{}", L::NAME);
        println!(
            "{}: {} ops, steps {} with jumps, {} without",
            L::NAME,
            a.ops,
            a.report.steps,
            b.report.steps
        );
        (a.report.steps, b.report.steps)
    }
    let bw = profile("xeon-2s-broadwell");
    let w = Workload {
        duration_ns: 150_000,
        ..mix(40, 0)
    };
    for (with, without) in [both::<McsLock>(&bw, 40, &w), both::<QSpinLock>(&bw, 40, &w)] {
        assert!(
            with * 3 < without,
            "spin jumps saved few steps: {with} vs {without}"
        );
    }
    let (with, without) = both::<TicketLock>(&bw, 40, &w);
    assert!(
        with * 5 < without * 4,
        "spin jumps saved few steps: {with} vs {without}"
    );
    let (with, without) = both::<TasLock>(&bw, 40, &w);
    assert_eq!(with, without);
    // Oversubscribed (threads queue for cores: jumps end at arrivals and balances).
    let over = Workload {
        threads: 24,
        cs_ns: 500,
        ..w.clone()
    };
    both::<McsLock>(&bw, 8, &over);
    both::<QSpinLock>(&bw, 8, &over);
    // The published loop on the Westmere-EX profile (no gap between operations).
    let wm = profile("xeon-4s-westmere-ex");
    let tight = Workload {
        threads: 6,
        duration_ns: 100_000,
        shared_permille: 0,
        cs_ns: 0,
        think_ns: 0,
        touch_data: false,
    };
    both::<QSpinLock>(&wm, 6, &tight);
}

fn exclusive_point<L: RawLwLock + 'static>(p: &Profile, cores: usize) -> Point {
    run_lock::<L>(
        SimConfig::new(p.clone(), cores),
        &Workload::exclusive_short(cores),
    )
}

/// TAS and ticket locks collapse past a knee as cores grow; MCS stays flat (within a socket, and
/// again across both: a FIFO hand-off to the other socket costs a remote transfer, a NUMA step
/// of the level, not a collapse).
#[test]
fn shape_tas_and_ticket_collapse_mcs_stays_flat() {
    let p = profile("xeon-2s-broadwell");
    let cores = [1, 2, 4, 8, 16, 32, 64];
    let mut rows = Vec::new();
    for &n in &cores {
        let tas = exclusive_point::<TasLock>(&p, n).ops as f64;
        let ticket = exclusive_point::<TicketLock>(&p, n).ops as f64;
        let mcs = exclusive_point::<McsLock>(&p, n).ops as f64;
        println!("{n:>2} cores: tas {tas:>8} ticket {ticket:>8} mcs {mcs:>8}");
        rows.push((tas, ticket, mcs));
    }
    let peak = |f: fn(&(f64, f64, f64)) -> f64| rows.iter().map(f).fold(0.0, f64::max);
    let last = rows.last().unwrap();
    let (tas_peak, ticket_peak, mcs_peak) = (peak(|r| r.0), peak(|r| r.1), peak(|r| r.2));
    // Collapse: at 64 cores well below the peak.
    assert!(last.0 < 0.6 * tas_peak, "tas did not collapse: {rows:?}");
    assert!(
        last.1 < 0.6 * ticket_peak,
        "ticket did not collapse: {rows:?}"
    );
    // Flat: MCS within one socket (up to 16 cores) stays near its peak, 64 cores near 32, and
    // it beats both spinlocks there.
    assert!(rows[4].2 > 0.75 * mcs_peak, "mcs not flat: {rows:?}");
    assert!(
        last.2 > 0.75 * rows[5].2,
        "mcs not flat across sockets: {rows:?}"
    );
    assert!(last.2 > 1.5 * last.0 && last.2 > 1.5 * last.1, "{rows:?}");
}

/// The shape of the one published lock curve the project holds (Linux commit 2c83e8e9's
/// queued-spinlock table on a 4-socket Westmere-EX, `bench/assets/published/`): 3–8 tasks on
/// one node doing nothing but lock and unlock, 6.67–7.19 M operations/s, flat. On the profile of
/// that machine the queued spinlock's curve is flat too (8 cores within 10 % of 4); its level is
/// the documented finding (results.md), not asserted here. The check can fail: under model 2's
/// structural choices (`model=2`: Shared re-fetches served one at a time) the ticket lock's curve
/// falls with every core (8 cores below 0.6 of 3) and the check rejects it. Under model 3 the
/// ticket lock's waiters re-fetch in overlap from the L3 and it falls only 8 % from 3 to 8 cores
/// (results.md), so it would pass the flatness check too: the check tells a flat curve from a
/// falling one, not a queue lock from a ticket lock. No published ticket-lock curve on this
/// machine was collected.
#[test]
fn shape_qspinlock_flat_on_one_westmere_ex_node_as_published() {
    let p = profile("xeon-4s-westmere-ex");
    let mut p2 = p.clone();
    p2.set_all("model=2").unwrap();
    let point = |p: &Profile, n: usize, qspin: bool| {
        let w = Workload {
            threads: n,
            duration_ns: 300_000,
            shared_permille: 0,
            cs_ns: 0,
            think_ns: 0,
            touch_data: true,
        };
        let cfg = SimConfig::new(p.clone(), n);
        if qspin {
            run_lock::<QSpinLock>(cfg, &w).ops as f64
        } else {
            run_lock::<TicketLock>(cfg, &w).ops as f64
        }
    };
    let flat = |v: &[f64]| (v[5] / v[1] - 1.0).abs() < 0.1;
    let q: Vec<f64> = (3..=8).map(|n| point(&p, n, true)).collect();
    let t2: Vec<f64> = (3..=8).map(|n| point(&p2, n, false)).collect();
    println!("3..8 cores: qspinlock {q:?}; under model=2 ticket {t2:?} (ops in 300 us)");
    assert!(flat(&q), "qspinlock not flat from 4 to 8 cores: {q:?}");
    assert!(
        t2[5] < 0.6 * t2[0] && !flat(&t2),
        "the check does not reject a falling curve: {t2:?}"
    );
}

/// One thread, `n` shared acquire+release pairs after a warm-up; per-pair counts of the lock line.
fn uncontended_pairs<L: RawLwLock + 'static>(mode: Mode, n: u64) -> (f64, f64, f64, f64, u64) {
    let p = profile("xeon-2s-broadwell");
    let r = lwsim::run(SimConfig::new(p, 1), move || {
        let lock = Arc::new(Padded(L::with_tranche(lwlock::Tranche::DEFAULT)));
        let l = lock.clone();
        lwlock::sync::thread::spawn(move || {
            // Warm-up: the record registration and the line's first touch.
            l.0.acquire(mode);
            // SAFETY: held in `mode` by this thread.
            unsafe { l.0.release(mode) };
            lwsim::watch("lock", &l.0 as *const L);
            for _ in 0..n {
                l.0.acquire(mode);
                // SAFETY: held in `mode` by this thread.
                unsafe { l.0.release(mode) };
            }
        })
        .join()
        .unwrap();
    });
    let line = r.line("lock").unwrap();
    let f = n as f64;
    (
        line.loads as f64 / f,
        line.stores as f64 / f,
        line.rmws as f64 / f,
        line.hits as f64 / f,
        line.transfers(),
    )
}

/// An uncontended atomic-LWLock shared acquire+release is exactly what its algorithm implies on
/// its one line: one load and one CAS (`LWLockAttemptLock`), one `fetch_sub` (`LWLockRelease`),
/// all hits. The classic lock takes its spinlock in both: per acquire and per release one TAS
/// (`swap`), one store of the `held` mirror and the unlock store.
#[test]
fn cost_uncontended_shared_acquire_release() {
    let (loads, stores, rmws, hits, transfers) =
        uncontended_pairs::<RawAtomicLwLock>(Mode::Shared, 100);
    assert_eq!(
        (loads, stores, rmws, transfers),
        (1.0, 0.0, 2.0, 0),
        "atomic"
    );
    assert_eq!(hits, 3.0);
    let (cl, cs, cr, ch, ct) = uncontended_pairs::<RawClassicLwLock>(Mode::Shared, 100);
    // debug builds add the `debug_assert!` load in SpinLock::unlock.
    let extra = if cfg!(debug_assertions) { 2.0 } else { 0.0 };
    assert_eq!((cl, cs, cr, ct), (extra, 4.0, 2.0, 0), "classic");
    assert_eq!(ch, 6.0 + extra);
    // Fewer ownership-requiring accesses (RMWs + stores) than the classic lock.
    assert!(rmws + stores < cr + cs);
    // Exclusive: the same counts for the atomic lock.
    let (l, s, r, _, _) = uncontended_pairs::<RawAtomicLwLock>(Mode::Exclusive, 100);
    assert_eq!((l, s, r), (1.0, 0.0, 2.0));
}

/// Virtual time (ps) of one uncontended acquire+release in `mode` on profile `p`, one thread,
/// averaged over `n` pairs after a warm-up (exact: every pair costs the same).
fn uncontended_pair_ps<L: RawLwLock + 'static>(p: Profile, mode: Mode, n: u64) -> u64 {
    let out = Arc::new(std::sync::Mutex::new(0u64));
    let o = out.clone();
    lwsim::run(SimConfig::new(p, 1), move || {
        let o = o.clone();
        lwlock::sync::thread::spawn(move || {
            let lock = Padded(L::with_tranche(lwlock::Tranche::DEFAULT));
            // Warm-up: the record registration and the line's first touch.
            lock.0.acquire(mode);
            // SAFETY: held in `mode` by this thread.
            unsafe { lock.0.release(mode) };
            let before = lwsim::totals().unwrap();
            for _ in 0..n {
                lock.0.acquire(mode);
                // SAFETY: held in `mode` by this thread.
                unsafe { lock.0.release(mode) };
            }
            let d = lwsim::totals().unwrap().since(&before);
            assert_eq!(d.busy_ps % n, 0, "pairs differ in cost");
            *o.lock().unwrap() = d.busy_ps / n;
        })
        .join()
        .unwrap();
    });
    let v = *out.lock().unwrap();
    v
}

/// The reference locks' instruction time (the counts in each lock's module docs, from the release
/// build's disassembly): an uncontended acquire+release costs its memory operations (all hits)
/// plus its annotated instructions times `instruction_ns`: TAS a swap, a store and 7; ticket a
/// `fetch_add`, two loads, a store and 7; MCS two stores, a swap, a load, a CAS and 26; the queued
/// spinlock a CAS, the unlock's store and 7. With instruction time off, the memory operations alone.
#[test]
fn cost_uncontended_reference_pairs_are_memory_ops_plus_instructions() {
    use lwlock::sync::lwsim::profile::cost;
    if cfg!(debug_assertions) {
        return; // the debug build's `debug_assert!` loads add memory operations
    }
    let p = profile("this-machine");
    let per = (p.get("instruction_ns").unwrap() * 1000.0).round() as u64;
    let (load, store, rmw) = (
        p.ps(cost::LOAD_HIT),
        p.ps(cost::STORE_HIT),
        p.ps(cost::RMW_HIT),
    );
    let cases = [
        ("tas", rmw + store, 7),
        ("ticket", rmw + 2 * load + store, 7),
        ("mcs", 2 * rmw + 2 * store + load, 26),
        ("qspinlock", rmw + store, 7),
    ];
    let pairs = |p: &Profile| {
        [
            uncontended_pair_ps::<TasLock>(p.clone(), Mode::Exclusive, 50),
            uncontended_pair_ps::<TicketLock>(p.clone(), Mode::Exclusive, 50),
            uncontended_pair_ps::<McsLock>(p.clone(), Mode::Exclusive, 50),
            uncontended_pair_ps::<QSpinLock>(p.clone(), Mode::Exclusive, 50),
        ]
    };
    for ((name, mem, instr), got) in cases.iter().zip(pairs(&p)) {
        println!("{name:<10} simulated {got} ps = {mem} memory + {instr} x {per}");
        assert_eq!(got, mem + instr * per, "{name}");
    }
    let mut off = p.clone();
    off.set("instruction_ns", 0.0).unwrap();
    for ((name, mem, _), got) in cases.iter().zip(pairs(&off)) {
        assert_eq!(got, *mem, "{name} without instruction time");
    }
}

/// The uncontended acquire+release costs exactly its memory operations (all hits) plus its
/// annotated instructions times the profile's `instruction_ns`: atomic, one load, two RMWs and
/// 16 (shared) or 13 (exclusive) instructions; classic, two TAS RMWs, four stores and 95 or 90
/// instructions (the counts of the release build, docs/design.md "Instruction time"). On
/// this-machine the classic lock is then the costlier by more than 2x (measured: 2.7x shared,
/// 2.8x exclusive); with instruction time off the two nearly tie (1.10x).
#[test]
fn cost_uncontended_pair_is_memory_ops_plus_instructions() {
    use lwlock::sync::lwsim::profile::cost;
    if cfg!(debug_assertions) {
        return; // the debug build's `debug_assert!` loads add memory operations
    }
    let p = profile("this-machine");
    let per = (p.get("instruction_ns").unwrap() * 1000.0).round() as u64;
    assert!(per > 0, "this-machine has instruction time");
    let (load, store, rmw) = (
        p.ps(cost::LOAD_HIT),
        p.ps(cost::STORE_HIT),
        p.ps(cost::RMW_HIT),
    );
    let cases = [
        ("atomic shared", load + 2 * rmw, 16, 6.42),
        ("atomic exclusive", load + 2 * rmw, 13, 6.12),
        ("classic shared", 2 * rmw + 4 * store, 95, 17.19),
        ("classic exclusive", 2 * rmw + 4 * store, 90, 16.98),
    ];
    let got = [
        uncontended_pair_ps::<RawAtomicLwLock>(p.clone(), Mode::Shared, 50),
        uncontended_pair_ps::<RawAtomicLwLock>(p.clone(), Mode::Exclusive, 50),
        uncontended_pair_ps::<RawClassicLwLock>(p.clone(), Mode::Shared, 50),
        uncontended_pair_ps::<RawClassicLwLock>(p.clone(), Mode::Exclusive, 50),
    ];
    for ((name, mem, instr, measured), got) in cases.iter().zip(got) {
        println!(
            "{name:<18} simulated {:.2} ns ({:.2} memory + {instr} x {:.3}), measured {measured:.2} \
             ns ({:+.0} %)",
            got as f64 / 1000.0,
            *mem as f64 / 1000.0,
            per as f64 / 1000.0,
            (got as f64 / 1000.0 / measured - 1.0) * 100.0
        );
        assert_eq!(got, mem + instr * per, "{name}");
    }
    assert!(got[2] > 2 * got[0] && got[3] > 2 * got[1], "{got:?}");
    // Off: the memory operations alone, and the two locks nearly tie.
    let mut off = p.clone();
    off.set("instruction_ns", 0.0).unwrap();
    let a = uncontended_pair_ps::<RawAtomicLwLock>(off.clone(), Mode::Shared, 50);
    let c = uncontended_pair_ps::<RawClassicLwLock>(off, Mode::Shared, 50);
    assert_eq!((a, c), (cases[0].1, cases[2].1));
    assert!(c < a * 12 / 10, "{a} {c}");
}

/// A test-and-set lock with the reference TAS lock's memory operations (a swap, a release store)
/// and no instruction annotations: a user's lock, as written against `lwlock::sync`.
#[derive(Debug, Default)]
struct BareTas(lwlock::sync::AtomicBool);

// SAFETY: only the thread whose swap turned `false` into `true` holds it; Acquire swap / Release
// store; nothing unwinds; the conditional acquire is one swap.
unsafe impl RawLwLock for BareTas {
    const NAME: &'static str = "bare-tas";
    fn with_tranche(_: lwlock::Tranche) -> Self {
        BareTas::default()
    }
    fn acquire(&self, mode: Mode) -> bool {
        let mut fast = true;
        while !self.conditional_acquire(mode) {
            fast = false;
            lwlock::sync::spin_loop();
        }
        fast
    }
    fn conditional_acquire(&self, _: Mode) -> bool {
        !self.0.swap(true, lwlock::sync::Ordering::Acquire)
    }
    fn acquire_or_wait(&self, mode: Mode) -> lwlock::AcquireOrWait {
        self.acquire(mode);
        lwlock::AcquireOrWait::Acquired
    }
    unsafe fn release(&self, _: Mode) {
        self.0.store(false, lwlock::sync::Ordering::Release);
    }
    fn is_locked(&self) -> bool {
        self.0.load(lwlock::sync::Ordering::Relaxed)
    }
    fn is_locked_exclusive(&self) -> bool {
        self.is_locked()
    }
    fn tranche(&self) -> lwlock::Tranche {
        lwlock::Tranche::DEFAULT
    }
}

// A user's bare lock announces nothing; the annotated locks announce theirs.
const _: () = {
    assert!(!BareTas::INSTRUCTIONS_ANNOUNCED);
    assert!(TasLock::INSTRUCTIONS_ANNOUNCED && TicketLock::INSTRUCTIONS_ANNOUNCED);
    assert!(McsLock::INSTRUCTIONS_ANNOUNCED && QSpinLock::INSTRUCTIONS_ANNOUNCED);
    assert!(RawAtomicLwLock::INSTRUCTIONS_ANNOUNCED && RawClassicLwLock::INSTRUCTIONS_ANNOUNCED);
};

/// The default instruction time of a lock that announces none (`lwlock::default_instructions`):
/// wrapped in `DefaultInstructions`, the unannotated TAS lock's uncontended pair costs its
/// memory operations plus 6 + 1 instructions, exactly the annotated reference TAS lock's cost;
/// unwrapped, its memory operations alone. The project's annotated locks say so
/// (`INSTRUCTIONS_ANNOUNCED`) and the wrapper charges them nothing: each one's pair costs the
/// same picoseconds wrapped or not, so their figures are untouched.
#[test]
fn cost_a_users_lock_is_charged_the_default_instruction_time() {
    use lwlock::default_instructions::{
        DefaultInstructions as D, DEFAULT_ACQUIRE_INSTRUCTIONS, DEFAULT_RELEASE_INSTRUCTIONS,
    };
    use lwlock::sync::lwsim::profile::cost;
    if cfg!(debug_assertions) {
        return; // the debug build's `debug_assert!` loads add memory operations
    }
    let p = profile("this-machine");
    let per = (p.get("instruction_ns").unwrap() * 1000.0).round() as u64;
    assert!(per > 0, "this-machine has instruction time");
    let (store, rmw) = (p.ps(cost::STORE_HIT), p.ps(cost::RMW_HIT));
    let x = Mode::Exclusive;
    let bare = uncontended_pair_ps::<BareTas>(p.clone(), x, 50);
    let charged = uncontended_pair_ps::<D<BareTas>>(p.clone(), x, 50);
    let tas = uncontended_pair_ps::<TasLock>(p.clone(), x, 50);
    println!("bare {bare} ps, with the default {charged} ps, the annotated TAS lock {tas} ps");
    assert_eq!(bare, rmw + store);
    let n = u64::from(DEFAULT_ACQUIRE_INSTRUCTIONS + DEFAULT_RELEASE_INSTRUCTIONS);
    assert_eq!(n, 7);
    assert_eq!(charged, rmw + store + n * per);
    assert_eq!(charged, tas);
    // The annotated locks (announced: checked at compile time below) cost the same wrapped, to
    // the picosecond.
    let same = [
        (tas, uncontended_pair_ps::<D<TasLock>>(p.clone(), x, 50)),
        (
            uncontended_pair_ps::<TicketLock>(p.clone(), x, 50),
            uncontended_pair_ps::<D<TicketLock>>(p.clone(), x, 50),
        ),
        (
            uncontended_pair_ps::<McsLock>(p.clone(), x, 50),
            uncontended_pair_ps::<D<McsLock>>(p.clone(), x, 50),
        ),
        (
            uncontended_pair_ps::<QSpinLock>(p.clone(), x, 50),
            uncontended_pair_ps::<D<QSpinLock>>(p.clone(), x, 50),
        ),
    ];
    for m in [Mode::Shared, Mode::Exclusive] {
        assert_eq!(
            uncontended_pair_ps::<RawAtomicLwLock>(p.clone(), m, 50),
            uncontended_pair_ps::<D<RawAtomicLwLock>>(p.clone(), m, 50)
        );
        assert_eq!(
            uncontended_pair_ps::<RawClassicLwLock>(p.clone(), m, 50),
            uncontended_pair_ps::<D<RawClassicLwLock>>(p.clone(), m, 50)
        );
    }
    for (i, (a, b)) in same.iter().enumerate() {
        assert_eq!(a, b, "reference lock {i}");
    }
}
