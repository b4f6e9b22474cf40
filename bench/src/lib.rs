//! lwbench: a PostgreSQL-shaped lock contention harness.
//!
//! Sweeps workloads × locks × thread counts over the shared state whose locks PostgreSQL
//! contends on, measuring throughput, fairness (Jain's index), sampled wait times, perf-event
//! counters and a pg_stat_activity-style wait-event profile. This crate is the command line and
//! the reporting; the harness itself is `lwharness`, re-exported here under its module names:
//!
//! * [`cli`]: the entry point and the sweep's four stages, each in a module of its own:
//!   [`args`] (the command line; the engine's settings in [`engine_setup`]), [`plan`] (the
//!   points, trials and machines), [`schedule`] (the order the trials run in) and [`output`]
//!   (every file, from the plan and the trials).
//! * [`experiment`]: `--experiment FILE`, a seed thread's experiment as data, and its table.
//! * [`report`]: the rows of the CSV files.
//! * [`figures`]: the stdout tables, `summary.md` and the SVGs, in each workload's unit.
//! * [`jobs`]: `--jobs`, simulated trials side by side, their results in sweep order.
//! * [`pg`]: `lwbench pg record`, a real PostgreSQL server's LWLock traffic as a trace.
//! * [`sensitivity`]: `--set` overrides and the `--sensitivity` table.
//! * [`shapes`]: the hand-written shapes' lock counts against PostgreSQL 15's traces.
//! * [`shard`]: `--shard K/N`, one of N deterministic parts of a plan, and its partial result
//!   directory ([`stored_trial`]: a trial's result as stored); [`merge`]: `lwbench merge`, one
//!   run's files from the N parts.
//! * [`Lwbench`]: a user's own lock in the whole harness, and under `lwtorture`.
//! * From `lwharness`: [`locks`] (the lock families and, as a facade, the registry),
//!   [`registry`], [`flex`], [`pgshared`], [`snapshot`], [`workload`], [`clock`], [`runner`],
//!   [`perf`], [`engine`], [`parse`].
#![deny(missing_docs)]

pub mod args;
pub mod cli;
pub mod engine_setup;
pub mod experiment;
pub mod figures;
pub mod jobs;
pub mod merge;
pub mod output;
pub mod pg;
pub mod plan;
pub mod report;
pub mod resolve;
pub mod schedule;
pub mod sensitivity;
pub mod shapes;
pub mod shard;
pub mod shard_id;
pub mod stored_trial;
pub mod subcommands;

pub use lwharness::{
    clock, engine, flex, parse, perf, pgshared, registry, runner, snapshot, workload,
};

/// The lock families and the lock registry, under their old path: the closure-level
/// [`BenchLock`](lwharness::locks::BenchLock) trait and its adapters (`lwharness::locks`), the registry
/// (`lwharness::registry`) and the group-lock families (`lwharness::flex`).
pub mod locks {
    pub use lwharness::flex::{
        ClogGroupFamily, FlexHolderFamily, FlexLeaderFamily, FlexReleaserFamily,
    };
    pub use lwharness::locks::*;
    pub use lwharness::registry::*;
}

/// lwbench as a library: a user's own lock, measured with the whole harness, without forking it.
///
/// A crate that implements [`lwlock::RawLwLock`] (its atomics, spin hints and futexes through
/// `lwlock::sync`, so that the simulator sees them) registers it by name in its own `main` and
/// gets the whole command line: every workload, every output file and table, the invariant
/// checks, and both engines (`--engine sim` in a `--cfg lwsim` build), side by side with the
/// project's locks (a registered lock is part of `--locks default` and `all`). The same lock
/// runs under `lwtorture` with `my-bench torture [lwtorture options]` (through the raw trait,
/// beside every lock of torture's `--locks all`):
///
/// ```no_run
/// # use lwlock::RawAtomicLwLock as MyLock;
/// fn main() -> std::process::ExitCode {
///     lwbench::Lwbench::new()
///         .lock::<MyLock>("my-lock", "my lock, from the thread of 2025-01-01")
///         .main()
/// }
/// ```
///
/// `bench/examples/ticket_lock.rs` registers a ticket lock this way.
#[derive(Debug, Default)]
pub struct Lwbench {
    locks: Vec<locks::UserLock>,
}

impl Lwbench {
    /// A harness with only the built-in locks.
    pub fn new() -> Self {
        Lwbench::default()
    }

    /// Adds lock type `L` under `name` (its `--locks` name and its column in every table) with
    /// a one-line `description` (shown by `--help`). On the simulated engine a lock that does not
    /// announce its own instruction time (`L::INSTRUCTIONS_ANNOUNCED` false, the default) is
    /// charged lwlock's default per acquire and release
    /// ([`lwlock::default_instructions`]); one that does is run as it is.
    pub fn lock<L: lwlock::RawLwLock + 'static>(
        mut self,
        name: &'static str,
        description: &'static str,
    ) -> Self {
        type Charged<L> = lwlock::default_instructions::DefaultInstructions<L>;
        self.locks.push(
            locks::UserLock::new(name, description)
                .with::<runner::Trial, locks::RawFamily<Charged<L>>>()
                .with::<lwtorture::Torture, locks::RawFamily<Charged<L>>>(),
        );
        self
    }

    /// Registers the locks and runs the command line (see [`cli::main`]), or, for
    /// `PROGRAM torture [ARGS]`, `lwtorture` with `ARGS` (see `lwtorture::main_with`); exits 2 if
    /// a name is taken.
    pub fn main(self) -> std::process::ExitCode {
        self.main_with(std::env::args_os())
    }

    /// [`main`](Self::main) with the command line `args` (the first item is the program name).
    pub fn main_with<I, T>(self, args: I) -> std::process::ExitCode
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        for l in self.locks {
            let name = l.name;
            if let Err(e) = locks::register_user_lock(l) {
                eprintln!("error: cannot register lock {name}: {e}");
                return std::process::ExitCode::from(2);
            }
        }
        let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
        if args.get(1).is_some_and(|a| a == "torture") {
            let mut program = args[0].clone();
            program.push(" torture");
            return lwtorture::main_with(std::iter::once(program).chain(args[2..].iter().cloned()));
        }
        cli::main_with(args)
    }
}

/// The guide's examples (lwlock, flexlock, lwbench), compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/guide.md")]
pub struct GuideDoctests;
