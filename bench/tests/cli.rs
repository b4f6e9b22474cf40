//! Runs the built `bench` binary with tiny durations: the output files, the exit status of bad
//! input, `meta.json`'s PMU record, context switches at 64 threads, that summary.md, stdout and
//! the SVGs agree with results.csv, `--help`, and perf counters under a low `ulimit -n`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::mpsc;
use std::time::Duration;

/// Runs `bench` with `args`, killing it (and failing) after two minutes.
fn bench(args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lwbench"));
    cmd.args(args);
    run_watched(cmd, args)
}

/// Runs `cmd`, killing it (and failing) after two minutes.
fn run_watched(mut cmd: Command, args: &[&str]) -> Output {
    let child = cmd
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
    // Context switches at 64 threads on a machine with far fewer cores are > 0, in every trial
    // whose window saw the threads run (at least one transaction each; a window in which a
    // convoy let one transaction through, as the task-fair lock can on a loaded machine, may
    // count none). Most trials qualify: the check cannot pass vacuously.
    let busy: Vec<_> = rows
        .iter()
        .filter(|r| r[col("threads")] == "64")
        .filter(|r| r[col("txns")].parse::<u64>().unwrap() >= 64)
        .collect();
    assert!(
        busy.len() * 2 >= rows.iter().filter(|r| r[col("threads")] == "64").count(),
        "most 64-thread trials ran a transaction per thread"
    );
    for r in busy {
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
        "host_cpus",
        "pmu_available",
        "command_line",
    ] {
        assert!(meta.get(k).is_some(), "meta.json lacks {k}");
    }
    assert!(meta["rustc"].as_str().unwrap().starts_with("rustc "));
    // The binary names the commit it was built from; built in this checkout by this test run, that
    // is HEAD now (before, the build script kept the commit of the target directory's first
    // build until build.rs itself changed).
    if let Some(head) = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
    {
        assert_eq!(
            meta["git_commit_built"].as_str(),
            Some(String::from_utf8_lossy(&head.stdout).trim()),
            "{meta}"
        );
    }
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
    // The real engine measures one trial at a time; the profile options are the simulator's.
    expect_usage_error(&["--jobs", "0", "--out", o], &["--jobs"]);
    expect_usage_error(&["--jobs", "many", "--out", o], &["--jobs"]);
    expect_usage_error(
        &["--jobs", "2", "--out", o],
        &["--jobs", "one trial at a time"],
    );
    expect_usage_error(
        &["--set", "futex_wake_ns=1000", "--out", o],
        &["--set", "--engine sim"],
    );
    expect_usage_error(
        &["--sensitivity", "futex_wake_ns", "--out", o],
        &["--sensitivity", "--engine sim"],
    );
    expect_usage_error(
        &["--layout", "dense,sparse", "--out", o],
        &["--layout", "sparse", "pgxact"],
    );
    expect_usage_error(
        &["--snapshot", "lazy", "--out", o],
        &["--snapshot", "lazy", "optimistic"],
    );
    expect_usage_error(
        &["--era-traffic", "sinval,clients", "--out", o],
        &["--era-traffic", "clients", "freelist"],
    );
    expect_usage_error(&["--idle", "70ms", "--out", o], &["--idle", "65535us"]);
    expect_usage_error(
        &["--idle", "1500ns", "--out", o],
        &["--idle", "whole microseconds"],
    );
    expect_usage_error(
        &[
            "--workload",
            concat!(
                "trace:",
                env!("CARGO_MANIFEST_DIR"),
                "/traces/pg15-S-c1/trace.tsv"
            ),
            "--idle",
            "10us",
            "--out",
            o,
        ],
        &["--idle", "replays its own idle time"],
    );
    for bad in ["1000.01", "1.234", "=-1", "ten", "57,62"] {
        let (flag, value) = match bad.strip_prefix('=') {
            Some(v) => (format!("--status-lookups={v}"), None),
            None => ("--status-lookups".to_string(), Some(bad)),
        };
        let mut a = vec!["--workload", "pgbench-write-status", flag.as_str()];
        a.extend(value);
        a.extend(["--out", o]);
        expect_usage_error(&a, &["--status-lookups", "at most two places"]);
    }
    expect_usage_error(
        &[
            "--workload",
            "pgbench-write-status,pgbench-write",
            "--status-lookups",
            "10",
            "--out",
            o,
        ],
        &["--status-lookups", "pgbench-write has no status lookups"],
    );
    expect_usage_error(
        &[
            "--workload",
            concat!(
                "trace:",
                env!("CARGO_MANIFEST_DIR"),
                "/traces/pg15-tpcb-c1/trace.tsv"
            ),
            "--status-lookups",
            "10",
            "--out",
            o,
        ],
        &["--status-lookups", "replays its own status lookups"],
    );
    for bad in ["1000001", "-1", "ten", "1.5"] {
        let flag = format!("--wal-hold={bad}");
        expect_usage_error(
            &["--workload", "pgbench-n", flag.as_str(), "--out", o],
            &["--wal-hold"],
        );
    }
    expect_usage_error(
        &[
            "--workload",
            "pgbench-n,pgbench-write,pgbench-select",
            "--wal-hold",
            "500",
            "--out",
            o,
        ],
        &["--wal-hold", "pgbench-select has no WAL records"],
    );
    expect_usage_error(
        &[
            "--workload",
            "pgbench-n",
            "--era-traffic",
            "walinsertlock,wal",
            "--out",
            o,
        ],
        &["--era-traffic", "'wal'", "walinsertlock, nomultixact"],
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
    let out = tmp("layout-snapshots");
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
    // The plain scan never takes a fast path; the clog workload has neither setting. A trial
    // that counted no snapshot in its window (a starved worker on a loaded machine) leaves the
    // cell empty; at least one scan trial must have counted some.
    let scan: Vec<_> = snap.iter().filter(|r| r[s] == "scan").collect();
    assert!(
        scan.iter()
            .all(|r| r[f].is_empty() || r[f] == "0.0" || r[f] == "0"),
        "{scan:?}"
    );
    assert!(
        scan.iter().any(|r| !r[f].is_empty()),
        "no scan trial counted a snapshot: {scan:?}"
    );
    let clog: Vec<_> = rows.iter().filter(|r| r[w] == "clog").collect();
    assert_eq!(clog.len(), 1);
    assert!(clog[0][l].is_empty() && clog[0][s].is_empty());
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("atomic padded/reuse"), "{summary}");
    let _ = std::fs::remove_dir_all(&out);
}

