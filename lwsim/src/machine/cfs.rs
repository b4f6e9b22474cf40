//! The OS model CFS, [`Cfs`], behind the [`Scheduler`] trait (`scheduler.rs`) the machine asks
//! before every operation of a thread and at every system call that takes or leaves a core.
//!
//! # CFS
//! Each simulated thread (a task spawned with `thread::spawn`) needs a core: on start or after a
//! wakeup it takes its previous core if idle, else the lowest idle one, else it joins a run queue
//! (its previous core's for a wakeup, the shortest for a new thread) and is parked until
//! dispatched; under the structural option `model.wake_placement` 1 a wakeup is placed as
//! `select_idle_sibling` places it (below). A dispatch costs `context_switch`. The main task is a supervisor outside the
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
//! * **Wakeup placement** (`model.wake_placement`; 0 = the lowest idle core, above): under 1 a
//!   woken thread goes where `select_task_rq_fair`'s fast path (kernel/sched/fair.c before 6.6)
//!   sends it: `wake_affine` picks a target, its previous core or its waker's core (the
//!   FUTEX_WAKE caller's; a timed sleep's timer fires on the sleeper's own previous core; the
//!   supervisor's wake has none), simplified to `wake_affine_idle` and `wake_affine_weight` with
//!   loads counted in runnable threads; then `select_idle_sibling`: the target if idle, else
//!   the previous core if idle and in the target's L3, else the first idle core of the target's
//!   L3 scanning from the one after it, else the target's run queue. The kernel decides at the
//!   wakeup, under the waker's clock; lwsim when the woken thread arrives (`wake_to_run` later),
//!   on the cores' state then, as for choice 0. Not modelled: `wake_wide`, `recent_used_cpu`,
//!   `SIS_UTIL`'s bound on the scan, a preference for cores whose SMT siblings are idle.
//! * **Idle states**: a thread placed on a core idle longer than `idle_exit_after_ns` (the deepest
//!   state's target residency) first waits `idle_exit_ns` (its exit latency); per profile, from
//!   intel_idle's tables or published wake latencies. Default 0: no idle states.
//! * **Futexes**: FUTEX_WAIT is three scheduling points: the system call (`syscall`), the
//!   coherence access of the word, then the compare and the enqueue together, atomic with respect
//!   to FUTEX_WAKE as under the kernel's hash-bucket lock, so the compare sees every store ordered
//!   before its access. FUTEX_WAKE costs the waker `futex_wake` (`syscall` if it wakes nobody) and
//!   makes each woken thread runnable `wake_to_run` after the call began.
//! * **Context switches** are counted twice. As Linux counts them (`__schedule` in
//!   kernel/sched/core.c: `nvcsw` when the leaving task blocks, `nivcsw` when it is still
//!   runnable, and only when another task, or the idle task, takes the core):
//!   `voluntary_switches` each time a thread blocks (a FUTEX_WAIT that sleeps, a timed sleep, an
//!   idle wait), `involuntary_switches` each preemption (slice end or a wakeup's request) and
//!   each `sched_yield` that runs another thread; a preemption or yield after which the same
//!   thread goes on counts nothing. And `dispatches`: a queued thread put on a core, the event
//!   that pays `context_switch` (a thread woken onto an idle core is not dispatched).
//! * **CPU busy and idle**: a core is *busy* while a thread is on it, whatever the thread does
//!   (computing, spinning on a lock word, waiting for a line, in a system call's cost, switching
//!   in: CPU time as `top` shows it), and *idle* while none is: from the moment its thread
//!   sleeps, waits on a futex, is preempted with nothing queued, or exits, until a thread placed
//!   on it starts running (an idle-state exit latency is idle time, as the kernel's idle task
//!   accounts it). A thread waiting in a run queue keeps no core idle (queues form only when
//!   no core is). [`totals`](crate::totals) reports each core's idle time up to the caller's clock
//!   (`CoreCounters::idle_ps`); busy over a window is `cores × window − idle`. This differs
//!   from `busy_ps`, which charges each operation's whole cost when it is charged, so an
//!   operation that straddles a window's edge lands on one side.
//!
//! Limits: no scheduler tick (a slice ends exactly, at the thread's next operation, as with
//! `HRTICK`), no load balancing beyond stealing by an idle core, a wakeup's choice of an idle
//! core and the periodic balance above (no idle or newly-idle balancing by domain, `wake_affine` and `select_idle_sibling` only as simplified under `model.wake_placement` 1), no group scheduling, no
//! buddies other than `sched_yield`'s skip, no cpuidle governor (a core's state follows only how
//! long it has idled), and preemption takes effect at the running thread's next operation, so a
//! long [`crate::compute`] delays it.

