//! The last releaser: [`crate::GroupPolicy::LastReleaser`] of [`crate::FlexLock`], the submitter
//! half; the releaser half is the drain (`drain.rs`) that every release through the lock runs.
//!
//! Mirrors the 2011 FlexLock design of ProcArrayLock (never committed;
//! reconstructed from its commit message): a thread that cannot get the lock exclusively queues
//! its operation; whoever releases the lock to free (the last shared holder, or the exclusive
//! holder) runs the queued operations under exclusive rights, then wakes the submitters.
//!
//! **Last releaser, race-free.** The trait has no "release, but keep it if someone queued" step,
//! so the policy is built from two halves of a queue-then-recheck handshake (the same shape as the
//! atomic LWLock's queue-then-recheck):
//! * *submitter*: push the operation, `fence(SeqCst)`, try the lock exclusively once more; if that
//!   succeeds, drain the queue itself (its own operation included, unless a drainer took it);
//! * *releaser* (every release through this lock: write guard, read guard, direct group op): an
//!   exclusive holder first drains the queue *while still holding*, so its release and the drain
//!   are one hold; then it releases, `fence(SeqCst)`, loads the queue head and, if non-empty, tries
//!   the lock exclusively and drains.
//!
//! By the two SeqCst fences, either the releaser's load sees the push, or the submitter's retry
//! sees the release (or a later acquisition, whose holder will check the queue on its own release).
//! So a queued operation is never stranded while the lock is free.
//!
//! # Invariant
//! If the queue is non-empty, then the lock is held by a thread that will check the queue when
//! it releases, or a handover target is about to take the lock, or a submitter is about to retry
//! the lock (invariant 2 of the FlexLock module docs).
//!
//! # Memory orderings
//! The two `fence(SeqCst)` calls are the store-load (Dekker) barrier of the invariant: submitter
//! "push; fence; try-acquire" against releaser "release; fence; load head". Without them both
//! loads could miss both stores.

use super::core::{Core, Deferred, Mine};
use crate::group_list;
use crate::op::Op;
use crate::stats::Stat;
use lwlock::elog::CritSection;
use lwlock::sync::{fence, Ordering};
use lwlock::{IpcEvent, Mode, Proc, RawLwLock, WaitEvent, INVALID_PROC};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

impl<L: RawLwLock, T> Core<L, T> {
    /// The last-releaser protocol (the 2011 FlexLock).
    pub(crate) fn group_last_releaser<R, F>(&self, f: F) -> R
    where
        F: FnOnce(&mut T) -> R + Send,
        R: Send,
    {
        let f = match self.try_direct(f) {
            Ok(r) => return r,
            Err(f) => f,
        };
        let me = Proc::current();
        let op = Op::<T, F, R>::new(f);
        group_list::prepare(me, op.header(), 0);
        let pushed = self.list.push_if(me, |_| true);
        debug_assert!(pushed.is_ok());
        // Pushed: `op` lives on this frame and other threads may run it (see "Unwinding").
        let crit = CritSection::start("flexlock: a group operation is queued on this stack");
        let mut deferred = Deferred::default();
        let mut mine = Mine::NotSeen;
        // Mutant `flex_no_recheck` (models only, a build of its own): the submitter does not
        // retry the lock after queueing. If the holder released (and found the queue empty)
        // between the submitter's failed attempt and its push, the operation is stranded and the
        // submitter sleeps forever: a model must report the deadlock.
        if !lwlock::mutant!("flex_no_recheck") {
            // The submitter half of the handshake: the holder may have released (finding the
            // queue empty) after our failed attempt; if the lock is free now, drain it ourselves.
            // SeqCst fence: pairs with the releaser's fence (module docs).
            fence(Ordering::SeqCst);
            if self.try_exclusive_owed(&mut deferred) {
                self.bump(Stat::ExclusiveAcquires);
                // SAFETY: just acquired exclusively.
                mine =
                    unsafe { self.drain_release(INVALID_PROC, me.number(), &mut deferred, true) };
            }
        }
        loop {
            match mine {
                Mine::Done => break,
                Mine::HandedOver => {
                    if let Err(p) =
                        catch_unwind(AssertUnwindSafe(|| self.raw.acquire(Mode::Exclusive)))
                    {
                        // We hold nothing; our operation has not run. Leave the chain we head
                        // and hand the rest over; with no rest, the queue may still hold
                        // operations whose submitters count on the handover target (us) to
                        // drain: do the releaser half of the handshake first.
                        let rest = group_list::leave(me);
                        if rest != INVALID_PROC {
                            let to_me = group_list::hand_over(rest, me.number());
                            debug_assert!(!to_me);
                        } else {
                            let m = self.recheck_after_release(INVALID_PROC, &mut deferred);
                            debug_assert_eq!(m, Mine::NotSeen);
                        }
                        crit.end();
                        drop(deferred); // the acquire's panic is the one to report
                        resume_unwind(p);
                    }
                    self.bump(Stat::ExclusiveAcquires);
                    // SAFETY: just acquired exclusively; the chain starting at our record was
                    // handed to us (we own it).
                    mine = unsafe {
                        self.drain_release(me.number(), me.number(), &mut deferred, true)
                    };
                }
                Mine::NotSeen => {
                    op.wait(me, WaitEvent::ipc(IpcEvent::FlexLockGroupUpdate));
                    if !op.take_handover() {
                        break;
                    }
                    mine = Mine::HandedOver;
                }
            }
        }
        crit.end();
        deferred.finish(|| op.take())
    }
}
