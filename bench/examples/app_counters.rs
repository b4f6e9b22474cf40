//! An application benchmark of the drop-in types: what a program gets when it switches from
//! parking_lot. No PostgreSQL counterpart (PostgreSQL has no mutex or reader-writer lock type).
//!
//! N threads each loop: lock → update one of 64 counters in a shared `Vec<u64>` → unlock → a
//! little private work (a few rounds of a PRNG). A write also records its thread in the vector
//! and counts a handover when the previous write was another thread's, so each cell reports the
//! writes per handover: how long one thread keeps the lock's line and the data (a lock that lets
//! the releasing thread re-take it runs long; one that passes it on every release runs 1), and
//! the process's context switches per 1,000 operations (`getrusage`: how often threads sleep or
//! are preempted).
//! Three scenarios:
//!
//! * `mutex`: a `Mutex<Vec<u64>>`;
//! * `rwlock-write`: an `RwLock<Vec<u64>>`, every operation a write;
//! * `rwlock-50r`: the same lock, half the operations reads of one counter.
//!
//! Each scenario runs lwlock's defaults (`lwlock::Mutex`, `lwlock::RwLock`: the empty-yield
//! policy), the previous defaults (`lwlock::AdaptiveMutex`, `lwlock::AdaptiveRwLock`: the same
//! spin without the empty-yield rule),
//! parking_lot 0.12 and std, in one run;
//! each trial runs every lock once, in an order rotated per trial. The table gives operations
//! per second (median of the trials), each cell's ratio to parking_lot, the lowest and highest
//! trial, the median writes per handover and context switches per 1,000 operations. A second
//! table per scenario says where the time goes: the context switches split into voluntary (the
//! thread blocked: a futex sleep) and involuntary (preempted, or yielded with another thread to
//! run), the process's CPU per operation with the kernel's share (`getrusage`), and, built with
//! `--features stats`, lwlock's sleeps on the lock per 1,000 operations. After each trial the
//! counters' sum must equal the writes counted, or the program exits 1.
//!
//! ```sh
//! cargo run --release -p bench [--features stats] --example app_counters -- [--threads 2,16,64] \
//!     [--duration 300ms] [--trials 5] [--work 16] [--scenarios mutex,rwlock-write,rwlock-50r] \
//!     [--out DIR]
//! ```
//! A bad argument exits 2 with a message naming it.
//!
//! `--out DIR` also writes every trial to `DIR/results.csv` (`workload` = the scenario, `threads`,
//! `lock` = `default`, `previous`, `parking-lot` or `std`, `trial`, `txn_per_sec` = operations
//! per second) and `DIR/meta.json`, the layout `bench/scripts/paired-ratios.py` reads: trial k of
//! every lock ran side by side (the rotated order), so `paired-ratios.py DIR --over parking-lot`
//! puts a distribution-free interval around each cell's median ratio.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Counters in the shared vector.
const COUNTERS: usize = 64;
/// Two more slots of the vector, written under the exclusive lock: the last writer (its thread
/// number + 1) and the number of writes whose writer differs from the previous one (handovers).
const LAST: usize = COUNTERS;
const HANDOVERS: usize = COUNTERS + 1;

/// Exclusive: add one to counter `i`, and count a handover if `me` did not make the last write.
#[inline]
fn bump_as(v: &mut [u64], i: usize, me: u64) {
    v[i] += 1;
    if v[LAST] != me {
        v[LAST] = me;
        v[HANDOVERS] += 1;
    }
}

/// One lock type over the shared counters.
trait Counters: Send + Sync + 'static {
    /// The column's name.
    const NAME: &'static str;
    fn new(v: Vec<u64>) -> Self;
    /// Exclusive: add one to counter `i`, as thread `me` (1-based; see [`bump_as`]).
    fn bump(&self, i: usize, me: u64);
    /// Shared (exclusive for a mutex): read counter `i`.
    fn get(&self, i: usize) -> u64;
    /// The counters' sum and the handovers (after the threads stopped).
    fn sum(&self) -> (u64, u64);
    /// lwlock's counters of the lock (the `stats` feature); `None` for the others.
    fn stats(&self) -> Option<lwlock::LockStats>;
}

