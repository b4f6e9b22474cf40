//! Measurement integrity of the built `bench` binary: the rates count exactly the window they
//! are divided by (stragglers' tail reported apart), the requested and measured trial lengths
//! are named apart, the wait-event sampler can be turned off and does not stretch a trial, and
//! the shared spin estimate starts from the default at every point.

mod common;

use common::{bench, num, out_dir};
use std::path::Path;
use std::time::{Duration, Instant};

/// results.csv as a list of column → value maps.
fn rows(dir: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let text = std::fs::read_to_string(dir.join("results.csv")).expect("results.csv");
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .expect("header")
        .split(',')
        .map(String::from)
        .collect();
    lines
        .map(|l| {
            header
                .iter()
                .cloned()
                .zip(l.split(',').map(String::from))
                .collect()
        })
        .collect()
}

#[test]
fn rates_count_the_window_and_the_tail_is_apart() {
    let out = out_dir("meas", "window");
    let o = bench(&[
        "--workload",
        "end-xact,null",
        "--locks",
        "classic,atomic",
        "--threads",
        "1,64",
        "--trials",
        "2",
        "--duration",
        "80ms",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = rows(&out);
    assert_eq!(rows.len(), 2 * 2 * 2 * 2);
    for r in &rows {
        let (ops, secs, rate) = (num(r, "ops"), num(r, "duration_s"), num(r, "ops_per_sec"));
        // The rate is the window's work over the window (same run, same numbers).
        assert!(
            (rate - ops / secs).abs() <= 1.0 + rate * 1e-9,
            "{r:?}: ops/s {rate} != ops / window {}",
            ops / secs
        );
        assert!(
            num(r, "ops_total") >= ops,
            "the tail is counted apart, never lost"
        );
        assert!(num(r, "tail_s") >= 0.0);
        assert_eq!(num(r, "requested_s"), 0.08);
        assert!(secs >= 0.08, "the window cannot be shorter than requested");
        let threads = num(r, "threads");
        let cs = num(r, "cs_per_thread");
        assert!(cs >= 0.0);
        // The flag is its definition: more threads than cores and fewer than 20 slices each.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let short = threads > cores && cs < 20.0;
        assert_eq!(r["fair_short"], short.to_string(), "{r:?}");
        assert!(num(r, "spins_per_delay") > 0.0);
    }
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["settings"]["requested_duration_s"], 0.08);
    assert!(meta["settings"].get("duration_s").is_none());
    assert!(meta["timer_floor_ns"].as_f64().unwrap() > 0.0);
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn the_sampler_can_be_turned_off_and_does_not_stretch_trials() {
    let out = out_dir("meas", "sampler-off");
    let o = bench(&[
        "--workload",
        "end-xact",
        "--locks",
        "atomic",
        "--threads",
        "2",
        "--trials",
        "1",
        "--duration",
        "50ms",
        "--sample-interval",
        "off",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for r in rows(&out) {
        assert_eq!(num(&r, "wait_samples"), 0.0);
        assert_eq!(num(&r, "sampler_passes"), 0.0);
    }
    // A long interval: the sampler stops with the trial instead of finishing its sleep.
    let t0 = Instant::now();
    let o = bench(&[
        "--workload",
        "end-xact",
        "--locks",
        "atomic",
        "--threads",
        "2",
        "--trials",
        "2",
        "--duration",
        "50ms",
        "--sample-interval",
        "5s",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        t0.elapsed() < Duration::from_secs(8),
        "three 50 ms trials took {:?}: the 5 s sampler sleep was joined",
        t0.elapsed()
    );
    for r in rows(&out) {
        // At most one pass (none if the trial ended before the sampler first ran), then it
        // stopped with the trial instead of sleeping on.
        assert!(num(&r, "sampler_passes") <= 1.0, "{r:?}");
    }
    let bad = bench(&["--sample-interval", "sometimes"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--sample-interval"));
    std::fs::remove_dir_all(&out).ok();
}

/// The CPU columns of a one-thread end-xact run: some CPU time per transaction, and at most one
/// core's worth of the host's cores busy (a thread runs on one core at a time; 10 % for the CPU
/// clocks read just after the stop signal). No speed is asserted.
#[cfg(target_os = "linux")]
#[test]
fn cpu_busy_and_cpu_seconds_per_transaction_are_reported() {
    let out = out_dir("meas", "cpu");
    let o = bench(&[
        "--workload",
        "end-xact",
        "--locks",
        "atomic",
        "--threads",
        "1",
        "--trials",
        "2",
        "--duration",
        "50ms",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = rows(&out);
    assert_eq!(rows.len(), 2);
    // A loaded machine may not run a trial's fresh thread inside its 50 ms window: the CPU
    // columns are checked on the trials that ran transactions, and at least one must have.
    let ran: Vec<_> = rows.iter().filter(|r| num(r, "txns") > 0.0).collect();
    assert!(!ran.is_empty(), "no trial ran a transaction: {rows:?}");
    for r in ran {
        let (busy, per, cores) = (
            num(r, "cpu_busy_pct"),
            num(r, "cpu_s_per_txn"),
            num(r, "cores"),
        );
        assert!(busy > 0.0 && busy <= 110.0 / cores, "{r:?}");
        assert!(per > 0.0, "{r:?}");
        // CPU seconds per transaction times transactions is the CPU time: at most the window.
        assert!(per * num(r, "txns") <= num(r, "duration_s") * 1.1, "{r:?}");
        let sys = num(r, "cpu_sys_pct");
        assert!((0.0..=100.0).contains(&sys), "{r:?}");
    }
    let points = common::csv_rows(&out.join("points.csv"));
    assert!(num(&points[0], "cpu_s_per_txn") > 0.0, "{points:?}");
    std::fs::remove_dir_all(&out).ok();
}
