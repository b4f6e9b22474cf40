//! Every name parking_lot 0.12 exports, imported from lwlock exactly as a parking_lot user writes
//! the import (`use lwlock::{...}` in place of `use parking_lot::{...}`), and each exercised: the
//! raw types are the raw locks of the drop-in types (a type equality the compiler checks), a
//! `FairMutex` hands itself to its queued waiter on every unlock (two threads, under a
//! watchdog), and `Once` runs its closure exactly once among racing callers, is poisoned by a
//! panicking closure, and is recovered by `call_once_force`.
#![cfg(not(any(loom, shuttle, lwsim)))]

mod common;

use lwlock::{
    const_fair_mutex, const_mutex, const_reentrant_mutex, const_rwlock, lock_api, Condvar,
    FairMutex, FairMutexGuard, MappedFairMutexGuard, MappedMutexGuard, MappedReentrantMutexGuard,
    MappedRwLockReadGuard, MappedRwLockWriteGuard, Mutex, MutexGuard, Once, OnceState,
    RawFairMutex, RawMutex, RawRwLock, RawThreadId, ReentrantMutex, ReentrantMutexGuard, RwLock,
    RwLockReadGuard, RwLockUpgradableReadGuard, RwLockWriteGuard, WaitTimeoutResult,
};
#[cfg(feature = "arc_lock")]
use lwlock::{
    ArcMutexGuard, ArcReentrantMutexGuard, ArcRwLockReadGuard, ArcRwLockUpgradableReadGuard,
    ArcRwLockWriteGuard,
};
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::time::Duration;

// The raw types are the raw locks under the drop-in types: a parking_lot user's
// `lock_api::RwLock<RawRwLock, T>` (or `Mutex<RawMutex, T>`, ...) is lwlock's type. These compile
// only if the types are equal.
fn _rwlock_is_lock_api_over_raw<T>(l: RwLock<T>) -> lock_api::RwLock<RawRwLock, T> {
    l
}
fn _mutex_is_lock_api_over_raw<T>(m: Mutex<T>) -> lock_api::Mutex<RawMutex, T> {
    m
}
fn _fair_mutex_is_lock_api_over_raw<T>(m: FairMutex<T>) -> lock_api::Mutex<RawFairMutex, T> {
    m
}
fn _remutex_is_lock_api_over_raw<T>(
    m: ReentrantMutex<T>,
) -> lock_api::ReentrantMutex<RawMutex, RawThreadId, T> {
    m
}

#[test]
fn raw_types_lock_and_unlock_through_lock_api() {
    use lock_api::{GetThreadId, RawMutex as _, RawMutexFair as _, RawRwLock as _};
    let rw = <RawRwLock as lock_api::RawRwLock>::INIT;
    rw.lock_shared();
    assert!(!rw.try_lock_exclusive(), "a read hold excludes a writer");
    // SAFETY: held shared by this thread.
    unsafe { rw.unlock_shared() };
    assert!(rw.try_lock_exclusive());
    // SAFETY: held exclusively by this thread.
    unsafe { rw.unlock_exclusive() };

    let m = <RawMutex as lock_api::RawMutex>::INIT;
    m.lock();
    assert!(m.is_locked() && !m.try_lock());
    // SAFETY: held by this thread.
    unsafe { m.unlock() };
    let f = <RawFairMutex as lock_api::RawMutex>::INIT;
    f.lock();
    assert!(f.is_locked() && !f.try_lock());
    // SAFETY: held by this thread (a fair unlock with nobody queued frees it).
    unsafe { f.unlock_fair() };
    assert!(!f.is_locked());
    assert_ne!(
        RawThreadId.nonzero_thread_id(),
        std::thread::spawn(|| RawThreadId.nonzero_thread_id())
            .join()
            .unwrap(),
        "two live threads, two ids"
    );
}

