//! The contended path of the drop-in policies' acquires (every acquire that is not PostgreSQL's
//! own: timed, recursive, upgradable, and every acquire under [`Handoff`], [`TaskFair`] and the
//! spinning policies). Beyond PostgreSQL; the faithful loop is `lwlock_acquire.rs`.
//!
//! Everything here uses the bits `UPGRADABLE` and `HANDOFF`, the wait mode
//! `lw_mode::UPGRADABLE` or the record flag `lw_granted`, which PostgreSQL's own operations
//! (`lwlock_acquire.rs`) never set; those behave as PostgreSQL's as long as only they are
//! used. See the layout's table and invariants 6–8.
//!
//! * **Recursive read** (`lock_shared_recursive`): a shared unit that waits only for an
//!   exclusive *holder*. Sound because a thread that already holds a shared unit excludes every
//!   exclusive holder: the count is above zero, so the attempt succeeds at once, whatever queued
//!   writers, `HANDOFF` or an upgrader waiting for readers say; it never waits for a thread that
//!   waits for it. Under [`Barging`] every shared acquire already behaves so (newcomers barge);
//!   under [`Handoff`] a plain read queues behind the handoff owner, so a recursive read must
//!   bypass it, or a reader holding a unit would wait for a writer that waits for that unit.
//! * **Timed acquire**: the same queue-then-recheck, sleeping with a deadline. At the deadline the
//!   waiter takes the wait-list lock: if it is still WAITING it unlinks itself (as
//!   `LWLockDequeueSelf`) and no waker can have chosen it; otherwise a waker did, and the waiter
//!   absorbs that waker's post, re-enables wakeups and makes one more attempt (or finds the lock
//!   handed over). Woken or dequeued, never both; a wakeup is never dropped.

use super::handoff::Take;
#[allow(unused_imports)] // rustdoc links
use super::layout::HANDOFF;
use super::layout::{HAS_WAITERS, RELEASE_OK};
use super::wait_list::take_granted;
use super::{AtomicLwLock, Attempt, Policy, Want};
#[allow(unused_imports)] // rustdoc links
use super::{Barging, Handoff, TaskFair};
use crate::elog::CritSection;
use crate::proc::{lw_mode, lw_waiting, Proc};
use crate::raw::{Mode, RawLwLock};
use crate::stats::Stat;
use crate::sync::{self, Ordering};
use crate::wait_event::{Tranche, WaitEvent};

/// How soon a writer that found the handoff owned by another looks again.
const REARM_MIN_NANOS: u64 = 100_000;

/// How a timed or bounded sleep ended.
pub(super) enum Woke {
    /// A waker set NOT_WAITING: compete again.
    Woken,
    /// A fair unlock handed us the lock.
    Granted,
    /// Our own re-check after taking the handoff got the lock (we are off the list).
    Acquired,
    /// The deadline passed and we unlinked ourselves: nobody woke us.
    TimedOut,
    /// The deadline passed, but a waker had chosen us: its post is absorbed and wakeups are
    /// re-enabled; one more attempt decides.
    WokenLate,
}

impl<P: Policy> AtomicLwLock<P> {
    /// A shared acquire that waits only for an exclusive *holder*: never behind queued writers,
    /// [`HANDOFF`] or an upgrader waiting for its readers (lock_api's `lock_shared_recursive`).
    /// A thread that already holds the lock shared gets it without blocking. Returns `true` if
    /// it did not sleep.
    ///
    /// # Panics
    /// Beyond `MAX_SHARED` holders.
    #[inline]
    pub fn acquire_shared_recursive(&self) -> bool {
        self.stats.bump(Stat::ShAcquire, 1);
        match self.attempt(Want::Recursive, false) {
            Attempt::Acquired => true,
            Attempt::Overflow => self.shared_overflow(),
            Attempt::MustWait => self.acquire_ext(Want::Recursive, None).unwrap_or(false),
        }
    }

    /// Takes the lock in `mode`, waiting at most until `deadline` (on the
    /// [`sync::clock_nanos`] timeline; see [`sync::deadline_after`]). Returns whether it is
    /// held. A waiter whose deadline passes unlinks itself like `LWLockDequeueSelf`; if a
    /// waker had already chosen it, it absorbs that wakeup and makes one last attempt instead,
    /// so it may return `true` slightly after the deadline. The drop-in mutex's
    /// `RawMutexTimed` can use it with [`Mode::Exclusive`].
    ///
    /// # Panics
    /// Beyond `MAX_SHARED` holders.
    pub fn acquire_until(&self, mode: Mode, deadline: u64) -> bool {
        self.acquire_want_until(Want::of(mode), deadline)
    }

