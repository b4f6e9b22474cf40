//! The same locks over the lock_api **0.5** line (the one parking_lot 0.13 uses; feature
//! `lock_api_05`, Rust 1.95): `lwlock::lock_api_05::{RwLock, Mutex, ReentrantMutex, Condvar, ...}`.
//!
//! lock_api 0.5 changed the raw-lock API (a lock returns its guard state, unlock consumes it); the
//! lock types themselves (`RwLock<R, T>`, guards, `map`, ...) keep parking_lot's method names.
//! Every impl here forwards to the 0.4 impl of the same raw lock (the guard state is the stateless
//! `GuardSend`: an LWLock hold is a count in the lock word, not a token), so both lines run the
//! same PostgreSQL code. A capability the 0.4 impl has (upgradable, downgrade, timed, fair) the
//! 0.5 impl has too: each forwarding impl is bounded on its 0.4 counterpart.
//!
//! # Why a feature and a module, not a switch of the default
//! * Cargo features must be additive: a feature that changed what `lwlock::RwLock` *is* would
//!   break every other crate in the build that uses `lwlock` with the 0.4 types as soon as any one
//!   crate enabled it. A module that only appears is additive.
//! * lock_api 0.5 needs Rust 1.95 (its declared `rust-version`, edition 2024); the default line
//!   keeps the crate's MSRV where the rest of the code needs it.
//! * parking_lot 0.12 (lock_api 0.4) is still what most of the ecosystem depends on.
//!
//! A parking_lot 0.13 user switches with `lwlock = { features = ["lock_api_05"] }` and
//! `use lwlock::lock_api_05::{Mutex, RwLock, ...}`.
//!
//! ```
//! use lwlock::lock_api_05::{Mutex, RwLock};
//! static M: Mutex<u32> = Mutex::new(0);
//! static L: RwLock<u32> = RwLock::new(0);
//! *M.lock() += 1;
//! *L.write() += *M.lock();
//! assert_eq!(*L.read(), 1);
//! ```

use crate::{AtomicLwLock, AtomicLwMutex, Mode, Policy, RawClassicLwLock, RawLwLock};
use ::lock_api as l4;
use ::lock_api_05 as l5;
use l5::GuardSend;
use std::marker::PhantomData;
use std::time::{Duration, Instant};

/// The lock_api 0.5 crate these types are built on.
pub use ::lock_api_05 as lock_api;

#[inline(always)]
fn g() -> GuardSend {
    GuardSend::new()
}

#[inline(always)]
fn g_if(ok: bool) -> Option<GuardSend> {
    ok.then(GuardSend::new)
}

/// lock_api 0.5's `RawRwLock` for a [`RawLwLock`] type, written once (the 0.4 line's is
/// `lock_api_rwlock_over_lwlock!` in `raw.rs`): a lock returns the stateless `GuardSend`, an
/// unlock consumes it.
macro_rules! l5_rwlock_over_lwlock {
    ([$($gen:tt)*] $ty:ty) => {
        // SAFETY: forwards to the `RawLwLock` implementation, whose contract (mutual exclusion,
        // Acquire/Release, non-blocking try, an unwinding acquire holds nothing) is lock_api's;
        // the guard state is stateless and may be sent, as an LWLock hold is not tied to a
        // thread.
        unsafe impl<$($gen)*> l5::RawRwLock for $ty {
            #[allow(clippy::declare_interior_mutable_const)]
            const INIT: Self = <$ty>::new();
            type SharedGuard = GuardSend;
            type ExclusiveGuard = GuardSend;

            #[inline]
            fn lock_shared(&self) -> GuardSend {
                self.acquire(Mode::Shared);
                g()
            }
            #[inline]
            fn try_lock_shared(&self) -> Option<GuardSend> {
                g_if(self.conditional_acquire(Mode::Shared))
            }
            #[inline]
            unsafe fn unlock_shared(&self, _guard: GuardSend) {
                // SAFETY: the guard state proves a shared hold (lock_api's contract).
                unsafe { self.release(Mode::Shared) }
            }
            #[inline]
            fn lock_exclusive(&self) -> GuardSend {
                self.acquire(Mode::Exclusive);
                g()
            }
            #[inline]
            fn try_lock_exclusive(&self) -> Option<GuardSend> {
                g_if(self.conditional_acquire(Mode::Exclusive))
            }
            #[inline]
            unsafe fn unlock_exclusive(&self, _guard: GuardSend) {
                // SAFETY: the guard state proves an exclusive hold.
                unsafe { self.release(Mode::Exclusive) }
            }
            #[inline]
            fn is_locked(&self) -> bool {
                RawLwLock::is_locked(self)
            }
            #[inline]
            fn is_locked_exclusive(&self) -> bool {
                RawLwLock::is_locked_exclusive(self)
            }
        }
    };
}

