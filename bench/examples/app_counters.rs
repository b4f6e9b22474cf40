//! An application benchmark of the drop-in types: what a program gets when it switches from
//! parking_lot. No PostgreSQL counterpart (PostgreSQL has no mutex or reader-writer lock type).
//!
//! N threads each loop: lock → update one of 64 counters in a shared `Vec<u64>` → unlock → a
//! little private work (a few rounds of a PRNG). Three scenarios:
//!
//! * `mutex`: a `Mutex<Vec<u64>>`;
//! * `rwlock-write`: an `RwLock<Vec<u64>>`, every operation a write;
//! * `rwlock-50r`: the same lock, half the operations reads of one counter.
//!
//! Each scenario runs lwlock's defaults (`lwlock::Mutex`, `lwlock::RwLock`: the adaptive
//! policy), the previous defaults (`lwlock::HandoffMutex`, `lwlock::TaskFairRwLock`),
//! parking_lot 0.12 and std, in one run;
//! the table gives operations per second (median of the trials) and each cell's ratio to
//! parking_lot. After each trial the counters' sum must equal the writes counted, or the
//! program exits 1.
//!
//! ```sh
//! cargo run --release -p bench --example app_counters -- [--threads 2,16,64] \
//!     [--duration 300ms] [--trials 3] [--work 16] [--scenarios mutex,rwlock-write,rwlock-50r]
//! ```
//! A bad argument exits 2 with a message naming it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Counters in the shared vector.
const COUNTERS: usize = 64;

/// One lock type over the shared counters.
trait Counters: Send + Sync + 'static {
    /// The column's name.
    const NAME: &'static str;
    fn new(v: Vec<u64>) -> Self;
    /// Exclusive: add one to counter `i`.
    fn bump(&self, i: usize);
    /// Shared (exclusive for a mutex): read counter `i`.
    fn get(&self, i: usize) -> u64;
    /// The counters' sum (after the threads stopped).
    fn sum(&self) -> u64;
}

macro_rules! mutex_counters {
    ($ty:ident, $name:literal, $m:ty, |$x:ident| $lock:expr) => {
        struct $ty($m);
        impl Counters for $ty {
            const NAME: &'static str = $name;
            fn new(v: Vec<u64>) -> Self {
                $ty(<$m>::new(v))
            }
            #[inline]
            fn bump(&self, i: usize) {
                let $x = &self.0;
                let mut g = $lock;
                g[i] += 1;
            }
            #[inline]
            fn get(&self, i: usize) -> u64 {
                let $x = &self.0;
                let g = $lock;
                g[i]
            }
            fn sum(&self) -> u64 {
                let $x = &self.0;
                let g = $lock;
                g.iter().sum()
            }
        }
    };
}

macro_rules! rwlock_counters {
    ($ty:ident, $name:literal, $l:ty, |$x:ident| $read:expr, $write:expr) => {
        struct $ty($l);
        impl Counters for $ty {
            const NAME: &'static str = $name;
            fn new(v: Vec<u64>) -> Self {
                $ty(<$l>::new(v))
            }
            #[inline]
            fn bump(&self, i: usize) {
                let $x = &self.0;
                let mut g = $write;
                g[i] += 1;
            }
            #[inline]
            fn get(&self, i: usize) -> u64 {
                let $x = &self.0;
                let g = $read;
                g[i]
            }
            fn sum(&self) -> u64 {
                let $x = &self.0;
                let g = $read;
                g.iter().sum()
            }
        }
    };
}

mutex_counters!(LwMutex, "lwlock::Mutex", lwlock::Mutex<Vec<u64>>, |m| m
    .lock());
mutex_counters!(
    PrevMutex,
    "lwlock::HandoffMutex",
    lwlock::HandoffMutex<Vec<u64>>,
    |m| m.lock()
);
mutex_counters!(PlMutex, "parking_lot", parking_lot::Mutex<Vec<u64>>, |m| m
    .lock());
mutex_counters!(StdMutex, "std", std::sync::Mutex<Vec<u64>>, |m| m
    .lock()
    .unwrap());
