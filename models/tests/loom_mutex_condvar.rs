//! loom models of `lwlock::Condvar` over `lwlock::RawMutex` (the atomic LWLock's exclusive path):
//! a notification racing a wait is never lost (a lost one is a loom deadlock: the waiter sleeps on
//! the futex shim forever), the condition is read and written under the mutex (in loom's
//! `UnsafeCell`, so a mutex that failed to order them is a reported race), and every waiter
//! deregisters.
//!
//! The timed models `timed_wait_notified_before_deadline` and
//! `timed_and_untimed_waiters_one_notify` run on the manual model clock
//! (`lwlock::sync::model_clock_start`): a deadline passes only when a model thread moves the
//! clock to it, so a notification can be made to happen-before the timeout, and then
//! parking_lot's `WaitTimeoutResult::timed_out()` contract is asserted (a wait notified before its
//! deadline does not report a timeout). What they cannot show: under the shim a timed wait never
//! sleeps on the futex (it re-checks after a yield), so the futex wake always goes to an untimed
//! sleeper, never to the timed waiter itself; and `wait_for`/`wait_until` (guard API, not built
//! under loom) are covered only through `wait_raw`, which they call with a computed deadline, and
//! `wait_while_for`/`wait_while_until` through `wait_while_raw`, which they call likewise.
//!
//! `wait_while_for_notify_all_two_waiters` and `wait_until_races_notify_one` (also on the model
//! clock) assert the rest of the contract: a timed wait never reports a timeout before its
//! deadline; a notification that happened-before the deadline is never reported as a timeout;
//! a `wait_while` timeout means the condition still holds; `notify_all` wakes every waiter.
#![cfg(loom)]

use lwlock::sync::{thread, AtomicBool, Ordering};
use lwlock::{AtomicLwMutex, Barging, Condvar, Handoff, Policy};
use models::Protected;
use std::sync::Arc;

/// A mutex of policy `P`, a condition variable and the flag they guard.
struct Pair<P: Policy> {
    mutex: AtomicLwMutex<P>,
    cv: Condvar,
    /// The condition: `true` once set. Accessed only with `mutex` held.
    flag: Protected<u32>,
}

impl<P: Policy> Pair<P> {
    fn new() -> Arc<Self> {
        Arc::new(Pair {
            mutex: AtomicLwMutex::new(),
            cv: Condvar::new(),
            flag: Protected::new(0),
        })
    }

    /// Waits under the mutex until the flag reaches `at_least` (a loop: spurious wakeups).
    fn wait_for_flag(&self, at_least: u32) {
        self.mutex.lock();
        // SAFETY: `mutex` is held (taken above, and again after every wait).
        while unsafe { self.flag.read(|f| *f) } < at_least {
            // SAFETY: `mutex` is held by this thread.
            unsafe { self.cv.wait_raw(&self.mutex, None) };
        }
        // SAFETY: held.
        unsafe { self.mutex.unlock() };
    }

    /// Sets the flag under the mutex; notifies after unlocking (the racier order).
    fn set_flag(&self, all: bool) {
        self.mutex.lock();
        // SAFETY: `mutex` is held.
        unsafe { self.flag.write(|f| *f += 1) };
        // SAFETY: held.
        unsafe { self.mutex.unlock() };
        if all {
            self.cv.notify_all();
        } else {
            self.cv.notify_one();
        }
    }

    fn assert_quiescent(&self) {
        assert_eq!(self.cv.waiters(), 0, "a waiter stayed registered");
        assert!(!self.mutex.is_locked(), "mutex left locked");
    }
}

// The two-thread models run on the default mutex's policy (`RawMutex`: `Handoff`). The
// three-thread one runs on `Barging` (`RawBargingMutex`, PostgreSQL's policy): under loom a
// timed sleep returns at once, so the handoff policy's bounded sleep of a queued waiter becomes a
// yield loop, and with three threads some executions exceed loom's branch limit inside the LWLock
// itself. The condition variable's protocol does not depend on the mutex's policy.

