//! Behaviour of each LWLock operation across threads: acquire-or-wait, WaitForVar/UpdateVar,
//! conditional acquire never blocking, wait-event publication, shared-count overflow on the
//! drop-in, and the LWLOCK_STATS counters.

mod common;

use lwlock::{
    AcquireOrWait, Mode, RawAtomicLwLock, RawClassicLwLock, RawLwLock, RawLwLockVar, Tranche,
    VarWait, WaitClass,
};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// Spins until `cond` holds (with a generous limit; the watchdog catches real hangs).
fn wait_for(what: &str, cond: impl Fn() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Is some live thread sleeping on a lock of `tranche` right now?
fn someone_sleeps_on(tranche: Tranche) -> bool {
    lwlock::sample_waits().iter().any(|s| {
        s.event.class() == Some(WaitClass::LwLock) && s.event.event_name() == tranche.name()
    })
}

fn acquire_or_wait_waits_without_taking<L: RawLwLock + 'static>() {
    let _dog = common::Watchdog::new("acquire_or_wait", Duration::from_secs(60));
    let t = Tranche::register(L::NAME);
    let l = Arc::new(L::with_tranche(t));
    // Free: it takes the lock.
    assert_eq!(l.acquire_or_wait(Mode::Exclusive), AcquireOrWait::Acquired);
    assert!(l.is_locked_exclusive());
    let released = Arc::new(AtomicBool::new(false));
    let (l2, r2) = (l.clone(), released.clone());
    let waiter = std::thread::spawn(move || {
        let outcome = l2.acquire_or_wait(Mode::Exclusive);
        (outcome, r2.load(Ordering::Acquire))
    });
    wait_for("the waiter to sleep", || someone_sleeps_on(t));
    released.store(true, Ordering::Release);
    // SAFETY: held exclusively since acquire_or_wait returned Acquired.
    unsafe { l.release(Mode::Exclusive) };
    let (outcome, saw_release) = waiter.join().unwrap();
    assert_eq!(outcome, AcquireOrWait::Waited);
    assert!(saw_release, "returned only after the holder released");
    assert!(!l.is_locked(), "a Waited caller does not hold the lock");
    // Usable afterwards.
    assert!(l.conditional_acquire(Mode::Exclusive));
    // SAFETY: just taken.
    unsafe { l.release(Mode::Exclusive) };
}

#[test]
fn acquire_or_wait_atomic() {
    acquire_or_wait_waits_without_taking::<RawAtomicLwLock>();
}

#[test]
fn acquire_or_wait_classic() {
    acquire_or_wait_waits_without_taking::<RawClassicLwLock>();
}

fn conditional_acquire_never_blocks<L: RawLwLock + 'static>() {
    let _dog = common::Watchdog::new("conditional", Duration::from_secs(60));
    let l = Arc::new(L::with_tranche(Tranche::DEFAULT));
    let (held_tx, held_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let l2 = l.clone();
    let holder = std::thread::spawn(move || {
        l2.acquire(Mode::Exclusive);
        held_tx.send(()).unwrap();
        done_rx.recv().unwrap();
        // SAFETY: held exclusively.
        unsafe { l2.release(Mode::Exclusive) };
    });
    held_rx.recv().unwrap();
    // The lock stays held for the whole loop: every attempt must fail, and the loop must end.
    for _ in 0..100_000 {
        assert!(!l.conditional_acquire(Mode::Exclusive));
        assert!(!l.conditional_acquire(Mode::Shared));
    }
    done_tx.send(()).unwrap();
    holder.join().unwrap();
    assert!(l.conditional_acquire(Mode::Shared));
    // SAFETY: just taken.
    unsafe { l.release(Mode::Shared) };
}

#[test]
fn conditional_acquire_never_blocks_atomic() {
    conditional_acquire_never_blocks::<RawAtomicLwLock>();
}

#[test]
fn conditional_acquire_never_blocks_classic() {
    conditional_acquire_never_blocks::<RawClassicLwLock>();
}

#[test]
fn wait_for_var_sees_updates_and_release() {
    let _dog = common::Watchdog::new("wait_for_var", Duration::from_secs(60));
    let t = Tranche::register("WALInsertTest");
    let l = Arc::new(RawAtomicLwLock::new_in(t));
    let var = Arc::new(AtomicU64::new(0));
    // No exclusive holder: free at once, whatever the variable says.
    assert_eq!(l.wait_for_var(&var, 0), VarWait::Free);
    l.acquire(Mode::Exclusive);
    // Held, but the variable already moved: no wait.
    var.store(5, Ordering::SeqCst);
    assert_eq!(l.wait_for_var(&var, 4), VarWait::Changed(5));

    let (l2, v2) = (l.clone(), var.clone());
    let (first_tx, first_rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let first = l2.wait_for_var(&v2, 5);
        first_tx.send(first).unwrap();
        let VarWait::Changed(now) = first else {
            return VarWait::Free;
        };
        l2.wait_for_var(&v2, now)
    });
    wait_for("the var waiter to sleep", || someone_sleeps_on(t));
    // SAFETY: held exclusively.
    unsafe { l.update_var(&var, 9) };
    // The waiter wakes with 9 and waits again on 9; releasing (clearing the var) frees it.
    let first = first_rx.recv().unwrap();
    wait_for("the var waiter to sleep again", || someone_sleeps_on(t));
    // SAFETY: held exclusively.
    unsafe { l.release_clear_var(&var, 0) };
    let second = waiter.join().unwrap();
    assert_eq!(first, VarWait::Changed(9));
    assert_eq!(second, VarWait::Free);
    assert_eq!(var.load(Ordering::SeqCst), 0);
    assert!(!l.is_locked());
}

