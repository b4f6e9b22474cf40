//! loom models of `lwlock::Condvar` over `lwlock::RawMutex` (the atomic LWLock's exclusive path):
//! a notification racing a wait is never lost (a lost one is a loom deadlock: the waiter sleeps on
//! the futex shim forever), the condition is read and written under the mutex (in loom's
//! `UnsafeCell`, so a mutex that failed to order them is a reported race), and every waiter
//! deregisters.
#![cfg(loom)]

use lwlock::sync::thread;
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
