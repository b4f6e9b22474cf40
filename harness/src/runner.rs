//! Running one trial: threads, start barrier, stop flag, wait-event sampler, counters, checks.
//!
//! # The measurement window
//! A trial's figures cover the window from opening the start gate to the stop signal: at the
//! stop signal the driver reads every worker's published progress ([`crate::workload::Progress`]) and
//! only then raises the stop flag, so the work counted and the time it is divided by are the
//! same interval. Work done after the signal (a straggler finishing its transaction, asleep,
//! preempted or in `s_lock` back-off) is the *tail*: reported apart (`tail_s`, `ops_total`),
//! never mixed into ops/s. The driver's own sleep may overrun under oversubscription: the window
//! is measured, and the requested length is reported beside it.
//!
//! # The simulated engine
//! With [`PointSpec::sim`] set (`--engine sim`, a `--cfg lwsim` build) the same trial runs as one
//! simulation ([`crate::engine`]): the workers are simulated threads running the same
//! [`crate::workload::run_until_stopped`], the driver is the simulation's supervisor, which opens the
//! gate, waits the warm-up, reads the progress and the simulator's counters, samples the wait
//! events every `--sample-interval` of virtual time through the window, then reads them again and
//! raises the stop flag. Every time is virtual; the counters cover the window only.
//!
//! # CPU time
//! [`TrialResult::cpu`] is the CPU time the workers used in the window, for seed 000's argument
//! (removing one lock's contention moved the bottleneck and cost more CPU per transaction).
//! * Real engine: each worker's thread CPU clock (`pthread_getcpuclockid`, user + system),
//!   read by the driver while every worker waits at the start gate and again at the stop signal,
//!   right after the window's work: the window's CPU time, the tail left out. The wait-event
//!   sampler and the driver are not counted. The user/system split is each worker's
//!   `getrusage(RUSAGE_THREAD)` from passing the gate to its exit (tail included; the kernel
//!   splits the precise total by tick samples, so it is a share, not an exact time).
//! * Simulated engine: the simulated cores' busy time, `cores × window − idle`, with the OS
//!   model's idle time (`lwsim::totals().idle_ps`: no thread on the core; a spinning thread is
//!   busy, as `top` shows it; see lwsim's `machine` docs, *OS*) read at the window's two edges.
//!   No user/system split.

use crate::locks::LockFamily;
use crate::perf::Probe;
use crate::registry::{LockKind, LockVisitor, Program, UserLockId};
use crate::trial::run_protocol;
pub use crate::trial::{
    bimodal, jain, median, CpuTime, PointSpec, SamplerCost, TrialResult, RUNNING,
};

struct TrialVisitor<'a> {
    spec: &'a PointSpec,
    probe: &'a Probe,
}

impl LockVisitor for TrialVisitor<'_> {
    type Output = Result<TrialResult, String>;
    fn visit<F: LockFamily>(self, _kind: LockKind) -> Self::Output {
        run_trial_with::<F>(self.spec, self.probe)
    }
    fn visit_user(self, lock: UserLockId) -> Self::Output {
        let u = lock.get();
        let run = u
            .entry::<Trial>()
            .ok_or_else(|| format!("lock {} was registered without the trial runner", u.name))?;
        run(self.spec, self.probe)
    }
}

/// The trial runner as a [`Program`]: a lock registered at run time carries
/// [`run_trial_for`] instantiated for its family
/// (`UserLock::new(..).with::<Trial, Family>()`).
#[derive(Debug)]
pub struct Trial;

impl Program for Trial {
    type Entry = fn(&PointSpec, &Probe) -> Result<TrialResult, String>;
    fn entry<F: LockFamily>() -> Self::Entry {
        run_trial_for::<F>
    }
}

/// Runs one trial of `spec` with lock family `F` (whatever `spec.lock` names): the entry a lock
/// registered at run time is instantiated with ([`Trial`]).
pub fn run_trial_for<F: LockFamily>(
    spec: &PointSpec,
    probe: &Probe,
) -> Result<TrialResult, String> {
    run_trial_with::<F>(spec, probe)
}

/// Runs one trial of `spec`.
pub fn run_trial(spec: &PointSpec, probe: &Probe) -> Result<TrialResult, String> {
    spec.lock.dispatch(TrialVisitor { spec, probe })
}

