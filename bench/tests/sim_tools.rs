//! The simulated engine's sweep tools (a `--cfg lwsim` build; `ci/sim.sh` runs these): `--jobs`
//! does not change a byte of the files, `--set` overrides a profile key and says so,
//! `--sensitivity` tabulates a key halved and doubled, and bad values exit 2 naming the
//! argument. Each run simulates a few hundred microseconds on 8 cores.
#![cfg(lwsim)]

mod common;
use common::{bench, csv_rows, out_dir, run_ok};
use std::path::Path;

/// A small contended sweep on 8 simulated cores, with `extra` appended.
fn sweep(out: &Path, extra: &[&str]) -> String {
    let mut a = vec![
        "--engine",
        "sim",
        "--cores",
        "8",
        "--workload",
        "end-xact",
        "--locks",
        "atomic,classic",
        "--threads",
        "2,8",
        "--trials",
        "2",
        "--duration",
        "100us",
        "--out",
        out.to_str().unwrap(),
    ];
    a.extend_from_slice(extra);
    run_ok(&a)
}

fn meta(d: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(d.join("meta.json")).unwrap()).unwrap()
}

#[test]
fn jobs_do_not_change_a_byte_of_the_files() {
    let (one, two, four) = (
        out_dir("simtools", "jobs1"),
        out_dir("simtools", "jobs2"),
        out_dir("simtools", "jobs4"),
    );
    // Two workloads, four locks, three thread counts: more tasks than threads, of uneven
    // lengths, so the trials finish out of order when they run side by side.
    let run = |d: &Path, jobs: &str| {
        run_ok(&[
            "--engine",
            "sim",
            "--cores",
            "8",
            "--workload",
            "end-xact,snapshot",
            "--locks",
            "atomic,classic,flex-leader,reader-bias",
            "--threads",
            "1,4,12",
            "--trials",
            "2",
            "--duration",
            "60us",
            "--sample-interval",
            "10us",
            "--jobs",
            jobs,
            "--out",
            d.to_str().unwrap(),
        ])
    };
    run(&one, "1");
    let err = run(&two, "2");
    assert!(err.contains("2 at a time"), "{err}");
    run(&four, "4");
    for f in ["results.csv", "points.csv", "waits.csv"] {
        let a = std::fs::read(one.join(f)).unwrap();
        for d in [&two, &four] {
            assert!(
                a == std::fs::read(d.join(f)).unwrap(),
                "{f} differs between --jobs 1 and {}",
                d.display()
            );
        }
    }
    assert_eq!(meta(&one)["settings"]["jobs"], 1);
    assert_eq!(meta(&four)["settings"]["jobs"], 4);
}

#[test]
fn set_overrides_a_key_changes_the_figure_and_is_recorded() {
    let (base, slow) = (
        out_dir("simtools", "set-base"),
        out_dir("simtools", "set-slow"),
    );
    sweep(&base, &[]);
    // Line transfers within the L3 ten times slower than the profile's 43.5 ns.
    sweep(
        &slow,
        &[
            "--set",
            "transfer_l3_ns=435",
            "--set",
            "wake_to_run_ns=2000",
        ],
    );
    let (b, s) = (
        csv_rows(&base.join("results.csv")),
        csv_rows(&slow.join("results.csv")),
    );
    assert_eq!(b.len(), s.len());
    let tps = |r: &[std::collections::HashMap<String, String>], lock: &str| -> f64 {
        r.iter()
            .filter(|x| x["lock"] == lock && x["threads"] == "8")
            .map(|x| x["txn_per_sec"].parse::<f64>().unwrap())
            .sum()
    };
    for lock in ["atomic", "classic"] {
        assert!(
            tps(&s, lock) < tps(&b, lock) * 0.95,
            "{lock} at 8 clients: {} TPS with transfer_l3_ns=435 vs {} at the profile's 43.5",
            tps(&s, lock),
            tps(&b, lock)
        );
    }
    let m = meta(&slow);
    let o = &m["sim"]["overrides"];
    assert_eq!(o.as_array().unwrap().len(), 2, "{o}");
    assert_eq!(o[0]["key"], "transfer_l3_ns");
    assert_eq!(o[0]["value"], 435.0);
    assert_eq!(o[0]["profile"], 43.5);
    assert!(
        m["sim"]["profile"].as_str().unwrap().contains("override"),
        "the profile's description shows the override's source"
    );
    assert!(meta(&base)["sim"]["overrides"]
        .as_array()
        .unwrap()
        .is_empty());
    let summary = std::fs::read_to_string(slow.join("summary.md")).unwrap();
    assert!(
        summary.contains("Profile overrides (`--set`):** `transfer_l3_ns` = 435.0 (profile: 43.5)"),
        "{summary}"
    );
    // Two trials: the summary says they are not a claim.
    assert!(summary.contains("fewer than 10"), "{summary}");
}

