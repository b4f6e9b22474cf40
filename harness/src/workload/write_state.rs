//! The pgbench write shapes' WAL insertion locks and MultiXactGenLock ([`WriteState`]):
//! PostgreSQL 9.4+'s eight WAL insertion locks or, with `--era-traffic walinsertlock`,
//! 9.1-9.3's one WALInsertLock; MultiXactGenLock unless `--era-traffic nomultixact`; and
//! `pgbench-write-status`'s count of status lookups (`--status-lookups`).

use crate::era_traffic::EraTraffic;
use crate::locks::{BenchLock, LockFamily};
use crossbeam_utils::CachePadded;
use lwlock::Tranche;

/// WAL insertion locks since 9.4 (`NUM_XLOGINSERT_LOCKS`).
pub const NUM_XLOGINSERT_LOCKS: usize = 8;

/// WAL records of a `pgbench-n` transaction: the `UPDATE`'s (`heap_update`, HOT), the
/// `INSERT`'s (`heap_insert`) and the commit record. PostgreSQL 15's trace has these three in
/// 67 of its 100 steady-state transactions; the others have five (or four): the update's new
/// version on another page adds its index insertion's record (and a prune's), not modelled.
pub const WAL_RECORDS_PER_N: u64 = 3;

/// WAL records of a `pgbench-write-status` transaction (pgbench's TPC-B-like script): the three
/// `UPDATE`s' (`heap_update`, HOT), the `INSERT`'s and the commit record. PostgreSQL 15's trace
/// has 6.22 `WALInsert` acquisitions per steady-state transaction: these five, and the index
/// insertions and prunes of updates whose new version moved to another page, not modelled.
pub const WAL_RECORDS_PER_TPCB: u64 = 5;

/// The default of `--wal-hold`: busy work (xorshift steps, 1 ns each on the simulator) that a
/// pgbench write shape's WAL record runs inside its WAL insertion lock, taken out of `--work` (the
/// transaction's CPU is unchanged). An ASSUMPTION, no measured source: `XLogInsert`'s work under
/// the lock for a small record (the header's CRC, the reservation, the copy of some 100-200
/// bytes into the shared WAL buffers, the insert state's lines) on a 2 GHz part of 2010-2011.
/// `docs/results.md` gives seed 002's sensitivity to halving and doubling it.
pub const DEFAULT_WAL_HOLD: u32 = 1000;

/// What the pgbench write shapes (`pgbench-n`, `pgbench-write`, `pgbench-write-status`) add to
/// [`Shared`](super::Shared): their WAL insertion locks and MultiXactGenLock, and
/// `pgbench-write-status`'s lookups per hundred transactions.
#[derive(Debug)]
pub struct WriteState<F: LockFamily> {
    /// The WAL insertion locks: [`NUM_XLOGINSERT_LOCKS`] (9.4+), or one (`--era-traffic
    /// walinsertlock`: 9.1-9.3's WALInsertLock). Each guards a count of the records inserted
    /// under it (checked after a trial).
    pub wal: Box<[CachePadded<F::Lock<u64>>]>,
    /// MultiXactGenLock, unless `--era-traffic nomultixact`.
    pub multixact: Option<CachePadded<F::Lock<()>>>,
    /// Busy work inside the WAL insertion lock per record (`--wal-hold`).
    pub hold: u32,
    /// `pgbench-write-status`'s `TransactionIdGetStatus` lookups per hundred transactions
    /// (`--status-lookups`; `Shared` starts it at `STATUS_READS_PER_100`).
    pub status_per_100: u64,
}

impl<F: LockFamily> WriteState<F> {
    /// The state for `era` (its `walinsertlock` and `nomultixact`), at the default hold, with
    /// `status_per_100` status lookups per hundred `pgbench-write-status` transactions.
    pub fn new(era: EraTraffic, status_per_100: u64) -> Self {
        let wal = Tranche::register("WALInsert");
        let locks = if era.wal_insert_lock() {
            1
        } else {
            NUM_XLOGINSERT_LOCKS
        };
        WriteState {
            wal: (0..locks)
                .map(|_| CachePadded::new(F::Lock::new(0, wal)))
                .collect(),
            multixact: (!era.no_multixact())
                .then(|| CachePadded::new(F::Lock::new((), Tranche::register("MultiXactGen")))),
            hold: DEFAULT_WAL_HOLD,
            status_per_100,
        }
    }

    /// The WAL insertion lock of the backend in `slot`: its own (`MyLockNo`, `pgprocno %
    /// NUM_XLOGINSERT_LOCKS`; PostgreSQL moves a backend to the next lock after it had to wait,
    /// which is not modelled), or the one WALInsertLock.
    #[inline]
    pub fn wal_lock(&self, slot: usize) -> &F::Lock<u64> {
        &self.wal[slot % self.wal.len()]
    }

    /// Records inserted so far, over every lock.
    pub fn records(&self) -> u64 {
        self.wal.iter().map(|l| l.shared(|n| *n)).sum()
    }
}
