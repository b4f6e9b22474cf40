//! LWLOCK_STATS-style per-lock counters (`lwlock.c`, `#ifdef LWLOCK_STATS`).
//!
//! With the `stats` feature each lock carries a [`StatsCounters`] and bumps it with relaxed
//! increments on the paths PostgreSQL counts; without the feature the counters do not exist and
//! every `bump` compiles to nothing. Counts are read with [`crate::RawLwLock::stats`].

/// A snapshot of one lock's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LockStats {
    /// `sh_acquire_count`: shared `acquire` calls (conditional and acquire-or-wait excluded).
    pub sh_acquire: u64,
    /// `ex_acquire_count`: exclusive `acquire` calls.
    pub ex_acquire: u64,
    /// `block_count`: sleeps on the semaphore in acquire, acquire-or-wait and wait-for-var.
    pub block: u64,
    /// `spin_delay_count`: backoff sleeps on the lock's spinlock or wait-list bit.
    pub spin_delay: u64,
    /// `dequeue_self_count`: queued, then won the lock on the re-check and dequeued.
    pub dequeue_self: u64,
}

impl std::ops::Add for LockStats {
    type Output = LockStats;
    fn add(self, o: LockStats) -> LockStats {
        LockStats {
            sh_acquire: self.sh_acquire + o.sh_acquire,
            ex_acquire: self.ex_acquire + o.ex_acquire,
            block: self.block + o.block,
            spin_delay: self.spin_delay + o.spin_delay,
            dequeue_self: self.dequeue_self + o.dequeue_self,
        }
    }
}

/// Which counter to bump.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Stat {
    ShAcquire,
    ExAcquire,
    Block,
    SpinDelay,
    DequeueSelf,
}

/// The live counters of one lock. Zero-sized without the `stats` feature.
#[derive(Debug, Default)]
pub(crate) struct StatsCounters {
    #[cfg(feature = "stats")]
    counts: [crate::sync::AtomicU64; 5],
}

impl StatsCounters {
    #[cfg(not(loom))]
    pub(crate) const fn new() -> Self {
        StatsCounters {
            #[cfg(feature = "stats")]
            counts: [const { crate::sync::AtomicU64::new(0) }; 5],
        }
    }
    #[cfg(loom)]
    pub(crate) fn new() -> Self {
        StatsCounters {
            #[cfg(feature = "stats")]
            counts: std::array::from_fn(|_| crate::sync::AtomicU64::new(0)),
        }
    }

    /// Adds `n` to a counter ([`crate::sync::stat_add`]: Relaxed, and not charged to a simulated
    /// machine).
    #[inline(always)]
    pub(crate) fn bump(&self, which: Stat, n: u64) {
        #[cfg(feature = "stats")]
        if n != 0 {
            crate::sync::stat_add(&self.counts[which as usize], n);
        }
        #[cfg(not(feature = "stats"))]
        let _ = (which, n);
    }

    /// A snapshot, or `None` without the `stats` feature.
    pub(crate) fn snapshot(&self) -> Option<LockStats> {
        #[cfg(feature = "stats")]
        {
            let c = |i: Stat| crate::sync::stat_load(&self.counts[i as usize]);
            Some(LockStats {
                sh_acquire: c(Stat::ShAcquire),
                ex_acquire: c(Stat::ExAcquire),
                block: c(Stat::Block),
                spin_delay: c(Stat::SpinDelay),
                dequeue_self: c(Stat::DequeueSelf),
            })
        }
        #[cfg(not(feature = "stats"))]
        None
    }
}
