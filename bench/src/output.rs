//! The output stage: every file of a run (`results.csv`, `waits.csv`, `points.csv`, `meta.json`,
//! the SVGs, `summary.md`, the sensitivity tables) and the stdout tables, a function of the plan
//! and each point's trials, fed in plan order (sweep, point). It measures nothing and does not
//! know in which order the trials ran, so partial runs' trials can be fed through it as well.
//!
//! The CSV rows are written as each point arrives (so that a failure later in the run leaves the
//! points before it on disk); the tables and plots at [`Output::finish`].

use crate::plan::{Plan, PlannedPoint};
use crate::report::{PointRow, ResultRow, WaitRow};
use lwharness::runner::{self, TrialResult};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A run's files, being written.
#[derive(Debug)]
pub struct Output {
    out: PathBuf,
    results: csv::Writer<std::fs::File>,
    waits: csv::Writer<std::fs::File>,
    points_csv: csv::Writer<std::fs::File>,
    /// The base sweep's points.
    points: Vec<PointRow>,
    /// The sensitivity arms' points, per sweep (index 0 unused: the base sweep's are `points`).
    arm_points: Vec<Vec<PointRow>>,
    /// Real time the simulations took, and their simulated events per real second (they
    /// describe the run, not the result: `meta.json` only).
    sim_real: Duration,
    sim_rates: Vec<f64>,
}

/// `writing FILE: error`.
fn io_error(out: &Path, what: &str, e: &dyn std::fmt::Display) -> String {
    format!("writing {}: {e}", out.join(what).display())
}

/// Writes `meta.json`.
pub fn write_meta(out: &Path, meta: &serde_json::Value) -> Result<(), String> {
    std::fs::write(
        out.join("meta.json"),
        serde_json::to_string_pretty(meta).map_err(|e| e.to_string())?,
    )
    .map_err(|e| io_error(out, "meta.json", &e))
}

impl Output {
    /// Opens the CSV files of a run of `plan` in `out`.
    pub fn create(out: &Path, plan: &Plan) -> Result<Output, String> {
        let open = |what: &str| {
            csv::Writer::from_path(out.join(what)).map_err(|e| io_error(out, what, &e))
        };
        Ok(Output {
            out: out.to_path_buf(),
            results: open("results.csv")?,
            waits: open("waits.csv")?,
            points_csv: open("points.csv")?,
            points: Vec::new(),
            arm_points: vec![Vec::new(); plan.sweeps()],
            sim_real: Duration::ZERO,
            sim_rates: Vec::new(),
        })
    }

    fn io(&self, what: &str, e: &dyn std::fmt::Display) -> String {
        io_error(&self.out, what, e)
    }

    /// Writes one point's trials (in trial order): every file of the base sweep (`sweep` 0), or
    /// an arm's medians. Returns the notes to print (perf counters that did not open).
    pub fn point(
        &mut self,
        sweep: usize,
        p: &PlannedPoint,
        trials: Vec<TrialResult>,
    ) -> Result<Vec<String>, String> {
        let (w, k, ls, t) = (p.workload, p.lock, p.layout_snapshot, p.spec.threads);
        for s in trials.iter().filter_map(|r| r.sim.as_ref()) {
            self.sim_real += s.real;
            self.sim_rates.push(s.events_per_sec);
        }
        let point = PointRow::new(w, k, ls, t, &trials);
        if sweep > 0 {
            self.arm_points[sweep].push(point);
            return Ok(Vec::new());
        }
        let notes = trials
            .iter()
            .filter(|r| r.sim.is_none() && (r.counters.complete_threads as usize) < t)
            .map(|r| {
                format!(
                    "note: {} {} x{t}: perf counters opened in only {} of {t} workers \
                     (out of file descriptors? `ulimit -n`); their columns are left empty, \
                     context switches from {}",
                    w.name(),
                    k.name(),
                    r.counters.complete_threads,
                    match r.counters.ctx_switches().1.name() {
                        "" => "nowhere",
                        n => n,
                    }
                )
            })
            .collect();
        for (i, r) in trials.iter().enumerate() {
            let trial = i as u32 + 1;
            let row = ResultRow::new(w, k, ls, t, p.spec.procs, trial, r, point.bimodal);
            self.results
                .serialize(row)
                .map_err(|e| io_error(&self.out, "results.csv", &e))?;
            for row in WaitRow::rows(w, k, ls, t, trial, r) {
                self.waits
                    .serialize(row)
                    .map_err(|e| io_error(&self.out, "waits.csv", &e))?;
            }
        }
        self.points_csv
            .serialize(&point)
            .map_err(|e| self.io("points.csv", &e))?;
        self.results
            .flush()
            .map_err(|e| self.io("results.csv", &e))?;
        self.waits.flush().map_err(|e| self.io("waits.csv", &e))?;
        self.points_csv
            .flush()
            .map_err(|e| self.io("points.csv", &e))?;
        self.points.push(point);
        Ok(notes)
    }

    /// Adds the simulations' real time to `meta` (the run's description).
    pub fn describe_run(&self, meta: &mut serde_json::Value) {
        if !self.sim_rates.is_empty() {
            meta["sim"]["real_s"] =
                serde_json::json!((self.sim_real.as_secs_f64() * 10.0).round() / 10.0);
            meta["sim"]["median_events_per_real_s"] =
                serde_json::json!(runner::median(&self.sim_rates).round());
        }
    }

    /// Writes the files made from every point (`meta.json`, the SVGs, `summary.md`, the
    /// sensitivity tables) and returns the stdout tables.
    pub fn finish(self, plan: &Plan, meta: &serde_json::Value) -> Result<String, String> {
        let out = &self.out;
        write_meta(out, meta)?;
        let cores = match &plan.sim {
            Some(m) => m.setup.cores,
            None => meta["host_cpus"].as_u64().unwrap_or(1) as usize,
        };
        for &w in &plan.workloads {
            crate::figures::plot(
                &out.join(format!("{}.svg", w.file_stem())),
                w,
                &self.points,
                cores,
            )?;
        }
        std::fs::write(
            out.join("summary.md"),
            crate::figures::summary_md(meta, &plan.workloads, &self.points),
        )
        .map_err(|e| self.io("summary.md", &e))?;
        if let Some(m) = plan.sim.as_ref().filter(|_| plan.has_sensitivity()) {
            crate::sensitivity::write(
                out,
                &crate::figures::sim_header(meta),
                &m.sensitivity,
                &self.points,
                &self.arm_points,
            )?;
        }
        let duration = format!("{:?}", plan.duration);
        let mut tables = String::new();
        for &w in &plan.workloads {
            tables.push_str(&crate::figures::stdout_tables(
                w,
                &self.points,
                plan.trials,
                &duration,
            ));
        }
        let _ = write!(
            tables,
            "\nlock operations/s, waits and counters: points.csv, results.csv; tables with \
             min–max: summary.md{}",
            if plan.has_sensitivity() {
                "; the sensitivity table: sensitivity.md"
            } else {
                ""
            },
        );
        Ok(tables)
    }
}

/// Creates `dir` and checks that it is writable.
pub fn prepare_out(dir: &std::path::Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create directory: {e}"))?;
    let probe = dir.join(".lwbench-write-test");
    std::fs::write(&probe, b"").map_err(|e| format!("directory is not writable: {e}"))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}
