//! The pages of `pgbench_accounts` and its primary key at pgbench's scale 10, resident in shared
//! buffers, reached as `ReadBuffer` reaches a resident page: the page's buffer tag hashed to a
//! buffer-mapping partition, that partition's lock **shared** around the lookup and the pin,
//! then the buffer's content lock in the mode the caller asks for, then the unpin. A `pgbench`
//! transaction's index descent and heap fetch, page by page, for the shapes that stand for
//! `pgbench -S` and `-N`, and `pgbench_history`'s insertion page.
//!
//! Mirrors (`bufmgr.c`, `buf_table.c`):
//! * `ReadBuffer_common` → `BufferAlloc`: `BufTableHashCode`, then
//!   `LWLockAcquire(BufMappingPartitionLock(hash), LW_SHARED)`, `BufTableLookup`, `PinBuffer`
//!   and the partition lock's release. `NUM_BUFFER_PARTITIONS` is 16 until 9.5 and 128 since
//!   (commit 3acc10c9, 9.5): the pool is built with the release's count.
//! * `PinBuffer`/`UnpinBuffer` as since 9.6 (commit 48354581): an atomic on the buffer header,
//!   here the page's `refcount` beside its content lock. Before 9.6 the header spinlock guarded
//!   the count ([`crate::bufmgr`] models that for the hot root of the 9.1 shapes); on the cold
//!   pages drawn here the two cost alike, one uncontended line each.
//! * `LockBuffer(BUFFER_LOCK_SHARE)` or `(BUFFER_LOCK_EXCLUSIVE)`: the content lock.
//!
//! Not modelled: a page that is not resident (`BufferAlloc`'s miss path: the victim's
//! partition lock **exclusive**, PostgreSQL 15's `BufferMapping` exclusive 0.01 per `-S`
//! transaction and 0.24 per `-N` one at `shared_buffers` 256MB), and the buffer's I/O.
//!
//! The pages, with their sizes at scale 10 (1 000 000 accounts rows), from the tables'
//! definitions (`pgbench.c`): an accounts row is 4 + 4 + 4 bytes and a `char(84)` filler,
//! 128 bytes with its header and alignment, 61 to an 8 kB page at fillfactor 100: 16 394 heap
//! pages. The primary key's index tuples are 16 bytes and a 4-byte line pointer, 366 to a leaf
//! at a B-tree build's leaf fillfactor 90 (8 152 usable bytes): 2 733 leaves, under 10
//! internal pages (285 downlinks each at the build's fillfactor 70) and one root: three
//! levels, so a lookup reads root, internal page, leaf and heap page, the 4 mapping and 4
//! content acquisitions of PostgreSQL 15's `-S` trace. (The metapage is cached in the
//! relation cache, `_bt_getroot`'s `rd_amcache`, and not read per lookup.)

use crate::locks::{BenchLock, LockCounters, LockFamily};
use crossbeam_utils::CachePadded;
use lwlock::sync::{touch, AtomicU32, Ordering};
use lwlock::Tranche;

/// `NUM_BUFFER_PARTITIONS` since 9.5.
pub const NUM_BUFFER_PARTITIONS: usize = 128;

/// Rows of `pgbench_accounts` at scale 10.
pub const ACCOUNTS_ROWS: u64 = 1_000_000;
/// Heap pages of `pgbench_accounts` at scale 10 (61 rows a page).
pub const HEAP_PAGES: u64 = 16_394;
/// Rows per heap page.
pub const ROWS_PER_HEAP_PAGE: u64 = 61;
/// Leaf pages of `pgbench_accounts_pkey` at scale 10 (366 keys a leaf).
pub const LEAF_PAGES: u64 = 2_733;
/// Internal pages under the root.
pub const INTERNAL_PAGES: u64 = 10;

/// One buffer: its pin count and its content lock (the page's data, a word), padded to its own
/// line as `BufferDescPadded` is (9.5+), so that a hot page shares no line with its neighbours.
struct Buf<L> {
    refcount: AtomicU32,
    content: L,
}

/// Where a page lies in the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageId {
    /// The primary key's root page: every lookup starts there.
    Root,
    /// The internal page above `aid`'s leaf.
    Internal(u64),
    /// `aid`'s leaf.
    Leaf(u64),
    /// `aid`'s heap page.
    Heap(u64),
    /// `pgbench_history`'s target page for inserts (its last page; its filling and the
    /// relation's extension are not modelled).
    HistoryTail,
}

/// A buffer of the pool on its own line.
type PaddedBuf<F> = CachePadded<Buf<<F as LockFamily>::Lock<u64>>>;

/// The pool: its mapping partitions and one buffer per page.
pub struct AccountsPages<F: LockFamily> {
    /// The partition locks, each on its own line (`LWLockPadded` of `MainLWLockArray`).
    mapping: Box<[CachePadded<F::Lock<u64>>]>,
    bufs: Box<[PaddedBuf<F>]>,
}

impl<F: LockFamily> std::fmt::Debug for AccountsPages<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccountsPages")
            .field("partitions", &self.mapping.len())
            .field("pages", &self.bufs.len())
            .finish_non_exhaustive()
    }
}

impl<F: LockFamily> AccountsPages<F> {
    /// The pool, its mapping table split into `partitions` partitions (16 before 9.5, 128
    /// since).
    pub fn new(partitions: usize) -> Self {
        let mapping = Tranche::register("BufferMapping");
        let pages = 1 + INTERNAL_PAGES + LEAF_PAGES + HEAP_PAGES + 1;
        AccountsPages {
            mapping: (0..partitions.max(1))
                .map(|_| CachePadded::new(F::Lock::new(0, mapping)))
                .collect(),
            bufs: (0..pages)
                .map(|i| {
                    CachePadded::new(Buf {
                        refcount: AtomicU32::new(0),
                        content: F::Lock::new(i, Tranche::BUFFER_CONTENT),
                    })
                })
                .collect(),
        }
    }

