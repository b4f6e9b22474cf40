//! loom models of the group protocols: the FlexLock under its leader and last-releaser policies,
//! and the CLOG group update's key rule. Each submitted operation records that it ran, so the
//! models check: every operation runs exactly once, each submitter gets its own result, no
//! submitter returns before its operation was applied, and a shared reader never overlaps a
//! group (the value lives in loom's `UnsafeCell`, so an overlap is reported as a race). Only one
//! read guard is ever live at a time: the guards' `Deref` registers a loom *write* access, so two
//! concurrent readers would be reported as a (false) race.
//!
//! The *fault models* (`flex_*_unwinds*`) wrap the lock in [`FaultLock`], which makes one chosen
//! call of a lock method panic, and check that the group protocol completes for every other
//! member when the wrapped lock unwinds (flexlock's "Unwinding" table).
#![cfg(loom)]

use flexlock::{ClogGroupLock, FlexLock, GroupLock, GroupPolicy};
use lwlock::fault::{quiet_injected_panics, FaultLock, FaultPoint, InjectedFault};
use lwlock::sync::{thread, Ordering};
use lwlock::{Proc, RawAtomicLwLock, RawLwLock};
use models::{Outcome, Protected};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// The protected value: a pair changed together, and which submitter's operation has run.
#[derive(Debug, Default)]
struct Data {
    a: u64,
    b: u64,
    applied: [u8; 3],
}

type Flex = FlexLock<RawAtomicLwLock, Data>;

/// Submits `me`'s operation and checks what comes back. The operation also writes a cell owned by
/// the submitter, which the submitter reads after `group` returned: if it returned before its
/// operation was applied (on whichever thread ran it), loom reports the unordered accesses.
/// Returns whether another thread ran the operation (the submitter waited for it as a member).
fn submit(lock: &Flex, me: usize) -> bool {
    let submitter = thread::current().id();
    let done = Arc::new(Protected::new(0u64));
    let cell = done.clone();
    let (who, seq, by_other) = lock.group(move |d: &mut Data| {
        d.applied[me] += 1;
        assert_eq!(d.applied[me], 1, "operation {me} ran twice");
        d.a += 1;
        d.b += 1;
        // SAFETY: only this operation writes the cell, and the submitter reads it only after
        // `group` returned, which must be after this operation ran.
        unsafe { cell.write(|x| *x = d.a) };
        (me, d.a, thread::current().id() != submitter)
    });
    assert_eq!(who, me, "a submitter got another operation's result");
    // SAFETY: see above; the model checks that the operation's write happens-before this read.
    let seen = unsafe { done.read(|x| *x) };
    assert_eq!(seen, seq, "group returned before its operation was applied");
    by_other
}

/// A reader: never overlaps a group (loom race check) and sees the pair equal.
fn read(lock: &Flex) {
    let g = lock.read();
    assert_eq!(g.a, g.b, "a reader saw a half-applied group");
}

/// A writer through the exclusive guard (under LastReleaser its release drains the queue).
fn write(lock: &Flex) {
    let mut g = lock.write();
    g.a += 1;
    g.b += 1;
}

fn finish(lock: &Flex, submitters: usize, writes: u64) {
    let g = lock.read();
    for me in 0..submitters {
        assert_eq!(g.applied[me], 1, "operation {me} never ran");
    }
    assert_eq!(g.a, submitters as u64 + writes, "an update was lost");
    drop(g);
    assert_eq!(lock.group_head(), None, "operations left queued");
}

/// Two submitters, the lock held by the first when the second arrives: the second queues (and
/// under the leader policy leads), and the first may join its group after releasing. Without
/// the initial hold a group of two cannot form with two threads (a member only queues while
/// someone else holds the lock).
fn two_submitters(policy: GroupPolicy) {
    let lock = Arc::new(Flex::new(Data::default(), policy));
    let mut g = lock.write();
    g.a += 1;
    g.b += 1;
    let l = lock.clone();
    let t = thread::spawn(move || submit(&l, 1));
    drop(g);
    submit(&lock, 0);
    t.join().unwrap();
    finish(&lock, 2, 1);
}

fn two_submitters_and(policy: GroupPolicy, other: fn(&Flex), writes: u64) {
    let lock = Arc::new(Flex::new(Data::default(), policy));
    let (l1, l2) = (lock.clone(), lock.clone());
    let a = thread::spawn(move || submit(&l1, 1));
    let b = thread::spawn(move || other(&l2));
    submit(&lock, 0);
    a.join().unwrap();
    b.join().unwrap();
    finish(&lock, 2, writes);
}

