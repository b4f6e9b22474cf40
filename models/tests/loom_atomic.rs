//! loom models of the atomic-state LWLock (PostgreSQL 9.5+): mutual exclusion with the protected
//! data in loom's `UnsafeCell`, no lost wakeup (a lost wakeup is a loom deadlock, thanks to the
//! futex shim), conditional acquire, acquire-or-wait and WaitForVar/UpdateVar.
#![cfg(loom)]

use lwlock::proc::probe;
use lwlock::sync::{thread, AtomicU32, AtomicU64, Ordering};
use lwlock::{
    AcquireOrWait, Mode, Proc, RawAtomicLwLock as L, RawLwLock, RawLwLockVar, Tranche, VarWait,
    WaitEvent, INVALID_PROC,
};
use models::scenarios as sc;
use models::Protected;
use std::sync::Arc;

// Bounds: every two-thread model of acquire/release/wakeup runs at preemption bound 6, every
// three-thread model at 3. The costliest are `wait_for_var3` (3.7 million executions, about
// 5.5 minutes alone on the 2-core machine: ci/models.sh starts it first, in parallel with the
// rest) and `exclusive_exclusive` (one section against two: 1.2 million executions, 73 s; two
// against two did not finish bound 6 in 5 minutes, so that shape keeps bound 4 as
// `exclusive_exclusive_2x2`). Unbounded, not even the smallest two-thread model
// (`conditional_exclusive`) finished in 5 minutes. See the model table in docs/reliability.md for executions
// and seconds.

models::loom_model! {
    /// X+X, one section against two: mutual exclusion, no lost update, no lost wakeup, wakeups re-enabled.
    exclusive_exclusive, threads: 2, bound: Some(6), || sc::exclusive_exclusive::<L>(1, 2)
}

models::loom_model! {
    /// X+X, two sections each (more sections, shallower bound): exclusion, no lost update or wakeup.
    exclusive_exclusive_2x2, threads: 2, bound: Some(4), || sc::exclusive_exclusive::<L>(2, 2)
}

models::loom_model! {
    /// S+X: a reader never sees a half-applied update; the writer is always woken.
    shared_exclusive, threads: 2, bound: Some(6), sc::shared_exclusive::<L>
}

models::loom_model! {
    /// X+S+S: one writer and two readers; no reader or writer is left asleep.
    exclusive_shared_shared, threads: 3, bound: Some(3), sc::exclusive_shared_shared::<L>
}

models::loom_model! {
    /// X+X+X: three writers; the wake-one-writer rule and RELEASE_OK never strand a waiter.
    exclusive3, threads: 3, bound: Some(3), sc::exclusive3::<L>
}

models::loom_model! {
    /// Conditional exclusive acquire: excludes the writer when it succeeds, never queues.
    conditional_exclusive, threads: 2, bound: Some(6), || sc::conditional::<L>(Mode::Exclusive)
}

models::loom_model! {
    /// Conditional shared acquire: sees no half-applied update, never queues.
    conditional_shared, threads: 2, bound: Some(6), || sc::conditional::<L>(Mode::Shared)
}

models::loom_model! {
    /// Acquire-or-wait: the waiter is woken, and "Waited" implies the holder's update is visible.
    acquire_or_wait, threads: 2, bound: Some(6), sc::acquire_or_wait::<L>
}

models::loom_model! {
    /// Acquire-or-wait among two writers: the WAIT_UNTIL_FREE waiter is never stranded.
    acquire_or_wait3, threads: 3, bound: Some(3), sc::acquire_or_wait3::<L>
}

models::loom_model! {
    /// WaitForVar/UpdateVar: the waiter wakes on update or release, and a seen value publishes.
    wait_for_var, threads: 2, bound: Some(6), sc::wait_for_var::<L>
}

models::loom_model! {
    /// WaitForVar with a competing writer: the variable waiter is not lost behind woken writers.
    wait_for_var3, threads: 3, bound: Some(3), sc::wait_for_var3::<L>
}