    /// The buffer index of a page, for `aid` in `1..=ACCOUNTS_ROWS`.
    pub fn index(id: PageId) -> usize {
        let aid = |a: u64| a.clamp(1, ACCOUNTS_ROWS) - 1;
        (match id {
            PageId::Root => 0,
            PageId::Internal(a) => 1 + aid(a) * INTERNAL_PAGES / ACCOUNTS_ROWS,
            PageId::Leaf(a) => 1 + INTERNAL_PAGES + aid(a) * LEAF_PAGES / ACCOUNTS_ROWS,
            PageId::Heap(a) => 1 + INTERNAL_PAGES + LEAF_PAGES + aid(a) / ROWS_PER_HEAP_PAGE,
            PageId::HistoryTail => 1 + INTERNAL_PAGES + LEAF_PAGES + HEAP_PAGES,
        }) as usize
    }

    /// The mapping partition of a buffer: its tag's hash (`BufTableHashCode`, here a fixed
    /// mix of the page number) modulo the partitions.
    fn partition(&self, index: usize) -> usize {
        let h = (index as u64 ^ 0x5bd1_e995).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((h >> 32) % self.mapping.len() as u64) as usize
    }

    /// `ReadBuffer` of a resident page and its content lock, `exclusive` or shared, around a
    /// read of the page (an exclusive hold also writes it, as `heap_update` writes its tuple's
    /// header). Returns the LWLock operations done (2) and the word read.
    pub fn access(&self, id: PageId, exclusive: bool) -> (u64, u64) {
        self.access_with(id, exclusive, || {})
    }

    /// [`AccountsPages::access`], running `inside` while an exclusive content lock is held
    /// (what a write does in its critical section: `heap_update`'s and `heap_insert`'s WAL
    /// record); a shared access runs it after.
    #[inline]
    pub fn access_with(&self, id: PageId, exclusive: bool, inside: impl FnOnce()) -> (u64, u64) {
        let i = Self::index(id);
        let buf = &self.bufs[i];
        self.mapping[self.partition(i)].shared(|ent| {
            // BufTableLookup reads the entry; PinBuffer moves the pin count.
            touch(ent as *const u64, 8, false);
            std::hint::black_box(*ent);
            buf.refcount.fetch_add(1, Ordering::Relaxed);
        });
        let v = if exclusive {
            buf.content.exclusive(|p| {
                *p = p.wrapping_add(1);
                inside();
                *p
            })
        } else {
            let v = buf.content.shared(|p| {
                touch(p as *const u64, 8, false);
                *p
            });
            inside();
            v
        };
        // Release: the page's accesses happen before the unpin that a later check reads.
        buf.refcount.fetch_sub(1, Ordering::Release);
        (2, v)
    }

    /// After a trial: no pin left.
    pub fn check(&self) -> Result<(), String> {
        match self
            .bufs
            .iter()
            .position(|b| b.refcount.load(Ordering::Acquire) != 0)
        {
            Some(i) => Err(format!("accounts page {i} left pinned")),
            None => Ok(()),
        }
    }

    /// The mapping partition locks' and the content locks' counters, merged.
    pub fn counters(&self) -> LockCounters {
        self.mapping
            .iter()
            .map(|p| p.counters())
            .chain(self.bufs.iter().map(|b| b.content.counters()))
            .fold(LockCounters::default(), |a, c| a.merge(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locks::StdFamily;

    #[test]
    fn a_lookup_reads_four_distinct_pages_and_leaves_no_pin() {
        let p = AccountsPages::<StdFamily>::new(NUM_BUFFER_PARTITIONS);
        assert_eq!(p.bufs.len() as u64, 1 + 10 + 2_733 + 16_394 + 1);
        assert_eq!(
            AccountsPages::<StdFamily>::index(PageId::HistoryTail) + 1,
            p.bufs.len()
        );
        for aid in [1, 61, 62, 500_000, ACCOUNTS_ROWS] {
            let ids = [
                PageId::Root,
                PageId::Internal(aid),
                PageId::Leaf(aid),
                PageId::Heap(aid),
            ];
            let mut seen: Vec<usize> = ids
                .iter()
                .map(|&i| AccountsPages::<StdFamily>::index(i))
                .collect();
            seen.dedup();
            assert_eq!(seen.len(), 4, "aid {aid}: {seen:?}");
            assert!(seen.iter().all(|&i| i < p.bufs.len()));
            for id in ids {
                assert_eq!(p.access(id, false).0, 2);
            }
        }
        assert_eq!(
            AccountsPages::<StdFamily>::index(PageId::Heap(61)) + 1,
            AccountsPages::<StdFamily>::index(PageId::Heap(62))
        );
        assert_eq!(
            p.access(PageId::Heap(7), true).1,
            p.access(PageId::Heap(7), false).1
        );
        p.check().unwrap();
        p.bufs[3].refcount.fetch_add(1, Ordering::Relaxed);
        assert!(p.check().unwrap_err().contains("page 3"));
    }

    #[test]
    fn the_pages_spread_over_every_partition() {
        let p = AccountsPages::<StdFamily>::new(NUM_BUFFER_PARTITIONS);
        let mut hit = vec![0u32; NUM_BUFFER_PARTITIONS];
        for i in 0..p.bufs.len() {
            hit[p.partition(i)] += 1;
        }
        let (lo, hi) = (hit.iter().min().unwrap(), hit.iter().max().unwrap());
        assert!(*lo > 100 && *hi < 200, "{lo}..{hi}");
        assert!((0..16).all(|i| AccountsPages::<StdFamily>::new(16).partition(i) < 16));
    }
}
