//! loom models of the adaptive policy (`lwlock/src/atomic_state/adaptive_spin.rs`, a variant
//! beyond PostgreSQL): bounded spinning before queueing, a woken waiter that spins again, and the
//! handoff bound taken from its own timed sleep.
//!
//! * mutual exclusion with the protected pair in loom cells, while one side spins;
//! * no lost wakeup with a spinner, a sleeper and a releaser (three threads);
//! * a writer behind a reader takes the handoff as it queues: no new reader gets in, and the
//!   reader's release wakes it;
//! * the bound firing: the writer takes `HANDOFF`, moves in front of a queued reader, is woken by
//!   the release and goes first; the reader is not stranded;
//! * the handoff rule with two writers whose bounds pass behind a holder: the later writer never
//!   takes the bit past the earlier one, and the one left without the bit is woken, not stranded.
//!   (The rule bounds a late writer's wait; loom checks only this order and that nobody is
//!   stranded, not the bound itself, and not a woken late writer re-queueing at the front.)
//!   The same with the later writer timed: a timed acquire obeys the same rule.
//!
//! The empty-yield variant (`EmptyYield`) is modelled with shuttle (`shuttle_locks.rs`,
//! `empty_yield_mixed`): its exit comes after three PAUSE rounds (14 scheduling points), which
//! loom cannot interleave with a holder within any useful bound. Its exit is the same transition
//! as the spin's round limit (return "not acquired", then queue), which the models here reach
//! with limits 0 and 2.
//!
//! Limits. loom has no time: a timed sleep is a yield and then "the bound passed" (unless the
//! semaphore was posted meanwhile), so the bound fires at a waiter's first sleep, and every
//! interleaving of that moment with a waker's pass is explored; how long the bound is is not
//! modelled. The spin phase runs with the model spin limit at 2 rounds (production: 10) in the
//! mutual-exclusion model, which covers "spin, fail, queue" and "spin, win"; more rounds add only
//! more failed probes of the same word. The no-lost-wakeup and late-writers models use limit 0
//! (one probe, then queue), so that a waiter that has finished spinning and sleeps is within their
//! preemption bounds; the two handoff models with one writer keep 2. With 2, the handoff owner's
//! drain spin (`spin_for_readers`: 3 PAUSE rounds, then 2 yields in production) runs its PAUSE
//! rounds only; a yield is one more scheduling point of the same kind, and the shuttle models of
//! the drop-in `RwLock` (no limit) run all five rounds. Preemption bounds are given per model
//! (chosen so that each finishes in well under a minute on a 2-core machine); a bug that needs
//! more preemptions is not excluded.
#![cfg(loom)]

use lwlock::layout::{HANDOFF, HAS_WAITERS};
use lwlock::sync;
use lwlock::{Mode, RawAdaptiveLwLock, RawLwLock};
use models::scenarios::{self, spawn, Shared};

/// The spin rounds the models allow (see the module docs).
const MODEL_SPIN_ROUNDS: u32 = 2;

fn limit_spins() {
    sync::set_model_spin_limit(Some(MODEL_SPIN_ROUNDS));
}

/// One probe of the word, then queue: the spinner-vs-sleeper model needs a waiter that has
/// finished spinning and sleeps when the release comes, which more rounds make harder to reach
/// within the preemption bound.
fn one_probe() {
    sync::set_model_spin_limit(Some(0));
}

/// X+X with the protected pair: one side takes the lock twice, so a release can find the other
/// spinning or asleep; no update is lost, no unordered access to the pair.
fn mutual_exclusion() {
    limit_spins();
    scenarios::exclusive_exclusive::<RawAdaptiveLwLock>(2, 2);
}

models::loom_model! {
    /// Mutual exclusion under spinning: the pair is never written concurrently, nothing is lost.
    adaptive_mutual_exclusion, threads: 2, bound: Some(6), mutual_exclusion
}

/// A holder, a spinner and a sleeper: the main thread holds the lock while two writers arrive;
/// each probes the word once (model spin limit 0) and queues and sleeps, or is still probing when
/// the holder releases. Every writer gets in (a lost wakeup is a loom deadlock).
fn spinner_sleeper_releaser() {
    one_probe();
    let s = Shared::<RawAdaptiveLwLock>::new();
    s.lock.acquire(Mode::Exclusive);
    let a = spawn(&s, |s| s.update());
    let b = spawn(&s, |s| s.update());
    s.bump();
    // SAFETY: held exclusively.
    unsafe { s.lock.release(Mode::Exclusive) };
    a.join().unwrap();
    b.join().unwrap();
    assert_eq!(s.value(), 3, "an update was lost");
    s.assert_quiescent();
}

models::loom_model! {
    /// No lost wakeup: spinner + sleeper + releaser; both writers get the lock.
    adaptive_no_lost_wakeup, threads: 3, bound: Some(2), spinner_sleeper_releaser
}

