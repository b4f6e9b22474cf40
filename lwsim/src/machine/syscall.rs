//! The system calls that enter the OS model: a thread's start and exit, timed sleeps,
//! `sched_yield`, FUTEX_WAIT and FUTEX_WAKE. Each is charged at its sync point; where it takes or
//! leaves a core, the OS model ([`super::Scheduler`]) decides.

use super::charge::{access, serialize};
use super::executor::at_sync_point;
use super::with_machine;
use crate::access::Access;
use crate::profile::cost;

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
        m.with_os(|os, m| os.leave_core(m, id));
        m.tasks[id].exited = true;
    });
}

/// The running task `id` blocks: it leaves its core, a voluntary context switch as Linux's
/// `__schedule` counts one (`nvcsw`, for a task that is no longer runnable) whether another
/// thread or the idle task takes the core. The supervisor has no core and counts none; a
/// thread's exit is not counted either (the kernel adds an exiting thread's counts to its
/// process's before its last switch).
fn block(m: &mut super::Machine, id: usize) {
    if let Some(c) = m.tasks[id].core {
        m.counters[c as usize].voluntary_switches += 1;
    }
    m.with_os(|os, m| os.leave_core(m, id));
}

/// A timed sleep of `ps` picoseconds.
pub fn sleep(ps: u64) {
    off_core(ps, true);
}

/// An idle wait of exactly `ps` picoseconds, ended by an event from outside the machine (a
/// backend's read of its socket, answered by its client): the system call, off the core, back
/// after `ps`, with no timer slack (no timer ends it) and not counted as a sleep.
pub fn idle_wait(ps: u64) {
    off_core(ps, false);
}

/// Leaves the core for `ps` picoseconds after a system call; a timed sleep (`timed`) pays the
/// profile's timer slack and counts as a sleep.
fn off_core(ps: u64, timed: bool) {
    at_sync_point(|m| {
        let id = m.current;
        let a = m.agent();
        if timed {
            m.counters[a].sleeps += 1;
        }
        m.advance(m.costs[cost::SYSCALL]);
        let supervisor = m.tasks[id].supervisor;
        block(m, id);
        let slack = if timed { m.costs[cost::TIMER_SLACK] } else { 0 };
        let t = &mut m.tasks[id];
        t.clock += ps + slack;
        t.needs_core = !supervisor;
        // The timer fires on the core that armed it (timer migration is not modelled).
        t.waker_core = t.last_core;
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
        m.with_os(|os, m| os.yield_now(m, id))
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
        block(m, id);
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
        let waker_core = m.tasks[id].core;
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
            t.waker_core = waker_core;
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
