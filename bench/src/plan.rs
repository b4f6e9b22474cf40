//! The plan of a sweep: its points in sweep order (workload, lock, layout and snapshot
//! strategy, threads), the trials per point, the machines of a simulated sweep's arms, and the
//! run's metadata (`meta.json`). A function of the arguments alone: the schedule runs it and the
//! output stage writes its results.

use crate::args::Args;
use crate::engine_setup::SimSweep;
use crate::report;
use lwharness::engine::{self, Engine};
use lwharness::era_traffic::EraTraffic;
use lwharness::perf;
use lwharness::registry::LockKind;
use lwharness::runner::PointSpec;
use lwharness::snapshot::{Layout, Strategy};
use lwharness::workload::{WorkerConfig, Workload};
use std::time::Duration;

/// One point of the sweep: what it runs, its label, and its spec (the trial length set; the
/// simulated machine set per trial).
#[derive(Clone, Debug)]
pub struct PlannedPoint {
    /// The workload.
    pub workload: Workload,
    /// The lock.
    pub lock: LockKind,
    /// The proc-array layout and snapshot strategy, where they apply.
    pub layout_snapshot: report::LayoutSnapshot,
    /// The point's trial.
    pub spec: PointSpec,
}

impl PlannedPoint {
    /// `workload lock [layout/snapshot] xthreads`, for progress and notes.
    pub fn label(&self) -> String {
        let v = self.layout_snapshot.label();
        format!(
            "{} {}{}{v} x{}",
            self.workload.name(),
            self.lock.name(),
            if v.is_empty() { "" } else { " " },
            self.spec.threads
        )
    }
}

/// A sweep's plan.
#[derive(Debug)]
pub struct Plan {
    /// The points, in sweep order (workload, lock, layout/snapshot, threads): the files' row order.
    pub points: Vec<PlannedPoint>,
    /// The workloads, in the order given (one table and SVG each).
    pub workloads: Vec<Workload>,
    /// Trials per point.
    pub trials: u32,
    /// Trial length.
    pub duration: Duration,
    /// Warm-up: a trial of its own before each point (real), or inside each trial (sim).
    pub warmup: Duration,
    /// `--interleave`.
    pub interleave: bool,
    /// `--seed`.
    pub seed: u64,
    /// The simulated machine and its arms (`--engine sim`), or `None` on the real engine.
    pub sim: Option<SimSweep>,
}

impl Plan {
    /// The plan of `args` on `sim` (`None`: the real engine), with the notes of locks skipped
    /// because they do not apply to a workload.
    pub fn new(args: &Args, sim: Option<SimSweep>) -> (Plan, Vec<String>) {
        let duration = args.duration();
        let threads = args.thread_counts();
        let mut points: Vec<PlannedPoint> = Vec::new();
        let mut notes = Vec::new();
        for &w in &args.workload {
            let (run, skipped) = args.locks_for(w);
            for k in skipped {
                notes.push(format!(
                    "note: lock {} does not apply to workload {}; skipped",
                    k.name(),
                    w.name()
                ));
            }
            let pairs = args.layout_snapshots_for(w);
            for k in run {
                for &(layout, strategy) in &pairs {
                    for &t in &threads {
                        points.push(PlannedPoint {
                            workload: w,
                            lock: k,
                            layout_snapshot: report::LayoutSnapshot {
                                layout: layout.map_or("", Layout::name),
                                snapshot: strategy.map_or("", Strategy::name),
                            },
                            spec: PointSpec {
                                workload: w,
                                lock: k,
                                threads: t,
                                procs: args.procs.unwrap_or(t).max(t),
                                layout: layout.unwrap_or(Layout::Dense),
                                duration,
                                worker: WorkerConfig {
                                    write_pct: args.write_pct,
                                    work: args.work,
                                    time_every: args.time_every,
                                    strategy: strategy.unwrap_or(Strategy::Scan),
                                    idle_us: args.idle_us(),
                                },
                                sample_interval: args.sample_interval,
                                sim: None,
                                era: args.era_traffic,
                                status_lookups_per_100: args.status_lookups_per_100(),
                                wal_hold: args.wal_hold(),
                            },
                        });
                    }
                }
            }
        }
        if !args.era_traffic.is_none()
            && !args.workload.iter().any(|w| {
                (w.lmgr().is_some() && !args.era_traffic.within(EraTraffic::SELECT).is_none())
                    || (*w == Workload::PgbenchN
                        && !args.era_traffic.within(EraTraffic::WRITE).is_none())
            })
        {
            notes.push(format!(
                "note: --era-traffic {} applies to no workload of this run (sinval and freelist \
                 to the select-* workloads, walinsertlock and nomultixact to pgbench-n)",
                args.era_traffic.name()
            ));
        }
        let plan = Plan {
            points,
            workloads: args.workload.clone(),
            trials: args.trials(),
            duration,
            warmup: args.warmup(),
            interleave: args.interleave,
            seed: args.seed,
            sim,
        };
        (plan, notes)
    }

    /// The engine.
    pub fn engine(&self) -> Engine {
        if self.sim.is_some() {
            Engine::Sim
        } else {
            Engine::Real
        }
    }

    /// Sweeps: 1, or on the simulator the base and each sensitivity arm that runs.
    pub fn sweeps(&self) -> usize {
        self.sim.as_ref().map_or(1, |m| m.arms.len())
    }

    /// Whether the sweep has sensitivity arms (and writes `sensitivity.md`).
    pub fn has_sensitivity(&self) -> bool {
        self.sim.as_ref().is_some_and(|m| !m.sensitivity.is_empty())
    }

