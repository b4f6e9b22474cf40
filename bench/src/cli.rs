//! The command line and the sweep driver.

use crate::report::{self, PointRow, ResultRow, WaitRow};
use clap::{CommandFactory, FromArgMatches, Parser};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lwharness::engine::{self, Engine, SimSetup};
pub use lwharness::parse::parse_duration;
use lwharness::parse::{self, parse_seed};
use lwharness::perf;
use lwharness::registry::LockKind;
use lwharness::runner::{self, PointSpec};
use lwharness::snapshot::{Layout, Strategy};
use lwharness::workload::{WorkerConfig, Workload};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// A `--locks` item: a lock, `all` (every lock that applies to the workload) or `default`
/// (the project's locks plus parking_lot).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockSel {
    /// One lock.
    One(LockKind),
    /// Every lock that applies.
    All,
    /// The default suite's locks.
    Default,
}

/// A `--threads` item: a count or an `a:b` doubling range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadSpec(pub Vec<usize>);

fn parse_workload(s: &str) -> Result<Workload, String> {
    Workload::from_name(s.trim()).ok_or_else(|| {
        format!(
            "unknown workload '{s}' (valid: {})",
            Workload::valid_names()
        )
    })
}

fn parse_lock(s: &str) -> Result<LockSel, String> {
    match s.trim() {
        "all" => Ok(LockSel::All),
        "default" => Ok(LockSel::Default),
        n => LockKind::from_name(n).map(LockSel::One).ok_or_else(|| {
            format!(
                "unknown lock '{s}' (valid: {}, default)",
                LockKind::valid_names()
            )
        }),
    }
}

fn parse_layout(s: &str) -> Result<Vec<Layout>, String> {
    match s.trim() {
        "all" => Ok(Layout::ALL.to_vec()),
        n => Layout::from_name(n)
            .map(|l| vec![l])
            .ok_or_else(|| format!("unknown layout '{s}' (valid: padded, pgxact, dense, all)")),
    }
}

fn parse_strategy(s: &str) -> Result<Vec<Strategy>, String> {
    match s.trim() {
        "all" => Ok(Strategy::ALL.to_vec()),
        n => Strategy::from_name(n).map(|l| vec![l]).ok_or_else(|| {
            format!("unknown snapshot strategy '{s}' (valid: scan, reuse, optimistic, shared, all)")
        }),
    }
}

/// Parses `8` or `1:64` (1, 2, 4, … doubling up to 64, always including 64).
pub fn parse_threads(s: &str) -> Result<ThreadSpec, String> {
    parse::parse_thread_range(s).map(ThreadSpec)
}

/// Parses a sampling interval: a duration, or `off` (no sampler).
pub fn parse_sample_interval(s: &str) -> Result<Duration, String> {
    match s.trim() {
        "off" => Ok(Duration::ZERO),
        _ => parse_duration(s).map_err(|e| format!("{e}, or `off`")),
    }
}

fn parse_positive_u32(s: &str) -> Result<u32, String> {
    parse::parse_positive(s, u32::MAX.into()).map(|n| n as u32)
}

fn parse_positive_usize(s: &str) -> Result<usize, String> {
    parse::parse_positive(s, usize::MAX as u64).map(|n| n as usize)
}

/// `--engine`: its possible values are the engines' names (clap lists them in `--help` and in
/// the error for a bad one).
fn engine_parser() -> impl clap::builder::TypedValueParser<Value = Engine> {
    use clap::builder::PossibleValue;
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new([
        PossibleValue::new(Engine::Real.name())
            .help("The host: real threads, the TSC or `Instant`, perf counters"),
        PossibleValue::new(Engine::Sim.name())
            .help("lwsim: the simulated machine of `--platform` (a `--cfg lwsim` build)"),
    ])
    .map(|s| Engine::from_name(&s).expect("one of the possible values"))
}

