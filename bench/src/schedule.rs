//! The schedule: in which order a plan's trials run, and on what. The real engine runs a point's
//! warm-up and then its trials, point by point, or with `--interleave` the trials of the locks
//! compared at a point in turn; the simulator runs every trial of every sweep as a task of its
//! own, `--jobs` at a time. Whatever the order, each point's trials reach the output stage in
//! plan order (sweep, point), and the progress bar and notes go to stderr.

use crate::engine_setup::SimSweep;
use crate::output::Output;
use crate::plan::{Plan, PlannedPoint};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lwharness::engine::{self, SimSetup};
use lwharness::perf::Probe;
use lwharness::runner::{self, TrialResult};

/// Runs `plan`'s trials and feeds each point's to `output` in plan order; returns the order the
/// trials ran in with `--interleave` (for `meta.json`), else nothing.
pub fn run(plan: &Plan, probe: &Probe, output: &mut Output) -> Result<Vec<String>, String> {
    let total = plan.points.len();
    let trials = plan.trials;
    // With --interleave the bar counts trials (a point is complete only when its batch's last
    // round ends), otherwise points.
    let steps = if plan.interleave {
        total * trials as usize
    } else {
        total * plan.sweeps()
    };
    let pb = ProgressBar::with_draw_target(Some(steps as u64), ProgressDrawTarget::stderr());
    pb.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} [{elapsed_precise} / ~{eta}]")
            .map_err(|e| e.to_string())?,
    );
    // Hands one point's trials to the output stage.
    let mut emit = |sweep: usize, p: &PlannedPoint, done: Vec<TrialResult>| {
        if !plan.interleave {
            pb.set_message(p.label());
            pb.inc(1);
        }
        for note in output.point(sweep, p, done)? {
            pb.suspend(|| eprintln!("{note}"));
        }
        Ok::<(), String>(())
    };
    // The order the trials ran in, with `--interleave` (recorded in meta.json).
    let mut trial_order: Vec<String> = Vec::new();
    match &plan.sim {
        None if plan.interleave => {
            // Each workload's points (contiguous in the plan) are run batch by batch, a batch
            // being the locks compared at one layout/snapshot pair and thread count; a point is
            // written as soon as it and every point before it in the plan have all their trials,
            // so the files stay in plan order and a failure loses only the points not yet
            // complete.
            // Every trial starts from PostgreSQL's initial spin estimate (another lock's trials
            // ran since this lock's last one).
            let points = &plan.points;
            let mut done: Vec<Vec<TrialResult>> = points.iter().map(|_| Vec::new()).collect();
            let mut next = 0;
            for batch in interleave_batches(points) {
                for round in 0..trials as usize {
                    for r in 0..batch.len() {
                        let j = batch[(round + r) % batch.len()];
                        let what = format!("{} (trial {})", points[j].label(), round + 1);
                        pb.set_message(what.clone());
                        trial_order.push(what);
                        done[j].push(warm_then_trial(plan, &points[j], probe)?);
                        pb.inc(1);
                    }
                }
                while next < points.len() && done[next].len() == trials as usize {
                    emit(0, &points[next], std::mem::take(&mut done[next]))?;
                    next += 1;
                }
            }
        }
        None => {
            for p in &plan.points {
                pb.set_message(p.label());
                let mut done = vec![warm_then_trial(plan, p, probe)?];
                for _ in 1..trials {
                    done.push(runner::run_trial(&p.spec, probe)?);
                }
                emit(0, p, done)?;
            }
        }
        Some(m) => {
            // A simulation starts from a fresh machine (and a fresh spin estimate); the warm-up
            // runs inside each trial, before its window. Tasks in sweep order: sweep, point,
            // trial; the results come back in that order whatever `--jobs`.
            let tasks: Vec<(usize, usize, u32)> = (0..plan.sweeps())
                .flat_map(|s| (0..total).flat_map(move |p| (1..=trials).map(move |k| (s, p, k))))
                .collect();
            let mut pending: Vec<TrialResult> = Vec::new();
            crate::jobs::run_ordered(
                m.jobs,
                &tasks,
                |&(s, p, k)| sim_trial(plan, m, (s, p, k), probe),
                |i, r| {
                    pending.push(r?);
                    let (s, p, k) = tasks[i];
                    if k == trials {
                        emit(s, &plan.points[p], std::mem::take(&mut pending))?;
                    }
                    Ok(())
                },
            )?;
        }
    }
    pb.finish_and_clear();
    Ok(trial_order)
}

