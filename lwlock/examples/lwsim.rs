//! `lwsim`: a simulated sweep of one lock over a range of core counts on a named machine profile.
//!
//! ```text
//! RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim \
//!   cargo run --release -p lwlock --example lwsim -- --lock atomic --profile xeon-2s-broadwell
//! ```
//!
//! Options: `--lock atomic|classic|tas|ticket|mcs|qspinlock|user` (default atomic), `--profile NAME|PATH`
//! (default xeon-2s-broadwell), `--cores 1,2,4,8,16,32,64` (a list, or `A..B` for every count),
//! `--oversubscribe K` (K threads per core, default 1), `--duration-us 1000`,
//! `--shared-permille 950`, `--cs-ns 50`, `--think-ns 200`, `--seed 0`,
//! `--shared-load-occupancy F` (override the profile's, for sensitivity checks), `--set K=V[,K=V]`
//! (override any profile cost or model key by name, e.g. `residency_ns=0,jitter=0`), `--seeds N`
//! (run every point with N seeds, from `--seed` on, and print the median with its range instead
//! of one run's counters), `--no-data` (the critical section touches no protected line: an empty
//! lock/unlock loop, as the Linux queued-spinlock commits' microbenchmark), `--no-spin-jumps`
//! (spin-wait loops run one load and one PAUSE at a time: the same figures, slower; see
//! `lwsim`'s `spin_pauses`), `--verbose` (the
//! lock's and the data's line counters and the run's summary, on stderr), `--describe` (print the
//! profile with its sources and exit).
//!
//! Throughput counts only the lock operations begun and finished inside the window
//! (`[0, duration]` of virtual time), and the per-operation columns divide the window's counters
//! by them (`lwlock::reference::sweep`, *The window*); `real s` and `M events/s` are the whole
//! run's.
//!
//! `user` is [`UserSpinLock`] below: a lock written only against `lwlock::sync`, as a user's own
//! lock would be; it runs unchanged on real threads (a normal build runs it once as a smoke test)
//! and on the simulator, where it announces no instruction time and is charged lwlock's default
//! per acquire and release (`lwlock::default_instructions`).

use lwlock::sync::{spin_loop, AtomicU32, Ordering};
use lwlock::{AcquireOrWait, Mode, RawLwLock, Tranche};

/// A user's own lock: test-and-test-and-set with bounded exponential backoff, exclusive only.
/// State: `0` free, `1` held.
#[derive(Debug, Default)]
pub struct UserSpinLock {
    state: AtomicU32,
}

// SAFETY: only the thread whose CAS turned 0 into 1 holds the lock; Acquire CAS / Release store;
// nothing unwinds; conditional_acquire is one CAS.
unsafe impl RawLwLock for UserSpinLock {
    const NAME: &'static str = "user-ttas";
    fn with_tranche(_: Tranche) -> Self {
        UserSpinLock::default()
    }
    fn acquire(&self, mode: Mode) -> bool {
        let mut backoff = 1u32;
        let mut fast = true;
        loop {
            if self.conditional_acquire(mode) {
                return fast;
            }
            fast = false;
            while self.state.load(Ordering::Relaxed) != 0 {
                for _ in 0..backoff {
                    spin_loop();
                }
                backoff = (backoff * 2).min(64);
            }
        }
    }
    fn conditional_acquire(&self, _: Mode) -> bool {
        self.state
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }
    fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait {
        if self.conditional_acquire(mode) {
            return AcquireOrWait::Acquired;
        }
        while self.is_locked() {
            spin_loop();
        }
        AcquireOrWait::Waited
    }
    unsafe fn release(&self, _: Mode) {
        self.state.store(0, Ordering::Release);
    }
    fn is_locked(&self) -> bool {
        self.state.load(Ordering::Relaxed) != 0
    }
    fn is_locked_exclusive(&self) -> bool {
        self.is_locked()
    }
    fn tranche(&self) -> Tranche {
        Tranche::DEFAULT
    }
}

