//! loom models of the classic spinlock-protected LWLock (PostgreSQL ≤ 9.4): mutual exclusion with the protected
//! data in loom's `UnsafeCell`, no lost wakeup (a lost wakeup is a loom deadlock, thanks to the
//! futex shim), conditional acquire, acquire-or-wait (the classic lock has no variable).
#![cfg(loom)]

use lwlock::{Mode, RawClassicLwLock as L};
use models::scenarios as sc;

models::loom_model! {
    /// X+X, two sections each: mutual exclusion, no lost update, no lost wakeup, releaseOK reset.
    exclusive_exclusive, threads: 2, bound: Some(4), || sc::exclusive_exclusive::<L>(2, 2)
}

models::loom_model! {
    /// S+X: a reader never sees a half-applied update; the writer is always woken.
    shared_exclusive, threads: 2, bound: Some(4), sc::shared_exclusive::<L>
}

models::loom_model! {
    /// X+S+S: one writer and two readers; no reader or writer is left asleep.
    exclusive_shared_shared, threads: 3, bound: Some(2), sc::exclusive_shared_shared::<L>
}

models::loom_model! {
    /// X+X+X: three writers; the wake-one-writer rule and releaseOK never strand a waiter.
    exclusive3, threads: 3, bound: Some(2), sc::exclusive3::<L>
}

models::loom_model! {
    /// Conditional exclusive acquire: excludes the writer when it succeeds, never queues.
    conditional_exclusive, threads: 2, bound: Some(4), || sc::conditional::<L>(Mode::Exclusive)
}

models::loom_model! {
    /// Conditional shared acquire: sees no half-applied update, never queues.
    conditional_shared, threads: 2, bound: Some(4), || sc::conditional::<L>(Mode::Shared)
}

models::loom_model! {
    /// Acquire-or-wait: the waiter is woken, and "Waited" implies the holder's update is visible.
    acquire_or_wait, threads: 2, bound: Some(4), sc::acquire_or_wait::<L>
}

models::loom_model! {
    /// Acquire-or-wait among two writers: the WAIT_UNTIL_FREE waiter is never stranded.
    acquire_or_wait3, threads: 3, bound: Some(2), sc::acquire_or_wait3::<L>
}

#[cfg(lwlock_mutant = "runtime")]
mod mutants {
    use models::mutants::{expect_caught, Failure};
    use std::time::Duration;

    const T: Duration = Duration::from_secs(120);

    /// A woken waiter that never resets releaseOK inhibits every later wakeup.
    #[test]
    fn mutant_classic_no_release_ok_reset() {
        expect_caught(
            "exclusive_exclusive",
            "classic_no_release_ok_reset",
            Failure::Deadlock,
            T,
        );
    }

    /// Posting before clearing lwWaiting: the waiter takes the post for a foreign one and sleeps.
    #[test]
    fn mutant_classic_post_before_not_waiting() {
        expect_caught(
            "exclusive_exclusive",
            "classic_post_before_not_waiting",
            Failure::Deadlock,
            T,
        );
    }
}