/// lwbench: PostgreSQL-shaped lock contention benchmarks.
///
/// With no arguments, runs the quick default suite (snapshot, end-xact and clog; the project's
/// locks plus parking_lot; 1 to 64 threads) and writes `results/`.
#[derive(Debug, Parser)]
#[command(
    name = "lwbench",
    version,
    about,
    long_about = None,
    after_help = "WORKLOADS and LOCKS, one line each: see --help.",
    after_long_help = catalogue()
)]
pub struct Args {
    /// Workloads, comma-separated (each is described below, under WORKLOADS).
    #[arg(long, value_delimiter = ',', default_value = "snapshot,end-xact,clog", value_parser = parse_workload)]
    pub workload: Vec<Workload>,
    /// Locks, comma-separated (each is described below, under LOCKS); `all` = every lock that
    /// applies to the workload; `default` = the project's locks plus parking-lot.
    #[arg(long, value_delimiter = ',', default_value = "default", value_parser = parse_lock)]
    pub locks: Vec<LockSel>,
    /// Thread counts: a list of counts and `a:b` doubling ranges, e.g. `1,2,64` or `1:64`.
    #[arg(long, value_delimiter = ',', default_value = "1:64", value_parser = parse_threads)]
    pub threads: Vec<ThreadSpec>,
    /// Length of each trial, e.g. `300ms`, `2s` [default: 250ms; on `--engine sim` 1ms of
    /// virtual time]. With more threads than cores, fairness (Jain) needs about 20 scheduler
    /// slices per thread to mean anything; points that got fewer are flagged (`fair_short`).
    /// 250 ms gives a 64-thread point on 2 cores 5–20 slices per thread: the quick suite stays
    /// quick, and its fairness figures above the core count are flagged; use `--duration 2s`
    /// for fairness at 64 threads. The simulator's cost grows with the simulated work, not with
    /// the virtual time alone: its default keeps the default suite within a few minutes (see the
    /// guide, "Two engines", for the spread against virtual time).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Trials per point [default: 3, after one discarded warm-up trial; on `--engine sim` each
    /// trial is a simulation with its own seed, its warm-up inside it]. A simulated claim is a
    /// point's median over at least 10 trials (seeds) with its spread: `--trials 10`.
    #[arg(long, value_parser = parse_positive_u32)]
    pub trials: Option<u32>,
    /// Simulated trials run side by side on this many OS threads (`--engine sim`) [default:
    /// every local core]. Each simulation stays single-threaded and deterministic, and the
    /// files are the same for every N. The real engine measures one trial at a time: there
    /// `--jobs` above 1 exits 2.
    #[arg(long, value_parser = parse_positive_usize)]
    pub jobs: Option<usize>,
    /// Real engine: run the trials of the locks compared at one point in turn (trial 1 of
    /// every lock, then trial 2, each round starting from the next lock), each after its own
    /// warm-up and from PostgreSQL's initial spin estimate, instead of all the trials of one
    /// lock and then the next: a host whose speed
    /// drifts (a noisy or virtualised machine) then slows every lock's trials alike, and a
    /// ratio between two locks compares trials run side by side. Costs one warm-up per trial.
    #[arg(long)]
    pub interleave: bool,
    /// Overrides of the simulated profile (`--engine sim`), comma-separated or repeated: a cost
    /// key in ns (`futex_wake_ns=1000`) or a model parameter (`shared_load_occupancy=0`); see
    /// the profile's keys in `meta.json` (`sim.profile`). Recorded in `meta.json` and
    /// `summary.md`.
    #[arg(long = "set", value_name = "KEY=VALUE[,KEY=VALUE]")]
    pub set: Vec<String>,
    /// Profile keys to test (`--engine sim`): the sweep runs at the profile's value, at half
    /// and at twice it, for each key, and writes `sensitivity.md` and `sensitivity.csv`: per
    /// point and lock, the figure at base, x0.5 and x2 and the ratios to base. A key whose value
    /// is 0 is reported, not run (halving or doubling zero is no test).
    #[arg(long, value_delimiter = ',', value_name = "KEY[,KEY]")]
    pub sensitivity: Vec<String>,
    /// Length of the warm-up trial (default: half of --duration).
    #[arg(long, value_parser = parse_duration)]
    pub warmup: Option<Duration>,
    /// Percent of snapshot operations that end a transaction instead (exclusive).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=100))]
    pub write_pct: u8,
    /// Proc-array size (PGPROCs scanned per snapshot); default and minimum = the thread count.
    #[arg(long, value_parser = parse_positive_usize)]
    pub procs: Option<usize>,
    /// Busy work outside locks per transaction, in xorshift steps (about 1 ns each).
    #[arg(long, default_value_t = 0)]
    pub work: u32,
    /// Proc-array layouts, comma-separated: padded (≤ 9.1 PGPROC), pgxact (9.2–13), dense
    /// (14+), or all. Applies to the workloads that use the proc array.
    #[arg(long, value_delimiter = ',', default_value = "dense", value_parser = parse_layout)]
    pub layout: Vec<Vec<Layout>>,
    /// Snapshot strategies, comma-separated: scan, reuse (PG 14), optimistic (even/odd counter),
    /// shared (one computes, others copy), or all. Applies to the workloads that take snapshots.
    #[arg(long, value_delimiter = ',', default_value = "scan", value_parser = parse_strategy)]
    pub snapshot: Vec<Vec<Strategy>>,
    /// Wait-event sampling interval, or `off` for no sampler. The sampler is a thread of its
    /// own that competes with the workers; its cost is reported (`sampler_cpu_pct`).
    #[arg(long, default_value = "1ms", value_parser = parse_sample_interval)]
    pub sample_interval: Duration,
    /// Time one operation in N for the wait-time percentiles.
    #[arg(long, default_value = "64", value_parser = parse_positive_u32)]
    pub time_every: u32,
    /// Output directory.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
    /// `real`: this machine's threads and clock. `sim`: lwsim, a simulated many-core machine
    /// running the same workload and lock code in virtual time (`--platform`, `--cores`,
    /// `--seed`; `--threads` are its clients, `--duration`/`--warmup` virtual time). `sim` needs
    /// a binary built with the simulator backend:
    /// RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim cargo run --release -p bench
    /// --features stats -- --engine sim ...; that binary runs only `sim`. std and parking-lot
    /// cannot be simulated (their atomics are their own, not lwlock::sync's): naming one exits
    /// 2, and `all` / `default` leave them out.
    #[arg(long, default_value = "real", value_parser = engine_parser())]
    pub engine: Engine,
    /// The simulated machine (`--engine sim`): a built-in profile (this-machine,
    /// xeon-2s-broadwell, xeon-4s-westmere-ex, epyc-2s-genoa) or a profile file (JSON, see
    /// lwsim/profiles/). Default: xeon-2s-broadwell (72 hardware threads).
    #[arg(long)]
    pub platform: Option<String>,
    /// Simulated hardware threads in use (`--engine sim`): the first N of the profile's
    /// topology (Linux numbering). Default: all.
    #[arg(long, value_parser = parse_positive_usize)]
    pub cores: Option<usize>,
    /// Seed of the simulated trials (`--engine sim`): trial k runs with a seed derived from it
    /// and k, so trials differ and the same command repeats exactly.
    #[arg(long, default_value = "1", value_parser = parse_seed)]
    pub seed: u64,
    /// Runs an experiment file (TOML, see bench/experiments/ and the guide, "Experiments"): its
    /// workload, locks, clients, work, trials and trial lengths, and on `--engine sim` its
    /// profile and cores; `--trials`, `--duration`, `--warmup`, `--threads`, `--platform`,
    /// `--cores`, `--seed`, `--jobs`, `--set` and `--out` override the file (default out:
    /// results/experiments/NAME). Writes the usual files plus `experiment.md`, the thread's
    /// figures beside ours. A bad file exits 2 naming the field.
    #[arg(long, value_name = "FILE")]
    pub experiment: Option<PathBuf>,
}

