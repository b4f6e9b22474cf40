//! What a row of the workload table says about its workload (`table.rs`), apart from its
//! transaction function: also what a recorded trace's row says (`trace.rs`).

use crate::lmgr::LmgrRelease;

/// What a workload's figures count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counted {
    /// Transactions (TPS).
    Transactions,
    /// Lock operations (a lock microbenchmark).
    LockOps,
}

/// One row of the table: everything about a workload but its transaction function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Info {
    /// The command-line name.
    pub name: &'static str,
    /// One-line description.
    pub description: &'static str,
    /// The PostgreSQL locks one transaction takes, and in which mode.
    pub locks: &'static str,
    /// What the figures count.
    pub counted: Counted,
    /// What one counted item is, in a few words.
    pub short: &'static str,
    /// The same in a sentence.
    pub meaning: &'static str,
    /// Whether the workload updates the CLOG (where `clog-group` applies).
    pub uses_clog: bool,
    /// Whether the workload uses the proc array (where `--layout` applies).
    pub uses_proc_array: bool,
    /// Whether the workload takes snapshots (where `--snapshot` applies).
    pub takes_snapshots: bool,
    /// Whether each thread keeps the hot buffer pinned for the whole trial.
    pub holds_pin: bool,
    /// The lock manager a `pgbench -S` workload of seed 000's thread runs, if it is one.
    pub lmgr: Option<LmgrRelease>,
    /// What a nonzero `Worker::bad_reads` means after a trial.
    pub bad_reads: &'static str,
}
