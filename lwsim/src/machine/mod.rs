//! The simulated machine, in five parts, each in its own file:
//!
//! * the **executor** (`executor.rs`): the tasks' virtual clocks and the conservative
//!   smallest-clock-first order the shuttle scheduler hook follows;
//! * the **coherence model** (`coherence.rs`), behind the `Coherence` trait: the directory of
//!   lines, each access's cost and when it takes effect; the shipped model is `Directory`;
//! * the **store buffer** (`store_buffer.rs`): x86-TSO's buffered plain stores;
//! * the **OS model** (`cfs.rs`, `syscall.rs`), behind the `Scheduler` trait: cores, run
//!   queues, slices and wakeups (the shipped model is `Cfs`, CFS before Linux 6.6), and the
//!   system calls (futexes, sleeps, `sched_yield`, thread start and exit) that enter it;
//! * the **counters** (`counters.rs`): per core and per watched line, the report, the access
//!   trace's lines.
//!
//! All state lives in one thread-local [`Machine`]: shuttle runs every task and the scheduler on
//! the OS thread that called `run`, so they all see it. Task code borrows it only between
//! scheduling points (never across a shuttle call), the scheduler only inside `next_task`. The
//! coherence and OS models are taken out of the machine while one of their methods runs (a move
//! of a box), so that they can work on the rest of it.
//!
//! # Time
//! Picoseconds (`u64`). Every task has a clock; an operation of the running task executes at the
//! task's clock and advances it by the operation's cost. Ordering is conservative: a task performs
//! an operation only while its `(clock, priority)` key is below every other eligible task's (the
//! *horizon*), otherwise it yields and the scheduler runs the smallest key. So operations on
//! shared state happen in virtual-time order.
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

mod cfs;
mod coherence;
mod counters;
mod executor;
mod spin;
mod store_buffer;
mod syscall;

pub use crate::access::{Access, Plain, LINE_SHIFT, MAX_AGENTS};
pub(crate) use cfs::{Cfs, Scheduler};
pub(crate) use coherence::{Coherence, Directory};
pub use counters::{debug_state, totals, watch, watched_lines, CoreCounters, LineCounters, Report};
pub use executor::supervisor_wait_until;
pub use spin::spin_pauses;
pub(crate) use store_buffer::merge_field;
pub use store_buffer::{forwarded, serialize, store_field, store_plain};
pub use syscall::{futex_wait, futex_wake, sched_yield, sleep, thread_exit, thread_start};

use crate::line_profile::LineProfile;
use crate::profile::{cost, model, Profile};
use crate::trace::Trace;
use executor::{at_sync_point, at_turn, Task};
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// A tiny multiplicative hasher for line and futex addresses (deterministic, fast).
#[derive(Default)]
pub(crate) struct AddrHasher(u64);
impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(5) ^ *b as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}
pub(crate) type Map<K, V> = HashMap<K, V, BuildHasherDefault<AddrHasher>>;

pub(crate) fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A model's seeded random stream: its `n`-th draw is a hash of its key and `n`, so one model's
/// draws depend only on its key and on how many it made.
#[derive(Clone, Debug)]
pub(crate) struct Stream {
    key: u64,
    n: u64,
}

impl Stream {
    /// The stream keyed by `key` (a run's seed, or a hash of it).
    pub fn new(key: u64) -> Stream {
        Stream { key, n: 0 }
    }
    /// The next draw, uniform in `[0, 1)`.
    pub fn uniform(&mut self) -> f64 {
        self.n = self.n.wrapping_add(1);
        (splitmix(self.key ^ self.n.wrapping_mul(0xD1B5_4A32_D192_ED03)) >> 11) as f64
            / (1u64 << 53) as f64
    }
}

