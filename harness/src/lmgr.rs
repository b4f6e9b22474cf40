//! The heavyweight lock manager's LWLocks as a `pgbench -S` transaction meets them: the 16
//! lock-partition LWLocks, each backend's fast-path LWLock, and the three releases of seed 000's
//! thread (2011: "lazy vxid locks", over "reducing the overhead of frequent table locks"); and
//! as `pgbench-n`'s `-N` transaction meets them on 9.2+ (five relation locks through the fast
//! path, the xid's lock through its partition: `LockManager::begin_write` and after).
//!
//! Mirrors, at the size that matters for contention (`lock.c`, `lmgr.c`):
//! * `LockAcquire` of a regular lock: `LWLockAcquire(partitionLock, LW_EXCLUSIVE)` on the
//!   partition the lock tag hashes to (`LockHashPartitionLock`, `NUM_LOCK_PARTITIONS` = 16),
//!   then the shared `LOCK` object's grant count is updated (`GrantLock`) and the lock is
//!   released. `LockReleaseAll` at commit takes the partition lock again for each lock held.
//!   A `pgbench -S` transaction holds two relation locks (`pgbench_accounts` and its primary
//!   key, AccessShareLock), which every backend hashes to the same two partitions and the same
//!   two `LOCK` objects, and its own vxid lock (`VirtualXactLockTableInsert`), whose tag differs
//!   per backend and spreads over the partitions.
//! * The fast path (9.2, commit 3cba8999): a weak relation lock is recorded in the backend's
//!   own `PGPROC` under its `fpInfoLock` (then `backendLock`), an LWLock no other backend takes
//!   in this workload, after reading `FastPathStrongRelationLocks->count` for the tag (no strong
//!   lock exists, so the counter is only read). `LockReleaseAll` takes `fpInfoLock` once for
//!   the fast-path locks.
//! * Lazy vxid locks (9.2, commit 84e37126): the vxid lock is a flag in the backend's own
//!   `PGPROC` under the same `fpInfoLock`, set at transaction start and cleared at its end
//!   (`VirtualXactLockTableCleanup`); the lock manager sees it only when someone waits for it.
//!
//! [`LmgrRelease`] picks which of the three a transaction runs. What remains shared with the
//! fast path and lazy vxids is ProcArrayLock (`GetSnapshotData`), where the thread saw the
//! bottleneck move.
//!
//! The lock manager's data lives in the locks that protect it, as in the other workloads: a
//! partition lock protects its part of the shared hash table ([`Partition`]), a fast-path lock
//! its backend's slots ([`FastPath`]). Their plain bytes are charged with `lwlock::sync::touch`
//! so that a `--cfg lwsim` build simulates them.
//!
//! # Memory orderings
//! The strong-lock counters are read Relaxed: no strong lock is ever taken in these workloads,
//! and PostgreSQL reads them under the partition's spinlock only when it is about to take a
//! strong lock itself.

use crate::dynahash_freelist::LockHashFreelists;
use crate::locks::{BenchLock, LockFamily};
use crossbeam_utils::CachePadded;
use lwlock::sync::{touch, AtomicU32, Ordering};
use lwlock::Tranche;

