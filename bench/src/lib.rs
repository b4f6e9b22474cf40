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
//! * [`runner`]: one trial (threads, barrier, sampler, counters, invariant checks).
//! * [`perf`]: per-thread perf-event counters with a `getrusage` fallback.
//! * [`report`]: CSV, JSON, Markdown and SVG output.
//! * [`cli`]: the command line and the sweep driver.
#![deny(missing_docs)]

pub mod cli;
pub mod flex;
pub mod locks;
pub mod perf;
pub mod report;
pub mod runner;
pub mod sim;
pub mod snapshot;
pub mod workload;
