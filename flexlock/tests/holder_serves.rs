//! The holder-serves FlexLock (`HolderServesLock`): an exclusive holder serves the operations
//! queued during its hold before it releases; 64 threads (oversubscribed on small machines) of
//! group operations, guards and readers run every operation exactly once, never show a reader a
//! half-applied operation, and leave nothing queued (with bound 8, and with bound 2, where most
//! serving passes hand over); a member of a handed-over chain sleeps until its server comes.

mod common;

use common::{wait_for, wait_up_to, watchdog};
use flexlock::{GroupLock, HolderServesLock};
use lwlock::{AcquireOrWait, Mode, Proc, RawAtomicLwLock, RawClassicLwLock, RawLwLock, Tranche};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::time::Duration;

#[derive(Debug, Default)]
struct Pair {
    a: u64,
    b: u64,
}

fn stress<L: RawLwLock + 'static>(bound: usize) {
    const THREADS: usize = 64;
    const OPS: u64 = 2000;
    let _w = watchdog("holder-serves stress", 240);
    let lock = Arc::new(HolderServesLock::<L, Pair>::with_bound(
        Pair::default(),
        bound,
        Tranche::PROC_ARRAY,
    ));
    let start = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS as u64)
        .map(|t| {
            let (lock, start) = (lock.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                let mut writes = 0u64;
                for i in 0..OPS {
                    match (i + t) % 16 {
                        0 => {
                            let mut g = lock.write();
                            g.a += 1;
                            g.b += 1;
                            writes += 1;
                        }
                        1 | 2 => {
                            let g = lock.read();
                            assert_eq!(g.a, g.b, "a reader saw a half-applied operation");
                        }
                        _ => {
                            let (a, b) = lock.group(|p| {
                                p.a += 1;
                                if p.a % 64 == 0 {
                                    std::thread::yield_now();
                                }
                                p.b += 1;
                                (p.a, p.b)
                            });
                            assert_eq!(a, b);
                            writes += 1;
                        }
                    }
                }
                writes
            })
        })
        .collect();
    let total: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    let g = lock.read();
    assert_eq!(
        (g.a, g.b),
        (total, total),
        "an operation was lost or doubled"
    );
    drop(g);
    assert_eq!(lock.group_head(), None, "operations left queued");
    assert!(!lock.raw().is_locked());
}

#[test]
fn holder_serves_atomic_64_threads() {
    stress::<RawAtomicLwLock>(8);
}

#[test]
fn holder_serves_classic_64_threads() {
    stress::<RawClassicLwLock>(8);
}

/// Bound 2: most serving passes end in a handover, and members of handed-over chains sleep on
/// their operations until the target serves them.
#[test]
fn holder_serves_atomic_64_threads_handovers() {
    stress::<RawAtomicLwLock>(2);
}

/// Operations queued while the main thread holds the lock are all run by the main thread's
/// release (the holder serves), in one hold.
#[test]
fn the_holder_serves_what_queued_during_its_hold() {
    let _w = watchdog("holder serves", 60);
    let lock = Arc::new(HolderServesLock::<RawAtomicLwLock, Vec<u32>>::new(
        Vec::new(),
    ));
    let main_id = std::thread::current().id();
    let g = lock.write();
    let mut ts = Vec::new();
    for k in 0..4u32 {
        let (tx, rx) = mpsc::channel();
        let l = lock.clone();
        ts.push(std::thread::spawn(move || {
            tx.send(Proc::current().number()).unwrap();
            l.group(move |v| {
                v.push(k);
                std::thread::current().id()
            })
        }));
        let n = rx.recv().unwrap();
        // Pushed (the head is the newest member; the earlier ones stay queued under our hold).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while lock.group_head() != Some(n) {
            assert!(
                std::time::Instant::now() < deadline,
                "submitter {k} never queued"
            );
            std::thread::yield_now();
        }
    }
    drop(g);
    for t in ts {
        assert_eq!(
            t.join().unwrap(),
            main_id,
            "not run by the releasing holder"
        );
    }
    assert_eq!(
        *lock.read(),
        vec![0, 1, 2, 3],
        "served out of arrival order"
    );
    assert_eq!(lock.group_head(), None);
}

/// A wrapper around the atomic LWLock whose blocking exclusive `acquire` is held up, for threads
/// that asked for it, while the gate is closed; it counts `acquire_or_wait` calls.
struct GateLock(RawAtomicLwLock);

