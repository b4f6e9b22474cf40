//! PostgreSQL shared state besides the proc array (which is in [`crate::snapshot`]):
//! the xid counter, the CLOG and a hot buffer.
//!
//! Mirrors, at the size that matters for contention:
//! * `GetNewTransactionId` (`varsup.c`): [`XidGen`]. PostgreSQL serialises it with XidGenLock;
//!   here it is one atomic fetch-add, so that each workload contends on the one lock it studies.
//! * The CLOG (`clog.c`): [`Clog`], 8 KB pages of 2 status bits per xid, protected by
//!   CLogControlLock / XactSLRU. The page ring wraps (an SLRU keeps only recent pages too).
//! * A buffer header (`BufferDesc`) with its atomic reference count beside its content lock:
//!   [`BufferDesc`], for the pin workloads.
//! * A visibility-map word (`visibilitymap.c`): [`VisibilityMap`], read with no lock by the
//!   `pin-vm` workload.
//!
//! # Memory orderings
//! The xid counter is Relaxed: an xid is published through the proc array or the CLOG, which
//! have their own ordering. The buffer's pin count is Acquire/Release (see [`BufferDesc`]).
//!
//! The atomics are `lwlock::sync`'s, and the CLOG's plain bytes are charged with
//! `lwlock::sync::touch`, so that a `--cfg lwsim` build simulates them (`--engine sim`).

use lwlock::sync::{touch, AtomicU32, AtomicU64, Ordering};

/// `InvalidTransactionId`.
pub const INVALID_XID: u32 = 0;
/// `FirstNormalTransactionId`.
pub const FIRST_NORMAL_XID: u32 = 3;
/// `BLCKSZ`.
pub const CLOG_PAGE_BYTES: usize = 8192;
/// `CLOG_XACTS_PER_PAGE`: 4 xids per byte.
pub const CLOG_XACTS_PER_PAGE: u32 = (CLOG_PAGE_BYTES * 4) as u32;
/// `TRANSACTION_STATUS_COMMITTED`.
pub const XACT_COMMITTED: u8 = 0x01;
/// `VISIBILITYMAP_ALL_VISIBLE`: bit 0 of each heap page's two bits (two since 9.6).
pub const VM_ALL_VISIBLE: u64 = 0x01;
/// A map word whose 32 heap pages are all visible and none frozen (the table of seed 003's
/// scans: loaded, then vacuumed, never written again).
pub const VM_WORD_ALL_VISIBLE: u64 = 0x5555_5555_5555_5555;

/// The xid counter (`TransamVariables->nextXid`).
#[derive(Debug)]
pub struct XidGen {
    next: crossbeam_utils::CachePadded<AtomicU32>,
}

impl Default for XidGen {
    fn default() -> Self {
        XidGen {
            next: crossbeam_utils::CachePadded::new(AtomicU32::new(FIRST_NORMAL_XID)),
        }
    }
}

impl XidGen {
    /// A fresh xid (`GetNewTransactionId`). Relaxed: the value is published through the proc
    /// array or the CLOG, which have their own ordering.
    #[inline]
    pub fn next(&self) -> u32 {
        let x = self.next.fetch_add(1, Ordering::Relaxed);
        assert!(x < u32::MAX - 1, "xid counter wrapped around");
        x
    }
}

/// The CLOG: a ring of 8 KB pages, 2 status bits per xid.
#[derive(Debug)]
pub struct Clog {
    pages: Vec<Box<[u8; CLOG_PAGE_BYTES]>>,
    /// The CLOG page number each ring slot currently holds (`u64::MAX`: none yet).
    holds: Vec<u64>,
    /// Status updates applied (checked against the operations counted by the workers).
    pub updates: u64,
}

impl Clog {
    /// A CLOG of `pages` zeroed pages.
    pub fn new(pages: usize) -> Self {
        Clog {
            pages: (0..pages)
                .map(|_| Box::new([0u8; CLOG_PAGE_BYTES]))
                .collect(),
            holds: vec![u64::MAX; pages],
            updates: 0,
        }
    }

    /// `TransactionIdToPage`.
    #[inline]
    pub fn page_of(xid: u32) -> u64 {
        (xid / CLOG_XACTS_PER_PAGE) as u64
    }

    /// `ExtendCLOG` (call under the exclusive lock when xid is assigned): the first xid of a
    /// page makes its ring slot hold that page, zeroed (`ZeroCLOGPage`). Zeroing at assignment,
    /// not at the first commit, matters: commits arrive out of xid order, so zeroing when the
    /// page's first xid *commits* could wipe statuses already set on it.
    pub fn extend(&mut self, xid: u32) {
        if xid % CLOG_XACTS_PER_PAGE == 0 {
            self.take_slot(Self::page_of(xid));
        }
    }

