//! The vocabulary every layer of the simulator shares: the line size, the directory's agent
//! slots, and what an operation does to a line ([`Access`]) or to a clock alone ([`Plain`]).
//!
//! A leaf module: `profile` checks a topology against [`MAX_AGENTS`], `line_profile` counts
//! [`Access`]es per line, and `machine` charges them.

/// log2 of the line size (64 bytes).
pub const LINE_SHIFT: u32 = 6;
/// Directory slots: hardware threads plus the supervisor.
pub const MAX_AGENTS: usize = 512;

/// What an atomic (or `touch`) does to its line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A load.
    Load,
    /// A plain store.
    Store,
    /// A locked RMW (also a failed CAS and a SeqCst store on x86-64).
    Rmw,
}

/// Time spent without touching shared memory.
#[derive(Clone, Copy, Debug)]
pub enum Plain {
    /// One PAUSE.
    Pause,
    /// An `mfence`.
    Fence,
    /// Computation, picoseconds.
    Compute(u64),
}