static GATE_CLOSED: AtomicBool = AtomicBool::new(false);
static AT_GATE: AtomicBool = AtomicBool::new(false);
static ACQUIRE_OR_WAIT_CALLS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static GATED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

// SAFETY: every method forwards to the atomic LWLock; the gate only delays an acquire before
// it starts (holding nothing), which the trait allows of any acquire.
unsafe impl RawLwLock for GateLock {
    const NAME: &'static str = "gated-atomic";
    fn with_tranche(tranche: Tranche) -> Self {
        GateLock(RawAtomicLwLock::with_tranche(tranche))
    }
    fn acquire(&self, mode: Mode) -> bool {
        if mode == Mode::Exclusive && GATED.with(|g| g.get()) {
            AT_GATE.store(true, Ordering::SeqCst);
            while GATE_CLOSED.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        self.0.acquire(mode)
    }
    fn conditional_acquire(&self, mode: Mode) -> bool {
        self.0.conditional_acquire(mode)
    }
    fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait {
        ACQUIRE_OR_WAIT_CALLS.fetch_add(1, Ordering::SeqCst);
        self.0.acquire_or_wait(mode)
    }
    unsafe fn release(&self, mode: Mode) {
        // SAFETY: forwarded caller contract.
        unsafe { self.0.release(mode) }
    }
    fn is_locked(&self) -> bool {
        self.0.is_locked()
    }
    fn is_locked_exclusive(&self) -> bool {
        self.0.is_locked_exclusive()
    }
    fn tranche(&self) -> Tranche {
        self.0.tranche()
    }
}

/// A submitter whose operation is on the unserved rest of a chain handed to another member must
/// wait for that member (sleep on its operation, posted by the member's wake or handover), not
/// spin on the free lock. Bound 1; B, C, D queue under the main thread's hold; the release
/// serves B and hands C→D to C, whose blocking acquire the gate holds up. D then finds the lock
/// free, drains an empty queue and releases: it must then go to sleep on its operation. (The
/// first version called `acquire_or_wait` again at once, took the free lock, and so on in a
/// loop for as long as the target was held up: D never slept, and the handover sweep of
/// `fault_injection.rs` saw up to 1.6 M `acquire_or_wait` calls in a run of 96 operations.)
#[test]
fn a_member_of_a_handed_over_chain_sleeps_until_served() {
    let _w = watchdog("holder-serves handover member", 60);
    let lock = Arc::new(HolderServesLock::<GateLock, Vec<u32>>::with_bound(
        Vec::new(),
        1,
        Tranche::PROC_ARRAY,
    ));
    GATE_CLOSED.store(true, Ordering::SeqCst);
    let g = lock.write();
    let mut ts = Vec::new();
    let mut procs = Vec::new();
    for k in 0..3u32 {
        let (tx, rx) = mpsc::channel();
        let l = lock.clone();
        ts.push(std::thread::spawn(move || {
            GATED.with(|g| g.set(k == 1));
            tx.send(Proc::current().number()).unwrap();
            l.group(move |v| {
                v.push(k);
                Proc::current().number()
            })
        }));
        let n = rx.recv().unwrap();
        wait_for("the submitter's push", || lock.group_head() == Some(n));
        procs.push(n);
    }
    let (c, d) = (procs[1], procs[2]);
    drop(g);
    wait_for("the handover target at its acquire", || {
        AT_GATE.load(Ordering::SeqCst)
    });
    let d_sleeps_on_op = || {
        lwlock::sample_waits()
            .iter()
            .any(|s| s.proc == d && s.event.to_string() == "IPC:FlexLockGroupUpdate")
    };
    let slept = wait_up_to(Duration::from_secs(5), d_sleeps_on_op);
    let calls = ACQUIRE_OR_WAIT_CALLS.load(Ordering::SeqCst);
    GATE_CLOSED.store(false, Ordering::SeqCst);
    let served_by: Vec<u32> = ts.into_iter().map(|t| t.join().unwrap()).collect();
    assert!(
        slept,
        "the member of the handed-over chain never slept on its operation while the target \
         was held up ({calls} acquire_or_wait calls)"
    );
    assert_eq!(
        served_by[1..],
        [c, d],
        "a handover target serves its own operation first"
    );
    assert_eq!(*lock.read(), vec![0, 1, 2], "served out of arrival order");
    assert_eq!(lock.group_head(), None);
    assert!(!lock.raw().is_locked());
}