#[test]
fn sensitivity_writes_base_half_and_double_per_point() {
    let d = out_dir("simtools", "sensitivity");
    sweep(
        &d,
        &[
            "--set",
            "shared_load_occupancy=0.5",
            "--sensitivity",
            "transfer_l3_ns,futex_wake_ns,shared_load_occupancy,mfence_ns",
            "--set",
            "mfence_ns=0",
        ],
    );
    let md = std::fs::read_to_string(d.join("sensitivity.md")).unwrap();
    assert!(
        md.contains(
            "| workload | lock | threads | base (slowest–fastest) | x0.5 | x2 | x0.5 / base | x2 / base |"
        ),
        "{md}"
    );
    assert!(
        md.contains("## `transfer_l3_ns` (base 43.5 ns; x0.5 = 21.75 ns; x2 = 87 ns)"),
        "{md}"
    );
    // A key at 0 is reported, not run.
    assert!(md.contains("## `mfence_ns` (base 0 ns)"), "{md}");
    assert!(md.contains("halving or doubling zero is no test"), "{md}");
    // 0.5 of a fraction can be halved and doubled (to its bound, 1).
    assert!(
        md.contains("## `shared_load_occupancy` (base 0.5; x0.5 = 0.25; x2 = 1)"),
        "{md}"
    );
    let rows = csv_rows(&d.join("sensitivity.csv"));
    // 4 keys x 2 locks x 2 thread counts.
    assert_eq!(rows.len(), 16);
    for r in &rows {
        for c in [
            "base",
            "half",
            "double",
            "half_ratio",
            "double_ratio",
            "base_cpu_busy_pct",
            "half_cpu_busy_pct",
            "double_cpu_busy_pct",
        ] {
            assert!(r.contains_key(c), "{c} missing: {r:?}");
        }
        // CPU busy is a percentage of the cores, recorded in the base and in every arm that ran.
        let busy: f64 = r["base_cpu_busy_pct"].parse().unwrap();
        assert!(busy > 0.0 && busy <= 100.0, "{r:?}");
        if r["key"] == "mfence_ns" {
            assert!(r["half"].is_empty() && r["double"].is_empty(), "{r:?}");
            assert!(r["half_cpu_busy_pct"].is_empty(), "{r:?}");
            assert!(r["double_cpu_busy_pct"].is_empty(), "{r:?}");
            assert!(r["note"].contains("no test"), "{r:?}");
        } else {
            assert!(!r["half"].is_empty() && !r["double"].is_empty(), "{r:?}");
            for c in ["half_cpu_busy_pct", "double_cpu_busy_pct"] {
                let b: f64 = r[c].parse().unwrap();
                assert!(b > 0.0 && b <= 100.0, "{c}: {r:?}");
            }
        }
    }
    // Doubling the transfer cost slows a contended point; halving it speeds it up.
    let r = rows
        .iter()
        .find(|r| r["key"] == "transfer_l3_ns" && r["lock"] == "atomic" && r["threads"] == "8")
        .unwrap();
    let (h, x2): (f64, f64) = (
        r["half_ratio"].parse().unwrap(),
        r["double_ratio"].parse().unwrap(),
    );
    assert!(h > 1.0 && x2 < 1.0, "{r:?}");
    // The base sweep is the one written to results.csv, with the overrides.
    let base: Vec<_> = csv_rows(&d.join("points.csv"));
    assert_eq!(base.len(), 4);
    let p = base
        .iter()
        .find(|p| p["lock"] == "atomic" && p["threads"] == "8")
        .unwrap();
    assert_eq!(
        p["median_txn_per_sec"].parse::<f64>().unwrap(),
        r["base"].parse::<f64>().unwrap()
    );
    // The wait samples of the base and of every arm that ran, each point's shares summing to 1.
    let waits = csv_rows(&d.join("sensitivity-waits.csv"));
    let mut arms: Vec<&str> = waits.iter().map(|r| r["arm"].as_str()).collect();
    arms.dedup();
    assert_eq!(
        arms,
        [
            "base",
            "transfer_l3_ns x0.5",
            "transfer_l3_ns x2",
            "futex_wake_ns x0.5",
            "futex_wake_ns x2",
            "shared_load_occupancy x0.5",
            "shared_load_occupancy x2"
        ]
    );
    for arm in &arms {
        for (lock, threads) in [("atomic", "2"), ("atomic", "8"), ("classic", "8")] {
            let rows: Vec<_> = waits
                .iter()
                .filter(|r| r["arm"] == *arm && r["lock"] == lock && r["threads"] == threads)
                .collect();
            let sum: f64 = rows
                .iter()
                .map(|r| r["share"].parse::<f64>().unwrap())
                .sum();
            assert!(
                (sum - 1.0).abs() < 0.01,
                "{arm} {lock} x{threads}: {sum} {rows:?}"
            );
        }
    }
    // Eight contended threads on one lock wait on it in the base and in the arms.
    assert!(
        waits.iter().any(|r| r["arm"] == "transfer_l3_ns x2"
            && r["threads"] == "8"
            && !r["wait_event_type"].is_empty()),
        "{waits:?}"
    );
    assert!(
        md.contains("| workload | lock | threads | top wait: base | x0.5 | x2 |"),
        "{md}"
    );
    assert!(
        md.contains("| workload | lock | threads | CPU busy: base | x0.5 | x2 |"),
        "{md}"
    );
    // The CSV's base CPU cell is the points file's figure.
    let atomic8 = base
        .iter()
        .find(|p| p["lock"] == "atomic" && p["threads"] == "8")
        .unwrap();
    let cpu: f64 = atomic8["cpu_busy_pct"].parse().unwrap();
    assert_eq!(cpu, r["base_cpu_busy_pct"].parse::<f64>().unwrap());
    // Each arm's cells are that arm's own run: the x2 arm of transfer_l3_ns rerun on its own
    // (`--set`, the same seeds) gives its figure and its CPU busy, so neither column is the
    // x0.5 arm's.
    let x2 = out_dir("simtools", "sensitivity-x2");
    sweep(
        &x2,
        &[
            "--set",
            "shared_load_occupancy=0.5",
            "--set",
            "mfence_ns=0",
            "--set",
            "transfer_l3_ns=87",
        ],
    );
    let alone = csv_rows(&x2.join("points.csv"));
    let alone = alone
        .iter()
        .find(|p| p["lock"] == "atomic" && p["threads"] == "8")
        .unwrap();
    for (arm, own) in [
        ("double", "median_txn_per_sec"),
        ("double_cpu_busy_pct", "cpu_busy_pct"),
    ] {
        assert_eq!(
            r[arm].parse::<f64>().unwrap(),
            alone[own].parse::<f64>().unwrap(),
            "{arm}: {r:?} against {alone:?}"
        );
    }
    assert_ne!(r["half_cpu_busy_pct"], r["double_cpu_busy_pct"], "{r:?}");
    let m = meta(&d);
    assert_eq!(m["sim"]["sensitivity"][0]["key"], "transfer_l3_ns");
    assert_eq!(m["sim"]["sensitivity"][0]["double"]["value"], 87.0);
}

