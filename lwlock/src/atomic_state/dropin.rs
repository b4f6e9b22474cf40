//! The drop-in capabilities of the atomic-state LWLock: a variant beyond PostgreSQL, whose
//! `lwlock.c` has none of them. Recursive reads, upgradable reads (upgrade, downgrade), timed
//! acquires, fair unlocks, and the slow path of the handoff policies ([`Handoff`], [`TaskFair`]).
//!
//! Everything here uses the bits `UPGRADABLE` and `HANDOFF`, the wait mode
//! `lw_mode::UPGRADABLE` and the record flag `lw_granted`, which PostgreSQL's own operations
//! (the parent module) never set; the parent's acquire and release paths therefore behave as
//! PostgreSQL's as long as only they are used. See the parent's layout table and invariants 6–8.
//!
//! * **Recursive read** (`lock_shared_recursive`): a shared unit that waits only for an
//!   exclusive *holder*. Sound because a thread that already holds a shared unit excludes every
//!   exclusive holder: the count is above zero, so the attempt succeeds at once, whatever queued
//!   writers, `HANDOFF` or an upgrader waiting for readers say; it never waits for a thread that
//!   waits for it. Under [`Barging`] every shared acquire already behaves so (newcomers barge);
//!   under [`Handoff`] a plain read queues behind the handoff owner, so a recursive read must
//!   bypass it, or a reader holding a unit would wait for a writer that waits for that unit.
//! * **Upgradable read**: `UPGRADABLE` plus one shared unit (invariant 6). Writers wait for the
//!   count, readers ignore the bit. Upgrading swaps the bit and the unit for `EXCLUSIVE` in one
//!   `fetch_sub`, which closes the lock to newcomers, then sleeps on the state word (an
//!   address-keyed futex) until the remaining readers leave; the shared release that brings the
//!   count to zero under `EXCLUSIVE` wakes it. Upgradable waiters queue in mode
//!   `lw_mode::UPGRADABLE` (PostgreSQL's wake pass treats them as shared waiters); the holder's
//!   release or downgrade wakes the first of them if the lock is not free.
//! * **Downgrade**: one `fetch_sub` (exclusive → one shared unit, or → upgradable), then the
//!   shared waiters it now admits are woken (not under an active handoff: they could not enter).
//! * **Timed acquire**: the same queue-then-recheck, sleeping with a deadline. At the deadline the
//!   waiter takes the wait-list lock: if it is still WAITING it unlinks itself (as
//!   `LWLockDequeueSelf`) and no waker can have chosen it; otherwise a waker did, and the waiter
//!   absorbs that waker's post, re-enables wakeups and makes one more attempt (or finds the lock
//!   handed over). Woken or dequeued, never both; a wakeup is never dropped.
//! * **Fair unlock**: under the wait-list lock, the releaser hands the lock to the waiters a
//!   release would wake (the head exclusive waiter alone, or every shared waiter and the first
//!   upgradable one) by adding their holds to the word in the same CAS that removes its own, and
//!   wakes them with `lw_granted` set: a newcomer cannot barge in between.
//! * **Handoff** (policies [`Handoff`], [`TaskFair`]): an exclusive waiter sleeps with a
//!   deadline at its bound (under [`TaskFair`], zero: it takes the handoff as it queues, in the
//!   RMW that sets `HAS_WAITERS`); when it passes, the waiter (still on the list) moves itself behind the leading
//!   WAIT_UNTIL_FREE run, sets `HANDOFF` and re-checks. Newcomers now fail their attempt and
//!   queue; the release that frees the lock wakes the owner even if `RELEASE_OK` is clear (the
//!   owner is the first non-WAIT_UNTIL_FREE entry, so PostgreSQL's wake pass picks it alone);
//!   the owner's attempt ignores the bit and clears it.

use super::layout::{
    HANDOFF, HAS_WAITERS, LOCKED, LOCK_MASK, RELEASE_OK, SHARED_MASK, UPGRADABLE, VAL_EXCLUSIVE,
    VAL_SHARED,
};
use super::{take_granted, AtomicLwLock, Attempt, Policy, Want};
#[allow(unused_imports)] // rustdoc links
use super::{Barging, Handoff, TaskFair};
use crate::elog::CritSection;
use crate::proc::{lw_mode, lw_waiting, Proc};
use crate::proclist::ProcList;
use crate::raw::{Mode, RawLwLock};
use crate::stats::Stat;
use crate::sync::{self, Ordering};
use crate::wait_event::{Tranche, WaitEvent};