// ---- blind-spot models: answers that publish, a foreign post, the wake-latency bound ----------

/// The protected value of the blind-spot models, written by the exclusive holder.
struct Guarded {
    lock: L,
    var: AtomicU64,
    data: Protected<u64>,
}

fn guarded() -> Arc<Guarded> {
    Arc::new(Guarded {
        lock: L::with_tranche(Tranche::DEFAULT),
        var: AtomicU64::new(0),
        data: Protected::new(0),
    })
}

/// Yields to the model until `cond` holds (the other threads make progress meanwhile).
fn await_model(mut cond: impl FnMut() -> bool) {
    while !cond() {
        thread::yield_now();
    }
}

/// The record of a thread that published its number in `slot` (`INVALID_PROC` until then).
fn record(slot: &AtomicU32) -> Option<&'static Proc> {
    let n = slot.load(Ordering::SeqCst);
    (n != INVALID_PROC).then(|| Proc::by_number(n))
}

/// Whether `p` sleeps on its semaphore for an LWLock (past its queueing and re-check).
fn asleep_on_lock(p: &Proc) -> bool {
    p.wait_event() == WaitEvent::lwlock(Tranche::DEFAULT)
}

/// A WaitForVar `Free` answer, then the protected data is read without the lock: the holder
/// acquired before the waiter started and wrote the data under the lock, so `Free` must order
/// the read after that write (the documented synchronisation with the holder's release).
fn free_then_read() {
    let g = guarded();
    g.lock.acquire(Mode::Exclusive);
    let g2 = g.clone();
    let t = thread::spawn(move || {
        let answer = g2.lock.wait_for_var(&g2.var, 0);
        assert_eq!(answer, VarWait::Free, "the variable never changed");
        // SAFETY: a Free answer synchronises with the exclusive holder's release (the model
        // checks it); nobody writes after that release.
        let seen = unsafe { g2.data.read(|d| *d) };
        assert_eq!(seen, 1, "a Free answer came before the holder's release");
    });
    // SAFETY: held exclusively, taken above.
    unsafe { g.data.write(|d| *d = 1) };
    // SAFETY: held exclusively, taken above.
    unsafe { g.lock.release(Mode::Exclusive) };
    t.join().unwrap();
}

models::loom_model! {
    /// A WaitForVar `Free` answer orders the caller after the holder's release: reading the data it wrote is no race.
    var_free_reads_data, threads: 2, bound: Some(4), free_then_read
}

/// Acquire-or-wait with a foreign post already on the waiter's semaphore (a wakeup meant for
/// another protocol): the waiter's first `sem.lock` returns at once, and only the waker's
/// Release on `NOT_WAITING` orders a `Waited` return after the holder's critical section. The
/// waiter then reads the holder's data and, as a second operation on its recycled record, takes
/// the lock itself.
fn waited_with_foreign_post() {
    let g = guarded();
    g.lock.acquire(Mode::Exclusive);
    let g2 = g.clone();
    let t = thread::spawn(move || {
        let me = Proc::current();
        me.sem().unlock(); // the foreign post
        match g2.lock.acquire_or_wait(Mode::Exclusive) {
            AcquireOrWait::Acquired => {
                // SAFETY: held exclusively.
                let seen = unsafe { g2.data.read(|d| *d) };
                assert_eq!(seen, 1, "acquired before the holder released");
                // SAFETY: held exclusively, taken above.
                unsafe { g2.lock.release(Mode::Exclusive) };
            }
            AcquireOrWait::Waited => {
                // SAFETY: `Waited` returns after the holder's release, ordered by the waker's
                // Release on NOT_WAITING (the model checks it); nobody writes after that.
                let seen = unsafe { g2.data.read(|d| *d) };
                assert_eq!(seen, 1, "Waited returned before the holder's release");
            }
        }
        // The second operation: the record queued above is used again.
        g2.lock.acquire(Mode::Exclusive);
        // SAFETY: held exclusively.
        unsafe { g2.data.write(|d| *d += 1) };
        // SAFETY: held exclusively, taken above.
        unsafe { g2.lock.release(Mode::Exclusive) };
        me.number()
    });
    // SAFETY: held exclusively, taken above.
    unsafe { g.data.write(|d| *d = 1) };
    // SAFETY: held exclusively, taken above.
    unsafe { g.lock.release(Mode::Exclusive) };
    let waiter = Proc::by_number(t.join().unwrap());
    // SAFETY: every other thread was joined.
    assert_eq!(unsafe { g.data.read(|d| *d) }, 2, "an update was lost");
    // Every post is accounted for: the foreign one (re-posted if absorbed) is left over, and a
    // waker's post that came after a wait ended early was consumed by nobody else.
    assert_eq!(waiter.sem().count(), 1, "a post was lost or invented");
}