/// The real engine's default trial length.
pub const REAL_DEFAULT_DURATION: Duration = Duration::from_millis(250);
/// The real engine's default trials per point.
pub const REAL_DEFAULT_TRIALS: u32 = 3;
/// The simulator's default trial length, virtual time (plus half of it as warm-up).
pub const SIM_DEFAULT_DURATION: Duration = Duration::from_millis(1);
/// The simulator's default trials (seeds) per point, as on the real engine: the default suite
/// stays within minutes; a simulated claim needs `--trials 10` (see `figures::SIM_CLAIM_TRIALS`).
pub const SIM_DEFAULT_TRIALS: u32 = 3;

/// The machine a sweep runs on, resolved from `--engine`, `--platform`, `--cores`, `--set`,
/// `--sensitivity` and `--jobs`.
#[derive(Clone, Debug)]
pub enum Machine {
    /// This machine.
    Real,
    /// The simulated one (the seed is set per trial).
    Sim(Box<SimMachine>),
}

/// The simulated machine of a sweep, with its overrides and the variants of a sensitivity run.
#[derive(Clone, Debug)]
pub struct SimMachine {
    /// The machine (with the `--set` overrides applied).
    pub setup: SimSetup,
    /// The `--set` overrides, in order.
    pub overrides: Vec<crate::sensitivity::Override>,
    /// The `--sensitivity` keys.
    pub sensitivity: Vec<crate::sensitivity::SensKey>,
    /// The machines the sweep runs on: `setup` first, then each sensitivity arm that runs
    /// (the keys' [`crate::sensitivity::Arm::Run`] index into this list).
    pub variants: Vec<SimSetup>,
    /// OS threads running simulated trials side by side.
    pub jobs: usize,
}

impl Machine {
    /// The engine's name.
    pub fn engine(&self) -> Engine {
        match self {
            Machine::Real => Engine::Real,
            Machine::Sim(_) => Engine::Sim,
        }
    }
}

impl Args {
    /// `--duration`, or the engine's default.
    pub fn duration(&self) -> Duration {
        self.duration.unwrap_or(match self.engine {
            Engine::Real => REAL_DEFAULT_DURATION,
            Engine::Sim => SIM_DEFAULT_DURATION,
        })
    }

    /// `--trials`, or the engine's default.
    pub fn trials(&self) -> u32 {
        self.trials.unwrap_or(match self.engine {
            Engine::Real => REAL_DEFAULT_TRIALS,
            Engine::Sim => SIM_DEFAULT_TRIALS,
        })
    }

    /// `--warmup`, or half of the trial length.
    pub fn warmup(&self) -> Duration {
        self.warmup.unwrap_or(self.duration() / 2)
    }

    /// The locks to run for `w`, in registry order. Explicitly named locks that do not apply
    /// to the workload are skipped (and reported by the caller).
    pub fn locks_for(&self, w: Workload) -> (Vec<LockKind>, Vec<LockKind>) {
        let mut run = Vec::new();
        let mut skipped = Vec::new();
        let sim = self.engine == Engine::Sim;
        for k in LockKind::every() {
            let wanted = self.locks.iter().any(|s| match s {
                LockSel::One(x) => *x == k,
                LockSel::All => k.in_all(),
                LockSel::Default => LockKind::default_suite().contains(&k),
            });
            // On the simulator `all` and `default` leave out what it cannot run (an explicit
            // name is refused by `check_engine`).
            if !wanted || (sim && !k.simulatable() && !self.locks.contains(&LockSel::One(k))) {
                continue;
            }
            if k.applies_to_workload(w.uses_clog()) {
                run.push(k);
            } else if self.locks.contains(&LockSel::One(k)) {
                skipped.push(k);
            }
        }
        (run, skipped)
    }

    /// The (layout, strategy) variants to run for `w`: `None` where the setting does not apply.
    pub fn variants_for(&self, w: Workload) -> Vec<(Option<Layout>, Option<Strategy>)> {
        fn dedup<T: PartialEq + Copy>(v: &[Vec<T>]) -> Vec<T> {
            let mut out: Vec<T> = Vec::new();
            for x in v.iter().flatten() {
                if !out.contains(x) {
                    out.push(*x);
                }
            }
            out
        }
        let layouts: Vec<Option<Layout>> = if w.uses_proc_array() {
            dedup(&self.layout).into_iter().map(Some).collect()
        } else {
            vec![None]
        };
        let strategies: Vec<Option<Strategy>> = if w.takes_snapshots() {
            dedup(&self.snapshot).into_iter().map(Some).collect()
        } else {
            vec![None]
        };
        layouts
            .iter()
            .flat_map(|l| strategies.iter().map(move |s| (*l, *s)))
            .collect()
    }

