//! Output files: `results.csv`, `points.csv`, `waits.csv`, `meta.json`, `summary.md` and one SVG
//! per workload.

use crate::locks::LockKind;
use crate::runner::{self, TrialResult};
use crate::snapshot::{Layout, Strategy};
use crate::workload::Workload;
use plotters::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// The proc-array layout and snapshot strategy of a point; empty where they do not apply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Variant {
    /// `--layout` name, or empty.
    pub layout: &'static str,
    /// `--snapshot` name, or empty.
    pub snapshot: &'static str,
}

impl Variant {
    /// `layout/snapshot`, leaving out what does not apply.
    pub fn label(&self) -> String {
        [self.layout, self.snapshot]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join("/")
    }
}

/// One row of `results.csv`: one trial of one point. Counts are totals for the trial; empty
/// cells mean "not measured here" (no PMU, or a lock without that counter, or no `stats`).
#[derive(Debug, Serialize)]
pub struct ResultRow {
    /// Workload name.
    pub workload: &'static str,
    /// Lock name.
    pub lock: &'static str,
    /// Proc-array layout (empty where it does not apply).
    pub layout: &'static str,
    /// Snapshot strategy (empty where it does not apply).
    pub snapshot: &'static str,
    /// Worker threads.
    pub threads: usize,
    /// Proc-array size.
    pub procs: usize,
    /// Trial number (1-based).
    pub trial: u32,
    /// Measured wall time, s.
    pub duration_s: f64,
    /// Lock operations.
    pub ops: u64,
    /// Transactions.
    pub txns: u64,
    /// Lock operations per second.
    pub ops_per_sec: f64,
    /// Transactions per second.
    pub txn_per_sec: f64,
    /// Jain's fairness index over per-thread transactions.
    pub jain: f64,
    /// Sampled operations timed (both modes).
    pub timed_ops: u64,
    /// Shared waits, ns.
    pub shared_wait_p50_ns: Option<u64>,
    /// Shared waits, ns.
    pub shared_wait_p99_ns: Option<u64>,
    /// Shared waits, ns.
    pub shared_wait_p999_ns: Option<u64>,
    /// Shared waits, ns.
    pub shared_wait_max_ns: Option<u64>,
    /// Exclusive (or group) waits, ns.
    pub excl_wait_p50_ns: Option<u64>,
    /// Exclusive (or group) waits, ns.
    pub excl_wait_p99_ns: Option<u64>,
    /// Exclusive (or group) waits, ns.
    pub excl_wait_p999_ns: Option<u64>,
    /// Exclusive (or group) waits, ns.
    pub excl_wait_max_ns: Option<u64>,
    /// Context switches of the workers.
    pub ctx_switches: u64,
    /// CPU migrations of the workers.
    pub cpu_migrations: Option<u64>,
    /// Workers' task clock, ms.
    pub task_clock_ms: Option<f64>,
    /// Hardware cache misses.
    pub cache_misses: Option<u64>,
    /// LLC read misses.
    pub llc_misses: Option<u64>,
    /// Cycles.
    pub cycles: Option<u64>,
    /// Instructions.
    pub instructions: Option<u64>,
    /// Semaphore sleeps (`stats`).
    pub blocks: Option<u64>,
    /// Spin-delay sleeps (`stats`).
    pub spin_delays: Option<u64>,
    /// Exclusive acquisitions (`stats`, or the group lock's count).
    pub excl_acquires: Option<u64>,
    /// Groups run by a group lock.
    pub groups: Option<u64>,
    /// Mean group size.
    pub mean_group_size: Option<f64>,
    /// Largest group.
    pub max_group_size: Option<u64>,
    /// Wait-event samples taken of the workers.
    pub wait_samples: u64,
    /// Percent of snapshots that took the strategy's fast path (reused, validated, copied).
    pub snapshot_fast_pct: Option<f64>,
    /// Whether the point this trial belongs to is bimodal.
    pub bimodal: bool,
}

fn quantile(h: &hdrhistogram::Histogram<u64>, q: f64) -> Option<u64> {
    (!h.is_empty()).then(|| h.value_at_quantile(q))
}

