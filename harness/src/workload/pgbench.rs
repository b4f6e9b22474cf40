//! The pgbench transactions: `pgbench-select` (`-S`), `pgbench-write` (`-N` at the lock level:
//! its statements' snapshots, the xid, MultiXactGenLock, the WAL records, the CLOG commit, the
//! end of transaction), `pgbench-write-status` (the TPC-B-like default script at the same
//! level, with its `TransactionIdGetStatus` lookups under the CLOG lock shared) and `pgbench-n`
//! (`-N` statement by statement, with its buffer traffic). Each simple-query statement takes
//! [`SNAPSHOTS_PER_STATEMENT`] snapshots, as `exec_simple_query` does.

use super::steps::{
    accounts_lookup, assign_xid, clog_commit, end_xact, random_aid, shared_checked,
    statement_snapshots, take_snapshot, SNAPSHOTS_PER_STATEMENT,
};
use super::worker::Worker;
use super::write_state::{WriteState, WAL_RECORDS_PER_N, WAL_RECORDS_PER_TPCB};
use super::{Shared, CLOG_PAGES};
use crate::buffer_pool::PageId;
use crate::locks::{BenchLock, LockFamily};
use crate::pgshared::{CLOG_XACTS_PER_PAGE, FIRST_NORMAL_XID, INVALID_XID, XACT_COMMITTED};
use crate::snapshot::Outcome;

/// `TransactionIdGetStatus` lookups per hundred `pgbench-write-status` transactions: PostgreSQL
/// 15's TPC-B-like transaction, `bench/traces/pg15-tpcb-c1/trace-summary.csv` (`XactSLRU`
/// shared, 57.62 acquisitions per steady-state transaction over 2 845, one client, scale 10,
/// autovacuum off). Visibility checks of tuples whose hint bits are not yet set
/// (`HeapTupleSatisfiesMVCC` → `TransactionIdDidCommit` → `TransactionLogFetch`), each
/// taking the CLOG lock shared (`SimpleLruReadPage_ReadOnly`): the update chains of the ten
/// branches' and hundred tellers' rows grow through a run without vacuum, and each update and
/// read walks them. A measured figure of that run, not a constant of pgbench: with two clients
/// (`pg15-tpcb-c2`) it was 26.1. Seed 004, the shape's seed, ran this transaction ("pgbench
/// read-write"). The default of `--status-lookups` ([`Shared::with_status_lookups`]), which
/// sweeps it.
pub const STATUS_READS_PER_100: u64 = 5762;

/// The lookups of the transaction numbered `txn` (from 0) of a worker at `per_100` lookups per
/// hundred transactions (`--status-lookups`): `per_100 / 100` or one more (57 or 58 at the
/// default [`STATUS_READS_PER_100`]), so that any hundred consecutive transactions from the
/// first do `per_100` exactly.
pub fn status_reads_at(per_100: u64, txn: u64) -> u64 {
    (txn + 1) * per_100 / 100 - txn * per_100 / 100
}

/// The lookups of a worker's first `txns` transactions at `per_100` per hundred.
pub fn status_reads_total_at(per_100: u64, txns: u64) -> u64 {
    txns * per_100 / 100
}

/// Statements of pgbench's TPC-B-like script that take snapshots: three `UPDATE`s, a `SELECT`,
/// an `INSERT` (`BEGIN` and `END` take none).
const TPCB_STATEMENTS: u32 = 5;

/// The lookups' xids lie in the `RECENT_XIDS` xids before the transaction's own: tuples
/// written by recently committed (or still running) transactions, whose hint bits no one has
/// set yet.
const RECENT_XIDS: u64 = 1024;

/// `pgbench-select`: `SELECT abalance FROM pgbench_accounts WHERE aid = :aid` as PostgreSQL
/// 9.6+ runs it (atomic pins, 128 mapping partitions): the statement's two snapshots, the
/// primary-key lookup (root, internal page, leaf, heap page, each through its mapping partition
/// shared and its content lock shared), then `--work`. The relation locks and the vxid lock are
/// the backend's own fast-path lock, left out (the `select-*` shapes have them).
#[inline]
pub(super) fn select<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    statement_snapshots(s, w);
    let aid = random_aid(w);
    accounts_lookup(s, w, aid, false);
    w.work();
}

