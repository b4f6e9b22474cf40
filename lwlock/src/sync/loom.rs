//! The loom backend (`--cfg loom`): loom's atomics and `UnsafeCell` (so a missing ordering around
//! protected data is reported as a race), loom's threads, and the futex emulation of
//! `sync/model.rs`.
//!
//! Mirrors what the std backend (`sync/std.rs`) mirrors: `pg_atomic_*`, the semaphore's futex,
//! `pg_usleep`, here as a model checker's operations.

pub use super::host::{clock_nanos, instructions, touch};
pub use super::model::{
    advance_model_clock, idle_nanos, model_clock_start, sleep_micros, spin_loop, wait_word,
    wait_word_until, wake_all_word, Futex, MODEL_CLOCK_NEVER,
};

pub use loom::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, Ordering,
};

/// A blocking mutex of the active backend. Only the wait-record table uses it (registration, once
/// per thread), never a lock's fast or slow path; under the models it must be the checker's, so
/// that registrations are ordered and a thread switch inside one cannot block the real thread.
pub use loom::sync::Mutex;

pub use loom::thread_local as model_thread_local;

/// Thread spawning and thread-locals of the active backend.
pub mod thread {
    pub use loom::thread::{current, spawn, yield_now, JoinHandle};
}

/// An `UnsafeCell` with loom's closure API on every backend; here loom's own, whose accesses are
/// tracked, so a lock whose acquire/release orderings do not order the critical sections is
/// reported as a data race on the protected value.
#[derive(Debug)]
pub struct UnsafeCell<T: ?Sized> {
    inner: loom::cell::UnsafeCell<T>,
}

impl<T> UnsafeCell<T> {
    /// Wraps `value` (not `const`: loom's cells are not).
    pub fn new(value: T) -> Self {
        UnsafeCell {
            inner: loom::cell::UnsafeCell::new(value),
        }
    }
    /// Consumes the cell, returning the value.
    pub fn into_inner(self) -> T {
        self.inner.into_inner()
    }
}

impl<T: ?Sized> UnsafeCell<T> {
    /// Runs `f` with a shared pointer to the value. The caller must ensure no concurrent writer.
    #[inline(always)]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        self.inner.with(f)
    }
    /// Runs `f` with a unique pointer to the value. The caller must ensure exclusive access.
    #[inline(always)]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        self.inner.with_mut(f)
    }
}
