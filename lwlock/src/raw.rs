//! The one lock interface every lock in the project implements.
//!
//! [`RawLwLock`] is PostgreSQL's LWLock API (`LWLockAcquire`, `LWLockConditionalAcquire`,
//! `LWLockAcquireOrWait`, `LWLockRelease`) as a raw, guard-less Rust trait, in the style of
//! `lock_api::RawRwLock`: implementors promise mutual exclusion at the trait level; callers promise
//! at each `unsafe` method that they hold what they release. Capabilities only some locks have are
//! extension traits ([`RawLwLockVar`] for `LWLockWaitForVar`/`LWLockUpdateVar`).
//!
//! Generic code (FlexLock, the harness, the models) is written once against this trait, so a
//! classic, atomic or parking_lot lock runs through the same code paths.

use crate::stats::LockStats;
use crate::sync::AtomicU64;
use crate::wait_event::Tranche;

/// The two lock modes (`LWLockMode`: `LW_SHARED`, `LW_EXCLUSIVE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Any number of shared holders, no exclusive holder.
    Shared,
    /// One exclusive holder and nothing else.
    Exclusive,
}

/// The outcome of [`RawLwLock::acquire_or_wait`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "if Acquired, the lock must be released"]
pub enum AcquireOrWait {
    /// The lock was free and is now held in the requested mode: release it.
    Acquired,
    /// The lock was busy; the caller waited until it was released and does **not** hold it.
    Waited,
}

/// The outcome of [`RawLwLockVar::wait_for_var`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarWait {
    /// No exclusive holder (any more): the work the variable tracks is done.
    Free,
    /// The holder moved the variable away from `oldval`; here is its new value.
    Changed(u64),
}

/// A shared/exclusive lock with PostgreSQL's LWLock operations.
///
/// # Safety
/// Implementors promise:
/// * While any thread holds the lock in [`Mode::Exclusive`], no other thread holds it in any mode;
///   any number may hold it in [`Mode::Shared`] together.
/// * A successful acquire has Acquire semantics and a release has Release semantics, so that the
///   protected data written in one critical section is visible in the next.
/// * An acquire that unwinds leaves the lock not held by the caller, and usable by others.
/// * A release that unwinds has given up the hold and left the lock usable (no waiter stranded).
/// * [`conditional_acquire`](Self::conditional_acquire) never sleeps or blocks indefinitely.
///
/// # Unwinding
/// The rule, after PostgreSQL's (an ERROR is recoverable, an error inside a critical section is a
/// PANIC): a method may unwind only where the lock and every other thread's state stay consistent;
/// where an unwind could leave shared state half-updated, the process aborts with a message
/// ([`crate::elog::panic_abort`]) instead.
///
/// * **The project's locks** unwind only for a shared-holder overflow ("too many shared holders"),
///   raised before the caller is queued or after it dequeued itself. Everything between queueing
///   and being woken, and every wake pass, runs in a [`crate::elog::CritSection`]. A stuck
///   spinlock or wait-list bit aborts ([`crate::s_lock::s_lock_stuck`], PostgreSQL's PANIC), since
///   its holder is gone or broken and the waiter holds protocol state. A thread's wait record is
///   registered (first use: allocation, a mutex) before any spinlock is taken, so a failed
///   registration unwinds holding nothing. Their `release` never unwinds.
/// * **Callers that build protocols on the trait** (flexlock's group operations) must survive an
///   unwind from any method at any step, for locks written by others: see flexlock's
///   "Unwinding" docs for what each step does. `lwlock::fault::FaultLock` (feature
///   `fault-injection`) injects exactly the unwinds this contract allows, at a chosen call.
pub unsafe trait RawLwLock: Send + Sync {
    /// Short name used by tests, benches and plots (`"atomic"`, `"classic"`, `"parking-lot"`).
    const NAME: &'static str;

    /// Whether the lock's paths account for their own instruction time under the simulator
    /// (with [`crate::sync::instructions`]; the design document, "Instruction time"). The
    /// project's annotated locks say `true`. A lock that leaves the default `false` is charged
    /// a default per acquire and per release when it runs wrapped in
    /// [`DefaultInstructions`](crate::default_instructions::DefaultInstructions), as lwbench
    /// runs every lock registered with `Lwbench::lock`.
    const INSTRUCTIONS_ANNOUNCED: bool = false;

    /// A new, free lock reporting its waits under `tranche`.
    fn with_tranche(tranche: Tranche) -> Self
    where
        Self: Sized;

    /// Takes the lock in `mode`, sleeping as long as necessary (`LWLockAcquire`). Returns `true`
    /// if it was taken without sleeping.
    ///
    /// # Panics
    /// If taking it in [`Mode::Shared`] would exceed the lock's shared-holder limit.
    fn acquire(&self, mode: Mode) -> bool;

    /// Takes the lock in `mode` only if that is possible right now, never sleeping
    /// (`LWLockConditionalAcquire`). Returns whether it was taken.
    fn conditional_acquire(&self, mode: Mode) -> bool;

    /// Takes the lock in `mode` if it is free; otherwise waits until it is released and returns
    /// without taking it (`LWLockAcquireOrWait`, made for WAL group flush: the caller re-checks
    /// whether the holder did its work).
    fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait;

