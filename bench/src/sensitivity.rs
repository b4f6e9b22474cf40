//! `--set` and `--sensitivity` (`--engine sim`): profile overrides by name, and the same sweep
//! with a key halved and doubled (a parameter) or at its other choice (a structural option),
//! tabulated in `sensitivity.md` and `sensitivity.csv`.

use crate::report::PointRow;
#[cfg(lwsim)]
use lwharness::engine::SimSetup;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// One `--set` override.
#[derive(Clone, Debug, PartialEq)]
pub struct Override {
    /// The profile key.
    pub key: String,
    /// The value it was set to.
    pub value: f64,
    /// The profile's value before.
    pub profile: f64,
}

/// One side of a sensitivity key: x0.5 or x2 for a parameter, the other choice for a structural
/// option.
#[derive(Clone, Debug, PartialEq)]
pub enum Arm {
    /// Runs on the sweep's machine number `arm` (see `SimSweep::arms`), with the key at
    /// `value`.
    Run {
        /// Index into the sweep's machines.
        arm: usize,
        /// The key's value there.
        value: f64,
    },
    /// Not run, and why.
    Skipped(String),
}

/// A `--sensitivity` key and its arms.
#[derive(Clone, Debug, PartialEq)]
pub struct SensKey {
    /// The profile key.
    pub key: String,
    /// Its value in the base run.
    pub base: f64,
    /// The key halved; for a structural option, its other choice.
    pub half: Arm,
    /// The key doubled; for a structural option, not run (it has one other choice).
    pub double: Arm,
    /// A structural option (`lwsim::profile::ModelKey::choices`): its one arm is its other
    /// choice, labelled `=VALUE`, not a factor.
    pub structural: bool,
}

/// Why a key at 0 is not run.
pub const ZERO_BASE: &str = "the base value is 0: halving or doubling zero is no test";

/// Why a structural option's second arm is not run.
pub const ONE_OTHER_CHOICE: &str = "a structural option: its one other choice is the first arm";

impl SensKey {
    /// The arms that are tabulated, with their label: `x0.5` and `x2` for a parameter, `=VALUE`
    /// (the other choice) for a structural option.
    pub fn arms(&self) -> Vec<(String, &Arm)> {
        if self.structural {
            let label = match &self.half {
                Arm::Run { value, .. } => format!("={}", num(*value)),
                Arm::Skipped(_) => "other choice".into(),
            };
            vec![(label, &self.half)]
        } else {
            vec![("x0.5".into(), &self.half), ("x2".into(), &self.double)]
        }
    }

    /// The key's unit (`ns` for a cost key, none for a model parameter).
    pub fn unit(&self) -> &'static str {
        if self.key.ends_with("_ns") {
            " ns"
        } else {
            ""
        }
    }
}

/// The keys of `--sensitivity` and the machines the sweep runs on (`setup` first, then one per
/// arm that runs). An unknown key is an error naming it; a key at 0, or whose half or double is
/// outside its range, keeps the arm as [`Arm::Skipped`] with the reason. A structural option
/// (two choices) runs once, at the choice the base does not take.
#[cfg(lwsim)]
pub fn plan(setup: &SimSetup, keys: &[String]) -> Result<(Vec<SensKey>, Vec<SimSetup>), String> {
    let mut arms = vec![setup.clone()];
    let mut out: Vec<SensKey> = Vec::new();
    for key in keys.iter().map(|k| k.trim()).filter(|k| !k.is_empty()) {
        if out.iter().any(|k| k.key == key) {
            continue;
        }
        let base = setup.profile.get(key).ok_or_else(|| {
            // The profile's own message lists the keys.
            let mut p = setup.profile.clone();
            p.set(key, 0.0)
                .err()
                .unwrap_or_else(|| format!("{key}: unknown profile key"))
        })?;
        let mut arm = |f: f64| -> Arm {
            if base == 0.0 {
                return Arm::Skipped(ZERO_BASE.into());
            }
            let mut v = setup.clone();
            match v.profile.set(key, base * f) {
                Ok(()) => {
                    arms.push(v);
                    Arm::Run {
                        arm: arms.len() - 1,
                        value: base * f,
                    }
                }
                Err(e) => Arm::Skipped(e),
            }
        };
        if let Some(choices) = lwsim::profile::structural_choices(key) {
            // The choice the base does not take (a base between choices takes the nearest).
            let taken = choices
                .iter()
                .copied()
                .min_by(|a, b| (a - base).abs().total_cmp(&(b - base).abs()))
                .unwrap_or(base);
            let other: Vec<f64> = choices.iter().copied().filter(|&c| c != taken).collect();
            assert_eq!(
                other.len(),
                1,
                "{key}: a structural option of {} choices (one other choice is tabulated)",
                choices.len()
            );
            let mut v = setup.clone();
            let half = match v.profile.set(key, other[0]) {
                Ok(()) => {
                    arms.push(v);
                    Arm::Run {
                        arm: arms.len() - 1,
                        value: other[0],
                    }
                }
                Err(e) => Arm::Skipped(e),
            };
            out.push(SensKey {
                key: key.to_string(),
                base,
                half,
                double: Arm::Skipped(ONE_OTHER_CHOICE.into()),
                structural: true,
            });
            continue;
        }
        let (half, double) = (arm(0.5), arm(2.0));
        out.push(SensKey {
            key: key.to_string(),
            base,
            half,
            double,
            structural: false,
        });
    }
    Ok((out, arms))
}

