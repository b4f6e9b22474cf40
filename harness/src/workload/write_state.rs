//! `pgbench-n`'s WAL insertion locks and MultiXactGenLock ([`WriteState`]): PostgreSQL 9.4+'s
//! eight WAL insertion locks or, with `--era-traffic walinsertlock`, 9.1-9.3's one
//! WALInsertLock; MultiXactGenLock unless `--era-traffic nomultixact`.

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

/// The default of `--wal-hold`: busy work (xorshift steps, 1 ns each on the simulator) that a
/// `pgbench-n` WAL record runs inside its WAL insertion lock, taken out of `--work` (the
/// transaction's CPU is unchanged). An ASSUMPTION, no measured source: `XLogInsert`'s work under
/// the lock for a small record (the header's CRC, the reservation, the copy of some 100-200
/// bytes into the shared WAL buffers, the insert state's lines) on a 2 GHz part of 2010-2011.
/// `docs/results.md` gives seed 002's sensitivity to halving and doubling it.
pub const DEFAULT_WAL_HOLD: u32 = 1000;

/// The locks `pgbench-n` adds to [`Shared`](super::Shared): its WAL insertion locks and MultiXactGenLock.
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
}

impl<F: LockFamily> WriteState<F> {
    /// The state for `era` (its `walinsertlock` and `nomultixact`), at the default hold.
    pub fn new(era: EraTraffic) -> Self {
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
