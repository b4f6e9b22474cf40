//! Context switches on `--engine sim` counted as Linux counts them (a `--cfg lwsim` build;
//! `ci/sim.sh` runs it): clients that block on every transaction's round trip (`--idle`) on a
//! machine with free cores are never dispatched from a run queue, yet each block is a voluntary
//! switch, so `ctx_switches` (and `cs_per_thread`, which the `fair_short` rule reads) counts a
//! scheduling round per transaction, as perf's `context-switches` or `getrusage` would on the
//! real engine. Deterministic: a function of the command.
#![cfg(lwsim)]

mod common;
use common::{csv_rows, num, out_dir, run_ok};

#[test]
fn clients_that_block_every_transaction_count_a_switch_each() {
    let d = out_dir("simcs", "idle");
    run_ok(&[
        "--engine",
        "sim",
        "--cores",
        "4",
        "--workload",
        "end-xact",
        "--locks",
        "atomic",
        "--threads",
        "2,8",
        "--trials",
        "2",
        "--idle",
        "20us",
        "--duration",
        "2ms",
        "--out",
        d.to_str().unwrap(),
    ]);
    let rows = csv_rows(&d.join("results.csv"));
    assert_eq!(rows.len(), 4);
    for r in &rows {
        let s = format!("{r:?}");
        let threads = num(r, "threads");
        let (vol, invol) = (
            num(r, "sim_voluntary_switches"),
            num(r, "sim_involuntary_switches"),
        );
        assert_eq!(r["ctx_switch_source"], "lwsim-linux", "{s}");
        // The Linux count is the sum of the two kinds, and cs_per_thread is it per client.
        assert_eq!(num(r, "ctx_switches"), vol + invol, "{s}");
        let per = ((vol + invol) / threads * 10.0).round() / 10.0;
        assert_eq!(num(r, "cs_per_thread"), per, "{s}");
        // Every preemption is an involuntary switch; every futex sleep, timed sleep and round
        // trip a voluntary one: one round trip per transaction (the window's edges cut at most
        // one per client).
        assert!(invol >= num(r, "sim_preemptions"), "{s}");
        let blocks = num(r, "sim_futex_sleeps") + num(r, "sim_sleeps");
        assert!(vol >= blocks + num(r, "txns") - threads, "{s}");
        assert!(vol <= blocks + num(r, "txns") + threads, "{s}");
        // Dozens of transactions per client: far past the rule's 20 rounds.
        assert!(num(r, "txns") / threads > 30.0, "{s}");
        assert_eq!(r["fair_short"], "false", "{s}");
        if threads == 2.0 {
            // Two clients on four cores: always an idle core to wake onto, never a dispatch
            // (the count the simulator reported before, which would have flagged the point).
            assert_eq!(num(r, "sim_dispatches"), 0.0, "{s}");
        }
    }
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("meta.json")).unwrap()).unwrap();
    assert!(
        meta["sim"]["ctx_switches"]
            .as_str()
            .is_some_and(|m| m.contains("nvcsw + nivcsw")),
        "{}",
        meta["sim"]
    );
    std::fs::remove_dir_all(&d).ok();
}