fn run_trial_with<F: LockFamily>(spec: &PointSpec, probe: &Probe) -> Result<TrialResult, String> {
    match &spec.sim {
        None => run_protocol::<F, _>(spec, &crate::engine::RealEngine::new(probe)),
        #[cfg(lwsim)]
        Some(sim) => crate::engine::run_simulated::<F>(spec, sim),
        #[cfg(not(lwsim))]
        Some(_) => Err(format!(
            "--engine sim needs the simulator backend; build it with: {}",
            crate::engine::SIM_COMMAND
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{Layout, Strategy};
    use crate::workload::{WorkerConfig, Workload};
    use std::time::Duration;

    /// One worker's CPU time: some, and at most one core's worth over the window (a thread runs
    /// on one core at a time; 10 % for the clock reads after the stop signal). No speed is
    /// asserted.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_trial_measures_its_workers_cpu_time() {
        let probe = crate::perf::probe();
        let spec = PointSpec {
            workload: Workload::EndXact,
            lock: LockKind::Atomic,
            threads: 1,
            procs: 1,
            layout: Layout::Dense,
            duration: Duration::from_millis(50),
            worker: WorkerConfig {
                write_pct: 0,
                work: 0,
                time_every: 4,
                strategy: Strategy::Scan,
                idle_us: 0,
            },
            sample_interval: Duration::ZERO,
            sim: None,
            era: crate::era_traffic::EraTraffic::NONE,
            status_lookups_per_100: crate::workload::STATUS_READS_PER_100,
            wal_hold: crate::workload::DEFAULT_WAL_HOLD,
        };
        // A loaded machine may not run the worker inside a 50 ms window: up to five trials, the
        // first whose window saw work (the bounds below hold on any trial).
        let r = (0..5)
            .map(|_| run_trial(&spec, &probe).expect("trial"))
            .find(|r| r.txns > 0 && r.cpu.is_some_and(|c| c.busy > Duration::ZERO))
            .expect("in five trials the worker never ran inside the window");
        let cpu = r.cpu.expect("the worker's CPU clock");
        assert!(cpu.busy > Duration::ZERO);
        assert!(
            cpu.busy.as_secs_f64() <= r.elapsed.as_secs_f64() * 1.1,
            "{:?} of CPU in a {:?} window",
            cpu.busy,
            r.elapsed
        );
        let pct = r.cpu_busy_pct().unwrap();
        assert!(
            pct > 0.0 && pct <= 110.0 / r.cores() as f64,
            "{pct} % of {} cores",
            r.cores()
        );
        let per = r.cpu_s_per_txn().unwrap();
        assert!(per > 0.0 && per * r.txns as f64 <= r.elapsed.as_secs_f64() * 1.1);
        let sys = cpu.sys_share.expect("getrusage");
        assert!((0.0..=1.0).contains(&sys), "{sys}");
    }

    #[test]
    fn a_short_trial_measures_and_samples() {
        let probe = crate::perf::probe();
        let spec = PointSpec {
            workload: Workload::EndXact,
            lock: LockKind::Atomic,
            threads: 3,
            procs: 3,
            layout: Layout::Dense,
            duration: Duration::from_millis(30),
            worker: WorkerConfig {
                write_pct: 0,
                work: 0,
                time_every: 4,
                strategy: Strategy::Scan,
                idle_us: 0,
            },
            sample_interval: Duration::from_micros(500),
            sim: None,
            era: crate::era_traffic::EraTraffic::NONE,
            status_lookups_per_100: crate::workload::STATUS_READS_PER_100,
            wal_hold: crate::workload::DEFAULT_WAL_HOLD,
        };
        // A loaded machine may not run the workers and the sampler inside a 30 ms window: up to
        // five trials, the first whose window saw work and a sampling pass (the bounds below
        // hold on any trial).
        let r = (0..5)
            .map(|_| run_trial(&spec, &probe).expect("trial"))
            .find(|r| {
                r.ops > 0
                    && r.sampler.passes > 0
                    && !r.excl_wait.is_empty()
                    && r.waits.values().sum::<u64>() > 0
            })
            .expect("in five trials the workers or the sampler never ran inside the window");
        assert_eq!(r.per_thread.len(), 3);
        // One lock operation per end-xact transaction; a worker's two window counters are read
        // as one pair (`Progress::snapshot`), off by at most one transaction per thread.
        assert!(
            r.ops > 0 && r.txns.abs_diff(r.ops) <= 3,
            "{} vs {}",
            r.ops,
            r.txns
        );
        assert!(
            r.ops <= r.ops_total,
            "the window's work is part of the total"
        );
        assert_eq!(r.per_thread.iter().sum::<u64>(), r.txns);
        assert!(r.elapsed >= Duration::from_millis(30));
        assert_eq!(r.requested, Duration::from_millis(30));
        assert!(r.sampler.passes > 0);
        assert!(!r.excl_wait.is_empty());
        assert_eq!(r.shared_wait.len(), 0);
        assert!(r.waits.values().sum::<u64>() > 0, "{:?}", r.waits);
    }
}
