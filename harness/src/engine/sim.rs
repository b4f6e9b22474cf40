//! The simulated engine: one trial as one simulation of lwsim's many-core machine.
//!
//! What it supplies to the trial protocol ([`crate::trial`]): simulated threads; the driver is
//! the simulation's supervisor, and every time is virtual; the warm-up runs inside the trial,
//! before the window opens, so the window's work and lock counters are differences; the
//! simulator's counters and the cores' idle time read at the window's two edges; the wait-event
//! sampler in the supervisor, between its sleeps; each trial's seed mixed into the workers'
//! random choices.

use super::{SimCounters, SimSetup, SimTrial};
use crate::locks::LockFamily;
use crate::trial::{
    panic_message, run_protocol, CpuTime, PointSpec, SamplerCost, StartGate, TrialResult,
    WaitSampler,
};
use crate::trial::{Joiner, Samples, TrialEngine, WorkerSide};
use crate::workload::Progress;
use lwlock::sync::lwsim;
use lwlock::sync::Ordering;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One trial of `spec` with family `F` on the simulated machine `sim`.
pub(crate) fn run<F: LockFamily>(spec: &PointSpec, sim: &SimSetup) -> Result<TrialResult, String> {
    let out: Arc<Mutex<Option<Result<TrialResult, String>>>> = Arc::new(Mutex::new(None));
    let (spec2, sim2, out2) = (spec.clone(), sim.clone(), out.clone());
    let cfg = lwsim::SimConfig::new(sim.profile.clone(), sim.cores).seed(sim.seed);
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        lwsim::run(cfg, move || {
            let r = run_protocol::<F, _>(&spec2, &SimEngine { sim: &sim2 });
            *out2.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        })
    }));
    let report = run.map_err(|p| {
        format!(
            "the simulation failed with lock {}: {}",
            spec.lock.name(),
            panic_message(&*p)
        )
    })?;
    let mut result = out
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .ok_or("the simulation ended without a result")??;
    if let Some(s) = &mut result.sim {
        s.real = report.real;
        s.events_per_sec = report.events_per_sec();
    }
    Ok(result)
}

/// The simulated machine as a trial engine (inside the simulation: the supervisor).
#[derive(Debug)]
struct SimEngine<'a> {
    sim: &'a SimSetup,
}

/// A simulated worker's side: the trial's seed.
#[derive(Clone, Copy, Debug)]
struct SimSide {
    seed: u64,
}

impl WorkerSide for SimSide {
    type Meter = ();
    type Report = ();

    fn seed(&self) -> u64 {
        self.seed
    }
    /// A panic inside a simulation ends it (the simulator reports it): nothing waits forever.
    #[inline(always)]
    fn guard<R>(&self, setup: impl FnOnce() -> R) -> std::thread::Result<R> {
        Ok(setup())
    }
    #[inline(always)]
    fn open(&self, _slot: usize) {}
    #[inline(always)]
    fn start(&self, _m: &mut ()) {}
    #[inline(always)]
    fn finish(&self, _m: ()) {}
    #[inline(always)]
    fn now(&self) -> u64 {
        now()
    }
}

/// Virtual nanoseconds of the calling (simulated) thread.
fn now() -> u64 {
    lwlock::sync::clock_nanos()
}

/// Sleeps until virtual time `until` (ns) or a little past it (the profile's timer slack).
fn sleep_until(until: u64) {
    let t = now();
    if t < until {
        lwlock::sync::sleep_micros((until - t).div_ceil(1000));
    }
}

impl TrialEngine for SimEngine<'_> {
    type Side = SimSide;

    /// The simulator's counters at the window's opening.
    type Open = lwsim::CoreCounters;
    /// The cores' idle time, ps, at the stop signal's clock, and the counters after the
    /// window's work was read.
    type Close = (u64, lwsim::CoreCounters);

    fn worker_side(&self, _threads: usize) -> SimSide {
        SimSide {
            seed: self.sim.seed,
        }
    }

    fn watch(&self, name: &'static str, lock: *const ()) {
        lwsim::watch(name, lock);
    }

    fn spawn<T: Send + 'static>(
        &self,
        _slot: usize,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Joiner<T> {
        Joiner::Sim(lwlock::sync::thread::spawn(f))
    }

    /// The workers join the machine here, check in and sleep at the gate.
    fn await_check_in(&self, gate: &StartGate) {
        lwsim::settle();
        while !gate.all_ready() {
            lwlock::sync::sleep_micros(10);
        }
    }

    fn now(&self) -> u64 {
        now()
    }

    fn sleep_until(&self, t: u64) {
        sleep_until(t);
    }

    fn warmup(&self) -> Option<Duration> {
        Some(self.sim.warmup)
    }

    fn read_progress(&self, p: &Progress) -> (u64, u64) {
        (
            p.ops.load(Ordering::Relaxed),
            p.txns.load(Ordering::Relaxed),
        )
    }

    fn open_edge(&self) -> lwsim::CoreCounters {
        lwsim::totals().unwrap_or_default()
    }

    fn close_edge<R>(&self, work: impl FnOnce() -> R) -> (R, Self::Close) {
        // The cores' idle time at the window's end, at the clock the stop signal was read at
        // (reading the window's work advances it).
        let idle = lwsim::totals().unwrap_or_default().idle_ps;
        let r = work();
        (r, (idle, lwsim::totals().unwrap_or_default()))
    }

    fn window<R>(
        &self,
        end: u64,
        _duration: Duration,
        interval: Duration,
        sampler: &WaitSampler,
        _stopped: &(dyn Fn() -> bool + Sync),
        signal: impl FnOnce() -> R,
    ) -> (R, Samples) {
        let interval = interval.as_nanos() as u64;
        let mut by_bits = BTreeMap::new();
        let mut cost = SamplerCost::default();
        if interval == 0 {
            sleep_until(end);
        } else {
            while now() < end {
                let t0 = now();
                sampler.pass(&mut by_bits);
                cost.passes += 1;
                cost.busy += Duration::from_nanos(now() - t0);
                sleep_until((t0 + interval).min(end));
            }
        }
        (signal(), Ok((by_bits, cost)))
    }

    fn finish(
        &self,
        result: &mut TrialResult,
        open: lwsim::CoreCounters,
        (idle_end, close): Self::Close,
        _reports: Vec<()>,
    ) {
        // Busy core time in the window: every core's time less its idle time.
        let capacity = self.sim.cores as u64 * result.elapsed.as_nanos() as u64;
        let idle_ns = idle_end.saturating_sub(open.idle_ps) / 1000;
        result.cpu = Some(CpuTime {
            busy: Duration::from_nanos(capacity.saturating_sub(idle_ns)),
            sys_share: None,
        });
        result.sim = Some(SimTrial {
            platform: self.sim.platform.clone(),
            cores: self.sim.cores,
            seed: self.sim.seed,
            counters: SimCounters::window(&open, &close),
            real: Duration::ZERO,
            events_per_sec: 0.0,
        });
    }
}