macro_rules! mutex_counters {
    ($ty:ident, $name:literal, $m:ty, |$x:ident| $lock:expr, $stats:expr) => {
        struct $ty($m);
        impl Counters for $ty {
            const NAME: &'static str = $name;
            fn new(v: Vec<u64>) -> Self {
                $ty(<$m>::new(v))
            }
            #[inline]
            fn bump(&self, i: usize, me: u64) {
                let $x = &self.0;
                let mut g = $lock;
                bump_as(&mut g, i, me);
            }
            #[inline]
            fn get(&self, i: usize) -> u64 {
                let $x = &self.0;
                let g = $lock;
                g[i]
            }
            fn sum(&self) -> (u64, u64) {
                let $x = &self.0;
                let g = $lock;
                (g[..COUNTERS].iter().sum(), g[HANDOVERS])
            }
            fn stats(&self) -> Option<lwlock::LockStats> {
                let f: fn(&$ty) -> Option<lwlock::LockStats> = $stats;
                f(self)
            }
        }
    };
}

macro_rules! rwlock_counters {
    ($ty:ident, $name:literal, $l:ty, |$x:ident| $read:expr, $write:expr, $stats:expr) => {
        struct $ty($l);
        impl Counters for $ty {
            const NAME: &'static str = $name;
            fn new(v: Vec<u64>) -> Self {
                $ty(<$l>::new(v))
            }
            #[inline]
            fn bump(&self, i: usize, me: u64) {
                let $x = &self.0;
                let mut g = $write;
                bump_as(&mut g, i, me);
            }
            #[inline]
            fn get(&self, i: usize) -> u64 {
                let $x = &self.0;
                let g = $read;
                g[i]
            }
            fn sum(&self) -> (u64, u64) {
                let $x = &self.0;
                let g = $read;
                (g[..COUNTERS].iter().sum(), g[HANDOVERS])
            }
            fn stats(&self) -> Option<lwlock::LockStats> {
                let f: fn(&$ty) -> Option<lwlock::LockStats> = $stats;
                f(self)
            }
        }
    };
}

/// An lwlock mutex's counters (its LWLock underneath).
fn mutex_stats<P: lwlock::Policy>(m: &lwlock::AtomicLwMutex<P>) -> Option<lwlock::LockStats> {
    lwlock::RawLwLock::stats(m.lwlock())
}

mutex_counters!(
    LwMutex,
    "lwlock::Mutex",
    lwlock::Mutex<Vec<u64>>,
    |m| m.lock(),
    |c| {
        // SAFETY: the raw mutex is only read for its counters; its state is not touched.
        let raw = unsafe { c.0.raw() };
        mutex_stats(raw)
    }
);
mutex_counters!(
    PrevMutex,
    "lwlock::AdaptiveMutex",
    lwlock::AdaptiveMutex<Vec<u64>>,
    |m| m.lock(),
    |c| {
        // SAFETY: as above.
        let raw = unsafe { c.0.raw() };
        mutex_stats(raw)
    }
);
mutex_counters!(
    PlMutex,
    "parking_lot",
    parking_lot::Mutex<Vec<u64>>,
    |m| m.lock(),
    |_| None
);
mutex_counters!(
    StdMutex,
    "std",
    std::sync::Mutex<Vec<u64>>,
    |m| m.lock().unwrap(),
    |_| None
);
rwlock_counters!(
    LwRw,
    "lwlock::RwLock",
    lwlock::RwLock<Vec<u64>>,
    |l| l.read(),
    l.write(),
    |c| {
        // SAFETY: the raw lock is only read for its counters; its state is not touched.
        let raw = unsafe { c.0.raw() };
        lwlock::RawLwLock::stats(raw)
    }
);
rwlock_counters!(
    PrevRw,
    "lwlock::AdaptiveRwLock",
    lwlock::AdaptiveRwLock<Vec<u64>>,
    |l| l.read(),
    l.write(),
    |c| {
        // SAFETY: as above.
        let raw = unsafe { c.0.raw() };
        lwlock::RawLwLock::stats(raw)
    }
);
rwlock_counters!(
    PlRw,
    "parking_lot",
    parking_lot::RwLock<Vec<u64>>,
    |l| l.read(),
    l.write(),
    |_| None
);
rwlock_counters!(
    StdRw,
    "std",
    std::sync::RwLock<Vec<u64>>,
    |l| l.read().unwrap(),
    l.write().unwrap(),
    |_| None
);

/// The options.
struct Opts {
    threads: Vec<usize>,
    duration: Duration,
    trials: usize,
    work: u32,
    scenarios: Vec<Scenario>,
    /// Where to write every trial (`--out`), if anywhere.
    out: Option<std::path::PathBuf>,
}

/// The columns' roles in `--out`'s `results.csv`, in a row's order.
const ROLES: [&str; 4] = ["default", "previous", "parking-lot", "std"];

