//! The one contended path of the drop-in policies' acquires, `acquire_contended(want,
//! deadline)`: every acquire that is not PostgreSQL's own (timed, recursive, upgradable, and
//! every acquire under [`Handoff`], [`TaskFair`] and the spinning policies). Beyond PostgreSQL;
//! the faithful loop is `lwlock_acquire.rs`, which [`Barging`]'s `acquire` keeps.
//!
//! One loop, one sleep, one handoff taker: spin (spinning policies), queue, re-check, sleep
//! until woken, the deadline or the writer's bound, compete again. What differs per policy is
//! its handoff rule (`handoff.rs`, `Rule`: none, at the bound, as it queues, or as it queues and
//! at the bound in queue order), and the rule is the policy's alone: a timed acquire is the
//! untimed one with a deadline, so `write`, `try_write_for`, recursive and upgradable acquires
//! under one policy obey one starvation rule. (Until the path was one, the spinning policies'
//! timed, recursive and upgradable acquires ran the [`Handoff`] policy's path: a timed writer
//! did not spin, did not take the bit behind readers as it queued, and took it at its bound
//! past an earlier queued writer.)
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

use super::handoff::Rule;
use super::handoff::Take;
#[allow(unused_imports)] // rustdoc links
use super::layout::HANDOFF;
use super::layout::RELEASE_OK;
use super::wait_list::take_granted;
use super::{AtomicLwLock, Attempt, Policy, Want};
#[allow(unused_imports)] // rustdoc links
use super::{Barging, Handoff, TaskFair};
use crate::elog::CritSection;
use crate::proc::{lw_mode, lw_waiting, Proc};
use crate::raw::Mode;
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

