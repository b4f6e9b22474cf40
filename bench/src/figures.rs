//! What a reader looks at: the stdout tables, `summary.md` and the SVGs. Everything here is drawn
//! from the [`PointRow`]s that `points.csv` holds, which are computed from the per-trial values as
//! `results.csv` writes them, so the three agree with the files number for number.
//!
//! Each workload leads with the unit its users think in: transactions per second (TPS) and the
//! average latency per transaction (threads / TPS, pgbench's "latency average" without think
//! time), with what one transaction is ([`unit()`]); the lock microbenchmarks `null` and `null-x`
//! lead with lock operations per second. Every median comes with the trials' min–max.

use crate::report::{LayoutSnapshot, PointRow};
use lwharness::registry::LockKind;
use lwharness::snapshot::{Layout, Strategy};
use lwharness::workload::{Counted, Workload};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::fmt::Write as _;
use std::path::Path;

/// What a workload counts and what one counted item is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unit {
    /// The rate's short name: `TPS` or `lock ops/s`.
    pub rate: &'static str,
    /// The rate spelled out, for headings.
    pub rate_long: &'static str,
    /// One counted item: `transaction` or `lock operation`.
    pub item: &'static str,
    /// What one transaction is in this workload.
    pub meaning: &'static str,
    /// The same in a few words.
    pub short: &'static str,
}

