//! FlexLock behaviour under both policies, over the atomic, classic and parking_lot locks:
//! exactly-once execution under oversubscription, results to their own submitter, readers never
//! seeing an operation half-applied, panic propagation, and groups actually forming.

mod common;

use common::{me, wait_for, watchdog};
use flexlock::{FlexConfig, FlexLock, GroupLock, GroupPolicy};
use lwlock::RawLwLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};

const THREADS: usize = 64;
const OPS: usize = 60;

/// 64 threads × OPS operations; operation (t, i) bumps slot t*OPS+i and the shared total, and
/// returns (its slot, the slot's value after the bump, the total before). Every slot must end at
/// exactly 1, the total at THREADS*OPS, and each thread must get back its own slot, value 1, and
/// distinct totals (each op saw a different prefix of the serial order).
fn exactly_once<L: RawLwLock + 'static>(policy: GroupPolicy, max_group: usize) {
    let _w = watchdog("exactly_once", 120);
    struct Data {
        slots: Vec<u32>,
        total: u64,
    }
    let lock = Arc::new(FlexLock::<L, Data>::with_config(
        Data {
            slots: vec![0; THREADS * OPS],
            total: 0,
        },
        FlexConfig {
            max_group,
            ..FlexConfig::new(policy)
        },
    ));
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let lock = lock.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                let mut seen = Vec::with_capacity(OPS);
                for i in 0..OPS {
                    let slot = t * OPS + i;
                    let (got_slot, value, total) = lock.group(move |d| {
                        d.slots[slot] += 1;
                        let before = d.total;
                        d.total += 1;
                        (slot, d.slots[slot], before)
                    });
                    assert_eq!(got_slot, slot, "a result went to the wrong submitter");
                    assert_eq!(value, 1, "operation ran twice");
                    seen.push(total);
                    if i % 16 == 0 {
                        // Mix in ordinary guards so groups interleave with plain holds.
                        if i % 32 == 0 {
                            let g = lock.read();
                            assert!(g.total as usize <= THREADS * OPS);
                        } else {
                            lock.write().total += 0;
                        }
                    }
                }
                // Posts and sleeps balance: nothing is left on this thread's semaphore.
                assert_eq!(
                    lwlock::Proc::current().sem().count(),
                    0,
                    "stray semaphore post"
                );
                seen
            })
        })
        .collect();
    let mut totals: Vec<u64> = handles
        .into_iter()
        .flat_map(|h| h.join().expect("submitter panicked"))
        .collect();
    let d = lock.read();
    assert!(
        d.slots.iter().all(|&s| s == 1),
        "an operation was lost or repeated"
    );
    assert_eq!(d.total as usize, THREADS * OPS);
    totals.sort_unstable();
    totals.dedup();
    assert_eq!(totals.len(), THREADS * OPS, "two operations overlapped");
    drop(d);
    if let Some(s) = lock.stats() {
        assert_eq!(
            s.ops_by_leader + s.ops_by_self,
            (THREADS * OPS) as u64,
            "{s:?}"
        );
        assert!(s.max_group_size as usize <= max_group, "{s:?}");
    }
}

