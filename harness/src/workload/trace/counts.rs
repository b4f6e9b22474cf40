//! A counting run of a trace, for the tests and the shape tables (apart from the trace's row of
//! the workload table, `run.rs`, which the table's code calls).

use super::TraceRef;
#[allow(unused_imports)] // rustdoc links
use super::TraceWorkload;
use crate::locks::LockFamily;
use crate::workload::worker::Worker;
use crate::workload::Shared;

/// Replays `n` transactions of `t` on each of `threads` threads (real threads, lock family
/// `F`), checks the trial as a trial is checked, and returns each replay client's attempts by
/// cell ([`TraceWorkload::cell`]) and its fallbacks: the counting the replay tests and the
/// shape tables use.
pub fn replay_counts<F: LockFamily>(
    t: TraceRef,
    threads: usize,
    n: u64,
) -> Result<Vec<(Vec<u64>, u64)>, String> {
    use crate::workload::{check as check_trial, run_transactions, WorkerConfig, Workload};
    let workload = Workload::Trace(t);
    let s = std::sync::Arc::new(Shared::<F>::new(
        workload,
        threads,
        crate::snapshot::Layout::Dense,
    ));
    let cfg = WorkerConfig {
        write_pct: 0,
        work: 0,
        time_every: 64,
        strategy: crate::snapshot::Strategy::Scan,
        idle_us: 0,
    };
    let handles: Vec<_> = (0..threads)
        .map(|slot| {
            let s = s.clone();
            std::thread::spawn(move || {
                let mut w = Worker::new(slot, threads, cfg);
                run_transactions(workload, &s, &mut w, n);
                w
            })
        })
        .collect();
    let workers: Vec<Worker> = handles
        .into_iter()
        .map(|h| h.join().map_err(|_| "a replay thread panicked".to_string()))
        .collect::<Result<_, _>>()?;
    check_trial(workload, &s, &workers)?;
    let r = s.replay().expect("a trace workload has its replay state");
    Ok((0..threads).map(|slot| r.counts(slot)).collect())
}
