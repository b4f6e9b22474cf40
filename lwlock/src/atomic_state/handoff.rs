//! The handoff bit's owner (invariant 7; policies [`Handoff`], [`TaskFair`], [`Adaptive`]):
//! who takes [`HANDOFF`] and where it queues (behind the leading WAIT_UNTIL_FREE run), at the
//! bound, as it queues, or never, and how a timed owner gives it up. Beyond PostgreSQL.
//!
//! Everything here uses the bits `UPGRADABLE` and `HANDOFF`, the wait mode
//! `lw_mode::UPGRADABLE` or the record flag `lw_granted`, which PostgreSQL's own operations
//! (`lwlock_acquire.rs`) never set; those behave as PostgreSQL's as long as only they are
//! used. See the layout's table and invariants 6–8.
//!
//! * **Handoff** (policies [`Handoff`], [`TaskFair`]): an exclusive waiter sleeps with a
//!   deadline at its bound (under [`TaskFair`], zero: it takes the handoff as it queues, in the
//!   RMW that sets `HAS_WAITERS`); when it passes, the waiter (still on the list) moves itself behind the leading
//!   WAIT_UNTIL_FREE run, sets `HANDOFF` and re-checks. Newcomers now fail their attempt and
//!   queue; the release that frees the lock wakes the owner even if `RELEASE_OK` is clear (the
//!   owner is the first non-WAIT_UNTIL_FREE entry, so PostgreSQL's wake pass picks it alone);
//!   the owner's attempt ignores the bit and clears it.

use super::layout::{handoff_owned, is_read_locked, HANDOFF, HAS_WAITERS, LOCK_MASK};
#[allow(unused_imports)] // rustdoc links
use super::{Adaptive, Barging, EmptyYield, Handoff, TaskFair};
use super::{AtomicLwLock, Policy, Want};
use crate::proc::{lw_mode, lw_waiting, Proc};
use crate::proclist::ProcList;
use crate::sync::Ordering;

/// What a try to take the handoff found (`take_handoff`, `take_handoff_at_bound`).
pub(super) enum Take {
    /// We own [`HANDOFF`] now.
    Taken,
    /// Another waiter owns the handoff; or, at the spinning policies' bound, an exclusive waiter
    /// is queued ahead of us (the rule in `adaptive_spin.rs`'s docs).
    Other,
    /// A waker already detached us: its post is coming.
    Detached,
}

/// The handoff rule of an acquire, supplied by the policy (its constants): when a writer takes
/// [`HANDOFF`] and where it queues. One contended path (`contended.rs`) runs every rule; an
/// acquire's rule depends on the policy only, not on whether it is timed, recursive or
/// upgradable (only exclusive waiters take the bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rule {
    /// [`Barging`]: no handoff (PostgreSQL's policy; its drop-in operations only).
    None,
    /// [`Handoff`]: a writer takes the bit when its bound passes, unless another owns it (then
    /// it looks again 100 µs or a bound later).
    AtBound,
    /// [`TaskFair`]: a writer takes the bit as it queues, in the RMW that sets `HAS_WAITERS`,
    /// unless another owns it (then as [`Rule::AtBound`] with a zero bound).
    OnQueue,
    /// [`Adaptive`], [`EmptyYield`]: a writer behind readers takes the bit as it queues, and any
    /// writer when its bound passes, but never ahead of a queued exclusive waiter; one whose bound
    /// passed re-queues at the front when woken (`adaptive_spin.rs`'s docs).
    Ordered,
}

impl Rule {
    /// The rule of policy `P` for an acquire of `want` (with `deadline`, if timed).
    #[inline]
    pub(super) fn of<P: Policy>(want: Want, deadline: Option<u64>) -> Rule {
        let rule = if !P::HANDOFF {
            Rule::None
        } else if P::SPIN {
            Rule::Ordered
        } else if P::BOUND_NANOS == 0 {
            Rule::OnQueue
        } else {
            Rule::AtBound
        };
        if want != Want::Exclusive || deadline.is_none() {
            return rule;
        }
        // Two mutants (models only), each a timed writer that follows another rule than the
        // untimed one, as timed acquires did before they shared the contended path:
        // `timed_writer_no_bound` (no bound under Handoff), `timed_writer_queues_plain` (no
        // handoff at queueing under TaskFair). The third, `timed_writer_unordered` (the handoff
        // at the bound without the ordering rule under Adaptive), is at the bound's take
        // (`contended.rs`).
        match rule {
            Rule::AtBound if crate::mutant!("timed_writer_no_bound") => Rule::None,
            Rule::OnQueue if crate::mutant!("timed_writer_queues_plain") => Rule::AtBound,
            rule => rule,
        }
    }