impl ResultRow {
    /// The row of `trial` (1-based) of a point.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        workload: Workload,
        lock: LockKind,
        variant: Variant,
        threads: usize,
        procs: usize,
        trial: u32,
        r: &TrialResult,
        bimodal: bool,
    ) -> Self {
        let (s, x) = (&r.shared_wait, &r.excl_wait);
        ResultRow {
            workload: workload.name(),
            lock: lock.name(),
            layout: variant.layout,
            snapshot: variant.snapshot,
            threads,
            procs,
            trial,
            duration_s: r.elapsed.as_secs_f64(),
            ops: r.ops,
            txns: r.txns,
            ops_per_sec: r.ops_per_sec().round(),
            txn_per_sec: r.txn_per_sec().round(),
            jain: (runner::jain(&r.per_thread) * 10_000.0).round() / 10_000.0,
            timed_ops: s.len() + x.len(),
            shared_wait_p50_ns: quantile(s, 0.5),
            shared_wait_p99_ns: quantile(s, 0.99),
            shared_wait_p999_ns: quantile(s, 0.999),
            shared_wait_max_ns: (!s.is_empty()).then(|| s.max()),
            excl_wait_p50_ns: quantile(x, 0.5),
            excl_wait_p99_ns: quantile(x, 0.99),
            excl_wait_p999_ns: quantile(x, 0.999),
            excl_wait_max_ns: (!x.is_empty()).then(|| x.max()),
            ctx_switches: r.counters.ctx_switches,
            cpu_migrations: r.counters.cpu_migrations,
            task_clock_ms: r
                .counters
                .task_clock_ns
                .map(|n| (n as f64 / 1e3).round() / 1e3),
            cache_misses: r.counters.cache_misses,
            llc_misses: r.counters.llc_misses,
            cycles: r.counters.cycles,
            instructions: r.counters.instructions,
            blocks: r.lock.blocks,
            spin_delays: r.lock.spin_delays,
            excl_acquires: r.lock.excl_acquires,
            groups: r.lock.groups,
            mean_group_size: r.lock.mean_group_size.map(|m| (m * 100.0).round() / 100.0),
            max_group_size: r.lock.max_group_size,
            wait_samples: r.waits.values().sum(),
            snapshot_fast_pct: r.snapshot_fast_pct(),
            bimodal,
        }
    }
}

/// One row of `waits.csv`: how often the sampler saw the workers of one trial in one state.
#[derive(Debug, Serialize)]
pub struct WaitRow {
    /// Workload name.
    pub workload: &'static str,
    /// Lock name.
    pub lock: &'static str,
    /// Proc-array layout (empty where it does not apply).
    pub layout: &'static str,
    /// Snapshot strategy (empty where it does not apply).
    pub snapshot: &'static str,
    /// Worker threads.
    pub threads: usize,
    /// Trial number.
    pub trial: u32,
    /// `LWLock`, `Spin`, `IPC`, or empty for a running thread.
    pub wait_event_type: String,
    /// The tranche or IPC event, or `(running)`.
    pub wait_event: String,
    /// Samples.
    pub samples: u64,
}

impl WaitRow {
    /// The rows of one trial.
    pub fn rows(
        workload: Workload,
        lock: LockKind,
        variant: Variant,
        threads: usize,
        trial: u32,
        waits: &BTreeMap<String, u64>,
    ) -> Vec<WaitRow> {
        waits
            .iter()
            .map(|(k, &n)| {
                let (t, e) = match k.split_once(':') {
                    Some((t, e)) => (t.to_string(), e.to_string()),
                    None => (String::new(), k.clone()),
                };
                WaitRow {
                    workload: workload.name(),
                    lock: lock.name(),
                    layout: variant.layout,
                    snapshot: variant.snapshot,
                    threads,
                    trial,
                    wait_event_type: t,
                    wait_event: e,
                    samples: n,
                }
            })
            .collect()
    }
}

/// One point (workload × lock × threads) over its trials: a row of `points.csv`.
#[derive(Clone, Debug, Serialize)]
pub struct PointRow {
    /// Workload name.
    pub workload: &'static str,
    /// Lock name.
    pub lock: &'static str,
    /// Proc-array layout (empty where it does not apply).
    pub layout: &'static str,
    /// Snapshot strategy (empty where it does not apply).
    pub snapshot: &'static str,
    /// Worker threads.
    pub threads: usize,
    /// Trials.
    pub trials: usize,
    /// Median ops/s.
    pub median_ops_per_sec: f64,
    /// Slowest trial.
    pub min_ops_per_sec: f64,
    /// Fastest trial.
    pub max_ops_per_sec: f64,
    /// Median transactions/s.
    pub median_txn_per_sec: f64,
    /// Median Jain index.
    pub median_jain: f64,
    /// Any trial below half the median.
    pub bimodal: bool,
    /// Top wait event over all trials (by samples), `(running)` excluded.
    pub top_wait_event: String,
    /// Its share of the workers' samples.
    pub top_wait_share: f64,
    /// Median percent of snapshots that took the strategy's fast path.
    pub snapshot_fast_pct: Option<f64>,
}

