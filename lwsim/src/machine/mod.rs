//! The simulated machine, in five parts, each in its own file:
//!
//! * the **executor** (`executor.rs`): the tasks' virtual clocks and the conservative
//!   smallest-clock-first order in which lwsim's executor (`coroutines.rs`) runs them;
//! * the **coherence model** behind the `Coherence` trait (`coherence.rs`): the directory of
//!   lines, each access's cost and when it takes effect; the shipped model is `Directory`
//!   (`directory.rs`); an access is charged through it by `charge.rs`;
//! * the **store buffer** (`store_buffer.rs`): x86-TSO's buffered plain stores;
//! * the **OS model** behind the `Scheduler` trait (`scheduler.rs`): cores, run queues, slices
//!   and wakeups; the shipped model is `Cfs` (`cfs.rs`, CFS before Linux 6.6); the system calls
//!   that enter it (futexes, sleeps, `sched_yield`, thread start and exit) are `syscall.rs`;
//! * the **counters** (`counters.rs`, the data; `counting.rs`, counting into them and reading
//!   them): per core and per watched line, the report, the access trace's lines.
//!
//! Besides: a task's state (`task.rs`), the spin jumps (`spin.rs`), the random streams
//! (`stream.rs`), the address maps (`addr_map.rs`), and the machine assembled with its shipped
//! models (`assembly.rs`).
//!
//! **Layering.** The data files (`task.rs`, `counters.rs`, `stream.rs`, `addr_map.rs`) and the two
//! traits name nothing of the machine; this file, which defines [`Machine`], names only them (a
//! model is a `Box<dyn Coherence<Machine>>` or `Box<dyn Scheduler<Machine>>`, the traits generic
//! over the machine they are given); every other file works on the machine, and this file only
//! re-exports them. So no two files depend on each other, and a second model (another
//! coherence protocol, EEVDF) is one new file and one line of `assembly.rs`.
//!
//! All state lives in one thread-local [`Machine`]: the executor runs every task and every
//! decision on the OS thread that called `run`, so they all see it. Task code borrows it only
//! between scheduling points (never across a switch), a decision only inside `pick`. The
//! coherence and OS models are taken out of the machine while one of their methods runs (a move
//! of a box), so that they can work on the rest of it.
//!
//! # Time
//! Picoseconds (`u64`). Every task has a clock; an operation of the running task executes at the
//! task's clock and advances it by the operation's cost. Ordering is conservative: a task performs
//! an operation only while its `(clock, priority)` key is below every other eligible task's (the
//! *horizon*), otherwise it yields and the scheduler runs the smallest key. So operations on
//! shared state happen in virtual-time order, the OS model's included: what it does before a
//! thread's operation (a core taken after a sleep or wakeup, a slice check, a balance) waits
//! for the thread's key to be the smallest too.
//!
//! # Random streams
//! Each model draws from a stream of its own, keyed by the run's seed, so that a change to one
//! model's draws never reshuffles another's (`Stream`): the coherence model's (latency spread,
//! residency windows, arbitration delays) is keyed by the seed itself (its draws are those of the
//! single generator the machine had before the split, so every simulated figure stands); the
//! executor's tie-break priorities and the OS model's balancing phases are hashes of the seed
//! with the task or core (each its own function of the seed, as before). The store buffer and the
//! counters draw nothing.
//!
//! **SMT siblings** (`model.smt_share`; 1 = off) transfer lines cheaply (`transfer_smt`) and share
//! their core's execution: while a hardware thread's sibling runs a thread, its computation
//! (`compute`) and instructions (`instructions`) take `1 / smt_share` as long. The sibling's state
//! is sampled when the computation starts.

mod addr_map;
mod assembly;
mod cfs;
mod charge;
mod coherence;
mod counters;
mod counting;
mod directory;
mod executor;
mod scheduler;
mod spin;
mod store_buffer;
mod stream;
mod syscall;
mod task;

