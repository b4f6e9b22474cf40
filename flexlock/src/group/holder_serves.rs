//! Holder serves: [`crate::HolderServesLock`], the last-releaser FlexLock's fast variant, the
//! submitter's protocol (its servers are the drain, `drain.rs`, run by exclusive holders).
//!
//! Mirrors no PostgreSQL function: a variant beyond PostgreSQL and the 2011 FlexLock design:
//! exclusive holders serve the queue before they release, but no release re-checks it; a
//! submitter nobody served waits for the lock in the wrapped lock's own queue and drains itself.
//!
//! **Holder serves (the fast variant).** The last-releaser handshake costs every release a
//! `fence(SeqCst)` and a load of the queue head's line, contended or not (and every shared
//! release too). [`crate::HolderServesLock`] moves the whole burden to the submitter that waits: an
//! exclusive holder still drains the queue while it holds (a load of the head first, the detach
//! only if non-empty), and completes the operations it served *before* it releases (their
//! submitters are not asleep on them, so this is a few stores), but it releases without a
//! re-check; a submitter tries the lock once after its push, spins on its operation, and then
//! calls `L::acquire_or_wait(Exclusive)`,
//! which returns when the lock was released (then it re-checks its operation) or with the lock
//! (then it drains the queue, its own operation included unless a server took it). `L`'s
//! queue-then-recheck guarantees that a submitter waiting there is woken by the next release, so
//! invariant 2 becomes: *while an operation is queued, its submitter is running, or waiting in
//! `L`'s queue for a release, or a server or handover target is about to run it.* Submitters
//! whose operation may still be on the queue never announce SLEEPING on it (they sleep in `L`),
//! so servers do not post them; `L`'s release wakes them. The one exception is the handover: a
//! submitter whose own drain (after its push, under the exclusive lock) neither served its
//! operation nor was handed it knows the operation is on a chain handed to another member, which
//! takes the lock with a blocking acquire; it sleeps on the operation, as the other policies'
//! members do, and that member's wake or handover posts it (waiting in `L` instead would find
//! the lock free and take it for nothing, again and again, until the target got it). The same
//! holds for any submitter that sees its record *detached* (its link rewritten by a server's
//! detach, or the queue empty since its push): the operation is on a chain some server owns and
//! will serve or hand over, so after its spin that submitter sleeps on the operation instead of
//! waiting in `L`. Only a submitter whose record may still be on the queue (not detached, or a
//! chain of its record alone, which may leave no sign) waits in `L`. Without the detached case,
//! submitters whose operation was already in a large batch outlast their spin and queue in `L`
//! by the dozen, and `L`'s wait-list lock (its `queue_self`, and every release's wakeup of all
//! WAIT_UNTIL_FREE waiters) takes most of the line transfers (the simulated figures:
//! `docs/results.md`, "The group locks' constants, measured"). What remains is posting: nearly every submitter at 64 clients now sleeps on its operation,
//! and a holder completes (posts) before its release, inside the hold, where the last releaser
//! posts after it. A shared release is a plain release. Mutant
//! `flex_holder_sleeps_on_op` (models only) sleeps on the operation instead, trusting holders:
//! a push that the holder's load missed is stranded.

use super::core::{Core, Deferred, Mine};
use crate::group_list;
use crate::op::Op;
use crate::stats::Stat;
use lwlock::elog::{panic_abort, CritSection};
use lwlock::sync::{spin_loop, Ordering};
use lwlock::{AcquireOrWait, IpcEvent, Mode, Proc, RawLwLock, WaitEvent, INVALID_PROC};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

impl<L: RawLwLock, T> Core<L, T> {
    /// `L::acquire_or_wait(Exclusive)` for a holder-serves submitter whose operation is queued:
    /// like [`try_exclusive_owed`](Self::try_exclusive_owed), a first unwind is kept in
    /// `deferred` and the call retried (the operation must be finished with before this frame
    /// is left); a second one aborts.
    fn acquire_or_wait_owed(&self, deferred: &mut Deferred) -> AcquireOrWait {
        match catch_unwind(AssertUnwindSafe(|| {
            self.raw.acquire_or_wait(Mode::Exclusive)
        })) {
            Ok(outcome) => outcome,
            Err(payload) => {
                deferred.keep(payload);
                match catch_unwind(AssertUnwindSafe(|| {
                    self.raw.acquire_or_wait(Mode::Exclusive)
                })) {
                    Ok(outcome) => outcome,
                    Err(_) => panic_abort(format_args!(
                        "flexlock: acquire_or_wait of lock {:?} ({}) unwound twice while a \
                         group operation was queued; continuing could strand it",
                        self.raw.tranche().name(),
                        L::NAME
                    )),
                }
            }
        }
    }