    /// The run's metadata before it starts (`meta.json`): the tool, the machine, the settings,
    /// the locks, and on the simulator its machine, seeds and arms.
    pub fn meta(&self, args: &Args, probe: &perf::Probe) -> serde_json::Value {
        let mut meta = meta_json(args, probe, self.warmup);
        meta["engine"] = serde_json::json!(self.engine().name());
        if let Some(m) = &self.sim {
            let s = &m.setup;
            // The simulated clock is read for free: no timer floor.
            meta["timer_source"] = serde_json::json!("lwsim virtual clock");
            meta["timer_floor_ns"] = serde_json::json!(0.0);
            meta["settings"]["jobs"] = serde_json::json!(m.jobs);
            meta["sim"] = serde_json::json!({
                "platform": s.platform,
                "platform_arg": args.platform.clone().unwrap_or_else(|| engine::DEFAULT_PLATFORM.into()),
                "cores": s.cores,
                "seed": self.seed,
                "trial_seeds": (1..=self.trials).map(|k| engine::trial_seed(self.seed, k)).collect::<Vec<_>>(),
                "warmup_in_trial": true,
                "time": "virtual",
                "overrides": m.overrides.iter().map(|o| serde_json::json!({
                    "key": o.key, "value": o.value, "profile": o.profile,
                })).collect::<Vec<_>>(),
                "sensitivity": m.sensitivity.iter().map(|k| {
                    let arm = |a: &crate::sensitivity::Arm| match a {
                        crate::sensitivity::Arm::Run { value, .. } => serde_json::json!({ "value": value }),
                        crate::sensitivity::Arm::Skipped(why) => serde_json::json!({ "skipped": why }),
                    };
                    serde_json::json!({ "key": k.key, "base": k.base, "structural": k.structural, "half": arm(&k.half), "double": arm(&k.double) })
                }).collect::<Vec<_>>(),
                "note": "every duration, rate and wait is virtual time; the counters cover the window \
                         only; cache_misses stays empty (no PMU in a simulation): see the sim_* columns",
                "ctx_switches": crate::report::SIM_CTX_SWITCHES_MEANING,
            });
            #[cfg(lwsim)]
            {
                meta["sim"]["profile"] = serde_json::json!(s.profile.describe());
            }
        }
        meta
    }
}

fn cmd_output(cmd: &str, args: &[&str]) -> Option<String> {
    let o = std::process::Command::new(cmd).args(args).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn meta_json(args: &Args, probe: &perf::Probe, warmup: Duration) -> serde_json::Value {
    let rustc = cmd_output("rustc", &["-V"]).unwrap_or_else(|| env!("LWBENCH_RUSTC").to_string());
    let commit = cmd_output("git", &["rev-parse", "HEAD"])
        .unwrap_or_else(|| env!("LWBENCH_GIT").to_string());
    let dirty = cmd_output("git", &["status", "--porcelain", "--untracked-files=no"])
        .map(|s| !s.is_empty());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    serde_json::json!({
        "tool": "lwbench",
        "version": env!("CARGO_PKG_VERSION"),
        "rustc": rustc,
        "rustc_build": env!("LWBENCH_RUSTC"),
        "git_commit": commit,
        "git_commit_built": env!("LWBENCH_GIT"),
        "git_dirty": dirty,
        "cpu_model": cpu_model(),
        "host_cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "kernel": std::fs::read_to_string("/proc/sys/kernel/osrelease").map(|s| s.trim().to_string()).ok(),
        "pmu_available": probe.pmu_available,
        "pmu_reason": probe.pmu_reason,
        "hw_events": probe.hw_events,
        "ctx_switch_source": probe.ctx_switch_source,
        "ctx_switch_reason": probe.ctx_switch_reason,
        "stats_feature": cfg!(feature = "stats"),
        "timer_source": lwharness::clock::source(),
        "timer_floor_ns": lwharness::clock::floor_ns(),
        "debug_assertions": cfg!(debug_assertions),
        "command_line": std::env::args().collect::<Vec<_>>(),
        "started_unix": now,
        "settings": {
            "workloads": args.workload.iter().map(|w| w.name()).collect::<Vec<_>>(),
            "threads": args.thread_counts(),
            "requested_duration_s": args.duration().as_secs_f64(),
            "requested_warmup_s": warmup.as_secs_f64(),
            "trials": args.trials(),
            "write_pct": args.write_pct,
            "procs": args.procs,
            "layouts": args.layout.iter().flatten().map(|l| l.name()).collect::<Vec<_>>(),
            "snapshot_strategies": args.snapshot.iter().flatten().map(|s| s.name()).collect::<Vec<_>>(),
            "work": args.work,
            "idle_us": args.idle_us(),
            "status_lookups": args
                .workload
                .contains(&Workload::PgbenchWriteStatus)
                .then(|| lwharness::parse::status_lookups_text(args.status_lookups_per_100() as u32)),
            "sample_interval_s": args.sample_interval.as_secs_f64(),
            "interleave": args.interleave,
            "time_every": args.time_every,
            "era_traffic": args.era_traffic.names(),
            "wal_hold": args
                .workload
                .contains(&Workload::PgbenchN)
                .then(|| args.wal_hold()),
        },
        "locks": LockKind::bench_locks().iter().map(|k| serde_json::json!({
            "name": k.name(), "description": k.description(), "project": k.is_project()
        })).collect::<Vec<_>>(),
    })
}