#[test]
fn the_drop_in_types_under_their_parking_lot_names() {
    static RW: RwLock<[u32; 2]> = const_rwlock([1, 2]);
    static M: Mutex<u32> = const_mutex(0);
    static R: ReentrantMutex<RefCell<u32>> = const_reentrant_mutex(RefCell::new(0));

    let r: RwLockReadGuard<'_, [u32; 2]> = RW.read();
    let m: MappedRwLockReadGuard<'_, u32> = RwLockReadGuard::map(r, |a| &a[1]);
    assert_eq!(*m, 2);
    drop(m);
    let w: RwLockWriteGuard<'_, [u32; 2]> = RW.write();
    let mut w: MappedRwLockWriteGuard<'_, u32> = RwLockWriteGuard::map(w, |a| &mut a[0]);
    *w = 5;
    drop(w);
    let u: RwLockUpgradableReadGuard<'_, [u32; 2]> = RW.upgradable_read();
    let mut w = RwLockUpgradableReadGuard::upgrade(u);
    w[1] = 6;
    drop(w);
    assert_eq!(*RW.read(), [5, 6]);

    let g: MutexGuard<'_, u32> = M.lock();
    let mut g: MappedMutexGuard<'_, u32> = MutexGuard::map(g, |v| v);
    *g += 1;
    drop(g);
    let cv = Condvar::new();
    let mut g = M.lock();
    let t: WaitTimeoutResult = cv.wait_for(&mut g, Duration::from_millis(1));
    assert!(t.timed_out(), "nobody notifies");
    assert_eq!(*g, 1);
    drop(g);

    let a: ReentrantMutexGuard<'_, RefCell<u32>> = R.lock();
    let b = R.lock(); // re-entered on the same thread
    *b.borrow_mut() += 1;
    let c: MappedReentrantMutexGuard<'_, RefCell<u32>> = ReentrantMutexGuard::map(b, |cell| cell);
    assert_eq!(*c.borrow(), 1);
    drop((a, c));
    assert!(!R.is_locked());
}

#[cfg(feature = "arc_lock")]
#[test]
fn arc_guards_under_their_parking_lot_names() {
    let rw = Arc::new(RwLock::new(0u32));
    let r: ArcRwLockReadGuard<u32> = rw.read_arc();
    drop(r);
    let u: ArcRwLockUpgradableReadGuard<u32> = rw.upgradable_read_arc();
    drop(u);
    let mut w: ArcRwLockWriteGuard<u32> = rw.write_arc();
    *w += 1;
    drop(w);
    let m = Arc::new(Mutex::new(0u32));
    let g: ArcMutexGuard<u32> = m.lock_arc();
    std::thread::spawn(move || drop(g)).join().unwrap();
    let r = Arc::new(ReentrantMutex::new(()));
    let g: ArcReentrantMutexGuard<()> = r.lock_arc();
    drop(g);
    let f = Arc::new(FairMutex::new(1u32));
    let g: lwlock::ArcFairMutexGuard<u32> = f.lock_arc();
    assert_eq!(*g, 1);
    drop(g);
    assert!(!rw.is_locked() && !m.is_locked() && !r.is_locked() && !f.is_locked());
}

#[test]
fn fair_mutex_guards_and_const() {
    static F: FairMutex<(u32, u32)> = const_fair_mutex((1, 2));
    let g: FairMutexGuard<'_, (u32, u32)> = F.lock();
    assert!(F.try_lock().is_none());
    let mut m: MappedFairMutexGuard<'_, u32> = FairMutexGuard::map(g, |v| &mut v.1);
    *m = 3;
    drop(m);
    assert!(F.try_lock_for(Duration::from_millis(1)).is_some());
    assert_eq!(*F.lock(), (1, 3));
}

/// Blocks until the thread of wait record `proc` is waiting on an LWLock (its wait event is set
/// only after it queued: `HAS_WAITERS` is already in the lock's word).
fn wait_until_queued(proc: u32) {
    while !lwlock::sample_waits()
        .iter()
        .any(|s| s.proc == proc && s.event.is_waiting())
    {
        // A sleep, not a yield: the waiter is pinned to this CPU.
        std::thread::sleep(Duration::from_micros(100));
    }
}

/// On Linux: pins the calling thread to CPU `cpu`. Best effort: a refusal leaves the thread as
/// it was.
fn pin(cpu: usize) {
    #[cfg(target_os = "linux")]
    // SAFETY: a plain syscall on the calling thread (pid 0) with a zeroed, then filled, CPU set
    // on the stack; a failure is ignored (best effort).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cpu;
}