    /// [`acquire_until`](Self::acquire_until) for any [`Want`].
    pub(super) fn acquire_want_until(&self, want: Want, deadline: u64) -> bool {
        self.stats.bump(
            if want == Want::Exclusive {
                Stat::ExAcquire
            } else {
                Stat::ShAcquire
            },
            1,
        );
        match self.attempt(want, false) {
            Attempt::Acquired => true,
            Attempt::Overflow => self.shared_overflow(),
            Attempt::MustWait => self.acquire_ext(want, Some(deadline)).is_some(),
        }
    }

    /// Queue, re-check, sleep (with `deadline`, and under [`Handoff`] with the bound), compete
    /// again. Returns `Some(fast)` once the lock is held (`fast`: without sleeping), `None` if
    /// the deadline passed first (then nothing is held and we are off the list).
    #[cold]
    pub(super) fn acquire_ext(&self, want: Want, deadline: Option<u64>) -> Option<bool> {
        let me = Proc::current();
        let wait_mode = match want {
            Want::Exclusive => lw_mode::EXCLUSIVE,
            Want::Upgradable => lw_mode::UPGRADABLE,
            Want::Shared | Want::Recursive => lw_mode::SHARED,
        };
        // The bound: when the first exclusive waiter takes the handoff.
        let mut bound = (P::HANDOFF && want == Want::Exclusive)
            .then(|| sync::clock_nanos().saturating_add(P::BOUND_NANOS));
        let mut token = false;
        let mut slept = false;
        let mut extra = 0;
        let event = WaitEvent::lwlock(Tranche::from_id(self.tranche));
        let outcome = loop {
            let crit = CritSection::start("atomic LWLock: queued on the wait list");
            if P::HANDOFF && P::BOUND_NANOS == 0 && want == Want::Exclusive && !token {
                token = self.queue_self_taking_handoff(me);
            } else {
                self.queue_self_at(me, wait_mode, token);
            }
            match self.attempt(want, token) {
                Attempt::Acquired => {
                    if self.dequeue_self(me) {
                        // SAFETY: a fair unlock granted us a second shared unit (invariant 8).
                        unsafe { self.release(Mode::Shared) };
                    }
                    crit.end();
                    break Some(!slept);
                }
                Attempt::Overflow => {
                    if self.dequeue_self(me) {
                        // SAFETY: the grant is the only unit we hold.
                        unsafe { self.release(Mode::Shared) };
                    }
                    crit.end();
                    me.repost(extra);
                    self.shared_overflow();
                }
                Attempt::MustWait => {}
            }
            self.stats.bump(Stat::Block, 1);
            let woke = self.sleep_queued(me, event, deadline, &mut bound, &mut token, &mut extra);
            crit.end();
            slept = true;
            match woke {
                Woke::Granted | Woke::Acquired => break Some(false),
                Woke::TimedOut => {
                    if token {
                        self.give_up_handoff();
                    }
                    break None;
                }
                Woke::Woken | Woke::WokenLate => {
                    // We ran: wakeups may happen again (WokenLate already re-enabled them).
                    if matches!(woke, Woke::Woken) {
                        self.state.fetch_or(RELEASE_OK, Ordering::Relaxed);
                    }
                    match self.attempt(want, token) {
                        Attempt::Acquired => break Some(false),
                        Attempt::Overflow => {
                            me.repost(extra);
                            self.shared_overflow()
                        }
                        Attempt::MustWait if matches!(woke, Woke::WokenLate) => {
                            // Someone holds the lock: its release wakes the next waiter.
                            if token {
                                self.give_up_handoff();
                            }
                            break None;
                        }
                        Attempt::MustWait => {}
                    }
                }
            }
        };
        me.repost(extra);
        outcome
    }

