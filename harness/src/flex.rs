//! Registry adapters for the group-commit locks of the `flexlock` crate.
//!
//! * `flex-leader`: `FlexLock` with `GroupPolicy::Leader`: a submitter that cannot take the lock at once
//!   queues its operation; the first one to queue becomes the leader, takes the lock exclusively
//!   and runs the whole group (ProcArrayGroupClearXid, PostgreSQL 9.6+).
//! * `flex-releaser`: `FlexLock` with `GroupPolicy::LastReleaser`: queued operations are run by the
//!   thread that releases the lock last (the FlexLock design of Robert Haas, 2011).
//! * `flex-holder`: `HolderServesLock`, the last releaser's fast variant: exclusive holders serve
//!   the queue, unserved submitters wait for the lock themselves.
//! * `clog-group`: `ClogGroupLock`, a group whose members must share a key, the CLOG page
//!   (TransactionGroupUpdateXidStatus, PostgreSQL 11+). Used with the ProcArray lock too (key 0),
//!   where it is the same protocol as ProcArrayGroupClearXid.
//!
//! One adapter, [`GroupLocked`], serves all four through flexlock's [`GroupLock`] trait; a family
//! ([`GroupFamily`]) only says which lock it is and how to build it. All four run over the
//! atomic-state LWLock with flexlock's default group bound, reporting their waits under the
//! tranche of the lock they stand for (ProcArray, XactSLRU, ...).

use crate::locks::{BenchLock, LockCounters, LockFamily};
use flexlock::{
    ClogGroupLock, FlexConfig, FlexLock, GroupLock, GroupPolicy, GroupStats, HolderServesLock,
    DEFAULT_MAX_GROUP,
};
use lwlock::{RawAtomicLwLock, RawClassicLwLock, RawLwLock, Tranche};

/// The group counters, with the wrapped lock's own LWLOCK_STATS counters (semaphore sleeps and
/// spin delays happen inside it) where the `stats` feature keeps them.
fn from_group_stats(s: Option<GroupStats>, raw: Option<lwlock::LockStats>) -> LockCounters {
    let raw = raw.map(|r| (r.block, r.spin_delay));
    match s {
        Some(s) => LockCounters {
            blocks: raw.map(|r| r.0),
            spin_delays: raw.map(|r| r.1),
            excl_acquires: Some(s.exclusive_acquires),
            groups: Some(s.groups),
            mean_group_size: Some(s.mean_group_size),
            max_group_size: Some(s.max_group_size),
        },
        None => LockCounters {
            blocks: raw.map(|r| r.0),
            spin_delays: raw.map(|r| r.1),
            ..LockCounters::default()
        },
    }
}

/// A family of group locks: which flexlock lock protects a `T`, and how the registry builds one
/// (flexlock's constructors differ per lock type).
pub trait GroupFamily: 'static {
    /// The group lock protecting a `T`.
    type Group<T: Send + Sync + 'static>: GroupLock<Data = T> + Send + Sync + std::fmt::Debug;
    /// A lock around `data` with flexlock's default group bound, reporting its waits under
    /// `tranche`.
    fn build<T: Send + Sync + 'static>(data: T, tranche: Tranche) -> Self::Group<T>;
}

/// A group lock of family `F` as a registry lock: shared and exclusive sections take its guards,
/// `group` is its group operation (the key reaches the clog lock's page rule; the other locks
/// ignore it), the counters are its group counters with the wrapped lock's.
pub struct GroupLocked<F: GroupFamily, T: Send + Sync + 'static>(F::Group<T>);

impl<F: GroupFamily, T: Send + Sync + 'static> std::fmt::Debug for GroupLocked<F, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("GroupLocked").field(&self.0).finish()
    }
}

impl<F: GroupFamily, T: Send + Sync + 'static> BenchLock<T> for GroupLocked<F, T> {
    fn new(data: T, tranche: Tranche) -> Self {
        GroupLocked(F::build(data, tranche))
    }
    #[inline]
    fn shared<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(&self.0.read())
    }
    #[inline]
    fn exclusive<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        f(&mut self.0.write())
    }
    #[inline]
    fn group<R: Send>(&self, key: u64, f: impl FnOnce(&mut T) -> R + Send) -> R {
        self.0.group_keyed(key, f)
    }
    fn counters(&self) -> LockCounters {
        from_group_stats(self.0.stats(), self.0.raw().stats())
    }
    /// The state of the lock it wraps.
    #[inline]
    fn held(&self) -> Option<(bool, bool)> {
        let raw = self.0.raw();
        Some((raw.is_locked(), raw.is_locked_exclusive()))
    }
}

/// A group family is a lock family: its registry lock is [`GroupLocked`].
impl<F: GroupFamily> LockFamily for F {
    type Lock<T: Send + Sync + 'static> = GroupLocked<F, T>;
}

/// Family of `flex-leader` (`LEADER`) and `flex-releaser`: a `FlexLock` with that policy over
/// the raw lock `L` (the atomic LWLock; the classic one for the 2011 design as it was posted,
/// over PostgreSQL 9.2's spinlock LWLock: `flex-leader-classic`, `flex-releaser-classic`).
#[derive(Debug)]
pub struct FlexFamily<const LEADER: bool, L = RawAtomicLwLock>(std::marker::PhantomData<L>);
/// Family of `flex-leader`.
pub type FlexLeaderFamily = FlexFamily<true>;
/// Family of `flex-releaser`.
pub type FlexReleaserFamily = FlexFamily<false>;
/// Family of `flex-leader-classic`.
pub type FlexLeaderClassicFamily = FlexFamily<true, RawClassicLwLock>;
/// Family of `flex-releaser-classic`.
pub type FlexReleaserClassicFamily = FlexFamily<false, RawClassicLwLock>;

impl<const LEADER: bool, L: RawLwLock + std::fmt::Debug + 'static> GroupFamily
    for FlexFamily<LEADER, L>
{
    type Group<T: Send + Sync + 'static> = FlexLock<L, T>;
    fn build<T: Send + Sync + 'static>(data: T, tranche: Tranche) -> Self::Group<T> {
        let policy = if LEADER {
            GroupPolicy::Leader
        } else {
            GroupPolicy::LastReleaser
        };
        FlexLock::with_config(
            data,
            FlexConfig {
                policy,
                max_group: DEFAULT_MAX_GROUP,
                tranche,
            },
        )
    }
}

/// Family of `flex-holder`.
#[derive(Debug)]
pub struct FlexHolderFamily;

impl GroupFamily for FlexHolderFamily {
    type Group<T: Send + Sync + 'static> = HolderServesLock<RawAtomicLwLock, T>;
    fn build<T: Send + Sync + 'static>(data: T, tranche: Tranche) -> Self::Group<T> {
        HolderServesLock::with_bound(data, DEFAULT_MAX_GROUP, tranche)
    }
}

/// Family of `clog-group`.
#[derive(Debug)]
pub struct ClogGroupFamily;

impl GroupFamily for ClogGroupFamily {
    type Group<T: Send + Sync + 'static> = ClogGroupLock<RawAtomicLwLock, T>;
    fn build<T: Send + Sync + 'static>(data: T, tranche: Tranche) -> Self::Group<T> {
        ClogGroupLock::with_config(
            data,
            FlexConfig {
                tranche,
                ..FlexConfig::new(GroupPolicy::Leader)
            },
        )
    }
}