/// On the simulator: trial `k` of point `p` on the machine of sweep `s`.
fn sim_trial(
    plan: &Plan,
    m: &SimSweep,
    (s, p, k): (usize, usize, u32),
    probe: &Probe,
) -> Result<TrialResult, String> {
    let mut spec = plan.points[p].spec.clone();
    spec.sim = Some(SimSetup {
        seed: engine::trial_seed(plan.seed, k),
        ..m.arms[s].clone()
    });
    runner::run_trial(&spec, probe)
}

/// The batches of points whose trials `--interleave` runs in turn (round by round), in plan
/// order: within each workload's points, the locks compared at one layout/snapshot pair, thread
/// count and proc-array size (the batches [`run`] forms).
pub fn interleave_batches(points: &[PlannedPoint]) -> Vec<Vec<usize>> {
    let mut batches = Vec::new();
    let mut start = 0;
    while start < points.len() {
        let w = points[start].workload;
        let end = start
            + points[start..]
                .iter()
                .take_while(|p| p.workload == w)
                .count();
        let mut seen = vec![false; end - start];
        for i in start..end {
            if seen[i - start] {
                continue;
            }
            let same = |q: &PlannedPoint| {
                q.layout_snapshot.label() == points[i].layout_snapshot.label()
                    && q.spec.threads == points[i].spec.threads
                    && q.spec.procs == points[i].spec.procs
            };
            let batch: Vec<usize> = (i..end).filter(|&j| same(&points[j])).collect();
            for &j in &batch {
                seen[j - start] = true;
            }
            batches.push(batch);
        }
        start = end;
    }
    batches
}

/// Runs the trials `(sweep, point, trial)` of one shard (`--shard`): on the simulator any set of
/// trials, `--jobs` at a time; on the real engine whole points (`points`: each runs its warm-up
/// and its trials) or, with `--interleave`, whole batches (each batch's trials in turn, as [`run`]
/// runs them). Hands each trial to `sink` as it completes (on the simulator in the order of
/// `trials`); returns the order the trials ran in with `--interleave`.
pub fn run_shard(
    plan: &Plan,
    probe: &Probe,
    trials: &[(usize, usize, u32)],
    batches: &[Vec<usize>],
    mut sink: impl FnMut((usize, usize, u32), TrialResult) -> Result<(), String>,
) -> Result<Vec<String>, String> {
    let steps = match &plan.sim {
        Some(_) => trials.len(),
        None => batches.iter().map(Vec::len).sum::<usize>() * plan.trials as usize,
    };
    let pb = ProgressBar::with_draw_target(Some(steps as u64), ProgressDrawTarget::stderr());
    pb.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} [{elapsed_precise} / ~{eta}]")
            .map_err(|e| e.to_string())?,
    );
    let mut trial_order = Vec::new();
    match &plan.sim {
        Some(m) => {
            crate::jobs::run_ordered(
                m.jobs,
                trials,
                |&t| sim_trial(plan, m, t, probe),
                |i, r| {
                    let (s, p, k) = trials[i];
                    pb.set_message(format!("{} (sweep {s}, trial {k})", plan.points[p].label()));
                    pb.inc(1);
                    sink(trials[i], r?)
                },
            )?;
        }
        None => {
            for batch in batches {
                if plan.interleave {
                    for round in 0..plan.trials as usize {
                        for r in 0..batch.len() {
                            let j = batch[(round + r) % batch.len()];
                            let p = &plan.points[j];
                            let what = format!("{} (trial {})", p.label(), round + 1);
                            pb.set_message(what.clone());
                            trial_order.push(what);
                            sink((0, j, round as u32 + 1), warm_then_trial(plan, p, probe)?)?;
                            pb.inc(1);
                        }
                    }
                } else {
                    for &j in batch {
                        let p = &plan.points[j];
                        pb.set_message(p.label());
                        sink((0, j, 1), warm_then_trial(plan, p, probe)?)?;
                        pb.inc(1);
                        for k in 2..=plan.trials {
                            sink((0, j, k), runner::run_trial(&p.spec, probe)?)?;
                            pb.inc(1);
                        }
                    }
                }
            }
        }
    }
    pb.finish_and_clear();
    Ok(trial_order)
}

/// On the real engine: a warm-up trial of the point, discarded, from PostgreSQL's initial spin
/// estimate whatever ran before (the estimate is folded in by every exiting thread and would
/// carry over), then one trial.
fn warm_then_trial(plan: &Plan, p: &PlannedPoint, probe: &Probe) -> Result<TrialResult, String> {
    lwlock::proc::set_shared_spins_per_delay(lwlock::s_lock::DEFAULT_SPINS_PER_DELAY);
    let mut spec = p.spec.clone();
    spec.duration = plan.warmup;
    runner::run_trial(&spec, probe)?;
    runner::run_trial(&p.spec, probe)
}
