//! The drop-in capabilities of the atomic LWLock (recursive reads, upgradable reads, downgrades,
//! timed acquires, fair unlocks, the handoff policy), through lwlock's `RwLock` (bounded policy)
//! and `BargingRwLock` (PostgreSQL's), plus a 64-thread stress of every new path.
//!
//! No test asserts a speed or a wall-clock bound; sleeps only give other threads a chance to
//! queue (the assertions hold whatever the timing).
#![cfg(not(any(loom, shuttle, lwsim)))]

mod common;

use lwlock::layout::{HANDOFF, HAS_WAITERS, LOCK_MASK, UPGRADABLE, VAL_EXCLUSIVE};
use lwlock::lock_api::{RwLockUpgradableReadGuard, RwLockWriteGuard};
use lwlock::{BargingRwLock, RawAtomicLwLock, RawHandoffLwLock, RawLwLock, RwLock};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

/// Every test runs under a watchdog: a hang (a lost wakeup, a waiter never granted) aborts the
/// process with a message naming the test instead of stalling the test command.
fn watchdog(name: &'static str) -> common::Watchdog {
    common::Watchdog::new(name, Duration::from_secs(60))
}

/// Every atomic flavour runs each functional test (the empty-yield one is the default's).
macro_rules! both {
    ($name:ident, $body:ident) => {
        mod $name {
            #[test]
            fn handoff() {
                let _dog = super::watchdog(concat!(stringify!($name), "::handoff"));
                super::$body::<lwlock::RawHandoffLwLock>();
            }
            #[test]
            fn barging() {
                let _dog = super::watchdog(concat!(stringify!($name), "::barging"));
                super::$body::<lwlock::RawAtomicLwLock>();
            }
            #[test]
            fn taskfair() {
                let _dog = super::watchdog(concat!(stringify!($name), "::taskfair"));
                super::$body::<lwlock::RawTaskFairLwLock>();
            }
            #[test]
            fn adaptive() {
                let _dog = super::watchdog(concat!(stringify!($name), "::adaptive"));
                super::$body::<lwlock::RawAdaptiveLwLock>();
            }
            #[test]
            fn empty_yield() {
                let _dog = super::watchdog(concat!(stringify!($name), "::empty_yield"));
                super::$body::<lwlock::RawEmptyYieldLwLock>();
            }
        }
    };
}

type L<R, T> = lwlock::lock_api::RwLock<R, T>;
trait Raw:
    lwlock::lock_api::RawRwLockUpgradeDowngrade
    + lwlock::lock_api::RawRwLockRecursive
    + lwlock::lock_api::RawRwLockTimed<Duration = Duration, Instant = std::time::Instant>
    + lwlock::lock_api::RawRwLockUpgradeTimed
    + lwlock::lock_api::RawRwLockUpgradeFair
    + RawLwLock
    + Send
    + Sync
    + 'static
{
    fn word(&self) -> u32;
}
impl Raw for RawAtomicLwLock {
    fn word(&self) -> u32 {
        self.state()
    }
}
impl Raw for lwlock::RawTaskFairLwLock {
    fn word(&self) -> u32 {
        self.state()
    }
}
impl Raw for lwlock::RawAdaptiveLwLock {
    fn word(&self) -> u32 {
        self.state()
    }
}
impl Raw for lwlock::RawEmptyYieldLwLock {
    fn word(&self) -> u32 {
        self.state()
    }
}
impl Raw for RawHandoffLwLock {
    fn word(&self) -> u32 {
        self.state()
    }
}

fn wait_for_waiter<R: Raw, T>(l: &L<R, T>) {
    // SAFETY: only the raw lock's state word is read.
    while unsafe { l.raw() }.word() & HAS_WAITERS == 0 {
        thread::yield_now();
    }
}

