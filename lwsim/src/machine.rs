//! The simulated machine: virtual clocks, the coherence directory with its per-line transfer
//! queue, the OS model (cores, run queues, futexes, sleeps) and the counters.
//!
//! All state lives in one thread-local [`Machine`]: shuttle runs every task and the scheduler on
//! the OS thread that called `run`, so they all see it. Task code borrows it only between
//! scheduling points (never across a shuttle call), the scheduler only inside `next_task`.
//!
//! # Time
//! Picoseconds (`u64`). Every task has a clock; an operation of the running task executes at the
//! task's clock and advances it by the operation's cost. Ordering is conservative: a task performs
//! an operation only while its `(clock, priority)` key is below every other eligible task's (the
//! *horizon*), otherwise it yields and the scheduler runs the smallest key. So operations on
//! shared state happen in virtual-time order.
//!
//! # Coherence
//! A directory entry per 64-byte line (`Line`): `owner` (a hardware thread holding it Modified or
//! Exclusive) or a sharer set. Costs by case (profile keys in brackets):
//!
//! | access | line state | cost | booked |
//! |---|---|---|---|
//! | load | owned or shared by me | `load_hit` | no |
//! | load | Modified at `o` | transfer(me, o) → both share it | yes |
//! | load | Shared by others | transfer(me, nearest sharer) | yes |
//! | store/RMW | owned by me | `store_hit` / `rmw_hit` | no |
//! | store/RMW | Modified at `o` | transfer(me, o) (+ `rmw_hit`) → I own it | yes |
//! | store/RMW | Shared by others | transfer(me, farthest sharer) + `invalidate_per_sharer` × (sharers − 1) (+ `rmw_hit`) | yes |
//! | any | never touched | `memory` (+ `rmw_hit`) | yes |
//!
//! transfer(a, b) is `transfer_smt`, `transfer_l3`, `transfer_socket` or `transfer_remote` by
//! where the two hardware threads sit, times a seeded draw uniform in `[1 − jitter, 1 + jitter]`
//! (the published spread of core-to-core latencies; `model.jitter`).
//!
//! **When an access takes effect.** An access is two phases. At its request the task's clock is
//! the request time: a hit is served at once. A miss *books* the line's next slot: its transfer
//! starts when the line is free (`busy_until`) and, for a line with an owner, when the owner's
//! residency window has ended; it arrives (the *grant*) one transfer later, and grants keep
//! booking order. The task's clock moves to the grant, and only when every other task's earlier
//! events have run (a second scheduling point, which no preemption can enter: the hardware
//! completes the access) does the operation read and write its value, and does the line's
//! *granted* state become the requester's. So a CAS whose expected value was read before another
//! core's grant fails, as on hardware, and an owner keeps hitting its line until the booked
//! transfer starts. The state a new request is charged against is the *tail* state (after every
//! booked transfer); hits are checked against the granted state.
//!
//! **Residency** (`model.residency_ns`): a new owner keeps the line that long (jittered) before
//! the next booked transfer may start, at least for its own RMW; its accesses in the window hit.
//! `model.residency_spread` shapes the window's distribution around the same mean (the one-RMW
//! floor aside), from that narrow window (0) to an exponential one (1, not jittered), calibrated
//! on a machine's run lengths.
//! Real cores answer a snoop only after a few local operations, which is why a thread does several
//! `fetch_add`s per line ownership and a 2-thread CAS loop needs about 1.5 CAS per success, not 2.
//!
//! **Arbitration** (`model.arbitration`, `model.arbitration_local`): requests that find the line
//! busy are not served first come, first served: each draws a delay uniform over a fraction of the
//! time until the line is free (scaled by `arbitration_local` on the owner's socket) and requests
//! again; the first to request after its delay is booked first. The delay never extends past the
//! time the line would have been free, so a winner pays nothing for arbitration.
//!
//! **Shared loads** hold the line for the profile's `shared_load_occupancy` fraction of their cost
//! (1: the Boyd-Wickizer et al. model, every re-fetch serialized; 0 lets shared reads overlap).
//!
//! **Store buffer** (`model.store_buffer_entries`; 0 = none): a plain (non-SeqCst) atomic store or
//! a `touch` write retires at the issue cost and is buffered: it books its line like any store,
//! and its value is written when the line arrives and every older buffered store of the thread is
//! visible (x86-TSO's program-order visibility). The thread's own loads of that atomic read the
//! buffered value (forwarding). An RMW, an `mfence`, a system call (futex, sleep, yield) or the
//! thread's exit waits for the buffer to drain; a full buffer stalls the next store until its
//! oldest entry drains. The supervisor (main task) has no store buffer. A sub-word store
//! (`store_field`: a byte or half-word store into a word that others RMW, as the Linux
//! qspinlock's `WRITE_ONCE(lock->locked, ...)`) is buffered the same way and writes only its bits
//! at the drain; a load of that atomic by the same thread is not forwarded from it (x86 forwards
//! only from a store that covers the load) and waits for the drain.
//!
//! **SMT siblings** (`model.smt_share`; 1 = off) transfer lines cheaply (`transfer_smt`) and share
//! their core's execution: while a hardware thread's sibling runs a thread, its computation
//! (`compute`) and instructions (`instructions`) take `1 / smt_share` as long. The sibling's state
//! is sampled when the computation starts.
//!
//! Limits: lines are never evicted (no capacity model); SMT siblings do not share their L1 (a
//! line moves between them at `transfer_smt`), and memory operations' costs do not depend on the
//! sibling; there is no interconnect bandwidth limit beyond one transfer per line at a
//! time; prefetching, speculation and memory-level parallelism of one thread's misses are not
//! modelled (a thread's loads and RMWs are served one after another).
//!
//! # OS
//! Each simulated thread (a task spawned with `thread::spawn`) needs a core: on start or after a
//! wakeup it takes its previous core if idle, else the lowest idle one, else it joins a run queue
//! (its previous core's for a wakeup, the shortest for a new thread) and is parked until
//! dispatched. A dispatch costs `context_switch`. The main task is a supervisor outside the
//! machine: it has no core and is never preempted. The scheduler is CFS as in
//! kernel/sched/fair.c before 6.6 (the seeds' era; every thread nice 0, one run queue per core):
//!
//! * **Vruntime.** A thread's vruntime grows with the time it holds a core (spinning included);
//!   each core keeps CFS's `min_vruntime` (the smaller of the running thread's and the leftmost
//!   queued thread's, never decreasing). A core that frees up runs its leftmost queued thread
//!   (smallest vruntime; among equals the first queued), else steals the leftmost of the first
//!   non-empty queue, its vruntime moved into the new queue's frame (as `migrate_task_rq_fair`).
//! * **Slice** (`check_preempt_tick`): the running thread is preempted at its next operation once
//!   it has run max(`sched_latency` / nr_running, `min_granularity`) (`sched_slice` with
//!   `BASE_SLICE`; nr_running counts it and its core's queue), or once it has run
//!   `min_granularity` with its vruntime more than a slice ahead of the leftmost queued one's,
//!   unless it is still the leftmost (then `schedule()` picks it again and a new slice starts).
//!   All three CFS values are scaled by 1 + ilog2(min(cpus, 8)) (`SCHED_TUNABLESCALING_LOG`),
//!   cpus being the profile's hardware threads: 4 on every many-core profile. The profile's
//!   `time_slice_ns` caps the slice (the many-core profiles set it to the 24 ms it never
//!   exceeds; `this-machine`, an EEVDF kernel, to its fixed base slice).
//! * **Wakeup placement and preemption** (`place_entity`, `check_preempt_wakeup`): a woken thread
//!   keeps its vruntime but no less than `min_vruntime` − `sched_latency` / 2 (the sleeper credit
//!   with `GENTLE_FAIR_SLEEPERS`); a new thread starts at `min_vruntime` (`START_DEBIT`, which
//!   would start it one slice later, is not modelled). A thread that lands in a queue behind a
//!   running thread whose vruntime exceeds its own by more than `wakeup_granularity` asks for that
//!   one's preemption (`TIF_NEED_RESCHED`), which happens at the running thread's next operation.
//!   So a wakee preempts a thread that has run longer than `wakeup_granularity` since the wakee
//!   slept, and any thread once it slept long enough to be given the full credit.
//! * **`sched_yield`** (`yield_task_fair` and the skip buddy): nothing when the caller is alone on
//!   its queue; otherwise the leftmost other queued thread runs if its vruntime is at most
//!   `wakeup_granularity` past the caller's, else the caller goes on.
//! * **Periodic load balancing** (`model.balance_busy_factor`; 0 = off): `rebalance_domains` as a
//!   busy core runs it. Each core walks its scheduling domains (its SMT pair, the cores of its
//!   L3, the machine; a level that spans no more simulated cores than the one below is dropped,
//!   as `sd_parent_degenerate` drops it) and balances each every (the domain's hardware threads,
//!   simulated or not) ms × the factor (`sd_init`: `balance_interval = sd_weight`, `busy_factor`
//!   32), at a phase of its own drawn from the seed (not from the coherence model's generator),
//!   at its running thread's next operation after the time is due. A balance pulls one queued
//!   thread from the domain's run queue with the most threads when that holds at least two more
//!   than its own: the one that has waited longest among those that have not run for 0.5 ms
//!   (`sysctl_sched_migration_cost`, `task_hot`), its vruntime moved into the new queue's frame,
//!   asking for the running thread's preemption if it is more than `wakeup_granularity` behind.
//!   The kernel's load arithmetic (weights, `imbalance_pct`, group capacities) is reduced to
//!   that count of threads.
//! * **Idle states**: a thread placed on a core idle longer than `idle_exit_after_ns` (the deepest
//!   state's target residency) first waits `idle_exit_ns` (its exit latency); per profile, from
//!   intel_idle's tables or published wake latencies. Default 0: no idle states.
//! * **Futexes**: FUTEX_WAIT is three scheduling points: the system call (`syscall`), the
//!   coherence access of the word, then the compare and the enqueue together, atomic with respect
//!   to FUTEX_WAKE as under the kernel's hash-bucket lock, so the compare sees every store ordered
//!   before its access. FUTEX_WAKE costs the waker `futex_wake` (`syscall` if it wakes nobody) and
//!   makes each woken thread runnable `wake_to_run` after the call began.
//! * **CPU busy and idle**: a core is *busy* while a thread is on it, whatever the thread does
//!   (computing, spinning on a lock word, waiting for a line, in a system call's cost, switching
//!   in: CPU time as `top` shows it), and *idle* while none is: from the moment its thread
//!   sleeps, waits on a futex, is preempted with nothing queued, or exits, until a thread placed
//!   on it starts running (an idle-state exit latency is idle time, as the kernel's idle task
//!   accounts it). A thread waiting in a run queue keeps no core idle (queues form only when
//!   no core is). [`totals`] reports each core's idle time up to the caller's clock
//!   (`CoreCounters::idle_ps`); busy over a window is `cores × window − idle`. This differs
//!   from `busy_ps`, which charges each operation's whole cost when it is charged, so an
//!   operation that straddles a window's edge lands on one side.
//!
//! Limits: no scheduler tick (a slice ends exactly, at the thread's next operation, as with
//! `HRTICK`), no load balancing beyond stealing by an idle core, a wakeup's choice of an idle
//! core and the periodic balance above (no idle or newly-idle balancing by domain, no `wake_affine`, no `select_idle_sibling` by cache domain), no group scheduling, no
//! buddies other than `sched_yield`'s skip, no cpuidle governor (a core's state follows only how
//! long it has idled), and preemption takes effect at the running thread's next operation, so a
//! long [`crate::compute`] delays it.

