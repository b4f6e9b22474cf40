//! The policies of a FlexLock, the bound on the operations one server runs per hold, and the
//! configuration of the group locks.
//!
//! Mirrors no PostgreSQL function: PostgreSQL hard-codes the leader policy
//! (`ProcArrayGroupClearXid`, `TransactionGroupUpdateXidStatus`) and serves a whole group in one
//! hold; the last-releaser policy is the 2011 FlexLock design and the bound is CC-Synch's *h*.

use lwlock::Tranche;

/// Operations one server runs per exclusive hold before handing the rest over, unless configured.
///
/// 64, above the thread counts measured, keeps handovers for genuine pile-ups, where a bound
/// protects the leader's own latency (CC-Synch's reason for *h*); the runs behind the choice are
/// in `docs/results.md` ("The group locks' constants, measured").
pub const DEFAULT_MAX_GROUP: usize = 64;

/// How a FlexLock runs operations it cannot run at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GroupPolicy {
    /// An elected leader takes the lock and runs the group (`ProcArrayGroupClearXid`, 9.6+).
    Leader,
    /// Whoever releases the lock to free runs the queued operations (the 2011 FlexLock).
    LastReleaser,
}

/// Configuration of a [`crate::FlexLock`] (and of a [`crate::ClogGroupLock`], which uses the leader
/// policy only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlexConfig {
    /// The policy.
    pub policy: GroupPolicy,
    /// The bound *h* on operations one server runs per exclusive hold before handing the rest of
    /// its chain over (at least 1).
    pub max_group: usize,
    /// The tranche the lock reports its waits under.
    pub tranche: Tranche,
}

impl FlexConfig {
    /// `policy` with [`DEFAULT_MAX_GROUP`] and [`Tranche::PROC_ARRAY`].
    pub const fn new(policy: GroupPolicy) -> Self {
        FlexConfig {
            policy,
            max_group: DEFAULT_MAX_GROUP,
            tranche: Tranche::PROC_ARRAY,
        }
    }
}

impl Default for FlexConfig {
    fn default() -> Self {
        Self::new(GroupPolicy::Leader)
    }
}