impl PointRow {
    /// Summarises the trials of one point.
    pub fn new(
        workload: Workload,
        lock: LockKind,
        variant: Variant,
        threads: usize,
        trials: &[TrialResult],
    ) -> Self {
        let ops: Vec<f64> = trials.iter().map(|t| t.ops_per_sec()).collect();
        let txn: Vec<f64> = trials.iter().map(|t| t.txn_per_sec()).collect();
        let jain: Vec<f64> = trials.iter().map(|t| runner::jain(&t.per_thread)).collect();
        let mut waits: BTreeMap<&str, u64> = BTreeMap::new();
        for t in trials {
            for (k, v) in &t.waits {
                *waits.entry(k.as_str()).or_default() += v;
            }
        }
        let total: u64 = waits.values().sum();
        let top = waits
            .iter()
            .filter(|(k, _)| **k != runner::RUNNING)
            .max_by_key(|(_, v)| **v);
        let fast: Vec<f64> = trials
            .iter()
            .filter_map(|t| t.snapshot_fast_pct())
            .collect();
        PointRow {
            workload: workload.name(),
            lock: lock.name(),
            layout: variant.layout,
            snapshot: variant.snapshot,
            threads,
            trials: trials.len(),
            median_ops_per_sec: runner::median(&ops).round(),
            min_ops_per_sec: ops.iter().copied().fold(f64::INFINITY, f64::min).round(),
            max_ops_per_sec: ops.iter().copied().fold(0.0, f64::max).round(),
            median_txn_per_sec: runner::median(&txn).round(),
            median_jain: (runner::median(&jain) * 1e4).round() / 1e4,
            bimodal: runner::bimodal(&ops),
            top_wait_event: top.map(|(k, _)| k.to_string()).unwrap_or_default(),
            top_wait_share: match top {
                Some((_, v)) if total > 0 => (*v as f64 / total as f64 * 1e3).round() / 1e3,
                _ => 0.0,
            },
            snapshot_fast_pct: (!fast.is_empty()).then(|| runner::median(&fast)),
        }
    }
}

impl PointRow {
    /// The series this point belongs to: lock, layout, strategy.
    fn series_key(&self) -> (&'static str, &'static str, &'static str) {
        (self.lock, self.layout, self.snapshot)
    }
}