fn writer_and_submitter(policy: GroupPolicy) {
    let lock = Arc::new(Flex::new(Data::default(), policy));
    let l = lock.clone();
    let t = thread::spawn(move || write(&l));
    submit(&lock, 0);
    t.join().unwrap();
    finish(&lock, 1, 1);
}

models::loom_model! {
    /// Leader policy, two submitters: each op runs once, each gets its own result, none returns early.
    flex_leader2, threads: 2, bound: Some(4), || two_submitters(GroupPolicy::Leader)
}

models::loom_model! {
    /// Leader policy, two submitters and a reader: the reader never overlaps a group.
    flex_leader_reader3, threads: 3, bound: Some(3), || two_submitters_and(GroupPolicy::Leader, read, 0)
}

models::loom_model! {
    /// Last-releaser policy, two submitters: no operation is stranded (the queue-then-recheck).
    flex_last_releaser2, threads: 2, bound: Some(4), || two_submitters(GroupPolicy::LastReleaser)
}

models::loom_model! {
    /// Last-releaser policy, a writer and a submitter: the writer's release runs the queued op.
    flex_last_releaser_writer2, threads: 2, bound: Some(4), || writer_and_submitter(GroupPolicy::LastReleaser)
}

models::loom_model! {
    /// Last-releaser policy, two submitters and a writer: every op runs exactly once, none stranded.
    flex_last_releaser_writer3, threads: 3, bound: Some(2), || two_submitters_and(GroupPolicy::LastReleaser, write, 1)
}

/// CLOG group update: an operation on page `key` is only ever run by its own thread or by a
/// leader whose own page is `key` (the key rule of `TransactionGroupUpdateXidStatus`).
fn clog(keys: [u64; 2]) {
    let lock = Arc::new(ClogGroupLock::<RawAtomicLwLock, [u64; 2]>::new([0, 0]));
    let run = |lock: &ClogGroupLock<RawAtomicLwLock, [u64; 2]>, me: usize, key: u64| {
        let submitter = Proc::current().number();
        let r = lock.update(key, move |pages: &mut [u64; 2]| {
            let runner = Proc::current();
            if runner.number() != submitter {
                assert_eq!(
                    runner.group.key.load(Ordering::Relaxed),
                    key,
                    "an operation on another page joined the group"
                );
            }
            pages[me] += 1;
            me
        });
        assert_eq!(r, me, "a submitter got another operation's result");
    };
    // Held when the other thread arrives, so that it leads a group the first may try to join.
    let g = lock.write();
    let l = lock.clone();
    let t = thread::spawn(move || run(&l, 1, keys[1]));
    drop(g);
    run(&lock, 0, keys[0]);
    t.join().unwrap();
    assert_eq!(*lock.read(), [1, 1], "an update was lost or ran twice");
}

models::loom_model! {
    /// CLOG group update, two pages: a member never joins a group of another page.
    clog_key_rule2, threads: 2, bound: Some(4), || clog([1, 2])
}

models::loom_model! {
    /// CLOG group update, same page: both ops run once, each submitter gets its own result.
    clog_same_page2, threads: 2, bound: Some(4), || clog([1, 1])
}

// ---- blind-spot models: the member's sleep, a shared last releaser, a re-pushed record -------

/// Runs `body` with group members spinning `spins` times before they sleep (the production
/// count is 200: loom never lets a member spin that long while its server is busy, so without
/// this the member's sleep and the server's post are never explored).
fn with_spins(spins: u32, body: impl FnOnce()) {
    lwlock::sync::set_model_spin_limit(Some(spins));
    body();
    lwlock::sync::set_model_spin_limit(None);
}

models::loom_model! {
    /// Leader policy, members spin once: the member sleeps on its semaphore and the leader's post wakes it.
    flex_leader_sleep2, threads: 2, bound: Some(4), || with_spins(1, || two_submitters(GroupPolicy::Leader))
}

models::loom_model! {
    /// Last-releaser policy, members spin once: a queued submitter sleeps and its server's post wakes it.
    flex_last_releaser_sleep2, threads: 2, bound: Some(4), || with_spins(1, || two_submitters(GroupPolicy::LastReleaser))
}

/// Last-releaser policy: a shared reader holds the lock when a submitter arrives; the submitter
/// queues (its re-check fails: the reader holds), and the reader's release is the *last
/// releaser* that must run the queued operation (its release, fence, load of the queue head
/// against the submitter's push, fence, re-check). Members spin once, so the submitter sleeps.
fn reader_and_submitter() {
    let lock = Arc::new(Flex::new(Data::default(), GroupPolicy::LastReleaser));
    let g = lock.read();
    let l = lock.clone();
    let t = thread::spawn(move || submit(&l, 0));
    assert_eq!(g.a, g.b, "a reader saw a half-applied group");
    drop(g);
    t.join().unwrap();
    finish(&lock, 1, 0);
}