/// One row of `sensitivity.csv`: a point of the sweep under one key.
#[derive(Debug, Serialize)]
struct Row<'a> {
    key: &'a str,
    base_value: f64,
    half_value: Option<f64>,
    double_value: Option<f64>,
    workload: &'a str,
    lock: &'a str,
    layout: &'a str,
    snapshot: &'a str,
    threads: usize,
    trials: usize,
    unit: &'a str,
    base: f64,
    base_min: f64,
    base_max: f64,
    base_bimodal: bool,
    half: Option<f64>,
    double: Option<f64>,
    half_ratio: Option<f64>,
    double_ratio: Option<f64>,
    /// CPU busy (% of the machine's cores over the window, median over the trials; the
    /// simulated engine's `cpu_busy_pct`) in the base and in each arm; empty where a sweep
    /// does not record it.
    base_cpu_busy_pct: Option<f64>,
    half_cpu_busy_pct: Option<f64>,
    double_cpu_busy_pct: Option<f64>,
    note: String,
}

/// One row of `sensitivity-waits.csv`: one wait event's samples at one point of one sweep.
#[derive(Debug, Serialize)]
struct WaitRow<'a> {
    /// `base`, or the key and its arm (`residency_ns x0.5`).
    arm: &'a str,
    /// The key (empty for the base).
    key: &'a str,
    /// The key's value in that arm.
    value: Option<f64>,
    workload: &'a str,
    lock: &'a str,
    layout: &'a str,
    snapshot: &'a str,
    threads: usize,
    /// `LWLock`, `Spin`, `IPC`, or empty for `(running)`.
    wait_event_type: &'a str,
    wait_event: &'a str,
    /// Samples over all the point's trials.
    samples: u64,
    /// Their share of all the point's samples, `(running)` included.
    share: f64,
}

fn share_of(n: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        (n as f64 / total as f64 * 1e4).round() / 1e4
    }
}

/// A point's top wait event (`(running)` left out) and its share, `-` without a point, `none`
/// when nothing waited.
fn top_wait(p: Option<&PointRow>) -> String {
    let Some(p) = p else { return "-".into() };
    let total: u64 = p.waits.values().sum();
    match p
        .waits
        .iter()
        .filter(|(k, _)| *k != lwharness::runner::RUNNING)
        .max_by_key(|(_, v)| **v)
    {
        Some((k, &n)) if n > 0 => {
            format!("{k} {:.1} % of {total}", share_of(n, total) * 100.0)
        }
        _ => "none".into(),
    }
}

fn ratio(x: f64, base: f64) -> Option<f64> {
    (base > 0.0).then(|| (x / base * 1000.0).round() / 1000.0)
}

