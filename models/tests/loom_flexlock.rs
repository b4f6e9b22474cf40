//! loom models of the group protocols: the FlexLock under its leader and last-releaser policies,
//! and the CLOG group update's key rule. Each submitted operation records that it ran, so the
//! models check: every operation runs exactly once, each submitter gets its own result, no
//! submitter returns before its operation was applied, and a shared reader never overlaps a
//! group (the value lives in loom's `UnsafeCell`, so an overlap is reported as a race). Only one
//! read guard is ever live at a time: the guards' `Deref` registers a loom *write* access, so two
//! concurrent readers would be reported as a (false) race.
#![cfg(loom)]

use flexlock::{ClogGroupLock, FlexLock, Policy};
use lwlock::sync::{thread, Ordering};
use lwlock::{Proc, RawAtomicLwLock};
use models::Protected;
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
fn submit(lock: &Flex, me: usize) {
    let done = Arc::new(Protected::new(0u64));
    let cell = done.clone();
    let (who, seq) = lock.group(move |d: &mut Data| {
        d.applied[me] += 1;
        assert_eq!(d.applied[me], 1, "operation {me} ran twice");
        d.a += 1;
        d.b += 1;
        // SAFETY: only this operation writes the cell, and the submitter reads it only after
        // `group` returned, which must be after this operation ran.
        unsafe { cell.write(|x| *x = d.a) };
        (me, d.a)
    });
    assert_eq!(who, me, "a submitter got another operation's result");
    // SAFETY: see above; the model checks that the operation's write happens-before this read.
    let seen = unsafe { done.read(|x| *x) };
    assert_eq!(seen, seq, "group returned before its operation was applied");
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
fn two_submitters(policy: Policy) {
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

fn two_submitters_and(policy: Policy, other: fn(&Flex), writes: u64) {
    let lock = Arc::new(Flex::new(Data::default(), policy));
    let (l1, l2) = (lock.clone(), lock.clone());
    let a = thread::spawn(move || submit(&l1, 1));
    let b = thread::spawn(move || other(&l2));
    submit(&lock, 0);
    a.join().unwrap();
    b.join().unwrap();
    finish(&lock, 2, writes);
}

fn writer_and_submitter(policy: Policy) {
    let lock = Arc::new(Flex::new(Data::default(), policy));
    let l = lock.clone();
    let t = thread::spawn(move || write(&l));
    submit(&lock, 0);
    t.join().unwrap();
    finish(&lock, 1, 1);
}

models::loom_model! {
    /// Leader policy, two submitters: each op runs once, each gets its own result, none returns early.
    flex_leader2, threads: 2, bound: Some(4), || two_submitters(Policy::Leader)
}

models::loom_model! {
    /// Leader policy, two submitters and a reader: the reader never overlaps a group.
    flex_leader_reader3, threads: 3, bound: Some(3), || two_submitters_and(Policy::Leader, read, 0)
}

models::loom_model! {
    /// Last-releaser policy, two submitters: no operation is stranded (the queue-then-recheck).
    flex_last_releaser2, threads: 2, bound: Some(4), || two_submitters(Policy::LastReleaser)
}

models::loom_model! {
    /// Last-releaser policy, a writer and a submitter: the writer's release runs the queued op.
    flex_last_releaser_writer2, threads: 2, bound: Some(4), || writer_and_submitter(Policy::LastReleaser)
}

models::loom_model! {
    /// Last-releaser policy, two submitters and a writer: every op runs exactly once, none stranded.
    flex_last_releaser_writer3, threads: 3, bound: Some(2), || two_submitters_and(Policy::LastReleaser, write, 1)
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
