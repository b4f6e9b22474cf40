//! The two engines: `real` (the host's threads and clock) and `sim` (lwsim, the simulated
//! many-core machine of `lwlock::sync::lwsim`).
//!
//! Both run the same workload code ([`crate::workload`]): its atomics, spawns, the start gate,
//! the stop flag, the clock and its waits go through `lwlock::sync`, and the plain data a critical
//! section reads or writes (the CLOG bytes, the null-x counter, the buffer page, a shared
//! snapshot) is charged with `lwlock::sync::touch`. In a `--cfg lwsim` build those are the
//! simulator's, and a trial runs as one simulation: the workers are simulated threads on
//! `--cores` cores of the `--platform` profile, the driver and the wait-event sampler are the
//! simulation's supervisor, and every figure is in virtual time.
//!
//! The simulator is a build mode, not a run-time switch (see the lwsim module docs: a cargo
//! feature would leak into normal builds), so `--engine sim` needs a binary built with
//! `RUSTFLAGS="--cfg lwsim"`, and that binary runs only `--engine sim` (its atomics consult the
//! simulator, whose per-thread wait records exist only inside a simulation).
//!
//! std's `RwLock` and parking_lot cannot be simulated: their atomics are their own, not the
//! shim's, so the simulator would see neither their lock words nor their sleeps.
//!
//! # Seeds
//! Trial `k` (1-based) of every point runs with seed [`trial_seed`]`(--seed, k)`: it seeds the
//! simulator's tie-breaks and the workers' random choices. The same command gives the same
//! `results.csv` rows; different trials of a point differ, so the `bimodal` flag means what it
//! means on real hardware (some trial far from the median).

mod real;
#[cfg(lwsim)]
mod sim;

#[cfg(lwsim)]
pub use lwlock::sync::lwsim::Profile;
pub(crate) use real::RealEngine;
#[cfg(lwsim)]
pub(crate) use sim::run as run_simulated;
use std::time::Duration;

/// Which engine runs the trials.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// The host: real threads, the TSC or `Instant`, perf counters.
    Real,
    /// lwsim: the simulated machine of `--platform` (a `--cfg lwsim` build).
    Sim,
}

impl Engine {
    /// Both engines, in `--engine` order.
    pub const ALL: [Engine; 2] = [Engine::Real, Engine::Sim];

    /// Parses an `--engine` name.
    pub fn from_name(s: &str) -> Option<Engine> {
        Engine::ALL.into_iter().find(|e| e.name() == s)
    }

    /// `real` or `sim`.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Real => "real",
            Engine::Sim => "sim",
        }
    }
}

/// The built-in profile `--engine sim` uses without `--platform`: 2 × 18-core Broadwell-EP,
/// 72 hardware threads (the class of machine most of the seeds measured on).
pub const DEFAULT_PLATFORM: &str = "xeon-2s-broadwell";

/// Whether this binary was built with the simulator backend (`--cfg lwsim`).
pub const SIM_BACKEND: bool = cfg!(lwsim);

/// The one command that builds and runs a simulated sweep (for error messages and `--help`).
pub const SIM_COMMAND: &str = "RUSTFLAGS=\"--cfg lwsim\" CARGO_TARGET_DIR=target/lwsim cargo run \
     --release -p bench --features stats -- --engine sim ...";

/// The simulated machine of one trial.
#[derive(Clone, Debug)]
pub struct SimSetup {
    /// The profile's name (its `name` field).
    pub platform: String,
    /// Hardware threads in use: the first `cores` of the profile's topology.
    pub cores: usize,
    /// This trial's seed (see [`trial_seed`]).
    pub seed: u64,
    /// Warm-up in virtual time, inside the same simulation before the window opens.
    pub warmup: Duration,
    /// The profile.
    #[cfg(lwsim)]
    pub profile: Profile,
}

