//! The group list and its server: the machinery of `ProcArrayGroupClearXid` (`procarray.c`) and
//! `TransactionGroupUpdateXidStatus` (`clog.c`), shared by every policy.
//!
//! # Design
//! Members link their wait records ([`lwlock::Proc`]) into a Treiber stack by record number: the
//! list head is one `AtomicU32` on the lock, the links are `proc.group.next`. A push is a CAS loop
//! on the head; a server takes the whole list with one `swap(INVALID)` (no per-element pop, so no
//! ABA although records are re-pushed), reverses it so that it serves in arrival order, runs up to
//! `max_group` operations under the exclusive lock, releases the lock, and then wakes the members
//! it served: clear `next`, Release-store `member = false`, mark the member's op done and post
//! the member's semaphore if it sleeps (never its own). Unlike PostgreSQL, a member first spins
//! briefly on its op's completion state before sleeping (see [`crate::op`]), so a small group
//! served by a leader on another core costs no system call. If operations remain beyond the bound, the rest of the chain is handed to its first member
//! (CC-Synch's combiner handover): that member is woken with its op's `handover` flag set and
//! becomes the server of the rest.
//!
//! PostgreSQL serves the list in stack order (the leader, which pushed first, last). Reversing
//! costs one pass over the links, under the lock, and makes the bound fair: the oldest operations
//! run first, and a leader's own operation is always the first of its chain.
//!
//! # State
//! * `head`: [`INVALID_PROC`] (empty) or the number of the most recently pushed record.
//! * Per record (`proc.group`): `member` (true from just before the push until the server that
//!   ran the operation wakes it; a record handed a chain keeps it true until it serves itself),
//!   `next` (the link; reset to [`INVALID_PROC`] before
//!   `member` goes false, except on a handover, where the chain continues through it), `op` (the
//!   submitter's [`OpHeader`]), `key` (clog page; read by joiners of the clog list).
//!
//! # Invariants
//! 1. A record is on at most one list or chain at a time: only its own thread pushes it, and only
//!    while its `member` is false; it then waits until its op is done (or handed a chain, which it
//!    serves itself, clearing `member` in its own wake).
//! 2. A detached chain (after `swap`) is owned by exactly one server: only it reads or writes the
//!    chain's links until it clears `member` of each record, or hands the rest over.
//! 3. Every pushed operation runs exactly once, under the exclusive lock, before its record's
//!    `member` goes false (a handover sets `handover` and completes the op without running it; the
//!    member then serves it itself as the first op of the chain).
//! 4. A member that did not serve its own operation is posted exactly once (by its server or by a
//!    handover) if and only if it announced that it sleeps (op state SLEEPING before the server's
//!    `complete` swap), so posts and sleeps balance; foreign wakeups are absorbed and re-posted
//!    (`extraWaits`).
//!
//! # Memory orderings
//! * Push CAS: Release on success publishes `next`, `op`, `key` and `member` (Relaxed stores
//!   before it) and the op's closure to the server. Relaxed on failure: nothing was published.
//! * Detach `swap`: Acquire. Each push CAS is an RMW, so all earlier pushes are in the release
//!   sequence the swap reads from: every detached record's fields are visible.
//! * Wake: `next = INVALID` (Relaxed), `member = false` (Release), then the op's completion
//!   `swap(DONE, AcqRel)`, pairing with the member's Acquire loads while it spins or sleeps: the
//!   operation's result and the reset link are visible before the member returns (the
//!   `pg_write_barrier` of `4aec49899e`). The semaphore post is itself Release/Acquire, but the
//!   completion state is what the member trusts (a post may be foreign).
//! * Handover: `handover = true` (Relaxed), the chain's links (written by the previous server),
//!   then `member = false` with Release: all visible to the new server after its Acquire load.

use crate::op::OpHeader;
use crate::stats::{Counters, Stat};
use crossbeam_utils::CachePadded;
use lwlock::sync::{AtomicU32, Ordering};
use lwlock::{Proc, INVALID_PROC};

/// A Treiber stack of wait records (`procArrayGroupFirst`, `clogGroupFirst`).
#[derive(Debug)]
pub(crate) struct GroupList {
    /// Padded: pushers hammer it while the lock word is hammered by acquirers.
    head: CachePadded<AtomicU32>,
}

