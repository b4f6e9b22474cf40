//! `Once`: one-time initialization with parking_lot's API and poisoning semantics, on one futex
//! word of the `sync` shim (so that the same code runs under loom, shuttle and lwsim). A variant
//! beyond PostgreSQL, which initializes shared state once at postmaster start
//! (`CreateSharedMemoryAndSemaphores`, the `ShmemInitStruct` "found" flag under
//! `ShmemIndexLock`) and has no per-object once.
//!
//! # State
//! One 32-bit futex word:
//! ```text
//! bit 0  DONE     a closure returned; the word is then exactly DONE and never changes again
//! bit 1  POISON   the last closure to run panicked (cleared when the next one starts)
//! bit 2  RUNNING  a thread is running a closure
//! bit 3  WAITERS  a thread sleeps (or is about to) on the word, waiting for RUNNING to end
//! ```
//!
//! # Protocol
//! * `call_once(f)` / `call_once_force(f)`: if the word is `DONE`, return. Otherwise loop: on
//!   `DONE` return; on `POISON` without force, panic; if `RUNNING` is clear, CAS it set (clearing
//!   `POISON`) and run `f`; if it is set, CAS `WAITERS` set and sleep on the futex while the word
//!   is still `RUNNING | WAITERS`, then look again.
//! * The runner ends by swapping the word to `DONE` (the closure returned) or to `POISON` (it
//!   unwound: a drop guard does it), and, if the old word had `WAITERS`, waking every sleeper.
//!   Woken threads return (`DONE`), panic (`POISON`, not forced), or one of them runs its own
//!   closure (`POISON`, forced).
//!
//! # Invariants
//! 1. At most one thread runs a closure at a time: `RUNNING` is set only by a CAS from a word
//!    without it, and cleared only by its setter's final swap.
//! 2. `DONE` is final: it is written only by the final swap, and no transition starts from it.
//!    So a closure returns at most once per `Once` (a second runner would need `RUNNING` clear
//!    without `DONE`, which only a panic leaves).
//! 3. No sleeper is left asleep: a thread sleeps only while the word is `RUNNING | WAITERS`, and
//!    the final swap clears both and wakes when `WAITERS` was set. The sleeper's CAS that set
//!    `WAITERS` and the runner's swap are RMWs of one word: if the swap comes first in its
//!    modification order, the CAS fails (the word changed) and the thread looks again; if the
//!    CAS comes first, the swap returns `WAITERS` and wakes. A sleeper that set nothing itself
//!    (another set `WAITERS`) sleeps only while the word still has it, so the same wake reaches
//!    it; the futex compares and sleeps atomically with respect to wakes.
//!
//! # Orderings
//! * The `DONE` loads (fast path and slow loop), the failure loads of the CASes and [`Once::state`]
//!   are **Acquire**, pairing with the runner's **Release** swap: a thread that sees `DONE` sees
//!   every write of the closure (parking_lot's guarantee: the closure happens-before every
//!   `call_once` return). The same pairing with a poisoning swap lets a forced retry see what the
//!   panicked closure wrote.
//! * The CAS that takes `RUNNING` is **Acquire** on success for the same reason (a retry after a
//!   panic reads the panicked closure's writes).
//! * The CAS that sets `WAITERS` is **Relaxed** on success: it publishes nothing; what the waiter
//!   learns afterwards it learns from an Acquire load of the word.
//!
//! # Differences from parking_lot
//! 4 bytes instead of 1 (a futex word is 32 bits), and no spinning: a thread that finds a closure
//! running sleeps at once (initializers are expected to run long compared with a futex round
//! trip). A `call_once` inside its own closure on the same `Once` deadlocks, as parking_lot's.

use crate::sync::{Futex, Ordering};
use std::fmt;

/// Bit 0: a closure returned (the word is then exactly `DONE`).
const DONE: u32 = 1;
/// Bit 1: the last closure panicked.
const POISON: u32 = 2;
/// Bit 2: a thread is running a closure.
const RUNNING: u32 = 4;
/// Bit 3: a thread sleeps on the word.
const WAITERS: u32 = 8;

/// The state of a [`Once`] (parking_lot's `OnceState`).
#[derive(Copy, Clone, Eq, PartialEq, Debug)]
pub enum OnceState {
    /// No closure has run yet.
    New,
    /// A closure ran and panicked.
    Poisoned,
    /// A thread is running a closure.
    InProgress,
    /// A closure returned.
    Done,
}

impl OnceState {
    /// Whether a closure of the [`Once`] panicked (and none has returned since): what
    /// `call_once_force`'s closure is told.
    #[inline]
    pub fn poisoned(self) -> bool {
        matches!(self, OnceState::Poisoned)
    }

    /// Whether a closure of the [`Once`] returned.
    #[inline]
    pub fn done(self) -> bool {
        matches!(self, OnceState::Done)
    }
}

/// One-time initialization (parking_lot's `Once`): `call_once` runs its closure if no closure of
/// this `Once` has returned yet, and otherwise does nothing; a caller that finds a closure running
/// waits for it. Every write of the closure that returned happens-before every `call_once`
/// return. `const`-constructible; 4 bytes (module docs: the word and its protocol).
///
/// **Poisoning** (as parking_lot documents it): a closure that panics poisons the `Once`; every
/// later `call_once` panics (and so does a `call_once` that was waiting for the closure that
/// panicked); `call_once_force` ignores the poison, runs its closure with a [`OnceState`] whose
/// `poisoned()` is true, and, if that closure returns, the `Once` is done.
///
/// ```
/// use lwlock::Once;
/// static INIT: Once = Once::new();
/// let mut runs = 0;
/// INIT.call_once(|| runs += 1);
/// INIT.call_once(|| runs += 1);
/// assert_eq!(runs, 1);
/// assert!(INIT.state().done());
/// ```
pub struct Once {
    word: Futex,
}

