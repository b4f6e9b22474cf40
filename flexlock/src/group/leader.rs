//! The elected leader: [`crate::GroupPolicy::Leader`] of [`crate::FlexLock`], and the keyed group of
//! [`crate::ClogGroupLock`].
//!
//! Mirrors `ProcArrayEndTransaction` + `ProcArrayGroupClearXid` (`procarray.c`, PostgreSQL
//! 9.6+, `0e141c0fbb`): try the exclusive lock conditionally; otherwise push onto the group list;
//! the thread that pushed onto an empty list is the leader: it takes the lock exclusively (new
//! members keep joining while it waits), detaches the whole list with one swap, runs every
//! member's operation, releases, and wakes the members.
//!
//! With a key and an admission rule (the clog lock's page rule) it is
//! `TransactionGroupUpdateXidStatus` (`clog.c`, PostgreSQL 11+): before each push attempt a
//! joiner applies the rule to the record at the list head, and a refused joiner takes the lock
//! exclusively on its own (the clog fallback). The unwinding rules are the rows "leader's /
//! handover target's `acquire`" and "`release` after serving" of the FlexLock module docs.

use super::core::{Core, Deferred};
use crate::group_list;
use crate::op::Op;
use crate::stats::Stat;
use lwlock::elog::CritSection;
use lwlock::{Mode, Proc, RawLwLock, WaitEvent, INVALID_PROC};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

impl<L: RawLwLock, T> Core<L, T> {
    /// The leader protocol (`ProcArrayGroupClearXid`; with a key rule,
    /// `TransactionGroupUpdateXidStatus`). `key` is stored in the caller's record for joiners to
    /// read; `admits(head)` is the admission rule a joiner applies to the record at the list head
    /// before each push attempt (`true` for any head: no rule). A refused joiner takes the lock
    /// exclusively on its own (the clog fallback).
    pub(crate) fn group_leader<R, F>(
        &self,
        f: F,
        event: WaitEvent,
        key: u64,
        admits: impl FnMut(u32) -> bool,
    ) -> R
    where
        F: FnOnce(&mut T) -> R + Send,
        R: Send,
    {
        // The wait event's tranche test and the closure's move, before the direct attempt
        // (coarse; the release build's count, see `guards.rs`).
        lwlock::sync::instructions(13);
        let f = match self.try_direct(f) {
            Ok(r) => return r,
            Err(f) => f,
        };
        let me = Proc::current();
        let op = Op::<T, F, R>::new(f);
        group_list::prepare(me, op.header(), key);
        let pushed = self.list.push_if(me, admits);
        let prev = match pushed {
            Ok(prev) => prev,
            Err(_) => {
                // Not pushed: nothing of ours is reachable by other threads.
                // Clog fallback: a blocking exclusive acquire of our own.
                group_list::unprepare(me);
                self.bump(Stat::ClogFallbacks);
                let guard = self.write();
                self.bump(Stat::OpsBySelf);
                // SAFETY: `guard` holds the lock exclusively; `data_ptr` is its value; the op is
                // ours and has not run.
                self.data.with_mut(|data| unsafe { op.run_here(data) });
                drop(guard);
                return op.take();
            }
        };
        // Pushed: `op` lives on this frame and other threads may run it, so this frame must not
        // be left before the operation is finished with (see "Unwinding").
        let crit = CritSection::start("flexlock: a group operation is queued on this stack");
        let mut deferred = Deferred::default();
        // Leader: Some(INVALID) = detach the list; Some(me) = serve the chain handed to me.
        let mut lead = (prev == INVALID_PROC).then_some(INVALID_PROC);
        loop {
            match lead {
                None => {
                    op.wait(me, event);
                    if op.take_handover() {
                        lead = Some(me.number());
                        continue;
                    }
                    break;
                }
                Some(handed) => {
                    if let Err(p) =
                        catch_unwind(AssertUnwindSafe(|| self.raw.acquire(Mode::Exclusive)))
                    {
                        // We hold nothing and our operation has not run. Leave the chain we
                        // head (we are its oldest member: first in line) and hand the rest to
                        // its next member, which takes the lock and serves it.
                        let chain = if handed == INVALID_PROC {
                            self.list.detach_fifo()
                        } else {
                            handed
                        };
                        debug_assert_eq!(chain, me.number());
                        let rest = group_list::leave(me);
                        // Mutant `flex_leader_unwind_strands` (models only): leave without
                        // handing the rest over, which strands every follower.
                        if rest != INVALID_PROC && !lwlock::mutant!("flex_leader_unwind_strands") {
                            let to_me = group_list::hand_over(rest, me.number());
                            debug_assert!(!to_me);
                        }
                        crit.end();
                        resume_unwind(p);
                    }
                    self.bump(Stat::ExclusiveAcquires);
                    let chain = if handed == INVALID_PROC {
                        // Closes the group: later arrivals start the next one.
                        self.list.detach_fifo()
                    } else {
                        handed
                    };
                    // We pushed onto an empty list, so we are the oldest member: first in line.
                    debug_assert_eq!(chain, me.number());
                    let s = self.data.with_mut(|data| {
                        // SAFETY: held exclusively just above; the chain was detached by us or
                        // handed to us; all its ops were submitted to this lock.
                        unsafe {
                            group_list::serve(
                                chain,
                                self.max_group,
                                data as *mut (),
                                me.number(),
                                &self.stats,
                            )
                        }
                    });
                    // SAFETY: acquired exclusively above. An unwinding release has given the
                    // hold up (trait rule): the members are still woken and the rest handed
                    // over, then the panic is ours.
                    if let Err(p) = catch_unwind(AssertUnwindSafe(|| unsafe {
                        self.raw.release(Mode::Exclusive)
                    })) {
                        deferred.keep(p);
                        // Mutant `flex_release_unwind_no_wake` (models only): skip the wake,
                        // leaving served members asleep.
                        if lwlock::mutant!("flex_release_unwind_no_wake") {
                            break;
                        }
                    }
                    let served_me = group_list::wake(s.first, s.last, me.number());
                    debug_assert!(served_me);
                    if s.rest != INVALID_PROC {
                        let to_me = group_list::hand_over(s.rest, me.number());
                        debug_assert!(!to_me);
                    }
                    break;
                }
            }
        }
        crit.end();
        deferred.finish(|| op.take())
    }
}