impl GroupList {
    /// An empty list.
    pub(crate) fn new() -> Self {
        GroupList {
            head: CachePadded::new(AtomicU32::new(INVALID_PROC)),
        }
    }

    /// Pushes `me` if `admit(current head)` allows it, re-asking after every failed CAS.
    /// Returns the head it replaced (`INVALID_PROC`: the list was empty, `me` leads), or
    /// `Err(head)` if `admit` refused.
    ///
    /// The caller has set `me.group.{member, op, key}` (Relaxed) before calling.
    pub(crate) fn push_if(
        &self,
        me: &Proc,
        mut admit: impl FnMut(u32) -> bool,
    ) -> Result<u32, u32> {
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            if !admit(head) {
                return Err(head);
            }
            // Relaxed: published by the Release CAS below.
            me.group.next.store(head, Ordering::Relaxed);
            // Release: publishes this record's group fields and its op to the detaching server.
            match self.head.compare_exchange_weak(
                head,
                me.number(),
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Ok(head),
                Err(now) => head = now,
            }
        }
    }

    /// Takes the whole list (`pg_atomic_exchange_u32(&procArrayGroupFirst, INVALID)`), in arrival
    /// order (oldest first).
    pub(crate) fn detach_fifo(&self) -> u32 {
        // Acquire: see the module docs (release sequence of the pushes).
        let mut p = self.head.swap(INVALID_PROC, Ordering::Acquire);
        // Reverse the links in place; the chain is ours (invariant 2).
        let mut prev = INVALID_PROC;
        while p != INVALID_PROC {
            let rec = Proc::by_number(p);
            let next = rec.group.next.load(Ordering::Relaxed);
            rec.group.next.store(prev, Ordering::Relaxed);
            prev = p;
            p = next;
        }
        prev
    }

    /// The current head (a racy snapshot), `INVALID_PROC` when empty.
    #[inline]
    pub(crate) fn head(&self) -> u32 {
        self.head.load(Ordering::Relaxed)
    }
}

/// What one serving pass did: it ran `count` operations, `first..=last` along the chain's links,
/// and left `rest` (the unserved remainder, `INVALID_PROC` if none).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Served {
    pub(crate) first: u32,
    pub(crate) last: u32,
    pub(crate) count: usize,
    pub(crate) rest: u32,
}

/// Runs up to `limit` operations of `chain` (arrival-ordered links), counting each as run by its
/// own thread if it is `me`'s, else by a leader. Records the group in `stats`.
///
/// # Safety
/// * The caller holds exclusively the lock whose protected value `data` points to, and every op on
///   the chain was submitted to that lock (so it expects that `T`).
/// * The chain is owned by the caller (invariant 2) and none of its operations has run yet.
pub(crate) unsafe fn serve(
    chain: u32,
    limit: usize,
    data: *mut (),
    me: u32,
    stats: &Counters,
) -> Served {
    let mut p = chain;
    let mut last = INVALID_PROC;
    let mut count = 0;
    while p != INVALID_PROC && count < limit {
        let rec = Proc::by_number(p);
        // Relaxed: visible through the detach's Acquire or the handover's Release/Acquire.
        let next = rec.group.next.load(Ordering::Relaxed);
        let op = rec.group.op.load(Ordering::Relaxed) as *const OpHeader;
        // Mutant `flex_done_before_apply` (models only, a build of its own): the server clears
        // a member's `member` flag and posts it *before* running its operation, so the submitter
        // can return (and free its op, and read an unset result) while the operation is still
        // running: a model must report the race on the op slot or a missing result. Under std
        // this variant is undefined behaviour by construction; never enable it outside a model
        // checker. (`wake` skips the members it already released.)
        if lwlock::mutant!("flex_done_before_apply") && p != me {
            rec.group.member.store(false, Ordering::Release);
            // SAFETY: none: this variant is deliberately broken (see above).
            if unsafe { OpHeader::complete(op) } {
                rec.sem().unlock();
            }
        }
        // SAFETY: the member is on a chain we own and its `member` is still true, so it keeps its
        // op alive (op.rs, Lifetime); we hold the lock exclusively and `data` is its value (our
        // caller's contract); the op has not run (invariant 3).
        unsafe { OpHeader::run(op, data) };
        stats.bump(
            if p == me {
                Stat::OpsBySelf
            } else {
                Stat::OpsByLeader
            },
            1,
        );
        last = p;
        count += 1;
        p = next;
    }
    if count > 0 {
        stats.group(count as u64);
    }
    Served {
        first: chain,
        last,
        count,
        rest: p,
    }
}

