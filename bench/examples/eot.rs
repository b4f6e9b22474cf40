//! Fixed-duration throughput of the group-commit workloads, with per-thread fairness and group
//! statistics: the figures of the FlexLock README section.
//!
//! ```text
//! cargo run --release -p flexlock --example eot -- [threads] [seconds] [work] [max_group]
//! cargo run --release -p flexlock --features stats --example eot -- 32 2   # adds group stats
//! ```
//! `work` is the spin iterations each transaction does outside the lock (default 200);
//! `max_group` overrides the FlexLock bound for the Leader and LastReleaser variants.

#[path = "../benches/workload/mod.rs"]
mod workload;

use flexlock::{FlexConfig, FlexLock, Policy};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use workload::*;

fn arg<T: std::str::FromStr>(i: usize, name: &str, default: T) -> T {
    match std::env::args().nth(i) {
        None => default,
        Some(s) => s.parse().unwrap_or_else(|_| {
            eprintln!("eot: invalid {name}: {s:?}");
            std::process::exit(2);
        }),
    }
}

fn main() {
    let threads: usize = arg(1, "threads", 32);
    let secs: f64 = arg(2, "seconds", 2.0);
    let work: u32 = arg(3, "work", 200);
    let max_group: usize = arg(4, "max_group", flexlock::DEFAULT_MAX_GROUP);
    if threads == 0 || secs <= 0.0 || max_group == 0 {
        eprintln!("eot: threads, seconds and max_group must be positive");
        std::process::exit(2);
    }
    let dur = Duration::from_secs_f64(secs);
    println!("# threads={threads} seconds={secs} work={work} max_group={max_group}");
    println!("workload,variant,ops_per_s,jain,groups,mean_group,max_group,ex_per_op,by_leader");
    // The ceiling: the same transactions with no lock at all (only the work outside it).
    let ceiling = run_for(
        threads,
        dur,
        Arc::new(move |_t: usize, _i: u64| spin_work(work)),
    );
    let ceiling = ceiling.iter().sum::<u64>() as f64 / secs;
    println!("none,no-lock-ceiling,{ceiling:.0},,,,,,");
    let mut eot_tput = Vec::new();
    for v in EOT_VARIANTS {
        let lock = Arc::new(match v {
            "leader" | "last-releaser" => Eot::Flex(FlexLock::with_config(
                ProcArray::new(threads),
                FlexConfig {
                    max_group,
                    ..FlexConfig::new(if v == "leader" {
                        Policy::Leader
                    } else {
                        Policy::LastReleaser
                    })
                },
            )),
            _ => Eot::new(v, threads),
        });
        let l = lock.clone();
        let counts = run_for(
            threads,
            dur,
            Arc::new(move |t: usize, i: u64| {
                spin_work(work);
                l.end_xact(t, i * threads as u64 + t as u64);
            }),
        );
        let total: u64 = counts.iter().sum();
        assert_eq!(total, lock.completions(), "lost or repeated operations");
        let tput = total as f64 / secs;
        eot_tput.push((v, tput));
        report("eot", v, tput, &counts, lock.stats(), total);
    }
    let mut clog_tput = Vec::new();
    for v in CLOG_VARIANTS {
        let lock = Arc::new(ClogLock::new(v));
        let l = lock.clone();
        let counts = run_for(
            threads,
            dur,
            Arc::new(move |_t: usize, _i: u64| {
                spin_work(work);
                let xid = NEXT_XID.fetch_add(1, Ordering::Relaxed);
                l.commit(xid);
            }),
        );
        let total: u64 = counts.iter().sum();
        assert_eq!(total, lock.commits(), "lost or repeated commits");
        let tput = total as f64 / secs;
        clog_tput.push((v, tput));
        report("clog", v, tput, &counts, lock.stats(), total);
    }
    let get = |xs: &[(&str, f64)], k: &str| xs.iter().find(|x| x.0 == k).unwrap().1;
    println!(
        "# eot leader/direct-atomic = {:.2}x, last-releaser/direct-atomic = {:.2}x, parking-lot/direct-atomic = {:.2}x",
        get(&eot_tput, "leader") / get(&eot_tput, "direct-atomic"),
        get(&eot_tput, "last-releaser") / get(&eot_tput, "direct-atomic"),
        get(&eot_tput, "parking-lot") / get(&eot_tput, "direct-atomic"),
    );
    println!(
        "# clog group/direct = {:.2}x",
        get(&clog_tput, "clog-group") / get(&clog_tput, "clog-direct")
    );
}

fn report(
    workload: &str,
    v: &str,
    tput: f64,
    counts: &[u64],
    stats: Option<flexlock::GroupStats>,
    total: u64,
) {
    let (groups, mean, max, ex, by_leader) = match stats {
        Some(s) => (
            s.groups.to_string(),
            format!("{:.2}", s.mean_group_size),
            s.max_group_size.to_string(),
            format!("{:.3}", s.exclusive_acquires as f64 / total as f64),
            s.ops_by_leader.to_string(),
        ),
        None => Default::default(),
    };
    println!(
        "{workload},{v},{tput:.0},{:.3},{groups},{mean},{max},{ex},{by_leader}",
        jain(counts)
    );
}
