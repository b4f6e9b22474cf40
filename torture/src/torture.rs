//! Torture mode (`lwtorture`): every project lock hammered at once, with invariants checked on
//! every operation.
//!
//! Mirrors the Linux kernel's `locktorture` (`kernel/locking/locktorture.c`): many more threads
//! than cores take and release a lock in random ways for a fixed time, with random delays inside
//! and outside the critical sections, a statistics line every `--stat-interval`, a stall check,
//! and a summary that counts operations and failures. Like locktorture it checks *the lock*, not a
//! workload: the protected data exist only to make a broken lock visible.
//!
//! # What runs
//! All locks run **concurrently** for the whole `--duration`, each with its own pool of worker
//! threads (`--threads` is the total, split evenly over the locks). That exercises more than
//! round-robin slices would: every lock gets the full time, the scheduler is oversubscribed by all
//! pools together (64 threads by default, many per core), and the process-wide table of
//! per-thread wait records is shared, so a record freed by a thread of one lock is reused by a
//! thread of another lock or policy. The locks ([`LockName`]):
//!
//! * `classic`, `atomic`: `RawClassicLwLock` / `RawAtomicLwLock` through the raw trait: shared and
//!   exclusive acquire, `conditional_acquire` and `acquire_or_wait` in both modes, and on the
//!   atomic lock `wait_for_var` / `update_var` / `release_clear_var` (a WAL-insertion-lock dance).
//! * `rwlock`, `classic-rwlock`: the drop-in `lwlock::RwLock<T>` / `lwlock::ClassicRwLock<T>`:
//!   `read`, `write`, `try_read`, `try_write`.
//! * `flex-leader`, `flex-releaser` (over the atomic lock, group bound 2 so that handovers happen
//!   at a few threads), `flex-leader-classic`, `flex-releaser-classic` (over the classic lock,
//!   default bound): `FlexLock::group` and the `read`/`write`/`try_read`/`try_write` guards.
//! * `clog-group`: `ClogGroupLock` over the atomic lock (bound 2): `update` with a random key of
//!   four, and the `read`/`write`/`try_write` guards.
//! * `scalable-rwlock`: the drop-in `lwlock::ScalableRwLock<T>` (BRAVO reader bias): `read`,
//!   `write`, `try_read`, `try_write`.
//!
//! Every worker draws its own random mix of those operations (a seeded PRNG, `--seed`), runs a
//! random number of operations (at most `--max-thread-ops`), and exits; a supervisor spawns a
//! replacement, so the thread count stays constant while wait records are recycled all the time.
//! `--panic-pct` percent of group operations panic inside their closure (before touching the
//! data); the submitter must get that very panic back.
//!
//! # What is checked, continuously
//! * A holder counter per lock: an exclusive holder must find no other holder, a shared holder no
//!   exclusive one; the lock's own `is_locked_exclusive` must agree inside every section.
//! * A multi-word value (four words, always equal) that writers change one word at a time with
//!   delays in between: readers check the words are equal and unchanged over their hold, writers
//!   check them on entry, and at the end the value equals the number of writes (no lost update).
//! * Group operations: each returns its own unique id and the lock's group counter; the id must
//!   come back to its submitter, the counter must grow strictly per submitter (per key for the CLOG
//!   lock), never exceed the submitted count, and the per-key counters must sum to it. A panic
//!   must reach its submitter with the payload thrown. At the end, applied group operations ==
//!   submitted − panicked, and injected panics == received panics.
//! * `wait_for_var`: a `Changed(v)` answer must have `v != oldval` and `v` a value some holder
//!   stored; every exclusive holder finds the variable cleared.
//! * At the end every lock is unlocked and every group list empty (`group_head()` is `None`).
//! * Stalls: a monitor reports a lock on which no operation completed for `--stall-timeout`,
//!   with what each of its threads is doing and `lwlock::sample_waits()`, and exits 1.
//!
//! Exit status: 0 with no violation and no stall, 1 otherwise, 2 for bad arguments. The hidden
//! `--broken-lock` option breaks the raw `classic` and `atomic` locks on purpose (shared acquires
//! take nothing, exclusive acquires take the lock shared, or one exclusive release is skipped) to
//! show that the checks fire; their protected data are atomics, so the broken exclusion is a
//! detectable race and not undefined behaviour.

use crate::cli::parse_duration;
use clap::{CommandFactory, Parser};
use flexlock::{
    ClogGroupLock, FlexConfig, FlexLock, FlexReadGuard, FlexWriteGuard, HolderServesLock, Policy,
    DEFAULT_MAX_GROUP,
};
use lwlock::{
    AcquireOrWait, Mode, Proc, RawAtomicLwLock, RawClassicLwLock, RawLwLock, RawLwLockVar, Tranche,
    VarWait, WaitEvent,
};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------------

/// The locks torture runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LockName {
    /// `RawClassicLwLock` through the raw trait.
    Classic,
    /// `RawAtomicLwLock` through the raw trait, with the variable operations.
    Atomic,
    /// `RawHandoffLwLock` (the atomic LWLock with bounded writer starvation) through the raw
    /// trait.
    AtomicHandoff,
    /// The drop-in `lwlock::RwLock<T>` (task-fair).
    RwLock,
    /// The drop-in `lwlock::BargingRwLock<T>` (PostgreSQL's policy).
    BargingRwLock,
    /// The drop-in `lwlock::ClassicRwLock<T>`.
    ClassicRwLock,
    /// `FlexLock<RawAtomicLwLock, _>` with `Policy::Leader`.
    FlexLeader,
    /// `FlexLock<RawAtomicLwLock, _>` with `Policy::LastReleaser`.
    FlexReleaser,
    /// `HolderServesLock<RawAtomicLwLock, _>` (the fast last-releaser variant).
    FlexHolder,
    /// `FlexLock<RawClassicLwLock, _>` with `Policy::Leader`.
    FlexLeaderClassic,
    /// `FlexLock<RawClassicLwLock, _>` with `Policy::LastReleaser`.
    FlexReleaserClassic,
    /// `ClogGroupLock<RawAtomicLwLock, _>`.
    ClogGroup,
    /// The drop-in `lwlock::ScalableRwLock<T>` (BRAVO reader bias over the atomic lock).
    ScalableRwLock,
}

impl LockName {
    /// Every lock, in the order of the summary.
    pub const ALL: [LockName; 13] = [
        LockName::Classic,
        LockName::Atomic,
        LockName::AtomicHandoff,
        LockName::RwLock,
        LockName::BargingRwLock,
        LockName::ClassicRwLock,
        LockName::FlexLeader,
        LockName::FlexReleaser,
        LockName::FlexHolder,
        LockName::FlexLeaderClassic,
        LockName::FlexReleaserClassic,
        LockName::ClogGroup,
        LockName::ScalableRwLock,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            LockName::Classic => "classic",
            LockName::Atomic => "atomic",
            LockName::AtomicHandoff => "atomic-handoff",
            LockName::RwLock => "rwlock",
            LockName::BargingRwLock => "barging-rwlock",
            LockName::ClassicRwLock => "classic-rwlock",
            LockName::FlexLeader => "flex-leader",
            LockName::FlexReleaser => "flex-releaser",
            LockName::FlexHolder => "flex-holder",
            LockName::FlexLeaderClassic => "flex-leader-classic",
            LockName::FlexReleaserClassic => "flex-releaser-classic",
            LockName::ClogGroup => "clog-group",
            LockName::ScalableRwLock => "scalable-rwlock",
        }
    }

    /// The tranche the lock reports its waits under (so that a stall report names it).
    fn tranche_name(self) -> &'static str {
        match self {
            LockName::Classic => "torture-classic",
            LockName::Atomic => "torture-atomic",
            LockName::AtomicHandoff => "torture-atomic-handoff",
            LockName::RwLock => "torture-rwlock",
            LockName::BargingRwLock => "torture-barging-rwlock",
            LockName::ClassicRwLock => "torture-classic-rwlock",
            LockName::FlexLeader => "torture-flex-leader",
            LockName::FlexReleaser => "torture-flex-releaser",
            LockName::FlexHolder => "torture-flex-holder",
            LockName::FlexLeaderClassic => "torture-flex-leader-classic",
            LockName::FlexReleaserClassic => "torture-flex-releaser-classic",
            LockName::ClogGroup => "torture-clog-group",
            LockName::ScalableRwLock => "torture-scalable-rwlock",
        }
    }

    /// Looks a lock up by its command-line name.
    pub fn from_name(s: &str) -> Option<LockName> {
        LockName::ALL.iter().copied().find(|l| l.name() == s)
    }

    fn valid_names() -> String {
        LockName::ALL.map(LockName::name).join(", ")
    }
}

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

    fn name(self) -> &'static str {
        Broken::NAMES.iter().find(|(_, b)| *b == self).unwrap().0
    }
}

fn parse_lock(s: &str) -> Result<LockName, String> {
    LockName::from_name(s.trim()).ok_or_else(|| {
        format!(
            "unknown lock '{s}' (valid: {}, all)",
            LockName::valid_names()
        )
    })
}