pub use crate::access::{Access, Plain, LINE_SHIFT, MAX_AGENTS};
use crate::line_profile::LineProfile;
use crate::profile::{cost, model, Profile};
use crate::trace::{self, Trace};
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

const WORDS: usize = MAX_AGENTS / 64;
const NONE: u16 = u16::MAX;

/// A tiny multiplicative hasher for line addresses (deterministic, fast).
#[derive(Default)]
struct AddrHasher(u64);
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
type Map<K, V> = HashMap<K, V, BuildHasherDefault<AddrHasher>>;

#[derive(Clone, Copy, Default)]
struct Bits([u64; WORDS]);
impl Bits {
    fn has(&self, a: usize) -> bool {
        self.0[a / 64] >> (a % 64) & 1 != 0
    }
    fn set(&mut self, a: usize) {
        self.0[a / 64] |= 1 << (a % 64);
    }
    fn only(a: usize) -> Bits {
        let mut b = Bits::default();
        b.set(a);
        b
    }
    fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }
    fn count(&self) -> u64 {
        self.0.iter().map(|w| w.count_ones() as u64).sum()
    }
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(i, w)| {
            let mut w = *w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(i * 64 + b)
            })
        })
    }
}

/// A transfer booked on a line and not yet granted (see the module docs, *Coherence*).
#[derive(Clone, Copy, Debug)]
struct Booking {
    seq: u64,
    /// When the transfer starts: the previous holders lose the line (an exclusive request) or
    /// the owner is downgraded (a load).
    start: u64,
    agent: u16,
    /// Store/RMW/fill (the requester becomes the only holder) or load (it joins the sharers).
    exclusive: bool,
}

/// A directory entry.
#[derive(Clone)]
struct Line {
    /// The granted state: the hardware thread holding the line Modified/Exclusive, or `NONE`.
    owner: u16,
    /// Threads holding it Shared in the granted state (when `owner == NONE`).
    sharers: Bits,
    /// The state once every booked transfer is granted: what a new request is charged against.
    tail_owner: u16,
    /// See `tail_owner`.
    tail_sharers: Bits,
    /// Booked transfers, in booking (and grant) order.
    pending: VecDeque<Booking>,
    next_seq: u64,
    /// The line serves one transfer at a time: the next one starts at this time.
    busy_until: u64,
    /// The tail owner keeps the line until this time (its residency window).
    resident_until: u64,
    /// The last booked grant (grants are kept in booking order).
    last_grant: u64,
    /// 1 + index into the watched lines, or 0.
    watch: u32,
}

impl Default for Line {
    fn default() -> Line {
        Line {
            owner: NONE,
            sharers: Bits::default(),
            tail_owner: NONE,
            tail_sharers: Bits::default(),
            pending: VecDeque::new(),
            next_seq: 0,
            busy_until: 0,
            resident_until: 0,
            last_grant: 0,
            watch: 0,
        }
    }
}

impl Line {
    /// Whether `a`'s access of `kind` at time `t` is served by the granted state: a load by a
    /// holder before any booked exclusive transfer starts, a store/RMW by the owner before any
    /// booked transfer starts (or by the only sharer, a silent upgrade, when nothing is booked).
    fn hits(&self, a: usize, kind: Access, t: u64) -> bool {
        let a16 = a as u16;
        match kind {
            Access::Load => {
                let excl = self
                    .pending
                    .iter()
                    .find(|b| b.exclusive)
                    .map_or(u64::MAX, |b| b.start);
                (self.owner == a16 || (self.owner == NONE && self.sharers.has(a))) && t < excl
            }
            _ => {
                let any = self.pending.front().map_or(u64::MAX, |b| b.start);
                t < any && self.owner == a16
            }
        }
    }

    /// Grants every booking up to `seq` (in order): the granted state becomes theirs.
    fn grant_through(&mut self, seq: u64) {
        while let Some(b) = self.pending.front().copied() {
            if b.seq > seq {
                break;
            }
            self.pending.pop_front();
            if b.exclusive {
                self.owner = b.agent;
                self.sharers = Bits::default();
            } else {
                if self.owner != NONE {
                    self.sharers = Bits::only(self.owner as usize);
                    self.owner = NONE;
                }
                self.sharers.set(b.agent as usize);
            }
        }
    }
}

/// Counters of one simulated core (hardware thread) or of the supervisor.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoreCounters {
    /// Virtual time this core spent running threads (ps), charged per operation when the
    /// operation is charged (context switches and idle-state exits included).
    pub busy_ps: u64,
    /// Virtual time this core had no thread on it (ps), up to the reader's clock: filled by
    /// [`totals`] (up to the calling task's clock) and by the [`Report`] (up to `end_ps`), 0 in
    /// the counters a thread charges. See the module docs, *OS*, "CPU busy and idle".
    pub idle_ps: u64,
    /// Memory operations (atomics and touches).
    pub ops: u64,
    /// Operations served from the local cache.
    pub hits: u64,
    /// Loads of a line Modified at another core.
    pub load_from_modified: u64,
    /// Loads of a line Shared by other cores.
    pub load_from_shared: u64,
    /// Stores/RMWs taking a line Modified at another core.
    pub rfo_from_modified: u64,
    /// Stores/RMWs invalidating sharers.
    pub invalidations: u64,
    /// Sharer copies invalidated by those.
    pub sharers_invalidated: u64,
    /// First touches of a line (from memory).
    pub fills: u64,
    /// Time spent waiting for a line busy with another transfer (ps).
    pub line_wait_ps: u64,
    /// PAUSE hints.
    pub pauses: u64,
    /// Futex waits that slept.
    pub futex_sleeps: u64,
    /// Threads woken by this core's FUTEX_WAKE calls.
    pub futex_wakes: u64,
    /// Timed sleeps.
    pub sleeps: u64,
    /// `sched_yield` calls.
    pub yields: u64,
    /// Threads preempted at the end of their slice on this core.
    pub preemptions: u64,
    /// Dispatches of a queued thread onto this core.
    pub context_switches: u64,
    /// Queued threads this core pulled from a busier run queue in a periodic balance.
    pub balance_pulls: u64,
}

impl CoreCounters {
    /// Line transfers of every kind (misses).
    pub fn transfers(&self) -> u64 {
        self.load_from_modified
            + self.load_from_shared
            + self.rfo_from_modified
            + self.invalidations
            + self.fills
    }
    fn add(&mut self, o: &CoreCounters) {
        self.busy_ps += o.busy_ps;
        self.idle_ps += o.idle_ps;
        self.ops += o.ops;
        self.hits += o.hits;
        self.load_from_modified += o.load_from_modified;
        self.load_from_shared += o.load_from_shared;
        self.rfo_from_modified += o.rfo_from_modified;
        self.invalidations += o.invalidations;
        self.sharers_invalidated += o.sharers_invalidated;
        self.fills += o.fills;
        self.line_wait_ps += o.line_wait_ps;
        self.pauses += o.pauses;
        self.futex_sleeps += o.futex_sleeps;
        self.futex_wakes += o.futex_wakes;
        self.sleeps += o.sleeps;
        self.yields += o.yields;
        self.preemptions += o.preemptions;
        self.balance_pulls += o.balance_pulls;
        self.context_switches += o.context_switches;
    }
}

/// Counters of one watched line (a lock word, see [`watch`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineCounters {
    /// The name given to [`watch`].
    pub name: String,
    /// Accesses to the line.
    pub ops: u64,
    /// Loads, stores, RMWs among them.
    pub loads: u64,
    /// Plain stores.
    pub stores: u64,
    /// RMWs.
    pub rmws: u64,
    /// Accesses that hit.
    pub hits: u64,
    /// Transfers by kind.
    pub load_from_modified: u64,
    /// See [`CoreCounters::load_from_shared`].
    pub load_from_shared: u64,
    /// See [`CoreCounters::rfo_from_modified`].
    pub rfo_from_modified: u64,
    /// See [`CoreCounters::invalidations`].
    pub invalidations: u64,
    /// See [`CoreCounters::fills`].
    pub fills: u64,
    /// Time requests waited for the line (ps).
    pub wait_ps: u64,
}

impl LineCounters {
    /// Line transfers of every kind.
    pub fn transfers(&self) -> u64 {
        self.load_from_modified
            + self.load_from_shared
            + self.rfo_from_modified
            + self.invalidations
            + self.fills
    }
}

/// What a run measured. Everything but `real` is a function of (program, profile, cores, seed).
#[derive(Clone, Debug)]
pub struct Report {
    /// Profile name.
    pub profile: String,
    /// Simulated cores (hardware threads) in use.
    pub cores: usize,
    /// Simulated threads that ran.
    pub threads: usize,
    /// The largest virtual clock a simulated thread reached when it exited (ps): the run's
    /// makespan (the supervisor's clock is not included).
    pub end_ps: u64,
    /// Counters per core.
    pub per_core: Vec<CoreCounters>,
    /// The supervisor's (main task's) counters.
    pub supervisor: CoreCounters,
    /// Watched lines.
    pub lines: Vec<LineCounters>,
    /// Scheduler decisions (shuttle steps).
    pub steps: u64,
    /// Real time the run took.
    pub real: std::time::Duration,
}

impl Report {
    /// The per-core counters summed.
    pub fn total(&self) -> CoreCounters {
        let mut t = CoreCounters::default();
        for c in &self.per_core {
            t.add(c);
        }
        t
    }
    /// A watched line by name.
    pub fn line(&self, name: &str) -> Option<&LineCounters> {
        self.lines.iter().find(|l| l.name == name)
    }
    /// Simulated memory operations per real second.
    pub fn events_per_sec(&self) -> f64 {
        let t = self.total();
        (t.ops + self.supervisor.ops) as f64 / self.real.as_secs_f64().max(1e-9)
    }
    /// The deterministic part, for comparing runs.
    pub fn fingerprint(&self) -> (u64, Vec<CoreCounters>, Vec<LineCounters>, u64) {
        (
            self.end_ps,
            self.per_core.clone(),
            self.lines.clone(),
            self.steps,
        )
    }
    /// A few lines for humans.
    pub fn summary(&self) -> String {
        let t = self.total();
        format!(
            "{} cores={} threads={} virtual={:.3}ms ops={} transfers={} (lfm {} lfs {} rfo {} inv {} fill {}) line_wait={:.3}ms futex sleeps={} wakes={} sleeps={} preemptions={} ctx={} | real {:.2}s, {:.2} M events/s, {} steps",
            self.profile,
            self.cores,
            self.threads,
            self.end_ps as f64 / 1e9,
            t.ops,
            t.transfers(),
            t.load_from_modified,
            t.load_from_shared,
            t.rfo_from_modified,
            t.invalidations,
            t.fills,
            t.line_wait_ps as f64 / 1e9,
            t.futex_sleeps,
            t.futex_wakes,
            t.sleeps,
            t.preemptions,
            t.context_switches,
            self.real.as_secs_f64(),
            self.events_per_sec() / 1e6,
            self.steps
        )
    }
}

