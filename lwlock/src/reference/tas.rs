//! The test-and-set spinlock: one word, every probe an RMW (`xchg`) on the lock's line, so the
//! waiters' probes contend with the hand-off and the lock collapses past a knee as cores grow.
//! It mirrors no PostgreSQL function; the closest is `s_lock.h`'s `TAS()` loop (`s_lock()`)
//! without its test-first probe (`TAS_SPIN`) and spin delay.
//!
//! Instruction time (`lwlock::sync::instructions`, counted from the release build's disassembly
//! of `lwlock/examples/lock_path_instructions.rs`, as the project's locks are): acquire 1, swap,
//! 5 (3 more per failed probe, besides its PAUSE); release: store, 1.

use crate::sync::{instructions, spin_loop, AtomicBool, Ordering};
use crate::{AcquireOrWait, Mode, RawLwLock, Tranche};

/// A test-and-set spinlock: every probe is an RMW (`xchg`) on the lock's line.
#[derive(Debug, Default)]
pub struct TasLock {
    /// `true` while held; set by a successful swap (Acquire), cleared by release (Release).
    locked: AtomicBool,
}

// SAFETY: mutual exclusion by the swap (only the thread that turned `false` into `true` holds it);
// Acquire swap / Release store order the critical sections; nothing unwinds; the conditional
// acquire is one swap.
unsafe impl RawLwLock for TasLock {
    const NAME: &'static str = "tas";
    const INSTRUCTIONS_ANNOUNCED: bool = true;
    fn with_tranche(_: Tranche) -> Self {
        TasLock::default()
    }
    fn acquire(&self, _: Mode) -> bool {
        // Instruction counts: the module docs.
        instructions(1);
        let mut fast = true;
        while self.locked.swap(true, Ordering::Acquire) {
            fast = false;
            spin_loop();
            instructions(3);
        }
        instructions(5);
        fast
    }
    fn conditional_acquire(&self, _: Mode) -> bool {
        !self.locked.swap(true, Ordering::Acquire)
    }
    fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait {
        if self.conditional_acquire(mode) {
            return AcquireOrWait::Acquired;
        }
        while self.locked.load(Ordering::Acquire) {
            spin_loop();
        }
        AcquireOrWait::Waited
    }
    unsafe fn release(&self, _: Mode) {
        self.locked.store(false, Ordering::Release);
        instructions(1);
    }
    fn is_locked(&self) -> bool {
        self.locked.load(Ordering::Relaxed)
    }
    fn is_locked_exclusive(&self) -> bool {
        self.is_locked()
    }
    fn tranche(&self) -> Tranche {
        Tranche::DEFAULT
    }
}