fn parse_locks(s: &str) -> Result<Vec<LockName>, String> {
    if s.trim() == "all" {
        return Ok(LockName::ALL.to_vec());
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

fn parse_threads(s: &str) -> Result<usize, String> {
    let n: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a thread count"))?;
    if n == 0 {
        return Err("must be at least 1".into());
    }
    if n > 4096 {
        return Err(format!("{n} threads is more than the limit of 4096"));
    }
    Ok(n)
}

/// Parses a seed: decimal or `0x` hexadecimal.
pub fn parse_seed(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse(),
    };
    r.map_err(|_| format!("'{s}' is not a seed (a decimal or 0x-hex 64-bit number)"))
}

fn parse_max_ops(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) if n > 1 << 31 => Err(format!("{n} is more than the limit of 2^31")),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("'{s}' is not a positive integer")),
    }
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
    #[arg(long, default_value = "64", value_parser = parse_threads)]
    pub threads: usize,
    /// PRNG seed, decimal or 0x-hex (default: from the clock; printed either way).
    #[arg(long, value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// Locks to run, comma-separated, or `all`: classic, atomic, rwlock, classic-rwlock,
    /// flex-leader, flex-releaser, flex-leader-classic, flex-releaser-classic, clog-group.
    #[arg(long, value_delimiter = ',', default_value = "all", value_parser = parse_locks)]
    pub locks: Vec<Vec<LockName>>,
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
    pub locks: Vec<LockName>,
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
        let mut locks: Vec<LockName> = args.locks.iter().flatten().copied().collect();
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

// ---------------------------------------------------------------------------------------------
// Operation kinds and counters
// ---------------------------------------------------------------------------------------------

/// An operation (the first [`N_ATTEMPTS`]) or an outcome of one (the rest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Shared,
    Exclusive,
    CondShared,
    CondExclusive,
    AowShared,
    AowExclusive,
    VarUpdate,
    VarWait,
    Read,
    Write,
    TryRead,
    TryWrite,
    Group,
    // Outcomes.
    CondFailed,
    AowWaited,
    VarFree,
    VarChanged,
    TryFailed,
    GroupPanicked,
}

const N_KINDS: usize = 19;
const N_ATTEMPTS: usize = 13;
const KINDS: [Kind; N_KINDS] = [
    Kind::Shared,
    Kind::Exclusive,
    Kind::CondShared,
    Kind::CondExclusive,
    Kind::AowShared,
    Kind::AowExclusive,
    Kind::VarUpdate,
    Kind::VarWait,
    Kind::Read,
    Kind::Write,
    Kind::TryRead,
    Kind::TryWrite,
    Kind::Group,
    Kind::CondFailed,
    Kind::AowWaited,
    Kind::VarFree,
    Kind::VarChanged,
    Kind::TryFailed,
    Kind::GroupPanicked,
];
/// A slot's current-operation value while it does none.
const IDLE: u8 = u8::MAX;

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Shared => "shared",
            Kind::Exclusive => "exclusive",
            Kind::CondShared => "cond-shared",
            Kind::CondExclusive => "cond-exclusive",
            Kind::AowShared => "aow-shared",
            Kind::AowExclusive => "aow-exclusive",
            Kind::VarUpdate => "var-update",
            Kind::VarWait => "var-wait",
            Kind::Read => "read",
            Kind::Write => "write",
            Kind::TryRead => "try-read",
            Kind::TryWrite => "try-write",
            Kind::Group => "group",
            Kind::CondFailed => "cond-failed",
            Kind::AowWaited => "aow-waited",
            Kind::VarFree => "var-free",
            Kind::VarChanged => "var-changed",
            Kind::TryFailed => "try-failed",
            Kind::GroupPanicked => "group-panicked",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// PRNG and delays
// ---------------------------------------------------------------------------------------------

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xorshift64*: small, fast, good enough for choosing operations and delays.
#[derive(Clone, Debug)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(splitmix(seed) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }

    fn pct(&mut self, p: u8) -> bool {
        self.below(100) < u64::from(p)
    }
}

/// A delay inside a critical section: mostly a few spins, sometimes a yield (so that the holder
/// is preempted while others pile up), rarely a short sleep (locktorture's long hold).
fn hold_delay(rng: &mut Rng) {
    let r = rng.next();
    if r % 65_536 == 0 {
        thread::sleep(Duration::from_micros(200));
    } else if r % 512 == 1 {
        thread::yield_now();
    } else {
        for _ in 0..(r >> 59) {
            std::hint::spin_loop();
        }
    }
}

