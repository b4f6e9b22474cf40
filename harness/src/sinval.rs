//! Shared cache invalidation as a PostgreSQL 9.1 backend reads it: `AcceptInvalidationMessages`
//! → `ReceiveSharedInvalidMessages` → `SIGetDataEntries` (`sinvaladt.c`), which every backend
//! runs several times per transaction whether or not any message is queued (`--era-traffic
//! sinval`; seed 000's thread, 2011: Robert Haas, 2011-07-21, "The answer, in a word, is
//! SIGetDataEntries()").
//!
//! Mirrors `SIGetDataEntries` of `REL9_1_STABLE`:
//! * `LWLockAcquire(SInvalReadLock, LW_SHARED)`: one LWLock for all backends, run on the
//!   experiment's lock (the spinlock LWLock of the era, or the atomic one);
//! * under it, `SpinLockAcquire(&segP->msgnumLock)`, a read of `maxMsgNum`,
//!   `SpinLockRelease`: the spinlock sits in the segment's header beside `minMsgNum`,
//!   `maxMsgNum`, `nextThreshold`, `lastBackend` and `maxBackends`, on a line every backend's
//!   TAS writes;
//! * the backend's own `ProcState` read (`resetState`, `nextMsgNum`) and, caught up, its
//!   `signaled` flag cleared (a store, every call): `ProcState` is 16 bytes and the array
//!   packed, so four backends' entries share a line;
//! * `LWLockRelease(SInvalReadLock)`.
//!
//! With no message queued (`pgbench -S` sends none) that is the whole call. 9.2 (commit
//! b4fbe392, July 2011) added an unlocked `hasMessages` test that returns before either lock,
//! which is why PostgreSQL 15's trace shows almost no SInvalReadLock.
//!
//! Per `pgbench -S` transaction in 9.1 (and with the thread's two patches, which predate that
//! commit), `AcceptInvalidationMessages` runs 4 times: `StartTransaction` → `AtStart_Cache`;
//! the parser's `relation_openrv` (`parserOpenTable`, lockmode not `NoLock`) before it looks
//! the table up by name; and `LockRelationOid` after each lock newly taken (not
//! `LOCKACQUIRE_ALREADY_HELD`): `pgbench_accounts` in the parser, its primary key in the
//! planner's `get_relation_info` (`index_open`). The executor's opens of both find the locks
//! already held and accept nothing.
//!
//! # Memory orderings
//! `maxMsgNum` is read under `msgnumLock` (TAS Acquire, unlock Release) and never written
//! here: Relaxed. The call counter is a test tally kept under the spinlock, not part of
//! PostgreSQL's traffic (a std atomic, which the simulator does not charge).

use crate::locks::{BenchLock, LockFamily};
use crossbeam_utils::CachePadded;
use lwlock::sync::{touch, AtomicU32, Ordering};
use lwlock::{SpinLock, Tranche};

/// `AcceptInvalidationMessages` calls per `pgbench -S` transaction in 9.1 (the module docs).
pub const ACCEPTS_PER_SELECT: u64 = 4;

/// The head of `SISeg`: the message numbers and `msgnumLock`, one line.
#[repr(C, align(64))]
struct SegHead {
    min_msg_num: AtomicU32,
    max_msg_num: AtomicU32,
    next_threshold: u32,
    last_backend: u32,
    max_backends: u32,
    msgnum_lock: SpinLock,
    /// Calls counted under the spinlock (a test tally; see the module docs).
    calls: std::sync::atomic::AtomicU64,
}

/// A backend's `ProcState` of 9.1 (16 bytes: `procPid`, `nextMsgNum`, `resetState`,
/// `signaled`, `sendOnly`, `nextLXID`).
#[repr(C)]
#[derive(Debug, Default)]
struct ProcState {
    proc_pid: i32,
    next_msg_num: u32,
    reset_state: bool,
    signaled: bool,
    send_only: bool,
    next_lxid: u32,
}

