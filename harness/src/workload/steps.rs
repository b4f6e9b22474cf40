//! The steps the transactions are made of, each one PostgreSQL operation under its lock:
//! `GetSnapshotData`, `GetNewTransactionId`, `ProcArrayEndTransaction`, the CLOG commit, a
//! buffer read, an index lookup of `pgbench_accounts`. A workload's transaction (one file each)
//! is a sequence of them.

use super::section_check::SectionCheck;
use super::worker::Worker;
use super::Shared;
use crate::buffer_pool::{PageId, ACCOUNTS_ROWS};
use crate::clock::{self, Ticks};
use crate::locks::{BenchLock, LockFamily};
use crate::pgshared::{Clog, Page, CLOG_XACTS_PER_PAGE, INVALID_XID, XACT_COMMITTED};
use crate::snapshot::{Outcome, SharedSection};
use lwlock::sync::touch;
use std::cell::Cell;
use std::hint::black_box;

pub(super) fn ns_since(t0: Option<Ticks>) -> Option<u64> {
    t0.map(clock::ns_since)
}

/// Runs `f` in a shared section of `lock`, with the section checks of `check` if `checked`.
#[inline]
pub(super) fn shared_checked<T: Send + Sync, L: BenchLock<T>, R>(
    lock: &L,
    check: &SectionCheck,
    checked: bool,
    f: impl FnOnce(&T) -> R,
) -> R {
    lock.shared(|d| {
        if checked {
            check.shared(lock.held(), || f(d))
        } else {
            f(d)
        }
    })
}

/// ProcArrayLock as the snapshot code's shared section, noting how long entering it took.
pub(super) struct TimedSection<'a, L> {
    lock: &'a L,
    check: &'a SectionCheck,
    checked: bool,
    t0: Option<Ticks>,
    waited: Cell<Option<u64>>,
}

impl<L: BenchLock<()>> SharedSection for TimedSection<'_, L> {
    fn shared_section<R>(&self, f: impl FnOnce() -> R) -> R {
        shared_checked(self.lock, self.check, self.checked, |_| {
            self.waited.set(ns_since(self.t0));
            f()
        })
    }
}

/// GetSnapshotData with the configured strategy.
#[inline]
pub(super) fn take_snapshot<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    let checked = w.checked();
    let section = TimedSection {
        lock: &s.proc_array,
        check: &s.proc_array_check,
        checked,
        t0: w.timer(),
        waited: Cell::new(None),
    };
    let outcome = s
        .procs
        .snapshot(w.cfg.strategy, &section, w.slot, &mut w.cache);
    w.snapshot_outcomes[outcome as usize] += 1;
    let snap = black_box(&w.cache.snap);
    if checked && snap.xip.iter().any(|&x| x < snap.xmin || x >= snap.xmax) {
        w.bad_reads += 1;
    }
    if outcome == Outcome::Validated {
        // Validated without the lock: no lock operation, and no wait (timed as zero, so that
        // the percentiles describe every snapshot, not only those that took the lock).
        if section.t0.is_some() {
            w.shared_wait.saturating_record(0);
        }
    } else {
        Worker::record(&mut w.shared_wait, section.waited.get());
        w.ops += 1;
    }
}

/// Snapshots per simple-query statement that needs one: `exec_simple_query` takes one for
/// parse analysis and planning (`if (analyze_requires_snapshot(parsetree))
/// PushActiveSnapshot(GetTransactionSnapshot())`, popped after `pg_plan_queries`), and the
/// portal takes a second for the execution (`PortalStart` for a `SELECT`, `PortalRunMulti` for
/// an `UPDATE` or `INSERT`: `PushActiveSnapshot(GetTransactionSnapshot())`), a fresh one under
/// read committed. The same code from 8.4's snapshot manager through PostgreSQL 15 (read in
/// 9.3's `postgres.c` and `pquery.c`, and in 15's, whose `-S` and `-N` traces take 2 and 6);
/// `BEGIN` and `END` take none.
pub(super) const SNAPSHOTS_PER_STATEMENT: u32 = 2;

/// One simple-query statement's snapshots ([`SNAPSHOTS_PER_STATEMENT`]).
#[inline]
pub(super) fn statement_snapshots<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    for _ in 0..SNAPSHOTS_PER_STATEMENT {
        take_snapshot(s, w);
    }
}

/// pgbench's random account (`\set aid random(1, 100000 * :scale)`), from the worker's
/// seeded generator: deterministic per seed.
#[inline]
pub(super) fn random_aid(w: &mut Worker) -> u64 {
    1 + w.rand() % ACCOUNTS_ROWS
}

