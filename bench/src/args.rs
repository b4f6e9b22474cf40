//! The command line: `Args` (clap), the value parsers, the `--help` catalogue, and the checks of
//! a selection; an experiment file turned into arguments. Bad input exits 2 naming the argument.

use clap::{CommandFactory, Parser};
use lwharness::engine::Engine;
use lwharness::era_traffic::EraTraffic;
use lwharness::parse::{self, parse_seed};
pub use lwharness::parse::{parse_duration, parse_idle};
use lwharness::registry::LockKind;
use lwharness::snapshot::{Layout, Strategy};
use lwharness::workload::Workload;
use std::path::PathBuf;
use std::time::Duration;

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
    Workload::parse(s)
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
    /// virtual time]. With more threads than cores, fairness (Jain) needs about 20 context
    /// switches per thread to mean anything (as Linux counts them, on both engines: each time a
    /// thread leaves its core, blocking or preempted); points that got fewer are flagged
    /// (`fair_short`).
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
    /// is 0 is reported, not run (halving or doubling zero is no test). A structural option
    /// (`residency_after_store`) runs once, at its other choice (`=0` or `=1`).
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
    /// Idle time after each transaction (the backend waiting on its socket for its client's
    /// next query: pgbench's round trip), off the CPU, e.g. `100us`; 0 to 65535us. On the
    /// simulator an exact wait with no timer slack; on real threads a sleep (which oversleeps
    /// by the OS's timer slack). With --experiment, it replaces the file's `idle`.
    #[arg(long, default_value = "0", value_parser = parse_idle)]
    pub idle: Duration,
    /// `pgbench-write-status`'s `TransactionIdGetStatus` lookups under the CLOG lock shared,
    /// per transaction: a decimal with at most two places, 0 to 1000 (default 57.62, PostgreSQL
    /// 15's trace). Refused with any other workload. With --experiment, it replaces the file's
    /// `status_lookups`.
    #[arg(long, value_parser = parse::parse_status_lookups, value_name = "X")]
    pub status_lookups: Option<u32>,
    /// The pgbench write shapes' busy work inside the WAL insertion lock per WAL record, in
    /// --work's steps (about 1 ns each), 0 to 1000000 (default 1000, an assumption): the
    /// record's copy into the WAL buffers, taken out of --work (the transaction's CPU is
    /// unchanged). Refused with any workload but pgbench-n, pgbench-write and
    /// pgbench-write-status. With --experiment, it replaces the file's `wal_hold`.
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=1_000_000), value_name = "STEPS")]
    pub wal_hold: Option<u32>,
    /// Proc-array layouts, comma-separated: padded (≤ 9.1 PGPROC), pgxact (9.2–13), dense
    /// (14+), or all. Applies to the workloads that use the proc array.
    #[arg(long, value_delimiter = ',', default_value = "dense", value_parser = parse_layout)]
    pub layout: Vec<Vec<Layout>>,
    /// Snapshot strategies, comma-separated: scan, reuse (PG 14), optimistic (even/odd counter),
    /// shared (one computes, others copy), or all. Applies to the workloads that take snapshots.
    #[arg(long, value_delimiter = ',', default_value = "scan", value_parser = parse_strategy)]
    pub snapshot: Vec<Vec<Strategy>>,
    /// An older release's shared traffic, comma-separated. For the `select-*` shapes, 9.1's:
    /// sinval (`SIGetDataEntries`: SInvalReadLock shared + the msgnumLock spinlock, 4 per
    /// transaction), freelist (the lock tables' dynahash freelist spinlocks, per entry created
    /// or removed). For pgbench-n, 9.2's: walinsertlock (one WALInsertLock for every WAL
    /// record, 9.1-9.3, instead of 9.4+'s eight), nomultixact (no MultiXactGenLock in
    /// heap_update, before 9.3). Or all, or none. Other workloads ignore it. With --experiment, it replaces the file's
    /// `era_traffic` (for the with/without arms).
    #[arg(long, default_value = "none", value_parser = EraTraffic::parse, value_name = "ADDITION[,ADDITION]")]
    pub era_traffic: EraTraffic,
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
    /// Runs the K-th of N deterministic parts of the plan (K from 0 to N-1, as Slurm's
    /// `SLURM_ARRAY_TASK_ID` and Kubernetes' `JOB_COMPLETION_INDEX` count) and writes a partial
    /// result directory to `--out` (`shard.json`, written last, and `trials.jsonl`) instead of
    /// the files: `lwbench merge DIR... --out OUT` makes them from all N. The parts are
    /// balanced by a deterministic cost (threads x trial length, virtual time on `--engine sim`),
    /// never by measured time; on `--engine sim` a part is a set of trials (seeds, sensitivity
    /// arms included), on the real engine a set of points, and with `--interleave` a set of
    /// interleaved batches (a batch never spans two parts). See the guide, "Running a sweep on a
    /// cluster".
    #[arg(long, value_name = "K/N", allow_hyphen_values = true, value_parser = crate::shard_id::parse_shard)]
    pub shard: Option<crate::shard_id::ShardId>,
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
        for k in LockKind::bench_locks() {
            let wanted = self.locks.iter().any(|s| match s {
                LockSel::One(x) => *x == k,
                LockSel::All => k.in_bench_all(),
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

    /// The (layout, strategy) pairs to run for `w`: `None` where the setting does not apply.
    pub fn layout_snapshots_for(&self, w: Workload) -> Vec<(Option<Layout>, Option<Strategy>)> {
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
        .chain(LockKind::bench_locks().iter().map(|k| k.name().len()))
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
    for k in LockKind::bench_locks() {
        let only: Vec<&str> = Workload::ALL
            .iter()
            .filter(|w| k.applies_to_workload(w.uses_clog()))
            .map(|w| w.name())
            .collect();
        let scope = if only.len() < Workload::ALL.len() {
            format!(" [only {}]", only.join(", "))
        } else if !k.in_bench_all() {
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
    s.push_str("\nSUBCOMMANDS (lwbench NAME --help):\n");
    for sub in crate::subcommands::LIST {
        s.push_str(&format!("  {:<w$}{}\n", sub.name, sub.about));
    }
    s
}

/// Exits 2 (clap's format, naming `--locks`) when a workload gets no lock: `--workload snapshot
/// --locks clog-group` would otherwise run nothing and write tables and links to plots that do
/// not exist.
pub(crate) fn check_selection(args: &Args) {
    if args.idle_us() > 0 {
        if let Some(t) = args.workload.iter().find(|w| w.trace().is_some()) {
            usage_error(
                "--idle <IDLE>",
                &format!("{}us", args.idle_us()),
                &format!(
                    "{} replays its own idle time (from the trace's meta.json); --idle applies to                      the hand-written shapes only",
                    t.name()
                ),
            );
        }
    }
    if let Some(x) = args.wal_hold {
        if let Some(w) = args.workload.iter().find(|&&w| !w.writes_wal()) {
            usage_error(
                "--wal-hold <STEPS>",
                &x.to_string(),
                &format!(
                    "workload {} has no WAL records: --wal-hold applies to pgbench-n, \
                     pgbench-write and pgbench-write-status only",
                    w.name()
                ),
            );
        }
    }
    if let Some(x) = args.status_lookups {
        if let Some(w) = args
            .workload
            .iter()
            .find(|&&w| w != Workload::PgbenchWriteStatus)
        {
            usage_error(
                "--status-lookups <X>",
                &parse::status_lookups_text(x),
                &format!(
                    "workload {} {}: --status-lookups applies to pgbench-write-status only",
                    w.name(),
                    if w.trace().is_some() {
                        "replays its own status lookups (the trace's)"
                    } else {
                        "has no status lookups"
                    }
                ),
            );
        }
    }
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

impl Args {
    /// `pgbench-n`'s busy work per WAL record inside its lock: `--wal-hold`, or the default.
    pub fn wal_hold(&self) -> u32 {
        self.wal_hold
            .unwrap_or(lwharness::workload::DEFAULT_WAL_HOLD)
    }

    /// `pgbench-write-status`'s status lookups per hundred transactions: `--status-lookups`,
    /// or the shape's default.
    pub fn status_lookups_per_100(&self) -> u64 {
        self.status_lookups
            .map_or(lwharness::workload::STATUS_READS_PER_100, u64::from)
    }

    /// `--idle` in microseconds (checked by its parser).
    pub fn idle_us(&self) -> u16 {
        u16::try_from(self.idle.as_micros()).expect("--idle is checked by its parser")
    }
}

/// A list option's value as given, or `None` when it was not.
pub(crate) fn opt_list(v: &[String]) -> Option<String> {
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
    /// `--era-traffic`.
    pub era_traffic: bool,
    /// `--idle`.
    pub idle: bool,
    /// `--status-lookups`.
    pub status_lookups: bool,
    /// `--wal-hold`.
    pub wal_hold: bool,
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
    if !given.era_traffic {
        args.era_traffic = exp.era_traffic;
    }
    if !given.idle {
        args.idle = exp.idle;
    }
    if !given.status_lookups {
        args.status_lookups = exp.status_lookups;
    }
    if !given.wal_hold {
        args.wal_hold = exp.wal_hold;
    }
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
        assert!(parse_duration("1.5").is_err());
        assert_eq!(parse_idle("0").unwrap(), Duration::ZERO);
        assert_eq!(parse_idle("0us").unwrap(), Duration::ZERO);
        assert_eq!(parse_idle("128us").unwrap(), Duration::from_micros(128));
        assert_eq!(
            parse_idle("65535us").unwrap(),
            Duration::from_micros(65_535)
        );
        assert!(parse_idle("65536us").is_err());
        assert!(parse_idle("1500ns").is_err());
        assert!(parse_idle("-1us").is_err());
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
