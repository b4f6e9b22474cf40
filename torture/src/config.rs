//! The command line of `lwtorture` and the configuration it describes. The locks are the
//! registry's (`lwharness::registry`): every built-in lock and every lock registered at run
//! time; durations and seeds use the harness's one syntax (`lwharness::parse`).

use crate::rng::splitmix;
use clap::Parser;
use lwharness::parse::{parse_duration, parse_positive, parse_seed, parse_thread_count};
use lwharness::registry::LockKind;
use std::time::Duration;

/// Deliberate breakage of the raw `classic` and `atomic` locks (hidden `--broken-lock`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Broken {
    /// Shared acquires take nothing.
    SharedTakesNothing,
    /// Exclusive acquires take the lock shared.
    ExclusiveTakesShared,
    /// The 100th exclusive release of each lock is skipped: its threads stall.
    LeakExclusive,
}

impl Broken {
    const NAMES: [(&'static str, Broken); 3] = [
        ("shared-takes-nothing", Broken::SharedTakesNothing),
        ("exclusive-takes-shared", Broken::ExclusiveTakesShared),
        ("leak-exclusive", Broken::LeakExclusive),
    ];

    /// The `--broken-lock` name.
    pub fn name(self) -> &'static str {
        Broken::NAMES.iter().find(|(_, b)| *b == self).unwrap().0
    }
}

fn parse_lock(s: &str) -> Result<LockKind, String> {
    LockKind::from_any_name(s.trim()).ok_or_else(|| {
        format!(
            "unknown lock '{s}' (valid: {}, all)",
            LockKind::valid_torture_names()
        )
    })
}

fn parse_locks(s: &str) -> Result<Vec<LockKind>, String> {
    if s.trim() == "all" {
        return Ok(LockKind::torture_locks_all());
    }
    parse_lock(s).map(|l| vec![l])
}

fn parse_broken(s: &str) -> Result<Broken, String> {
    Broken::NAMES
        .iter()
        .find(|(n, _)| *n == s.trim())
        .map(|(_, b)| *b)
        .ok_or_else(|| {
            let names: Vec<&str> = Broken::NAMES.iter().map(|(n, _)| *n).collect();
            format!("unknown breakage '{s}' (valid: {})", names.join(", "))
        })
}

fn parse_max_ops(s: &str) -> Result<u64, String> {
    parse_positive(s, 1 << 31)
}

/// lwtorture: locktorture for the project's locks.
///
/// Runs every lock at once under oversubscription, random operation mixes, thread exits and
/// re-spawns and injected panics, checking invariants all the time. Exit status: 0 clean, 1 a
/// violation or a stall, 2 bad arguments.
#[derive(Debug, Parser)]
#[command(name = "lwtorture", version)]
pub struct Args {
    /// How long to run, e.g. `60s`, `10m`.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub duration: Duration,
    /// Worker threads in total, split evenly over the locks (at least one per lock).
    #[arg(long, default_value = "64", value_parser = parse_thread_count)]
    pub threads: usize,
    /// PRNG seed, decimal or 0x-hex (default: from the clock; printed either way).
    #[arg(long, value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// Locks to run, comma-separated, or `all`: any lock of the registry (lwbench's locks, the
    /// drop-in and classic group-lock variants, and the locks registered at run time); `all` is
    /// classic, atomic, atomic-handoff, rwlock, barging-rwlock, classic-rwlock, flex-leader,
    /// flex-releaser, flex-holder, flex-leader-classic, flex-releaser-classic, clog-group,
    /// scalable-rwlock and the registered locks.
    #[arg(long, value_delimiter = ',', default_value = "all", value_parser = parse_locks)]
    pub locks: Vec<Vec<LockKind>>,
    /// Percent of group operations whose closure panics (before it touches the data).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(0..=100))]
    pub panic_pct: u8,
    /// A worker exits after a random number of operations, at most this many, and is replaced.
    #[arg(long, default_value = "2000", value_parser = parse_max_ops)]
    pub max_thread_ops: u64,
    /// Report a stall (and exit 1) when no operation completes on a lock for this long.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub stall_timeout: Duration,
    /// Interval of the progress lines on stderr.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub stat_interval: Duration,
    /// Break the raw classic and atomic locks on purpose, to check the checks:
    /// shared-takes-nothing, exclusive-takes-shared, leak-exclusive.
    #[arg(long, hide = true, value_parser = parse_broken)]
    pub broken_lock: Option<Broken>,
}

/// What one torture run does (the parsed command line).
#[derive(Clone, Debug)]
pub struct Config {
    /// How long the workers run.
    pub duration: Duration,
    /// Worker threads in total.
    pub threads: usize,
    /// PRNG seed.
    pub seed: u64,
    /// The locks, in summary order, without duplicates.
    pub locks: Vec<LockKind>,
    /// Percent of group operations that panic.
    pub panic_pct: u8,
    /// Most operations one worker runs before it exits.
    pub max_thread_ops: u64,
    /// No-progress time after which a lock is reported stalled.
    pub stall_timeout: Duration,
    /// Interval of the progress lines.
    pub stat_interval: Duration,
    /// Deliberate breakage of the raw locks.
    pub broken: Option<Broken>,
}

impl Config {
    /// The configuration `args` describe; `Err((argument, message))` if they are inconsistent.
    pub fn from_args(args: &Args) -> Result<Config, (&'static str, String)> {
        let mut locks: Vec<LockKind> = args.locks.iter().flatten().copied().collect();
        locks.sort_unstable();
        locks.dedup();
        if args.threads < locks.len() {
            return Err((
                "--threads",
                format!(
                    "{} threads cannot cover {} locks (at least one thread per lock)",
                    args.threads,
                    locks.len()
                ),
            ));
        }
        let seed = args.seed.unwrap_or_else(|| {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0);
            splitmix(t ^ (u64::from(std::process::id()) << 32))
        });
        Ok(Config {
            duration: args.duration,
            threads: args.threads,
            seed,
            locks,
            panic_pct: args.panic_pct,
            max_thread_ops: args.max_thread_ops,
            stall_timeout: args.stall_timeout,
            stat_interval: args.stat_interval,
            broken: args.broken_lock,
        })
    }

    /// Threads per lock: `threads` split evenly, the first locks taking the remainder.
    pub fn threads_per_lock(&self) -> Vec<usize> {
        let n = self.locks.len().max(1);
        (0..self.locks.len())
            .map(|i| self.threads / n + usize::from(i < self.threads % n))
            .collect()
    }
}
