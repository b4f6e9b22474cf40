//! lwbench: a PostgreSQL-shaped lock contention harness.
//!
//! Simulates the shared state whose locks PostgreSQL contends on (the proc array and
//! ProcArrayLock, the xid counter, the CLOG and its lock, a hot buffer header) and sweeps
//! workloads × locks × thread counts, measuring throughput, fairness (Jain's index), sampled wait
//! times, perf-event counters and a pg_stat_activity-style wait-event profile.
//!
//! * [`locks`]: the one lock registry and the closure-level [`locks::BenchLock`] trait.
//! * [`flex`]: the registry adapters of the group-commit locks (`flexlock`).
//! * [`sim`]: the simulated shared state.
//! * [`snapshot`]: proc-array layouts and snapshot strategies (scan, reuse, optimistic, shared).
//! * [`workload`]: the workloads, written once, generic over the lock family.
//! * [`clock`]: the cheap clock of the wait-time percentiles, and its measured floor.
//! * [`runner`]: one trial (threads, barrier, sampler, counters, invariant checks).
//! * [`perf`]: per-thread perf-event counters with a `getrusage` fallback.
//! * [`report`]: the rows of the CSV files.
//! * [`figures`]: the stdout tables, `summary.md` and the SVGs, in each workload's unit.
//! * [`cli`]: the command line and the sweep driver.
//! * [`engine`]: `--engine real|sim`: the host, or lwsim's simulated many-core machine.
//! * [`torture`]: the `lwtorture` stress test (after the kernel's locktorture).
#![deny(missing_docs)]

/// In a `--cfg lwsim` build every allocation starts on a cache line of its own, so that a
/// simulated point's line layout, and with it every counter, repeats exactly (see
/// `lwlock::sync::lwsim::LineAligned`).
#[cfg(lwsim)]
#[global_allocator]
static LINE_ALIGNED: lwlock::sync::lwsim::LineAligned = lwlock::sync::lwsim::LineAligned;

pub mod cli;
pub mod clock;
pub mod engine;
pub mod figures;
pub mod flex;
pub mod locks;
pub mod perf;
pub mod report;
pub mod runner;
pub mod sim;
pub mod snapshot;
pub mod torture;
pub mod workload;

/// lwbench as a library: a user's own lock, measured with the whole harness, without forking it.
///
/// A crate that implements [`lwlock::RawLwLock`] (its atomics, spin hints and futexes through
/// `lwlock::sync`, so that the simulator sees them) registers it by name in its own `main` and
/// gets the whole command line: every workload, every output file and table, the invariant
/// checks, and both engines (`--engine sim` in a `--cfg lwsim` build), side by side with the
/// project's locks (a registered lock is part of `--locks default` and `all`):
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
    /// a one-line `description` (shown by `--help`).
    pub fn lock<L: lwlock::RawLwLock + 'static>(
        mut self,
        name: &'static str,
        description: &'static str,
    ) -> Self {
        self.locks.push(locks::UserLock {
            name,
            description,
            run: runner::run_trial_for::<locks::RawFamily<L>>,
        });
        self
    }

    /// Registers the locks and runs the command line (see [`cli::main`]); exits 2 if a name is
    /// taken.
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
            if let Err(e) = locks::register_user_lock(l) {
                eprintln!("error: cannot register lock {}: {e}", l.name);
                return std::process::ExitCode::from(2);
            }
        }
        cli::main_with(args)
    }
}