/// One waiter, one notifier with `notify_one` after its unlock.
fn notify_one_racing_wait_body() {
    let p = Pair::<Handoff>::new();
    let q = p.clone();
    let t = thread::spawn(move || q.set_flag(false));
    p.wait_for_flag(1);
    t.join().unwrap();
    p.assert_quiescent();
}

/// Two waiters, one notifier with `notify_all`.
fn notify_all_two_waiters_body() {
    let p = Pair::<Barging>::new();
    let a = {
        let p = p.clone();
        thread::spawn(move || p.wait_for_flag(1))
    };
    let b = {
        let p = p.clone();
        thread::spawn(move || p.wait_for_flag(1))
    };
    p.set_flag(true);
    a.join().unwrap();
    b.join().unwrap();
    p.assert_quiescent();
}

/// A timed waiter (under loom a timed wait may time out at any wait) and a notifier: the waiter
/// either sees the flag or times out, and in both cases leaves deregistered with the mutex.
fn timed_wait_racing_notify_body() {
    let p = Pair::<Handoff>::new();
    let q = p.clone();
    let t = thread::spawn(move || q.set_flag(false));
    p.mutex.lock();
    // SAFETY: `mutex` is held.
    if unsafe { p.flag.read(|f| *f) } == 0 {
        // SAFETY: `mutex` is held by this thread.
        unsafe { p.cv.wait_raw(&p.mutex, Some(0)) };
    }
    // SAFETY: `mutex` is held again after the wait.
    let _ = unsafe { p.flag.read(|f| *f) };
    // SAFETY: held.
    unsafe { p.mutex.unlock() };
    t.join().unwrap();
    p.assert_quiescent();
}

/// Waits under the mutex, with `deadline` on the model clock, until the flag reaches
/// `at_least` or the wait times out. Returns whether it waited and whether it timed out.
fn timed_wait_for_flag<P: Policy>(p: &Pair<P>, at_least: u32, deadline: u64) -> (bool, bool) {
    let (mut waited, mut timed_out) = (false, false);
    p.mutex.lock();
    // SAFETY: `mutex` is held (taken above, and again after every wait).
    while unsafe { p.flag.read(|f| *f) } < at_least {
        waited = true;
        // SAFETY: `mutex` is held by this thread.
        timed_out = unsafe { p.cv.wait_raw(&p.mutex, Some(deadline)) };
        if timed_out {
            break;
        }
    }
    // SAFETY: held.
    unsafe { p.mutex.unlock() };
    (waited, timed_out)
}

/// parking_lot's `WaitTimeoutResult::timed_out()` contract on the model clock: a timed waiter
/// (deadline 1) and a notifier that sets the flag, calls `notify_one` and only then moves the
/// clock to the deadline. The notification happened-before the deadline elapsed and found the
/// waiter registered (it tested the flag under the mutex first), so a waiter that waited must
/// report that it was notified, not that it timed out, and the flag is set when it returns.
fn timed_wait_notified_before_deadline_body() {
    lwlock::sync::model_clock_start();
    let p = Pair::<Handoff>::new();
    let q = p.clone();
    let t = thread::spawn(move || {
        q.set_flag(false);
        lwlock::sync::advance_model_clock(1);
    });
    let (_, timed_out) = timed_wait_for_flag(&p, 1, 1);
    assert!(
        !timed_out,
        "a notification before the deadline was reported as a timeout"
    );
    t.join().unwrap();
    p.assert_quiescent();
}