/// Operations move `x` from `a` to `b` in two steps (a -= x; yield-ish; b += x), so a + b is
/// constant between operations but not inside one. Readers assert the invariant throughout.
fn readers_never_see_half_applied<L: RawLwLock + 'static>(policy: GroupPolicy) {
    let _w = watchdog("readers_never_see_half_applied", 120);
    const TOTAL: u64 = 1_000_000;
    struct Pair {
        a: u64,
        b: u64,
    }
    let lock = Arc::new(FlexLock::<L, Pair>::new(Pair { a: TOTAL, b: 0 }, policy));
    let stop = Arc::new(AtomicBool::new(false));
    let started = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let (lock, stop, started) = (lock.clone(), stop.clone(), started.clone());
            std::thread::spawn(move || {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let g = lock.read();
                    assert_eq!(g.a + g.b, TOTAL, "reader saw an operation half-applied");
                    drop(g);
                    n += 1;
                    if n == 1 {
                        started.fetch_add(1, Ordering::Release);
                    }
                }
                n
            })
        })
        .collect();
    // Every reader is in its loop before the writers start (a reader scheduled only after they
    // finished would read nothing while they ran).
    wait_for("the readers to start", || {
        started.load(Ordering::Acquire) == 4
    });
    let writers: Vec<_> = (0..16)
        .map(|t| {
            let lock = lock.clone();
            std::thread::spawn(move || {
                for i in 0..100u64 {
                    let x = (t + i) % 3 + 1;
                    lock.group(move |p| {
                        if p.a >= x {
                            p.a -= x;
                            std::hint::black_box(&mut *p);
                            p.b += x;
                        } else {
                            p.b -= x;
                            std::hint::black_box(&mut *p);
                            p.a += x;
                        }
                    });
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    stop.store(true, Ordering::Release);
    // The readers' assertion is the test; the handshake above made each of them read while the
    // writers could run.
    for r in readers {
        r.join().unwrap();
    }
    let g = lock.read();
    assert_eq!(g.a + g.b, TOTAL);
}

/// Builds a group deterministically: the main thread holds the lock, threads submit one at a time
/// (each waits until the previous one is on the list), then the main thread releases. Returns, per
/// submitter, the join result: Ok((record that ran the op, submitter's record)) or the panic.
type Forced<L> = (
    Arc<FlexLock<L, Vec<u32>>>,
    Vec<std::thread::Result<(u32, u32)>>,
    u32,
);

fn forced_group<L: RawLwLock + 'static>(policy: GroupPolicy, panicking: &[bool]) -> Forced<L> {
    let n = panicking.len();
    let lock = Arc::new(FlexLock::<L, Vec<u32>>::new(vec![0; n], policy));
    let guard = lock.write();
    let mut handles = Vec::new();
    for (i, &boom) in panicking.iter().enumerate() {
        let (tx, rx) = std::sync::mpsc::channel();
        let l = lock.clone();
        handles.push(std::thread::spawn(move || {
            let mine = me();
            tx.send(mine).unwrap();
            let ran_on = l.group(move |v| {
                v[i] += 1;
                if boom {
                    panic!("boom {i}");
                }
                me()
            });
            (ran_on, mine)
        }));
        let number = rx.recv().unwrap();
        wait_for("the submitter to join the list", || {
            lock.group_head() == Some(number)
        });
    }
    let releaser = me();
    drop(guard);
    let results = handles.into_iter().map(|h| h.join()).collect();
    (lock, results, releaser)
}

fn group_runs_everything_for_its_members<L: RawLwLock + 'static>(policy: GroupPolicy) {
    let _w = watchdog("group_runs_everything_for_its_members", 60);
    let (lock, results, releaser) = forced_group::<L>(policy, &[false, false, false, false]);
    let results: Vec<(u32, u32)> = results.into_iter().map(|r| r.unwrap()).collect();
    // Leader: the first submitter leads and runs everyone's operation. LastReleaser: the main
    // thread's release ran them all.
    let server = match policy {
        GroupPolicy::Leader => results[0].1,
        GroupPolicy::LastReleaser => releaser,
    };
    for (ran_on, _) in &results {
        assert_eq!(*ran_on, server, "operation not run by the group's server");
    }
    assert_eq!(*lock.read(), vec![1; 4]);
    if let Some(s) = lock.stats() {
        assert_eq!(s.groups, 1, "{s:?}");
        assert_eq!(s.max_group_size, 4, "{s:?}");
        let by_leader = match policy {
            GroupPolicy::Leader => 3,
            GroupPolicy::LastReleaser => 4,
        };
        assert_eq!(s.ops_by_leader, by_leader, "{s:?}");
    }
}

fn panic_reaches_its_submitter<L: RawLwLock + 'static>(policy: GroupPolicy, which: usize) {
    let _w = watchdog("panic_reaches_its_submitter", 60);
    let mut panicking = [false; 4];
    panicking[which] = true;
    let (lock, results, _) = forced_group::<L>(policy, &panicking);
    for (i, r) in results.into_iter().enumerate() {
        if i == which {
            let payload = r.expect_err("the panicking operation's submitter must panic");
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_default();
            assert_eq!(msg, format!("boom {which}"));
        } else {
            r.expect("other members are unaffected");
        }
    }
    // Every operation ran (the panicking one up to its panic), and the lock is usable.
    assert_eq!(*lock.read(), vec![1; 4]);
    lock.group(|v| v[0] += 1);
    assert_eq!(lock.write()[0], 2);
    assert!(!lock.raw().is_locked());
}

fn direct_panic_releases<L: RawLwLock + 'static>(policy: GroupPolicy) {
    let _w = watchdog("direct_panic_releases", 30);
    let lock = FlexLock::<L, u32>::new(0, policy);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        lock.group(|_| -> () { panic!("direct") })
    }));
    assert!(r.is_err());
    assert!(!lock.raw().is_locked());
    assert_eq!(
        lock.group(|v| {
            *v += 1;
            *v
        }),
        1
    );
}

