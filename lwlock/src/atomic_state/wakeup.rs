//! `LWLockWakeup`: which waiters a release wakes (the wake set of the module docs), the release's
//! decision to run a wake pass (`LWLockRelease`'s test, the stale-throttle rule of
//! `WAKE_STALE_NANOS`, and the drop-in's rarer duties: an upgrader, the handoff owner), and
//! the wake of a detached list.

use super::layout::{
    HANDOFF, HAS_WAITERS, LOCKED, LOCK_MASK, RELEASE_OK, SHARED_MASK, UPGRADABLE, VAL_EXCLUSIVE,
};
use super::{AtomicLwLock, Policy};
use crate::elog::CritSection;
use crate::proc::{lw_mode, lw_waiting};
use crate::proclist::ProcList;
use crate::sync::{self, instructions, Ordering};

/// The stale-wake rule's clock unit: 2^13 ns (8.192 µs); a `u8` of them wraps after 2.1 ms.
const WAKE_CLOCK_SHIFT: u32 = 13;

/// The stale-wake rule's clock (see `release_wake`), or `None` under the model checkers, whose
/// executions must not branch on real time: they keep PostgreSQL's throttle. Under lwsim the
/// clock is virtual time.
#[cfg(not(any(loom, shuttle)))]
pub(super) fn wake_clock() -> Option<u8> {
    Some((crate::sync::clock_nanos() >> WAKE_CLOCK_SHIFT) as u8)
}

#[cfg(any(loom, shuttle))]
pub(super) fn wake_clock() -> Option<u8> {
    None
}