/// `upgrade`'s `fetch_sub`: `UPGRADABLE` and one shared unit out, `EXCLUSIVE` in (`UPGRADABLE`
/// is bit 25, `EXCLUSIVE` bit 24: subtracting `2^24 + 1` from a word with bit 25 set, bit 24
/// clear and a count of at least one does exactly that).
const UPGRADE_DELTA: u32 = UPGRADABLE + VAL_SHARED - VAL_EXCLUSIVE;
/// `downgrade`'s `fetch_sub`: `EXCLUSIVE` out, one shared unit in.
const DOWNGRADE_DELTA: u32 = VAL_EXCLUSIVE - VAL_SHARED;

/// How soon a writer that found the handoff owned by another looks again.
const REARM_MIN_NANOS: u64 = 100_000;

/// How a timed or bounded sleep ended.
enum Woke {
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

/// What `take_handoff` found.
enum Take {
    Taken,
    /// Another waiter owns the handoff.
    Other,
    /// A waker already detached us: its post is coming.
    Detached,
}

/// Which waiters a pass wakes or hands the lock to, besides the leading WAIT_UNTIL_FREE run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pick {
    /// The first non-WAIT_UNTIL_FREE waiter, if it is exclusive (else the shared ones).
    Head,
    /// Every shared waiter, and the first upgradable one if `upgradable`.
    Shared { upgradable: bool },
    /// The first upgradable waiter.
    FirstUpgradable,
}

