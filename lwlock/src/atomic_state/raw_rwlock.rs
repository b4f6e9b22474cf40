//! lock_api's traits for the atomic LWLock, every API line together (as parking_lot's
//! `raw_rwlock.rs` keeps them): `RawRwLock`, recursive, upgradable, downgrade, timed and fair.
//! Each forwards to the inherent operation of the same meaning (`lwlock_acquire.rs`,
//! `contended.rs`, `upgrade.rs`, `fair_unlock.rs`). Not under loom: lock_api's `INIT` needs a
//! `const fn`.

use super::{AtomicLwLock, Attempt, Policy, Want};
use crate::raw::Mode;
use crate::sync;
use lock_api::{
    RawRwLockDowngrade, RawRwLockFair, RawRwLockRecursive, RawRwLockRecursiveTimed, RawRwLockTimed,
    RawRwLockUpgrade, RawRwLockUpgradeDowngrade, RawRwLockUpgradeFair, RawRwLockUpgradeTimed,
};
use std::time::{Duration, Instant};

// `RawRwLock`: PostgreSQL's operations (`lwlock_acquire.rs`). Guards may be sent: an LWLock
// hold is a count in the word, not tied to the acquiring thread.
crate::raw::lock_api_rwlock_over_lwlock!([P: Policy] AtomicLwLock<P>, guard: GuardSend);

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
