//! loom models of the atomic LWLock's drop-in capabilities (a variant beyond PostgreSQL, see
//! `lwlock/src/atomic_state/`: `upgrade.rs`, `contended.rs`, `handoff.rs`): an upgrade against
//! readers, a downgrade waking the readers it admits, a timed acquire whose deadline races a
//! wakeup (woken or dequeued, never both, and the wakeup never lost), and the handoff bit of the
//! bounded policies (a writer past the bound, untimed or timed, is not overtaken by a new
//! reader). Each has a mutant of its own that it must catch.
//!
//! loom has no time: a timed wait there is a yield and then "the deadline passed" (unless the
//! semaphore was posted meanwhile), so the deadline and the bound fire at the first sleep, and
//! every interleaving of that moment with the waker's pass is explored. The timed-writer models
//! (`*_timed_writer_gives_up`) run on the manual model clock instead
//! (`lwlock::sync::model_clock_start`): the bound and the deadline pass only when the holder moves
//! the clock, so "the writer owns the handoff, a reader waits behind it, then the deadline passes"
//! is a sequence the model sets up, and the deadline's moment against the holder's release is a
//! scheduling choice.
#![cfg(loom)]

use lwlock::layout::{HANDOFF, HAS_WAITERS, SHARED_MASK};
use lwlock::sync::{self, Futex, Ordering};
use lwlock::{
    AtomicLwLock, Handoff, Mode, Policy, Proc, RawAtomicLwLock, RawHandoffLwLock, RawLwLock,
    RawTaskFairLwLock, TaskFair,
};
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

/// The manual model clock's timeline for the timed-writer models: a handoff bound is on the
/// real `clock_nanos` timeline (nanoseconds since the process started, far below 2^62), so
/// moving the clock to `BOUND_PASSED` passes it; the writer's deadline comes later still.
const BOUND_PASSED: u64 = 1 << 62;
/// The timed writer's deadline on the manual model clock, where it passes.
const WRITER_DEADLINE: u64 = (1 << 62) + (1 << 61);

/// A timed writer that owns the handoff gives up while a reader waits behind the bit.
///
/// Threads (3): a holder, a timed writer, a reader. The holder's shared hold is taken by the
/// main thread before it spawns anything and released by the holder thread (an LWLock hold is
/// not tied to its thread). The timed writer (`acquire_until` exclusive, deadline
/// `WRITER_DEADLINE`) queues and takes the handoff: under [`Handoff`] once the main thread has
/// moved the model clock past its bound, under [`TaskFair`] as it queues. Once the bit is seen,
/// the main thread spawns the holder and becomes the reader, which can only wait behind the bit
/// (the lock is held shared). The holder moves the clock to the deadline, yields (time passes)
/// and releases, so the writer's time-out races the release, the release's wake pass (which
/// wakes the reader, not a writer that already unlinked itself) and the reader's re-queueing
/// behind a bit that is still up.
///
/// Asserted: every thread finishes (a reader stranded behind a bit nobody owns any more is a
/// loom deadlock); the writer's result is consistent (succeeded: it holds the lock exclusively
/// with no reader inside, and its write races nothing; timed out: nobody holds the lock
/// exclusively, and no post is left on its semaphore); at the end `HANDOFF` and `HAS_WAITERS`
/// are clear and the lock is free.
///
/// Cannot prove: more than one reader or writer behind the bit (a second writer taking the
/// handoff over is not modelled), a deadline that passes before the writer took the handoff
/// (`timeout_races_wakeup` covers a timed writer without it), the real clock's bound (the model
/// clock passes it in one step), interleavings beyond preemption bound 1 (the holder's yield
/// after moving the clock makes the writer's time-out before the release a free switch; bound 2
/// takes minutes here).
fn timed_writer_gives_up<P: Policy>() {
    sync::model_clock_start();
    let s = Shared::<AtomicLwLock<P>>::new();
    // The holder's hold.
    s.lock.acquire(Mode::Shared);
    let w = spawn(&s, |s| {
        let got = s.lock.acquire_until(Mode::Exclusive, WRITER_DEADLINE);
        if got {
            assert!(
                s.lock.is_locked_exclusive() && s.lock.state() & SHARED_MASK == 0,
                "the timed writer returned true without the exclusive lock"
            );
            s.bump();
            // SAFETY: held exclusively.
            unsafe { s.lock.release(Mode::Exclusive) };
        } else {
            assert!(
                !s.lock.is_locked_exclusive(),
                "a timed-out writer holds the lock"
            );
        }
        (got, Proc::current().number())
    });
    // Past the bound (Handoff); then wait until the writer owns the handoff.
    sync::advance_model_clock(BOUND_PASSED);
    while s.lock.state() & HANDOFF == 0 {
        sync::spin_loop();
    }
    let h = spawn(&s, |s| {
        sync::advance_model_clock(WRITER_DEADLINE);
        sync::spin_loop();
        // SAFETY: the shared hold the main thread took for this thread.
        unsafe { s.lock.release(Mode::Shared) };
    });
    // The reader, behind the bit.
    let seen = s.read();
    h.join().unwrap();
    let (got, number) = w.join().unwrap();
    assert!(seen <= got as u64);
    assert_eq!(s.value(), got as u64);
    assert_eq!(
        Proc::by_number(number).sem().count(),
        0,
        "the timed writer left a wakeup behind"
    );
    assert_eq!(
        s.lock.state() & HANDOFF,
        0,
        "HANDOFF set with no owner after the timed writer left"
    );
    assert_eq!(
        s.lock.state() & HAS_WAITERS,
        0,
        "the wait list still looks non-empty"
    );
    s.assert_quiescent();
}

