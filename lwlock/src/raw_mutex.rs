//! The raw mutex: [`AtomicLwMutex`], the atomic-state LWLock used only exclusively, under each
//! policy ([`RawMutex`], [`RawAdaptiveMutex`], [`RawHandoffMutex`], [`RawBargingMutex`]), and its
//! lock_api traits. A variant beyond PostgreSQL, which has no mutex type: an LWLock that is only
//! ever taken `LW_EXCLUSIVE` is PostgreSQL's mutex. The `Mutex<T>` types over it are in
//! `mutex.rs`.
//!
//! [`AtomicLwMutex`] is [`AtomicLwLock`] restricted to [`Mode::Exclusive`]: `lock` is
//! `LWLockAcquire(LW_EXCLUSIVE)`, `try_lock` is `LWLockConditionalAcquire(LW_EXCLUSIVE)`,
//! `unlock` is `LWLockRelease`. It adds no state: the word, its bit layout, invariants and
//! orderings are the atomic LWLock's (`atomic_state/`). [`RawMutex`] (under `Mutex`) has the
//! drop-in `RwLock`'s policy ([`EmptyYield`]: bounded spinning that an idle CPU's yield ends,
//! barging, a 250 µs starvation bound), [`RawAdaptiveMutex`] (under `AdaptiveMutex`) the same
//! spin without the empty-yield rule ([`Adaptive`], the default before), [`RawHandoffMutex`]
//! (under `HandoffMutex`) the bound without the spinning ([`Handoff`], the default before
//! that), [`RawBargingMutex`] (under `BargingMutex`) PostgreSQL's ([`Barging`]). An
//! uncontended lock is one CAS on the word (free → `VAL_EXCLUSIVE`), an unlock one `fetch_sub`
//! that wakes only when `HAS_WAITERS` and `RELEASE_OK` are set and the lock became free (under
//! the spinning policies, [`Adaptive`] and [`EmptyYield`], also with `RELEASE_OK` clear, once
//! the wake pass that cleared it is about 50 µs old).

#[cfg(not(loom))]
use crate::Tranche;
use crate::{Adaptive, AtomicLwLock, Barging, EmptyYield, Handoff, Mode, Policy, RawLwLock};

/// A raw mutex: the atomic-state LWLock under policy `P`, used only exclusively. 16 bytes.
///
/// # Fairness
/// The LWLock's, per policy. All: an unlock frees the lock and then wakes the first queued
/// waiter (and inhibits further wakeups until it has run, `RELEASE_OK`; under [`Adaptive`] for
/// about 50 µs at most); the woken thread
/// competes with newcomers, which may take the lock first (barging), and re-queues at the tail if
/// it loses. With [`Barging`] (PostgreSQL's policy, [`RawBargingMutex`]) that is all: a waiter is
/// not guaranteed to make progress while newcomers keep arriving (the 2002
/// throughput-over-fairness trade-off). With [`Handoff`] ([`RawHandoffMutex`]) the first
/// queued waiter that has waited 250 µs sets the lock's handoff bit: newcomers then queue behind
/// it and the release that frees the lock wakes it, so a waiter's wait is bounded (parking_lot's
/// eventual fairness in spirit; parking_lot hands over every 0.5 ms on average). Under both,
/// `unlock_fair` (and `bump`) hand the mutex to the first queued waiter instead of freeing it,
/// so no newcomer can take it in between, and `try_lock_for`/`try_lock_until` wait with a
/// deadline and dequeue themselves when it passes (`LWLockDequeueSelf`).
#[derive(Debug)]
pub struct AtomicLwMutex<P: Policy> {
    lock: AtomicLwLock<P>,
}

/// The raw mutex under [`Mutex`](crate::Mutex): the empty-yield policy ([`EmptyYield`]: a bounded spin before
/// queueing that a yield finding the CPU idle ends, barging, a 250 µs starvation bound for a
/// queued locker).
pub type RawMutex = AtomicLwMutex<EmptyYield>;
/// The raw mutex under [`AdaptiveMutex`](crate::AdaptiveMutex): the spin without the empty-yield rule ([`Adaptive`]).
pub type RawAdaptiveMutex = AtomicLwMutex<Adaptive>;
/// The raw mutex under [`HandoffMutex`](crate::HandoffMutex): bounded starvation without spinning ([`Handoff`]).
pub type RawHandoffMutex = AtomicLwMutex<Handoff>;
/// The raw mutex under [`BargingMutex`](crate::BargingMutex): PostgreSQL's policy unchanged ([`Barging`]).
pub type RawBargingMutex = AtomicLwMutex<Barging>;

