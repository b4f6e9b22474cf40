//! The hand-written transaction shapes held against PostgreSQL 15: each shape with a pgbench
//! counterpart run through the counting lock family (`lwharness::counting`), its lock
//! acquisitions per transaction by tranche and mode beside the PG15 trace's attempts per
//! transaction (`trace-summary.csv`: acquire, conditional and acquire-or-wait attempts,
//! releases left out), and every row where they differ, each with its reason: an era
//! difference (the shape is an older release by design) or a part of PostgreSQL's transaction
//! the shape does not model. The table of `docs/results.md` (`examples/shape_counts.rs`) and
//! its test (`tests/shape_counts.rs`) are made from here.

use lwharness::counting::{take_counts, CountingFamily};
use lwharness::era_traffic::EraTraffic;
use lwharness::locks::RawFamily;
use lwharness::snapshot::{Layout, Strategy};
use lwharness::workload::{run_transactions, Shared, Worker, WorkerConfig, Workload};
use lwlock::RawAtomicLwLock;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Counted = CountingFamily<RawFamily<RawAtomicLwLock>>;

/// `(tranche, mode)` → acquisitions per transaction.
pub type PerTxn = BTreeMap<(String, String), f64>;

/// Transactions a shape is counted over: a multiple of 100, so that `pgbench-write-status`'s
/// 57.62 lookups per transaction come out exactly.
pub const TXNS: u64 = 1000;

/// A shape's value and the trace's that agree within this many acquisitions per transaction
/// match: the trace's fractions of one (a snapshot of `TransactionIdIsInProgress` now and then,
/// a conditional retry) and its rare rows (an eviction, a statistics flush, a checkpointer
/// request: under 0.05 per transaction each) are not modelled.
pub const TOLERANCE: f64 = 0.06;

/// The traces and the shapes that stand for their transaction.
pub const GROUPS: [(&str, &str, &[&str]); 3] = [
    (
        "pg15-S-c1",
        "`pgbench -S`",
        &[
            "select-lmgr",
            "select-fastpath",
            "select-lazy-vxid",
            "pgbench-select",
        ],
    ),
    ("pg15-N-c1", "`pgbench -N`", &["pgbench-n", "pgbench-write"]),
    (
        "pg15-tpcb-c1",
        "pgbench's TPC-B-like default",
        &["pgbench-write-status"],
    ),
];

