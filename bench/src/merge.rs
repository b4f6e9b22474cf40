//! `lwbench merge DIR... --out OUT`: the files of one run (`results.csv`, `points.csv`,
//! `waits.csv`, `summary.md`, `meta.json`, the SVGs, the sensitivity and experiment tables) made
//! from the N partial directories that `--shard K/N` wrote ([`crate::shard`]), through the same
//! output stage a single run feeds ([`crate::output`]), with the trials in plan order.
//!
//! On the simulator the files are byte-identical to those of a single run of the same command
//! line, but for what describes the run rather than the result (`meta.json`'s command line,
//! start, elapsed time, host CPU and `host_cpus`, kernel, rustc, commit as `git` reads it,
//! dirty flag, `--jobs`, the simulations' real time and speed, and the `shards` record it adds; their echo
//! on `summary.md`'s second line). On the real engine each shard measured the machine it ran on:
//! `meta.json`'s `shards` names each one's host and CPU.
//!
//! It refuses, exit 2 naming the shard, and writes nothing: a directory without a complete
//! marker (a shard killed or still running), a shard given twice or overlapping another, a
//! shard of another plan or commit or of another N, a missing shard (it lists the K to rerun
//! and the command), and a trials file that does not hold exactly the shard's trials.

use crate::plan::Plan;
use crate::shard::{self, Marker, TrialId, TrialLine};
use clap::Parser;
use lwharness::runner::TrialResult;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `lwbench merge`: one run's files from the partial directories of `--shard K/N`.
#[derive(Parser, Debug)]
#[command(
    name = "lwbench merge",
    about = "Makes the files of one run from the N partial directories that `lwbench ... \
             --shard K/N` wrote (K = 0..N-1). Refuses, exit 2 naming the shard, a missing shard \
             (listing the K to rerun), a duplicate or overlapping one, one of another plan or \
             commit, and an incomplete one (killed mid-run)."
)]
struct MergeArgs {
    /// The shards' directories (their `--out`), all N of them, in any order.
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// Output directory: the files a single run writes.
    #[arg(long)]
    out: PathBuf,
}

/// Why a merge did not happen.
enum Error {
    /// A shard is missing, foreign, duplicate or incomplete (exit 2).
    Refused(Vec<String>),
    /// Writing failed (exit 1).
    Failed(String),
}

/// The entry point of `lwbench merge` (see [`crate::cli::SUBCOMMANDS`]).
pub fn main_with(args: Vec<OsString>) -> ExitCode {
    let a = MergeArgs::try_parse_from(args).unwrap_or_else(|e| e.exit());
    match merge(&a) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Error::Refused(why)) => {
            for w in why {
                eprintln!("error: {w}");
            }
            eprintln!("lwbench merge: nothing written");
            ExitCode::from(2)
        }
        Err(Error::Failed(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// A shard's directory, read.
struct Shard {
    dir: PathBuf,
    marker: Marker,
}

fn read_marker(path: &Path) -> Result<Marker, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let m: Marker = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not a shard record: {e}", path.display()))?;
    if m.format != shard::FORMAT {
        return Err(format!(
            "{}: format {} (this lwbench reads {})",
            path.display(),
            m.format,
            shard::FORMAT
        ));
    }
    Ok(m)
}

/// The sweep's arguments without `--shard` and `--out` (for the rerun command).
fn rerun_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
            continue;
        }
        if a == "--shard" || a == "--out" {
            skip = true;
        } else if !(a.starts_with("--shard=") || a.starts_with("--out=")) {
            out.push(a.clone());
        }
    }
    out
}

