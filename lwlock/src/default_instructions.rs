//! The default instruction time of a lock that announces none: [`DefaultInstructions`].
//!
//! Under `--cfg lwsim` a lock's virtual time is its memory operations plus the instructions its
//! paths announce with [`crate::sync::instructions`] (the design document, "Instruction time").
//! The project's locks announce theirs, counted from their release build's disassembly
//! ([`RawLwLock::INSTRUCTIONS_ANNOUNCED`] is `true` for them). A user's lock written against
//! `lwlock::sync` usually announces nothing, so without a default its straight-line code would
//! cost no time at all and it would be favoured over every annotated lock with the same memory
//! operations. [`DefaultInstructions`] wraps such a lock and charges
//! [`DEFAULT_ACQUIRE_INSTRUCTIONS`] before each acquire (any of the three) and
//! [`DEFAULT_RELEASE_INSTRUCTIONS`] after each release; a lock that announces its own is
//! forwarded untouched. lwbench wraps every lock registered with `Lwbench::lock` in it.
//!
//! The default is the uncontended count of the smallest annotated locks: the test-and-set and
//! ticket locks (`lwlock::reference`) spend 6 instructions on an uncontended acquire besides its
//! memory operations (1 before the RMW, 5 after it) and 1 on a release besides its store; the
//! atomic LWLock 8 and 5 (exclusive), the MCS lock 13 and 13, the classic LWLock 50 and 40. A
//! user's lock is charged the floor of that range, what the simplest lock's call, test of its
//! RMW's result and return cost. Contended paths get nothing more (their
//! spin loops are PAUSEs and loads, charged as memory operations). Outside `--cfg lwsim` the
//! charge compiles to nothing.

use crate::raw::{AcquireOrWait, Mode, RawLwLock};
use crate::stats::LockStats;
use crate::sync::instructions;
use crate::wait_event::Tranche;

/// Instructions charged before each acquire of a lock that announces none (see the module docs).
pub const DEFAULT_ACQUIRE_INSTRUCTIONS: u32 = 6;

/// Instructions charged after each release of a lock that announces none.
pub const DEFAULT_RELEASE_INSTRUCTIONS: u32 = 1;

/// A lock `L` with the default instruction time when `L` announces none
/// (`L::INSTRUCTIONS_ANNOUNCED` false); otherwise `L` itself, forwarded.
#[derive(Debug, Default)]
pub struct DefaultInstructions<L> {
    inner: L,
}

impl<L> DefaultInstructions<L> {
    /// Wraps `inner`.
    pub const fn new(inner: L) -> Self {
        DefaultInstructions { inner }
    }

    /// The wrapped lock.
    pub fn inner(&self) -> &L {
        &self.inner
    }
}

impl<L: RawLwLock> DefaultInstructions<L> {
    #[inline(always)]
    fn charge(n: u32) {
        if !L::INSTRUCTIONS_ANNOUNCED {
            instructions(n);
        }
    }
}

// SAFETY: forwards every method to `L`, whose contract it inherits; the charges are virtual time
// only (no memory operation, no scheduling point, nothing that can unwind).
unsafe impl<L: RawLwLock> RawLwLock for DefaultInstructions<L> {
    const NAME: &'static str = L::NAME;
    const INSTRUCTIONS_ANNOUNCED: bool = true;

    fn with_tranche(tranche: Tranche) -> Self {
        DefaultInstructions::new(L::with_tranche(tranche))
    }

    fn acquire(&self, mode: Mode) -> bool {
        Self::charge(DEFAULT_ACQUIRE_INSTRUCTIONS);
        self.inner.acquire(mode)
    }

    fn conditional_acquire(&self, mode: Mode) -> bool {
        Self::charge(DEFAULT_ACQUIRE_INSTRUCTIONS);
        self.inner.conditional_acquire(mode)
    }

    fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait {
        Self::charge(DEFAULT_ACQUIRE_INSTRUCTIONS);
        self.inner.acquire_or_wait(mode)
    }

    unsafe fn release(&self, mode: Mode) {
        // SAFETY: forwarded caller contract.
        unsafe { self.inner.release(mode) };
        Self::charge(DEFAULT_RELEASE_INSTRUCTIONS);
    }

    fn is_locked(&self) -> bool {
        self.inner.is_locked()
    }

    fn is_locked_exclusive(&self) -> bool {
        self.inner.is_locked_exclusive()
    }

    fn tranche(&self) -> Tranche {
        self.inner.tranche()
    }

    fn stats(&self) -> Option<LockStats> {
        self.inner.stats()
    }
}