/// The calling thread's kernel thread id (0 where there is none).
fn thread_id() -> i32 {
    #[cfg(target_os = "linux")]
    // SAFETY: `gettid` takes no arguments and touches no memory of ours.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) } as i32;
    #[cfg(not(target_os = "linux"))]
    let tid = 0;
    tid
}

/// On Linux: gives thread `tid` the `SCHED_IDLE` policy (it then runs on its CPU only when no
/// ordinary thread is runnable there, and its wakeup never preempts one), or back the ordinary
/// `SCHED_OTHER`. Best effort: a refusal leaves the thread as it was.
fn set_idle(tid: i32, idle: bool) {
    #[cfg(target_os = "linux")]
    // SAFETY: a plain syscall on a thread of this process with a parameter struct on the stack;
    // a failure is ignored (best effort).
    unsafe {
        let param = libc::sched_param { sched_priority: 0 };
        let policy = if idle {
            libc::SCHED_IDLE
        } else {
            libc::SCHED_OTHER
        };
        libc::sched_setscheduler(tid, policy, &param);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (tid, idle);
}

/// The CPU the calling thread runs on (0 where unknown).
fn current_cpu() -> usize {
    #[cfg(target_os = "linux")]
    // SAFETY: `sched_getcpu` takes no arguments and touches no memory of ours.
    let cpu = usize::try_from(unsafe { libc::sched_getcpu() }).unwrap_or(0);
    #[cfg(not(target_os = "linux"))]
    let cpu = 0;
    cpu
}

/// A `FairMutex` handed over on every unlock: the holder drops its guard while a second thread
/// is queued, and at once tries to take the mutex again, while a third thread spins on
/// `try_lock` across that unlock. Every unlock of a `FairMutex` is a fair one: the mutex goes
/// from the holder to the queued thread in one step (granted in the word before the waiter is
/// woken) and that thread keeps it until the round ends, so no `try_lock` can succeed, whatever
/// the scheduling. With a plain unlock the word would be free from the release until the woken
/// thread runs; to keep that window open for the holder's own `try_lock` (a woken thread often
/// preempts its waker), the waiter is pinned to the holder's CPU and, where Linux allows it, given
/// the `SCHED_IDLE` policy from just before the unlock until the holder's `try_lock` has returned,
/// so it cannot run before the holder's attempt. (Only for that window: a waiter idle from its
/// start could be starved by any runnable thread on that CPU before it ever queued.) Repeated for
/// 50 rounds.
#[test]
fn fair_mutex_hands_over_on_every_unlock() {
    let _dog = common::Watchdog::new("fair_mutex handoff", Duration::from_secs(120));
    let m = Arc::new(FairMutex::new(Vec::<u32>::new()));
    // The holder is a thread of its own, so that pinning it leaves the test harness's alone.
    let holder = {
        let m = m.clone();
        std::thread::spawn(move || {
            let cpu = current_cpu();
            pin(cpu);
            fair_rounds(&m, cpu)
        })
    };
    holder.join().expect("the holder");
    assert_eq!(*m.lock(), (0..50).collect::<Vec<_>>());
}

/// The rounds of [`fair_mutex_hands_over_on_every_unlock`], on the holder's thread (on `cpu`).
fn fair_rounds(m: &Arc<FairMutex<Vec<u32>>>, cpu: usize) {
    use std::sync::atomic::AtomicBool;
    for round in 0..50u32 {
        let held = m.lock();
        let (tx_proc, rx_proc) = mpsc::channel();
        let (tx_go, rx_go) = mpsc::channel::<()>();
        let (tx_got, rx_got) = mpsc::channel::<()>();
        let waiter = {
            let m = m.clone();
            std::thread::spawn(move || {
                pin(cpu);
                tx_proc
                    .send((lwlock::Proc::current().number(), thread_id()))
                    .expect("send the record number");
                let mut g = m.lock(); // queues behind `held`
                g.push(round);
                tx_got.send(()).expect("report the handover");
                rx_go.recv().expect("wait to let go");
                drop(g);
            })
        };
        let (proc, tid) = rx_proc.recv().expect("the waiter's record number");
        wait_until_queued(proc);
        let (spinning, stop) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let spinner = {
            let (m, spinning, stop) = (m.clone(), spinning.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut barged = false;
                while !stop.load(Ordering::Acquire) {
                    if m.try_lock().is_some() {
                        barged = true;
                    }
                    spinning.store(true, Ordering::Release);
                    std::hint::spin_loop();
                }
                barged
            })
        };
        while !spinning.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
        set_idle(tid, true);
        drop(held); // a fair unlock: hands the mutex to the queued thread
        let mine = m.try_lock().is_some();
        set_idle(tid, false);
        rx_got.recv().expect("the waiter got the mutex");
        stop.store(true, Ordering::Release);
        let barged = spinner.join().expect("the spinner");
        tx_go.send(()).expect("let the waiter go");
        waiter.join().expect("the waiter");
        assert!(
            !mine && !barged,
            "round {round}: the unlock left the mutex free instead of handing it to the waiter \
             (taken by the unlocking thread: {mine}, by the spinner: {barged})"
        );
    }
}

