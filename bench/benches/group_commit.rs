//! Criterion benchmarks of group commit: the end-of-transaction workload (`end-xact`: assign an
//! xid, then `ProcArrayEndTransaction` under the exclusive ProcArrayLock) at 1–64 threads for
//! the plain atomic LWLock, the Leader and LastReleaser FlexLocks and parking_lot; the CLOG
//! commit workload (`clog`: a fresh xid's status bits in its page) with and without the group
//! update. The workloads are the harness's (`lwharness::workload`), as `lwbench` runs them.
//!
//! `cargo bench -p bench --bench group_commit` (add `-- eot/leader` to filter). Each sample
//! runs `iters` transactions spread over the threads, so the reported time is per operation of
//! the whole system (inverse throughput). Fairness and group sizes: `examples/eot.rs`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lwbench::locks::{LockFamily, LockKind, LockVisitor};
use lwbench::snapshot::{Layout, Strategy};
use lwbench::workload::{self, Shared, Worker, WorkerConfig, Workload};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

const THREADS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];
/// Busy-work iterations of "the rest of the transaction" outside the lock.
const WORK: u32 = 200;

/// The end-of-transaction variants: (benchmark name, registry lock).
const EOT_VARIANTS: [(&str, LockKind); 4] = [
    ("direct-atomic", LockKind::Atomic),
    ("leader", LockKind::FlexLeader),
    ("last-releaser", LockKind::FlexReleaser),
    ("parking-lot", LockKind::ParkingLot),
];
/// The clog commit variants.
const CLOG_VARIANTS: [(&str, LockKind); 2] = [
    ("clog-direct", LockKind::Atomic),
    ("clog-group", LockKind::ClogGroup),
];

/// `iters` transactions of `workload` over `threads` threads of lock family `F`: the wall time
/// from the common start to the last thread's end.
struct Timed {
    workload: Workload,
    threads: usize,
    iters: u64,
}

impl LockVisitor for Timed {
    type Output = Duration;
    fn visit<F: LockFamily>(self, _kind: LockKind) -> Duration {
        let Timed {
            workload,
            threads,
            iters,
        } = self;
        let s = Arc::new(Shared::<F>::new(workload, threads, Layout::Dense));
        let per = iters.div_ceil(threads as u64);
        let barrier = Arc::new(Barrier::new(threads + 1));
        let cfg = WorkerConfig {
            write_pct: 0,
            work: WORK,
            time_every: u32::MAX,
            strategy: Strategy::Scan,
            idle_us: 0,
        };
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let (s, barrier) = (s.clone(), barrier.clone());
                std::thread::spawn(move || {
                    let mut w = Worker::new(t, threads, cfg);
                    barrier.wait();
                    workload::run_transactions(workload, &s, &mut w, per);
                    w
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        let workers: Vec<Worker> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        let t = start.elapsed();
        workload::check(workload, &s, &workers).expect("the workload's invariant checks");
        t
    }
}

fn sweep(c: &mut Criterion, group: &str, workload: Workload, variants: &[(&str, LockKind)]) {
    let mut g = c.benchmark_group(group);
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .throughput(Throughput::Elements(1));
    for &(v, kind) in variants {
        for threads in THREADS {
            g.bench_with_input(BenchmarkId::new(v, threads), &threads, |b, &threads| {
                b.iter_custom(|iters| {
                    kind.dispatch(Timed {
                        workload,
                        threads,
                        iters,
                    })
                })
            });
        }
    }
    g.finish();
}

fn eot(c: &mut Criterion) {
    sweep(c, "eot", Workload::EndXact, &EOT_VARIANTS);
}

fn clog(c: &mut Criterion) {
    sweep(c, "clog", Workload::Clog, &CLOG_VARIANTS);
}

criterion_group!(benches, eot, clog);
criterion_main!(benches);