/// Why a shape's row differs from the trace's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// The shape is an older release by design; the text names the release.
    Era(&'static str),
    /// A part of PostgreSQL's transaction the shape does not model.
    NotModelled(&'static str),
}

/// A listed difference: shape, tranche, mode, the shape's own value per transaction, why.
pub type Difference = (&'static str, &'static str, &'static str, f64, Why);

const NO_FAST_PATH: &str = "9.1: relation and vxid locks through the lock partitions (fast path \
                            9.2, commit 3cba8999; lazy vxid 9.2, commit 84e37126)";
const FAST_PATH_ONLY: &str =
    "9.2's fast path before lazy vxid locks: the vxid lock through its partition (84e37126)";
const OWN_FP: &str = "the backend's own fpInfoLock (the relation locks and the vxid), \
                      uncontended: left out (the select-* shapes have it)";
const TPCB_WAL: &str = "updates whose new version moved to another page: their index \
                        insertions' WAL records (and prunes'): not modelled (5 per transaction \
                        are: the three updates', the insert's, the commit's)";
const N_PAGES: &str = "the update's new version on another page (its index entry, the \
                       uniqueness check, the SELECT's second heap visit) and the visibility map: \
                       not modelled";
const N_WAL: &str = "the update's new version on another page: its index insertion's WAL record \
                     (and a prune's), 5 records in 32 of the trace's 100 transactions: not \
                     modelled (3 per transaction are: the update's, the insert's, the commit's)";
const N_EVICT: &str = "evictions (pages not resident): not modelled";
const HINTS: &str = "hint-bit lookups of -N: not modelled";
const LOCK_LEVEL: &str = "a lock-level shape: its pages are not modelled (pgbench-n has -N's)";
const LOCK_LEVEL_LMGR: &str = "a lock-level shape: the lock manager and the fast path are not \
                               modelled";

/// Every row where a shape differs from its trace (beyond [`TOLERANCE`]), with its reason.
pub const DIFFERENCES: &[Difference] = &[
    // pgbench -S.
    (
        "select-lmgr",
        "LockFastPath",
        "exclusive",
        0.0,
        Why::Era(NO_FAST_PATH),
    ),
    (
        "select-lmgr",
        "LockManager",
        "exclusive",
        6.0,
        Why::Era(NO_FAST_PATH),
    ),
    (
        "select-fastpath",
        "LockFastPath",
        "exclusive",
        3.0,
        Why::Era(FAST_PATH_ONLY),
    ),
    (
        "select-fastpath",
        "LockManager",
        "exclusive",
        2.0,
        Why::Era(FAST_PATH_ONLY),
    ),
    (
        "pgbench-select",
        "LockFastPath",
        "exclusive",
        0.0,
        Why::NotModelled(OWN_FP),
    ),
    // pgbench -N.
    (
        "pgbench-n",
        "BufferContent",
        "exclusive",
        2.0,
        Why::NotModelled(N_PAGES),
    ),
    (
        "pgbench-n",
        "BufferContent",
        "shared",
        8.0,
        Why::NotModelled(N_PAGES),
    ),
    (
        "pgbench-n",
        "BufferMapping",
        "shared",
        10.0,
        Why::NotModelled(N_PAGES),
    ),
    (
        "pgbench-n",
        "BufferMapping",
        "exclusive",
        0.0,
        Why::NotModelled(N_EVICT),
    ),
    (
        "pgbench-n",
        "WALInsert",
        "exclusive",
        3.0,
        Why::NotModelled(N_WAL),
    ),
    (
        "pgbench-n",
        "XactSLRU",
        "shared",
        0.0,
        Why::NotModelled(HINTS),
    ),
    (
        "pgbench-write",
        "BufferContent",
        "exclusive",
        0.0,
        Why::NotModelled(LOCK_LEVEL),
    ),
    (
        "pgbench-write",
        "BufferContent",
        "shared",
        0.0,
        Why::NotModelled(LOCK_LEVEL),
    ),
    (
        "pgbench-write",
        "BufferMapping",
        "exclusive",
        0.0,
        Why::NotModelled(LOCK_LEVEL),
    ),
    (
        "pgbench-write",
        "BufferMapping",
        "shared",
        0.0,
        Why::NotModelled(LOCK_LEVEL),
    ),
    (
        "pgbench-write",
        "LockFastPath",
        "exclusive",
        0.0,
        Why::NotModelled(LOCK_LEVEL_LMGR),
    ),
    (
        "pgbench-write",
        "LockManager",
        "exclusive",
        0.0,
        Why::NotModelled(LOCK_LEVEL_LMGR),
    ),
    (
        "pgbench-write",
        "WALInsert",
        "exclusive",
        3.0,
        Why::NotModelled(N_WAL),
    ),
    (
        "pgbench-write",
        "XactSLRU",
        "shared",
        0.0,
        Why::NotModelled(HINTS),
    ),
    // TPC-B.
    (
        "pgbench-write-status",
        "BufferContent",
        "exclusive",
        0.0,
        Why::NotModelled(LOCK_LEVEL),
    ),
    (
        "pgbench-write-status",
        "BufferContent",
        "shared",
        0.0,
        Why::NotModelled(LOCK_LEVEL),
    ),
    (
        "pgbench-write-status",
        "BufferMapping",
        "exclusive",
        0.0,
        Why::NotModelled(LOCK_LEVEL),
    ),
    (
        "pgbench-write-status",
        "BufferMapping",
        "shared",
        0.0,
        Why::NotModelled(LOCK_LEVEL),
    ),
    (
        "pgbench-write-status",
        "LockFastPath",
        "exclusive",
        0.0,
        Why::NotModelled(LOCK_LEVEL_LMGR),
    ),
    (
        "pgbench-write-status",
        "LockManager",
        "exclusive",
        0.0,
        Why::NotModelled(LOCK_LEVEL_LMGR),
    ),
    (
        "pgbench-write-status",
        "WALInsert",
        "exclusive",
        5.0,
        Why::NotModelled(TPCB_WAL),
    ),
];

/// `(tranche, mode)` → acquisitions per transaction of `w`, one thread, no `--work`, over
/// [`TXNS`] transactions.
pub fn shape(w: Workload) -> PerTxn {
    shape_with(w, EraTraffic::NONE).0
}

/// The spinlock acquisitions per transaction that `--era-traffic` adds (invisible to LWLock
/// counts and to PostgreSQL's LWLock probes: checked against 9.1's source only).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EraSpins {
    /// `msgnumLock` (one per `SIGetDataEntries`).
    pub msgnum: f64,
    /// The `LOCK` table's freelist `mutex`.
    pub lock_freelist: f64,
    /// The `PROCLOCK` table's freelist `mutex`.
    pub proclock_freelist: f64,
}

/// [`shape`] with 9.1's shared traffic `era` (`--era-traffic`), and the spinlock acquisitions
/// it adds per transaction. One client: every relation's `LOCK` is created and removed in each
/// transaction (nobody else holds it), the most the freelist sees.
pub fn shape_with(w: Workload, era: EraTraffic) -> (PerTxn, EraSpins) {
    let s = Shared::<Counted>::with_era(w, 1, Layout::Dense, era);
    let cfg = WorkerConfig {
        write_pct: 0,
        work: 0,
        time_every: 64,
        strategy: Strategy::Scan,
        idle_us: 0,
    };
    let mut worker = Worker::new(0, 1, cfg);
    if w.holds_pin() {
        s.buffer.pin();
    }
    let _ = take_counts();
    run_transactions(w, &s, &mut worker, TXNS);
    let counts = take_counts()
        .into_iter()
        .map(|((t, m), n)| ((t.to_string(), m.to_string()), n as f64 / TXNS as f64))
        .collect();
    let per = |n: u64| n as f64 / TXNS as f64;
    let (lock, proclock) = s.freelists().map_or((0, 0), |f| f.taken());
    let spins = EraSpins {
        msgnum: per(s.sinval().map_or(0, |si| si.calls())),
        lock_freelist: per(lock),
        proclock_freelist: per(proclock),
    };
    (counts, spins)
}

/// The rows `--era-traffic` changes against PostgreSQL 15 by design: `(addition, tranche,
/// mode, the shape's value per transaction, why)`. `freelist` adds spinlocks only, which
/// PostgreSQL's LWLock probes do not see: no row. `walinsertlock` keeps the count (the WAL
/// records, each one acquisition) and changes which lock: one WALInsertLock for every backend
/// instead of the backend's own of eight ([`WAL_INSERT_LOCK_ERA`]): no row.
pub const ERA_DIFFERENCES: &[(EraTraffic, &str, &str, f64, Why)] = &[
    (
        EraTraffic::SINVAL,
        "SInvalRead",
        "shared",
        4.0,
        Why::Era(
            "9.1's SIGetDataEntries takes SInvalReadLock shared (and msgnumLock) on every \
             AcceptInvalidationMessages, 4 per -S transaction; since 9.2 (b4fbe392) it returns \
             before either when its unlocked hasMessages flag is clear",
        ),
    ),
    (
        EraTraffic::NO_MULTIXACT,
        "MultiXactGen",
        "shared",
        0.0,
        Why::Era(
            "before 9.3 heap_update does not call MultiXactIdSetOldestMember; 9.3's \
             \"Improve concurrency of foreign key locking\" (0ac5ad51) made an UPDATE that \
             changes no key column take FOR NO KEY UPDATE, which calls it (MultiXactGenLock \
             shared, the transaction's first call only)",
        ),
    ),
];

/// The era difference `walinsertlock` makes without changing a count: which lock each WAL
/// record takes.
pub const WAL_INSERT_LOCK_ERA: &str = "9.1-9.3: every XLogInsert takes the one WALInsertLock \
     exclusive and copies its record into the WAL buffers under it; 9.4 (9a20a9b2, \"Improve \
     scalability of WAL insertions\") split it into 8 insertion locks (NUM_XLOGINSERT_LOCKS), \
     a backend keeping its own";

/// [`mismatches`] for a shape run with `era`: each of [`ERA_DIFFERENCES`] that `era` turns on
/// must be at its listed value (else a mismatch), and is then held to PostgreSQL 15's value;
/// the rest as [`mismatches`].
pub fn mismatches_with_era(
    name: &str,
    got: &PerTxn,
    real: &PerTxn,
    era: EraTraffic,
) -> Vec<String> {
    let mut got = got.clone();
    let mut out = Vec::new();
    for (e, tranche, mode, v, why) in ERA_DIFFERENCES {
        if era.with(*e) != era {
            continue;
        }
        let k = (tranche.to_string(), mode.to_string());
        let g = got.get(&k).copied().unwrap_or(0.0);
        if (g - v).abs() > 1e-9 {
            out.push(format!(
                "{name} with {}: {tranche} {mode}: {g} per transaction, listed as {v} ({why:?})",
                e.name()
            ));
        }
        match real.get(&k) {
            Some(r) => got.insert(k, *r),
            None => got.remove(&k),
        };
    }
    out.extend(mismatches(name, &got, real));
    out
}

/// `(tranche, mode)` → acquire attempts per transaction in a trace directory's summary.
/// `Err` names the file and the row that cannot be read.
pub fn pg(dir: &Path) -> Result<PerTxn, String> {
    let path = dir.join("trace-summary.csv");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = BTreeMap::new();
    for (i, l) in text.lines().enumerate().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        if f.len() != 4 {
            return Err(format!("{}:{}: bad row {l:?}", path.display(), i + 1));
        }
        if matches!(f[2], "acquire" | "conditional" | "acquire_or_wait") {
            let v: f64 = f[3]
                .parse()
                .map_err(|_| format!("{}:{}: bad number in {l:?}", path.display(), i + 1))?;
            *out.entry((f[0].to_string(), f[1].to_string()))
                .or_insert(0.0) += v;
        }
    }
    Ok(out)
}