/// `NUM_LOCK_PARTITIONS` (`1 << LOG2_NUM_LOCK_PARTITIONS`, 4).
pub const NUM_LOCK_PARTITIONS: usize = 16;
/// `FP_LOCK_SLOTS_PER_BACKEND` (16 since 9.2).
pub const FP_LOCK_SLOTS_PER_BACKEND: usize = 16;
/// `FAST_PATH_STRONG_LOCK_HASH_PARTITIONS` (`1 << FAST_PATH_STRONG_LOCK_HASH_BITS`, 10).
pub const FAST_PATH_STRONG_LOCK_HASH_PARTITIONS: usize = 1024;
/// The relation locks of one `pgbench -S` transaction: `pgbench_accounts` and
/// `pgbench_accounts_pkey` (any two relation OIDs of one database; these hash to two different
/// partitions).
pub const SELECT_RELATIONS: [u32; 2] = [16397, 16403];
/// The relation locks of one `pgbench -N` transaction, in the order taken: the `UPDATE`'s
/// `RowExclusiveLock` on `pgbench_accounts` and its primary key, the `SELECT`'s
/// `AccessShareLock` on both (another mode: another local lock, another fast-path grant; the
/// slot's mode bits in PostgreSQL, a slot each here), the `INSERT`'s on `pgbench_history`.
pub const WRITE_RELATIONS: [u32; 5] = [16397, 16403, 16397, 16403, 16400];
/// `LOCK` objects a partition's part of the shared hash table holds (the relation locks plus
/// the vxid locks of the backends hashing there; a full table is a harness error, reported).
const PARTITION_SLOTS: usize = 512;

/// Which release's lock manager a `pgbench -S` transaction runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LmgrRelease {
    /// 9.1: relation and vxid locks through the lock partitions.
    Partitioned,
    /// 9.2's fast path for weak relation locks; the vxid lock still through its partition.
    FastPath,
    /// The fast path and lazy vxid locks: no lock-partition traffic at all.
    LazyVxid,
}

/// A lock tag: a relation (`SET_LOCKTAG_RELATION`) or a backend's virtual transaction id
/// (`SET_LOCKTAG_VIRTUALTRANSACTION`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockTag {
    /// A relation, by OID.
    Relation(u32),
    /// A virtual transaction id: backend id and local transaction id.
    Vxid(u32, u32),
    /// A transaction id (`SET_LOCKTAG_TRANSACTION`).
    Xid(u32),
}

impl LockTag {
    /// `LockTagHashCode`: a hash of the tag (a fixed multiplicative mix here; PostgreSQL uses
    /// `hash_any`). Only its spread matters.
    pub fn hash(self) -> u64 {
        let k = match self {
            LockTag::Relation(oid) => oid as u64,
            LockTag::Vxid(b, l) => (1 << 63) | ((b as u64) << 32) | l as u64,
            LockTag::Xid(x) => (1 << 62) | x as u64,
        };
        k.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29)
    }

    /// `LockHashPartition`: the partition the tag's lock lives in.
    pub fn partition(self) -> usize {
        (self.hash() % NUM_LOCK_PARTITIONS as u64) as usize
    }

    fn key(self) -> u64 {
        match self {
            LockTag::Relation(oid) => oid as u64 + 1,
            LockTag::Vxid(b, l) => (1 << 63) | ((b as u64) << 32) | l as u64,
            LockTag::Xid(x) => (1 << 62) | x as u64,
        }
    }
}

/// A shared `LOCK` object: its tag and how many holders it has granted.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct LockObject {
    /// [`LockTag::key`], 0 for a free slot.
    key: u64,
    /// `nGranted`.
    granted: u32,
}

/// One partition's part of the shared lock hash table, protected by its partition LWLock.
#[derive(Debug)]
pub struct Partition {
    slots: Box<[LockObject]>,
    /// Grants made in this partition (checked against the releases).
    pub grants: u64,
    /// Releases made in this partition.
    pub releases: u64,
}

impl Partition {
    fn new() -> Self {
        Partition {
            slots: vec![LockObject::default(); PARTITION_SLOTS].into_boxed_slice(),
            grants: 0,
            releases: 0,
        }
    }

