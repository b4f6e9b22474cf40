//! A hot shared buffer reached as PostgreSQL 9.1 reached it: the buffer-mapping partition lock,
//! the buffer header spinlock around every pin and unpin, and the content lock. The `select-*`
//! workloads of seed 000's thread (2011) read the primary key's root page this way once per
//! transaction; every backend's index descent starts there. [`ScanBuffers`] is the same buffer
//! header behind the same 16 partitions for seed 003's sequential scans on 9.3devel (2012):
//! the heap pages and the visibility-map page (`seq_scan_93` workloads).
//!
//! Mirrors (`bufmgr.c`, `buf_table.c` of 9.1):
//! * `ReadBuffer_common` → `BufferAlloc`: `BufTableHashCode`, then
//!   `LWLockAcquire(BufMappingPartitionLock(hash), LW_SHARED)` (`NUM_BUFFER_PARTITIONS` = 16
//!   until 9.5 raised it to 128), `BufTableLookup`, `PinBuffer` and the partition lock's
//!   release.
//! * `PinBuffer` / `UnpinBuffer` before 9.6: `LockBufHdr` (the header's `slock_t`, taken with
//!   `s_lock`'s spin-and-back-off), `refcount` ± 1, `UnlockBufHdr`. 9.6 (commit 48354581)
//!   replaced the spinlock with an atomic state word, which is what [`crate::pgshared`]'s
//!   `BufferDesc` models for the `pin` workloads.
//! * `LockBuffer(BUFFER_LOCK_SHARE)`: the content lock, shared, around the page read.
//!
//! The header spinlock, the reference count and the content lock share one line, as in
//! `BufferDesc`.
//!
//! # Memory orderings
//! The reference count is only read and written under the header spinlock (whose TAS is Acquire
//! and whose unlock is Release), so its own loads and stores are Relaxed.

use crate::locks::{BenchLock, LockFamily};
use crate::pgshared::Page;
use crossbeam_utils::CachePadded;
use lwlock::sync::{stat_add, stat_load, touch, AtomicU32, AtomicU64, Ordering};
use lwlock::{SpinLock, Tranche};

/// `NUM_BUFFER_PARTITIONS` of 9.1 (16; 128 since 9.5).
pub const NUM_BUFFER_PARTITIONS_91: usize = 16;

/// A buffer header of 9.1: the spinlock, the pin count it protects, and the content lock, on one
/// line.
#[repr(C, align(64))]
struct BufHdr<L> {
    /// `buf_hdr_lock`.
    spin: SpinLock,
    /// `refcount`, under `spin`.
    refcount: AtomicU32,
    /// `content_lock` and the page it protects.
    content: L,
}

impl<L> BufHdr<L> {
    /// `PinBuffer`/`UnpinBuffer` before 9.6 (the backend's first pin of the buffer, or its
    /// last unpin: `PrivateRefCount` 0 → 1 or 1 → 0): the pin count moved by `delta` under the
    /// header spinlock.
    fn pin_delta(&self, delta: i32) {
        self.spin.lock(hdr_tranche());
        let n = self.refcount.load(Ordering::Relaxed);
        let next = n.checked_add_signed(delta);
        self.refcount.store(next.unwrap_or(n), Ordering::Relaxed);
        // SAFETY: taken just above by this thread.
        unsafe { self.spin.unlock() };
        // Reported after the unlock: a panic must not leave the spinlock held.
        next.expect("buffer pin count out of range (an unpin without a pin)");
    }
}

/// One entry of the shared buffer mapping table (`BufferLookupEnt`): the tag's buffer id.
#[repr(C, align(64))]
#[derive(Debug, Default)]
struct LookupEnt {
    buf_id: u32,
}