models::loom_model! {
    /// Acquire-or-wait with a foreign post on the waiter's semaphore: `Waited` is still ordered after the holder's release (the Release on NOT_WAITING); the record is reused.
    aow_foreign_post, threads: 2, bound: Some(4), waited_with_foreign_post
}

/// The wake-latency bound of WaitForVar (e0d97d77bf): a release that frees the lock while a
/// var waiter sleeps on the wait list posts that waiter itself, even while a woken waiter has
/// not yet re-enabled wakeups (RELEASE_OK clear). A deadlock-only model cannot see a waiter that
/// is woken late, by the woken waiter's own later release: this one asserts, right after the
/// release, that the var waiter is no longer queued.
///
/// H holds exclusively; X queues for the lock shared; H releases (waking X, which clears
/// RELEASE_OK) and at once takes the lock back conditionally (barging ahead of X); V waits for
/// the variable and falls asleep; H releases again and checks that V was taken off the list. X
/// is a shared waiter so that, once woken, it never holds the lock exclusively: V's answer is
/// `Free` and V never queues again, so "queued after H's release" can only mean "not woken".
fn var_wake_bound() {
    let g = guarded();
    g.lock.acquire(Mode::Exclusive);
    let (x_slot, v_slot) = (
        Arc::new(AtomicU32::new(INVALID_PROC)),
        Arc::new(AtomicU32::new(INVALID_PROC)),
    );
    let (g2, slot) = (g.clone(), x_slot.clone());
    let x = thread::spawn(move || {
        slot.store(Proc::current().number(), Ordering::SeqCst);
        g2.lock.acquire(Mode::Shared);
        // SAFETY: held shared, taken above.
        unsafe { g2.lock.release(Mode::Shared) };
    });
    await_model(|| record(&x_slot).is_some_and(asleep_on_lock));
    // SAFETY: held exclusively, taken above.
    unsafe { g.lock.release(Mode::Exclusive) };
    if !g.lock.conditional_acquire(Mode::Exclusive) {
        // X got the lock first: no woken waiter is pending, nothing to bound.
        x.join().unwrap();
        return;
    }
    let (g3, slot) = (g.clone(), v_slot.clone());
    let v = thread::spawn(move || {
        slot.store(Proc::current().number(), Ordering::SeqCst);
        let answer = g3.lock.wait_for_var(&g3.var, 0);
        assert_eq!(answer, VarWait::Free, "the variable never changed");
    });
    let v_rec = loop {
        if let Some(p) = record(&v_slot) {
            break p;
        }
        thread::yield_now();
    };
    await_model(|| asleep_on_lock(v_rec));
    // SAFETY: held exclusively, taken above.
    unsafe { g.lock.release(Mode::Exclusive) };
    assert!(
        !probe::is_queued(v_rec),
        "a release freed the lock with a var waiter queued and did not post it"
    );
    x.join().unwrap();
    v.join().unwrap();
}

models::loom_model! {
    /// WaitForVar wake latency: a release that frees the lock with a var waiter asleep posts it at once, even while a woken waiter has wakeups inhibited.
    var_wake_bound3, threads: 3, bound: Some(2), var_wake_bound
}

