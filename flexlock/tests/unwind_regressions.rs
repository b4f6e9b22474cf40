//! Regression tests for unwinds in the middle of a group protocol: each reproduces one bug found
//! in review (a use-after-free under `GroupPolicy::LastReleaser`, a stranded group under
//! `GroupPolicy::Leader`, members left asleep by a release that unwinds) with a lock that panics at a
//! chosen call ([`lwlock::fault::FaultLock`]), deterministically, and checks the fixed behaviour:
//! the protocol completes for everyone else, the thread whose lock call unwound gets that panic,
//! no operation runs twice, and the lock works afterwards.

mod common;

use common::{wait_for, wait_up_to, watchdog};
use flexlock::{ClogGroupLock, FlexLock, GroupLock, GroupPolicy};
use lwlock::fault::{FaultLock, FaultPoint, InjectedFault};
use lwlock::{Proc, RawAtomicLwLock, RawClassicLwLock, RawLwLock};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Weak};
use std::time::Duration;

type Faulty = FaultLock<RawAtomicLwLock>;

fn injected(err: &Box<dyn std::any::Any + Send>) -> InjectedFault {
    lwlock::fault::quiet_injected_panics();
    *err.downcast_ref::<InjectedFault>()
        .unwrap_or_else(|| panic!("expected an injected fault, got another panic"))
}

/// Waits until a record other than `me` heads the group list: another member has pushed.
fn wait_for_second_member<L: RawLwLock, T>(lock: &Weak<FlexLock<L, T>>, me: u32) {
    wait_for("a second group member", || {
        lock.upgrade()
            .is_some_and(|l| l.group_head().is_some_and(|h| h != me))
    });
}

/// LastReleaser: the submitter's re-check (`conditional_acquire` after the push) unwinds while
/// the lock is held elsewhere. Before the fix the submitter returned at once, its stack frame
/// gone while its operation stayed queued; the holder's release then ran the operation through a
/// dangling pointer. Now the submitter stays until its operation ran, then gets the panic.
#[test]
fn last_releaser_recheck_unwind_does_not_free_a_queued_op() {
    let _w = watchdog("last_releaser_recheck_unwind", 60);
    let lock = Arc::new(FlexLock::<Faulty, Vec<u32>>::new(
        vec![0],
        GroupPolicy::LastReleaser,
    ));
    let held = lock.write();
    // Conditional call 1: the submitter's direct attempt (fails, the lock is held). Call 2: the
    // re-check after the push.
    lock.raw().arm(FaultPoint::ConditionalAcquire, 2);
    let l2 = lock.clone();
    let submitter = std::thread::spawn(move || {
        catch_unwind(AssertUnwindSafe(|| {
            l2.group(|v| {
                v[0] += 1;
                7
            })
        }))
    });
    wait_for("the injected fault", || lock.raw().fired() == 1);
    if wait_up_to(Duration::from_millis(200), || submitter.is_finished()) {
        // The bug: releasing now would run the operation on a dead stack. Do not.
        std::mem::forget(held);
        panic!("the submitter returned while its operation was still queued (use after free)");
    }
    drop(held); // drains the queue: runs the submitter's operation
    let err = submitter
        .join()
        .unwrap()
        .expect_err("the re-check's panic reaches the submitter");
    assert_eq!(injected(&err).point, FaultPoint::ConditionalAcquire);
    assert_eq!(lock.read()[0], 1, "the queued operation ran exactly once");
    assert_eq!(lock.group(|v| v[0]), 1, "the lock works afterwards");
    assert!(!lock.raw().is_locked());
    assert_eq!(lock.group_head(), None);
}