rwlock_counters!(
    LwRw,
    "lwlock::RwLock",
    lwlock::RwLock<Vec<u64>>,
    |l| l.read(),
    l.write()
);
rwlock_counters!(
    PrevRw,
    "lwlock::TaskFairRwLock",
    lwlock::TaskFairRwLock<Vec<u64>>,
    |l| l.read(),
    l.write()
);
rwlock_counters!(
    PlRw,
    "parking_lot",
    parking_lot::RwLock<Vec<u64>>,
    |l| l.read(),
    l.write()
);
rwlock_counters!(
    StdRw,
    "std",
    std::sync::RwLock<Vec<u64>>,
    |l| l.read().unwrap(),
    l.write().unwrap()
);

/// The options.
struct Opts {
    threads: Vec<usize>,
    duration: Duration,
    trials: usize,
    work: u32,
    scenarios: Vec<Scenario>,
}

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
         [--scenarios mutex,rwlock-write,rwlock-50r]"
    );
    std::process::exit(2)
}

fn parse_duration(s: &str) -> Option<Duration> {
    let (num, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => (s, "ms"),
    };
    let n: u64 = num.parse().ok()?;
    let d = match unit {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        _ => return None,
    };
    (!d.is_zero()).then_some(d)
}

fn parse_args() -> Opts {
    let mut o = Opts {
        threads: vec![2, 16, 64],
        duration: Duration::from_millis(300),
        trials: 3,
        work: 16,
        scenarios: vec![Scenario::Mutex, Scenario::RwWrite, Scenario::Rw50],
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "-h" || a == "--help" {
            println!(
                "{}",
                include_str!("app_counters.rs")
                    .lines()
                    .take(20)
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
                o.duration = parse_duration(&v).unwrap_or_else(|| {
                    bad(
                        "--duration",
                        format!("{v:?} is not a duration like 300ms or 2s"),
                    )
                });
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

/// One trial: operations per second. Exits 1 if the counters lost an update.
fn trial<L: Counters>(threads: usize, o: &Opts, read_pct: u64) -> f64 {
    let lock = Arc::new(L::new(vec![0; COUNTERS]));
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
                        lock.bump(i);
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
    let t0 = Instant::now();
    std::thread::sleep(o.duration);
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().expect("a worker panicked");
    }
    let secs = t0.elapsed().as_secs_f64();
    let (sum, w) = (lock.sum(), writes.load(Ordering::Relaxed));
    if sum != w {
        eprintln!(
            "app_counters: {}: the counters sum to {sum}, {w} writes were made",
            L::NAME
        );
        std::process::exit(1);
    }
    ops.load(Ordering::Relaxed) as f64 / secs
}

fn median<L: Counters>(threads: usize, o: &Opts, read_pct: u64) -> f64 {
    let mut v: Vec<f64> = (0..o.trials)
        .map(|_| trial::<L>(threads, o, read_pct))
        .collect();
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// One row: the four locks' medians, one lock after another.
fn row<A: Counters, B: Counters, P: Counters, S: Counters>(
    threads: usize,
    o: &Opts,
    read_pct: u64,
) -> [f64; 4] {
    [
        median::<A>(threads, o, read_pct),
        median::<B>(threads, o, read_pct),
        median::<P>(threads, o, read_pct),
        median::<S>(threads, o, read_pct),
    ]
}

fn main() {
    let o = parse_args();
    println!(
        "app_counters: {} counters, work {} PRNG rounds per operation, median of {} trials of {:?}; \
         ops/s and (ratio to parking_lot)",
        COUNTERS, o.work, o.trials, o.duration
    );
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
            print!(" {n:>24}");
        }
        println!();
        for &t in &o.threads {
            let r = match sc {
                Scenario::Mutex => row::<LwMutex, PrevMutex, PlMutex, StdMutex>(t, &o, 0),
                _ => row::<LwRw, PrevRw, PlRw, StdRw>(t, &o, sc.read_pct()),
            };
            print!("{t:>7}");
            for v in r {
                let cell = format!("{:.2}M ({:.2}×)", v / 1e6, v / r[2]);
                print!(" {cell:>24}");
            }
            println!();
        }
    }
}