/// The unit of `w`'s figures, from its row of the workload table.
pub fn unit(w: Workload) -> Unit {
    let i = w.info();
    let (rate, rate_long, item) = match i.counted {
        Counted::Transactions => ("TPS", "transactions per second", "transaction"),
        Counted::LockOps => ("lock ops/s", "lock operations per second", "lock operation"),
    };
    Unit {
        rate,
        rate_long,
        item,
        meaning: i.meaning,
        short: i.short,
    }
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

/// `x` to three significant digits (`0.0435`, `1.20`, `12.3`, `123`, `1,234`).
pub fn sig3(x: f64) -> String {
    if !x.is_finite() || x <= 0.0 {
        return "0".into();
    }
    if x >= 999.5 {
        return thousands(x);
    }
    let mag = x.log10().floor() as i32;
    let decimals = (2 - mag).max(0) as usize;
    let s = format!("{x:.decimals$}");
    // 9.996 rounds up to "10.00": one digit too many.
    if s.trim_start_matches(['0', '.']).replace('.', "").len() > 3 && decimals > 0 {
        format!("{x:.prec$}", prec = decimals - 1)
    } else {
        s
    }
}

/// A wait in ns, readably: `41 ns`, `1.23 µs`, `9.80 ms`, `1.20 s`.
pub fn duration_ns(ns: f64) -> String {
    if ns < 999.5 {
        format!("{:.0} ns", ns.max(0.0))
    } else if ns < 1e6 {
        format!("{} µs", sig3(ns / 1e3))
    } else if ns < 1e9 {
        format!("{} ms", sig3(ns / 1e6))
    } else {
        format!("{} s", sig3(ns / 1e9))
    }
}

/// `lo` and `hi` as percent of `med`: `-0.5/+1.3%` (integers from 10 % on).
fn spread_pct(lo: f64, med: f64, hi: f64) -> String {
    if med <= 0.0 {
        return String::new();
    }
    let p = |x: f64| {
        let v = (x / med - 1.0) * 100.0;
        if v.abs() >= 9.95 {
            format!("{:.0}", v.abs())
        } else {
            format!("{:.1}", v.abs())
        }
    };
    format!("-{}/+{}%", p(lo), p(hi))
}

/// The latency unit of a table whose largest latency is `max_us` µs: (name, factor from µs).
fn latency_unit(max_us: f64) -> (&'static str, f64) {
    if max_us < 1.0 {
        ("ns", 1e3)
    } else if max_us < 1e3 {
        ("µs", 1.0)
    } else {
        ("ms", 1e-3)
    }
}

type SeriesKey = (&'static str, &'static str, &'static str);

/// The series (lines of a plot, columns of a table) among `pts`, in registry order, then
/// layout and strategy order, each with its label: the lock name, followed by the layout and
/// strategy when the workload was run with more than one of them.
fn series(pts: &[&PointRow]) -> Vec<(SeriesKey, String)> {
    let mut keys: Vec<SeriesKey> = Vec::new();
    for p in pts {
        if !keys.contains(&p.series_key()) {
            keys.push(p.series_key());
        }
    }
    let rank = |k: &SeriesKey| {
        let l = LockKind::BENCH_BUILT_IN
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
            let v = LayoutSnapshot {
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

/// The points of one workload, as rows (thread counts) × columns (series).
struct Grid<'a> {
    pts: Vec<&'a PointRow>,
    cols: Vec<(SeriesKey, String)>,
    threads: Vec<usize>,
}

impl<'a> Grid<'a> {
    fn new(workload: Workload, points: &'a [PointRow]) -> Self {
        let pts: Vec<&PointRow> = points
            .iter()
            .filter(|p| p.workload == workload.name())
            .collect();
        let cols = series(&pts);
        let mut threads: Vec<usize> = pts.iter().map(|p| p.threads).collect();
        threads.sort_unstable();
        threads.dedup();
        Grid { pts, cols, threads }
    }

    fn get(&self, threads: usize, col: usize) -> Option<&'a PointRow> {
        let key = self.cols[col].0;
        self.pts
            .iter()
            .copied()
            .find(|p| p.threads == threads && p.series_key() == key)
    }

    fn render(&self, md: bool, cell: impl Fn(&PointRow) -> String) -> String {
        let rows: Vec<(usize, Vec<String>)> = self
            .threads
            .iter()
            .map(|&t| {
                let cells = (0..self.cols.len())
                    .map(|c| self.get(t, c).map(&cell).unwrap_or_else(|| "-".into()))
                    .collect();
                (t, cells)
            })
            .collect();
        let labels: Vec<&str> = self.cols.iter().map(|(_, l)| l.as_str()).collect();
        let mut s = String::new();
        if md {
            let _ = writeln!(s, "| threads | {} |", labels.join(" | "));
            let _ = writeln!(s, "|---:|{}", "---:|".repeat(labels.len()));
            for (t, cells) in &rows {
                let _ = writeln!(s, "| {t} | {} |", cells.join(" | "));
            }
        } else {
            let w = rows
                .iter()
                .flat_map(|(_, c)| c.iter().map(|x| x.chars().count()))
                .chain(labels.iter().map(|l| l.chars().count()))
                .max()
                .unwrap_or(0)
                + 2;
            let _ = write!(s, "{:>7}", "threads");
            for l in &labels {
                let _ = write!(s, "{l:>w$}");
            }
            s.push('\n');
            for (t, cells) in &rows {
                let _ = write!(s, "{t:>7}");
                for c in cells {
                    let _ = write!(s, "{c:>w$}");
                }
                s.push('\n');
            }
        }
        s
    }
}

/// What a table shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// The workload's rate ([`unit()`]): TPS, or lock ops/s for `null` and `null-x`.
    Rate,
    /// Average latency per transaction, threads / TPS.
    Latency,
    /// Lock operations per second.
    LockOps,
    /// Exclusive (or group) waits, p50 / p99 (CLOG lock excluded).
    ExclWait,
    /// Shared waits, p50 / p99.
    SharedWait,
    /// CLOG-lock waits, p50 / p99.
    ClogWait,
}

fn wait_of(p: &PointRow, m: Metric) -> (Option<f64>, Option<f64>) {
    match m {
        Metric::ExclWait => (p.excl_wait_p50_ns, p.excl_wait_p99_ns),
        Metric::SharedWait => (p.shared_wait_p50_ns, p.shared_wait_p99_ns),
        Metric::ClogWait => (p.clog_wait_p50_ns, p.clog_wait_p99_ns),
        _ => (None, None),
    }
}

/// Whether any point of `workload` has a figure for `m` (waits are only timed in some modes).
pub fn has(workload: Workload, points: &[PointRow], m: Metric) -> bool {
    let mut pts = points.iter().filter(|p| p.workload == workload.name());
    match m {
        Metric::Rate | Metric::Latency => pts.next().is_some(),
        // Shown where a transaction is not one lock operation (more than rounding apart: the
        // window's two counters are read a few nanoseconds apart).
        Metric::LockOps => pts.any(|p| {
            (p.median_ops_per_sec - p.median_txn_per_sec).abs() > 1e-3 * p.median_txn_per_sec
        }),
        _ => pts.any(|p| wait_of(p, m).0.is_some()),
    }
}

/// The unit of the latency table of `workload` (`ns`, `µs` or `ms`).
pub fn latency_unit_of(workload: Workload, points: &[PointRow]) -> &'static str {
    let max = points
        .iter()
        .filter(|p| p.workload == workload.name())
        .filter_map(|p| p.max_latency_us)
        .fold(0.0, f64::max);
    latency_unit(max).0
}

/// One table of `workload`: rows = threads, columns = locks. Markdown cells give the median and
/// the trials' range, `median (min–max)`; text cells (stdout) the median and the range as percent
/// of it, `median -a/+b%`, or `median (min–max)` for latencies. `*` after a bimodal point's
/// median; `-` where the lock did not run.
pub fn table(workload: Workload, points: &[PointRow], metric: Metric, md: bool) -> String {
    let g = Grid::new(workload, points);
    let star = |p: &PointRow| if p.bimodal { "*" } else { "" };
    match metric {
        Metric::Rate | Metric::LockOps => g.render(md, |p| {
            let (med, lo, hi) = if metric == Metric::Rate {
                (p.median_txn_per_sec, p.min_txn_per_sec, p.max_txn_per_sec)
            } else {
                (p.median_ops_per_sec, p.min_ops_per_sec, p.max_ops_per_sec)
            };
            if md {
                format!(
                    "{}{} ({}–{})",
                    thousands(med),
                    star(p),
                    thousands(lo),
                    thousands(hi)
                )
            } else {
                format!("{}{} {}", thousands(med), star(p), spread_pct(lo, med, hi))
            }
        }),
        Metric::Latency => {
            let max = g
                .pts
                .iter()
                .filter_map(|p| p.max_latency_us)
                .fold(0.0, f64::max);
            let (_, f) = latency_unit(max);
            // A trial that finished no transaction has no latency bound: "∞".
            let cell = |v: Option<f64>| v.map_or("∞".to_string(), |v| sig3(v * f));
            g.render(md, |p| {
                format!(
                    "{}{} ({}–{})",
                    cell(p.latency_avg_us),
                    star(p),
                    cell(p.min_latency_us),
                    cell(p.max_latency_us)
                )
            })
        }
        _ => g.render(md, |p| match wait_of(p, metric) {
            (Some(a), Some(b)) => format!("{} / {}", duration_ns(a), duration_ns(b)),
            _ => "-".into(),
        }),
    }
}

/// The stdout block of one workload: what a transaction is, the rate table and the latency table.
pub fn stdout_tables(
    workload: Workload,
    points: &[PointRow],
    trials: u32,
    duration: &str,
) -> String {
    let u = unit(workload);
    let mut s = String::new();
    let _ = writeln!(s, "\n{}: one {} = {}", workload.name(), u.item, u.meaning);
    let _ = writeln!(
        s,
        "{}: median of {trials} trials of {duration}, then the slowest/fastest trial as % of the \
         median (* = bimodal)",
        u.rate
    );
    s.push_str(&table(workload, points, Metric::Rate, false));
    let _ = writeln!(
        s,
        "latency average per {}, {} (threads / {}): median (fastest–slowest trial)",
        u.item,
        latency_unit_of(workload, points),
        u.rate
    );
    s.push_str(&table(workload, points, Metric::Latency, false));
    s
}

/// A rate axis' scale for its largest value `top`: the divisor and the label's prefix.
fn rate_scale(top: f64) -> (f64, &'static str) {
    if top >= 1e6 {
        (1e6, "million ")
    } else if top >= 1e3 {
        (1e3, "thousand ")
    } else {
        (1.0, "")
    }
}

/// A log₂ axis' tick label: powers of two only (the log axis puts its ticks there).
fn pow2_label(x: &f64) -> String {
    let r = x.round();
    if r >= 1.0 && (x - r).abs() < 1e-6 {
        format!("{r}")
    } else {
        String::new()
    }
}

/// The legend right of the plot, from its top left `(x0, y)`: per entry a line sample (two
/// dashes for `dashed`) in its colour and its label, one entry every 18 pixels.
fn draw_legend(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    (x0, mut y): (i32, i32),
    legend: Vec<(String, RGBAColor, bool)>,
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    for (label, color, dashed) in legend {
        let style = color.stroke_width(2);
        let segs = if dashed {
            vec![vec![(x0, y), (x0 + 8, y)], vec![(x0 + 12, y), (x0 + 20, y)]]
        } else {
            vec![vec![(x0, y), (x0 + 20, y)]]
        };
        for seg in segs {
            root.draw(&PathElement::new(seg, style))?;
        }
        root.draw(&Text::new(
            label,
            (x0 + 26, y - 6),
            ("sans-serif", 13).into_font().color(&BLACK),
        ))?;
        y += 18;
    }
    Ok(())
}

/// The workload's rate against threads (log₂ x axis), one line per lock through the medians,
/// error bars from the slowest to the fastest trial, bimodal points ringed in red, and a vertical
/// mark at the machine's `cores`.
pub fn plot(
    path: &Path,
    workload: Workload,
    points: &[PointRow],
    cores: usize,
) -> Result<(), String> {
    let g = Grid::new(workload, points);
    if g.pts.is_empty() {
        return Ok(());
    }
    let u = unit(workload);
    let tmax = g.pts.iter().map(|p| p.threads).max().unwrap_or(1).max(2) as f64;
    let top = g
        .pts
        .iter()
        .map(|p| p.max_txn_per_sec)
        .fold(0.0, f64::max)
        .max(1.0);
    let (scale, prefix) = rate_scale(top);
    let ymax = top / scale * 1.1;
    let trials = g.pts.iter().map(|p| p.trials).max().unwrap_or(0);
    let cores_on_axis = (1.0..=tmax * 1.18).contains(&(cores as f64));
    let root = SVGBackend::new(path, (1000, 540)).into_drawing_area();
    let e = |e: &dyn std::fmt::Display| format!("plot {}: {e}", path.display());
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let mut ch = ChartBuilder::on(&root)
        .caption(
            format!(
                "{}: {} vs threads (median; bars: min–max of {trials} trials{})",
                workload.name(),
                u.rate,
                if cores_on_axis {
                    String::new()
                } else {
                    format!("; {cores} cores, off the axis")
                }
            ),
            ("sans-serif", 20),
        )
        .margin(12)
        // Room on the right for the legend, so that it hides no line.
        .margin_right(170)
        .x_label_area_size(45)
        .y_label_area_size(70)
        // A little room either side, so the end points and their bars clear the axes.
        .build_cartesian_2d((0.85f64..tmax * 1.18).log_scale().base(2.0), 0f64..ymax)
        .map_err(|x| e(&x))?;
    ch.configure_mesh()
        .x_desc("threads")
        .y_desc(format!("{prefix}{}", u.rate_long))
        .x_labels(16)
        .x_label_formatter(&pow2_label)
        .draw()
        .map_err(|x| e(&x))?;
    // The legend, drawn right of the plot so that it hides no line: (label, colour, dashed).
    let mut legend: Vec<(String, RGBAColor, bool)> = Vec::new();
    if cores_on_axis {
        let c = cores as f64;
        let grey = RGBColor(90, 90, 90);
        // Dashed, to tell it from the mesh line at the same thread count.
        let dashes = 24;
        ch.draw_series((0..dashes).map(|i| {
            let y0 = ymax * i as f64 / dashes as f64;
            PathElement::new(
                vec![(c, y0), (c, y0 + ymax * 0.6 / dashes as f64)],
                grey.stroke_width(2),
            )
        }))
        .map_err(|x| e(&x))?;
        legend.push((format!("{cores} cores"), grey.to_rgba(), true));
        ch.draw_series(std::iter::once(Text::new(
            format!("{cores} cores"),
            (c * 1.03, ymax * 0.97),
            ("sans-serif", 13).into_font().color(&grey),
        )))
        .map_err(|x| e(&x))?;
    }
    for (i, (key, label)) in g.cols.iter().enumerate() {
        let mut line: Vec<&PointRow> = g
            .pts
            .iter()
            .copied()
            .filter(|p| p.series_key() == *key)
            .collect();
        line.sort_by_key(|p| p.threads);
        let color = Palette99::pick(i).to_rgba();
        let xy: Vec<(f64, f64)> = line
            .iter()
            .map(|p| (p.threads as f64, p.median_txn_per_sec / scale))
            .collect();
        ch.draw_series(LineSeries::new(xy.clone(), color.stroke_width(2)))
            .map_err(|x| e(&x))?;
        legend.push((label.clone(), color, false));
        ch.draw_series(
            xy.iter()
                .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
        )
        .map_err(|x| e(&x))?;
        // Error bars: the slowest to the fastest trial, with 8-pixel caps.
        for p in &line {
            let (x, lo, hi) = (
                p.threads as f64,
                p.min_txn_per_sec / scale,
                p.max_txn_per_sec / scale,
            );
            let cap = |y: f64| {
                EmptyElement::at((x, y))
                    + PathElement::new(vec![(-4, 0), (4, 0)], color.stroke_width(1))
            };
            ch.draw_series(std::iter::once(PathElement::new(
                vec![(x, lo), (x, hi)],
                color.stroke_width(1),
            )))
            .map_err(|x| e(&x))?;
            ch.draw_series([cap(lo), cap(hi)]).map_err(|x| e(&x))?;
        }
        ch.draw_series(line.iter().filter(|p| p.bimodal).map(|p| {
            Circle::new(
                (p.threads as f64, p.median_txn_per_sec / scale),
                7,
                RED.stroke_width(2),
            )
        }))
        .map_err(|x| e(&x))?;
    }
    let (xs, ys) = ch.plotting_area().get_pixel_range();
    draw_legend(&root, (xs.end + 16, ys.start + 8), legend).map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

/// One line of [`plot_versus`]: its label, its points `(x, median, low, high)`, and whether it is
/// a published series (drawn dashed with square marks, no bars) or ours (solid, with bars).
#[derive(Clone, Debug)]
pub struct VersusSeries {
    /// Legend label.
    pub label: String,
    /// `(clients, median, low, high)`; a published point has `low == high == median`.
    pub points: Vec<(f64, f64, f64, f64)>,
    /// A published (the thread's) series.
    pub published: bool,
}

/// A published curve beside ours: `y_desc` against clients (log₂ x axis), the published series
/// dashed with squares, ours solid with min–max bars; the legend right of the plot. Each
/// published series shares its colour with the series of ours listed right after it.
pub fn plot_versus(
    path: &Path,
    title: &str,
    y_desc: &str,
    series: &[VersusSeries],
) -> Result<(), String> {
    let all = series.iter().flat_map(|s| s.points.iter());
    let xmax = all.clone().map(|p| p.0).fold(2.0, f64::max);
    let top = all.map(|p| p.3.max(p.1)).fold(0.0, f64::max).max(1.0);
    if series.iter().all(|s| s.points.is_empty()) {
        return Ok(());
    }
    let (scale, prefix) = rate_scale(top);
    let ymax = top / scale * 1.1;
    let root = SVGBackend::new(path, (1000, 540)).into_drawing_area();
    let e = |e: &dyn std::fmt::Display| format!("plot {}: {e}", path.display());
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let mut ch = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .margin_right(260)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d((0.85f64..xmax * 1.18).log_scale().base(2.0), 0f64..ymax)
        .map_err(|x| e(&x))?;
    ch.configure_mesh()
        .x_desc("clients")
        .y_desc(format!("{prefix}{y_desc}"))
        .x_labels(16)
        .x_label_formatter(&pow2_label)
        .draw()
        .map_err(|x| e(&x))?;
    let mut legend = Vec::new();
    let mut colour = 0;
    for (i, s) in series.iter().enumerate() {
        let color = Palette99::pick(colour).to_rgba();
        // A published series and ours after it share a colour.
        if !(s.published && series.get(i + 1).is_some_and(|n| !n.published)) {
            colour += 1;
        }
        let mut pts = s.points.clone();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let xy: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1 / scale)).collect();
        if s.published {
            // Dashed: short segments along each leg.
            for w in xy.windows(2) {
                let (a, b) = (w[0], w[1]);
                for k in 0..8 {
                    let t0 = k as f64 / 8.0;
                    let t1 = t0 + 0.5 / 8.0;
                    let at = |t: f64| (a.0 * (b.0 / a.0).powf(t), a.1 + (b.1 - a.1) * t);
                    ch.draw_series(std::iter::once(PathElement::new(
                        vec![at(t0), at(t1)],
                        color.stroke_width(2),
                    )))
                    .map_err(|x| e(&x))?;
                }
            }
            ch.draw_series(xy.iter().map(|&(x, y)| {
                EmptyElement::at((x, y)) + Rectangle::new([(-4, -4), (4, 4)], color.stroke_width(2))
            }))
            .map_err(|x| e(&x))?;
        } else {
            ch.draw_series(LineSeries::new(xy.clone(), color.stroke_width(2)))
                .map_err(|x| e(&x))?;
            ch.draw_series(
                xy.iter()
                    .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
            )
            .map_err(|x| e(&x))?;
            for p in &pts {
                ch.draw_series(std::iter::once(PathElement::new(
                    vec![(p.0, p.2 / scale), (p.0, p.3 / scale)],
                    color.stroke_width(1),
                )))
                .map_err(|x| e(&x))?;
            }
        }
        legend.push((s.label.clone(), color, s.published));
    }
    let (xs, ys) = ch.plotting_area().get_pixel_range();
    draw_legend(&root, (xs.end + 16, ys.start + 8), legend).map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

fn opt(v: Option<f64>) -> String {
    v.map(thousands).unwrap_or_else(|| "-".into())
}

/// A simulated claim: a point's median over at least this many trials (seeds), with its spread.
pub const SIM_CLAIM_TRIALS: u64 = 10;

/// The simulated run in one paragraph (`summary.md`, `sensitivity.md`): profile, cores, seeds,
/// trials with what a claim needs, and the `--set` overrides.
pub fn sim_header(meta: &serde_json::Value) -> String {
    let sim = &meta["sim"];
    let trials = meta["settings"]["trials"].as_u64().unwrap_or(0);
    let mut s = format!(
        "**Engine: sim.** Simulated by lwsim on `{}` ({} of its hardware threads), seed {} \
         (trial k uses a seed derived from it and k), {trials} trials (seeds) of {} virtual per \
         point. Every cell is the median over a point's trials with its slowest and fastest \
         trial, `*` where it is bimodal: a simulated claim is such a median over at least \
         {SIM_CLAIM_TRIALS} trials (seeds), with its spread.",
        sim["platform"].as_str().unwrap_or("?"),
        sim["cores"],
        sim["seed"],
        duration_ns(
            meta["settings"]["requested_duration_s"]
                .as_f64()
                .unwrap_or(0.0)
                * 1e9
        ),
    );
    if trials < SIM_CLAIM_TRIALS {
        let _ = write!(
            s,
            " **{trials} trials per point: fewer than {SIM_CLAIM_TRIALS}, so these figures \
             indicate, they do not establish a claim.**"
        );
    }
    let overrides: Vec<String> = sim["overrides"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            format!(
                "`{}` = {} (profile: {})",
                o["key"].as_str().unwrap_or("?"),
                o["value"],
                o["profile"]
            )
        })
        .collect();
    if !overrides.is_empty() {
        let _ = write!(
            s,
            " **Profile overrides (`--set`):** {}.",
            overrides.join(", ")
        );
    }
    s
}

