//! shuttle models: many threads and long operation sequences under the PCT scheduler, against the
//! public APIs (the raw locks of the trait and the drop-in `lwlock::RwLock<T>`). shuttle's
//! atomics are all SeqCst, so these find lost wakeups (deadlocks), broken exclusion and lost
//! updates in schedules too long for loom, not ordering bugs (that is loom's job).
#![cfg(shuttle)]

use lwlock::reference::QSpinLock;
use lwlock::sync::{thread, AtomicU32, AtomicU64, Ordering};
use lwlock::{
    AcquireOrWait, Mode, RawAtomicLwLock, RawClassicLwLock, RawEmptyYieldLwLock, RawLwLock,
    RawLwLockVar, Tranche, VarWait,
};
use models::Model;
use std::sync::Arc;

/// PCT schedules per model and the bug depth.
const ITERATIONS: usize = 1000;
const DEPTH: usize = 3;

/// A lock, holder counters that check exclusion on every acquire, and the protected pair.
struct Rig<L> {
    lock: L,
    readers: AtomicU32,
    writers: AtomicU32,
    data: models::Protected<(u64, u64)>,
    var: AtomicU64,
}

impl<L: RawLwLock> Rig<L> {
    fn enter(&self, mode: Mode) {
        match mode {
            Mode::Exclusive => {
                assert_eq!(
                    self.writers.fetch_add(1, Ordering::SeqCst),
                    0,
                    "two writers"
                );
                assert_eq!(
                    self.readers.load(Ordering::SeqCst),
                    0,
                    "writer with readers"
                );
            }
            Mode::Shared => {
                self.readers.fetch_add(1, Ordering::SeqCst);
                assert_eq!(
                    self.writers.load(Ordering::SeqCst),
                    0,
                    "reader with a writer"
                );
            }
        }
    }

    fn leave(&self, mode: Mode) {
        match mode {
            Mode::Exclusive => self.writers.fetch_sub(1, Ordering::SeqCst),
            Mode::Shared => self.readers.fetch_sub(1, Ordering::SeqCst),
        };
        // SAFETY: held in `mode` by the caller.
        unsafe { self.lock.release(mode) };
    }

    /// The critical section of a holder in `mode`; returns 1 if it wrote.
    fn section(&self, mode: Mode) -> u64 {
        self.enter(mode);
        let wrote = match mode {
            Mode::Exclusive => {
                // SAFETY: held exclusively (checked by `enter`).
                unsafe { self.data.write(|d| d.0 += 1) };
                thread::yield_now();
                // SAFETY: as above.
                unsafe { self.data.write(|d| d.1 += 1) };
                1
            }
            Mode::Shared => {
                // SAFETY: held shared (checked by `enter`).
                let (a, b) = unsafe { self.data.read(|d| *d) };
                assert_eq!(a, b, "a reader saw a half-applied update");
                0
            }
        };
        self.leave(mode);
        wrote
    }
}

/// `threads` threads, `ops` operations each, cycling through every entry point of the trait.
fn workload<L: RawLwLock + 'static>(threads: u64, ops: u64) {
    let rig = Arc::new(Rig {
        lock: L::with_tranche(Tranche::DEFAULT),
        readers: AtomicU32::new(0),
        writers: AtomicU32::new(0),
        data: models::Protected::new((0, 0)),
        var: AtomicU64::new(0),
    });
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let rig = rig.clone();
            thread::spawn(move || {
                let mut wrote = 0;
                for i in 0..ops {
                    wrote += match (t + i) % 5 {
                        0 | 3 => {
                            rig.lock.acquire(Mode::Exclusive);
                            rig.section(Mode::Exclusive)
                        }
                        1 => {
                            rig.lock.acquire(Mode::Shared);
                            rig.section(Mode::Shared)
                        }
                        2 => {
                            let mode = if i % 2 == 0 {
                                Mode::Exclusive
                            } else {
                                Mode::Shared
                            };
                            if rig.lock.conditional_acquire(mode) {
                                rig.section(mode)
                            } else {
                                0
                            }
                        }
                        _ => match rig.lock.acquire_or_wait(Mode::Exclusive) {
                            AcquireOrWait::Acquired => rig.section(Mode::Exclusive),
                            AcquireOrWait::Waited => 0,
                        },
                    };
                }
                wrote
            })
        })
        .collect();
    let wrote: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    // SAFETY: every thread was joined.
    let (a, b) = unsafe { rig.data.read(|d| *d) };
    assert_eq!((a, b), (wrote, wrote), "an update was lost");
    assert!(!rig.lock.is_locked());
    assert!(
        rig.lock.conditional_acquire(Mode::Exclusive),
        "lock left unusable"
    );
    // SAFETY: just taken.
    unsafe { rig.lock.release(Mode::Exclusive) };
    let _ = rig.var.load(Ordering::SeqCst);
}

