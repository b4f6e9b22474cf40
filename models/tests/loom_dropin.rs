//! loom models of the atomic LWLock's drop-in capabilities (a variant beyond PostgreSQL, see
//! `lwlock/src/atomic_state/dropin.rs`): an upgrade against readers, a downgrade waking the
//! readers it admits, a timed acquire whose deadline races a wakeup (woken or dequeued, never
//! both, and the wakeup never lost), and the handoff bit of the bounded policy (a writer past the
//! bound is not overtaken by a new reader). Each has a mutant of its own that it must catch.
//!
//! loom has no time: a timed wait there is a yield and then "the deadline passed" (unless the
//! semaphore was posted meanwhile), so the deadline and the bound fire at the first sleep, and
//! every interleaving of that moment with the waker's pass is explored.
#![cfg(loom)]

use lwlock::layout::{HANDOFF, HAS_WAITERS};
use lwlock::sync::{self, Futex, Ordering};
use lwlock::{Mode, Proc, RawAtomicLwLock, RawHandoffLwLock, RawLwLock, RawTaskFairLwLock};
use models::scenarios::{spawn, Shared};
use std::sync::Arc;

/// An upgradable holder upgrades while a reader may be inside: it writes only after the reader
/// left (no race on the protected pair), the last reader's release wakes it, and the reader
/// sees the pair before or after the update, never half of it.
fn upgrade_vs_reader() {
    let s = Shared::<RawAtomicLwLock>::new();
    let r = spawn(&s, |s| s.read());
    s.lock.acquire_upgradable();
    // SAFETY: an upgradable read is a shared hold.
    let before = unsafe { s.data.read(|d| d.0) };
    // SAFETY: held upgradable.
    unsafe { s.lock.upgrade() };
    s.bump();
    // SAFETY: held exclusively after the upgrade.
    unsafe { s.lock.release(Mode::Exclusive) };
    assert!(r.join().unwrap() <= 1);
    assert_eq!(before, 0);
    assert_eq!(s.value(), 1);
    s.assert_quiescent();
}

models::loom_model! {
    /// Upgrade vs. a reader: the upgrader writes only after the reader left, and is woken by it.
    upgrade_vs_readers, threads: 2, bound: Some(5), upgrade_vs_reader
}

/// A writer downgrades while a reader queues behind it; the downgrader then waits, holding its
/// shared unit, until the reader is inside too. Without the downgrade's wake the reader would
/// sleep until the downgrader leaves, which here is never: a deadlock.
fn downgrade_wakes_reader() {
    let s = Shared::<RawAtomicLwLock>::new();
    let inside = Arc::new(Futex::new(0));
    let s2 = s.clone();
    let inside2 = inside.clone();
    s.lock.acquire(Mode::Exclusive);
    let r = sync::thread::spawn(move || {
        s2.lock.acquire(Mode::Shared);
        // SAFETY: held shared.
        let seen = unsafe { s2.data.read(|d| *d) };
        inside2.word.store(1, Ordering::SeqCst);
        inside2.wake_all();
        // SAFETY: held shared.
        unsafe { s2.lock.release(Mode::Shared) };
        seen
    });
    s.bump();
    // SAFETY: held exclusively.
    unsafe { s.lock.downgrade() };
    while inside.word.load(Ordering::SeqCst) == 0 {
        inside.wait(0);
    }
    // SAFETY: held shared after the downgrade.
    unsafe { s.lock.release(Mode::Shared) };
    assert_eq!(
        r.join().unwrap(),
        (1, 1),
        "the reader entered before the writer's update"
    );
    s.assert_quiescent();
}

models::loom_model! {
    /// Downgrade wakes the readers it admits: a queued reader gets in beside the downgrader.
    downgrade_wakes_readers, threads: 2, bound: Some(5), downgrade_wakes_reader
}

/// A timed exclusive acquire against a holder's release: whether the deadline or the wakeup wins,
/// the waiter ends either holding the lock or off the list with no post left on its semaphore
/// (a woken *and* dequeued waiter would leave the waker's post behind).
fn timeout_vs_wakeup() {
    let s = Shared::<RawAtomicLwLock>::new();
    s.lock.acquire(Mode::Exclusive);
    let t = spawn(&s, |s| {
        let got = s.lock.acquire_until(
            Mode::Exclusive,
            sync::deadline_after(std::time::Duration::from_secs(1)),
        );
        if got {
            s.bump();
            // SAFETY: held exclusively.
            unsafe { s.lock.release(Mode::Exclusive) };
        }
        (got, Proc::current().number())
    });
    s.bump();
    // SAFETY: held exclusively.
    unsafe { s.lock.release(Mode::Exclusive) };
    let (got, number) = t.join().unwrap();
    assert_eq!(
        Proc::by_number(number).sem().count(),
        0,
        "a timed-out waiter left a wakeup behind (woken and dequeued)"
    );
    assert_eq!(s.value(), 1 + got as u64);
    assert_eq!(
        s.lock.state() & HAS_WAITERS,
        0,
        "the wait list still looks non-empty"
    );
    s.assert_quiescent();
}

models::loom_model! {
    /// A timeout racing a wakeup: the waiter is woken or dequeued, never both.
    timeout_races_wakeup, threads: 2, bound: Some(5), timeout_vs_wakeup
}