/// The whole simulated machine: the executor's tasks, the two models behind their traits, the
/// store buffers' parameters and the counters.
pub struct Machine {
    prof: Profile,
    costs: [u64; 16],
    ncores: usize,
    /// Each simulated core's SMT sibling among the simulated cores (Linux numbering: hardware
    /// thread `h` and `h + physical cores` share a core), if the sibling is simulated.
    sibling: Vec<Option<usize>>,
    /// `model.smt_share`.
    smt_share: f64,
    /// `model.instruction_ns` in ps (rounded).
    instruction_ps: u64,
    /// The coherence model (`None` only while one of its methods runs).
    coherence: Option<Box<dyn Coherence>>,
    /// The OS model (`None` only while one of its methods runs).
    os: Option<Box<dyn Scheduler>>,
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
    pub(crate) fn new(prof: Profile, ncores: usize, seed: u64, spin_jumps: bool) -> Machine {
        assert!(
            ncores >= 1 && ncores <= prof.hw_threads(),
            "{ncores} cores requested; profile {} has {} hardware threads",
            prof.name,
            prof.hw_threads()
        );
        let mut costs = [0; 16];
        costs.copy_from_slice(&prof.costs_ps[..16]);
        Machine {
            coherence: Some(Box::new(Directory::new(&prof, Stream::new(seed)))),
            os: Some(Box::new(Cfs::new(&prof, ncores, seed))),
            sb_cap: prof.param(model::STORE_BUFFER_ENTRIES) as usize,
            sb_next: u64::MAX,
            spin_jumps,
            spin_epoch: 0,
            sibling: (0..ncores)
                .map(|c| (0..ncores).find(|&d| d != c && prof.place(d).2 == prof.place(c).2))
                .collect(),
            smt_share: prof.param(model::SMT_SHARE),
            instruction_ps: (prof.param(model::INSTRUCTION_NS) * 1000.0).round() as u64,
            prof,
            costs,
            ncores,
            seed,
            tasks: Vec::new(),
            futexes: Map::default(),
            now: 0,
            current: 0,
            horizon: (u64::MAX, u64::MAX, usize::MAX),
            order: Vec::new(),
            stale: Vec::new(),
            absent: Vec::new(),
            counters: vec![CoreCounters::default(); ncores + 1],
            watched: Vec::new(),
            steps: 0,
            threads: 0,
            end_ps: 0,
            line_profile: LineProfile::from_env().map(Box::new),
            trace: Trace::from_env(),
        }
    }

    /// Runs `f` on the coherence model, taken out of the machine meanwhile.
    fn with_coherence<R>(&mut self, f: impl FnOnce(&mut dyn Coherence, &mut Machine) -> R) -> R {
        let mut c = self
            .coherence
            .take()
            .expect("lwsim: the coherence model re-entered");
        let r = f(&mut *c, self);
        self.coherence = Some(c);
        r
    }

    /// Runs `f` on the OS model, taken out of the machine meanwhile.
    fn with_os<R>(&mut self, f: impl FnOnce(&mut dyn Scheduler, &mut Machine) -> R) -> R {
        let mut os = self.os.take().expect("lwsim: the OS model re-entered");
        let r = f(&mut *os, self);
        self.os = Some(os);
        r
    }

    /// The OS model, to read.
    fn os(&self) -> &dyn Scheduler {
        self.os.as_deref().expect("lwsim: the OS model re-entered")
    }

    /// The coherence model, to read.
    fn coherence(&self) -> &dyn Coherence {
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

/// What phase 1 of an access did.
pub(crate) enum Req {
    /// Served (a hit): the operation takes effect now.
    Done,
    /// Lost arbitration for a busy line: the task's clock moved on; request again.
    Arbitrate,
    /// Booked as transfer `seq`; the operation takes effect at the grant.
    Booked(u64),
}

/// Charges one access of the line holding `addr` to the running task.
#[inline]
pub fn access(addr: usize, kind: Access) {
    let line = addr >> LINE_SHIFT;
    if kind == Access::Rmw {
        serialize();
    }
    let mut arbitrated = false;
    loop {
        match at_sync_point(|m| m.request(line, kind, arbitrated)) {
            None | Some(Req::Done) => return,
            Some(Req::Arbitrate) => arbitrated = true,
            Some(Req::Booked(seq)) => {
                at_turn(|m| m.grant(line, seq));
                return;
            }
        }
    }
}

/// Charges time that touches no shared memory. Computation and fences then pass a sync point
/// (other threads' earlier events, such as an arrival in this core's run queue, happen first, and
/// the slice is checked); a PAUSE does not (a spin loop's next load is one).
pub fn charge_plain(p: Plain) {
    let sync = with_machine(|m| {
        let Some(m) = m else { return false };
        let a = m.agent();
        let ps = match p {
            Plain::Pause => {
                m.counters[a].pauses += 1;
                m.costs[cost::PAUSE]
            }
            Plain::Fence => {
                m.serialize_own();
                m.costs[cost::MFENCE]
            }
            Plain::Compute(ps) => m.smt_stretched(ps),
        };
        m.advance(ps);
        !matches!(p, Plain::Pause)
    });
    if sync {
        at_sync_point(|_| ());
    }
}

/// Charges `n` instructions of the running task: `n` times the profile's `instruction_ns`
/// (rounded to whole picoseconds per instruction), no coherence traffic, and, like a PAUSE, no
/// scheduling point (the next memory operation is one, at the later clock).
pub fn charge_instructions(n: u32) {
    with_machine(|m| {
        let Some(m) = m else { return };
        let ps = m.smt_stretched(m.instruction_ps * n as u64);
        m.advance(ps);
    });
}