/// A delay between operations: spins, sometimes a yield, rarely a sleep long enough for the lock
/// to go idle.
fn think_delay(rng: &mut Rng) {
    let r = rng.next();
    if r % 4096 == 0 {
        thread::sleep(Duration::from_micros(10 + (r >> 32) % 500));
    } else if r % 64 == 1 {
        thread::yield_now();
    } else {
        for _ in 0..(r >> 58) {
            std::hint::spin_loop();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Per-lock checking state
// ---------------------------------------------------------------------------------------------

/// The holder counter's exclusive bit; the low bits count shared holders.
const EXCL: u32 = 1 << 31;
/// Words of the multi-word value.
const WORDS: usize = 4;
/// Keys of the CLOG group lock's operations.
const KEYS: usize = 4;
/// Violation messages printed and kept per lock and check.
const KEEP_MESSAGES: usize = 3;

/// The check a violation failed (counted per lock in the summary).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Check {
    /// The holder counter: an exclusive holder with company, a shared one beside an exclusive.
    Holders,
    /// The lock's own `is_locked` / `is_locked_exclusive` disagree with the hold.
    Probe,
    /// The multi-word value: torn, changed under a reader, lost updates, counters out of sync.
    Value,
    /// Group operations: wrong result, counter order, panic delivery, accounting.
    Group,
    /// `wait_for_var` answers and the variable's state.
    Var,
    /// The end state: still locked, group list not empty, holders left.
    End,
    /// A worker panicked unexpectedly, or could not be spawned.
    Worker,
}

const N_CHECKS: usize = 7;
const CHECKS: [(Check, &str); N_CHECKS] = [
    (Check::Holders, "holders"),
    (Check::Probe, "probe"),
    (Check::Value, "value"),
    (Check::Group, "group"),
    (Check::Var, "var"),
    (Check::End, "end"),
    (Check::Worker, "worker"),
];

/// What a worker slot is doing, for the stall report.
#[derive(Debug)]
struct Slot {
    /// The worker's wait-record number (`u32::MAX`: none yet).
    proc: AtomicU32,
    /// The operation in progress ([`IDLE`]: none).
    kind: AtomicU8,
}

/// Counters and checks of one lock.
#[derive(Debug)]
struct LockCtx {
    name: &'static str,
    /// Holders by the torture's own count: [`EXCL`] | shared holders.
    holders: AtomicU32,
    /// Completed writes of the multi-word value.
    writes: AtomicU64,
    /// Operations completed so far (for the stall monitor and progress lines).
    progress: AtomicU64,
    /// Workers alive (spawned and not yet joined).
    live: AtomicUsize,
    respawns: AtomicU64,
    /// Per-kind counts, folded in as workers exit.
    tally: [AtomicU64; N_KINDS],
    /// Panics thrown inside group closures.
    injected: AtomicU64,
    /// Injected panics that reached their submitter.
    received: AtomicU64,
    /// Group operations submitted.
    group_submitted: AtomicU64,
    violations: AtomicU64,
    /// Violations per [`Check`].
    by_check: [AtomicU64; N_CHECKS],
    messages: Mutex<Vec<String>>,
    slots: Vec<Slot>,
}

impl LockCtx {
    fn new(name: &'static str, threads: usize) -> LockCtx {
        LockCtx {
            name,
            holders: AtomicU32::new(0),
            writes: AtomicU64::new(0),
            progress: AtomicU64::new(0),
            live: AtomicUsize::new(0),
            respawns: AtomicU64::new(0),
            tally: std::array::from_fn(|_| AtomicU64::new(0)),
            injected: AtomicU64::new(0),
            received: AtomicU64::new(0),
            group_submitted: AtomicU64::new(0),
            violations: AtomicU64::new(0),
            by_check: std::array::from_fn(|_| AtomicU64::new(0)),
            messages: Mutex::new(Vec::new()),
            slots: (0..threads)
                .map(|_| Slot {
                    proc: AtomicU32::new(u32::MAX),
                    kind: AtomicU8::new(IDLE),
                })
                .collect(),
        }
    }

    fn violation(&self, check: Check, msg: impl FnOnce() -> String) {
        self.violations.fetch_add(1, Ordering::Relaxed);
        let n = self.by_check[check as usize].fetch_add(1, Ordering::Relaxed);
        if (n as usize) < KEEP_MESSAGES {
            let msg = msg();
            eprintln!("torture: VIOLATION [{}]: {msg}", self.name);
            self.messages
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(msg);
        }
    }

    fn enter_exclusive(&self) {
        let prev = self.holders.fetch_or(EXCL, Ordering::AcqRel);
        if prev != 0 {
            self.violation(Check::Holders, || {
                format!(
                    "exclusive holder entered with other holders: {}",
                    holders_str(prev)
                )
            });
        }
    }

    fn exit_exclusive(&self) {
        let prev = self.holders.fetch_and(!EXCL, Ordering::AcqRel);
        if prev != EXCL {
            self.violation(Check::Holders, || {
                format!(
                    "exclusive holder left with other holders: {}",
                    holders_str(prev)
                )
            });
        }
    }

    fn enter_shared(&self) {
        let prev = self.holders.fetch_add(1, Ordering::AcqRel);
        if prev & EXCL != 0 {
            self.violation(Check::Holders, || {
                format!(
                    "shared holder entered under an exclusive holder: {}",
                    holders_str(prev)
                )
            });
        }
    }

    fn exit_shared(&self) {
        let prev = self.holders.fetch_sub(1, Ordering::AcqRel);
        if prev & EXCL != 0 {
            self.violation(Check::Holders, || {
                format!(
                    "shared holder left under an exclusive holder: {}",
                    holders_str(prev)
                )
            });
        }
    }

    /// The lock's own view must match the hold: `exclusive` = whether we hold it exclusively.
    fn probe(&self, exclusive: bool, locked: bool, locked_exclusive: bool) {
        if !locked || locked_exclusive != exclusive {
            self.violation(Check::Probe, || {
                format!(
                    "{} holder sees is_locked {locked}, is_locked_exclusive {locked_exclusive}",
                    if exclusive { "exclusive" } else { "shared" }
                )
            });
        }
    }

    fn check_words(&self, w: &[u64; WORDS], who: &str) {
        if w.iter().any(|x| *x != w[0]) {
            self.violation(Check::Value, || {
                format!("{who} found a torn multi-word value {w:?}")
            });
        }
    }

    fn count(&self, k: Kind) -> u64 {
        self.tally[k as usize].load(Ordering::Relaxed)
    }

    fn ops(&self) -> u64 {
        self.tally[..N_ATTEMPTS]
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum()
    }

    /// The group checks every group lock makes at the end.
    fn final_group_check(&self, applied: u64, pages: &[u64; KEYS]) {
        let submitted = self.group_submitted.load(Ordering::Relaxed);
        let (injected, received) = (
            self.injected.load(Ordering::Relaxed),
            self.received.load(Ordering::Relaxed),
        );
        if injected != received {
            self.violation(Check::Group, || {
                format!("{injected} panics injected but {received} received")
            });
        }
        if applied != submitted - received.min(submitted) {
            self.violation(Check::Group, || {
                format!(
                    "{applied} group operations applied, but {submitted} submitted and \
                     {received} panicked"
                )
            });
        }
        if self.count(Kind::Group) != submitted {
            self.violation(Check::Group, || {
                format!(
                    "{} group operations counted, {submitted} submitted",
                    self.count(Kind::Group)
                )
            });
        }
        if pages.iter().sum::<u64>() != applied {
            self.violation(Check::Group, || {
                format!("per-key counters {pages:?} do not sum to {applied}")
            });
        }
    }

    fn final_words_check(&self, w: &[u64; WORDS]) {
        self.check_words(w, "the final check");
        let writes = self.writes.load(Ordering::Relaxed);
        if w[0] != writes {
            self.violation(Check::Value, || {
                format!("value {} after {writes} writes (lost updates)", w[0])
            });
        }
    }

    fn final_idle_check(&self, locked: bool, group_head: Option<u32>) {
        if locked {
            self.violation(Check::End, || "the lock is still locked at the end".into());
        }
        if let Some(h) = group_head {
            self.violation(Check::End, || {
                format!("the group list is not empty at the end (head {h})")
            });
        }
        let h = self.holders.load(Ordering::Relaxed);
        if h != 0 {
            self.violation(Check::End, || {
                format!("holders at the end: {}", holders_str(h))
            });
        }
    }
}

fn holders_str(h: u32) -> String {
    format!(
        "{} shared{}",
        h & !EXCL,
        if h & EXCL != 0 { " + exclusive" } else { "" }
    )
}

/// The panic payload of injected panics.
#[derive(Debug)]
struct Injected(u64);

/// A planned group operation.
#[derive(Clone, Copy, Debug)]
struct GroupPlan {
    id: u64,
    key: u64,
    panic: bool,
    seed: u64,
}

/// What a group operation returns to its submitter.
#[derive(Clone, Copy, Debug)]
struct Echo {
    id: u64,
    key: u64,
    applied: u64,
    page: u64,
}

/// One worker's state.
struct Worker<'a> {
    c: &'a LockCtx,
    rng: Rng,
    tally: [u64; N_KINDS],
    uid: u64,
    seq: u64,
    panic_pct: u8,
    last_applied: u64,
    last_page: [u64; KEYS],
}

impl Worker<'_> {
    fn plan_group(&mut self, keys: u64) -> GroupPlan {
        self.seq += 1;
        let p = GroupPlan {
            id: (self.uid << 32) | self.seq,
            key: self.rng.below(keys),
            panic: self.rng.pct(self.panic_pct),
            seed: self.rng.next(),
        };
        self.c.group_submitted.fetch_add(1, Ordering::Relaxed);
        p
    }

    fn finish_group(&mut self, p: GroupPlan, r: thread::Result<Echo>) {
        let c = self.c;
        match r {
            Ok(e) => {
                if p.panic {
                    c.violation(Check::Group, || {
                        format!("group op {:#x} was to panic but returned", p.id)
                    });
                }
                if e.id != p.id || e.key != p.key {
                    c.violation(Check::Group, || {
                        format!(
                            "group op {:#x} (key {}) got the result of op {:#x} (key {})",
                            p.id, p.key, e.id, e.key
                        )
                    });
                }
                if e.applied <= self.last_applied {
                    c.violation(Check::Group, || {
                        format!(
                            "group counter went from {} to {} for one submitter",
                            self.last_applied, e.applied
                        )
                    });
                }
                self.last_applied = e.applied;
                let k = (e.key as usize) % KEYS;
                if e.page <= self.last_page[k] {
                    c.violation(Check::Group, || {
                        format!(
                            "key {k} counter went from {} to {} for one submitter",
                            self.last_page[k], e.page
                        )
                    });
                }
                self.last_page[k] = e.page;
                let submitted = c.group_submitted.load(Ordering::Relaxed);
                if e.applied > submitted {
                    c.violation(Check::Group, || {
                        format!(
                            "group counter {} beyond the {submitted} operations submitted",
                            e.applied
                        )
                    });
                }
            }
            Err(payload) => match payload.downcast_ref::<Injected>() {
                Some(Injected(id)) if p.panic && *id == p.id => {
                    c.received.fetch_add(1, Ordering::Relaxed);
                    self.tally[Kind::GroupPanicked as usize] += 1;
                }
                Some(Injected(id)) => {
                    let id = *id;
                    c.violation(Check::Group, || {
                        format!(
                            "group op {:#x} (to panic: {}) received the panic of op {id:#x}",
                            p.id, p.panic
                        )
                    });
                }
                None => {
                    let msg = panic_message(&*payload);
                    c.violation(Check::Group, || {
                        format!("group op {:#x} panicked unexpectedly: {msg}", p.id)
                    });
                }
            },
        }
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string payload)".into()
    }
}

// ---------------------------------------------------------------------------------------------
// The protected data
// ---------------------------------------------------------------------------------------------

/// The data of the guard-based locks: plain words, read and written with volatile accesses so
/// that every check really goes to memory.
#[derive(Debug, Default)]
struct Plain {
    words: [u64; WORDS],
    /// Group operations applied.
    applied: u64,
    /// Group operations applied per key (the CLOG page); they sum to `applied`.
    pages: [u64; KEYS],
}

fn vread(x: &u64) -> u64 {
    // SAFETY: a reference is valid, aligned and initialised for reads.
    unsafe { std::ptr::read_volatile(x) }
}

fn vwrite(x: &mut u64, v: u64) {
    // SAFETY: a mutable reference is valid, aligned and unique for writes.
    unsafe { std::ptr::write_volatile(x, v) }
}

fn plain_words(d: &Plain) -> [u64; WORDS] {
    std::array::from_fn(|i| vread(&d.words[i]))
}

/// A shared holder's check: equal words, unchanged over the hold; the counters consistent.
fn read_plain(c: &LockCtx, rng: &mut Rng, d: &Plain) {
    let a = plain_words(d);
    c.check_words(&a, "a reader");
    hold_delay(rng);
    let applied = vread(&d.applied);
    let pages: [u64; KEYS] = std::array::from_fn(|i| vread(&d.pages[i]));
    if pages.iter().sum::<u64>() != applied {
        c.violation(Check::Value, || {
            format!("a reader found key counters {pages:?} not summing to {applied}")
        });
    }
    hold_delay(rng);
    let b = plain_words(d);
    if a != b {
        c.violation(Check::Value, || {
            format!("a writer overlapped a reader: {a:?} then {b:?}")
        });
    }
}

