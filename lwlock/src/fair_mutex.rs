//! `FairMutex<T>`: parking_lot's fair mutex, a [`Mutex`](crate::Mutex) whose every unlock is a
//! fair unlock. A variant beyond PostgreSQL (whose LWLocks always release by freeing the word and
//! waking, and never hand over).
//!
//! [`RawFairMutex`] wraps the raw mutex of the default [`Mutex`](crate::Mutex)
//! ([`RawMutex`](crate::RawMutex)) and forwards to it through lock_api's traits, except that
//! `unlock` is the wrapped mutex's `unlock_fair` (as parking_lot's `RawFairMutex` wraps its
//! `RawMutex`). So it adds no state and follows the default: its word, bit layout, invariants and
//! orderings are the wrapped mutex's; if the default mutex's raw type changes, the fair mutex
//! changes with it.
//!
//! # Policy
//! * **lock**: the wrapped mutex's `lock`: a free mutex is taken at once (one CAS on the atomic
//!   LWLock's word); a held one queues its wait record at the tail and sleeps.
//! * **unlock** (every guard drop, `unlocked`, `force_unlock`): the atomic LWLock's fair release.
//!   With no thread queued it frees the word, as a plain unlock does. With a thread queued it
//!   hands the lock to the queue head without freeing it: the head is granted the hold in the
//!   word before it is woken, so no newcomer (and not the unlocking thread, if it locks again at
//!   once) can take the mutex in between. Waiters are served in queue (FIFO) order, one hold
//!   each: a queued waiter's wait is bounded by the holds of the waiters ahead of it. One
//!   window remains: a thread that queues while an unlock has already found the queue empty (its
//!   relaxed test of `HAS_WAITERS`) is woken by that unlock's ordinary release and competes with
//!   newcomers, under the wrapped mutex's policy, as after any plain unlock; if it loses, it
//!   queues again and the next unlock hands it the mutex.
//! * **cost**: each handed-over unlock puts a wakeup of a sleeping thread on the critical path
//!   (the lock is held, idle, until the head runs): under contention a fair mutex passes the lock
//!   at the rate threads can be woken, far below a barging mutex's rate. Use it where bounded,
//!   ordered waits matter more than throughput; [`Mutex`](crate::Mutex) bounds starvation too,
//!   at a much lower cost.
//! * `try_lock`, `try_lock_for`/`try_lock_until` (a timed-out waiter dequeues itself) and `bump`
//!   are the wrapped mutex's.

use crate::raw_mutex::RawMutex;
use lock_api::{RawMutex as _, RawMutexFair, RawMutexTimed};

/// The raw fair mutex under [`FairMutex`] (parking_lot's `RawFairMutex`): the default
/// [`RawMutex`](crate::RawMutex) with every unlock a fair one (module docs). 16 bytes.
#[derive(Debug)]
pub struct RawFairMutex(RawMutex);

// SAFETY: every operation is the wrapped raw mutex's (its `lock_api::RawMutex` contract), and
// `unlock` is its `unlock_fair`, which lock_api's `RawMutexFair` contract defines as an unlock
// (the hold ends; the lock may be handed to a waiter, which then holds it). The guard marker is
// the wrapped mutex's.
unsafe impl lock_api::RawMutex for RawFairMutex {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = RawFairMutex(RawMutex::INIT);
    type GuardMarker = <RawMutex as lock_api::RawMutex>::GuardMarker;

    #[inline]
    fn lock(&self) {
        lock_api::RawMutex::lock(&self.0)
    }
    #[inline]
    fn try_lock(&self) -> bool {
        lock_api::RawMutex::try_lock(&self.0)
    }
    #[inline]
    unsafe fn unlock(&self) {
        // SAFETY: lock_api's contract: the mutex is held, so the wrapped one is.
        unsafe { RawMutexFair::unlock_fair(&self.0) }
    }
    #[inline]
    fn is_locked(&self) -> bool {
        lock_api::RawMutex::is_locked(&self.0)
    }
}

// SAFETY: forwards to the wrapped mutex's `RawMutexFair` impl, whose contract is the same.
unsafe impl lock_api::RawMutexFair for RawFairMutex {
    #[inline]
    unsafe fn unlock_fair(&self) {
        // SAFETY: the mutex is held (lock_api's contract), so the wrapped one is.
        unsafe { RawMutexFair::unlock_fair(&self.0) }
    }
    #[inline]
    unsafe fn bump(&self) {
        // SAFETY: as above; held again on return.
        unsafe { RawMutexFair::bump(&self.0) }
    }
}

// SAFETY: forwards to the wrapped mutex's `RawMutexTimed` impl: `true` means held.
unsafe impl lock_api::RawMutexTimed for RawFairMutex {
    type Duration = <RawMutex as lock_api::RawMutexTimed>::Duration;
    type Instant = <RawMutex as lock_api::RawMutexTimed>::Instant;

    #[inline]
    fn try_lock_for(&self, timeout: Self::Duration) -> bool {
        RawMutexTimed::try_lock_for(&self.0, timeout)
    }
    #[inline]
    fn try_lock_until(&self, timeout: Self::Instant) -> bool {
        RawMutexTimed::try_lock_until(&self.0, timeout)
    }
}

/// A mutual-exclusion lock whose every unlock is fair (parking_lot's `FairMutex`):
/// `const`-constructible, with [`Mutex`](crate::Mutex)'s API.
///
/// **Fairness:** a newcomer takes a free mutex at once; an unlock that finds threads queued hands
/// the mutex to the first of them (FIFO), so a queued thread is not overtaken by newcomers (the
/// one window, a thread queueing during an unlock that found the queue empty: module docs).
/// Each handover wakes a sleeping thread while the lock waits for it: slow under contention.
/// Guards are `Send`, as [`MutexGuard`](crate::MutexGuard)s.
///
/// ```
/// use lwlock::FairMutex;
/// static LOG: FairMutex<Vec<u32>> = FairMutex::new(Vec::new());
/// LOG.lock().push(1);
/// assert_eq!(*LOG.lock(), [1]);
/// ```
pub type FairMutex<T> = lock_api::Mutex<RawFairMutex, T>;
/// The guard of [`FairMutex`]; its drop is a fair unlock.
pub type FairMutexGuard<'a, T> = lock_api::MutexGuard<'a, RawFairMutex, T>;
/// A [`FairMutexGuard`] narrowed to a part of the data (`FairMutexGuard::map`).
pub type MappedFairMutexGuard<'a, T> = lock_api::MappedMutexGuard<'a, RawFairMutex, T>;
/// A guard that owns an `Arc` of the [`FairMutex`] (`FairMutex::lock_arc`; feature `arc_lock`).
#[cfg(feature = "arc_lock")]
pub type ArcFairMutexGuard<T> = lock_api::ArcMutexGuard<RawFairMutex, T>;

/// A `const` constructor for [`FairMutex`] (parking_lot's `const_fair_mutex`).
pub const fn const_fair_mutex<T>(val: T) -> FairMutex<T> {
    FairMutex::const_new(RawFairMutex::INIT, val)
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    static CONST: FairMutex<[u8; 2]> = const_fair_mutex([1, 2]);

    #[test]
    fn const_guards_and_mapping() {
        let g = CONST.lock();
        assert!(CONST.try_lock().is_none());
        let mut m = FairMutexGuard::map(g, |a| &mut a[0]);
        *m = 9;
        drop(m);
        assert!(!CONST.is_locked());
        assert_eq!(*CONST.lock(), [9, 2]);
        if cfg!(not(feature = "stats")) {
            assert!(std::mem::size_of::<RawFairMutex>() <= 16);
        }
    }
}