/// Two WaitForVar operations by one thread, the second on the record the first just left: H
/// holds exclusively with X queued behind it (exclusive); V waits for the variable (queued at the
/// head); H's UpdateVar wakes V, which answers `Changed` and at once waits again, queueing its
/// record in front of X while H may still be in its wake pass. The waker's last access to V's
/// links must come before V can see NOT_WAITING (invariant 5), or it unlinks V's new queue entry
/// from its own detached list and corrupts the lock's list.
fn var_requeue() {
    let g = guarded();
    g.lock.acquire(Mode::Exclusive);
    let (x_slot, v_slot) = (
        Arc::new(AtomicU32::new(INVALID_PROC)),
        Arc::new(AtomicU32::new(INVALID_PROC)),
    );
    let (g2, slot) = (g.clone(), x_slot.clone());
    let x = thread::spawn(move || {
        slot.store(Proc::current().number(), Ordering::SeqCst);
        g2.lock.acquire(Mode::Exclusive);
        // SAFETY: held exclusively.
        unsafe { g2.data.write(|d| *d += 1) };
        // SAFETY: held exclusively, taken above.
        unsafe { g2.lock.release(Mode::Exclusive) };
    });
    await_model(|| record(&x_slot).is_some_and(asleep_on_lock));
    let (g3, slot) = (g.clone(), v_slot.clone());
    let v = thread::spawn(move || {
        slot.store(Proc::current().number(), Ordering::SeqCst);
        // `Changed(1)` if it re-checked while H still held the lock, else `Free`.
        let first = g3.lock.wait_for_var(&g3.var, 0);
        assert!(
            matches!(first, VarWait::Changed(1) | VarWait::Free),
            "the update was missed: {first:?}"
        );
        let second = g3.lock.wait_for_var(&g3.var, 1);
        assert_eq!(second, VarWait::Free, "the variable changed twice");
    });
    await_model(|| record(&v_slot).is_some_and(asleep_on_lock));
    // SAFETY: held exclusively, taken above.
    unsafe { g.lock.update_var(&g.var, 1) };
    // SAFETY: held exclusively, taken above.
    unsafe { g.data.write(|d| *d += 1) };
    // SAFETY: held exclusively, taken above.
    unsafe { g.lock.release(Mode::Exclusive) };
    x.join().unwrap();
    v.join().unwrap();
    // SAFETY: every other thread was joined.
    assert_eq!(unsafe { g.data.read(|d| *d) }, 2, "an update was lost");
    assert!(!g.lock.is_locked(), "lock still held at the end");
    assert!(
        g.lock.conditional_acquire(Mode::Exclusive),
        "the lock does not work any more"
    );
}

models::loom_model! {
    /// A var waiter that waits twice re-queues its record while the waker may still be in its wake pass: the waker's last link access precedes NOT_WAITING, the list stays intact.
    var_requeue3, threads: 3, bound: Some(2), var_requeue
}

/// Two exclusive operations by one thread, the first of which may end in `LWLockDequeueSelf`:
/// H holds the lock; B's attempt fails; H releases before B has set HAS_WAITERS (so nobody
/// wakes B); B queues, its re-check takes the lock, and B takes itself off the list. Its record
/// must then read NOT_WAITING again (invariant 5): B asserts it after each operation, and B's
/// second acquire, which may have to queue behind H's second section, asserts it in
/// `queue_self`. The one-operation models cannot see a record left WAITING: nobody queues it
/// again.
fn dequeue_then_requeue() {
    let g = guarded();
    g.lock.acquire(Mode::Exclusive);
    let g2 = g.clone();
    let b = thread::spawn(move || {
        for _ in 0..2 {
            g2.lock.acquire(Mode::Exclusive);
            // SAFETY: held exclusively, taken above.
            unsafe { g2.data.write(|d| *d += 1) };
            // SAFETY: held exclusively, taken above.
            unsafe { g2.lock.release(Mode::Exclusive) };
            assert!(
                !probe::is_queued(Proc::current()),
                "a record that left the wait list still reads WAITING"
            );
        }
    });
    for section in 0..2 {
        if section > 0 {
            g.lock.acquire(Mode::Exclusive);
        }
        // SAFETY: held exclusively, taken above.
        unsafe { g.data.write(|d| *d += 1) };
        // SAFETY: held exclusively, taken above.
        unsafe { g.lock.release(Mode::Exclusive) };
    }
    b.join().unwrap();
    // SAFETY: every other thread was joined.
    assert_eq!(unsafe { g.data.read(|d| *d) }, 4, "an update was lost");
    assert!(!g.lock.is_locked(), "lock still held at the end");
}

