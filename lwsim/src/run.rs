//! The entry point [`run()`] and the shuttle scheduler it runs under: smallest virtual clock first.

use crate::machine::{self, Machine, Report};
use crate::profile::Profile;
use shuttle::scheduler::{Schedule, Scheduler, Task, TaskId};

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

/// One execution; every decision goes to the machine's smallest-clock choice.
struct SmallestClock {
    started: bool,
    /// The tasks shuttle listed at the last decision (the runnable ones, and any blocked one that
    /// may wake up spuriously), by address, and for each task id its index in that list
    /// (`NOT_OFFERED` if absent): the same list at the next decision (the same tasks, which keep
    /// their ids, in the same order) needs no pass reading every task's id. Shuttle's tasks live
    /// in one array that only grows during an execution and moves as a whole, so an address
    /// seen at two decisions in a row is the same task's.
    seen: Vec<usize>,
    index: Vec<u32>,
    /// The largest task id in `seen`.
    top: Option<usize>,
}

const NOT_OFFERED: u32 = u32::MAX;

impl SmallestClock {
    /// Brings `seen`, `index` and `top` up to date with this decision's runnable tasks; returns
    /// whether the list changed.
    fn observe(&mut self, runnable_tasks: &[&Task]) -> bool {
        let addr = |t: &&Task| std::ptr::from_ref::<Task>(*t) as usize;
        // Every pair compared (no early exit), which the compiler can do several at a time.
        let same = |(&p, t): (&usize, &&Task)| p == addr(t);
        if self.seen.len() == runnable_tasks.len()
            && (self.seen.iter().zip(runnable_tasks)).fold(true, |all, e| all & same(e))
        {
            return false;
        }
        self.index.iter_mut().for_each(|i| *i = NOT_OFFERED);
        self.seen.clear();
        self.top = None;
        for (i, t) in runnable_tasks.iter().enumerate() {
            self.seen.push(addr(t));
            let id = usize::from(t.id());
            if self.index.len() <= id {
                self.index.resize(id + 1, NOT_OFFERED);
            }
            self.index[id] = i as u32;
            self.top = self.top.max(Some(id));
        }
        true
    }
}

impl Scheduler for SmallestClock {
    fn new_execution(&mut self) -> Option<Schedule> {
        if self.started {
            return None;
        }
        self.started = true;
        Some(Schedule::new(0))
    }

    fn next_task(
        &mut self,
        runnable_tasks: &[&Task],
        _current_task: Option<TaskId>,
        _is_yielding: bool,
    ) -> Option<TaskId> {
        let changed = self.observe(runnable_tasks);
        let index = &self.index;
        let listed = |id: usize| {
            let i = *index.get(id)?;
            (i != NOT_OFFERED).then(|| runnable_tasks[i as usize].runnable())
        };
        let runnable = || {
            runnable_tasks
                .iter()
                .filter(|t| t.runnable())
                .map(|t| usize::from(t.id()))
        };
        let id = machine::with_machine(|m| {
            let m = m.expect("lwsim: scheduler called without a machine");
            // A task the machine does not know yet is created at this decision if it is
            // runnable, with every lower id: find the largest runnable id.
            let top = match self.top {
                Some(top) if top >= m.known_tasks() => runnable().max(),
                _ => None,
            };
            m.pick(top, listed, changed, runnable())
        });
        Some(TaskId::from(id))
    }

    fn next_u64(&mut self) -> u64 {
        // Only shuttle's own random draws (none in this project) come here: deterministic.
        0x2545_F491_4F6C_DD1D
    }
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
    let mut config = shuttle::Config::new();
    config.max_steps = shuttle::MaxSteps::None;
    config.failure_persistence = shuttle::FailurePersistence::None;
    config.stack_size = cfg.stack_size;
    config.silence_warnings = true;
    let start = std::time::Instant::now();
    let runner = shuttle::Runner::new(
        SmallestClock {
            started: false,
            seen: Vec::new(),
            index: Vec::new(),
            top: None,
        },
        config,
    );
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| runner.run(f)));
    let real = start.elapsed();
    let m = machine::uninstall().expect("machine installed");
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
    m.into_report(real)
}
