//! PostgreSQL's own operations, the faithful mirror: `LWLockAcquire` (its queue / re-check /
//! sleep loop, `acquire_slow`), `LWLockConditionalAcquire`, `LWLockAcquireOrWait` and
//! `LWLockRelease`, as the [`RawLwLock`] implementation. Under [`Barging`](super::Barging) and
//! PostgreSQL's two modes nothing else runs; the other policies' contended path is
//! `contended.rs`.

use super::layout::{
    is_exclusive, is_free, HANDOFF, HAS_WAITERS, RELEASE_OK, SHARED_MASK, VAL_EXCLUSIVE, VAL_SHARED,
};
use super::wait_list::take_granted;
use super::{AtomicLwLock, Attempt, Policy, Want};
use crate::elog::CritSection;
use crate::proc::{lw_mode, Proc};
use crate::raw::{AcquireOrWait, Mode, RawLwLock};
use crate::stats::{LockStats, Stat};
use crate::sync::{instructions, Ordering};
use crate::wait_event::{Tranche, WaitEvent};

impl<P: Policy> AtomicLwLock<P> {
    #[cold]
    pub(super) fn acquire_slow(&self, mode: Mode) -> bool {
        instructions(20); // coarse: the call, the prologue and the wait record
        let me = Proc::current();
        let wait_mode = if mode == Mode::Exclusive {
            lw_mode::EXCLUSIVE
        } else {
            lw_mode::SHARED
        };
        let mut slept = false;
        let mut extra = 0;
        loop {
            // Phase 2: queue; phase 3: re-check. From the queueing until we are off the list
            // nothing may unwind: our record would stay linked (`LWLockDequeueSelf` never ran).
            let crit = CritSection::start("atomic LWLock: queued on the wait list");
            self.queue_self(me, wait_mode);
            // Mutant `atomic_no_recheck` (models only): sleep without re-checking after queueing.
            let recheck = if crate::mutant!("atomic_no_recheck") {
                Attempt::MustWait
            } else {
                self.attempt_lock(mode)
            };
            let Some(crit) = self.after_queued_recheck(me, recheck, crit, extra) else {
                break;
            };
            // Phase 4: sleep until woken, then compete again (no handoff).
            instructions(12); // coarse: the wait event and the sleep loop's setup
            self.stats.bump(Stat::Block, 1);
            extra += Self::sleep_until_woken(me, WaitEvent::lwlock(Tranche::from_id(self.tranche)));
            crit.end();
            // A fair unlock handed us the lock (invariant 8; never under PostgreSQL's own
            // operations): we hold it.
            if take_granted(me) {
                slept = true;
                break;
            }
            // We ran: wakeups may happen again.
            // Mutant `atomic_no_release_ok_reset` (models only): never re-enable wakeups.
            if !crate::mutant!("atomic_no_release_ok_reset") {
                self.state.fetch_or(RELEASE_OK, Ordering::Relaxed);
            }
            slept = true;
            match self.attempt_lock(mode) {
                Attempt::Acquired => break,
                Attempt::Overflow => {
                    me.repost(extra);
                    self.shared_overflow()
                }
                Attempt::MustWait => {}
            }
        }
        me.repost(extra);
        !slept
    }
}

// SAFETY: mutual exclusion and Acquire/Release by invariant 1 and the orderings in the module
// docs; an acquire that panics (shared overflow) dequeues itself first and holds nothing; nothing
// unwinds while queued or waking (critical sections; a stuck wait-list bit aborts);
// `conditional_acquire` is one CAS loop.
unsafe impl<P: Policy> RawLwLock for AtomicLwLock<P> {
    const NAME: &'static str = P::NAME;
    const INSTRUCTIONS_ANNOUNCED: bool = true;

    fn with_tranche(tranche: Tranche) -> Self {
        Self::new_in(tranche)
    }

