//! The serving bound `max_group` (CC-Synch's *h*, `group_list::serve`'s `limit`), exactly: a
//! serving pass runs at most `max_group` operations of its chain and hands the rest to the first
//! member it did not serve, which serves the next `max_group` itself, and so on.
//!
//! The other group tests bound only the group sizes the `stats` counters report, and with real
//! threads a chain longer than the bound forms only by chance. Here the queue is forced: the
//! test thread holds the lock exclusively while `2 * MAX_GROUP + 1` submitters queue one after
//! another (each is spawned only once the previous one heads the list), then releases. Every
//! operation returns the record number of the thread that ran it, so the test sees exactly which
//! pass ran which operation; nothing depends on timing. Under every policy the passes are
//! operations `0..MAX_GROUP`, `MAX_GROUP..2 * MAX_GROUP` (served by submitter `MAX_GROUP`, the
//! first handover target) and the last one (submitter `2 * MAX_GROUP`, served by itself).
//!
//! Kills the patched mutant `p_serve_limit_off_by_one` of `ci/mutation.list` (a pass that runs
//! `max_group + 1` operations).

mod common;

use common::{me, wait_for, watchdog};
use flexlock::{FlexConfig, FlexLock, GroupLock, GroupPolicy, HolderServesLock};
use lwlock::{RawAtomicLwLock, RawClassicLwLock, RawLwLock, Tranche};
use std::sync::mpsc;
use std::sync::Arc;

/// The bound under test: small, so that a queue of `2 * MAX_GROUP + 1` needs two handovers.
const MAX_GROUP: usize = 2;
/// Submitters queued behind the held lock.
const SUBMITTERS: usize = 2 * MAX_GROUP + 1;

/// Queues `SUBMITTERS` operations, in order, behind the test thread's exclusive hold, releases,
/// and checks which thread ran each (any of the group locks: `GroupLock` is their one API). `first_server`: the record that runs the first pass, given
/// the submitters' records in arrival order and the releasing test thread's record.
fn serves_exactly_the_bound<K>(
    name: &'static str,
    lock: Arc<K>,
    first_server: fn(&[u32], u32) -> u32,
) where
    K: GroupLock<Data = Vec<u32>> + Send + Sync + 'static,
{
    let _w = watchdog(name, 60);
    let releaser = me();
    let mut handles = Vec::new();
    let mut records = Vec::new();
    // Queued behind an exclusive hold; its release serves the queue under LastReleaser and
    // holder-serves.
    let hold = lock.write();
    for k in 0..SUBMITTERS as u32 {
        let (n, h) = queue_appending(&lock, k);
        handles.push(h);
        records.push(n);
    }
    drop(hold);
    let ran_by: Vec<u32> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let expected: Vec<u32> = (0..SUBMITTERS)
        .map(|i| match i / MAX_GROUP {
            0 => first_server(&records, releaser),
            pass => records[pass * MAX_GROUP],
        })
        .collect();
    assert_eq!(
        ran_by, expected,
        "{name}: a serving pass did not run exactly max_group = {MAX_GROUP} operations before \
         handing the rest over (records in arrival order {records:?}, releaser {releaser})"
    );
    assert_eq!(
        *lock.read(),
        (0..SUBMITTERS as u32).collect::<Vec<_>>(),
        "{name}: not served in arrival order"
    );
    assert_eq!(lock.group_head(), None, "{name}: operations left queued");
    // With feature `stats`: three groups (the three passes), the largest exactly the bound.
    if let Some(s) = lock.stats() {
        assert_eq!(
            (s.groups, s.max_group_size),
            (3, MAX_GROUP as u64),
            "{name}: {s:?}"
        );
    }
}

/// Starts a submitter whose operation appends `value` and returns the record number of the
/// thread that ran it; returns the submitter's record number and thread once its record heads
/// the group list (queued: nobody detaches while the caller holds the lock).
fn queue_appending<K>(lock: &Arc<K>, value: u32) -> (u32, std::thread::JoinHandle<u32>)
where
    K: GroupLock<Data = Vec<u32>> + Send + Sync + 'static,
{
    let (tx, rx) = mpsc::channel();
    let l = lock.clone();
    let h = std::thread::spawn(move || {
        tx.send(me()).unwrap();
        l.group(move |v| {
            v.push(value);
            me()
        })
    });
    let n = rx.recv().unwrap();
    wait_for("the submitter to queue", || lock.group_head() == Some(n));
    (n, h)
}

fn flex<L: RawLwLock + 'static>(policy: GroupPolicy) -> Arc<FlexLock<L, Vec<u32>>> {
    Arc::new(FlexLock::with_config(
        Vec::new(),
        FlexConfig {
            policy,
            max_group: MAX_GROUP,
            tranche: Tranche::PROC_ARRAY,
        },
    ))
}