models::loom_model! {
    /// Last-releaser policy, a shared reader's release against a submitter's push: the queued operation is never stranded (the SeqCst fences).
    flex_last_releaser_reader2, threads: 2, bound: Some(4), || with_spins(1, reader_and_submitter)
}

/// Submits `me`'s `nth` operation (1-based) and checks it, like [`submit`].
fn submit_nth(lock: &Flex, me: usize, nth: u8) {
    let done = Arc::new(Protected::new(0u64));
    let cell = done.clone();
    let (who, seq) = lock.group(move |d: &mut Data| {
        d.applied[me] += 1;
        assert_eq!(
            d.applied[me], nth,
            "operation {me}.{nth} ran twice or out of turn"
        );
        d.a += 1;
        d.b += 1;
        // SAFETY: as in `submit`.
        unsafe { cell.write(|x| *x = d.a) };
        (me, d.a)
    });
    assert_eq!(who, me, "a submitter got another operation's result");
    // SAFETY: as in `submit`.
    let seen = unsafe { done.read(|x| *x) };
    assert_eq!(seen, seq, "group returned before its operation was applied");
}

/// Yields to the model until `cond` holds.
fn await_model(mut cond: impl FnMut() -> bool) {
    while !cond() {
        thread::yield_now();
    }
}

/// Leader policy, the re-push arranged: the main thread holds the lock while thread 2 pushes
/// (it leads) and then thread 1 (a member behind it); the main thread releases, waits until
/// the leader has detached the group, and submits its own operation, which queues (the leader
/// holds) and leads the next group. Thread 1, served and released by the first leader, submits
/// again at once: its record is pushed onto the main thread's group, possibly while the first
/// leader is still in the wake pass that released it. Whatever the first leader does to thread
/// 1's record after releasing it must not touch the new push (its group link).
fn repush3() {
    let lock = Arc::new(Flex::new(Data::default(), GroupPolicy::Leader));
    let g = lock.write();
    let slot = |n: &std::sync::Arc<lwlock::sync::AtomicU32>| n.load(Ordering::SeqCst);
    let (s1, s2) = (
        Arc::new(lwlock::sync::AtomicU32::new(lwlock::INVALID_PROC)),
        Arc::new(lwlock::sync::AtomicU32::new(lwlock::INVALID_PROC)),
    );
    let (l2, p2) = (lock.clone(), s2.clone());
    let b = thread::spawn(move || {
        p2.store(Proc::current().number(), Ordering::SeqCst);
        submit_nth(&l2, 2, 1);
    });
    await_model(|| slot(&s2) != lwlock::INVALID_PROC && lock.group_head() == Some(slot(&s2)));
    let (l1, p1) = (lock.clone(), s1.clone());
    let a = thread::spawn(move || {
        p1.store(Proc::current().number(), Ordering::SeqCst);
        submit_nth(&l1, 1, 1);
        submit_nth(&l1, 1, 2);
    });
    await_model(|| slot(&s1) != lwlock::INVALID_PROC && lock.group_head() == Some(slot(&s1)));
    drop(g);
    // The first leader detached its group (or everything is over already).
    await_model(|| lock.group_head().is_none());
    submit_nth(&lock, 0, 1);
    a.join().unwrap();
    b.join().unwrap();
    let g = lock.read();
    assert_eq!(g.applied, [1, 2, 1], "an operation never ran");
    assert_eq!(g.a, 4, "an update was lost");
    drop(g);
    assert_eq!(lock.group_head(), None, "operations left queued");
}

models::loom_model! {
    /// Leader policy, a served member pushes again onto the next group while its server may still be waking it: the server never touches the new push, no operation is lost.
    flex_leader_repush3, threads: 3, bound: Some(2), || with_spins(1, repush3)
}