/// A structural option is not halved and doubled (its values select mechanisms): its one arm
/// runs at its other choice, tabulated as `=VALUE`, and that arm's figures are the sweep's own at
/// that choice (`--set`, the same seeds).
#[test]
fn sensitivity_runs_a_structural_option_at_its_other_choice() {
    let d = out_dir("simtools", "sensitivity-structural");
    sweep(&d, &["--sensitivity", "residency_after_store"]);
    let md = std::fs::read_to_string(d.join("sensitivity.md")).unwrap();
    assert!(
        md.contains("## `residency_after_store` (base 0; a structural option, other choice =1)"),
        "{md}"
    );
    assert!(
        md.contains("| workload | lock | threads | base (slowest–fastest) | =1 | =1 / base |"),
        "{md}"
    );
    assert!(!md.contains("| x0.5 |"), "{md}");
    let rows = csv_rows(&d.join("sensitivity.csv"));
    // 1 key x 2 locks x 2 thread counts.
    assert_eq!(rows.len(), 4);
    let alone = out_dir("simtools", "sensitivity-structural-alone");
    sweep(&alone, &["--set", "residency_after_store=1"]);
    let alone = csv_rows(&alone.join("points.csv"));
    for r in &rows {
        assert_eq!(r["half_value"].parse::<f64>().unwrap(), 1.0, "{r:?}");
        assert_eq!(
            (r["double"].as_str(), r["double_value"].as_str()),
            ("", ""),
            "{r:?}"
        );
        let own = alone
            .iter()
            .find(|p| p["lock"] == r["lock"] && p["threads"] == r["threads"])
            .unwrap();
        assert_eq!(
            r["half"].parse::<f64>().unwrap(),
            own["median_txn_per_sec"].parse::<f64>().unwrap(),
            "{r:?} against {own:?}"
        );
    }
    // The wait samples' arm is named as sens-matrix.py names the column.
    for r in csv_rows(&d.join("sensitivity-waits.csv")) {
        assert!(
            ["base", "residency_after_store=1"].contains(&r["arm"].as_str()),
            "{r:?}"
        );
    }
    let m = meta(&d);
    assert_eq!(m["sim"]["sensitivity"][0]["structural"], true);
    assert_eq!(m["sim"]["sensitivity"][0]["half"]["value"], 1.0);
}