/// A writer's bound, across the sleeps of one contended acquire: when it passes (`at`), whether
/// we own the handoff (`token`) and whether the bound has passed in a sleep (`late`).
pub(super) struct Bound<'a> {
    at: &'a mut Option<u64>,
    token: &'a mut bool,
    late: &'a mut bool,
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
            Attempt::MustWait => self
                .acquire_contended(Want::Recursive, None)
                .unwrap_or(false),
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
            Attempt::MustWait => self.acquire_contended(want, Some(deadline)).is_some(),
        }
    }

    /// [`acquire_contended`](Self::acquire_contended) without a deadline, as `acquire` calls it:
    /// one argument and a `bool` back, so that the caller's inlined fast path stays as small as
    /// it was when the spinning policies' contended path was a call of that shape.
    #[cold]
    #[inline(never)]
    pub(super) fn acquire_contended_untimed(&self, want: Want) -> bool {
        self.acquire_contended(want, None)
            .expect("an acquire without deadline does not time out")
    }

    /// The contended path of every acquire but PostgreSQL's own: spin (the spinning policies),
    /// queue, re-check, sleep (until woken, `deadline`, or the writer's bound), compete again.
    /// The policy's [`Rule`] decides where a writer queues and when it takes [`HANDOFF`]; a
    /// timed acquire is the untimed one with a `deadline`, under the same rule. Returns
    /// `Some(fast)` once the lock is held (`fast`: without sleeping), `None` if the deadline
    /// passed first (then nothing is held and we are off the list).
    ///
    /// `LWLockAcquire`'s loop (`LWLockQueueSelf`, the second `LWLockAttemptLock`,
    /// `LWLockDequeueSelf`, the semaphore sleep, `RELEASE_OK` re-set by the woken thread), with,
    /// beyond PostgreSQL, a spin in front of each queueing (parking_lot's `SpinWait::reset` after
    /// a park: it returns at once while others are queued), the handoff, the deadline, and the
    /// handoff owner's spin while the readers inside drain.
    #[cold]
    #[inline(never)]
    pub(super) fn acquire_contended(&self, want: Want, deadline: Option<u64>) -> Option<bool> {
        // The first spin comes before any setup: a spin that wins needs no wait record and reads
        // no clock (a clock read per contended acquire costs about what a short section does).
        if P::SPIN && self.spin_acquire(want) {
            return Some(true);
        }
        let rule = Rule::of::<P>(want, deadline);
        let me = Proc::current();
        let wait_mode = match want {
            Want::Exclusive => lw_mode::EXCLUSIVE,
            Want::Upgradable => lw_mode::UPGRADABLE,
            Want::Shared | Want::Recursive => lw_mode::SHARED,
        };
        // The bound runs from the first queueing, across sleeps.
        let mut bound = (rule != Rule::None && want == Want::Exclusive)
            .then(|| sync::clock_nanos().saturating_add(P::BOUND_NANOS));
        let mut token = false;
        // Our bound has passed in a sleep ([`Rule::Ordered`]: woken, we re-queue at the front,
        // not the tail).
        let mut late = false;
        let mut slept = false;
        let mut extra = 0;
        let event = WaitEvent::lwlock(Tranche::from_id(self.tranche));
        // The first spin ran above.
        let mut spun = true;
        let outcome = loop {
            // The handoff owner never spins: it is first in line and the bit keeps others out.
            if P::SPIN && !token && !std::mem::take(&mut spun) && self.spin_acquire(want) {
                break Some(!slept);
            }
            let crit = CritSection::start("atomic LWLock: queued on the wait list");
            if want == Want::Exclusive && !token && rule.takes_on_queue() {
                token = self.queue_self_writer(me, late, rule);
            } else {
                self.queue_self_at(me, wait_mode, token);
            }
            let recheck = self.attempt(want, token);
            let Some(crit) = self.after_queued_recheck(me, recheck, crit, extra) else {
                break Some(!slept);
            };
            // The handoff owner behind readers (spinning policies): new readers are kept out, so
            // the ones inside drain soon; spin for that before sleeping (parking_lot's writer
            // waits for its readers the same way).
            if P::SPIN && token && self.spin_for_readers() {
                self.dequeue_self_returning_grant(me);
                crit.end();
                break Some(!slept);
            }
            self.stats.bump(Stat::Block, 1);
            let woke = self.sleep_contended(
                me,
                event,
                deadline,
                rule,
                Bound {
                    at: &mut bound,
                    token: &mut token,
                    late: &mut late,
                },
                &mut extra,
            );
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
                    // Mutant `adaptive_no_release_ok_reset` (models only): a woken waiter that
                    // never re-enables wakeups.
                    if matches!(woke, Woke::Woken)
                        && !crate::mutant!("adaptive_no_release_ok_reset")
                    {
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

    /// Sleeps on our queued record until woken (`Woken`), handed the lock (`Granted`), or
    /// `deadline` (`TimedOut`, `WokenLate`). When the writer's bound passes first, sets `late`
    /// and tries to take the handoff ([`HANDOFF`], invariant 7) as `rule` allows: taken, it
    /// re-checks (`Acquired` if it got the lock) and sleeps on without a bound; refused under
    /// [`Rule::Ordered`], it sleeps on without a bound until a wake pass picks it; refused
    /// otherwise (another owns the bit), it looks again later.
    pub(super) fn sleep_contended(
        &self,
        me: &Proc,
        event: WaitEvent,
        deadline: Option<u64>,
        rule: Rule,
        b: Bound<'_>,
        extra: &mut u32,
    ) -> Woke {
        me.report_wait_start(event);
        // False once a waker is known to have chosen us (its post is coming) or the rule keeps
        // us from the bit: the rest of this sleep needs no bound (the bound itself stays for the
        // next sleep).
        let mut bound_live = true;
        let woke = loop {
            let bound = if *b.token || !bound_live { None } else { *b.at };
            let until = match (deadline, bound) {
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
                // Acquire: pairs with the waker's Release store after unlinking us (invariant 5).
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
            let bound_fired = match (bound, deadline) {
                (Some(b), Some(d)) => b <= d,
                (Some(_), None) => true,
                _ => false,
            };
            if !bound_fired {
                // The deadline passed: unlink ourselves unless a waker already chose us.
                break self.time_out(me, extra);
            }
            *b.late = true;
            // Mutant `timed_writer_unordered` (models only): a timed writer takes the bit at its
            // bound without the ordering rule, past a writer queued ahead of it (what timed
            // acquires did under the spinning policies before the path was one). Refused, it
            // still sleeps on as the rule says.
            let take_rule = if rule == Rule::Ordered
                && deadline.is_some()
                && crate::mutant!("timed_writer_unordered")
            {
                Rule::AtBound
            } else {
                rule
            };
            match self.take_handoff_at_bound(me, take_rule) {
                Take::Taken => {
                    *b.token = true;
                    // The lock may be free with nobody left to release it: re-check, as after
                    // queueing.
                    if self.attempt(Want::Exclusive, true) == Attempt::Acquired {
                        let granted = self.dequeue_self(me);
                        debug_assert!(!granted, "an exclusive waiter granted twice");
                        break Woke::Acquired;
                    }
                }
                // The ordering rule: another writer owns the bit or is queued ahead of us; sleep
                // on untimed. Nobody behind us can take the bit or move in front of us now, so the
                // wake passes reach us; woken, we re-queue at the front (`late`). (No timed retry
                // loop on the wait-list lock.)
                Take::Other if rule == Rule::Ordered => bound_live = false,
                Take::Other => {
                    // Another writer owns it: look again later (not at once, which would spin
                    // on the wait-list lock under a zero bound).
                    let again = P::BOUND_NANOS.max(REARM_MIN_NANOS);
                    *b.at = Some(sync::clock_nanos().saturating_add(again));
                }
                Take::Detached => bound_live = false,
            }
        };
        me.report_wait_end();
        woke
    }

    /// At the deadline: `LWLockDequeueSelf` if we are still WAITING (then no waker chose us);
    /// otherwise a waker detached us and its post is coming: absorb it, re-enable wakeups.
    pub(super) fn time_out(&self, me: &Proc, extra: &mut u32) -> Woke {
        // Mutant `timeout_unconditional_dequeue` (models only): unlink ourselves without
        // asking whether a waker already did (and then leave its post behind).
        if self.unlink_self(me, crate::mutant!("timeout_unconditional_dequeue"), 0) {
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
}