    /// Sleeps on our queued record until woken, handed the lock, or `deadline`; under
    /// [`Handoff`], takes the handoff when `bound` passes.
    pub(super) fn sleep_queued(
        &self,
        me: &Proc,
        event: WaitEvent,
        deadline: Option<u64>,
        bound: &mut Option<u64>,
        token: &mut bool,
        extra: &mut u32,
    ) -> Woke {
        me.report_wait_start(event);
        // False once a waker is known to have chosen us: its post is coming, so the rest of
        // this sleep needs no bound (the bound itself stays for the next sleep).
        let mut bound_live = true;
        let woke = loop {
            let b = if *token || !bound_live { None } else { *bound };
            let until = match (deadline, b) {
                (Some(d), Some(b)) => Some(d.min(b)),
                (d, b) => d.or(b),
            };
            let posted = match until {
                None => {
                    me.sem.lock();
                    true
                }
                Some(t) => me.sem.lock_until(t),
            };
            if posted {
                // Acquire: pairs with the waker's Release store after unlinking us.
                if me.lw_waiting.load(Ordering::Acquire) == lw_waiting::NOT_WAITING {
                    break if take_granted(me) {
                        Woke::Granted
                    } else {
                        Woke::Woken
                    };
                }
                *extra += 1; // a post meant for another protocol
                continue;
            }
            let bound_fired = match (b, deadline) {
                (Some(b), Some(d)) => b <= d,
                (Some(_), None) => true,
                _ => false,
            };
            if bound_fired {
                match self.take_handoff(me) {
                    Take::Taken => {
                        *token = true;
                        // The lock may be free with nobody left to release it: re-check, as
                        // after queueing.
                        if self.attempt(Want::Exclusive, true) == Attempt::Acquired {
                            let granted = self.dequeue_self(me);
                            debug_assert!(!granted, "an exclusive waiter granted twice");
                            break Woke::Acquired;
                        }
                    }
                    Take::Other => {
                        // Another writer owns it: look again later (not at once, which would
                        // spin on the wait-list lock under a zero bound).
                        let again = P::BOUND_NANOS.max(REARM_MIN_NANOS);
                        *bound = Some(sync::clock_nanos().saturating_add(again));
                    }
                    Take::Detached => bound_live = false,
                }
                continue;
            }
            // The deadline passed: unlink ourselves unless a waker already chose us.
            break self.time_out(me, extra);
        };
        me.report_wait_end();
        woke
    }

    /// At the deadline: `LWLockDequeueSelf` if we are still WAITING (then no waker chose us);
    /// otherwise a waker detached us and its post is coming: absorb it, re-enable wakeups.
    pub(super) fn time_out(&self, me: &Proc, extra: &mut u32) -> Woke {
        self.wait_list_lock();
        // Mutant `timeout_unconditional_dequeue` (models only): unlink ourselves without
        // asking whether a waker already did (and then leave its post behind).
        let on_list = crate::mutant!("timeout_unconditional_dequeue")
            || me.lw_waiting.load(Ordering::Relaxed) == lw_waiting::WAITING;
        // SAFETY: LOCKED is held.
        let empty = unsafe {
            self.with_waiters(|l| {
                if on_list {
                    l.delete(me);
                }
                l.is_empty()
            })
        };
        if empty && self.state.load(Ordering::Relaxed) & HAS_WAITERS != 0 {
            self.state.fetch_and(!HAS_WAITERS, Ordering::Relaxed);
        }
        self.wait_list_unlock();
        if on_list {
            me.lw_waiting
                .store(lw_waiting::NOT_WAITING, Ordering::Relaxed);
            return Woke::TimedOut;
        }
        loop {
            me.sem.lock();
            // Acquire: pairs with the waker's Release store.
            if me.lw_waiting.load(Ordering::Acquire) == lw_waiting::NOT_WAITING {
                break;
            }
            *extra += 1;
        }
        if take_granted(me) {
            return Woke::Granted;
        }
        // Mutant `timeout_drop_wake` (models only): leave without re-enabling the wakeups the
        // waker inhibited for us (and without the attempt that would pass them on).
        if crate::mutant!("timeout_drop_wake") {
            return Woke::TimedOut;
        }
        self.state.fetch_or(RELEASE_OK, Ordering::Relaxed);
        Woke::WokenLate
    }

