//! PostgreSQL's lightweight locks, in Rust, for lock-contention research.
//!
//! * [`RawLwLock`]: the one trait every lock in the project implements (LWLockAcquire,
//!   LWLockConditionalAcquire, LWLockAcquireOrWait, LWLockRelease), with the [`RawLwLockVar`]
//!   extension (LWLockWaitForVar/UpdateVar/ReleaseClearVar).
//! * [`RawClassicLwLock`]: the spinlock-protected LWLock of PostgreSQL ≤ 9.4, on [`SpinLock`]
//!   (`s_lock` with adaptive spin and randomized exponential backoff).
//! * [`RawAtomicLwLock`]: the one-word atomic-state LWLock of 9.5+ (HAS_WAITERS, RELEASE_OK, the
//!   wait-list bit, queue-then-recheck), 16 bytes; its word's bits and invariants in [`layout`].
//! * [`Proc`]: the per-thread wait record (PGPROC) with its futex semaphore; waiters are linked
//!   intrusively through records, and no acquire or release allocates.
//! * [`sample_waits`]: what every live thread is waiting for (the pg_stat_activity view).
//! * [`RawReaderBiasLwLock`] / [`ScalableRwLock`]: BRAVO reader bias over the atomic LWLock
//!   (a variant beyond PostgreSQL): readers publish in a per-lock visible-readers table instead
//!   of the lock word, so read-only work scales with cores.
//! * [`RwLock`]: a drop-in `lock_api` reader-writer lock over the atomic LWLock; [`Mutex`] over
//!   its exclusive path, with [`Condvar`]; [`ReentrantMutex`], owners identified by wait record;
//!   [`FairMutex`], every unlock a handover; [`Once`] on a futex word.
//! * Feature `stats`: LWLOCK_STATS-style counters per lock, read with [`RawLwLock::stats`].
//! * [`elog`]: PANIC (abort with a message) and critical sections, where an unwind would leave
//!   shared state inconsistent. Feature `fault-injection`: the `fault` module's lock wrapper that
//!   panics at a chosen call, for testing protocols built on the trait.
//!
//! # Switching from parking_lot
//! `use lwlock::{RwLock, Mutex, Condvar, ReentrantMutex, ...}` in place of `parking_lot::...`:
//! the types are `lock_api` 0.4 types (parking_lot 0.12's line) with the same methods; with
//! feature `lock_api_05` the module `lwlock::lock_api_05` has the same types (all but the
//! `Handoff*` variants) over
//! lock_api 0.5 (parking_lot 0.13's line). Guards of every lock are `Send` (an LWLock hold is a
//! count in the lock word, not tied to a thread; parking_lot's need its `send_guard` feature),
//! except `ReentrantMutex`'s. Each lock page states its fairness policy. Every name parking_lot
//! 0.12 exports is here: the locks, guards and `const_*` constructors, `Condvar`,
//! `WaitTimeoutResult`, `FairMutex` (and its guards, `const_fair_mutex`), `Once`, `OnceState`,
//! the raw types `RawRwLock`, `RawMutex`, `RawFairMutex`, `RawThreadId` (each the raw lock of the
//! lwlock type of the same role: `lock_api::RwLock<lwlock::RawRwLock, T>` is `lwlock::RwLock<T>`),
//! `lock_api`, and with feature `deadlock_detection` the `deadlock` module, a documented no-op.
//!
//! # Features
//! | feature | what it adds |
//! |---|---|
//! | `serde` | `Serialize`/`Deserialize` for every lock type (the value, taken under the lock), via lock_api's `serde` |
//! | `arc_lock` | `lock_arc`, `read_arc`, `write_arc`, `upgradable_read_arc`, ... and the `Arc*Guard` types (guards that own an `Arc` of the lock), via lock_api's `arc_lock` |
//! | `owning_ref` | `owning_ref::StableAddress` for the guards, via lock_api's `owning_ref` |
//! | `lock_api_05` | `lwlock::lock_api_05`: the same locks over lock_api 0.5 (needs Rust 1.95) |
//! | `stats` | LWLOCK_STATS-style counters per lock |
//! | `parking_lot` | `ParkingLotLwLock`: parking_lot's lock as a lock of the trait (baselines) |
//! | `fault-injection` | the `fault` module (tests of protocols built on the trait) |
//! | `deadlock_detection` | the `deadlock` module of parking_lot's name: `check_deadlock` is a documented no-op (always empty) |
//!
//! `arc_lock` is enabled like parking_lot's, in the dependent's manifest:
//! ```toml
//! [dependencies]
//! lwlock = { version = "0.1", features = ["arc_lock"] }
//! ```
//! ```
//! # #[cfg(feature = "arc_lock")] {
//! let m = std::sync::Arc::new(lwlock::Mutex::new(0u32));
//! let g: lwlock::ArcMutexGuard<u32> = m.lock_arc(); // owns a clone of the Arc: 'static
//! std::thread::spawn(move || drop(g)).join().unwrap();
//! assert!(!m.is_locked());
//! # }
//! ```
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

