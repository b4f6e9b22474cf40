//! The drain: the server of the last-releaser policies. Under an exclusive hold it serves the
//! queued operations batch by batch (at most `max_group` per batch), releases, wakes the members
//! it served, hands the rest of an overlong chain over, and (last releaser) does the releaser
//! half of the handshake: `fence(SeqCst)`, load the queue head, and drain again if it can take the
//! lock. The holder-serves variant drains the same way but completes its members before the
//! release and owes no re-check.
//!
//! Mirrors the last releaser of the 2011 FlexLock design of ProcArrayLock (never committed;
//! reconstructed from its commit message: "the final releaser applies all pending clears before
//! anyone can take a new snapshot"). The handshake it is one half of is described in
//! `last_releaser.rs`, the holder-serves variant in `holder_serves.rs`.

use super::core::{Core, Deferred, Mine};
use crate::group_list;
use crate::stats::Stat;
use lwlock::elog::CritSection;
use lwlock::sync::{fence, Ordering};
use lwlock::{Mode, Proc, RawLwLock, INVALID_PROC};
use std::panic::{catch_unwind, AssertUnwindSafe};

impl<L: RawLwLock, T> Core<L, T> {
    /// The releaser half of the handshake: after a release, if operations are queued and the lock
    /// can be had, drain them. Returns what happened to `me`'s operation.
    pub(super) fn recheck_after_release(&self, me: u32, deferred: &mut Deferred) -> Mine {
        // SeqCst fence: pairs with the submitter's fence in `group_last_releaser` (Dekker).
        // Mutant `flex_reader_no_fence` (models only): without it a shared releaser may miss a
        // push while the submitter's re-check misses the release.
        if !lwlock::mutant!("flex_reader_no_fence") {
            fence(Ordering::SeqCst);
        }
        if self.list.head() == INVALID_PROC || !self.try_exclusive_owed(deferred) {
            return Mine::NotSeen;
        }
        self.bump(Stat::ExclusiveAcquires);
        // SAFETY: just acquired exclusively.
        unsafe { self.drain_release(INVALID_PROC, me, deferred, true) }
    }

    /// Runs `chain` (if any) and then every batch detached from the queue, under the exclusive hold
    /// the caller has, at most `max_group` operations; releases; wakes; hands the remainder over or
    /// re-checks the queue. `me` is the caller's record number if it has an operation queued
    /// (`INVALID_PROC` otherwise). `recheck`: do the releaser half of the handshake after the
    /// release (the last-releaser protocol); false for the holder-serves variant, whose unserved
    /// submitters wait for the lock themselves.
    ///
    /// A release or re-acquire of the lock that unwinds is handled as the module docs say
    /// ("Unwinding"); its panic is kept in `deferred` for the caller to raise.
    ///
    /// # Safety
    /// The calling thread holds the lock exclusively; `chain` is `INVALID_PROC` or a chain the
    /// caller owns (a handover to `me`).
    pub(super) unsafe fn drain_release(
        &self,
        chain: u32,
        me: u32,
        deferred: &mut Deferred,
        recheck: bool,
    ) -> Mine {
        // Detached chains are reachable only from this frame until they are woken or handed
        // over: nothing below may unwind (lock calls are caught).
        let crit = CritSection::start("flexlock: serving a group");
        // SAFETY: forwarded caller contract.
        let mine = unsafe { self.drain_release_inner(chain, me, deferred, recheck) };
        crit.end();
        mine
    }

    /// [`drain_release`](Self::drain_release), inside its critical section.
    ///
    /// # Safety
    /// As [`drain_release`](Self::drain_release).
    unsafe fn drain_release_inner(
        &self,
        mut chain: u32,
        me: u32,
        deferred: &mut Deferred,
        recheck: bool,
    ) -> Mine {
        let mut mine = Mine::NotSeen;
        let mut total = 0usize;
        loop {
            let mut done_first = INVALID_PROC;
            let mut done_last = INVALID_PROC;
            let mut budget = self.max_group;
            let mut rest = INVALID_PROC;
            self.data.with_mut(|data| loop {
                if chain == INVALID_PROC {
                    // Load first: the common case is an empty queue, and a load leaves the
                    // head's line shared where the detach's swap would take it exclusively on
                    // every release. Pure overhead removal: a push this load misses is one
                    // concurrent with the hold, which the post-release re-check (or, holder-
                    // serves, the submitter's own wait for the lock) covers exactly as it
                    // covers a push that lands just after the swap.
                    if self.list.head() == INVALID_PROC {
                        break;
                    }
                    chain = self.list.detach_fifo();
                    if chain == INVALID_PROC {
                        break;
                    }
                }
                // SAFETY: we hold the lock exclusively (caller contract, or re-acquired below) and
                // `data` is its value; `chain` was detached by us or handed to us (owned), and
                // every op on it was submitted to this lock.
                let s =
                    unsafe { group_list::serve(chain, budget, data as *mut (), me, &self.stats) };
                if done_first == INVALID_PROC {
                    done_first = s.first;
                } else {
                    // Append this batch to the wake chain; the previous batch was served
                    // entirely, so its last link was INVALID and nobody else reads it.
                    Proc::by_number(done_last)
                        .group
                        .next
                        .store(s.first, Ordering::Relaxed);
                }
                done_last = s.last;
                budget -= s.count;
                total += s.count;
                chain = INVALID_PROC;
                if budget == 0 {
                    rest = s.rest;
                    break;
                }
            });
            // Holder-serves: complete the served operations *before* the release. Their
            // submitters sleep in `L`, not on the operation (except members of a handed-over
            // chain, rare), so this usually posts nothing and makes no system call under the
            // lock; completing them after the release would let submitters that `L`'s release
            // wakes find their operation not yet done and take the lock again for nothing (the
            // measured cost: docs/results.md, "The group locks' constants, measured").
            if !recheck {
                if group_list::wake(done_first, done_last, me) {
                    mine = Mine::Done;
                }
                // The handover too (it posts only a target that sleeps on its operation): a
                // target that the release below wakes from `L`'s queue then finds its chain at
                // once.
                if rest != INVALID_PROC && group_list::hand_over(rest, me) {
                    mine = Mine::HandedOver;
                }
            }
            // SAFETY: held exclusively since the caller's acquire or ours below. An unwinding
            // release has given the hold up (trait rule): go on as after a normal one.
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| unsafe {
                self.raw.release(Mode::Exclusive)
            })) {
                deferred.keep(p);
            }
            if recheck && group_list::wake(done_first, done_last, me) {
                mine = Mine::Done;
            }
            if rest != INVALID_PROC {
                // The first unserved member takes the lock and goes on (it will also drain the
                // queue, so invariant 2 holds without our re-check).
                if recheck && group_list::hand_over(rest, me) {
                    mine = Mine::HandedOver;
                }
                return mine;
            }
            if !recheck {
                // Holder-serves: submitters the drain did not serve wait for the lock in `L`'s
                // queue, which the release above woke; they drain what is left.
                return mine;
            }
            // The releaser half of the handshake (see `recheck_after_release`).
            fence(Ordering::SeqCst);
            if self.list.head() == INVALID_PROC {
                return mine;
            }
            if total >= self.max_group {
                // Served our share: hand the queue to its oldest member instead of looping.
                let chain = self.list.detach_fifo();
                if chain != INVALID_PROC && group_list::hand_over(chain, me) {
                    mine = Mine::HandedOver;
                }
                return mine;
            }
            if !self.try_exclusive_owed(deferred) {
                // The holder checks the queue when it releases (invariant 2).
                return mine;
            }
            self.bump(Stat::ExclusiveAcquires);
        }
    }
}