impl<P: Policy> AtomicLwLock<P> {
    /// `LWLockWakeup`: detaches the wake set (see module docs) and wakes it outside the list lock.
    #[cold]
    pub(super) fn wakeup(&self) {
        let mut wake = ProcList::EMPTY;
        let mut release_ok = true;
        instructions(11); // the prologue, up to the wait-list bit's RMW
        self.wait_list_lock();
        // SAFETY: LOCKED is held.
        let empty = unsafe {
            self.with_waiters(|l| {
                let mut woke_nonfree = false;
                let mut cur = l.first();
                while let Some(w) = cur {
                    instructions(40); // coarse, per scanned waiter: the list calls and tests
                    cur = ProcList::next_of(w);
                    let mode = w.lw_mode.load(Ordering::Relaxed);
                    if woke_nonfree && mode == lw_mode::EXCLUSIVE {
                        continue; // later writers stay queued behind the woken shared run
                    }
                    l.delete(w);
                    wake.push_tail(w);
                    if mode != lw_mode::WAIT_UNTIL_FREE {
                        release_ok = false;
                        woke_nonfree = true;
                    }
                    w.lw_waiting
                        .store(lw_waiting::PENDING_WAKEUP, Ordering::Relaxed);
                    if mode == lw_mode::EXCLUSIVE {
                        break; // a writer is woken alone
                    }
                }
                l.is_empty()
            })
        };
        if P::WAKE_STALE_NANOS != 0 && !release_ok {
            if let Some(now) = wake_clock() {
                // Relaxed: a hint for releases (a stale read costs one early or late pass).
                self.woke_at.store(now, Ordering::Relaxed);
            }
        }
        // One CAS updates the flags and releases LOCKED, so no queuer slips in between.
        instructions(10); // the flags' new value
        let mut old = self.state.load(Ordering::Relaxed);
        loop {
            debug_assert!(old & LOCKED != 0);
            let mut new = old & !LOCKED;
            if release_ok {
                new |= RELEASE_OK;
            } else {
                new &= !RELEASE_OK;
            }
            if empty {
                new &= !HAS_WAITERS; // the *wait list* is empty (81f7738953)
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
        // Spinners of the bit may probe again (a no-op outside loom).
        crate::sync::spin_released();
        Self::wake_all(&mut wake);
    }

    /// What a release does after its `fetch_sub` when [`HAS_WAITERS`], an upgrader's `EXCLUSIVE`
    /// or [`HANDOFF`] is in the new value. For a word with neither of the latter two (always,
    /// under PostgreSQL's own operations) it is `LWLockRelease`'s test: wake only when the lock
    /// became free, someone waits and wakeups are not inhibited.
    ///
    /// Beyond PostgreSQL (policies with `WAKE_STALE_NANOS`, [`Adaptive`](super::Adaptive), [`EmptyYield`](super::EmptyYield)): when wakeups are
    /// inhibited but the throttling pass is older than the bound, its woken thread has not run
    /// yet: it waits for a core (an oversubscribed machine). The release then runs a wake pass
    /// all the same. Without this the cores idle with the lock free while everyone else sleeps
    /// on the list (64 threads on 2 cores: 65-71 % busy); without the throttle at all, wake
    /// passes on every release collapse the lock on many cores (results: the drop-in defaults).
    /// The pass is the one a release with `RELEASE_OK` set runs; under the model checkers (no
    /// real time) this branch is never taken.
    #[inline]
    pub(super) fn release_wake(&self, new: u32) {
        if new & (HAS_WAITERS | RELEASE_OK | LOCK_MASK) == HAS_WAITERS | RELEASE_OK {
            self.wakeup();
        } else if new & (VAL_EXCLUSIVE | HANDOFF) != 0 {
            self.release_ext(new);
        } else if P::WAKE_STALE_NANOS != 0
            && new & (HAS_WAITERS | LOCK_MASK) == HAS_WAITERS
            && self.wake_stale()
        {
            self.wakeup();
        }
    }

    /// Whether the last throttling wake pass is `WAKE_STALE_NANOS` old, in whole clock units
    /// (50 µs: 6 units, so it fires between about 41 and 49 µs after the pass), modulo the
    /// clock's wrap (a pass a multiple of 2.1 ms old looks fresh for at most the bound).
    #[cold]
    pub(super) fn wake_stale(&self) -> bool {
        const {
            assert!(
                P::WAKE_STALE_NANOS == 0
                    || (P::WAKE_STALE_NANOS >> WAKE_CLOCK_SHIFT >= 1
                        && P::WAKE_STALE_NANOS >> WAKE_CLOCK_SHIFT <= 255),
                "WAKE_STALE_NANOS must be 0 (off) or 1 to 255 clock units (8.2 us to 2.09 ms)"
            )
        };
        let Some(now) = wake_clock() else {
            return false;
        };
        let bound = (P::WAKE_STALE_NANOS >> WAKE_CLOCK_SHIFT) as u8;
        // Relaxed: a hint (see `woke_at`).
        now.wrapping_sub(self.woke_at.load(Ordering::Relaxed)) >= bound
    }

    /// Wakes every record of a detached list: last link access, then NOT_WAITING, then post.
    pub(super) fn wake_all(wake: &mut ProcList) {
        // The detached records are reachable only from `wake`: an unwind would strand them.
        let crit = CritSection::start("atomic LWLock: waking detached waiters");
        // Mutant `wake_before_unlink` (models only): NOT_WAITING and the post come before the
        // unlink, so a woken waiter may queue again before the waker's last access to its links.
        while crate::mutant!("wake_before_unlink") {
            let Some(w) = wake.first() else { break };
            w.lw_waiting
                .store(lw_waiting::NOT_WAITING, Ordering::Release);
            w.sem.unlock();
            wake.pop_head();
        }
        while let Some(w) = wake.pop_head() {
            // Coarse, per woken waiter: the pop and the post's setup.
            instructions(15);
            // Release: the unlink (done by pop_head just now) is visible before the waiter can
            // see NOT_WAITING and queue itself elsewhere.
            // Mutant `wake_relaxed_not_waiting` (models only): a waiter that wakes on a foreign
            // post and sees NOT_WAITING is not ordered after the waker.
            let order = if crate::mutant!("wake_relaxed_not_waiting") {
                Ordering::Relaxed
            } else {
                Ordering::Release
            };
            w.lw_waiting.store(lw_waiting::NOT_WAITING, order);
            w.sem.unlock();
        }
        crit.end();
    }

    /// A release's rarer duties (see `release_wake`): wake an upgrader whose readers are gone,
    /// and, under [`Handoff`](super::Handoff), wake the handoff owner when the lock became free, whatever
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
}