    /// The holder-serves protocol ([`crate::HolderServesLock`]): queue; exclusive holders serve the
    /// queue before they release; an unserved submitter tries the lock once, spins on its
    /// operation and then, if its record was detached by a server, sleeps on the operation (the
    /// server posts it), otherwise waits for the lock in `L`'s own queue (`acquire_or_wait`), so
    /// that no release owes it a re-check.
    pub(crate) fn group_holder_serves<R, F>(&self, f: F) -> R
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
        // The link our push stored (the record below ours, `INVALID_PROC` if the list was
        // empty): while our operation is pending, only a server that detached it rewrites it
        // (`link_rewritten`).
        let below = pushed.unwrap_or(INVALID_PROC);
        // Pushed: `op` lives on this frame and other threads may run it (see "Unwinding").
        let crit = CritSection::start("flexlock: a group operation is queued on this stack");
        let mut deferred = Deferred::default();
        let mut mine = Mine::NotSeen;
        // Whether our record has been taken off the queue by a server (a detach), so that its
        // operation is on a chain that server owns and will serve or hand over (group_list.rs,
        // invariant 2; every server completes or hands over what it detached, and completing
        // posts a submitter that announced SLEEPING). Two signs, each sufficient:
        // * our link is no longer `below`: after our push only a detach writes our link (it
        //   reverses the chain in place: our link becomes the record pushed after ours, never
        //   the one below ours, or `INVALID_PROC` if ours was the newest; pushes above ours
        //   write their own links), or, after a detach, the same server's batch append and
        //   `wake`'s link reset (which may turn the sign back off: a false "not detached" only
        //   sends us to `L`, the safe path, whose release by the holder wakes us). No write of
        //   an earlier use of our record can land late: every server write comes before its
        //   `complete` (Release), which we acquired before pushing again. The one detach it
        //   cannot show is of a chain of our record alone (`INVALID_PROC` stays
        //   `INVALID_PROC`); the second sign may still show that one;
        // * the head is `INVALID_PROC` (checked once per round, before `L`, since the head's line
        //   is contended): the list empties only by a detach, and any detach after our push
        //   takes our record (it stays on the stack until detached).
        // Relaxed: no data is read on the strength of it. Coherence of the one location is
        // enough: seeing the detacher's store (or the empty head written by its swap) means the
        // detach has happened; the operation's result is then read through `op.wait`'s Acquire
        // of the completion state, as for every member.
        let link_rewritten = || me.group.next.load(Ordering::Relaxed) != below;
        // Set once a drain of ours (under the exclusive lock, after our push) left our operation
        // neither served nor handed to us: then it is on a chain handed to another member (see
        // the `NotSeen` arm), and we sleep on it like the other policies' members.
        let mut handed_elsewhere = false;
        // One attempt right after the push (no fence: a miss only costs the spin below): the
        // holder we failed against has often released already, having missed our push.
        if self.try_exclusive_owed(&mut deferred) {
            self.bump(Stat::ExclusiveAcquires);
            // SAFETY: just acquired exclusively.
            mine = unsafe { self.drain_release(INVALID_PROC, me.number(), &mut deferred, false) };
            handed_elsewhere = mine == Mine::NotSeen;
        }
        let mut spins = 0u32;
        loop {
            match mine {
                Mine::Done => break,
                Mine::HandedOver => {
                    if let Err(p) =
                        catch_unwind(AssertUnwindSafe(|| self.raw.acquire(Mode::Exclusive)))
                    {
                        // We hold nothing; our operation has not run. Leave the chain we head
                        // and hand the rest over. Submitters still queued wait for the lock
                        // themselves, so no re-check is owed.
                        let rest = group_list::leave(me);
                        if rest != INVALID_PROC {
                            let to_me = group_list::hand_over(rest, me.number());
                            debug_assert!(!to_me);
                        }
                        crit.end();
                        drop(deferred); // the acquire's panic is the one to report
                        resume_unwind(p);
                    }
                    self.bump(Stat::ExclusiveAcquires);
                    // SAFETY: just acquired exclusively; the chain starting at our record was
                    // handed to us (we own it).
                    mine = unsafe {
                        self.drain_release(me.number(), me.number(), &mut deferred, false)
                    };
                }
                Mine::NotSeen => {
                    if op.is_done() {
                        if op.take_handover() {
                            mine = Mine::HandedOver;
                            continue;
                        }
                        break;
                    }
                    // Mutant `flex_holder_sleeps_on_op` (models only): sleep on the operation
                    // as the last-releaser members do, trusting a holder to serve it. Without
                    // the releaser's re-check a push that the holder's in-hold load missed is
                    // stranded: the model must report the deadlock.
                    if lwlock::mutant!("flex_holder_sleeps_on_op") {
                        op.wait(me, WaitEvent::ipc(IpcEvent::FlexLockGroupUpdate));
                        continue;
                    }
                    // Our operation was pushed before a drain of ours looked at the queue, and
                    // that drain (holding the lock exclusively, so no other server was mid-pass)
                    // neither served it nor handed it to us: it had been detached already and
                    // is on the unserved rest of a chain handed to another member (every server
                    // completes and hands over before its release). That member takes the lock
                    // with a blocking `acquire` and serves it or hands it on; operations never
                    // return to the queue, so neither the lock nor the queue will bring it to
                    // us. Sleep on the operation, as the members of the other policies do: the
                    // server's `wake` or `hand_over` posts us (we announce SLEEPING). Without
                    // this (the first version) such a submitter found the lock free, took it
                    // through `acquire_or_wait`, drained an empty queue and released, in a
                    // loop, until the handover target got the lock: hundreds of thousands of
                    // lock round trips in a run of 96 operations with a bound of 4, competing
                    // with the target's own acquire (regression test in `holder_serves.rs`).
                    // Mutant `flex_holder_handover_spins` (tests only): that first version; the
                    // regression test must fail on it.
                    if handed_elsewhere && !lwlock::mutant!("flex_holder_handover_spins") {
                        op.wait(me, WaitEvent::ipc(IpcEvent::FlexLockGroupUpdate));
                        continue;
                    }
                    // `spin_limit`: the production count, or fewer under the models (loom never
                    // lets a submitter spin 200 times while a server is busy, so the paths below
                    // would go unexplored; models `holder_detached_sleep2` (the empty-head
                    // sign) and `holder_detached_chain3` (the rewritten link)). A detached
                    // submitter spins again in `op.wait` before it sleeps.
                    if spins < lwlock::sync::spin_limit(crate::op::SPINS_BEFORE_SLEEP) {
                        // Spin on our operation only (a holder serving it completes it before
                        // its release); the lock is tried again by `acquire_or_wait` below.
                        spins += 1;
                        spin_loop();
                        continue;
                    }
                    // Detached by a server (see `link_rewritten`): the same reasoning as the
                    // handover case above; the server serves or hands over our operation and
                    // posts us. Waiting in `L` instead (the first version) is what collapsed at
                    // many cores: a 64-operation batch takes longer to serve than the spin
                    // above, so submitters whose operation was already in a server's hands
                    // queued in `L` by the dozen, and `L`'s wait-list lock (queue_self, and
                    // the release's wakeup of every WAIT_UNTIL_FREE waiter) took 83 % of all
                    // line transfers (simulated, 64 cores; the module docs give the figures).
                    // Checked once per round, after the spin, not on every spin: the link
                    // lives on our record's line, which the server writes while it serves
                    // (polling it cost 20 % at 4 simulated cores).
                    if link_rewritten() || self.list.head() == INVALID_PROC {
                        op.wait(me, WaitEvent::ipc(IpcEvent::FlexLockGroupUpdate));
                        continue;
                    }
                    // Wait for the lock in `L`'s own queue: `L`'s queue-then-recheck makes sure
                    // that a release after our failed attempt wakes us, which is the handshake
                    // the last-releaser design does with two SeqCst fences per release.
                    if self.acquire_or_wait_owed(&mut deferred) == AcquireOrWait::Acquired {
                        self.bump(Stat::ExclusiveAcquires);
                        // SAFETY: just acquired exclusively.
                        mine = unsafe {
                            self.drain_release(INVALID_PROC, me.number(), &mut deferred, false)
                        };
                        handed_elsewhere = mine == Mine::NotSeen;
                    } else {
                        // Woken by a release: spin again before queueing in `L` again.
                        spins = 0;
                    }
                }
            }
        }
        crit.end();
        deferred.finish(|| op.take())
    }
}