models::loom_model! {
    /// Handoff: a timed writer that owns the handoff and times out strands no reader behind the bit, and holds nothing.
    handoff_timed_writer_gives_up, threads: 3, bound: Some(1), timed_writer_gives_up::<Handoff>
}

models::loom_model! {
    /// Task-fair: a timed writer that took the handoff as it queued and times out strands no reader behind the bit.
    taskfair_timed_writer_gives_up, threads: 3, bound: Some(1), timed_writer_gives_up::<TaskFair>
}

/// The handoff models with a timed writer (`acquire_until`, the drop-in `try_write_for`), on the
/// manual model clock: a timed acquire is the untimed one with a deadline, so the writer must
/// obey the policy's handoff rule as `write()` does. The main thread holds the lock shared; the
/// writer queues; under [`TaskFair`] (`taken_on_queue`) a new reader must already fail the
/// moment the writer is seen queued (the bit is set in the same RMW as `HAS_WAITERS`). The clock
/// stands past the writer's bound from the start, and the writer's deadline is one the clock never
/// reaches (`MODEL_CLOCK_NEVER`: its sleeps after the bound are the untimed ones), so the bound
/// passes at the writer's first sleep (one yield: the model's cost stays that of the untimed
/// model) and the deadline never: the writer must take the handoff, a new reader must fail, and
/// the release must wake the writer, which gets the lock.
///
/// The wait for the bit is bounded (`HANDOFF_WAIT` yields of the main thread; a yield runs the
/// writer to its next scheduling point, and the bit takes it two, plus one per preemption): a
/// writer that never takes the bit fails the model with an assertion rather than a livelock.
///
/// Cannot prove: a deadline that passes while the writer owns the bit
/// (`*_timed_writer_gives_up` do), more than one writer (`adaptive_late_timed_writer_order`
/// has two, under the ordering rule), the bound's length.
fn timed_writer_not_overtaken<P: Policy>(taken_on_queue: bool) {
    sync::model_clock_start();
    // Past the bound from the start: the writer's bound passes at its first sleep (one yield),
    // its deadline never.
    sync::advance_model_clock(BOUND_PASSED);
    let s = Shared::<AtomicLwLock<P>>::new();
    s.lock.acquire(Mode::Shared);
    let w = spawn(&s, |s| {
        let got = s
            .lock
            .acquire_until(Mode::Exclusive, sync::MODEL_CLOCK_NEVER);
        assert!(got, "the timed writer timed out before its deadline");
        s.bump();
        // SAFETY: held exclusively.
        unsafe { s.lock.release(Mode::Exclusive) };
    });
    while s.lock.state() & HAS_WAITERS == 0 {
        sync::spin_loop();
    }
    if taken_on_queue {
        assert!(
            !s.lock.conditional_acquire(Mode::Shared),
            "a new reader overtook a timed writer seen queued"
        );
    }
    wait_for_handoff(&s.lock);
    assert!(
        !s.lock.conditional_acquire(Mode::Shared),
        "a new reader overtook a timed writer past the bound"
    );
    // SAFETY: held shared.
    unsafe { s.lock.release(Mode::Shared) };
    w.join().unwrap();
    assert_eq!(s.read(), 1);
    assert_eq!(
        s.lock.state() & HANDOFF,
        0,
        "the handoff outlived its owner's acquire"
    );
    s.assert_quiescent();
}

