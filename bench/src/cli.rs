//! `lwbench`: the command line's entry point and the sweep, in four stages: the arguments
//! ([`crate::args`], the engine's settings in [`crate::engine_setup`]), the plan
//! ([`crate::plan`]), the schedule that runs its trials ([`crate::schedule`]) and the output
//! stage that writes every file from the plan and the trials ([`crate::output`]).
//!
//! `lwbench [OPTIONS]` runs a sweep; a subcommand (`lwbench NAME ...`, see [`SUBCOMMANDS`])
//! runs beside it with its own arguments.

use crate::args::{apply_experiment, check_selection, usage_error, Args, Given};
use crate::engine_setup::{check_engine, SimSweep};
use crate::output::Output;
use crate::plan::Plan;
use clap::{CommandFactory, FromArgMatches};
use lwharness::perf;
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

/// A subcommand: `lwbench NAME ARGS...` runs `main` with the program name `lwbench NAME` and
/// `ARGS` (its own parser: its bad arguments exit 2 naming the argument).
#[derive(Clone, Copy, Debug)]
pub struct Subcommand {
    /// Its name, the first argument.
    pub name: &'static str,
    /// One line for `--help`.
    pub about: &'static str,
    /// Its entry point.
    pub main: fn(Vec<std::ffi::OsString>) -> ExitCode,
}

/// The subcommands beside the plain `lwbench [OPTIONS]` (`lwbench torture` is
/// [`crate::Lwbench`]'s, which also hands its locks to lwtorture).
pub const SUBCOMMANDS: &[Subcommand] = &[
    Subcommand {
        name: "pg",
        about: "a real PostgreSQL in the loop: `lwbench pg record` records its LWLock traffic",
        main: crate::pg::main_with,
    },
    Subcommand {
        name: "merge",
        about: "`lwbench merge DIR... --out OUT`: the files of one run from the N partial \
                directories of `--shard K/N` (refuses a missing, duplicate, foreign or \
                incomplete shard)",
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
        .and_then(|a| SUBCOMMANDS.iter().find(|s| a == s.name))
    {
        let mut program = args[0].clone();
        program.push(format!(" {}", sub.name));
        return (sub.main)(
            std::iter::once(program)
                .chain(args[2..].iter().cloned())
                .collect(),
        );
    }
    let argv = args.get(1..).map(<[_]>::to_vec).unwrap_or_default();
    let r = resolve(args, None);
    let args = &r.args;
    if let Err(e) = prepare_out(&args.out) {
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

/// A sweep's command line, resolved: the arguments (an experiment file applied), the file, and
/// the engine.
#[derive(Debug)]
pub struct Resolved {
    /// The arguments.
    pub args: Args,
    /// `--experiment`'s file.
    pub experiment: Option<crate::experiment::Experiment>,
    /// The simulated machine, or `None` on the real engine.
    pub sim: Option<SimSweep>,
}

/// Parses and checks a sweep's command line `args` (the first item is the program name),
/// exiting 2 naming the argument on bad input. `base`: the directory the command line was given
/// in, where it was another one (`lwbench merge` re-reads a shard's command line there): a
/// relative `--experiment` path that does not resolve here is taken from there.
pub fn resolve(args: Vec<std::ffi::OsString>, base: Option<&Path>) -> Resolved {
    let matches = Args::command()
        .try_get_matches_from(args)
        .unwrap_or_else(|e| e.exit());
    let mut args = Args::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if let (Some(base), Some(path)) = (base, args.experiment.as_mut()) {
        if path.is_relative() && !path.exists() {
            *path = base.join(&*path);
        }
    }
    let given = |id: &str| matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
    let experiment = args.experiment.clone().map(|path| {
        for id in crate::experiment::FILE_OPTIONS {
            if given(id) {
                usage_error(
                    &format!("--{}", id.replace('_', "-")),
                    &matches
                        .get_raw(id)
                        .map(|v| v.map(|x| x.to_string_lossy()).collect::<Vec<_>>().join(","))
                        .unwrap_or_default(),
                    &format!(
                        "--experiment {} sets it (the experiment file says what runs)",
                        path.display()
                    ),
                );
            }
        }
        let exp = crate::experiment::load(&path).unwrap_or_else(|e| {
            usage_error(
                "--experiment <FILE>",
                &path.display().to_string(),
                &format!("experiment file {}: {e}", path.display()),
            )
        });
        apply_experiment(
            &exp,
            &mut args,
            Given {
                threads: given("threads"),
                out: given("out"),
                platform: given("platform"),
                cores: given("cores"),
            },
        );
        exp
    });
    if let Some(id) = args.shard.filter(|_| !given("out")) {
        // N shards of one command line must not share a directory.
        args.out = args.out.join(id.dir_name());
    }
    let sim = check_engine(&args);
    check_selection(&args);
    Resolved {
        args,
        experiment,
        sim,
    }
}

/// Creates `dir` and checks that it is writable.
pub fn prepare_out(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create directory: {e}"))?;
    let probe = dir.join(".lwbench-write-test");
    std::fs::write(&probe, b"").map_err(|e| format!("directory is not writable: {e}"))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
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