pub use crate::access::{Access, Plain, LINE_SHIFT, MAX_AGENTS};
pub use charge::{access, charge_instructions, charge_plain, serialize};
pub use counters::{CoreCounters, LineCounters, Report};
pub use counting::{debug_state, totals, watch, watched_lines};
pub use executor::supervisor_wait_until;
pub use spin::spin_pauses;
pub(crate) use store_buffer::merge_field;
pub use store_buffer::{forwarded, store_field, store_plain};
pub use syscall::{
    futex_wait, futex_wake, idle_wait, sched_yield, sleep, thread_exit, thread_start,
};

use crate::line_profile::LineProfile;
use crate::profile::Profile;
use crate::trace::Trace;
use addr_map::Map;
use coherence::{Coherence, Req};
use scheduler::Scheduler;
use std::cell::RefCell;
use std::collections::VecDeque;
use task::Task;

/// The whole simulated machine: the executor's tasks, the two models behind their traits, the
/// store buffers' parameters and the counters.
pub struct Machine {
    prof: Profile,
    costs: [u64; crate::profile::COST_KEYS.len()],
    ncores: usize,
    /// Each simulated core's SMT sibling among the simulated cores (Linux numbering: hardware
    /// thread `h` and `h + physical cores` share a core), if the sibling is simulated.
    sibling: Vec<Option<usize>>,
    /// `model.smt_share`.
    smt_share: f64,
    /// `model.instruction_ns` in ps (rounded).
    instruction_ps: u64,
    /// The coherence model (`None` only while one of its methods runs).
    coherence: Option<Box<dyn Coherence<Machine>>>,
    /// The OS model (`None` only while one of its methods runs).
    os: Option<Box<dyn Scheduler<Machine>>>,
    /// `model.store_buffer_entries` (0: no store buffer, a store stalls for its line).
    sb_cap: usize,
    /// The earliest drain time among the store buffers' oldest entries (`u64::MAX`: all empty).
    sb_next: u64,
    /// Whether spin-wait loops may take spin jumps (`spin.rs`; the figures are the same).
    spin_jumps: bool,
    /// The last spin jump's number.
    spin_epoch: u64,
    futexes: Map<usize, VecDeque<usize>>,
    // The executor.
    seed: u64,
    tasks: Vec<Task>,
    /// Clock of the last scheduling decision (never decreases).
    now: u64,
    /// The running task.
    current: usize,
    /// `(clock, prio, id)` of the best other eligible task at the last decision (lowered when the
    /// running task makes another one eligible).
    horizon: (u64, u64, usize),
    /// The keys of the tasks that are neither parked nor absent, in increasing order: the
    /// scheduler's choice without a pass over every task's state at each step. A task's entry is
    /// brought up to date at the next decision after its key or parked flag changed (see
    /// `stale`).
    order: Vec<(u64, u64, usize)>,
    /// Tasks other than the running one whose key or parked flag changed since the last
    /// decision (the running task's entry is refreshed at every decision).
    stale: Vec<usize>,
    /// The tasks marked `absent`.
    absent: Vec<usize>,
    steps: u64,
    /// Sync points passed by tasks unwinding a panic (`executor.rs`).
    unwound: u64,
    // The counters.
    counters: Vec<CoreCounters>,
    watched: Vec<LineCounters>,
    threads: usize,
    end_ps: u64,
    /// The off-by-default per-line diagnostic (`LWSIM_LINES`, see `line_profile.rs`).
    line_profile: Option<Box<LineProfile>>,
    /// The off-by-default access trace (`LWSIM_TRACE`, see `trace.rs`).
    trace: Option<Trace>,
}

impl std::fmt::Debug for Machine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Machine")
            .field("profile", &self.prof.name)
            .field("cores", &self.ncores)
            .field("tasks", &self.tasks.len())
            .field("now_ps", &self.now)
            .finish()
    }
}

thread_local! {
    static MACHINE: RefCell<Option<Box<Machine>>> = const { RefCell::new(None) };
}