// The files form layers; each names only files of the layers before it (no import circle,
// checked by ci/import-cycles.py):
//   sync (the shim) -> stats, wait_event, elog, mutant -> proc (wait records) -> proclist,
//   s_lock (spinlock, spin delay) -> raw (the trait) -> fault -> the locks (atomic_state with
//   its mechanism files, classic, reader_bias) -> the drop-in types (raw_mutex, mutex, condvar,
//   remutex, rwlock, lock_api_adapter, lock_api_05) -> fair_mutex (over mutex). once names only sync and
//   mutant; deadlock names nothing of the crate.
pub mod sync;

pub mod mutant;

mod atomic_state;
mod classic;
mod condvar;
#[cfg(feature = "deadlock_detection")]
pub mod deadlock;
pub mod default_instructions;
pub mod elog;
#[cfg(not(loom))]
mod fair_mutex;
#[cfg(feature = "fault-injection")]
pub mod fault;
#[cfg(all(feature = "lock_api_05", not(loom)))]
pub mod lock_api_05;
mod lock_api_adapter;
#[cfg(not(loom))]
mod mutex;
mod once;
pub mod proc;
mod proclist;
mod raw;
mod raw_mutex;
mod reader_bias;
pub mod reference;
#[cfg(not(loom))]
mod remutex;
mod rwlock;
pub mod s_lock;
mod stats;
mod wait_event;

pub use atomic_state::layout;
pub use atomic_state::{Adaptive, EmptyYield, RawAdaptiveLwLock, RawEmptyYieldLwLock};
pub use atomic_state::{
    AtomicLwLock, Barging, Handoff, Policy, RawAtomicLwLock, RawHandoffLwLock, RawTaskFairLwLock,
    TaskFair,
};
pub use classic::RawClassicLwLock;
pub use condvar::{Condvar, WaitTimeoutResult};
#[cfg(all(not(loom), feature = "arc_lock"))]
pub use fair_mutex::ArcFairMutexGuard;
#[cfg(not(loom))]
pub use fair_mutex::{
    const_fair_mutex, FairMutex, FairMutexGuard, MappedFairMutexGuard, RawFairMutex,
};
#[cfg(feature = "parking_lot")]
pub use lock_api_adapter::ParkingLotLwLock;
pub use lock_api_adapter::{LockApiAdapter, Named};
#[cfg(not(loom))]
pub use mutex::{
    const_mutex, AdaptiveMutex, AdaptiveMutexGuard, BargingMutex, BargingMutexGuard, HandoffMutex,
    HandoffMutexGuard, MappedBargingMutexGuard, MappedMutexGuard, Mutex, MutexGuard,
};
#[cfg(all(not(loom), feature = "arc_lock"))]
pub use mutex::{ArcBargingMutexGuard, ArcMutexGuard};
pub use once::{Once, OnceState};
pub use proc::{sample_waits, Proc, Semaphore, WaitSample, INVALID_PROC};
pub use raw::{AcquireOrWait, Mode, RawLwLock, RawLwLockVar, VarWait};
pub use raw_mutex::{AtomicLwMutex, RawAdaptiveMutex, RawBargingMutex, RawHandoffMutex, RawMutex};
pub use reader_bias::RawReaderBiasLwLock;
#[cfg(not(loom))]
pub use reader_bias::{ScalableRwLock, ScalableRwLockReadGuard, ScalableRwLockWriteGuard};
#[cfg(all(not(loom), feature = "arc_lock"))]
pub use remutex::ArcReentrantMutexGuard;
#[cfg(not(loom))]
pub use remutex::{
    const_reentrant_mutex, MappedReentrantMutexGuard, RawThreadId, ReentrantMutex,
    ReentrantMutexGuard,
};
#[cfg(not(loom))]
pub use rwlock::*;
pub use s_lock::{SpinDelayConfig, SpinLock};
pub use stats::LockStats;
pub use wait_event::{IpcEvent, Tranche, WaitClass, WaitEvent};

// parking_lot's raw-type names follow the default types: `RawRwLock` (defined beside `RwLock` in
// rwlock.rs) and `RawMutex` (in raw_mutex.rs, under `Mutex` of mutex.rs) must be the raw locks under `RwLock` and
// `Mutex`. A change of a default that forgot its alias fails to compile here.
#[cfg(not(loom))]
const _: () = {
    fn _rwlock<T>(l: RwLock<T>) -> lock_api::RwLock<RawRwLock, T> {
        l
    }
    fn _mutex<T>(m: Mutex<T>) -> lock_api::Mutex<RawMutex, T> {
        m
    }
    fn _fair_mutex<T>(m: FairMutex<T>) -> lock_api::Mutex<RawFairMutex, T> {
        m
    }
    fn _reentrant<T>(m: ReentrantMutex<T>) -> lock_api::ReentrantMutex<RawMutex, RawThreadId, T> {
        m
    }
};

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The crate README's example, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;

/// The design chapter's examples (they use only this crate), compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/design.md")]
pub struct DesignDoctests;

/// The results and reliability chapters (shell commands only today; any Rust block added there
/// is compiled against this crate).
#[cfg(doctest)]
#[doc = include_str!("../../docs/results.md")]
#[doc = include_str!("../../docs/reliability.md")]
pub struct ResultsDoctests;

/// Re-exported so that users name the same `lock_api` version the drop-in uses.
pub use lock_api;