/// Two waiters, one timed: when the release wakes the timed one just as its deadline passes,
/// that wakeup is not lost for the other (it re-enables wakeups and attempts once more).
fn timeout_vs_wakeup3() {
    let s = Shared::<RawAtomicLwLock>::new();
    s.lock.acquire(Mode::Exclusive);
    let a = spawn(&s, |s| {
        let got = s.lock.acquire_until(
            Mode::Exclusive,
            sync::deadline_after(std::time::Duration::from_secs(1)),
        );
        if got {
            s.bump();
            // SAFETY: held exclusively.
            unsafe { s.lock.release(Mode::Exclusive) };
        }
        got
    });
    let b = spawn(&s, |s| s.update());
    s.bump();
    // SAFETY: held exclusively.
    unsafe { s.lock.release(Mode::Exclusive) };
    let got = a.join().unwrap();
    b.join().unwrap();
    assert_eq!(s.value(), 2 + got as u64);
    s.assert_quiescent();
}

models::loom_model! {
    /// A timeout racing a wakeup with a second waiter: the wakeup is never lost.
    timeout_never_loses_wakeup, threads: 3, bound: Some(2), timeout_vs_wakeup3
}

/// The bounded policy: a reader holds the lock, a writer queues and passes its bound (under loom,
/// at its first sleep) and sets HANDOFF; a new reader must not get in before it, and the
/// reader's release must wake it.
fn handoff_writer<L: RawLwLock + HandoffState + 'static>() {
    let s = Shared::<L>::new();
    s.lock.acquire(Mode::Shared);
    let w = spawn(&s, |s| s.update());
    while s.lock.word() & HANDOFF == 0 {
        sync::spin_loop();
    }
    assert!(
        !s.lock.conditional_acquire(Mode::Shared),
        "a new reader overtook a writer past the bound"
    );
    // SAFETY: held shared.
    unsafe { s.lock.release(Mode::Shared) };
    w.join().unwrap();
    assert_eq!(s.read(), 1);
    assert_eq!(
        s.lock.word() & HANDOFF,
        0,
        "the handoff outlived its owner's acquire"
    );
    s.assert_quiescent();
}

/// The state word of the two handoff policies.
trait HandoffState {
    fn word(&self) -> u32;
}
impl HandoffState for RawHandoffLwLock {
    fn word(&self) -> u32 {
        self.state()
    }
}
impl HandoffState for RawTaskFairLwLock {
    fn word(&self) -> u32 {
        self.state()
    }
}

models::loom_model! {
    /// Handoff bit: a writer past the bound is not overtaken by a new reader, and is woken.
    handoff_not_overtaken, threads: 2, bound: Some(3), handoff_writer::<RawHandoffLwLock>
}

models::loom_model! {
    /// Task-fair: a writer takes the handoff as it queues; no new reader overtakes it.
    taskfair_not_overtaken, threads: 2, bound: Some(3), handoff_writer::<RawTaskFairLwLock>
}

#[cfg(lwlock_mutant = "runtime")]
mod mutants {
    use models::mutants::{expect_caught, Failure};
    use std::time::Duration;

    const T: Duration = Duration::from_secs(120);

    /// An upgrade that does not wait for the readers writes while one reads.
    #[test]
    fn mutant_upgrade_no_wait() {
        expect_caught("upgrade_vs_readers", "upgrade_no_wait", Failure::Race, T);
    }

    /// A last reader that does not wake the upgrader leaves it asleep.
    #[test]
    fn mutant_upgrade_no_wake() {
        expect_caught(
            "upgrade_vs_readers",
            "upgrade_no_wake",
            Failure::Deadlock,
            T,
        );
    }

    /// A downgrade that wakes nobody leaves the admitted reader asleep.
    #[test]
    fn mutant_downgrade_no_wake() {
        expect_caught(
            "downgrade_wakes_readers",
            "downgrade_no_wake",
            Failure::Deadlock,
            T,
        );
    }

    /// A timed-out waiter that unlinks itself without asking whether a waker already chose it
    /// is woken and dequeued: the post stays behind.
    #[test]
    fn mutant_timeout_unconditional_dequeue() {
        expect_caught(
            "timeout_races_wakeup",
            "timeout_unconditional_dequeue",
            Failure::Assertion("left a wakeup behind"),
            T,
        );
    }

    /// A late-woken waiter that leaves without re-enabling wakeups strands the other waiter.
    #[test]
    fn mutant_timeout_drop_wake() {
        expect_caught(
            "timeout_never_loses_wakeup",
            "timeout_drop_wake",
            Failure::Deadlock,
            T,
        );
    }

    /// Shared newcomers that ignore HANDOFF overtake the task-fair writer too.
    #[test]
    fn mutant_handoff_shared_barges_taskfair() {
        expect_caught(
            "taskfair_not_overtaken",
            "handoff_shared_barges",
            Failure::Assertion("overtook a writer past the bound"),
            T,
        );
    }

    /// Shared newcomers that ignore HANDOFF overtake the writer past its bound.
    #[test]
    fn mutant_handoff_shared_barges() {
        expect_caught(
            "handoff_not_overtaken",
            "handoff_shared_barges",
            Failure::Assertion("overtook a writer past the bound"),
            T,
        );
    }
}