    /// The home slot of `key` in the open-addressed table.
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as usize % self.slots.len()
    }

    /// The slot of `tag`'s `LOCK`, created if absent (`SetupLockInTable`'s `HASH_ENTER`):
    /// linear probing from the key's home slot. dynahash finds the entry through its bucket's
    /// chain; here the probe's reads are not charged, and the caller charges the entry's line
    /// (the `LOCK` object, which every backend's grant writes).
    fn find_or_create(&mut self, tag: LockTag) -> usize {
        let key = tag.key();
        let n = self.slots.len();
        let mut j = self.home(key);
        for _ in 0..n {
            match self.slots[j].key {
                k if k == key => return j,
                0 => {
                    self.slots[j].key = key;
                    return j;
                }
                _ => j = (j + 1) % n,
            }
        }
        panic!("lock manager partition full (more backends than the harness sized)");
    }

    /// Removes the entry in slot `i` (`HASH_REMOVE`), shifting later entries of its probe run
    /// back so that every lookup still finds its key (deletion without tombstones).
    fn remove(&mut self, mut i: usize) {
        let n = self.slots.len();
        let mut j = i;
        loop {
            j = (j + 1) % n;
            if self.slots[j].key == 0 {
                break;
            }
            let k = self.home(self.slots[j].key);
            // Entry j may move to i unless its home lies cyclically in (i, j].
            let stays = if i <= j {
                i < k && k <= j
            } else {
                i < k || k <= j
            };
            if !stays {
                self.slots[i] = self.slots[j];
                i = j;
            }
        }
        self.slots[i] = LockObject::default();
    }

    /// `LockAcquire`'s grant under the partition lock. Returns whether the `LOCK` was created
    /// (no backend held the tag).
    fn grant(&mut self, tag: LockTag) -> bool {
        let j = self.find_or_create(tag);
        let obj = &mut self.slots[j];
        touch(obj as *const LockObject, 16, true);
        let created = obj.granted == 0;
        obj.granted += 1;
        self.grants += 1;
        created
    }

    /// `LockRelease` under the partition lock: the grant count drops, and a `LOCK` nobody holds
    /// leaves the table (`CleanUpLock`'s `HASH_REMOVE`). Returns whether it left.
    fn release(&mut self, tag: LockTag) -> bool {
        let j = self.find_or_create(tag);
        let obj = &mut self.slots[j];
        touch(obj as *const LockObject, 16, true);
        assert!(
            obj.granted > 0,
            "lock manager: release of {tag:?}, which is not granted"
        );
        obj.granted -= 1;
        let removed = obj.granted == 0;
        if removed {
            self.remove(j);
        }
        self.releases += 1;
        removed
    }

    /// Locks still granted in the partition.
    pub fn granted(&self) -> u64 {
        self.slots.iter().map(|s| s.granted as u64).sum()
    }
}

/// A backend's fast-path lock slots (`fpRelId`, `fpLockBits`, `fpVXIDLock`), protected by its
/// `fpInfoLock`.
#[derive(Debug, Default)]
pub struct FastPath {
    rel: [u32; FP_LOCK_SLOTS_PER_BACKEND],
    vxid: bool,
    /// Fast-path grants made (checked against the releases).
    pub grants: u64,
    /// Fast-path releases made.
    pub releases: u64,
}

impl FastPath {
    /// `FastPathGrantRelationLock`.
    fn grant(&mut self, oid: u32) {
        touch(self.rel.as_ptr(), std::mem::size_of_val(&self.rel), true);
        let slot = self
            .rel
            .iter()
            .position(|&r| r == 0)
            .expect("fast-path slots full (a workload holds at most five relation locks)");
        self.rel[slot] = oid;
        self.grants += 1;
    }

    /// `LockReleaseAll`'s fast-path part: every relation slot cleared.
    fn release_all(&mut self) {
        touch(self.rel.as_ptr(), std::mem::size_of_val(&self.rel), true);
        for r in self.rel.iter_mut().filter(|r| **r != 0) {
            *r = 0;
            self.releases += 1;
        }
    }

    /// Relation locks held in the slots.
    pub fn held(&self) -> usize {
        self.rel.iter().filter(|&&r| r != 0).count() + self.vxid as usize
    }
}