/// A hot page: its mapping partition locks, its mapping entry and its buffer header.
pub struct HotPage<F: LockFamily> {
    /// The 16 BufMappingLock partitions (the page's tag hashes to one of them).
    mapping: Box<[F::Lock<LookupEnt>]>,
    /// The page's partition.
    partition: usize,
    hdr: Box<BufHdr<F::Lock<Page>>>,
    /// Buffer accesses completed (checked against the operations counted): the harness's own
    /// bookkeeping, counted with the uncharged statistics increment (`lwlock::sync::stat_add`),
    /// since PostgreSQL's read of a page bumps no shared counter and a charged one would be a
    /// line every client writes once per transaction.
    reads: CachePadded<AtomicU64>,
    /// The 9.3 scan workloads' table (seed 003), carried here rather than beside the root page
    /// in the trial's shared state, so that the other workloads' shared state keeps its
    /// layout: their simulated runs are sensitive to which fields share a line (this field
    /// sits in the padding of `reads`' 128 bytes, and `Option<HotPage>` keeps its size).
    scan: Option<Box<ScanBuffers<F>>>,
}

impl<F: LockFamily> std::fmt::Debug for HotPage<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HotPage")
            .field("partition", &self.partition)
            .finish_non_exhaustive()
    }
}

/// The spinlocks' tranche (their stuck-spinlock PANIC names it).
fn hdr_tranche() -> Tranche {
    Tranche::register("BufferHeader")
}

impl<F: LockFamily> HotPage<F> {
    /// The page whose tag hashes to mapping partition `partition`.
    pub fn new(partition: usize) -> Self {
        let mapping = Tranche::register("BufferMapping");
        HotPage {
            mapping: (0..NUM_BUFFER_PARTITIONS_91)
                .map(|_| F::Lock::new(LookupEnt::default(), mapping))
                .collect(),
            partition: partition % NUM_BUFFER_PARTITIONS_91,
            hdr: Box::new(BufHdr {
                spin: SpinLock::new(),
                refcount: AtomicU32::new(0),
                content: F::Lock::new(Page::default(), Tranche::BUFFER_CONTENT),
            }),
            reads: CachePadded::new(AtomicU64::new(0)),
            scan: None,
        }
    }

    /// A pool for the 9.3 scan workloads: the root page (unused by them) and the scanned
    /// table's buffers ([`ScanBuffers`]).
    pub fn with_scan(partition: usize) -> Self {
        HotPage {
            scan: Some(Box::new(ScanBuffers::new())),
            ..Self::new(partition)
        }
    }

    /// The scanned table's buffers, if this pool has them.
    pub fn scan(&self) -> Option<&ScanBuffers<F>> {
        self.scan.as_deref()
    }

    /// `PinBuffer`/`UnpinBuffer` of 9.1: the pin count moved by `delta` under the header
    /// spinlock.
    fn pin_delta(&self, delta: i32) {
        self.hdr.pin_delta(delta);
    }

    /// One read of the page: lookup and pin under the mapping partition lock (shared), the page
    /// read under the content lock (shared), unpin. Returns the LWLock operations done (2) and
    /// a value read from the page.
    pub fn read(&self) -> (u64, u64) {
        self.mapping[self.partition].shared(|ent| {
            // BufTableLookup: the entry is read, not written.
            touch(ent as *const LookupEnt, 4, false);
            std::hint::black_box(ent.buf_id);
            self.pin_delta(1);
        });
        let v = self.hdr.content.shared(|p| {
            touch(p as *const Page, std::mem::size_of::<Page>(), false);
            p.flags as u64 + p.tuples[0]
        });
        self.pin_delta(-1);
        stat_add(&self.reads, 1);
        (2, v)
    }

    /// Reads completed.
    pub fn reads(&self) -> u64 {
        stat_load(&self.reads)
    }

    /// After a trial: no pin left (on the scanned table's pages either).
    pub fn check(&self) -> Result<(), String> {
        let pins = self.hdr.refcount.load(Ordering::Acquire);
        if pins != 0 {
            return Err(format!("hot page left with {pins} pins"));
        }
        self.scan.as_ref().map_or(Ok(()), |s| s.check())
    }

    /// The mapping partition locks' and the content lock's counters (and the scanned table's),
    /// merged.
    pub fn counters(&self) -> crate::locks::LockCounters {
        let own = self
            .mapping
            .iter()
            .map(|p| p.counters())
            .fold(self.hdr.content.counters(), |a, c| a.merge(c));
        self.scan.as_ref().map_or(own, |s| own.merge(s.counters()))
    }
}

/// Heap pages in the ring a scanner walks ([`ScanBuffers`]).
pub const SCAN_HEAP_PAGES: usize = 32;