/// Leader: the leader's `acquire` unwinds after a follower joined its group. Before the fix the
/// follower slept forever behind a leader that was gone, and the leader's record kept
/// `member = true`, so its next group call panicked as "nested". Now the follower is handed the
/// group and serves it; the leader gets the panic, its own operation not run.
#[test]
fn leader_acquire_unwind_hands_the_group_over() {
    let _w = watchdog("leader_acquire_unwind", 60);
    let lock = Arc::new(FlexLock::<Faulty, Vec<u32>>::new(
        vec![0, 0],
        GroupPolicy::Leader,
    ));
    let held = lock.write(); // acquire call 1
    let weak = Arc::downgrade(&lock);
    // Acquire call 2: the leader's; it panics once the follower has pushed behind it.
    lock.raw().arm_with(FaultPoint::Acquire, 2, move || {
        wait_for_second_member(&weak, Proc::current().number())
    });
    let l2 = lock.clone();
    let leader = std::thread::spawn(move || {
        let first = catch_unwind(AssertUnwindSafe(|| l2.group(|v| v[0] += 1)));
        // The same thread's next group call must work (not "nested").
        let again = catch_unwind(AssertUnwindSafe(|| l2.group(|v| v[0] += 10)));
        (first, again)
    });
    wait_for("the leader to be queued", || lock.group_head().is_some());
    let l3 = lock.clone();
    let follower = std::thread::spawn(move || l3.group(|v| v[1] += 1));
    wait_for("the injected fault", || lock.raw().fired() == 1);
    drop(held);
    assert!(
        wait_up_to(Duration::from_secs(10), || follower.is_finished()),
        "the follower was stranded behind a leader that unwound"
    );
    follower.join().unwrap();
    let (first, again) = leader.join().unwrap();
    assert_eq!(
        injected(&first.expect_err("the leader gets its acquire's panic")).point,
        FaultPoint::Acquire
    );
    again.expect("a second group call after the unwind is not refused as nested");
    assert_eq!(
        *lock.read(),
        vec![10, 1],
        "the leader's first op did not run; the rest did, once"
    );
    assert!(!lock.raw().is_locked());
    assert_eq!(lock.group_head(), None);
}

/// Leader: the release after the group ran unwinds. Before the fix the leader unwound before
/// waking its members, which slept forever although their operations had run. Now they are woken
/// with their results and the leader gets the panic.
#[test]
fn leader_release_unwind_still_wakes_the_members() {
    let _w = watchdog("leader_release_unwind", 60);
    let lock = Arc::new(FlexLock::<Faulty, Vec<u32>>::new(
        vec![0, 0],
        GroupPolicy::Leader,
    ));
    let held = lock.write();
    // Release call 1 is `held`'s; call 2 is the leader's, after serving the group.
    lock.raw().arm(FaultPoint::Release, 2);
    let l2 = lock.clone();
    let leader =
        std::thread::spawn(move || catch_unwind(AssertUnwindSafe(|| l2.group(|v| v[0] += 1))));
    wait_for("the leader to be queued", || lock.group_head().is_some());
    let first = lock.group_head().unwrap();
    let l3 = lock.clone();
    let follower = std::thread::spawn(move || {
        l3.group(|v| {
            v[1] += 1;
            "mine"
        })
    });
    wait_for("the follower to join", || lock.group_head() != Some(first));
    drop(held);
    assert!(
        wait_up_to(Duration::from_secs(10), || follower.is_finished()),
        "a member was left asleep by a release that unwound"
    );
    assert_eq!(follower.join().unwrap(), "mine");
    let err = leader
        .join()
        .unwrap()
        .expect_err("the leader gets its release's panic");
    assert_eq!(injected(&err).point, FaultPoint::Release);
    assert_eq!(*lock.read(), vec![1, 1], "both operations ran once");
    assert!(!lock.raw().is_locked());
}

/// LastReleaser: the release inside a drain (an exclusive guard's drop that serves the queue)
/// unwinds. The queued submitter must still be woken with its result.
#[test]
fn last_releaser_drain_release_unwind_still_wakes_the_submitter() {
    let _w = watchdog("last_releaser_drain_release_unwind", 60);
    let lock = Arc::new(FlexLock::<Faulty, Vec<u32>>::new(
        vec![0],
        GroupPolicy::LastReleaser,
    ));
    let held = lock.write();
    lock.raw().arm(FaultPoint::Release, 1);
    let l2 = lock.clone();
    let submitter = std::thread::spawn(move || {
        l2.group(|v| {
            v[0] += 1;
            v[0]
        })
    });
    wait_for("the submitter to queue", || lock.group_head().is_some());
    // Let its re-check fail against our hold before we release.
    wait_for("the re-check", || {
        lock.raw().calls(FaultPoint::ConditionalAcquire) >= 2
    });
    let err = catch_unwind(AssertUnwindSafe(|| drop(held))).expect_err("the release panics");
    assert_eq!(injected(&err).point, FaultPoint::Release);
    assert!(
        wait_up_to(Duration::from_secs(10), || submitter.is_finished()),
        "the submitter was left asleep by a release that unwound"
    );
    assert_eq!(submitter.join().unwrap(), 1);
    assert!(!lock.raw().is_locked());
    assert_eq!(lock.group(|v| v[0]), 1);
}

