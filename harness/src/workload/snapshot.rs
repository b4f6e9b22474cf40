//! `snapshot`: one `GetSnapshotData` with the `--snapshot` strategy over the `--layout` proc
//! array, or (`--write-pct` percent of transactions) instead a short write transaction: assign
//! an xid and end it at once (`ProcArrayEndTransaction`, exclusive; no snapshot), so at most one
//! xid per thread runs and a snapshot's cost does not grow with the trial.

use super::steps::{begin_xact, end_xact, take_snapshot};
use super::worker::Worker;
use super::Shared;
use crate::locks::LockFamily;

#[inline]
pub(super) fn snapshot<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    if w.cfg.write_pct > 0 && (w.rand() % 100) < w.cfg.write_pct as u64 {
        begin_xact(s, w);
        end_xact(s, w);
    } else {
        take_snapshot(s, w);
    }
}
