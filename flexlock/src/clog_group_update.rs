//! The CLOG group update: a group operation with a key, where only operations on the same key
//! (CLOG page) join a group.
//!
//! Mirrors `TransactionIdSetPageStatus` and `TransactionGroupUpdateXidStatus` (`clog.c`,
//! PostgreSQL 11+, `baaf272ac9`), over `CLogControlLock` (`XactSLRULock` in 13, the per-bank SLRU
//! locks in 17+).
//!
//! # Design
//! As the leader policy of [`crate::FlexLock`] (try exclusively; else push; the thread that pushed
//! onto an empty list leads; `group/leader.rs`), with one admission rule, which this lock passes
//! to the leader protocol (`same_page`): before each push attempt a joiner compares
//! its key with the key of the record *currently at the list head*; if they differ it does not join
//! and falls back to a blocking exclusive acquire of its own (the `return false` of
//! `TransactionGroupUpdateXidStatus`, then `LWLockAcquire` in `TransactionIdSetPageStatus`).
//! Since every member passed the same test, a group normally has one key.
//!
//! **The documented race.** The head's key is read from a record that may have been served and
//! re-pushed (to another group, even another lock) between our load of the head and our load of its
//! key, so a joiner can be admitted on a stale key and a group can end up with several keys. Every
//! operation still runs exactly once under the exclusive lock, so this costs efficiency only (in
//! PostgreSQL 17+ the leader switches bank locks mid-walk for this case; here there is one lock).
//!
//! **Deviation: no eligibility checks.** `TransactionIdSetPageStatus` tries the group update
//! only when the caller is a top-level commit whose subtransactions all fit in the PGPROC cache
//! (`nsubxids <= THRESHOLD_SUBTRANS_CLOG_OPT`, 5), all lie on the same CLOG page as the xid, and
//! the xid's status is being set to committed or aborted, not sub-committed; anything else takes
//! `XactSLRULock` directly. [`ClogGroupLock::update`] has no transaction to inspect, so it tries
//! the group for every call: a caller that wants PostgreSQL's behaviour applies those checks
//! itself and calls [`GroupLock::write`] when they fail (lwbench's clog workload updates one
//! xid per call, always eligible).
//!
//! # State, invariants, memory orderings
//! Those of [`crate::group_list`] and the leader policy in [`crate::FlexLock`]; the key is one more
//! record field, stored Relaxed before the Release push and loaded Relaxed by joiners (any value it
//! reads is safe, see the race above).

use crate::group::config::{FlexConfig, GroupPolicy};
use crate::group::core::Core;
use crate::group_lock::{sealed::Sealed, GroupLock};
use lwlock::sync::Ordering;
use lwlock::{IpcEvent, Proc, RawLwLock, Tranche, WaitEvent, INVALID_PROC};

/// The clog page rule, the admission rule this lock passes to the leader protocol: a joiner
/// with `key` joins only a list that is empty or whose head record has the same key. The head may
/// be a record that has moved on to another group (the documented race): still correct.
fn same_page(key: u64, head: u32) -> bool {
    // Mutant `clog_ignore_key` (models only, a build of its own): a joiner ignores the page check
    // and joins any non-empty list, so groups with several keys form without the race: a model
    // (or the `clog_key_rule` tests) must see an operation with another key run by a leader.
    lwlock::mutant!("clog_ignore_key")
        || head == INVALID_PROC
        || Proc::by_number(head).group.key.load(Ordering::Relaxed) == key
}

/// A lock over `L` whose exclusive operations on the same key are combined by an elected leader
/// (the CLOG group update). Its API is that of [`GroupLock`], keyed: [`GroupLock::group_keyed`]
/// (or [`update`](Self::update)) groups only operations with the same key, and
/// [`GroupLock::group`] is an operation on key 0.
///
/// ```
/// use flexlock::{ClogGroupLock, GroupLock};
/// use lwlock::RawAtomicLwLock;
/// let clog = ClogGroupLock::<RawAtomicLwLock, Vec<u8>>::new(vec![0; 8]);
/// clog.update(0, |page| page[3] = 1);
/// assert_eq!(clog.read()[3], 1);
/// ```
pub struct ClogGroupLock<L: RawLwLock, T> {
    core: Core<L, T>,
}

// SAFETY: as for `FlexLock`: the value moves with the lock.
unsafe impl<L: RawLwLock, T: Send> Send for ClogGroupLock<L, T> {}
// SAFETY: as for `FlexLock`: `&T` to many (T: Sync), `&mut T` to one thread at a time, possibly a
// leader rather than the caller (T: Send).
unsafe impl<L: RawLwLock, T: Send + Sync> Sync for ClogGroupLock<L, T> {}

impl<L: RawLwLock, T> std::fmt::Debug for ClogGroupLock<L, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClogGroupLock")
            .field("lock", &L::NAME)
            .finish_non_exhaustive()
    }
}

impl<L: RawLwLock, T> ClogGroupLock<L, T> {
    /// A lock in tranche [`Tranche::XACT_SLRU`] with the default group bound.
    pub fn new(data: T) -> Self {
        Self::with_config(
            data,
            FlexConfig {
                tranche: Tranche::XACT_SLRU,
                ..FlexConfig::new(GroupPolicy::Leader)
            },
        )
    }

    /// A lock with an explicit bound and tranche.
    ///
    /// # Panics
    /// If `config.policy` is not [`GroupPolicy::Leader`] (the clog group update is leader-based), or
    /// `config.max_group` is 0.
    pub fn with_config(data: T, config: FlexConfig) -> Self {
        assert!(
            config.policy == GroupPolicy::Leader,
            "flexlock: ClogGroupLock supports only GroupPolicy::Leader (got {:?})",
            config.policy
        );
        ClogGroupLock {
            core: Core::new(data, GroupPolicy::Leader, config.max_group, config.tranche),
        }
    }

    /// [`GroupLock::group_keyed`]: the CLOG group update of an operation on page `key`
    /// (`TransactionIdSetPageStatus`'s name for it).
    #[inline]
    pub fn update<R: Send>(&self, key: u64, op: impl FnOnce(&mut T) -> R + Send) -> R {
        self.group_keyed(key, op)
    }
}

impl<L: RawLwLock, T> Sealed for ClogGroupLock<L, T> {}

impl<L: RawLwLock, T> GroupLock for ClogGroupLock<L, T> {
    type Raw = L;
    type Data = T;

    /// Runs `op` under the exclusive lock, here or in the leader of a group of operations with the
    /// same `key`, and returns its result. A panic in `op` is re-raised here.
    ///
    /// `op` must not take this lock and must not start another group operation.
    ///
    /// Members wait under `IPC:XactGroupUpdate`, or `IPC:ProcArrayGroupUpdate` when the lock is
    /// in [`Tranche::PROC_ARRAY`] (the same protocol as `ProcArrayGroupClearXid`).
    #[inline]
    fn group_keyed<R: Send>(&self, key: u64, op: impl FnOnce(&mut T) -> R + Send) -> R {
        let event = if self.core.raw().tranche() == Tranche::PROC_ARRAY {
            IpcEvent::ProcArrayGroupUpdate
        } else {
            IpcEvent::XactGroupUpdate
        };
        self.core
            .group_leader(op, WaitEvent::ipc(event), key, |head| same_page(key, head))
    }

    fn core(&self) -> &Core<L, T> {
        &self.core
    }

    fn into_core(self) -> Core<L, T> {
        self.core
    }
}