/// The lock manager's LWLocks and the state they protect.
pub struct LockManager<F: LockFamily> {
    /// The lock-partition LWLocks (`MainLWLockArray`'s LockManager tranche); empty where the
    /// workload does not use the lock manager.
    pub partitions: Box<[F::Lock<Partition>]>,
    /// Each backend's `fpInfoLock`, padded (a `PGPROC` is far larger than a line).
    pub fast_path: Box<[CachePadded<F::Lock<FastPath>>]>,
    /// `FastPathStrongRelationLocks->count`.
    strong: Box<[AtomicU32]>,
}

impl<F: LockFamily> std::fmt::Debug for LockManager<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockManager")
            .field("partitions", &self.partitions.len())
            .field("backends", &self.fast_path.len())
            .finish_non_exhaustive()
    }
}

impl<F: LockFamily> LockManager<F> {
    /// A lock manager for `backends` backends, or an empty one (`backends` = 0) where the
    /// workload does not use it.
    pub fn new(backends: usize) -> Self {
        let used = backends > 0;
        let partitions = if used { NUM_LOCK_PARTITIONS } else { 0 };
        let lm = Tranche::register("LockManager");
        let fp = Tranche::register("LockFastPath");
        LockManager {
            partitions: (0..partitions)
                .map(|_| F::Lock::new(Partition::new(), lm))
                .collect(),
            fast_path: (0..backends)
                .map(|_| CachePadded::new(F::Lock::new(FastPath::default(), fp)))
                .collect(),
            strong: (0..if used {
                FAST_PATH_STRONG_LOCK_HASH_PARTITIONS
            } else {
                0
            })
                .map(|_| AtomicU32::new(0))
                .collect(),
        }
    }

    fn partition(&self, tag: LockTag) -> &F::Lock<Partition> {
        &self.partitions[tag.partition()]
    }

    /// `LockAcquire` through the partition, with 9.1's freelist spinlocks for the entries it
    /// creates where `freelists` is given; returns the lock operations done.
    fn acquire_partitioned(&self, tag: LockTag, freelists: Option<&LockHashFreelists>) -> u64 {
        self.partition(tag).exclusive(|p| {
            let created = p.grant(tag);
            if let Some(f) = freelists {
                f.entered(created);
            }
        });
        1
    }

    /// `LockRelease` through the partition (with the freelist spinlocks for the entries it
    /// removes where `freelists` is given).
    fn release_partitioned(&self, tag: LockTag, freelists: Option<&LockHashFreelists>) -> u64 {
        self.partition(tag).exclusive(|p| {
            let removed = p.release(tag);
            if let Some(f) = freelists {
                f.removed(removed);
            }
        });
        1
    }

    /// The start of a `pgbench -S` transaction and its relation locks: the vxid lock
    /// (`VirtualXactLockTableInsert`), then `LockAcquire(AccessShareLock)` on each relation of
    /// [`SELECT_RELATIONS`]. Returns the LWLock operations done.
    pub fn begin_select(&self, release: LmgrRelease, backend: usize, lxid: u32) -> u64 {
        self.begin_select_then(release, backend, lxid, None, |_| 0)
    }

