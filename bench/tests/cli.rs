//! Runs the built `bench` binary with tiny durations: the output files, the exit status of bad
//! input, `meta.json`'s PMU record, and context switches at 64 threads.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::mpsc;
use std::time::Duration;

/// Runs `bench` with `args`, killing it (and failing) after two minutes.
fn bench(args: &[&str]) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn bench");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(out) => out.expect("wait for bench"),
        Err(_) => {
            // Watchdog: never let a hung run hang the test suite.
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("bench {args:?} did not finish within 120 s");
        }
    }
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lwbench-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn read_csv(p: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    (header, rows)
}

#[test]
fn acceptance_shape_writes_every_file() {
    let out = tmp("acc");
    let o = bench(&[
        "--workload",
        "snapshot,end-xact",
        "--locks",
        "all",
        "--threads",
        "1,2,64",
        "--trials",
        "2",
        "--duration",
        "15ms",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        o.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    for f in [
        "results.csv",
        "waits.csv",
        "points.csv",
        "meta.json",
        "summary.md",
        "snapshot.svg",
        "end-xact.svg",
    ] {
        let p = out.join(f);
        assert!(
            p.metadata().map(|m| m.len() > 0).unwrap_or(false),
            "{f} missing or empty"
        );
    }
    let (h, rows) = read_csv(&out.join("results.csv"));
    for col in [
        "workload",
        "lock",
        "threads",
        "trial",
        "duration_s",
        "ops",
        "ops_per_sec",
        "txn_per_sec",
        "jain",
        "excl_wait_p99_ns",
        "shared_wait_p99_ns",
        "ctx_switches",
        "cache_misses",
        "llc_misses",
        "blocks",
        "spin_delays",
        "excl_acquires",
        "bimodal",
    ] {
        assert!(h.iter().any(|c| c == col), "results.csv lacks column {col}");
    }
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    // 2 workloads × every lock that applies (clog-group does not) × 3 thread counts × 2 trials.
    let locks: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r[col("lock")].as_str()).collect();
    assert!(
        locks.contains("std") && locks.contains("parking-lot") && locks.contains("flex-leader")
    );
    assert!(
        !locks.contains("clog-group"),
        "clog-group does not apply to these workloads"
    );
    assert_eq!(rows.len(), 2 * locks.len() * 3 * 2);
    // Context switches at 64 threads on a machine with far fewer cores are > 0.
    for r in rows.iter().filter(|r| r[col("threads")] == "64") {
        let cs: u64 = r[col("ctx_switches")].parse().unwrap();
        assert!(cs > 0, "no context switches at 64 threads: {r:?}");
        assert!(r[col("ops")].parse::<u64>().unwrap() > 0);
    }
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("threads") && stdout.contains("atomic"),
        "{stdout}"
    );
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("## snapshot") && summary.contains("| threads |"));
    let svg = std::fs::read_to_string(out.join("snapshot.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("flex-releaser"));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn meta_records_pmu_and_command_line() {
    let out = tmp("meta");
    let o = bench(&[
        "--workload",
        "null",
        "--locks",
        "atomic",
        "--threads",
        "1",
        "--trials",
        "1",
        "--duration",
        "5ms",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).unwrap()).unwrap();
    for k in [
        "rustc",
        "git_commit",
        "cpu_model",
        "cores",
        "pmu_available",
        "command_line",
    ] {
        assert!(meta.get(k).is_some(), "meta.json lacks {k}");
    }
    assert!(meta["rustc"].as_str().unwrap().starts_with("rustc "));
    let pmu = meta["pmu_available"].as_bool().unwrap();
    // Either the PMU works, or meta.json says why not (a VM without a PMU: ENOENT).
    assert!(
        pmu || meta["pmu_reason"].as_str().is_some_and(|r| !r.is_empty()),
        "{meta}"
    );
    if std::path::Path::new("/sys/bus/event_source/devices").exists()
        && !std::path::Path::new("/sys/bus/event_source/devices/cpu").exists()
    {
        assert!(!pmu);
        assert!(
            meta["pmu_reason"].as_str().unwrap().contains("ENOENT"),
            "{meta}"
        );
    }
    assert!(meta["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a == "null"));
    let _ = std::fs::remove_dir_all(&out);
}

fn expect_usage_error(args: &[&str], needles: &[&str]) {
    let o = bench(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: stderr {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: stderr lacks {n:?}: {err}");
    }
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
}

#[test]
fn bad_input_exits_2_naming_the_argument() {
    let out = tmp("bad");
    let o = out.to_str().unwrap();
    expect_usage_error(
        &["--workload", "nosuch", "--out", o],
        &["--workload", "nosuch", "snapshot"],
    );
    expect_usage_error(
        &["--locks", "atomic,spinny", "--out", o],
        &[
            "--locks",
            "spinny",
            "classic",
            "atomic",
            "flex-leader",
            "parking-lot",
            "all",
        ],
    );
    expect_usage_error(&["--threads", "0", "--out", o], &["--threads"]);
    expect_usage_error(&["--threads", "1,0:4", "--out", o], &["--threads"]);
    expect_usage_error(&["--duration", "0ms", "--out", o], &["--duration"]);
    expect_usage_error(&["--duration", "soon", "--out", o], &["--duration"]);
    expect_usage_error(&["--trials", "0", "--out", o], &["--trials"]);
    expect_usage_error(&["--write-pct", "101", "--out", o], &["--write-pct"]);
    expect_usage_error(
        &["--layout", "dense,sparse", "--out", o],
        &["--layout", "sparse", "pgxact"],
    );
    expect_usage_error(
        &["--snapshot", "lazy", "--out", o],
        &["--snapshot", "lazy", "optimistic"],
    );
    // A file where the output directory should be: not creatable.
    std::fs::create_dir_all(&out).unwrap();
    let file = out.join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    let under_file = file.join("results");
    expect_usage_error(
        &[
            "--threads",
            "1",
            "--trials",
            "1",
            "--duration",
            "5ms",
            "--out",
            under_file.to_str().unwrap(),
        ],
        &["--out"],
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn layouts_and_strategies_are_swept_and_recorded() {
    let out = tmp("variants");
    let o = out.to_str().unwrap();
    let r = bench(&[
        "--workload",
        "snapshot,clog",
        "--locks",
        "atomic",
        "--threads",
        "2",
        "--trials",
        "1",
        "--duration",
        "20ms",
        "--write-pct",
        "5",
        "--layout",
        "padded,dense",
        "--snapshot",
        "all",
        "--sample-interval",
        "1ms",
        "--out",
        o,
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let (header, rows) = read_csv(&out.join("results.csv"));
    let col = |n: &str| {
        header
            .iter()
            .position(|h| h == n)
            .unwrap_or_else(|| panic!("no {n}"))
    };
    let (w, l, s, f) = (
        col("workload"),
        col("layout"),
        col("snapshot"),
        col("snapshot_fast_pct"),
    );
    let snap: Vec<_> = rows.iter().filter(|r| r[w] == "snapshot").collect();
    // 2 layouts x 4 strategies, one trial each.
    assert_eq!(snap.len(), 8, "{snap:?}");
    for layout in ["padded", "dense"] {
        for strategy in ["scan", "reuse", "optimistic", "shared"] {
            assert!(snap.iter().any(|r| r[l] == layout && r[s] == strategy));
        }
    }
    // The plain scan never takes a fast path; the clog workload has neither setting.
    assert!(snap
        .iter()
        .filter(|r| r[s] == "scan")
        .all(|r| r[f] == "0.0" || r[f] == "0"));
    let clog: Vec<_> = rows.iter().filter(|r| r[w] == "clog").collect();
    assert_eq!(clog.len(), 1);
    assert!(clog[0][l].is_empty() && clog[0][s].is_empty());
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("atomic padded/reuse"), "{summary}");
    let _ = std::fs::remove_dir_all(&out);
}
