//! A read-heavy cache, as an application would write it: 8 reader threads look keys up in a
//! `HashMap` behind a reader-writer lock as fast as they can, and one writer inserts a key every
//! 5 ms, for 2 seconds. Run with each lock:
//!
//! * `lwlock::RwLock` (the default, the empty-yield policy: a writer behind readers takes the
//!   handoff as it queues, so new readers queue behind it, and spins for the readers to drain;
//!   `lwlock::AdaptiveRwLock` is the same without the empty-yield rule),
//! * `lwlock::TaskFairRwLock` (task-fair: a queued writer blocks new readers at once),
//! * `lwlock::HandoffRwLock` (readers barge until a writer has waited 250 µs),
//! * `lwlock::BargingRwLock` (PostgreSQL's policy: readers barge past a queued writer),
//! * `parking_lot::RwLock` (eventual fairness).
//!
//! A 2 s run has about 150 writes, so its p99 is its second-longest wait and moves by 5x between
//! runs on a loaded machine. The program therefore runs `--trials` trials (default 5); each trial
//! runs every lock once, in an order rotated by one per trial so that no lock always follows the
//! same one. It prints, per lock, the median over the trials of the writes completed and of the
//! writer's wait for the lock (p50, p99, max), the p99 of every trial's waits pooled, and the
//! readers' lookups per second, then the ratios against parking_lot.
//!
//! Built with the `stats` feature it also prints, for lwlock's locks, the LWLOCK_STATS counters
//! summed over the trials per write: the sleeps on the lock (`block_count`, the readers' and the
//! writer's) and the backoff sleeps on the wait-list bit (`spin_delay_count`).
//!
//! ```text
//! cargo run --release -p lwlock [--features stats] --example read_heavy_cache [-- --seconds S --readers N --every-ms M --trials T]
//! ```

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One lock's trial: the writer's waits (sorted) and the readers' rate.
struct Outcome {
    waits: Vec<Duration>,
    lookups_per_s: f64,
    /// The lock's counters after the trial (lwlock's locks with the `stats` feature).
    stats: Option<lwlock::LockStats>,
}

impl Outcome {
    fn q(&self, p: f64) -> Duration {
        quantile(&self.waits, p)
    }
}

/// The `p` quantile of sorted `waits` (nearest rank below).
fn quantile(waits: &[Duration], p: f64) -> Duration {
    waits[((waits.len() as f64 * p) as usize).min(waits.len() - 1)]
}

/// The median of `xs` (the upper one of an even count).
fn median<T: Copy + PartialOrd>(mut xs: Vec<T>) -> T {
    xs.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    xs[xs.len() / 2]
}

/// One lock's trials, summarised.
struct Summary {
    name: &'static str,
    writes: usize,
    p50: Duration,
    p99: Duration,
    max: Duration,
    pooled_p99: Duration,
    lookups_per_s: f64,
    /// Sleeps on the lock and wait-list backoff sleeps per write, over all trials.
    per_write: Option<(f64, f64)>,
}

fn summarise(name: &'static str, trials: &[Outcome]) -> Summary {
    let mut pooled: Vec<Duration> = trials.iter().flat_map(|o| o.waits.clone()).collect();
    pooled.sort();
    Summary {
        name,
        writes: median(trials.iter().map(|o| o.waits.len()).collect()),
        p50: median(trials.iter().map(|o| o.q(0.5)).collect()),
        p99: median(trials.iter().map(|o| o.q(0.99)).collect()),
        max: median(trials.iter().map(|o| *o.waits.last().unwrap()).collect()),
        pooled_p99: quantile(&pooled, 0.99),
        lookups_per_s: median(trials.iter().map(|o| o.lookups_per_s).collect()),
        per_write: trials
            .iter()
            .map(|o| o.stats)
            .reduce(|a, b| Some(a? + b?))
            .flatten()
            .map(|s| {
                let writes = pooled.len() as f64;
                (s.block as f64 / writes, s.spin_delay as f64 / writes)
            }),
    }
}

/// The counters of one of lwlock's locks.
fn lw_stats<R: lwlock::RawLwLock>(r: &R) -> Option<lwlock::LockStats> {
    r.stats()
}

/// parking_lot keeps none.
fn no_stats<R>(_: &R) -> Option<lwlock::LockStats> {
    None
}

#[derive(Clone, Copy)]
struct Cfg {
    seconds: f64,
    readers: usize,
    every: Duration,
    trials: usize,
}

