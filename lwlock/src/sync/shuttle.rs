//! The shuttle backend (`--cfg shuttle`): shuttle's atomics (all SeqCst) and threads, std's cell,
//! and the futex emulation of `sync/model.rs`.
//!
//! Mirrors what the std backend (`sync/std.rs`) mirrors: `pg_atomic_*`, the semaphore's futex,
//! `pg_usleep`, here as a model checker's operations.

pub use super::host::{clock_nanos, instructions, touch, UnsafeCell};
pub use super::model::{
    advance_model_clock, idle_nanos, model_clock_start, sleep_micros, spin_loop, wait_word,
    wait_word_until, wake_all_word, Futex, MODEL_CLOCK_NEVER,
};

pub use shuttle::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, Ordering,
};

/// A blocking mutex of the active backend. Only the wait-record table uses it (registration, once
/// per thread), never a lock's fast or slow path; under the models it must be the checker's, so
/// that registrations are ordered and a thread switch inside one cannot block the real thread.
pub use shuttle::sync::Mutex;

pub use shuttle::thread_local as model_thread_local;

/// Thread spawning and thread-locals of the active backend.
pub mod thread {
    pub use shuttle::thread::{current, spawn, yield_now, JoinHandle};
}
