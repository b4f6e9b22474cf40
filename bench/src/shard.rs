//! `--shard K/N`: the K-th of N deterministic parts of a sweep's plan, run on its own (a Slurm
//! array task, a Kubernetes indexed pod), and the partial result directory it writes for
//! `lwbench merge` ([`crate::merge`]).
//!
//! **The parts.** The plan is cut into units: on the simulator each trial of each point of each
//! sweep (the base and the sensitivity arms), which runs on a machine of its own; on the real
//! engine each point (its warm-up and its trials run back to back), or with `--interleave` each
//! batch of points whose trials run in turn (a batch is never split). A unit's cost is its
//! threads times its trial time (virtual time on the simulator: warm-up and window; on the real
//! engine the warm-ups and windows it runs), known from the plan alone, never measured. The units
//! are dealt out longest first, each to the part with the least cost so far (the lowest K on a
//! tie): the same plan and N always give the same parts, on every machine.
//!
//! **The directory.** A shard writes, in its `--out`: first `shard-incomplete.json` (the marker
//! of a shard that has not finished: its plan, K and N), then each trial's result as it completes
//! to `trials.jsonl.part`, renamed `trials.jsonl` when the last is in, then `shard.json` (the
//! same record, complete, with the run's host and times; written to a temporary name and
//! renamed, so it is whole or absent), and last it removes the incomplete marker. A shard
//! killed at any point leaves no `shard.json`: `lwbench merge` refuses the directory and names
//! the shard to rerun. A rerun into the same directory removes the old `shard.json` first.

use crate::plan::Plan;
use crate::resolve::Resolved;
pub use crate::shard_id::{parse_shard, ShardId};
use crate::stored_trial::StoredTrial;
use lwharness::perf;
use serde::{Deserialize, Serialize};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The completion marker, written last.
pub const SHARD_FILE: &str = "shard.json";
/// The marker of a shard that has not finished (removed when `shard.json` is in place).
pub const INCOMPLETE_FILE: &str = "shard-incomplete.json";
/// The trials' results, one JSON line each.
pub const TRIALS_FILE: &str = "trials.jsonl";
/// The marker's format.
/// Version 2: a simulated trial stores its Linux-style voluntary and involuntary switches
/// beside its run-queue dispatches (version 1 stored only the dispatches).
pub const FORMAT: &str = "lwbench-shard/2";

/// A trial of the plan: (sweep, point, trial number from 1).
pub type TrialId = (usize, usize, u32);

/// A unit of the partition: trials that run together, and their cost.
#[derive(Clone, Debug)]
pub struct Unit {
    /// Its trials, in plan order.
    pub trials: Vec<TrialId>,
    /// Its points (real engine: a point, or an interleaved batch).
    pub points: Vec<usize>,
    /// Threads times trial time, ns.
    pub cost: u128,
}

/// Every trial of the plan, in plan order (sweep, point, trial).
pub fn all_trials(plan: &Plan) -> Vec<TrialId> {
    let (points, trials) = (plan.points.len(), plan.trials);
    (0..plan.sweeps())
        .flat_map(|s| (0..points).flat_map(move |p| (1..=trials).map(move |k| (s, p, k))))
        .collect()
}

/// The plan's units (see the module docs), in plan order.
pub fn units(plan: &Plan) -> Vec<Unit> {
    let threads = |p: usize| plan.points[p].spec.threads as u128;
    match &plan.sim {
        Some(_) => {
            let each = (plan.warmup + plan.duration).as_nanos();
            all_trials(plan)
                .into_iter()
                .map(|t| Unit {
                    trials: vec![t],
                    points: vec![t.1],
                    cost: threads(t.1) * each,
                })
                .collect()
        }
        None => {
            let batches = if plan.interleave {
                crate::schedule::interleave_batches(&plan.points)
            } else {
                (0..plan.points.len()).map(|p| vec![p]).collect()
            };
            let per_point = if plan.interleave {
                (plan.warmup + plan.duration).as_nanos() * plan.trials as u128
            } else {
                (plan.warmup + plan.duration * plan.trials).as_nanos()
            };
            batches
                .into_iter()
                .map(|b| {
                    let mut trials: Vec<TrialId> = b
                        .iter()
                        .flat_map(|&p| (1..=plan.trials).map(move |k| (0, p, k)))
                        .collect();
                    trials.sort_unstable();
                    Unit {
                        cost: b.iter().map(|&p| threads(p) * per_point).sum(),
                        trials,
                        points: b,
                    }
                })
                .collect()
        }
    }
}