/// Last-releaser policy, the drain's own handshake: the main thread holds the lock exclusively
/// while submitter 0 queues, so its release drains (`release_exclusive_drain`): it loads the
/// head, detaches and serves operation 0, releases, and then owes the queue the releaser half
/// of the handshake (SeqCst fence, load of the head). Submitter 1 starts once the drainer has
/// detached (the head is empty again), so its push lands after the drainer's in-hold check of
/// the queue, and possibly before the drainer's release: then its own re-check fails (the
/// drainer holds) and only the drainer's post-release load of the head can find it. Members
/// spin once, so a stranded submitter sleeps and the model reports a deadlock.
fn drainer_and_late_submitter() {
    let lock = Arc::new(Flex::new(Data::default(), GroupPolicy::LastReleaser));
    let g = lock.write();
    let l0 = lock.clone();
    let a = thread::spawn(move || submit(&l0, 0));
    await_model(|| lock.group_head().is_some());
    let l1 = lock.clone();
    let b = thread::spawn(move || {
        // Operation 0's record leaves the queue only by the drain's detach.
        await_model(|| l1.group_head().is_none());
        submit(&l1, 1);
    });
    drop(g);
    a.join().unwrap();
    b.join().unwrap();
    finish(&lock, 2, 0);
}

models::loom_model! {
    /// Last-releaser policy, a push between an exclusive drainer's detach and its release: the drainer's post-release fence and re-check find it, nothing is stranded.
    flex_last_releaser_drain3, threads: 3, bound: Some(3), || with_spins(1, drainer_and_late_submitter)
}

/// Executions of [`member_with_foreign_post`] in which the main thread's operation was run by
/// the other thread: it waited on its operation as a group member, with the foreign post on its
/// semaphore. Counted outside the model, checked after the exploration.
static SERVED_WITH_FOREIGN_POST: AtomicUsize = AtomicUsize::new(0);

/// Leader policy, as [`two_submitters`] with members spinning once, and with a *foreign post*
/// already on the main thread's semaphore when it submits: a wakeup meant for another protocol
/// (PostgreSQL's semaphores are shared by every protocol a backend takes part in, hence the
/// `extraWaits` idiom). When the main thread sleeps as a member, its first `sem.lock` returns at
/// once on that post, possibly after the leader's DONE swap and before the leader's own post: the
/// member's Acquire load of DONE is then all that orders the leader's run of the operation
/// before the member reads its result (the model's cell and the op's state). Checked too: every
/// post is accounted for (the foreign one re-posted if absorbed, the leader's consumed or left
/// over: one post on the record at the end).
fn member_with_foreign_post() {
    let lock = Arc::new(Flex::new(Data::default(), GroupPolicy::Leader));
    let mut g = lock.write();
    g.a += 1;
    g.b += 1;
    let l = lock.clone();
    let t = thread::spawn(move || submit(&l, 1));
    drop(g);
    let me = Proc::current();
    me.sem().unlock(); // the foreign post
    let served = submit(&lock, 0);
    t.join().unwrap();
    finish(&lock, 2, 1);
    assert_eq!(me.sem().count(), 1, "a post was lost or invented");
    if served {
        count(&SERVED_WITH_FOREIGN_POST);
    }
}

/// After the exploration: the interleaving of interest happened.
fn member_with_foreign_post_explored(outcome: Outcome) {
    let n = counted(&SERVED_WITH_FOREIGN_POST);
    eprintln!(
        "flex_leader_foreign_post2: of {} executions, {n} had the member with the foreign post \
         served by the leader",
        outcome.executions
    );
    assert!(
        n > 0,
        "no execution had the member with the foreign post served by the leader"
    );
}

models::loom_model! {
    /// Leader policy, a member woken by a foreign post on its semaphore: its Acquire load of DONE still orders the leader's run before its return; every post is accounted for.
    flex_leader_foreign_post2, threads: 2, bound: Some(4),
    || with_spins(1, member_with_foreign_post),
    then: member_with_foreign_post_explored
}

// ---- fault models ------------------------------------------------------------------------

/// The fault models' lock: the atomic LWLock (the smaller state of the two) behind a wrapper that
/// panics at a chosen call. The wrapper's call counters are plain std atomics: they add no state
/// and no scheduling point to the model (each execution builds a fresh lock, so they restart).
type Faulty = FlexLock<FaultLock<RawAtomicLwLock>, Data>;

/// How a fault model's `group` call ended.
#[derive(Clone, Copy, Debug)]
enum Ended {
    /// It returned its own operation's result (checked), which ran on another thread if
    /// `by_other`.
    Returned { by_other: bool },
    /// It unwound with the injected fault. `ran`: its operation had run by then (on another
    /// thread if `by_other`); the model checks that the run happened-before the unwind.
    Faulted {
        fault: InjectedFault,
        ran: bool,
        by_other: bool,
    },
}