#[derive(Clone, Debug)]
struct Task {
    clock: u64,
    prio: u64,
    /// Not eligible: asleep on a futex or waiting in a run queue.
    parked: bool,
    /// Must take a core before its next operation (new, or back from a sleep or wakeup).
    needs_core: bool,
    core: Option<u32>,
    last_core: Option<u32>,
    /// Not a simulated thread (the main task): no core, no preemption.
    supervisor: bool,
    exited: bool,
    /// CFS virtual runtime (ps), in the frame of its core's `min_vruntime` (`core`, else
    /// `last_core`); while it runs, banked up to its core's `run_start`.
    vruntime: i64,
    /// The store buffer: plain stores issued and not yet visible, oldest first.
    sb: VecDeque<SbEntry>,
    /// The `(clock, prio)` under which the task is in the scheduler's `order` (`None`: not
    /// there, as it is parked or absent).
    listed: Option<(u64, u64)>,
    /// Not in shuttle's list of tasks at a decision (finished, or blocked in shuttle, as the
    /// supervisor in a join): left out of `order` until a decision's list has it again.
    absent: bool,
}

/// A plain store in a store buffer: it becomes visible (its value is written, its line's booking
/// granted) at `drain`, in program order.
#[derive(Clone, Copy, Debug)]
struct SbEntry {
    drain: u64,
    /// The atomic's address and width in bytes (0: a `touch` store, no value).
    addr: usize,
    width: u8,
    value: u64,
    /// The bits the store writes (all ones: the whole atomic). A narrower mask is a sub-word
    /// store (a byte or half-word store into a wider word that others RMW, as the kernel's
    /// qspinlock does): at the drain it replaces only those bits, which must then hold `from`.
    mask: u64,
    /// What the masked bits held when the store was issued (checked at the drain).
    from: u64,
    /// The line and booking to grant at the drain, if the store missed.
    booking: Option<(usize, u64)>,
}

/// A full-width store's mask.
const FULL: u64 = u64::MAX;

/// The word `old` after a sub-word store of `value` into the bits `mask`, which must hold `from`
/// (the protocol's precondition: a sub-word store replaces a field only its owner writes; a
/// panic names another writer).
pub(crate) fn merge_field(old: u64, mask: u64, from: u64, value: u64) -> u64 {
    assert!(
        old & mask == from,
        "a sub-word store found its bits at {:#x}, not {from:#x} (mask {mask:#x}): the field \
         has another writer",
        old & mask
    );
    (old & !mask) | (value & mask)
}

/// Writes a store of `width` bytes at `addr` into memory: the whole atomic, or for a masked
/// (sub-word) store only the masked bits ([`merge_field`]).
///
/// # Safety
/// `addr` is a live simulated atomic of `width` bytes.
unsafe fn write_store(addr: usize, width: u8, value: u64, mask: u64, from: u64) {
    use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed, Ordering::Release};
    // Only one simulated task runs at a time, so a masked load-then-store is atomic with respect
    // to every other simulated access.
    macro_rules! put {
        ($atomic:ty) => {{
            // SAFETY: the caller's contract.
            let a = unsafe { &*(addr as *const $atomic) };
            let v = if mask == FULL {
                value
            } else {
                merge_field(u64::from(a.load(Relaxed)), mask, from, value)
            };
            a.store(v as _, Release)
        }};
    }
    match width {
        1 => put!(AtomicU8),
        4 => put!(AtomicU32),
        8 => put!(AtomicU64),
        _ => {}
    }
}

#[derive(Clone, Debug, Default)]
struct Core {
    running: Option<usize>,
    /// When the running thread got the core (after the context switch): its run so far is
    /// measured from here (CFS `prev_sum_exec_runtime`).
    run_start: u64,
    /// Threads waiting for this core.
    queue: VecDeque<usize>,
    /// CFS `min_vruntime` of this run queue (never decreases).
    min_vruntime: i64,
    /// A wakeup asked to preempt the running thread (`TIF_NEED_RESCHED`), which happens at its
    /// next operation.
    resched: bool,
    /// When the core last became idle.
    idle_since: u64,
    /// The core's idle intervals that have ended, summed (ps): each from `idle_since` until a
    /// thread placed on the core starts running (after its idle-state exit).
    idle_closed: u64,
    /// The last ended idle interval, `(start, end)`: its end may lie past the clock of a task
    /// that reads the counters (an exit latency charged ahead), see `Machine::idle_through`.
    last_idle: (u64, u64),
    /// When each of the core's scheduling domains is next balanced while it is busy (see
    /// `Machine::domains`; empty without periodic balancing).
    next_balance: Vec<u64>,
}

/// A level of scheduling domains (CFS `sched_domain`): the SMT pair, the cores sharing an L3, or
/// the whole machine.
struct Domain {
    /// Per core, the simulated cores of its domain at this level.
    span: Vec<Vec<usize>>,
    /// Per core, the domain's balance interval while the core is busy (ps): the domain's
    /// hardware threads in ms (`balance_interval = sd_weight`) times `busy_factor`.
    interval: Vec<u64>,
}

/// The scheduler's parameters (ps), CFS's scaled as the kernel scales them.
struct Sched {
    latency: u64,
    min_gran: u64,
    wakeup_gran: u64,
    cap: u64,
}