l5_rwlock_over_lwlock!([P: Policy] AtomicLwLock<P>);
l5_rwlock_over_lwlock!([] RawClassicLwLock);

// Every forwarding impl below: the 0.5 method calls the 0.4 method of the same raw lock with the
// same meaning; the 0.4 impl upholds lock_api's contract, and the stateless guard carries
// nothing the 0.4 method would need.

// SAFETY: see above.
unsafe impl<P: Policy> l5::RawRwLockDowngrade for AtomicLwLock<P>
where
    AtomicLwLock<P>: l4::RawRwLockDowngrade,
{
    #[inline]
    unsafe fn downgrade(&self, _guard: GuardSend) -> GuardSend {
        // SAFETY: held exclusively (the guard state), as the 0.4 method requires.
        unsafe { l4::RawRwLockDowngrade::downgrade(self) };
        g()
    }
}

// SAFETY: see above.
unsafe impl<P: Policy> l5::RawRwLockFair for AtomicLwLock<P>
where
    AtomicLwLock<P>: l4::RawRwLockFair,
{
    #[inline]
    unsafe fn unlock_shared_fair(&self, _guard: GuardSend) {
        // SAFETY: held shared.
        unsafe { l4::RawRwLockFair::unlock_shared_fair(self) }
    }
    #[inline]
    unsafe fn unlock_exclusive_fair(&self, _guard: GuardSend) {
        // SAFETY: held exclusively.
        unsafe { l4::RawRwLockFair::unlock_exclusive_fair(self) }
    }
    #[inline]
    unsafe fn bump_shared(&self, _guard: &mut GuardSend) {
        // SAFETY: held shared; held again on return.
        unsafe { l4::RawRwLockFair::bump_shared(self) }
    }
    #[inline]
    unsafe fn bump_exclusive(&self, _guard: &mut GuardSend) {
        // SAFETY: held exclusively; held again on return.
        unsafe { l4::RawRwLockFair::bump_exclusive(self) }
    }
}

// SAFETY: see above.
unsafe impl<P: Policy> l5::RawRwLockTimed for AtomicLwLock<P>
where
    AtomicLwLock<P>: l4::RawRwLockTimed<Duration = Duration, Instant = Instant>,
{
    type Duration = Duration;
    type Instant = Instant;

    #[inline]
    fn try_lock_shared_for(&self, timeout: Duration) -> Option<GuardSend> {
        g_if(l4::RawRwLockTimed::try_lock_shared_for(self, timeout))
    }
    #[inline]
    fn try_lock_shared_until(&self, timeout: Instant) -> Option<GuardSend> {
        g_if(l4::RawRwLockTimed::try_lock_shared_until(self, timeout))
    }
    #[inline]
    fn try_lock_exclusive_for(&self, timeout: Duration) -> Option<GuardSend> {
        g_if(l4::RawRwLockTimed::try_lock_exclusive_for(self, timeout))
    }
    #[inline]
    fn try_lock_exclusive_until(&self, timeout: Instant) -> Option<GuardSend> {
        g_if(l4::RawRwLockTimed::try_lock_exclusive_until(self, timeout))
    }
}

// SAFETY: see above.
unsafe impl<P: Policy> l5::RawRwLockUpgrade for AtomicLwLock<P>
where
    AtomicLwLock<P>: l4::RawRwLockUpgrade,
{
    type UpgradableGuard = GuardSend;

    #[inline]
    fn lock_upgradable(&self) -> GuardSend {
        l4::RawRwLockUpgrade::lock_upgradable(self);
        g()
    }
    #[inline]
    fn try_lock_upgradable(&self) -> Option<GuardSend> {
        g_if(l4::RawRwLockUpgrade::try_lock_upgradable(self))
    }
    #[inline]
    unsafe fn unlock_upgradable(&self, _guard: GuardSend) {
        // SAFETY: held upgradable.
        unsafe { l4::RawRwLockUpgrade::unlock_upgradable(self) }
    }
    #[inline]
    unsafe fn upgrade(&self, _guard: GuardSend) -> GuardSend {
        // SAFETY: held upgradable.
        unsafe { l4::RawRwLockUpgrade::upgrade(self) };
        g()
    }
    #[inline]
    unsafe fn try_upgrade(&self, guard: GuardSend) -> Result<GuardSend, GuardSend> {
        // SAFETY: held upgradable; on failure it still is.
        if unsafe { l4::RawRwLockUpgrade::try_upgrade(self) } {
            Ok(g())
        } else {
            Err(guard)
        }
    }
}