/// The bound fires: the main thread holds the lock exclusively; a reader queues, then a writer
/// arrives, and its first sleep passes its bound (loom), so it takes `HANDOFF` and moves in front
/// of the reader. The release wakes the writer, which goes first (the reader sees its update);
/// the writer's release wakes the reader, which is not stranded.
fn bound_fires_handoff() {
    limit_spins();
    let s = Shared::<RawAdaptiveLwLock>::new();
    s.lock.acquire(Mode::Exclusive);
    let r = spawn(&s, |s| s.read());
    while s.lock.state() & HAS_WAITERS == 0 {
        sync::spin_loop();
    }
    let w = spawn(&s, |s| s.update());
    while s.lock.state() & HANDOFF == 0 {
        sync::spin_loop();
    }
    s.bump();
    // SAFETY: held exclusively.
    unsafe { s.lock.release(Mode::Exclusive) };
    w.join().unwrap();
    let seen = r.join().unwrap();
    assert_eq!(
        seen, 2,
        "a reader overtook the writer that owned the handoff"
    );
    assert_eq!(s.value(), 2);
    assert_eq!(
        s.lock.state() & HANDOFF,
        0,
        "the handoff outlived its owner's acquire"
    );
    s.assert_quiescent();
}

models::loom_model! {
    /// The bound fires: the writer owning HANDOFF goes first and the reader is not stranded.
    adaptive_bound_handoff, threads: 3, bound: Some(1), bound_fires_handoff
}