use super::scheduler::Scheduler;
use super::stream::splitmix;
use super::task::Task;
use super::Machine;
use crate::profile::{cost, model, Profile};
use std::collections::VecDeque;

/// A core's CFS run queue and its idle accounting.
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
    /// that reads the counters (an exit latency charged ahead), see `Scheduler::idle_through`.
    last_idle: (u64, u64),
    /// When each of the core's scheduling domains is next balanced while it is busy (see
    /// `domains`; empty without periodic balancing).
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
#[derive(Clone, Copy, Debug)]
struct CfsTunables {
    latency: u64,
    min_gran: u64,
    wakeup_gran: u64,
    cap: u64,
}

/// CFS as before Linux 6.6 (the module docs): one run queue per core, the scheduling domains
/// periodic balancing walks, and the scaled parameters.
pub(crate) struct Cfs {
    cores: Vec<Core>,
    /// The scheduling domains periodic balancing walks, smallest first: each the simulated
    /// cores it spans (per core) and its busy balance interval (ps); empty when
    /// `model.balance_busy_factor` is 0.
    domains: Vec<Domain>,
    tunables: CfsTunables,
}

impl Cfs {
    /// `ncores` idle cores of `prof`. Each core balances each domain at a phase of its own
    /// within the interval (the kernel's balancing ticks are not aligned with a benchmark's
    /// start), a hash of the seed, the core and the level (the OS model's stream).
    pub(crate) fn new(prof: &Profile, ncores: usize, seed: u64) -> Cfs {
        let domains = domains(prof, ncores);
        let mut cores = vec![Core::default(); ncores];
        for (c, core) in cores.iter_mut().enumerate() {
            core.next_balance = (0..domains.len())
                .map(|l| {
                    let iv = domains[l].interval[c];
                    splitmix(seed ^ splitmix((c * 8 + l) as u64 + 0x6c62_616c)) % iv.max(1)
                })
                .collect();
        }
        Cfs {
            cores,
            domains,
            tunables: Cfs::tunables(prof),
        }
    }

    /// The scheduler's parameters: CFS's (kernel/sched/fair.c before 6.6) scaled by
    /// 1 + ilog2(min(cpus, 8)) (`SCHED_TUNABLESCALING_LOG`, the default), where cpus is the
    /// profile's hardware threads (the kernel scales by the online CPUs, which a benchmark's
    /// affinity does not change), and the profile's `time_slice_ns` as an upper bound.
    fn tunables(prof: &Profile) -> CfsTunables {
        let factor = 1 + prof.hw_threads().clamp(1, 8).ilog2() as u64;
        let ps = |k: usize| (prof.param(k) * 1000.0).round() as u64 * factor;
        CfsTunables {
            latency: ps(crate::profile::model::SCHED_LATENCY),
            min_gran: ps(crate::profile::model::MIN_GRANULARITY),
            wakeup_gran: ps(crate::profile::model::WAKEUP_GRANULARITY),
            cap: prof.costs_ps[cost::TIME_SLICE],
        }
    }

    /// The running thread of core `c`'s vruntime at time `at`.
    fn vruntime_at(&self, m: &Machine, c: usize, at: u64) -> i64 {
        match self.cores[c].running {
            Some(r) => m.tasks[r].vruntime + at.saturating_sub(self.cores[c].run_start) as i64,
            None => self.cores[c].min_vruntime,
        }
    }

