//! loom models of `lwlock::Once` (one futex word of the `sync` shim): racing `call_once`
//! callers run the closure exactly once, every caller returns only after it, and sees its write
//! (the write is to loom's `UnsafeCell`, so a return not ordered after the closure is a reported
//! race); a caller that sleeps on the word is woken (a lost wakeup is a loom deadlock); a
//! panicking closure poisons the `Once`, and a forced caller then runs, told of the poison.
//!
//! What the models cannot show: `Once` never spins, so there is no spin bound to explore, but the
//! futex shim wakes every sleeper of a word together (as `FUTEX_WAKE` of all), so the order in
//! which woken callers run again is loom's choice, not the kernel's; and the three-caller model
//! is explored within a preemption bound, not exhaustively.
#![cfg(loom)]

use lwlock::sync::thread;
use lwlock::{Once, OnceState};
use models::Protected;
use std::sync::Arc;

/// A `Once` and the value its closure initializes.
struct Init {
    once: Once,
    /// Written only by the closure; read by every caller after `call_once` returns.
    value: Protected<u32>,
}

impl Init {
    fn new() -> Arc<Self> {
        Arc::new(Init {
            once: Once::new(),
            value: Protected::new(0),
        })
    }

    /// `call_once` with a closure that adds 1 to the value; returns the value seen after it.
    fn call(&self) -> u32 {
        self.once.call_once(|| {
            // SAFETY: the closure runs on one thread at a time (the Once's invariant 1), and no
            // caller reads the value before a closure has returned.
            unsafe { self.value.write(|v| *v += 1) }
        });
        // SAFETY: the closure that returned happens-before this return (the Once's guarantee),
        // and no closure runs after it: no concurrent writer.
        unsafe { self.value.read(|v| *v) }
    }
}

/// `callers` threads (the main one included) call `call_once` at once.
fn racing_callers(callers: usize) {
    let init = Init::new();
    let handles: Vec<_> = (1..callers)
        .map(|_| {
            let init = init.clone();
            thread::spawn(move || init.call())
        })
        .collect();
    let mine = init.call();
    assert_eq!(
        mine, 1,
        "the closure ran other than once, or not before the return"
    );
    for h in handles {
        assert_eq!(
            h.join().unwrap(),
            1,
            "the closure ran other than once, or not before the return"
        );
    }
    assert_eq!(init.once.state(), OnceState::Done);
}

/// A closure that panics (on the spawned thread), racing a `call_once_force` on the main thread:
/// whichever runs first, the forced closure runs exactly once, and if the panicking one ran
/// before it, the forced one is told of the poison. Afterwards the `Once` is done.
fn panic_then_force_body() {
    let init = Init::new();
    let panicked = {
        let init = init.clone();
        thread::spawn(move || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                init.once.call_once(|| panic!("init failed"))
            }))
            .is_err()
        })
    };
    let mut told = None;
    init.once.call_once_force(|s| {
        told = Some(s);
        // SAFETY: the closure runs on one thread at a time; the panicking closure wrote nothing.
        unsafe { init.value.write(|v| *v += 1) }
    });
    // SAFETY: the forced closure returned on this thread; no closure runs after it.
    assert_eq!(unsafe { init.value.read(|v| *v) }, 1);
    let panicked = panicked.join().unwrap();
    // The forced closure always runs (no other closure can return); the panicking one ran iff
    // it got the word first, and then the forced one saw the poison.
    assert_eq!(
        told,
        Some(if panicked {
            OnceState::Poisoned
        } else {
            OnceState::New
        }),
        "the forced closure was told the wrong state"
    );
    assert_eq!(init.once.state(), OnceState::Done);
}

models::loom_model! {
    /// Once: two racing call_once run the closure once; each returns after it and sees its write.
    once_two_callers, threads: 2, bound: None, || racing_callers(2)
}

models::loom_model! {
    /// Once: three racing call_once (two may sleep on the word): closure once, every sleeper woken, write seen.
    once_three_callers, threads: 3, bound: Some(4), || racing_callers(3)
}

models::loom_model! {
    /// Once: a panicking call_once racing call_once_force: the forced closure runs once, told of the poison iff it came after.
    once_panic_then_force, threads: 2, bound: None, panic_then_force_body
}

#[cfg(lwlock_mutant = "runtime")]
mod mutants {
    use models::mutants::{expect_caught, Failure};
    use std::time::Duration;

    const T: Duration = Duration::from_secs(120);

    /// The runner's final swap to DONE with Relaxed instead of Release: a caller that sees DONE
    /// returns without the closure's write ordered before its read.
    #[test]
    fn mutant_once_done_relaxed() {
        expect_caught("once_two_callers", "once_done_relaxed", Failure::Race, T);
    }
}