/// The clog group update: as the leader case, with a key.
#[test]
fn clog_leader_acquire_unwind_hands_the_group_over() {
    let _w = watchdog("clog_leader_acquire_unwind", 60);
    let lock = Arc::new(ClogGroupLock::<Faulty, Vec<u32>>::new(vec![0, 0]));
    let held = lock.write();
    let weak = Arc::downgrade(&lock);
    lock.raw().arm_with(FaultPoint::Acquire, 2, move || {
        let me = Proc::current().number();
        wait_for("a second clog member", || {
            weak.upgrade()
                .is_some_and(|l| l.group_head().is_some_and(|h| h != me))
        })
    });
    let l2 = lock.clone();
    let leader =
        std::thread::spawn(move || catch_unwind(AssertUnwindSafe(|| l2.update(3, |v| v[0] += 1))));
    wait_for("the leader to be queued", || lock.group_head().is_some());
    let l3 = lock.clone();
    let follower = std::thread::spawn(move || l3.update(3, |v| v[1] += 1));
    wait_for("the injected fault", || lock.raw().fired() == 1);
    drop(held);
    assert!(
        wait_up_to(Duration::from_secs(10), || follower.is_finished()),
        "the clog follower was stranded"
    );
    follower.join().unwrap();
    assert!(leader.join().unwrap().is_err());
    assert_eq!(*lock.read(), vec![0, 1]);
    assert_eq!(lock.update(3, |v| v[0]), 0, "the lock works afterwards");
}

/// The classic lock's acquire works for a thread whose wait record is registered during a
/// contended acquire, and a registration that panics leaves the lock usable (it used to run with
/// the lock's spinlock held).
#[test]
fn classic_contended_first_use_registration_failure_leaves_the_lock_usable() {
    let _w = watchdog("classic_registration", 60);
    let lock = Arc::new(RawClassicLwLock::new());
    assert!(lock.acquire(lwlock::Mode::Exclusive));
    let l2 = lock.clone();
    let unwound = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let u2 = unwound.clone();
    let t = std::thread::spawn(move || {
        lwlock::fault::fail_next_registration();
        let first = catch_unwind(AssertUnwindSafe(|| l2.acquire(lwlock::Mode::Shared)));
        u2.store(true, std::sync::atomic::Ordering::Release);
        assert!(first.is_err(), "the injected registration fault unwinds");
        // The next attempt registers and waits normally.
        l2.acquire(lwlock::Mode::Shared);
        // SAFETY: held shared by this thread.
        unsafe { l2.release(lwlock::Mode::Shared) };
    });
    // Held until the contended attempt has unwound (a fixed sleep let a late thread find the
    // lock free, acquire without registering, and fail the first assertion).
    while !unwound.load(std::sync::atomic::Ordering::Acquire) && !t.is_finished() {
        std::thread::sleep(Duration::from_millis(1));
    }
    // SAFETY: held exclusively by this thread (before the fix this spun on a spinlock held by
    // the unwound thread forever).
    unsafe { lock.release(lwlock::Mode::Exclusive) };
    t.join().unwrap();
    assert!(!lock.is_locked());
}

