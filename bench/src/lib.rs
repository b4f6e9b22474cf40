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
//! * [`torture`]: the `lwtorture` stress test (after the kernel's locktorture).
#![deny(missing_docs)]

pub mod cli;
pub mod clock;
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
