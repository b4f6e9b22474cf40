//! A hot shared buffer reached as PostgreSQL 9.1 reached it: the buffer-mapping partition lock,
//! the buffer header spinlock around every pin and unpin, and the content lock. The `select-*`
//! workloads of seed 000's thread (2011) read the primary key's root page this way once per
//! transaction; every backend's index descent starts there.
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
use lwlock::sync::{touch, AtomicU32, Ordering};
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
    /// Buffer accesses completed (checked against the operations counted).
    reads: CachePadded<AtomicU32>,
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
            reads: CachePadded::new(AtomicU32::new(0)),
        }
    }

    /// `PinBuffer`/`UnpinBuffer` of 9.1: the pin count moved by `delta` under the header
    /// spinlock.
    fn pin_delta(&self, delta: i32) {
        self.hdr.spin.lock(hdr_tranche());
        let n = self.hdr.refcount.load(Ordering::Relaxed);
        let next = n.checked_add_signed(delta);
        self.hdr
            .refcount
            .store(next.unwrap_or(n), Ordering::Relaxed);
        // SAFETY: taken just above by this thread.
        unsafe { self.hdr.spin.unlock() };
        // Reported after the unlock: a panic must not leave the spinlock held.
        next.expect("buffer pin count out of range (an unpin without a pin)");
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
        self.reads.fetch_add(1, Ordering::Relaxed);
        (2, v)
    }

    /// Reads completed.
    pub fn reads(&self) -> u32 {
        self.reads.load(Ordering::Relaxed)
    }

    /// After a trial: no pin left.
    pub fn check(&self) -> Result<(), String> {
        let pins = self.hdr.refcount.load(Ordering::Acquire);
        if pins != 0 {
            return Err(format!("hot page left with {pins} pins"));
        }
        Ok(())
    }

    /// The mapping partition locks' and the content lock's counters, merged.
    pub fn counters(&self) -> crate::locks::LockCounters {
        self.mapping
            .iter()
            .map(|p| p.counters())
            .fold(self.hdr.content.counters(), |a, c| a.merge(c))
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
