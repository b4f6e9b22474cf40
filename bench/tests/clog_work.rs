//! `--work` in the `clog` workload (busy work between xid assignment and the CLOG update, where
//! PostgreSQL's commit writes and flushes its WAL record): the runs still pass every check with
//! each lock that applies, the checks still catch the broken lock, and (a `--cfg lwsim` build)
//! the work is charged to each commit in virtual time.

mod common;

use common::{bench, csv_rows, out_dir};
use std::path::PathBuf;
use std::process::Output;

fn run(name: &str, args: &[&str]) -> (Output, PathBuf) {
    let d = out_dir("clog-work", name);
    let mut a = args.to_vec();
    let ds = d.to_string_lossy().into_owned();
    a.extend_from_slice(&["--out", &ds]);
    (bench(&a), d)
}

#[cfg(not(lwsim))]
#[test]
fn clog_with_work_passes_its_checks_with_every_lock() {
    let (o, d) = run(
        "real",
        &[
            "--workload",
            "clog",
            "--work",
            "500",
            "--locks",
            "classic,atomic,flex-leader,clog-group",
            "--threads",
            "1,4",
            "--trials",
            "1",
            "--duration",
            "40ms",
            "--warmup",
            "10ms",
        ],
    );
    assert!(
        o.status.success(),
        "{}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    let r = csv_rows(&d.join("results.csv"));
    assert_eq!(r.len(), 4 * 2, "one row per lock and thread count: {r:?}");
    for row in &r {
        assert_eq!(row["workload"], "clog");
    }
    // Every lock committed in some row (a loaded machine may not run a point's fresh threads
    // inside one 40 ms window, so not every row is asked to).
    for lock in ["classic", "atomic", "flex-leader", "clog-group"] {
        assert!(
            r.iter()
                .any(|row| row["lock"] == lock && row["ops"].parse::<u64>().unwrap() > 0),
            "no commits with {lock}: {r:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[cfg(not(lwsim))]
#[test]
fn clog_with_work_still_fails_with_the_broken_lock() {
    // The broken lock's exclusive acquire takes the lock shared: two committers update a CLOG
    // byte at once (lost updates, or a checked section beside another).
    let (o, d) = run(
        "broken",
        &[
            "--workload",
            "clog",
            "--work",
            "100",
            "--locks",
            "broken",
            "--threads",
            "2,4",
            "--trials",
            "1",
            "--duration",
            "60ms",
            "--warmup",
            "20ms",
        ],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "the broken lock passed: {stderr}");
    assert!(
        stderr.contains("invariant violated with lock broken")
            || stderr.contains("a worker thread panicked"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// On the simulator `--work N` costs N ns of virtual time, so one client doing 5 µs of work per
/// commit completes at most one commit per 5 µs of its window (plus one straddling its start),
/// and without the work far more.
#[cfg(lwsim)]
#[test]
fn clog_work_is_charged_to_every_commit() {
    let mut seen = Vec::new();
    for work in ["0", "5000"] {
        let (o, d) = run(
            &format!("sim-{work}"),
            &[
                "--engine",
                "sim",
                "--cores",
                "4",
                "--workload",
                "clog",
                "--work",
                work,
                "--locks",
                "atomic,clog-group",
                "--threads",
                "1",
                "--trials",
                "1",
                "--duration",
                "200us",
            ],
        );
        assert!(
            o.status.success(),
            "{}\n{}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        );
        for row in csv_rows(&d.join("results.csv")) {
            let ops: f64 = row["ops"].parse().unwrap();
            let window: f64 = row["duration_s"].parse().unwrap();
            // The most commits a window can hold at 5 µs each.
            let bound = (window / 5e-6).floor() + 1.0;
            match work {
                "5000" => assert!(
                    ops <= bound,
                    "{}, --work 5000: {ops} commits in {window} s",
                    row["lock"]
                ),
                _ => assert!(
                    ops > 10.0 * bound,
                    "{}, --work 0: only {ops} commits in {window} s",
                    row["lock"]
                ),
            }
            seen.push(row["lock"].clone());
        }
        let _ = std::fs::remove_dir_all(&d);
    }
    assert_eq!(seen.len(), 4, "{seen:?}");
}
