//! Fair unlock and the wakes that do not free the lock: a fair release hands the lock to the
//! waiters a release would wake in the same CAS that removes its own hold (invariant 8);
//! downgrades and upgradable releases wake the waiters they now admit. Beyond PostgreSQL.
//!
//! Everything here uses the bits `UPGRADABLE` and `HANDOFF`, the wait mode
//! `lw_mode::UPGRADABLE` or the record flag `lw_granted`, which PostgreSQL's own operations
//! (`lwlock_acquire.rs`) never set; those behave as PostgreSQL's as long as only they are
//! used. See the layout's table and invariants 6–8.
//!
//! * **Fair unlock**: under the wait-list lock, the releaser hands the lock to the waiters a
//!   release would wake (the head exclusive waiter alone, or every shared waiter and the first
//!   upgradable one) by adding their holds to the word in the same CAS that removes its own, and
//!   wakes them with `lw_granted` set: a newcomer cannot barge in between.

use super::layout::{
    HANDOFF, HAS_WAITERS, LOCKED, LOCK_MASK, RELEASE_OK, SHARED_MASK, UPGRADABLE, VAL_EXCLUSIVE,
    VAL_SHARED,
};
use super::{AtomicLwLock, Policy};
use crate::elog::CritSection;
use crate::proc::{lw_mode, lw_waiting};
use crate::proclist::ProcList;
use crate::raw::{Mode, RawLwLock};
use crate::sync::{self, Ordering};

/// Which waiters a pass wakes or hands the lock to, besides the leading WAIT_UNTIL_FREE run.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Pick {
    /// The first non-WAIT_UNTIL_FREE waiter, if it is exclusive (else the shared ones).
    Head,
    /// Every shared waiter, and the first upgradable one if `upgradable`.
    Shared { upgradable: bool },
    /// The first upgradable waiter.
    FirstUpgradable,
}

impl<P: Policy> AtomicLwLock<P> {
    /// Detaches the leading WAIT_UNTIL_FREE run (if `with_free`) and the waiters `pick` selects;
    /// returns them. Must run under LOCKED.
    pub(super) fn detach(l: &mut ProcList, pick: Pick, with_free: bool) -> (ProcList, ProcList) {
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
    pub(super) fn unlock_list_after_pass(&self, empty: bool, release_ok: bool) {
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
    pub(super) fn wake_picked(&self, pick: Pick) {
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
    pub(super) unsafe fn release_fair_delta(&self, delta: u32, mode: Mode) {
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
    pub(super) fn grant_plan(l: &ProcList) -> GrantPlan {
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
pub(super) struct GrantPlan {
    add: u32,
}