    /// [`LockManager::begin_select`], calling `accept(n)` (which returns its LWLock operations)
    /// where 9.1 runs `AcceptInvalidationMessages` `n` times: 2 after the vxid lock
    /// (`AtStart_Cache`, then the parser's `relation_openrv`), 1 after each relation lock
    /// (`LockRelationOid`). The snapshots, which 9.1 takes between these, stay after them, as
    /// in the shape without `sinval`. `freelists`: the lock tables' freelist spinlocks for the
    /// entries created (`--era-traffic freelist`).
    #[inline]
    pub fn begin_select_then(
        &self,
        release: LmgrRelease,
        backend: usize,
        lxid: u32,
        freelists: Option<&LockHashFreelists>,
        mut accept: impl FnMut(u64) -> u64,
    ) -> u64 {
        let vxid = LockTag::Vxid(backend as u32, lxid);
        let mut ops = 0;
        match release {
            LmgrRelease::LazyVxid => {
                self.fast_path[backend].exclusive(|f| {
                    touch(&f.vxid as *const bool, 1, true);
                    f.vxid = true;
                });
                ops += 1;
            }
            _ => ops += self.acquire_partitioned(vxid, freelists),
        }
        ops += accept(2);
        for oid in SELECT_RELATIONS {
            let tag = LockTag::Relation(oid);
            if release == LmgrRelease::Partitioned {
                ops += self.acquire_partitioned(tag, freelists);
            } else {
                // EligibleForRelationFastPath; under the backend's fpInfoLock, no strong lock
                // on the tag's hash partition, then FastPathGrantRelationLock.
                let h = (tag.hash() % FAST_PATH_STRONG_LOCK_HASH_PARTITIONS as u64) as usize;
                let strong = &self.strong[h];
                self.fast_path[backend].exclusive(|f| {
                    assert_eq!(
                        strong.load(Ordering::Relaxed),
                        0,
                        "no strong relation lock is taken in this workload"
                    );
                    f.grant(oid)
                });
                ops += 1;
            }
            ops += accept(1);
        }
        ops
    }

    /// The commit of a `pgbench -S` transaction: `LockReleaseAll` (the fast-path slots under
    /// `fpInfoLock` once, each partitioned lock under its partition lock) and the vxid lock's
    /// release. Returns the LWLock operations done.
    pub fn end_select(&self, release: LmgrRelease, backend: usize, lxid: u32) -> u64 {
        self.end_select_with(release, backend, lxid, None)
    }

    /// [`LockManager::end_select`], with the lock tables' freelist spinlocks for the entries
    /// removed where `freelists` is given (`--era-traffic freelist`).
    #[inline]
    pub fn end_select_with(
        &self,
        release: LmgrRelease,
        backend: usize,
        lxid: u32,
        freelists: Option<&LockHashFreelists>,
    ) -> u64 {
        let vxid = LockTag::Vxid(backend as u32, lxid);
        let mut ops = 0;
        match release {
            LmgrRelease::Partitioned => {
                for oid in SELECT_RELATIONS {
                    ops += self.release_partitioned(LockTag::Relation(oid), freelists);
                }
                ops += self.release_partitioned(vxid, freelists);
            }
            LmgrRelease::FastPath => {
                self.fast_path[backend].exclusive(|f| f.release_all());
                ops += 1 + self.release_partitioned(vxid, freelists);
            }
            LmgrRelease::LazyVxid => {
                // LockReleaseAll's fast-path pass and VirtualXactLockTableCleanup.
                self.fast_path[backend].exclusive(|f| f.release_all());
                self.fast_path[backend].exclusive(|f| {
                    touch(&f.vxid as *const bool, 1, true);
                    f.vxid = false;
                });
                ops += 2;
            }
        }
        ops
    }

    /// The start of a `pgbench -N` transaction: its lazy vxid lock, a flag under the backend's
    /// `fpInfoLock` (`VirtualXactLockTableInsert`, 9.2+). Returns the LWLock operations done.
    pub fn begin_write(&self, backend: usize) -> u64 {
        self.fast_path[backend].exclusive(|f| {
            touch(&f.vxid as *const bool, 1, true);
            f.vxid = true;
        });
        1
    }

    /// Relation lock `i` of [`WRITE_RELATIONS`] through the fast path (`LockAcquire` →
    /// `FastPathGrantRelationLock` under `fpInfoLock`, 9.2+). Returns the LWLock operations.
    pub fn write_relation(&self, backend: usize, i: usize) -> u64 {
        let oid = WRITE_RELATIONS[i];
        let h =
            (LockTag::Relation(oid).hash() % FAST_PATH_STRONG_LOCK_HASH_PARTITIONS as u64) as usize;
        assert_eq!(
            self.strong[h].load(Ordering::Relaxed),
            0,
            "no strong relation lock is taken in this workload"
        );
        self.fast_path[backend].exclusive(|f| f.grant(oid));
        1
    }