both!(upgradable_excludes_writers_not_readers, upgradable_basics);
fn upgradable_basics<R: Raw>() {
    let l = L::<R, u32>::new(1);
    let u = l.upgradable_read();
    assert!(
        l.try_read().is_some(),
        "readers beside an upgradable holder"
    );
    assert!(
        l.try_write().is_none(),
        "no writer beside an upgradable holder"
    );
    assert!(
        l.try_upgradable_read().is_none(),
        "one upgradable holder at a time"
    );
    // SAFETY: only the word is read.
    assert_ne!(unsafe { l.raw() }.word() & UPGRADABLE, 0);
    let mut w = RwLockUpgradableReadGuard::upgrade(u);
    *w = 2;
    let u = RwLockWriteGuard::downgrade_to_upgradable(w);
    assert_eq!(*u, 2);
    let r = RwLockUpgradableReadGuard::downgrade(u);
    assert!(l.try_upgradable_read().is_some());
    drop(r);
    let mut u = l.upgradable_read();
    u.with_upgraded(|v| *v += 1);
    assert_eq!(*u, 3);
    assert!(RwLockUpgradableReadGuard::try_upgrade(u).is_ok());
    // SAFETY: only the word is read.
    assert_eq!(unsafe { l.raw() }.word() & (LOCK_MASK | UPGRADABLE), 0);
}

both!(upgrade_waits_for_readers, upgrade_waits);
fn upgrade_waits<R: Raw>() {
    let l = Arc::new(L::<R, u64>::new(0));
    let reader = l.read();
    let l2 = l.clone();
    let upgraded = Arc::new(AtomicBool::new(false));
    let up2 = upgraded.clone();
    let t = thread::spawn(move || {
        let u = l2.upgradable_read();
        let mut w = RwLockUpgradableReadGuard::upgrade(u);
        up2.store(true, Ordering::SeqCst);
        *w += 1;
    });
    // The upgrader closes the lock to new readers once it upgrades.
    // SAFETY: only the word is read.
    while unsafe { l.raw() }.word() & VAL_EXCLUSIVE == 0 {
        thread::yield_now();
    }
    thread::sleep(Duration::from_millis(5));
    assert!(
        !upgraded.load(Ordering::SeqCst),
        "upgraded with a reader inside"
    );
    assert!(
        l.try_read().is_none(),
        "a new reader entered an upgrading lock"
    );
    // A recursive read still gets in (a reader holds the lock).
    let rr = l
        .try_read_recursive()
        .expect("recursive read beside an upgrader");
    drop(rr);
    drop(reader);
    t.join().unwrap();
    assert_eq!(*l.read(), 1);
}

both!(
    try_upgrade_for_times_out_and_keeps_the_read,
    try_upgrade_for
);
fn try_upgrade_for<R: Raw>() {
    let l = Arc::new(L::<R, u64>::new(0));
    let r = l.read();
    let u = l.upgradable_read();
    let u = RwLockUpgradableReadGuard::try_upgrade_for(u, Duration::from_millis(5))
        .expect_err("a reader is inside");
    // Readers may enter again after the failed attempt.
    assert!(l.try_read().is_some());
    drop(r);
    let w = RwLockUpgradableReadGuard::try_upgrade_for(u, Duration::from_secs(5)).unwrap();
    drop(w);
    // SAFETY: only the word is read.
    assert_eq!(unsafe { l.raw() }.word() & (LOCK_MASK | UPGRADABLE), 0);
}

both!(downgrade_wakes_queued_readers, downgrade_wakes);
fn downgrade_wakes<R: Raw>() {
    let l = Arc::new(L::<R, u64>::new(0));
    let mut w = l.write();
    let got = Arc::new(AtomicUsize::new(0));
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let (l, got) = (l.clone(), got.clone());
            thread::spawn(move || {
                let r = l.read();
                assert_eq!(*r, 7);
                got.fetch_add(1, Ordering::SeqCst);
                // Stay until all three are in: they hold the lock together with the downgrader.
                while got.load(Ordering::SeqCst) < 3 {
                    thread::yield_now();
                }
            })
        })
        .collect();
    wait_for_waiter(&l);
    thread::sleep(Duration::from_millis(5));
    *w = 7;
    let r = RwLockWriteGuard::downgrade(w);
    // Without the wake in downgrade, the readers would sleep until `r` is dropped.
    while got.load(Ordering::SeqCst) < 3 {
        thread::yield_now();
    }
    drop(r);
    for t in readers {
        t.join().unwrap();
    }
}