/// No notification is lost to a timeout: a timed waiter (deadline 1), an untimed waiter, and a
/// notifier that sets the flag, calls `notify_one` once and then moves the clock to the
/// deadline. Whichever waiter the futex wake reaches, the untimed one returns (a lost
/// notification is a loom deadlock), and the timed one, if it waited, reports that it was
/// notified (the notification preceded its deadline).
fn timed_and_untimed_waiters_one_notify_body() {
    lwlock::sync::model_clock_start();
    let p = Pair::<Barging>::new();
    let timed = {
        let p = p.clone();
        thread::spawn(move || timed_wait_for_flag(&p, 1, 1))
    };
    let untimed = {
        let p = p.clone();
        thread::spawn(move || p.wait_for_flag(1))
    };
    p.set_flag(false);
    lwlock::sync::advance_model_clock(1);
    untimed.join().unwrap();
    let (_, timed_out) = timed.join().unwrap();
    assert!(
        !timed_out,
        "a notification before the deadline was reported as a timeout"
    );
    p.assert_quiescent();
}

/// `wait_while_for` against `notify_all`, with two waiters, one timed, on the model clock.
///
/// Threads (3): a timed waiter (`wait_while_raw`, as `wait_while_for` calls it, condition "the
/// flag is 0", deadline 1), an untimed waiter (`wait_while_raw` without deadline), and the
/// notifier, which sets the flag under the mutex, then moves the clock to the deadline, then
/// calls `notify_all`: the condition became false before the deadline passed, but the broadcast
/// comes after it, so the timed waiter may see its deadline pass with the sequence word
/// unchanged. Asserted: the untimed waiter returns (a broadcast that misses a sleeper is a loom
/// deadlock) with the flag set; a timed waiter that reports a timeout still sees its condition
/// hold (here never: the flag was set before the deadline), one that does not sees it false; both
/// deregister.
///
/// Bound 2 (2 s here; bound 3 explores 0.9 million executions in about two minutes). Cannot
/// prove: the timed
/// waiter asleep on the futex when the broadcast wakes (under the shim a timed wait re-checks
/// after a yield, it never sleeps there), more waiters, or a notifier that broadcasts before the
/// deadline (`timed_and_untimed_waiters_one_notify` covers that with `notify_one`).
fn wait_while_for_notify_all_two_waiters_body() {
    lwlock::sync::model_clock_start();
    let p = Pair::<Barging>::new();
    let timed = {
        let p = p.clone();
        thread::spawn(move || {
            p.mutex.lock();
            // SAFETY: `mutex` is held, and `wait_while_raw` runs the condition with it held.
            let timed_out = unsafe {
                p.cv.wait_while_raw(&p.mutex, || p.flag.read(|f| *f) == 0, Some(1))
            };
            // SAFETY: held again after the wait.
            let flag = unsafe { p.flag.read(|f| *f) };
            // SAFETY: held.
            unsafe { p.mutex.unlock() };
            (timed_out, flag)
        })
    };
    let untimed = {
        let p = p.clone();
        thread::spawn(move || {
            p.mutex.lock();
            // SAFETY: as above.
            let timed_out = unsafe {
                p.cv.wait_while_raw(&p.mutex, || p.flag.read(|f| *f) == 0, None)
            };
            // SAFETY: held again after the wait.
            let flag = unsafe { p.flag.read(|f| *f) };
            // SAFETY: held.
            unsafe { p.mutex.unlock() };
            (timed_out, flag)
        })
    };
    p.mutex.lock();
    // SAFETY: `mutex` is held.
    unsafe { p.flag.write(|f| *f = 1) };
    // SAFETY: held.
    unsafe { p.mutex.unlock() };
    lwlock::sync::advance_model_clock(1);
    p.cv.notify_all();
    assert_eq!(
        untimed.join().unwrap(),
        (false, 1),
        "the untimed waiter returned before the condition became false"
    );
    let (timed_out, flag) = timed.join().unwrap();
    assert!(
        !timed_out || flag == 0,
        "wait_while_for reported a timeout with its condition no longer holding"
    );
    assert!(timed_out || flag == 1);
    p.assert_quiescent();
}