#[derive(Clone, Copy, PartialEq)]
enum Scenario {
    Mutex,
    RwWrite,
    Rw50,
}

impl Scenario {
    fn name(self) -> &'static str {
        match self {
            Scenario::Mutex => "mutex",
            Scenario::RwWrite => "rwlock-write",
            Scenario::Rw50 => "rwlock-50r",
        }
    }
    /// Percent of operations that are reads.
    fn read_pct(self) -> u64 {
        if self == Scenario::Rw50 {
            50
        } else {
            0
        }
    }
}

fn bad(arg: &str, why: impl std::fmt::Display) -> ! {
    eprintln!("app_counters: bad argument {arg}: {why}");
    eprintln!(
        "usage: app_counters [--threads N,N,..] [--duration 300ms|2s] [--trials K] [--work W] \
         [--scenarios mutex,rwlock-write,rwlock-50r] [--out DIR]"
    );
    std::process::exit(2)
}

fn parse_args() -> Opts {
    let mut o = Opts {
        threads: vec![2, 16, 64],
        duration: Duration::from_millis(300),
        trials: 5,
        work: 16,
        scenarios: vec![Scenario::Mutex, Scenario::RwWrite, Scenario::Rw50],
        out: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "-h" || a == "--help" {
            println!(
                "{}",
                include_str!("app_counters.rs")
                    .lines()
                    .take_while(|l| l.starts_with("//!"))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            std::process::exit(0);
        }
        let mut value = || args.next().unwrap_or_else(|| bad(&a, "needs a value"));
        match a.as_str() {
            "--threads" => {
                let v = value();
                o.threads = v
                    .split(',')
                    .map(|t| match t.parse::<usize>() {
                        Ok(n) if (1..=4096).contains(&n) => n,
                        _ => bad(
                            "--threads",
                            format!("{t:?} is not a thread count in 1..=4096"),
                        ),
                    })
                    .collect();
            }
            "--duration" => {
                let v = value();
                o.duration =
                    lwbench::parse::parse_duration(&v).unwrap_or_else(|e| bad("--duration", e));
            }
            "--out" => {
                let v = value();
                let dir = std::path::PathBuf::from(&v);
                if let Err(e) = std::fs::create_dir_all(&dir) {
                    bad("--out", format!("cannot create {v:?}: {e}"));
                }
                o.out = Some(dir);
            }
            "--trials" => {
                let v = value();
                o.trials = match v.parse::<usize>() {
                    Ok(n) if n >= 1 => n,
                    _ => bad("--trials", format!("{v:?} is not a count of at least 1")),
                };
            }
            "--work" => {
                let v = value();
                o.work = v
                    .parse()
                    .unwrap_or_else(|_| bad("--work", format!("{v:?} is not a count")));
            }
            "--scenarios" => {
                let v = value();
                o.scenarios = v
                    .split(',')
                    .map(|s| match s {
                        "mutex" => Scenario::Mutex,
                        "rwlock-write" => Scenario::RwWrite,
                        "rwlock-50r" => Scenario::Rw50,
                        _ => bad("--scenarios", format!("unknown scenario {s:?}")),
                    })
                    .collect();
            }
            _ => bad(&a, "unknown option"),
        }
    }
    o
}

/// A small xorshift PRNG: the counter index, the read/write choice and the private work.
#[inline]
fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// One trial's figures.
#[derive(Clone, Copy)]
struct Trial {
    ops_per_s: f64,
    /// Writes per handover: how many writes one thread makes in a row, on average.
    run: f64,
    /// The process's context switches (voluntary and involuntary) per 1,000 operations.
    cs_per_kop: f64,
    /// The same split: voluntary (a thread blocked: a futex sleep) and involuntary (preempted,
    /// or yielded with another thread to run).
    vol_per_kop: f64,
    invol_per_kop: f64,
    /// The process's CPU time per operation, ns, and the kernel's share of it.
    cpu_ns_per_op: f64,
    sys_share: f64,
    /// lwlock's sleeps on the lock per 1,000 operations (`block_count`; the `stats` feature).
    sleeps_per_kop: Option<f64>,
}

/// The process's usage so far (`lwharness::perf`), zero where `getrusage` gives none.
fn usage() -> lwharness::perf::Usage {
    lwharness::perf::rusage_process().unwrap_or_default()
}

/// One trial. Exits 1 if the counters lost an update.
fn trial<L: Counters>(threads: usize, o: &Opts, read_pct: u64) -> Trial {
    let lock = Arc::new(L::new(vec![0; COUNTERS + 2]));
    let stop = Arc::new(AtomicBool::new(false));
    let writes = Arc::new(AtomicU64::new(0));
    let ops = Arc::new(AtomicU64::new(0));
    let start = Arc::new(Barrier::new(threads + 1));
    let work = o.work;
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (lock, stop, writes, ops, start) = (
                lock.clone(),
                stop.clone(),
                writes.clone(),
                ops.clone(),
                start.clone(),
            );
            std::thread::spawn(move || {
                let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ (t as u64 + 1).wrapping_mul(0x2545_F491);
                let (mut n, mut w, mut sink) = (0u64, 0u64, 0u64);
                start.wait();
                while !stop.load(Ordering::Relaxed) {
                    let r = next(&mut x);
                    let i = (r as usize) % COUNTERS;
                    if (r >> 32) % 100 < read_pct {
                        sink = sink.wrapping_add(lock.get(i));
                    } else {
                        lock.bump(i, t as u64 + 1);
                        w += 1;
                    }
                    n += 1;
                    for _ in 0..work {
                        sink = sink.wrapping_add(next(&mut x));
                    }
                }
                std::hint::black_box(sink);
                writes.fetch_add(w, Ordering::Relaxed);
                ops.fetch_add(n, Ordering::Relaxed);
            })
        })
        .collect();
    start.wait();
    let u0 = usage();
    let t0 = Instant::now();
    std::thread::sleep(o.duration);
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().expect("a worker panicked");
    }
    let secs = t0.elapsed().as_secs_f64();
    let u = usage().since(u0);
    let ((sum, handovers), w) = (lock.sum(), writes.load(Ordering::Relaxed));
    if sum != w {
        eprintln!(
            "app_counters: {}: the counters sum to {sum}, {w} writes were made",
            L::NAME
        );
        std::process::exit(1);
    }
    let n = ops.load(Ordering::Relaxed).max(1) as f64;
    let cpu = (u.user + u.system).as_secs_f64();
    Trial {
        ops_per_s: n / secs,
        run: w as f64 / handovers.max(1) as f64,
        cs_per_kop: u.switches() as f64 * 1000.0 / n,
        vol_per_kop: u.voluntary_switches as f64 * 1000.0 / n,
        invol_per_kop: u.involuntary_switches as f64 * 1000.0 / n,
        cpu_ns_per_op: cpu * 1e9 / n,
        sys_share: if cpu > 0.0 {
            u.system.as_secs_f64() / cpu
        } else {
            0.0
        },
        sleeps_per_kop: lock.stats().map(|st| st.block as f64 * 1000.0 / n),
    }
}

