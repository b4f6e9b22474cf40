//! The wake rules of the two LWLocks, observed from the order in which queued waiters get the lock.
//!
//! With an exclusive holder and the queue `S, X, S`:
//! * 9.4 (classic) wakes the leading run of shared waiters up to the first exclusive one: the
//!   first S alone; then X; then the last S.
//! * 9.5+ (atomic) wakes every shared waiter on the list when the first waiter is shared,
//!   leaving exclusive waiters queued: both S, then X.

mod common;

use lwlock::{Mode, RawAtomicLwLock, RawClassicLwLock, RawLwLock, Tranche, WaitClass};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn sleepers_on(t: Tranche) -> usize {
    lwlock::sample_waits()
        .iter()
        .filter(|s| s.event.class() == Some(WaitClass::LwLock) && s.event.event_name() == t.name())
        .count()
}

/// Queues one waiter per mode behind an exclusive holder, in order, releases, and returns the
/// order (indices into `modes`) in which they got the lock. The first `run` waiters to get it
/// (the ones the rule under test wakes together) hold it until all `run` have it (at most 10 s:
/// a rule that woke fewer then shows in the order, late), so a woken thread that the scheduler
/// runs late still gets in before the lock passes on; every later one releases at once.
fn wake_order<L: RawLwLock + 'static>(
    tranche: &'static str,
    modes: &[Mode],
    run: usize,
) -> Vec<usize> {
    let _dog = common::Watchdog::new("wake_order", Duration::from_secs(60));
    let t = Tranche::register(tranche);
    let l = Arc::new(L::with_tranche(t));
    l.acquire(Mode::Exclusive);
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut handles = Vec::new();
    for (i, &mode) in modes.iter().enumerate() {
        let (l2, o) = (l.clone(), order.clone());
        handles.push(std::thread::spawn(move || {
            l2.acquire(mode);
            let got = {
                let mut v = o.lock().unwrap();
                v.push(i);
                v.len()
            };
            if got <= run {
                let start = Instant::now();
                while o.lock().unwrap().len() < run && start.elapsed() < Duration::from_secs(10) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            // SAFETY: held in `mode`.
            unsafe { l2.release(mode) };
        }));
        let start = Instant::now();
        while sleepers_on(t) < i + 1 {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "waiter {i} never queued"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    // SAFETY: held exclusively.
    unsafe { l.release(Mode::Exclusive) };
    for h in handles {
        h.join().unwrap();
    }
    let order = order.lock().unwrap().clone();
    order
}

#[test]
fn classic_wakes_shared_run_up_to_first_writer() {
    let order = wake_order::<RawClassicLwLock>(
        "WakeOrderClassic",
        &[Mode::Shared, Mode::Exclusive, Mode::Shared],
        1,
    );
    assert_eq!(order, vec![0, 1, 2], "9.4: S alone, then X, then S");
}

#[test]
fn atomic_wakes_every_shared_waiter_past_writers() {
    let order = wake_order::<RawAtomicLwLock>(
        "WakeOrderAtomic",
        &[Mode::Shared, Mode::Exclusive, Mode::Shared],
        2,
    );
    assert_eq!(order.last(), Some(&1), "9.5+: both S before X: {order:?}");
}

#[test]
fn exclusive_waiter_first_is_woken_alone() {
    for order in [
        wake_order::<RawAtomicLwLock>("WakeOrderXFirstA", &[Mode::Exclusive, Mode::Shared], 1),
        wake_order::<RawClassicLwLock>("WakeOrderXFirstC", &[Mode::Exclusive, Mode::Shared], 1),
    ] {
        assert_eq!(order, vec![0, 1]);
    }
}
