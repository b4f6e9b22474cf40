//! The wait list: `LWLockWaitListLock`/`LWLockWaitListUnlock` (the `LOCKED` bit, invariant 2),
//! `LWLockQueueSelf`, `LWLockDequeueSelf`, and the sleep on a queued record until a waker
//! sets it NOT_WAITING (invariant 5).

#[allow(unused_imports)] // rustdoc links
use super::layout::HANDOFF;
use super::layout::{HAS_WAITERS, LOCKED, RELEASE_OK};
use super::Attempt;
#[allow(unused_imports)] // rustdoc links
use super::Barging;
use super::{AtomicLwLock, Policy};
use crate::elog::CritSection;
use crate::proc::{lw_mode, lw_waiting, Proc};
use crate::proclist::ProcList;
use crate::raw::{Mode, RawLwLock};

use crate::s_lock::{SpinDelay, SpinDelayConfig};
use crate::stats::Stat;
use crate::sync::{instructions, Ordering};
use crate::wait_event::{Tranche, WaitEvent};

impl<P: Policy> AtomicLwLock<P> {
    /// `LWLockWaitListLock`: sets `LOCKED`, spinning with backoff while someone else holds it.
    #[inline]
    pub(super) fn wait_list_lock(&self) {
        // Acquire: the wait list written by the previous holder is visible (invariant 2).
        if self.state.fetch_or(LOCKED, Ordering::Acquire) & LOCKED == 0 {
            return;
        }
        self.wait_list_lock_slow();
    }

    #[cold]
    pub(super) fn wait_list_lock_slow(&self) {
        instructions(20); // coarse: the call and `init_local_spin_delay`
        loop {
            let mut delay =
                SpinDelay::new(Tranche::from_id(self.tranche), &SpinDelayConfig::POSTGRES);
            // Read-only spinning until the bit looks clear.
            while self.state.load(Ordering::Relaxed) & LOCKED != 0 {
                instructions(5); // per failed probe, besides its PAUSE (as `s_lock`'s)
                delay.perform();
            }
            self.stats.bump(Stat::SpinDelay, delay.finish() as u64);
            if self.state.fetch_or(LOCKED, Ordering::Acquire) & LOCKED == 0 {
                return;
            }
        }
    }

    /// `LWLockWaitListUnlock`.
    #[inline]
    pub(super) fn wait_list_unlock(&self) {
        // Release: our wait-list writes are visible to the next holder (invariant 2).
        let old = self.state.fetch_and(!LOCKED, Ordering::Release);
        debug_assert!(old & LOCKED != 0, "wait list unlocked but not locked");
        // Spinners of the bit may probe again (a no-op outside loom).
        crate::sync::spin_released();
    }

    /// Runs `f` on the wait list.
    ///
    /// # Safety
    /// The caller must hold `LOCKED` (invariant 2).
    #[inline]
    pub(super) unsafe fn with_waiters<R>(&self, f: impl FnOnce(&mut ProcList) -> R) -> R {
        // SAFETY: LOCKED is held (caller's contract), so no other thread accesses the list; the
        // Acquire that took LOCKED ordered us after the previous holder's writes.
        self.waiters.with_mut(|l| f(unsafe { &mut *l }))
    }

    /// `LWLockQueueSelf`: puts `me` on the wait list in `mode` (one of [`lw_mode`]).
    pub(super) fn queue_self(&self, me: &Proc, mode: u8) {
        self.queue_self_at(me, mode, false)
    }

    /// `LWLockQueueSelf`; `front`: behind the leading WAIT_UNTIL_FREE run instead of at the tail
    /// (the [`HANDOFF`] owner re-queueing, invariant 7; never under [`Barging`]).
    pub(super) fn queue_self_at(&self, me: &Proc, mode: u8, front: bool) {
        assert_eq!(
            me.lw_waiting.load(Ordering::Relaxed),
            lw_waiting::NOT_WAITING,
            "queueing for an LWLock while already waiting"
        );
        instructions(10); // coarse: the assertion and the call
        self.wait_list_lock();
        // Relaxed: see "No lost wakeup" in the module docs; only the word's modification order
        // matters, and this RMW precedes our re-check CAS on the same word.
        // Mutant `atomic_no_has_waiters` (models only): queue without telling releasers.
        if !crate::mutant!("atomic_no_has_waiters") {
            self.state.fetch_or(HAS_WAITERS, Ordering::Relaxed);
        }
        me.lw_waiting.store(lw_waiting::WAITING, Ordering::Relaxed);
        me.lw_mode.store(mode, Ordering::Relaxed);
        // SAFETY: LOCKED is held.
        unsafe {
            self.with_waiters(|l| {
                if mode == lw_mode::WAIT_UNTIL_FREE {
                    l.push_head(me)
                } else if P::HANDOFF && front {
                    l.push_after_wait_until_free(me)
                } else {
                    l.push_tail(me)
                }
            })
        };
        instructions(20); // coarse: the list insertion
        self.wait_list_unlock();
    }

