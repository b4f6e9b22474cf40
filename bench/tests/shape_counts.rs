//! The hand-written shapes against PostgreSQL 15's committed traces (`lwbench::shapes`): every
//! shape with a pgbench counterpart, counted through the counting lock family, matches its
//! trace's attempts per transaction in every row (within `TOLERANCE`) but the listed
//! differences, and each listed difference is at its listed value.

use lwbench::shapes::{mismatches, mismatches_with_era, pg, shape, PerTxn, DIFFERENCES, GROUPS};
use lwharness::workload::Workload;
use std::path::PathBuf;

fn traces() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("traces")
}

#[test]
fn every_shape_matches_its_postgresql_15_trace_but_the_listed_differences() {
    let mut bad = Vec::new();
    for (trace, _, shapes) in GROUPS {
        let real = pg(&traces().join(trace)).unwrap();
        for name in shapes {
            let got = shape(Workload::from_name(name).unwrap());
            bad.extend(mismatches(name, &got, &real));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // Every listed difference names a shape of the groups.
    for d in DIFFERENCES {
        assert!(
            GROUPS.iter().any(|g| g.2.contains(&d.0)),
            "{} is in no group",
            d.0
        );
    }
}

/// The comparison can fail: a shape held against another transaction's trace differs in rows
/// that are not listed (pgbench-write, -N's lock-level shape, against -S: its 6 snapshots and
/// its xid), and a count off by one acquisition is caught.
#[test]
fn a_shape_against_the_wrong_trace_or_a_changed_count_fails() {
    let s = pg(&traces().join("pg15-S-c1")).unwrap();
    let got = shape(Workload::PgbenchWrite);
    let bad = mismatches("pgbench-write", &got, &s);
    assert!(
        bad.iter().any(|b| b.contains("ProcArray shared")),
        "{bad:?}"
    );
    assert!(
        bad.iter().any(|b| b.contains("XidGen exclusive")),
        "{bad:?}"
    );
    let n = pg(&traces().join("pg15-N-c1")).unwrap();
    let mut one_snapshot = shape(Workload::PgbenchN);
    *one_snapshot
        .get_mut(&("ProcArray".to_string(), "shared".to_string()))
        .unwrap() -= 3.0;
    assert_eq!(mismatches("pgbench-n", &one_snapshot, &n).len(), 1);
    assert!(mismatches("pgbench-n", &shape(Workload::PgbenchN), &n).is_empty());
}

#[test]
fn a_bad_summary_is_named_with_its_line() {
    let d = std::env::temp_dir().join(format!("shape-counts-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("trace-summary.csv"),
        "tranche,mode,entry,per_txn\nProcArray,shared,acquire,x\n",
    )
    .unwrap();
    let e = pg(&d).unwrap_err();
    assert!(e.contains("trace-summary.csv:2"), "{e}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// `--era-traffic`: each addition adds exactly its count per transaction to each `select-*`
/// shape, and nothing without it; the other workloads ignore it.
#[test]
fn each_era_addition_adds_exactly_its_count_per_transaction() {
    use lwbench::shapes::{shape_with, EraSpins};
    use lwharness::era_traffic::EraTraffic;
    let sinval_row = ("SInvalRead".to_string(), "shared".to_string());
    // (shape, LOCK-table and PROCLOCK-table freelist acquisitions per transaction at one
    // client: every LOCK the transaction takes is created and removed, 2 each, and a PROCLOCK
    // per lock, 2 each).
    for (name, lock_fl, proclock_fl) in [
        ("select-lmgr", 6.0, 6.0),
        ("select-fastpath", 2.0, 2.0),
        ("select-lazy-vxid", 0.0, 0.0),
    ] {
        let w = Workload::from_name(name).unwrap();
        let (base, none) = shape_with(w, EraTraffic::NONE);
        assert_eq!(base, shape(w), "{name}");
        assert_eq!(none, EraSpins::default(), "{name}");
        assert!(!base.contains_key(&sinval_row), "{name}");
        for (era, msgnum, lf, pf) in [
            (EraTraffic::SINVAL, 4.0, 0.0, 0.0),
            (EraTraffic::FREELIST, 0.0, lock_fl, proclock_fl),
            (EraTraffic::ALL, 4.0, lock_fl, proclock_fl),
        ] {
            let (got, spins) = shape_with(w, era);
            let mut want = base.clone();
            if era.sinval() {
                want.insert(sinval_row.clone(), 4.0);
            }
            assert_eq!(got, want, "{name} with {}", era.name());
            assert_eq!(
                spins,
                EraSpins {
                    msgnum,
                    lock_freelist: lf,
                    proclock_freelist: pf
                },
                "{name} with {}",
                era.name()
            );
        }
    }
    for w in [Workload::PgbenchSelect, Workload::PgbenchN] {
        assert_eq!(
            shape_with(w, EraTraffic::SELECT),
            (shape(w), EraSpins::default()),
            "{}",
            w.name()
        );
    }
    assert_eq!(
        shape_with(Workload::PgbenchSelect, EraTraffic::ALL),
        (shape(Workload::PgbenchSelect), EraSpins::default())
    );
}

/// `pgbench-n`'s exact acquisitions per transaction, PostgreSQL 15's (the default) and with
/// 9.2's `--era-traffic walinsertlock,nomultixact`: MultiXactGen shared once (heap_update's
/// `MultiXactIdSetOldestMember`, 9.3+) and 3 WAL records (WALInsert exclusive, either era: the
/// era changes which lock, not how many); `nomultixact` removes MultiXactGen and nothing else,
/// `walinsertlock` changes no count; the `select-*` additions change nothing.
#[test]
fn pgbench_n_counts_with_and_without_the_era() {
    use lwbench::shapes::shape_with;
    use lwharness::era_traffic::EraTraffic;
    let row = |t: &str, m: &str| (t.to_string(), m.to_string());
    let want: PerTxn = [
        (row("ProcArray", "shared"), 6.0),
        (row("ProcArray", "exclusive"), 1.0),
        (row("XidGen", "exclusive"), 1.0),
        (row("BufferMapping", "shared"), 10.0),
        (row("BufferContent", "shared"), 8.0),
        (row("BufferContent", "exclusive"), 2.0),
        (row("LockFastPath", "exclusive"), 8.0),
        (row("LockManager", "exclusive"), 2.0),
        (row("MultiXactGen", "shared"), 1.0),
        (row("WALInsert", "exclusive"), 3.0),
        (row("XactSLRU", "exclusive"), 1.0),
    ]
    .into_iter()
    .collect();
    let w = Workload::PgbenchN;
    assert_eq!(shape(w), want);
    let mut era = want.clone();
    era.remove(&row("MultiXactGen", "shared"));
    for (e, got) in [
        (EraTraffic::WAL_INSERT_LOCK, &want),
        (EraTraffic::NO_MULTIXACT, &era),
        (EraTraffic::WRITE, &era),
        (EraTraffic::ALL, &era),
        (EraTraffic::SELECT, &want),
    ] {
        assert_eq!(&shape_with(w, e).0, got, "{}", e.name());
    }
    // Against PostgreSQL 15: with 9.2's era, MultiXactGen is the listed era difference and
    // passes; without the era's allowance it is a mismatch; a wrong WAL count is caught.
    let real = pg(&traces().join("pg15-N-c1")).unwrap();
    let (got, _) = shape_with(w, EraTraffic::WRITE);
    assert!(mismatches_with_era("pgbench-n", &got, &real, EraTraffic::WRITE).is_empty());
    let bad = mismatches("pgbench-n", &got, &real);
    assert!(
        bad.len() == 1 && bad[0].contains("MultiXactGen shared"),
        "{bad:?}"
    );
    let mut two = shape(w);
    *two.get_mut(&row("WALInsert", "exclusive")).unwrap() = 2.0;
    let bad = mismatches("pgbench-n", &two, &real);
    assert!(
        bad.len() == 1 && bad[0].contains("WALInsert exclusive"),
        "{bad:?}"
    );
}

/// With every addition, the `select-*` shapes still match PostgreSQL 15's `-S` trace but the
/// listed differences and SInvalRead, 4 per transaction by design (9.1's SIGetDataEntries; 9.2
/// skips its locks when no message is queued); a wrong sinval count is caught.
#[test]
fn the_era_shapes_differ_from_postgresql_15_only_in_sinval() {
    use lwbench::shapes::shape_with;
    use lwharness::era_traffic::EraTraffic;
    let real = pg(&traces().join("pg15-S-c1")).unwrap();
    for name in ["select-lmgr", "select-fastpath", "select-lazy-vxid"] {
        let w = Workload::from_name(name).unwrap();
        let (got, _) = shape_with(w, EraTraffic::ALL);
        let bad = mismatches_with_era(name, &got, &real, EraTraffic::ALL);
        assert!(bad.is_empty(), "{}", bad.join("\n"));
        // Without the era's allowance, SInvalRead is a mismatch.
        assert!(mismatches(name, &got, &real)
            .iter()
            .any(|b| b.contains("SInvalRead shared")));
    }
    let (mut got, _) = shape_with(Workload::SelectLmgr, EraTraffic::SINVAL);
    *got.get_mut(&("SInvalRead".to_string(), "shared".to_string()))
        .unwrap() = 3.0;
    let bad = mismatches_with_era("select-lmgr", &got, &real, EraTraffic::SINVAL);
    assert_eq!(bad.len(), 1, "{bad:?}");
}
