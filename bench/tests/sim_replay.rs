//! `--workload trace:FILE` on the simulated engine (a `--cfg lwsim` build; `ci/sim.sh` runs it):
//! a recorded PostgreSQL trace replays on a simulated machine, the trial's check finds every
//! replay client's attempts by tranche, mode and entry point equal to the trace's (a trial that
//! differs fails the run), and the same command twice writes identical rows.
#![cfg(lwsim)]

mod common;
use common::{csv_rows, out_dir, run_ok};
use std::path::Path;

#[test]
fn a_trace_replays_on_the_simulator_deterministically() {
    let trace = format!(
        "trace:{}",
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("traces/pg15-N-c2")
            .display()
    );
    let (a, b) = (out_dir("sim-replay", "a"), out_dir("sim-replay", "b"));
    for d in [&a, &b] {
        run_ok(&[
            "--engine",
            "sim",
            "--cores",
            "4",
            "--workload",
            &trace,
            "--locks",
            "atomic,group-clear,clog-group",
            "--threads",
            "2,8",
            "--trials",
            "1",
            "--duration",
            "2ms",
            "--warmup",
            "500us",
            "--seed",
            "7",
            "--out",
            d.to_str().unwrap(),
        ]);
    }
    let (x, y) = (
        std::fs::read_to_string(a.join("results.csv")).unwrap(),
        std::fs::read_to_string(b.join("results.csv")).unwrap(),
    );
    let rows = csv_rows(&a.join("results.csv"));
    assert_eq!(rows.len(), 6);
    for r in &rows {
        assert!(r["txns"].parse::<u64>().unwrap() > 0, "{r:?}");
    }
    assert_eq!(
        x, y,
        "results.csv differs between two runs of the same command"
    );
}

/// The families of docs/results.md's "PostgreSQL 15's own traffic on many cores" that the test
/// above leaves out (the 9.4 spinlock LWLock, the 2011 FlexLock patch, the drop-in default)
/// replay a trace on the many-core profile past its cores (24 clients on 8 of its hardware
/// threads): every trial passes the replay's count check, each trial has its own seed, and
/// the same command twice writes identical rows and wait samples.
#[test]
fn the_era_families_replay_past_the_cores_on_the_many_core_profile() {
    let trace = format!(
        "trace:{}",
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("traces/pg15-N-c1")
            .display()
    );
    let (a, b) = (
        out_dir("sim-replay", "era-a"),
        out_dir("sim-replay", "era-b"),
    );
    for d in [&a, &b] {
        run_ok(&[
            "--engine",
            "sim",
            "--platform",
            "xeon-2s-broadwell",
            "--cores",
            "8",
            "--workload",
            &trace,
            "--locks",
            "classic,flexlock-2011,atomic-empty-yield",
            "--threads",
            "24",
            "--trials",
            "2",
            "--duration",
            "1ms",
            "--warmup",
            "500us",
            "--jobs",
            "1",
            "--out",
            d.to_str().unwrap(),
        ]);
    }
    let rows = csv_rows(&a.join("results.csv"));
    assert_eq!(rows.len(), 6, "3 families x 2 trials");
    for r in &rows {
        assert_eq!(r["platform"], "xeon-2s-broadwell", "{r:?}");
        assert_eq!((r["threads"].as_str(), r["cores"].as_str()), ("24", "8"));
        assert!(r["txns"].parse::<u64>().unwrap() > 0, "{r:?}");
    }
    for pair in rows.chunks(2) {
        assert_eq!(pair[0]["lock"], pair[1]["lock"]);
        assert_ne!(pair[0]["sim_seed"], pair[1]["sim_seed"], "{pair:?}");
    }
    for f in ["results.csv", "waits.csv"] {
        assert_eq!(
            std::fs::read_to_string(a.join(f)).unwrap(),
            std::fs::read_to_string(b.join(f)).unwrap(),
            "{f} differs between two runs of the same command"
        );
    }
}

/// One replay client on the simulator runs at the recorded server's one-client rate: each
/// transaction its CPU and then pgbench's round trip, the sleep's timer slack (50 us on the
/// profile, more than a `-S` round trip) carried into the next idle time as on the real
/// engine. The replay's own lock operations come on top, so the simulated rate may be a little
/// lower; with the slack charged it was half.
#[test]
fn one_replay_client_on_the_simulator_runs_at_the_recorded_rate() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/pg15-S-c1");
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
    let recorded = meta["unprobed"]["tps"].as_f64().unwrap();
    let out = out_dir("sim-replay", "one-client");
    run_ok(&[
        "--engine",
        "sim",
        "--platform",
        "xeon-2s-broadwell",
        "--cores",
        "2",
        "--workload",
        &format!("trace:{}", dir.display()),
        "--locks",
        "atomic",
        "--threads",
        "1",
        "--trials",
        "1",
        "--duration",
        "5ms",
        "--warmup",
        "1ms",
        "--out",
        out.to_str().unwrap(),
    ]);
    let rows = csv_rows(&out.join("results.csv"));
    let tps: f64 = rows[0]["txn_per_sec"].parse().unwrap();
    assert!(
        (0.85 * recorded..=1.02 * recorded).contains(&tps),
        "simulated one-client rate {tps} against the recorded {recorded}"
    );
}