/// The part (0 to `n - 1`) of each unit: longest first, each to the part with the least cost so
/// far, the lowest part on a tie.
pub fn partition(units: &[Unit], n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..units.len()).collect();
    order.sort_by(|&a, &b| units[b].cost.cmp(&units[a].cost).then(a.cmp(&b)));
    let mut load = vec![0u128; n.max(1)];
    let mut owner = vec![0; units.len()];
    for u in order {
        let k = (0..load.len())
            .min_by_key(|&k| (load[k], k))
            .expect("at least one part");
        load[k] += units[u].cost;
        owner[u] = k;
    }
    owner
}

/// 64-bit FNV-1a, as 16 hex digits: a hash that every build and machine computes alike.
fn fnv1a(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The plan's hash: of everything the files are made from (the engine, the settings but
/// `--jobs`, the simulated machine, its overrides and arms, the locks, the points, the
/// experiment file's text), nothing that describes the run.
pub fn plan_hash(
    plan: &Plan,
    meta: &serde_json::Value,
    experiment: Option<&crate::experiment::Experiment>,
) -> String {
    let mut settings = meta["settings"].clone();
    if let Some(o) = settings.as_object_mut() {
        o.remove("jobs");
    }
    let canon = serde_json::json!({
        "version": meta["version"],
        "engine": meta["engine"],
        "stats_feature": meta["stats_feature"],
        "settings": settings,
        "sim": meta.get("sim"),
        "locks": meta["locks"],
        "points": plan.points.iter().map(|p| serde_json::json!([p.label(), p.spec.procs])).collect::<Vec<_>>(),
        "experiment": experiment.map(|e| std::fs::read_to_string(&e.path).unwrap_or_default()),
    });
    fnv1a(&canon.to_string())
}

/// The commit, as `meta.json` records it: the working directory's `git rev-parse HEAD` (a
/// cluster's jobs run in the shared checkout they were submitted from), or where that fails the
/// commit this lwbench was built from.
pub fn commit() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| env!("LWBENCH_GIT").to_string())
}

/// A shard's record: `shard.json` (complete) or `shard-incomplete.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Marker {
    /// [`FORMAT`].
    pub format: String,
    /// Whether the shard finished (only `shard.json` says so).
    pub complete: bool,
    /// This part.
    pub k: usize,
    /// Parts.
    pub n: usize,
    /// [`plan_hash`].
    pub plan_hash: String,
    /// The commit it ran at ([`commit`]).
    pub commit: String,
    /// `real` or `sim`.
    pub engine: String,
    /// The sweep's arguments (without the program name).
    pub args: Vec<String>,
    /// The directory they were given in.
    pub cwd: PathBuf,
    /// The trials this part runs, in plan order.
    pub trials: Vec<TrialId>,
    /// What describes the run, not the result: host, CPU, kernel, start, elapsed time, command
    /// line (and with `--interleave` the order its trials ran in).
    pub run: serde_json::Value,
}

/// One line of `trials.jsonl`.
#[derive(Debug, Serialize, Deserialize)]
pub struct TrialLine {
    /// Which trial.
    pub trial: TrialId,
    /// Its result.
    pub result: StoredTrial,
}

