//! loom models of the TAS spinlock (`s_lock`): mutual exclusion with its Acquire TAS / Release
//! unlock, and progress of the spinning waiters (every spin yields to the model); and of the
//! shared `spins_per_delay` estimate the spin delay adapts, which exiting threads fold into.
#![cfg(loom)]

use lwlock::proc::fold_spins_per_delay;
use lwlock::sync::{thread, AtomicU32, Ordering};
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
    let total = unsafe { s.data.read(|d| *d) };
    assert_eq!(total, threads as u64, "an update was lost");
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

/// The shared estimate and the two threads' own estimates of [`spins_fold2`]. Chosen so that the
/// two sequential results (1606: `a` first, 1593: `b` first) differ from each other and from
/// the two results of a lost update (1500: only `a` counted, 1700: only `b`).
const FOLD_SHARED: u32 = 1600;
const FOLD_LOCAL: [u32; 2] = [0, 3200];

/// `(shared * 15 + local) / 16`, the fold done by one thread alone.
fn folded(shared: u32, local: u32) -> u32 {
    (shared * 15 + local) / 16
}

/// Two threads exit at once and fold their estimates into the shared one (`ProcKill`'s
/// `set_spins_per_delay`): the result is one of the two sequential results. Before the fix the
/// fold was a load then a store, and the second store could overwrite the first fold.
fn fold2() {
    let shared = Arc::new(AtomicU32::new(FOLD_SHARED));
    let s = shared.clone();
    let t = thread::spawn(move || fold_spins_per_delay(&s, FOLD_LOCAL[1]));
    fold_spins_per_delay(&shared, FOLD_LOCAL[0]);
    t.join().unwrap();
    let [a, b] = FOLD_LOCAL;
    let a_first = folded(folded(FOLD_SHARED, a), b);
    let b_first = folded(folded(FOLD_SHARED, b), a);
    let got = shared.load(Ordering::Relaxed);
    assert!(
        got == a_first || got == b_first,
        "a concurrent spins_per_delay fold was lost: got {got}, expected {a_first} or {b_first}"
    );
}

models::loom_model! {
    /// Two concurrent `spins_per_delay` folds: both count (one RMW), the result is a sequential one.
    spins_fold2, threads: 2, bound: None, fold2
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

    /// A Relaxed unlock (the shipped `S_UNLOCK` statement, which loom runs through the same
    /// ordering as an RMW) does not order the next critical section: a data race.
    #[test]
    fn mutant_spin_relaxed_unlock() {
        expect_caught(
            "spin_mutex2",
            "spin_relaxed_unlock",
            Failure::Race,
            Duration::from_secs(120),
        );
    }

    /// A fold done as a load then a store loses one of two concurrent folds.
    #[test]
    fn mutant_spins_fold_racy() {
        expect_caught(
            "spins_fold2",
            "spins_fold_racy",
            Failure::Assertion("a concurrent spins_per_delay fold was lost"),
            Duration::from_secs(120),
        );
    }
}