/// Submits `me`'s operation to a fault-injected lock and reports how the call ended, with the
/// checks of [`submit`]: the operation runs at most once, a returned result is its own, and
/// whatever the operation wrote is visible when `group` returns *or unwinds* (the operation
/// writes a cell the submitter reads afterwards; loom reports the read if it is not ordered after
/// the write). Panics other than the injected fault are re-raised. With `record_reset`, a
/// submitter whose call unwound also checks that its wait record was left clean (not a group
/// member: its next group call would be refused as nested).
fn submit_faulty(lock: &Faulty, me: usize, record_reset: bool) -> Ended {
    let submitter = thread::current().id();
    let done = Arc::new(Protected::new((0u64, false)));
    let cell = done.clone();
    let r = catch_unwind(AssertUnwindSafe(|| {
        lock.group(move |d: &mut Data| {
            d.applied[me] += 1;
            assert_eq!(d.applied[me], 1, "operation {me} ran twice");
            d.a += 1;
            d.b += 1;
            let by_other = thread::current().id() != submitter;
            // SAFETY: only this operation writes the cell, and the submitter reads it only after
            // `group` returned or unwound, which must be after this operation ran.
            unsafe { cell.write(|x| *x = (d.a, by_other)) };
            (me, d.a)
        })
    }));
    // SAFETY: see above; the model checks that the operation's write happens-before this read.
    let (seen, by_other) = unsafe { done.read(|x| *x) };
    match r {
        Ok((who, seq)) => {
            assert_eq!(who, me, "a submitter got another operation's result");
            assert_eq!(seen, seq, "group returned before its operation was applied");
            Ended::Returned { by_other }
        }
        Err(payload) => match payload.downcast::<InjectedFault>() {
            Ok(fault) => {
                if record_reset {
                    assert!(
                        !Proc::current().group.member.load(Ordering::Relaxed),
                        "the record of a submitter whose lock call unwound is still a group member"
                    );
                }
                Ended::Faulted {
                    fault: *fault,
                    ran: seen != 0,
                    by_other,
                }
            }
            Err(other) => resume_unwind(other),
        },
    }
}

/// The end of every fault model (all threads joined): exactly the calls that unwound were
/// reported to their callers (`faulted`), every operation whose submitter `ran` ran exactly once
/// and the others never, the lock is free with nothing queued, and it still works (a group
/// operation, run directly: nothing else is left).
fn finish_faulty(lock: &Faulty, faulted: u64, ran: &[(usize, bool)]) {
    // Where the armed call never came, the checks below would meet it.
    lock.raw().disarm();
    assert!(lock.raw().fired() <= 1, "a fault fired twice");
    assert_eq!(
        faulted,
        lock.raw().fired(),
        "an injected fault was lost, or reached a thread twice"
    );
    assert!(!lock.raw().is_locked(), "lock still held at the end");
    assert_eq!(lock.group_head(), None, "operations left queued");
    let ops = lock.group(|d| {
        for &(me, ran) in ran {
            assert_eq!(
                d.applied[me],
                u8::from(ran),
                "operation {me} ran {} times, expected {}",
                d.applied[me],
                u8::from(ran)
            );
        }
        assert_eq!(d.a, d.b, "half-applied group left behind");
        d.a
    });
    let expected = ran.iter().filter(|(_, ran)| *ran).count() as u64;
    assert_eq!(ops, expected, "an update was lost");
}

