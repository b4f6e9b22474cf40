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
use flexlock::{FlexConfig, FlexLock, GroupLock, HolderServesLock, Policy};
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
        let (tx, rx) = mpsc::channel();
        let l = lock.clone();
        handles.push(std::thread::spawn(move || {
            tx.send(me()).unwrap();
            // Appends `k`; returns the record number of the thread that ran it.
            l.group(move |v| {
                v.push(k);
                me()
            })
        }));
        let n = rx.recv().unwrap();
        // Queued: it heads the list (nobody detaches while we hold the lock).
        wait_for("the submitter to queue", || lock.group_head() == Some(n));
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

fn flex<L: RawLwLock + 'static>(policy: Policy) -> Arc<FlexLock<L, Vec<u32>>> {
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
        flex::<RawAtomicLwLock>(Policy::Leader),
        leader,
    );
}

#[test]
fn leader_serves_exactly_max_group_classic() {
    serves_exactly_the_bound(
        "leader, classic",
        flex::<RawClassicLwLock>(Policy::Leader),
        leader,
    );
}

#[test]
fn last_releaser_serves_exactly_max_group_atomic() {
    serves_exactly_the_bound(
        "last releaser, atomic",
        flex::<RawAtomicLwLock>(Policy::LastReleaser),
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