    /// `XactLockTableInsert` (`AssignTransactionId`, every release): the xid's lock through its
    /// partition, exclusive. Returns the LWLock operations.
    pub fn xact_lock(&self, xid: u32) -> u64 {
        self.acquire_partitioned(LockTag::Xid(xid), None)
    }

    /// The commit's lock release: `LockReleaseAll`'s fast-path pass under `fpInfoLock`, the
    /// xid's lock through its partition, then `VirtualXactLockTableCleanup` under
    /// `fpInfoLock`. Returns the LWLock operations (3).
    pub fn end_write(&self, backend: usize, xid: u32) -> u64 {
        self.fast_path[backend].exclusive(|f| f.release_all());
        self.release_partitioned(LockTag::Xid(xid), None);
        self.fast_path[backend].exclusive(|f| {
            touch(&f.vxid as *const bool, 1, true);
            f.vxid = false;
        });
        3
    }

    /// After a trial: every lock granted was released, and the counts agree.
    pub fn check(&self) -> Result<(), String> {
        let (mut grants, mut releases) = (0, 0);
        for (i, p) in self.partitions.iter().enumerate() {
            let (g, r, held) = p.shared(|p| (p.grants, p.releases, p.granted()));
            if held != 0 {
                return Err(format!("lock partition {i} still grants {held} locks"));
            }
            grants += g;
            releases += r;
        }
        for (b, f) in self.fast_path.iter().enumerate() {
            let (g, r, held) = f.shared(|f| (f.grants, f.releases, f.held()));
            if held != 0 {
                return Err(format!("backend {b} still holds {held} fast-path locks"));
            }
            grants += g;
            releases += r;
        }
        if grants != releases {
            return Err(format!(
                "lock manager: {grants} grants but {releases} releases"
            ));
        }
        Ok(())
    }