/// Writes `sensitivity.md` and `sensitivity.csv` into `out`: for every key, every point of the
/// base sweep (`base`) beside the same point in each arm's sweep (`runs[arm]`, aligned
/// with `base`).
pub fn write(
    out: &Path,
    header: &str,
    keys: &[SensKey],
    base: &[PointRow],
    runs: &[Vec<PointRow>],
) -> Result<(), String> {
    let io = |what: &str, e: &dyn std::fmt::Display| {
        format!("writing {}: {e}", out.join(what).display())
    };
    let mut md = String::from("# Sensitivity\n\n");
    md.push_str(header);
    md.push_str(
        "\n\nEach key's arms rerun the whole sweep with that key at half and at twice its base \
         value (a structural option: at its other choice, `=VALUE`), everything else as in the \
         base run (`--set` overrides included), with the same seeds. Cells: the workload's \
         figure (TPS; lock operations/s for `null` and `null-x`), the median over the trials; \
         the base with its slowest–fastest trial. `†`: the arm's median lies outside the base's \
         slowest–fastest range; a ratio without it is within the spread of the seeds. `*`: a \
         bimodal point. On the simulated engine a second table gives each point's CPU busy \
         (the cores' busy time over the window, median over the trials). \
         Where the locks publish wait events, the last table gives each point's top wait and its \
         share of the workers' samples over all trials (`of N`: the samples, `(running)` \
         included); every event's samples, per arm, are in `sensitivity-waits.csv`.\n",
    );
    let mut csv = csv::Writer::from_path(out.join("sensitivity.csv"))
        .map_err(|e| io("sensitivity.csv", &e))?;
    let mut waits = csv::Writer::from_path(out.join("sensitivity-waits.csv"))
        .map_err(|e| io("sensitivity-waits.csv", &e))?;
    let mut wait_rows = |arm: &str, key: &str, value: Option<f64>, points: &[PointRow]| {
        for p in points {
            let total: u64 = p.waits.values().sum();
            for (ev, &n) in &p.waits {
                let (t, e) = ev.split_once(':').unwrap_or(("", ev.as_str()));
                waits
                    .serialize(WaitRow {
                        arm,
                        key,
                        value,
                        workload: p.workload,
                        lock: p.lock,
                        layout: p.layout,
                        snapshot: p.snapshot,
                        threads: p.threads,
                        wait_event_type: t,
                        wait_event: e,
                        samples: n,
                        share: share_of(n, total),
                    })
                    .map_err(|e| io("sensitivity-waits.csv", &e))?;
            }
        }
        Ok::<(), String>(())
    };
    wait_rows("base", "", None, base)?;
    for k in keys {
        for (label, arm) in k.arms() {
            if let Arm::Run { arm: i, value } = arm {
                let pts = runs.get(*i).map(Vec::as_slice).unwrap_or(&[]);
                // `KEY x0.5` for a parameter, `KEY=VALUE` for a structural option (as
                // sens-matrix.py labels both).
                let sep = if k.structural { "" } else { " " };
                wait_rows(&format!("{}{sep}{label}", k.key), &k.key, Some(*value), pts)?;
            }
        }
    }
    waits.flush().map_err(|e| io("sensitivity-waits.csv", &e))?;
    let instrumented = base
        .iter()
        .any(|p| p.waits.keys().any(|k| k != lwharness::runner::RUNNING));
    for k in keys {
        let _ = write!(md, "\n## `{}` (base {}{}", k.key, num(k.base), k.unit());
        for (label, arm) in k.arms() {
            if let Arm::Run { value, .. } = arm {
                if k.structural {
                    let _ = write!(md, "; a structural option, other choice {label}");
                } else {
                    let _ = write!(md, "; {label} = {}{}", num(*value), k.unit());
                }
            }
        }
        md.push_str(")\n\n");
        let mut skipped = String::new();
        for (label, arm) in k.arms() {
            if let Arm::Skipped(why) = arm {
                let _ = writeln!(skipped, "{label} not run: {why}.  ");
            }
        }
        let fig = |arm: &Arm, i: usize| -> Option<&PointRow> {
            match arm {
                Arm::Run { arm, .. } => runs.get(*arm).and_then(|r| r.get(i)),
                Arm::Skipped(_) => None,
            }
        };
        let value = |arm: &Arm| match arm {
            Arm::Run { value, .. } => Some(*value),
            Arm::Skipped(_) => None,
        };
        if !skipped.is_empty() {
            md.push_str(&skipped);
            md.push('\n');
        }
        if matches!((&k.half, &k.double), (Arm::Skipped(_), Arm::Skipped(_))) {
            for p in base {
                csv.serialize(row(k, p, None, None, skipped.trim()))
                    .map_err(|e| io("sensitivity.csv", &e))?;
            }
            continue;
        }
        // The tabulated arms (two for a parameter, one for a structural option).
        let shown = k.arms();
        let labels: Vec<&str> = shown.iter().map(|(l, _)| l.as_str()).collect();
        let _ = write!(
            md,
            "| workload | lock | threads | base (slowest–fastest) | {} | {} |\n|---|---|--:|--:|{}\n",
            labels.join(" | "),
            labels
                .iter()
                .map(|l| format!("{l} / base"))
                .collect::<Vec<_>>()
                .join(" | "),
            "--:|".repeat(2 * labels.len()),
        );
        for (i, p) in base.iter().enumerate() {
            let (h, d) = (fig(&k.half, i), fig(&k.double, i));
            let cell = |q: Option<&PointRow>| match q {
                Some(q) => format!(
                    "{}{}",
                    crate::figures::thousands(q.median_txn_per_sec),
                    if q.bimodal { "*" } else { "" }
                ),
                None => "-".into(),
            };
            let rcell = |q: Option<&PointRow>| match q
                .and_then(|q| ratio(q.median_txn_per_sec, p.median_txn_per_sec).map(|r| (r, q)))
            {
                Some((r, q)) => {
                    let outside = q.median_txn_per_sec < p.min_txn_per_sec
                        || q.median_txn_per_sec > p.max_txn_per_sec;
                    format!("{r:.2}{}", if outside { "†" } else { "" })
                }
                None => "-".into(),
            };
            let figs: Vec<Option<&PointRow>> = shown.iter().map(|(_, a)| fig(a, i)).collect();
            let _ = writeln!(
                md,
                "| {} | {} | {} | {}{} ({}–{}) | {} | {} |",
                p.workload,
                lock_label(p),
                p.threads,
                crate::figures::thousands(p.median_txn_per_sec),
                if p.bimodal { "*" } else { "" },
                crate::figures::thousands(p.min_txn_per_sec),
                crate::figures::thousands(p.max_txn_per_sec),
                figs.iter()
                    .map(|q| cell(*q))
                    .collect::<Vec<_>>()
                    .join(" | "),
                figs.iter()
                    .map(|q| rcell(*q))
                    .collect::<Vec<_>>()
                    .join(" | "),
            );
            let mut r = row(k, p, h, d, skipped.trim());
            r.half_value = value(&k.half);
            r.double_value = value(&k.double);
            csv.serialize(r).map_err(|e| io("sensitivity.csv", &e))?;
        }
        // One column per arm of a per-point figure other than the rate.
        let mut per_arm = |title: &str, align: &str, cell: &dyn Fn(Option<&PointRow>) -> String| {
            let _ = write!(
                md,
                "\n| workload | lock | threads | {title}: base | {} |\n|---|---|--:|{align}|{}\n",
                labels.join(" | "),
                format!("{align}|").repeat(labels.len()),
            );
            for (i, p) in base.iter().enumerate() {
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {} | {} |",
                    p.workload,
                    lock_label(p),
                    p.threads,
                    cell(Some(p)),
                    shown
                        .iter()
                        .map(|(_, a)| cell(fig(a, i)))
                        .collect::<Vec<_>>()
                        .join(" | "),
                );
            }
        };
        if base.iter().any(|p| p.cpu_busy_pct.is_some()) {
            per_arm("CPU busy", "--:", &|q| {
                q.and_then(|q| q.cpu_busy_pct)
                    .map_or("-".to_string(), |b| format!("{b:.1} %"))
            });
        }
        if instrumented {
            per_arm("top wait", "---", &top_wait);
        }
    }
    csv.flush().map_err(|e| io("sensitivity.csv", &e))?;
    std::fs::write(out.join("sensitivity.md"), md).map_err(|e| io("sensitivity.md", &e))
}

