//! The `pgbench -S` transactions of seed 000's thread, one per release of the lock manager:
//! `select-lmgr` (9.1: the vxid lock and two relation locks through the lock partitions),
//! `select-fastpath` (9.2's fast-path relation locks; the vxid lock still partitioned) and
//! `select-lazy-vxid` (fast-path relation locks and lazy vxid locks: no lock-partition
//! traffic). Each takes the statement's two snapshots ([`SNAPSHOTS_PER_STATEMENT`]) and looks
//! the account up: the primary key's root page as 9.1 reached it (mapping partition, header
//! spinlock, content lock), then the internal page, the leaf and the heap page, drawn by the
//! account over the 16 mapping partitions of 9.1 and 9.2. `--era-traffic` adds 9.1's
//! `SIGetDataEntries` calls ([`crate::sinval`]) and the lock tables' freelist spinlocks
//! ([`crate::dynahash_freelist`]).

#[cfg(doc)]
use super::steps::SNAPSHOTS_PER_STATEMENT;
use super::steps::{accounts_below_root, random_aid, statement_snapshots};
use super::worker::Worker;
use super::Shared;
use crate::lmgr::LmgrRelease;
use crate::locks::LockFamily;

/// `select-lmgr`.
#[inline]
pub(super) fn partitioned<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    select(LmgrRelease::Partitioned, s, w)
}

/// `select-fastpath`.
#[inline]
pub(super) fn fast_path<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    select(LmgrRelease::FastPath, s, w)
}

/// `select-lazy-vxid`.
#[inline]
pub(super) fn lazy_vxid<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    select(LmgrRelease::LazyVxid, s, w)
}

#[inline]
fn select<F: LockFamily>(release: LmgrRelease, s: &Shared<F>, w: &mut Worker) {
    // The backend's local transaction id (`MyProc->lxid`), for its vxid lock's tag.
    let lxid = w.txns as u32;
    let slot = w.slot;
    w.ops += match s.era() {
        // `--era-traffic`: 9.1's freelist spinlocks and AcceptInvalidationMessages where it
        // runs them.
        Some(era) => {
            let (si, fl) = (era.sinval.as_ref(), era.freelists.as_ref());
            s.lmgr.begin_select_then(release, slot, lxid, fl, |n| {
                si.map_or(0, |si| (0..n).map(|_| si.accept(slot)).sum())
            })
        }
        None => s.lmgr.begin_select(release, slot, lxid),
    };
    statement_snapshots(s, w);
    // The index scan's descent starts at the primary key's root page, which every backend
    // looks up, pins and reads as 9.1 did; the pages below it are the account's.
    let page = s
        .root_page
        .as_ref()
        .expect("a select-* workload has its root page");
    let (ops, v) = page.read();
    w.ops += ops;
    w.sink = w.sink.wrapping_add(v);
    let aid = random_aid(w);
    accounts_below_root(s, w, aid);
    w.work();
    w.ops += match s.freelists() {
        Some(fl) => s.lmgr.end_select_with(release, w.slot, lxid, Some(fl)),
        None => s.lmgr.end_select(release, w.slot, lxid),
    };
}