    /// The partition and fast-path locks' counters, merged.
    pub fn counters(&self) -> crate::locks::LockCounters {
        self.partitions
            .iter()
            .map(|p| p.counters())
            .chain(self.fast_path.iter().map(|f| f.counters()))
            .fold(Default::default(), |a, c| a.merge(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locks::RawFamily;
    use lwlock::RawAtomicLwLock;

    type Lm = LockManager<RawFamily<RawAtomicLwLock>>;

    #[test]
    fn the_select_relations_hash_to_two_partitions_and_vxids_spread() {
        let [a, b] = SELECT_RELATIONS.map(|o| LockTag::Relation(o).partition());
        assert_ne!(a, b);
        let used: std::collections::HashSet<usize> = (0..64)
            .map(|backend| LockTag::Vxid(backend, 1).partition())
            .collect();
        assert!(
            used.len() >= 12,
            "vxids of 64 backends use {} partitions",
            used.len()
        );
    }

    #[test]
    fn a_write_transaction_takes_eight_fast_path_and_two_partition_operations() {
        let lm = Lm::new(2);
        let mut ops = lm.begin_write(1);
        for i in 0..WRITE_RELATIONS.len() {
            ops += lm.write_relation(1, i);
        }
        ops += lm.xact_lock(1000);
        assert!(
            lm.check().is_err(),
            "the xid's lock and the relations are held"
        );
        ops += lm.end_write(1, 1000);
        assert_eq!(ops, 10);
        lm.check().unwrap();
        let p = LockTag::Xid(1000).partition();
        assert_eq!(lm.partitions[p].shared(|p| (p.grants, p.releases)), (1, 1));
    }

    #[test]
    fn each_release_does_its_lwlock_operations_and_leaves_nothing_granted() {
        // (release, LWLock operations at the start, at the end, partition grants per xact)
        for (release, begin, end, partitioned) in [
            (LmgrRelease::Partitioned, 3, 3, 3),
            (LmgrRelease::FastPath, 3, 2, 1),
            (LmgrRelease::LazyVxid, 3, 2, 0),
        ] {
            let lm = Lm::new(4);
            for lxid in 1..=5 {
                for backend in 0..4 {
                    assert_eq!(lm.begin_select(release, backend, lxid), begin);
                }
                // Every backend holds its locks at once: the relations' LOCKs are shared.
                if release == LmgrRelease::Partitioned {
                    let p = LockTag::Relation(SELECT_RELATIONS[0]).partition();
                    let held = lm.partitions[p].shared(|p| p.granted());
                    assert!(held >= 4, "{held}");
                }
                for backend in 0..4 {
                    assert_eq!(lm.end_select(release, backend, lxid), end);
                }
            }
            lm.check().unwrap();
            let grants: u64 = lm.partitions.iter().map(|p| p.shared(|p| p.grants)).sum();
            assert_eq!(grants, 4 * 5 * partitioned, "{release:?}");
        }
    }

    /// `--era-traffic freelist`: the freelist spinlocks per transaction when four backends
    /// hold their locks at once. The relations' `LOCK`s are created by the first backend and
    /// removed by the last (2 per round of 4), the vxid's always (2 each), and a `PROCLOCK` per
    /// lock (2 each); the fast path enters only the vxid's.
    #[test]
    fn the_freelists_see_each_entry_created_and_removed() {
        // (release, LOCK-table and PROCLOCK-table acquisitions per round of 4 transactions)
        for (release, lock, proclock) in [
            (LmgrRelease::Partitioned, 4 * 2 + 2 * 2, 4 * 3 * 2),
            (LmgrRelease::FastPath, 4 * 2, 4 * 2),
            (LmgrRelease::LazyVxid, 0, 0),
        ] {
            let lm = Lm::new(4);
            let f = LockHashFreelists::default();
            for lxid in 1..=5 {
                for backend in 0..4 {
                    lm.begin_select_then(release, backend, lxid, Some(&f), |_| 0);
                }
                for backend in 0..4 {
                    lm.end_select_with(release, backend, lxid, Some(&f));
                }
            }
            lm.check().unwrap();
            f.check().unwrap();
            assert_eq!(f.taken(), (5 * lock, 5 * proclock), "{release:?}");
        }
    }

    #[test]
    fn a_lock_left_granted_fails_the_check() {
        let lm = Lm::new(2);
        lm.begin_select(LmgrRelease::Partitioned, 0, 1);
        assert!(lm.check().unwrap_err().contains("still grants"));
        let lm = Lm::new(2);
        lm.begin_select(LmgrRelease::LazyVxid, 1, 1);
        assert!(lm.check().unwrap_err().contains("fast-path"));
    }

    /// Many tags created and removed in one partition, in an order that wraps probe runs
    /// around the table's end: every lookup still finds its entry, and the table ends empty.
    #[test]
    fn removal_keeps_every_probe_run_whole() {
        let mut p = Partition::new();
        let mut rng = 0x1234_5678_u64;
        let mut live: Vec<LockTag> = Vec::new();
        for step in 0..20_000u32 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            if live.len() < 400 && (rng % 3 != 0 || live.is_empty()) {
                let t = LockTag::Vxid((rng % 64) as u32, step);
                p.grant(t);
                live.push(t);
            } else {
                let t = live.swap_remove((rng as usize / 3) % live.len());
                p.release(t);
            }
            if step % 997 == 0 {
                for &t in &live {
                    let j = p.find_or_create(t);
                    assert_eq!(p.slots[j].granted, 1, "{t:?} lost at step {step}");
                }
            }
        }
        for t in live.drain(..) {
            p.release(t);
        }
        assert_eq!(p.granted(), 0);
        assert!(
            p.slots.iter().all(|s| s.key == 0),
            "an entry was left behind"
        );
    }

    #[test]
    fn an_unused_lock_manager_is_empty() {
        let lm = Lm::new(0);
        assert!(lm.partitions.is_empty() && lm.fast_path.is_empty());
        lm.check().unwrap();
    }
}
