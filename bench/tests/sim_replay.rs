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
