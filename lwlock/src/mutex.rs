//! The drop-in `Mutex<T>`: `lock_api::Mutex` (the 0.4 line, which parking_lot 0.12 uses) over the
//! raw mutex of `raw_mutex.rs` ([`AtomicLwMutex`], the exclusive path of the atomic-state
//! LWLock), one type per policy, with its guards. Not under loom (lock_api's `const_new` needs
//! a `const fn`): the whole module is absent there.
//!
//! ```
//! use lwlock::Mutex;
//! static HITS: Mutex<u64> = Mutex::new(0);
//! *HITS.lock() += 1;
//! assert_eq!(*HITS.lock(), 1);
//! ```

use crate::raw_mutex::{RawAdaptiveMutex, RawBargingMutex, RawHandoffMutex, RawMutex};
#[allow(unused_imports)] // rustdoc links
use crate::{AtomicLwMutex, EmptyYield};

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
pub type Mutex<T> = lock_api::Mutex<RawMutex, T>;
/// The guard of [`Mutex`]; unlocks on drop.
pub type MutexGuard<'a, T> = lock_api::MutexGuard<'a, RawMutex, T>;
/// A [`MutexGuard`] narrowed to a part of the data (`MutexGuard::map`).
pub type MappedMutexGuard<'a, T> = lock_api::MappedMutexGuard<'a, RawMutex, T>;
/// A guard that owns an `Arc` of the [`Mutex`] (`Mutex::lock_arc`; feature `arc_lock`).
#[cfg(feature = "arc_lock")]
pub type ArcMutexGuard<T> = lock_api::ArcMutexGuard<RawMutex, T>;

/// [`Mutex`] without the empty-yield rule ([`RawAdaptiveMutex`]; `lwlock::Mutex` before it): the
/// spin always runs its rounds. Same API as [`Mutex`].
pub type AdaptiveMutex<T> = lock_api::Mutex<RawAdaptiveMutex, T>;
/// The guard of [`AdaptiveMutex`].
pub type AdaptiveMutexGuard<'a, T> = lock_api::MutexGuard<'a, RawAdaptiveMutex, T>;

/// A mutex with the 250 µs bound and no spinning ([`RawHandoffMutex`]; `lwlock::Mutex` before
/// the spinning policies). Same API as [`Mutex`].
pub type HandoffMutex<T> = lock_api::Mutex<RawHandoffMutex, T>;
/// The guard of [`HandoffMutex`].
pub type HandoffMutexGuard<'a, T> = lock_api::MutexGuard<'a, RawHandoffMutex, T>;

/// A mutex over PostgreSQL's policy unchanged ([`RawBargingMutex`]): a waiter may be overtaken
/// by newcomers indefinitely. Same API as [`Mutex`].
pub type BargingMutex<T> = lock_api::Mutex<RawBargingMutex, T>;
/// The guard of [`BargingMutex`].
pub type BargingMutexGuard<'a, T> = lock_api::MutexGuard<'a, RawBargingMutex, T>;
/// A [`BargingMutexGuard`] narrowed to a part of the data.
pub type MappedBargingMutexGuard<'a, T> = lock_api::MappedMutexGuard<'a, RawBargingMutex, T>;
/// A guard that owns an `Arc` of the [`BargingMutex`] (feature `arc_lock`).
#[cfg(feature = "arc_lock")]
pub type ArcBargingMutexGuard<T> = lock_api::ArcMutexGuard<RawBargingMutex, T>;

/// A `const` constructor for [`Mutex`] (parking_lot's `const_mutex`).
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
