//! Micro cases across every lock of the registry, through the same closure-level interface the
//! harness uses:
//! * `uncontended/{shared,exclusive,group}/<lock>`: one thread, acquire + empty section + release;
//! * `handoff/<lock>`: two threads alternating exclusive sections on one lock (each waits for the
//!   counter to reach its parity), so every operation hands the lock's cache line and, for
//!   sleeping locks, possibly a wakeup to the other thread.
//!
//! `cargo bench -p bench --bench micro` (`-- --quick` for a fast pass).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lwbench::locks::{BenchLock, LockFamily, LockKind, LockVisitor};
use lwlock::Tranche;
use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

struct Uncontended<'a, 'c>(&'a mut criterion::BenchmarkGroup<'c, criterion::measurement::WallTime>);

impl LockVisitor for Uncontended<'_, '_> {
    type Output = ();
    fn visit<F: LockFamily>(self, kind: LockKind) {
        let lock = F::Lock::<u64>::new(0, Tranche::DEFAULT);
        self.0
            .bench_function(BenchmarkId::new("shared", kind.name()), |b| {
                b.iter(|| black_box(&lock).shared(|v| black_box(*v)))
            });
        self.0
            .bench_function(BenchmarkId::new("exclusive", kind.name()), |b| {
                b.iter(|| black_box(&lock).exclusive(|v| *v += 1))
            });
        self.0
            .bench_function(BenchmarkId::new("group", kind.name()), |b| {
                b.iter(|| black_box(&lock).group(0, |v| *v += 1))
            });
    }
}

/// Two threads, `iters` exclusive sections each, strictly alternating.
fn handoff<F: LockFamily>(iters: u64) -> Duration {
    let lock = F::Lock::<u64>::new(0, Tranche::DEFAULT);
    let start = Barrier::new(3);
    std::thread::scope(|s| {
        for me in 0..2u64 {
            let (lock, start) = (&lock, &start);
            s.spawn(move || {
                start.wait();
                let (mut done, mut misses) = (0, 0u32);
                while done < iters {
                    // Take the lock; act only on our turn (even counter: thread 0, odd: 1).
                    let acted = lock.exclusive(|v| {
                        if *v % 2 == me {
                            *v += 1;
                            true
                        } else {
                            false
                        }
                    });
                    if acted {
                        done += 1;
                        misses = 0;
                    } else {
                        // Not our turn: spin briefly, then yield, so that the other thread gets
                        // a CPU even when the machine has fewer free cores than two.
                        misses += 1;
                        if misses < 64 {
                            std::hint::spin_loop();
                        } else {
                            std::thread::yield_now();
                        }
                    }
                }
            });
        }
        start.wait();
        let t = Instant::now();
        // The scope joins both threads before returning.
        t
    })
    .elapsed()
}

struct Handoff<'a, 'c>(&'a mut criterion::BenchmarkGroup<'c, criterion::measurement::WallTime>);

impl LockVisitor for Handoff<'_, '_> {
    type Output = ();
    fn visit<F: LockFamily>(self, kind: LockKind) {
        self.0
            .bench_function(kind.name(), |b| b.iter_custom(handoff::<F>));
    }
}

fn micro(c: &mut Criterion) {
    let mut g = c.benchmark_group("uncontended");
    g.warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(800));
    for k in LockKind::BENCH_BUILT_IN {
        k.dispatch(Uncontended(&mut g));
    }
    g.finish();

    let mut g = c.benchmark_group("handoff");
    g.warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(1))
        .sample_size(10)
        .throughput(Throughput::Elements(2));
    for k in LockKind::BENCH_BUILT_IN {
        k.dispatch(Handoff(&mut g));
    }
    g.finish();
}

criterion_group!(benches, micro);
criterion_main!(benches);