/// An exclusive holder's write: check the words, then bump them one at a time with delays.
fn write_plain(c: &LockCtx, rng: &mut Rng, d: &mut Plain) {
    let a = plain_words(d);
    c.check_words(&a, "a writer");
    let v = a[0].wrapping_add(1);
    for w in d.words.iter_mut() {
        vwrite(w, v);
        hold_delay(rng);
    }
    c.writes.fetch_add(1, Ordering::Relaxed);
}

/// A group operation's closure. Panics (before touching anything) if planned to.
fn group_body(c: &LockCtx, held_exclusive: bool, d: &mut Plain, p: GroupPlan) -> Echo {
    if p.panic {
        c.injected.fetch_add(1, Ordering::Relaxed);
        std::panic::panic_any(Injected(p.id));
    }
    c.enter_exclusive();
    if !held_exclusive {
        c.violation(Check::Probe, || {
            format!("group op {:#x} runs without the exclusive lock", p.id)
        });
    }
    let mut rng = Rng::new(p.seed);
    write_plain(c, &mut rng, d);
    let k = (p.key as usize) % KEYS;
    d.applied += 1;
    d.pages[k] += 1;
    let e = Echo {
        id: p.id,
        key: p.key,
        applied: d.applied,
        page: d.pages[k],
    };
    c.exit_exclusive();
    e
}

// ---------------------------------------------------------------------------------------------
// Targets
// ---------------------------------------------------------------------------------------------

/// One lock under torture.
trait Target: Send + Sync {
    /// The operations it supports.
    fn kinds(&self) -> Vec<Kind>;
    /// Runs one operation `k` (one of `kinds`).
    fn op(&self, k: Kind, w: &mut Worker<'_>);
    /// The end-of-run checks (all workers gone).
    fn final_check(&self, c: &LockCtx);
}

/// The raw locks' access to the variable operations (only the atomic lock has them).
trait TortureRaw: RawLwLock + 'static {
    fn as_var(&self) -> Option<&RawAtomicLwLock>;
}

impl TortureRaw for RawAtomicLwLock {
    fn as_var(&self) -> Option<&RawAtomicLwLock> {
        Some(self)
    }
}

impl TortureRaw for lwlock::RawHandoffLwLock {
    fn as_var(&self) -> Option<&RawAtomicLwLock> {
        None
    }
}

impl TortureRaw for RawClassicLwLock {
    fn as_var(&self) -> Option<&RawAtomicLwLock> {
        None
    }
}

/// Tag of the values holders store into the variable (`VAR_TAG | sequence number`).
const VAR_TAG: u64 = 0x7a7a << 48;
const VAR_TAG_MASK: u64 = 0xffff << 48;

/// A raw lock through the trait, with atomic data (so that a deliberately broken lock races
/// detectably instead of causing undefined behaviour).
struct RawTarget<L> {
    lock: L,
    words: [AtomicU64; WORDS],
    /// The progress variable of the `*_var` operations; 0 when no holder set it (the shim's
    /// atomic: the LWLock variable API takes `lwlock::sync`'s type, which is the simulator's in
    /// a `--cfg lwsim` build).
    var: lwlock::sync::AtomicU64,
    /// Sequence numbers handed out for `var` values.
    var_seq: AtomicU64,
    broken: Option<Broken>,
    /// Exclusive releases so far (for `Broken::LeakExclusive`).
    x_releases: AtomicU64,
}

impl<L: TortureRaw> RawTarget<L> {
    fn new(tranche: Tranche, broken: Option<Broken>) -> Self {
        RawTarget {
            lock: L::with_tranche(tranche),
            words: std::array::from_fn(|_| AtomicU64::new(0)),
            var: lwlock::sync::AtomicU64::new(0),
            var_seq: AtomicU64::new(0),
            broken,
            x_releases: AtomicU64::new(0),
        }
    }

    /// The mode really taken for `mode` (`None`: nothing), after the deliberate breakage.
    fn real(&self, mode: Mode) -> Option<Mode> {
        match (self.broken, mode) {
            (Some(Broken::SharedTakesNothing), Mode::Shared) => None,
            (Some(Broken::ExclusiveTakesShared), Mode::Exclusive) => Some(Mode::Shared),
            _ => Some(mode),
        }
    }

    fn acquire(&self, mode: Mode) {
        if let Some(m) = self.real(mode) {
            self.lock.acquire(m);
        }
    }

    fn conditional_acquire(&self, mode: Mode) -> bool {
        match self.real(mode) {
            Some(m) => self.lock.conditional_acquire(m),
            None => true,
        }
    }

    fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait {
        match self.real(mode) {
            Some(m) => self.lock.acquire_or_wait(m),
            None => AcquireOrWait::Acquired,
        }
    }

    /// Releases what `acquire(mode)` (or a successful conditional acquire) took.
    ///
    /// # Safety
    /// The caller holds what `acquire(mode)` took and has not released it.
    unsafe fn release(&self, mode: Mode) {
        if mode == Mode::Exclusive
            && self.broken == Some(Broken::LeakExclusive)
            && self.x_releases.fetch_add(1, Ordering::Relaxed) == 100
        {
            return; // deliberately never released: the lock's threads stall
        }
        if let Some(m) = self.real(mode) {
            // SAFETY: the caller holds `real(mode)`, which is what `acquire(mode)` took.
            unsafe { self.lock.release(m) };
        }
    }

    fn load_words(&self) -> [u64; WORDS] {
        std::array::from_fn(|i| self.words[i].load(Ordering::Relaxed))
    }

    fn shared_section(&self, w: &mut Worker<'_>) {
        let c = w.c;
        c.enter_shared();
        c.probe(
            false,
            self.lock.is_locked(),
            self.lock.is_locked_exclusive(),
        );
        let a = self.load_words();
        c.check_words(&a, "a reader");
        hold_delay(&mut w.rng);
        hold_delay(&mut w.rng);
        let b = self.load_words();
        if a != b {
            c.violation(Check::Value, || {
                format!("a writer overlapped a reader: {a:?} then {b:?}")
            });
        }
        c.exit_shared();
    }

    /// An exclusive section; with `var`, it also publishes progress through `update_var`.
    fn exclusive_section(&self, w: &mut Worker<'_>, var: Option<&RawAtomicLwLock>) {
        let c = w.c;
        c.enter_exclusive();
        c.probe(true, self.lock.is_locked(), self.lock.is_locked_exclusive());
        let v = self.var.load(Ordering::Relaxed);
        if v != 0 {
            c.violation(Check::Var, || {
                format!("an exclusive holder found the variable set ({v:#x})")
            });
        }
        let a = self.load_words();
        c.check_words(&a, "a writer");
        let next = a[0].wrapping_add(1);
        let mut updated = false;
        for (i, word) in self.words.iter().enumerate() {
            word.store(next, Ordering::Relaxed);
            hold_delay(&mut w.rng);
            if let Some(lock) = var {
                if (i == WORDS - 1 && !updated) || w.rng.below(2) == 0 {
                    let val = VAR_TAG | (self.var_seq.fetch_add(1, Ordering::Relaxed) + 1);
                    // SAFETY: `exclusive_section` with `var` runs under the real exclusive lock
                    // (the variable operations are never run on a broken lock).
                    unsafe { lock.update_var(&self.var, val) };
                    updated = true;
                }
            }
        }
        c.writes.fetch_add(1, Ordering::Relaxed);
        c.exit_exclusive();
    }

    /// Whether `v` is a value some holder stored into the variable (or the cleared 0).
    ///
    /// A holder takes the sequence number before it stores the value with `update_var` (AcqRel),
    /// and a `Changed(v)` answer synchronises with that store, so the Relaxed load of `var_seq`
    /// here sees at least `v`'s sequence number.
    fn var_value_valid(&self, v: u64) -> bool {
        v == 0
            || (v & VAR_TAG_MASK == VAR_TAG && {
                let seq = v & !VAR_TAG_MASK;
                seq >= 1 && seq <= self.var_seq.load(Ordering::Relaxed)
            })
    }
}

impl<L: TortureRaw> Target for RawTarget<L> {
    fn kinds(&self) -> Vec<Kind> {
        let mut k = vec![
            Kind::Shared,
            Kind::Exclusive,
            Kind::CondShared,
            Kind::CondExclusive,
            Kind::AowShared,
            Kind::AowExclusive,
        ];
        if self.lock.as_var().is_some() && self.broken.is_none() {
            k.extend([Kind::VarUpdate, Kind::VarWait]);
        }
        k
    }