/// One lock's trials: the median, lowest and highest rate, and the medians of the writes per
/// handover and of the context switches per 1,000 operations.
#[derive(Clone, Copy)]
struct Cell {
    median: f64,
    min: f64,
    max: f64,
    run: f64,
    cs_per_kop: f64,
    vol_per_kop: f64,
    invol_per_kop: f64,
    cpu_ns_per_op: f64,
    sys_share: f64,
    sleeps_per_kop: Option<f64>,
}

fn cell(v: Vec<Trial>) -> Cell {
    // One figure of the trials, sorted.
    let sorted = |f: fn(&Trial) -> f64| {
        let mut x: Vec<f64> = v.iter().map(f).collect();
        x.sort_by(|a, b| a.total_cmp(b));
        x
    };
    let rates = sorted(|t| t.ops_per_s);
    Cell {
        median: rates[rates.len() / 2],
        min: rates[0],
        max: rates[rates.len() - 1],
        run: sorted(|t| t.run)[v.len() / 2],
        cs_per_kop: sorted(|t| t.cs_per_kop)[v.len() / 2],
        vol_per_kop: sorted(|t| t.vol_per_kop)[v.len() / 2],
        invol_per_kop: sorted(|t| t.invol_per_kop)[v.len() / 2],
        cpu_ns_per_op: sorted(|t| t.cpu_ns_per_op)[v.len() / 2],
        sys_share: sorted(|t| t.sys_share)[v.len() / 2],
        sleeps_per_kop: v[0]
            .sleeps_per_kop
            .map(|_| sorted(|t| t.sleeps_per_kop.unwrap_or(0.0))[v.len() / 2]),
    }
}