/// The median as lwbench computes it (mean of the middle two for even counts).
fn median_raw(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The median of rates, rounded to a whole number as in points.csv.
fn median(v: &[f64]) -> f64 {
    median_raw(v).round()
}

fn num(s: &str) -> f64 {
    // A latency whose trial finished no transaction is shown unbounded.
    if s.trim().trim_end_matches('*') == "∞" {
        return f64::INFINITY;
    }
    s.trim()
        .trim_end_matches('*')
        .replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {s:?}"))
}

/// A summary.md cell `median (min–max)`, `*` allowed after the median.
fn cell(s: &str) -> (f64, f64, f64) {
    let (m, rest) = s.split_once(" (").unwrap_or_else(|| panic!("cell {s:?}"));
    let (lo, hi) = rest.trim_end_matches(')').split_once('–').unwrap();
    (num(m), num(lo), num(hi))
}

/// The markdown table that follows the first line starting with `heading` in `section`:
/// lock → threads → cell.
fn md_table(section: &str, heading: &str) -> (String, Vec<(String, usize, String)>) {
    let start = section
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading:?} in {section}"));
    let text = &section[start..];
    let title = text.lines().next().unwrap().to_string();
    let mut lines = text.lines().skip_while(|l| !l.starts_with("| threads |"));
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .trim_matches('|')
        .split(" | ")
        .map(|c| c.trim().to_string())
        .collect();
    let mut cells = Vec::new();
    for l in lines.skip(1).take_while(|l| l.starts_with('|')) {
        let row: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
        let t: usize = row[0].parse().unwrap();
        for (lock, c) in header.iter().zip(&row).skip(1) {
            cells.push((lock.clone(), t, c.to_string()));
        }
    }
    (title, cells)
}