#[test]
fn wait_for_var_ignores_shared_holders() {
    let l = RawAtomicLwLock::new();
    let var = AtomicU64::new(1);
    l.acquire(Mode::Shared);
    assert_eq!(l.wait_for_var(&var, 1), VarWait::Free);
    // SAFETY: held shared.
    unsafe { l.release(Mode::Shared) };
}

fn sleeping_waiter_is_sampled<L: RawLwLock + 'static>() {
    let _dog = common::Watchdog::new("sampling", Duration::from_secs(60));
    let t = Tranche::register(if L::NAME == "atomic" {
        "SampledAtomic"
    } else {
        "SampledClassic"
    });
    let l = Arc::new(L::with_tranche(t));
    l.acquire(Mode::Exclusive);
    let l2 = l.clone();
    let waiter = std::thread::spawn(move || {
        let fast = l2.acquire(Mode::Shared);
        // SAFETY: held shared.
        unsafe { l2.release(Mode::Shared) };
        fast
    });
    wait_for("the waiter to publish its wait", || someone_sleeps_on(t));
    let shown: Vec<String> = lwlock::sample_waits()
        .iter()
        .filter(|s| s.event.is_waiting())
        .map(|s| s.event.to_string())
        .collect();
    assert!(shown.contains(&format!("LWLock:{}", t.name())), "{shown:?}");
    // SAFETY: held exclusively.
    unsafe { l.release(Mode::Exclusive) };
    assert!(!waiter.join().unwrap(), "the waiter slept");
    assert!(!someone_sleeps_on(t), "the wait is cleared after waking");
}

#[test]
fn sleeping_waiter_is_sampled_atomic() {
    sleeping_waiter_is_sampled::<RawAtomicLwLock>();
}

#[test]
fn sleeping_waiter_is_sampled_classic() {
    sleeping_waiter_is_sampled::<RawClassicLwLock>();
}

#[test]
fn drop_in_read_overflow_panics() {
    read_overflow_panics(lwlock::RwLock::new(0u8));
}

/// The adaptive policy's shared acquire reaches the same overflow check (its spin runs only
/// after a failed attempt): the same panic, and the lock usable after it.
#[test]
fn adaptive_read_overflow_panics() {
    read_overflow_panics(lock_api::RwLock::<lwlock::RawAdaptiveLwLock, u8>::new(0u8));
}

fn read_overflow_panics<R: lock_api::RawRwLock>(l: lock_api::RwLock<R, u8>) {
    let mut guards = Vec::with_capacity(lwlock::layout::MAX_SHARED as usize);
    for _ in 0..lwlock::layout::MAX_SHARED {
        guards.push(l.try_read().expect("below the limit"));
    }
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _g = l.read();
    }))
    .expect_err("one reader past the limit panics");
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("too many shared holders"), "{msg}");
    drop(guards);
    assert!(
        l.try_write().is_some(),
        "the lock is usable after the panic"
    );
}

#[cfg(feature = "stats")]
fn stats_count<L: RawLwLock + 'static>() {
    let _dog = common::Watchdog::new("stats", Duration::from_secs(60));
    let l = Arc::new(L::with_tranche(Tranche::DEFAULT));
    l.acquire(Mode::Shared);
    // SAFETY: held shared.
    unsafe { l.release(Mode::Shared) };
    l.acquire(Mode::Exclusive);
    let l2 = l.clone();
    let waiter = std::thread::spawn(move || {
        l2.acquire(Mode::Exclusive);
        // SAFETY: held exclusively.
        unsafe { l2.release(Mode::Exclusive) };
    });
    wait_for("a blocked acquirer", || l.stats().unwrap().block > 0);
    // SAFETY: held exclusively.
    unsafe { l.release(Mode::Exclusive) };
    waiter.join().unwrap();
    let s = l.stats().expect("stats feature on");
    assert_eq!(s.sh_acquire, 1);
    assert_eq!(s.ex_acquire, 2);
    assert!(s.block >= 1);
}

#[cfg(feature = "stats")]
#[test]
fn stats_count_atomic() {
    stats_count::<RawAtomicLwLock>();
}

#[cfg(feature = "stats")]
#[test]
fn stats_count_classic() {
    stats_count::<RawClassicLwLock>();
}

#[cfg(not(feature = "stats"))]
#[test]
fn stats_absent_without_feature() {
    assert!(RawAtomicLwLock::new().stats().is_none());
    assert!(RawClassicLwLock::new().stats().is_none());
}
