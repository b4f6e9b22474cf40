//! Criterion benchmarks of group commit: the end-of-transaction operation at 1–64 threads for the
//! direct atomic LWLock, the Leader and LastReleaser FlexLocks and parking_lot; the CLOG commit
//! operation with and without the group update.
//!
//! `cargo bench -p flexlock --bench group_commit` (add `-- eot/leader` to filter). Each sample
//! runs `iters` operations spread over the threads, so the reported time is per operation of the
//! whole system (inverse throughput). Fairness and group sizes: `examples/eot.rs`.

mod workload;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use workload::*;

const THREADS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];
/// Spin iterations of "the rest of the transaction" outside the lock.
const WORK: u32 = 200;

fn eot(c: &mut Criterion) {
    let mut g = c.benchmark_group("eot");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .throughput(Throughput::Elements(1));
    for v in EOT_VARIANTS {
        for threads in THREADS {
            g.bench_with_input(BenchmarkId::new(v, threads), &threads, |b, &threads| {
                b.iter_custom(|iters| {
                    let lock = Arc::new(Eot::new(v, threads));
                    let l = lock.clone();
                    let t = run_ops(
                        threads,
                        iters,
                        Arc::new(move |t: usize, i: u64| {
                            spin_work(WORK);
                            l.end_xact(t, i * threads as u64 + t as u64);
                        }),
                    );
                    assert!(lock.completions() >= iters);
                    t
                })
            });
        }
    }
    g.finish();
}

fn clog(c: &mut Criterion) {
    let mut g = c.benchmark_group("clog");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .throughput(Throughput::Elements(1));
    for v in CLOG_VARIANTS {
        for threads in THREADS {
            g.bench_with_input(BenchmarkId::new(v, threads), &threads, |b, &threads| {
                b.iter_custom(|iters| {
                    let lock = Arc::new(ClogLock::new(v));
                    let l = lock.clone();
                    let t = run_ops(
                        threads,
                        iters,
                        Arc::new(move |_t: usize, _i: u64| {
                            spin_work(WORK);
                            l.commit(NEXT_XID.fetch_add(1, Ordering::Relaxed));
                        }),
                    );
                    assert!(lock.commits() >= iters);
                    t
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, eot, clog);
criterion_main!(benches);
