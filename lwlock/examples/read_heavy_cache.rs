//! A read-heavy cache, as an application would write it: 8 reader threads look keys up in a
//! `HashMap` behind a reader-writer lock as fast as they can, and one writer inserts a key every
//! 5 ms, for 2 seconds. Run with each lock:
//!
//! * `lwlock::RwLock` (the default, the adaptive policy: a writer behind readers takes the
//!   handoff as it queues, so new readers queue behind it, and spins for the readers to drain),
//! * `lwlock::TaskFairRwLock` (task-fair: a queued writer blocks new readers at once),
//! * `lwlock::HandoffRwLock` (readers barge until a writer has waited 250 µs),
//! * `lwlock::BargingRwLock` (PostgreSQL's policy: readers barge past a queued writer),
//! * `parking_lot::RwLock` (eventual fairness).
//!
//! It prints, per lock, the writes completed, the writer's wait for the lock (p50, p99, max) and
//! the readers' lookups per second, then the ratios against parking_lot.
//!
//! ```text
//! cargo run --release -p lwlock --example read_heavy_cache [-- --seconds S --readers N --every-ms M]
//! ```

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Outcome {
    name: &'static str,
    writes: usize,
    p50: Duration,
    p99: Duration,
    max: Duration,
    lookups_per_s: f64,
}

#[derive(Clone, Copy)]
struct Cfg {
    seconds: f64,
    readers: usize,
    every: Duration,
}

fn run<R>(name: &'static str, cfg: Cfg) -> Outcome
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
    let q = |p: f64| waits[((waits.len() as f64 * p) as usize).min(waits.len() - 1)];
    Outcome {
        name,
        writes: waits.len(),
        p50: q(0.5),
        p99: q(0.99),
        max: *waits.last().unwrap(),
        lookups_per_s: lookups.load(Ordering::Relaxed) as f64 / elapsed.as_secs_f64(),
    }
}

fn parse_args() -> Cfg {
    let mut cfg = Cfg {
        seconds: 2.0,
        readers: 8,
        every: Duration::from_millis(5),
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
            other => {
                eprintln!(
                    "read_heavy_cache: unknown argument {other:?} (expected --seconds, --readers, --every-ms)"
                );
                std::process::exit(2);
            }
        }
    }
    cfg
}

fn main() {
    let cfg = parse_args();
    println!(
        "read-heavy cache: {} readers, one write every {:?}, {} s per lock",
        cfg.readers, cfg.every, cfg.seconds
    );
    let results = [
        run::<lwlock::RawRwLock>("lwlock::RwLock (adaptive)", cfg),
        run::<lwlock::RawTaskFairLwLock>("lwlock::TaskFairRwLock", cfg),
        run::<lwlock::RawHandoffLwLock>("lwlock::HandoffRwLock", cfg),
        run::<lwlock::RawAtomicLwLock>("lwlock::BargingRwLock", cfg),
        run::<parking_lot::RawRwLock>("parking_lot::RwLock", cfg),
    ];
    println!(
        "{:<28} {:>7} {:>12} {:>12} {:>12} {:>14}",
        "lock", "writes", "wait p50", "wait p99", "wait max", "lookups/s"
    );
    for o in &results {
        println!(
            "{:<28} {:>7} {:>12.1?} {:>12.1?} {:>12.1?} {:>14.3e}",
            o.name, o.writes, o.p50, o.p99, o.max, o.lookups_per_s
        );
    }
    let (pl, others) = results.split_last().expect("parking_lot is the last row");
    for o in others {
        println!(
            "{}: writes {:.2}x parking_lot's, lookups {:.2}x, writer p99 {:?}",
            o.name,
            o.writes as f64 / pl.writes as f64,
            o.lookups_per_s / pl.lookups_per_s,
            o.p99
        );
    }
}