/// `summary.md`: settings, then per workload what a transaction is, the rate and latency tables
/// with their spread, lock operations/s where they differ from the rate, the sampled wait
/// percentiles, the lock counters of a `stats` build, the wait-event profile at the highest thread
/// count and the plot.
pub fn summary_md(meta: &serde_json::Value, workloads: &[Workload], points: &[PointRow]) -> String {
    let mut s = String::from("# lwbench results\n\n");
    let g = |k: &str| meta.get(k).map(|v| v.to_string()).unwrap_or_default();
    let _ = writeln!(
        s,
        "Command: `{}`  \nCPU: {} ({} CPUs); PMU available: {}; context switches from {}; \
         rustc: {}; commit: {}\n",
        meta["command_line"]
            .as_array()
            .map(|a| a
                .iter()
                .filter_map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join(" "))
            .unwrap_or_default(),
        meta["cpu_model"].as_str().unwrap_or("?"),
        g("host_cpus"),
        g("pmu_available"),
        meta["ctx_switch_source"].as_str().unwrap_or("?"),
        meta["rustc"].as_str().unwrap_or("?"),
        meta["git_commit"].as_str().unwrap_or("?"),
    );
    s.push_str(
        "Each workload leads with the unit its users think in: transactions per second (TPS) and \
         the average latency per transaction, threads / TPS (pgbench's \"latency average\" \
         without think time); the lock microbenchmarks `null` and `null-x` count lock \
         operations. Cells are the median over the trials with the slowest and fastest trial \
         in parentheses; `*` marks a bimodal point (some trial ran below half the median). \
         Per-trial figures are in `results.csv`, per-point medians and ranges in `points.csv`, \
         wait-event samples in `waits.csv`.\n\n",
    );
    if meta["engine"].as_str() == Some("sim") {
        let _ = writeln!(
            s,
            "{} Every duration, rate and wait is virtual time; the warm-up runs inside each \
             trial; counters cover the window only. The PMU columns stay empty: the \
             simulator's stand-ins are the `sim_*` columns (line transfers per lock operation \
             by kind, line-wait time, futex sleeps and wakes, preemptions).\n",
            sim_header(meta)
        );
    }
    if meta["settings"]["interleave"].as_bool() == Some(true) {
        s.push_str(
            "**Interleaved** (`--interleave`): at each point the locks' trials ran in turn (trial \
             1 of every lock, then trial 2, each round starting from the next lock), each after \
             its own warm-up and from PostgreSQL's initial spin estimate; the order is \
             `trial_order` in `meta.json`.\n\n",
        );
    }
    let trials: usize = points.iter().map(|p| p.trials).sum();
    let complete: usize = points
        .iter()
        .filter(|p| p.engine != "sim")
        .map(|p| p.counters_complete_trials)
        .sum::<usize>()
        + points
            .iter()
            .filter(|p| p.engine == "sim")
            .map(|p| p.trials)
            .sum::<usize>();
    if complete < trials {
        let _ = writeln!(
            s,
            "**Perf counters incomplete in {} of {trials} trials**: some workers could not open \
             their counters (file descriptors? see `counters_threads` in `results.csv`); those \
             trials' counter columns are left empty rather than summed over the workers that \
             did.\n",
            trials - complete
        );
    }
    for &w in workloads {
        let pts: Vec<&PointRow> = points.iter().filter(|p| p.workload == w.name()).collect();
        let _ = writeln!(s, "## {}\n\n{}.\n", w.name(), w.description());
        if pts.is_empty() {
            s.push_str("No points were run.\n\n");
            continue;
        }
        let u = unit(w);
        let _ = writeln!(s, "One {}: {}.\n", u.item, u.meaning);
        let mut heading = u.rate_long.to_string();
        heading[..1].make_ascii_uppercase();
        let _ = writeln!(
            s,
            "**{heading}** ({}), median (slowest–fastest trial):\n",
            u.rate
        );
        s.push_str(&table(w, points, Metric::Rate, true));
        let _ = writeln!(
            s,
            "\n**Latency average** per {}, {} = threads / {}: median (at the fastest–slowest \
             trial):\n",
            u.item,
            latency_unit_of(w, points),
            u.rate
        );
        s.push_str(&table(w, points, Metric::Latency, true));
        if has(w, points, Metric::LockOps) {
            s.push_str("\n**Lock operations per second**, median (slowest–fastest trial):\n\n");
            s.push_str(&table(w, points, Metric::LockOps, true));
        }
        let mut waits_intro = false;
        for (m, what) in [
            (Metric::ExclWait, "Exclusive (or group)"),
            (Metric::ClogWait, "CLOG lock, exclusive (or group)"),
            (Metric::SharedWait, "Shared"),
        ] {
            if has(w, points, m) {
                if !std::mem::replace(&mut waits_intro, true) {
                    s.push_str(
                        "\n**Waits** from asking for a lock until the critical section (or \
                         the grouped operation) began, p50 / p99, one operation in \
                         `--time-every` timed; median over the trials of each trial's \
                         percentile.",
                    );
                    if let Some(floor) = meta["timer_floor_ns"].as_f64() {
                        let _ = write!(
                            s,
                            " An empty timed interval costs {floor:.0} ns on this machine \
                             (clock `{}`, `timer_floor_ns`): a percentile at or near it is \
                             timer overhead, not a wait.",
                            meta["timer_source"].as_str().unwrap_or("?")
                        );
                    }
                    s.push('\n');
                }
                let _ = writeln!(s, "\n*{what}:*\n");
                s.push_str(&table(w, points, m, true));
            }
        }
        let stats = pts.iter().any(|p| {
            p.blocks.is_some()
                || p.spin_delays.is_some()
                || p.excl_acquires.is_some()
                || p.groups.is_some()
        });
        if stats {
            s.push_str(
                "\n**Lock counters** per trial (LWLOCK_STATS and the group locks' counters; \
                 medians over the trials, the largest group of any trial):\n\n\
                 | lock | threads | blocks | spin_delays | excl_acquires | groups | mean group \
                 size | max group size |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
            );
            let cols = series(&pts);
            for (key, label) in &cols {
                let mut line: Vec<&&PointRow> =
                    pts.iter().filter(|p| p.series_key() == *key).collect();
                line.sort_by_key(|p| p.threads);
                for p in line {
                    let _ = writeln!(
                        s,
                        "| {label} | {} | {} | {} | {} | {} | {} | {} |",
                        p.threads,
                        opt(p.blocks),
                        opt(p.spin_delays),
                        opt(p.excl_acquires),
                        opt(p.groups),
                        p.mean_group_size
                            .map(|m| format!("{m:.2}"))
                            .unwrap_or_else(|| "-".into()),
                        p.max_group_size
                            .map(|m| m.to_string())
                            .unwrap_or_else(|| "-".into()),
                    );
                }
            }
        }
        if pts.iter().any(|p| p.sim_transfers_per_op.is_some()) {
            s.push_str(
                "\n**Simulated costs** per lock operation (medians over the trials): exclusive \
                 acquisitions (`stats` build), line transfers, line-wait time, futex sleeps; \
                 preemptions per window:\n\n\
                 | lock | threads | excl_acquires/op | transfers/op | line wait ns/op | futex \
                 sleeps/op | preemptions |\n|---|---:|---:|---:|---:|---:|---:|\n",
            );
            let f = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"));
            for (key, label) in &series(&pts) {
                let mut line: Vec<&&PointRow> =
                    pts.iter().filter(|p| p.series_key() == *key).collect();
                line.sort_by_key(|p| p.threads);
                for p in line {
                    let _ = writeln!(
                        s,
                        "| {label} | {} | {} | {} | {} | {} | {} |",
                        p.threads,
                        f(p.excl_acquires_per_op),
                        f(p.sim_transfers_per_op),
                        f(p.sim_line_wait_ns_per_op),
                        f(p.sim_futex_sleeps_per_op),
                        p.sim_preemptions
                            .map_or_else(|| "-".into(), |v| format!("{v:.0}")),
                    );
                }
            }
        }
        if let Some(tmax) = pts.iter().map(|p| p.threads).max() {
            let _ = writeln!(s, "\nTop sampled wait event at {tmax} threads:\n");
            for p in pts.iter().filter(|p| p.threads == tmax) {
                let ev = if !p.instrumented {
                    "not instrumented (the lock publishes no wait events)"
                } else if p.top_wait_event.is_empty() {
                    "none"
                } else {
                    &p.top_wait_event
                };
                let layout_snapshot = LayoutSnapshot {
                    layout: p.layout,
                    snapshot: p.snapshot,
                }
                .label();
                let share = if p.instrumented {
                    format!(" ({:.1} % of samples)", p.top_wait_share * 100.0)
                } else {
                    String::new()
                };
                let jain = if p.fair_short {
                    format!(
                        "{:.3} (not meaningful: {:.0} context switches per thread, fewer \
                         than {:.0}; run longer trials)",
                        p.median_jain,
                        p.median_cs_per_thread,
                        crate::report::FAIR_MIN_SLICES
                    )
                } else {
                    format!("{:.3}", p.median_jain)
                };
                let _ = writeln!(
                    s,
                    "- {}{}: {}{share}, Jain {jain}, sampler {:.1} % of a core{}",
                    p.lock,
                    if layout_snapshot.is_empty() {
                        String::new()
                    } else {
                        format!(" {layout_snapshot}")
                    },
                    ev,
                    p.sampler_cpu_pct,
                    p.snapshot_fast_pct
                        .map(|f| format!(", {f:.1} % of snapshots on the fast path"))
                        .unwrap_or_default()
                );
            }
        }
        let _ = writeln!(
            s,
            "\n![{0}: {1} vs threads, median and min–max]({2}.svg)\n",
            w.name(),
            u.rate,
            w.file_stem()
        );
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
            median_txn_per_sec: m,
            min_txn_per_sec: m / 2.0,
            max_txn_per_sec: m * 1.1,
            latency_avg_us: Some(threads as f64 / m * 1e6),
            min_latency_us: Some(threads as f64 / (m * 1.1) * 1e6),
            max_latency_us: Some(threads as f64 / (m / 2.0) * 1e6),
            median_ops_per_sec: m,
            min_ops_per_sec: m / 2.0,
            max_ops_per_sec: m * 1.1,
            median_jain: 1.0,
            bimodal,
            shared_wait_p50_ns: Some(41.0),
            shared_wait_p99_ns: Some(1500.0),
            excl_wait_p50_ns: None,
            excl_wait_p99_ns: None,
            clog_wait_p50_ns: None,
            clog_wait_p99_ns: None,
            counters_complete_trials: 3,
            blocks: None,
            spin_delays: None,
            excl_acquires: None,
            groups: None,
            mean_group_size: None,
            max_group_size: None,
            top_wait_event: String::new(),
            top_wait_share: 0.0,
            snapshot_fast_pct: None,
            median_cs_per_thread: 50.0,
            fair_short: false,
            instrumented: true,
            sampler_cpu_pct: 0.5,
            engine: "real",
            platform: "host".into(),
            cores: 2,
            excl_acquires_per_op: None,
            sim_transfers_per_op: None,
            sim_line_wait_ns_per_op: None,
            sim_futex_sleeps_per_op: None,
            sim_preemptions: None,
            proc_array_excl_per_txn: None,
            clog_excl_per_txn: None,
            cpu_busy_pct: None,
            cpu_s_per_txn: None,
            waits: Default::default(),
        }
    }

    #[test]
    fn number_formats() {
        assert_eq!(thousands(0.0), "0");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(1234567.4), "1,234,567");
        assert_eq!(sig3(0.043512), "0.0435");
        assert_eq!(sig3(1.2), "1.20");
        assert_eq!(sig3(12.34), "12.3");
        assert_eq!(sig3(123.4), "123");
        assert_eq!(sig3(9.996), "10.0");
        assert_eq!(sig3(1234.0), "1,234");
        assert_eq!(duration_ns(41.0), "41 ns");
        assert_eq!(duration_ns(9_800_000.0), "9.80 ms");
        assert_eq!(spread_pct(90.0, 100.0, 101.5), "-10/+1.5%");
    }

    #[test]
    fn units_say_what_a_transaction_is() {
        for &w in Workload::ALL {
            let u = unit(w);
            assert!(!u.meaning.is_empty());
            let micro = matches!(w, Workload::Null | Workload::NullX);
            assert_eq!(u.rate == "TPS", !micro, "{}", w.name());
        }
        assert!(unit(Workload::PgbenchWrite).meaning.contains("CLOG commit"));
    }

    #[test]
    fn tables_mark_bimodal_order_columns_and_show_the_spread() {
        let pts = vec![
            pt("atomic", 1, 1000.0, false),
            pt("classic", 1, 2000.0, false),
            pt("atomic", 4, 500.0, true),
        ];
        let t = table(Workload::Snapshot, &pts, Metric::Rate, false);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].find("classic").unwrap() < lines[0].find("atomic").unwrap());
        assert!(lines[2].contains("500* -50/+10%"), "{t}");
        assert!(lines[2].contains('-'));
        let md = table(Workload::Snapshot, &pts, Metric::Rate, true);
        assert!(md.starts_with("| threads | classic | atomic |"), "{md}");
        assert!(
            md.contains("| 2,000 (1,000–2,200) | 1,000 (500–1,100) |"),
            "{md}"
        );
        // 1 thread at 1000 TPS: 1 ms per transaction, so the table is in ms.
        assert_eq!(latency_unit_of(Workload::Snapshot, &pts), "ms");
        let lat = table(Workload::Snapshot, &pts, Metric::Latency, true);
        assert!(
            lat.contains("| 0.500 (0.455–1.00) | 1.00 (0.909–2.00) |"),
            "{lat}"
        );
        let w = table(Workload::Snapshot, &pts, Metric::SharedWait, true);
        assert!(w.contains("41 ns / 1.50 µs"), "{w}");
        assert!(has(Workload::Snapshot, &pts, Metric::SharedWait));
        assert!(!has(Workload::Snapshot, &pts, Metric::ExclWait));
        assert!(!has(Workload::Snapshot, &pts, Metric::LockOps));
    }

    /// A trial that finished no transaction (0 TPS) has an unbounded latency: "∞", never 0.
    #[test]
    fn a_trial_with_no_transaction_shows_an_unbounded_latency() {
        let mut p = pt("atomic", 4, 1000.0, true);
        p.min_txn_per_sec = 0.0;
        p.max_latency_us = None;
        let lat = table(Workload::Snapshot, &[p], Metric::Latency, true);
        assert!(lat.contains("–∞) |"), "{lat}");
    }

    #[test]
    fn a_published_curve_beside_ours_is_drawn_with_both_legends() {
        let dir = std::env::temp_dir().join(format!("lwbench-versus-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("versus.svg");
        let seed = VersusSeries {
            label: "the thread: 9.1".into(),
            points: vec![
                (1.0, 7800.0, 7800.0, 7800.0),
                (24.0, 117_000.0, 117_000.0, 117_000.0),
            ],
            published: true,
        };
        let ours = VersusSeries {
            label: "sim: select-lmgr, classic".into(),
            points: vec![
                (1.0, 7900.0, 7800.0, 8000.0),
                (24.0, 180_000.0, 170_000.0, 190_000.0),
            ],
            published: false,
        };
        plot_versus(&path, "seed 000", "TPS", &[seed, ours]).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.contains("the thread: 9.1") && svg.contains("sim: select-lmgr, classic"));
        assert!(svg.contains("thousand TPS"), "the axis is scaled");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn summary_has_spread_waits_and_the_stats_table_when_counted() {
        let meta = serde_json::json!({"host_cpus": 2, "command_line": ["bench"]});
        let mut pts = vec![
            pt("atomic", 1, 1000.0, false),
            pt("atomic", 4, 800.0, false),
        ];
        let plain = summary_md(&meta, &[Workload::Snapshot], &pts);
        assert!(
            plain.contains("**Transactions per second** (TPS)"),
            "{plain}"
        );
        assert!(plain.contains("| 1 | 1,000 (500–1,100) |"), "{plain}");
        assert!(plain.contains("*Shared:*") && !plain.contains("*Exclusive"));
        assert!(!plain.contains("**Lock counters**") && !plain.contains("incomplete"));
        assert!(plain.contains("(snapshot.svg)"));
        // The host's CPU count is meta.json's `host_cpus`, not a `cores` (the workers').
        assert!(plain.contains("CPU: ? (2 CPUs);"), "{plain}");
        pts[1].blocks = Some(12.0);
        pts[1].groups = Some(3.0);
        pts[1].mean_group_size = Some(2.5);
        pts[1].max_group_size = Some(4);
        pts[0].counters_complete_trials = 1;
        let stats = summary_md(&meta, &[Workload::Snapshot], &pts);
        assert!(
            stats.contains("| atomic | 4 | 12 | - | - | 3 | 2.50 | 4 |"),
            "{stats}"
        );
        assert!(
            stats.contains("Perf counters incomplete in 2 of 6 trials"),
            "{stats}"
        );
        // A workload without points links no plot.
        let none = summary_md(&meta, &[Workload::Clog], &pts);
        assert!(none.contains("No points were run") && !none.contains("clog.svg"));
    }

    #[test]
    fn svg_has_error_bars_and_the_core_mark() {
        let dir = std::env::temp_dir().join(format!("lwbench-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("snapshot.svg");
        let pts = vec![pt("atomic", 1, 1e6, false), pt("atomic", 64, 2e6, true)];
        plot(&p, Workload::Snapshot, &pts, 8).unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        assert!(svg.contains("<svg") && svg.contains("atomic"));
        assert!(svg.contains("8 cores") && svg.contains("min–max"), "{svg}");
        plot(&p, Workload::Snapshot, &pts, 128).unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        assert!(svg.contains("128 cores, off the axis"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
