//! parking_lot's `deadlock` module (feature `deadlock_detection`, the same name as
//! parking_lot's): **a documented no-op**. [`check_deadlock`] always returns an empty list; it
//! detects nothing.
//!
//! The module exists so that a crate switching from parking_lot with `deadlock_detection` on
//! (typically a background thread that calls `check_deadlock` every few seconds and logs what it
//! finds) compiles unchanged. It does not find deadlocks: parking_lot's detector records, per
//! thread, every lock it holds (a hook in each acquire and release) and builds a wait graph of
//! parked threads and held locks. lwlock's locks record no holders: an LWLock hold is a count in
//! the lock word, not tied to a thread (guards are `Send`), so there is no graph to build without
//! adding a per-acquire cost to every lock. What lwlock offers instead is the waiting side:
//! [`sample_waits`](crate::sample_waits) lists every live thread's current wait (the lock's
//! tranche and mode: PostgreSQL's `pg_stat_activity` view), which shows a hang's waiters, though
//! not the holders of the locks they wait for.
//!
//! # Differences from parking_lot
//! * [`check_deadlock`] returns an empty `Vec` always (parking_lot: one `Vec` per cycle found).
//! * [`DeadlockedThread::backtrace`] returns a `std::backtrace::Backtrace` (parking_lot: the
//!   `backtrace` crate's `Backtrace`); both print with `{:?}`. No value of the type is ever made.
//! * parking_lot forbids `deadlock_detection` together with `send_guard` (its guards must stay on
//!   the thread that holds the lock); lwlock's guards are always `Send`, and nothing here
//!   depends on it.
//!
//! ```
//! let deadlocks = lwlock::deadlock::check_deadlock();
//! for (i, threads) in deadlocks.iter().enumerate() {
//!     for t in threads {
//!         println!("deadlock #{i}: thread {:?}\n{:?}", t.thread_id(), t.backtrace());
//!     }
//! }
//! assert!(deadlocks.is_empty(), "a no-op: never reports a deadlock");
//! ```

use std::backtrace::Backtrace;
use std::thread::ThreadId;

/// A thread of a deadlock cycle, as parking_lot reports it. [`check_deadlock`] is a no-op, so no
/// value of this type is ever made; it exists so that code that prints one compiles.
#[derive(Debug)]
pub struct DeadlockedThread {
    thread_id: ThreadId,
    backtrace: Backtrace,
}

impl DeadlockedThread {
    /// The thread's id (`std::thread::ThreadId`, as parking_lot's).
    pub fn thread_id(&self) -> ThreadId {
        self.thread_id
    }

    /// Where the thread was waiting (`std::backtrace::Backtrace`; parking_lot's is the
    /// `backtrace` crate's).
    pub fn backtrace(&self) -> &Backtrace {
        &self.backtrace
    }
}

/// parking_lot's `check_deadlock`, as a no-op: always an empty list (module docs). It takes no
/// lock and never blocks, so it is safe to call from a monitoring thread at any rate.
pub fn check_deadlock() -> Vec<Vec<DeadlockedThread>> {
    Vec::new()
}