/// `wait_until` against `notify_one`, with the deadline and the notification racing.
///
/// Threads (3): a timed waiter (one `wait_raw` with deadline 1, as `wait_until` and `wait_for`
/// call it, if the flag is 0 under the mutex), the notifier (sets the flag under the mutex,
/// `notify_one`, then publishes "notified"), and a clock thread, which records whether it saw
/// "notified" (then the notification happened-before the deadline) and "passed", then moves the
/// clock to the deadline. Whether the notification or the deadline comes first is a scheduling
/// choice. Asserted (parking_lot's `timed_out()`: the timeout is known to have elapsed): a wait
/// that reports a timeout does so only after the deadline passed, and never when the
/// notification happened-before the deadline; the waiter deregisters.
///
/// Bound 3 (2 s here; bound 4 takes about 35 s). Cannot prove: a notification concurrent with the
/// deadline (neither before the other)
/// may be reported either way, and the model accepts both; nor that `notify_one`'s futex wake
/// reaches a timed sleeper (under the shim it never sleeps on the futex).
fn wait_until_races_notify_one_body() {
    lwlock::sync::model_clock_start();
    let p = Pair::<Barging>::new();
    let notified = Arc::new(AtomicBool::new(false));
    let before = Arc::new(AtomicBool::new(false));
    let passed = Arc::new(AtomicBool::new(false));
    let waiter = {
        let (p, before, passed) = (p.clone(), before.clone(), passed.clone());
        thread::spawn(move || {
            let mut timed_out = false;
            p.mutex.lock();
            // SAFETY: `mutex` is held.
            if unsafe { p.flag.read(|f| *f) } == 0 {
                // SAFETY: `mutex` is held by this thread.
                timed_out = unsafe { p.cv.wait_raw(&p.mutex, Some(1)) };
            }
            // SAFETY: held.
            unsafe { p.mutex.unlock() };
            if timed_out {
                // Relaxed: the timeout's read of the clock (Acquire) saw the clock thread's
                // Release store, which follows these two.
                assert!(
                    passed.load(Ordering::Relaxed),
                    "a timed wait reported a timeout before its deadline"
                );
                assert!(
                    !before.load(Ordering::Relaxed),
                    "a notification before the deadline was reported as a timeout"
                );
            }
        })
    };
    let clock = {
        let (notified, before, passed) = (notified.clone(), before.clone(), passed.clone());
        thread::spawn(move || {
            // Acquire: pairs with the notifier's Release store after its notify_one.
            before.store(notified.load(Ordering::Acquire), Ordering::Relaxed);
            passed.store(true, Ordering::Relaxed);
            lwlock::sync::advance_model_clock(1);
        })
    };
    p.set_flag(false);
    notified.store(true, Ordering::Release);
    waiter.join().unwrap();
    clock.join().unwrap();
    p.assert_quiescent();
}

models::loom_model! {
    /// Condvar: notify_one after the notifier's unlock, racing the wait: never lost; the flag is mutex-ordered.
    notify_one_racing_wait, threads: 2, bound: Some(5), notify_one_racing_wait_body
}

models::loom_model! {
    /// Condvar: notify_all wakes both of two waiters, whichever point of `wait` each is at.
    notify_all_two_waiters, threads: 3, bound: Some(2), notify_all_two_waiters_body
}

models::loom_model! {
    /// Condvar: a timed wait racing a notify ends woken or timed out, deregistered, holding the mutex.
    timed_wait_racing_notify, threads: 2, bound: Some(3), timed_wait_racing_notify_body
}

models::loom_model! {
    /// Condvar: a notify_one before the deadline (model clock) is reported as a wakeup, never as a timeout.
    timed_wait_notified_before_deadline, threads: 2, bound: Some(5), timed_wait_notified_before_deadline_body
}

models::loom_model! {
    /// Condvar: one notify_one before the deadline with a timed and an untimed waiter: neither loses it.
    timed_and_untimed_waiters_one_notify, threads: 3, bound: Some(2), timed_and_untimed_waiters_one_notify_body
}