/// The rows of `name`'s counts `got` that break the comparison with the trace's `real`: a row
/// outside [`TOLERANCE`] that [`DIFFERENCES`] does not list, or a listed row whose shape value
/// is not its listed one. Empty when the shape is what this module says it is.
pub fn mismatches(name: &str, got: &PerTxn, real: &PerTxn) -> Vec<String> {
    let keys: BTreeSet<&(String, String)> = real.keys().chain(got.keys()).collect();
    let mut out = Vec::new();
    for k in keys {
        let (g, r) = (
            got.get(k).copied().unwrap_or(0.0),
            real.get(k).copied().unwrap_or(0.0),
        );
        let listed = DIFFERENCES
            .iter()
            .find(|d| d.0 == name && d.1 == k.0 && d.2 == k.1);
        match listed {
            Some(d) if (g - d.3).abs() > 1e-9 => out.push(format!(
                "{name}: {} {}: {g} per transaction, listed as {} ({:?})",
                k.0, k.1, d.3, d.4
            )),
            Some(_) if (g - r).abs() <= TOLERANCE => out.push(format!(
                "{name}: {} {}: listed as a difference, but {g} matches PostgreSQL 15's {r}",
                k.0, k.1
            )),
            Some(_) => {}
            None if (g - r).abs() > TOLERANCE => out.push(format!(
                "{name}: {} {}: {g} per transaction, PostgreSQL 15 {r}, and not a listed \
                 difference",
                k.0, k.1
            )),
            None => {}
        }
    }
    out
}
