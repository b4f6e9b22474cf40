//! `LWLockConflictsWithVar`, `LWLockWaitForVar`, `LWLockUpdateVar` and
//! `LWLockReleaseClearVar`: waiting for a variable the exclusive holder updates (the WAL
//! insertion locks' protocol), as the [`RawLwLockVar`] implementation.

use super::layout::{RELEASE_OK, VAL_EXCLUSIVE};
use super::{AtomicLwLock, Policy};
use crate::elog::CritSection;
use crate::proc::{lw_mode, lw_waiting, Proc};
use crate::proclist::ProcList;
use crate::raw::{Mode, RawLwLock, RawLwLockVar, VarWait};
use crate::stats::Stat;
use crate::sync::{AtomicU64, Ordering};
use crate::wait_event::{Tranche, WaitEvent};

impl<P: Policy> AtomicLwLock<P> {
    /// `LWLockConflictsWithVar`: `Some(outcome)` if no need to wait, `None` if we must.
    pub(super) fn conflicts_with_var(&self, var: &AtomicU64, oldval: u64) -> Option<VarWait> {
        // Acquire: a `Free` answer synchronises with the holder's Release in `release`, so the
        // work the variable tracked is visible to the caller (PostgreSQL leaves this barrier to
        // the caller; it costs nothing extra on x86).
        // Mutant `var_free_relaxed` (models only): a Free answer that orders nothing.
        let order = if crate::mutant!("var_free_relaxed") {
            Ordering::Relaxed
        } else {
            Ordering::Acquire
        };
        if self.state.load(order) & VAL_EXCLUSIVE == 0 {
            return Some(VarWait::Free);
        }
        let value = var.load(Ordering::Acquire);
        (value != oldval).then_some(VarWait::Changed(value))
    }
}

impl<P: Policy> RawLwLockVar for AtomicLwLock<P> {
    fn wait_for_var(&self, var: &AtomicU64, oldval: u64) -> VarWait {
        let me = Proc::current();
        let mut extra = 0;
        let outcome = loop {
            if let Some(outcome) = self.conflicts_with_var(var, oldval) {
                break outcome;
            }
            let crit = CritSection::start("atomic LWLock: queued on the wait list");
            self.queue_self(me, lw_mode::WAIT_UNTIL_FREE);
            // Force wakeups on: the next release must wake us even if a woken writer is still
            // retrying (e0d97d77bf).
            // Mutant `var_no_release_ok` (models only): the waiter is woken late (by the woken
            // writer's own release), not by the release that freed the lock.
            if !crate::mutant!("var_no_release_ok") {
                self.state.fetch_or(RELEASE_OK, Ordering::Relaxed);
            }
            if let Some(outcome) = self.conflicts_with_var(var, oldval) {
                self.dequeue_self(me);
                crit.end();
                break outcome;
            }
            self.stats.bump(Stat::Block, 1);
            extra += Self::sleep_until_woken(me, WaitEvent::lwlock(Tranche::from_id(self.tranche)));
            crit.end();
        };
        me.repost(extra);
        outcome
    }

    unsafe fn update_var(&self, var: &AtomicU64, val: u64) {
        debug_assert!(
            self.is_locked_exclusive(),
            "update_var without the exclusive lock"
        );
        // AcqRel swap (a full barrier in PostgreSQL): the value is visible before any wake.
        // Mutant `var_relaxed_update` (models only): a value that does not publish what precedes it.
        let order = if crate::mutant!("var_relaxed_update") {
            Ordering::Relaxed
        } else {
            Ordering::AcqRel
        };
        var.swap(val, order);
        let mut wake = ProcList::EMPTY;
        self.wait_list_lock();
        // SAFETY: LOCKED is held.
        unsafe {
            self.with_waiters(|l| {
                while let Some(w) = l.first() {
                    if w.lw_mode.load(Ordering::Relaxed) != lw_mode::WAIT_UNTIL_FREE {
                        break; // only the leading WAIT_UNTIL_FREE run
                    }
                    l.delete(w);
                    wake.push_tail(w);
                    w.lw_waiting
                        .store(lw_waiting::PENDING_WAKEUP, Ordering::Relaxed);
                }
            })
        };
        self.wait_list_unlock();
        Self::wake_all(&mut wake);
    }

    unsafe fn release_clear_var(&self, var: &AtomicU64, val: u64) {
        var.swap(val, Ordering::AcqRel);
        // SAFETY: the caller holds the lock exclusively.
        unsafe { self.release(Mode::Exclusive) };
    }
}
