//! `end-xact`: assign an xid, `--work`, `ProcArrayEndTransaction` (exclusive; the group clear
//! for group locks).

use super::steps::{begin_xact, end_xact as end};
use super::worker::Worker;
use super::Shared;
use crate::locks::LockFamily;

#[inline]
pub(super) fn end_xact<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    begin_xact(s, w);
    w.work();
    end(s, w);
}
