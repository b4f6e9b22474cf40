//! `ReentrantMutex<T>`: `lock_api::ReentrantMutex` over [`RawMutex`](crate::RawMutex), with the
//! owning thread identified by its wait record. A variant beyond PostgreSQL (an LWLock is never
//! re-entered there: `LWLockAcquire` of a held lock self-deadlocks; `held_lwlocks` only lets
//! `LWLockHeldByMe` ask).
//!
//! # Thread ids from the wait records
//! lock_api's `GetThreadId` asks for a non-zero id unique to the calling thread among the threads
//! that may hold the mutex. A wait record ([`Proc`]) is owned by exactly one live thread at a time
//! and is returned to the free list only when that thread exits (`ProcKill`), so the record number
//! plus one serves: two live threads never share it. A number is reused only by a thread that
//! starts after the previous owner exited, the same reuse parking_lot's id (the address of a
//! thread-local) has; a guard cannot outlive its thread without `mem::forget`, and a forgotten
//! guard leaves the mutex locked either way.
//!
//! Asking for the id registers the thread's record on first use (once per thread, as the first
//! contended lock would). During thread-local destruction a thread whose record is already gone
//! gets the fallback record (see [`Proc::current`]), whose number differs: a reentrant hold
//! taken before the record's destruction and re-entered after it would wait for itself. That needs
//! a guard kept alive across the destruction of thread-locals (one stored in a thread-local);
//! re-entry inside one destructor is unaffected.

use crate::proc::Proc;
use crate::raw_mutex::RawMutex;
use std::num::NonZeroUsize;

/// The [`GetThreadId`](lock_api::GetThreadId) of [`ReentrantMutex`]: the calling thread's wait
/// record number plus one.
#[derive(Debug)]
pub struct RawThreadId;

// SAFETY: a record is owned by one live thread at a time (module docs), so no two threads that
// may hold the mutex at once get the same id; `number + 1` is never zero (numbers are below
// `u32::MAX`, which is `INVALID_PROC`).
unsafe impl lock_api::GetThreadId for RawThreadId {
    const INIT: Self = RawThreadId;

    #[inline]
    fn nonzero_thread_id(&self) -> NonZeroUsize {
        NonZeroUsize::new(Proc::current().number() as usize + 1).expect("record number + 1 > 0")
    }
}

/// A mutex the holding thread may lock again (each lock is one more count; the last guard's drop
/// unlocks). `const`-constructible. Guards are not `Send` (the hold belongs to the thread id) and
/// give only shared access (`&T`: use a `Cell`/`RefCell` inside).
pub type ReentrantMutex<T> = lock_api::ReentrantMutex<RawMutex, RawThreadId, T>;
/// The guard of [`ReentrantMutex`].
pub type ReentrantMutexGuard<'a, T> = lock_api::ReentrantMutexGuard<'a, RawMutex, RawThreadId, T>;
/// A [`ReentrantMutexGuard`] narrowed to a part of the data.
pub type MappedReentrantMutexGuard<'a, T> =
    lock_api::MappedReentrantMutexGuard<'a, RawMutex, RawThreadId, T>;
/// A guard that owns an `Arc` of the [`ReentrantMutex`] (feature `arc_lock`).
#[cfg(feature = "arc_lock")]
pub type ArcReentrantMutexGuard<T> = lock_api::ArcReentrantMutexGuard<RawMutex, RawThreadId, T>;

/// A `const` constructor for [`ReentrantMutex`] (parking_lot's `const_reentrant_mutex`).
pub const fn const_reentrant_mutex<T>(val: T) -> ReentrantMutex<T> {
    ReentrantMutex::const_new(RawMutex::new(), RawThreadId, val)
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::sync::Arc;

    static R: ReentrantMutex<RefCell<u32>> = const_reentrant_mutex(RefCell::new(0));

    #[test]
    fn reenters_on_one_thread_excludes_others() {
        let a = R.lock();
        let b = R.lock();
        *b.borrow_mut() += 1;
        assert_eq!(*a.borrow(), 1);
        let m = Arc::new(ReentrantMutex::new(()));
        let g = m.lock();
        let m2 = m.clone();
        let other = std::thread::spawn(move || m2.try_lock().is_none())
            .join()
            .unwrap();
        assert!(other, "another thread must not enter");
        drop(g);
        let m2 = m.clone();
        assert!(std::thread::spawn(move || m2.try_lock().is_some())
            .join()
            .unwrap());
    }

    #[test]
    fn ids_are_distinct_per_live_thread() {
        use lock_api::GetThreadId;
        let mine = RawThreadId.nonzero_thread_id();
        let theirs = std::thread::spawn(|| RawThreadId.nonzero_thread_id())
            .join()
            .unwrap();
        assert_ne!(mine, theirs);
        assert_eq!(mine, RawThreadId.nonzero_thread_id(), "stable on a thread");
    }
}