fn holder_serves<L: RawLwLock + 'static>() -> Arc<HolderServesLock<L, Vec<u32>>> {
    Arc::new(HolderServesLock::with_bound(
        Vec::new(),
        MAX_GROUP,
        Tranche::PROC_ARRAY,
    ))
}

/// Leader: the first submitter pushed onto an empty list, so it leads and runs the first pass.
fn leader(records: &[u32], _releaser: u32) -> u32 {
    records[0]
}

/// LastReleaser and holder-serves: the test thread's release serves the first pass.
fn releaser(_records: &[u32], releaser: u32) -> u32 {
    releaser
}

#[test]
fn leader_serves_exactly_max_group_atomic() {
    serves_exactly_the_bound(
        "leader, atomic",
        flex::<RawAtomicLwLock>(GroupPolicy::Leader),
        leader,
    );
}

#[test]
fn leader_serves_exactly_max_group_classic() {
    serves_exactly_the_bound(
        "leader, classic",
        flex::<RawClassicLwLock>(GroupPolicy::Leader),
        leader,
    );
}

#[test]
fn last_releaser_serves_exactly_max_group_atomic() {
    serves_exactly_the_bound(
        "last releaser, atomic",
        flex::<RawAtomicLwLock>(GroupPolicy::LastReleaser),
        releaser,
    );
}

#[test]
fn holder_serves_exactly_max_group_atomic() {
    serves_exactly_the_bound(
        "holder serves, atomic",
        holder_serves::<RawAtomicLwLock>(),
        releaser,
    );
}

/// The drainer's share on its post-release re-check (LastReleaser), with `max_group` 1 and 2:
/// the test thread holds the lock while `max_group` submitters queue, then releases, so its
/// release drains them: one pass of exactly `max_group` operations, which uses up its share with
/// nothing left on the chain. At that release (a pause of [`FaultLock`], on the drainer's thread
/// while it still holds the lock) a late submitter pushes; its own re-check fails against the
/// drainer's hold, and it sleeps. After the release the drainer's re-check finds the late
/// operation, and having served its share it must hand the queue to that operation's submitter
/// (which then runs it itself), not take the lock again and run it. The test asserts who ran
/// the late operation: nothing depends on timing.
///
/// Kills the patched mutant `p_drain_share_off_by_one` of `ci/mutation.list` (a drainer that
/// serves `max_group + 1` operations before handing over).
#[test]
fn last_releaser_drainer_hands_a_late_push_over_after_its_share() {
    use lwlock::fault::{FaultLock, FaultPoint};
    use std::sync::Mutex;
    type Late = std::thread::JoinHandle<u32>;
    let _w = watchdog("drainer's share on its re-check", 60);
    for max_group in [1usize, 2] {
        let lock = Arc::new(
            FlexLock::<FaultLock<RawAtomicLwLock>, Vec<u32>>::with_config(
                Vec::new(),
                FlexConfig {
                    policy: GroupPolicy::LastReleaser,
                    max_group,
                    tranche: Tranche::PROC_ARRAY,
                },
            ),
        );
        let drainer = me();
        let hold = lock.write();
        let mut early = Vec::new();
        for k in 0..max_group as u32 {
            early.push(queue_appending(&lock, k).1);
            // Its re-check (the second conditional acquire) has failed against `hold`.
            wait_for("the submitter's re-check", || {
                lock.raw().calls(FaultPoint::ConditionalAcquire) >= 2 * (u64::from(k) + 1)
            });
        }
        // The drainer's release (release call 1, made by `hold`'s drop): the late push, while
        // the drainer still holds the lock.
        let late: Arc<Mutex<Option<(u32, Late)>>> = Arc::default();
        let (weak, slot) = (Arc::downgrade(&lock), late.clone());
        lock.raw().pause_at(FaultPoint::Release, 1, move || {
            let lock = weak.upgrade().expect("the test holds the lock");
            let (n, h) = queue_appending(&lock, u32::MAX);
            let want = 2 * (max_group as u64 + 1);
            wait_for("the late submitter's re-check", || {
                lock.raw().calls(FaultPoint::ConditionalAcquire) >= want
            });
            *slot.lock().unwrap() = Some((n, h));
        });
        drop(hold);
        for h in early {
            assert_eq!(
                h.join().unwrap(),
                drainer,
                "max_group {max_group}: the first pass"
            );
        }
        let (late_record, h) = late.lock().unwrap().take().expect("the late push was made");
        let ran_by = h.join().unwrap();
        assert_eq!(
            ran_by, late_record,
            "max_group {max_group}: the drainer (record {drainer}) ran the late operation after \
             its share of {max_group} instead of handing it to its submitter"
        );
        let mut want: Vec<u32> = (0..max_group as u32).collect();
        want.push(u32::MAX);
        assert_eq!(*lock.read(), want, "max_group {max_group}");
        assert!(lock.group_head().is_none() && !lock.raw().is_locked());
    }
}