impl<P: Policy> AtomicLwMutex<P> {
    /// A free mutex reporting its waits under the default tranche.
    #[cfg(not(loom))]
    pub const fn new() -> Self {
        Self::new_in(Tranche::DEFAULT)
    }

    /// A free mutex reporting its waits under `tranche`.
    #[cfg(not(loom))]
    pub const fn new_in(tranche: Tranche) -> Self {
        AtomicLwMutex {
            lock: AtomicLwLock::new_in(tranche),
        }
    }

    /// A free mutex in the default tranche.
    #[cfg(loom)]
    #[allow(clippy::new_without_default)] // `Default` exists outside loom only
    pub fn new() -> Self {
        AtomicLwMutex {
            lock: AtomicLwLock::new(),
        }
    }

    /// The LWLock underneath (its state word, tranche and statistics).
    pub fn lwlock(&self) -> &AtomicLwLock<P> {
        &self.lock
    }

    /// `LWLockAcquire(LW_EXCLUSIVE)`: blocks until the mutex is held by the caller.
    #[inline]
    pub fn lock(&self) {
        self.lock.acquire(Mode::Exclusive);
    }

    /// `LWLockConditionalAcquire(LW_EXCLUSIVE)`: takes the mutex if it is free; never blocks.
    #[inline]
    pub fn try_lock(&self) -> bool {
        self.lock.conditional_acquire(Mode::Exclusive)
    }

    /// `LWLockRelease`.
    ///
    /// # Safety
    /// The mutex is held (by this thread or by one whose guard was sent here).
    #[inline]
    pub unsafe fn unlock(&self) {
        // SAFETY: the caller holds the mutex, which is the LWLock held exclusively.
        unsafe { self.lock.release(Mode::Exclusive) }
    }

    /// Whether some thread holds the mutex (one relaxed load).
    #[inline]
    pub fn is_locked(&self) -> bool {
        self.lock.is_locked_exclusive()
    }
}

#[cfg(not(loom))]
impl<P: Policy> Default for AtomicLwMutex<P> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(not(loom))]
// SAFETY: mutual exclusion, Acquire on lock and Release on unlock are the atomic LWLock's
// exclusive mode (its `RawLwLock` contract); `try_lock` never blocks; an unwinding lock holds
// nothing. Guards may be sent: an LWLock hold is not tied to the acquiring thread.
unsafe impl<P: Policy> lock_api::RawMutex for AtomicLwMutex<P> {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = AtomicLwMutex::new();
    type GuardMarker = lock_api::GuardSend;

    #[inline]
    fn lock(&self) {
        AtomicLwMutex::lock(self)
    }
    #[inline]
    fn try_lock(&self) -> bool {
        AtomicLwMutex::try_lock(self)
    }
    #[inline]
    unsafe fn unlock(&self) {
        // SAFETY: lock_api's contract: the mutex is held.
        unsafe { AtomicLwMutex::unlock(self) }
    }
    #[inline]
    fn is_locked(&self) -> bool {
        AtomicLwMutex::is_locked(self)
    }
}

#[cfg(not(loom))]
// SAFETY: forwards to the atomic LWLock's fair exclusive release and bump (its
// `lock_api::RawRwLockFair` impl), whose contract is lock_api's: a fair unlock releases the hold
// (handing the lock to the queue head if one waits), a bump returns with the lock held again.
unsafe impl<P: Policy> lock_api::RawMutexFair for AtomicLwMutex<P> {
    #[inline]
    unsafe fn unlock_fair(&self) {
        // SAFETY: the mutex is held (lock_api's contract), i.e. the LWLock exclusively.
        unsafe { lock_api::RawRwLockFair::unlock_exclusive_fair(&self.lock) }
    }
    #[inline]
    unsafe fn bump(&self) {
        // SAFETY: as above; held again on return.
        unsafe { lock_api::RawRwLockFair::bump_exclusive(&self.lock) }
    }
}

#[cfg(not(loom))]
// SAFETY: forwards to the atomic LWLock's timed exclusive acquire (its `lock_api::RawRwLockTimed`
// impl): `true` means held exclusively; a timed-out waiter has dequeued itself and holds nothing.
unsafe impl<P: Policy> lock_api::RawMutexTimed for AtomicLwMutex<P> {
    type Duration = std::time::Duration;
    type Instant = std::time::Instant;

    #[inline]
    fn try_lock_for(&self, timeout: Self::Duration) -> bool {
        lock_api::RawRwLockTimed::try_lock_exclusive_for(&self.lock, timeout)
    }
    #[inline]
    fn try_lock_until(&self, timeout: Self::Instant) -> bool {
        lock_api::RawRwLockTimed::try_lock_exclusive_until(&self.lock, timeout)
    }
}