#[cfg(not(lwsim))]
fn main() {
    // The user lock on real threads: two threads, a shared counter.
    let lock = std::sync::Arc::new(UserSpinLock::default());
    let count = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let (l, c) = (lock.clone(), count.clone());
            std::thread::spawn(move || {
                for _ in 0..10_000 {
                    l.acquire(Mode::Exclusive);
                    let v = c.load(std::sync::atomic::Ordering::Relaxed);
                    c.store(v + 1, std::sync::atomic::Ordering::Relaxed);
                    // SAFETY: held exclusively above.
                    unsafe { l.release(Mode::Exclusive) };
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(count.load(std::sync::atomic::Ordering::Relaxed), 20_000);
    eprintln!(
        "{}: ran on real threads. For the simulator build with \
         RUSTFLAGS=\"--cfg lwsim\" CARGO_TARGET_DIR=target/lwsim (see the module docs).",
        UserSpinLock::NAME
    );
    std::process::exit(2);
}

#[cfg(lwsim)]
fn main() {
    use lwlock::default_instructions::DefaultInstructions;
    use lwlock::reference::sweep::{run_lock, Point, Workload};
    use lwlock::reference::{McsLock, QSpinLock, TasLock, TicketLock};
    use lwlock::sync::lwsim::{Profile, SimConfig};
    use lwlock::{RawAtomicLwLock, RawClassicLwLock};

    let mut lock = "atomic".to_string();
    let mut profile = "xeon-2s-broadwell".to_string();
    let mut cores: Vec<usize> = vec![1, 2, 4, 8, 16, 32, 64];
    let mut over = 1usize;
    let mut w = Workload {
        threads: 0,
        duration_ns: 1_000_000,
        shared_permille: 950,
        cs_ns: 50,
        think_ns: 200,
        touch_data: true,
    };
    let mut seed = 0u64;
    let mut describe = false;
    let mut occupancy: Option<f64> = None;
    let mut verbose = false;
    let mut set: Option<String> = None;
    let mut seeds = 1u64;
    let mut spin_jumps = true;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    let num = |s: &str| -> u64 {
        s.parse().unwrap_or_else(|_| {
            eprintln!("not a number: {s}");
            std::process::exit(2)
        })
    };
    while i < args.len() {
        let a = args[i].as_str();
        let v = args.get(i + 1).cloned().unwrap_or_default();
        i += 2;
        match a {
            "--lock" => lock = v,
            "--profile" => profile = v,
            "--cores" => {
                cores = if let Some((a, b)) = v.split_once("..") {
                    (num(a) as usize..=num(b) as usize).collect()
                } else {
                    v.split(',').map(|x| num(x) as usize).collect()
                }
            }
            "--oversubscribe" => over = num(&v) as usize,
            "--duration-us" => w.duration_ns = num(&v) * 1000,
            "--shared-permille" => w.shared_permille = num(&v) as u32,
            "--cs-ns" => w.cs_ns = num(&v),
            "--think-ns" => w.think_ns = num(&v),
            "--seed" => seed = num(&v),
            "--seeds" => seeds = num(&v).max(1),
            "--set" => set = Some(v),
            "--shared-load-occupancy" => {
                occupancy = Some(v.parse::<f64>().unwrap_or_else(|_| {
                    eprintln!("not a fraction: {v}");
                    std::process::exit(2)
                }))
            }
            "--describe" => {
                describe = true;
                i -= 1;
            }
            "--verbose" => {
                verbose = true;
                i -= 1;
            }
            "--no-data" => {
                w.touch_data = false;
                i -= 1;
            }
            "--no-spin-jumps" => {
                spin_jumps = false;
                i -= 1;
            }
            _ => {
                eprintln!("unknown option {a} (see the docs of examples/lwsim.rs)");
                std::process::exit(2);
            }
        }
    }
    let mut prof = Profile::load(&profile).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    if let Some(o) = occupancy {
        prof.set("shared_load_occupancy", o.clamp(0.0, 1.0))
            .expect("a fraction in [0, 1]");
    }
    if let Some(spec) = &set {
        prof.set_all(spec).unwrap_or_else(|e| {
            eprintln!("--set: {e}");
            std::process::exit(2)
        });
    }
    if describe {
        print!("{}", prof.describe());
        return;
    }
    println!(
        "# lwsim: lock {lock}, profile {} ({} hw threads, shared-load occupancy {}), {} us virtual, {} shared/1000, cs {} ns, think {} ns, {over} thread(s) per core, seed {seed}",
        prof.name,
        prof.hw_threads(),
        prof.param(lwlock::sync::lwsim::profile::model::SHARED_LOAD_OCCUPANCY),
        w.duration_ns / 1000,
        w.shared_permille,
        w.cs_ns,
        w.think_ns
    );
    if let Some(spec) = &set {
        println!("# overrides: {spec}");
    }
    let run = |n: usize, w: &Workload, seed: u64| -> Point {
        let cfg = SimConfig::new(prof.clone(), n)
            .seed(seed)
            .spin_jumps(spin_jumps);
        match lock.as_str() {
            "atomic" => run_lock::<RawAtomicLwLock>(cfg, w),
            "classic" => run_lock::<RawClassicLwLock>(cfg, w),
            "tas" => run_lock::<TasLock>(cfg, w),
            "ticket" => run_lock::<TicketLock>(cfg, w),
            "mcs" => run_lock::<McsLock>(cfg, w),
            "qspinlock" => run_lock::<QSpinLock>(cfg, w),
            // A user's lock announces no instruction time: charged the default.
            "user" => run_lock::<DefaultInstructions<UserSpinLock>>(cfg, w),
            other => {
                eprintln!(
                    "unknown lock {other} (atomic, classic, tas, ticket, mcs, qspinlock, user)"
                );
                std::process::exit(2)
            }
        }
    };
    if seeds > 1 {
        println!("| cores | threads | Mops/s median | min | max | lock-line transfers/op median | seeds |");
        println!("|---|---|---|---|---|---|---|");
        for &n in cores.iter().filter(|&&n| n <= prof.hw_threads()) {
            let mut w = w.clone();
            w.threads = n * over;
            let mut pts: Vec<(f64, f64)> = (seed..seed + seeds)
                .map(|s| {
                    let p = run(n, &w, s);
                    (p.throughput(&w) / 1e6, p.lock_transfers_per_op())
                })
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let med = pts[pts.len() / 2];
            println!(
                "| {n} | {} | {:.3} | {:.3} | {:.3} | {:.2} | {seeds} |",
                w.threads,
                med.0,
                pts[0].0,
                pts[pts.len() - 1].0,
                med.1
            );
        }
        return;
    }
    println!("| cores | threads | Mops/s | transfers/op | lock-line transfers/op | line wait/op ns | futex sleeps/op | preemptions | real s | M events/s |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &n in &cores {
        if n > prof.hw_threads() {
            eprintln!(
                "skipping {n} cores: {} has {}",
                prof.name,
                prof.hw_threads()
            );
            continue;
        }
        let mut w = w.clone();
        w.threads = n * over;
        let p: Point = run(n, &w, seed);
        let t = &p.window;
        let ops = p.ops.max(1) as f64;
        println!(
            "| {n} | {} | {:.3} | {:.2} | {:.2} | {:.1} | {:.3} | {} | {:.2} | {:.2} |",
            w.threads,
            p.throughput(&w) / 1e6,
            p.transfers_per_op(),
            p.lock_transfers_per_op(),
            t.line_wait_ps as f64 / 1000.0 / ops,
            t.futex_sleeps as f64 / ops,
            t.preemptions,
            p.report.real.as_secs_f64(),
            p.report.events_per_sec() / 1e6
        );
        if verbose {
            for l in &p.report.lines {
                eprintln!("    {l:?}");
            }
            eprintln!("    {}", p.report.summary());
        }
    }
}
