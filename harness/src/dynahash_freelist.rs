//! The freelist spinlock of a partitioned shared hash table as PostgreSQL 9.1's dynahash ran
//! it (`--era-traffic freelist`): the lock manager's `LOCK` and `PROCLOCK` tables each have one
//! `HASHHDR` with one `mutex` (`slock_t`) guarding its `freeList` and `nentries`, and every
//! entry created (`get_hash_entry`, from `hash_search_with_hash_value`'s `HASH_ENTER` /
//! `HASH_ENTER_NULL`) or removed (`HASH_REMOVE`) takes it, whichever lock partition the entry
//! lives in: all backends meet on two lines (`IS_PARTITIONED(hctl)`, `dynahash.c`). 9.6
//! ("Partition the freelist for shared dynahash tables") split it in 32.
//!
//! What `pgbench -S` creates and removes in 9.1's `lock.c`, all under the entry's lock-partition
//! LWLock: `SetupLockInTable` enters the `LOCK` (created only when no backend holds the tag) and
//! a `PROCLOCK` (always created: one per backend and lock); `LockReleaseAll` → `CleanUpLock`
//! removes the `PROCLOCK` and, when nobody else requests the lock, the `LOCK`. So per
//! transaction: `select-lmgr` 6 on the `PROCLOCK` table (3 locks) and 2 to 6 on the `LOCK`
//! table (the vxid's `LOCK` always, each relation's only when no other backend holds it: 6 at
//! one client, 2 when every relation lock is held by someone at all times); `select-fastpath`
//! 2 + 2 (the vxid's `LOCK` and `PROCLOCK`: fast-path relation locks enter neither table);
//! `select-lazy-vxid` none.
//!
//! # Memory orderings
//! `nentries` and the tallies are only changed under the spinlock (TAS Acquire, unlock
//! Release); they are std atomics, Relaxed, so that the simulator charges only the line's
//! modelled accesses (the TAS, and the header's write, [`touch`]ed).

use crossbeam_utils::CachePadded;
use lwlock::sync::touch;
use lwlock::{SpinLock, Tranche};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// One partitioned table's `HASHHDR` head: `mutex`, `nentries`, `freeList` on one line.
#[repr(C, align(64))]
#[derive(Debug)]
struct HashHdr {
    mutex: SpinLock,
    /// `nentries`.
    nentries: AtomicI64,
    /// Spinlock acquisitions (a test tally).
    taken: AtomicU64,
    tranche: Tranche,
}

impl HashHdr {
    fn new(name: &'static str) -> Self {
        HashHdr {
            mutex: SpinLock::new(),
            nentries: AtomicI64::new(0),
            taken: AtomicU64::new(0),
            tranche: Tranche::register(name),
        }
    }

    /// `get_hash_entry` (`delta` 1) or `HASH_REMOVE`'s freelist push (`delta` -1).
    #[inline]
    fn update(&self, delta: i64) {
        self.mutex.lock(self.tranche);
        // nentries ±1, freeList popped or pushed: a write of the header's line.
        touch(self as *const HashHdr, 16, true);
        self.nentries.fetch_add(delta, Ordering::Relaxed);
        self.taken.fetch_add(1, Ordering::Relaxed);
        // SAFETY: taken just above by this thread.
        unsafe { self.mutex.unlock() };
    }
}

/// The lock manager's two partitioned shared tables' freelist heads.
#[derive(Debug)]
pub struct LockHashFreelists {
    /// `LockMethodLockHash` ("LOCK hash").
    lock: CachePadded<HashHdr>,
    /// `LockMethodProcLockHash` ("PROCLOCK hash").
    proclock: CachePadded<HashHdr>,
}

impl Default for LockHashFreelists {
    fn default() -> Self {
        LockHashFreelists {
            lock: CachePadded::new(HashHdr::new("LockHashFreelist")),
            proclock: CachePadded::new(HashHdr::new("ProcLockHashFreelist")),
        }
    }
}

impl LockHashFreelists {
    /// `SetupLockInTable`'s entries: the `LOCK` if `lock_created`, and the backend's `PROCLOCK`.
    #[inline]
    pub fn entered(&self, lock_created: bool) {
        if lock_created {
            self.lock.update(1);
        }
        self.proclock.update(1);
    }

    /// `CleanUpLock`'s removals: the backend's `PROCLOCK`, and the `LOCK` if `lock_removed`.
    #[inline]
    pub fn removed(&self, lock_removed: bool) {
        self.proclock.update(-1);
        if lock_removed {
            self.lock.update(-1);
        }
    }

    /// Spinlock acquisitions so far: `(LOCK table, PROCLOCK table)`.
    pub fn taken(&self) -> (u64, u64) {
        (
            self.lock.taken.load(Ordering::Relaxed),
            self.proclock.taken.load(Ordering::Relaxed),
        )
    }

    /// After a trial: every entry created was removed.
    pub fn check(&self) -> Result<(), String> {
        let (l, p) = (
            self.lock.nentries.load(Ordering::Relaxed),
            self.proclock.nentries.load(Ordering::Relaxed),
        );
        if l != 0 || p != 0 {
            return Err(format!(
                "lock hash freelists: {l} LOCK and {p} PROCLOCK entries left"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_in_and_out_balance_and_an_entry_left_fails_the_check() {
        let f = LockHashFreelists::default();
        f.entered(true);
        f.entered(false);
        assert!(f.check().unwrap_err().contains("1 LOCK and 2 PROCLOCK"));
        f.removed(false);
        f.removed(true);
        f.check().unwrap();
        assert_eq!(f.taken(), (2, 4));
    }
}