/// A failed `try_read` must not release a hold it never took (found by lwtorture: the guard was
/// built, and dropped, even when the shared acquire failed, corrupting the lock's state).
#[test]
fn failed_try_read_releases_nothing() {
    for policy in [GroupPolicy::Leader, GroupPolicy::LastReleaser] {
        let lock = FlexLock::<RawAtomicLwLock, u32>::new(0, policy);
        let w = lock.write();
        assert!(lock.try_read().is_none());
        assert!(
            lock.raw().is_locked_exclusive(),
            "the writer still holds it"
        );
        drop(w);
        assert!(!lock.raw().is_locked());
        let r = lock.try_read().expect("free: try_read succeeds");
        assert!(lock.try_write().is_none());
        drop(r);
        assert!(!lock.raw().is_locked());
    }
}

/// Spawns `f` on a thread that first reports its wait-record number.
fn spawn_numbered<R: Send + 'static>(
    f: impl FnOnce() -> R + Send + 'static,
) -> (u32, std::thread::JoinHandle<R>) {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        tx.send(Proc::current().number()).unwrap();
        f()
    });
    (rx.recv().unwrap(), h)
}

fn bounded(policy: GroupPolicy, max_group: usize) -> flexlock::FlexConfig {
    flexlock::FlexConfig {
        max_group,
        ..flexlock::FlexConfig::new(policy)
    }
}

/// A handover target whose `acquire` unwinds (max_group 1: the leader serves itself and hands
/// the rest of its chain to the next member). The target leaves the chain, its operation not
/// run, and hands the rest on; under LastReleaser, with nothing left to hand on, it re-checks
/// the queue instead. Both policies, with and without a rest behind the target.
#[test]
fn handover_target_acquire_unwind_hands_the_rest_on() {
    let _w = watchdog("handover_target_acquire_unwind", 120);
    lwlock::fault::quiet_injected_panics();
    for policy in [GroupPolicy::Leader, GroupPolicy::LastReleaser] {
        for members in [2usize, 3] {
            let lock = Arc::new(FlexLock::<Faulty, Vec<u32>>::with_config(
                vec![0; members],
                bounded(policy, 1),
            ));
            let held = lock.write(); // acquire call 1
                                     // Leader: call 2 is the leader's own acquire, call 3 the handover target's.
                                     // LastReleaser: the holder's release drains; call 2 is the handover target's.
            let target_call = if policy == GroupPolicy::Leader { 3 } else { 2 };
            lock.raw().arm(FaultPoint::Acquire, target_call);
            let mut handles = Vec::new();
            let mut last = None;
            for i in 0..members {
                let l = lock.clone();
                let (n, h) = spawn_numbered(move || {
                    catch_unwind(AssertUnwindSafe(|| l.group(move |v| v[i] += 1)))
                });
                wait_for("the member to be queued", || lock.group_head() == Some(n));
                if policy == GroupPolicy::LastReleaser {
                    // Its re-check must have failed against `held` before the next one queues.
                    let want = 2 * (i as u64 + 1);
                    wait_for("the re-check", || {
                        lock.raw().calls(FaultPoint::ConditionalAcquire) >= want
                    });
                }
                last = Some(n);
                handles.push(h);
            }
            assert!(last.is_some());
            drop(held);
            let outcomes: Vec<_> = handles
                .into_iter()
                .map(|h| {
                    assert!(
                        wait_up_to(Duration::from_secs(10), || h.is_finished()),
                        "hang"
                    );
                    h.join().unwrap()
                })
                .collect();
            let ctx = format!("{policy:?}, {members} members");
            assert!(outcomes[0].is_ok(), "{ctx}: the first member is served");
            let err = outcomes[1]
                .as_ref()
                .expect_err("the handover target gets its panic");
            assert_eq!(injected(err).point, FaultPoint::Acquire, "{ctx}");
            if members == 3 {
                assert!(
                    outcomes[2].is_ok(),
                    "{ctx}: the rest was handed on and served"
                );
            }
            let mut want = vec![1; members];
            want[1] = 0;
            assert_eq!(
                *lock.read(),
                want,
                "{ctx}: the target's op did not run, the rest once"
            );
            assert!(
                !lock.raw().is_locked() && lock.group_head().is_none(),
                "{ctx}"
            );
            assert_eq!(lock.group(|v| v[0]), 1, "{ctx}: the lock works afterwards");
        }
    }
}

