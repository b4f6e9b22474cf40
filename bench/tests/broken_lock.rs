//! The harness's checks can fail: every workload run with the deliberately broken lock
//! (`--locks broken`: a shared acquire takes nothing, an exclusive acquire takes the lock shared)
//! must make `bench` exit 1 naming the violated invariant, and the same run with a real lock
//! must pass. Without this, "every trial passed the invariant checks" would mean nothing.

mod common;

use common::bench;
use std::process::Output;

/// Every workload that takes a lock (`pin-vm` takes none: its map read has nothing to break,
/// and its own check is the map's invariant).
const WORKLOADS: [&str; 10] = [
    "null",
    "null-x",
    "snapshot",
    "end-xact",
    "clog",
    "pgbench-select",
    "pgbench-write",
    "pgbench-write-status",
    "pin",
    "pin-held",
];

fn run(workload: &str, lock: &str, extra: &[&str]) -> Output {
    let out = std::env::temp_dir().join(format!(
        "lwbench-broken-{}-{workload}-{lock}",
        std::process::id()
    ));
    let out_s = out.to_string_lossy().into_owned();
    let mut args = vec![
        "--workload",
        workload,
        "--locks",
        lock,
        "--threads",
        "2,4",
        "--trials",
        "1",
        "--duration",
        "60ms",
        "--warmup",
        "20ms",
        "--out",
        &out_s,
    ];
    args.extend_from_slice(extra);
    let o = bench(&args);
    let _ = std::fs::remove_dir_all(&out);
    o
}

#[test]
fn every_workload_fails_with_the_broken_lock() {
    for w in WORKLOADS {
        // The snapshot workload also with writers, so that the overlap checks see both modes.
        let extra: &[&str] = if w == "snapshot" {
            &["--write-pct", "20"]
        } else {
            &[]
        };
        let o = run(w, "broken", extra);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{w}: the broken lock passed the checks; stderr: {stderr}"
        );
        // A check of the harness, or (debug builds) an assertion of the simulated shared state
        // that the overlap tripped first.
        assert!(
            stderr.contains("invariant violated with lock broken")
                || stderr.contains("a worker thread panicked"),
            "{w}: {stderr}"
        );
    }
}

#[test]
fn the_same_runs_pass_with_a_real_lock() {
    for w in [
        "null",
        "snapshot",
        "pgbench-write",
        "pgbench-write-status",
        "pin",
        "pin-vm",
    ] {
        let o = run(w, "atomic", &["--write-pct", "20"]);
        assert!(
            o.status.success(),
            "{w}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
