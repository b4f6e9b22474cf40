//! Simulated PostgreSQL shared state: the proc array, the xid counter, the CLOG and a hot buffer.
//!
//! Mirrors, at the size that matters for contention:
//! * `ProcGlobal->xids[]` and `TransamVariables->latestCompletedXid` / `xactCompletionCount`
//!   (`procarray.c`, PostgreSQL 14+ dense layout): [`ProcArray`], protected by ProcArrayLock.
//!   [`ProcArray::snapshot`] is the scan of `GetSnapshotData`; [`ProcArray::end_xact`] is
//!   `ProcArrayEndTransactionInternal`.
//! * `GetNewTransactionId` (`varsup.c`): [`XidGen`]. PostgreSQL serialises it with XidGenLock;
//!   here it is one atomic fetch-add, so that each workload contends on the one lock it studies.
//! * The CLOG (`clog.c`): [`Clog`], 8 KB pages of 2 status bits per xid, protected by
//!   CLogControlLock / XactSLRU. The page ring wraps (an SLRU keeps only recent pages too).
//! * A buffer header (`BufferDesc`) with its atomic reference count beside its content lock:
//!   [`BufferDesc`], for the pin workloads.
//!
//! # Memory orderings
//! Xid slots are written by their owner outside ProcArrayLock when an xid is assigned and cleared
//! under the exclusive lock; snapshot takers read them once under the shared lock with Relaxed
//! loads, as PostgreSQL's `UINT32_ACCESS_ONCE`. An xid assigned concurrently with a snapshot is
//! at least the snapshot's xmax, so missing it is harmless; clears happen under the exclusive
//! lock, whose release/acquire orders them before any later snapshot.

use std::sync::atomic::{AtomicU32, Ordering};

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

/// The proc array's xid slots (`ProcGlobal->xids[]`): shared memory, written by their owner
/// when an xid is assigned, cleared and scanned under ProcArrayLock.
#[derive(Debug)]
pub struct ProcArray {
    /// One running xid per proc, dense, `INVALID_XID` when none.
    pub xids: Box<[AtomicU32]>,
}

/// What ProcArrayLock protects besides the consistency of the xid slots.
#[derive(Debug)]
pub struct Completion {
    /// `latestCompletedXid`.
    pub latest_completed_xid: u32,
    /// `xactCompletionCount`: transactions with an xid completed.
    pub xact_completion_count: u64,
}

impl Default for Completion {
    fn default() -> Self {
        Completion {
            latest_completed_xid: FIRST_NORMAL_XID - 1,
            xact_completion_count: 0,
        }
    }
}

impl ProcArray {
    /// A proc array of `procs` idle procs.
    pub fn new(procs: usize) -> Self {
        ProcArray {
            xids: (0..procs).map(|_| AtomicU32::new(INVALID_XID)).collect(),
        }
    }

    /// Publishes `xid` as proc `slot`'s running xid (done under XidGenLock in PostgreSQL, not
    /// ProcArrayLock).
    #[inline]
    pub fn assign(&self, slot: usize, xid: u32) {
        self.xids[slot].store(xid, Ordering::Relaxed);
    }

    /// The scan of `GetSnapshotData` (call under the shared lock that protects `c`):
    /// xmax = latestCompletedXid + 1, xmin = the oldest running xid, and the running xids other
    /// than `me`'s copied into `xip`. Returns `(xmin, xmax)`.
    #[inline]
    pub fn snapshot(&self, c: &Completion, me: usize, xip: &mut Vec<u32>) -> (u32, u32) {
        xip.clear();
        let xmax = c.latest_completed_xid.wrapping_add(1);
        let mut xmin = xmax;
        for (i, slot) in self.xids.iter().enumerate() {
            let x = slot.load(Ordering::Relaxed);
            if x == INVALID_XID || i == me || x >= xmax {
                continue;
            }
            xmin = xmin.min(x);
            xip.push(x);
        }
        (xmin, xmax)
    }

    /// `ProcArrayEndTransactionInternal` (call under the exclusive lock that protects `c`):
    /// clears `slot`'s xid, advances latestCompletedXid and counts the completion.
    #[inline]
    pub fn end_xact(&self, c: &mut Completion, slot: usize, xid: u32) {
        self.xids[slot].store(INVALID_XID, Ordering::Relaxed);
        if xid > c.latest_completed_xid {
            c.latest_completed_xid = xid;
        }
        c.xact_completion_count += 1;
    }
}

/// The CLOG: a ring of 8 KB pages, 2 status bits per xid.
#[derive(Debug)]
pub struct Clog {
    pages: Vec<Box<[u8; CLOG_PAGE_BYTES]>>,
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
            updates: 0,
        }
    }

    /// `TransactionIdToPage`.
    #[inline]
    pub fn page_of(xid: u32) -> u64 {
        (xid / CLOG_XACTS_PER_PAGE) as u64
    }

    /// `TransactionIdSetStatusBit` (call under the exclusive lock). When the ring wraps onto a
    /// page, that page is zeroed first (`ZeroCLOGPage`).
    #[inline]
    pub fn set_status(&mut self, xid: u32, status: u8) {
        let n = self.pages.len();
        let page = &mut self.pages[(Self::page_of(xid) as usize) % n];
        let off = xid % CLOG_XACTS_PER_PAGE;
        if off == 0 {
            page.fill(0);
        }
        let byte = &mut page[(off / 4) as usize];
        let shift = (off % 4) * 2;
        *byte = (*byte & !(0b11 << shift)) | ((status & 0b11) << shift);
        self.updates += 1;
    }

    /// `TransactionIdGetStatus`.
    pub fn status(&self, xid: u32) -> u8 {
        let n = self.pages.len();
        let page = &self.pages[(Self::page_of(xid) as usize) % n];
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_sees_running_xids_except_own() {
        let pa = ProcArray::new(4);
        let mut c = Completion {
            latest_completed_xid: 20,
            ..Completion::default()
        };
        pa.assign(0, 10);
        pa.assign(1, 12);
        pa.assign(2, 30); // >= xmax: not running as far as this snapshot is concerned
        let mut xip = Vec::new();
        let (xmin, xmax) = pa.snapshot(&c, 1, &mut xip);
        assert_eq!((xmin, xmax), (10, 21));
        assert_eq!(xip, vec![10]);
        pa.end_xact(&mut c, 0, 10);
        pa.end_xact(&mut c, 2, 30);
        assert_eq!(c.latest_completed_xid, 30);
        assert_eq!(c.xact_completion_count, 2);
        let (xmin, xmax) = pa.snapshot(&c, 3, &mut xip);
        assert_eq!((xmin, xmax), (12, 31));
        assert_eq!(xip, vec![12]);
    }

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
}