fn run<R>(cfg: Cfg, stats: fn(&R) -> Option<lwlock::LockStats>) -> Outcome
where
    R: lock_api::RawRwLock + Send + Sync + 'static,
{
    let map: HashMap<u64, u64> = (0..4096).map(|k| (k, k * 3)).collect();
    let cache = Arc::new(lock_api::RwLock::<R, _>::new(map));
    let stop = Arc::new(AtomicBool::new(false));
    let lookups = Arc::new(AtomicU64::new(0));
    let readers: Vec<_> = (0..cfg.readers)
        .map(|i| {
            let (cache, stop, lookups) = (cache.clone(), stop.clone(), lookups.clone());
            std::thread::spawn(move || {
                let mut key = i as u64 * 7919;
                let mut n = 0u64;
                let mut sum = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let g = cache.read();
                    for _ in 0..16 {
                        key = key
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        sum = sum.wrapping_add(*g.get(&(key % 4096)).unwrap_or(&0));
                    }
                    drop(g);
                    n += 16;
                }
                lookups.fetch_add(n, Ordering::Relaxed);
                sum
            })
        })
        .collect();
    let start = Instant::now();
    let run_for = Duration::from_secs_f64(cfg.seconds);
    // The readers stop at the deadline even if the writer is stuck in `write()` (under the
    // barging lock it may be: readers overlap and the lock is never free).
    let timer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(run_for);
            stop.store(true, Ordering::Relaxed);
        })
    };
    let mut waits = Vec::new();
    let mut next_key = 4096u64;
    while start.elapsed() < run_for && !stop.load(Ordering::Relaxed) {
        std::thread::sleep(cfg.every);
        let t0 = Instant::now();
        let mut g = cache.write();
        waits.push(t0.elapsed());
        g.insert(next_key, next_key);
        next_key += 1;
    }
    let elapsed = start.elapsed();
    stop.store(true, Ordering::Relaxed);
    timer.join().unwrap();
    for r in readers {
        let _ = r.join().unwrap();
    }
    waits.sort();
    // SAFETY: only reads the raw lock's counters; every thread has stopped and been joined.
    let stats = stats(unsafe { cache.raw() });
    Outcome {
        stats,
        waits,
        lookups_per_s: lookups.load(Ordering::Relaxed) as f64 / elapsed.as_secs_f64(),
    }
}

fn parse_args() -> Cfg {
    let mut cfg = Cfg {
        seconds: 2.0,
        readers: 8,
        every: Duration::from_millis(5),
        trials: 5,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| -> f64 {
            match args.next().and_then(|v| v.parse::<f64>().ok()) {
                Some(v) if v > 0.0 => v,
                _ => {
                    eprintln!("read_heavy_cache: {name} needs a positive number");
                    std::process::exit(2);
                }
            }
        };
        match a.as_str() {
            "--seconds" => cfg.seconds = value("--seconds"),
            "--readers" => cfg.readers = value("--readers") as usize,
            "--every-ms" => cfg.every = Duration::from_secs_f64(value("--every-ms") / 1000.0),
            "--trials" => {
                let t = value("--trials");
                if t.fract() != 0.0 {
                    eprintln!("read_heavy_cache: --trials needs a whole number");
                    std::process::exit(2);
                }
                cfg.trials = t as usize;
            }
            other => {
                eprintln!(
                    "read_heavy_cache: unknown argument {other:?} (expected --seconds, --readers, --every-ms, --trials)"
                );
                std::process::exit(2);
            }
        }
    }
    cfg
}

/// The locks compared, parking_lot last (the ratios are against it).
/// A lock's name and the function that runs one trial with it.
type Entry = (&'static str, fn(Cfg) -> Outcome);

const LOCKS: [Entry; 5] = [
    ("lwlock::RwLock (empty-yield)", |c| {
        run::<lwlock::RawRwLock>(c, lw_stats)
    }),
    ("lwlock::TaskFairRwLock", |c| {
        run::<lwlock::RawTaskFairLwLock>(c, lw_stats)
    }),
    ("lwlock::HandoffRwLock", |c| {
        run::<lwlock::RawHandoffLwLock>(c, lw_stats)
    }),
    ("lwlock::BargingRwLock", |c| {
        run::<lwlock::RawAtomicLwLock>(c, lw_stats)
    }),
    ("parking_lot::RwLock", |c| {
        run::<parking_lot::RawRwLock>(c, no_stats)
    }),
];

fn main() {
    let cfg = parse_args();
    println!(
        "read-heavy cache: {} readers, one write every {:?}, {} s per lock and trial, {} trials \
         (medians over the trials)",
        cfg.readers, cfg.every, cfg.seconds, cfg.trials
    );
    let mut outcomes: Vec<Vec<Outcome>> = LOCKS.iter().map(|_| Vec::new()).collect();
    for t in 0..cfg.trials {
        for k in 0..LOCKS.len() {
            let i = (k + t) % LOCKS.len();
            outcomes[i].push((LOCKS[i].1)(cfg));
        }
    }
    let results: Vec<Summary> = LOCKS
        .iter()
        .zip(&outcomes)
        .map(|((name, _), trials)| summarise(name, trials))
        .collect();
    println!(
        "{:<28} {:>7} {:>12} {:>12} {:>12} {:>12} {:>14}",
        "lock", "writes", "wait p50", "wait p99", "wait max", "pooled p99", "lookups/s"
    );
    for o in &results {
        println!(
            "{:<28} {:>7} {:>12.1?} {:>12.1?} {:>12.1?} {:>12.1?} {:>14.3e}",
            o.name, o.writes, o.p50, o.p99, o.max, o.pooled_p99, o.lookups_per_s
        );
    }
    for o in &results {
        if let Some((sleeps, delays)) = o.per_write {
            println!(
                "{}: per write, {sleeps:.2} sleeps on the lock, {delays:.3} wait-list backoff sleeps",
                o.name
            );
        }
    }
    let (pl, others) = results.split_last().expect("parking_lot is the last row");
    for o in others {
        println!(
            "{}: writes {:.2}x parking_lot's, lookups {:.2}x, writer p99 {:?} ({:.2}x), pooled p99 {:?} ({:.2}x)",
            o.name,
            o.writes as f64 / pl.writes as f64,
            o.lookups_per_s / pl.lookups_per_s,
            o.p99,
            o.p99.as_secs_f64() / pl.p99.as_secs_f64(),
            o.pooled_p99,
            o.pooled_p99.as_secs_f64() / pl.pooled_p99.as_secs_f64(),
        );
    }
}