/// Counts one more execution with an interleaving of interest (outside the model: a std atomic,
/// not reset between executions).
fn count(counter: &AtomicUsize) {
    counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// The executions [`count`]ed so far.
fn counted(counter: &AtomicUsize) -> usize {
    counter.load(std::sync::atomic::Ordering::Relaxed)
}

/// Executions of [`leader_acquire_unwinds`] whose leader's acquire unwound, and those among them
/// where the other submitter had already queued behind the leader when it did (it must be handed
/// the group). Counted outside the model (std atomics), checked after the exploration.
static LEADER_ACQUIRE_FAULTS: AtomicUsize = AtomicUsize::new(0);
static QUEUED_BEHIND_FAULTING_LEADER: AtomicUsize = AtomicUsize::new(0);

/// Leader policy, three threads: the main thread holds the lock while two submitters arrive, so
/// whichever pushes first leads and the other may queue behind it. The leader's `acquire`
/// unwinds: `Acquire` call 1 is the main thread's write guard, and inside `group` only a leader
/// or a handover target calls `acquire` (no handover with two members), so call 2 is always the
/// first leader's, whichever submitter that is. The model explores every interleaving (to the
/// bound) of the submitters' direct attempts, pushes and the fault against the main thread's
/// release: both submitters run directly (no fault); one direct and one leading (it faults
/// alone); both queued, the second pushing before the faulting leader detaches the list (it must
/// be handed the group and serve itself: counted, and required to happen) or after (it leads a
/// new group). Checked: no deadlock; the faulting submitter gets the injected panic, its own
/// operation not run and its record reset; the other's operation ran exactly once and it got its
/// own result; the lock is free and works afterwards.
fn leader_acquire_unwinds() {
    let lock = Arc::new(Faulty::new(Data::default(), GroupPolicy::Leader));
    let g = lock.write();
    let weak = Arc::downgrade(&lock);
    lock.raw().arm_with(FaultPoint::Acquire, 2, move || {
        count(&LEADER_ACQUIRE_FAULTS);
        // The leader pushed onto an empty list and has not detached it: a different head is a
        // member queued behind it.
        let lock = weak.upgrade().expect("a submitter holds the lock");
        if lock.group_head() != Some(Proc::current().number()) {
            count(&QUEUED_BEHIND_FAULTING_LEADER);
        }
    });
    let spawn = |me| {
        let l = lock.clone();
        thread::spawn(move || submit_faulty(&l, me, true))
    };
    let (a, b) = (spawn(1), spawn(2));
    drop(g);
    let ended = [(1, a.join().unwrap()), (2, b.join().unwrap())];
    let mut faulted = 0;
    let mut ran = Vec::new();
    for (me, e) in ended {
        match e {
            Ended::Returned { .. } => ran.push((me, true)),
            Ended::Faulted { fault, ran: r, .. } => {
                faulted += 1;
                let expected = InjectedFault {
                    point: FaultPoint::Acquire,
                    call: 2,
                };
                assert_eq!(fault, expected, "another call unwound");
                assert!(!r, "the operation of a leader whose acquire unwound ran");
                ran.push((me, false));
            }
        }
    }
    finish_faulty(&lock, faulted, &ran);
}

/// After the exploration: the interleaving of interest happened.
fn leader_acquire_unwinds_explored(outcome: Outcome) {
    let faults = counted(&LEADER_ACQUIRE_FAULTS);
    let queued = counted(&QUEUED_BEHIND_FAULTING_LEADER);
    eprintln!(
        "flex_leader_acquire_unwinds3: of {} executions, {faults} had the leader's acquire \
         unwind, {queued} with the other member queued behind it",
        outcome.executions
    );
    assert!(
        queued > 0,
        "no execution had a member queued behind the faulting leader ({faults} faulted)"
    );
}

models::loom_model! {
    /// Leader policy, the leader's acquire unwinds: a member queued behind it is handed the group, nothing strands.
    flex_leader_acquire_unwinds3, threads: 3, bound: Some(4),
    || { quiet_injected_panics(); leader_acquire_unwinds() },
    then: leader_acquire_unwinds_explored
}

/// Executions of [`leader_release_unwinds`] in which the leader's release unwound after it
/// had served the other submitter's operation (that member must still be woken).
static RELEASE_FAULT_WITH_MEMBER: AtomicUsize = AtomicUsize::new(0);

/// Leader policy, two threads (as [`two_submitters`]): the main thread holds the lock while the
/// other submits, so the other leads; the main thread releases and submits too, and joins the
/// leader's group if it pushes while the leader holds the lock and before it detaches. The
/// second `Release` call unwinds. The wrapper counts a release after the wrapped one returns, so
/// "second" is in the order the calls return: usually the leader's after serving its group (the
/// main thread's guard returned first); or the main thread's direct release, where its direct
/// attempt got the lock before the leader; or the main thread's guard itself, where the leader
/// took the lock, served and released while that guard's release was still waking it. Checked
/// in every case: no deadlock; whoever's release unwound gets the panic, after its operation
/// ran; the other gets its own result; each operation ran exactly once; the lock is free and
/// works. The interleaving of interest (the leader served the main thread, then its release
/// unwound: the member must still be woken) is counted and required to happen.
fn leader_release_unwinds() {
    let lock = Arc::new(Faulty::new(Data::default(), GroupPolicy::Leader));
    let g = lock.write();
    lock.raw().arm(FaultPoint::Release, 2);
    let l = lock.clone();
    let t = thread::spawn(move || submit_faulty(&l, 1, false));
    let released = catch_unwind(AssertUnwindSafe(|| drop(g)));
    let mine = submit_faulty(&lock, 0, false);
    let theirs = t.join().unwrap();
    let expected = InjectedFault {
        point: FaultPoint::Release,
        call: 2,
    };
    let mut faulted = 0;
    if let Err(payload) = released {
        let fault = payload
            .downcast::<InjectedFault>()
            .unwrap_or_else(|other| resume_unwind(other));
        assert_eq!(*fault, expected, "another call unwound");
        faulted += 1;
    }
    for e in [mine, theirs] {
        if let Ended::Faulted { fault, ran, .. } = e {
            faulted += 1;
            assert_eq!(fault, expected, "another call unwound");
            assert!(ran, "a release unwound before its holder's operation ran");
        }
    }
    if let (
        Ended::Returned { by_other: true },
        Ended::Faulted {
            by_other: false, ..
        },
    ) = (mine, theirs)
    {
        count(&RELEASE_FAULT_WITH_MEMBER);
    }
    finish_faulty(&lock, faulted, &[(0, true), (1, true)]);
}

/// After the exploration: the interleaving of interest happened.
fn leader_release_unwinds_explored(outcome: Outcome) {
    let n = counted(&RELEASE_FAULT_WITH_MEMBER);
    eprintln!(
        "flex_leader_release_unwinds2: of {} executions, {n} had the leader's release unwind \
         after serving the other member",
        outcome.executions
    );
    assert!(
        n > 0,
        "no execution had the leader's release unwind after serving a member"
    );
}

models::loom_model! {
    /// Leader policy, the release after serving unwinds: the served member is still woken with its result.
    flex_leader_release_unwinds2, threads: 2, bound: Some(5),
    || { quiet_injected_panics(); leader_release_unwinds() },
    then: leader_release_unwinds_explored
}

/// Executions of [`last_releaser_recheck_unwinds`] in which the submitter's re-check unwound,
/// and its operation was then run by the releasing main thread, or by the submitter itself
/// (the retry found the lock free: the interleaving in which giving up would strand it).
static RECHECK_FAULT_SERVED: AtomicUsize = AtomicUsize::new(0);
static RECHECK_FAULT_SELF: AtomicUsize = AtomicUsize::new(0);

/// Last-releaser policy, two threads: the main thread holds the lock (write guard) while the
/// other submits; its direct attempt is `ConditionalAcquire` call 1 (it fails while the guard is
/// held), and call 2 is the next conditional acquire: the submitter's re-check after its push,
/// or, if the main thread's release-and-recheck saw the push first, the main thread's own
/// re-check (its guard's drop then unwinds, after draining). Every interleaving of "push; fence;
/// re-check" against "release; fence; load head" is explored, the racy one included: the main
/// thread's load misses the push, and only the submitter's re-check (retried after the unwind)
/// can drain the queue. Checked: no deadlock; the operation ran exactly once; a submitter whose
/// re-check unwound gets the panic only after its operation ran, and its record is clean; the
/// lock is free and works.
fn last_releaser_recheck_unwinds() {
    let lock = Arc::new(Faulty::new(Data::default(), GroupPolicy::LastReleaser));
    let g = lock.write();
    lock.raw().arm(FaultPoint::ConditionalAcquire, 2);
    let l = lock.clone();
    let t = thread::spawn(move || submit_faulty(&l, 1, true));
    let released = catch_unwind(AssertUnwindSafe(|| drop(g)));
    let theirs = t.join().unwrap();
    let expected = InjectedFault {
        point: FaultPoint::ConditionalAcquire,
        call: 2,
    };
    let mut faulted = 0;
    if let Err(payload) = released {
        let fault = payload
            .downcast::<InjectedFault>()
            .unwrap_or_else(|other| resume_unwind(other));
        assert_eq!(*fault, expected, "another call unwound");
        faulted += 1;
    }
    if let Ended::Faulted {
        fault,
        ran,
        by_other,
    } = theirs
    {
        assert_eq!(fault, expected, "another call unwound");
        assert!(
            ran,
            "the submitter got its re-check's panic before its operation ran"
        );
        faulted += 1;
        count(if by_other {
            &RECHECK_FAULT_SERVED
        } else {
            &RECHECK_FAULT_SELF
        });
    }
    finish_faulty(&lock, faulted, &[(1, true)]);
}

/// After the exploration: both interleavings of interest happened.
fn last_releaser_recheck_unwinds_explored(outcome: Outcome) {
    let served = counted(&RECHECK_FAULT_SERVED);
    let itself = counted(&RECHECK_FAULT_SELF);
    eprintln!(
        "flex_last_releaser_recheck_unwinds2: of {} executions, the submitter's re-check \
         unwound in {served} served by the releaser and {itself} drained by its own retry",
        outcome.executions
    );
    assert!(
        served > 0 && itself > 0,
        "the submitter's re-check unwound in too few interleavings ({served} served by the \
         releaser, {itself} drained by the retry)"
    );
}

models::loom_model! {
    /// Last-releaser policy, the submitter's re-check unwinds: it is retried, the op runs once, then the panic.
    flex_last_releaser_recheck_unwinds2, threads: 2, bound: None,
    || { quiet_injected_panics(); last_releaser_recheck_unwinds() },
    then: last_releaser_recheck_unwinds_explored
}

/// Proof that these models fail on broken protocols. flexlock selects its variants at compile
/// time (`--cfg lwlock_mutant="…"`), so each test exists only in the build of its variant.
mod mutants {
    #[allow(unused_imports)]
    use models::mutants::{expect_caught, Failure};
    #[allow(dead_code)]
    const T: std::time::Duration = std::time::Duration::from_secs(120);

    /// The server wakes a member before running its operation: the member returns early.
    #[cfg(lwlock_mutant = "flex_done_before_apply")]
    #[test]
    fn mutant_flex_done_before_apply() {
        expect_caught("flex_leader2", "flex_done_before_apply", Failure::Race, T);
    }

    /// A last-releaser submitter that does not retry the lock after queueing is stranded.
    #[cfg(lwlock_mutant = "flex_no_recheck")]
    #[test]
    fn mutant_flex_no_recheck() {
        expect_caught(
            "flex_last_releaser_writer2",
            "flex_no_recheck",
            Failure::Deadlock,
            T,
        );
    }

    /// A leader whose acquire unwinds leaves without handing its group on: the member sleeps.
    #[cfg(lwlock_mutant = "runtime")]
    #[test]
    fn mutant_flex_leader_unwind_strands() {
        expect_caught(
            "flex_leader_acquire_unwinds3",
            "flex_leader_unwind_strands",
            Failure::Deadlock,
            T,
        );
    }

    /// A leader whose release unwinds does not wake the members it served.
    #[cfg(lwlock_mutant = "runtime")]
    #[test]
    fn mutant_flex_release_unwind_no_wake() {
        expect_caught(
            "flex_leader_release_unwinds2",
            "flex_release_unwind_no_wake",
            Failure::Deadlock,
            T,
        );
    }

    /// A re-check that unwinds is not retried: the queue is stranded while the lock is free.
    #[cfg(lwlock_mutant = "runtime")]
    #[test]
    fn mutant_flex_unwind_no_retry() {
        expect_caught(
            "flex_last_releaser_recheck_unwinds2",
            "flex_unwind_no_retry",
            Failure::Deadlock,
            T,
        );
    }

    /// A sleeping member is never posted: it sleeps forever (only reachable with a small spin
    /// count: `flex_leader2`, at the production count, does not see it).
    #[cfg(lwlock_mutant = "runtime")]
    #[test]
    fn mutant_flex_member_never_posted() {
        expect_caught(
            "flex_leader_sleep2",
            "flex_member_never_posted",
            Failure::Deadlock,
            T,
        );
    }

    /// A shared last releaser without its SeqCst fence misses a push whose submitter's re-check
    /// missed the release: the operation is stranded.
    #[cfg(lwlock_mutant = "runtime")]
    #[test]
    fn mutant_flex_reader_no_fence() {
        expect_caught(
            "flex_last_releaser_reader2",
            "flex_reader_no_fence",
            Failure::Deadlock,
            T,
        );
    }

    /// The wake pass resets a member's link after releasing it, clobbering the link of the
    /// record its owner already pushed again: the next group loses its leader's operation.
    #[cfg(lwlock_mutant = "runtime")]
    #[test]
    fn mutant_flex_wake_link_reset_late() {
        expect_caught(
            "flex_leader_repush3",
            "flex_wake_link_reset_late",
            Failure::Assertion("completed without running"),
            T,
        );
    }

    /// A member's check of DONE after a wakeup Relaxed: woken by a foreign post after the
    /// leader's DONE swap, it reads its result unordered with the leader's run of it.
    #[cfg(lwlock_mutant = "runtime")]
    #[test]
    fn mutant_flex_sleep_done_relaxed() {
        expect_caught(
            "flex_leader_foreign_post2",
            "flex_sleep_done_relaxed",
            Failure::Race,
            T,
        );
    }

    /// A CLOG joiner that ignores the page joins a group of another page.
    #[cfg(lwlock_mutant = "clog_ignore_key")]
    #[test]
    fn mutant_clog_ignore_key() {
        expect_caught(
            "clog_key_rule2",
            "clog_ignore_key",
            Failure::Assertion("an operation on another page joined the group"),
            T,
        );
    }
}