/// `FairMutexGuard::bump` with a thread queued: the twin of
/// [`fair_mutex_hands_over_on_every_unlock`] for a bump. A fair bump hands the mutex to the
/// queued thread (granted in the word before it is woken) and then queues the bumping thread
/// behind it, so when `bump` returns the waiter's section has run in between: its push is in the
/// data. A bump that unlocked plainly and locked again would take the mutex straight back, the
/// woken waiter not yet running: as in the unlock test the waiter is pinned to the holder's CPU
/// with the `SCHED_IDLE` policy for the bump, so it cannot run before the holder's re-acquire
/// (the holder itself is the newcomer that must not barge; no other thread contends, so the
/// holder never blocks and frees its CPU early). Repeated for 20 rounds.
///
/// Kills the patched mutant `p_fair_mutex_plain_bump` of `ci/mutation.list`.
#[test]
fn fair_mutex_bump_hands_over_to_the_queued_thread() {
    let _dog = common::Watchdog::new("fair_mutex bump", Duration::from_secs(120));
    let m = Arc::new(FairMutex::new(Vec::<u32>::new()));
    let holder = {
        let m = m.clone();
        std::thread::spawn(move || {
            let cpu = current_cpu();
            pin(cpu);
            for round in 0..20u32 {
                let mut held = m.lock();
                let (tx_proc, rx_proc) = mpsc::channel();
                let waiter = {
                    let m = m.clone();
                    std::thread::spawn(move || {
                        pin(cpu);
                        tx_proc
                            .send((lwlock::Proc::current().number(), thread_id()))
                            .expect("send the record number");
                        m.lock().push(round); // queues behind `held`
                    })
                };
                let (proc, tid) = rx_proc.recv().expect("the waiter's record number");
                wait_until_queued(proc);
                set_idle(tid, true);
                FairMutexGuard::bump(&mut held);
                let ran_between = held.last() == Some(&round);
                set_idle(tid, false);
                drop(held);
                waiter.join().expect("the waiter");
                assert!(
                    ran_between,
                    "round {round}: bump took the mutex back before the queued thread ran"
                );
            }
        })
    };
    holder.join().expect("the holder");
    assert_eq!(*m.lock(), (0..20).collect::<Vec<_>>());
}