fn row<'a>(
    k: &'a SensKey,
    p: &'a PointRow,
    h: Option<&PointRow>,
    d: Option<&PointRow>,
    note: &str,
) -> Row<'a> {
    Row {
        key: &k.key,
        base_value: k.base,
        half_value: None,
        double_value: None,
        workload: p.workload,
        lock: p.lock,
        layout: p.layout,
        snapshot: p.snapshot,
        threads: p.threads,
        trials: p.trials,
        unit: crate::figures::unit(
            lwharness::workload::Workload::from_name(p.workload).expect("a workload's own name"),
        )
        .rate,
        base: p.median_txn_per_sec,
        base_min: p.min_txn_per_sec,
        base_max: p.max_txn_per_sec,
        base_bimodal: p.bimodal,
        half: h.map(|q| q.median_txn_per_sec),
        double: d.map(|q| q.median_txn_per_sec),
        half_ratio: h.and_then(|q| ratio(q.median_txn_per_sec, p.median_txn_per_sec)),
        double_ratio: d.and_then(|q| ratio(q.median_txn_per_sec, p.median_txn_per_sec)),
        base_cpu_busy_pct: p.cpu_busy_pct,
        half_cpu_busy_pct: h.and_then(|q| q.cpu_busy_pct),
        double_cpu_busy_pct: d.and_then(|q| q.cpu_busy_pct),
        note: note.replace("  \n", "; "),
    }
}

/// The lock's column name: the lock, and the layout or snapshot strategy where they apply.
fn lock_label(p: &PointRow) -> String {
    let v = crate::report::LayoutSnapshot {
        layout: p.layout,
        snapshot: p.snapshot,
    }
    .label();
    if v.is_empty() {
        p.lock.to_string()
    } else {
        format!("{} {v}", p.lock)
    }
}

/// A profile value: integers without decimals, others with up to three.
fn num(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        let s = format!("{x:.3}");
        s.trim_end_matches('0').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(num(8300.0), "8300");
        assert_eq!(num(0.5), "0.5");
        assert_eq!(num(41.25), "41.25");
    }
}