models::loom_model! {
    /// Condvar: wait_while_for and notify_all, two waiters, one timed: both wake; a timeout means the condition still holds.
    wait_while_for_notify_all_two_waiters, threads: 3, bound: Some(2), wait_while_for_notify_all_two_waiters_body
}

models::loom_model! {
    /// Condvar: wait_until racing notify_one and the deadline: no timeout before the deadline, none after a notification that preceded it.
    wait_until_races_notify_one, threads: 3, bound: Some(3), wait_until_races_notify_one_body
}

#[cfg(lwlock_mutant = "runtime")]
mod mutants {
    use models::mutants::{expect_caught, Failure};
    use std::time::Duration;

    const T: Duration = Duration::from_secs(120);

    /// A notify that wakes without changing the sequence word: a waiter between its read of the
    /// word and its sleep sleeps through it.
    #[test]
    fn mutant_condvar_no_seq_bump() {
        expect_caught(
            "notify_one_racing_wait",
            "condvar_no_seq_bump",
            Failure::Deadlock,
            T,
        );
    }

    /// A waiter that registers after unlocking the mutex: a notify in between finds no waiter.
    #[test]
    fn mutant_condvar_late_register() {
        expect_caught(
            "notify_one_racing_wait",
            "condvar_late_register",
            Failure::Deadlock,
            T,
        );
    }

    /// A broadcast that wakes only one sleeper leaves the other waiter asleep.
    #[test]
    fn mutant_condvar_notify_all_wakes_one() {
        expect_caught(
            "notify_all_two_waiters",
            "condvar_notify_all_wakes_one",
            Failure::Deadlock,
            T,
        );
    }

    /// A timed wait that reports the futex's timeout as is: a notification that changed the
    /// sequence word before the deadline reads as a timeout.
    #[test]
    fn mutant_condvar_deadline_race_timed_out() {
        expect_caught(
            "timed_wait_notified_before_deadline",
            "condvar_deadline_race_timed_out",
            Failure::Assertion("a notification before the deadline was reported as a timeout"),
            T,
        );
    }

    /// A `wait_while` that reports the timed-out wait without checking the condition again: a
    /// condition made false before the deadline (its notification after it) reads as a timeout.
    #[test]
    fn mutant_condvar_while_timeout_no_recheck() {
        expect_caught(
            "wait_while_for_notify_all_two_waiters",
            "condvar_while_timeout_no_recheck",
            Failure::Assertion("reported a timeout with its condition no longer holding"),
            T,
        );
    }

    /// A broadcast that wakes the sleepers before it changes the sequence word: a waiter between
    /// its check of the word and its sleep sleeps through it.
    #[test]
    fn mutant_condvar_notify_all_wake_before_bump() {
        expect_caught(
            "wait_while_for_notify_all_two_waiters",
            "condvar_notify_all_wake_before_bump",
            Failure::Deadlock,
            T,
        );
    }

    /// A timed wait that re-arms on the word's current value after an early return absorbs a
    /// notification that came before the deadline and reports a timeout.
    #[test]
    fn mutant_condvar_timed_rearm_loses_notify() {
        expect_caught(
            "wait_until_races_notify_one",
            "condvar_timed_rearm_loses_notify",
            Failure::Assertion("a notification before the deadline was reported as a timeout"),
            T,
        );
    }

    /// A timed wait that takes an early futex return for its timeout reports it before the
    /// deadline.
    #[test]
    fn mutant_condvar_timed_early_timeout() {
        expect_caught(
            "wait_until_races_notify_one",
            "condvar_timed_early_timeout",
            Failure::Assertion("reported a timeout before its deadline"),
            T,
        );
    }

    /// A timed-out waiter that stays counted: the quiescence check sees it.
    #[test]
    fn mutant_condvar_timeout_stays_registered() {
        expect_caught(
            "timed_wait_racing_notify",
            "condvar_timeout_stays_registered",
            Failure::Assertion("a waiter stayed registered"),
            T,
        );
    }
}