/// Two threads contending on a `FairMutex` for a count, every unlock fair: each section is
/// counted, one holder at a time.
#[test]
fn fair_mutex_two_threads_count_every_section() {
    let _dog = common::Watchdog::new("fair_mutex count", Duration::from_secs(120));
    let m = Arc::new(FairMutex::new(0u64));
    let inside = Arc::new(AtomicU32::new(0));
    let start = Arc::new(Barrier::new(2));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (m, inside, start) = (m.clone(), inside.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                for _ in 0..20_000 {
                    let mut g = m.lock();
                    assert_eq!(inside.fetch_add(1, Ordering::Relaxed), 0, "two holders");
                    *g += 1;
                    inside.fetch_sub(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a counting thread");
    }
    assert_eq!(*m.lock(), 40_000);
}

#[test]
fn once_runs_once_and_reports_its_state() {
    static O: Once = Once::new();
    assert_eq!(O.state(), OnceState::New);
    assert!(!O.state().done() && !O.state().poisoned());
    let mut runs = 0;
    O.call_once(|| runs += 1);
    O.call_once(|| runs += 1);
    O.call_once_force(|_| runs += 1);
    assert_eq!(runs, 1);
    assert_eq!(O.state(), OnceState::Done);
    assert!(O.state().done());
    assert_eq!(format!("{O:?}"), "Once { state: Done }");
    let d = Once::default();
    assert_eq!(d.state(), OnceState::New);
}

#[test]
fn once_poisoned_by_a_panic_then_forced() {
    let o = Once::new();
    let r = catch_unwind(AssertUnwindSafe(|| o.call_once(|| panic!("init failed"))));
    assert!(r.is_err(), "the closure's panic propagates");
    assert_eq!(o.state(), OnceState::Poisoned);
    assert!(o.state().poisoned());

    // A poisoned Once: call_once panics without running its closure.
    let mut ran = false;
    let r = catch_unwind(AssertUnwindSafe(|| o.call_once(|| ran = true)));
    let msg = r.expect_err("call_once on a poisoned Once must panic");
    assert_eq!(
        msg.downcast_ref::<&str>().copied(),
        Some("Once instance has previously been poisoned")
    );
    assert!(!ran);

    // A forced call that panics too keeps it poisoned.
    let r = catch_unwind(AssertUnwindSafe(|| {
        o.call_once_force(|s| {
            assert!(s.poisoned());
            panic!("again")
        })
    }));
    assert!(r.is_err());
    assert_eq!(o.state(), OnceState::Poisoned);

    // A forced call sees the poison, and its return ends it.
    let mut seen = None;
    o.call_once_force(|s| seen = Some(s));
    assert_eq!(seen, Some(OnceState::Poisoned));
    assert_eq!(o.state(), OnceState::Done);
    o.call_once(|| panic!("never runs: done"));
}

/// 8 threads call `call_once` at once; the closure (slow: it sleeps, so the others find it
/// running and sleep on the word) runs exactly once, and every caller returns after it, seeing
/// its write.
#[test]
fn once_concurrent_callers_run_the_closure_exactly_once() {
    let _dog = common::Watchdog::new("once stampede", Duration::from_secs(60));
    for _ in 0..20 {
        let o = Arc::new(Once::new());
        let runs = Arc::new(AtomicU32::new(0));
        let value = Arc::new(AtomicU64::new(0));
        let start = Arc::new(Barrier::new(8));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (o, runs, value, start) =
                    (o.clone(), runs.clone(), value.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    o.call_once(|| {
                        runs.fetch_add(1, Ordering::Relaxed);
                        std::thread::sleep(Duration::from_millis(2));
                        value.store(42, Ordering::Relaxed);
                    });
                    // Relaxed: only the Once orders the closure's store before this load.
                    value.load(Ordering::Relaxed)
                })
            })
            .collect();
        for t in threads {
            assert_eq!(
                t.join().expect("a caller"),
                42,
                "returned before the closure"
            );
        }
        assert_eq!(
            runs.load(Ordering::Relaxed),
            1,
            "the closure ran more than once"
        );
    }
}

