//! PostgreSQL's LWLock tranche ids, named per major version.
//!
//! A lock's tranche is the `uint16 tranche` that starts PostgreSQL's `struct LWLock`. Ids below
//! `NUM_INDIVIDUAL_LWLOCKS` are the individual locks of `lwlocknames.txt` (the tranche of
//! `MainLWLockArray[i]` is `i`); the built-in tranches of `BuiltinTrancheIds` (`lwlock.h`)
//! follow; ids from `LWTRANCHE_FIRST_USER_DEFINED` on are handed out at run time (extensions),
//! and no table can name them. Each major version has its own table: a lock added or removed
//! renumbers the built-in tranches.
//!
//! The PostgreSQL 15 table is `IndividualLWLockNames` (generated from `lwlocknames.txt`) and
//! `BuiltinTrancheNames` (`lwlock.c`) of release 15. It was checked against the server binary
//! itself: both arrays are in its `.data.rel.ro`, each slot a relative relocation whose addend is
//! the name's address, so reading the slots in order from the slot that points at "ShmemIndex"
//! (individual id 1) and at "XactBuffer" (built-in id 48) gives exactly these names.

/// The wait-event name of tranche `id` under PostgreSQL `major` (as `pg_stat_activity` shows
/// it), or `None` if the id is not a built-in one of that version.
pub fn name(major: u32, id: u16) -> Option<&'static str> {
    let (individual, builtin) = table(major)?;
    let id = usize::from(id);
    if id < individual.len() {
        // Gaps in lwlocknames.txt are unassigned ids: no lock has them.
        return (!individual[id].starts_with('<')).then_some(individual[id]);
    }
    builtin.get(id - individual.len()).copied()
}

/// Whether this module has a table for PostgreSQL `major`.
pub fn supported(major: u32) -> bool {
    table(major).is_some()
}

/// The major versions with a table.
pub const SUPPORTED: &[u32] = &[15];

fn table(major: u32) -> Option<(&'static [&'static str], &'static [&'static str])> {
    match major {
        15 => Some((&PG15_INDIVIDUAL, &PG15_BUILTIN)),
        _ => None,
    }
}

/// `IndividualLWLockNames` of PostgreSQL 15: ids 0..=47 (`NUM_INDIVIDUAL_LWLOCKS` = 48).
const PG15_INDIVIDUAL: [&str; 48] = [
    "<unassigned:0>",
    "ShmemIndex",
    "OidGen",
    "XidGen",
    "ProcArray",
    "SInvalRead",
    "SInvalWrite",
    "WALBufMapping",
    "WALWrite",
    "ControlFile",
    "<unassigned:10>",
    "XactSLRU",
    "SubtransSLRU",
    "MultiXactGen",
    "MultiXactOffsetSLRU",
    "MultiXactMemberSLRU",
    "RelCacheInit",
    "CheckpointerComm",
    "TwoPhaseState",
    "TablespaceCreate",
    "BtreeVacuum",
    "AddinShmemInit",
    "Autovacuum",
    "AutovacuumSchedule",
    "SyncScan",
    "RelationMapping",
    "NotifySLRU",
    "NotifyQueue",
    "SerializableXactHash",
    "SerializableFinishedList",
    "SerializablePredicateList",
    "SerialSLRU",
    "SyncRep",
    "BackgroundWorker",
    "DynamicSharedMemoryControl",
    "AutoFile",
    "ReplicationSlotAllocation",
    "ReplicationSlotControl",
    "CommitTsSLRU",
    "CommitTs",
    "ReplicationOrigin",
    "MultiXactTruncation",
    "OldSnapshotTimeMap",
    "LogicalRepWorker",
    "XactTruncation",
    "<unassigned:45>",
    "WrapLimitsVacuum",
    "NotifyQueueTail",
];

/// `BuiltinTrancheNames` of PostgreSQL 15: ids 48..=74.
const PG15_BUILTIN: [&str; 27] = [
    "XactBuffer",
    "CommitTsBuffer",
    "SubtransBuffer",
    "MultiXactOffsetBuffer",
    "MultiXactMemberBuffer",
    "NotifyBuffer",
    "SerialBuffer",
    "WALInsert",
    "BufferContent",
    "ReplicationOriginState",
    "ReplicationSlotIO",
    "LockFastPath",
    "BufferMapping",
    "LockManager",
    "PredicateLockManager",
    "ParallelHashJoin",
    "ParallelQueryDSA",
    "PerSessionDSA",
    "PerSessionRecordType",
    "PerSessionRecordTypmod",
    "SharedTupleStore",
    "SharedTidBitmap",
    "ParallelAppend",
    "PerXactPredicateList",
    "PgStatsDSA",
    "PgStatsHash",
    "PgStatsData",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pg15_names_the_locks_a_transaction_takes() {
        for (id, want) in [
            (3, "XidGen"),
            (4, "ProcArray"),
            (5, "SInvalRead"),
            (8, "WALWrite"),
            (11, "XactSLRU"),
            (47, "NotifyQueueTail"),
            (48, "XactBuffer"),
            (55, "WALInsert"),
            (56, "BufferContent"),
            (59, "LockFastPath"),
            (60, "BufferMapping"),
            (61, "LockManager"),
            (74, "PgStatsData"),
        ] {
            assert_eq!(name(15, id), Some(want), "tranche {id}");
        }
        // Unassigned ids, user-defined ids and other versions have no name.
        assert_eq!(name(15, 0), None);
        assert_eq!(name(15, 10), None);
        assert_eq!(name(15, 75), None);
        assert_eq!(name(14, 4), None);
        assert!(supported(15) && !supported(16));
    }
}