fn handover_bound<L: RawLwLock + 'static>(policy: GroupPolicy) {
    // max_group = 1 forces a handover after every operation.
    exactly_once_small::<L>(policy, 1);
    exactly_once_small::<L>(policy, 3);
}

fn exactly_once_small<L: RawLwLock + 'static>(policy: GroupPolicy, max_group: usize) {
    let _w = watchdog("handover_bound", 60);
    let lock = Arc::new(FlexLock::<L, Vec<u32>>::with_config(
        vec![0; 16 * 40],
        FlexConfig {
            max_group,
            ..FlexConfig::new(policy)
        },
    ));
    let hs: Vec<_> = (0..16)
        .map(|t| {
            let lock = lock.clone();
            std::thread::spawn(move || {
                for i in 0..40 {
                    let s = t * 40 + i;
                    assert_eq!(
                        lock.group(move |v| {
                            v[s] += 1;
                            s
                        }),
                        s
                    );
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert!(lock.read().iter().all(|&x| x == 1));
    if let Some(s) = lock.stats() {
        assert!(s.max_group_size as usize <= max_group, "{s:?}");
    }
}

macro_rules! suite {
    ($m:ident, $lock:ty) => {
        mod $m {
            use super::*;
            use flexlock::GroupPolicy::{LastReleaser, Leader};

            #[test]
            fn exactly_once_leader() {
                exactly_once::<$lock>(Leader, flexlock::DEFAULT_MAX_GROUP);
            }
            #[test]
            fn exactly_once_last_releaser() {
                exactly_once::<$lock>(LastReleaser, flexlock::DEFAULT_MAX_GROUP);
            }
            #[test]
            fn handover_leader() {
                handover_bound::<$lock>(Leader);
            }
            #[test]
            fn handover_last_releaser() {
                handover_bound::<$lock>(LastReleaser);
            }
            #[test]
            fn readers_leader() {
                readers_never_see_half_applied::<$lock>(Leader);
            }
            #[test]
            fn readers_last_releaser() {
                readers_never_see_half_applied::<$lock>(LastReleaser);
            }
            #[test]
            fn group_forms_leader() {
                group_runs_everything_for_its_members::<$lock>(Leader);
            }
            #[test]
            fn group_forms_last_releaser() {
                group_runs_everything_for_its_members::<$lock>(LastReleaser);
            }
            #[test]
            fn panic_in_follower_leader() {
                panic_reaches_its_submitter::<$lock>(Leader, 2);
            }
            #[test]
            fn panic_in_leader_leader() {
                panic_reaches_its_submitter::<$lock>(Leader, 0);
            }
            #[test]
            fn panic_in_member_last_releaser() {
                panic_reaches_its_submitter::<$lock>(LastReleaser, 1);
            }
            #[test]
            fn panic_in_last_member_last_releaser() {
                panic_reaches_its_submitter::<$lock>(LastReleaser, 3);
            }
            #[test]
            fn direct_panic_leader() {
                direct_panic_releases::<$lock>(Leader);
            }
            #[test]
            fn direct_panic_last_releaser() {
                direct_panic_releases::<$lock>(LastReleaser);
            }
        }
    };
}

suite!(atomic, lwlock::RawAtomicLwLock);
suite!(classic, lwlock::RawClassicLwLock);
suite!(parking_lot, lwlock::ParkingLotLwLock);