/// WaitForVar/UpdateVar with several inserters and waiters (the WAL insertion-lock pattern):
/// waiters see only values an inserter set, and nobody is left asleep.
fn var_workload(inserters: u64, waiters: u64, rounds: u64) {
    let rig = Arc::new(Rig {
        lock: RawAtomicLwLock::new_in(Tranche::WAL_WRITE),
        readers: AtomicU32::new(0),
        writers: AtomicU32::new(0),
        data: models::Protected::new((0, 0)),
        var: AtomicU64::new(0),
    });
    let mut handles = Vec::new();
    for t in 0..inserters {
        let rig = rig.clone();
        handles.push(thread::spawn(move || {
            for r in 0..rounds {
                rig.lock.acquire(Mode::Exclusive);
                rig.enter(Mode::Exclusive);
                let progress = 1 + t * 100 + r;
                // SAFETY: held exclusively.
                unsafe { rig.lock.update_var(&rig.var, progress) };
                thread::yield_now();
                rig.writers.fetch_sub(1, Ordering::SeqCst);
                // SAFETY: held exclusively.
                unsafe { rig.lock.release_clear_var(&rig.var, 0) };
            }
        }));
    }
    for _ in 0..waiters {
        let rig = rig.clone();
        handles.push(thread::spawn(move || {
            for _ in 0..rounds {
                match rig.lock.wait_for_var(&rig.var, 0) {
                    VarWait::Free => {}
                    VarWait::Changed(v) => {
                        assert!(v != 0 && (v - 1) % 100 < rounds, "value never set: {v}")
                    }
                }
            }
        }));
    }
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(rig.var.load(Ordering::SeqCst), 0);
    assert!(!rig.lock.is_locked());
}

/// The drop-in `lock_api` reader-writer lock, through its guards and `try_` methods.
fn rwlock_workload(threads: u64, ops: u64, classic: bool) {
    enum Any {
        Atomic(lwlock::RwLock<(u64, u64)>),
        Classic(lwlock::ClassicRwLock<(u64, u64)>),
    }
    macro_rules! with {
        ($l:expr, |$g:ident| $body:expr) => {
            match $l {
                Any::Atomic($g) => $body,
                Any::Classic($g) => $body,
            }
        };
    }
    let lock = Arc::new(if classic {
        Any::Classic(lwlock::ClassicRwLock::new((0, 0)))
    } else {
        Any::Atomic(lwlock::RwLock::new((0, 0)))
    });
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let lock = lock.clone();
            thread::spawn(move || {
                let mut wrote = 0u64;
                for i in 0..ops {
                    with!(&*lock, |l| match (t + i) % 4 {
                        0 | 2 => {
                            let mut g = l.write();
                            g.0 += 1;
                            thread::yield_now();
                            g.1 += 1;
                            wrote += 1;
                        }
                        1 => {
                            let g = l.read();
                            assert_eq!(g.0, g.1, "a reader saw a half-applied update");
                        }
                        _ => {
                            if let Some(mut g) = l.try_write() {
                                g.0 += 1;
                                g.1 += 1;
                                wrote += 1;
                            } else if let Some(g) = l.try_read() {
                                assert_eq!(g.0, g.1);
                            }
                        }
                    });
                }
                wrote
            })
        })
        .collect();
    let wrote: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    let v = with!(&*lock, |l| *l.read());
    assert_eq!(v, (wrote, wrote), "an update was lost");
}