#[test]
fn bad_values_exit_2_naming_the_argument() {
    for (args, names) in [
        (
            vec!["--set", "nope=1"],
            vec!["--set", "nope", "futex_wake_ns"],
        ),
        (vec!["--set", "futex_wake_ns"], vec!["--set", "KEY=VALUE"]),
        (
            vec!["--set", "futex_wake_ns=soon"],
            vec!["--set", "not a number"],
        ),
        (vec!["--set", "futex_wake_ns=-1"], vec!["--set"]),
        (
            vec!["--set", "shared_load_occupancy=2"],
            vec!["--set", "outside"],
        ),
        (
            vec!["--set", "shared_load_llc=2"],
            vec!["--set", "shared_load_llc", "outside"],
        ),
        (vec!["--set", "model=3"], vec!["--set", "model", "only 2"]),
        (vec!["--jobs", "0"], vec!["--jobs"]),
        (vec!["--jobs=-3"], vec!["--jobs"]),
        (vec!["--jobs", "two"], vec!["--jobs"]),
        (vec!["--sensitivity", "nope"], vec!["--sensitivity", "nope"]),
        (
            vec!["--sensitivity", "futex_wake_ns,nope"],
            vec!["--sensitivity", "nope"],
        ),
    ] {
        let mut a = vec!["--engine", "sim", "--out", "/nonexistent-never-written"];
        a.extend(args.iter());
        let o = bench(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {err}");
        for n in names {
            assert!(err.contains(n), "{a:?}: {n:?} not in {err}");
        }
        assert!(!err.contains("panicked"), "{a:?}: {err}");
    }
}
