//! The entry point [`run()`]: a machine installed, the supervisor run on lwsim's executor
//! (`coroutines.rs`: smallest virtual clock first), the machine's report.

use crate::coroutines;
use crate::machine::{self, Machine, Report};
use crate::profile::Profile;

/// What to simulate.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// The machine.
    pub profile: Profile,
    /// Hardware threads in use (`0..cores`, Linux numbering, see [`Profile`]).
    pub cores: usize,
    /// Seeds the tie-break priorities between tasks with equal clocks.
    pub seed: u64,
    /// Stack size of each simulated thread (bytes).
    pub stack_size: usize,
    /// Whether spin-wait loops ([`crate::spin_pauses`]) may jump to their line's next event
    /// instead of running one load and one PAUSE at a time (default on). Every simulated figure
    /// is the same either way; off, a run takes more scheduler steps and more real time.
    pub spin_jumps: bool,
}

impl SimConfig {
    /// `cores` hardware threads of `profile`, seed 0.
    pub fn new(profile: Profile, cores: usize) -> SimConfig {
        SimConfig {
            profile,
            cores,
            seed: 0,
            stack_size: 0x4_0000,
            spin_jumps: true,
        }
    }
    /// The same with another seed.
    pub fn seed(mut self, seed: u64) -> SimConfig {
        self.seed = seed;
        self
    }
    /// The same with spin jumps on or off.
    pub fn spin_jumps(mut self, on: bool) -> SimConfig {
        self.spin_jumps = on;
        self
    }
}

/// Every decision of the executor: the machine's scheduler (`Machine::pick`) over the offered
/// tasks.
fn decide(offer: &coroutines::Offer<'_>) -> usize {
    machine::with_machine(|m| {
        let m = m.expect("lwsim: the executor runs without a machine");
        // A task the machine does not know yet is created at this decision, with every lower id:
        // only the newest can be one (a task is known once it has been chosen).
        let n = offer.len();
        let top = (n > m.known_tasks()).then(|| n - 1);
        let runnable = (0..n).filter(|&id| offer.runnable(id));
        m.pick(top, |id| offer.runnable(id), offer.changed(), runnable)
    })
}

/// Runs `f` as the supervisor (main task) of a simulated machine and returns the counters.
///
/// `f` spawns the simulated threads with [`crate::thread::spawn`] and joins them. One
/// simulation runs per OS thread at a time (the machine is a thread-local); a panic in a
/// simulated thread (or a simulated deadlock) propagates.
pub fn run<F>(cfg: SimConfig, f: F) -> Report
where
    F: Fn() + Send + Sync + 'static,
{
    assert!(
        !machine::active(),
        "lwsim: a simulation already runs on this thread"
    );
    machine::install(Machine::new(
        cfg.profile,
        cfg.cores,
        cfg.seed,
        cfg.spin_jumps,
    ));
    let start = std::time::Instant::now();
    // The closure is the supervisor's; what it captures is dropped after the run, with the
    // machine gone (as shuttle's runner did), not inside the simulation.
    let f = std::sync::Arc::new(f);
    let main = f.clone();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        coroutines::drive(cfg.stack_size, decide, move || main())
    }));
    let leftovers = coroutines::uninstall();
    let real = start.elapsed();
    let m = machine::uninstall().expect("machine installed");
    if let Some(l) = leftovers {
        l.dispose(result.is_err());
    }
    drop(f);
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
    m.into_report(real)
}