macro_rules! shuttle_model {
    ($(#[doc = $proves:literal])+ $name:ident, threads: $threads:expr, $body:expr) => {
        $(#[doc = $proves])+
        #[test]
        fn $name() {
            Model {
                name: concat!(module_path!(), "::", stringify!($name)),
                proves: concat!($($proves),+).trim_start(),
                threads: $threads,
                bound: None,
            }
            .pct(ITERATIONS, DEPTH, $body);
        }
    };
}

shuttle_model! {
    /// Atomic LWLock, 6 threads × 20 mixed ops (X, S, conditional, acquire-or-wait): exclusion, no lost update or wakeup.
    atomic_mixed, threads: 6, || workload::<RawAtomicLwLock>(6, 20)
}

shuttle_model! {
    /// Classic LWLock, 6 threads × 20 mixed ops: exclusion, no lost update or wakeup.
    classic_mixed, threads: 6, || workload::<RawClassicLwLock>(6, 20)
}

shuttle_model! {
    /// Atomic LWLock, 8 threads × 6 mixed ops: the wake-set rules with long queues.
    atomic_mixed8, threads: 8, || workload::<RawAtomicLwLock>(8, 6)
}

shuttle_model! {
    /// WaitForVar/UpdateVar, 2 inserters + 3 waiters × 4 rounds: waiters wake and see only set values.
    wait_for_var, threads: 5, || var_workload(2, 3, 4)
}

shuttle_model! {
    /// Drop-in `lwlock::RwLock<T>`, 6 threads × 20 guard ops (read, write, try_*): no lost update.
    rwlock_atomic, threads: 6, || rwlock_workload(6, 20, false)
}

shuttle_model! {
    /// Drop-in `lwlock::ClassicRwLock<T>`, 6 threads × 20 guard ops: no lost update.
    rwlock_classic, threads: 6, || rwlock_workload(6, 20, true)
}

shuttle_model! {
    /// The kernel's queued spinlock (`lwlock::reference::QSpinLock`), 5 threads × 10 mixed ops:
    /// exclusion, no lost update, no lost hand-off through the pending bit and the MCS queue.
    qspinlock_mixed, threads: 5, || workload::<QSpinLock>(5, 10)
}

/// The empty-yield policy (the drop-in types' default) with every yield reported empty: shuttle
/// has no time, so whether a yield was empty is the model's choice (`set_model_empty_yield`),
/// and every spinner that fails its three PAUSE rounds takes the rule's exit at its first yield
/// (queue and sleep). The rest is the adaptive policy's spin, which the drop-in models run.
fn empty_yield_workload(threads: u64, ops: u64) {
    lwlock::sync::set_model_empty_yield(true);
    workload::<RawEmptyYieldLwLock>(threads, ops);
    lwlock::sync::set_model_empty_yield(false);
}

shuttle_model! {
    /// Empty-yield policy, every yield empty, 6 threads × 20 mixed ops: the exit keeps exclusion, no lost update or wakeup.
    empty_yield_mixed, threads: 6, || empty_yield_workload(6, 20)
}

#[cfg(lwlock_mutant = "runtime")]
mod mutants {
    use models::mutants::{expect_caught, Failure};
    use std::time::Duration;

    /// The empty-yield exit reported as a win: the model reaches the exit with the lock held and
    /// sees two writers inside (`Rig::enter`).
    #[test]
    fn mutant_empty_yield_claims_lock() {
        expect_caught(
            "empty_yield_mixed",
            "empty_yield_claims_lock",
            Failure::Assertion("two writers"),
            Duration::from_secs(120),
        );
    }
}
