//! Fixed-duration throughput of the group-commit workloads, with per-thread fairness and group
//! statistics: the end-of-transaction workload (`end-xact`) for the plain atomic LWLock, the
//! Leader and LastReleaser FlexLocks and parking_lot, and the CLOG commit workload (`clog`)
//! without and with the group update. The workloads are the harness's
//! (`lwharness::workload`), as `lwbench` and the `group_commit` benchmark run them.
//!
//! ```text
//! cargo run --release -p bench --example eot -- [threads] [seconds] [work]
//! cargo run --release -p bench --features stats --example eot -- 32 2   # adds group stats
//! ```
//! `work` is the busy-work iterations each transaction does outside the lock (default 200).

use lwbench::locks::{LockFamily, LockKind, LockVisitor};
use lwbench::runner::jain;
use lwbench::snapshot::{Layout, Strategy};
use lwbench::workload::{self, Shared, Worker, WorkerConfig, Workload};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Barrier};
use std::time::Duration;

fn arg<T: std::str::FromStr>(i: usize, name: &str, default: T) -> T {
    match std::env::args().nth(i) {
        None => default,
        Some(s) => s.parse().unwrap_or_else(|_| {
            eprintln!("eot: invalid {name}: {s:?}");
            std::process::exit(2);
        }),
    }
}

/// One fixed-duration run: per-thread transaction counts and the locks' counters.
struct Run {
    workload: Workload,
    threads: usize,
    dur: Duration,
    work: u32,
}

impl LockVisitor for Run {
    type Output = (Vec<u64>, lwbench::locks::LockCounters);
    fn visit<F: LockFamily>(self, _kind: LockKind) -> Self::Output {
        use lwbench::locks::BenchLock as _;
        let s = Arc::new(Shared::<F>::new(self.workload, self.threads, Layout::Dense));
        let barrier = Arc::new(Barrier::new(self.threads + 1));
        let cfg = WorkerConfig {
            write_pct: 0,
            work: self.work,
            time_every: u32::MAX,
            strategy: Strategy::Scan,
            idle_us: 0,
        };
        let (workload, threads) = (self.workload, self.threads);
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let (s, barrier) = (s.clone(), barrier.clone());
                std::thread::spawn(move || {
                    let mut w = Worker::new(t, threads, cfg);
                    barrier.wait();
                    workload::run_until_stopped(workload, &s, &mut w);
                    w
                })
            })
            .collect();
        barrier.wait();
        std::thread::sleep(self.dur);
        s.stop.store(true, Ordering::Relaxed);
        let workers: Vec<Worker> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        if let Err(e) = workload::check(workload, &s, &workers) {
            eprintln!("eot: {e}");
            std::process::exit(1);
        }
        let counters = match workload {
            Workload::Clog => s.clog.counters(),
            _ => s.proc_array.counters(),
        };
        (workers.iter().map(|w| w.txns).collect(), counters)
    }
}

fn main() {
    let threads: usize = arg(1, "threads", 32);
    let secs: f64 = arg(2, "seconds", 2.0);
    let work: u32 = arg(3, "work", 200);
    if threads == 0 || secs <= 0.0 {
        eprintln!("eot: threads and seconds must be positive");
        std::process::exit(2);
    }
    let dur = Duration::from_secs_f64(secs);
    println!("# threads={threads} seconds={secs} work={work}");
    println!("workload,variant,ops_per_s,jain,groups,mean_group,max_group,ex_per_op");
    let mut tput = Vec::new();
    for (wl, name, v, kind) in [
        (Workload::EndXact, "eot", "direct-atomic", LockKind::Atomic),
        (Workload::EndXact, "eot", "leader", LockKind::FlexLeader),
        (
            Workload::EndXact,
            "eot",
            "last-releaser",
            LockKind::FlexReleaser,
        ),
        (
            Workload::EndXact,
            "eot",
            "parking-lot",
            LockKind::ParkingLot,
        ),
        (Workload::Clog, "clog", "clog-direct", LockKind::Atomic),
        (Workload::Clog, "clog", "clog-group", LockKind::ClogGroup),
    ] {
        let (counts, c) = kind.dispatch(Run {
            workload: wl,
            threads,
            dur,
            work,
        });
        let total: u64 = counts.iter().sum();
        let ops = total as f64 / secs;
        tput.push((v, ops));
        let opt = |x: Option<u64>| x.map_or(String::new(), |x| x.to_string());
        println!(
            "{name},{v},{ops:.0},{:.3},{},{},{},{}",
            jain(&counts),
            opt(c.groups),
            c.mean_group_size
                .map_or(String::new(), |m| format!("{m:.2}")),
            opt(c.max_group_size),
            c.excl_acquires.map_or(String::new(), |x| format!(
                "{:.3}",
                x as f64 / total.max(1) as f64
            )),
        );
    }
    let get = |k: &str| tput.iter().find(|x| x.0 == k).unwrap().1;
    println!(
        "# eot leader/direct-atomic = {:.2}x, last-releaser/direct-atomic = {:.2}x, parking-lot/direct-atomic = {:.2}x",
        get("leader") / get("direct-atomic"),
        get("last-releaser") / get("direct-atomic"),
        get("parking-lot") / get("direct-atomic"),
    );
    println!(
        "# clog group/direct = {:.2}x",
        get("clog-group") / get("clog-direct")
    );
}