    fn op(&self, k: Kind, w: &mut Worker<'_>) {
        match k {
            Kind::Shared => {
                self.acquire(Mode::Shared);
                self.shared_section(w);
                // SAFETY: acquired shared above.
                unsafe { self.release(Mode::Shared) };
            }
            Kind::Exclusive => {
                self.acquire(Mode::Exclusive);
                self.exclusive_section(w, None);
                // SAFETY: acquired exclusively above.
                unsafe { self.release(Mode::Exclusive) };
            }
            Kind::CondShared | Kind::CondExclusive => {
                let mode = if k == Kind::CondShared {
                    Mode::Shared
                } else {
                    Mode::Exclusive
                };
                if self.conditional_acquire(mode) {
                    match mode {
                        Mode::Shared => self.shared_section(w),
                        Mode::Exclusive => self.exclusive_section(w, None),
                    }
                    // SAFETY: the conditional acquire in `mode` succeeded.
                    unsafe { self.release(mode) };
                } else {
                    w.tally[Kind::CondFailed as usize] += 1;
                }
            }
            Kind::AowShared | Kind::AowExclusive => {
                let mode = if k == Kind::AowShared {
                    Mode::Shared
                } else {
                    Mode::Exclusive
                };
                match self.acquire_or_wait(mode) {
                    AcquireOrWait::Acquired => {
                        match mode {
                            Mode::Shared => self.shared_section(w),
                            Mode::Exclusive => self.exclusive_section(w, None),
                        }
                        // SAFETY: `Acquired`: the lock is held in `mode`.
                        unsafe { self.release(mode) };
                    }
                    AcquireOrWait::Waited => w.tally[Kind::AowWaited as usize] += 1,
                }
            }
            Kind::VarUpdate => {
                let lock = self.lock.as_var().expect("var ops on the atomic lock only");
                lock.acquire(Mode::Exclusive);
                self.exclusive_section(w, Some(lock));
                // SAFETY: acquired exclusively above (the real lock: never broken here).
                unsafe { lock.release_clear_var(&self.var, 0) };
            }
            Kind::VarWait => {
                let lock = self.lock.as_var().expect("var ops on the atomic lock only");
                let cur = self.var.load(Ordering::Relaxed);
                let oldval = match w.rng.below(3) {
                    0 => 0,
                    _ => cur,
                };
                match lock.wait_for_var(&self.var, oldval) {
                    VarWait::Free => w.tally[Kind::VarFree as usize] += 1,
                    VarWait::Changed(v) => {
                        w.tally[Kind::VarChanged as usize] += 1;
                        if v == oldval {
                            w.c.violation(Check::Var, || {
                                format!("wait_for_var returned Changed({v:#x}) for the old value")
                            });
                        }
                        if !self.var_value_valid(v) {
                            w.c.violation(Check::Var, || {
                                format!("wait_for_var returned Changed({v:#x}), a value no holder stored")
                            });
                        }
                    }
                }
            }
            _ => unreachable!("{k:?} on a raw lock"),
        }
    }

    fn final_check(&self, c: &LockCtx) {
        c.final_idle_check(self.lock.is_locked(), None);
        c.final_words_check(&self.load_words());
        let v = self.var.load(Ordering::Relaxed);
        if v != 0 {
            c.violation(Check::End, || {
                format!("the variable is still set at the end ({v:#x})")
            });
        }
    }
}

/// The drop-in `lock_api` reader-writer locks.
struct DropInTarget<R: lwlock::lock_api::RawRwLock> {
    lock: lwlock::lock_api::RwLock<R, Plain>,
}

impl<R: lwlock::lock_api::RawRwLock + Send + Sync> DropInTarget<R> {
    fn read_section(&self, w: &mut Worker<'_>, g: &Plain) {
        w.c.enter_shared();
        w.c.probe(
            false,
            self.lock.is_locked(),
            self.lock.is_locked_exclusive(),
        );
        read_plain(w.c, &mut w.rng, g);
        w.c.exit_shared();
    }

    fn write_section(&self, w: &mut Worker<'_>, g: &mut Plain) {
        w.c.enter_exclusive();
        w.c.probe(true, self.lock.is_locked(), self.lock.is_locked_exclusive());
        write_plain(w.c, &mut w.rng, g);
        w.c.exit_exclusive();
    }
}

impl<R: lwlock::lock_api::RawRwLock + Send + Sync> Target for DropInTarget<R> {
    fn kinds(&self) -> Vec<Kind> {
        vec![Kind::Read, Kind::Write, Kind::TryRead, Kind::TryWrite]
    }

    fn op(&self, k: Kind, w: &mut Worker<'_>) {
        match k {
            Kind::Read => {
                let g = self.lock.read();
                self.read_section(w, &g);
            }
            Kind::Write => {
                let mut g = self.lock.write();
                self.write_section(w, &mut g);
            }
            Kind::TryRead => match self.lock.try_read() {
                Some(g) => self.read_section(w, &g),
                None => w.tally[Kind::TryFailed as usize] += 1,
            },
            Kind::TryWrite => match self.lock.try_write() {
                Some(mut g) => self.write_section(w, &mut g),
                None => w.tally[Kind::TryFailed as usize] += 1,
            },
            _ => unreachable!("{k:?} on a drop-in lock"),
        }
    }

    fn final_check(&self, c: &LockCtx) {
        c.final_idle_check(self.lock.is_locked(), None);
        match self.lock.try_write() {
            Some(g) => c.final_words_check(&plain_words(&g)),
            None => c.violation(Check::End, || "try_write fails on the idle lock".into()),
        }
    }
}

/// The group-lock API `FlexLock` and `HolderServesLock` share (one torture target for both).
trait GroupLockApi<L: RawLwLock>: Send + Sync {
    fn read(&self) -> FlexReadGuard<'_, L, Plain>;
    fn try_read(&self) -> Option<FlexReadGuard<'_, L, Plain>>;
    fn write(&self) -> FlexWriteGuard<'_, L, Plain>;
    fn try_write(&self) -> Option<FlexWriteGuard<'_, L, Plain>>;
    fn group<R: Send, F: FnOnce(&mut Plain) -> R + Send>(&self, op: F) -> R;
    fn raw(&self) -> &L;
    fn group_head(&self) -> Option<u32>;
}

macro_rules! group_lock_api {
    ($ty:ident) => {
        impl<L: RawLwLock> GroupLockApi<L> for $ty<L, Plain> {
            fn read(&self) -> FlexReadGuard<'_, L, Plain> {
                $ty::read(self)
            }
            fn try_read(&self) -> Option<FlexReadGuard<'_, L, Plain>> {
                $ty::try_read(self)
            }
            fn write(&self) -> FlexWriteGuard<'_, L, Plain> {
                $ty::write(self)
            }
            fn try_write(&self) -> Option<FlexWriteGuard<'_, L, Plain>> {
                $ty::try_write(self)
            }
            fn group<R: Send, F: FnOnce(&mut Plain) -> R + Send>(&self, op: F) -> R {
                $ty::group(self, op)
            }
            fn raw(&self) -> &L {
                $ty::raw(self)
            }
            fn group_head(&self) -> Option<u32> {
                $ty::group_head(self)
            }
        }
    };
}
group_lock_api!(FlexLock);
group_lock_api!(HolderServesLock);

/// `FlexLock` over a raw lock, either policy (or `HolderServesLock`).
struct FlexTarget<L: RawLwLock, G: GroupLockApi<L> = FlexLock<L, Plain>> {
    lock: G,
    _raw: std::marker::PhantomData<fn() -> L>,
}

impl<L: RawLwLock, G: GroupLockApi<L>> FlexTarget<L, G> {
    fn new(lock: G) -> Self {
        FlexTarget {
            lock,
            _raw: std::marker::PhantomData,
        }
    }
}

/// `ClogGroupLock` over the atomic lock.
struct ClogTarget {
    lock: ClogGroupLock<RawAtomicLwLock, Plain>,
}

/// The guard sections both group locks share.
fn guard_read(c: &LockCtx, w: &mut Worker<'_>, raw: &impl RawLwLock, g: &Plain) {
    c.enter_shared();
    c.probe(false, raw.is_locked(), raw.is_locked_exclusive());
    read_plain(c, &mut w.rng, g);
    c.exit_shared();
}

fn guard_write(c: &LockCtx, w: &mut Worker<'_>, raw: &impl RawLwLock, g: &mut Plain) {
    c.enter_exclusive();
    c.probe(true, raw.is_locked(), raw.is_locked_exclusive());
    write_plain(c, &mut w.rng, g);
    c.exit_exclusive();
}