/// The mapping partition of the visibility-map page's tag (any fixed one: the table's one map
/// page always hashes to the same partition).
const SCAN_VM_PARTITION: usize = 11;

/// What a scanner does with the visibility-map page per heap page (seed 003's three patches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VmCheck {
    /// Patch 1 (master): no map page; `PD_ALL_VISIBLE` is read on the heap page, under its
    /// content lock.
    PageFlag,
    /// Patch 2: `visibilitymap_test` with no buffer kept: `ReadBuffer` of the map page
    /// (mapping partition shared, `PinBuffer` under its header spinlock), the bit read with no
    /// content lock, `ReleaseBuffer` (header spinlock).
    PinPerPage,
    /// Patch 3: the map page pinned once per scan and kept; the bit read with no lock.
    KeptPinned,
    /// Not in the thread: patch 2 with the bit read under the map page's content lock shared
    /// (a lock 9.3's `visibilitymap_test` did not take), for a with/without comparison.
    PinPerPageLocked,
}

/// A sequentially scanned table's shared buffers as 9.3 reached them (seed 003's scan test,
/// `heapgetpage` of 9.3devel): a ring of [`SCAN_HEAP_PAGES`] heap pages and the table's one
/// visibility-map page (one 9.3 map page covers 65,344 heap pages; the thread's 350 MB table
/// has 44.8 k), each a 9.1-9.5 buffer header (`BufHdr`: header spinlock, pin count, content
/// lock), behind the 16 mapping partitions of [`NUM_BUFFER_PARTITIONS_91`]. Heap page `i`'s
/// tag hashes to partition `i mod 16` (a stand-in for `BufTableHashCode`), the map page's to a
/// fixed one. Every page is resident (the hit path of `BufferAlloc`).
///
/// Pages are drawn as synchronized scans (`syncscan.c`) draw them: every scanner walks the same
/// ring from page 0, its `n`-th page being page `n mod 32`, so scanners running at the same
/// rate are on the same page at about the same time, and share its lines.
pub struct ScanBuffers<F: LockFamily> {
    /// The 16 BufMappingLock partitions.
    mapping: Box<[F::Lock<LookupEnt>]>,
    /// The heap pages' buffers.
    heap: Box<[BufHdr<F::Lock<Page>>]>,
    /// The visibility-map page's buffer (its content lock is taken only by the model-only
    /// [`VmCheck::PinPerPageLocked`]: 9.3's `visibilitymap_test` reads the bit with only a
    /// pin).
    vm: Box<BufHdr<F::Lock<Page>>>,
}

impl<F: LockFamily> std::fmt::Debug for ScanBuffers<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScanBuffers")
            .field("heap_pages", &self.heap.len())
            .finish_non_exhaustive()
    }
}

impl<F: LockFamily> Default for ScanBuffers<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: LockFamily> ScanBuffers<F> {
    /// The ring's buffers, none pinned.
    pub fn new() -> Self {
        let mapping = Tranche::register("BufferMapping");
        let hdr = || BufHdr {
            spin: SpinLock::new(),
            refcount: AtomicU32::new(0),
            content: F::Lock::new(Page::default(), Tranche::BUFFER_CONTENT),
        };
        ScanBuffers {
            mapping: (0..NUM_BUFFER_PARTITIONS_91)
                .map(|_| F::Lock::new(LookupEnt::default(), mapping))
                .collect(),
            heap: (0..SCAN_HEAP_PAGES).map(|_| hdr()).collect(),
            vm: Box::new(hdr()),
        }
    }

    /// `PinBuffer`/`UnpinBuffer` of 9.3 on `hdr`, the header spinlock counted under the
    /// counting family.
    fn pin_delta(hdr: &BufHdr<F::Lock<Page>>, delta: i32) {
        if F::COUNTING {
            crate::counting::count_spinlock("BufferHeader");
        }
        hdr.pin_delta(delta);
    }

    /// `ReadBuffer` of a resident page (`BufferAlloc`'s hit path): the mapping partition
    /// shared, `BufTableLookup`, `PinBuffer` under it. Returns the LWLock operations (1).
    fn read_buffer(&self, hdr: &BufHdr<F::Lock<Page>>, partition: usize) -> u64 {
        self.mapping[partition].shared(|ent| {
            touch(ent as *const LookupEnt, 4, false);
            std::hint::black_box(ent.buf_id);
            Self::pin_delta(hdr, 1);
        });
        1
    }