#[test]
fn summary_stdout_and_svgs_agree_with_results_csv() {
    let out = tmp("agree");
    let o = bench(&[
        "--workload",
        "pgbench-write,end-xact",
        "--locks",
        "atomic,flex-leader",
        "--threads",
        "1,2,4",
        "--trials",
        "3",
        "--duration",
        "15ms",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).unwrap()).unwrap();
    let cores = meta["host_cpus"].as_u64().unwrap();
    let (h, rows) = read_csv(&out.join("results.csv"));
    let col = |n: &str| {
        h.iter()
            .position(|c| c == n)
            .unwrap_or_else(|| panic!("no {n}"))
    };
    let (ph, prow) = read_csv(&out.join("points.csv"));
    let pcol = |n: &str| {
        ph.iter()
            .position(|c| c == n)
            .unwrap_or_else(|| panic!("no {n}"))
    };
    // One source of context switches per trial, and the counters covered every worker.
    for r in &rows {
        let src = &r[col("ctx_switch_source")];
        assert!(src == "perf-event" || src == "getrusage", "{r:?}");
        if meta["ctx_switch_source"] == "perf-event" {
            assert_eq!(r[col("counters_threads")], r[col("threads")], "{r:?}");
            assert_eq!(src, "perf-event");
        }
    }
    // LWLOCK_STATS and group counters per point: a table of their own in a `stats` build only.
    assert_eq!(
        summary.contains("**Lock counters** per trial"),
        cfg!(feature = "stats"),
        "{summary}"
    );
    assert!(stdout.contains("TPS: median of 3 trials"), "{stdout}");
    assert!(
        stdout.contains("latency average per transaction"),
        "{stdout}"
    );
    for w in ["pgbench-write", "end-xact"] {
        let section = summary
            .split(&format!("## {w}\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("no section {w}"))
            .split("\n## ")
            .next()
            .unwrap();
        let (_, tps) = md_table(section, "**Transactions per second**");
        let (lat_title, lat) = md_table(section, "**Latency average**");
        let unit = ["ns", "µs", "ms"]
            .into_iter()
            .find(|u| lat_title.contains(&format!(", {u} =")))
            .unwrap_or_else(|| panic!("no unit in {lat_title:?}"));
        let per_us = match unit {
            "ns" => 1e3,
            "µs" => 1.0,
            _ => 1e-3,
        };
        assert_eq!(tps.len(), 2 * 3, "{section}");
        for (lock, t, c) in &tps {
            let trials: Vec<&Vec<String>> = rows
                .iter()
                .filter(|r| {
                    r[col("workload")] == w
                        && r[col("lock")] == *lock
                        && r[col("threads")] == t.to_string()
                })
                .collect();
            assert_eq!(trials.len(), 3, "{w} {lock} x{t}");
            let v: Vec<f64> = trials.iter().map(|r| num(&r[col("txn_per_sec")])).collect();
            let (m, lo, hi) = cell(c);
            assert_eq!(m, median(&v), "{w} {lock} x{t}: median of {v:?} vs {c}");
            assert_eq!(lo, v.iter().copied().fold(f64::INFINITY, f64::min), "{c}");
            assert_eq!(hi, v.iter().copied().fold(0.0, f64::max), "{c}");
            // The same median on stdout and in points.csv.
            let shown = c.split(" (").next().unwrap();
            assert!(stdout.contains(shown), "stdout lacks {shown}: {stdout}");
            let p = prow
                .iter()
                .find(|p| {
                    p[pcol("workload")] == w
                        && p[pcol("lock")] == *lock
                        && p[pcol("threads")] == t.to_string()
                })
                .unwrap();
            assert_eq!(num(&p[pcol("median_txn_per_sec")]), m);
            // Median exclusive-wait p99 per point, over the trials that timed one.
            let p99: Vec<f64> = trials
                .iter()
                .map(|r| &r[col("excl_wait_p99_ns")])
                .filter(|c| !c.is_empty())
                .map(|c| num(c))
                .collect();
            let got = &p[pcol("excl_wait_p99_ns")];
            if p99.is_empty() {
                assert!(got.is_empty());
            } else {
                assert_eq!(
                    num(got),
                    (median_raw(&p99) * 10.0).round() / 10.0,
                    "{p99:?}"
                );
            }
            // Latency average = threads / TPS, at the median, fastest and slowest trial.
            let (lm, llo, lhi) = cell(
                &lat.iter()
                    .find(|(l, tt, _)| l == lock && tt == t)
                    .unwrap()
                    .2,
            );
            for (shown, tps) in [(lm, m), (llo, hi), (lhi, lo)] {
                let want = *t as f64 / tps * 1e6 * per_us;
                if tps == 0.0 {
                    assert!(shown.is_infinite(), "{w} {lock} x{t}: 0 TPS shows {shown}");
                    continue;
                }
                assert!(
                    (shown - want).abs() <= want * 0.006,
                    "{w} {lock} x{t}: latency {shown} {unit}, want {want}"
                );
            }
        }
        if w == "pgbench-write" {
            // Nine lock operations per transaction: the lock ops/s table is there too.
            let (_, ops) = md_table(section, "**Lock operations per second**");
            for (lock, t, c) in &ops {
                let v: Vec<f64> = rows
                    .iter()
                    .filter(|r| {
                        r[col("workload")] == w
                            && r[col("lock")] == *lock
                            && r[col("threads")] == t.to_string()
                    })
                    .map(|r| num(&r[col("ops_per_sec")]))
                    .collect();
                assert_eq!(cell(c).0, median(&v), "{c}");
            }
        }
        assert!(section.contains("p50 / p99"), "{section}");
        assert!(section.contains(&format!("]({w}.svg)")));
        // The SVG: error bars (a vertical segment per point in the series' colour, thin) and the
        // core-count mark.
        let svg = std::fs::read_to_string(out.join(format!("{w}.svg"))).unwrap();
        assert!(svg.contains("min–max of 3 trials"), "{w}.svg caption");
        assert!(
            svg.contains(&format!("{cores} cores")),
            "{w}.svg has no core mark"
        );
        let vertical = |l: &&str| {
            let pts: Vec<&str> = l
                .split("points=\"")
                .nth(1)
                .map(|p| p.split('"').next().unwrap().split_whitespace().collect())
                .unwrap_or_default();
            pts.len() == 2
                && pts[0].split(',').next() == pts[1].split(',').next()
                && pts[0] != pts[1]
        };
        let bars = svg
            .lines()
            .filter(|l| l.contains("<polyline") && l.contains("stroke-width=\"1\""))
            .filter(|l| !l.contains("#000000") && !l.contains("#5A5A5A"))
            .filter(vertical)
            .count();
        assert!(bars >= 2 * 3 - 1, "{w}.svg: {bars} error bars for 6 points");
        if cores <= 4 {
            let dashes = svg
                .lines()
                .filter(|l| l.contains("<polyline") && l.contains("#5A5A5A"))
                .filter(vertical)
                .count();
            assert!(dashes >= 10, "{w}.svg: no dashed line at {cores} cores");
        } else {
            assert!(svg.contains("off the axis"));
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn help_describes_every_workload_and_lock() {
    let o = bench(&["--help"]);
    assert!(o.status.success());
    let help = String::from_utf8_lossy(&o.stdout);
    for w in lwbench::workload::Workload::ALL {
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{} ", w.name())))
            .unwrap_or_else(|| panic!("--help lacks workload {}: {help}", w.name()));
        assert!(line.contains(w.description()), "{line}");
    }
    for k in lwbench::locks::LockKind::BENCH_BUILT_IN {
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{} ", k.name())))
            .unwrap_or_else(|| panic!("--help lacks lock {}: {help}", k.name()));
        assert!(line.contains(k.description()), "{line}");
    }
    assert!(help.contains("WORKLOADS") && help.contains("LOCKS"));
    assert!(
        help.contains("[only clog, pgbench-write, pgbench-write-status, pgbench-n]"),
        "{help}"
    );
}

#[test]
fn a_selection_without_points_exits_2() {
    let out = tmp("empty");
    let o = out.to_str().unwrap();
    expect_usage_error(
        &[
            "--workload",
            "snapshot",
            "--locks",
            "clog-group",
            "--out",
            o,
        ],
        &[
            "--locks",
            "clog-group",
            "snapshot",
            "no point",
            "clog, pgbench-write",
        ],
    );
    expect_usage_error(
        &[
            "--workload",
            "clog,end-xact",
            "--locks",
            "clog-group",
            "--out",
            o,
        ],
        &["end-xact", "clog-group"],
    );
    assert!(!out.join("summary.md").exists(), "nothing may be written");
    let _ = std::fs::remove_dir_all(&out);
}

/// 64 workers with 40 file descriptors: most cannot open their perf counters. The counter
/// columns must be empty, not summed over the few that could, and context switches must come
/// from getrusage for every worker.
#[test]
fn partial_perf_counters_are_left_empty_not_summed() {
    let out = tmp("fds");
    let args = [
        "--workload",
        "null",
        "--locks",
        "atomic",
        "--threads",
        "64",
        "--trials",
        "2",
        "--duration",
        "10ms",
        "--out",
        out.to_str().unwrap(),
    ];
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("ulimit -n 40 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_lwbench"))
        .args(args);
    let o = run_watched(cmd, &args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let (h, rows) = read_csv(&out.join("results.csv"));
    let col = |n: &str| {
        h.iter()
            .position(|c| c == n)
            .unwrap_or_else(|| panic!("no {n}"))
    };
    assert_eq!(rows.len(), 2);
    for r in &rows {
        let opened: u32 = r[col("counters_threads")].parse().unwrap();
        assert!(opened < 64, "{r:?}");
        for c in ["task_clock_ms", "cpu_migrations", "cycles", "instructions"] {
            assert!(
                r[col(c)].is_empty(),
                "{c} summed over {opened} of 64 workers: {r:?}"
            );
        }
        assert_eq!(r[col("ctx_switch_source")], "getrusage", "{r:?}");
        // Filled from the one source every worker has (a count, possibly 0 in a 10 ms trial on
        // a loaded machine), never left empty or mixed.
        assert!(r[col("ctx_switches")].parse::<u64>().is_ok(), "{r:?}");
    }
    assert!(err.contains("perf counters opened in only"), "{err}");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        summary.contains("Perf counters incomplete in 2 of 2 trials"),
        "{summary}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

/// `--interleave` runs trial k of every lock compared at a point before trial k + 1, each round
/// starting from the next lock, and records the order; every point still gets all its trials.
#[test]
fn interleave_runs_the_locks_trials_in_turn() {
    let out = tmp("interleave");
    let o = out.to_str().unwrap();
    let r = bench(&[
        "--workload",
        "null",
        "--locks",
        "atomic,classic",
        "--threads",
        "1,2",
        "--trials",
        "2",
        "--duration",
        "20ms",
        "--interleave",
        "--out",
        o,
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["settings"]["interleave"], true);
    let order: Vec<&str> = meta["trial_order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        [
            "null classic x1 (trial 1)",
            "null atomic x1 (trial 1)",
            "null atomic x1 (trial 2)",
            "null classic x1 (trial 2)",
            "null classic x2 (trial 1)",
            "null atomic x2 (trial 1)",
            "null atomic x2 (trial 2)",
            "null classic x2 (trial 2)",
        ],
        "{order:?}"
    );
    let (head, rows) = read_csv(&out.join("results.csv"));
    let col = |n: &str| head.iter().position(|h| h == n).unwrap();
    assert_eq!(rows.len(), 8);
    for lock in ["atomic", "classic"] {
        for t in ["1", "2"] {
            let trials: Vec<&str> = rows
                .iter()
                .filter(|r| r[col("lock")] == lock && r[col("threads")] == t)
                .map(|r| r[col("trial")].as_str())
                .collect();
            assert_eq!(trials, ["1", "2"], "{lock} x{t}");
        }
    }
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("**Interleaved**"), "{summary}");
    // In plan order in the files, as without --interleave.
    assert_eq!(rows[0][col("lock")], "classic");
    assert_eq!(rows[7][col("lock")], "atomic");
    expect_usage_error(
        &["--interleave", "--trials", "1", "--out", o],
        &["--interleave", "--trials 2"],
    );
    expect_usage_error(
        &["--interleave", "--engine", "sim", "--out", o],
        &["--interleave", "real engine"],
    );
    let _ = std::fs::remove_dir_all(&out);
}
