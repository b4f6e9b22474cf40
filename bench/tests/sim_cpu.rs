//! CPU busy and CPU seconds per transaction on `--engine sim` (a `--cfg lwsim` build;
//! `ci/sim.sh` runs it): a simulated core is busy while a thread is on it (spinning included) and
//! idle while none is, so one worker that never sleeps keeps one core of four busy, 25 %, and four
//! workers contending on one lock keep more of the machine busy and spend more CPU per
//! transaction (seed 000's argument). Deterministic: a function of the command.
#![cfg(lwsim)]

mod common;
use common::{bench, csv_rows, num, out_dir};

#[test]
fn one_worker_keeps_one_core_of_four_busy_and_contention_costs_cpu() {
    let d = out_dir("simcpu", "busy");
    let o = bench(&[
        "--engine",
        "sim",
        "--cores",
        "4",
        "--workload",
        "end-xact",
        "--locks",
        "atomic",
        "--threads",
        "1,4",
        "--trials",
        "1",
        "--duration",
        "500us",
        "--out",
        d.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = csv_rows(&d.join("results.csv"));
    let at = |t: &str| rows.iter().find(|r| r["threads"] == t).expect("row");
    let (one, four) = (at("1"), at("4"));
    for r in [one, four] {
        assert_eq!(r["cores"], "4");
        assert!(num(r, "cpu_s_per_txn") > 0.0, "{r:?}");
        assert_eq!(
            r["cpu_sys_pct"], "",
            "no user/system split on the simulator"
        );
    }
    // One worker that never sleeps (an uncontended lock never blocks) is on its core the whole
    // window and the other three cores have no thread: 25 %. The tolerance covers only the
    // one-decimal rounding and the nanosecond truncation of the window's edges.
    let busy1 = num(one, "cpu_busy_pct");
    assert!(
        (busy1 - 25.0).abs() <= 0.1,
        "one worker of four cores: {busy1} %"
    );
    // The CPU time is the window's: busy × cores × window = CPU seconds per transaction × txns.
    let cpu = busy1 / 100.0 * 4.0 * num(one, "duration_s");
    let per = num(one, "cpu_s_per_txn") * num(one, "txns");
    assert!((cpu - per).abs() <= cpu * 1e-3, "{cpu} s vs {per} s");
    // Four workers contending for one lock word: more of the machine busy, more CPU per
    // transaction (each pays for the line's transfers).
    let busy4 = num(four, "cpu_busy_pct");
    assert!(busy4 > 2.0 * busy1, "four contending workers: {busy4} %");
    assert!(
        num(four, "cpu_s_per_txn") > num(one, "cpu_s_per_txn"),
        "{} vs {} CPU s per transaction",
        num(four, "cpu_s_per_txn"),
        num(one, "cpu_s_per_txn")
    );
    let points = csv_rows(&d.join("points.csv"));
    assert!(points.iter().all(|p| num(p, "cpu_busy_pct") > 0.0));
    std::fs::remove_dir_all(&d).ok();
}

/// `--idle`: the round trip to the client is off the CPU. One worker with 20 µs of work and
/// 20 µs idle per transaction spends the same CPU per transaction as without the idle time,
/// runs each transaction in its CPU time plus the idle time (and a system call), and keeps its
/// core busy only for the CPU part.
#[test]
fn idle_time_is_off_the_cpu() {
    let run = |idle: &str| {
        let d = out_dir("simcpu", &format!("idle{idle}"));
        let o = bench(&[
            "--engine",
            "sim",
            "--cores",
            "1",
            "--workload",
            "pgbench-select",
            "--locks",
            "atomic",
            "--threads",
            "1",
            "--trials",
            "1",
            "--work",
            "20000",
            "--idle",
            idle,
            "--duration",
            "2ms",
            "--out",
            d.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let row = csv_rows(&d.join("results.csv")).remove(0);
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("meta.json")).unwrap()).unwrap();
        std::fs::remove_dir_all(&d).ok();
        (row, meta)
    };
    let (busy, _) = run("0us");
    let (idle, meta) = run("20us");
    assert_eq!(meta["settings"]["idle_us"], 20);
    let cpu = num(&busy, "cpu_s_per_txn");
    let cpu_idle = num(&idle, "cpu_s_per_txn");
    assert!(
        (cpu_idle - cpu).abs() <= cpu * 0.02,
        "CPU per transaction {cpu_idle} s with idle time, {cpu} s without"
    );
    // Without idle time the transaction is its CPU; with it, CPU + 20 µs (+ the wait's system
    // call, 75 ns): the rate falls by that ratio.
    let want = cpu / (cpu + 20e-6);
    let got = num(&idle, "txns") / num(&busy, "txns");
    assert!(
        (got - want).abs() <= want * 0.05,
        "rate with idle time {got} of the busy one's, expected {want}"
    );
    assert!(num(&busy, "cpu_busy_pct") > 99.0, "{busy:?}");
    let want_busy = 100.0 * cpu / (cpu + 20e-6);
    assert!(
        (num(&idle, "cpu_busy_pct") - want_busy).abs() <= 3.0,
        "busy {} % with idle time, expected about {want_busy} %",
        num(&idle, "cpu_busy_pct")
    );
}