/// Waits until thread `tid` of this process sleeps in a futex wait on the word at `addr`. On
/// Linux it reads `/proc/self/task/TID/syscall`, which names the system call a blocked thread is
/// in and its arguments (the first is the futex word's address); elsewhere it gives the thread
/// 10 ms.
fn wait_until_futex_sleeping(tid: i32, addr: usize) {
    #[cfg(target_os = "linux")]
    {
        let path = format!("/proc/self/task/{tid}/syscall");
        let start = std::time::Instant::now();
        loop {
            let line = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
            let mut fields = line.split_whitespace();
            let nr = fields.next().and_then(|f| f.parse::<libc::c_long>().ok());
            let arg0 = fields
                .next()
                .and_then(|f| usize::from_str_radix(f.trim_start_matches("0x"), 16).ok());
            if nr == Some(libc::SYS_futex) && arg0 == Some(addr) {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "thread {tid} never slept on the futex word at {addr:#x} (last: {line:?})"
            );
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (tid, addr);
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A caller waiting for a closure that panics panics too (the Once is poisoned); a forced call
/// after it runs its own closure, told of the poison.
///
/// Kills the patched mutant `p_once_poison_no_wake` of `ci/mutation.list` (a runner that wakes
/// the sleepers only when its closure returns) on every run: the closure fails only once the
/// waiter sleeps on the word.
#[test]
fn once_waiter_of_a_panicking_closure_panics() {
    let _dog = common::Watchdog::new("once poison waiter", Duration::from_secs(60));
    let o = Arc::new(Once::new());
    let (tx_in, rx_in) = mpsc::channel::<()>();
    let (tx_fail, rx_fail) = mpsc::channel::<()>();
    let runner = {
        let o = o.clone();
        std::thread::spawn(move || {
            o.call_once(|| {
                tx_in.send(()).expect("report the closure running");
                rx_fail.recv().expect("wait to fail");
                panic!("init failed");
            })
        })
    };
    rx_in.recv().expect("the closure runs");
    assert_eq!(o.state(), OnceState::InProgress);
    let ran = Arc::new(AtomicU32::new(0));
    let (tx_tid, rx_tid) = mpsc::channel();
    let waiter = {
        let (o, ran) = (o.clone(), ran.clone());
        std::thread::spawn(move || {
            tx_tid.send(thread_id()).expect("send the thread id");
            o.call_once(|| {
                ran.fetch_add(1, Ordering::Relaxed);
            })
        })
    };
    // The closure fails only once the waiter sleeps on the word: the poisoning runner must wake
    // it (a runner that woke sleepers only on success would leave it asleep: a hang, reported
    // below). Waiting for the sleep itself, not for a fixed time, makes that path the one taken
    // on every run, however loaded the machine.
    let word = &*o as *const Once as usize;
    wait_until_futex_sleeping(rx_tid.recv().expect("the waiter's thread id"), word);
    tx_fail.send(()).expect("let the closure fail");
    assert!(runner.join().is_err(), "the closure's panic propagates");
    let start = std::time::Instant::now();
    while !waiter.is_finished() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "a caller asleep on a Once whose closure panicked was never woken"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(
        waiter.join().is_err(),
        "a caller waiting for a closure that panicked must panic"
    );
    assert_eq!(
        ran.load(Ordering::Relaxed),
        0,
        "a poisoned Once ran a closure"
    );
    assert_eq!(o.state(), OnceState::Poisoned);
    let mut seen = None;
    o.call_once_force(|s| seen = Some(s));
    assert_eq!(seen, Some(OnceState::Poisoned));
    assert!(o.state().done());
}

/// `call_once` waiting for a forced closure: it returns when that one returns, without running.
#[test]
fn once_call_once_waits_for_a_forced_closure() {
    let _dog = common::Watchdog::new("once force wait", Duration::from_secs(60));
    let o = Arc::new(Once::new());
    let _ = catch_unwind(AssertUnwindSafe(|| o.call_once(|| panic!("poison"))));
    let (tx_in, rx_in) = mpsc::channel::<()>();
    let (tx_done, rx_done) = mpsc::channel::<()>();
    let forced = {
        let o = o.clone();
        std::thread::spawn(move || {
            o.call_once_force(|s| {
                assert!(s.poisoned());
                tx_in.send(()).expect("report running");
                rx_done.recv().expect("wait to finish");
            })
        })
    };
    rx_in.recv().expect("the forced closure runs");
    let waiter = {
        let o = o.clone();
        std::thread::spawn(move || {
            let mut called = false;
            o.call_once(|| called = true);
            called
        })
    };
    tx_done.send(()).expect("let it finish");
    forced.join().expect("the forced caller");
    assert!(!waiter.join().expect("the waiter"), "a second closure ran");
    assert!(o.state().done());
}

#[cfg(feature = "deadlock_detection")]
#[test]
fn deadlock_module_is_a_no_op() {
    use lwlock::deadlock;
    let found: Vec<Vec<deadlock::DeadlockedThread>> = deadlock::check_deadlock();
    assert!(found.is_empty());
    // The accessors parking_lot users call compile.
    let _: fn(&deadlock::DeadlockedThread) -> std::thread::ThreadId =
        deadlock::DeadlockedThread::thread_id;
    let _: fn(&deadlock::DeadlockedThread) -> &std::backtrace::Backtrace =
        deadlock::DeadlockedThread::backtrace;
}