    /// CFS `update_min_vruntime`: the queue's minimum follows the smaller of the running
    /// thread's and the leftmost queued thread's vruntime, and never decreases.
    fn update_min_vruntime(&mut self, m: &Machine, c: usize, at: u64) {
        let core = &self.cores[c];
        let left = core.queue.iter().map(|&q| m.tasks[q].vruntime).min();
        let curr = core.running.map(|_| self.vruntime_at(m, c, at));
        let m = match (curr, left) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return,
        };
        let core = &mut self.cores[c];
        core.min_vruntime = core.min_vruntime.max(m);
    }

    /// The running thread `id` leaves core `c` at `at`: its vruntime is banked.
    fn bank(&mut self, m: &mut Machine, id: usize, c: usize, at: u64) {
        self.update_min_vruntime(m, c, at);
        m.tasks[id].vruntime = self.vruntime_at(m, c, at);
    }

    /// Preempts `id` (CFS `check_preempt_tick`, or a wakeup's request) if its core has queued
    /// threads and: a wakeup asked for it, or it has run its slice
    /// (max(latency / nr_running, min_granularity), at most `time_slice_ns`), or it has run
    /// `min_granularity` and its vruntime is more than a slice ahead of the leftmost queued
    /// thread's; and a queued thread's vruntime is not above its own. Returns whether it did.
    fn slice_check(&mut self, m: &mut Machine, id: usize) -> bool {
        let Some(c) = m.tasks[id].core else {
            return false;
        };
        let c = c as usize;
        if self.cores[c].queue.is_empty() {
            self.cores[c].resched = false;
            return false;
        }
        let clock = m.tasks[id].clock;
        let ran = clock.saturating_sub(self.cores[c].run_start);
        if !self.cores[c].resched {
            let s = self.tunables;
            let ideal = self.slice_of(&s, self.cores[c].queue.len() + 1);
            if ran < ideal.min(s.min_gran) {
                return false;
            }
            let ahead = || {
                let left = self.cores[c].queue.iter();
                let left = left.map(|&q| m.tasks[q].vruntime).min().unwrap_or(i64::MAX);
                self.vruntime_at(m, c, clock).saturating_sub(left) > ideal as i64
            };
            if ran < ideal && !(ran >= s.min_gran && ahead()) {
                return false;
            }
        }
        // `schedule()` picks the leftmost thread; one queued with the running thread's vruntime
        // goes first (the rb-tree puts equal keys to the right). If the running thread is still
        // the leftmost, it goes on with a new slice: no switch.
        let left = self.cores[c].queue.iter();
        let left = left.map(|&q| m.tasks[q].vruntime).min().unwrap_or(i64::MAX);
        if self.vruntime_at(m, c, clock) < left {
            self.bank(m, id, c, clock);
            self.cores[c].run_start = clock;
            self.cores[c].resched = false;
            return false;
        }
        m.counters[c].preemptions += 1;
        m.counters[c].involuntary_switches += 1;
        self.requeue_running(m, id, c, clock);
        self.dispatch(m, c, clock);
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
    fn periodic_balance(&mut self, m: &mut Machine, id: usize) {
        let Some(c) = m.tasks[id].core else {
            return;
        };
        let c = c as usize;
        let now = m.tasks[id].clock;
        for l in 0..self.domains.len() {
            if self.cores[c].next_balance[l] > now {
                continue;
            }
            self.cores[c].next_balance[l] = now + self.domains[l].interval[c];
            let nr = |cores: &[Core], d: usize| {
                cores[d].queue.len() + usize::from(cores[d].running.is_some())
            };
            let mine = nr(&self.cores, c);
            let Some(b) = self.domains[l].span[c]
                .iter()
                .copied()
                .filter(|&d| d != c)
                .max_by_key(|&d| (nr(&self.cores, d), std::cmp::Reverse(d)))
            else {
                continue;
            };
            if nr(&self.cores, b) < mine + 2 {
                continue;
            }
            let cold = self.cores[b]
                .queue
                .iter()
                .enumerate()
                .filter(|&(_, &q)| now.saturating_sub(m.tasks[q].clock) >= MIGRATION_COST_PS)
                .min_by_key(|&(i, &q)| (m.tasks[q].clock, i))
                .map(|(i, _)| i);
            let Some(i) = cold else {
                continue;
            };
            let n = self.cores[b].queue.remove(i).expect("a queued thread");
            self.update_min_vruntime(m, b, now);
            self.update_min_vruntime(m, c, now);
            let v = m.tasks[n].vruntime - self.cores[b].min_vruntime + self.cores[c].min_vruntime;
            m.tasks[n].vruntime = v;
            m.tasks[n].last_core = Some(c as u32);
            self.cores[c].queue.push_back(n);
            m.counters[c].balance_pulls += 1;
            if self.vruntime_at(m, c, now) - v > self.tunables.wakeup_gran as i64 {
                self.cores[c].resched = true;
            }
        }
    }

    /// The CFS slice at `nr` runnable threads on a core.
    fn slice_of(&self, s: &CfsTunables, nr: usize) -> u64 {
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
    fn arrive(&mut self, m: &mut Machine, id: usize) -> bool {
        let last = m.tasks[id].last_core.map(|c| c as usize);
        let waker = m.tasks[id].waker_core.take().map(|c| c as usize);
        let sis = m.prof.param(model::WAKE_PLACEMENT) >= 0.5;
        let (idle, target) = match last.filter(|_| sis) {
            // `model.wake_placement` 1: a wakeup placed as `select_task_rq_fair`'s fast path.
            Some(prev) => {
                let c = self.select_idle_sibling(m, prev, self.wake_target(m, prev, waker));
                (self.cores[c].running.is_none().then_some(c), c)
            }
            None => {
                let idle = last
                    .filter(|&c| self.cores[c].running.is_none())
                    .or_else(|| (0..m.ncores).find(|&c| self.cores[c].running.is_none()));
                let target = idle.unwrap_or_else(|| {
                    last.unwrap_or_else(|| {
                        (0..m.ncores)
                            .min_by_key(|&c| self.cores[c].queue.len())
                            .unwrap_or(0)
                    })
                });
                (idle, target)
            }
        };
        let clock = m.tasks[id].clock;
        let s = self.tunables;
        // Vruntime placement, in the target queue's frame.
        self.update_min_vruntime(m, target, clock);
        let min = self.cores[target].min_vruntime;
        let v = match last {
            None => min,
            Some(l) => {
                let mut v = m.tasks[id].vruntime;
                if l != target {
                    self.update_min_vruntime(m, l, clock);
                    v = v - self.cores[l].min_vruntime + min;
                }
                v.max(min - (s.latency / 2) as i64)
            }
        };
        let t = &mut m.tasks[id];
        t.needs_core = false;
        t.vruntime = v;
        if idle.is_some() {
            let core = &self.cores[target];
            let exit = (m.prof.param(crate::profile::model::IDLE_EXIT) * 1000.0).round() as u64;
            let after = (m.prof.param(crate::profile::model::IDLE_EXIT_AFTER) * 1000.0).round();
            let t = &mut m.tasks[id];
            if exit > 0 && clock.saturating_sub(core.idle_since) > after as u64 {
                t.clock += exit;
                m.counters[target].busy_ps += exit;
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
            self.update_min_vruntime(m, target, clock);
            true
        } else {
            t.parked = true;
            self.cores[target].queue.push_back(id);
            if let Some(r) = self.cores[target].running {
                // A thread in a spin jump sees the arrival at its next load (its slice check).
                m.spin_interrupt(r, m.key(id));
            }
            if self.vruntime_at(m, target, clock) - v > s.wakeup_gran as i64 {
                self.cores[target].resched = true;
            }
            false
        }
    }

    /// Whether core `c` is idle as `available_idle_cpu` sees it: no thread running or queued.
    fn is_idle(&self, c: usize) -> bool {
        self.cores[c].running.is_none() && self.cores[c].queue.is_empty()
    }

    /// Runnable threads of core `c` (running and queued): its load, as a count.
    fn nr_running(&self, c: usize) -> usize {
        self.cores[c].queue.len() + usize::from(self.cores[c].running.is_some())
    }

    /// `wake_affine` (kernel/sched/fair.c before 6.6), simplified: the core a wakeup is placed
    /// near, the wakee's previous core `prev` or its waker's core. The previous core when
    /// there is no waker's core (the supervisor woke it) or it is `prev` (a timed sleep);
    /// `wake_affine_idle`: if the waker's core is idle and shares `prev`'s L3, `prev` if idle,
    /// else the waker's; else `prev` if idle; else `wake_affine_weight` with each core's load
    /// as its runnable threads (PELT averages are not modelled): the waker's core with the
    /// wakee added against `prev` without it (its blocked load subtracted), `prev`'s side
    /// weighted by `WA_BIAS`'s 100 + (imbalance_pct − 100) / 2 (108 within an L3, 112 across). Not modelled: `wake_wide`
    /// (which turns affine wakeups off for a waker that wakes many threads in turn), sync
    /// wakeups (FUTEX_WAKE's are not), the domain walk (every profile's machine is one domain
    /// with `SD_WAKE_AFFINE`: its sockets are within `node_reclaim_distance`).
    fn wake_target(&self, m: &Machine, prev: usize, waker: Option<usize>) -> usize {
        let Some(w) = waker.filter(|&w| w != prev) else {
            return prev;
        };
        if self.is_idle(w) && m.prof.place(w).1 == m.prof.place(prev).1 {
            return if self.is_idle(prev) { prev } else { w };
        }
        if self.is_idle(prev) {
            return prev;
        }
        // `imbalance_pct` of the smallest domain spanning both (kernel/sched/topology.c
        // `sd_init`): 117 for the cores of one L3 (`SD_SHARE_PKG_RESOURCES`), else 125.
        let pct = if m.prof.place(w).1 == m.prof.place(prev).1 {
            117
        } else {
            125
        };
        let this_load = (self.nr_running(w) + 1) * 100;
        let prev_load = self.nr_running(prev) * (100 + (pct - 100) / 2);
        if this_load < prev_load {
            w
        } else {
            prev
        }
    }

    /// `select_idle_sibling(p, prev, target)` (kernel/sched/fair.c before 6.6), simplified: the
    /// target if idle; else `prev` if it is idle and shares the target's L3; else the first idle
    /// core of the target's L3 (`sd_llc`, the profile's `cores_per_l3`) scanning from the one
    /// after the target and wrapping (`select_idle_cpu`'s `for_each_cpu_wrap`); else the
    /// target. Not modelled: `recent_used_cpu`, the per-CPU kthread case, `SIS_UTIL`'s limit
    /// on the scan (the whole L3 is scanned), `select_idle_core`'s preference for a core whose
    /// SMT siblings are all idle, asymmetric capacities.
    fn select_idle_sibling(&self, m: &Machine, prev: usize, target: usize) -> usize {
        if self.is_idle(target) {
            return target;
        }
        let llc = |c: usize| m.prof.place(c).1;
        if prev != target && llc(prev) == llc(target) && self.is_idle(prev) {
            return prev;
        }
        let n = m.ncores;
        (1..n)
            .map(|k| (target + k) % n)
            .find(|&c| llc(c) == llc(target) && self.is_idle(c))
            .unwrap_or(target)
    }

    /// Thread `id`, running on core `c`, goes back to the tail of `c`'s run queue at `at`
    /// (preempted at its slice's end, or yielding to a queued thread): its run so far banked,
    /// the core left without a running thread for the caller to fill.
    fn requeue_running(&mut self, m: &mut Machine, id: usize, c: usize, at: u64) {
        self.bank(m, id, c, at);
        self.cores[c].queue.push_back(id);
        let t = &mut m.tasks[id];
        t.core = None;
        t.last_core = Some(c as u32);
        t.parked = true;
        self.cores[c].running = None;
    }

    /// Core `c` became free at time `at`: run the leftmost (smallest vruntime, first queued
    /// among equals) thread of its queue, or steal the leftmost of the first non-empty queue.
    fn dispatch(&mut self, m: &mut Machine, c: usize, at: u64) {
        match self.pick_queued(m, c, at) {
            Some(n) => self.run_on(m, c, n, at),
            None => self.cores[c].idle_since = at,
        }
    }

    /// Takes the leftmost queued thread for core `c` (its own queue's, else stolen, with its
    /// vruntime moved into `c`'s frame).
    fn pick_queued(&mut self, m: &mut Machine, c: usize, at: u64) -> Option<usize> {
        let leftmost = |q: &VecDeque<usize>, tasks: &[Task]| {
            (0..q.len()).min_by_key(|&i| (tasks[q[i]].vruntime, i))
        };
        if let Some(i) = leftmost(&self.cores[c].queue, &m.tasks) {
            return self.cores[c].queue.remove(i);
        }
        let d = (0..m.ncores).find(|&d| !self.cores[d].queue.is_empty())?;
        let i = leftmost(&self.cores[d].queue, &m.tasks)?;
        let n = self.cores[d].queue.remove(i)?;
        self.update_min_vruntime(m, d, at);
        self.update_min_vruntime(m, c, at);
        let v = &mut m.tasks[n].vruntime;
        *v = *v - self.cores[d].min_vruntime + self.cores[c].min_vruntime;
        Some(n)
    }

    /// Runs queued thread `n` on the free core `c` from time `at`, after a context switch.
    fn run_on(&mut self, m: &mut Machine, c: usize, n: usize, at: u64) {
        let cs = m.costs[cost::CONTEXT_SWITCH];
        let t = &mut m.tasks[n];
        t.clock = t.clock.max(at) + cs;
        t.parked = false;
        t.needs_core = false;
        t.core = Some(c as u32);
        let clock = t.clock;
        let core = &mut self.cores[c];
        core.running = Some(n);
        core.run_start = clock;
        core.resched = false;
        self.update_min_vruntime(m, c, clock);
        m.counters[c].dispatches += 1;
        m.counters[c].busy_ps += cs;
        m.lower_horizon(n);
    }
}

impl Scheduler<Machine> for Cfs {
    fn before_operation(&mut self, m: &mut Machine, id: usize) -> bool {
        if m.tasks[id].needs_core && !self.arrive(m, id) {
            return false;
        }
        if !self.domains.is_empty() {
            self.periodic_balance(m, id);
        }
        !self.slice_check(m, id)
    }

    fn leave_core(&mut self, m: &mut Machine, id: usize) {
        if let Some(c) = m.tasks[id].core {
            let c = c as usize;
            let at = m.tasks[id].clock;
            self.bank(m, id, c, at);
            m.tasks[id].core = None;
            m.tasks[id].last_core = Some(c as u32);
            self.cores[c].running = None;
            self.dispatch(m, c, at);
        }
    }

    /// CFS's `yield_task_fair` (nothing when the caller is alone on its run queue) and the skip
    /// buddy of `pick_next_entity`: the leftmost other queued thread runs if its vruntime is at
    /// most `wakeup_granularity` past the caller's, else the caller goes on.
    fn yield_now(&mut self, m: &mut Machine, id: usize) -> bool {
        let Some(c) = m.tasks[id].core else {
            return false;
        };
        let c = c as usize;
        let at = m.tasks[id].clock;
        let gran = self.tunables.wakeup_gran as i64;
        let mine = self.vruntime_at(m, c, at);
        let left = self.cores[c]
            .queue
            .iter()
            .map(|&q| m.tasks[q].vruntime)
            .min();
        if !left.is_some_and(|v| v <= mine + gran) {
            return false;
        }
        let Some(n) = self.pick_queued(m, c, at) else {
            return false;
        };
        // A yield that runs another thread is an involuntary switch (`__schedule` counts
        // `nivcsw` for a task that is still runnable).
        m.counters[c].involuntary_switches += 1;
        self.requeue_running(m, id, c, at);
        self.run_on(m, c, n, at);
        true
    }

    fn running(&self, core: usize) -> Option<usize> {
        self.cores[core].running
    }

    fn idle_through(&self, c: usize, t: u64) -> u64 {
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

    fn spin_quiet(&self, m: &Machine, id: usize) -> Option<u64> {
        let c = m.tasks[id].core? as usize;
        let core = &self.cores[c];
        if !core.queue.is_empty() || core.resched {
            return None;
        }
        Some(core.next_balance.iter().copied().min().unwrap_or(u64::MAX))
    }

    fn queued_on(&self, id: usize) -> Option<usize> {
        self.cores.iter().position(|c| c.queue.contains(&id))
    }

    fn describe_cores(&self) -> String {
        let ms = |ps: u64| ps as f64 / 1e9;
        let mut out = String::new();
        for (c, core) in self.cores.iter().enumerate() {
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
        out
    }
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
