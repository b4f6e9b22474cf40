//! `clog`: a fresh xid, `--work` (where the commit writes WAL), its commit status set in its
//! CLOG page (exclusive; grouped by page for `clog-group`).

use super::steps::{clog_commit, next_xid};
use super::worker::Worker;
use super::Shared;
use crate::locks::LockFamily;

#[inline]
pub(super) fn clog<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    let xid = next_xid(s);
    // Where PostgreSQL's commit inserts and flushes its WAL record (between xid assignment and
    // the CLOG update); 0 by default.
    w.work();
    clog_commit(s, w, xid);
}