/// One row: the four locks' cells. Each trial runs every lock once, in an order rotated by one
/// per trial, so that a drift of the machine's speed during the row falls on every lock alike.
fn row<A: Counters, B: Counters, P: Counters, S: Counters>(
    threads: usize,
    o: &Opts,
    read_pct: u64,
) -> ([Cell; 4], [Vec<f64>; 4]) {
    let runs: [fn(usize, &Opts, u64) -> Trial; 4] =
        [trial::<A>, trial::<B>, trial::<P>, trial::<S>];
    let mut trials: [Vec<Trial>; 4] = Default::default();
    for k in 0..o.trials {
        for j in 0..4 {
            let i = (j + k) % 4;
            trials[i].push(runs[i](threads, o, read_pct));
        }
    }
    let rates = trials
        .each_ref()
        .map(|v| v.iter().map(|t| t.ops_per_s).collect());
    (trials.map(cell), rates)
}

fn main() {
    let o = parse_args();
    println!(
        "app_counters: {} counters, work {} PRNG rounds per operation, {} trials of {:?} (each \
         trial runs every lock once); ops/s: median (ratio to parking_lot's median) [lowest and \
         highest trial as % of the median] writes per handover, context switches per 1,000 \
         operations (medians)",
        COUNTERS, o.work, o.trials, o.duration
    );
    let mut csv = String::from("workload,threads,lock,trial,txn_per_sec\n");
    for &sc in &o.scenarios {
        let names: [&str; 4] = match sc {
            Scenario::Mutex => [
                LwMutex::NAME,
                PrevMutex::NAME,
                PlMutex::NAME,
                StdMutex::NAME,
            ],
            _ => [LwRw::NAME, PrevRw::NAME, PlRw::NAME, StdRw::NAME],
        };
        println!("\n{}", sc.name());
        print!("{:>7}", "threads");
        for n in names {
            print!(" {n:>46}");
        }
        println!();
        let mut rows = Vec::new();
        for &t in &o.threads {
            let (r, rates) = match sc {
                Scenario::Mutex => row::<LwMutex, PrevMutex, PlMutex, StdMutex>(t, &o, 0),
                _ => row::<LwRw, PrevRw, PlRw, StdRw>(t, &o, sc.read_pct()),
            };
            print!("{t:>7}");
            for c in r {
                let text = format!(
                    "{:.2}M ({:.2}×) [{:.0}/+{:.0}%] {:.1} {:.2}",
                    c.median / 1e6,
                    c.median / r[2].median,
                    (c.min / c.median - 1.0) * 100.0,
                    (c.max / c.median - 1.0) * 100.0,
                    c.run,
                    c.cs_per_kop
                );
                print!(" {text:>46}");
            }
            println!();
            for (role, v) in ROLES.iter().zip(&rates) {
                for (k, x) in v.iter().enumerate() {
                    csv.push_str(&format!("{},{t},{role},{},{x:.1}\n", sc.name(), k + 1));
                }
            }
            rows.push((t, r));
        }
        println!(
            "  where the time goes, medians: context switches per 1,000 operations, voluntary \
             (blocked) / involuntary (preempted or yielded); CPU ns per operation (kernel \
             share); sleeps on the lock per 1,000 operations (lwlock's, with --features stats)"
        );
        for (t, r) in rows {
            print!("{t:>7}");
            for c in r {
                let sleeps = c
                    .sleeps_per_kop
                    .map_or(String::new(), |x| format!(" sl {x:.2}"));
                let text = format!(
                    "{:.2}/{:.2} {:.0}ns ({:.0}%){sleeps}",
                    c.vol_per_kop,
                    c.invol_per_kop,
                    c.cpu_ns_per_op,
                    c.sys_share * 100.0
                );
                print!(" {text:>46}");
            }
            println!();
        }
    }
    if let Some(dir) = &o.out {
        let meta = serde_json::json!({
            "program": "app_counters",
            "settings": {
                "interleave": true,
                "trials": o.trials,
                "duration_ms": o.duration.as_millis() as u64,
                "work": o.work,
            },
            "roles": {
                "default": "lwlock::Mutex / lwlock::RwLock",
                "previous": "lwlock::AdaptiveMutex / lwlock::AdaptiveRwLock",
                "parking-lot": "parking_lot 0.12",
                "std": "std::sync",
            },
        });
        let meta = format!("{meta:#}\n");
        for (name, text) in [("results.csv", &csv), ("meta.json", &meta)] {
            let path = dir.join(name);
            if let Err(e) = std::fs::write(&path, text) {
                eprintln!("app_counters: cannot write {}: {e}", path.display());
                std::process::exit(1);
            }
        }
        println!(
            "\nwrote {} and meta.json",
            dir.join("results.csv").display()
        );
    }
}
