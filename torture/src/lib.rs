//! `lwtorture`: every lock of the registry hammered at once, with invariants checked on every
//! operation.
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
//! thread of another lock or policy. The locks are the registry's (`lwharness::registry`, the
//! same table `lwbench` runs, with the locks registered at run time by `Lwbench::lock`); each
//! entry says how torture drives it (its family's `torture` method, or the entry's own choice:
//! raw modes, variable operations, drop-in guards, group operations). `--locks all`:
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
//! * every lock registered at run time: a `RawLwLock` through the raw trait (shared and
//!   exclusive acquire, `conditional_acquire`, `acquire_or_wait`), like `classic`.
//!
//! Any other lock of the registry runs when named (`--locks std,parking-lot,broken,...`), through
//! the raw trait or, for a lock with only a closure-level interface, through `BenchLock`.
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

//!
//! # Files
//! [`config`] (the command line), `checks` (operation kinds, the per-lock checks, the protected
//! data and the target interface), `targets` (the raw, drop-in and closure-level targets, and
//! how a registry entry picks one), `group` (the group-lock targets), `rng` (PRNG and delays),
//! `workers` (workers and their replacement), `monitor` (stall detection, progress lines),
//! `state` (what a run's threads share), [`report`] (the summary), [`run`](mod@run) (one run).
#![deny(missing_docs)]

mod checks;
pub mod config;
mod group;
mod monitor;
pub mod report;
mod rng;
pub mod run;
mod state;
mod targets;
mod workers;

pub use config::{Args, Broken, Config};
pub use report::Report;
pub use run::run;
pub use targets::{TargetFactory, Torture};

use clap::{CommandFactory, Parser};
use std::process::ExitCode;

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
    main_with(std::env::args_os())
}

/// [`main`] with the command line `args` (the first item is the program name), over the
/// registry as it stands: call it after registering locks (`Lwbench::main` does, for
/// `PROGRAM torture [ARGS]`).
pub fn main_with<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args = Args::parse_from(args);
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
    use crate::rng::Rng;
    use lwharness::registry::LockKind;

    fn cfg(args: &[&str]) -> Config {
        let mut v = vec!["lwtorture"];
        v.extend_from_slice(args);
        Config::from_args(&Args::try_parse_from(v).unwrap()).unwrap()
    }

    #[test]
    fn arguments() {
        let c = cfg(&["--seed", "0x10", "--threads", "20"]);
        assert_eq!(c.seed, 16);
        assert_eq!(c.locks, LockKind::torture_locks_all());
        let per = c.threads_per_lock();
        assert_eq!(per.iter().sum::<usize>(), 20);
        // An even split, the first `20 % n` locks taking one more.
        let n = LockKind::torture_locks_all().len();
        for (i, &k) in per.iter().enumerate() {
            assert_eq!(k, 20 / n + usize::from(i < 20 % n), "lock {i} of {n}");
        }
        let c = cfg(&["--locks", "atomic,classic,atomic", "--threads", "2"]);
        assert_eq!(c.locks, vec![LockKind::Classic, LockKind::Atomic]);
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
