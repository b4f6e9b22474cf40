//! loom models of the snapshot strategies (`lwharness::snapshot`, the very code the harness
//! runs: in a `--cfg loom` build `lwharness` compiles only that module): `reuse`, `optimistic`
//! and `shared`, each against ends of transaction under the exclusive ProcArrayLock.
#![cfg(loom)]

use lwharness::snapshot::{Dense, Direct, ProcArrayState, Snapshot, SnapshotCache, Strategy};
use lwlock::sync::thread;
use lwlock::{Mode, RawAtomicLwLock, RawLwLock};
use std::sync::Arc;

type State = ProcArrayState<Dense>;
type Lock = Direct<RawAtomicLwLock>;

/// A proc array of `entries` entries with an xid running in each of the first `running`; the
/// last entry is the snapshot taker's. With `advance`, an xid larger than all of them has already
/// ended (through the taker's entry), so `latestCompletedXid` is past them and their ends show
/// in the slots rather than through `xmax`.
fn setup(entries: usize, running: usize, advance: bool) -> (Arc<State>, Arc<Lock>, Vec<u32>) {
    let state = Arc::new(State::new(entries));
    let lock = Arc::new(Direct(RawAtomicLwLock::new()));
    let xids: Vec<u32> = (0..running).map(|i| state.assign_xid(i)).collect();
    if advance {
        let taker = entries - 1;
        let x = state.assign_xid(taker);
        end(&state, &lock, taker, x);
    }
    (state, lock, xids)
}

fn end(state: &State, lock: &Lock, entry: usize, xid: u32) {
    lock.0.acquire(Mode::Exclusive);
    state.end_xact(entry, xid);
    // SAFETY: held exclusively.
    unsafe { lock.0.release(Mode::Exclusive) };
}

fn take(state: &State, lock: &Lock, s: Strategy, entry: usize, c: &mut SnapshotCache) -> Snapshot {
    state.snapshot(s, lock, entry, c);
    c.snap.clone()
}

/// `reuse`: one end of transaction races the taker's snapshot; a snapshot taken after the end
/// (which the taker may try to reuse) must see it.
fn run_reuse_vs_end() {
    let (state, lock, xids) = setup(2, 1, false);
    let x1 = xids[0];
    let writer = {
        let (state, lock) = (state.clone(), lock.clone());
        thread::spawn(move || end(&state, &lock, 0, x1))
    };
    let mut cache = SnapshotCache::default();
    let before = take(&state, &lock, Strategy::Reuse, 1, &mut cache);
    assert!(before.xmin <= before.xmax);
    writer.join().unwrap();
    let after = take(&state, &lock, Strategy::Reuse, 1, &mut cache);
    assert!(
        !after.sees_running(x1),
        "a reused snapshot still sees one running: {after:?}"
    );
}

/// `optimistic`: the writer ends x1 and then x2 while the taker scans without the lock; the
/// snapshot must never show x2 finished and x1 still running (completions seen out of order).
fn run_optimistic_vs_two_ends() {
    let (state, lock, xids) = setup(3, 2, true);
    let (x1, x2) = (xids[0], xids[1]);
    let writer = {
        let (state, lock) = (state.clone(), lock.clone());
        thread::spawn(move || {
            end(&state, &lock, 0, x1);
            end(&state, &lock, 1, x2);
        })
    };
    let mut cache = SnapshotCache::default();
    let s = take(&state, &lock, Strategy::Optimistic, 2, &mut cache);
    // x1 ended before x2: if the snapshot sees x2 ended, it sees x1 ended too.
    assert!(
        !s.sees_running(x1) || s.sees_running(x2),
        "snapshot sees a later completion but not an earlier one: {s:?}"
    );
    writer.join().unwrap();
    let after = take(&state, &lock, Strategy::Optimistic, 2, &mut cache);
    assert!(
        !after.sees_running(x1) && !after.sees_running(x2),
        "{after:?}"
    );
}

/// `shared`: two takers (one computes the slot, the other copies it; loom checks the slot's
/// accesses are ordered) race an end of transaction, which must invalidate the slot.
fn run_shared_two_takers_and_an_end() {
    let (state, lock, xids) = setup(3, 1, false);
    let x1 = xids[0];
    let writer = {
        let (state, lock) = (state.clone(), lock.clone());
        thread::spawn(move || end(&state, &lock, 0, x1))
    };
    let other = {
        let (state, lock) = (state.clone(), lock.clone());
        thread::spawn(move || {
            let mut cache = SnapshotCache::default();
            take(&state, &lock, Strategy::Shared, 1, &mut cache)
        })
    };
    let mut cache = SnapshotCache::default();
    let mine = take(&state, &lock, Strategy::Shared, 2, &mut cache);
    let theirs = other.join().unwrap();
    for s in [&mine, &theirs] {
        assert!(s.xmin <= s.xmax, "{s:?}");
    }
    writer.join().unwrap();
    let after = take(&state, &lock, Strategy::Shared, 2, &mut cache);
    assert!(
        !after.sees_running(x1),
        "a stale shared snapshot was served: {after:?}"
    );
}

models::loom_model! {
    /// `reuse`: a reused snapshot is never stale (the completion count is checked under the lock).
    reuse_vs_end, threads: 2, bound: Some(5), run_reuse_vs_end
}

models::loom_model! {
    /// `optimistic`: an unlocked scan that overlapped an end of transaction is never kept (the
    /// even/odd counter catches it), and its Relaxed reads are ordered by the seqlock fences.
    optimistic_vs_two_ends, threads: 2, bound: Some(4), run_optimistic_vs_two_ends
}

models::loom_model! {
    /// `shared`: copiers never read the slot while it is computed, and ends of transaction
    /// invalidate it.
    shared_two_takers_and_an_end, threads: 3, bound: Some(2), run_shared_two_takers_and_an_end
}

mod mutants {
    use models::mutants::{expect_caught, Failure};
    use std::time::Duration;

    const T: Duration = Duration::from_secs(300);

    /// Reuse without checking the completion count serves a stale snapshot.
    #[test]
    fn mutant_snapshot_reuse_ignores_count() {
        expect_caught(
            "reuse_vs_end",
            "snapshot_reuse_ignores_count",
            Failure::Assertion("reused snapshot still sees one running"),
            T,
        );
    }

    /// An optimistic scan kept without validation can see completions out of order.
    #[test]
    fn mutant_snapshot_no_validate() {
        expect_caught(
            "optimistic_vs_two_ends",
            "snapshot_no_validate",
            Failure::Assertion("sees a later completion but not an earlier one"),
            T,
        );
    }

    /// A shared slot never invalidated keeps serving a snapshot from before an end.
    #[test]
    fn mutant_snapshot_shared_no_invalidate() {
        expect_caught(
            "shared_two_takers_and_an_end",
            "snapshot_shared_no_invalidate",
            Failure::Assertion("stale shared snapshot"),
            T,
        );
    }
}
