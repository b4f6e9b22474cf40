//! The hand-written transaction shapes held against PostgreSQL 15: for each shape with a
//! pgbench counterpart, its lock acquisitions per transaction by tranche and mode, counted by
//! running it through the counting lock family (`lwharness::counting`), beside the PG15
//! trace's attempts per transaction (`trace-summary.csv`: acquire, conditional and
//! acquire-or-wait attempts, releases and waits left out). Prints the Markdown table of
//! `docs/results.md`.
//!
//! Usage: `cargo run -p bench --example shape_counts [-- TRACES_DIR]` (default `bench/traces`).

use lwharness::counting::{take_counts, CountingFamily};
use lwharness::locks::RawFamily;
use lwharness::snapshot::{Layout, Strategy};
use lwharness::workload::{run_transactions, Shared, Worker, WorkerConfig, Workload};
use lwlock::RawAtomicLwLock;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Counted = CountingFamily<RawFamily<RawAtomicLwLock>>;

/// `(tranche, mode)` → acquisitions per transaction.
type PerTxn = BTreeMap<(String, String), f64>;

const TXNS: u64 = 1000;

/// `(tranche, mode)` → acquisitions per transaction of `w`, one thread, no `--work`.
fn shape(w: Workload) -> PerTxn {
    let s = Shared::<Counted>::new(w, 1, Layout::Dense);
    let cfg = WorkerConfig {
        write_pct: 0,
        work: 0,
        time_every: 64,
        strategy: Strategy::Scan,
    };
    let mut worker = Worker::new(0, 1, cfg);
    if w.holds_pin() {
        s.buffer.pin();
    }
    let _ = take_counts();
    run_transactions(w, &s, &mut worker, TXNS);
    take_counts()
        .into_iter()
        .map(|((t, m), n)| ((t.to_string(), m.to_string()), n as f64 / TXNS as f64))
        .collect()
}

/// `(tranche, mode)` → acquire attempts per transaction in a trace's summary.
fn pg(dir: &Path) -> PerTxn {
    let path = dir.join("trace-summary.csv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("{}: {e}", path.display());
        std::process::exit(2)
    });
    let mut out = BTreeMap::new();
    for l in text.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        if f.len() != 4 {
            eprintln!("{}: bad row {l:?}", path.display());
            std::process::exit(2);
        }
        if matches!(f[2], "acquire" | "conditional" | "acquire_or_wait") {
            let v: f64 = f[3].parse().unwrap_or_else(|_| {
                eprintln!("{}: bad number in {l:?}", path.display());
                std::process::exit(2)
            });
            *out.entry((f[0].to_string(), f[1].to_string()))
                .or_insert(0.0) += v;
        }
    }
    out
}

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
    let groups = [
        (
            "pg15-S-c1",
            "`pgbench -S`",
            [
                "select-lmgr",
                "select-fastpath",
                "select-lazy-vxid",
                "pgbench-select",
            ]
            .as_slice(),
        ),
        (
            "pg15-N-c1",
            "`pgbench -N`",
            ["pgbench-n", "pgbench-write", "pgbench-write-status"].as_slice(),
        ),
    ];
    for (trace, what, shapes) in groups {
        let real = pg(&dir.join(trace));
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
    }
}