/// The seed of trial `trial` (1-based) from `--seed`: splitmix64 of both, so neighbouring
/// seeds and trials are unrelated.
pub fn trial_seed(seed: u64, trial: u32) -> u64 {
    let mut x = seed ^ (trial as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The simulator's counters of one trial's window (warm-up and tail excluded), summed over the
/// simulated cores. Every value is a function of (program, profile, cores, seed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimCounters {
    /// Memory operations (atomics and touched lines).
    pub mem_ops: u64,
    /// Loads of a line Modified at another core.
    pub load_from_modified: u64,
    /// Loads of a line Shared by other cores.
    pub load_from_shared: u64,
    /// Stores/RMWs taking a line Modified at another core.
    pub rfo_from_modified: u64,
    /// Stores/RMWs invalidating sharers.
    pub invalidations: u64,
    /// First touches of a line (from memory).
    pub fills: u64,
    /// Time requests waited for a line busy with another transfer, ns.
    pub line_wait_ns: u64,
    /// Futex waits that slept.
    pub futex_sleeps: u64,
    /// Threads woken by FUTEX_WAKE.
    pub futex_wakes: u64,
    /// Threads preempted at the end of their slice.
    pub preemptions: u64,
    /// Dispatches of a queued thread onto a core (each pays the profile's `context_switch`); a
    /// thread woken onto an idle core is not dispatched. Named `context_switches` before the
    /// Linux-style count below existed.
    pub dispatches: u64,
    /// Voluntary context switches as Linux counts them (`nvcsw`): a worker blocked (a futex
    /// sleep, a timed sleep, an idle wait) and left its core.
    pub voluntary_switches: u64,
    /// Involuntary context switches as Linux counts them (`nivcsw`): a worker left its core
    /// still runnable (preempted, or a `sched_yield` that ran another thread).
    pub involuntary_switches: u64,
    /// Timed sleeps (`pg_usleep`, s_lock's backoff).
    pub sleeps: u64,
}

impl SimCounters {
    /// Context switches as Linux counts them (`nvcsw + nivcsw`): the same meaning as the real
    /// engine's perf `context-switches` event or `getrusage`.
    pub fn context_switches(&self) -> u64 {
        self.voluntary_switches + self.involuntary_switches
    }

    /// Line transfers of every kind (the simulator's stand-in for cache misses).
    pub fn transfers(&self) -> u64 {
        self.load_from_modified
            + self.load_from_shared
            + self.rfo_from_modified
            + self.invalidations
            + self.fills
    }

    /// The window's counts from the totals at its start and end.
    #[cfg(lwsim)]
    pub fn window(
        start: &lwlock::sync::lwsim::CoreCounters,
        end: &lwlock::sync::lwsim::CoreCounters,
    ) -> SimCounters {
        let d = end.since(start);
        SimCounters {
            mem_ops: d.ops,
            load_from_modified: d.load_from_modified,
            load_from_shared: d.load_from_shared,
            rfo_from_modified: d.rfo_from_modified,
            invalidations: d.invalidations,
            fills: d.fills,
            line_wait_ns: d.line_wait_ps / 1000,
            futex_sleeps: d.futex_sleeps,
            futex_wakes: d.futex_wakes,
            preemptions: d.preemptions,
            dispatches: d.dispatches,
            voluntary_switches: d.voluntary_switches,
            involuntary_switches: d.involuntary_switches,
            sleeps: d.sleeps,
        }
    }
}

/// What a simulated trial adds to its result.
#[derive(Clone, Debug)]
pub struct SimTrial {
    /// The profile's name.
    pub platform: String,
    /// Simulated hardware threads.
    pub cores: usize,
    /// The trial's seed.
    pub seed: u64,
    /// The window's counters.
    pub counters: SimCounters,
    /// Real time the whole simulation took (warm-up and tail included; not deterministic, so
    /// it is reported on stderr and in `meta.json`, never in the CSV rows).
    pub real: Duration,
    /// Simulated memory operations per real second over the whole simulation.
    pub events_per_sec: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trial_seeds_differ_and_repeat() {
        assert_eq!(trial_seed(1, 1), trial_seed(1, 1));
        assert_ne!(trial_seed(1, 1), trial_seed(1, 2));
        assert_ne!(trial_seed(1, 1), trial_seed(2, 1));
    }
}