// SAFETY: see above.
unsafe impl<P: Policy> l5::RawRwLockUpgradeFair for AtomicLwLock<P>
where
    AtomicLwLock<P>: l4::RawRwLockUpgradeFair,
{
    #[inline]
    unsafe fn unlock_upgradable_fair(&self, _guard: GuardSend) {
        // SAFETY: held upgradable.
        unsafe { l4::RawRwLockUpgradeFair::unlock_upgradable_fair(self) }
    }
    #[inline]
    unsafe fn bump_upgradable(&self, _guard: &mut GuardSend) {
        // SAFETY: held upgradable; held again on return.
        unsafe { l4::RawRwLockUpgradeFair::bump_upgradable(self) }
    }
}

// SAFETY: see above.
unsafe impl<P: Policy> l5::RawRwLockUpgradeDowngrade for AtomicLwLock<P>
where
    AtomicLwLock<P>: l4::RawRwLockUpgradeDowngrade,
{
    #[inline]
    unsafe fn downgrade_upgradable(&self, _guard: GuardSend) -> GuardSend {
        // SAFETY: held upgradable.
        unsafe { l4::RawRwLockUpgradeDowngrade::downgrade_upgradable(self) };
        g()
    }
    #[inline]
    unsafe fn downgrade_to_upgradable(&self, _guard: GuardSend) -> GuardSend {
        // SAFETY: held exclusively.
        unsafe { l4::RawRwLockUpgradeDowngrade::downgrade_to_upgradable(self) };
        g()
    }
}

// SAFETY: see above.
unsafe impl<P: Policy> l5::RawRwLockUpgradeTimed for AtomicLwLock<P>
where
    AtomicLwLock<P>: l4::RawRwLockUpgradeTimed<Duration = Duration, Instant = Instant>,
{
    #[inline]
    fn try_lock_upgradable_for(&self, timeout: Duration) -> Option<GuardSend> {
        g_if(l4::RawRwLockUpgradeTimed::try_lock_upgradable_for(
            self, timeout,
        ))
    }
    #[inline]
    fn try_lock_upgradable_until(&self, timeout: Instant) -> Option<GuardSend> {
        g_if(l4::RawRwLockUpgradeTimed::try_lock_upgradable_until(
            self, timeout,
        ))
    }
    #[inline]
    unsafe fn try_upgrade_for(
        &self,
        guard: GuardSend,
        timeout: Duration,
    ) -> Result<GuardSend, GuardSend> {
        // SAFETY: held upgradable; on failure it still is.
        if unsafe { l4::RawRwLockUpgradeTimed::try_upgrade_for(self, timeout) } {
            Ok(g())
        } else {
            Err(guard)
        }
    }
    #[inline]
    unsafe fn try_upgrade_until(
        &self,
        guard: GuardSend,
        timeout: Instant,
    ) -> Result<GuardSend, GuardSend> {
        // SAFETY: held upgradable; on failure it still is.
        if unsafe { l4::RawRwLockUpgradeTimed::try_upgrade_until(self, timeout) } {
            Ok(g())
        } else {
            Err(guard)
        }
    }
}

// SAFETY: forwards to the inherent methods, which are the exclusive LWLock (see `mutex.rs`).
unsafe impl<P: Policy> l5::RawMutex for AtomicLwMutex<P> {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = AtomicLwMutex::new();
    type Guard = GuardSend;

    #[inline]
    fn lock(&self) -> GuardSend {
        AtomicLwMutex::lock(self);
        g()
    }
    #[inline]
    fn try_lock(&self) -> Option<GuardSend> {
        g_if(AtomicLwMutex::try_lock(self))
    }
    #[inline]
    unsafe fn unlock(&self, _guard: GuardSend) {
        // SAFETY: the guard state proves the hold.
        unsafe { AtomicLwMutex::unlock(self) }
    }
    #[inline]
    fn is_locked(&self) -> bool {
        AtomicLwMutex::is_locked(self)
    }
}

// SAFETY: see the forwarding impls above.
unsafe impl<P: Policy> l5::RawMutexFair for AtomicLwMutex<P>
where
    AtomicLwMutex<P>: l4::RawMutexFair,
{
    #[inline]
    unsafe fn unlock_fair(&self, _guard: GuardSend) {
        // SAFETY: held.
        unsafe { l4::RawMutexFair::unlock_fair(self) }
    }
    #[inline]
    unsafe fn bump(&self, _guard: &mut GuardSend) {
        // SAFETY: held; held again on return.
        unsafe { l4::RawMutexFair::bump(self) }
    }
}

