//! loom models of the TAS spinlock (`s_lock`): mutual exclusion with its Acquire TAS / Release
//! unlock, and progress of the spinning waiters (every spin yields to the model).
#![cfg(loom)]

use lwlock::sync::thread;
use lwlock::{SpinLock, Tranche};
use models::Protected;
use std::sync::Arc;

struct Shared {
    lock: SpinLock,
    data: Protected<u64>,
}

fn critical(s: &Shared) {
    s.lock.lock(Tranche::DEFAULT);
    // SAFETY: the spinlock is held.
    unsafe { s.data.write(|d| *d += 1) };
    // SAFETY: taken above by this thread.
    unsafe { s.lock.unlock() };
}

fn spinners(threads: usize) {
    let s = Arc::new(Shared {
        lock: SpinLock::new(),
        data: Protected::new(0),
    });
    let handles: Vec<_> = (1..threads)
        .map(|_| {
            let s = s.clone();
            thread::spawn(move || critical(&s))
        })
        .collect();
    critical(&s);
    for h in handles {
        h.join().unwrap();
    }
    // SAFETY: every other thread was joined.
    assert_eq!(
        unsafe { s.data.read(|d| *d) },
        threads as u64,
        "an update was lost"
    );
    assert!(!s.lock.is_locked());
}

models::loom_model! {
    /// Two threads: the TAS spinlock excludes and orders critical sections; spinners progress.
    spin_mutex2, threads: 2, bound: None, || spinners(2)
}

models::loom_model! {
    /// Three threads: mutual exclusion, ordering and progress with two spinning waiters.
    spin_mutex3, threads: 3, bound: Some(3), || spinners(3)
}

#[cfg(lwlock_mutant = "runtime")]
mod mutants {
    use models::mutants::{expect_caught, Failure};
    use std::time::Duration;

    /// A Relaxed TAS does not order the critical section: a data race.
    #[test]
    fn mutant_spin_relaxed_tas() {
        expect_caught(
            "spin_mutex2",
            "spin_relaxed_tas",
            Failure::Race,
            Duration::from_secs(120),
        );
    }
}
