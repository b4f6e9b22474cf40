//! The ticket spinlock (Mellor-Crummey and Scott 1991, after Reed and Kanodia's sequencers): a
//! FIFO spinlock whose waiters all spin on one line (`serving`), so every hand-off invalidates
//! every waiter and the lock collapses past a knee as cores grow. PostgreSQL never used one (its
//! spinlocks are test-and-set, `s_lock.h`); it is the project's example of a user's own lock
//! registered with lwbench (`bench/examples/ticket_lock.rs`).
//!
//! Instruction time (`lwlock::sync::instructions`, counted from the release build's disassembly
//! of `lwlock/examples/lock_path_instructions.rs`): acquire 1, `fetch_add`, the first load of
//! `serving`, 5 (the spin loop's compare and branch between a PAUSE and the next load are not
//! charged: a spin-wait loop is a PAUSE and a load, which spin jumps skip exactly); release: load,
//! store, 1.

use crate::sync::{instructions, spin_loop, spin_wait_while_for, AtomicU32, Ordering};
use crate::{AcquireOrWait, Mode, RawLwLock, Tranche};

/// A ticket lock: take a ticket with one `fetch_add`, wait until it is served.
///
/// State: `next` (the next ticket to hand out) and `serving` (the ticket that holds the lock);
/// free when they are equal. Invariants: `serving <= next` (wrapping); only the holder advances
/// `serving`. Orderings: the ticket is Relaxed (it publishes nothing); the holder's Release
/// store of `serving` pairs with the next holder's Acquire load, which orders the critical
/// sections.
///
/// Exclusive only: a shared acquire takes it exclusively, which the harnesses' checks accept (a
/// shared section finds it held). It spins without ever sleeping, so with more threads than cores
/// on a real machine a preempted ticket holder stalls everyone behind it.
#[derive(Debug, Default)]
pub struct TicketLock {
    next: AtomicU32,
    serving: AtomicU32,
}

// SAFETY: tickets are unique (fetch_add); only the thread whose ticket equals `serving` holds the
// lock, in either mode, and only it advances `serving` (Release), which the next holder's
// Acquire load sees: at most one holder at a time, and its accesses happen before the next one's.
unsafe impl RawLwLock for TicketLock {
    const NAME: &'static str = "ticket";
    const INSTRUCTIONS_ANNOUNCED: bool = true;
    fn with_tranche(_: Tranche) -> Self {
        TicketLock::default()
    }
    fn acquire(&self, _: Mode) -> bool {
        // Instruction counts: the module docs.
        instructions(1);
        let me = self.next.fetch_add(1, Ordering::Relaxed);
        // Spin on `serving` (the explicit spin-wait hint: the loop load, PAUSE, load).
        let (_, spins) =
            spin_wait_while_for(&self.serving, Ordering::Acquire, u64::MAX, |&s| s != me);
        instructions(5);
        spins == 0
    }
    fn conditional_acquire(&self, _: Mode) -> bool {
        // Acquire on success: pairs with the previous holder's Release of `serving`.
        let s = self.serving.load(Ordering::Acquire);
        self.next
            .compare_exchange(s, s.wrapping_add(1), Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }
    fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait {
        if self.conditional_acquire(mode) {
            return AcquireOrWait::Acquired;
        }
        while self.is_locked() {
            spin_loop();
        }
        AcquireOrWait::Waited
    }
    unsafe fn release(&self, _: Mode) {
        let s = self.serving.load(Ordering::Relaxed);
        self.serving.store(s.wrapping_add(1), Ordering::Release);
        instructions(1);
    }
    fn is_locked(&self) -> bool {
        self.next.load(Ordering::Relaxed) != self.serving.load(Ordering::Relaxed)
    }
    fn is_locked_exclusive(&self) -> bool {
        self.is_locked()
    }
    fn tranche(&self) -> Tranche {
        Tranche::DEFAULT
    }
}
