//! The read and write guards of every group lock, and what each hold's release does per policy:
//! a plain release (leader; holder-serves shared releases), drain then release then re-check
//! (last releaser), drain while holding then release (holder serves). Under the last-releaser
//! policies a new reader that finds operations queued drains them first. Also the direct
//! attempt every group operation starts with (run at once if the lock is free).
//!
//! The `instructions(n)` calls announce the release build's instruction counts of these
//! uncontended paths beyond the wrapped lock's own (coarse, per path; the lock's are announced by
//! the lock) to the simulator and compile to nothing outside `--cfg lwsim`; the counts and how
//! they were taken: the design document's simulator section, "Instruction time".
//!
//! Mirrors `LWLockAcquire` / `LWLockConditionalAcquire` / `LWLockRelease` of the lock a group
//! protects, and, under the last-releaser policies, the 2011 FlexLock design's rule that "the
//! final releaser applies all pending clears before anyone can take a new snapshot".

use super::config::GroupPolicy;
use super::core::{Core, Deferred, Mine};
use crate::stats::Stat;
use lwlock::sync::instructions;
use lwlock::{Mode, RawLwLock, INVALID_PROC};
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::panic::{catch_unwind, AssertUnwindSafe};

impl<L: RawLwLock, T> Core<L, T> {
    pub(crate) fn read(&self) -> FlexReadGuard<'_, L, T> {
        instructions(10); // the call and the policy test
        if self.policy == GroupPolicy::LastReleaser && self.list.head() != INVALID_PROC {
            // Queued operations go before a new reader (the 2011 design): drain them first.
            drop(self.write());
        }
        self.raw.acquire(Mode::Shared);
        FlexReadGuard {
            core: self,
            _not_send: PhantomData,
        }
    }

    pub(crate) fn try_read(&self) -> Option<FlexReadGuard<'_, L, T>> {
        if self.policy == GroupPolicy::LastReleaser && self.list.head() != INVALID_PROC {
            return None;
        }
        // Not `then_some`: its argument, a guard, would be built (and dropped, releasing a hold
        // never taken) when the acquire fails.
        if !self.raw.conditional_acquire(Mode::Shared) {
            return None;
        }
        Some(FlexReadGuard {
            core: self,
            _not_send: PhantomData,
        })
    }

    pub(crate) fn write(&self) -> FlexWriteGuard<'_, L, T> {
        self.raw.acquire(Mode::Exclusive);
        self.bump(Stat::ExclusiveAcquires);
        FlexWriteGuard {
            core: self,
            _not_send: PhantomData,
        }
    }

    pub(crate) fn try_write(&self) -> Option<FlexWriteGuard<'_, L, T>> {
        if !self.raw.conditional_acquire(Mode::Exclusive) {
            return None;
        }
        self.bump(Stat::ExclusiveAcquires);
        Some(FlexWriteGuard {
            core: self,
            _not_send: PhantomData,
        })
    }

    /// Releases an exclusive hold (LastReleaser: after draining the queue).
    ///
    /// # Safety
    /// The calling thread holds the lock exclusively (through a guard being dropped).
    #[inline]
    unsafe fn release_exclusive(&self) {
        // Holder-serves with an empty queue (the uncontended case): a plain release; the
        // drain's load of the head is this one.
        instructions(9); // the guard's drop and the policy tests
        if self.policy == GroupPolicy::Leader
            || (self.holder_serves && self.list.head() == INVALID_PROC)
        {
            if self.holder_serves {
                instructions(4);
            }
            // SAFETY: forwarded caller contract.
            unsafe { self.release_plain(Mode::Exclusive) };
            return;
        }
        if !self.holder_serves && self.list.head() == INVALID_PROC {
            // Last releaser, nothing queued before the release: what the drain would do with
            // an empty chain (release, then the releaser half of the handshake), without
            // entering it. Same protocol, fewer instructions.
            let mut deferred = Deferred::default();
            instructions(4);
            // SAFETY: the caller holds it exclusively. An unwinding release gave the hold up
            // (trait rule), so the re-check is still owed.
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| unsafe {
                self.raw.release(Mode::Exclusive)
            })) {
                deferred.keep(p);
            }
            self.recheck_after_release(INVALID_PROC, &mut deferred);
            deferred.raise();
            instructions(21); // the panic test and the returns
            return;
        }
        // SAFETY: forwarded caller contract.
        unsafe { self.release_exclusive_drain() }
    }

    /// `L::release(mode)`, an unwind caught so that a release unwinding while a guard is dropped
    /// during another panic does not abort the process (`raise` drops it then); otherwise it
    /// propagates as before.
    ///
    /// # Safety
    /// The calling thread holds the lock in `mode`.
    #[inline]
    unsafe fn release_plain(&self, mode: Mode) {
        let mut deferred = Deferred::default();
        // SAFETY: the caller holds it in `mode`.
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| unsafe { self.raw.release(mode) })) {
            deferred.keep(p);
        }
        deferred.raise();
        instructions(18); // the panic test and the returns
    }

    /// [`release_exclusive`](Self::release_exclusive) for the last-releaser protocols.
    ///
    /// # Safety
    /// The calling thread holds the lock exclusively.
    #[inline(never)]
    unsafe fn release_exclusive_drain(&self) {
        match self.policy {
            GroupPolicy::Leader => unreachable!("flexlock: the leader policy releases plainly"),
            GroupPolicy::LastReleaser => {
                let mut deferred = Deferred::default();
                // SAFETY: the caller holds it exclusively; a thread releasing a guard is not on the
                // queue (it is not inside `group`), so its own operation cannot be met.
                let mine = unsafe {
                    self.drain_release(
                        INVALID_PROC,
                        INVALID_PROC,
                        &mut deferred,
                        !self.holder_serves,
                    )
                };
                debug_assert_eq!(mine, Mine::NotSeen);
                deferred.raise();
            }
        }
    }

    /// Releases a shared hold (LastReleaser: then drains, if the lock is free and ops are queued).
    ///
    /// # Safety
    /// The calling thread holds the lock shared.
    unsafe fn release_shared(&self) {
        // Holder-serves: a shared release owes the queue nothing (its submitters wait for the
        // lock in `L`'s own queue, which `L`'s release wakes), so it is a plain release.
        instructions(14); // the guard's drop, the policy tests, the deferred panic's slot
        let policy = if self.holder_serves {
            GroupPolicy::Leader
        } else {
            self.policy
        };
        match policy {
            GroupPolicy::Leader => {
                let mut deferred = Deferred::default();
                // SAFETY: the caller holds it shared (caught as in `release_exclusive`).
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| unsafe {
                    self.raw.release(Mode::Shared)
                })) {
                    deferred.keep(p);
                }
                deferred.raise();
            }
            GroupPolicy::LastReleaser => {
                let mut deferred = Deferred::default();
                // SAFETY: the caller holds it shared. An unwinding release gave the hold up
                // (trait rule), so the re-check below is still owed to queued submitters.
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| unsafe {
                    self.raw.release(Mode::Shared)
                })) {
                    deferred.keep(p);
                }
                self.recheck_after_release(INVALID_PROC, &mut deferred);
                deferred.raise();
            }
        }
        instructions(20); // the panic test and the returns
    }

    /// Runs `f` at once if the lock can be had exclusively without waiting. The release goes
    /// through the policy (LastReleaser drains), also if `f` panics.
    pub(super) fn try_direct<R, F: FnOnce(&mut T) -> R>(&self, f: F) -> Result<R, F> {
        instructions(9); // the group call's entry, up to the conditional acquire
        let Some(guard) = self.try_write() else {
            return Err(f);
        };
        self.bump(Stat::OpsBySelf);
        // SAFETY: `guard` holds the lock exclusively until after this closure (if `f` panics, the
        // guard is dropped while unwinding, after the closure's frame is gone).
        let r = self.data.with_mut(move |data| f(unsafe { &mut *data }));
        drop(guard);
        instructions(6); // the group call's return
        Ok(r)
    }
}