    #[inline]
    fn acquire(&self, mode: Mode) -> bool {
        self.stats.bump(
            if mode == Mode::Shared {
                Stat::ShAcquire
            } else {
                Stat::ExAcquire
            },
            1,
        );
        match self.attempt_lock(mode) {
            Attempt::Acquired => true,
            Attempt::Overflow => self.shared_overflow(),
            // The drop-in policies' contended path (the spin, the handoff, the bound) lives
            // beside PostgreSQL's, which stays as it is (never under Barging).
            Attempt::MustWait if P::HANDOFF => self.acquire_contended_untimed(Want::of(mode)),
            Attempt::MustWait => self.acquire_slow(mode),
        }
    }

    #[inline]
    fn conditional_acquire(&self, mode: Mode) -> bool {
        match self.attempt_lock(mode) {
            Attempt::Acquired => true,
            Attempt::Overflow => self.shared_overflow(),
            Attempt::MustWait => false,
        }
    }

    fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait {
        match self.attempt_lock(mode) {
            Attempt::Acquired => return AcquireOrWait::Acquired,
            Attempt::Overflow => self.shared_overflow(),
            Attempt::MustWait => {}
        }
        let me = Proc::current();
        let crit = CritSection::start("atomic LWLock: queued on the wait list");
        self.queue_self(me, lw_mode::WAIT_UNTIL_FREE);
        // Mutant `aow_no_recheck` (models only): sleep without re-checking after queueing.
        let recheck = if crate::mutant!("aow_no_recheck") {
            Attempt::MustWait
        } else {
            // A load, not `attempt_lock`'s guess: a queued waiter expects the lock taken.
            self.attempt(Want::of(mode), false)
        };
        match recheck {
            Attempt::Acquired => {
                // Our queue entry may have been chosen by a waker meanwhile; DequeueSelf handles
                // that, and the eventual release re-triggers any inhibited wakeups.
                self.dequeue_self(me);
                crit.end();
                AcquireOrWait::Acquired
            }
            Attempt::Overflow => {
                self.dequeue_self(me);
                crit.end();
                self.shared_overflow()
            }
            Attempt::MustWait => {
                self.stats.bump(Stat::Block, 1);
                let extra =
                    Self::sleep_until_woken(me, WaitEvent::lwlock(Tranche::from_id(self.tranche)));
                crit.end();
                me.repost(extra);
                AcquireOrWait::Waited
            }
        }
    }

    #[inline]
    unsafe fn release(&self, mode: Mode) {
        let delta = if mode == Mode::Exclusive {
            VAL_EXCLUSIVE
        } else {
            VAL_SHARED
        };
        // Release: the critical section happens-before the next Acquire CAS that sees this value.
        // Mutant `atomic_relaxed_release` (models only): an unlock that does not publish.
        let order = if crate::mutant!("atomic_relaxed_release") {
            Ordering::Relaxed
        } else {
            Ordering::Release
        };
        instructions(1); // the delta
        let old = self.state.fetch_sub(delta, order);
        instructions(4); // the new value, the one test and the return
        debug_assert!(
            if mode == Mode::Exclusive {
                old & VAL_EXCLUSIVE != 0
            } else {
                old & SHARED_MASK != 0
            },
            "LWLock released in a mode it is not held in"
        );
        let new = old.wrapping_sub(delta);
        // One test on the fast path: only a waiter, an upgrader or the handoff needs more.
        if new & (HAS_WAITERS | VAL_EXCLUSIVE | HANDOFF) != 0 {
            self.release_wake(new);
        }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        !is_free(self.state.load(Ordering::Relaxed))
    }

    #[inline]
    fn is_locked_exclusive(&self) -> bool {
        is_exclusive(self.state.load(Ordering::Relaxed))
    }

    fn tranche(&self) -> Tranche {
        Tranche::from_id(self.tranche)
    }

    fn stats(&self) -> Option<LockStats> {
        self.stats.snapshot()
    }
}
