//! The hand-written transaction shapes held against PostgreSQL 15 (`lwbench::shapes`): for each
//! shape with a pgbench counterpart, its lock acquisitions per transaction by tranche and mode,
//! beside the PG15 trace's attempts per transaction, then every listed difference with its
//! reason. Prints the Markdown tables of `docs/results.md`.
//!
//! Usage: `cargo run -p bench --example shape_counts [-- TRACES_DIR]` (default `bench/traces`).

use lwbench::shapes::{
    mismatches, pg, shape, PerTxn, Why, DIFFERENCES, ERA_DIFFERENCES, GROUPS, WAL_INSERT_LOCK_ERA,
};
use lwharness::workload::Workload;
use std::collections::BTreeSet;
use std::path::Path;

fn fmt(x: Option<&f64>) -> String {
    match x {
        None => "–".into(),
        Some(v) if *v > 0.0 && *v < 0.005 => "<0.01".into(),
        Some(v) if (v - v.round()).abs() < 0.005 => format!("{v:.0}"),
        Some(v) => format!("{v:.2}"),
    }
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "bench/traces".into());
    let dir = Path::new(&dir);
    let mut bad = Vec::new();
    for (trace, what, shapes) in GROUPS {
        let real = pg(&dir.join(trace)).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        });
        let counted: Vec<(&str, PerTxn)> = shapes
            .iter()
            .map(|n| (*n, shape(Workload::from_name(n).expect("a workload"))))
            .collect();
        let keys: BTreeSet<&(String, String)> = real
            .keys()
            .chain(counted.iter().flat_map(|(_, c)| c.keys()))
            .collect();
        println!("\n{what} (PostgreSQL 15 trace `bench/traces/{trace}`), acquisitions per transaction:\n");
        print!("| tranche | mode | PG15 |");
        for (n, _) in &counted {
            print!(" `{n}` |");
        }
        println!();
        print!("|---|---|---:|");
        for _ in &counted {
            print!("---:|");
        }
        println!();
        for k in keys {
            print!("| {} | {} | {} |", k.0, k.1, fmt(real.get(k)));
            for (_, c) in &counted {
                print!(" {} |", fmt(c.get(k)));
            }
            println!();
        }
        for (n, c) in &counted {
            bad.extend(mismatches(n, c, &real));
        }
    }
    println!("\nDifferences (shape, tranche, mode: why):\n");
    for (name, t, m, _, why) in DIFFERENCES {
        match why {
            Why::Era(e) => println!("* `{name}` {t} {m}: era: {e}"),
            Why::NotModelled(e) => println!("* `{name}` {t} {m}: {e}"),
        }
    }
    println!(
        "\nEra differences with `--era-traffic` (addition, tranche, mode, per transaction: why):\n"
    );
    for (e, t, m, v, why) in ERA_DIFFERENCES {
        let (Why::Era(w) | Why::NotModelled(w)) = why;
        println!("* `{}` {t} {m}, {}: {w}", e.name(), fmt(Some(v)));
    }
    println!("* `walinsertlock` WALInsert exclusive, the same count: {WAL_INSERT_LOCK_ERA}");
    for b in &bad {
        eprintln!("mismatch: {b}");
    }
    if !bad.is_empty() {
        std::process::exit(1);
    }
}
