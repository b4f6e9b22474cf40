//! The correctness oracle for every snapshot strategy on every layout.
//!
//! Writers run transactions (assign an xid, end it under the exclusive ProcArrayLock) while
//! takers take snapshots. A sequentially consistent clock stamps when each xid became visible,
//! when its end began and when it finished, and when each snapshot started and ended. Then, by
//! the definition of a snapshot:
//! * every xid published before the snapshot started and not ended before it finished must be
//!   seen as running;
//! * every xid whose end finished before the snapshot started must be seen as finished;
//! * completions are seen atomically, in order: if the snapshot sees an xid as finished, it
//!   sees as finished every xid whose end finished before that one's end started (the reason
//!   ends of transaction take ProcArrayLock exclusively).

mod common;

use lwbench::snapshot::{Dense, Direct, Outcome, Padded, PgXact, ProcArrayLayout, ProcArrayState};
use lwbench::snapshot::{Snapshot, SnapshotCache, Strategy};
use lwlock::{Mode, RawAtomicLwLock, RawLwLock};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Barrier};

const WRITERS: usize = 3;
const TAKERS: usize = 3;
const XACTS: usize = 1000;
const SNAPSHOTS: usize = 1500;

struct XactLog {
    xid: u32,
    published: u64,
    end_started: u64,
    end_finished: u64,
}

struct SnapLog {
    started: u64,
    finished: u64,
    snap: Snapshot,
}