/// A shared hold of a [`crate::FlexLock`], [`crate::HolderServesLock`] or
/// [`crate::ClogGroupLock`].
#[must_use = "the lock is released when the guard is dropped"]
pub struct FlexReadGuard<'a, L: RawLwLock, T> {
    core: &'a Core<L, T>,
    /// Released on the thread that acquired it.
    _not_send: PhantomData<*const ()>,
}

// SAFETY: a shared guard only hands out `&T`.
unsafe impl<L: RawLwLock, T: Sync> Sync for FlexReadGuard<'_, L, T> {}

impl<L: RawLwLock, T> Deref for FlexReadGuard<'_, L, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the lock is held shared for the guard's life: no `&mut T` exists meanwhile.
        unsafe { &*self.core.data_ptr_shared() }
    }
}

impl<L: RawLwLock, T> Drop for FlexReadGuard<'_, L, T> {
    fn drop(&mut self) {
        // SAFETY: this guard holds the lock shared.
        unsafe { self.core.release_shared() }
    }
}

impl<L: RawLwLock, T: std::fmt::Debug> std::fmt::Debug for FlexReadGuard<'_, L, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

/// An exclusive hold of a [`crate::FlexLock`], [`crate::HolderServesLock`] or
/// [`crate::ClogGroupLock`].
#[must_use = "the lock is released when the guard is dropped"]
pub struct FlexWriteGuard<'a, L: RawLwLock, T> {
    core: &'a Core<L, T>,
    /// Released on the thread that acquired it.
    _not_send: PhantomData<*const ()>,
}

// SAFETY: `&FlexWriteGuard` only hands out `&T`.
unsafe impl<L: RawLwLock, T: Sync> Sync for FlexWriteGuard<'_, L, T> {}

impl<L: RawLwLock, T> Deref for FlexWriteGuard<'_, L, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the lock is held exclusively for the guard's life.
        unsafe { &*self.core.data_ptr() }
    }
}

impl<L: RawLwLock, T> DerefMut for FlexWriteGuard<'_, L, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the lock is held exclusively for the guard's life, and `&mut self` makes this
        // the only reference derived from the guard.
        unsafe { &mut *self.core.data_ptr() }
    }
}

impl<L: RawLwLock, T> Drop for FlexWriteGuard<'_, L, T> {
    fn drop(&mut self) {
        // SAFETY: this guard holds the lock exclusively.
        unsafe { self.core.release_exclusive() }
    }
}

impl<L: RawLwLock, T: std::fmt::Debug> std::fmt::Debug for FlexWriteGuard<'_, L, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}
