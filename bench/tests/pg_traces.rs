//! The committed PostgreSQL traces (`bench/traces/`): each one reads back with the replay's
//! reader (`lwharness::pgtrace`), matches its own `meta.json` (clients, transactions written, no
//! lost event, PostgreSQL 15, the settings it was recorded with), and its summary's counts of the
//! deterministic per-transaction locks match the trace file's. No server or root needed.

use lwharness::pgtrace::{Entry, Mode, Trace};
use std::collections::HashMap;
use std::path::Path;

fn traces() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("trace.tsv").is_file())
        .collect();
    v.sort();
    v
}

/// `trace-summary.csv` as (tranche, mode, entry) → attempts per transaction.
fn summary(dir: &Path) -> HashMap<(String, String, String), f64> {
    let text = std::fs::read_to_string(dir.join("trace-summary.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("tranche,mode,entry,per_txn"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                (f[0].into(), f[1].into(), f[2].into()),
                f[3].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn committed_traces_read_back_and_match_their_meta() {
    let all = traces();
    // PostgreSQL 15's -S, -N and TPC-B at 1 and 2 clients.
    let names: Vec<String> = all
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for want in [
        "pg15-S-c1",
        "pg15-S-c2",
        "pg15-N-c1",
        "pg15-N-c2",
        "pg15-tpcb-c1",
        "pg15-tpcb-c2",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} missing from {names:?}"
        );
    }
    for dir in &all {
        let name = dir.display();
        let trace = Trace::read(&dir.join("trace.tsv")).unwrap_or_else(|e| panic!("{e}"));
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
        assert_eq!(meta["events"]["lost"], 0, "{name}");
        assert_eq!(meta["server"]["major"], 15, "{name}");
        assert_eq!(meta["settings"]["shared_buffers"], "256MB", "{name}");
        assert_eq!(meta["settings"]["synchronous_commit"], "off", "{name}");
        assert_eq!(meta["settings"]["query_mode"], "simple", "{name}");
        assert_eq!(meta["settings"]["scale"], "10", "{name}");
        assert_eq!(
            trace.clients.len() as u64,
            meta["pgbench"]["clients"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            trace.transactions() as u64,
            meta["steady_state"]["transactions_in_trace_file"]
                .as_u64()
                .unwrap(),
            "{name}"
        );
        // Locks a transaction of each kind takes a fixed number of times: the trace file's
        // count per transaction is the summary's (over every steady-state transaction).
        let sum = summary(dir);
        let mut counts: HashMap<(String, &str, &str), f64> = HashMap::new();
        for op in trace.clients.iter().flatten().flatten() {
            if let Some(l) = op.lock {
                assert_ne!(
                    op.mode,
                    Mode::Unknown,
                    "{name}: a release without its acquire"
                );
                let t = trace.locks[l as usize].tranche.clone();
                *counts
                    .entry((t, op.mode.name(), op.entry.name()))
                    .or_default() += 1.0;
            }
        }
        let n = trace.transactions() as f64;
        // (LockFastPath's per transaction is fixed for each pgbench script; ProcArrayLock's
        // shared holds only for -S: a writing transaction's visibility checks vary.)
        let select_only = name.to_string().contains("-S-");
        let fixed: &[(&str, &str, &str)] = if select_only {
            &[
                ("ProcArray", "shared", "acquire"),
                ("LockFastPath", "exclusive", "acquire"),
            ]
        } else {
            &[("LockFastPath", "exclusive", "acquire")]
        };
        for &key in fixed {
            let k = (key.0.to_string(), key.1, key.2);
            let in_file = counts.get(&k).copied().unwrap_or(0.0) / n;
            let s = sum[&(key.0.into(), key.1.into(), key.2.into())];
            assert!(
                (in_file - s).abs() < 0.05,
                "{name}: {key:?} {in_file} per transaction in the file, {s} in the summary"
            );
        }
        // Every writing transaction meets the group-clear and CLOG-group call sites.
        if !select_only {
            let sites = trace
                .clients
                .iter()
                .flatten()
                .filter(|t| {
                    t.iter()
                        .any(|o| o.entry == Entry::EndXact && o.result == "xid")
                })
                .count();
            assert_eq!(sites, trace.transactions(), "{name}");
        }
    }
}