// SAFETY: see the forwarding impls above.
unsafe impl<P: Policy> l5::RawMutexTimed for AtomicLwMutex<P>
where
    AtomicLwMutex<P>: l4::RawMutexTimed<Duration = Duration, Instant = Instant>,
{
    type Duration = Duration;
    type Instant = Instant;

    #[inline]
    fn try_lock_for(&self, timeout: Duration) -> Option<GuardSend> {
        g_if(l4::RawMutexTimed::try_lock_for(self, timeout))
    }
    #[inline]
    fn try_lock_until(&self, timeout: Instant) -> Option<GuardSend> {
        g_if(l4::RawMutexTimed::try_lock_until(self, timeout))
    }
}

// SAFETY: as the 0.4 impl (`remutex.rs`): a record number belongs to one live thread at a time.
unsafe impl l5::GetThreadId for crate::RawThreadId {
    const INIT: Self = crate::RawThreadId;

    #[inline]
    fn nonzero_thread_id(&self) -> std::num::NonZeroUsize {
        l4::GetThreadId::nonzero_thread_id(self)
    }
}

/// lock_api 0.5's raw condition variable over [`crate::Condvar`], for the mutex of policy `P`.
#[derive(Debug)]
pub struct RawCondvar<P: Policy> {
    inner: crate::Condvar,
    policy: PhantomData<P>,
}

// SAFETY: `wait` returns with the mutex held again (`Condvar::wait_raw`'s contract); notifies
// never touch the mutex.
unsafe impl<P: Policy> l5::RawCondvar for RawCondvar<P> {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = RawCondvar {
        inner: crate::Condvar::new(),
        policy: PhantomData,
    };
    type RawMutex = AtomicLwMutex<P>;

    #[inline]
    unsafe fn wait(&self, mutex: &AtomicLwMutex<P>, _guard: &mut GuardSend) {
        // SAFETY: the caller holds `mutex` (lock_api's contract), as `wait_raw` requires.
        unsafe { self.inner.wait_raw(mutex, None) };
    }
    #[inline]
    fn notify_one(&self) -> bool {
        self.inner.notify_one()
    }
    #[inline]
    fn notify_all(&self) -> usize {
        self.inner.notify_all()
    }
}

// SAFETY: as `RawCondvar`'s `wait`, with a deadline.
unsafe impl<P: Policy> l5::RawCondvarTimed for RawCondvar<P>
where
    AtomicLwMutex<P>: l4::RawMutexTimed<Duration = Duration, Instant = Instant>,
{
    #[inline]
    fn checked_duration_to_instant(timeout: &Duration) -> Option<Instant> {
        Instant::now().checked_add(*timeout)
    }
    #[inline]
    unsafe fn wait_until(
        &self,
        mutex: &AtomicLwMutex<P>,
        _guard: &mut GuardSend,
        timeout: &Instant,
    ) -> bool {
        // SAFETY: the caller holds `mutex`.
        unsafe {
            self.inner
                .wait_raw(mutex, Some(crate::sync::deadline_at(*timeout)))
        }
    }
    #[inline]
    unsafe fn wait_for(
        &self,
        mutex: &AtomicLwMutex<P>,
        _guard: &mut GuardSend,
        timeout: &Duration,
    ) -> bool {
        // SAFETY: the caller holds `mutex`.
        unsafe {
            self.inner
                .wait_raw(mutex, Some(crate::sync::deadline_after(*timeout)))
        }
    }
}

use crate::{RawBargingMutex, RawMutex, RawRwLock, RawThreadId};