    /// Releases the lock held in `mode` (`LWLockRelease`), waking waiters as the design dictates.
    ///
    /// # Safety
    /// The calling thread (or, for locks whose guards are `Send`, the owner the hold was handed to)
    /// must hold the lock in `mode` from a successful acquire that has not been released yet.
    unsafe fn release(&self, mode: Mode);

    /// Whether anyone holds the lock in any mode right now (a racy snapshot; never perturbs the
    /// lock).
    fn is_locked(&self) -> bool;

    /// Whether someone holds the lock exclusively right now (a racy snapshot).
    fn is_locked_exclusive(&self) -> bool;

    /// The tranche the lock reports its waits under.
    fn tranche(&self) -> Tranche;

    /// LWLOCK_STATS-style counters, when the lock keeps them (the `stats` feature).
    fn stats(&self) -> Option<LockStats> {
        None
    }
}

/// Locks that protect a 64-bit progress variable beside the lock: `LWLockWaitForVar`,
/// `LWLockUpdateVar` and `LWLockReleaseClearVar`, used by WAL insertion locks.
pub trait RawLwLockVar: RawLwLock {
    /// Waits until the lock has no exclusive holder or `var` differs from `oldval`
    /// (`LWLockWaitForVar`). Shared holders are ignored.
    ///
    /// A [`VarWait::Free`] answer synchronises with the last exclusive holder's release (what it
    /// did under the lock is visible); a [`VarWait::Changed`] answer with the store of that value.
    fn wait_for_var(&self, var: &AtomicU64, oldval: u64) -> VarWait;

    /// Stores `val` into `var` and wakes the threads waiting on it in
    /// [`wait_for_var`](Self::wait_for_var) (`LWLockUpdateVar`).
    ///
    /// # Safety
    /// The caller must hold the lock exclusively.
    unsafe fn update_var(&self, var: &AtomicU64, val: u64);

    /// Stores `val` into `var`, then releases the exclusive lock (`LWLockReleaseClearVar`).
    ///
    /// # Safety
    /// The caller must hold the lock exclusively.
    unsafe fn release_clear_var(&self, var: &AtomicU64, val: u64);
}

/// lock_api's `RawRwLock` (the 0.4 line) for a [`RawLwLock`] type, written once: `lock_*` is
/// [`RawLwLock::acquire`], `try_lock_*` [`RawLwLock::conditional_acquire`], `unlock_*`
/// [`RawLwLock::release`] in the matching [`Mode`], and `INIT` the type's `const fn new()`.
/// `guard` is `GuardSend` or `GuardNoSend`: whether a hold may be released on another thread is
/// the lock's to say, at the call site, beside the call's `SAFETY` argument. Not under loom
/// (lock_api's `INIT` needs a `const fn`).
///
/// `lock_api_rwlock_over_lwlock!([generics] Type, guard: Marker)`; the 0.5 line's counterpart is in
/// `lock_api_05.rs`.
macro_rules! lock_api_rwlock_over_lwlock {
    ([$($gen:tt)*] $ty:ty, guard: $guard:ident) => {
        #[cfg(not(loom))]
        // SAFETY: the `RawLwLock` contract (mutual exclusion, Acquire on every acquire, Release on
        // every release, a conditional acquire that never blocks, an acquire that unwinds holds
        // nothing) is lock_api's `RawRwLock` contract; each method forwards to the operation of
        // the same meaning, and the guard marker is the caller's (see the macro's docs).
        unsafe impl<$($gen)*> lock_api::RawRwLock for $ty {
            #[allow(clippy::declare_interior_mutable_const)]
            const INIT: Self = <$ty>::new();
            type GuardMarker = lock_api::$guard;

            #[inline]
            fn lock_shared(&self) {
                $crate::RawLwLock::acquire(self, $crate::Mode::Shared);
            }
            #[inline]
            fn try_lock_shared(&self) -> bool {
                $crate::RawLwLock::conditional_acquire(self, $crate::Mode::Shared)
            }
            #[inline]
            unsafe fn unlock_shared(&self) {
                // SAFETY: lock_api's contract: the lock is held shared (by this thread where the
                // guard marker is `GuardNoSend`).
                unsafe { $crate::RawLwLock::release(self, $crate::Mode::Shared) }
            }
            #[inline]
            fn lock_exclusive(&self) {
                $crate::RawLwLock::acquire(self, $crate::Mode::Exclusive);
            }
            #[inline]
            fn try_lock_exclusive(&self) -> bool {
                $crate::RawLwLock::conditional_acquire(self, $crate::Mode::Exclusive)
            }
            #[inline]
            unsafe fn unlock_exclusive(&self) {
                // SAFETY: lock_api's contract: the lock is held exclusively.
                unsafe { $crate::RawLwLock::release(self, $crate::Mode::Exclusive) }
            }
            #[inline]
            fn is_locked(&self) -> bool {
                $crate::RawLwLock::is_locked(self)
            }
            #[inline]
            fn is_locked_exclusive(&self) -> bool {
                $crate::RawLwLock::is_locked_exclusive(self)
            }
        }
    };
}
pub(crate) use lock_api_rwlock_over_lwlock;
