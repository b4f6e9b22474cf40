//! Any `lock_api::RawRwLock` (parking_lot's, for instance) as a [`RawLwLock`], so baselines run
//! through exactly the code paths the project's own locks do.
//!
//! `acquire_or_wait` has no native counterpart in lock_api; it is emulated: try to take the lock,
//! and if that fails, take it (waiting as the lock's own policy dictates), release it at once and
//! report [`AcquireOrWait::Waited`].

use crate::raw::{AcquireOrWait, Mode, RawLwLock};
use crate::wait_event::Tranche;

/// Wraps a `lock_api::RawRwLock`. `NAME` comes from the [`Named`] impl of the wrapped type.
pub struct LockApiAdapter<R> {
    raw: R,
    tranche: Tranche,
}

impl<R> std::fmt::Debug for LockApiAdapter<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockApiAdapter")
            .field("lock", &std::any::type_name::<R>())
            .field("tranche", &self.tranche.name())
            .finish()
    }
}

/// The name a wrapped lock type appears under in tests, benches and plots.
pub trait Named {
    /// For example `"parking-lot"`.
    const NAME: &'static str;
}

impl<R: lock_api::RawRwLock> LockApiAdapter<R> {
    /// A free lock reporting under `tranche` (lock_api locks publish no waits themselves).
    pub const fn new_in(tranche: Tranche) -> Self {
        LockApiAdapter {
            raw: R::INIT,
            tranche,
        }
    }

    /// The wrapped lock.
    pub fn inner(&self) -> &R {
        &self.raw
    }
}

// SAFETY: lock_api's `RawRwLock` contract (mutual exclusion, Acquire/Release, non-blocking try,
// unwinding leaves nothing held) is the same as ours; every method forwards one to one.
unsafe impl<R> RawLwLock for LockApiAdapter<R>
where
    R: lock_api::RawRwLock + Named + Send + Sync,
{
    const NAME: &'static str = R::NAME;

    fn with_tranche(tranche: Tranche) -> Self {
        Self::new_in(tranche)
    }

    /// Always returns `true`: lock_api does not tell whether the thread slept.
    #[inline]
    fn acquire(&self, mode: Mode) -> bool {
        match mode {
            Mode::Shared => self.raw.lock_shared(),
            Mode::Exclusive => self.raw.lock_exclusive(),
        }
        true
    }

    #[inline]
    fn conditional_acquire(&self, mode: Mode) -> bool {
        match mode {
            Mode::Shared => self.raw.try_lock_shared(),
            Mode::Exclusive => self.raw.try_lock_exclusive(),
        }
    }

    fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait {
        if self.conditional_acquire(mode) {
            return AcquireOrWait::Acquired;
        }
        self.acquire(mode);
        // SAFETY: just acquired in `mode` by this thread.
        unsafe { self.release(mode) };
        AcquireOrWait::Waited
    }

    #[inline]
    unsafe fn release(&self, mode: Mode) {
        // SAFETY: the caller holds the lock in `mode` (our contract), which is lock_api's.
        unsafe {
            match mode {
                Mode::Shared => self.raw.unlock_shared(),
                Mode::Exclusive => self.raw.unlock_exclusive(),
            }
        }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        self.raw.is_locked()
    }

    #[inline]
    fn is_locked_exclusive(&self) -> bool {
        self.raw.is_locked_exclusive()
    }

    fn tranche(&self) -> Tranche {
        self.tranche
    }
}

impl Named for crate::RawAtomicLwLock {
    const NAME: &'static str = "atomic";
}

impl Named for crate::RawClassicLwLock {
    const NAME: &'static str = "classic";
}

#[cfg(feature = "parking_lot")]
impl Named for parking_lot::RawRwLock {
    const NAME: &'static str = "parking-lot";
}

/// parking_lot's reader-writer lock as a lock of the trait (feature `parking_lot`).
#[cfg(feature = "parking_lot")]
pub type ParkingLotLwLock = LockApiAdapter<parking_lot::RawRwLock>;
