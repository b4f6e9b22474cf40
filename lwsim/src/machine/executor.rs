//! The executor's decisions: the tasks' virtual clocks and the order in which they run. lwsim's
//! executor (`coroutines.rs`) asks [`Machine::pick`] for every decision; task code passes a sync point
//! ([`at_sync_point`], [`at_turn`]) before every operation on shared state and yields until its
//! key is the smallest (see the parent module's *Time*).

use super::stream::splitmix;
use super::task::Task;
use super::Machine;
use std::collections::VecDeque;

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

pub(super) enum Prep {
    Go,
    Yield,
}

impl Machine {
    /// Task `id`, created (with every lower id) at the clock of this decision if new: a
    /// supervisor until `thread_start`, its tie-break priority a hash of the seed and its id
    /// (the executor's stream).
    pub(super) fn task(&mut self, id: usize) -> &mut Task {
        while self.tasks.len() <= id {
            let n = self.tasks.len();
            self.tasks.push(Task {
                clock: self.now,
                prio: splitmix(self.seed ^ (n as u64).wrapping_mul(0xA24B_AED4_963E_E407)),
                parked: false,
                needs_core: false,
                core: None,
                last_core: None,
                waker_core: None,
                supervisor: true,
                exited: false,
                vruntime: 0,
                sb: VecDeque::new(),
                listed: None,
                absent: false,
                spin: None,
            });
            self.stale.push(n);
        }
        &mut self.tasks[id]
    }

    pub(super) fn key(&self, id: usize) -> (u64, u64, usize) {
        (self.tasks[id].clock, self.tasks[id].prio, id)
    }

    /// How many tasks the machine knows (ids `0..n`).
    pub(crate) fn known_tasks(&self) -> usize {
        self.tasks.len()
    }

    /// The scheduler's decision: the eligible runnable task with the smallest key.
    ///
    /// `offered(id)` says whether task `id` is runnable at this decision (not blocked in a join,
    /// not finished: else it is *absent*); `changed` whether that set may differ from the last
    /// decision's (a task absent from one can be offered at a later one only if they differ); `top`
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
        offered: impl Fn(usize) -> bool,
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
                if !offered(id) {
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
            if !offered(k.2) {
                stale.push(k.2);
            } else if best.is_none() {
                best = Some(k);
            } else {
                second = k;
                break;
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

    /// The hardware thread the running task runs on (`None`: the supervisor, or a task
    /// between cores).
    pub fn core_of_current(&self) -> Option<usize> {
        self.tasks
            .get(self.current)
            .and_then(|t| t.core)
            .map(|c| c as usize)
    }

    /// Another task `id` became eligible or changed its clock: the horizon comes down to its key
    /// if lower, and its entry in the scheduler's order is refreshed at the next decision.
    pub(super) fn lower_horizon(&mut self, id: usize) {
        self.stale.push(id);
        let k = self.key(id);
        if k < self.horizon {
            self.horizon = k;
        }
    }

    /// Before an operation: once the running task's key is the smallest (below the horizon),
    /// the OS model may take a core for it, balance or preempt it (a thread only); then it goes
    /// unless that moved its key past another task's. The OS model's state is shared state: it
    /// acts at the task's clock only after every earlier event, so a thread back from a timed
    /// sleep arrives on a core when its timer fires, on the cores' state then (acting first would
    /// put the sleeper on a run queue, or an idle core, from the moment it began to sleep).
    fn prepare(&mut self) -> Prep {
        let id = self.current;
        if self.tasks[id].parked || self.key(id) >= self.horizon {
            return Prep::Yield;
        }
        if !self.tasks[id].supervisor
            && !self.tasks[id].exited
            && !self.with_os(|os, m| os.before_operation(m, id))
        {
            return Prep::Yield;
        }
        if self.key(id) < self.horizon {
            Prep::Go
        } else {
            Prep::Yield
        }
    }
}

/// How many sync points a task may pass while it unwinds a panic before the run is aborted.
const UNWIND_POINTS: u64 = 1_000_000;

impl Machine {
    /// Whether the running task unwinds a panic. Its sync points then act as outside a
    /// simulation (a stack that unwinds is not suspended, so the task cannot wait for another):
    /// a destructor that releases goes on; one that waits for another thread would wait forever,
    /// so past `UNWIND_POINTS` such points the process aborts with the reason, as PostgreSQL's
    /// PANIC does, rather than hang.
    fn unwinding(&mut self) -> bool {
        if !std::thread::panicking() {
            return false;
        }
        self.unwound += 1;
        if self.unwound > UNWIND_POINTS {
            eprintln!(
                "lwsim: PANIC: a simulated thread that unwinds a panic waits for another thread \
                 in a destructor ({UNWIND_POINTS} operations without progress); a waiting \
                 destructor cannot run on the simulated machine while it unwinds"
            );
            std::process::abort();
        }
        true
    }
}

/// Loops until the running task is the earliest (its clock below every other eligible task's),
/// then runs `f`: no core, slice or preemption check, for the second phase of an access, which
/// the hardware completes whatever the scheduler does.
pub(super) fn at_turn<R>(mut f: impl FnMut(&mut Machine) -> R) -> Option<R> {
    super::MACHINE.with(|cell| loop {
        {
            let mut b = cell.borrow_mut();
            let m = b.as_deref_mut()?;
            if m.unwinding() {
                return None;
            }
            if m.key(m.current) < m.horizon {
                let t = m.tasks[m.current].clock;
                m.drain_stores(t);
                return Some(f(m));
            }
        }
        crate::coroutines::switch();
    })
}

/// Loops until the running task may perform an operation, then runs `f` on the machine. Returns
/// `None` outside a simulation.
pub(super) fn at_sync_point<R>(mut f: impl FnMut(&mut Machine) -> R) -> Option<R> {
    super::MACHINE.with(|cell| loop {
        {
            let mut b = cell.borrow_mut();
            let m = b.as_deref_mut()?;
            if m.unwinding() {
                return None;
            }
            if let Prep::Go = m.prepare() {
                let t = m.tasks[m.current].clock;
                m.drain_stores(t);
                return Some(f(m));
            }
        }
        crate::coroutines::switch();
    })
}

/// The supervisor (the task that called `run`, which has no core) waits until virtual time `ns`:
/// its clock moves there at no cost (no system call, no timer slack) and it resumes once every
/// other task's earlier event has run, so what it reads then ([`totals`](super::totals), [`watched_lines`](super::watched_lines)) is
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