/// Reads and checks every directory; the shards, in K order.
fn check(dirs: &[PathBuf]) -> Result<Vec<Shard>, Vec<String>> {
    let mut why = Vec::new();
    let mut shards: Vec<Shard> = Vec::new();
    for dir in dirs {
        let complete = dir.join(shard::SHARD_FILE);
        let incomplete = dir.join(shard::INCOMPLETE_FILE);
        if complete.exists() {
            match read_marker(&complete) {
                Ok(m) if m.complete => shards.push(Shard {
                    dir: dir.clone(),
                    marker: m,
                }),
                Ok(m) => why.push(format!(
                    "{}: shard {}/{} is incomplete (its record says so)",
                    dir.display(),
                    m.k,
                    m.n
                )),
                Err(e) => why.push(e),
            }
        } else if incomplete.exists() {
            let which = read_marker(&incomplete)
                .map(|m| format!("shard {}/{}", m.k, m.n))
                .unwrap_or_else(|_| "a shard".into());
            why.push(format!(
                "{}: {which} is incomplete: {} is there and {} is not (killed, failed or still \
                 running); rerun it alone",
                dir.display(),
                shard::INCOMPLETE_FILE,
                shard::SHARD_FILE
            ));
        } else {
            why.push(format!(
                "{}: not a shard directory (no {}; was it written by lwbench --shard K/N?)",
                dir.display(),
                shard::SHARD_FILE
            ));
        }
    }
    let Some(first) = shards.first().map(|s| s.marker.clone()) else {
        return Err(why);
    };
    let own = shard::commit();
    let mut by_k: BTreeMap<usize, &Shard> = BTreeMap::new();
    let mut seen: BTreeMap<TrialId, &Shard> = BTreeMap::new();
    for s in &shards {
        let m = &s.marker;
        let name = format!("{}: shard {}/{}", s.dir.display(), m.k, m.n);
        if m.commit != own {
            why.push(format!(
                "{name} is of another commit: {} (here: {own}; the first shard: {}); rerun it at \
                 this commit, or merge where it ran",
                m.commit, first.commit
            ));
            continue;
        }
        if m.plan_hash == first.plan_hash && m.n != first.n {
            why.push(format!(
                "{name} is a part of another partition of this plan ({} parts; the first \
                 shard, {}, is one of {}): its trials overlap theirs",
                m.n,
                shards[0].dir.display(),
                first.n
            ));
            continue;
        }
        if m.plan_hash != first.plan_hash || m.engine != first.engine {
            why.push(format!(
                "{name} is of another plan: plan {} in {} parts (the first shard, {}: plan {} in \
                 {} parts)",
                m.plan_hash,
                m.n,
                shards[0].dir.display(),
                first.plan_hash,
                first.n
            ));
            continue;
        }
        if let Some(other) = by_k.get(&m.k) {
            why.push(format!(
                "{name} is given twice: {} and {} (keep one)",
                other.dir.display(),
                s.dir.display()
            ));
            continue;
        }
        if let Some((t, other)) = m.trials.iter().find_map(|t| seen.get(t).map(|o| (*t, *o))) {
            why.push(format!(
                "{name} overlaps shard {}/{} ({}): both hold trial {} of point {} (sweep {})",
                other.marker.k,
                other.marker.n,
                other.dir.display(),
                t.2,
                t.1,
                t.0
            ));
            continue;
        }
        for &t in &m.trials {
            seen.insert(t, s);
        }
        by_k.insert(m.k, s);
    }
    let missing: Vec<usize> = (0..first.n).filter(|k| !by_k.contains_key(k)).collect();
    if !missing.is_empty() && why.is_empty() {
        let args = rerun_args(&first.args).join(" ");
        why.push(format!(
            "missing shard{} of {}: K = {}; rerun {} alone, then merge all {}: {}",
            if missing.len() > 1 { "s" } else { "" },
            first.n,
            missing
                .iter()
                .map(|k| k.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            if missing.len() > 1 { "each" } else { "it" },
            first.n,
            missing
                .iter()
                .map(|k| format!("`lwbench {args} --shard {k}/{} --out DIR`", first.n))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    } else if !missing.is_empty() {
        why.push(format!(
            "missing shard{} of {}: K = {}",
            if missing.len() > 1 { "s" } else { "" },
            first.n,
            missing
                .iter()
                .map(|k| k.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !why.is_empty() {
        return Err(why);
    }
    shards.sort_by_key(|s| s.marker.k);
    Ok(shards)
}

/// Reads a shard's trials, checking that they are exactly the ones its record names.
fn read_trials(s: &Shard) -> Result<Vec<(TrialId, TrialResult)>, String> {
    let path = s.dir.join(shard::TRIALS_FILE);
    let name = format!("shard {}/{}", s.marker.k, s.marker.n);
    let f = std::fs::File::open(&path).map_err(|e| format!("{} ({name}): {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
        let at = format!("{}:{} ({name})", path.display(), i + 1);
        let line = line.map_err(|e| format!("{at}: {e}"))?;
        let t: TrialLine = serde_json::from_str(&line).map_err(|e| format!("{at}: {e}"))?;
        out.push((
            t.trial,
            t.result.to_result().map_err(|e| format!("{at}: {e}"))?,
        ));
    }
    let got: BTreeSet<TrialId> = out.iter().map(|(t, _)| *t).collect();
    let want: BTreeSet<TrialId> = s.marker.trials.iter().copied().collect();
    if got != want || got.len() != out.len() {
        return Err(format!(
            "{} ({name}) holds {} trials, not the {} its record names",
            path.display(),
            out.len(),
            want.len()
        ));
    }
    Ok(out)
}

fn merge(a: &MergeArgs) -> Result<(), Error> {
    let started = std::time::Instant::now();
    let shards = check(&a.dirs).map_err(Error::Refused)?;
    let first = &shards[0].marker;
    let sim_run = first.engine == lwharness::engine::Engine::Sim.name();
    if sim_run != lwharness::engine::SIM_BACKEND {
        return Err(Error::Refused(vec![format!(
            "{}: the shards ran on --engine {}; merge them with the lwbench build that ran them \
             ({})",
            shards[0].dir.display(),
            first.engine,
            if sim_run {
                lwharness::engine::SIM_COMMAND
            } else {
                "a build without --cfg lwsim"
            }
        )]));
    }
    let argv: Vec<OsString> = std::iter::once(OsString::from("lwbench"))
        .chain(first.args.iter().map(OsString::from))
        .collect();
    let mut r = crate::resolve::resolve(argv, Some(&first.cwd));
    r.args.out = a.out.clone();
    let args = &r.args;
    let probe = lwharness::perf::probe();
    let (plan, _) = Plan::new(args, r.sim.clone());
    let mut meta = plan.meta(args, &probe);
    let hash = shard::plan_hash(&plan, &meta, r.experiment.as_ref());
    if hash != first.plan_hash {
        return Err(Error::Refused(vec![format!(
            "{}: shard {}/{} is of plan {}, but its command line makes plan {hash} here (an \
             experiment or profile file changed since it ran?)",
            shards[0].dir.display(),
            first.k,
            first.n,
            first.plan_hash
        )]));
    }
    // Every shard's record must name the trials the partition gives it.
    let units = shard::units(&plan);
    let owner = shard::partition(&units, first.n);
    for s in &shards {
        let mut want: Vec<TrialId> = units
            .iter()
            .zip(&owner)
            .filter(|(_, &o)| o == s.marker.k)
            .flat_map(|(u, _)| u.trials.clone())
            .collect();
        want.sort_unstable();
        if want != s.marker.trials {
            return Err(Error::Refused(vec![format!(
                "{}: shard {}/{} names other trials than part {} of this plan",
                s.dir.display(),
                s.marker.k,
                s.marker.n,
                s.marker.k
            )]));
        }
    }
    let mut trials: BTreeMap<TrialId, TrialResult> = BTreeMap::new();
    for s in &shards {
        trials.extend(read_trials(s).map_err(|e| Error::Refused(vec![e]))?);
    }
    if trials.len() != shard::all_trials(&plan).len() {
        return Err(Error::Refused(vec![format!(
            "the shards hold {} of the plan's {} trials",
            trials.len(),
            shard::all_trials(&plan).len()
        )]));
    }
    crate::output::prepare_out(&a.out)
        .map_err(|e| Error::Refused(vec![format!("--out {}: {e}", a.out.display())]))?;
    let fail = Error::Failed;
    crate::output::write_meta(&a.out, &meta).map_err(fail)?;
    let mut output = crate::output::Output::create(&a.out, &plan).map_err(fail)?;
    for s in 0..plan.sweeps() {
        for (p, point) in plan.points.iter().enumerate() {
            let done: Vec<TrialResult> = (1..=plan.trials)
                .map(|k| {
                    trials
                        .remove(&(s, p, k))
                        .expect("checked: every trial is in")
                })
                .collect();
            for note in output.point(s, point, done).map_err(fail)? {
                eprintln!("{note}");
            }
        }
    }
    let elapsed = shards
        .iter()
        .filter_map(|s| s.marker.run["elapsed_s"].as_f64())
        .fold(0.0, f64::max);
    meta["elapsed_s"] = serde_json::json!(elapsed);
    if plan.interleave {
        meta["trial_order"] = serde_json::json!(shards
            .iter()
            .flat_map(|s| s.marker.run["trial_order"]
                .as_array()
                .cloned()
                .unwrap_or_default())
            .collect::<Vec<_>>());
    }
    meta["shards"] = serde_json::json!({
        "n": first.n,
        "plan_hash": first.plan_hash,
        "commit": first.commit,
        "note": if sim_run {
            "merged from N shards (lwbench merge); elapsed_s is the longest shard's; every \
             simulated figure is the one a single run writes"
        } else {
            "merged from N shards (lwbench merge): each shard measured the machine it ran on \
             (its host and CPU below); elapsed_s is the longest shard's"
        },
        "merge_real_s": (started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
        "parts": shards.iter().map(|s| {
            let mut run = s.marker.run.clone();
            run["k"] = serde_json::json!(s.marker.k);
            run["trials"] = serde_json::json!(s.marker.trials.len());
            run["dir"] = serde_json::json!(s.dir.display().to_string());
            run
        }).collect::<Vec<_>>(),
    });
    output.describe_run(&mut meta);
    let tables = output.finish(&plan, &meta).map_err(fail)?;
    if let Some(exp) = &r.experiment {
        let md = crate::experiment::write_table(exp, &a.out).map_err(fail)?;
        println!("\n{md}");
    }
    println!(
        "{tables}\nmerged {} shards of plan {} into {}",
        shards.len(),
        first.plan_hash,
        a.out.display()
    );
    Ok(())
}
