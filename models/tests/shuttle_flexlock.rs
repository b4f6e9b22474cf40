//! shuttle models of the group protocols: many submitters, readers and writers on a FlexLock
//! (both policies) and a CLOG group lock, long operation sequences under the PCT scheduler.
#![cfg(shuttle)]

use flexlock::{ClogGroupLock, FlexLock, GroupLock, GroupPolicy};
use lwlock::sync::thread;
use lwlock::RawAtomicLwLock;
use models::Model;
use std::sync::Arc;

const ITERATIONS: usize = 1000;
const DEPTH: usize = 3;

#[derive(Debug, Default)]
struct Data {
    a: u64,
    b: u64,
    /// Operations applied per submitting thread.
    applied: [u64; 8],
}

/// `threads` threads × `ops` operations: group operations (most), readers and writers. Every
/// group operation runs once and returns its own result; readers never see a half-applied group.
fn flex_workload(policy: GroupPolicy, threads: usize, ops: u64) {
    let lock = Arc::new(FlexLock::<RawAtomicLwLock, Data>::new(
        Data::default(),
        policy,
    ));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let lock = lock.clone();
            thread::spawn(move || {
                let (mut mine, mut writes) = (0u64, 0u64);
                for i in 0..ops {
                    match (t as u64 + i) % 4 {
                        0 | 1 => {
                            let (who, n) = lock.group(move |d: &mut Data| {
                                d.applied[t] += 1;
                                d.a += 1;
                                d.b += 1;
                                (t, d.applied[t])
                            });
                            mine += 1;
                            assert_eq!(who, t, "a submitter got another operation's result");
                            assert_eq!(n, mine, "an operation ran twice or was lost");
                        }
                        2 => {
                            let g = lock.read();
                            assert_eq!(g.a, g.b, "a reader saw a half-applied group");
                            assert!(g.applied[t] >= mine, "own operation not visible");
                        }
                        _ => {
                            let mut g = lock.write();
                            g.a += 1;
                            thread::yield_now();
                            g.b += 1;
                            writes += 1;
                        }
                    }
                }
                (mine, writes)
            })
        })
        .collect();
    let (mut ops_total, mut writes_total) = (0, 0);
    let mut per_thread = Vec::new();
    for h in handles {
        let (m, w) = h.join().unwrap();
        per_thread.push(m);
        ops_total += m;
        writes_total += w;
    }
    let g = lock.read();
    assert_eq!(g.a, ops_total + writes_total, "an update was lost");
    assert_eq!(g.a, g.b);
    for (t, m) in per_thread.iter().enumerate() {
        assert_eq!(g.applied[t], *m, "thread {t}: operations lost or repeated");
    }
    drop(g);
    assert_eq!(lock.group_head(), None, "operations left queued");
}

/// CLOG group update, `threads` threads on two pages: every update runs once on its own page.
fn clog_workload(threads: usize, ops: u64) {
    let lock = Arc::new(ClogGroupLock::<RawAtomicLwLock, [u64; 2]>::new([0, 0]));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let lock = lock.clone();
            thread::spawn(move || {
                for i in 0..ops {
                    let page = ((t as u64 + i) % 2) as usize;
                    let r = lock.update(page as u64, move |p: &mut [u64; 2]| {
                        p[page] += 1;
                        (t, page)
                    });
                    assert_eq!(r, (t, page), "a submitter got another operation's result");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let pages = *lock.read();
    assert_eq!(
        pages[0] + pages[1],
        threads as u64 * ops,
        "an update was lost or repeated"
    );
}

macro_rules! shuttle_model {
    ($(#[doc = $proves:literal])+ $name:ident, threads: $threads:expr, $body:expr) => {
        $(#[doc = $proves])+
        #[test]
        fn $name() {
            Model {
                name: concat!(module_path!(), "::", stringify!($name)),
                proves: concat!($($proves),+).trim_start(),
                threads: $threads,
                bound: None,
            }
            .pct(ITERATIONS, DEPTH, $body);
        }
    };
}

shuttle_model! {
    /// FlexLock leader policy, 6 threads × 16 ops (group, read, write): ops once, own results, whole groups.
    flex_leader, threads: 6, || flex_workload(GroupPolicy::Leader, 6, 16)
}

shuttle_model! {
    /// FlexLock last-releaser policy, 6 threads × 16 ops: no stranded op, ops once, whole groups.
    flex_last_releaser, threads: 6, || flex_workload(GroupPolicy::LastReleaser, 6, 16)
}

shuttle_model! {
    /// CLOG group update, 6 threads × 12 updates on two pages: every update once, own result.
    clog_two_pages, threads: 6, || clog_workload(6, 12)
}
