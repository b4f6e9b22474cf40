//! One worker thread's state and tallies, and its settings.

use super::section_check::CHECK_EVERY;
use crate::clock::{self, Ticks};
use crate::pgshared::INVALID_XID;
use crate::snapshot::{Outcome, SnapshotCache, Strategy};
use hdrhistogram::Histogram;
use std::hint::black_box;

/// Per-thread settings.
#[derive(Clone, Copy, Debug)]
pub struct WorkerConfig {
    /// Percent of snapshot operations that end a transaction instead.
    pub write_pct: u8,
    /// Iterations of busy work outside locks per transaction.
    pub work: u32,
    /// Time one operation in this many, on average (the spacing is random, so that it cannot
    /// alias with a transaction's fixed sequence of operations).
    pub time_every: u32,
    /// How snapshots are taken.
    pub strategy: Strategy,
    /// Idle time after each transaction, microseconds (`--idle`): the backend waiting on its
    /// socket for its client's next query (pgbench's round trip), off the CPU. A `u16` so that
    /// the config fits its old padding: `Worker` keeps its size, and so every simulated run its
    /// addresses (a FlexLock operation's stack slot is charged by line).
    pub idle_us: u16,
}

/// One thread's state and tallies.
#[derive(Debug)]
pub struct Worker {
    /// The thread's proc-array slot.
    pub slot: usize,
    pub(super) cfg: WorkerConfig,
    pub(super) rng: u64,
    pub(super) countdown: u32,
    pub(super) check_countdown: u32,
    /// The thread's snapshot buffers (and, for `reuse`, its previous snapshot).
    pub cache: SnapshotCache,
    /// The thread's running xid, or `INVALID_XID`.
    pub(super) xid: u32,
    /// Lock operations done.
    pub ops: u64,
    /// Transactions done.
    pub txns: u64,
    /// End-of-transaction operations done (checked against `xactCompletionCount`).
    pub ends: u64,
    /// CLOG updates done (checked against the CLOG's count).
    pub clog_ops: u64,
    /// The last xid this thread committed in the CLOG.
    pub last_clog_xid: u32,
    /// Reads that break their invariant (must stay 0): snapshots whose running xids are not all
    /// in `[xmin, xmax)`, `pin-vm` map reads that found the page not all-visible,
    /// `pgbench-write-status` lookups that read an invalid status or missed the thread's own
    /// previous commit. (One counter for all, so that `Worker` keeps its size and the other
    /// workloads' simulated runs their addresses.)
    pub bad_reads: u64,
    /// Snapshots by how they were obtained, indexed by [`Outcome`] as `usize`.
    pub snapshot_outcomes: [u64; Outcome::COUNT],
    /// Wait until the shared critical section began, for timed shared operations.
    pub shared_wait: Histogram<u64>,
    /// Wait until the exclusive (or grouped) operation ran, for timed exclusive operations of
    /// every lock but the CLOG's (ProcArrayLock, the null lock).
    pub excl_wait: Histogram<u64>,
    /// The same for the CLOG lock (XactSLRU), kept apart: pgbench-write takes both.
    pub clog_wait: Histogram<u64>,
    pub(super) sink: u64,
}

fn histogram() -> Histogram<u64> {
    // 1 ns .. 100 s at 2 significant digits (1 %), about 80 KB.
    Histogram::new_with_bounds(1, 100_000_000_000, 2).expect("valid histogram bounds")
}

impl Worker {
    /// A worker for proc-array slot `slot`.
    pub fn new(slot: usize, procs: usize, cfg: WorkerConfig) -> Self {
        Worker::with_seed(slot, procs, cfg, 0)
    }

    /// The same, its random choices (timing and check spacing, `--write-pct` draws) also mixed
    /// with `seed` (seed 0 gives [`Worker::new`]'s): simulated trials use a seed each, so that
    /// they differ as real trials do.
    pub fn with_seed(slot: usize, procs: usize, cfg: WorkerConfig, seed: u64) -> Self {
        let mixed = seed.wrapping_mul(0xA24B_AED4_963E_E407).rotate_left(17);
        Worker {
            slot,
            cfg,
            rng: (0x2545_F491_4F6C_DD1D
                ^ (slot as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
                ^ mixed)
                .max(1),
            countdown: 1 + (slot as u32 % cfg.time_every.max(1)),
            check_countdown: 1 + (slot as u32 % CHECK_EVERY),
            cache: SnapshotCache::with_capacity(procs),
            xid: INVALID_XID,
            ops: 0,
            txns: 0,
            ends: 0,
            clog_ops: 0,
            last_clog_xid: INVALID_XID,
            bad_reads: 0,
            snapshot_outcomes: [0; Outcome::COUNT],
            shared_wait: histogram(),
            excl_wait: histogram(),
            clog_wait: histogram(),
            sink: 0,
        }
    }

    #[inline]
    pub(super) fn rand(&mut self) -> u64 {
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        x
    }

    /// A random spacing with mean `every`: uniform in `[1, 2·every − 1]`.
    #[inline]
    pub(super) fn spacing(&mut self, every: u32) -> u32 {
        if every <= 1 {
            1
        } else {
            1 + (self.rand() % (2 * every as u64 - 1)) as u32
        }
    }

    /// `Some(now)` for one operation in `time_every` on average, randomly spaced.
    #[inline]
    pub(super) fn timer(&mut self) -> Option<Ticks> {
        self.countdown -= 1;
        if self.countdown == 0 {
            self.countdown = self.spacing(self.cfg.time_every);
            Some(clock::now())
        } else {
            None
        }
    }

    /// Whether this critical section runs the section checks (one in [`CHECK_EVERY`]).
    #[inline]
    pub(super) fn checked(&mut self) -> bool {
        self.check_countdown -= 1;
        if self.check_countdown == 0 {
            self.check_countdown = self.spacing(CHECK_EVERY);
            true
        } else {
            false
        }
    }

    /// Busy work outside any lock: `--work` xorshift steps (charged as 1 ns each on the
    /// simulator, which times memory operations only).
    #[inline]
    pub(super) fn work(&mut self) {
        #[cfg(lwsim)]
        if self.cfg.work > 0 {
            lwlock::sync::lwsim::compute(self.cfg.work as u64);
        }
        for _ in 0..self.cfg.work {
            let r = self.rand();
            self.sink = self.sink.wrapping_add(black_box(r));
        }
    }

    /// Part `part` of `parts` of the transaction's `--work` (the parts add up to it exactly:
    /// the last takes the remainder).
    #[inline]
    pub(super) fn work_part(&mut self, part: u32, parts: u32) {
        self.busy(self.work_part_len(part, parts));
    }

    /// The length of part `part` of `parts` of `--work` ([`Worker::work_part`]'s).
    #[inline]
    pub(super) fn work_part_len(&self, part: u32, parts: u32) -> u32 {
        let each = self.cfg.work / parts;
        if part + 1 == parts {
            self.cfg.work - each * (parts - 1)
        } else {
            each
        }
    }

    /// `n` xorshift steps of busy work, as `--work`'s (a part of it that runs somewhere else:
    /// inside a lock).
    #[inline]
    pub(super) fn busy(&mut self, n: u32) {
        #[cfg(lwsim)]
        if n > 0 {
            lwlock::sync::lwsim::compute(n as u64);
        }
        for _ in 0..n {
            let r = self.rand();
            self.sink = self.sink.wrapping_add(black_box(r));
        }
    }

    pub(super) fn record(h: &mut Histogram<u64>, waited: Option<u64>) {
        if let Some(ns) = waited {
            h.saturating_record(ns.max(1));
        }
    }
}