    /// The thread counts, in order, without duplicates.
    pub fn thread_counts(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .threads
            .iter()
            .flat_map(|t| t.0.iter().copied())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// The `--help` catalogue of workloads and locks, generated from the registries so it cannot go
/// stale: each one's one-line description, and for a workload what one transaction is.
fn catalogue() -> String {
    let w = Workload::ALL
        .iter()
        .map(|w| w.name().len())
        .chain(LockKind::every().iter().map(|k| k.name().len()))
        .max()
        .unwrap_or(0)
        .max(7)
        + 2;
    let mut s = String::from(
        "WORKLOADS (--workload). The figures lead with TPS and the average latency per \
         transaction (threads / TPS); [brackets]: the unit and what one transaction is:\n",
    );
    for wl in Workload::ALL {
        let u = crate::figures::unit(*wl);
        s.push_str(&format!(
            "  {:<w$}{} [{}]\n",
            wl.name(),
            wl.description(),
            if u.rate == "TPS" {
                format!("TPS; 1 transaction = {}", u.short)
            } else {
                format!("{}; a lock microbenchmark", u.rate)
            }
        ));
    }
    s.push_str("\nLOCKS (--locks):\n");
    for k in LockKind::every() {
        let only: Vec<&str> = Workload::ALL
            .iter()
            .filter(|w| k.applies_to_workload(w.uses_clog()))
            .map(|w| w.name())
            .collect();
        let scope = if only.len() < Workload::ALL.len() {
            format!(" [only {}]", only.join(", "))
        } else if !k.in_all() {
            " [only when named; not in `all`]".to_string()
        } else {
            String::new()
        };
        let sim = if k.simulatable() {
            ""
        } else {
            " [not on --engine sim: its atomics bypass lwlock::sync]"
        };
        s.push_str(&format!(
            "  {:<w$}{}{scope}{sim}\n",
            k.name(),
            k.description()
        ));
    }
    s.push_str(&format!(
        "  {:<w$}every lock that applies to the workload\n  {:<w$}the project's locks plus \
         parking-lot\n",
        "all", "default"
    ));
    s
}

/// Exits 2 (clap's format, naming `--locks`) when a workload gets no lock: `--workload snapshot
/// --locks clog-group` would otherwise run nothing and write tables and links to plots that do
/// not exist.
fn check_selection(args: &Args) {
    for &w in &args.workload {
        let (run, skipped) = args.locks_for(w);
        if !run.is_empty() {
            continue;
        }
        let value = args
            .locks
            .iter()
            .map(|l| match l {
                LockSel::One(k) => k.name(),
                LockSel::All => "all",
                LockSel::Default => "default",
            })
            .collect::<Vec<_>>()
            .join(",");
        let why = skipped
            .iter()
            .map(|k| {
                let only: Vec<&str> = Workload::ALL
                    .iter()
                    .filter(|x| k.applies_to_workload(x.uses_clog()))
                    .map(|x| x.name())
                    .collect();
                format!("{} runs only with {}", k.name(), only.join(", "))
            })
            .collect::<Vec<_>>()
            .join("; ");
        usage_error(
            "--locks <LOCKS>",
            &value,
            &format!(
                "--workload {} --locks {value} selects no point: no lock of it applies to \
                 workload {}{}",
                w.name(),
                w.name(),
                if why.is_empty() {
                    String::new()
                } else {
                    format!(" ({why})")
                }
            ),
        );
    }
}

/// Resolves the engine settings, exiting 2 (naming the argument) on bad input: `--engine sim`
/// in a build without the simulator backend (or `real` in one with it), an unknown platform, a
/// malformed profile file, more `--cores` than the profile has, a simulator-only option with
/// `--engine real`, or a lock the simulator cannot run.
pub fn check_engine(args: &Args) -> Machine {
    if args.engine == Engine::Real {
        if engine::SIM_BACKEND {
            usage_error(
                "--engine <ENGINE>",
                "real",
                "this lwbench is the simulator build (--cfg lwsim): its atomics consult the \
                 simulator, so it runs only --engine sim; build without RUSTFLAGS=\"--cfg lwsim\" \
                 for the real engine",
            );
        }
        for (name, given) in [
            ("--platform <PLATFORM>", args.platform.clone()),
            ("--cores <CORES>", args.cores.map(|c| c.to_string())),
            ("--set <KEY=VALUE[,KEY=VALUE]>", opt_list(&args.set)),
            ("--sensitivity <KEY[,KEY]>", opt_list(&args.sensitivity)),
        ] {
            if let Some(v) = given {
                usage_error(name, &v, "applies only to --engine sim");
            }
        }
        if args.interleave && args.trials() < 2 {
            usage_error(
                "--interleave",
                "1 trial",
                "interleaves the trials of the locks compared at a point: it needs --trials 2 \
                 or more",
            );
        }
        if let Some(n) = args.jobs.filter(|&n| n > 1) {
            usage_error(
                "--jobs <JOBS>",
                &n.to_string(),
                "the real engine measures one trial at a time (parallel trials would compete \
                 for this machine's cores); --jobs applies to --engine sim",
            );
        }
        return Machine::Real;
    }
    if args.interleave {
        usage_error(
            "--interleave",
            "--engine sim",
            "a simulated trial is deterministic and runs on a machine of its own: there is no \
             drift to interleave against (--interleave applies to the real engine)",
        );
    }
    if !engine::SIM_BACKEND {
        usage_error(
            "--engine <ENGINE>",
            "sim",
            &format!(
                "this lwbench was built without the simulator backend; build and run it with: {}",
                engine::SIM_COMMAND
            ),
        );
    }
    for s in &args.locks {
        if let LockSel::One(k) = s {
            if !k.simulatable() {
                usage_error(
                    "--locks <LOCKS>",
                    k.name(),
                    &format!(
                        "{} cannot run on the simulator (--engine sim): its atomics and sleeps are \
                         its own, not lwlock::sync's, so the simulated machine would not see them",
                        k.name()
                    ),
                );
            }
        }
    }
    sim_machine(args)
}

#[cfg(lwsim)]
fn sim_machine(args: &Args) -> Machine {
    let name = args
        .platform
        .clone()
        .unwrap_or_else(|| engine::DEFAULT_PLATFORM.to_string());
    let profile = engine::Profile::load(&name)
        .unwrap_or_else(|e| usage_error("--platform <PLATFORM>", &name, &e));
    let hw = profile.hw_threads();
    let cores = args.cores.unwrap_or(hw);
    if cores > hw {
        usage_error(
            "--cores <CORES>",
            &cores.to_string(),
            &format!("platform {} has {hw} hardware threads", profile.name),
        );
    }
    let mut overrides = Vec::new();
    let mut profile = profile;
    for spec in &args.set {
        let before = profile.clone();
        profile
            .set_all(spec)
            .unwrap_or_else(|e| usage_error("--set <KEY=VALUE[,KEY=VALUE]>", spec, &e));
        // Recorded with the profile's value before the override.
        for (key, value) in crate::sensitivity::parse_overrides(spec) {
            let profile = before.get(&key).unwrap_or(f64::NAN);
            overrides.push(crate::sensitivity::Override {
                key,
                value,
                profile,
            });
        }
    }
    let setup = SimSetup {
        platform: profile.name.clone(),
        cores,
        seed: args.seed,
        warmup: args.warmup(),
        profile,
    };
    let (sensitivity, variants) = crate::sensitivity::plan(&setup, &args.sensitivity)
        .unwrap_or_else(|e| {
            usage_error("--sensitivity <KEY[,KEY]>", &args.sensitivity.join(","), &e)
        });
    let mut jobs = args.jobs.unwrap_or_else(crate::jobs::default_jobs);
    for var in ["LWSIM_LINES", "LWSIM_TRACE"] {
        if jobs > 1 && std::env::var_os(var).is_some() {
            // Each simulation prints its line profile or trace to stderr: one at a time keeps
            // them whole and in sweep order.
            eprintln!("note: {var} is set: the simulations run one at a time (--jobs 1)");
            jobs = 1;
        }
    }
    Machine::Sim(Box::new(SimMachine {
        setup,
        overrides,
        sensitivity,
        variants,
        jobs,
    }))
}

#[cfg(not(lwsim))]
fn sim_machine(_args: &Args) -> Machine {
    unreachable!("checked: no simulator backend in this build")
}

/// A list option's value as given, or `None` when it was not.
fn opt_list(v: &[String]) -> Option<String> {
    (!v.is_empty()).then(|| v.join(","))
}

/// Exit 2 with clap's error format, naming the argument.
pub(crate) fn usage_error(arg: &str, value: &str, msg: &str) -> ! {
    Args::command()
        .error(
            clap::error::ErrorKind::ValueValidation,
            format!("invalid value '{value}' for '{arg}': {msg}"),
        )
        .exit()
}

fn prepare_out(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create directory: {e}"))?;
    let probe = dir.join(".lwbench-write-test");
    std::fs::write(&probe, b"").map_err(|e| format!("directory is not writable: {e}"))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
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
        "git_dirty": dirty,
        "cpu_model": cpu_model(),
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
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
            "sample_interval_s": args.sample_interval.as_secs_f64(),
            "interleave": args.interleave,
            "time_every": args.time_every,
        },
        "locks": LockKind::every().iter().map(|k| serde_json::json!({
            "name": k.name(), "description": k.description(), "project": k.is_project()
        })).collect::<Vec<_>>(),
    })
}

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
    let matches = Args::command()
        .try_get_matches_from(args)
        .unwrap_or_else(|e| e.exit());
    let mut args = Args::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let experiment = args.experiment.clone().map(|path| {
        let given =
            |id: &str| matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
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
    let args = args;
    let machine = check_engine(&args);
    check_selection(&args);
    if let Err(e) = prepare_out(&args.out) {
        usage_error("--out <OUT>", &args.out.display().to_string(), &e);
    }
    let done = run(&args, &machine).and_then(|()| match &experiment {
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

/// One point of the sweep: what it runs, its label, and its spec (the trial length set; the
/// simulated machine set per trial).
struct PlannedPoint {
    workload: Workload,
    lock: LockKind,
    variant: report::Variant,
    spec: PointSpec,
}

fn run(args: &Args, machine: &Machine) -> Result<(), String> {
    let started = Instant::now();
    let probe = perf::probe();
    let warmup = args.warmup();
    let (duration, trials_per_point) = (args.duration(), args.trials());
    let mut meta = meta_json(args, &probe, warmup);
    meta["engine"] = serde_json::json!(machine.engine().name());
    if let Machine::Sim(m) = machine {
        let s = &m.setup;
        // The simulated clock is read for free: no timer floor.
        meta["timer_source"] = serde_json::json!("lwsim virtual clock");
        meta["timer_floor_ns"] = serde_json::json!(0.0);
        meta["settings"]["jobs"] = serde_json::json!(m.jobs);
        meta["sim"] = serde_json::json!({
            "platform": s.platform,
            "platform_arg": args.platform.clone().unwrap_or_else(|| engine::DEFAULT_PLATFORM.into()),
            "cores": s.cores,
            "seed": args.seed,
            "trial_seeds": (1..=trials_per_point).map(|k| engine::trial_seed(args.seed, k)).collect::<Vec<_>>(),
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
                serde_json::json!({ "key": k.key, "base": k.base, "half": arm(&k.half), "double": arm(&k.double) })
            }).collect::<Vec<_>>(),
            "note": "every duration, rate and wait is virtual time; the counters cover the window \
                     only; cache_misses stays empty (no PMU in a simulation): see the sim_* columns",
        });
        #[cfg(lwsim)]
        {
            meta["sim"]["profile"] = serde_json::json!(s.profile.describe());
        }
    }
    let out = &args.out;
    let io = |what: &str, e: &dyn std::fmt::Display| {
        format!("writing {}: {e}", out.join(what).display())
    };
    std::fs::write(
        out.join("meta.json"),
        serde_json::to_string_pretty(&meta).map_err(|e| e.to_string())?,
    )
    .map_err(|e| io("meta.json", &e))?;

    let threads = args.thread_counts();
    let mut plan: Vec<PlannedPoint> = Vec::new();
    for &w in &args.workload {
        let (run, skipped) = args.locks_for(w);
        for k in skipped {
            eprintln!(
                "note: lock {} does not apply to workload {}; skipped",
                k.name(),
                w.name()
            );
        }
        let variants = args.variants_for(w);
        for k in run {
            for &(layout, strategy) in &variants {
                for &t in &threads {
                    plan.push(PlannedPoint {
                        workload: w,
                        lock: k,
                        variant: report::Variant {
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
                            },
                            sample_interval: args.sample_interval,
                            sim: None,
                        },
                    });
                }
            }
        }
    }
    let total = plan.len();
    let sweeps = match machine {
        Machine::Sim(m) => m.variants.len(),
        Machine::Real => 1,
    };
    if let Machine::Sim(m) = machine {
        let s = &m.setup;
        eprintln!(
            "lwbench: {} points x {} trials of {:?} + {:?} warm-up in virtual time{}, simulated on \
             {} ({} cores), seed {}, {} at a time",
            total,
            trials_per_point,
            duration,
            warmup,
            if sweeps > 1 {
                format!(", {sweeps} sweeps (the base and the sensitivity arms)")
            } else {
                String::new()
            },
            s.platform,
            s.cores,
            args.seed,
            m.jobs
        );
    } else {
        let (est, each) = if args.interleave {
            (
                ((warmup + duration) * trials_per_point).as_secs_f64() * total as f64,
                ", each after its own warm-up, interleaved",
            )
        } else {
            (
                (warmup + duration * trials_per_point).as_secs_f64() * total as f64,
                "",
            )
        };
        eprintln!(
            "lwbench: {} points x ({} trials of {:?} + {:?} warm-up{each}), about {:.0} s; {}",
            total, trials_per_point, duration, warmup, est, probe
        );
    }
    let mut sim_real = Duration::ZERO;
    let mut sim_rates: Vec<f64> = Vec::new();

    let mut results =
        csv::Writer::from_path(out.join("results.csv")).map_err(|e| io("results.csv", &e))?;
    let mut waits =
        csv::Writer::from_path(out.join("waits.csv")).map_err(|e| io("waits.csv", &e))?;
    let mut points_csv =
        csv::Writer::from_path(out.join("points.csv")).map_err(|e| io("points.csv", &e))?;
    // With --interleave the bar counts trials (a point is complete only when its group's last
    // round ends), otherwise points.
    let steps = if args.interleave {
        total * trials_per_point as usize
    } else {
        total * sweeps
    };
    let pb = ProgressBar::with_draw_target(Some(steps as u64), ProgressDrawTarget::stderr());
    pb.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} [{elapsed_precise} / ~{eta}]")
            .map_err(|e| e.to_string())?,
    );
    let label = |p: &PlannedPoint| {
        let v = p.variant.label();
        format!(
            "{} {}{}{v} x{}",
            p.workload.name(),
            p.lock.name(),
            if v.is_empty() { "" } else { " " },
            p.spec.threads
        )
    };
    let mut points: Vec<PointRow> = Vec::new();
    // The sensitivity arms' points, per sweep (the base sweep's are `points`).
    let mut arm_points: Vec<Vec<PointRow>> = vec![Vec::new(); sweeps];
    // Writes one point's trials: every file of the base sweep, or an arm's medians.
    let mut emit = |sweep: usize, p: &PlannedPoint, trials: Vec<runner::TrialResult>| {
        let (w, k, variant, t) = (p.workload, p.lock, p.variant, p.spec.threads);
        for s in trials.iter().filter_map(|r| r.sim.as_ref()) {
            sim_real += s.real;
            sim_rates.push(s.events_per_sec);
        }
        let point = PointRow::new(w, k, variant, t, &trials);
        if !args.interleave {
            pb.set_message(label(p));
            pb.inc(1);
        }
        if sweep > 0 {
            arm_points[sweep].push(point);
            return Ok(());
        }
        for r in trials
            .iter()
            .filter(|r| r.sim.is_none() && (r.counters.complete_threads as usize) < t)
        {
            pb.suspend(|| {
                eprintln!(
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
            });
        }
        for (i, r) in trials.iter().enumerate() {
            let trial = i as u32 + 1;
            results
                .serialize(ResultRow::new(
                    w,
                    k,
                    variant,
                    t,
                    p.spec.procs,
                    trial,
                    r,
                    point.bimodal,
                ))
                .map_err(|e| io("results.csv", &e))?;
            for row in WaitRow::rows(w, k, variant, t, trial, r) {
                waits.serialize(row).map_err(|e| io("waits.csv", &e))?;
            }
        }
        points_csv
            .serialize(&point)
            .map_err(|e| io("points.csv", &e))?;
        results.flush().map_err(|e| io("results.csv", &e))?;
        waits.flush().map_err(|e| io("waits.csv", &e))?;
        points_csv.flush().map_err(|e| io("points.csv", &e))?;
        points.push(point);
        Ok::<(), String>(())
    };
    // The order the trials ran in, with `--interleave` (recorded in meta.json).
    let mut trial_order: Vec<String> = Vec::new();
    match machine {
        Machine::Real if args.interleave => {
            // Each workload's points (contiguous in the plan) are run group by group, a group
            // being the locks compared at one variant and thread count; a point is written as
            // soon as it and every point before it in the plan have all their trials, so the
            // files stay in plan order and a failure loses only the points not yet complete.
            // Every trial starts from PostgreSQL's initial spin estimate (another lock's trials
            // ran since this lock's last one).
            let mut start = 0;
            while start < plan.len() {
                let w = plan[start].workload;
                let end = start + plan[start..].iter().take_while(|p| p.workload == w).count();
                let mut done: Vec<Vec<runner::TrialResult>> =
                    (start..end).map(|_| Vec::new()).collect();
                let mut seen = vec![false; end - start];
                let mut next = start;
                for i in start..end {
                    if seen[i - start] {
                        continue;
                    }
                    let same = |q: &PlannedPoint| {
                        q.variant.label() == plan[i].variant.label()
                            && q.spec.threads == plan[i].spec.threads
                            && q.spec.procs == plan[i].spec.procs
                    };
                    let group: Vec<usize> = (i..end).filter(|&j| same(&plan[j])).collect();
                    for &j in &group {
                        seen[j - start] = true;
                    }
                    for round in 0..trials_per_point as usize {
                        for r in 0..group.len() {
                            let p = &plan[group[(round + r) % group.len()]];
                            let what = format!("{} (trial {})", label(p), round + 1);
                            pb.set_message(what.clone());
                            trial_order.push(what);
                            lwlock::proc::set_shared_spins_per_delay(
                                lwlock::s_lock::DEFAULT_SPINS_PER_DELAY,
                            );
                            let mut spec = p.spec.clone();
                            spec.duration = warmup;
                            runner::run_trial(&spec, &probe)?;
                            done[group[(round + r) % group.len()] - start]
                                .push(runner::run_trial(&p.spec, &probe)?);
                            pb.inc(1);
                        }
                    }
                    while next < end && done[next - start].len() == trials_per_point as usize {
                        emit(0, &plan[next], std::mem::take(&mut done[next - start]))?;
                        next += 1;
                    }
                }
                start = end;
            }
        }
        Machine::Real => {
            for p in &plan {
                pb.set_message(label(p));
                // Every point starts from PostgreSQL's initial spin estimate, whatever ran
                // before (the estimate is folded in by every exiting thread and would carry
                // over).
                lwlock::proc::set_shared_spins_per_delay(lwlock::s_lock::DEFAULT_SPINS_PER_DELAY);
                let mut spec = p.spec.clone();
                spec.duration = warmup;
                runner::run_trial(&spec, &probe)?;
                let trials = (0..trials_per_point)
                    .map(|_| runner::run_trial(&p.spec, &probe))
                    .collect::<Result<Vec<_>, _>>()?;
                emit(0, p, trials)?;
            }
        }
        Machine::Sim(m) => {
            // A simulation starts from a fresh machine (and a fresh spin estimate); the warm-up
            // runs inside each trial, before its window. Tasks in sweep order: sweep, point,
            // trial; the results come back in that order whatever `--jobs`.
            let tasks: Vec<(usize, usize, u32)> = (0..sweeps)
                .flat_map(|s| {
                    (0..total).flat_map(move |p| (1..=trials_per_point).map(move |k| (s, p, k)))
                })
                .collect();
            let mut pending: Vec<runner::TrialResult> = Vec::new();
            crate::jobs::run_ordered(
                m.jobs,
                &tasks,
                |&(s, p, k)| {
                    let mut spec = plan[p].spec.clone();
                    spec.sim = Some(SimSetup {
                        seed: engine::trial_seed(args.seed, k),
                        ..m.variants[s].clone()
                    });
                    runner::run_trial(&spec, &probe)
                },
                |i, r| {
                    pending.push(r?);
                    let (s, p, k) = tasks[i];
                    if k == trials_per_point {
                        emit(s, &plan[p], std::mem::take(&mut pending))?;
                    }
                    Ok(())
                },
            )?;
        }
    }
    pb.finish_and_clear();

    meta["elapsed_s"] = serde_json::json!((started.elapsed().as_secs_f64() * 10.0).round() / 10.0);
    if args.interleave {
        meta["trial_order"] = serde_json::json!(trial_order);
    }
    if !sim_rates.is_empty() {
        meta["sim"]["real_s"] = serde_json::json!((sim_real.as_secs_f64() * 10.0).round() / 10.0);
        meta["sim"]["median_events_per_real_s"] =
            serde_json::json!(runner::median(&sim_rates).round());
    }
    std::fs::write(
        out.join("meta.json"),
        serde_json::to_string_pretty(&meta).map_err(|e| e.to_string())?,
    )
    .map_err(|e| io("meta.json", &e))?;
    let cores = match machine {
        Machine::Sim(m) => m.setup.cores,
        Machine::Real => meta["cores"].as_u64().unwrap_or(1) as usize,
    };
    for &w in &args.workload {
        crate::figures::plot(&out.join(format!("{}.svg", w.name())), w, &points, cores)?;
    }
    std::fs::write(
        out.join("summary.md"),
        crate::figures::summary_md(&meta, &args.workload, &points),
    )
    .map_err(|e| io("summary.md", &e))?;
    if let Machine::Sim(m) = machine {
        if !m.sensitivity.is_empty() {
            crate::sensitivity::write(
                out,
                &crate::figures::sim_header(&meta),
                &m.sensitivity,
                &points,
                &arm_points,
            )?;
        }
    }

    let mut stdout = std::io::stdout().lock();
    let duration = format!("{duration:?}");
    for &w in &args.workload {
        let _ = write!(
            stdout,
            "{}",
            crate::figures::stdout_tables(w, &points, trials_per_point, &duration)
        );
    }
    let _ = writeln!(
        stdout,
        "\nlock operations/s, waits and counters: points.csv, results.csv; tables with min–max: \
         summary.md{}\nwrote {} ({:.0} s)",
        if matches!(machine, Machine::Sim(m) if !m.sensitivity.is_empty()) {
            "; the sensitivity table: sensitivity.md"
        } else {
            ""
        },
        out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Which `Args` fields the command line gave (the rest come from the file).
#[derive(Debug, Default, Clone, Copy)]
pub struct Given {
    /// `--threads`.
    pub threads: bool,
    /// `--out`.
    pub out: bool,
    /// `--platform`.
    pub platform: bool,
    /// `--cores`.
    pub cores: bool,
}

/// Turns an experiment into the sweep's arguments: workloads, locks, clients, work, layout
/// and snapshot from the file; trials and trial lengths from the file unless the command line
/// gave them; on the simulator the profile and cores from the file unless given.
pub fn apply_experiment(exp: &crate::experiment::Experiment, args: &mut Args, given: Given) {
    let f = &exp.file;
    args.workload = exp.workloads.clone();
    args.locks = exp.locks.iter().map(|&k| LockSel::One(k)).collect();
    if !given.threads {
        args.threads = vec![ThreadSpec(f.clients.clone())];
    }
    args.work = f.workload.work;
    args.write_pct = f.workload.write_pct;
    args.procs = f.workload.procs;
    if !exp.layouts.is_empty() {
        args.layout = vec![exp.layouts.clone()];
    }
    if !exp.strategies.is_empty() {
        args.snapshot = vec![exp.strategies.clone()];
    }
    if args.trials.is_none() {
        args.trials = Some(f.trials);
    }
    let lengths = match args.engine {
        Engine::Sim => &f.sim,
        Engine::Real => &f.real,
    };
    if let Some(l) = lengths {
        if args.duration.is_none() {
            args.duration = parse_duration(&l.duration).ok();
        }
        if args.warmup.is_none() {
            args.warmup = l.warmup.as_deref().and_then(|w| parse_duration(w).ok());
        }
    }
    if args.engine == Engine::Sim {
        if !given.platform {
            args.platform = Some(f.hardware.profile.clone());
        }
        if !given.cores {
            args.cores = f.hardware.cores;
        }
    }
    if !given.out {
        let stem = exp
            .path
            .file_stem()
            .map_or("experiment".into(), |s| s.to_string_lossy().into_owned());
        args.out = PathBuf::from("results").join("experiments").join(stem);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_lists_and_ranges() {
        assert_eq!(
            parse_threads("1:64").unwrap().0,
            vec![1, 2, 4, 8, 16, 32, 64]
        );
        assert_eq!(parse_threads("3:20").unwrap().0, vec![3, 6, 12, 20]);
        assert_eq!(parse_threads("8").unwrap().0, vec![8]);
        assert!(parse_threads("0").is_err());
        assert!(parse_threads("0:4").is_err());
        assert!(parse_threads("8:2").is_err());
        assert!(parse_threads("x").is_err());
        let a = Args::try_parse_from(["bench", "--threads", "1,2,64,2:4"]).unwrap();
        assert_eq!(a.thread_counts(), vec![1, 2, 4, 64]);
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("300ms").unwrap(), Duration::from_millis(300));
        assert_eq!(parse_duration("2s").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
        assert!(parse_duration("0ms").is_err());
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("3 fortnights").is_err());
        assert!(parse_duration("ms").is_err());
    }

    #[test]
    fn seeds_and_engines_share_torture_syntax() {
        // One seed syntax for both programs: decimal or 0x-hex.
        for (s, v) in [("42", 42), ("0x10", 16)] {
            let a = Args::try_parse_from(["bench", "--seed", s]).unwrap();
            assert_eq!(a.seed, v, "{s}");
        }
        for bad in [
            &["--seed", "x"][..],
            &["--engine", "fast"],
            &["--threads", "0"],
        ] {
            let mut v = vec!["bench"];
            v.extend_from_slice(bad);
            let e = Args::try_parse_from(v).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad:?}");
            assert!(e.to_string().contains(bad[0]), "{bad:?}: {e}");
        }
        // lwtorture-only locks are not lwbench's.
        let e = Args::try_parse_from(["bench", "--locks", "rwlock"]).unwrap_err();
        assert!(e.to_string().contains("--locks"), "{e}");
        let a = Args::try_parse_from(["bench", "--engine", "sim"]).unwrap();
        assert_eq!(a.engine, Engine::Sim);
    }

    #[test]
    fn lock_selection() {
        let a = Args::try_parse_from(["bench", "--locks", "all", "--workload", "snapshot,clog"])
            .unwrap();
        let (snap, _) = a.locks_for(Workload::Snapshot);
        let (clog, _) = a.locks_for(Workload::Clog);
        assert!(snap.contains(&LockKind::Std) && snap.contains(&LockKind::Atomic));
        assert!(clog.len() >= snap.len());
        let d = Args::try_parse_from(["bench"]).unwrap();
        let (def, _) = d.locks_for(Workload::Snapshot);
        assert!(!def.contains(&LockKind::Std) && def.contains(&LockKind::ParkingLot));
        let e = Args::try_parse_from(["bench", "--locks", "atomic,bogus"]).unwrap_err();
        assert!(e.to_string().contains("classic"), "{e}");
        assert_eq!(e.exit_code(), 2);
    }
}