/// LastReleaser, max_group 1: the holder's release drains the chain `A, T`, runs A's operation
/// (its share) and hands the rest, T, over; T's `acquire` unwinds, with nothing behind it on the
/// chain. Meanwhile a late submitter L pushed onto the queue while the drainer still held the
/// lock (a pause at the drainer's release), so L's own re-check failed and L sleeps; the
/// drainer, having handed over, never looks at the queue again. The only thread left to find
/// L's operation is T, on its unwind path: with no rest to hand on it must do the releaser half
/// of the handshake (fence, load the head, take the lock, drain). Checked: L's operation ran
/// exactly once, on T's thread; T gets its panic, its operation not run; the lock is free.
///
/// Kills the patched mutant `p_handover_unwind_no_recheck` of `ci/mutation.list` (the target
/// that unwound leaves without that re-check: L is stranded while the lock is free).
#[test]
fn handover_target_acquire_unwind_finds_a_late_push() {
    use std::sync::Mutex;
    type Late = std::thread::JoinHandle<std::thread::Result<u32>>;
    let _w = watchdog("handover_target_acquire_unwind_late_push", 60);
    lwlock::fault::quiet_injected_panics();
    let lock = Arc::new(FlexLock::<Faulty, Vec<u32>>::with_config(
        vec![0; 3],
        bounded(GroupPolicy::LastReleaser, 1),
    ));
    let held = lock.write(); // acquire call 1
    lock.raw().arm(FaultPoint::Acquire, 2); // the handover target's
    let mut handles = Vec::new();
    let mut records = Vec::new();
    for i in 0..2usize {
        let l = lock.clone();
        let (n, h) = spawn_numbered(move || {
            catch_unwind(AssertUnwindSafe(|| {
                l.group(move |v| {
                    v[i] += 1;
                    Proc::current().number()
                })
            }))
        });
        wait_for("the member to be queued", || lock.group_head() == Some(n));
        let want = 2 * (i as u64 + 1);
        wait_for("the re-check", || {
            lock.raw().calls(FaultPoint::ConditionalAcquire) >= want
        });
        records.push(n);
        handles.push(h);
    }
    // Release call 1 is the drainer's (`held`'s drop), made while it still holds the lock.
    let late: Arc<Mutex<Option<(u32, Late)>>> = Arc::default();
    let (weak, slot) = (Arc::downgrade(&lock), late.clone());
    lock.raw().pause_at(FaultPoint::Release, 1, move || {
        let lock = weak.upgrade().expect("the test holds the lock");
        let l = lock.clone();
        let (n, h) = spawn_numbered(move || {
            catch_unwind(AssertUnwindSafe(|| {
                l.group(|v| {
                    v[2] += 1;
                    Proc::current().number()
                })
            }))
        });
        wait_for("the late submitter to queue", || {
            lock.group_head() == Some(n)
        });
        wait_for("the late submitter's re-check", || {
            lock.raw().calls(FaultPoint::ConditionalAcquire) >= 6
        });
        *slot.lock().unwrap() = Some((n, h));
    });
    drop(held);
    let (late_record, late_handle) = late.lock().unwrap().take().expect("the late push was made");
    handles.push(late_handle);
    let outcomes: Vec<_> = handles
        .into_iter()
        .map(|h| {
            assert!(
                wait_up_to(Duration::from_secs(10), || h.is_finished()),
                "hang: the late operation was stranded while the lock is free"
            );
            h.join().unwrap()
        })
        .collect();
    assert!(outcomes[0].is_ok(), "the first member is served");
    let err = outcomes[1]
        .as_ref()
        .expect_err("the handover target gets its panic");
    assert_eq!(injected(err).point, FaultPoint::Acquire);
    let ran_by = *outcomes[2].as_ref().expect("the late submitter is served");
    assert_eq!(
        ran_by, records[1],
        "the late operation (submitter {late_record}) was run by the handover target's re-check"
    );
    assert_eq!(
        *lock.read(),
        vec![1, 0, 1],
        "the target's op did not run, the others once"
    );
    assert!(!lock.raw().is_locked() && lock.group_head().is_none());
    assert_eq!(lock.group(|v| v[0]), 1, "the lock works afterwards");
}