    /// The ring slot holding `page`, taking (and zeroing) it if it holds an older page or none.
    /// `None` if the slot already holds a *newer* page: `page` was wrapped over (a straggler's
    /// commit or extend arriving a whole ring late), and writing it would corrupt the newer
    /// page. The ring only moves forward.
    fn take_slot(&mut self, page: u64) -> Option<usize> {
        let n = self.pages.len();
        let slot = page as usize % n;
        match self.holds[slot] {
            h if h == page => Some(slot),
            h if h == u64::MAX || h < page => {
                // `ZeroCLOGPage`: the whole page is written (charged under lwsim).
                touch(self.pages[slot].as_ptr(), CLOG_PAGE_BYTES, true);
                self.pages[slot].fill(0);
                self.holds[slot] = page;
                Some(slot)
            }
            _ => None,
        }
    }

    /// `TransactionIdSetStatusBit` (call under the exclusive lock). A page not yet extended
    /// (its first xid's assignment has not reached [`extend`](Self::extend) yet: the harness's
    /// xid counter is an atomic, not a counter under XidGenLock) is extended here, once. The
    /// status of an xid whose page the ring has already wrapped over is counted but not kept
    /// (the checks look only at xids within the ring).
    #[inline]
    pub fn set_status(&mut self, xid: u32, status: u8) {
        self.updates += 1;
        touch(&self.updates, 8, true);
        let Some(slot) = self.take_slot(Self::page_of(xid)) else {
            return;
        };
        let page = &mut self.pages[slot];
        let off = xid % CLOG_XACTS_PER_PAGE;
        let byte = &mut page[(off / 4) as usize];
        touch(byte as *const u8, 1, true);
        let shift = (off % 4) * 2;
        *byte = (*byte & !(0b11 << shift)) | ((status & 0b11) << shift);
    }

    /// `TransactionIdGetStatus` as a backend runs it (call under the lock, shared):
    /// `SimpleLruReadPage_ReadOnly` searches the buffer slots' page numbers for the xid's page
    /// (a linear scan of `page_number[]` up to the slot that holds it, charged as a read of
    /// that prefix of [`Clog`]'s slot array), then the status byte is read (charged). Returns
    /// the status, 0 if the ring does not hold the page. PostgreSQL's `SlruRecentlyUsed` also
    /// writes the LRU counters when the slot found is not already the most recently used one;
    /// that write is not modelled (the lookups here are of the newest pages, whose slots the
    /// commits keep most recent).
    #[inline]
    pub fn lookup_status(&self, xid: u32) -> u8 {
        let n = self.pages.len();
        let slot = (Self::page_of(xid) as usize) % n;
        touch(
            self.holds.as_ptr(),
            (slot + 1) * std::mem::size_of::<u64>(),
            false,
        );
        if self.holds[slot] != Self::page_of(xid) {
            return 0;
        }
        let off = xid % CLOG_XACTS_PER_PAGE;
        let byte = &self.pages[slot][(off / 4) as usize];
        touch(byte as *const u8, 1, false);
        (*byte >> ((off % 4) * 2)) & 0b11
    }

    /// `TransactionIdGetStatus` (uncharged: for the checks).
    pub fn status(&self, xid: u32) -> u8 {
        let n = self.pages.len();
        let slot = (Self::page_of(xid) as usize) % n;
        if self.holds[slot] != Self::page_of(xid) {
            return 0; // not on a page the ring holds (never written, or wrapped over)
        }
        let page = &self.pages[slot];
        let off = xid % CLOG_XACTS_PER_PAGE;
        (page[(off / 4) as usize] >> ((off % 4) * 2)) & 0b11
    }
}

/// A shared buffer's page contents, read under the content lock.
#[derive(Debug)]
pub struct Page {
    /// `PD_ALL_VISIBLE` and friends.
    pub flags: u32,
    /// Some tuple data a scan reads.
    pub tuples: [u64; 8],
}

impl Default for Page {
    fn default() -> Self {
        Page {
            flags: 1,
            tuples: [1, 2, 3, 4, 5, 6, 7, 8],
        }
    }
}

/// A buffer header: the reference count (pins) in the same cache line as the content lock, as
/// in `BufferDesc`.
#[repr(C, align(64))]
#[derive(Debug)]
pub struct BufferDesc<L> {
    /// Pin count (`BUF_REFCOUNT` bits of the buffer state).
    pub refcount: AtomicU32,
    /// The content lock and the page it protects.
    pub content: L,
}

impl<L> BufferDesc<L> {
    /// `PinBuffer`: Acquire so that the pinned page's contents are seen.
    #[inline]
    pub fn pin(&self) {
        self.refcount.fetch_add(1, Ordering::Acquire);
    }
    /// `UnpinBuffer`: Release, pairing with a future evictor's Acquire.
    #[inline]
    pub fn unpin(&self) {
        let old = self.refcount.fetch_sub(1, Ordering::Release);
        debug_assert!(old > 0, "unpin of an unpinned buffer");
    }
}

