//! The drop-in `Mutex<T>`: `lock_api::Mutex` (the 0.4 line, which parking_lot 0.12 uses) over the
//! exclusive path of the atomic-state LWLock. A variant beyond PostgreSQL, which has no mutex
//! type: an LWLock that is only ever taken `LW_EXCLUSIVE` is PostgreSQL's mutex.
//!
//! [`AtomicLwMutex`] is [`AtomicLwLock`] restricted to [`Mode::Exclusive`]: `lock` is
//! `LWLockAcquire(LW_EXCLUSIVE)`, `try_lock` is `LWLockConditionalAcquire(LW_EXCLUSIVE)`,
//! `unlock` is `LWLockRelease`. It adds no state: the word, its bit layout, invariants and
//! orderings are the atomic LWLock's (`atomic_state/`). [`RawMutex`] (under [`Mutex`]) has the
//! drop-in `RwLock`'s policy ([`EmptyYield`]: bounded spinning that an idle CPU's yield ends,
//! barging, a 250 µs starvation bound), [`RawAdaptiveMutex`] (under [`AdaptiveMutex`]) the same
//! spin without the empty-yield rule ([`Adaptive`], the default before), [`RawHandoffMutex`]
//! (under [`HandoffMutex`]) the bound without the spinning ([`Handoff`], the default before
//! that), [`RawBargingMutex`] (under [`BargingMutex`]) PostgreSQL's ([`Barging`]). An
//! uncontended lock is one CAS on the word (free → `VAL_EXCLUSIVE`), an unlock one `fetch_sub`
//! that wakes only when `HAS_WAITERS` and `RELEASE_OK` are set and the lock became free (under
//! the spinning policies, [`Adaptive`] and [`EmptyYield`], also with `RELEASE_OK` clear, once
//! the wake pass that cleared it is about 50 µs old).
//!
//! ```
//! use lwlock::Mutex;
//! static HITS: Mutex<u64> = Mutex::new(0);
//! *HITS.lock() += 1;
//! assert_eq!(*HITS.lock(), 1);
//! ```

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

/// The raw mutex under [`Mutex`]: the empty-yield policy ([`EmptyYield`]: a bounded spin before
/// queueing that a yield finding the CPU idle ends, barging, a 250 µs starvation bound for a
/// queued locker).
pub type RawMutex = AtomicLwMutex<EmptyYield>;
/// The raw mutex under [`AdaptiveMutex`]: the spin without the empty-yield rule ([`Adaptive`]).
pub type RawAdaptiveMutex = AtomicLwMutex<Adaptive>;
/// The raw mutex under [`HandoffMutex`]: bounded starvation without spinning ([`Handoff`]).
pub type RawHandoffMutex = AtomicLwMutex<Handoff>;
/// The raw mutex under [`BargingMutex`]: PostgreSQL's policy unchanged ([`Barging`]).
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

/// A mutual-exclusion lock over the atomic-state LWLock's exclusive mode, `const`-constructible,
/// with parking_lot's API (`lock`, `try_lock`, `try_lock_for`, `try_lock_until`, `get_mut`,
/// `into_inner`, `data_ptr`, `force_unlock`, `force_unlock_fair`, guards that map, `unlock_fair`,
/// `unlocked_fair`, `bump`, `lock_arc` with feature `arc_lock`).
///
/// Guards are `Send` (an LWLock hold is not tied to a thread; parking_lot's are not `Send` unless
/// its `send_guard` feature is on) and `Sync` when `T: Sync`.
///
/// **What a locker does when the mutex is held:** it spins a bounded while (3 rounds of 2, 4, 8
/// PAUSEs, then up to 7 yields; only while nobody is queued and no handoff is pending; a yield
/// that comes back within 2 µs, with nothing else to run on its CPU, ends the spin), then
/// queues and sleeps. An unlock frees the mutex and wakes the first queued waiter, which
/// competes with newcomers (barging) and queues again if it loses. **Starvation bound:** a waiter
/// still queued 250 µs after it first queued sets the handoff bit (unless a waiter ahead of it
/// owns it or is queued first): newcomers then queue behind it and the release wakes it. Cost on
/// the word: one CAS to lock, one `fetch_sub` to unlock, plain loads while spinning. See
/// [`AtomicLwMutex`] and the [`EmptyYield`] policy; [`AdaptiveMutex`] is the spin without the
/// empty-yield rule, [`HandoffMutex`] the bound without the spin,
/// [`BargingMutex`] PostgreSQL's policy unchanged.
#[cfg(not(loom))]
pub type Mutex<T> = lock_api::Mutex<RawMutex, T>;
/// The guard of [`Mutex`]; unlocks on drop.
#[cfg(not(loom))]
pub type MutexGuard<'a, T> = lock_api::MutexGuard<'a, RawMutex, T>;
/// A [`MutexGuard`] narrowed to a part of the data (`MutexGuard::map`).
#[cfg(not(loom))]
pub type MappedMutexGuard<'a, T> = lock_api::MappedMutexGuard<'a, RawMutex, T>;
/// A guard that owns an `Arc` of the [`Mutex`] (`Mutex::lock_arc`; feature `arc_lock`).
#[cfg(all(not(loom), feature = "arc_lock"))]
pub type ArcMutexGuard<T> = lock_api::ArcMutexGuard<RawMutex, T>;

