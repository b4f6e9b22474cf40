//! lwharness: the library under `lwbench` and `lwtorture`.
//!
//! Models the shared state whose locks PostgreSQL contends on (the proc array and
//! ProcArrayLock, the xid counter, the CLOG and its lock, a hot buffer header), the workloads
//! over it, the one lock registry both programs run, and the engines that run a trial (the host,
//! or lwsim's simulated many-core machine). No command line and no reporting: those are the
//! programs' (`bench` for `lwbench`, `torture` for `lwtorture`).
//!
//! * [`locks`]: the closure-level [`locks::BenchLock`] trait, the lock families and adapters.
//! * [`entry_points`]: PostgreSQL's LWLock entry points by name (holds that need not nest,
//!   conditional acquire, AcquireOrWait, WaitForVar), for a replayed transaction.
//! * [`flex`]: the lock families of the group-commit locks (`flexlock`).
//! * [`registry`]: the one lock registry (built-in locks and locks registered at run time).
//! * [`pgshared`]: the PostgreSQL shared state (xid counter, CLOG, buffer header).
//! * [`pgtrace`]: a recorded PostgreSQL LWLock trace (`lwbench pg record`): format and reader.
//! * [`lmgr`]: the heavyweight lock manager's partition and fast-path LWLocks.
//! * [`bufmgr`]: a hot buffer as 9.1 reached it (mapping partition lock, header spinlock).
//! * [`buffer_pool`]: `pgbench_accounts`' pages at scale 10, read through the mapping partitions.
//! * [`snapshot`]: proc-array layouts and snapshot strategies (scan, reuse, optimistic, shared).
//! * [`workload`]: the workloads, written once, generic over the lock family.
//! * [`clock`]: the cheap clock of the wait-time percentiles, and its measured floor.
//! * [`runner`]: one trial of a point, on the engine it names (the measurement window, CPU time).
//! * [`trial`]: the trial protocol, written once (threads, start gate, sampler, stop signal,
//!   counters, invariant checks), over the engine interface both engines implement.
//! * [`perf`]: per-thread perf-event counters with a `getrusage` fallback.
//! * [`engine`]: the host, or lwsim's simulated many-core machine (one file each).
//! * [`parse`]: the duration, seed and thread-list syntax of both programs' command lines.
//!
//! In a `--cfg loom` build only [`snapshot`] is compiled: the loom models check it.
#![deny(missing_docs)]

/// In a `--cfg lwsim` build every allocation starts on a cache line of its own, so that a
/// simulated point's line layout, and with it every counter, repeats exactly (see
/// `lwlock::sync::lwsim::LineAligned`).
#[cfg(lwsim)]
#[global_allocator]
static LINE_ALIGNED: lwlock::sync::lwsim::LineAligned = lwlock::sync::lwsim::LineAligned;

pub mod snapshot;

#[cfg(not(loom))]
pub mod buffer_pool;
#[cfg(not(loom))]
pub mod bufmgr;
#[cfg(not(loom))]
pub mod clock;
#[cfg(not(loom))]
pub mod counting;
#[cfg(not(loom))]
pub mod dynahash_freelist;
#[cfg(not(loom))]
pub mod engine;
#[cfg(not(loom))]
pub mod entry_points;
#[cfg(not(loom))]
pub mod era_traffic;
#[cfg(not(loom))]
pub mod flex;
#[cfg(not(loom))]
pub mod lmgr;
#[cfg(not(loom))]
pub mod locks;
#[cfg(not(loom))]
pub mod parse;
#[cfg(not(loom))]
pub mod perf;
#[cfg(not(loom))]
pub mod pgshared;
#[cfg(not(loom))]
pub mod pgtrace;
#[cfg(not(loom))]
pub mod registry;
#[cfg(not(loom))]
pub mod runner;
#[cfg(not(loom))]
pub mod sinval;
#[cfg(not(loom))]
pub mod trial;
#[cfg(not(loom))]
pub mod workload;