/// [`crate::RwLock`] over lock_api 0.5 (the empty-yield policy, like the 0.4 one).
pub type RwLock<T> = l5::RwLock<RawRwLock, T>;
/// Shared guard of [`RwLock`].
pub type RwLockReadGuard<'a, T> = l5::RwLockReadGuard<'a, RawRwLock, T>;
/// Exclusive guard of [`RwLock`].
pub type RwLockWriteGuard<'a, T> = l5::RwLockWriteGuard<'a, RawRwLock, T>;
/// Upgradable guard of [`RwLock`].
pub type RwLockUpgradableReadGuard<'a, T> = l5::RwLockUpgradableReadGuard<'a, RawRwLock, T>;
/// A mapped shared guard of [`RwLock`].
pub type MappedRwLockReadGuard<'a, T> = l5::MappedRwLockReadGuard<'a, RawRwLock, T>;
/// A mapped exclusive guard of [`RwLock`].
pub type MappedRwLockWriteGuard<'a, T> = l5::MappedRwLockWriteGuard<'a, RawRwLock, T>;
/// Arc-owning guards of [`RwLock`] (feature `arc_lock`).
#[cfg(feature = "arc_lock")]
pub type ArcRwLockReadGuard<T> = l5::ArcRwLockReadGuard<RawRwLock, T>;
/// Arc-owning exclusive guard of [`RwLock`] (feature `arc_lock`).
#[cfg(feature = "arc_lock")]
pub type ArcRwLockWriteGuard<T> = l5::ArcRwLockWriteGuard<RawRwLock, T>;
/// Arc-owning upgradable guard of [`RwLock`] (feature `arc_lock`).
#[cfg(feature = "arc_lock")]
pub type ArcRwLockUpgradableReadGuard<T> = l5::ArcRwLockUpgradableReadGuard<RawRwLock, T>;

/// [`crate::TaskFairRwLock`] over lock_api 0.5.
pub type TaskFairRwLock<T> = l5::RwLock<crate::RawTaskFairLwLock, T>;
/// [`crate::AdaptiveRwLock`] over lock_api 0.5.
pub type AdaptiveRwLock<T> = l5::RwLock<crate::RawAdaptiveLwLock, T>;
/// [`crate::BargingRwLock`] over lock_api 0.5 (PostgreSQL's policy).
pub type BargingRwLock<T> = l5::RwLock<crate::RawAtomicLwLock, T>;
/// [`crate::ClassicRwLock`] over lock_api 0.5.
pub type ClassicRwLock<T> = l5::RwLock<RawClassicLwLock, T>;

/// [`crate::Mutex`] over lock_api 0.5.
pub type Mutex<T> = l5::Mutex<RawMutex, T>;
/// The guard of [`Mutex`].
pub type MutexGuard<'a, T> = l5::MutexGuard<'a, RawMutex, T>;
/// A mapped guard of [`Mutex`].
pub type MappedMutexGuard<'a, T> = l5::MappedMutexGuard<'a, RawMutex, T>;
/// Arc-owning guard of [`Mutex`] (feature `arc_lock`).
#[cfg(feature = "arc_lock")]
pub type ArcMutexGuard<T> = l5::ArcMutexGuard<RawMutex, T>;
/// [`crate::BargingMutex`] over lock_api 0.5.
pub type BargingMutex<T> = l5::Mutex<RawBargingMutex, T>;
/// [`crate::AdaptiveMutex`] over lock_api 0.5.
pub type AdaptiveMutex<T> = l5::Mutex<crate::RawAdaptiveMutex, T>;

/// [`crate::Condvar`] for [`Mutex`] over lock_api 0.5.
pub type Condvar = l5::Condvar<RawCondvar<crate::EmptyYield>>;
/// The result of a timed wait.
pub use l5::WaitTimeoutResult;

/// [`crate::ReentrantMutex`] over lock_api 0.5.
pub type ReentrantMutex<T> = l5::ReentrantMutex<RawMutex, RawThreadId, T>;
/// The guard of [`ReentrantMutex`].
pub type ReentrantMutexGuard<'a, T> = l5::ReentrantMutexGuard<'a, RawMutex, RawThreadId, T>;
/// A mapped guard of [`ReentrantMutex`].
pub type MappedReentrantMutexGuard<'a, T> =
    l5::MappedReentrantMutexGuard<'a, RawMutex, RawThreadId, T>;
/// Arc-owning guard of [`ReentrantMutex`] (feature `arc_lock`).
#[cfg(feature = "arc_lock")]
pub type ArcReentrantMutexGuard<T> = l5::ArcReentrantMutexGuard<RawMutex, RawThreadId, T>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn both_lines_share_the_raw_locks() {
        let m = Arc::new(Mutex::new(0u32));
        let c = Arc::new(Condvar::new());
        let (m2, c2) = (m.clone(), c.clone());
        let t = std::thread::spawn(move || {
            *m2.lock() = 1;
            c2.notify_one();
        });
        let mut g = m.lock();
        c.wait_while(&mut g, |v| *v == 0);
        assert_eq!(*g, 1);
        drop(g);
        t.join().unwrap();
        let r = ReentrantMutex::new(());
        let a = r.lock();
        let b = r.lock();
        drop((a, b));
        let l = ClassicRwLock::new(3);
        assert_eq!(*l.read() + *l.read(), 6);
    }
}