impl<L: RawLwLock + 'static, G: GroupLockApi<L>> Target for FlexTarget<L, G> {
    fn kinds(&self) -> Vec<Kind> {
        vec![
            Kind::Group,
            Kind::Read,
            Kind::Write,
            Kind::TryRead,
            Kind::TryWrite,
        ]
    }

    fn op(&self, k: Kind, w: &mut Worker<'_>) {
        let c = w.c;
        let raw = self.lock.raw();
        match k {
            Kind::Group => {
                let p = w.plan_group(1);
                let lock = &self.lock;
                let r = catch_unwind(AssertUnwindSafe(|| {
                    lock.group(move |d| group_body(c, lock.raw().is_locked_exclusive(), d, p))
                }));
                w.finish_group(p, r);
            }
            Kind::Read => {
                let g = self.lock.read();
                guard_read(c, w, raw, &g);
            }
            Kind::Write => {
                let mut g = self.lock.write();
                guard_write(c, w, raw, &mut g);
            }
            Kind::TryRead => match self.lock.try_read() {
                Some(g) => guard_read(c, w, raw, &g),
                None => w.tally[Kind::TryFailed as usize] += 1,
            },
            Kind::TryWrite => match self.lock.try_write() {
                Some(mut g) => guard_write(c, w, raw, &mut g),
                None => w.tally[Kind::TryFailed as usize] += 1,
            },
            _ => unreachable!("{k:?} on a FlexLock"),
        }
    }

    fn final_check(&self, c: &LockCtx) {
        c.final_idle_check(self.lock.raw().is_locked(), self.lock.group_head());
        match self.lock.try_write() {
            Some(g) => {
                c.final_words_check(&plain_words(&g));
                c.final_group_check(g.applied, &g.pages);
            }
            None => c.violation(Check::End, || "try_write fails on the idle lock".into()),
        }
    }
}

impl Target for ClogTarget {
    fn kinds(&self) -> Vec<Kind> {
        vec![Kind::Group, Kind::Read, Kind::Write, Kind::TryWrite]
    }

    fn op(&self, k: Kind, w: &mut Worker<'_>) {
        let c = w.c;
        let raw = self.lock.raw();
        match k {
            Kind::Group => {
                let p = w.plan_group(KEYS as u64);
                let lock = &self.lock;
                let r = catch_unwind(AssertUnwindSafe(|| {
                    lock.update(p.key, move |d| {
                        group_body(c, lock.raw().is_locked_exclusive(), d, p)
                    })
                }));
                w.finish_group(p, r);
            }
            Kind::Read => {
                let g = self.lock.read();
                guard_read(c, w, raw, &g);
            }
            Kind::Write => {
                let mut g = self.lock.write();
                guard_write(c, w, raw, &mut g);
            }
            Kind::TryWrite => match self.lock.try_write() {
                Some(mut g) => guard_write(c, w, raw, &mut g),
                None => w.tally[Kind::TryFailed as usize] += 1,
            },
            _ => unreachable!("{k:?} on a ClogGroupLock"),
        }
    }

    fn final_check(&self, c: &LockCtx) {
        c.final_idle_check(self.lock.raw().is_locked(), self.lock.group_head());
        match self.lock.try_write() {
            Some(g) => {
                c.final_words_check(&plain_words(&g));
                c.final_group_check(g.applied, &g.pages);
            }
            None => c.violation(Check::End, || "try_write fails on the idle lock".into()),
        }
    }
}

/// Group bound of the flex and clog locks over the atomic lock: small, so that servers hand
/// the rest of a chain over even at a few threads per lock.
const SMALL_GROUP: usize = 2;

fn make_target(name: LockName, broken: Option<Broken>) -> (Box<dyn Target>, String) {
    let tranche = Tranche::register(name.tranche_name());
    let flex = |policy, max_group| FlexConfig {
        policy,
        max_group,
        tranche,
    };
    match name {
        LockName::Classic => (
            Box::new(RawTarget::<RawClassicLwLock>::new(tranche, broken)),
            format!(
                "RawClassicLwLock, raw trait{}",
                broken.map_or(String::new(), |b| format!(" (BROKEN: {})", b.name()))
            ),
        ),
        LockName::Atomic => (
            Box::new(RawTarget::<RawAtomicLwLock>::new(tranche, broken)),
            format!(
                "RawAtomicLwLock, raw trait + var ops{}",
                broken.map_or(String::new(), |b| format!(" (BROKEN: {})", b.name()))
            ),
        ),
        LockName::AtomicHandoff => (
            Box::new(RawTarget::<lwlock::RawHandoffLwLock>::new(tranche, None)),
            "RawHandoffLwLock, raw trait".into(),
        ),
        LockName::RwLock => (
            Box::new(DropInTarget {
                lock: lwlock::lock_api::RwLock::from_raw(
                    lwlock::RawTaskFairLwLock::new_in(tranche),
                    Plain::default(),
                ),
            }),
            "lwlock::RwLock<T> guards".into(),
        ),
        LockName::BargingRwLock => (
            Box::new(DropInTarget {
                lock: lwlock::lock_api::RwLock::from_raw(
                    RawAtomicLwLock::new_in(tranche),
                    Plain::default(),
                ),
            }),
            "lwlock::BargingRwLock<T> guards".into(),
        ),
        LockName::ClassicRwLock => (
            Box::new(DropInTarget {
                lock: lwlock::lock_api::RwLock::from_raw(
                    RawClassicLwLock::new_in(tranche),
                    Plain::default(),
                ),
            }),
            "lwlock::ClassicRwLock<T> guards".into(),
        ),
        LockName::FlexLeader => (
            Box::new(FlexTarget::<RawAtomicLwLock>::new(FlexLock::with_config(
                Plain::default(),
                flex(Policy::Leader, SMALL_GROUP),
            ))),
            format!("FlexLock<atomic> Leader, group bound {SMALL_GROUP}"),
        ),
        LockName::FlexReleaser => (
            Box::new(FlexTarget::<RawAtomicLwLock>::new(FlexLock::with_config(
                Plain::default(),
                flex(Policy::LastReleaser, SMALL_GROUP),
            ))),
            format!("FlexLock<atomic> LastReleaser, group bound {SMALL_GROUP}"),
        ),
        LockName::FlexHolder => (
            Box::new(FlexTarget::<RawAtomicLwLock, _>::new(
                HolderServesLock::with_bound(Plain::default(), SMALL_GROUP, tranche),
            )),
            format!("HolderServesLock<atomic>, group bound {SMALL_GROUP}"),
        ),
        LockName::FlexLeaderClassic => (
            Box::new(FlexTarget::<RawClassicLwLock>::new(FlexLock::with_config(
                Plain::default(),
                flex(Policy::Leader, DEFAULT_MAX_GROUP),
            ))),
            format!("FlexLock<classic> Leader, group bound {DEFAULT_MAX_GROUP}"),
        ),
        LockName::FlexReleaserClassic => (
            Box::new(FlexTarget::<RawClassicLwLock>::new(FlexLock::with_config(
                Plain::default(),
                flex(Policy::LastReleaser, DEFAULT_MAX_GROUP),
            ))),
            format!("FlexLock<classic> LastReleaser, group bound {DEFAULT_MAX_GROUP}"),
        ),
        LockName::ClogGroup => (
            Box::new(ClogTarget {
                lock: ClogGroupLock::with_config(
                    Plain::default(),
                    flex(Policy::Leader, SMALL_GROUP),
                ),
            }),
            format!("ClogGroupLock<atomic>, {KEYS} keys, group bound {SMALL_GROUP}"),
        ),
        LockName::ScalableRwLock => (
            Box::new(DropInTarget {
                lock: lwlock::lock_api::RwLock::from_raw(
                    lwlock::RawReaderBiasLwLock::new_in(tranche),
                    Plain::default(),
                ),
            }),
            "lwlock::ScalableRwLock<T> guards (reader bias)".into(),
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// The run: workers, supervisor, monitor
// ---------------------------------------------------------------------------------------------

struct LockRun {
    name: LockName,
    desc: String,
    threads: usize,
    target: Box<dyn Target>,
    ctx: LockCtx,
}

struct Run {
    cfg: Config,
    locks: Vec<LockRun>,
    stop: AtomicBool,
    /// Set (under `print`) once the final summary is being printed: the monitor stands down.
    done: AtomicBool,
    next_uid: AtomicU64,
    /// Serialises the final summary and a stall report.
    print: Mutex<()>,
    started: Instant,
}

/// The totals of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Operations completed (attempts, including failed conditional ones).
    pub ops: u64,
    /// Panics thrown inside group closures.
    pub injected: u64,
    /// Injected panics that reached their submitters.
    pub received: u64,
    /// Worker threads replaced.
    pub respawns: u64,
    /// Invariant violations.
    pub violations: u64,
    /// Stalls (a stalled run exits from the monitor, so a returned report has 0).
    pub stalls: u64,
    /// Run time in milliseconds.
    pub elapsed_ms: u64,
}

impl Report {
    /// Whether the run passed.
    pub fn passed(&self) -> bool {
        self.violations == 0 && self.stalls == 0
    }
}

/// Sends the slot's exit notice when the worker ends, also by unwinding.
struct ExitNotice {
    tx: mpsc::Sender<(usize, usize)>,
    lock: usize,
    slot: usize,
}

impl Drop for ExitNotice {
    fn drop(&mut self) {
        let _ = self.tx.send((self.lock, self.slot));
    }
}

impl Drop for Worker<'_> {
    fn drop(&mut self) {
        for (i, n) in self.tally.iter().enumerate() {
            if *n != 0 {
                self.c.tally[i].fetch_add(*n, Ordering::Relaxed);
            }
        }
    }
}

fn worker(run: &Run, li: usize, si: usize, generation: u64) {
    let l = &run.locks[li];
    let c = &l.ctx;
    let slot = &c.slots[si];
    slot.proc.store(Proc::current().number(), Ordering::Relaxed);
    let mut rng =
        Rng::new(run.cfg.seed ^ splitmix(((li as u64) << 48) ^ ((si as u64) << 32) ^ generation));
    let kinds = l.target.kinds();
    // This worker's own mix: a random weight per operation (some workers never write, some
    // never read, ...).
    let mut weights: Vec<u64> = kinds.iter().map(|_| rng.below(9)).collect();
    if weights.iter().all(|w| *w == 0) {
        let i = rng.below(kinds.len() as u64) as usize;
        weights[i] = 1;
    }
    let total: u64 = weights.iter().sum();
    let budget = 1 + rng.below(run.cfg.max_thread_ops);
    let mut w = Worker {
        c,
        rng,
        tally: [0; N_KINDS],
        uid: run.next_uid.fetch_add(1, Ordering::Relaxed),
        seq: 0,
        panic_pct: run.cfg.panic_pct,
        last_applied: 0,
        last_page: [0; KEYS],
    };
    for _ in 0..budget {
        if run.stop.load(Ordering::Relaxed) {
            break;
        }
        let mut pick = w.rng.below(total);
        let mut k = kinds[0];
        for (kind, weight) in kinds.iter().zip(&weights) {
            if pick < *weight {
                k = *kind;
                break;
            }
            pick -= weight;
        }
        slot.kind.store(k as u8, Ordering::Relaxed);
        l.target.op(k, &mut w);
        slot.kind.store(IDLE, Ordering::Relaxed);
        w.tally[k as usize] += 1;
        c.progress.fetch_add(1, Ordering::Relaxed);
        think_delay(&mut w.rng);
    }
}

fn spawn_worker(
    run: &Arc<Run>,
    tx: &mpsc::Sender<(usize, usize)>,
    li: usize,
    si: usize,
    generation: u64,
) -> std::io::Result<thread::JoinHandle<()>> {
    let r = Arc::clone(run);
    let tx = tx.clone();
    run.locks[li].ctx.live.fetch_add(1, Ordering::Relaxed);
    let h = thread::Builder::new()
        .name(format!("{}-{si}", run.locks[li].name.name()))
        .stack_size(256 << 10)
        .spawn(move || {
            let _notice = ExitNotice {
                tx,
                lock: li,
                slot: si,
            };
            worker(&r, li, si, generation);
        });
    if h.is_err() {
        run.locks[li].ctx.live.fetch_sub(1, Ordering::Relaxed);
    }
    h
}

/// A failed spawn ends the run (counted as a violation: the torture did not run as asked).
fn spawn_failed(run: &Run, li: usize, e: std::io::Error) {
    run.locks[li].ctx.violation(Check::Worker, || {
        format!("cannot spawn a worker thread: {e}")
    });
    run.stop.store(true, Ordering::Relaxed);
}

/// Silences injected panics (thousands of them) and lets every other panic through.
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<Injected>().is_none() {
                prev(info);
            }
        }));
    });
}