both!(timed_acquires_time_out_and_dequeue, timed);
fn timed<R: Raw>() {
    let l = Arc::new(L::<R, u64>::new(0));
    let w = l.write();
    let l2 = l.clone();
    // The writer leaves only after the timed acquires have timed out (a fixed sleep raced with
    // them on a loaded machine), and then while the last one waits.
    let timed_out = Arc::new(AtomicBool::new(false));
    let t_out = timed_out.clone();
    let t = thread::spawn(move || {
        assert!(l2.try_read_for(Duration::from_millis(10)).is_none());
        assert!(l2.try_write_for(Duration::from_millis(10)).is_none());
        assert!(l2
            .try_upgradable_read_for(Duration::from_millis(10))
            .is_none());
        let until = std::time::Instant::now() + Duration::from_millis(10);
        assert!(l2.try_write_until(until).is_none());
        // The record is clean: no post left behind, off the list.
        assert_eq!(lwlock::Proc::current().sem().count(), 0);
        t_out.store(true, Ordering::SeqCst);
        // Now one that succeeds once the writer leaves.
        *l2.try_write_for(Duration::from_secs(30))
            .expect("woken before the deadline") += 1;
    });
    while !timed_out.load(Ordering::SeqCst) && !t.is_finished() {
        thread::sleep(Duration::from_millis(1));
    }
    thread::sleep(Duration::from_millis(10));
    drop(w);
    t.join().unwrap();
    assert_eq!(*l.read(), 1);
    // SAFETY: only the word is read.
    let word = unsafe { l.raw() }.word();
    assert_eq!(word & (HAS_WAITERS | LOCK_MASK | HANDOFF), 0);
}

both!(fair_unlock_hands_over, fair_unlock);
fn fair_unlock<R: Raw>() {
    let l = Arc::new(L::<R, u64>::new(0));
    let w = l.write();
    let l2 = l.clone();
    let t = thread::spawn(move || {
        let mut g = l2.write();
        *g += 1;
    });
    wait_for_waiter(&l);
    RwLockWriteGuard::unlock_fair(w);
    // The waiter owns the lock now (handed over, no window for a newcomer): our try fails
    // until it released.
    let mut seen_handed = false;
    loop {
        match l.try_write() {
            Some(g) => {
                assert!(
                    seen_handed || *g == 1,
                    "took the lock before the waiter it was handed to"
                );
                break;
            }
            None => seen_handed = true,
        }
    }
    t.join().unwrap();
    assert_eq!(*l.read(), 1);
    // Bump with a waiting reader.
    let mut w = l.write();
    let l3 = l.clone();
    let t = thread::spawn(move || *l3.read());
    wait_for_waiter(&l);
    *w = 5;
    RwLockWriteGuard::bump(&mut w);
    *w = 6;
    drop(w);
    let seen = t.join().unwrap();
    assert!(seen == 5 || seen == 6);
}

both!(recursive_read_passes_a_waiting_writer, recursive);
fn recursive<R: Raw>() {
    // parking_lot's test_rwlock_recursive: a pending writer (under the bounded policy, one
    // past its bound holding the handoff) must not block a recursive read.
    let l = Arc::new(L::<R, u64>::new(1));
    let r1 = l.read();
    let l2 = l.clone();
    let t = thread::spawn(move || {
        let _w = l2.write();
    });
    wait_for_waiter(&l);
    thread::sleep(Duration::from_millis(20));
    let r2 = l.read_recursive();
    drop(r1);
    drop(r2);
    t.join().unwrap();
}

#[test]
fn handoff_holds_new_readers_back() {
    let _dog = watchdog("handoff_holds_new_readers_back");
    handoff_holds::<RawHandoffLwLock>();
}