impl Once {
    /// A `Once` no closure has run on.
    #[cfg(not(loom))]
    #[inline]
    pub const fn new() -> Once {
        Once {
            word: Futex::new(0),
        }
    }

    /// A `Once` no closure has run on (not `const` under loom, whose atomics are not).
    #[cfg(loom)]
    #[allow(clippy::new_without_default)] // `Default` exists outside loom only
    pub fn new() -> Once {
        Once {
            word: Futex::new(0),
        }
    }

    /// The current state (an Acquire load: `Done` here means the closure's writes are visible).
    #[inline]
    pub fn state(&self) -> OnceState {
        let state = self.word.word.load(Ordering::Acquire);
        if state & DONE != 0 {
            OnceState::Done
        } else if state & RUNNING != 0 {
            OnceState::InProgress
        } else if state & POISON != 0 {
            OnceState::Poisoned
        } else {
            OnceState::New
        }
    }

    /// Runs `f` if no closure of this `Once` has returned, waiting for one that is running;
    /// returns once some closure has returned (not necessarily `f`), with its writes visible.
    ///
    /// # Panics
    /// If the `Once` is poisoned (a closure panicked and none returned since), or becomes
    /// poisoned while this call waits; and with `f`'s panic, which poisons it.
    #[inline]
    pub fn call_once<F: FnOnce()>(&self, f: F) {
        // Acquire: pairs with the runner's Release swap to DONE (module docs).
        if self.word.word.load(Ordering::Acquire) == DONE {
            return;
        }
        let mut f = Some(f);
        self.call_once_slow(false, &mut |_| {
            if let Some(f) = f.take() {
                f()
            }
        });
    }

    /// Like [`call_once`](Self::call_once), but a poisoned `Once` runs `f` too, telling it the
    /// state ([`OnceState::poisoned`]); if `f` returns, the `Once` is done.
    #[inline]
    pub fn call_once_force<F: FnOnce(OnceState)>(&self, f: F) {
        // Acquire: as in `call_once`.
        if self.word.word.load(Ordering::Acquire) == DONE {
            return;
        }
        let mut f = Some(f);
        self.call_once_slow(true, &mut |state| {
            if let Some(f) = f.take() {
                f(state)
            }
        });
    }

    /// The slow path: wait for a running closure or run `f` (not generic, as parking_lot's: one
    /// copy for every closure type).
    #[cold]
    fn call_once_slow(&self, force: bool, f: &mut dyn FnMut(OnceState)) {
        let word = &self.word.word;
        // Acquire (here and in the CAS failures below): a DONE or POISON seen carries the
        // closure's writes (module docs).
        let mut state = word.load(Ordering::Acquire);
        loop {
            if state & DONE != 0 {
                return;
            }
            if state & POISON != 0 && !force {
                panic!("Once instance has previously been poisoned");
            }
            if state & RUNNING == 0 {
                // Acquire: a retry after a panic reads what the panicked closure wrote.
                match word.compare_exchange(
                    state,
                    (state | RUNNING) & !POISON,
                    Ordering::Acquire,
                    Ordering::Acquire,
                ) {
                    Ok(_) => break,
                    Err(now) => {
                        state = now;
                        continue;
                    }
                }
            }
            if state & WAITERS == 0 {
                // Relaxed on success: publishes nothing (invariant 3 needs only that it is an RMW).
                if let Err(now) = word.compare_exchange(
                    state,
                    state | WAITERS,
                    Ordering::Relaxed,
                    Ordering::Acquire,
                ) {
                    state = now;
                    continue;
                }
            }
            // Sleeps only while the word is still RUNNING | WAITERS (invariant 3).
            self.word.wait(RUNNING | WAITERS);
            state = word.load(Ordering::Acquire);
        }

        /// Poisons the `Once` if the closure unwinds.
        struct PoisonOnUnwind<'a>(&'a Once);
        impl Drop for PoisonOnUnwind<'_> {
            fn drop(&mut self) {
                self.0.finish(POISON);
            }
        }

        let guard = PoisonOnUnwind(self);
        f(if state & POISON != 0 {
            OnceState::Poisoned
        } else {
            OnceState::New
        });
        std::mem::forget(guard);
        self.finish(DONE);
    }

    /// The runner's end: the word becomes `to` (`DONE` or `POISON`), and sleepers are woken.
    fn finish(&self, to: u32) {
        // Release: publishes the closure's writes to every Acquire load that sees `to`.
        let order = if crate::mutant!("once_done_relaxed") {
            Ordering::Relaxed
        } else {
            Ordering::Release
        };
        let old = self.word.word.swap(to, order);
        if old & WAITERS != 0 {
            self.word.wake_all();
        }
    }
}

#[cfg(not(loom))]
impl Default for Once {
    #[inline]
    fn default() -> Once {
        Once::new()
    }
}

impl fmt::Debug for Once {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Once")
            .field("state", &self.state())
            .finish()
    }
}

#[cfg(all(test, not(any(loom, shuttle, lwsim))))]
mod tests {
    use super::*;

    #[test]
    fn states_and_debug() {
        let o = Once::new();
        assert_eq!(o.state(), OnceState::New);
        assert_eq!(format!("{o:?}"), "Once { state: New }");
        o.call_once(|| assert_eq!(o.state(), OnceState::InProgress));
        assert_eq!(o.state(), OnceState::Done);
        assert_eq!(
            o.word.word.load(Ordering::Relaxed),
            DONE,
            "DONE is the whole word"
        );
        assert_eq!(std::mem::size_of::<Once>(), 4);
    }
}
