//! PostgreSQL's lightweight locks, in Rust, for lock-contention research.
//!
//! * [`RawLwLock`]: the one trait every lock in the project implements (LWLockAcquire,
//!   LWLockConditionalAcquire, LWLockAcquireOrWait, LWLockRelease), with the [`RawLwLockVar`]
//!   extension (LWLockWaitForVar/UpdateVar/ReleaseClearVar).
//! * [`RawClassicLwLock`]: the spinlock-protected LWLock of PostgreSQL ≤ 9.4, on [`SpinLock`]
//!   (`s_lock` with adaptive spin and randomized exponential backoff).
//! * [`RawAtomicLwLock`]: the one-word atomic-state LWLock of 9.5+ (HAS_WAITERS, RELEASE_OK, the
//!   wait-list bit, queue-then-recheck), 16 bytes.
//! * [`Proc`]: the per-thread wait record (PGPROC) with its futex semaphore; waiters are linked
//!   intrusively through records, and no acquire or release allocates.
//! * [`sample_waits`]: what every live thread is waiting for (the pg_stat_activity view).
//! * [`RwLock`]: a drop-in `lock_api` reader-writer lock over the atomic LWLock.
//! * Feature `stats`: LWLOCK_STATS-style counters per lock, read with [`RawLwLock::stats`].
//! * [`elog`]: PANIC (abort with a message) and critical sections, where an unwind would leave
//!   shared state inconsistent. Feature `fault-injection`: the `fault` module's lock wrapper that
//!   panics at a chosen call, for testing protocols built on the trait.
//!
//! ```
//! use lwlock::{Mode, RawAtomicLwLock, RawLwLock, Tranche};
//! let lock = RawAtomicLwLock::new_in(Tranche::PROC_ARRAY);
//! lock.acquire(Mode::Shared);
//! assert!(!lock.conditional_acquire(Mode::Exclusive));
//! // SAFETY: held shared by this thread.
//! unsafe { lock.release(Mode::Shared) };
//! ```
#![deny(missing_docs)]

pub mod sync;

mod atomic_state;
mod classic;
pub mod elog;
#[cfg(feature = "fault-injection")]
pub mod fault;
mod lock_api_adapter;
pub mod proc;
mod proclist;
mod raw;
mod rwlock;
pub mod s_lock;
mod stats;
mod wait_event;

pub use atomic_state::{
    RawAtomicLwLock, HAS_WAITERS, LOCKED, LOCK_MASK, MAX_SHARED, RELEASE_OK, SHARED_MASK,
    VAL_EXCLUSIVE, VAL_SHARED,
};
pub use classic::RawClassicLwLock;
#[cfg(feature = "parking_lot")]
pub use lock_api_adapter::ParkingLotLwLock;
pub use lock_api_adapter::{LockApiAdapter, Named};
pub use proc::{Proc, Semaphore, INVALID_PROC};
pub use raw::{AcquireOrWait, Mode, RawLwLock, RawLwLockVar, VarWait};
#[cfg(not(loom))]
pub use rwlock::*;
pub use s_lock::{SpinDelayConfig, SpinLock};
pub use stats::LockStats;
pub use wait_event::{sample_waits, IpcEvent, Tranche, WaitClass, WaitEvent, WaitSample};

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// Re-exported so that users name the same `lock_api` version the drop-in uses.
pub use lock_api;
