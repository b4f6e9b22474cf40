//! `LWLockAttemptLock`: one CAS loop on the state word, for the two PostgreSQL modes and the
//! drop-in's recursive and upgradable reads, under the policy's [`HANDOFF`] rule.

use super::layout::{
    HANDOFF, LOCK_MASK, MAX_SHARED, RELEASE_OK, SHARED_MASK, UPGRADABLE, VAL_EXCLUSIVE, VAL_SHARED,
};
#[allow(unused_imports)] // rustdoc links
use super::{Adaptive, Barging, EmptyYield};
use super::{AtomicLwLock, Attempt, Policy, Want};
use crate::raw::Mode;
use crate::sync::{instructions, Ordering};
use crate::wait_event::Tranche;

impl<P: Policy> AtomicLwLock<P> {
    /// `LWLockAttemptLock`: one CAS loop. The CAS is done even when the lock is busy (storing the
    /// unchanged value), as PostgreSQL does, except under the spinning policies ([`Adaptive`],
    /// [`EmptyYield`]: no load before a newcomer's exclusive CAS, no CAS when busy; see
    /// `attempt_from`).
    #[inline(always)]
    pub(super) fn attempt_lock(&self, mode: Mode) -> Attempt {
        // The spinning policy (the drop-in types') guesses that an exclusive newcomer finds the
        // lock idle (only RELEASE_OK set) and tries its CAS without a load first, as
        // parking_lot's `lock` does: one RMW when the guess holds; when it fails, the failed CAS
        // returned the word and the attempt goes on from there. Only here, on a newcomer's first
        // attempt: a spinner or a queued waiter has read the word already. PostgreSQL's
        // policies load first. The trade-off (a faster uncontended pair against a failed guess
        // taking a held lock's line exclusive on many cores) is measured in design, "The
        // adaptive policy".
        if P::SPIN && mode == Mode::Exclusive {
            return self.attempt_from(Want::Exclusive, false, RELEASE_OK);
        }
        self.attempt(Want::of(mode), false)
    }

    /// `LWLockAttemptLock` for any [`Want`]. Under [`Barging`] and for the two PostgreSQL modes
    /// this is PostgreSQL's test (`handoff` is the constant 0). `token`: the caller owns
    /// [`HANDOFF`] (exclusive only), may ignore it and clears it with the same CAS.
    #[inline(always)]
    pub(super) fn attempt(&self, want: Want, token: bool) -> Attempt {
        self.attempt_from(want, token, self.state.load(Ordering::Relaxed))
    }

    /// [`attempt`](Self::attempt) from a value of the word the caller read (or guessed: see
    /// `attempt_lock`).
    #[inline(always)]
    pub(super) fn attempt_from(&self, want: Want, token: bool, mut old: u32) -> Attempt {
        // Mutant `handoff_shared_barges` (models only): shared newcomers ignore HANDOFF.
        let handoff = if P::HANDOFF && !token { HANDOFF } else { 0 };
        let shared_handoff = if crate::mutant!("handoff_shared_barges") {
            0
        } else {
            handoff
        };
        loop {
            let (free, new) = match want {
                Want::Exclusive => {
                    let free = old & (LOCK_MASK | handoff) == 0;
                    let clear = if P::HANDOFF && token { HANDOFF } else { 0 };
                    (
                        free,
                        if free {
                            (old + VAL_EXCLUSIVE) & !clear
                        } else {
                            old
                        },
                    )
                }
                Want::Shared | Want::Recursive | Want::Upgradable => {
                    let busy = match want {
                        Want::Shared => VAL_EXCLUSIVE | shared_handoff,
                        Want::Upgradable => VAL_EXCLUSIVE | UPGRADABLE | shared_handoff,
                        // Only an exclusive *holder* excludes a recursive reader: not HANDOFF,
                        // not an upgrader waiting for readers (the count is above zero then).
                        _ if old & SHARED_MASK != 0 => 0,
                        _ => VAL_EXCLUSIVE,
                    };
                    let free = old & busy == 0;
                    if free && old & SHARED_MASK == MAX_SHARED {
                        return Attempt::Overflow;
                    }
                    let add = if want == Want::Upgradable {
                        VAL_SHARED | UPGRADABLE
                    } else {
                        VAL_SHARED
                    };
                    (free, if free { old + add } else { old })
                }
            };
            // The spinning policy does not write a word it cannot take: `old` was read from the
            // word (a load or a failed CAS; the guess of `attempt_lock` is always "free"), and
            // the caller's re-check after queueing reads the word after its own HAS_WAITERS RMW,
            // which coherence orders as that RMW does (layout.rs, "Memory orderings").
            // PostgreSQL's policies keep `LWLockAttemptLock`'s CAS of the unchanged value.
            if P::SPIN && !free {
                instructions(2); // coarse: the test's branch and the return
                return Attempt::MustWait;
            }
            // The tests and the new value between the load (or a failed CAS) and the CAS (coarse:
            // after `attempt_lock`'s guess the test folds to a constant).
            instructions(if want == Want::Exclusive { 5 } else { 8 });
            // Acquire on success: the critical section (if `free`) starts after this CAS.
            match self
                .state
                .compare_exchange_weak(old, new, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) if free => {
                    instructions(3); // the CAS's test, the result and the return
                    return Attempt::Acquired;
                }
                Ok(_) => return Attempt::MustWait,
                Err(now) => old = now,
            }
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn shared_overflow(&self) -> ! {
        panic!(
            "too many shared holders of LWLock {:?} (limit {MAX_SHARED})",
            Tranche::from_id(self.tranche).name()
        )
    }
}