fn kind_name(k: u8) -> &'static str {
    KINDS.get(k as usize).map_or("idle", |k| k.name())
}

/// The monitor: reports the first lock without progress for `stall_timeout` and exits 1.
fn monitor(run: &Run) {
    let timeout = run.cfg.stall_timeout;
    let tick = (timeout / 20).clamp(Duration::from_millis(5), Duration::from_millis(250));
    let now = Instant::now();
    let mut last: Vec<(u64, Instant)> = run.locks.iter().map(|_| (0, now)).collect();
    while !run.done.load(Ordering::Relaxed) {
        thread::sleep(tick);
        let now = Instant::now();
        for (i, l) in run.locks.iter().enumerate() {
            let p = l.ctx.progress.load(Ordering::Relaxed);
            if p != last[i].0 || l.ctx.live.load(Ordering::Relaxed) == 0 {
                last[i] = (p, now);
            } else if now - last[i].1 >= timeout {
                stall(run, i, now - last[i].1);
                return; // the run finished meanwhile
            }
        }
    }
}

/// Prints the stall report and the summary so far, and exits 1; returns only if the run
/// finished meanwhile (then the final summary owns stdout).
fn stall(run: &Run, li: usize, quiet: Duration) {
    let _g = run.print.lock().unwrap_or_else(|e| e.into_inner());
    if run.done.load(Ordering::Relaxed) {
        return;
    }
    let l = &run.locks[li];
    let mut out = String::new();
    out.push_str(&format!(
        "torture: STALL: no operation completed on lock {} for {:.1}s ({} live workers)\n",
        l.name.name(),
        quiet.as_secs_f64(),
        l.ctx.live.load(Ordering::Relaxed)
    ));
    out.push_str("  its workers (slot, wait record, operation, wait event):\n");
    for (si, s) in l.ctx.slots.iter().enumerate() {
        let p = s.proc.load(Ordering::Relaxed);
        let event = if p == u32::MAX {
            "-".to_string()
        } else {
            Proc::by_number(p).wait_event().to_string()
        };
        out.push_str(&format!(
            "    {si:>4} proc {p:>5} {:<15} {event}\n",
            kind_name(s.kind.load(Ordering::Relaxed))
        ));
    }
    let samples = lwlock::sample_waits();
    let mut by_event: BTreeMap<String, usize> = BTreeMap::new();
    for s in &samples {
        *by_event.entry(s.event.to_string()).or_default() += 1;
    }
    out.push_str(&format!(
        "  lwlock::sample_waits(): {} live wait records\n",
        samples.len()
    ));
    for (e, n) in &by_event {
        out.push_str(&format!("    {n:>5} {e}\n"));
    }
    out.push_str(&format!(
        "    waiting: {}\n",
        samples
            .iter()
            .filter(|s| s.event != WaitEvent::NONE)
            .map(|s| format!("{}={}", s.proc, s.event))
            .collect::<Vec<_>>()
            .join(" ")
    ));
    print!("{out}");
    let _ = summary(run, run.started.elapsed(), 1, true);
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    std::process::exit(1);
}

fn progress_line(run: &Run) -> String {
    let parts: Vec<String> = run
        .locks
        .iter()
        .map(|l| {
            format!(
                "{} {}",
                l.name.name(),
                l.ctx.progress.load(Ordering::Relaxed)
            )
        })
        .collect();
    let (ops, v) = run.locks.iter().fold((0, 0), |(o, v), l| {
        (
            o + l.ctx.progress.load(Ordering::Relaxed),
            v + l.ctx.violations.load(Ordering::Relaxed),
        )
    });
    format!(
        "torture: {:.0}s: {ops} ops, {v} violations ({})",
        run.started.elapsed().as_secs_f64(),
        parts.join(", ")
    )
}

