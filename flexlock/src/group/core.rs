//! The state every group lock shares, and the wrappers its protocols use for lock calls that may
//! unwind.
//!
//! Mirrors the shared state of `ProcArrayGroupClearXid` and `TransactionGroupUpdateXidStatus`:
//! the lock (`ProcArrayLock`, `XactSLRULock`) and the list head next to it
//! (`procArrayGroupFirst`, `clogGroupFirst`), here with the value it protects, the policy and the
//! counters. The protocols are in the other files of this folder; they add methods to [`Core`].
//!
//! # Unwinding
//! A lock call that unwinds in the middle of a protocol is caught and its panic kept in a
//! [`Deferred`] until the protocol is complete for every other thread (the table in the FlexLock
//! module docs, "Unwinding"); a conditional acquire owed to queued operations is retried once
//! ([`Core::try_exclusive_owed`]).

use super::config::GroupPolicy;
use crate::group_list::GroupList;
use crate::op::Payload;
use crate::stats::{Counters, GroupStats, Stat};
use lwlock::elog::panic_abort;
use lwlock::sync::UnsafeCell;
use lwlock::{Mode, RawLwLock, Tranche, INVALID_PROC};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// A panic caught from the wrapped lock in the middle of a protocol, kept until the protocol is
/// complete for every other thread and then re-raised in the thread whose lock call unwound.
#[derive(Default)]
pub(super) struct Deferred(Option<Payload>);

impl Deferred {
    /// Keeps the first payload (a later one is dropped: one thread can raise one panic).
    pub(super) fn keep(&mut self, payload: Payload) {
        if self.0.is_none() {
            self.0 = Some(payload);
        }
    }

    /// Re-raises the kept panic, unless this thread is already unwinding (a guard dropped during
    /// a panic): a second panic would abort, so the kept one is dropped.
    pub(super) fn raise(self) {
        if let Some(payload) = self.0 {
            if !std::thread::panicking() {
                resume_unwind(payload);
            }
        }
    }

    /// A submitter's outcome: the kept panic if there is one (its operation ran, or was never
    /// run; see the module docs, "Unwinding"), otherwise its operation's result or panic. (A
    /// group call made from a destructor during another panic aborts if either is raised, as
    /// any panic there does.)
    pub(super) fn finish<R>(self, outcome: impl FnOnce() -> R) -> R {
        match self.0 {
            Some(payload) => resume_unwind(payload),
            None => outcome(),
        }
    }
}

/// What a drain found of the calling thread's own queued operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mine {
    /// Not on any chain this drain served: someone else will run it and post us.
    NotSeen,
    /// Served by this drain.
    Done,
    /// The rest of a chain starting with it was handed to us: take the lock and serve it.
    HandedOver,
}

/// The lock, the list and the value: everything the group locks share. (`pub` only because the
/// sealed [`crate::GroupLock`] names it; this module is private to the crate.)
pub struct Core<L, T> {
    pub(super) raw: L,
    pub(super) list: GroupList,
    pub(super) policy: GroupPolicy,
    /// The holder-serves variant ([`crate::HolderServesLock`]): `policy` is `LastReleaser`
    /// (queue, new readers drain first, exclusive releasers drain while holding) but no release
    /// re-checks the queue; unserved submitters wait for the lock in `L`'s own queue instead.
    pub(super) holder_serves: bool,
    pub(super) max_group: usize,
    pub(super) stats: Counters,
    pub(super) data: UnsafeCell<T>,
}

impl<L: RawLwLock, T> std::fmt::Debug for Core<L, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Core")
            .field("lock", &L::NAME)
            .field("policy", &self.policy)
            .field("holder_serves", &self.holder_serves)
            .field("max_group", &self.max_group)
            .finish_non_exhaustive()
    }
}

impl<L: RawLwLock, T> Core<L, T> {
    pub(crate) fn new(data: T, policy: GroupPolicy, max_group: usize, tranche: Tranche) -> Self {
        assert!(max_group >= 1, "flexlock: max_group must be at least 1");
        Core {
            raw: L::with_tranche(tranche),
            list: GroupList::new(),
            policy,
            holder_serves: false,
            max_group,
            stats: Counters::new(),
            data: UnsafeCell::new(data),
        }
    }

    /// A core for [`crate::HolderServesLock`].
    pub(crate) fn new_holder_serves(data: T, max_group: usize, tranche: Tranche) -> Self {
        Core {
            holder_serves: true,
            ..Self::new(data, GroupPolicy::LastReleaser, max_group, tranche)
        }
    }

    pub(crate) fn raw(&self) -> &L {
        &self.raw
    }

    pub(crate) fn stats(&self) -> Option<GroupStats> {
        self.stats.snapshot()
    }

    pub(crate) fn bump(&self, which: Stat) {
        self.stats.bump(which, 1);
    }

    pub(crate) fn group_head(&self) -> Option<u32> {
        let h = self.list.head();
        (h != INVALID_PROC).then_some(h)
    }

    pub(crate) fn into_inner(self) -> T {
        self.data.into_inner()
    }

    /// A pointer to the value for guards (untracked under loom beyond this instant).
    #[inline]
    pub(super) fn data_ptr(&self) -> *mut T {
        #[cfg(not(loom))]
        return self.data.get();
        #[cfg(loom)]
        return self.data.with_mut(|p| p);
    }

    /// A pointer to the value for shared guards: under loom a shared (read) access, so that two
    /// concurrent readers are not reported as a race.
    #[inline]
    pub(super) fn data_ptr_shared(&self) -> *const T {
        #[cfg(not(loom))]
        return self.data.get();
        #[cfg(loom)]
        return self.data.with(|p| p);
    }

    /// A LastReleaser `conditional_acquire(Exclusive)` that is owed to queued operations (this
    /// thread may be the only one left to drain them), so it cannot give up on an unwind: the
    /// first unwind is kept in `deferred` and the call retried; a second one aborts.
    pub(super) fn try_exclusive_owed(&self, deferred: &mut Deferred) -> bool {
        match catch_unwind(AssertUnwindSafe(|| {
            self.raw.conditional_acquire(Mode::Exclusive)
        })) {
            Ok(taken) => taken,
            Err(payload) => {
                deferred.keep(payload);
                // Mutant `flex_unwind_no_retry` (models only): give up instead of retrying, which
                // strands the queue when the lock is free.
                if lwlock::mutant!("flex_unwind_no_retry") {
                    return false;
                }
                match catch_unwind(AssertUnwindSafe(|| {
                    self.raw.conditional_acquire(Mode::Exclusive)
                })) {
                    Ok(taken) => taken,
                    Err(_) => panic_abort(format_args!(
                        "flexlock: conditional_acquire of lock {:?} ({}) unwound twice while \
                         group operations were queued; continuing could strand them",
                        self.raw.tranche().name(),
                        L::NAME
                    )),
                }
            }
        }
    }

    /// The policy (`LastReleaser` for the holder-serves variant too).
    pub(crate) fn policy(&self) -> GroupPolicy {
        self.policy
    }

    /// The bound on the operations one server runs per hold.
    pub(crate) fn max_group(&self) -> usize {
        self.max_group
    }
}