    /// `ReadBufferExtended` of heap page `page` (mod the ring). Returns the LWLock operations.
    pub fn pin_heap(&self, page: usize) -> u64 {
        let page = page % SCAN_HEAP_PAGES;
        self.read_buffer(&self.heap[page], page % NUM_BUFFER_PARTITIONS_91)
    }

    /// `ReleaseBuffer` of heap page `page` (mod the ring): `UnpinBuffer` under the header
    /// spinlock.
    pub fn unpin_heap(&self, page: usize) {
        Self::pin_delta(&self.heap[page % SCAN_HEAP_PAGES], -1);
    }

    /// Heap page `page`'s content lock (taken shared around collecting the visible tuples).
    pub fn content(&self, page: usize) -> &F::Lock<Page> {
        &self.heap[page % SCAN_HEAP_PAGES].content
    }

    /// `vm_readbuf` of the map page: its `ReadBuffer`. Returns the LWLock operations (1).
    pub fn pin_vm(&self) -> u64 {
        self.read_buffer(&self.vm, SCAN_VM_PARTITION)
    }

    /// The map page's content lock (taken only by [`VmCheck::PinPerPageLocked`]).
    pub fn vm_content(&self) -> &F::Lock<Page> {
        &self.vm.content
    }

    /// `ReleaseBuffer` of the map page.
    pub fn unpin_vm(&self) {
        Self::pin_delta(&self.vm, -1);
    }

    /// After a trial: no pin left on any page.
    pub fn check(&self) -> Result<(), String> {
        for (i, h) in self.heap.iter().enumerate() {
            let pins = h.refcount.load(Ordering::Acquire);
            if pins != 0 {
                return Err(format!("heap page {i} left with {pins} pins"));
            }
        }
        let pins = self.vm.refcount.load(Ordering::Acquire);
        if pins != 0 {
            return Err(format!("visibility-map page left with {pins} pins"));
        }
        Ok(())
    }

    /// The mapping partition locks' and the pages' content locks' counters, merged.
    pub fn counters(&self) -> crate::locks::LockCounters {
        self.mapping
            .iter()
            .map(|p| p.counters())
            .chain(self.heap.iter().map(|h| h.content.counters()))
            .chain(std::iter::once(self.vm.content.counters()))
            .fold(Default::default(), |a, c| a.merge(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locks::RawFamily;
    use lwlock::RawClassicLwLock;
    use std::sync::Arc;

    #[test]
    fn reads_pin_and_unpin_and_two_threads_leave_no_pin() {
        let p = Arc::new(HotPage::<RawFamily<RawClassicLwLock>>::new(21));
        assert_eq!(p.partition, 5);
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let p = p.clone();
                std::thread::spawn(move || {
                    for _ in 0..10_000 {
                        assert_eq!(p.read(), (2, 2));
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(p.reads(), 20_000);
        p.check().unwrap();
    }

    #[test]
    fn scan_buffers_pin_heap_and_map_pages_and_check_for_leftover_pins() {
        let b = ScanBuffers::<RawFamily<RawClassicLwLock>>::new();
        assert_eq!(b.pin_heap(SCAN_HEAP_PAGES + 3), 1);
        assert!(b
            .check()
            .unwrap_err()
            .contains("heap page 3 left with 1 pins"));
        b.unpin_heap(3);
        assert_eq!(b.pin_vm(), 1);
        assert!(b.check().unwrap_err().contains("visibility-map page"));
        b.unpin_vm();
        b.check().unwrap();
    }

    #[test]
    fn a_pin_left_behind_fails_the_check() {
        let p = HotPage::<RawFamily<RawClassicLwLock>>::new(0);
        p.pin_delta(1);
        assert!(p.check().unwrap_err().contains("1 pins"));
    }

    #[test]
    #[should_panic(expected = "unpin without a pin")]
    fn an_unpin_without_a_pin_panics() {
        HotPage::<RawFamily<RawClassicLwLock>>::new(0).pin_delta(-1);
    }
}
