//! The pgbench transactions: `pgbench-select` (`-S`: one snapshot plus `--work`),
//! `pgbench-write` (`-N`: xid, snapshot, `--work`, CLOG commit, end of transaction),
//! `pgbench-write-status` (the same plus [`STATUS_READS`] `TransactionIdGetStatus` lookups of
//! recent xids under the CLOG lock shared, each with its SLRU slot search, before `--work`) and
//! `pgbench-n` (`-N` statement by statement: a snapshot per statement).

use super::steps::{begin_xact, clog_commit, end_xact, shared_checked, take_snapshot};
use super::worker::Worker;
use super::{Shared, CLOG_PAGES};
use crate::locks::LockFamily;
use crate::pgshared::{CLOG_XACTS_PER_PAGE, FIRST_NORMAL_XID, INVALID_XID, XACT_COMMITTED};
use crate::snapshot::Outcome;

/// `TransactionIdGetStatus` lookups per `pgbench-write-status` transaction: the visibility
/// checks of a `pgbench -N` transaction on tuples whose hint bits are not yet set
/// (`HeapTupleSatisfiesMVCC` → `TransactionIdDidCommit` → `TransactionLogFetch`): the UPDATE's
/// index scan checks the accounts row's xmin and the xmax of its previous version, and the
/// SELECT the row's chain again. A choice (an upper estimate: once a check sets the hint bits
/// the next skips the CLOG), not a measurement; each lookup takes the CLOG lock shared
/// (`SimpleLruReadPage_ReadOnly`), the reads seed 004's CLogControlLock waits include besides
/// the commits.
pub const STATUS_READS: u32 = 3;

/// The lookups' xids lie in the `RECENT_XIDS` xids before the transaction's own: tuples
/// written by recently committed (or still running) transactions, whose hint bits no one has
/// set yet.
const RECENT_XIDS: u64 = 1024;

/// `pgbench-select`.
#[inline]
pub(super) fn select<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    take_snapshot(s, w);
    w.work();
}

/// `pgbench-write`.
#[inline]
pub(super) fn write<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    begin_xact(s, w);
    take_snapshot(s, w);
    w.work();
    clog_commit(s, w, w.xid);
    end_xact(s, w);
}

/// `STATUS_READS` `TransactionIdGetStatus` lookups, each its own shared section of the CLOG
/// lock (`SimpleLruReadPage_ReadOnly` takes it and `TransactionIdGetStatus` releases it). The
/// first looks up the thread's previous commit (which must read committed, unless the ring
/// has wrapped over it), the others recent xids. Not timed: `shared_wait` stays the
/// snapshot's.
#[inline]
pub(super) fn status_lookups<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    let window = (CLOG_PAGES as u32 - 1) * CLOG_XACTS_PER_PAGE;
    for i in 0..STATUS_READS {
        let own = i == 0 && w.last_clog_xid != INVALID_XID;
        let xid = if own {
            w.last_clog_xid
        } else {
            let back = 1 + (w.rand() % RECENT_XIDS) as u32;
            w.xid.saturating_sub(back).max(FIRST_NORMAL_XID)
        };
        let checked = w.checked();
        let status = shared_checked(&s.clog, &s.clog_check, checked, |c| c.lookup_status(xid));
        let wrapped = w.xid.wrapping_sub(xid) >= window;
        if status > XACT_COMMITTED || (own && status != XACT_COMMITTED && !wrapped) {
            w.bad_reads += 1;
        }
        w.sink = w.sink.wrapping_add(status as u64);
        w.ops += 1;
    }
}

/// One `pgbench-write-status` transaction. Not inlined, so that adding it left the generated
/// code of the other workloads' transactions as it was: simulated runs depend on it (inlined,
/// it changed `pgbench-write` on `clog-group` under `--engine sim`).
#[inline(never)]
pub(super) fn write_status<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    begin_xact(s, w);
    take_snapshot(s, w);
    status_lookups(s, w);
    w.work();
    clog_commit(s, w, w.xid);
    end_xact(s, w);
}

/// `pgbench-write-status` did [`STATUS_READS`] lookups per transaction besides its snapshot,
/// commit and end (a validated optimistic snapshot takes no lock).
pub(super) fn check_write_status<F: LockFamily>(
    _s: &Shared<F>,
    workers: &[Worker],
) -> Result<(), String> {
    let ops: u64 = workers.iter().map(|w| w.ops).sum();
    let txns: u64 = workers.iter().map(|w| w.txns).sum();
    let validated: u64 = workers
        .iter()
        .map(|w| w.snapshot_outcomes[Outcome::Validated as usize])
        .sum();
    if ops + validated != txns * (3 + STATUS_READS as u64) {
        return Err(format!(
            "pgbench-write-status: {ops} lock operations for {txns} transactions, expected {} \
             each",
            3 + STATUS_READS
        ));
    }
    Ok(())
}

/// `pgbench-n`: pgbench's simple-update script under read committed, each statement with its
/// own snapshot.
#[inline]
pub(super) fn n<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    // UPDATE pgbench_accounts: its snapshot, then the xid at the first write
    // (AssignTransactionId).
    take_snapshot(s, w);
    begin_xact(s, w);
    w.work_part(0, 4);
    // SELECT abalance.
    take_snapshot(s, w);
    w.work_part(1, 4);
    // INSERT INTO pgbench_history.
    take_snapshot(s, w);
    w.work_part(2, 4);
    // END: RecordTransactionCommit's WAL insert and flush, then the CLOG, then
    // ProcArrayEndTransaction.
    w.work_part(3, 4);
    clog_commit(s, w, w.xid);
    end_xact(s, w);
}