/// A writer held off by a reader takes the handoff as it queues: a new reader then stays out,
/// and the reader's release wakes the writer.
fn writer_behind_reader() {
    limit_spins();
    let s = Shared::<RawAdaptiveLwLock>::new();
    s.lock.acquire(Mode::Shared);
    let w = spawn(&s, |s| s.update());
    while s.lock.state() & HANDOFF == 0 {
        sync::spin_loop();
    }
    assert!(
        !s.lock.conditional_acquire(Mode::Shared),
        "a new reader overtook a writer queued behind readers"
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

models::loom_model! {
    /// A writer behind readers owns the handoff from its queueing, and the last reader wakes it.
    adaptive_writer_behind_readers, threads: 2, bound: Some(4), writer_behind_reader
}

/// Two writers whose bounds pass, and a holder: the main thread holds the lock exclusively;
/// writer A queues, then writer B arrives (after A is on the list) and queues behind it. Both
/// bounds pass at their first sleep (loom), in either order; B's must not take the handoff past
/// A (the rule: no handoff ahead of a queued exclusive waiter). The main thread releases once
/// the bit is taken: A goes first, and B, whose bound passed without the bit, is woken by A's
/// release, not stranded.
/// One exclusive section that returns the pair's value after its own update.
fn update_seen(s: &Shared<RawAdaptiveLwLock>) -> u64 {
    s.lock.acquire(Mode::Exclusive);
    s.bump();
    // SAFETY: held exclusively, taken above.
    let (seen, _) = unsafe { s.data.read(|d| *d) };
    // SAFETY: held exclusively, taken above.
    unsafe { s.lock.release(Mode::Exclusive) };
    seen
}

fn late_writers_keep_order() {
    one_probe();
    let s = Shared::<RawAdaptiveLwLock>::new();
    s.lock.acquire(Mode::Exclusive);
    let a = spawn(&s, update_seen);
    while s.lock.state() & HAS_WAITERS == 0 {
        sync::spin_loop();
    }
    let b = spawn(&s, update_seen);
    while s.lock.state() & HANDOFF == 0 {
        sync::spin_loop();
    }
    s.bump();
    // SAFETY: held exclusively.
    unsafe { s.lock.release(Mode::Exclusive) };
    let seen_a = a.join().unwrap();
    let seen_b = b.join().unwrap();
    assert!(
        seen_a < seen_b,
        "a writer whose bound passed later took the handoff past one queued earlier (A saw {seen_a}, B {seen_b})"
    );
    assert_eq!(s.value(), 3);
    s.assert_quiescent();
}

models::loom_model! {
    /// The handoff rule: a later writer's bound never puts it ahead of an earlier queued writer.
    adaptive_late_writers_order, threads: 3, bound: Some(1), late_writers_keep_order
}

/// The late-writers model with writer B timed (`acquire_until`, the drop-in `try_write_for`): a
/// timed acquire runs the untimed one's contended path, so B obeys the ordering rule too. On the
/// manual model clock: the clock stands past both writers' bounds from the start, so each bound
/// passes at its writer's first sleep (one yield), in either order, and B's deadline is one the
/// clock never reaches (`MODEL_CLOCK_NEVER`), so B's later sleeps are the untimed ones (the
/// model's cost stays near the untimed model's). The main thread holds the lock exclusively; A
/// queues (untimed); B arrives after A is on the list; once a writer owns the bit the main thread
/// releases. B must not take the handoff past A: A goes first.
///
/// Cannot prove: a deadline that passes while B waits (the Handoff and TaskFair
/// `*_timed_writer_gives_up` models do, with one writer), the re-queue of a woken late writer at
/// the front.
fn late_timed_writer_keeps_order() {
    sync::model_clock_start();
    // Past every bound from the start: each writer's bound passes at its first sleep (one
    // yield); B's deadline never passes.
    sync::advance_model_clock(BOUND_PASSED);
    one_probe();
    let s = Shared::<RawAdaptiveLwLock>::new();
    s.lock.acquire(Mode::Exclusive);
    let a = spawn(&s, update_seen);
    while s.lock.state() & HAS_WAITERS == 0 {
        sync::spin_loop();
    }
    let b = spawn(&s, |s| {
        assert!(
            s.lock
                .acquire_until(Mode::Exclusive, sync::MODEL_CLOCK_NEVER),
            "the timed writer timed out before its deadline"
        );
        s.bump();
        // SAFETY: held exclusively, taken above.
        let (seen, _) = unsafe { s.data.read(|d| *d) };
        // SAFETY: held exclusively, taken above.
        unsafe { s.lock.release(Mode::Exclusive) };
        seen
    });
    while s.lock.state() & HANDOFF == 0 {
        sync::spin_loop();
    }
    s.bump();
    // SAFETY: held exclusively.
    unsafe { s.lock.release(Mode::Exclusive) };
    let seen_a = a.join().unwrap();
    let seen_b = b.join().unwrap();
    assert!(
        seen_a < seen_b,
        "a timed writer took the handoff past an untimed one queued earlier (A saw {seen_a}, B {seen_b})"
    );
    assert_eq!(s.value(), 3);
    s.assert_quiescent();
}

/// Where the manual model clock stands from the start: past every writer's bound (a bound is
/// `clock_nanos()` at the first queueing plus the policy's bound, far below this), before B's
/// deadline.
const BOUND_PASSED: u64 = 1 << 62;

models::loom_model! {
    /// The handoff rule holds for a timed writer: its bound never puts it ahead of an earlier queued writer.
    adaptive_late_timed_writer_order, threads: 3, bound: Some(1), late_timed_writer_keeps_order
}

#[cfg(lwlock_mutant = "runtime")]
mod mutants {
    use models::mutants::{expect_caught, Failure};
    use std::time::Duration;

    const T: Duration = Duration::from_secs(120);

    /// A spinner that reports a lost CAS race as a win writes the pair beside the holder.
    #[test]
    fn mutant_adaptive_spin_claims_lost_race() {
        expect_caught(
            "adaptive_mutual_exclusion",
            "adaptive_spin_claims_lost_race",
            Failure::Race,
            T,
        );
    }

    /// A spinner that takes the lock by writing a stale word erases what changed since its load
    /// (another writer's hold: two writers inside). The spinning model (two rounds) reaches it.
    #[test]
    fn mutant_adaptive_spin_stale_take() {
        expect_caught(
            "adaptive_mutual_exclusion",
            "adaptive_spin_stale_take",
            Failure::Race,
            T,
        );
    }

    /// A woken waiter that never re-enables wakeups leaves the next sleeper asleep.
    #[test]
    fn mutant_adaptive_no_release_ok_reset() {
        expect_caught(
            "adaptive_no_lost_wakeup",
            "adaptive_no_release_ok_reset",
            Failure::Deadlock,
            T,
        );
    }

    /// A writer that takes the handoff without HAS_WAITERS is not woken by the readers' release.
    #[test]
    fn mutant_adaptive_handoff_without_waiters_bit() {
        expect_caught(
            "adaptive_writer_behind_readers",
            "adaptive_handoff_without_waiters_bit",
            Failure::Deadlock,
            T,
        );
    }

    /// A writer whose bound passes takes the handoff past a writer queued ahead of it: the later
    /// writer goes first.
    #[test]
    fn mutant_adaptive_handoff_past_writer() {
        expect_caught(
            "adaptive_late_writers_order",
            "adaptive_handoff_past_writer",
            Failure::Assertion(
                "a writer whose bound passed later took the handoff past one queued earlier",
            ),
            T,
        );
    }

    /// A timed writer that takes the handoff at its bound without the ordering rule (the
    /// Handoff policy's path, which timed acquires ran before they shared the contended path):
    /// the timed writer, queued later, goes first.
    #[test]
    fn mutant_timed_writer_unordered() {
        expect_caught(
            "adaptive_late_timed_writer_order",
            "timed_writer_unordered",
            Failure::Assertion(
                "a timed writer took the handoff past an untimed one queued earlier",
            ),
            T,
        );
    }

    /// A writer that sets HANDOFF without moving to the front is not the one the release wakes:
    /// the woken reader fails on the bit and queues again, and nobody wakes the writer.
    #[test]
    fn mutant_adaptive_handoff_in_place() {
        expect_caught(
            "adaptive_bound_handoff",
            "adaptive_handoff_in_place",
            Failure::Deadlock,
            T,
        );
    }
}
