//! The LWLock entry points a PostgreSQL transaction calls, by name: what a workload that replays
//! a recorded transaction (a trace, `trace:FILE`) needs and `BenchLock`'s closures cannot say.
//!
//! * `LWLockAcquire` / `LWLockRelease` as two calls, so that holds need not nest: a transaction
//!   may take A, then B, and release A before B (the closures only nest).
//! * `LWLockConditionalAcquire`, which may fail.
//! * `LWLockAcquireOrWait`, which may return without the lock once it is free.
//! * `LWLockWaitForVar` (with `LWLockUpdateVar` and `LWLockReleaseClearVar` on the holder's
//!   side), the WAL insertion locks' protocol.
//!
//! A lock offers them through `BenchLock::entry_points`: every raw LWLock of the registry
//! (`RawFamily`), with the variable protocol where the family wraps it in [`WithVar`]. A lock
//! that has no such entry points returns `None` (a group lock, whose protocol a replay runs at
//! the call site where PostgreSQL runs it; std's `RwLock`); a replay that needs one says so.

use lwlock::sync::AtomicU64;
use lwlock::{AcquireOrWait, Mode, RawLwLock, RawLwLockVar, VarWait};

/// One LWLock's entry points, as PostgreSQL calls them (see the module docs). The caller keeps
/// the books of what it holds, as a backend does (`held_lwlocks`): `release` names the mode of
/// the matching acquire.
pub trait EntryPoints: Sync {
    /// `LWLockAcquire`: blocks until the lock is held in `mode`; whether it had to wait.
    fn acquire(&self, mode: Mode) -> bool;
    /// `LWLockConditionalAcquire`: takes the lock in `mode` if it is free for it, without
    /// waiting; whether it did.
    fn conditional_acquire(&self, mode: Mode) -> bool;
    /// `LWLockAcquireOrWait`: takes the lock in `mode` if free; otherwise waits until it is
    /// released and returns without it.
    fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait;
    /// `LWLockRelease`.
    ///
    /// # Safety
    /// The caller holds the lock in `mode`, taken through these entry points.
    unsafe fn release(&self, mode: Mode);
    /// `LWLockWaitForVar`: waits until the lock has no exclusive holder or `var` differs from
    /// `old`; `None` where the lock has no variable protocol.
    fn wait_for_var(&self, var: &AtomicU64, old: u64) -> Option<VarWait> {
        let _ = (var, old);
        None
    }
    /// `LWLockUpdateVar`: stores `val` into `var` and wakes its waiters; `false` (nothing
    /// done) where the lock has no variable protocol.
    ///
    /// # Safety
    /// The caller holds the lock exclusively.
    unsafe fn update_var(&self, var: &AtomicU64, val: u64) -> bool {
        let _ = (var, val);
        false
    }
}

impl<L: RawLwLock> EntryPoints for L {
    fn acquire(&self, mode: Mode) -> bool {
        RawLwLock::acquire(self, mode)
    }
    fn conditional_acquire(&self, mode: Mode) -> bool {
        RawLwLock::conditional_acquire(self, mode)
    }
    fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait {
        RawLwLock::acquire_or_wait(self, mode)
    }
    unsafe fn release(&self, mode: Mode) {
        // SAFETY: the caller holds the lock in `mode` (this method's contract).
        unsafe { RawLwLock::release(self, mode) }
    }
}

/// A raw LWLock with the variable protocol offered as entry points too (the WAL insertion
/// locks' `LWLockWaitForVar`).
#[derive(Debug)]
pub struct WithVar<L>(pub L);

impl<L: RawLwLockVar> EntryPoints for WithVar<L> {
    fn acquire(&self, mode: Mode) -> bool {
        self.0.acquire(mode)
    }
    fn conditional_acquire(&self, mode: Mode) -> bool {
        self.0.conditional_acquire(mode)
    }
    fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait {
        self.0.acquire_or_wait(mode)
    }
    unsafe fn release(&self, mode: Mode) {
        // SAFETY: the caller holds the lock in `mode` (this method's contract).
        unsafe { self.0.release(mode) }
    }
    fn wait_for_var(&self, var: &AtomicU64, old: u64) -> Option<VarWait> {
        Some(self.0.wait_for_var(var, old))
    }
    unsafe fn update_var(&self, var: &AtomicU64, val: u64) -> bool {
        // SAFETY: the caller holds the lock exclusively (this method's contract).
        unsafe { self.0.update_var(var, val) };
        true
    }
}