#[test]
fn taskfair_holds_new_readers_back_at_once() {
    let _dog = watchdog("taskfair_holds_new_readers_back_at_once");
    // parking_lot 0.13's test_read_with_waiting_writer: once the writer is seen waiting
    // (HAS_WAITERS), no new reader gets in; the bit is set in the same RMW.
    let l = Arc::new(RwLock::new(0u64));
    let r = l.read();
    let l2 = l.clone();
    let t = thread::spawn(move || {
        *l2.write() += 1;
    });
    // SAFETY: only the word is read.
    while unsafe { l.raw() }.state() & HAS_WAITERS == 0 {
        thread::yield_now();
    }
    assert!(
        l.try_read().is_none(),
        "a new reader overtook a waiting writer"
    );
    drop(r);
    t.join().unwrap();
    assert_eq!(*l.read(), 1);
}

fn handoff_holds<R: Raw>() {
    let l = Arc::new(L::<R, u64>::new(0));
    let r = l.read();
    let l2 = l.clone();
    let t = thread::spawn(move || {
        *l2.write() += 1;
    });
    // SAFETY: only the word is read.
    while unsafe { l.raw() }.word() & HANDOFF == 0 {
        thread::yield_now();
    }
    assert!(
        l.try_read().is_none(),
        "a new reader overtook a writer past the bound"
    );
    assert!(l.try_write().is_none());
    drop(r);
    t.join().unwrap();
    // SAFETY: only the word is read.
    assert_eq!(unsafe { l.raw() }.word() & (HANDOFF | LOCK_MASK), 0);
    assert_eq!(*l.read(), 1);
}

#[test]
fn barging_never_sets_handoff() {
    let _dog = watchdog("barging_never_sets_handoff");
    let l = Arc::new(BargingRwLock::new(0u64));
    let r = l.read();
    let l2 = l.clone();
    let t = thread::spawn(move || {
        *l2.write() += 1;
    });
    wait_for_waiter(&l);
    thread::sleep(Duration::from_millis(5));
    // PostgreSQL's policy: a new reader barges past the queued writer.
    assert!(l.try_read().is_some());
    // SAFETY: only the word is read.
    assert_eq!(unsafe { l.raw() }.state() & HANDOFF, 0);
    drop(r);
    t.join().unwrap();
}

#[test]
fn sizes() {
    if cfg!(not(feature = "stats")) {
        assert!(std::mem::size_of::<RawHandoffLwLock>() <= 16);
        assert!(std::mem::size_of::<RawAtomicLwLock>() <= 16);
        assert_eq!(RawHandoffLwLock::NAME, "atomic-handoff");
        assert_eq!(RawAtomicLwLock::NAME, "atomic");
        assert!(std::mem::size_of::<lwlock::RawTaskFairLwLock>() <= 16);
        assert!(std::mem::size_of::<lwlock::RawAdaptiveLwLock>() <= 16);
        assert!(std::mem::size_of::<lwlock::RwLock<()>>() <= 16);
        assert!(std::mem::size_of::<lwlock::Mutex<()>>() <= 16);
    }
}

