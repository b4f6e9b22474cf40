//! The handoff bit's owner (invariant 7; policies [`Handoff`], [`TaskFair`], [`Adaptive`]):
//! who takes [`HANDOFF`] and where it queues (behind the leading WAIT_UNTIL_FREE run), at the
//! bound, as it queues, or never, and how a timed owner gives it up. Beyond PostgreSQL.
//!
//! Everything here uses the bits `UPGRADABLE` and `HANDOFF`, the wait mode
//! `lw_mode::UPGRADABLE` or the record flag `lw_granted`, which PostgreSQL's own operations
//! (`lwlock_acquire.rs`) never set; those behave as PostgreSQL's as long as only they are
//! used. See the layout's table and invariants 6–8.
//!
//! * **Handoff** (policies [`Handoff`], [`TaskFair`]): an exclusive waiter sleeps with a
//!   deadline at its bound (under [`TaskFair`], zero: it takes the handoff as it queues, in the
//!   RMW that sets `HAS_WAITERS`); when it passes, the waiter (still on the list) moves itself behind the leading
//!   WAIT_UNTIL_FREE run, sets `HANDOFF` and re-checks. Newcomers now fail their attempt and
//!   queue; the release that frees the lock wakes the owner even if `RELEASE_OK` is clear (the
//!   owner is the first non-WAIT_UNTIL_FREE entry, so PostgreSQL's wake pass picks it alone);
//!   the owner's attempt ignores the bit and clears it.

use super::layout::{HANDOFF, HAS_WAITERS, LOCK_MASK, SHARED_MASK, VAL_EXCLUSIVE};
#[allow(unused_imports)] // rustdoc links
use super::{Adaptive, Handoff, TaskFair};
use super::{AtomicLwLock, Policy};
use crate::proc::{lw_mode, lw_waiting, Proc};
use crate::proclist::ProcList;
use crate::sync::Ordering;

/// What a try to take the handoff found (`take_handoff`, `take_handoff_at_bound`).
pub(super) enum Take {
    /// We own [`HANDOFF`] now.
    Taken,
    /// Another waiter owns the handoff; or, at the spinning policies' bound, an exclusive waiter
    /// is queued ahead of us (the rule in `adaptive_spin.rs`'s docs).
    Other,
    /// A waker already detached us: its post is coming.
    Detached,
}