    /// Whether a writer may take the bit as it queues (`queue_self_writer`).
    #[inline]
    pub(super) fn takes_on_queue(self) -> bool {
        matches!(self, Rule::OnQueue | Rule::Ordered)
    }
}

impl<P: Policy> AtomicLwLock<P> {
    /// The handoff owner leaves without the lock (a timed wait): clear [`HANDOFF`] and wake the
    /// waiters it held back if nobody holds the lock (no release will come).
    pub(super) fn give_up_handoff(&self) {
        // Mutant `give_up_keeps_handoff` (models only): leave without clearing the bit, so the
        // readers it holds back stay out for good.
        if crate::mutant!("give_up_keeps_handoff") {
            return;
        }
        // Relaxed: as the RMW that set the bit (`take_handoff_at_bound`, `queue_self_writer`); it must be an RMW, since
        // releasers and queuers change the word concurrently.
        // Mutant `give_up_plain_store` (models only): clear the bit with a load and a store, which
        // can undo a concurrent release's fetch_sub (or a queuer's HAS_WAITERS).
        let old = if crate::mutant!("give_up_plain_store") {
            let old = self.state.load(Ordering::Relaxed);
            self.state.store(old & !HANDOFF, Ordering::Relaxed);
            old
        } else {
            self.state.fetch_and(!HANDOFF, Ordering::Relaxed)
        };
        // Mutant `give_up_no_wake` (models only): clear the bit but leave the waiters it held
        // back asleep (a release that saw the bit may already have passed them over).
        if old & (HAS_WAITERS | LOCK_MASK) == HAS_WAITERS && !crate::mutant!("give_up_no_wake") {
            self.wakeup();
        }
    }

    /// `LWLockQueueSelf` for a writer whose `rule` takes the bit as it queues. If nobody owns
    /// [`HANDOFF`], take it and queue behind the leading WAIT_UNTIL_FREE run: under
    /// [`Rule::OnQueue`] ([`TaskFair`]) always; under [`Rule::Ordered`] when `late` (our bound
    /// has passed and we were woken, the first waiter of a wake pass), or when the lock is held
    /// shared only and no exclusive waiter is queued (the rule in `adaptive_spin.rs`'s docs).
    /// Otherwise queue at the tail, or, `late` under [`Rule::Ordered`], right behind the bit's
    /// owner (the first waiter past that run). The bit is set in the same RMW that sets
    /// `HAS_WAITERS` (invariant 7), so no reader sees the waiter without it. Returns whether we
    /// own the handoff.
    pub(super) fn queue_self_writer(&self, me: &Proc, late: bool, rule: Rule) -> bool {
        assert_eq!(
            me.lw_waiting.load(Ordering::Relaxed),
            lw_waiting::NOT_WAITING,
            "queueing for an LWLock while already waiting"
        );
        self.wait_list_lock();
        let s = self.state.load(Ordering::Relaxed);
        let ordered = rule == Rule::Ordered;
        let take = !handoff_owned(s)
            && (!ordered
                || late
                || (is_read_locked(s)
                    // SAFETY: LOCKED is held.
                    && !unsafe { self.with_waiters(|l| exclusive_ahead(l, None)) }));
        // Relaxed: as HAS_WAITERS in `queue_self`; only the word's modification order matters
        // (a release whose fetch_sub follows this RMW sees both bits and wakes; one before it
        // left the lock as our re-check finds it).
        // Mutant `adaptive_handoff_without_waiters_bit` (models only): the handoff taken in an
        // RMW that does not set HAS_WAITERS, so the readers' release does not wake us.
        let bits = if crate::mutant!("adaptive_handoff_without_waiters_bit") && take {
            HANDOFF
        } else {
            HAS_WAITERS | if take { HANDOFF } else { 0 }
        };
        self.state.fetch_or(bits, Ordering::Relaxed);
        me.lw_waiting.store(lw_waiting::WAITING, Ordering::Relaxed);
        me.lw_mode.store(lw_mode::EXCLUSIVE, Ordering::Relaxed);
        // SAFETY: LOCKED is held.
        unsafe {
            self.with_waiters(|l| {
                if take {
                    l.push_after_wait_until_free(me)
                } else if ordered && late {
                    // The bit is another's: its owner is the first waiter past the run (nobody
                    // is put in front of it), or off the list and re-queueing at the front.
                    push_behind_first_waiter(l, me)
                } else {
                    l.push_tail(me)
                }
            })
        };
        self.wait_list_unlock();
        take
    }