/// SInvalReadLock, the segment's head and the backends' `ProcState`s.
pub struct Sinval<F: LockFamily> {
    /// SInvalReadLock, which protects the `ProcState`s (taken shared by readers: each writes
    /// only its own entry).
    read_lock: F::Lock<Box<[ProcState]>>,
    head: CachePadded<SegHead>,
}

impl<F: LockFamily> std::fmt::Debug for Sinval<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sinval").finish_non_exhaustive()
    }
}

/// The spinlock's tranche (its stuck-spinlock PANIC and its spin samples name it).
fn msgnum_tranche() -> Tranche {
    Tranche::register("SInvalMsgnum")
}

impl<F: LockFamily> Sinval<F> {
    /// The segment for `backends` backends, no message queued.
    pub fn new(backends: usize) -> Self {
        let states: Box<[ProcState]> = (0..backends)
            .map(|i| ProcState {
                proc_pid: 1000 + i as i32,
                ..Default::default()
            })
            .collect();
        Sinval {
            read_lock: F::Lock::new(states, Tranche::register("SInvalRead")),
            head: CachePadded::new(SegHead {
                min_msg_num: AtomicU32::new(0),
                max_msg_num: AtomicU32::new(0),
                next_threshold: 0,
                last_backend: backends as u32,
                max_backends: backends as u32,
                msgnum_lock: SpinLock::new(),
                calls: std::sync::atomic::AtomicU64::new(0),
            }),
        }
    }

    /// One `AcceptInvalidationMessages` by `backend` with no message queued
    /// (`SIGetDataEntries`). Returns the LWLock operations done (1).
    #[inline]
    pub fn accept(&self, backend: usize) -> u64 {
        let head = &*self.head;
        self.read_lock.shared(|states| {
            head.msgnum_lock.lock(msgnum_tranche());
            let max = head.max_msg_num.load(Ordering::Relaxed);
            head.calls
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            // SAFETY: taken just above by this thread.
            unsafe { head.msgnum_lock.unlock() };
            let st = &states[backend];
            // resetState and nextMsgNum read; caught up, signaled = false stored.
            touch(
                st as *const ProcState,
                std::mem::size_of::<ProcState>(),
                true,
            );
            debug_assert!(!st.reset_state && st.next_msg_num >= max);
            std::hint::black_box((st.next_msg_num, st.signaled, st.send_only));
        });
        1
    }

    /// `SIGetDataEntries` calls completed (all backends).
    pub fn calls(&self) -> u64 {
        self.head.calls.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The SInvalReadLock's counters.
    pub fn counters(&self) -> crate::locks::LockCounters {
        self.read_lock.counters()
    }

    /// After a trial: no message was ever queued and the spinlock is free.
    pub fn check(&self) -> Result<(), String> {
        let h = &*self.head;
        let (min, max) = (
            h.min_msg_num.load(Ordering::Relaxed),
            h.max_msg_num.load(Ordering::Relaxed),
        );
        if min != 0 || max != 0 || h.next_threshold != 0 || h.last_backend != h.max_backends {
            return Err(format!("sinval segment changed: messages {min}..{max}"));
        }
        if !h.msgnum_lock.try_lock() {
            return Err("sinval: msgnumLock left held".into());
        }
        // SAFETY: taken just above by this thread.
        unsafe { h.msgnum_lock.unlock() };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locks::RawFamily;
    use lwlock::RawClassicLwLock;
    use std::sync::Arc;

    #[test]
    fn the_proc_state_is_16_bytes_as_in_9_1() {
        assert_eq!(std::mem::size_of::<ProcState>(), 16);
    }

    #[test]
    fn two_backends_accept_and_leave_the_segment_as_it_was() {
        let s = Arc::new(Sinval::<RawFamily<RawClassicLwLock>>::new(2));
        let hs: Vec<_> = (0..2)
            .map(|b| {
                let s = s.clone();
                std::thread::spawn(move || (0..5_000).map(|_| s.accept(b)).sum::<u64>())
            })
            .collect();
        let ops: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
        assert_eq!(ops, 10_000);
        assert_eq!(s.calls(), 10_000);
        s.check().unwrap();
    }
}