/// A visibility-map page's word for the hot table's heap pages, on its own line: read with no
/// lock, as `visibilitymap_get_status` reads the map byte (PostgreSQL holds only a pin on the
/// map page; a byte read is atomic, and a stale bit costs only a page visit). Nothing in the
/// harness writes it after creation.
#[derive(Debug)]
pub struct VisibilityMap {
    /// Two bits per heap page.
    pub word: AtomicU64,
}

impl Default for VisibilityMap {
    fn default() -> Self {
        VisibilityMap::new()
    }
}

/// The hot table's visibility-map word, read by `pin-vm`: a static, never written, so that
/// adding it left the per-trial shared state (and so the other workloads' simulated runs,
/// which are sensitive to its addresses) as it was.
pub static VISIBILITY_MAP: crossbeam_utils::CachePadded<VisibilityMap> =
    crossbeam_utils::CachePadded::new(VisibilityMap::new());

impl VisibilityMap {
    /// A map word with every heap page all-visible.
    pub const fn new() -> Self {
        VisibilityMap {
            word: AtomicU64::new(VM_WORD_ALL_VISIBLE),
        }
    }

    /// `VM_ALL_VISIBLE(rel, heapBlk)` for heap page `page` (mod 32). Relaxed, as PostgreSQL's
    /// unlocked byte read: the bit orders nothing.
    #[inline]
    pub fn all_visible(&self, page: usize) -> bool {
        let w = self.word.load(Ordering::Relaxed);
        (w >> ((page % 32) * 2)) & VM_ALL_VISIBLE != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clog_two_bits_per_xid_and_wrap() {
        let mut c = Clog::new(2);
        for x in [3u32, 4, 5, 6, 7, CLOG_XACTS_PER_PAGE + 1] {
            c.set_status(x, XACT_COMMITTED);
        }
        c.set_status(9, 0b10);
        assert_eq!(c.status(4), XACT_COMMITTED);
        assert_eq!(c.status(8), 0);
        assert_eq!(c.status(9), 0b10);
        assert_eq!(Clog::page_of(CLOG_XACTS_PER_PAGE + 1), 1);
        // xid 2*PAGE lands on page 0 again and zeroes it.
        c.set_status(2 * CLOG_XACTS_PER_PAGE, XACT_COMMITTED);
        assert_eq!(c.status(4), 0);
        assert_eq!(c.updates, 8);
    }

    #[test]
    fn lookup_status_reads_what_set_status_wrote_and_the_map_is_all_visible() {
        let mut c = Clog::new(4);
        c.set_status(7, XACT_COMMITTED);
        c.set_status(CLOG_XACTS_PER_PAGE + 9, XACT_COMMITTED);
        assert_eq!(c.lookup_status(7), XACT_COMMITTED);
        assert_eq!(c.lookup_status(8), 0);
        assert_eq!(c.lookup_status(CLOG_XACTS_PER_PAGE + 9), XACT_COMMITTED);
        assert_eq!(
            c.lookup_status(3 * CLOG_XACTS_PER_PAGE),
            0,
            "page never held"
        );
        let vm = VisibilityMap::default();
        assert!((0..64).all(|p| vm.all_visible(p)));
    }

    /// Commits arrive out of xid order: the page's first xid committing after others on the
    /// same page must not wipe them (it did when the page was zeroed at that commit).
    #[test]
    fn out_of_order_commit_of_a_pages_first_xid_keeps_earlier_statuses() {
        let mut c = Clog::new(2);
        let first = 2 * CLOG_XACTS_PER_PAGE; // wraps onto slot 0
        c.extend(first);
        c.set_status(first + 5, XACT_COMMITTED);
        c.set_status(first, XACT_COMMITTED);
        assert_eq!(c.status(first + 5), XACT_COMMITTED);
        assert_eq!(c.status(first), XACT_COMMITTED);
        // Without an extend (the assigning thread is late), the first commit on the new page
        // takes the slot, once.
        let next = 3 * CLOG_XACTS_PER_PAGE;
        c.set_status(next + 7, XACT_COMMITTED);
        c.set_status(next, XACT_COMMITTED);
        c.extend(next); // late: must not zero again
        assert_eq!(c.status(next + 7), XACT_COMMITTED);
        assert_eq!(
            c.status(first + 5),
            XACT_COMMITTED,
            "slot 0 still holds page 2"
        );
        // A straggler a whole ring late (page 0, wrapped over by page 2 in slot 0) must not
        // take the slot back and wipe page 2.
        c.set_status(3, XACT_COMMITTED);
        c.extend(0);
        assert_eq!(
            c.status(first + 5),
            XACT_COMMITTED,
            "the ring only moves forward"
        );
        assert_eq!(c.status(3), 0, "page 0 is gone");
    }
}