impl<P: Policy> AtomicLwLock<P> {
    // ---------------------------------------------------------------------------------------
    // The slow path of every acquire that is not PostgreSQL's own (timed, recursive,
    // upgradable, and every acquire under the bounded policy).
    // ---------------------------------------------------------------------------------------

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
    fn sleep_queued(
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
    fn time_out(&self, me: &Proc, extra: &mut u32) -> Woke {
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

    /// The bound passed: if we are still queued and nobody owns the handoff, move behind the
    /// leading WAIT_UNTIL_FREE run and set [`HANDOFF`] (invariant 7).
    fn take_handoff(&self, me: &Proc) -> Take {
        self.wait_list_lock();
        let take = if me.lw_waiting.load(Ordering::Relaxed) != lw_waiting::WAITING {
            Take::Detached
        } else if self.state.load(Ordering::Relaxed) & HANDOFF != 0 {
            Take::Other
        } else {
            // SAFETY: LOCKED is held.
            unsafe {
                self.with_waiters(|l| {
                    l.delete(me);
                    l.push_after_wait_until_free(me);
                })
            };
            // Relaxed, like HAS_WAITERS: only the word's modification order matters. A release
            // whose fetch_sub follows this RMW sees the bit and wakes us; one before it left the
            // lock as our re-check (next) finds it.
            self.state.fetch_or(HANDOFF, Ordering::Relaxed);
            Take::Taken
        };
        self.wait_list_unlock();
        take
    }

    /// `LWLockQueueSelf` for an exclusive waiter under a zero bound ([`TaskFair`]): if nobody
    /// owns the handoff, take it in the same critical section and the same RMW that sets
    /// `HAS_WAITERS` (so no reader sees the waiter without the bit), queued behind the leading
    /// WAIT_UNTIL_FREE run (invariant 7). Returns whether we own it.
    fn queue_self_taking_handoff(&self, me: &Proc) -> bool {
        assert_eq!(
            me.lw_waiting.load(Ordering::Relaxed),
            lw_waiting::NOT_WAITING,
            "queueing for an LWLock while already waiting"
        );
        self.wait_list_lock();
        let take = self.state.load(Ordering::Relaxed) & HANDOFF == 0;
        // Relaxed: as HAS_WAITERS in `queue_self`; only the word's modification order matters.
        self.state.fetch_or(
            HAS_WAITERS | if take { HANDOFF } else { 0 },
            Ordering::Relaxed,
        );
        me.lw_waiting.store(lw_waiting::WAITING, Ordering::Relaxed);
        me.lw_mode.store(lw_mode::EXCLUSIVE, Ordering::Relaxed);
        // SAFETY: LOCKED is held.
        unsafe {
            self.with_waiters(|l| {
                if take {
                    l.push_after_wait_until_free(me)
                } else {
                    l.push_tail(me)
                }
            })
        };
        self.wait_list_unlock();
        take
    }

    /// The handoff owner leaves without the lock (a timed wait): clear [`HANDOFF`] and wake the
    /// waiters it held back if nobody holds the lock (no release will come).
    fn give_up_handoff(&self) {
        // Mutant `give_up_keeps_handoff` (models only): leave without clearing the bit, so the
        // readers it holds back stay out for good.
        if crate::mutant!("give_up_keeps_handoff") {
            return;
        }
        // Relaxed: as the RMW that set the bit (`take_handoff`); it must be an RMW, since
        // releasers and queuers change the word concurrently.
        // Mutant `give_up_plain_store` (models only): clear the bit with a load and a store, which
        // can undo a concurrent release's fetch_sub (or a queuer's HAS_WAITERS).
        let old = if crate::mutant!("give_up_plain_store") {
            let old = self.state.load(Ordering::Relaxed);
            self.state.store(old & !HANDOFF, Ordering::Relaxed);
            old
        } else {
            self.state.fetch_and(!HANDOFF, Ordering::Relaxed)
        };
        // Mutant `give_up_no_wake` (models only): clear the bit but leave the waiters it held
        // back asleep (a release that saw the bit may already have passed them over).
        if old & (HAS_WAITERS | LOCK_MASK) == HAS_WAITERS && !crate::mutant!("give_up_no_wake") {
            self.wakeup();
        }
    }

    /// A release's rarer duties (see `release_wake`): wake an upgrader whose readers are gone,
    /// and, under [`Handoff`], wake the handoff owner when the lock became free, whatever
    /// `RELEASE_OK` says (a woken waiter that has not run yet would only fail on `HANDOFF`).
    #[cold]
    pub(super) fn release_ext(&self, new: u32) {
        if new & (VAL_EXCLUSIVE | SHARED_MASK) == VAL_EXCLUSIVE && new & UPGRADABLE == 0 {
            // Only a shared release can leave EXCLUSIVE in the word: the upgrader's readers are
            // gone. Mutant `upgrade_no_wake` (models only): forget to tell it.
            if !crate::mutant!("upgrade_no_wake") {
                sync::wake_all_word(&self.state);
            }
        }
        if P::HANDOFF && new & (HANDOFF | HAS_WAITERS | LOCK_MASK) == HANDOFF | HAS_WAITERS {
            self.wakeup();
        }
    }

    // ---------------------------------------------------------------------------------------
    // Waking without freeing: downgrades and upgradable releases.
    // ---------------------------------------------------------------------------------------

    /// Detaches the leading WAIT_UNTIL_FREE run (if `with_free`) and the waiters `pick` selects;
    /// returns them. Must run under LOCKED.
    fn detach(l: &mut ProcList, pick: Pick, with_free: bool) -> (ProcList, ProcList) {
        let mut free = ProcList::EMPTY;
        let mut chosen = ProcList::EMPTY;
        let mut cur = l.first();
        while let Some(w) = cur {
            if w.lw_mode.load(Ordering::Relaxed) != lw_mode::WAIT_UNTIL_FREE {
                break;
            }
            cur = ProcList::next_of(w);
            if with_free {
                l.delete(w);
                free.push_tail(w);
            }
        }
        let head_exclusive =
            cur.is_some_and(|w| w.lw_mode.load(Ordering::Relaxed) == lw_mode::EXCLUSIVE);
        let mut upgradable_taken = false;
        while let Some(w) = cur {
            cur = ProcList::next_of(w);
            let mode = w.lw_mode.load(Ordering::Relaxed);
            let take = match pick {
                Pick::Head if head_exclusive => {
                    // The head writer alone.
                    l.delete(w);
                    chosen.push_tail(w);
                    break;
                }
                Pick::Head => {
                    mode == lw_mode::SHARED || (mode == lw_mode::UPGRADABLE && !upgradable_taken)
                }
                Pick::Shared { upgradable } => {
                    mode == lw_mode::SHARED
                        || (upgradable && mode == lw_mode::UPGRADABLE && !upgradable_taken)
                }
                Pick::FirstUpgradable => mode == lw_mode::UPGRADABLE && !upgradable_taken,
            };
            if take {
                upgradable_taken |= mode == lw_mode::UPGRADABLE;
                l.delete(w);
                chosen.push_tail(w);
            }
        }
        for list in [&free, &chosen] {
            let mut c = list.first();
            while let Some(w) = c {
                w.lw_waiting
                    .store(lw_waiting::PENDING_WAKEUP, Ordering::Relaxed);
                c = ProcList::next_of(w);
            }
        }
        (free, chosen)
    }

    /// Releases LOCKED, clearing `HAS_WAITERS` if the list is now `empty` and setting
    /// `RELEASE_OK` if `release_ok` (one CAS, as `LWLockWakeup`).
    fn unlock_list_after_pass(&self, empty: bool, release_ok: bool) {
        let mut old = self.state.load(Ordering::Relaxed);
        loop {
            debug_assert!(old & LOCKED != 0);
            let mut new = old & !LOCKED;
            if release_ok {
                new |= RELEASE_OK;
            }
            if empty {
                new &= !HAS_WAITERS;
            }
            // Release: our list writes are visible to the next LOCKED holder.
            match self
                .state
                .compare_exchange_weak(old, new, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => break,
                Err(now) => old = now,
            }
        }
        sync::spin_released();
    }

    /// Wakes (to compete, not handed the lock) the waiters `pick` selects, if any is queued and
    /// no handoff holds them back.
    fn wake_picked(&self, pick: Pick) {
        if self.state.load(Ordering::Relaxed) & HAS_WAITERS == 0 {
            return;
        }
        self.wait_list_lock();
        if P::HANDOFF && self.state.load(Ordering::Relaxed) & HANDOFF != 0 {
            // They could not enter: the owner's acquire and release wake them.
            self.wait_list_unlock();
            return;
        }
        // SAFETY: LOCKED is held.
        let (mut chosen, empty) = unsafe {
            self.with_waiters(|l| {
                let (_, chosen) = Self::detach(l, pick, false);
                (chosen, l.is_empty())
            })
        };
        self.unlock_list_after_pass(empty, false);
        Self::wake_all(&mut chosen);
    }

    // ---------------------------------------------------------------------------------------
    // Public operations.
    // ---------------------------------------------------------------------------------------

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
    fn acquire_want_until(&self, want: Want, deadline: u64) -> bool {
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

    /// Takes an upgradable read: [`UPGRADABLE`] plus one shared unit (invariant 6). Excludes
    /// writers and other upgradable holders, not readers. Returns `true` if it did not sleep.
    pub fn acquire_upgradable(&self) -> bool {
        self.stats.bump(Stat::ShAcquire, 1);
        match self.attempt(Want::Upgradable, false) {
            Attempt::Acquired => true,
            Attempt::Overflow => self.shared_overflow(),
            Attempt::MustWait => self.acquire_ext(Want::Upgradable, None).unwrap_or(false),
        }
    }

    /// An upgradable read if one is possible right now; never sleeps.
    pub fn conditional_acquire_upgradable(&self) -> bool {
        match self.attempt(Want::Upgradable, false) {
            Attempt::Acquired => true,
            Attempt::Overflow => self.shared_overflow(),
            Attempt::MustWait => false,
        }
    }

    /// An upgradable read, waiting at most until `deadline` (as
    /// [`acquire_until`](Self::acquire_until)).
    pub fn acquire_upgradable_until(&self, deadline: u64) -> bool {
        self.acquire_want_until(Want::Upgradable, deadline)
    }

    /// Releases an upgradable read; wakes the first upgradable waiter if readers remain (the
    /// lock is not free, so no ordinary wakeup runs).
    ///
    /// # Safety
    /// The caller holds an upgradable read.
    pub unsafe fn release_upgradable(&self) {
        // Release: the section happens-before the next acquire that sees this value.
        let old = self
            .state
            .fetch_sub(VAL_SHARED | UPGRADABLE, Ordering::Release);
        debug_assert!(old & UPGRADABLE != 0 && old & SHARED_MASK != 0);
        let new = old - (VAL_SHARED | UPGRADABLE);
        if new & (HAS_WAITERS | VAL_EXCLUSIVE | HANDOFF) != 0 {
            self.release_wake(new);
        }
        if new & (HAS_WAITERS | LOCK_MASK) > HAS_WAITERS {
            self.wake_picked(Pick::FirstUpgradable);
        }
    }

    /// Upgradable → exclusive: closes the lock to newcomers at once, then waits for the readers
    /// to leave. Returns `true` if it did not sleep.
    ///
    /// # Safety
    /// The caller holds an upgradable read.
    pub unsafe fn upgrade(&self) -> bool {
        // Acquire: if the readers are already gone, their Release fetch_subs precede this RMW
        // in the word's modification order and their sections happen-before ours.
        let old = self.state.fetch_sub(UPGRADE_DELTA, Ordering::Acquire);
        debug_assert!(old & UPGRADABLE != 0 && old & (VAL_EXCLUSIVE | SHARED_MASK) != 0);
        let mut s = old - UPGRADE_DELTA;
        // Mutant `upgrade_no_wait` (models only): write while the readers still read.
        if s & SHARED_MASK == 0 || crate::mutant!("upgrade_no_wait") {
            return true;
        }
        let me = Proc::current();
        me.report_wait_start(WaitEvent::lwlock(Tranche::from_id(self.tranche)));
        while s & SHARED_MASK != 0 {
            sync::wait_word(&self.state, s);
            // Acquire: pairs with the readers' Release fetch_subs (the last one's value heads a
            // release sequence through every earlier reader's RMW). Not the futex: a wait that
            // returns because the word changed orders nothing (FUTEX_WAIT's compare is a plain
            // load), and a wake orders only what its waker did. Mutant
            // `upgrade_reload_relaxed` (models only): the reload weakened to Relaxed.
            let reload = if crate::mutant!("upgrade_reload_relaxed") {
                Ordering::Relaxed
            } else {
                Ordering::Acquire
            };
            s = self.state.load(reload);
        }
        me.report_wait_end();
        false
    }

    /// Upgradable → exclusive only if no reader is left; never sleeps.
    ///
    /// # Safety
    /// The caller holds an upgradable read.
    pub unsafe fn conditional_upgrade(&self) -> bool {
        let mut old = self.state.load(Ordering::Relaxed);
        while old & SHARED_MASK == 1 {
            debug_assert!(old & UPGRADABLE != 0);
            // Acquire: as in `upgrade`.
            match self.state.compare_exchange_weak(
                old,
                old - UPGRADE_DELTA,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => old = now,
            }
        }
        false
    }

    /// [`upgrade`](Self::upgrade), waiting for the readers at most until `deadline`. On
    /// timeout the caller still holds its upgradable read, and the readers that queued behind
    /// the attempt are woken.
    ///
    /// # Safety
    /// The caller holds an upgradable read.
    pub unsafe fn upgrade_until(&self, deadline: u64) -> bool {
        let old = self.state.fetch_sub(UPGRADE_DELTA, Ordering::Acquire);
        let mut s = old - UPGRADE_DELTA;
        loop {
            if s & SHARED_MASK == 0 {
                // The fetch_sub and the loads below are Acquire, as in `upgrade`.
                return true;
            }
            if sync::wait_word_until(&self.state, s, deadline) {
                break;
            }
            // Acquire, as in `upgrade` (the timed wait orders nothing either). Mutant
            // `upgrade_until_reload_relaxed` (models only): weakened to Relaxed.
            let reload = if crate::mutant!("upgrade_until_reload_relaxed") {
                Ordering::Relaxed
            } else {
                Ordering::Acquire
            };
            s = self.state.load(reload);
        }
        // Back to upgradable, unless the readers left meanwhile.
        let mut s = self.state.load(Ordering::Acquire);
        loop {
            if s & SHARED_MASK == 0 {
                return true;
            }
            match self.state.compare_exchange_weak(
                s,
                s + UPGRADE_DELTA,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        self.wake_picked(Pick::Shared { upgradable: false });
        false
    }

    /// Exclusive → shared in one step; wakes the shared (and upgradable) waiters it now admits.
    ///
    /// # Safety
    /// The caller holds the lock exclusively.
    pub unsafe fn downgrade(&self) {
        // Release: readers that enter now see our exclusive section.
        let old = self.state.fetch_sub(DOWNGRADE_DELTA, Ordering::Release);
        debug_assert!(old & VAL_EXCLUSIVE != 0 && old & SHARED_MASK == 0);
        // Mutant `downgrade_no_wake` (models only): leave the admitted readers asleep.
        if old & HAS_WAITERS != 0 && !crate::mutant!("downgrade_no_wake") {
            self.wake_picked(Pick::Shared { upgradable: true });
        }
    }

    /// Exclusive → upgradable in one step; wakes the shared waiters it now admits.
    ///
    /// # Safety
    /// The caller holds the lock exclusively.
    pub unsafe fn downgrade_to_upgradable(&self) {
        // The inverse of `upgrade`'s step: EXCLUSIVE out, a unit and UPGRADABLE in.
        // Release: readers that enter now see our exclusive section.
        let old = self.state.fetch_add(UPGRADE_DELTA, Ordering::Release);
        debug_assert!(old & VAL_EXCLUSIVE != 0 && old & SHARED_MASK == 0);
        if old & HAS_WAITERS != 0 {
            self.wake_picked(Pick::Shared { upgradable: false });
        }
    }

    /// Upgradable → shared in one step; wakes the first upgradable waiter.
    ///
    /// # Safety
    /// The caller holds an upgradable read.
    pub unsafe fn downgrade_upgradable(&self) {
        let old = self.state.fetch_sub(UPGRADABLE, Ordering::Release);
        debug_assert!(old & UPGRADABLE != 0);
        if old & HAS_WAITERS != 0 {
            self.wake_picked(Pick::FirstUpgradable);
        }
    }

    /// A fair release (lock_api's `unlock_*_fair`; the drop-in mutex's `RawMutexFair` can use it with
    /// [`Mode::Exclusive`]): if this release frees the lock and someone waits, the lock is
    /// handed to the waiters a release would wake (the head exclusive waiter alone, or every
    /// shared waiter and the first upgradable one) in the same CAS, so no newcomer barges in.
    ///
    /// # Safety
    /// The caller holds the lock in `mode`.
    pub unsafe fn release_fair(&self, mode: Mode) {
        let delta = match mode {
            Mode::Exclusive => VAL_EXCLUSIVE,
            Mode::Shared => VAL_SHARED,
        };
        // SAFETY: the caller holds the lock in `mode`.
        unsafe { self.release_fair_delta(delta, mode) }
    }

    /// A fair release of an upgradable read.
    ///
    /// # Safety
    /// The caller holds an upgradable read.
    pub unsafe fn release_upgradable_fair(&self) {
        // SAFETY: the caller holds an upgradable read.
        unsafe { self.release_fair_delta(VAL_SHARED | UPGRADABLE, Mode::Shared) }
    }

    /// # Safety
    /// The caller holds what `delta` removes.
    unsafe fn release_fair_delta(&self, delta: u32, mode: Mode) {
        let upgradable = delta & UPGRADABLE != 0;
        // Mutant `fair_unlock_not_fair` (models only): an ordinary release even with waiters
        // queued, so a newcomer can take the lock before the woken waiter runs.
        if self.state.load(Ordering::Relaxed) & HAS_WAITERS == 0
            || crate::mutant!("fair_unlock_not_fair")
        {
            // Nobody to hand it to: an ordinary release (which wakes anyone who queued since).
            if upgradable {
                // SAFETY: the caller holds an upgradable read.
                unsafe { self.release_upgradable() }
            } else {
                // SAFETY: the caller holds the lock in `mode`.
                unsafe { self.release(mode) }
            }
            return;
        }
        self.wait_list_lock();
        // With LOCKED held the list is stable, so which waiters a free lock goes to is fixed;
        // the word may still change (other holders leave, readers arrive), so decide per CAS.
        // SAFETY: LOCKED is held.
        let plan = unsafe { self.with_waiters(|l| Self::grant_plan(l)) };
        // Mutant `fair_grant_shared_short` (models only): one shared hold fewer in the word
        // than shared grantees woken.
        let add = if crate::mutant!("fair_grant_shared_short") && plan.add & SHARED_MASK != 0 {
            plan.add - VAL_SHARED
        } else {
            plan.add
        };
        // AcqRel: Release publishes our section to a newcomer whose Acquire CAS reads the word
        // with the grant in it (a reader joining shared grantees; the grantees themselves are
        // ordered by the Release store of NOT_WAITING below); Acquire takes in the sections of
        // holders that left before us (their Release `fetch_sub`s precede this CAS), which an
        // exclusive grantee must see too and reaches only through us. Mutants
        // `fair_cas_acquire_only`, `fair_cas_release_only` (models only): either half dropped.
        let order = match (
            crate::mutant!("fair_cas_acquire_only"),
            crate::mutant!("fair_cas_release_only"),
        ) {
            (true, _) => Ordering::Acquire,
            (_, true) => Ordering::Release,
            _ => Ordering::AcqRel,
        };
        let mut old = self.state.load(Ordering::Relaxed);
        let (granted, new) = loop {
            let after = old - delta;
            let grant = after & LOCK_MASK == 0 && plan.add != 0;
            let mut new = after;
            if grant {
                new += add;
                // Nobody granted competes, so none re-enables wakeups.
                new |= RELEASE_OK;
                // Mutant `fair_grant_keeps_handoff` (models only): the granted head writer
                // leaves its HANDOFF behind.
                if plan.add == VAL_EXCLUSIVE && !crate::mutant!("fair_grant_keeps_handoff") {
                    new &= !HANDOFF; // the head writer is the owner (invariant 7)
                }
            }
            match self
                .state
                .compare_exchange_weak(old, new, order, Ordering::Relaxed)
            {
                Ok(_) => break (grant, new),
                Err(now) => old = now,
            }
        };
        if !granted {
            self.wait_list_unlock();
            // An ordinary release happened: do what it does afterwards.
            if new & (HAS_WAITERS | VAL_EXCLUSIVE | HANDOFF) != 0 {
                self.release_wake(new);
            }
            if upgradable && new & (HAS_WAITERS | LOCK_MASK) > HAS_WAITERS {
                self.wake_picked(Pick::FirstUpgradable);
            }
            return;
        }
        // SAFETY: LOCKED is held.
        let (mut free, mut chosen, empty) = unsafe {
            self.with_waiters(|l| {
                let (free, chosen) = Self::detach(l, Pick::Head, true);
                (free, chosen, l.is_empty())
            })
        };
        self.unlock_list_after_pass(empty, true);
        Self::wake_all(&mut free);
        // The granted records: `lw_granted` before the Release store of NOT_WAITING.
        let crit = CritSection::start("atomic LWLock: handing the lock to detached waiters");
        // (A grantee that wakes on a foreign post and sees NOT_WAITING must see the flag too:
        // with the two stores the other way round it would compete for the lock it holds.)
        while let Some(w) = chosen.pop_head() {
            // Mutant `fair_granted_after_wakeup` (models only): NOT_WAITING, then the flag.
            if crate::mutant!("fair_granted_after_wakeup") {
                w.lw_waiting
                    .store(lw_waiting::NOT_WAITING, Ordering::Release);
                w.lw_granted.store(true, Ordering::Relaxed);
            } else {
                w.lw_granted.store(true, Ordering::Relaxed);
                w.lw_waiting
                    .store(lw_waiting::NOT_WAITING, Ordering::Release);
            }
            w.sem.unlock();
        }
        crit.end();
    }

    /// What a free lock would be handed to: the word's addend for the detach that `Pick::Head`
    /// does on the same list.
    fn grant_plan(l: &ProcList) -> GrantPlan {
        let mut cur = l.first();
        while let Some(w) = cur {
            if w.lw_mode.load(Ordering::Relaxed) != lw_mode::WAIT_UNTIL_FREE {
                break;
            }
            cur = ProcList::next_of(w);
        }
        match cur {
            None => GrantPlan { add: 0 },
            Some(w) if w.lw_mode.load(Ordering::Relaxed) == lw_mode::EXCLUSIVE => {
                GrantPlan { add: VAL_EXCLUSIVE }
            }
            Some(_) => {
                let mut add = 0;
                let mut upgradable_taken = false;
                while let Some(w) = cur {
                    match w.lw_mode.load(Ordering::Relaxed) {
                        lw_mode::SHARED => add += VAL_SHARED,
                        lw_mode::UPGRADABLE if !upgradable_taken => {
                            upgradable_taken = true;
                            // Mutant `fair_grant_no_upgradable_bit` (models only): the
                            // upgradable grantee gets its unit but not UPGRADABLE.
                            add += if crate::mutant!("fair_grant_no_upgradable_bit") {
                                VAL_SHARED
                            } else {
                                VAL_SHARED | UPGRADABLE
                            };
                        }
                        _ => {}
                    }
                    cur = ProcList::next_of(w);
                }
                GrantPlan { add }
            }
        }
    }

    /// lock_api's `bump_*`: if someone waits, a fair release and a new acquire in `mode`.
    ///
    /// # Safety
    /// The caller holds the lock in `mode`.
    pub unsafe fn bump(&self, mode: Mode) {
        if self.state.load(Ordering::Relaxed) & HAS_WAITERS != 0 {
            // Mutant `bump_not_fair` (models only): an ordinary release, so the bumping
            // thread may take the lock back before the waiter it woke runs.
            if crate::mutant!("bump_not_fair") {
                // SAFETY: the caller holds the lock in `mode`.
                unsafe { self.release(mode) };
            } else {
                // SAFETY: the caller holds the lock in `mode`.
                unsafe { self.release_fair(mode) };
            }
            self.acquire(mode);
        }
    }

    /// lock_api's `bump_upgradable`.
    ///
    /// # Safety
    /// The caller holds an upgradable read.
    pub unsafe fn bump_upgradable(&self) {
        if self.state.load(Ordering::Relaxed) & HAS_WAITERS != 0 {
            // SAFETY: the caller holds an upgradable read.
            unsafe { self.release_upgradable_fair() };
            self.acquire_upgradable();
        }
    }
}

/// The hold a fair release adds to the word for its grantees.
struct GrantPlan {
    add: u32,
}

// ---------------------------------------------------------------------------------------------
// lock_api's capability traits (not under loom: lock_api's `INIT` needs a `const fn`).
// ---------------------------------------------------------------------------------------------

#[cfg(not(loom))]
mod lock_api_impls {
    use super::*;
    use lock_api::{
        RawRwLockDowngrade, RawRwLockFair, RawRwLockRecursive, RawRwLockRecursiveTimed,
        RawRwLockTimed, RawRwLockUpgrade, RawRwLockUpgradeDowngrade, RawRwLockUpgradeFair,
        RawRwLockUpgradeTimed,
    };
    use std::time::{Duration, Instant};

    // SAFETY (all impls below): each forwards to the inherent operation of the same meaning,
    // whose exclusion and ordering arguments are in this module's and the parent's docs
    // (invariants 1, 6–8): recursive and upgradable holds are shared units, an upgrade or
    // downgrade is one RMW on the word, a timed acquire that returns false holds nothing, a
    // fair release hands the lock over with AcqRel.

    // SAFETY: see above.
    unsafe impl<P: Policy> RawRwLockRecursive for AtomicLwLock<P> {
        #[inline]
        fn lock_shared_recursive(&self) {
            self.acquire_shared_recursive();
        }
        #[inline]
        fn try_lock_shared_recursive(&self) -> bool {
            match self.attempt(Want::Recursive, false) {
                Attempt::Acquired => true,
                Attempt::Overflow => self.shared_overflow(),
                Attempt::MustWait => false,
            }
        }
    }

    // SAFETY: see above.
    unsafe impl<P: Policy> RawRwLockDowngrade for AtomicLwLock<P> {
        #[inline]
        unsafe fn downgrade(&self) {
            // SAFETY: lock_api's contract: held exclusively.
            unsafe { AtomicLwLock::downgrade(self) }
        }
    }

    // SAFETY: see above.
    unsafe impl<P: Policy> RawRwLockUpgrade for AtomicLwLock<P> {
        #[inline]
        fn lock_upgradable(&self) {
            self.acquire_upgradable();
        }
        #[inline]
        fn try_lock_upgradable(&self) -> bool {
            self.conditional_acquire_upgradable()
        }
        #[inline]
        unsafe fn unlock_upgradable(&self) {
            // SAFETY: lock_api's contract: held upgradable.
            unsafe { self.release_upgradable() }
        }
        #[inline]
        unsafe fn upgrade(&self) {
            // SAFETY: lock_api's contract: held upgradable.
            unsafe { AtomicLwLock::upgrade(self) };
        }
        #[inline]
        unsafe fn try_upgrade(&self) -> bool {
            // SAFETY: lock_api's contract: held upgradable.
            unsafe { self.conditional_upgrade() }
        }
    }

    // SAFETY: see above.
    unsafe impl<P: Policy> RawRwLockUpgradeDowngrade for AtomicLwLock<P> {
        #[inline]
        unsafe fn downgrade_upgradable(&self) {
            // SAFETY: lock_api's contract: held upgradable.
            unsafe { AtomicLwLock::downgrade_upgradable(self) }
        }
        #[inline]
        unsafe fn downgrade_to_upgradable(&self) {
            // SAFETY: lock_api's contract: held exclusively.
            unsafe { AtomicLwLock::downgrade_to_upgradable(self) }
        }
    }

    // SAFETY: see above.
    unsafe impl<P: Policy> RawRwLockTimed for AtomicLwLock<P> {
        type Duration = Duration;
        type Instant = Instant;
        fn try_lock_shared_for(&self, timeout: Duration) -> bool {
            self.acquire_until(Mode::Shared, sync::deadline_after(timeout))
        }
        fn try_lock_shared_until(&self, timeout: Instant) -> bool {
            self.acquire_until(Mode::Shared, sync::deadline_at(timeout))
        }
        fn try_lock_exclusive_for(&self, timeout: Duration) -> bool {
            self.acquire_until(Mode::Exclusive, sync::deadline_after(timeout))
        }
        fn try_lock_exclusive_until(&self, timeout: Instant) -> bool {
            self.acquire_until(Mode::Exclusive, sync::deadline_at(timeout))
        }
    }

    // SAFETY: see above.
    unsafe impl<P: Policy> RawRwLockRecursiveTimed for AtomicLwLock<P> {
        fn try_lock_shared_recursive_for(&self, timeout: Duration) -> bool {
            self.acquire_want_until(Want::Recursive, sync::deadline_after(timeout))
        }
        fn try_lock_shared_recursive_until(&self, timeout: Instant) -> bool {
            self.acquire_want_until(Want::Recursive, sync::deadline_at(timeout))
        }
    }

    // SAFETY: see above.
    unsafe impl<P: Policy> RawRwLockUpgradeTimed for AtomicLwLock<P> {
        fn try_lock_upgradable_for(&self, timeout: Duration) -> bool {
            self.acquire_upgradable_until(sync::deadline_after(timeout))
        }
        fn try_lock_upgradable_until(&self, timeout: Instant) -> bool {
            self.acquire_upgradable_until(sync::deadline_at(timeout))
        }
        unsafe fn try_upgrade_for(&self, timeout: Duration) -> bool {
            // SAFETY: lock_api's contract: held upgradable.
            unsafe { self.upgrade_until(sync::deadline_after(timeout)) }
        }
        unsafe fn try_upgrade_until(&self, timeout: Instant) -> bool {
            // SAFETY: lock_api's contract: held upgradable.
            unsafe { self.upgrade_until(sync::deadline_at(timeout)) }
        }
    }

    // SAFETY: see above.
    unsafe impl<P: Policy> RawRwLockFair for AtomicLwLock<P> {
        unsafe fn unlock_shared_fair(&self) {
            // SAFETY: lock_api's contract: held shared.
            unsafe { self.release_fair(Mode::Shared) }
        }
        unsafe fn unlock_exclusive_fair(&self) {
            // SAFETY: lock_api's contract: held exclusively.
            unsafe { self.release_fair(Mode::Exclusive) }
        }
        unsafe fn bump_shared(&self) {
            // SAFETY: lock_api's contract: held shared.
            unsafe { self.bump(Mode::Shared) }
        }
        unsafe fn bump_exclusive(&self) {
            // SAFETY: lock_api's contract: held exclusively.
            unsafe { self.bump(Mode::Exclusive) }
        }
    }

    // SAFETY: see above.
    unsafe impl<P: Policy> RawRwLockUpgradeFair for AtomicLwLock<P> {
        unsafe fn unlock_upgradable_fair(&self) {
            // SAFETY: lock_api's contract: held upgradable.
            unsafe { self.release_upgradable_fair() }
        }
        unsafe fn bump_upgradable(&self) {
            // SAFETY: lock_api's contract: held upgradable.
            unsafe { AtomicLwLock::bump_upgradable(self) }
        }
    }
}