/// 64 threads through every new path at once (plain, recursive, upgradable with upgrade and
/// timed upgrade, downgrades, timed reads and writes, fair unlocks and bumps); the data is a
/// pair a writer keeps equal, so any overlap of a writer with anyone shows as a mismatch.
fn stress<R: Raw>(iters: usize) {
    const THREADS: usize = 64;
    let l = Arc::new(L::<R, (u64, u64)>::new((0, 0)));
    let writes = Arc::new(AtomicU64::new(0));
    let start = Arc::new(Barrier::new(THREADS));
    let threads: Vec<_> = (0..THREADS)
        .map(|i| {
            let (l, writes, start) = (l.clone(), writes.clone(), start.clone());
            thread::spawn(move || {
                start.wait();
                let mut rng = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                let mut next = || {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    rng
                };
                let write = |g: &mut (u64, u64)| {
                    assert_eq!(g.0, g.1, "a writer saw a half-written pair");
                    g.0 += 1;
                    g.1 += 1;
                };
                for _ in 0..iters {
                    match next() % 12 {
                        0 => {
                            let g = l.read();
                            assert_eq!(g.0, g.1);
                        }
                        1 => {
                            let r = l.read();
                            let r2 = l.read_recursive();
                            assert_eq!(r.0, r2.1);
                        }
                        2 => {
                            write(&mut l.write());
                            writes.fetch_add(1, Ordering::Relaxed);
                        }
                        3 => {
                            let u = l.upgradable_read();
                            assert_eq!(u.0, u.1);
                            let mut w = RwLockUpgradableReadGuard::upgrade(u);
                            write(&mut w);
                            writes.fetch_add(1, Ordering::Relaxed);
                            let r = RwLockWriteGuard::downgrade(w);
                            assert_eq!(r.0, r.1);
                        }
                        4 => {
                            let u = l.upgradable_read();
                            match RwLockUpgradableReadGuard::try_upgrade_for(
                                u,
                                Duration::from_micros(50),
                            ) {
                                Ok(mut w) => {
                                    write(&mut w);
                                    writes.fetch_add(1, Ordering::Relaxed);
                                }
                                Err(u) => assert_eq!(u.0, u.1),
                            }
                        }
                        5 => {
                            if let Some(mut w) = l.try_write_for(Duration::from_micros(100)) {
                                write(&mut w);
                                writes.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        6 => {
                            if let Some(g) = l.try_read_for(Duration::from_micros(100)) {
                                assert_eq!(g.0, g.1);
                            }
                        }
                        7 => {
                            let mut w = l.write();
                            write(&mut w);
                            writes.fetch_add(1, Ordering::Relaxed);
                            RwLockWriteGuard::unlock_fair(w);
                        }
                        8 => {
                            let mut w = l.write();
                            write(&mut w);
                            RwLockWriteGuard::bump(&mut w);
                            write(&mut w);
                            writes.fetch_add(2, Ordering::Relaxed);
                        }
                        9 => {
                            let g = l.read();
                            assert_eq!(g.0, g.1);
                            lwlock::lock_api::RwLockReadGuard::unlock_fair(g);
                        }
                        10 => {
                            let mut w = l.write();
                            write(&mut w);
                            writes.fetch_add(1, Ordering::Relaxed);
                            let u = RwLockWriteGuard::downgrade_to_upgradable(w);
                            assert_eq!(u.0, u.1);
                            RwLockUpgradableReadGuard::unlock_fair(u);
                        }
                        _ => {
                            if let Some(u) = l.try_upgradable_read_for(Duration::from_micros(100)) {
                                let r = RwLockUpgradableReadGuard::downgrade(u);
                                assert_eq!(r.0, r.1);
                            }
                        }
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let g = l.read();
    assert_eq!(g.0, writes.load(Ordering::Relaxed));
    assert_eq!(g.0, g.1);
    drop(g);
    // SAFETY: only the word is read.
    let word = unsafe { l.raw() }.word();
    assert_eq!(
        word & (LOCK_MASK | UPGRADABLE | HANDOFF | HAS_WAITERS),
        0,
        "state {word:#x}"
    );
}

const STRESS_ITERS: usize = if cfg!(debug_assertions) {
    1_000
} else {
    20_000
};

#[test]
fn stress64_handoff() {
    let _dog = common::Watchdog::new("stress64_handoff", Duration::from_secs(240));
    stress::<RawHandoffLwLock>(STRESS_ITERS);
}

#[test]
fn stress64_taskfair() {
    let _dog = common::Watchdog::new("stress64_taskfair", Duration::from_secs(240));
    stress::<lwlock::RawTaskFairLwLock>(STRESS_ITERS);
}

#[test]
fn stress64_adaptive() {
    let _dog = common::Watchdog::new("stress64_adaptive", Duration::from_secs(240));
    stress::<lwlock::RawAdaptiveLwLock>(STRESS_ITERS);
}

#[test]
fn stress64_empty_yield() {
    let _dog = common::Watchdog::new("stress64_empty_yield", Duration::from_secs(240));
    stress::<lwlock::RawEmptyYieldLwLock>(STRESS_ITERS);
}

#[test]
fn stress64_barging() {
    let _dog = common::Watchdog::new("stress64_barging", Duration::from_secs(240));
    stress::<RawAtomicLwLock>(STRESS_ITERS);
}