/// The series (lines of a plot, columns of a table) among `pts`, in registry order, then
/// layout and strategy order, each with its label: the lock name, followed by the layout and
/// strategy when the workload was run with more than one of them.
fn series(pts: &[&PointRow]) -> Vec<((&'static str, &'static str, &'static str), String)> {
    let mut keys: Vec<(&str, &str, &str)> = Vec::new();
    for p in pts {
        if !keys.contains(&p.series_key()) {
            keys.push(p.series_key());
        }
    }
    let rank = |k: &(&str, &str, &str)| {
        let l = LockKind::ALL
            .iter()
            .position(|x| x.name() == k.0)
            .unwrap_or(usize::MAX);
        let y = Layout::ALL
            .iter()
            .position(|x| x.name() == k.1)
            .unwrap_or(0);
        let s = Strategy::ALL
            .iter()
            .position(|x| x.name() == k.2)
            .unwrap_or(0);
        (l, y, s)
    };
    keys.sort_by_key(rank);
    let many_layouts = keys.iter().any(|k| k.1 != keys[0].1);
    let many_snapshots = keys.iter().any(|k| k.2 != keys[0].2);
    keys.into_iter()
        .map(|k| {
            let v = Variant {
                layout: if many_layouts { k.1 } else { "" },
                snapshot: if many_snapshots { k.2 } else { "" },
            };
            let label = match v.label() {
                l if l.is_empty() => k.0.to_string(),
                l => format!("{} {l}", k.0),
            };
            (k, label)
        })
        .collect()
}

/// `12,345,678`.
pub fn thousands(x: f64) -> String {
    let s = format!("{:.0}", x.max(0.0));
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The pgbench-style table of one workload: rows = threads, columns = locks, median ops/s,
/// `*` after a bimodal point. Markdown when `md`, aligned text otherwise.
pub fn table(workload: Workload, points: &[PointRow], md: bool) -> String {
    let pts: Vec<&PointRow> = points
        .iter()
        .filter(|p| p.workload == workload.name())
        .collect();
    let cols = series(&pts);
    let locks: Vec<&str> = cols.iter().map(|(_, l)| l.as_str()).collect();
    let mut threads: Vec<usize> = pts.iter().map(|p| p.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    let cell = |t: usize, l: &str| -> String {
        let key = cols.iter().find(|(_, label)| label == l).map(|(k, _)| *k);
        pts.iter()
            .find(|p| p.threads == t && Some(p.series_key()) == key)
            .map(|p| {
                format!(
                    "{}{}",
                    thousands(p.median_ops_per_sec),
                    if p.bimodal { "*" } else { "" }
                )
            })
            .unwrap_or_else(|| "-".into())
    };
    let mut s = String::new();
    if md {
        let _ = writeln!(s, "| threads | {} |", locks.join(" | "));
        let _ = writeln!(s, "|---:|{}", "---:|".repeat(locks.len()));
        for &t in &threads {
            let cells: Vec<String> = locks.iter().map(|l| cell(t, l)).collect();
            let _ = writeln!(s, "| {t} | {} |", cells.join(" | "));
        }
    } else {
        let w = locks.iter().map(|l| l.len()).max().unwrap_or(0).max(13) + 2;
        let _ = write!(s, "{:>7}", "threads");
        for l in &locks {
            let _ = write!(s, "{l:>w$}");
        }
        s.push('\n');
        for &t in &threads {
            let _ = write!(s, "{t:>7}");
            for l in &locks {
                let _ = write!(s, "{:>w$}", cell(t, l));
            }
            s.push('\n');
        }
    }
    s
}

/// Throughput vs threads (log₂ x axis), one line per lock; bimodal points ringed in red.
pub fn plot(path: &Path, workload: Workload, points: &[PointRow]) -> Result<(), String> {
    let pts: Vec<&PointRow> = points
        .iter()
        .filter(|p| p.workload == workload.name())
        .collect();
    if pts.is_empty() {
        return Ok(());
    }
    let tmax = pts.iter().map(|p| p.threads).max().unwrap_or(1).max(2) as f64;
    let ymax = pts
        .iter()
        .map(|p| p.max_ops_per_sec)
        .fold(0.0, f64::max)
        .max(1.0)
        / 1e6
        * 1.1;
    let root = SVGBackend::new(path, (900, 540)).into_drawing_area();
    let e = |e: &dyn std::fmt::Display| format!("plot {}: {e}", path.display());
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let mut ch = ChartBuilder::on(&root)
        .caption(
            format!(
                "{}: throughput vs threads (median of trials)",
                workload.name()
            ),
            ("sans-serif", 22),
        )
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d((1f64..tmax).log_scale().base(2.0), 0f64..ymax)
        .map_err(|x| e(&x))?;
    ch.configure_mesh()
        .x_desc("threads")
        .y_desc("million lock operations / s")
        .x_label_formatter(&|x| format!("{}", x.round()))
        .draw()
        .map_err(|x| e(&x))?;
    for (i, (key, label)) in series(&pts).into_iter().enumerate() {
        let mut line: Vec<&&PointRow> = pts.iter().filter(|p| p.series_key() == key).collect();
        if line.is_empty() {
            continue;
        }
        line.sort_by_key(|p| p.threads);
        let color = Palette99::pick(i).to_rgba();
        let xy: Vec<(f64, f64)> = line
            .iter()
            .map(|p| (p.threads as f64, p.median_ops_per_sec / 1e6))
            .collect();
        ch.draw_series(LineSeries::new(xy.clone(), color.stroke_width(2)))
            .map_err(|x| e(&x))?
            .label(label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        ch.draw_series(
            xy.iter()
                .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
        )
        .map_err(|x| e(&x))?;
        ch.draw_series(line.iter().filter(|p| p.bimodal).map(|p| {
            Circle::new(
                (p.threads as f64, p.median_ops_per_sec / 1e6),
                7,
                RED.stroke_width(2),
            )
        }))
        .map_err(|x| e(&x))?;
    }
    ch.configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.85))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

/// `summary.md`: settings, then per workload the table, the wait-event profile at the highest
/// thread count and a pointer to the plot.
pub fn summary_md(meta: &serde_json::Value, workloads: &[Workload], points: &[PointRow]) -> String {
    let mut s = String::from("# lwbench results\n\n");
    let g = |k: &str| meta.get(k).map(|v| v.to_string()).unwrap_or_default();
    let _ = writeln!(
        s,
        "Command: `{}`  \nCPU: {} ({} cores); PMU available: {}; rustc: {}; commit: {}\n",
        meta["command_line"]
            .as_array()
            .map(|a| a
                .iter()
                .filter_map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join(" "))
            .unwrap_or_default(),
        meta["cpu_model"].as_str().unwrap_or("?"),
        g("cores"),
        g("pmu_available"),
        meta["rustc"].as_str().unwrap_or("?"),
        meta["git_commit"].as_str().unwrap_or("?"),
    );
    s.push_str(
        "Cells are the median lock operations per second over the trials; `*` marks a bimodal \
         point (some trial ran below half the median). Per-trial figures are in `results.csv`, \
         min/max per point in `points.csv`, wait-event samples in `waits.csv`.\n\n",
    );
    for &w in workloads {
        let _ = writeln!(s, "## {}\n\n{}\n", w.name(), w.description());
        s.push_str(&table(w, points, true));
        let pts: Vec<&PointRow> = points.iter().filter(|p| p.workload == w.name()).collect();
        if let Some(tmax) = pts.iter().map(|p| p.threads).max() {
            let _ = writeln!(s, "\nTop sampled wait event at {tmax} threads:\n");
            for p in pts.iter().filter(|p| p.threads == tmax) {
                let ev = if p.top_wait_event.is_empty() {
                    "none"
                } else {
                    &p.top_wait_event
                };
                let variant = Variant {
                    layout: p.layout,
                    snapshot: p.snapshot,
                }
                .label();
                let _ = writeln!(
                    s,
                    "- {}{}: {} ({:.1} % of samples), Jain {:.3}{}",
                    p.lock,
                    if variant.is_empty() {
                        String::new()
                    } else {
                        format!(" {variant}")
                    },
                    ev,
                    p.top_wait_share * 100.0,
                    p.median_jain,
                    p.snapshot_fast_pct
                        .map(|f| format!(", {f:.1} % of snapshots on the fast path"))
                        .unwrap_or_default()
                );
            }
        }
        let _ = writeln!(s, "\n![{0}]({0}.svg)\n", w.name());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(lock: &'static str, threads: usize, m: f64, bimodal: bool) -> PointRow {
        PointRow {
            workload: "snapshot",
            lock,
            layout: "dense",
            snapshot: "scan",
            threads,
            trials: 3,
            median_ops_per_sec: m,
            min_ops_per_sec: m / 2.0,
            max_ops_per_sec: m * 1.1,
            median_txn_per_sec: m,
            median_jain: 1.0,
            bimodal,
            top_wait_event: String::new(),
            top_wait_share: 0.0,
            snapshot_fast_pct: None,
        }
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0.0), "0");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(1234567.4), "1,234,567");
    }

    #[test]
    fn table_marks_bimodal_and_orders_columns() {
        let pts = vec![
            pt("atomic", 1, 1000.0, false),
            pt("classic", 1, 2000.0, false),
            pt("atomic", 4, 500.0, true),
        ];
        let t = table(Workload::Snapshot, &pts, false);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].find("classic").unwrap() < lines[0].find("atomic").unwrap());
        assert!(lines[2].contains("500*"), "{t}");
        assert!(lines[2].contains('-'));
        let md = table(Workload::Snapshot, &pts, true);
        assert!(md.starts_with("| threads | classic | atomic |"));
    }

    #[test]
    fn svg_is_written() {
        let dir = std::env::temp_dir().join(format!("lwbench-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("snapshot.svg");
        let pts = vec![pt("atomic", 1, 1e6, false), pt("atomic", 64, 2e6, true)];
        plot(&p, Workload::Snapshot, &pts).unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        assert!(svg.contains("<svg") && svg.contains("atomic"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