    /// The bound passed: if we are still queued and nobody owns the handoff (and, under
    /// [`Rule::Ordered`], no exclusive waiter is queued ahead of us: the rule in
    /// `adaptive_spin.rs`'s docs), move behind the leading WAIT_UNTIL_FREE run and set
    /// [`HANDOFF`] (invariant 7).
    pub(super) fn take_handoff_at_bound(&self, me: &Proc, rule: Rule) -> Take {
        self.wait_list_lock();
        let found = if me.lw_waiting.load(Ordering::Relaxed) != lw_waiting::WAITING {
            Take::Detached
        } else if self.state.load(Ordering::Relaxed) & HANDOFF != 0
            // Mutant `adaptive_handoff_past_writer` (models only): take the bit and the front
            // past an exclusive waiter queued ahead of us (a writer whose bound passed later
            // overtakes one queued earlier, without limit).
            || (rule == Rule::Ordered
                && !crate::mutant!("adaptive_handoff_past_writer")
                // SAFETY: LOCKED is held.
                && unsafe { self.with_waiters(|l| exclusive_ahead(l, Some(me))) })
        {
            Take::Other
        } else {
            // Mutant `adaptive_handoff_in_place` (models only): set the bit without moving to
            // the front, so a release's wake pass may pick waiters the bit keeps out, not us.
            if !crate::mutant!("adaptive_handoff_in_place") {
                // SAFETY: LOCKED is held.
                unsafe {
                    self.with_waiters(|l| {
                        l.delete(me);
                        l.push_after_wait_until_free(me);
                    })
                };
            }
            // Relaxed, like HAS_WAITERS: only the word's modification order matters. A release
            // whose fetch_sub follows this RMW sees the bit and wakes us; one before it left the
            // lock as our re-check (next) finds it.
            self.state.fetch_or(HANDOFF, Ordering::Relaxed);
            Take::Taken
        };
        self.wait_list_unlock();
        found
    }
}

/// Puts `me` behind the first waiter of `l` that is not WAIT_UNTIL_FREE (and the WAIT_UNTIL_FREE
/// entries around it); at the tail if there is none. Called under LOCKED.
pub(super) fn push_behind_first_waiter(l: &mut ProcList, me: &Proc) {
    let mut run = ProcList::EMPTY;
    let mut passed_one = false;
    while let Some(w) = l.first() {
        if w.lw_mode.load(Ordering::Relaxed) != lw_mode::WAIT_UNTIL_FREE {
            if passed_one {
                break;
            }
            passed_one = true;
        }
        l.delete(w);
        run.push_head(w); // reversed
    }
    l.push_head(me);
    while let Some(w) = run.pop_head() {
        l.push_head(w); // reversed again: the original order
    }
}

/// Whether an exclusive waiter is queued in `l` ahead of `me` (anywhere, for `None`). Called
/// under LOCKED (the list's lock).
pub(super) fn exclusive_ahead(l: &ProcList, me: Option<&Proc>) -> bool {
    let mut cur = l.first();
    while let Some(w) = cur {
        if me.is_some_and(|m| std::ptr::eq(m, w)) {
            return false;
        }
        if w.lw_mode.load(Ordering::Relaxed) == lw_mode::EXCLUSIVE {
            return true;
        }
        cur = ProcList::next_of(w);
    }
    false
}