/// [`Mutex`] without the empty-yield rule ([`RawAdaptiveMutex`]; `lwlock::Mutex` before it): the
/// spin always runs its rounds. Same API as [`Mutex`].
#[cfg(not(loom))]
pub type AdaptiveMutex<T> = lock_api::Mutex<RawAdaptiveMutex, T>;
/// The guard of [`AdaptiveMutex`].
#[cfg(not(loom))]
pub type AdaptiveMutexGuard<'a, T> = lock_api::MutexGuard<'a, RawAdaptiveMutex, T>;

/// A mutex with the 250 µs bound and no spinning ([`RawHandoffMutex`]; `lwlock::Mutex` before
/// the spinning policies). Same API as [`Mutex`].
#[cfg(not(loom))]
pub type HandoffMutex<T> = lock_api::Mutex<RawHandoffMutex, T>;
/// The guard of [`HandoffMutex`].
#[cfg(not(loom))]
pub type HandoffMutexGuard<'a, T> = lock_api::MutexGuard<'a, RawHandoffMutex, T>;

/// A mutex over PostgreSQL's policy unchanged ([`RawBargingMutex`]): a waiter may be overtaken
/// by newcomers indefinitely. Same API as [`Mutex`].
#[cfg(not(loom))]
pub type BargingMutex<T> = lock_api::Mutex<RawBargingMutex, T>;
/// The guard of [`BargingMutex`].
#[cfg(not(loom))]
pub type BargingMutexGuard<'a, T> = lock_api::MutexGuard<'a, RawBargingMutex, T>;
/// A [`BargingMutexGuard`] narrowed to a part of the data.
#[cfg(not(loom))]
pub type MappedBargingMutexGuard<'a, T> = lock_api::MappedMutexGuard<'a, RawBargingMutex, T>;
/// A guard that owns an `Arc` of the [`BargingMutex`] (feature `arc_lock`).
#[cfg(all(not(loom), feature = "arc_lock"))]
pub type ArcBargingMutexGuard<T> = lock_api::ArcMutexGuard<RawBargingMutex, T>;

/// A `const` constructor for [`Mutex`] (parking_lot's `const_mutex`).
#[cfg(not(loom))]
pub const fn const_mutex<T>(val: T) -> Mutex<T> {
    Mutex::const_new(RawMutex::new(), val)
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use std::sync::Arc;

    static GLOBAL: Mutex<u64> = Mutex::new(0);
    static CONST: Mutex<[u8; 2]> = const_mutex([1, 2]);

    #[test]
    fn statics_guards_and_mapping() {
        *GLOBAL.lock() += 1;
        assert_eq!(*GLOBAL.lock(), 1);
        let g = CONST.lock();
        assert!(CONST.try_lock().is_none());
        assert!(CONST.is_locked());
        let mut m = MutexGuard::map(g, |a| &mut a[1]);
        *m = 5;
        drop(m);
        assert!(!CONST.is_locked());
        assert_eq!(*CONST.lock(), [1, 5]);
        if cfg!(not(feature = "stats")) {
            assert!(std::mem::size_of::<RawMutex>() <= 16);
        }
    }

    #[test]
    fn guard_is_send_and_unlocks_on_another_thread() {
        static M: Mutex<u32> = Mutex::new(0);
        let g = M.lock();
        fn is_send<T: Send>(_: &T) {}
        is_send(&g);
        let t = std::thread::spawn(move || drop(g));
        t.join().unwrap();
        assert!(M.try_lock().is_some());
    }

    #[test]
    fn timed_lock_times_out_and_fair_unlock_hands_over() {
        static M: Mutex<u32> = Mutex::new(0);
        // SAFETY: only the state word is read.
        let raw = unsafe { M.raw() }.lwlock();
        let g = M.lock();
        let t = std::thread::spawn(|| {
            M.try_lock_for(std::time::Duration::from_millis(5))
                .is_none()
        });
        assert!(t.join().unwrap(), "a held mutex must time out");
        assert_eq!(
            raw.state() & crate::layout::HAS_WAITERS,
            0,
            "the timed-out waiter dequeued"
        );
        // A waiter queued behind us gets the mutex from a fair unlock.
        let t = std::thread::spawn(|| *M.lock() += 1);
        while raw.state() & crate::layout::HAS_WAITERS == 0 {
            std::thread::yield_now();
        }
        MutexGuard::unlock_fair(g);
        t.join().unwrap();
        assert_eq!(*M.lock(), 1);
        assert!(M.try_lock_until(std::time::Instant::now()).is_some());
    }

    #[test]
    fn contended_counter() {
        let m = Arc::new(Mutex::new(0u64));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let m = m.clone();
                std::thread::spawn(move || {
                    for _ in 0..2000 {
                        *m.lock() += 1;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*m.lock(), 8000);
    }
}