/// The primary-key lookup of `aid` in `pgbench_accounts` (`_bt_search` from the root, then the
/// heap fetch): root, internal page and leaf read shared, then the heap page in `heap_mode`
/// (shared for a fetch, exclusive for `heap_update`). Each page is a `ReadBuffer` (its mapping
/// partition shared) and its content lock.
#[inline]
pub(super) fn accounts_lookup<F: LockFamily>(
    s: &Shared<F>,
    w: &mut Worker,
    aid: u64,
    heap_exclusive: bool,
) {
    let pages = s
        .accounts
        .as_ref()
        .expect("a workload that reads pgbench_accounts has its pages");
    for (id, excl) in [
        (PageId::Root, false),
        (PageId::Internal(aid), false),
        (PageId::Leaf(aid), false),
        (PageId::Heap(aid), heap_exclusive),
    ] {
        let (ops, v) = pages.access(id, excl);
        w.ops += ops;
        w.sink = w.sink.wrapping_add(v);
    }
}

/// The index descent without the root, for the 9.1 shapes whose root is [`crate::bufmgr`]'s
/// hot page: internal page, leaf, heap page, each read shared.
#[inline]
pub(super) fn accounts_below_root<F: LockFamily>(s: &Shared<F>, w: &mut Worker, aid: u64) {
    let pages = s
        .accounts
        .as_ref()
        .expect("a workload that reads pgbench_accounts has its pages");
    for id in [PageId::Internal(aid), PageId::Leaf(aid), PageId::Heap(aid)] {
        let (ops, v) = pages.access(id, false);
        w.ops += ops;
        w.sink = w.sink.wrapping_add(v);
    }
}

/// The next xid; the first xid of a CLOG page extends the CLOG (`ExtendCLOG`, under the CLOG
/// lock, once per 32 768 xids).
#[inline]
pub(super) fn next_xid<F: LockFamily>(s: &Shared<F>) -> u32 {
    let xid = s.xids.next();
    if xid % CLOG_XACTS_PER_PAGE == 0 {
        s.clog.exclusive(|c| c.extend(xid));
    }
    xid
}

/// GetNewTransactionId (`varsup.c`, every release) as the pgbench shapes take it: XidGenLock
/// **exclusive** around reading and advancing `nextXid` (the counter, read under the lock
/// here), `ExtendCLOG` inside it for the first xid of a CLOG page, and the xid stored in the
/// backend's proc-array slot before the lock's release (so that no snapshot taken after the
/// release misses it). XidGenLock is one LWLock of the workload's lock set (the family's
/// "rest" in a split family).
#[inline]
pub(super) fn assign_xid<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    let checked = w.checked();
    let slot = w.slot;
    let (lock, check) = (&s.xid_gen, &*s.xid_gen_check);
    let xid = s.xid_gen.exclusive(|_| {
        let assign = || {
            let xid = next_xid(s);
            s.procs.publish_xid(slot, xid);
            xid
        };
        if checked {
            check.exclusive(lock.held(), assign)
        } else {
            assign()
        }
    });
    w.xid = xid;
    w.ops += 1;
}

/// A fresh xid published in the thread's slot, XidGenLock left out (the counter is an atomic):
/// the microbenchmarks of one lock (`snapshot`'s writes, `end-xact`, `clog`).
#[inline]
pub(super) fn begin_xact<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    let xid = next_xid(s);
    s.procs.publish_xid(w.slot, xid);
    w.xid = xid;
}

/// ProcArrayEndTransaction for the thread's running xid.
#[inline]
pub(super) fn end_xact<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    let t0 = w.timer();
    let checked = w.checked();
    let (slot, xid, procs) = (w.slot, w.xid, &s.procs);
    let (lock, check) = (&s.proc_array, &*s.proc_array_check);
    let waited = s.proc_array.group(0, move |_| {
        let waited = ns_since(t0);
        if checked {
            check.exclusive(lock.held(), || procs.end_xact(slot, xid));
        } else {
            procs.end_xact(slot, xid);
        }
        waited
    });
    Worker::record(&mut w.excl_wait, waited);
    w.xid = INVALID_XID;
    w.ends += 1;
    w.ops += 1;
}

/// TransactionIdSetPageStatus for `xid` (committed).
#[inline]
pub(super) fn clog_commit<F: LockFamily>(s: &Shared<F>, w: &mut Worker, xid: u32) {
    let t0 = w.timer();
    let checked = w.checked();
    let (lock, check) = (&s.clog, &*s.clog_check);
    let waited = s.clog.group(Clog::page_of(xid), move |clog| {
        let waited = ns_since(t0);
        if checked {
            check.exclusive(lock.held(), || clog.set_status(xid, XACT_COMMITTED));
        } else {
            clog.set_status(xid, XACT_COMMITTED);
        }
        waited
    });
    Worker::record(&mut w.clog_wait, waited);
    w.last_clog_xid = xid;
    w.clog_ops += 1;
    w.ops += 1;
}

#[inline]
pub(super) fn read_buffer<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    let t0 = w.timer();
    let checked = w.checked();
    let slot = w.slot;
    let (waited, v) = shared_checked(&s.buffer.content, &s.buffer_check, checked, |p| {
        let waited = ns_since(t0);
        touch(p as *const Page, std::mem::size_of::<Page>(), false);
        (waited, p.flags as u64 + p.tuples[slot % 8])
    });
    w.sink = w.sink.wrapping_add(v);
    Worker::record(&mut w.shared_wait, waited);
    w.ops += 1;
}
