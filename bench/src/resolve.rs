//! A sweep's command line resolved: parsed, its experiment file applied, its engine checked
//! (for `lwbench` and for `lwbench merge`, which re-reads each shard's command line).

use crate::args::{apply_experiment, check_selection, usage_error, Args, Given};
use crate::engine_setup::{check_engine, SimSweep};
use clap::{CommandFactory, FromArgMatches};
use std::path::Path;

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
                era_traffic: given("era_traffic"),
                idle: given("idle"),
                status_lookups: given("status_lookups"),
                wal_hold: given("wal_hold"),
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
