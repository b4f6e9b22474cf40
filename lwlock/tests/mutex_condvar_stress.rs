//! 64 threads on `lwlock::Mutex` and `lwlock::Condvar`: a bounded queue (32 producers, 32
//! consumers, `wait_while` on "full" / "empty", `notify_one` and `notify_all` mixed, some waits
//! timed) must deliver every item exactly once with no lost notification (a lost one hangs the
//! test until the watchdog aborts it); then 64 threads mixing `lock`, `try_lock`, `try_lock_for`,
//! `unlock_fair` and `bump` on one counter must count every critical section, with one holder at
//! a time. Also a `ReentrantMutex` re-entered under contention.

mod common;

use lwlock::{Condvar, Mutex, MutexGuard, ReentrantMutex};
use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

const THREADS: usize = 64;
const ITEMS_PER_PRODUCER: u64 = 500;
const CAPACITY: usize = 8;

struct Queue {
    items: Mutex<VecDeque<u64>>,
    not_empty: Condvar,
    not_full: Condvar,
}

#[test]
fn bounded_queue_64_threads_loses_no_notification() {
    let _dog = common::Watchdog::new("mutex_condvar queue", Duration::from_secs(240));
    let q = Arc::new(Queue {
        items: Mutex::new(VecDeque::new()),
        not_empty: Condvar::new(),
        not_full: Condvar::new(),
    });
    let producers = THREADS / 2;
    let total = producers as u64 * ITEMS_PER_PRODUCER;
    let consumed_sum = Arc::new(AtomicU64::new(0));
    let consumed_n = Arc::new(AtomicU64::new(0));
    let start = Arc::new(Barrier::new(THREADS));
    let mut handles = Vec::new();
    for p in 0..producers {
        let (q, start) = (q.clone(), start.clone());
        handles.push(std::thread::spawn(move || {
            start.wait();
            for i in 0..ITEMS_PER_PRODUCER {
                let item = p as u64 * ITEMS_PER_PRODUCER + i + 1;
                let mut g = q.items.lock();
                if i % 7 == 0 {
                    // A timed wait, retried: a timeout must leave the waiter consistent.
                    while g.len() >= CAPACITY {
                        q.not_full.wait_for(&mut g, Duration::from_micros(200));
                    }
                } else {
                    q.not_full.wait_while(&mut g, |v| v.len() >= CAPACITY);
                }
                g.push_back(item);
                drop(g);
                if i % 16 == 0 {
                    q.not_empty.notify_all();
                } else {
                    q.not_empty.notify_one();
                }
            }
        }));
    }
    for c in 0..(THREADS - producers) {
        let (q, start) = (q.clone(), start.clone());
        let (sum, n) = (consumed_sum.clone(), consumed_n.clone());
        handles.push(std::thread::spawn(move || {
            start.wait();
            loop {
                let mut g = q.items.lock();
                q.not_empty
                    .wait_while(&mut g, |v| v.is_empty() && n.load(Ordering::SeqCst) < total);
                let Some(item) = g.pop_front() else {
                    return; // everything consumed
                };
                let done = n.fetch_add(1, Ordering::SeqCst) + 1;
                drop(g);
                sum.fetch_add(item, Ordering::SeqCst);
                q.not_full.notify_one();
                if done == total {
                    // Wake the consumers still waiting for items that will not come.
                    let _g = q.items.lock();
                    q.not_empty.notify_all();
                }
                if c % 8 == 0 {
                    std::thread::yield_now();
                }
            }
        }));
    }
    for h in handles {
        h.join().expect("a queue thread panicked");
    }
    assert_eq!(consumed_n.load(Ordering::SeqCst), total);
    assert_eq!(
        consumed_sum.load(Ordering::SeqCst),
        total * (total + 1) / 2,
        "an item was lost or delivered twice"
    );
    assert!(q.items.lock().is_empty());
    assert_eq!(q.not_empty.waiters() + q.not_full.waiters(), 0);
}

#[test]
fn mixed_mutex_operations_64_threads() {
    let _dog = common::Watchdog::new("mutex mixed ops", Duration::from_secs(240));
    let m = Arc::new(Mutex::new(0u64));
    let inside = Arc::new(AtomicBool::new(false));
    let expected = Arc::new(AtomicU64::new(0));
    let start = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (m, inside, expected, start) =
                (m.clone(), inside.clone(), expected.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                let enter = |g: &mut MutexGuard<'_, u64>| {
                    assert!(!inside.swap(true, Ordering::Relaxed), "two holders at once");
                    **g += 1;
                    expected.fetch_add(1, Ordering::Relaxed);
                    inside.store(false, Ordering::Relaxed);
                };
                for i in 0..400usize {
                    match (t + i) % 5 {
                        0 => enter(&mut m.lock()),
                        1 => {
                            if let Some(mut g) = m.try_lock() {
                                enter(&mut g);
                            }
                        }
                        2 => {
                            if let Some(mut g) = m.try_lock_for(Duration::from_micros(50)) {
                                enter(&mut g);
                            }
                        }
                        3 => {
                            let mut g = m.lock();
                            enter(&mut g);
                            MutexGuard::unlock_fair(g);
                        }
                        _ => {
                            let mut g = m.lock();
                            enter(&mut g);
                            MutexGuard::bump(&mut g);
                            enter(&mut g);
                        }
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a mutex thread panicked");
    }
    assert_eq!(
        *m.lock(),
        expected.load(Ordering::Relaxed),
        "a section was lost"
    );
    assert!(!m.is_locked());
}

#[test]
fn reentrant_mutex_under_contention() {
    let _dog = common::Watchdog::new("reentrant mutex", Duration::from_secs(240));
    let m = Arc::new(ReentrantMutex::new(Cell::new(0u64)));
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let m = m.clone();
            std::thread::spawn(move || {
                for _ in 0..100 {
                    let a = m.lock();
                    let b = m.lock();
                    let v = a.get();
                    b.set(v + 1);
                    drop(b);
                    assert_eq!(a.get(), v + 1);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a reentrant thread panicked");
    }
    assert_eq!(m.lock().get(), THREADS as u64 * 100);
}