fn oracle<P: ProcArrayLayout>(strategy: Strategy) {
    // Spare entries lengthen the scan, widening the window for ends of transaction to overlap it.
    let state = Arc::new(ProcArrayState::<P>::new(64));
    let lock = Arc::new(Direct(RawAtomicLwLock::new()));
    let clock = Arc::new(AtomicU64::new(0));
    let start = Arc::new(Barrier::new(WRITERS + TAKERS));
    // A long transaction on a spare entry, open for the whole run, so every snapshot overlaps
    // at least one running transaction.
    let long_entry = WRITERS + TAKERS;
    let long_xid = state.assign_xid(long_entry);
    let long_published = clock.fetch_add(1, SeqCst);
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (state, lock, clock, start) =
                (state.clone(), lock.clone(), clock.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                let mut log = Vec::with_capacity(XACTS);
                for i in 0..XACTS {
                    let xid = state.assign_xid(w);
                    let published = clock.fetch_add(1, SeqCst);
                    // Keep the transaction open across a few scheduling points, sometimes
                    // long enough for whole snapshots to fall inside it.
                    for _ in 0..i % 4 {
                        std::thread::yield_now();
                    }
                    if i % 64 == 0 {
                        std::thread::sleep(std::time::Duration::from_micros(200));
                    }
                    let end_started = clock.fetch_add(1, SeqCst);
                    lock.0.acquire(Mode::Exclusive);
                    state.end_xact(w, xid);
                    // SAFETY: held exclusively.
                    unsafe { lock.0.release(Mode::Exclusive) };
                    let end_finished = clock.fetch_add(1, SeqCst);
                    log.push(XactLog {
                        xid,
                        published,
                        end_started,
                        end_finished,
                    });
                }
                log
            })
        })
        .collect();
    let takers: Vec<_> = (0..TAKERS)
        .map(|t| {
            let (state, lock, clock, start) =
                (state.clone(), lock.clone(), clock.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                let me = WRITERS + t;
                let mut cache = SnapshotCache::default();
                let mut log = Vec::with_capacity(SNAPSHOTS);
                let mut outcomes: HashMap<Outcome, usize> = HashMap::new();
                for _ in 0..SNAPSHOTS {
                    let started = clock.fetch_add(1, SeqCst);
                    let outcome = state.snapshot(strategy, &*lock, me, &mut cache);
                    let finished = clock.fetch_add(1, SeqCst);
                    *outcomes.entry(outcome).or_default() += 1;
                    log.push(SnapLog {
                        started,
                        finished,
                        snap: cache.snap.clone(),
                    });
                }
                (log, outcomes)
            })
        })
        .collect();
    let mut xacts: Vec<XactLog> = writers
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let mut outcomes: HashMap<Outcome, usize> = HashMap::new();
    let mut snaps = Vec::new();
    for h in takers {
        let (log, o) = h.join().unwrap();
        snaps.extend(log);
        for (k, v) in o {
            *outcomes.entry(k).or_default() += v;
        }
    }
    let end_started = clock.fetch_add(1, SeqCst);
    lock.0.acquire(Mode::Exclusive);
    state.end_xact(long_entry, long_xid);
    // SAFETY: held exclusively.
    unsafe { lock.0.release(Mode::Exclusive) };
    let end_finished = clock.fetch_add(1, SeqCst);
    xacts.push(XactLog {
        xid: long_xid,
        published: long_published,
        end_started,
        end_finished,
    });
    let mut checked_running = 0;
    for s in &snaps {
        assert!(s.snap.xmin <= s.snap.xmax, "xmin above xmax: {:?}", s.snap);
        for x in &xacts {
            if x.published < s.started && x.end_started > s.finished {
                checked_running += 1;
                assert!(
                    s.snap.sees_running(x.xid),
                    "{}/{}: xid {} ran throughout but the snapshot misses it: {:?}",
                    P::NAME,
                    strategy.name(),
                    x.xid,
                    s.snap
                );
            }
            if x.end_finished < s.started {
                assert!(
                    !s.snap.sees_running(x.xid),
                    "{}/{}: xid {} had finished but the snapshot sees it running: {:?}",
                    P::NAME,
                    strategy.name(),
                    x.xid,
                    s.snap
                );
            }
        }
    }
    assert!(
        checked_running > 0,
        "no snapshot overlapped a running transaction"
    );
    // Completion order: the latest end-finish stamp among xids seen finished must not be preceded
    // by an end (finished before that end started) of an xid seen running.
    let mut by_end: Vec<&XactLog> = xacts.iter().collect();
    by_end.sort_by_key(|x| x.end_finished);
    for s in &snaps {
        let seen_finished_latest_start = xacts
            .iter()
            .filter(|x| x.published < s.finished && !s.snap.sees_running(x.xid))
            .filter(|x| x.end_started < s.finished)
            .map(|x| x.end_started)
            .max();
        let Some(cut) = seen_finished_latest_start else {
            continue;
        };
        for x in by_end.iter().take_while(|x| x.end_finished < cut) {
            assert!(
                !s.snap.sees_running(x.xid),
                "{}/{}: sees xid {} running although it finished before a completion the \
                 snapshot already shows: {:?}",
                P::NAME,
                strategy.name(),
                x.xid,
                s.snap
            );
        }
    }
    // The strategy's own fast path was exercised, not only its fallback.
    let fast = match strategy {
        Strategy::Scan => Outcome::Scanned,
        Strategy::Reuse => Outcome::Reused,
        Strategy::Optimistic => Outcome::Validated,
        Strategy::Shared => Outcome::Copied,
    };
    assert!(
        outcomes.get(&fast).copied().unwrap_or(0) > 0,
        "{outcomes:?}"
    );
}

macro_rules! oracle_tests {
    ($($name:ident: $layout:ty, $strategy:expr;)*) => {
        $(#[test] fn $name() {
            let _dog = common::watchdog(stringify!($name), 120);
            oracle::<$layout>($strategy);
        })*
    };
}

oracle_tests! {
    padded_scan: Padded, Strategy::Scan;
    padded_reuse: Padded, Strategy::Reuse;
    padded_optimistic: Padded, Strategy::Optimistic;
    padded_shared: Padded, Strategy::Shared;
    pgxact_scan: PgXact, Strategy::Scan;
    pgxact_reuse: PgXact, Strategy::Reuse;
    pgxact_optimistic: PgXact, Strategy::Optimistic;
    pgxact_shared: PgXact, Strategy::Shared;
    dense_scan: Dense, Strategy::Scan;
    dense_reuse: Dense, Strategy::Reuse;
    dense_optimistic: Dense, Strategy::Optimistic;
    dense_shared: Dense, Strategy::Shared;
}
