//! The wake rules of the two LWLocks, observed from which queued waiters a release takes off the
//! wait list (read from their records right after it returns: deterministic, whatever the
//! scheduling) and from the order in which they then get the lock.
//!
//! With an exclusive holder and the queue `S, X, S`:
//! * 9.4 (classic) wakes the leading run of shared waiters up to the first exclusive one: the
//!   first S alone; then X; then the last S.
//! * 9.5+ (atomic) wakes every shared waiter on the list when the first waiter is shared,
//!   leaving exclusive waiters queued: both S, then X.
//!
//! Kills the patched mutant `p_classic_wakes_past_writer` of `ci/mutation.list` (9.4's wake
//! selection extended over the writer) whatever the scheduling: the order alone showed it only
//! when the woken reader behind the writer ran before the first one released.

mod common;

use lwlock::proc::probe;
use lwlock::{Mode, Proc, RawAtomicLwLock, RawClassicLwLock, RawLwLock, Tranche, WaitClass};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

fn sleepers_on(t: Tranche) -> usize {
    lwlock::sample_waits()
        .iter()
        .filter(|s| s.event.class() == Some(WaitClass::LwLock) && s.event.event_name() == t.name())
        .count()
}

/// What one release did to a queue: the waiters it woke, and the order in which all of them got
/// the lock (indices into the modes queued).
#[derive(Debug)]
struct Woken {
    /// The waiters the holder's release took off the wait list, read from their records right
    /// after the release returned. Both locks unlink the waiters they wake before the release
    /// returns, and nothing else can wake or queue anyone before the check: every waiter that
    /// gets the lock holds it until the check is done (so no later release wakes anyone yet), and
    /// a woken waiter finds the lock free or held shared, so it never queues again. The set is
    /// therefore the wake rule's, whatever the scheduling.
    by_release: Vec<usize>,
    /// The order in which the waiters got the lock.
    order: Vec<usize>,
}

/// Queues one waiter per mode behind an exclusive holder, in order, releases, and reports which
/// waiters the release woke and the order in which they got the lock. The first `run` waiters to
/// get it (the ones the rule under test wakes together) hold it, after the check, until all
/// `run` have it (at most 10 s), so a woken thread that the scheduler runs late still gets in
/// before the lock passes on; every later one releases at once.
fn wake_order<L: RawLwLock + 'static>(tranche: &'static str, modes: &[Mode], run: usize) -> Woken {
    let _dog = common::Watchdog::new("wake_order", Duration::from_secs(60));
    let t = Tranche::register(tranche);
    let l = Arc::new(L::with_tranche(t));
    l.acquire(Mode::Exclusive);
    let order = Arc::new(Mutex::new(Vec::new()));
    let checked = Arc::new(AtomicBool::new(false));
    let mut handles = Vec::new();
    let mut records = Vec::new();
    for (i, &mode) in modes.iter().enumerate() {
        let (l2, o, c) = (l.clone(), order.clone(), checked.clone());
        let (tx, rx) = mpsc::channel();
        handles.push(std::thread::spawn(move || {
            tx.send(Proc::current().number()).unwrap();
            l2.acquire(mode);
            let got = {
                let mut v = o.lock().unwrap();
                v.push(i);
                v.len()
            };
            // Hold until the release's wakeups were read (see `Woken::by_release`).
            while !c.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(1));
            }
            if got <= run {
                let start = Instant::now();
                while o.lock().unwrap().len() < run && start.elapsed() < Duration::from_secs(10) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            // SAFETY: held in `mode`.
            unsafe { l2.release(mode) };
        }));
        records.push(rx.recv().unwrap());
        let start = Instant::now();
        while sleepers_on(t) < i + 1 {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "waiter {i} never queued"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    assert!(
        records
            .iter()
            .all(|&r| probe::is_queued(Proc::by_number(r))),
        "every waiter is queued before the release"
    );
    // SAFETY: held exclusively.
    unsafe { l.release(Mode::Exclusive) };
    let by_release = (0..modes.len())
        .filter(|&i| !probe::is_queued(Proc::by_number(records[i])))
        .collect();
    checked.store(true, Ordering::Release);
    for h in handles {
        h.join().unwrap();
    }
    let order = order.lock().unwrap().clone();
    Woken { by_release, order }
}

#[test]
fn classic_wakes_shared_run_up_to_first_writer() {
    let w = wake_order::<RawClassicLwLock>(
        "WakeOrderClassic",
        &[Mode::Shared, Mode::Exclusive, Mode::Shared],
        1,
    );
    assert_eq!(
        w.by_release,
        vec![0],
        "9.4: the release wakes the first S alone: {w:?}"
    );
    assert_eq!(w.order, vec![0, 1, 2], "9.4: S alone, then X, then S");
}

#[test]
fn atomic_wakes_every_shared_waiter_past_writers() {
    let w = wake_order::<RawAtomicLwLock>(
        "WakeOrderAtomic",
        &[Mode::Shared, Mode::Exclusive, Mode::Shared],
        2,
    );
    assert_eq!(
        w.by_release,
        vec![0, 2],
        "9.5+: the release wakes both S: {w:?}"
    );
    assert_eq!(w.order.last(), Some(&1), "9.5+: both S before X: {w:?}");
}

#[test]
fn exclusive_waiter_first_is_woken_alone() {
    for w in [
        wake_order::<RawAtomicLwLock>("WakeOrderXFirstA", &[Mode::Exclusive, Mode::Shared], 1),
        wake_order::<RawClassicLwLock>("WakeOrderXFirstC", &[Mode::Exclusive, Mode::Shared], 1),
    ] {
        assert_eq!(
            w.by_release,
            vec![0],
            "a writer at the head is woken alone: {w:?}"
        );
        assert_eq!(w.order, vec![0, 1]);
    }
}
