//! Group-protocol counters (feature `stats`), in the spirit of `LWLOCK_STATS`.
//!
//! Without the feature the counters do not exist and every bump compiles to nothing; with it each
//! bump is one Relaxed RMW (statistics order nothing).

/// A snapshot of a FlexLock's or clog group lock's counters ([`crate::GroupLock::stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GroupStats {
    /// Groups served: each detached chain one server ran (a lone leader counts as a group of one;
    /// an operation run directly after a successful conditional acquire does not). A drainer that
    /// detaches the queue several times under one exclusive hold counts one group per detach.
    pub groups: u64,
    /// Operations per group, on average (`0.0` when no group formed).
    pub mean_group_size: f64,
    /// The largest group served.
    pub max_group_size: u64,
    /// Operations run by another thread (a leader, a last releaser, a drainer) for their submitter.
    pub ops_by_leader: u64,
    /// Operations run by the thread that submitted them (directly, or as part of its own group).
    pub ops_by_self: u64,
    /// Clog updates that did not join the group because the list head's key differed, and took the
    /// lock exclusively on their own.
    pub clog_fallbacks: u64,
    /// Exclusive acquisitions the lock's own code made (direct, leader, drainer, write guards).
    pub exclusive_acquires: u64,
}

/// Which counter to bump.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Stat {
    Groups,
    GroupOps,
    OpsByLeader,
    OpsBySelf,
    ClogFallbacks,
    ExclusiveAcquires,
}

/// The live counters. Zero-sized without the `stats` feature.
#[derive(Debug)]
pub(crate) struct Counters {
    #[cfg(feature = "stats")]
    counts: [lwlock::sync::AtomicU64; 6],
    #[cfg(feature = "stats")]
    max_group: lwlock::sync::AtomicU64,
}

impl Counters {
    /// All counters zero.
    pub(crate) fn new() -> Self {
        Counters {
            #[cfg(feature = "stats")]
            counts: std::array::from_fn(|_| lwlock::sync::AtomicU64::new(0)),
            #[cfg(feature = "stats")]
            max_group: lwlock::sync::AtomicU64::new(0),
        }
    }

    /// Adds `n` to a counter.
    #[inline(always)]
    pub(crate) fn bump(&self, which: Stat, n: u64) {
        #[cfg(feature = "stats")]
        if n != 0 {
            lwlock::sync::stat_add(&self.counts[which as usize], n);
        }
        #[cfg(not(feature = "stats"))]
        let _ = (which, n);
    }

    /// Records one served group of `size` operations.
    #[inline(always)]
    pub(crate) fn group(&self, size: u64) {
        self.bump(Stat::Groups, 1);
        self.bump(Stat::GroupOps, size);
        #[cfg(feature = "stats")]
        lwlock::sync::stat_max(&self.max_group, size);
    }

    /// A snapshot, or `None` without the `stats` feature.
    pub(crate) fn snapshot(&self) -> Option<GroupStats> {
        #[cfg(feature = "stats")]
        {
            use lwlock::sync::stat_load;
            let c = |s: Stat| stat_load(&self.counts[s as usize]);
            let groups = c(Stat::Groups);
            Some(GroupStats {
                groups,
                mean_group_size: if groups == 0 {
                    0.0
                } else {
                    c(Stat::GroupOps) as f64 / groups as f64
                },
                max_group_size: stat_load(&self.max_group),
                ops_by_leader: c(Stat::OpsByLeader),
                ops_by_self: c(Stat::OpsBySelf),
                clog_fallbacks: c(Stat::ClogFallbacks),
                exclusive_acquires: c(Stat::ExclusiveAcquires),
            })
        }
        #[cfg(not(feature = "stats"))]
        None
    }
}
