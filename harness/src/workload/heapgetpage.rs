//! Seed 003's scan test as 9.3devel ran it (2012), one heap page per transaction, per patch:
//! `scan-93` (patch 1, master), `pin-93` (patch 2, the map page pinned and released per heap
//! page) and `pin-vm-93` (patch 3, the map page kept pinned); `pin-93-locked`, not in the
//! thread, is patch 2 with the bit read under the map page's content lock shared (the lock
//! the earlier `pin` shape took and 9.3 did not), for a with/without comparison.
//!
//! Mirrors `heapgetpage` (heapam.c of 9.3) on a resident table ([`ScanBuffers`]):
//! * the previous page's `ReleaseBuffer` (`UnpinBuffer`: the header spinlock);
//! * `ReadBufferExtended` of the next page (`BufferAlloc`'s hit path: the mapping partition
//!   shared, `PinBuffer` under the header spinlock inside it);
//! * `LockBuffer(BUFFER_LOCK_SHARE)` around collecting the visible tuples, where master reads
//!   `PageIsAllVisible`; the patches replace that read with `visibilitymap_test` at the same
//!   place, under the heap page's content lock (the patches are not in the thread: the place
//!   is where the flag was read). Patch 2 calls it with no buffer kept: `vm_readbuf`
//!   (`ReadBuffer` of the map page: mapping partition shared, `PinBuffer` under the map
//!   buffer's header spinlock), the bit read with **no content lock** ("we're only looking at a
//!   single bit"), `ReleaseBuffer` (header spinlock). Patch 3 keeps the map buffer pinned from the
//!   scan's first page (`PinBuffer` only when `PrivateRefCount` goes 0 → 1), so a page's check
//!   is one load;
//! * `--work`: the page's tuples, processed with the lock released and the page still pinned
//!   (seed 003's scan: about 24 µs per heap page).
//!
//! Left out: `heap_page_prune_opt`'s unlocked read of the page header, the synchronized scan's
//! position report (`ss_report_location`: SyncScanLock, conditional exclusive, every 16 pages),
//! the bulk-read ring's misses (a table larger than shared_buffers reads through
//! `BufferAlloc`'s exclusive path; the thread gives no shared_buffers), and the 4 scans' starts.

use super::steps::{ns_since, shared_checked};
use super::worker::Worker;
use super::Shared;
use crate::bufmgr::{ScanBuffers, VmCheck};
use crate::locks::{BenchLock, LockFamily};
use crate::pgshared::{Page, VISIBILITY_MAP};
use lwlock::sync::touch;

/// The bit of [`Page::flags`] that stands for `PD_ALL_VISIBLE` (0x0004 in `bufpage.h`); the
/// scanned table's pages all have it set.
const PAGE_ALL_VISIBLE: u32 = 0x1;

/// `scan-93`.
#[inline]
pub(super) fn scan_93<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    heap_page(VmCheck::PageFlag, s, w)
}

/// `pin-93`.
#[inline]
pub(super) fn pin_93<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    heap_page(VmCheck::PinPerPage, s, w)
}

/// `pin-93-locked`.
#[inline]
pub(super) fn pin_93_locked<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    heap_page(VmCheck::PinPerPageLocked, s, w)
}

/// `pin-vm-93`.
#[inline]
pub(super) fn pin_vm_93<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    heap_page(VmCheck::KeptPinned, s, w)
}

fn buffers<F: LockFamily>(s: &Shared<F>) -> &ScanBuffers<F> {
    s.root_page
        .as_ref()
        .and_then(|p| p.scan())
        .expect("a 9.3 scan workload has its scan buffers")
}

/// One heap page of the scan: the worker's `n`-th page is page `n` of the ring.
#[inline]
fn heap_page<F: LockFamily>(vm: VmCheck, s: &Shared<F>, w: &mut Worker) {
    let b = buffers(s);
    let n = w.txns as usize;
    if n == 0 && vm == VmCheck::KeptPinned {
        // Patch 3: the map page read (and pinned) at the scan's first check, then kept.
        w.ops += b.pin_vm();
    }
    if n > 0 {
        // "release previous scan buffer, if any".
        b.unpin_heap(n - 1);
    }
    let t0 = w.timer();
    w.ops += b.pin_heap(n);
    let checked = w.checked();
    let (waited, vm_ops, all_visible, v) =
        shared_checked(b.content(n), &s.buffer_check, checked, |p| {
            let waited = ns_since(t0);
            touch(p as *const Page, std::mem::size_of::<Page>(), false);
            let (vm_ops, all_visible) = match vm {
                VmCheck::PageFlag => (0, p.flags & PAGE_ALL_VISIBLE != 0),
                VmCheck::PinPerPage => {
                    let ops = b.pin_vm();
                    let bit = VISIBILITY_MAP.all_visible(n);
                    b.unpin_vm();
                    (ops, bit)
                }
                VmCheck::KeptPinned => (0, VISIBILITY_MAP.all_visible(n)),
                VmCheck::PinPerPageLocked => {
                    let ops = b.pin_vm();
                    let bit = b.vm_content().shared(|m| {
                        touch(m as *const Page, 8, false);
                        VISIBILITY_MAP.all_visible(n)
                    });
                    b.unpin_vm();
                    (ops + 1, bit)
                }
            };
            (waited, vm_ops, all_visible, p.tuples[n % 8])
        });
    w.ops += 1 + vm_ops;
    if !all_visible {
        w.bad_reads += 1;
    }
    w.sink = w.sink.wrapping_add(v);
    Worker::record(&mut w.shared_wait, waited);
    w.work();
}

/// At the end of a trial: the scan's last heap page released, and patch 3's map page.
pub(super) fn end_scan<F: LockFamily>(vm: VmCheck, s: &Shared<F>, w: &Worker) {
    if w.txns == 0 {
        return;
    }
    let b = buffers(s);
    b.unpin_heap(w.txns as usize - 1);
    if vm == VmCheck::KeptPinned {
        b.unpin_vm();
    }
}