/// The whole simulated machine.
pub struct Machine {
    prof: Profile,
    costs: [u64; 16],
    shared_occupancy: f64,
    /// `model.residency_ns` in ps.
    residency: u64,
    /// `model.residency_spread`.
    residency_spread: f64,
    /// `model.jitter`.
    jitter: f64,
    /// `model.arbitration`.
    arbitration: f64,
    /// `model.arbitration_local`.
    arbitration_local: f64,
    /// `model.invalidate_per_sharer_ns` in ps.
    inv_per_sharer: u64,
    /// Draws of the seeded generator so far.
    rng: u64,
    /// `model.store_buffer_entries` (0: no store buffer, a store stalls for its line).
    sb_cap: usize,
    /// The earliest drain time among the store buffers' oldest entries (`u64::MAX`: all empty).
    sb_next: u64,
    ncores: usize,
    /// Each simulated core's SMT sibling among the simulated cores (Linux numbering: hardware
    /// thread `h` and `h + physical cores` share a core), if the sibling is simulated.
    sibling: Vec<Option<usize>>,
    /// `model.smt_share`.
    smt_share: f64,
    /// The scheduling domains periodic balancing walks, smallest first: each the simulated
    /// cores it spans (per core) and its busy balance interval (ps); empty when
    /// `model.balance_busy_factor` is 0.
    domains: Vec<Domain>,
    seed: u64,
    tasks: Vec<Task>,
    cores: Vec<Core>,
    lines: Map<usize, Line>,
    futexes: Map<usize, VecDeque<usize>>,
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
    counters: Vec<CoreCounters>,
    watched: Vec<LineCounters>,
    steps: u64,
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

/// How many entries of the sorted `order` are below `k` (a binary search whose steps do not
/// branch on the comparison).
fn rank(order: &[(u64, u64, usize)], k: (u64, u64, usize)) -> usize {
    let (mut base, mut size) = (0, order.len());
    // `(clock, prio)` as one integer: the same order as the tuple's, compared without branches.
    let wide = |e: &(u64, u64, usize)| ((e.0 as u128) << 64 | e.1 as u128, e.2);
    let k = wide(&k);
    while size > 0 {
        let half = size / 2;
        let below = wide(&order[base + half]) < k;
        base = if below { base + half + 1 } else { base };
        size = if below { size - half - 1 } else { half };
    }
    base
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

enum Prep {
    Go,
    Yield,
}

impl Machine {
    pub(crate) fn new(prof: Profile, ncores: usize, seed: u64) -> Machine {
        assert!(
            ncores >= 1 && ncores <= prof.hw_threads(),
            "{ncores} cores requested; profile {} has {} hardware threads",
            prof.name,
            prof.hw_threads()
        );
        let mut costs = [0; 16];
        costs.copy_from_slice(&prof.costs_ps[..16]);
        let mut m = Machine {
            shared_occupancy: prof.param(model::SHARED_LOAD_OCCUPANCY),
            residency: (prof.param(model::RESIDENCY_NS) * 1000.0).round() as u64,
            residency_spread: prof.param(model::RESIDENCY_SPREAD),
            jitter: prof.param(model::JITTER),
            arbitration: prof.param(model::ARBITRATION),
            arbitration_local: prof.param(model::ARBITRATION_LOCAL),
            inv_per_sharer: (prof.param(model::INVALIDATE_PER_SHARER_NS) * 1000.0).round() as u64,
            rng: 0,
            sb_cap: prof.param(model::STORE_BUFFER_ENTRIES) as usize,
            sb_next: u64::MAX,
            sibling: (0..ncores)
                .map(|c| (0..ncores).find(|&d| d != c && prof.place(d).2 == prof.place(c).2))
                .collect(),
            smt_share: prof.param(model::SMT_SHARE),
            domains: domains(&prof, ncores),
            prof,
            costs,
            ncores,
            seed,
            tasks: Vec::new(),
            cores: vec![Core::default(); ncores],
            lines: Map::default(),
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
        };
        // Each core balances each domain at a phase of its own within the interval (the
        // kernel's balancing ticks are not aligned with a benchmark's start), drawn from the
        // seed without touching the generator the coherence model draws from.
        for c in 0..ncores {
            let phases = (0..m.domains.len())
                .map(|l| {
                    let iv = m.domains[l].interval[c];
                    splitmix(seed ^ splitmix((c * 8 + l) as u64 + 0x6c62_616c)) % iv.max(1)
                })
                .collect();
            m.cores[c].next_balance = phases;
        }
        m
    }

    pub(crate) fn into_report(mut self, real: std::time::Duration) -> Report {
        if let Some(p) = self.line_profile.take() {
            eprint!("{}", p.report());
        }
        let end_ps = self.end_ps;
        for c in 0..self.ncores {
            self.counters[c].idle_ps = self.idle_through(c, end_ps);
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

    /// Core `c`'s idle time from 0 up to time `t` (ps): its ended idle intervals, less the part
    /// of the last one past `t`, plus the open one up to `t` if no thread is on the core.
    ///
    /// Exact at a task's sync point: every event that ended an idle interval ran at a clock at
    /// most the reader's (only the exit latency it added can reach past it, which the clip takes
    /// off), and an interval opened past the reader's clock (a thread leaving at the end of a
    /// system call charged ahead) counts nothing yet.
    pub(crate) fn idle_through(&self, c: usize, t: u64) -> u64 {
        let core = &self.cores[c];
        let (s, e) = core.last_idle;
        let ahead = e.saturating_sub(s.max(t));
        let open = if core.running.is_none() {
            t.saturating_sub(core.idle_since)
        } else {
            0
        };
        core.idle_closed - ahead + open
    }

    fn task(&mut self, id: usize) -> &mut Task {
        while self.tasks.len() <= id {
            let n = self.tasks.len();
            self.tasks.push(Task {
                clock: self.now,
                prio: splitmix(self.seed ^ (n as u64).wrapping_mul(0xA24B_AED4_963E_E407)),
                parked: false,
                needs_core: false,
                core: None,
                last_core: None,
                supervisor: true,
                exited: false,
                vruntime: 0,
                sb: VecDeque::new(),
                listed: None,
                absent: false,
            });
            self.stale.push(n);
        }
        &mut self.tasks[id]
    }

    fn key(&self, id: usize) -> (u64, u64, usize) {
        (self.tasks[id].clock, self.tasks[id].prio, id)
    }

    /// How many tasks the machine knows (ids `0..n`).
    pub(crate) fn known_tasks(&self) -> usize {
        self.tasks.len()
    }

    /// The scheduler's decision: the eligible runnable task with the smallest key.
    ///
    /// `listed(id)` says whether task `id` is in shuttle's list of tasks at this decision and,
    /// if so, whether it is runnable; `changed` whether that list differs from the last
    /// decision's (a task absent from one list can be in a later one only if they differ); `top`
    /// is the largest runnable id when it may be a task the machine does not know yet (new tasks
    /// start at the clock of this decision). The keys of the tasks that are neither parked nor
    /// absent are kept sorted in `order`, brought up to date here for the running task and for
    /// the tasks whose key or parked flag changed since the last decision (`stale`), so the
    /// choice is the first runnable entry of `order` and the horizon the second: the smallest
    /// and the second smallest key over the runnable tasks that are not parked, without a pass
    /// over them. (`runnable`, the runnable ids, is read only by debug builds, which check the
    /// choice against such a pass.)
    pub(crate) fn pick(
        &mut self,
        top: Option<usize>,
        listed: impl Fn(usize) -> Option<bool>,
        changed: bool,
        runnable: impl Iterator<Item = usize>,
    ) -> usize {
        self.steps += 1;
        if let Some(top) = top {
            self.task(top);
        }
        if changed && !self.absent.is_empty() {
            let mut absent = std::mem::take(&mut self.absent);
            absent.retain(|&id| {
                if listed(id).is_none() {
                    return true;
                }
                self.tasks[id].absent = false;
                self.stale.push(id);
                false
            });
            self.absent = absent;
        }
        self.relist(self.current);
        let mut stale = std::mem::take(&mut self.stale);
        for &id in &stale {
            self.relist(id);
        }
        stale.clear();
        let mut best = None;
        let mut second = (u64::MAX, u64::MAX, usize::MAX);
        // `stale` is empty now: it collects the entries found absent on the way.
        for &k in &self.order {
            match listed(k.2) {
                None => stale.push(k.2),
                Some(false) => {}
                Some(true) if best.is_none() => best = Some(k),
                Some(true) => {
                    second = k;
                    break;
                }
            }
        }
        for &id in &stale {
            self.tasks[id].absent = true;
            self.absent.push(id);
            self.relist(id);
        }
        stale.clear();
        self.stale = stale;
        #[cfg(debug_assertions)]
        self.check_pick(runnable, best, second);
        #[cfg(not(debug_assertions))]
        drop(runnable);
        let Some((clock, _, id)) = best else {
            let parked: Vec<_> = (0..self.tasks.len())
                .filter(|&i| self.tasks[i].parked)
                .collect();
            panic!(
                "lwsim: deadlock at {:.3} ms virtual time: every unfinished thread sleeps on a \
                 futex or waits in a run queue (tasks {parked:?}); a lost wakeup?",
                self.now as f64 / 1e9
            );
        };
        self.now = self.now.max(clock);
        let t = &mut self.tasks[id];
        t.clock = t.clock.max(self.now);
        self.current = id;
        self.horizon = second;
        id
    }

    /// Brings task `id`'s entry in `order` up to date with its key and parked flag.
    fn relist(&mut self, id: usize) {
        let Some(t) = self.tasks.get(id) else {
            return;
        };
        let want = (!t.parked && !t.absent).then_some((t.clock, t.prio));
        if want == t.listed {
            return;
        }
        let old = t.listed.map(|(c, p)| (c, p, id));
        let new = want.map(|(c, p)| (c, p, id));
        self.tasks[id].listed = want;
        let order = &mut self.order;
        match (old, new) {
            (Some(o), Some(k)) => {
                // Moved within the order: shift the entries between its old and new places.
                let i = rank(order, o);
                let j = rank(order, k);
                if k > o {
                    order.copy_within(i + 1..j, i);
                    order[j - 1] = k;
                } else {
                    order.copy_within(j..i, j + 1);
                    order[j] = k;
                }
            }
            (Some(o), None) => {
                order.remove(rank(order, o));
            }
            (None, Some(k)) => {
                order.insert(rank(order, k), k);
            }
            (None, None) => {}
        }
    }

    /// Debug builds: `order` holds exactly the keys of the tasks that are neither parked nor
    /// absent, and the choice is the one a pass over the runnable tasks makes.
    #[cfg(debug_assertions)]
    fn check_pick(
        &self,
        runnable: impl Iterator<Item = usize>,
        best: Option<(u64, u64, usize)>,
        second: (u64, u64, usize),
    ) {
        let mut keys: Vec<_> = runnable
            .filter(|&id| !self.tasks[id].parked)
            .map(|id| self.key(id))
            .collect();
        keys.sort_unstable();
        assert_eq!(keys.first().copied(), best, "lwsim: the scheduler's choice");
        let want = keys
            .get(1)
            .copied()
            .unwrap_or((u64::MAX, u64::MAX, usize::MAX));
        assert_eq!(want, second, "lwsim: the scheduler's horizon");
        self.check_order();
    }

    /// Debug builds: `order` holds exactly the keys of the tasks that are neither parked nor
    /// absent.
    #[cfg(debug_assertions)]
    fn check_order(&self) {
        let mut want: Vec<_> = (0..self.tasks.len())
            .filter(|&i| !self.tasks[i].parked && !self.tasks[i].absent)
            .map(|i| self.key(i))
            .collect();
        want.sort_unstable();
        assert_eq!(
            self.order, want,
            "lwsim: the scheduler's order of tasks is stale"
        );
    }

    /// The running task's clock (ps).
    pub fn clock_of_current(&self) -> u64 {
        self.tasks.get(self.current).map(|t| t.clock).unwrap_or(0)
    }

    /// Another task `id` became eligible or changed its clock: the horizon comes down to its key
    /// if lower, and its entry in the scheduler's order is refreshed at the next decision.
    fn lower_horizon(&mut self, id: usize) {
        self.stale.push(id);
        let k = self.key(id);
        if k < self.horizon {
            self.horizon = k;
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
            Some(s) if self.cores[s].running.is_some() => {
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

    /// Before an operation: take a core if needed, honour the slice, and yield unless the running
    /// task is the earliest.
    fn prepare(&mut self) -> Prep {
        let id = self.current;
        if self.tasks[id].parked {
            return Prep::Yield;
        }
        if !self.tasks[id].supervisor && !self.tasks[id].exited {
            if self.tasks[id].needs_core && !self.arrive(id) {
                return Prep::Yield;
            }
            if !self.domains.is_empty() {
                self.periodic_balance(id);
            }
            if self.slice_check(id) {
                return Prep::Yield;
            }
        }
        if self.key(id) < self.horizon {
            Prep::Go
        } else {
            Prep::Yield
        }
    }

    /// The scheduler's parameters: CFS's (kernel/sched/fair.c before 6.6) scaled by
    /// 1 + ilog2(min(cpus, 8)) (`SCHED_TUNABLESCALING_LOG`, the default), where cpus is the
    /// profile's hardware threads (the kernel scales by the online CPUs, which a benchmark's
    /// affinity does not change), and the profile's `time_slice_ns` as an upper bound.
    fn sched(&self) -> Sched {
        let factor = 1 + self.prof.hw_threads().clamp(1, 8).ilog2() as u64;
        let ps = |k: usize| (self.prof.param(k) * 1000.0).round() as u64 * factor;
        Sched {
            latency: ps(crate::profile::model::SCHED_LATENCY),
            min_gran: ps(crate::profile::model::MIN_GRANULARITY),
            wakeup_gran: ps(crate::profile::model::WAKEUP_GRANULARITY),
            cap: self.costs[cost::TIME_SLICE],
        }
    }

    /// The running thread of core `c`'s vruntime at time `at`.
    fn vruntime_at(&self, c: usize, at: u64) -> i64 {
        match self.cores[c].running {
            Some(r) => self.tasks[r].vruntime + at.saturating_sub(self.cores[c].run_start) as i64,
            None => self.cores[c].min_vruntime,
        }
    }

    /// CFS `update_min_vruntime`: the queue's minimum follows the smaller of the running
    /// thread's and the leftmost queued thread's vruntime, and never decreases.
    fn update_min_vruntime(&mut self, c: usize, at: u64) {
        let core = &self.cores[c];
        let left = core.queue.iter().map(|&q| self.tasks[q].vruntime).min();
        let curr = core.running.map(|_| self.vruntime_at(c, at));
        let m = match (curr, left) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return,
        };
        let core = &mut self.cores[c];
        core.min_vruntime = core.min_vruntime.max(m);
    }

    /// The running thread `id` leaves core `c` at `at`: its vruntime is banked.
    fn bank(&mut self, id: usize, c: usize, at: u64) {
        self.update_min_vruntime(c, at);
        self.tasks[id].vruntime = self.vruntime_at(c, at);
    }

    /// Preempts `id` (CFS `check_preempt_tick`, or a wakeup's request) if its core has queued
    /// threads and: a wakeup asked for it, or it has run its slice
    /// (max(latency / nr_running, min_granularity), at most `time_slice_ns`), or it has run
    /// `min_granularity` and its vruntime is more than a slice ahead of the leftmost queued
    /// thread's; and a queued thread's vruntime is not above its own. Returns whether it did.
    fn slice_check(&mut self, id: usize) -> bool {
        let Some(c) = self.tasks[id].core else {
            return false;
        };
        let c = c as usize;
        if self.cores[c].queue.is_empty() {
            self.cores[c].resched = false;
            return false;
        }
        let clock = self.tasks[id].clock;
        let ran = clock.saturating_sub(self.cores[c].run_start);
        if !self.cores[c].resched {
            let s = self.sched();
            let ideal = self.slice_of(&s, self.cores[c].queue.len() + 1);
            if ran < ideal.min(s.min_gran) {
                return false;
            }
            let ahead = || {
                let left = self.cores[c].queue.iter();
                let left = left
                    .map(|&q| self.tasks[q].vruntime)
                    .min()
                    .unwrap_or(i64::MAX);
                self.vruntime_at(c, clock).saturating_sub(left) > ideal as i64
            };
            if ran < ideal && !(ran >= s.min_gran && ahead()) {
                return false;
            }
        }
        // `schedule()` picks the leftmost thread; one queued with the running thread's vruntime
        // goes first (the rb-tree puts equal keys to the right). If the running thread is still
        // the leftmost, it goes on with a new slice: no switch.
        let left = self.cores[c].queue.iter();
        let left = left
            .map(|&q| self.tasks[q].vruntime)
            .min()
            .unwrap_or(i64::MAX);
        if self.vruntime_at(c, clock) < left {
            self.bank(id, c, clock);
            self.cores[c].run_start = clock;
            self.cores[c].resched = false;
            return false;
        }
        self.counters[c].preemptions += 1;
        self.bank(id, c, clock);
        self.cores[c].queue.push_back(id);
        let t = &mut self.tasks[id];
        t.core = None;
        t.last_core = Some(c as u32);
        t.parked = true;
        self.cores[c].running = None;
        self.dispatch(c, clock);
        true
    }

    /// CFS's periodic load balancing (`rebalance_domains` from the tick) on the core of the
    /// running thread `id`, at its clock: each domain whose busy interval has passed is balanced
    /// (`load_balance`, simplified): the domain's run queue with the most threads (running and
    /// queued; the first among equals) gives this core one queued thread if it holds at least
    /// two more than this core's, the one that has waited longest among those that have not run
    /// for `sysctl_sched_migration_cost` (0.5 ms: `task_hot`), its vruntime moved into this
    /// queue's frame. A pulled thread that is more than `wakeup_granularity` behind the running
    /// one asks for its preemption (`check_preempt_curr` in `attach_task`).
    fn periodic_balance(&mut self, id: usize) {
        let Some(c) = self.tasks[id].core else {
            return;
        };
        let c = c as usize;
        let now = self.tasks[id].clock;
        for l in 0..self.domains.len() {
            if self.cores[c].next_balance[l] > now {
                continue;
            }
            self.cores[c].next_balance[l] = now + self.domains[l].interval[c];
            let nr = |m: &Machine, d: usize| {
                m.cores[d].queue.len() + usize::from(m.cores[d].running.is_some())
            };
            let mine = nr(self, c);
            let Some(b) = self.domains[l].span[c]
                .iter()
                .copied()
                .filter(|&d| d != c)
                .max_by_key(|&d| (nr(self, d), std::cmp::Reverse(d)))
            else {
                continue;
            };
            if nr(self, b) < mine + 2 {
                continue;
            }
            let cold = self.cores[b]
                .queue
                .iter()
                .enumerate()
                .filter(|&(_, &q)| now.saturating_sub(self.tasks[q].clock) >= MIGRATION_COST_PS)
                .min_by_key(|&(i, &q)| (self.tasks[q].clock, i))
                .map(|(i, _)| i);
            let Some(i) = cold else {
                continue;
            };
            let n = self.cores[b].queue.remove(i).expect("a queued thread");
            self.update_min_vruntime(b, now);
            self.update_min_vruntime(c, now);
            let v =
                self.tasks[n].vruntime - self.cores[b].min_vruntime + self.cores[c].min_vruntime;
            self.tasks[n].vruntime = v;
            self.tasks[n].last_core = Some(c as u32);
            self.cores[c].queue.push_back(n);
            self.counters[c].balance_pulls += 1;
            if self.vruntime_at(c, now) - v > self.sched().wakeup_gran as i64 {
                self.cores[c].resched = true;
            }
        }
    }

    /// The CFS slice at `nr` runnable threads on a core.
    fn slice_of(&self, s: &Sched, nr: usize) -> u64 {
        (s.latency / nr.max(1) as u64).max(s.min_gran).min(s.cap)
    }

    /// Puts a thread that needs a core on one: its last core if idle, the lowest idle one, else a
    /// run queue (parked): its last core's for a wakeup, the shortest for a new thread. A thread
    /// placed on a core idle longer than `idle_exit_after_ns` waits `idle_exit_ns` for it to leave
    /// its idle state. Its vruntime is placed as CFS's `place_entity` places it (a new thread at
    /// the queue's `min_vruntime`; a woken one at most `latency / 2` behind it), and a thread
    /// queued behind a running one whose vruntime exceeds its own by more than
    /// `wakeup_granularity` asks for that one's preemption (`check_preempt_wakeup`). Returns
    /// whether it runs now.
    fn arrive(&mut self, id: usize) -> bool {
        let last = self.tasks[id].last_core.map(|c| c as usize);
        let idle = last
            .filter(|&c| self.cores[c].running.is_none())
            .or_else(|| (0..self.ncores).find(|&c| self.cores[c].running.is_none()));
        let target = idle.unwrap_or_else(|| {
            last.unwrap_or_else(|| {
                (0..self.ncores)
                    .min_by_key(|&c| self.cores[c].queue.len())
                    .unwrap_or(0)
            })
        });
        let clock = self.tasks[id].clock;
        let s = self.sched();
        // Vruntime placement, in the target queue's frame.
        self.update_min_vruntime(target, clock);
        let min = self.cores[target].min_vruntime;
        let v = match last {
            None => min,
            Some(l) => {
                let mut v = self.tasks[id].vruntime;
                if l != target {
                    self.update_min_vruntime(l, clock);
                    v = v - self.cores[l].min_vruntime + min;
                }
                v.max(min - (s.latency / 2) as i64)
            }
        };
        let t = &mut self.tasks[id];
        t.needs_core = false;
        t.vruntime = v;
        if idle.is_some() {
            let core = &self.cores[target];
            let exit = (self.prof.param(crate::profile::model::IDLE_EXIT) * 1000.0).round() as u64;
            let after = (self.prof.param(crate::profile::model::IDLE_EXIT_AFTER) * 1000.0).round();
            let t = &mut self.tasks[id];
            if exit > 0 && clock.saturating_sub(core.idle_since) > after as u64 {
                t.clock += exit;
                self.counters[target].busy_ps += exit;
            }
            t.core = Some(target as u32);
            let clock = t.clock;
            let core = &mut self.cores[target];
            // The idle interval ends when the thread starts running: the exit latency is idle
            // time, as the kernel's idle task accounts it.
            let since = core.idle_since.min(clock);
            core.idle_closed += clock - since;
            core.last_idle = (since, clock);
            core.running = Some(id);
            core.run_start = clock;
            core.resched = false;
            self.update_min_vruntime(target, clock);
            true
        } else {
            t.parked = true;
            self.cores[target].queue.push_back(id);
            if self.vruntime_at(target, clock) - v > s.wakeup_gran as i64 {
                self.cores[target].resched = true;
            }
            false
        }
    }

    /// Core `c` became free at time `at`: run the leftmost (smallest vruntime, first queued
    /// among equals) thread of its queue, or steal the leftmost of the first non-empty queue.
    fn dispatch(&mut self, c: usize, at: u64) {
        match self.pick_queued(c, at) {
            Some(n) => self.run_on(c, n, at),
            None => self.cores[c].idle_since = at,
        }
    }

    /// Takes the leftmost queued thread for core `c` (its own queue's, else stolen, with its
    /// vruntime moved into `c`'s frame).
    fn pick_queued(&mut self, c: usize, at: u64) -> Option<usize> {
        let leftmost = |q: &VecDeque<usize>, tasks: &[Task]| {
            (0..q.len()).min_by_key(|&i| (tasks[q[i]].vruntime, i))
        };
        if let Some(i) = leftmost(&self.cores[c].queue, &self.tasks) {
            return self.cores[c].queue.remove(i);
        }
        let d = (0..self.ncores).find(|&d| !self.cores[d].queue.is_empty())?;
        let i = leftmost(&self.cores[d].queue, &self.tasks)?;
        let n = self.cores[d].queue.remove(i)?;
        self.update_min_vruntime(d, at);
        self.update_min_vruntime(c, at);
        let v = &mut self.tasks[n].vruntime;
        *v = *v - self.cores[d].min_vruntime + self.cores[c].min_vruntime;
        Some(n)
    }

    /// Runs queued thread `n` on the free core `c` from time `at`, after a context switch.
    fn run_on(&mut self, c: usize, n: usize, at: u64) {
        let cs = self.costs[cost::CONTEXT_SWITCH];
        let t = &mut self.tasks[n];
        t.clock = t.clock.max(at) + cs;
        t.parked = false;
        t.needs_core = false;
        t.core = Some(c as u32);
        let clock = t.clock;
        let core = &mut self.cores[c];
        core.running = Some(n);
        core.run_start = clock;
        core.resched = false;
        self.update_min_vruntime(c, clock);
        self.counters[c].context_switches += 1;
        self.counters[c].busy_ps += cs;
        self.lower_horizon(n);
    }

    fn leave_core(&mut self, id: usize) {
        if let Some(c) = self.tasks[id].core {
            let c = c as usize;
            let at = self.tasks[id].clock;
            self.bank(id, c, at);
            self.tasks[id].core = None;
            self.tasks[id].last_core = Some(c as u32);
            self.cores[c].running = None;
            self.dispatch(c, at);
        }
    }

    /// The next value of the machine's seeded generator, uniform in `[0, 1)`.
    fn uniform(&mut self) -> f64 {
        self.rng = self.rng.wrapping_add(1);
        (splitmix(self.seed ^ self.rng.wrapping_mul(0xD1B5_4A32_D192_ED03)) >> 11) as f64
            / (1u64 << 53) as f64
    }

    /// A new owner's residency window: `residency_ns` jittered as a transfer when
    /// `residency_spread` is 0 (the draws as they were before the key existed), else
    /// `residency_ns × ((1 − s) + s × E)` with `E` exponential of mean 1.
    fn residency_window(&mut self) -> u64 {
        let s = self.residency_spread;
        if s == 0.0 || self.residency == 0 {
            return self.jittered(self.residency);
        }
        let e = -(1.0 - self.uniform()).ln();
        (self.residency as f64 * ((1.0 - s) + s * e)).round() as u64
    }

    /// A transfer's cost with the profile's latency spread: uniform in `[1 - j, 1 + j]` times
    /// the nominal cost.
    fn jittered(&mut self, c: u64) -> u64 {
        if self.jitter == 0.0 || c == 0 {
            return c;
        }
        let f = 1.0 + self.jitter * (2.0 * self.uniform() - 1.0);
        (c as f64 * f).round() as u64
    }

    /// Phase 1 of a coherence access by the running task at its clock: a hit is served at once;
    /// a miss on a busy line may first lose arbitration (a seeded delay within the line's busy
    /// window, after which the caller requests again with `arbitrated`); otherwise it books the
    /// line's next slot and the task's clock moves to when the line arrives. The operation's
    /// value is read and written at that grant (phase 2, [`Machine::grant`]).
    fn request(&mut self, line_addr: usize, kind: Access, arbitrated: bool) -> Req {
        // The directory is moved out while the line is worked on (a move of the map, not of its
        // entries), so that the line can be borrowed in place next to the rest of the machine.
        let mut lines = std::mem::take(&mut self.lines);
        let line = lines.entry(line_addr).or_default();
        let r = self.request_line(line, line_addr, kind, arbitrated);
        self.lines = lines;
        r
    }

    /// [`Machine::request`] on the directory entry `line` of `line_addr`.
    fn request_line(
        &mut self,
        line: &mut Line,
        line_addr: usize,
        kind: Access,
        arbitrated: bool,
    ) -> Req {
        let a = self.agent();
        let t0 = self.tasks[self.current].clock;
        let costs = self.costs;
        let n = self.ncores;
        let hw = |x: usize| if x == n { 0 } else { x };
        let rmw = if kind == Access::Rmw {
            costs[cost::RMW_HIT]
        } else {
            0
        };
        if line.hits(a, kind, t0) {
            let c = match kind {
                Access::Load => costs[cost::LOAD_HIT],
                Access::Store => costs[cost::STORE_HIT],
                Access::Rmw => costs[cost::RMW_HIT],
            };
            self.count(line, line_addr, a, kind, 0, 0, c);
            self.tasks[self.current].clock = t0 + c;
            return Req::Done;
        }
        // Silent upgrade: the only sharer writes, nothing booked.
        if kind != Access::Load
            && line.pending.is_empty()
            && line.owner == NONE
            && line.sharers.has(a)
            && line.sharers.count() == 1
        {
            line.owner = a as u16;
            line.sharers = Bits::default();
            line.tail_owner = a as u16;
            line.tail_sharers = Bits::default();
            let c = if kind == Access::Rmw {
                costs[cost::RMW_HIT]
            } else {
                costs[cost::STORE_HIT]
            };
            line.resident_until = line.resident_until.max(t0 + c);
            self.count(line, line_addr, a, kind, 0, 0, c);
            self.tasks[self.current].clock = t0 + c;
            return Req::Done;
        }
        let prof = &self.prof;
        let dist = |x: usize| prof.transfer_ps(hw(a), hw(x));
        // The transfer's nominal cost, what it is, and whether it is exclusive, from the state
        // the line will be in once every booked transfer is granted.
        let (c, what, exclusive, owned) = if line.tail_owner == a as u16 {
            // Only reachable with a stale granted state; served as a hit of the tail.
            (0, 0, kind != Access::Load, true)
        } else if line.tail_owner != NONE {
            let o = line.tail_owner as usize;
            if kind == Access::Load {
                (dist(o), 1, false, true)
            } else {
                (dist(o), 3, true, true)
            }
        } else if !line.tail_sharers.is_empty() {
            let mut others = line.tail_sharers;
            others.0[a / 64] &= !(1 << (a % 64));
            if kind == Access::Load {
                if line.tail_sharers.has(a) {
                    (0, 0, false, false)
                } else {
                    let near = line.tail_sharers.iter().map(dist).min().unwrap_or(0);
                    (near, 2, false, false)
                }
            } else if others.is_empty() {
                (0, 0, true, false)
            } else {
                let far = others.iter().map(dist).max().unwrap_or(0);
                let extra = (others.count() - 1) * self.inv_per_sharer;
                self.counters[a].sharers_invalidated += others.count();
                (far + extra, 4, true, false)
            }
        } else {
            (costs[cost::MEMORY], 5, true, false)
        };
        let free_at = if owned {
            line.busy_until.max(line.resident_until)
        } else {
            line.busy_until
        };
        // Arbitration among the requests waiting for a busy line is not first come, first
        // served: each draws a delay within the busy window (halved on the tail owner's
        // socket), and the earliest to request after its delay is booked first.
        if !arbitrated && self.arbitration > 0.0 && free_at > t0 && what != 0 {
            let mut d = self.uniform() * (free_at - t0) as f64 * self.arbitration.min(1.0);
            if line.tail_owner != NONE {
                let local =
                    self.prof.place(hw(a)).0 == self.prof.place(hw(line.tail_owner as usize)).0;
                if local {
                    d *= self.arbitration_local;
                }
            }
            let d = d as u64;
            if d > 0 {
                // Traced with its retry time; the retry's own line follows (its wait without d).
                self.trace_access(
                    line,
                    line_addr,
                    a,
                    kind,
                    t0,
                    format_args!(
                        "arbitrate delay {} retry {}",
                        trace::ns(d),
                        trace::ns(t0 + d)
                    ),
                );
                self.counters[a].line_wait_ps += d;
                self.counters[a].busy_ps += d;
                self.tasks[self.current].clock = t0 + d;
                return Req::Arbitrate;
            }
        }
        if what == 0 {
            let c = if kind == Access::Load {
                costs[cost::LOAD_HIT]
            } else {
                costs[cost::STORE_HIT].max(rmw)
            };
            self.count(line, line_addr, a, kind, 0, 0, c);
            self.tasks[self.current].clock = t0 + c;
            return Req::Done;
        }
        let c = self.jittered(c);
        let start = t0.max(free_at);
        let grant = (start + c).max(line.last_grant);
        line.last_grant = grant;
        let seq = line.next_seq;
        line.next_seq += 1;
        line.pending.push_back(Booking {
            seq,
            start,
            agent: a as u16,
            exclusive,
        });
        if exclusive {
            line.tail_owner = a as u16;
            line.tail_sharers = Bits::default();
            line.busy_until = grant;
            let r = self.residency_window();
            line.resident_until = grant + r.max(rmw);
        } else if what == 1 {
            line.tail_sharers = Bits::only(line.tail_owner as usize);
            line.tail_sharers.set(a);
            line.tail_owner = NONE;
            line.busy_until = grant;
            line.resident_until = 0;
        } else {
            line.tail_sharers.set(a);
            let hold = (c as f64 * self.shared_occupancy) as u64;
            line.busy_until = line.busy_until.max(start + hold);
        }
        let end = grant + rmw;
        self.count(line, line_addr, a, kind, what, start - t0, end - t0);
        self.tasks[self.current].clock = end;
        Req::Booked(seq)
    }

    /// Phase 2: the running task's booked transfer `seq` on `line_addr` is granted (the task's
    /// clock is at the grant, every earlier event has happened); the granted state becomes its.
    fn grant(&mut self, line_addr: usize, seq: u64) {
        if let Some(line) = self.lines.get_mut(&line_addr) {
            line.grant_through(seq);
        }
    }

    /// A hardware thread as the trace prints it (`hw-` for the supervisor).
    fn hw_label(&self, a: usize) -> String {
        if a == self.ncores {
            "hw-".to_string()
        } else {
            format!("hw{a}")
        }
    }

    /// A line as the trace prints it: its watched name, else its address >> 6 in hex.
    fn line_label(&self, line: &Line, line_addr: usize) -> String {
        if line.watch != 0 {
            self.watched[line.watch as usize - 1].name.clone()
        } else {
            format!("{line_addr:x}")
        }
    }

    /// Prints one trace line for an access by hardware thread `a` requested at `t0`, if the
    /// trace is on and its window covers `t0`: `@<t0> hw<a> t<task> <line> <kind> <tail>`.
    #[allow(clippy::too_many_arguments)]
    fn trace_access(
        &self,
        line: &Line,
        line_addr: usize,
        a: usize,
        kind: Access,
        t0: u64,
        tail: std::fmt::Arguments<'_>,
    ) {
        if let Some(tr) = self.trace {
            if tr.covers(t0) {
                eprintln!(
                    "@{} {} t{} {} {} {tail}",
                    trace::ns(t0),
                    self.hw_label(a),
                    self.current,
                    self.line_label(line, line_addr),
                    access_name(kind),
                );
            }
        }
    }

    /// Counts one access: `what` is 0 for a hit, else the transfer kind (1 load from Modified,
    /// 2 load from Shared, 3 RFO from Modified, 4 invalidation, 5 fill).
    #[allow(clippy::too_many_arguments)]
    fn count(
        &mut self,
        line: &Line,
        line_addr: usize,
        a: usize,
        kind: Access,
        what: u8,
        wait: u64,
        busy: u64,
    ) {
        if self.trace.is_some() {
            let t0 = self.tasks[self.current].clock;
            self.trace_access(
                line,
                line_addr,
                a,
                kind,
                t0,
                format_args!(
                    "{} wait {} done {}",
                    trace::case_name(what),
                    trace::ns(wait),
                    trace::ns(t0 + busy)
                ),
            );
        }
        let cnt = &mut self.counters[a];
        cnt.ops += 1;
        match what {
            0 => cnt.hits += 1,
            1 => cnt.load_from_modified += 1,
            2 => cnt.load_from_shared += 1,
            3 => cnt.rfo_from_modified += 1,
            4 => cnt.invalidations += 1,
            _ => cnt.fills += 1,
        }
        cnt.line_wait_ps += wait;
        cnt.busy_ps += busy;
        if let Some(p) = self.line_profile.as_deref_mut() {
            p.record(line_addr, kind, what != 0, wait);
        }
        if line.watch != 0 {
            let w = &mut self.watched[line.watch as usize - 1];
            w.ops += 1;
            match kind {
                Access::Load => w.loads += 1,
                Access::Store => w.stores += 1,
                Access::Rmw => w.rmws += 1,
            }
            match what {
                0 => w.hits += 1,
                1 => w.load_from_modified += 1,
                2 => w.load_from_shared += 1,
                3 => w.rfo_from_modified += 1,
                4 => w.invalidations += 1,
                _ => w.fills += 1,
            }
            w.wait_ps += wait;
        }
    }
}

impl Machine {
    /// Makes visible every buffered store whose drain time is at or before `t` (the running
    /// task's clock: every event before it has happened), in drain order.
    fn drain_stores(&mut self, t: u64) {
        if t < self.sb_next {
            return;
        }
        let mut due = Vec::new();
        let mut next = u64::MAX;
        for (id, task) in self.tasks.iter_mut().enumerate() {
            while let Some(e) = task.sb.front().copied() {
                if e.drain > t {
                    next = next.min(e.drain);
                    break;
                }
                task.sb.pop_front();
                due.push((e.drain, id, e));
            }
        }
        self.sb_next = next;
        due.sort_by_key(|(d, id, _)| (*d, *id));
        for (drain, id, e) in due {
            if let Some(tr) = self.trace {
                if tr.covers(drain) {
                    let line_addr = e.addr >> LINE_SHIFT;
                    let label = match self.lines.get(&line_addr) {
                        Some(l) => self.line_label(l, line_addr),
                        None => format!("{line_addr:x}"),
                    };
                    let t = &self.tasks[id];
                    let hw = t
                        .core
                        .or(t.last_core)
                        .map_or("hw-".to_string(), |c| format!("hw{c}"));
                    eprintln!("@{} {hw} t{id} {label} drain", trace::ns(drain));
                }
            }
            if let Some((line, seq)) = e.booking {
                if let Some(l) = self.lines.get_mut(&line) {
                    l.grant_through(seq);
                }
            }
            // SAFETY: `addr` is a live simulated atomic of `width` bytes: the store was issued by
            // a task through `&self` of that atomic, and the memory cannot have been freed since:
            // a buffer drains in program order before its task's exit, system calls, RMWs and
            // SeqCst fences, so no other thread can have learned that the storing thread is done
            // with the object before this store is visible.
            unsafe { write_store(e.addr, e.width, e.value, e.mask, e.from) };
        }
    }

    /// Moves the running task's clock to when its store buffer is empty (an RMW, an `mfence`,
    /// a system call or an exit waits for it); the next sync point makes the stores visible.
    fn serialize_own(&mut self) {
        let id = self.current;
        if let Some(last) = self.tasks[id].sb.back() {
            let d = last.drain;
            let t = &mut self.tasks[id];
            if d > t.clock {
                let a = self.agent();
                let wait = d - self.tasks[id].clock;
                self.tasks[id].clock = d;
                self.counters[a].busy_ps += wait;
            }
        }
    }

    /// A plain store by the running task: into its store buffer when the buffer is on and the
    /// store cannot complete at once (a miss, or older stores still buffered). Returns whether it
    /// was buffered (then the caller must not write the value: the drain will). `mask` and
    /// `from`: as [`SbEntry`]'s.
    fn store(
        &mut self,
        line_addr: usize,
        addr: usize,
        width: u8,
        value: u64,
        mask: u64,
        from: u64,
    ) -> StoreReq {
        let id = self.current;
        if self.sb_cap == 0 || self.tasks[id].supervisor {
            return StoreReq::Unbuffered;
        }
        if self.tasks[id].sb.len() >= self.sb_cap {
            // Full: wait for the oldest entry, then try again.
            let d = self.tasks[id].sb.front().map_or(0, |e| e.drain);
            let a = self.agent();
            let t = &mut self.tasks[id];
            let wait = d.saturating_sub(t.clock);
            t.clock += wait;
            self.counters[a].busy_ps += wait;
            return StoreReq::Retry;
        }
        let t0 = self.tasks[id].clock;
        let after = self.tasks[id].sb.back().map_or(0, |e| e.drain);
        let (done_at, booking) = match self.request(line_addr, Access::Store, true) {
            Req::Booked(seq) => (self.tasks[id].clock, Some((line_addr, seq))),
            _ => (self.tasks[id].clock, None),
        };
        // The sync point drained every entry due by `t0`; one still here is not yet visible (even
        // if due by `done_at`: only the next sync point writes it), so a store written now would
        // pass it, and could be overwritten by it when both are to the same atomic.
        if booking.is_none() && self.tasks[id].sb.is_empty() {
            // A hit with nothing older buffered: visible now.
            return StoreReq::Done;
        }
        let issue = self.costs[cost::STORE_HIT];
        let a = self.agent();
        // The task retires the store and goes on; undo the stall `request` charged.
        self.counters[a].busy_ps = self.counters[a].busy_ps.saturating_sub(done_at - t0) + issue;
        self.tasks[id].clock = t0 + issue;
        let drain = done_at.max(after);
        self.tasks[id].sb.push_back(SbEntry {
            drain,
            addr,
            width,
            value,
            mask,
            from,
            booking,
        });
        self.sb_next = self.sb_next.min(drain);
        StoreReq::Buffered
    }

    /// The youngest buffered store of the running task to `addr` of `width` bytes (store-to-load
    /// forwarding), charging a load hit. When that store is a sub-word store, the load cannot be
    /// forwarded from it (x86 forwards a load only from a store that covers it: Intel's
    /// optimization manual, "store forwarding"): the task waits until that store is visible and
    /// this returns `None`, so the load reads memory at its next sync point.
    fn forward(&mut self, addr: usize, width: u8) -> Option<u64> {
        let id = self.current;
        let e = *self.tasks[id]
            .sb
            .iter()
            .rev()
            .find(|e| e.addr == addr && e.width == width)?;
        if e.mask != FULL {
            // Wait for that store (and, in program order, every older one) to be visible.
            if e.drain > self.tasks[id].clock {
                let a = self.agent();
                self.counters[a].busy_ps += e.drain - self.tasks[id].clock;
                self.tasks[id].clock = e.drain;
            }
            return None;
        }
        let v = e.value;
        let a = self.agent();
        self.counters[a].ops += 1;
        self.counters[a].hits += 1;
        self.advance(self.costs[cost::LOAD_HIT]);
        Some(v)
    }
}

enum StoreReq {
    /// Performed (a hit): the caller writes the value now.
    Done,
    /// No store buffer here: the caller takes the ordinary path.
    Unbuffered,
    /// The buffer was full; the clock moved to its oldest drain: try again.
    Retry,
    /// In the buffer: the drain writes the value.
    Buffered,
}

/// A non-SeqCst atomic store of `value` (`width` bytes at `addr`): returns whether the simulator
/// took it (buffered, or performed as a hit; the caller must then write the value itself only
/// when this returns `Some(false)`). `None` outside a simulation.
pub fn store_plain(addr: usize, width: u8, value: u64) -> Option<bool> {
    store_field(addr, width, value, FULL, 0)
}

/// A sub-word store: the bits `mask` of the atomic (`width` bytes at `addr`), which hold `from`,
/// become `value`'s, as a plain store of a byte or half-word inside the word would write them; a
/// store like any other for the coherence model and the store buffer. `store_plain` is the
/// full-width case (`mask` all ones). Returns as [`store_plain`]; when the caller must write
/// itself (`Some(false)`), it replaces only the masked bits. Panics at the write if the bits no
/// longer hold `from` (another writer of the field: a protocol bug).
pub fn store_field(addr: usize, width: u8, value: u64, mask: u64, from: u64) -> Option<bool> {
    let line = addr >> LINE_SHIFT;
    loop {
        match at_sync_point(|m| m.store(line, addr, width, value, mask, from))? {
            StoreReq::Done => return Some(false),
            StoreReq::Buffered => return Some(true),
            StoreReq::Retry => continue,
            StoreReq::Unbuffered => {
                access(addr, Access::Store);
                return Some(false);
            }
        }
    }
}

/// A load's store-to-load forwarding: the running task's youngest buffered store to the same
/// address and width, if any (it is then charged as a hit and the caller returns that value).
pub fn forwarded(addr: usize, width: u8) -> Option<u64> {
    let buffered = with_machine(|m| m.is_some_and(|m| !m.tasks[m.current].sb.is_empty()));
    if !buffered {
        return None;
    }
    // A sync point, as every load: earlier events (and this task's due drains) happen first.
    at_sync_point(|m| m.forward(addr, width)).flatten()
}

/// Waits for the running task's store buffer to drain (RMWs, `mfence`, system calls, exit).
pub fn serialize() {
    let pending = with_machine(|m| m.is_some_and(|m| !m.tasks[m.current].sb.is_empty()));
    if pending {
        at_sync_point(|m| m.serialize_own());
    }
}

/// What phase 1 of an access did.
enum Req {
    /// Served (a hit): the operation takes effect now.
    Done,
    /// Lost arbitration for a busy line: the task's clock moved on; request again.
    Arbitrate,
    /// Booked as transfer `seq`; the operation takes effect at the grant.
    Booked(u64),
}

/// Loops until the running task is the earliest (its clock below every other eligible task's),
/// then runs `f`: no core, slice or preemption check, for the second phase of an access, which
/// the hardware completes whatever the scheduler does.
fn at_turn<R>(mut f: impl FnMut(&mut Machine) -> R) -> Option<R> {
    MACHINE.with(|cell| loop {
        {
            let mut b = cell.borrow_mut();
            let m = b.as_deref_mut()?;
            if m.key(m.current) < m.horizon {
                let t = m.tasks[m.current].clock;
                m.drain_stores(t);
                return Some(f(m));
            }
        }
        shuttle::thread::yield_now();
    })
}

/// Loops until the running task may perform an operation, then runs `f` on the machine. Returns
/// `None` outside a simulation.
fn at_sync_point<R>(mut f: impl FnMut(&mut Machine) -> R) -> Option<R> {
    MACHINE.with(|cell| loop {
        {
            let mut b = cell.borrow_mut();
            let m = b.as_deref_mut()?;
            if let Prep::Go = m.prepare() {
                let t = m.tasks[m.current].clock;
                m.drain_stores(t);
                return Some(f(m));
            }
        }
        shuttle::thread::yield_now();
    })
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
        let per = (m.prof.param(crate::profile::model::INSTRUCTION_NS) * 1000.0).round() as u64;
        let ps = m.smt_stretched(per * n as u64);
        m.advance(ps);
    });
}

/// CFS `sysctl_sched_migration_cost` (0.5 ms, ps): a thread that ran more recently is
/// cache-hot and a periodic balance leaves it (`task_hot`).
const MIGRATION_COST_PS: u64 = 500_000_000;

/// The scheduling domains of `ncores` simulated cores of `prof` for periodic balancing
/// (kernel/sched/topology.c: SMT, MC (the cores sharing an L3), then the machine; a level whose
/// span equals the level below's is dropped, as `sd_parent_degenerate` drops it), each with its
/// busy interval: its hardware threads in ms times `model.balance_busy_factor`. Empty when the
/// factor is 0.
fn domains(prof: &Profile, ncores: usize) -> Vec<Domain> {
    let factor = prof.param(model::BALANCE_BUSY_FACTOR);
    if factor <= 0.0 {
        return Vec::new();
    }
    let levels: [&dyn Fn(usize, usize) -> bool; 3] = [
        &|a, b| prof.place(a).2 == prof.place(b).2,
        &|a, b| prof.place(a).1 == prof.place(b).1,
        &|_, _| true,
    ];
    let mut out: Vec<Domain> = Vec::new();
    for same in levels {
        let span: Vec<Vec<usize>> = (0..ncores)
            .map(|c| (0..ncores).filter(|&d| same(c, d)).collect())
            .collect();
        let below = out.last().map(|d| &d.span);
        if span.iter().all(|s| s.len() == 1) || below == Some(&span) {
            continue;
        }
        // sd_weight counts the domain's CPUs in the machine's topology, simulated or not.
        let interval = (0..ncores)
            .map(|c| {
                let weight = (0..prof.hw_threads()).filter(|&d| same(c, d)).count();
                (weight as f64 * factor * 1e9).round() as u64
            })
            .collect();
        out.push(Domain { span, interval });
    }
    out
}

/// An access kind as the trace prints it.
fn access_name(kind: Access) -> &'static str {
    match kind {
        Access::Load => "load",
        Access::Store => "store",
        Access::Rmw => "rmw",
    }
}

/// The scheduler's state in a few lines (every task's clock, vruntime, core, run queue or
/// sleep, and each busy core's running task, queue and `min_vruntime`), for a diagnosis such as
/// a stuck spinlock's; `None` outside a simulation.
pub fn debug_state() -> Option<String> {
    with_machine(|m| {
        let m = m?;
        let ms = |ps: u64| ps as f64 / 1e9;
        let mut out = format!(
            "lwsim state at {:.3} ms virtual (task {} running):\n",
            ms(m.now),
            m.current
        );
        for (i, t) in m.tasks.iter().enumerate() {
            if t.supervisor || t.exited {
                continue;
            }
            let queued = m.cores.iter().position(|c| c.queue.contains(&i));
            out += &format!(
                "  task {i}: clock {:.3} ms, vruntime {:.3} ms, core {:?}, last core {:?}, \
                 parked {}, needs core {}, queued on {:?}\n",
                ms(t.clock),
                t.vruntime as f64 / 1e9,
                t.core,
                t.last_core,
                t.parked,
                t.needs_core,
                queued
            );
        }
        for (c, core) in m.cores.iter().enumerate() {
            if core.running.is_some() || !core.queue.is_empty() {
                out += &format!(
                    "  core {c}: running {:?} since {:.3} ms, queue {:?}, min_vruntime {:.3} ms, \
                     resched {}\n",
                    core.running,
                    ms(core.run_start),
                    core.queue,
                    core.min_vruntime as f64 / 1e9,
                    core.resched
                );
            }
        }
        Some(out)
    })
}

/// The simulated cores' counters summed so far (the supervisor's left out), or `None` outside a
/// simulation. A harness reads it at the start and at the end of a measurement window and
/// reports the difference, so that warm-up and tail are not counted.
///
/// `idle_ps` is the cores' idle time up to the calling task's clock (exact when the caller is at
/// a sync point, as after any simulated call: see the module docs, *OS*), so `idle_ps` of a
/// window over `cores × window` is the share of the machine no thread ran on.
pub fn totals() -> Option<CoreCounters> {
    with_machine(|m| {
        m.map(|m| {
            let mut t = CoreCounters::default();
            for c in &m.counters[..m.ncores] {
                t.add(c);
            }
            let now = m.clock_of_current();
            t.idle_ps = (0..m.ncores).map(|c| m.idle_through(c, now)).sum();
            t
        })
    })
}

impl CoreCounters {
    /// `self − earlier`, counter by counter (saturating): the counts of a window.
    pub fn since(&self, earlier: &CoreCounters) -> CoreCounters {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        CoreCounters {
            busy_ps: d(self.busy_ps, earlier.busy_ps),
            idle_ps: d(self.idle_ps, earlier.idle_ps),
            ops: d(self.ops, earlier.ops),
            hits: d(self.hits, earlier.hits),
            load_from_modified: d(self.load_from_modified, earlier.load_from_modified),
            load_from_shared: d(self.load_from_shared, earlier.load_from_shared),
            rfo_from_modified: d(self.rfo_from_modified, earlier.rfo_from_modified),
            invalidations: d(self.invalidations, earlier.invalidations),
            sharers_invalidated: d(self.sharers_invalidated, earlier.sharers_invalidated),
            fills: d(self.fills, earlier.fills),
            line_wait_ps: d(self.line_wait_ps, earlier.line_wait_ps),
            pauses: d(self.pauses, earlier.pauses),
            futex_sleeps: d(self.futex_sleeps, earlier.futex_sleeps),
            futex_wakes: d(self.futex_wakes, earlier.futex_wakes),
            sleeps: d(self.sleeps, earlier.sleeps),
            yields: d(self.yields, earlier.yields),
            preemptions: d(self.preemptions, earlier.preemptions),
            balance_pulls: d(self.balance_pulls, earlier.balance_pulls),
            context_switches: d(self.context_switches, earlier.context_switches),
        }
    }
}

/// The watched lines' counters so far ([`watch`]), in registration order, or `None` outside a
/// simulation. Read at a window's edges (after [`supervisor_wait_until`]) and subtracted
/// ([`LineCounters::since`]), they count the window's traffic alone.
pub fn watched_lines() -> Option<Vec<LineCounters>> {
    with_machine(|m| m.map(|m| m.watched.clone()))
}

/// The supervisor (the task that called `run`, which has no core) waits until virtual time `ns`:
/// its clock moves there at no cost (no system call, no timer slack) and it resumes once every
/// other task's earlier event has run, so what it reads then ([`totals`], [`watched_lines`]) is
/// the machine's state at `ns`. A simulated thread calling it, or a supervisor already past
/// `ns`, only passes a scheduling point.
pub fn supervisor_wait_until(ns: u64) {
    at_sync_point(|m| {
        let t = &mut m.tasks[m.current];
        if t.supervisor {
            t.clock = t.clock.max(ns * 1000);
        }
    });
    at_sync_point(|_| ());
}

impl LineCounters {
    /// `self − earlier`, counter by counter (saturating): the counts of a window.
    pub fn since(&self, earlier: &LineCounters) -> LineCounters {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        LineCounters {
            name: self.name.clone(),
            ops: d(self.ops, earlier.ops),
            loads: d(self.loads, earlier.loads),
            stores: d(self.stores, earlier.stores),
            rmws: d(self.rmws, earlier.rmws),
            hits: d(self.hits, earlier.hits),
            load_from_modified: d(self.load_from_modified, earlier.load_from_modified),
            load_from_shared: d(self.load_from_shared, earlier.load_from_shared),
            rfo_from_modified: d(self.rfo_from_modified, earlier.rfo_from_modified),
            invalidations: d(self.invalidations, earlier.invalidations),
            fills: d(self.fills, earlier.fills),
            wait_ps: d(self.wait_ps, earlier.wait_ps),
        }
    }
}

/// Registers the line holding `ptr` for per-line counters under `name` (a lock word).
pub fn watch<T: ?Sized>(name: &str, ptr: *const T) {
    with_machine(|m| {
        let Some(m) = m else { return };
        let line_addr = (ptr as *const u8 as usize) >> LINE_SHIFT;
        let idx = m.watched.len() as u32 + 1;
        m.watched.push(LineCounters {
            name: name.to_string(),
            ..Default::default()
        });
        m.lines.entry(line_addr).or_default().watch = idx;
    });
}

/// The prologue of a simulated thread: it becomes a worker and takes a core.
pub fn thread_start() {
    with_machine(|m| {
        if let Some(m) = m {
            let id = m.current;
            m.threads += 1;
            let t = m.task(id);
            t.supervisor = false;
            t.needs_core = true;
        }
    });
    at_sync_point(|_| ());
}

/// The epilogue of a simulated thread: it leaves its core.
pub fn thread_exit() {
    serialize();
    at_sync_point(|m| {
        let id = m.current;
        m.end_ps = m.end_ps.max(m.tasks[id].clock);
        m.leave_core(id);
        m.tasks[id].exited = true;
    });
}

/// A timed sleep of `ps` picoseconds.
pub fn sleep(ps: u64) {
    at_sync_point(|m| {
        let id = m.current;
        let a = m.agent();
        m.counters[a].sleeps += 1;
        m.advance(m.costs[cost::SYSCALL]);
        let supervisor = m.tasks[id].supervisor;
        m.leave_core(id);
        let t = &mut m.tasks[id];
        t.clock += ps + m.costs[cost::TIMER_SLACK];
        t.needs_core = !supervisor;
    });
    at_sync_point(|_| ());
}

/// `sched_yield`: CFS's `yield_task_fair` (nothing when the caller is alone on its run queue)
/// and the skip buddy of `pick_next_entity`: the leftmost other queued thread runs if its
/// vruntime is at most `wakeup_granularity` past the caller's, else the caller goes on.
pub fn sched_yield() {
    let requeued = at_sync_point(|m| {
        let id = m.current;
        let a = m.agent();
        m.counters[a].yields += 1;
        m.advance(m.costs[cost::SYSCALL]);
        let Some(c) = m.tasks[id].core else {
            return false;
        };
        let c = c as usize;
        let at = m.tasks[id].clock;
        let gran = m.sched().wakeup_gran as i64;
        let mine = m.vruntime_at(c, at);
        let left = m.cores[c].queue.iter().map(|&q| m.tasks[q].vruntime).min();
        if !left.is_some_and(|v| v <= mine + gran) {
            return false;
        }
        let Some(n) = m.pick_queued(c, at) else {
            return false;
        };
        m.bank(id, c, at);
        m.cores[c].queue.push_back(id);
        let t = &mut m.tasks[id];
        t.core = None;
        t.last_core = Some(c as u32);
        t.parked = true;
        m.cores[c].running = None;
        m.run_on(c, n, at);
        true
    });
    if requeued == Some(true) {
        at_sync_point(|_| ());
    }
}

/// `FUTEX_WAIT` on `word`, in three steps, each a scheduling point: the system call's entry,
/// the coherence access of the word, then the compare and the enqueue together (atomic with
/// respect to [`futex_wake`], as under the kernel's hash-bucket lock). The compare sees every
/// store ordered before the access completes.
pub fn futex_wait(word: &std::sync::atomic::AtomicU32, expected: u32) {
    let addr = word as *const _ as usize;
    if at_sync_point(|m| m.advance(m.costs[cost::SYSCALL])).is_none() {
        return;
    }
    // The word's load, in two phases like any access: its value is read at its grant.
    access(addr, Access::Load);
    let slept = at_sync_point(|m| {
        if word.load(std::sync::atomic::Ordering::SeqCst) != expected {
            return false;
        }
        let id = m.current;
        let a = m.agent();
        m.counters[a].futex_sleeps += 1;
        m.futexes.entry(addr).or_default().push_back(id);
        m.tasks[id].parked = true;
        m.leave_core(id);
        true
    });
    if slept == Some(true) {
        at_sync_point(|_| ());
    }
}

/// `FUTEX_WAKE` of up to `n` sleepers of the futex at `addr`.
pub fn futex_wake(addr: usize, n: u32) {
    at_sync_point(|m| {
        let id = m.current;
        let start = m.tasks[id].clock;
        let mut woken = 0;
        while woken < n {
            let Some(w) = m.futexes.get_mut(&addr).and_then(|q| q.pop_front()) else {
                break;
            };
            woken += 1;
            let wake_at = start + m.costs[cost::WAKE_TO_RUN];
            let t = &mut m.tasks[w];
            t.parked = false;
            t.needs_core = !t.supervisor;
            t.clock = t.clock.max(wake_at);
            m.lower_horizon(w);
        }
        let a = m.agent();
        m.counters[a].futex_wakes += woken as u64;
        m.advance(if woken > 0 {
            m.costs[cost::FUTEX_WAKE]
        } else {
            m.costs[cost::SYSCALL]
        });
    });
}
