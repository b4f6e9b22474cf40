//! The buffer workloads. `pin`: pin a hot buffer (atomic refcount in its header), read it under
//! its content lock shared, `--work` (the page's tuples, processed with the lock released),
//! unpin. `pin-held`: the same read and `--work`, the pin kept across accesses. `pin-vm`: the
//! hot page kept pinned; each read checks its visibility-map bit with no lock, then `--work`
//! (seed 003's patch 3).
//!
//! `--work` here is the per-page work of a sequential scan: `heapgetpage`
//! (`heap_prepare_pagescan` since 17) pins the page, takes its content lock shared only to
//! collect the visible tuples' offsets, releases the lock, and the executor then processes
//! those tuples with the page still pinned; the pin is dropped when the scan moves to the next
//! page. Seed 003's scan spends about 24 µs per heap page. `pin-vm` is the seed's patch 3: the
//! visibility-map page stays pinned across heap pages (one pin per scan, not per page) and its
//! bit is read with no lock (`visibilitymap_get_status`), so a read moves no shared line.

use super::steps::read_buffer;
use super::worker::Worker;
use super::Shared;
use crate::locks::LockFamily;
use crate::pgshared::{VISIBILITY_MAP, VM_WORD_ALL_VISIBLE};
use lwlock::sync::Ordering;

/// `pin`.
#[inline]
pub(super) fn pin<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    s.buffer.pin();
    read_buffer(s, w);
    // The page's tuples, processed with the content lock released, still pinned.
    w.work();
    s.buffer.unpin();
}

/// `pin-held` (the pin is taken once per trial: the row's `holds_pin`).
#[inline]
pub(super) fn pin_held<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    read_buffer(s, w);
    w.work();
}

/// `pin-vm`.
#[inline]
pub(super) fn pin_vm<F: LockFamily>(_s: &Shared<F>, w: &mut Worker) {
    read_vm(w);
    w.work();
}

/// `visibilitymap_get_status` with no lock (the map page kept pinned): one atomic load of the
/// map word's line, which no one writes. Timed as a zero wait when the timer fires, as an
/// optimistic snapshot is, so that the percentiles describe every read.
#[inline]
pub(super) fn read_vm(w: &mut Worker) {
    if w.timer().is_some() {
        w.shared_wait.saturating_record(0);
    }
    if !VISIBILITY_MAP.all_visible(w.slot) {
        w.bad_reads += 1;
    }
}

/// `pin-vm` counted one map read per transaction and took no lock, and the map word is
/// unchanged.
pub(super) fn check_pin_vm<F: LockFamily>(
    _s: &Shared<F>,
    workers: &[Worker],
) -> Result<(), String> {
    let ops: u64 = workers.iter().map(|w| w.ops).sum();
    let word = VISIBILITY_MAP.word.load(Ordering::Acquire);
    if ops != 0 || word != VM_WORD_ALL_VISIBLE {
        return Err(format!(
            "pin-vm: {ops} lock operations (expected none), map word {word:#x}"
        ));
    }
    Ok(())
}