/// Wakes the members `first..=last` along the links (after the lock was released: posting is a
/// system call). Returns whether `me` was among them (it is not posted).
pub(crate) fn wake(first: u32, last: u32, me: u32) -> bool {
    if first == INVALID_PROC {
        return false;
    }
    let mut served_me = false;
    let mut p = first;
    loop {
        let rec = Proc::by_number(p);
        // Read the link before `member` goes false: after that the record is its owner's again.
        let next = rec.group.next.load(Ordering::Relaxed);
        if p == me {
            served_me = true;
        }
        if !(lwlock::mutant!("flex_done_before_apply") && p != me) {
            let op = rec.group.op.load(Ordering::Relaxed) as *const OpHeader;
            // Mutant `flex_wake_link_reset_late` (models only): the link is reset after the
            // member was released, clobbering the link of a record its owner already pushed
            // again (seen only when a thread submits twice).
            let late_reset = lwlock::mutant!("flex_wake_link_reset_late");
            if !late_reset {
                rec.group.next.store(INVALID_PROC, Ordering::Relaxed);
            }
            // Release: the op's outcome and the reset link happen-before an Acquire load of it.
            rec.group.member.store(false, Ordering::Release);
            // SAFETY: the member waits in `Op::wait` until this call, so its op is alive; we do
            // not touch the op afterwards.
            if p != me && unsafe { OpHeader::complete(op) } {
                // It sleeps (or is about to): post it. Records are never freed, so posting is safe
                // even once the member has returned (invariant 4).
                rec.sem().unlock();
            }
            if late_reset {
                rec.group.next.store(INVALID_PROC, Ordering::Relaxed);
            }
        }
        if p == last {
            return served_me;
        }
        p = next;
    }
}

/// Hands the unserved chain starting at `rest` to its first member, which will take the lock and
/// serve it. Returns true if that member is `me` (then the caller serves it; nothing is posted).
pub(crate) fn hand_over(rest: u32, me: u32) -> bool {
    if rest == me {
        return true;
    }
    let rec = Proc::by_number(rest);
    let op = rec.group.op.load(Ordering::Relaxed) as *const OpHeader;
    // SAFETY: the member waits in `Op::wait` until `complete` below, so its op is alive.
    unsafe { (*op).handover.store(true, Ordering::Relaxed) };
    // `member` stays true: the record still heads the chain it is handed, so a nested group call
    // from its thread must keep being refused until its own `wake` clears it (invariant 1).
    // SAFETY: as above; last access. Its Release publishes the flag and the chain's links.
    if unsafe { OpHeader::complete(op) } {
        rec.sem().unlock();
    }
    false
}

/// Makes the calling thread's record a pending member with operation `op` and key `key`.
pub(crate) fn prepare(me: &Proc, op: *const OpHeader, key: u64) {
    assert!(
        !me.group.member.load(Ordering::Relaxed),
        "flexlock: nested group operation (an operation run for a group must not submit another)"
    );
    // Relaxed: published by the push's Release CAS.
    me.group.op.store(op as *mut (), Ordering::Relaxed);
    me.group.key.store(key, Ordering::Relaxed);
    me.group.member.store(true, Ordering::Relaxed);
}

/// Takes the calling thread's record off the head of a chain it owns (detached by it or handed
/// to it) without running its operation, resets the record, and returns the rest of the chain
/// (`INVALID_PROC` if none), which the caller must hand over. For a leader whose lock call
/// unwound (flexlock's "Unwinding" docs).
pub(crate) fn leave(me: &Proc) -> u32 {
    // Relaxed: the chain is ours (invariant 2); the handover's Release publishes it onwards.
    let rest = me.group.next.load(Ordering::Relaxed);
    unprepare(me);
    rest
}

/// Undoes [`prepare`] for a record that was not pushed (the clog fallback).
pub(crate) fn unprepare(me: &Proc) {
    me.group.member.store(false, Ordering::Relaxed);
    me.group.next.store(INVALID_PROC, Ordering::Relaxed);
    me.group.op.store(std::ptr::null_mut(), Ordering::Relaxed);
}