models::loom_model! {
    /// DequeueSelf resets the record: a thread whose re-check took the lock after it queued leaves the list NOT_WAITING, and its next operation may queue again.
    dequeue_then_requeue2, threads: 2, bound: Some(4), dequeue_then_requeue
}

#[cfg(lwlock_mutant = "runtime")]
mod mutants {
    use models::mutants::{expect_caught, Failure};
    use std::time::Duration;

    const T: Duration = Duration::from_secs(120);

    /// Sleeping without the re-check after queueing loses the wakeup of a release in between.
    #[test]
    fn mutant_atomic_no_recheck() {
        expect_caught(
            "exclusive_exclusive",
            "atomic_no_recheck",
            Failure::Deadlock,
            T,
        );
    }

    /// Queueing without HAS_WAITERS: releasers never wake anyone.
    #[test]
    fn mutant_atomic_no_has_waiters() {
        expect_caught(
            "exclusive_exclusive",
            "atomic_no_has_waiters",
            Failure::Deadlock,
            T,
        );
    }

    /// A Relaxed unlock does not order the next holder after the critical section.
    #[test]
    fn mutant_atomic_relaxed_release() {
        expect_caught(
            "exclusive_exclusive",
            "atomic_relaxed_release",
            Failure::Race,
            T,
        );
    }

    /// A woken waiter that never re-enables RELEASE_OK inhibits every later wakeup.
    #[test]
    fn mutant_atomic_no_release_ok_reset() {
        expect_caught(
            "exclusive_exclusive",
            "atomic_no_release_ok_reset",
            Failure::Deadlock,
            T,
        );
    }

    /// Acquire-or-wait sleeping without the re-check loses the wakeup.
    #[test]
    fn mutant_aow_no_recheck() {
        expect_caught("acquire_or_wait", "aow_no_recheck", Failure::Deadlock, T);
    }

    /// A Relaxed UpdateVar publishes the value without the write it covers.
    #[test]
    fn mutant_var_relaxed_update() {
        expect_caught("wait_for_var", "var_relaxed_update", Failure::Race, T);
    }

    /// A Relaxed state load in the conflict check: a Free answer that orders nothing.
    #[test]
    fn mutant_var_free_relaxed() {
        expect_caught("var_free_reads_data", "var_free_relaxed", Failure::Race, T);
    }

    /// A Relaxed NOT_WAITING store: a waiter that woke on a foreign post is not ordered after
    /// the holder.
    #[test]
    fn mutant_wake_relaxed_not_waiting() {
        expect_caught(
            "aow_foreign_post",
            "wake_relaxed_not_waiting",
            Failure::Race,
            T,
        );
    }

    /// NOT_WAITING and the post before the unlink: a woken waiter that queues again at once has
    /// its new links used by the waker's unlink.
    #[test]
    fn mutant_wake_before_unlink() {
        expect_caught("var_requeue3", "wake_before_unlink", Failure::Deadlock, T);
    }

    /// WaitForVar without forcing RELEASE_OK: the waiter is woken late, not by the release.
    #[test]
    fn mutant_var_no_release_ok() {
        expect_caught(
            "var_wake_bound3",
            "var_no_release_ok",
            Failure::Assertion("did not post it"),
            T,
        );
    }
}