/// Writes `value` as JSON to `dir/name` through a temporary file and a rename: the file is
/// whole or absent.
pub fn write_atomic(dir: &Path, name: &str, value: &impl Serialize) -> Result<(), String> {
    let tmp = dir.join(format!("{name}.part"));
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    let io = |e: std::io::Error| format!("writing {}: {e}", dir.join(name).display());
    let mut f = std::fs::File::create(&tmp).map_err(io)?;
    f.write_all(text.as_bytes()).map_err(io)?;
    f.sync_all().map_err(io)?;
    std::fs::rename(&tmp, dir.join(name)).map_err(io)
}

/// This machine's name.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Runs shard `id` of the sweep `r` (`argv`: its arguments, without the program name) and
/// writes its partial result directory (see the module docs).
pub fn run(r: &Resolved, id: ShardId, argv: &[std::ffi::OsString]) -> Result<(), String> {
    let started = Instant::now();
    let args = &r.args;
    let out = &args.out;
    let probe = perf::probe();
    let (plan, notes) = Plan::new(args, r.sim.clone());
    for note in notes {
        eprintln!("{note}");
    }
    let meta = plan.meta(args, &probe);
    let hash = plan_hash(&plan, &meta, r.experiment.as_ref());
    let units = units(&plan);
    let owner = partition(&units, id.n);
    let mine: Vec<&Unit> = units
        .iter()
        .zip(&owner)
        .filter(|(_, &o)| o == id.k)
        .map(|(u, _)| u)
        .collect();
    let mut trials: Vec<TrialId> = mine.iter().flat_map(|u| u.trials.clone()).collect();
    trials.sort_unstable();
    let batches: Vec<Vec<usize>> = mine.iter().map(|u| u.points.clone()).collect();
    // A complete marker of an earlier run into this directory goes first: it must never
    // describe the files being written now.
    for f in [SHARD_FILE, TRIALS_FILE] {
        match std::fs::remove_file(out.join(f)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(format!("removing {}: {e}", out.join(f).display()))
            }
            _ => {}
        }
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut marker = Marker {
        format: FORMAT.into(),
        complete: false,
        k: id.k,
        n: id.n,
        plan_hash: hash.clone(),
        commit: commit(),
        engine: plan.engine().name().into(),
        args: argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        cwd: std::env::current_dir().unwrap_or_default(),
        trials: trials.clone(),
        run: serde_json::json!({
            "host": host_name(),
            "cpu_model": meta["cpu_model"],
            "host_cpus": meta["host_cpus"],
            "kernel": meta["kernel"],
            "command_line": meta["command_line"],
            "started_unix": now,
            "git_commit": meta["git_commit"],
            "git_dirty": meta["git_dirty"],
            "jobs": meta["settings"]["jobs"],
        }),
    };
    write_atomic(out, INCOMPLETE_FILE, &marker)?;
    let total_cost: u128 = units.iter().map(|u| u.cost).sum();
    let my_cost: u128 = mine.iter().map(|u| u.cost).sum();
    eprintln!(
        "lwbench: shard {id} of plan {hash}: {} of {} trials ({} of {} units, {:.1}% of the cost)",
        trials.len(),
        units.iter().map(|u| u.trials.len()).sum::<usize>(),
        mine.len(),
        units.len(),
        if total_cost > 0 {
            my_cost as f64 / total_cost as f64 * 100.0
        } else {
            0.0
        }
    );
    let part = out.join(format!("{TRIALS_FILE}.part"));
    let io = |e: std::io::Error| format!("writing {}: {e}", part.display());
    let mut w = std::io::BufWriter::new(std::fs::File::create(&part).map_err(io)?);
    let mut sim_real = std::time::Duration::ZERO;
    let trial_order = crate::schedule::run_shard(&plan, &probe, &trials, &batches, |t, res| {
        if let Some(s) = &res.sim {
            sim_real += s.real;
        }
        let line = TrialLine {
            trial: t,
            result: StoredTrial::from(&res),
        };
        let text = serde_json::to_string(&line).map_err(|e| e.to_string())?;
        writeln!(w, "{text}").map_err(io)
    })?;
    let f = w.into_inner().map_err(|e| io(e.into_error()))?;
    f.sync_all().map_err(io)?;
    std::fs::rename(&part, out.join(TRIALS_FILE)).map_err(io)?;
    marker.complete = true;
    marker.run["elapsed_s"] =
        serde_json::json!((started.elapsed().as_secs_f64() * 10.0).round() / 10.0);
    if plan.sim.is_some() {
        marker.run["sim_real_s"] =
            serde_json::json!((sim_real.as_secs_f64() * 10.0).round() / 10.0);
    }
    if plan.interleave {
        marker.run["trial_order"] = serde_json::json!(trial_order);
    }
    write_atomic(out, SHARD_FILE, &marker)?;
    std::fs::remove_file(out.join(INCOMPLETE_FILE))
        .map_err(|e| format!("removing {}: {e}", out.join(INCOMPLETE_FILE).display()))?;
    println!(
        "wrote shard {id} ({} trials) to {}; when all {} are done: lwbench merge DIR... --out OUT",
        trials.len(),
        out.display(),
        id.n
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(cost: u128, i: usize) -> Unit {
        Unit {
            trials: vec![(0, i, 1)],
            points: vec![i],
            cost,
        }
    }

    #[test]
    fn shard_values() {
        assert_eq!(parse_shard("0/1"), Ok(ShardId { k: 0, n: 1 }));
        assert_eq!(parse_shard("3/4"), Ok(ShardId { k: 3, n: 4 }));
        for bad in ["4/4", "0/0", "1", "a/4", "1/b", "-1/4", ""] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_interleaved_batch_is_one_unit_and_never_spans_two_parts() {
        use clap::Parser as _;
        let args = crate::args::Args::try_parse_from([
            "lwbench",
            "--workload",
            "end-xact,snapshot",
            "--locks",
            "atomic,classic,parking-lot",
            "--threads",
            "1,2,4",
            "--trials",
            "3",
            "--interleave",
        ])
        .unwrap();
        let (plan, _) = Plan::new(&args, None);
        let units = units(&plan);
        // One unit per workload and thread count, holding that point's three locks.
        assert_eq!(units.len(), 2 * 3);
        for u in &units {
            assert_eq!(u.points.len(), 3);
            let p0 = &plan.points[u.points[0]];
            for &p in &u.points {
                let q = &plan.points[p];
                assert_eq!((q.workload, q.spec.threads), (p0.workload, p0.spec.threads));
            }
            assert_eq!(u.trials.len(), 3 * 3);
        }
        // Every trial of the plan in exactly one unit, so in exactly one part.
        let mut all: Vec<TrialId> = units.iter().flat_map(|u| u.trials.clone()).collect();
        all.sort_unstable();
        assert_eq!(all, all_trials(&plan));
        // Without --interleave: one unit per point.
        let args = crate::args::Args::try_parse_from(["lwbench", "--threads", "1,2"]).unwrap();
        let (plan, _) = Plan::new(&args, None);
        assert_eq!(super::units(&plan).len(), plan.points.len());
    }

    #[test]
    fn parts_are_balanced_by_cost_and_cover_every_unit_once() {
        let costs = [10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 1, 1];
        let units: Vec<Unit> = costs.iter().enumerate().map(|(i, &c)| unit(c, i)).collect();
        let owner = partition(&units, 3);
        let mut load = [0u128; 3];
        for (u, &k) in units.iter().zip(&owner) {
            load[k] += u.cost;
        }
        // 57 in all: the greedy deal is within the largest unit of the mean.
        assert_eq!(load.iter().sum::<u128>(), 57);
        assert!(
            load.iter().max().unwrap() - load.iter().min().unwrap() <= 10,
            "{load:?}"
        );
        // The same units, the same parts.
        assert_eq!(partition(&units, 3), owner);
        // More parts than units: each unit alone, the rest empty.
        let owner = partition(&units[..2], 4);
        assert_eq!(owner, vec![0, 1]);
    }
}