impl<P: Policy> AtomicLwLock<P> {
    /// The bound passed: if we are still queued and nobody owns the handoff, move behind the
    /// leading WAIT_UNTIL_FREE run and set [`HANDOFF`] (invariant 7).
    pub(super) fn take_handoff(&self, me: &Proc) -> Take {
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
    pub(super) fn queue_self_taking_handoff(&self, me: &Proc) -> bool {
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
    pub(super) fn give_up_handoff(&self) {
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

    /// `LWLockQueueSelf` for a writer. `late`: our bound has passed and we were woken (the
    /// first waiter of a wake pass): take [`HANDOFF`] and queue behind the leading
    /// WAIT_UNTIL_FREE run if nobody owns the bit, else queue right behind its owner (the first
    /// waiter past that run). Otherwise, if the lock is held shared only,
    /// nobody owns the handoff and no exclusive waiter is queued (the rule in the module docs),
    /// take the bit and the front the same way (what the [`TaskFair`] writer
    /// does whatever holds the lock); else queue at the tail. The bit is set in the same RMW that
    /// sets `HAS_WAITERS` (invariant 7). Returns whether we own the handoff.
    pub(super) fn queue_self_writer(&self, me: &Proc, late: bool) -> bool {
        assert_eq!(
            me.lw_waiting.load(Ordering::Relaxed),
            lw_waiting::NOT_WAITING,
            "queueing for an LWLock while already waiting"
        );
        self.wait_list_lock();
        let s = self.state.load(Ordering::Relaxed);
        let take = s & HANDOFF == 0
            && (late
                || (s & VAL_EXCLUSIVE == 0
                    && s & SHARED_MASK != 0
                    // SAFETY: LOCKED is held.
                    && !unsafe { self.with_waiters(|l| exclusive_ahead(l, None)) }));
        // Relaxed: as HAS_WAITERS in `queue_self`; only the word's modification order matters
        // (a release whose fetch_sub follows this RMW sees both bits and wakes; one before it
        // left the lock as our re-check finds it).
        // Mutant `adaptive_handoff_without_waiters_bit` (models only): the handoff taken in an
        // RMW that does not set HAS_WAITERS, so the readers' release does not wake us.
        let bits = if crate::mutant!("adaptive_handoff_without_waiters_bit") && take {
            HANDOFF
        } else {
            HAS_WAITERS | if take { HANDOFF } else { 0 }
        };
        self.state.fetch_or(bits, Ordering::Relaxed);
        me.lw_waiting.store(lw_waiting::WAITING, Ordering::Relaxed);
        me.lw_mode.store(lw_mode::EXCLUSIVE, Ordering::Relaxed);
        // SAFETY: LOCKED is held.
        unsafe {
            self.with_waiters(|l| {
                if take {
                    l.push_after_wait_until_free(me)
                } else if late {
                    // The bit is another's: its owner is the first waiter past the run (nobody
                    // is put in front of it), or off the list and re-queueing at the front.
                    push_behind_first_waiter(l, me)
                } else {
                    l.push_tail(me)
                }
            })
        };
        self.wait_list_unlock();
        take
    }

    /// The bound passed: if we are still queued, nobody owns the handoff and no exclusive waiter
    /// is queued ahead of us (the rule in the module docs), move behind the leading
    /// WAIT_UNTIL_FREE run and set [`HANDOFF`] (invariant 7; the [`Handoff`]
    /// policy's timed step plus the rule).
    pub(super) fn take_handoff_at_bound(&self, me: &Proc) -> Take {
        self.wait_list_lock();
        let found = if me.lw_waiting.load(Ordering::Relaxed) != lw_waiting::WAITING {
            Take::Detached
        } else if self.state.load(Ordering::Relaxed) & HANDOFF != 0
            // Mutant `adaptive_handoff_past_writer` (models only): take the bit and the front
            // past an exclusive waiter queued ahead of us (a writer whose bound passed later
            // overtakes one queued earlier, without limit).
            || (!crate::mutant!("adaptive_handoff_past_writer")
                // SAFETY: LOCKED is held.
                && unsafe { self.with_waiters(|l| exclusive_ahead(l, Some(me))) })
        {
            Take::Other
        } else {
            // Mutant `adaptive_handoff_in_place` (models only): set the bit without moving to
            // the front, so a release's wake pass may pick waiters the bit keeps out, not us.
            if !crate::mutant!("adaptive_handoff_in_place") {
                // SAFETY: LOCKED is held.
                unsafe {
                    self.with_waiters(|l| {
                        l.delete(me);
                        l.push_after_wait_until_free(me);
                    })
                };
            }
            // Relaxed, like HAS_WAITERS: only the word's modification order matters. A release
            // whose fetch_sub follows this RMW sees the bit and wakes us; one before it left the
            // lock as our re-check (next) finds it.
            self.state.fetch_or(HANDOFF, Ordering::Relaxed);
            Take::Taken
        };
        self.wait_list_unlock();
        found
    }
}

/// Puts `me` behind the first waiter of `l` that is not WAIT_UNTIL_FREE (and the WAIT_UNTIL_FREE
/// entries around it); at the tail if there is none. Called under LOCKED.
pub(super) fn push_behind_first_waiter(l: &mut ProcList, me: &Proc) {
    let mut run = ProcList::EMPTY;
    let mut passed_one = false;
    while let Some(w) = l.first() {
        if w.lw_mode.load(Ordering::Relaxed) != lw_mode::WAIT_UNTIL_FREE {
            if passed_one {
                break;
            }
            passed_one = true;
        }
        l.delete(w);
        run.push_head(w); // reversed
    }
    l.push_head(me);
    while let Some(w) = run.pop_head() {
        l.push_head(w); // reversed again: the original order
    }
}

/// Whether an exclusive waiter is queued in `l` ahead of `me` (anywhere, for `None`). Called
/// under LOCKED (the list's lock).
pub(super) fn exclusive_ahead(l: &ProcList, me: Option<&Proc>) -> bool {
    let mut cur = l.first();
    while let Some(w) = cur {
        if me.is_some_and(|m| std::ptr::eq(m, w)) {
            return false;
        }
        if w.lw_mode.load(Ordering::Relaxed) == lw_mode::EXCLUSIVE {
            return true;
        }
        cur = ProcList::next_of(w);
    }
    false
}