/// How many yields the main thread gives a timed writer past its bound to take the handoff.
const HANDOFF_WAIT: u32 = 32;

/// Waits (bounded: `HANDOFF_WAIT` yields) until someone owns the handoff; fails the model if
/// nobody takes it.
fn wait_for_handoff<P: Policy>(lock: &AtomicLwLock<P>) {
    for _ in 0..HANDOFF_WAIT {
        if lock.state() & HANDOFF != 0 {
            return;
        }
        sync::spin_loop();
    }
    assert!(
        lock.state() & HANDOFF != 0,
        "a timed writer past its bound did not take the handoff"
    );
}

models::loom_model! {
    /// Handoff: a timed writer past its bound takes the handoff as `write()` does; no new reader overtakes it.
    handoff_timed_not_overtaken, threads: 2, bound: Some(2), || timed_writer_not_overtaken::<Handoff>(false)
}

models::loom_model! {
    /// Task-fair: a timed writer takes the handoff as it queues, as `write()` does; no new reader overtakes it.
    taskfair_timed_not_overtaken, threads: 2, bound: Some(3), || timed_writer_not_overtaken::<TaskFair>(true)
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

    /// A timed writer that gives up the handoff without waking the readers it held back: a
    /// release that saw the bit woke the reader, which re-queued behind it; nobody wakes it again.
    #[test]
    fn mutant_give_up_no_wake() {
        expect_caught(
            "handoff_timed_writer_gives_up",
            "give_up_no_wake",
            Failure::Deadlock,
            T,
        );
    }

    /// The same under the task-fair policy.
    #[test]
    fn mutant_give_up_no_wake_taskfair() {
        expect_caught(
            "taskfair_timed_writer_gives_up",
            "give_up_no_wake",
            Failure::Deadlock,
            T,
        );
    }

    /// Clearing HANDOFF with a load and a store undoes a concurrent change of the word (here the
    /// wait-list bit of a thread inside the list: two threads then edit the list at once).
    #[test]
    fn mutant_give_up_plain_store() {
        expect_caught(
            "taskfair_timed_writer_gives_up",
            "give_up_plain_store",
            Failure::Race,
            T,
        );
    }

    /// A timed writer that leaves HANDOFF set when it gives up keeps the reader out for good.
    #[test]
    fn mutant_give_up_keeps_handoff() {
        expect_caught(
            "handoff_timed_writer_gives_up",
            "give_up_keeps_handoff",
            Failure::Deadlock,
            T,
        );
    }

    /// A timed writer without the bound (the timed path's own rule, before it was the untimed
    /// one's): it never takes the handoff, and new readers overtake it without limit.
    #[test]
    fn mutant_timed_writer_no_bound() {
        expect_caught(
            "handoff_timed_not_overtaken",
            "timed_writer_no_bound",
            Failure::Assertion("did not take the handoff"),
            T,
        );
    }

    /// A task-fair timed writer that queues without the handoff (taking it only at its zero
    /// bound): a reader gets in while the writer is seen queued.
    #[test]
    fn mutant_timed_writer_queues_plain() {
        expect_caught(
            "taskfair_timed_not_overtaken",
            "timed_writer_queues_plain",
            Failure::Assertion("overtook a timed writer seen queued"),
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
