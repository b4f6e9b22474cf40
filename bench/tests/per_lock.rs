//! The per-lock choice on the simulated engine (a `--cfg lwsim` build with `stats`; `ci/sim.sh`
//! runs it): `group-clear` (9.6's ProcArrayLock with group clear beside a CLOG lock taken
//! directly) reports each lock's counters apart, and they are those of two different lock
//! types: groups on ProcArrayLock only, exclusive acquisitions on the CLOG lock.
#![cfg(lwsim)]

mod common;
use common::{bench, csv_rows};

#[test]
fn a_workload_with_two_lock_types_reports_each_locks_counters_apart() {
    let out = std::env::temp_dir().join(format!("lwbench-per-lock-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = bench(&[
        "--engine",
        "sim",
        "--cores",
        "8",
        "--workload",
        "pgbench-write",
        "--locks",
        "atomic,group-clear,clog-group",
        "--threads",
        "8",
        "--trials",
        "1",
        "--duration",
        "300us",
        "--warmup",
        "100us",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = csv_rows(&out.join("results.csv"));
    let row = |lock: &str| {
        rows.iter()
            .find(|r| r["lock"] == lock)
            .unwrap_or_else(|| panic!("no row for {lock}"))
    };
    let n = |r: &std::collections::HashMap<String, String>, c: &str| -> Option<u64> {
        let v = &r[c];
        (!v.is_empty()).then(|| v.parse().unwrap_or_else(|e| panic!("{c}={v}: {e}")))
    };
    for lock in ["atomic", "group-clear", "clog-group"] {
        let r = row(lock);
        let txns = n(r, "txns").expect("txns");
        assert!(txns > 0, "{lock}: no transactions");
        // Every column is one lock's part of the total; the rest is XidGenLock, taken once
        // per transaction (the window's transactions and acquisitions differ by at most one in
        // flight per thread).
        let (pa, clog, all) = (
            n(r, "proc_array_excl_acquires").unwrap_or(0),
            n(r, "clog_excl_acquires").unwrap_or(0),
            n(r, "excl_acquires").unwrap_or(0),
        );
        assert!(pa + clog <= all, "{lock}: {pa} + {clog} > {all}");
        let xid_gen = all - pa - clog;
        assert!(
            xid_gen + 8 >= txns && xid_gen <= txns + 8,
            "{lock}: XidGenLock taken {xid_gen} times for {txns} transactions"
        );
    }
    let (atomic, clear, group) = (row("atomic"), row("group-clear"), row("clog-group"));
    // The direct locks run no groups.
    assert_eq!(n(atomic, "proc_array_groups"), None);
    assert_eq!(n(atomic, "clog_groups"), None);
    // group-clear: ProcArrayLock groups (the group clear), the CLOG lock direct: it is
    // acquired exclusively at least once per commit and runs no group.
    assert!(
        n(clear, "proc_array_groups").unwrap_or(0) > 0,
        "group clear ran no group"
    );
    assert_eq!(
        n(clear, "clog_groups"),
        None,
        "group-clear's CLOG lock is direct"
    );
    // (The window's transactions and acquisitions differ by at most one in flight per thread.)
    let commits = n(clear, "txns").unwrap();
    assert!(
        n(clear, "clog_excl_acquires").unwrap_or(0) + 8 >= commits,
        "a direct CLOG lock is taken once per commit"
    );
    // clog-group: both locks group.
    assert!(n(group, "proc_array_groups").unwrap_or(0) > 0);
    assert!(n(group, "clog_groups").unwrap_or(0) > 0);
}
