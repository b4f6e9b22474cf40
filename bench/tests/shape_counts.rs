//! The hand-written shapes against PostgreSQL 15's committed traces (`lwbench::shapes`): every
//! shape with a pgbench counterpart, counted through the counting lock family, matches its
//! trace's attempts per transaction in every row (within `TOLERANCE`) but the listed
//! differences, and each listed difference is at its listed value.

use lwbench::shapes::{mismatches, pg, shape, DIFFERENCES, GROUPS};
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
