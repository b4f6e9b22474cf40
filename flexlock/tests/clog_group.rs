//! The CLOG group update: the same-page rule (same key joins the leader's group, another key falls
//! back to its own exclusive acquire), exactly-once execution with mixed keys, panics.

mod common;

use common::{me, wait_for, wait_up_to, waits_on_lwlock, watchdog};
use flexlock::{ClogGroupLock, GroupLock};
use lwlock::RawLwLock;
use std::sync::Arc;
use std::time::Duration;

/// Main holds the lock. A (key 1) leads and blocks; B (key 2) must fall back (it must not join A);
/// C (key 1) joins A. After release: A runs A's and C's operations, B runs its own.
fn same_page_groups_other_page_falls_back<L: RawLwLock + 'static>() {
    let _w = watchdog("same_page_groups_other_page_falls_back", 60);
    let lock = Arc::new(ClogGroupLock::<L, Vec<u32>>::new(vec![0; 3]));
    let guard = lock.write();
    let spawn = |i: usize, key: u64| {
        let (tx, rx) = std::sync::mpsc::channel();
        let l = lock.clone();
        let h = std::thread::spawn(move || {
            tx.send(me()).unwrap();
            l.update(key, move |v| {
                v[i] += 1;
                me()
            })
        });
        (h, rx.recv().unwrap())
    };
    let (a, a_proc) = spawn(0, 1);
    wait_for("A to lead the list", || lock.group_head() == Some(a_proc));
    let (b, b_proc) = spawn(1, 2);
    // B either sleeps on the lock (fallback, correct) or joins the list (wrong). With the
    // `stats` feature its fallback is counted before it blocks, so its decision is seen whatever
    // the lock; without it, parking_lot publishes no waits, so for it we just give B time.
    let cap = if lock.stats().is_some() {
        Duration::from_secs(10)
    } else {
        Duration::from_millis(300)
    };
    wait_up_to(cap, || {
        lock.group_head() == Some(b_proc)
            || waits_on_lwlock(b_proc)
            || lock.stats().is_some_and(|s| s.clog_fallbacks == 1)
    });
    let (c, c_proc) = spawn(2, 1);
    wait_for("C to join", || {
        lock.group_head() == Some(c_proc) || waits_on_lwlock(c_proc)
    });
    drop(guard);
    let ran_a = a.join().unwrap();
    let ran_b = b.join().unwrap();
    let ran_c = c.join().unwrap();
    assert_eq!(ran_a, a_proc, "the leader runs its own update");
    assert_eq!(
        ran_b, b_proc,
        "an update for another page must fall back, not join"
    );
    assert_eq!(
        ran_c, a_proc,
        "an update for the same page joins the leader's group"
    );
    assert_eq!(*lock.read(), vec![1, 1, 1]);
    if let Some(s) = lock.stats() {
        assert_eq!(s.clog_fallbacks, 1, "{s:?}");
        assert_eq!(s.groups, 1, "{s:?}");
        assert_eq!(s.max_group_size, 2, "{s:?}");
        assert_eq!(s.ops_by_leader, 1, "{s:?}");
    }
}

/// 32 threads, keys from a small set so that groups, fallbacks and the mixed-key race all happen;
/// every update must run exactly once and return to its submitter.
fn exactly_once_mixed_keys<L: RawLwLock + 'static>() {
    let _w = watchdog("exactly_once_mixed_keys", 120);
    const T: usize = 32;
    const N: usize = 60;
    let lock = Arc::new(ClogGroupLock::<L, Vec<u32>>::new(vec![0; T * N]));
    let hs: Vec<_> = (0..T)
        .map(|t| {
            let lock = lock.clone();
            std::thread::spawn(move || {
                for i in 0..N {
                    let slot = t * N + i;
                    let key = ((t + i) % 3) as u64;
                    let (s, v) = lock.update(key, move |v| {
                        v[slot] += 1;
                        (slot, v[slot])
                    });
                    assert_eq!((s, v), (slot, 1));
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert!(lock.read().iter().all(|&x| x == 1));
    if let Some(s) = lock.stats() {
        assert_eq!(s.ops_by_leader + s.ops_by_self, (T * N) as u64, "{s:?}");
    }
}

fn panic_in_group_member<L: RawLwLock + 'static>() {
    let _w = watchdog("clog_panic_in_group_member", 60);
    let lock = Arc::new(ClogGroupLock::<L, Vec<u32>>::new(vec![0; 3]));
    let guard = lock.write();
    let mut hs = Vec::new();
    for i in 0..3usize {
        let (tx, rx) = std::sync::mpsc::channel();
        let l = lock.clone();
        hs.push(std::thread::spawn(move || {
            tx.send(me()).unwrap();
            l.update(7, move |v| {
                v[i] += 1;
                assert!(i != 1, "page write failed");
            })
        }));
        let n = rx.recv().unwrap();
        wait_for("member to join", || lock.group_head() == Some(n));
    }
    drop(guard);
    let r: Vec<_> = hs.into_iter().map(|h| h.join()).collect();
    assert!(r[0].is_ok() && r[2].is_ok());
    let msg = r[1]
        .as_ref()
        .unwrap_err()
        .downcast_ref::<&str>()
        .copied()
        .unwrap_or_default();
    assert_eq!(msg, "page write failed");
    assert_eq!(*lock.read(), vec![1, 1, 1]);
    lock.update(7, |v| v[0] += 1);
    assert_eq!(lock.read()[0], 2);
}

#[test]
#[should_panic(expected = "supports only GroupPolicy::Leader")]
fn clog_rejects_last_releaser() {
    let _ = ClogGroupLock::<lwlock::RawAtomicLwLock, ()>::with_config(
        (),
        flexlock::FlexConfig::new(flexlock::GroupPolicy::LastReleaser),
    );
}

macro_rules! suite {
    ($m:ident, $lock:ty) => {
        mod $m {
            #[test]
            fn same_page_groups_other_page_falls_back() {
                super::same_page_groups_other_page_falls_back::<$lock>();
            }
            #[test]
            fn exactly_once_mixed_keys() {
                super::exactly_once_mixed_keys::<$lock>();
            }
            #[test]
            fn panic_in_group_member() {
                super::panic_in_group_member::<$lock>();
            }
        }
    };
}

suite!(atomic, lwlock::RawAtomicLwLock);
suite!(classic, lwlock::RawClassicLwLock);
suite!(parking_lot, lwlock::ParkingLotLwLock);