/// `pgbench-write`: `-N`'s lock-level shape: the `UPDATE`'s snapshots, the xid at its first
/// write (`GetNewTransactionId` under XidGenLock), MultiXactGenLock shared and the update's
/// WAL record, the `SELECT`'s snapshots, the `INSERT`'s and its WAL record, the commit record,
/// the rest of `--work` (the statements' execution and the WAL flush), the CLOG commit and the
/// end of transaction. The WAL records and MultiXactGenLock are `pgbench-n`'s (9.4+'s eight
/// insertion locks, the backend's own; `--era-traffic walinsertlock,nomultixact` as there),
/// each record's `--wal-hold` taken out of `--work` ([`hold_split`]). Its pages and the lock
/// manager are left out (`pgbench-n` has them).
#[inline]
pub(super) fn write<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    let st = s.write_state().expect("pgbench-write has its write state");
    let (hold, rest) = hold_split(st, w.work_part_len(0, 1), WAL_RECORDS_PER_N);
    first_update(s, st, w, hold);
    // SELECT abalance.
    statement_snapshots(s, w);
    // INSERT INTO pgbench_history.
    statement_snapshots(s, w);
    wal_record(st, w, hold);
    // END: the commit record, the rest of the work, the CLOG, ProcArrayEndTransaction.
    wal_record(st, w, hold);
    w.busy(rest);
    clog_commit(s, w, w.xid);
    end_xact(s, w);
}

/// `len` steps of `--work` split between `records` WAL records and the rest: the hold per
/// record (`--wal-hold`, at most an equal share of `len`) and the rest, which runs outside the
/// locks, so the transaction's CPU is `--work` whatever the hold. `pgbench-n` splits each of
/// its four parts for one record; the lock-level shapes split all of `--work` for theirs.
#[inline]
fn hold_split<F: LockFamily>(st: &WriteState<F>, len: u32, records: u64) -> (u32, u32) {
    let hold = st.hold.min(len / records as u32);
    (hold, len - hold * records as u32)
}

/// A lock-level write shape's first `UPDATE`: its snapshots, the xid, MultiXactGenLock and the
/// update's WAL record (holding `hold` steps).
#[inline]
fn first_update<F: LockFamily>(s: &Shared<F>, st: &WriteState<F>, w: &mut Worker, hold: u32) {
    statement_snapshots(s, w);
    assign_xid(s, w);
    multixact_oldest_member(st, w);
    wal_record(st, w, hold);
}

/// `MultiXactIdSetOldestMember` at a transaction's first `UPDATE` (9.3+): MultiXactGenLock
/// shared, unless `--era-traffic nomultixact`.
#[inline]
fn multixact_oldest_member<F: LockFamily>(st: &WriteState<F>, w: &mut Worker) {
    if let Some(m) = &st.multixact {
        m.shared(|_| ());
        w.ops += 1;
    }
}

/// The transaction's `TransactionIdGetStatus` lookups ([`status_reads_at`] the trial's count,
/// [`Shared::status_lookups_per_100`]), each its own shared section of the CLOG
/// lock (`SimpleLruReadPage_ReadOnly` takes it and `TransactionIdGetStatus` releases it). The
/// first looks up the thread's previous commit (which must read committed, unless the ring
/// has wrapped over it), the others recent xids. Not timed: `shared_wait` stays the
/// snapshot's.
#[inline]
pub(super) fn status_lookups<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    let window = (CLOG_PAGES as u32 - 1) * CLOG_XACTS_PER_PAGE;
    for i in 0..status_reads_at(s.status_lookups_per_100(), w.txns) {
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

/// One `pgbench-write-status` transaction: pgbench's TPC-B-like script at the lock level,
/// statement by statement: `UPDATE pgbench_accounts` (its snapshots, the xid,
/// MultiXactGenLock shared, its WAL record), `SELECT abalance` (snapshots), `UPDATE
/// pgbench_tellers` and `UPDATE pgbench_branches` (snapshots, a WAL record each), `INSERT INTO
/// pgbench_history` (snapshots, a WAL record), the status lookups, the commit record, the rest
/// of `--work`, the CLOG commit, the end of transaction. The WAL records and MultiXactGenLock as
/// in [`write`]. Not inlined, so that adding it left the generated code of the other workloads'
/// transactions as it was.
#[inline(never)]
pub(super) fn write_status<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    let st = s
        .write_state()
        .expect("pgbench-write-status has its write state");
    let (hold, rest) = hold_split(st, w.work_part_len(0, 1), WAL_RECORDS_PER_TPCB);
    first_update(s, st, w, hold);
    // SELECT abalance.
    statement_snapshots(s, w);
    // UPDATE pgbench_tellers, UPDATE pgbench_branches, INSERT INTO pgbench_history.
    for _ in 2..TPCB_STATEMENTS {
        statement_snapshots(s, w);
        wal_record(st, w, hold);
    }
    status_lookups(s, w);
    // END.
    wal_record(st, w, hold);
    w.busy(rest);
    clog_commit(s, w, w.xid);
    end_xact(s, w);
}