/// Runs torture as configured and prints the summary to stdout. A stall exits the process (1)
/// from the monitor thread, after printing its report and the summary so far.
pub fn run(cfg: &Config) -> Report {
    install_panic_hook();
    let per_lock = cfg.threads_per_lock();
    let locks: Vec<LockRun> = cfg
        .locks
        .iter()
        .zip(&per_lock)
        .map(|(&name, &threads)| {
            let broken = match name {
                LockName::Classic | LockName::Atomic => cfg.broken,
                _ => None,
            };
            let (target, desc) = make_target(name, broken);
            LockRun {
                name,
                desc,
                threads,
                target,
                ctx: LockCtx::new(name.name(), threads),
            }
        })
        .collect();
    let run = Arc::new(Run {
        cfg: cfg.clone(),
        locks,
        stop: AtomicBool::new(false),
        done: AtomicBool::new(false),
        next_uid: AtomicU64::new(1),
        print: Mutex::new(()),
        started: Instant::now(),
    });
    println!(
        "torture: {} locks, {} threads ({} per lock), {:.1}s, seed {:#x}, {}% of group ops \
         panic, at most {} ops per thread, stall timeout {:.0}s{}",
        cfg.locks.len(),
        cfg.threads,
        match (per_lock.iter().min(), per_lock.iter().max()) {
            (Some(a), Some(b)) if a != b => format!("{a}-{b}"),
            (Some(a), _) => a.to_string(),
            _ => "0".into(),
        },
        cfg.duration.as_secs_f64(),
        cfg.seed,
        cfg.panic_pct,
        cfg.max_thread_ops,
        cfg.stall_timeout.as_secs_f64(),
        cfg.broken
            .map_or(String::new(), |b| format!(", BROKEN LOCK: {}", b.name()))
    );
    let mon = {
        let r = Arc::clone(&run);
        thread::Builder::new()
            .name("torture-monitor".into())
            .spawn(move || monitor(&r))
            .expect("spawn the torture monitor")
    };

    let (tx, rx) = mpsc::channel::<(usize, usize)>();
    let mut handles: Vec<Vec<Option<thread::JoinHandle<()>>>> = Vec::new();
    let mut generations: Vec<Vec<u64>> = Vec::new();
    let mut live = 0usize;
    for (li, l) in run.locks.iter().enumerate() {
        let slots: Vec<Option<thread::JoinHandle<()>>> = (0..l.threads)
            .map(|si| match spawn_worker(&run, &tx, li, si, 0) {
                Ok(h) => {
                    live += 1;
                    Some(h)
                }
                Err(e) => {
                    spawn_failed(&run, li, e);
                    None
                }
            })
            .collect();
        handles.push(slots);
        generations.push(vec![0; l.threads]);
    }
    let deadline = run.started + cfg.duration;
    let mut next_stat = run.started + cfg.stat_interval;
    while live > 0 {
        let now = Instant::now();
        if now >= deadline {
            run.stop.store(true, Ordering::Relaxed);
        }
        if now >= next_stat {
            eprintln!("{}", progress_line(&run));
            next_stat += cfg.stat_interval;
        }
        let wake = deadline.min(next_stat);
        let wait = wake
            .saturating_duration_since(now)
            .clamp(Duration::from_millis(1), Duration::from_millis(100));
        let (li, si) = match rx.recv_timeout(wait) {
            Ok(x) => x,
            Err(_) => continue,
        };
        let ctx = &run.locks[li].ctx;
        if let Some(h) = handles[li][si].take() {
            if let Err(p) = h.join() {
                let msg = panic_message(&*p);
                ctx.violation(Check::Worker, || format!("worker {si} panicked: {msg}"));
            }
            ctx.live.fetch_sub(1, Ordering::Relaxed);
            live -= 1;
        }
        if !run.stop.load(Ordering::Relaxed) {
            generations[li][si] += 1;
            match spawn_worker(&run, &tx, li, si, generations[li][si]) {
                Ok(h) => {
                    handles[li][si] = Some(h);
                    live += 1;
                    ctx.respawns.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => spawn_failed(&run, li, e),
            }
        }
    }
    let elapsed = run.started.elapsed();
    let g = run.print.lock().unwrap_or_else(|e| e.into_inner());
    run.done.store(true, Ordering::Relaxed);
    for l in &run.locks {
        l.target.final_check(&l.ctx);
    }
    let report = summary(&run, elapsed, 0, false);
    drop(g);
    let _ = mon.join();
    report
}

fn counts_line(get: impl Fn(Kind) -> u64) -> String {
    KINDS
        .iter()
        .filter(|k| get(**k) != 0)
        .map(|k| format!("{} {}", k.name(), get(*k)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn checks_line(c: &LockCtx) -> String {
    CHECKS
        .iter()
        .map(|(k, name)| (name, c.by_check[*k as usize].load(Ordering::Relaxed)))
        .filter(|(_, n)| *n != 0)
        .map(|(name, n)| format!("{name} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn summary(run: &Run, elapsed: Duration, stalls: u64, partial: bool) -> Report {
    let mut out = String::new();
    out.push_str(&format!(
        "{:<22} {:>4} {:>12} {:>9} {:>15} {:>10}  {}\n",
        "lock", "thr", "ops", "respawns", "panics inj/rcv", "violations", "lock under test"
    ));
    let mut r = Report {
        stalls,
        elapsed_ms: elapsed.as_millis() as u64,
        ..Report::default()
    };
    for l in &run.locks {
        let c = &l.ctx;
        let (ops, inj, rcv, resp, viol) = (
            c.ops(),
            c.injected.load(Ordering::Relaxed),
            c.received.load(Ordering::Relaxed),
            c.respawns.load(Ordering::Relaxed),
            c.violations.load(Ordering::Relaxed),
        );
        out.push_str(&format!(
            "{:<22} {:>4} {:>12} {:>9} {:>15} {:>10}  {}\n",
            l.name.name(),
            l.threads,
            ops,
            resp,
            format!("{inj}/{rcv}"),
            viol,
            l.desc
        ));
        out.push_str(&format!("    {}\n", counts_line(|k| c.count(k))));
        if viol > 0 {
            out.push_str(&format!("    violations: {}\n", checks_line(c)));
        }
        r.ops += ops;
        r.injected += inj;
        r.received += rcv;
        r.respawns += resp;
        r.violations += viol;
    }
    out.push_str(&format!(
        "{:<22} {:>4} {:>12} {:>9} {:>15} {:>10}\n",
        "total",
        run.cfg.threads,
        r.ops,
        r.respawns,
        format!("{}/{}", r.injected, r.received),
        r.violations
    ));
    out.push_str(&format!(
        "    {}\n",
        counts_line(|k| run.locks.iter().map(|l| l.ctx.count(k)).sum())
    ));
    for l in &run.locks {
        let m = l.ctx.messages.lock().unwrap_or_else(|e| e.into_inner());
        for msg in m.iter() {
            out.push_str(&format!("violation [{}]: {msg}\n", l.name.name()));
        }
        let n = l.ctx.violations.load(Ordering::Relaxed) as usize;
        if n > m.len() {
            out.push_str(&format!(
                "violation [{}]: ... and {} more\n",
                l.name.name(),
                n - m.len()
            ));
        }
    }
    out.push_str(&format!(
        "torture: {} operations, {} injected panics, {} respawns, {} violations, {} stalls in \
         {:.1}s{}\n",
        r.ops,
        r.injected,
        r.respawns,
        r.violations,
        r.stalls,
        elapsed.as_secs_f64(),
        if partial {
            " (partial: stalled workers' counts are missing)"
        } else {
            ""
        }
    ));
    print!("{out}");
    r
}

/// Exit 2 with clap's error format, naming the argument.
fn usage_error(arg: &str, msg: &str) -> ! {
    Args::command()
        .error(
            clap::error::ErrorKind::ValueValidation,
            format!("invalid value for '{arg}': {msg}"),
        )
        .exit()
}

/// The `lwtorture` command line: parse, run, exit 0 (passed), 1 (violations or a stall) or 2
/// (bad arguments).
pub fn main() -> ExitCode {
    let args = Args::parse();
    let cfg = match Config::from_args(&args) {
        Ok(c) => c,
        Err((arg, msg)) => usage_error(arg, &msg),
    };
    let report = run(&cfg);
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(args: &[&str]) -> Config {
        let mut v = vec!["lwtorture"];
        v.extend_from_slice(args);
        Config::from_args(&Args::try_parse_from(v).unwrap()).unwrap()
    }

    #[test]
    fn arguments() {
        let c = cfg(&["--seed", "0x10", "--threads", "20"]);
        assert_eq!(c.seed, 16);
        assert_eq!(c.locks, LockName::ALL.to_vec());
        let per = c.threads_per_lock();
        assert_eq!(per.iter().sum::<usize>(), 20);
        // An even split, the first `20 % n` locks taking one more.
        let n = LockName::ALL.len();
        for (i, &k) in per.iter().enumerate() {
            assert_eq!(k, 20 / n + usize::from(i < 20 % n), "lock {i} of {n}");
        }
        let c = cfg(&["--locks", "atomic,classic,atomic", "--threads", "2"]);
        assert_eq!(c.locks, vec![LockName::Classic, LockName::Atomic]);
        assert_eq!(cfg(&["--seed", "42"]).seed, 42);
        for bad in [
            &["--seed", "x"][..],
            &["--locks", "nope"],
            &["--duration", "soon"],
            &["--threads", "0"],
            &["--panic-pct", "101"],
            &["--broken-lock", "slightly"],
        ] {
            let mut v = vec!["lwtorture"];
            v.extend_from_slice(bad);
            let e = Args::try_parse_from(v).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad:?}");
            assert!(e.to_string().contains(bad[0]), "{bad:?}: {e}");
        }
        let a = Args::try_parse_from(["lwtorture", "--threads", "3"]).unwrap();
        assert_eq!(Config::from_args(&a).unwrap_err().0, "--threads");
    }

    #[test]
    fn rng_is_seeded_and_uniform_enough() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        let mut hist = [0u32; 4];
        for _ in 0..4000 {
            let x = a.below(4);
            assert_eq!(x, b.below(4));
            hist[x as usize] += 1;
        }
        assert!(hist.iter().all(|h| (800..1200).contains(h)), "{hist:?}");
    }

    #[test]
    fn a_short_run_passes_and_a_broken_one_fails() {
        // In-process runs (a stall would exit the test process; the binary's tests cover every
        // lock end to end): one clean, one with the raw locks broken.
        let ok = run(&cfg(&[
            "--duration",
            "300ms",
            "--threads",
            "6",
            "--locks",
            "classic,atomic,clog-group",
            "--max-thread-ops",
            "50",
            "--panic-pct",
            "20",
            "--seed",
            "1",
        ]));
        assert!(ok.passed(), "{ok:?}");
        assert!(ok.ops > 0 && ok.respawns > 0, "{ok:?}");
        assert_eq!(ok.injected, ok.received);
        let bad = run(&cfg(&[
            "--duration",
            "300ms",
            "--threads",
            "6",
            "--locks",
            "classic,atomic",
            "--broken-lock",
            "shared-takes-nothing",
        ]));
        assert!(!bad.passed(), "{bad:?}");
        assert!(bad.violations > 0, "{bad:?}");
    }
}
