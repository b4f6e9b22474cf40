//! Group-commit locks over any LWLock of the [`lwlock::RawLwLock`] trait.
//!
//! * [`FlexLock`]: shared and exclusive guards plus a *group operation*: hand over a closure over
//!   the protected value, get back its result, whether this thread ran it or another did.
//!   * [`GroupPolicy::Leader`]: an elected leader runs the group (`ProcArrayGroupClearXid`, PostgreSQL
//!     9.6+).
//!   * [`GroupPolicy::LastReleaser`]: whoever releases the lock to free runs the queued operations (the
//!     2011 FlexLock design of ProcArrayLock).
//! * [`HolderServesLock`]: the last-releaser FlexLock's fast variant (beyond PostgreSQL):
//!   exclusive holders serve the queue, unserved submitters wait for the lock themselves, and no
//!   release pays the last-releaser handshake's fence.
//! * [`ClogGroupLock`]: the keyed variant, where only operations on the same CLOG page group
//!   (`TransactionGroupUpdateXidStatus`, PostgreSQL 11+).
//!
//! Both are generic over the lock, so the classic, atomic and parking_lot locks can be measured
//! with group commit on and off. Operations are not allocated: each lives on its submitter's stack
//! and is linked through the submitter's wait record ([`lwlock::Proc`]). A panicking operation is
//! caught where it runs and re-raised in its submitter; the rest of the group still runs.
//!
//! Every lock implements [`GroupLock`] (read, write, their `try_` forms, the group operation,
//! counters, the wrapped lock): import it to call them, or write code generic over the policy.
//!
//! Feature `stats`: [`GroupStats`] (groups, group sizes, who ran each operation, clog fallbacks,
//! exclusive acquisitions), read with [`GroupLock::stats`].
//!
//! Modules (named after the mechanism): `op` (the stack-allocated operation), `group_list` (the
//! Treiber list, serving pass, wake and handover), `group` (the protocols, one file each: the
//! shared core, the leader, the last releaser's submitter and drain, holder serves, the guards),
//! `group_lock` (the trait), `flex_group_commit` (FlexLock and HolderServesLock),
//! `clog_group_update` (the keyed group).
#![deny(missing_docs)]

mod clog_group_update;
pub mod flex_group_commit;
mod group;
mod group_list;
mod group_lock;
mod op;
mod stats;

pub use clog_group_update::ClogGroupLock;
pub use flex_group_commit::{
    FlexConfig, FlexLock, FlexReadGuard, FlexWriteGuard, GroupPolicy, HolderServesLock,
    DEFAULT_MAX_GROUP,
};
pub use group_lock::GroupLock;
pub use stats::GroupStats;

/// The crate README's example, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