/// `pgbench-write-status` did [`status_reads_at`] the trial's count of lookups per transaction
/// besides its snapshots, xid, MultiXactGenLock, WAL records, commit and end (a validated
/// optimistic snapshot takes no lock), and inserted [`WAL_RECORDS_PER_TPCB`] WAL records per
/// transaction.
pub(super) fn check_write_status<F: LockFamily>(
    s: &Shared<F>,
    workers: &[Worker],
) -> Result<(), String> {
    let st = s
        .write_state()
        .expect("pgbench-write-status has its write state");
    let fixed = (TPCB_STATEMENTS * SNAPSHOTS_PER_STATEMENT) as u64
        + 3
        + WAL_RECORDS_PER_TPCB
        + st.multixact.is_some() as u64;
    for (i, w) in workers.iter().enumerate() {
        let validated = w.snapshot_outcomes[Outcome::Validated as usize];
        let want = w.txns * fixed + status_reads_total_at(s.status_lookups_per_100(), w.txns);
        if w.ops + validated != want {
            return Err(format!(
                "pgbench-write-status: worker {i}: {} lock operations for {} transactions, \
                 expected {want}",
                w.ops + validated,
                w.txns
            ));
        }
    }
    check_wal_records(s, workers, "pgbench-write-status", WAL_RECORDS_PER_TPCB)
}

/// One WAL record: the backend's WAL insertion lock exclusive (`WALInsertLockAcquire`, or
/// 9.1-9.3's `LWLockAcquire(WALInsertLock, LW_EXCLUSIVE)`), `hold` steps of busy work inside
/// (the copy), the lock's record count moved.
#[inline]
fn wal_record<F: LockFamily>(n: &WriteState<F>, w: &mut Worker, hold: u32) {
    n.wal_lock(w.slot).exclusive(|c| {
        *c += 1;
        w.busy(hold);
    });
    w.ops += 1;
}