    /// `LWLockDequeueSelf`: after queueing, the re-check got the lock (or no longer needs to wait).
    /// Returns whether a fair unlock had meanwhile handed us the lock as well (invariant 8: then
    /// we hold one more shared unit, which the caller gives back; never under PostgreSQL's own
    /// operations, which grant nothing).
    pub(super) fn dequeue_self(&self, me: &Proc) -> bool {
        self.stats.bump(Stat::DequeueSelf, 1);
        instructions(10); // coarse: the call
                          // Under LOCKED, a waker that detached us already set PENDING_WAKEUP (invariant 5): O(1).
        if self.unlink_self(me, false, 25) {
            false
        } else {
            // A waker detached us and inhibited wakeups on our behalf: re-enable them, then
            // absorb its post (and any foreign ones, re-posted afterwards).
            self.state.fetch_or(RELEASE_OK, Ordering::Relaxed);
            let extra = Self::sleep_until_woken(me, WaitEvent::NONE);
            me.repost(extra);
            take_granted(me)
        }
    }

    /// [`dequeue_self`](Self::dequeue_self) after the re-check that follows queueing took the
    /// lock (or overflowed): a shared unit that a fair unlock granted us meanwhile is given back.
    pub(super) fn dequeue_self_returning_grant(&self, me: &Proc) {
        if self.dequeue_self(me) {
            // SAFETY: a fair unlock granted us this shared unit (invariant 8); besides it we
            // hold the unit our own attempt took, or none (an overflow took none).
            unsafe { RawLwLock::release(self, Mode::Shared) };
        }
    }

    /// After queueing, `LWLockAcquire`'s second `LWLockAttemptLock` found `recheck`: acquired,
    /// we leave the list ([`dequeue_self_returning_grant`](Self::dequeue_self_returning_grant)),
    /// end `crit` and return `None`; an overflow of the shared count leaves the list and PANICs
    /// (outside `crit`); must wait, `crit` comes back for the sleep.
    pub(super) fn after_queued_recheck(
        &self,
        me: &Proc,
        recheck: Attempt,
        crit: CritSection,
        extra: u32,
    ) -> Option<CritSection> {
        match recheck {
            Attempt::MustWait => Some(crit),
            Attempt::Acquired => {
                self.dequeue_self_returning_grant(me);
                crit.end();
                None
            }
            Attempt::Overflow => {
                self.dequeue_self_returning_grant(me);
                crit.end();
                me.repost(extra);
                self.shared_overflow();
            }
        }
    }

    /// The unlinking of `LWLockDequeueSelf`, under the wait-list lock: if we are still WAITING
    /// (or `force`), off the list and NOT_WAITING; `HAS_WAITERS` cleared if the list is left
    /// empty. `cost`: the simulated instructions of the list work (0: none charged). Returns
    /// whether we were on the list (false: a waker detached us and its post is coming).
    pub(super) fn unlink_self(&self, me: &Proc, force: bool, cost: u32) -> bool {
        self.wait_list_lock();
        let on_list = force || me.lw_waiting.load(Ordering::Relaxed) == lw_waiting::WAITING;
        // SAFETY: LOCKED is held.
        let empty = unsafe {
            self.with_waiters(|l| {
                if on_list {
                    l.delete(me);
                }
                l.is_empty()
            })
        };
        if cost > 0 {
            instructions(cost); // coarse: the list deletion and the emptiness test
        }
        if empty && self.state.load(Ordering::Relaxed) & HAS_WAITERS != 0 {
            self.state.fetch_and(!HAS_WAITERS, Ordering::Relaxed);
        }
        self.wait_list_unlock();
        if on_list {
            me.lw_waiting
                .store(lw_waiting::NOT_WAITING, Ordering::Relaxed);
        }
        on_list
    }

    /// Sleeps until a waker sets our `lw_waiting` to NOT_WAITING; returns the absorbed foreign
    /// wakeups, which the caller re-posts when it is done sleeping.
    pub(super) fn sleep_until_woken(me: &Proc, event: WaitEvent) -> u32 {
        // Acquire: pairs with the waker's Release store after unlinking us (invariant 5).
        me.sleep_absorbing(event, || {
            me.lw_waiting.load(Ordering::Acquire) == lw_waiting::NOT_WAITING
        })
    }
}

/// Clears and returns the record's `lw_granted` (owner only, after it saw NOT_WAITING with
/// Acquire, which orders the waker's Relaxed store of the flag before it).
#[inline]
pub(super) fn take_granted(me: &Proc) -> bool {
    if me.lw_granted.load(Ordering::Relaxed) {
        me.lw_granted.store(false, Ordering::Relaxed);
        true
    } else {
        false
    }
}