/// Runs `f` with the machine of this OS thread, if a simulation runs on it.
pub fn with_machine<R>(f: impl FnOnce(Option<&mut Machine>) -> R) -> R {
    MACHINE.with(|m| f(m.borrow_mut().as_deref_mut()))
}

/// Whether a simulation runs on this OS thread.
pub fn active() -> bool {
    MACHINE.with(|m| m.borrow().is_some())
}

pub(crate) fn install(m: Machine) {
    MACHINE.with(|c| *c.borrow_mut() = Some(Box::new(m)));
}

pub(crate) fn uninstall() -> Option<Box<Machine>> {
    MACHINE.with(|c| c.borrow_mut().take())
}

impl Machine {
    /// Runs `f` on the coherence model, taken out of the machine meanwhile.
    fn with_coherence<R>(
        &mut self,
        f: impl FnOnce(&mut dyn Coherence<Machine>, &mut Machine) -> R,
    ) -> R {
        let mut c = self
            .coherence
            .take()
            .expect("lwsim: the coherence model re-entered");
        let r = f(&mut *c, self);
        self.coherence = Some(c);
        r
    }

    /// Runs `f` on the OS model, taken out of the machine meanwhile.
    fn with_os<R>(&mut self, f: impl FnOnce(&mut dyn Scheduler<Machine>, &mut Machine) -> R) -> R {
        let mut os = self.os.take().expect("lwsim: the OS model re-entered");
        let r = f(&mut *os, self);
        self.os = Some(os);
        r
    }

    /// The OS model, to read.
    fn os(&self) -> &dyn Scheduler<Machine> {
        self.os.as_deref().expect("lwsim: the OS model re-entered")
    }

    /// The coherence model, to read.
    fn coherence(&self) -> &dyn Coherence<Machine> {
        self.coherence
            .as_deref()
            .expect("lwsim: the coherence model re-entered")
    }

    pub(crate) fn into_report(mut self, real: std::time::Duration) -> Report {
        if let Some(p) = self.line_profile.take() {
            eprint!("{}", p.report());
        }
        let end_ps = self.end_ps;
        for c in 0..self.ncores {
            self.counters[c].idle_ps = self.os().idle_through(c, end_ps);
        }
        let mut per_core = self.counters;
        let supervisor = per_core.pop().unwrap_or_default();
        Report {
            profile: self.prof.name.clone(),
            cores: self.ncores,
            threads: self.threads,
            end_ps,
            per_core,
            supervisor,
            lines: self.watched,
            steps: self.steps,
            real,
        }
    }

    /// The directory slot of the running task: its core, else its last core, else the
    /// supervisor's slot.
    fn agent(&self) -> usize {
        let t = &self.tasks[self.current];
        t.core
            .or(t.last_core)
            .map(|c| c as usize)
            .unwrap_or(self.ncores)
    }

    /// `ps` of computation on the running task's hardware thread, stretched by `smt_share` while
    /// its SMT sibling runs a thread (spinning included: a spinning sibling issues loads and
    /// PAUSEs). The sibling's state is the one at the start of the computation.
    fn smt_stretched(&self, ps: u64) -> u64 {
        if self.smt_share >= 1.0 {
            return ps;
        }
        let a = self.agent();
        match self.sibling.get(a).copied().flatten() {
            Some(s) if self.os().running(s).is_some() => {
                (ps as f64 / self.smt_share).round() as u64
            }
            _ => ps,
        }
    }

    fn advance(&mut self, ps: u64) {
        let a = self.agent();
        self.tasks[self.current].clock += ps;
        self.counters[a].busy_ps += ps;
    }

    /// Phase 1 of a coherence access by the running task (see [`Coherence::request`]).
    fn request(&mut self, line_addr: usize, kind: Access, arbitrated: bool) -> Req {
        self.with_coherence(|c, m| c.request(m, line_addr, kind, arbitrated))
    }

    /// Phase 2: the running task's booked transfer `seq` on `line_addr` is granted.
    fn grant(&mut self, line_addr: usize, seq: u64) {
        self.with_coherence(|c, _| c.grant(line_addr, seq));
    }
}