/// `pgbench-n`: pgbench's simple-update script (`-N`) under read committed, statement by
/// statement, with what each statement takes that the harness models:
/// * `UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid`: its two
///   snapshots; the index scan's lookup of `aid` (root, internal page, leaf, heap page, all
///   shared); the xid at the first write (`GetNewTransactionId`, XidGenLock exclusive);
///   `heap_update` reading the heap page again (`ReadBuffer`: its mapping partition shared) and
///   locking it exclusive; inside, `MultiXactIdSetOldestMember` (MultiXactGenLock shared, the
///   transaction's first; 9.3+) and the update's WAL record.
/// * `SELECT abalance FROM pgbench_accounts WHERE aid = :aid`: two snapshots, the lookup.
/// * `INSERT INTO pgbench_history`: two snapshots, the table's target page (the last page,
///   which every backend's `RelationGetBufferForTuple` shares until it fills) exclusive, the
///   insert's WAL record inside.
/// * `END`: the commit record, `--work`'s last part (the rest of the commit: the WAL flush),
///   the CLOG commit, `ProcArrayEndTransaction`.
///
/// Each WAL record takes the backend's WAL insertion lock exclusive (one of
/// [`NUM_XLOGINSERT_LOCKS`](super::NUM_XLOGINSERT_LOCKS), 9.4+; `--era-traffic walinsertlock`: 9.1-9.3's one WALInsertLock)
/// and runs `--wal-hold` steps of busy work inside it, taken out of the `--work` part the
/// record belongs to (at most that part), so the transaction's CPU is `--work` either way.
///
/// The lock manager's LWLocks as 9.2+ takes them ([`crate::lmgr`]): the lazy vxid lock at the
/// start, each statement's relation locks through the fast path between its two snapshots (parse
/// analysis), the xid's lock after the xid (`XactLockTableInsert`, its partition exclusive),
/// and at commit `LockReleaseAll`'s fast-path pass, the xid lock's release through its
/// partition and `VirtualXactLockTableCleanup`: 8 `LockFastPath` and 2 `LockManager`
/// acquisitions, PostgreSQL 15's.
///
/// Left out (PostgreSQL 15's `-N` trace has them; `docs/results.md` lists them with their
/// counts): the update's new tuple version when it does not fit its page (its target page,
/// the index entry's insertion with the leaf exclusive and its WAL record, the uniqueness
/// check's heap fetch, the `SELECT` then visiting both versions), the visibility-map pages,
/// evictions, the hint-bit lookups of the CLOG, the WAL flush (`--work`), 9.4+'s
/// `insertpos_lck` spinlock per record.
#[inline]
pub(super) fn n<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    let st = s.write_state().expect("pgbench-n has its write state");
    let aid = random_aid(w);
    w.ops += s.lmgr.begin_write(w.slot);
    // UPDATE.
    statement(s, w, 0..2);
    accounts_lookup(s, w, aid, false);
    assign_xid(s, w);
    w.ops += s.lmgr.xact_lock(w.xid);
    let pages = s.accounts.as_ref().expect("pgbench-n has its pages");
    let (hold, rest) = hold_split(st, w.work_part_len(0, 4), 1);
    let (ops, v) = pages.access_with(PageId::Heap(aid), true, || {
        multixact_oldest_member(st, w);
        wal_record(st, w, hold);
    });
    w.ops += ops;
    w.sink = w.sink.wrapping_add(v);
    w.busy(rest);
    // SELECT abalance.
    statement(s, w, 2..4);
    accounts_lookup(s, w, aid, false);
    w.work_part(1, 4);
    // INSERT INTO pgbench_history.
    statement(s, w, 4..5);
    let (hold, rest) = hold_split(st, w.work_part_len(2, 4), 1);
    let (ops, v) = pages.access_with(PageId::HistoryTail, true, || wal_record(st, w, hold));
    w.ops += ops;
    w.sink = w.sink.wrapping_add(v);
    w.busy(rest);
    // END: RecordTransactionCommit's commit record, the rest (the WAL flush), then the CLOG,
    // then ProcArrayEndTransaction.
    let (hold, rest) = hold_split(st, w.work_part_len(3, 4), 1);
    wal_record(st, w, hold);
    w.busy(rest);
    let xid = w.xid;
    clog_commit(s, w, xid);
    end_xact(s, w);
    w.ops += s.lmgr.end_write(w.slot, xid);
}

/// A `-N` statement's snapshots with its relation locks (`WRITE_RELATIONS[rels]`, fast path)
/// taken between them, in parse analysis.
#[inline]
fn statement<F: LockFamily>(s: &Shared<F>, w: &mut Worker, rels: std::ops::Range<usize>) {
    take_snapshot(s, w);
    for i in rels {
        w.ops += s.lmgr.write_relation(w.slot, i);
    }
    take_snapshot(s, w);
}

/// `pgbench-n` inserted [`WAL_RECORDS_PER_N`] WAL records per transaction, each counted under
/// its WAL insertion lock (a lost count is a broken exclusive section).
pub(super) fn check_n<F: LockFamily>(s: &Shared<F>, workers: &[Worker]) -> Result<(), String> {
    check_wal_records(s, workers, "pgbench-n", WAL_RECORDS_PER_N)
}

/// `pgbench-write` inserted [`WAL_RECORDS_PER_N`] WAL records per transaction.
pub(super) fn check_write<F: LockFamily>(s: &Shared<F>, workers: &[Worker]) -> Result<(), String> {
    check_wal_records(s, workers, "pgbench-write", WAL_RECORDS_PER_N)
}

/// Workload `name` inserted `per_txn` WAL records per transaction, as counted under its WAL
/// insertion locks.
fn check_wal_records<F: LockFamily>(
    s: &Shared<F>,
    workers: &[Worker],
    name: &str,
    per_txn: u64,
) -> Result<(), String> {
    let st = s
        .write_state()
        .expect("a pgbench write shape has its write state");
    let txns: u64 = workers.iter().map(|w| w.txns).sum();
    let records = st.records();
    if records != per_txn * txns {
        return Err(format!(
            "{name}: {records} WAL records under {} WAL insertion locks for {txns} \
             transactions, expected {}",
            st.wal.len(),
            per_txn * txns
        ));
    }
    Ok(())
}
