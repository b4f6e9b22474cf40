//! The harness's LWLock entry points (`lwharness::entry_points`): what a replayed PostgreSQL
//! transaction does that the closures cannot say (holds that do not nest, a conditional acquire
//! that fails, AcquireOrWait, WaitForVar).

use lwharness::entry_points::{EntryPoints, WithVar};
use lwharness::locks::{BenchLock, LockFamily, RawFamily};
use lwlock::sync::{AtomicU64, Ordering};
use lwlock::{AcquireOrWait, Mode, RawAtomicLwLock, RawLwLock, Tranche, VarWait};

type Atomic = <RawFamily<RawAtomicLwLock> as LockFamily>::Lock<()>;

/// A recorded transaction's holds, not nested: A exclusive, B shared, A released first.
#[test]
fn holds_need_not_nest_and_a_conditional_acquire_can_fail() {
    let a = <Atomic as BenchLock<()>>::new((), Tranche::DEFAULT);
    let b = <Atomic as BenchLock<()>>::new((), Tranche::DEFAULT);
    let (ea, eb) = (
        a.entry_points().expect("raw"),
        b.entry_points().expect("raw"),
    );
    ea.acquire(Mode::Exclusive);
    eb.acquire(Mode::Shared);
    assert_eq!(a.held(), Some((true, true)));
    // Held exclusively: a conditional acquire in either mode fails, without waiting.
    assert!(!ea.conditional_acquire(Mode::Shared));
    assert!(!ea.conditional_acquire(Mode::Exclusive));
    // Held shared: another shared conditional acquire succeeds.
    assert!(eb.conditional_acquire(Mode::Shared));
    // SAFETY: each release matches an acquire above, in its mode.
    unsafe {
        ea.release(Mode::Exclusive);
        assert_eq!(a.held(), Some((false, false)));
        eb.release(Mode::Shared);
        eb.release(Mode::Shared);
    }
    assert_eq!(b.held(), Some((false, false)));
    // Free: AcquireOrWait takes it.
    assert_eq!(ea.acquire_or_wait(Mode::Exclusive), AcquireOrWait::Acquired);
    // SAFETY: acquired just above.
    unsafe { ea.release(Mode::Exclusive) };
    // A raw lock without the variable protocol says so.
    assert_eq!(ea.wait_for_var(&AtomicU64::new(0), 0), None);
}

/// AcquireOrWait on a busy lock waits for the holder's release and returns without it;
/// WaitForVar sees the holder's update.
#[test]
fn acquire_or_wait_and_wait_for_var() {
    let lock = std::sync::Arc::new(WithVar(RawAtomicLwLock::with_tranche(Tranche::DEFAULT)));
    let var = std::sync::Arc::new(AtomicU64::new(0));
    let started = std::sync::Arc::new(std::sync::Barrier::new(2));
    lock.acquire(Mode::Exclusive);
    let waiter = {
        let (lock, var, started) = (lock.clone(), var.clone(), started.clone());
        std::thread::spawn(move || {
            started.wait();
            let changed = lock.wait_for_var(&var, 0);
            let waited = lock.acquire_or_wait(Mode::Exclusive);
            if waited == AcquireOrWait::Acquired {
                // SAFETY: acquire_or_wait took it just above.
                unsafe { lock.release(Mode::Exclusive) };
            }
            (changed, waited)
        })
    };
    started.wait();
    std::thread::sleep(std::time::Duration::from_millis(20));
    // SAFETY: held exclusively since the acquire above.
    unsafe { assert!(lock.update_var(&var, 7)) };
    std::thread::sleep(std::time::Duration::from_millis(20));
    // SAFETY: held exclusively since the acquire above.
    unsafe { lock.release(Mode::Exclusive) };
    let (changed, waited) = waiter.join().unwrap();
    assert_eq!(changed, Some(VarWait::Changed(7)));
    // The waiter found the lock still held and waited for the release, or (a slow machine)
    // took it after the release and released it.
    assert!(matches!(
        waited,
        AcquireOrWait::Waited | AcquireOrWait::Acquired
    ));
    assert!(!lock.0.is_locked());
    assert_eq!(var.load(Ordering::Relaxed), 7);
}
