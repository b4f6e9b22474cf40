//! A panic in a `Condvar::wait_while` condition: it runs with the mutex held and the waiter not
//! registered, so the panic unwinds through the guard (which releases the mutex) and leaves
//! neither the mutex held nor a waiter counted. The mutex and the condition variable stay usable.

#![cfg(not(loom))]

mod common;

use lwlock::{Condvar, Mutex};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn a_panicking_condition_leaves_mutex_and_condvar_usable() {
    let _dog = common::Watchdog::new("condvar unwind", Duration::from_secs(60));
    let pair = Arc::new((Mutex::new(0u32), Condvar::new()));
    let notifier = {
        let pair = pair.clone();
        std::thread::spawn(move || {
            // Wake the waiter once it sleeps: it is counted as waiting until it wakes.
            while !pair.1.notify_one() {
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };
    let r = catch_unwind(AssertUnwindSafe(|| {
        let mut g = pair.0.lock();
        let mut calls = 0;
        pair.1.wait_while(&mut g, |_| {
            calls += 1;
            // First check: keep waiting; the check after the wakeup panics.
            assert!(calls < 2, "condition panicked on purpose");
            true
        });
    }));
    notifier.join().unwrap();
    assert!(r.is_err(), "the condition's panic reached the caller");
    assert!(
        !pair.0.is_locked(),
        "the unwinding guard released the mutex"
    );
    assert!(!pair.1.notify_one(), "no waiter is left counted");
    // Both still work.
    *pair.0.lock() += 1;
    let mut g = pair.0.lock();
    let res = pair.1.wait_for(&mut g, Duration::from_millis(1));
    assert!(res.timed_out());
    assert_eq!(*g, 1);
}

/// The same after a timeout: `wait_while_for` checks the condition once more after a timed-out
/// wait (with the mutex held again and the waiter no longer counted), and a panic in that check
/// unwinds through the guard, leaving the mutex free and no waiter counted.
#[test]
fn a_condition_panicking_in_the_recheck_after_a_timeout_leaves_both_usable() {
    let _dog = common::Watchdog::new("condvar unwind after timeout", Duration::from_secs(60));
    let pair = (Mutex::new(0u32), Condvar::new());
    let mut calls = 0;
    let r = catch_unwind(AssertUnwindSafe(|| {
        let mut g = pair.0.lock();
        pair.1.wait_while_for(
            &mut g,
            |_| {
                calls += 1;
                // First check: keep waiting; the re-check after the timeout panics.
                assert!(calls < 2, "condition panicked on purpose");
                true
            },
            Duration::from_millis(2),
        );
    }));
    assert!(r.is_err(), "the re-check's panic reached the caller");
    assert!(
        calls >= 2,
        "the condition was checked again after the timeout"
    );
    assert!(
        !pair.0.is_locked(),
        "the unwinding guard released the mutex"
    );
    assert!(!pair.1.notify_one(), "no waiter is left counted");
    *pair.0.lock() += 1;
    let mut g = pair.0.lock();
    assert!(pair
        .1
        .wait_for(&mut g, Duration::from_millis(1))
        .timed_out());
    assert_eq!(*g, 1);
}
