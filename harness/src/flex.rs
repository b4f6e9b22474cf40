//! Registry adapters for the group-commit locks of the `flexlock` crate.
//!
//! * `flex-leader`: `FlexLock` with `Policy::Leader`: a submitter that cannot take the lock at once
//!   queues its operation; the first one to queue becomes the leader, takes the lock exclusively
//!   and runs the whole group (ProcArrayGroupClearXid, PostgreSQL 9.6+).
//! * `flex-releaser`: `FlexLock` with `Policy::LastReleaser`: queued operations are run by the
//!   thread that releases the lock last (the FlexLock design of Robert Haas, 2011).
//! * `clog-group`: `ClogGroupLock`, a group whose members must share a key, the CLOG page
//!   (TransactionGroupUpdateXidStatus, PostgreSQL 11+). Used with the ProcArray lock too (key 0),
//!   where it is the same protocol as ProcArrayGroupClearXid.
//!
//! All three run over the atomic-state LWLock with flexlock's default group bound, reporting
//! their waits under the tranche of the lock they stand for (ProcArray, XactSLRU, ...).

use crate::locks::{BenchLock, LockCounters, LockFamily};
use flexlock::{ClogGroupLock, FlexConfig, FlexLock, GroupStats, Policy, DEFAULT_MAX_GROUP};
use lwlock::{RawAtomicLwLock, RawLwLock, Tranche};

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

/// `BenchLock::held` of a group lock: the state of the lock it wraps.
#[inline]
fn held_of(raw: &impl lwlock::RawLwLock) -> Option<(bool, bool)> {
    Some((raw.is_locked(), raw.is_locked_exclusive()))
}

/// `BenchLock::shared` and `exclusive` of a group lock: its read and write guards (every group
/// lock of flexlock has the same guard API).
macro_rules! guard_methods {
    () => {
        #[inline]
        fn shared<R>(&self, f: impl FnOnce(&T) -> R) -> R {
            f(&self.0.read())
        }
        #[inline]
        fn exclusive<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
            f(&mut self.0.write())
        }
    };
}

/// `BenchLock::counters` and `held` of a group lock: its group counters with the wrapped
/// lock's, and the wrapped lock's state.
macro_rules! stats_and_held {
    () => {
        fn counters(&self) -> LockCounters {
            from_group_stats(self.0.stats(), self.0.raw().stats())
        }
        #[inline]
        fn held(&self) -> Option<(bool, bool)> {
            held_of(self.0.raw())
        }
    };
}

/// `FlexLock` with a fixed policy.
#[derive(Debug)]
pub struct FlexLocked<T, const LEADER: bool>(FlexLock<RawAtomicLwLock, T>);

impl<T: Send + Sync, const LEADER: bool> BenchLock<T> for FlexLocked<T, LEADER> {
    fn new(data: T, tranche: Tranche) -> Self {
        let policy = if LEADER {
            Policy::Leader
        } else {
            Policy::LastReleaser
        };
        FlexLocked(FlexLock::with_config(
            data,
            FlexConfig {
                policy,
                max_group: DEFAULT_MAX_GROUP,
                tranche,
            },
        ))
    }
    guard_methods!();
    #[inline]
    fn group<R: Send>(&self, _key: u64, f: impl FnOnce(&mut T) -> R + Send) -> R {
        self.0.group(f)
    }
    stats_and_held!();
}

/// `ClogGroupLock`: groups only operations with the same key.
#[derive(Debug)]
pub struct ClogGroupLocked<T>(ClogGroupLock<RawAtomicLwLock, T>);

impl<T: Send + Sync> BenchLock<T> for ClogGroupLocked<T> {
    fn new(data: T, tranche: Tranche) -> Self {
        ClogGroupLocked(ClogGroupLock::with_config(
            data,
            FlexConfig {
                policy: Policy::Leader,
                max_group: DEFAULT_MAX_GROUP,
                tranche,
            },
        ))
    }
    guard_methods!();
    #[inline]
    fn group<R: Send>(&self, key: u64, f: impl FnOnce(&mut T) -> R + Send) -> R {
        self.0.update(key, f)
    }
    stats_and_held!();
}

/// Family of `flex-leader`.
#[derive(Debug)]
pub struct FlexLeaderFamily;
impl LockFamily for FlexLeaderFamily {
    type Lock<T: Send + Sync + 'static> = FlexLocked<T, true>;
}

/// Family of `flex-releaser`.
#[derive(Debug)]
pub struct FlexReleaserFamily;
impl LockFamily for FlexReleaserFamily {
    type Lock<T: Send + Sync + 'static> = FlexLocked<T, false>;
}

/// `HolderServesLock`: the last releaser's fast variant (`flex-holder`).
#[derive(Debug)]
pub struct FlexHolderLocked<T>(flexlock::HolderServesLock<RawAtomicLwLock, T>);

impl<T: Send + Sync> BenchLock<T> for FlexHolderLocked<T> {
    fn new(data: T, tranche: Tranche) -> Self {
        FlexHolderLocked(flexlock::HolderServesLock::with_bound(
            data,
            DEFAULT_MAX_GROUP,
            tranche,
        ))
    }
    guard_methods!();
    #[inline]
    fn group<R: Send>(&self, _key: u64, f: impl FnOnce(&mut T) -> R + Send) -> R {
        self.0.group(f)
    }
    stats_and_held!();
}

/// Family of `flex-holder`.
#[derive(Debug)]
pub struct FlexHolderFamily;
impl LockFamily for FlexHolderFamily {
    type Lock<T: Send + Sync + 'static> = FlexHolderLocked<T>;
}

/// Family of `clog-group`.
#[derive(Debug)]
pub struct ClogGroupFamily;
impl LockFamily for ClogGroupFamily {
    type Lock<T: Send + Sync + 'static> = ClogGroupLocked<T>;
}
