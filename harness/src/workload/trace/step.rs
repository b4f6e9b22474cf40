//! A recorded transaction compiled for the replay: its steps, how each recorded lock is shared
//! among the replay clients, and the count cells (tranche x mode x entry point).

use crate::pgtrace::{Entry, Mode as TMode};

/// The lock entry points counted, in this order (an index of [`Replay::counts`](crate::workload::trace::Replay::counts)).
pub const COUNTED_ENTRIES: [Entry; 5] = [
    Entry::Acquire,
    Entry::Conditional,
    Entry::AcquireOrWait,
    Entry::WaitForVar,
    Entry::Release,
];

pub(super) fn entry_index(e: Entry) -> usize {
    COUNTED_ENTRIES
        .iter()
        .position(|x| *x == e)
        .expect("a lock entry point")
}

pub(super) fn mode_index(m: TMode) -> usize {
    TMode::ALL.iter().position(|x| *x == m).expect("a mode")
}

/// How a recorded lock is instantiated for the replay clients.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Share {
    /// One lock for every client: the recorded one.
    Shared,
    /// One lock per tranche (dynamic shared memory): the tranche's first recorded lock.
    ByTranche(u32),
    /// A copy per replay client (`LockFastPath`).
    PerClient,
    /// The `k`th WALInsert lock of the trace, shifted by the client's slot.
    WalInsert(u32),
    /// Drawn for each transaction from the content-lock population.
    Drawn,
}

/// Where a lock operation was recorded: inside a group call site or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Site {
    Plain,
    EndXact,
    SetStatus,
}

/// One replayed LWLock operation.
#[derive(Clone, Copy, Debug)]
pub(super) struct Step {
    /// CPU before it, scaled (ns).
    pub(super) gap_ns: u64,
    pub(super) entry: Entry,
    pub(super) lock: u32,
    pub(super) mode: TMode,
    /// Whether the recorded call returned holding the lock.
    pub(super) held_after: bool,
    pub(super) site: Site,
    /// Its count cell ([`TraceWorkload::cell`](crate::workload::trace::TraceWorkload::cell)).
    pub(super) cell: u32,
    /// For an acquire that returned holding the lock: the index of its release in the
    /// transaction (`u32::MAX` if the trace does not release it).
    pub(super) release_at: u32,
}

/// A transaction: its steps, the CPU after the last one, and its counts.
#[derive(Clone, Debug, Default)]
pub(super) struct Txn {
    pub(super) steps: Vec<Step>,
    pub(super) tail_ns: u64,
    /// `(cell of Replay::counts, attempts)`.
    pub(super) counts: Vec<(u32, u32)>,
    /// The drawn content locks it takes, by trace lock id.
    pub(super) drawn: Vec<u32>,
    /// Lock operations (acquire attempts and waits; releases not counted).
    pub(super) ops: u64,
}

/// The count cell of `(tranche, mode, entry)` ([`TraceWorkload::cell`](crate::workload::trace::TraceWorkload::cell)).
pub(super) fn cell(tranche: usize, mode: TMode, entry: Entry) -> usize {
    (tranche * TMode::ALL.len() + mode_index(mode)) * COUNTED_ENTRIES.len() + entry_index(entry)
}
