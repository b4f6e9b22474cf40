//! Upgradable reads: acquire, release, upgrade and downgrade (invariant 6). Beyond PostgreSQL.
//!
//! Everything here uses the bits `UPGRADABLE` and `HANDOFF`, the wait mode
//! `lw_mode::UPGRADABLE` or the record flag `lw_granted`, which PostgreSQL's own operations
//! (`lwlock_acquire.rs`) never set; those behave as PostgreSQL's as long as only they are
//! used. See the layout's table and invariants 6–8.
//!
//! * **Upgradable read**: `UPGRADABLE` plus one shared unit (invariant 6). Writers wait for the
//!   count, readers ignore the bit. Upgrading swaps the bit and the unit for `EXCLUSIVE` in one
//!   `fetch_sub`, which closes the lock to newcomers, then sleeps on the state word (an
//!   address-keyed futex) until the remaining readers leave; the shared release that brings the
//!   count to zero under `EXCLUSIVE` wakes it. Upgradable waiters queue in mode
//!   `lw_mode::UPGRADABLE` (PostgreSQL's wake pass treats them as shared waiters); the holder's
//!   release or downgrade wakes the first of them if the lock is not free.
//! * **Downgrade**: one `fetch_sub` (exclusive → one shared unit, or → upgradable), then the
//!   shared waiters it now admits are woken (not under an active handoff: they could not enter).

use super::fair_unlock::Pick;
use super::layout::{
    HANDOFF, HAS_WAITERS, LOCK_MASK, SHARED_MASK, UPGRADABLE, VAL_EXCLUSIVE, VAL_SHARED,
};
use super::{AtomicLwLock, Attempt, Policy, Want};
use crate::proc::Proc;

use crate::stats::Stat;
use crate::sync::{self, Ordering};
use crate::wait_event::{Tranche, WaitEvent};

/// `upgrade`'s `fetch_sub`: `UPGRADABLE` and one shared unit out, `EXCLUSIVE` in (`UPGRADABLE`
/// is bit 25, `EXCLUSIVE` bit 24: subtracting `2^24 + 1` from a word with bit 25 set, bit 24
/// clear and a count of at least one does exactly that).
const UPGRADE_DELTA: u32 = UPGRADABLE + VAL_SHARED - VAL_EXCLUSIVE;
/// `downgrade`'s `fetch_sub`: `EXCLUSIVE` out, one shared unit in.
const DOWNGRADE_DELTA: u32 = VAL_EXCLUSIVE - VAL_SHARED;

impl<P: Policy> AtomicLwLock<P> {
    /// Takes an upgradable read: [`UPGRADABLE`] plus one shared unit (invariant 6). Excludes
    /// writers and other upgradable holders, not readers. Returns `true` if it did not sleep.
    pub fn acquire_upgradable(&self) -> bool {
        self.stats.bump(Stat::ShAcquire, 1);
        match self.attempt(Want::Upgradable, false) {
            Attempt::Acquired => true,
            Attempt::Overflow => self.shared_overflow(),
            Attempt::MustWait => self
                .acquire_contended(Want::Upgradable, None)
                .unwrap_or(false),
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
}
