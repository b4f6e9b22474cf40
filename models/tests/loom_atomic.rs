//! loom models of the atomic-state LWLock (PostgreSQL 9.5+): mutual exclusion with the protected
//! data in loom's `UnsafeCell`, no lost wakeup (a lost wakeup is a loom deadlock, thanks to the
//! futex shim), conditional acquire, acquire-or-wait and WaitForVar/UpdateVar.
#![cfg(loom)]

use lwlock::{Mode, RawAtomicLwLock as L};
use models::scenarios as sc;

// Bounds: every two-thread model of acquire/release/wakeup runs at preemption bound 6, every
// three-thread model at 3. The costliest are `wait_for_var3` (3.7 million executions, about
// 5.5 minutes alone on the 2-core machine: ci/models.sh starts it first, in parallel with the
// rest) and `exclusive_exclusive` (one section against two: 1.2 million executions, 73 s; two
// against two did not finish bound 6 in 5 minutes, so that shape keeps bound 4 as
// `exclusive_exclusive_2x2`). Unbounded, not even the smallest two-thread model
// (`conditional_exclusive`) finished in 5 minutes. See the README's model table for executions
// and seconds.

models::loom_model! {
    /// X+X, one section against two: mutual exclusion, no lost update, no lost wakeup, wakeups re-enabled.
    exclusive_exclusive, threads: 2, bound: Some(6), || sc::exclusive_exclusive::<L>(1, 2)
}

models::loom_model! {
    /// X+X, two sections each (more sections, shallower bound): exclusion, no lost update or wakeup.
    exclusive_exclusive_2x2, threads: 2, bound: Some(4), || sc::exclusive_exclusive::<L>(2, 2)
}

models::loom_model! {
    /// S+X: a reader never sees a half-applied update; the writer is always woken.
    shared_exclusive, threads: 2, bound: Some(6), sc::shared_exclusive::<L>
}

models::loom_model! {
    /// X+S+S: one writer and two readers; no reader or writer is left asleep.
    exclusive_shared_shared, threads: 3, bound: Some(3), sc::exclusive_shared_shared::<L>
}

models::loom_model! {
    /// X+X+X: three writers; the wake-one-writer rule and RELEASE_OK never strand a waiter.
    exclusive3, threads: 3, bound: Some(3), sc::exclusive3::<L>
}

models::loom_model! {
    /// Conditional exclusive acquire: excludes the writer when it succeeds, never queues.
    conditional_exclusive, threads: 2, bound: Some(6), || sc::conditional::<L>(Mode::Exclusive)
}

models::loom_model! {
    /// Conditional shared acquire: sees no half-applied update, never queues.
    conditional_shared, threads: 2, bound: Some(6), || sc::conditional::<L>(Mode::Shared)
}

models::loom_model! {
    /// Acquire-or-wait: the waiter is woken, and "Waited" implies the holder's update is visible.
    acquire_or_wait, threads: 2, bound: Some(6), sc::acquire_or_wait::<L>
}

models::loom_model! {
    /// Acquire-or-wait among two writers: the WAIT_UNTIL_FREE waiter is never stranded.
    acquire_or_wait3, threads: 3, bound: Some(3), sc::acquire_or_wait3::<L>
}

models::loom_model! {
    /// WaitForVar/UpdateVar: the waiter wakes on update or release, and a seen value publishes.
    wait_for_var, threads: 2, bound: Some(6), sc::wait_for_var::<L>
}

models::loom_model! {
    /// WaitForVar with a competing writer: the variable waiter is not lost behind woken writers.
    wait_for_var3, threads: 3, bound: Some(3), sc::wait_for_var3::<L>
}

#[cfg(lwlock_mutant = "runtime")]
mod mutants {
    use models::mutants::{expect_caught, Failure};
    use std::time::Duration;

    const T: Duration = Duration::from_secs(120);

    /// Sleeping without the re-check after queueing loses the wakeup of a release in between.
    #[test]
    fn mutant_atomic_no_recheck() {
        expect_caught(
            "exclusive_exclusive",
            "atomic_no_recheck",
            Failure::Deadlock,
            T,
        );
    }

    /// Queueing without HAS_WAITERS: releasers never wake anyone.
    #[test]
    fn mutant_atomic_no_has_waiters() {
        expect_caught(
            "exclusive_exclusive",
            "atomic_no_has_waiters",
            Failure::Deadlock,
            T,
        );
    }

    /// A Relaxed unlock does not order the next holder after the critical section.
    #[test]
    fn mutant_atomic_relaxed_release() {
        expect_caught(
            "exclusive_exclusive",
            "atomic_relaxed_release",
            Failure::Race,
            T,
        );
    }

    /// A woken waiter that never re-enables RELEASE_OK inhibits every later wakeup.
    #[test]
    fn mutant_atomic_no_release_ok_reset() {
        expect_caught(
            "exclusive_exclusive",
            "atomic_no_release_ok_reset",
            Failure::Deadlock,
            T,
        );
    }

    /// Acquire-or-wait sleeping without the re-check loses the wakeup.
    #[test]
    fn mutant_aow_no_recheck() {
        expect_caught("acquire_or_wait", "aow_no_recheck", Failure::Deadlock, T);
    }

    /// A Relaxed UpdateVar publishes the value without the write it covers.
    #[test]
    fn mutant_var_relaxed_update() {
        expect_caught("wait_for_var", "var_relaxed_update", Failure::Race, T);
    }
}
