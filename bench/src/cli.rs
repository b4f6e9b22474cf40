//! `lwbench`: the command line's entry point and the sweep, in four stages: the arguments
//! ([`crate::args`], the engine's settings in [`crate::engine_setup`]), the plan
//! ([`crate::plan`]), the schedule that runs its trials ([`crate::schedule`]) and the output
//! stage that writes every file from the plan and the trials ([`crate::output`]).
//!
//! `lwbench [OPTIONS]` runs a sweep; a subcommand (`lwbench NAME ...`, see [`SUBCOMMANDS`])
//! runs beside it with its own arguments.

use crate::args::{usage_error, Args};
use crate::engine_setup::SimSweep;
use crate::output::Output;
use crate::plan::Plan;
use crate::resolve::resolve;
use crate::subcommands::Info;
use lwharness::perf;
use std::io::Write as _;
use std::process::ExitCode;
use std::time::Instant;

/// A subcommand: `lwbench NAME ARGS...` runs `main` with the program name `lwbench NAME` and
/// `ARGS` (its own parser: its bad arguments exit 2 naming the argument).
#[derive(Clone, Copy, Debug)]
pub struct Subcommand {
    /// Its name and its line for `--help` ([`crate::subcommands::LIST`]).
    pub info: Info,
    /// Its entry point.
    pub main: fn(Vec<std::ffi::OsString>) -> ExitCode,
}

/// The subcommands beside the plain `lwbench [OPTIONS]` (`lwbench torture` is
/// [`crate::Lwbench`]'s, which also hands its locks to lwtorture), in the order of
/// [`crate::subcommands::LIST`].
pub const SUBCOMMANDS: &[Subcommand] = &[
    Subcommand {
        info: crate::subcommands::LIST[0],
        main: crate::pg::main_with,
    },
    Subcommand {
        info: crate::subcommands::LIST[1],
        main: crate::merge::main_with,
    },
];

/// Parses the command line and runs the sweep. Exit status: 0 done, 1 a run failed (an
/// invariant check or an I/O error), 2 bad arguments.
pub fn main() -> ExitCode {
    main_with(std::env::args_os())
}

/// [`main`] with the command line `args` (the first item is the program name). Bad arguments
/// still exit the process with status 2, as clap does.
pub fn main_with<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    if let Some(sub) = args
        .get(1)
        .and_then(|a| SUBCOMMANDS.iter().find(|s| a == s.info.name))
    {
        let mut program = args[0].clone();
        program.push(format!(" {}", sub.info.name));
        return (sub.main)(
            std::iter::once(program)
                .chain(args[2..].iter().cloned())
                .collect(),
        );
    }
    let argv = args.get(1..).map(<[_]>::to_vec).unwrap_or_default();
    let r = resolve(args, None);
    let args = &r.args;
    if let Err(e) = crate::output::prepare_out(&args.out) {
        usage_error("--out <OUT>", &args.out.display().to_string(), &e);
    }
    if let Some(id) = args.shard {
        return match crate::shard::run(&r, id, &argv) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(1)
            }
        };
    }
    let done = run(args, r.sim.clone()).and_then(|()| match &r.experiment {
        Some(exp) => crate::experiment::write_table(exp, &args.out).map(|md| {
            println!("\n{md}\nwrote {}", args.out.join("experiment.md").display());
        }),
        None => Ok(()),
    });
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// The sweep: plan, schedule, output.
pub(crate) fn run(args: &Args, sim: Option<SimSweep>) -> Result<(), String> {
    let started = Instant::now();
    let probe = perf::probe();
    let (plan, notes) = Plan::new(args, sim);
    let mut meta = plan.meta(args, &probe);
    let out = &args.out;
    crate::output::write_meta(out, &meta)?;
    for note in notes {
        eprintln!("{note}");
    }
    let total = plan.points.len();
    let sweeps = plan.sweeps();
    if let Some(m) = &plan.sim {
        let s = &m.setup;
        eprintln!(
            "lwbench: {} points x {} trials of {:?} + {:?} warm-up in virtual time{}, simulated on \
             {} ({} cores), seed {}, {} at a time",
            total,
            plan.trials,
            plan.duration,
            plan.warmup,
            if sweeps > 1 {
                format!(", {sweeps} sweeps (the base and the sensitivity arms)")
            } else {
                String::new()
            },
            s.platform,
            s.cores,
            plan.seed,
            m.jobs
        );
    } else {
        let (est, each) = if plan.interleave {
            (
                ((plan.warmup + plan.duration) * plan.trials).as_secs_f64() * total as f64,
                ", each after its own warm-up, interleaved",
            )
        } else {
            (
                (plan.warmup + plan.duration * plan.trials).as_secs_f64() * total as f64,
                "",
            )
        };
        eprintln!(
            "lwbench: {} points x ({} trials of {:?} + {:?} warm-up{each}), about {:.0} s; {}",
            total, plan.trials, plan.duration, plan.warmup, est, probe
        );
    }
    let mut output = Output::create(out, &plan)?;
    let trial_order = crate::schedule::run(&plan, &probe, &mut output)?;
    meta["elapsed_s"] = serde_json::json!((started.elapsed().as_secs_f64() * 10.0).round() / 10.0);
    if plan.interleave {
        meta["trial_order"] = serde_json::json!(trial_order);
    }
    output.describe_run(&mut meta);
    let tables = output.finish(&plan, &meta)?;
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(
        stdout,
        "{tables}\nwrote {} ({:.0} s)",
        out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::SUBCOMMANDS;

    #[test]
    fn every_listed_subcommand_has_an_entry_point_once() {
        assert_eq!(SUBCOMMANDS.len(), crate::subcommands::LIST.len());
        for (sub, info) in SUBCOMMANDS.iter().zip(crate::subcommands::LIST) {
            assert_eq!(sub.info.name, info.name);
        }
        let mut names: Vec<_> = SUBCOMMANDS.iter().map(|s| s.info.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), SUBCOMMANDS.len(), "a subcommand named twice");
    }
}