    /// [`acquire_adaptive`](Self::acquire_adaptive) after its first spin failed.
    #[cold]
    #[inline(never)]
    pub(super) fn acquire_adaptive_queue(&self, want: Want) -> bool {
        let me = Proc::current();
        let wait_mode = match want {
            Want::Exclusive => lw_mode::EXCLUSIVE,
            Want::Upgradable => lw_mode::UPGRADABLE,
            Want::Shared | Want::Recursive => lw_mode::SHARED,
        };
        // The bound runs from the first queueing, across sleeps.
        let mut bound =
            (want == Want::Exclusive).then(|| sync::clock_nanos().saturating_add(P::BOUND_NANOS));
        let mut token = false;
        // Our bound has passed in a sleep (the rule in the module docs: woken, we re-queue at
        // the front, not the tail).
        let mut late = false;
        let mut slept = false;
        let mut extra = 0;
        let event = WaitEvent::lwlock(Tranche::from_id(self.tranche));
        // The first spin ran in `acquire_adaptive`.
        let mut spun = true;
        loop {
            // The handoff owner never spins: it is first in line and the bit keeps others out.
            if !token && !std::mem::take(&mut spun) && self.spin_acquire(want) {
                break;
            }
            let crit = CritSection::start("atomic LWLock: queued on the wait list");
            if want == Want::Exclusive && !token {
                // A writer held off by readers takes the handoff as it queues (task-fair
                // against readers, as parking_lot's writer bit); one held off by a writer
                // queues to barge (eventual fairness at the bound).
                token = self.queue_self_writer(me, late);
            } else {
                self.queue_self_at(me, wait_mode, token);
            }
            match self.attempt(want, token) {
                Attempt::Acquired => {
                    if self.dequeue_self(me) {
                        // SAFETY: a fair unlock granted us a second shared unit (invariant 8).
                        unsafe { self.release(Mode::Shared) };
                    }
                    crit.end();
                    break;
                }
                Attempt::Overflow => {
                    if self.dequeue_self(me) {
                        // SAFETY: the grant is the only unit we hold.
                        unsafe { self.release(Mode::Shared) };
                    }
                    crit.end();
                    me.repost(extra);
                    self.shared_overflow();
                }
                Attempt::MustWait => {}
            }
            // The handoff owner behind readers: new readers are kept out, so the ones inside
            // drain soon; spin for that before sleeping (parking_lot's writer waits for its
            // readers the same way).
            if token && self.spin_for_readers() {
                if self.dequeue_self(me) {
                    // SAFETY: a fair unlock granted us a second unit (invariant 8).
                    unsafe { self.release(Mode::Shared) };
                }
                crit.end();
                break;
            }
            self.stats.bump(Stat::Block, 1);
            slept = true;
            me.report_wait_start(event);
            let held = self.sleep_bounded(me, &mut bound, &mut token, &mut late, &mut extra);
            me.report_wait_end();
            crit.end();
            if held {
                break;
            }
            // We ran: wakeups may happen again.
            // Mutant `adaptive_no_release_ok_reset` (models only): a woken waiter that never
            // re-enables wakeups.
            if !crate::mutant!("adaptive_no_release_ok_reset") {
                self.state.fetch_or(RELEASE_OK, Ordering::Relaxed);
            }
            match self.attempt(want, token) {
                Attempt::Acquired => break,
                Attempt::Overflow => {
                    me.repost(extra);
                    self.shared_overflow()
                }
                Attempt::MustWait => {}
            }
        }
        me.repost(extra);
        !slept
    }

    /// Sleeps on our queued record until a waker sets NOT_WAITING (returns `false`: compete
    /// again) or the lock is ours (`true`: a fair unlock granted it, or our own attempt after
    /// taking the handoff got it and we are off the list). When `bound` passes first, sets
    /// `late`, takes the handoff ([`HANDOFF`], invariant 7) if the rule allows, and sleeps on
    /// without a bound.
    pub(super) fn sleep_bounded(
        &self,
        me: &Proc,
        bound: &mut Option<u64>,
        token: &mut bool,
        late: &mut bool,
        extra: &mut u32,
    ) -> bool {
        // False once a waker is known to have chosen us (its post is coming).
        let mut bound_live = true;
        loop {
            let until = if *token || !bound_live { None } else { *bound };
            let posted = match until {
                None => {
                    me.sem.lock();
                    true
                }
                Some(t) => me.sem.lock_until(t),
            };
            if posted {
                // Acquire: pairs with the waker's Release store after unlinking us (invariant 5).
                if me.lw_waiting.load(Ordering::Acquire) == lw_waiting::NOT_WAITING {
                    return take_granted(me);
                }
                *extra += 1; // a post meant for another protocol
                continue;
            }
            *late = true;
            match self.take_handoff_at_bound(me) {
                Take::Taken => {
                    *token = true;
                    // The lock may be free with nobody left to release it: re-check, as after
                    // queueing.
                    if self.attempt(Want::Exclusive, true) == Attempt::Acquired {
                        let granted = self.dequeue_self(me);
                        debug_assert!(!granted, "an exclusive waiter granted twice");
                        return true;
                    }
                }
                // Another writer owns the bit or is queued ahead of us: sleep on untimed. Nobody
                // behind us can take the bit or move in front of us now, so the wake passes reach
                // us; woken, we re-queue at the front (`late`). (No timed retry loop on the
                // wait-list lock.)
                Take::Other => bound_live = false,
                Take::Detached => bound_live = false,
            }
        }
    }
}
