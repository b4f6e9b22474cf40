//! Model bodies shared by every lock of the [`RawLwLock`] trait (run under loom or shuttle).
//!
//! Each body builds its lock inside the model (loom objects cannot outlive an execution), runs
//! two or three threads against it and checks, besides what loom/shuttle check by themselves
//! (data races on [`Protected`] data, deadlocks = lost wakeups):
//! * a reader never sees a half-applied update (the protected pair is always equal);
//! * no update is lost (the final count);
//! * the lock is quiescent afterwards: free, and a conditional exclusive acquire succeeds.

use crate::Protected;
use lwlock::sync::{thread, AtomicBool, AtomicU64, Ordering};
use lwlock::{AcquireOrWait, Mode, RawLwLock, RawLwLockVar, Tranche, VarWait};
use std::sync::Arc;

/// A lock under test and the pair it protects.
#[derive(Debug)]
pub struct Shared<L> {
    /// The lock.
    pub lock: L,
    /// Written as a pair under the exclusive lock; equal whenever the lock is not held exclusively.
    pub data: Protected<(u64, u64)>,
}

impl<L: RawLwLock> Shared<L> {
    /// A free lock and a zero pair.
    pub fn new() -> Arc<Self> {
        Arc::new(Shared {
            lock: L::with_tranche(Tranche::DEFAULT),
            data: Protected::new((0, 0)),
        })
    }

    /// One exclusive critical section: increments both halves of the pair.
    pub fn update(&self) {
        self.lock.acquire(Mode::Exclusive);
        self.bump();
        // SAFETY: held exclusively, taken above.
        unsafe { self.lock.release(Mode::Exclusive) };
    }

    /// Increments both halves of the pair, one at a time.
    ///
    /// The caller must hold the lock exclusively.
    pub fn bump(&self) {
        // SAFETY: the caller holds the lock exclusively.
        unsafe { self.data.write(|d| d.0 += 1) };
        // shuttle does not track cell accesses: give a reader the chance to see half an update.
        // (loom reports any unordered access as a race without this extra scheduling point.)
        #[cfg(shuttle)]
        thread::yield_now();
        // SAFETY: as above.
        unsafe { self.data.write(|d| d.1 += 1) };
    }

    /// One shared critical section: returns the pair's value, checking it is not half-applied.
    pub fn read(&self) -> u64 {
        self.lock.acquire(Mode::Shared);
        // SAFETY: held shared, taken above.
        let (a, b) = unsafe { self.data.read(|d| *d) };
        // SAFETY: held shared, taken above.
        unsafe { self.lock.release(Mode::Shared) };
        assert_eq!(a, b, "a reader saw a half-applied update");
        a
    }

    /// The pair's value once every other thread has been joined.
    pub fn value(&self) -> u64 {
        // SAFETY: all other threads were joined, which orders their accesses before ours.
        let (a, b) = unsafe { self.data.read(|d| *d) };
        assert_eq!(a, b, "half-applied update left behind");
        a
    }

    /// Checks that the lock is free and takes no waiter into account any more.
    pub fn assert_quiescent(&self) {
        assert!(
            !self.lock.is_locked(),
            "lock still held after every thread finished"
        );
        assert!(
            self.lock.conditional_acquire(Mode::Exclusive),
            "a free lock refused a conditional exclusive acquire"
        );
        // SAFETY: taken just above.
        unsafe { self.lock.release(Mode::Exclusive) };
    }
}

/// Spawns `f` on a model thread with its own handle on `shared`.
pub fn spawn<L, R>(
    shared: &Arc<Shared<L>>,
    f: impl FnOnce(&Shared<L>) -> R + Send + 'static,
) -> thread::JoinHandle<R>
where
    L: RawLwLock + 'static,
    R: Send + 'static,
{
    let s = shared.clone();
    thread::spawn(move || f(&s))
}

/// X+X: two threads, `mine` exclusive sections on the main thread and `theirs` on the other.
/// A thread with more than one section can be woken and then release to a sleeping thread (or
/// queue again behind it), which catches wakeups that stay inhibited (`releaseOK` never reset):
/// one side with two sections suffices. `(1, 2)` is the smallest such model (three sections);
/// it explores about an eighth of the executions of `(2, 2)` at the same bound (bound 4: 12 102
/// against 93 305), which is what lets the atomic lock's model run at preemption bound 6.
pub fn exclusive_exclusive<L: RawLwLock + 'static>(mine: u64, theirs: u64) {
    let s = Shared::<L>::new();
    let t = spawn(&s, move |s| (0..theirs).for_each(|_| s.update()));
    (0..mine).for_each(|_| s.update());
    t.join().unwrap();
    assert_eq!(s.value(), mine + theirs, "an update was lost");
    s.assert_quiescent();
}

/// S+X: a reader and a writer.
pub fn shared_exclusive<L: RawLwLock + 'static>() {
    let s = Shared::<L>::new();
    let t = spawn(&s, |s| s.update());
    let seen = s.read();
    assert!(seen <= 1);
    t.join().unwrap();
    assert_eq!(s.value(), 1);
    s.assert_quiescent();
}

/// X+S+S: a writer and two readers (three threads).
pub fn exclusive_shared_shared<L: RawLwLock + 'static>() {
    let s = Shared::<L>::new();
    let r1 = spawn(&s, |s| s.read());
    let r2 = spawn(&s, |s| s.read());
    s.update();
    assert!(r1.join().unwrap() <= 1);
    assert!(r2.join().unwrap() <= 1);
    assert_eq!(s.value(), 1);
    s.assert_quiescent();
}

/// X+X+X: three writers, one section each.
pub fn exclusive3<L: RawLwLock + 'static>() {
    let s = Shared::<L>::new();
    let a = spawn(&s, |s| s.update());
    let b = spawn(&s, |s| s.update());
    s.update();
    a.join().unwrap();
    b.join().unwrap();
    assert_eq!(s.value(), 3, "an update was lost");
    s.assert_quiescent();
}

/// Conditional acquire against a writer: when it succeeds it excludes the writer; it never
/// queues (no waiter is left behind), and `mode` decides what the conditional holder does.
pub fn conditional<L: RawLwLock + 'static>(mode: Mode) {
    let s = Shared::<L>::new();
    let t = spawn(&s, |s| s.update());
    let mut mine = 0;
    if s.lock.conditional_acquire(mode) {
        match mode {
            Mode::Exclusive => {
                s.bump();
                mine = 1;
            }
            Mode::Shared => {
                // SAFETY: held shared.
                let (a, b) = unsafe { s.data.read(|d| *d) };
                assert_eq!(a, b, "a conditional reader saw a half-applied update");
            }
        }
        // SAFETY: taken above in `mode`.
        unsafe { s.lock.release(mode) };
    }
    t.join().unwrap();
    assert_eq!(s.value(), 1 + mine);
    s.assert_quiescent();
}

/// Acquire-or-wait against a writer (`LWLockAcquireOrWait`, the WAL flush pattern). "Waited"
/// means the holder has finished: its update is visible without taking the lock.
pub fn acquire_or_wait<L: RawLwLock + 'static>() {
    let s = Shared::<L>::new();
    let t = spawn(&s, |s| s.update());
    let mine = match s.lock.acquire_or_wait(Mode::Exclusive) {
        AcquireOrWait::Acquired => {
            s.bump();
            // SAFETY: acquired exclusively just above.
            unsafe { s.lock.release(Mode::Exclusive) };
            1
        }
        AcquireOrWait::Waited => {
            // SAFETY: the writer released before waking us: its section happens-before this.
            let (a, b) = unsafe { s.data.read(|d| *d) };
            assert_eq!((a, b), (1, 1), "Waited returned before the holder's update");
            0
        }
    };
    t.join().unwrap();
    assert_eq!(s.value(), 1 + mine);
    s.assert_quiescent();
}

/// Acquire-or-wait with two writers (three threads): no lost wakeup of the WAIT_UNTIL_FREE
/// waiter among exclusive waiters.
pub fn acquire_or_wait3<L: RawLwLock + 'static>() {
    let s = Shared::<L>::new();
    let a = spawn(&s, |s| s.update());
    let b = spawn(&s, |s| s.update());
    let mine = match s.lock.acquire_or_wait(Mode::Exclusive) {
        AcquireOrWait::Acquired => {
            s.bump();
            // SAFETY: acquired exclusively just above.
            unsafe { s.lock.release(Mode::Exclusive) };
            1
        }
        AcquireOrWait::Waited => 0,
    };
    a.join().unwrap();
    b.join().unwrap();
    assert_eq!(s.value(), 2 + mine);
    s.assert_quiescent();
}

/// A lock with a variable (`LWLockWaitForVar`/`LWLockUpdateVar`), as WAL insertion locks use it.
#[derive(Debug)]
pub struct VarShared<L> {
    /// The lock and its pair.
    pub inner: Arc<Shared<L>>,
    /// The variable (`insertingAt`); 0 = no insertion in progress.
    pub var: AtomicU64,
    /// Written by the inserter before it advertises progress through `var`.
    pub inserted: Protected<u64>,
    /// Set by the inserter once it holds the lock: the waiter starts waiting only then, so that
    /// every model execution has a waiter racing a live insertion. (A waiter that finds the lock
    /// free returns at once; and loom's DPOR does not reorder a lone load of the lock word
    /// against a later load-then-CAS of another thread, tokio-rs/loom#166, so without this the
    /// model would explore a single execution.)
    pub holding: AtomicBool,
}

impl<L: RawLwLock> VarShared<L> {
    fn new() -> Arc<Self> {
        Arc::new(VarShared {
            inner: Shared::<L>::new(),
            var: AtomicU64::new(0),
            inserted: Protected::new(0),
            holding: AtomicBool::new(false),
        })
    }

    /// Waits (spinning with yields) until the inserter holds the lock.
    fn until_holding(&self) {
        while !self.holding.load(Ordering::Acquire) {
            thread::yield_now();
        }
    }
}

/// The inserter: take the lock, write, advertise progress 1, release and reset the variable.
fn insert<L: RawLwLockVar>(v: &VarShared<L>) {
    v.inner.lock.acquire(Mode::Exclusive);
    v.holding.store(true, Ordering::Release);
    // SAFETY: only the inserter writes `inserted`, and only before advertising it.
    unsafe { v.inserted.write(|x| *x = 1) };
    // SAFETY: held exclusively.
    unsafe { v.inner.lock.update_var(&v.var, 1) };
    // SAFETY: held exclusively.
    unsafe { v.inner.lock.release_clear_var(&v.var, 0) };
}

/// The waiter: wait until the variable moves away from 0 or the lock is free. Progress 1 means
/// the inserter's write before it is visible.
fn await_insert<L: RawLwLockVar>(v: &VarShared<L>) -> VarWait {
    v.until_holding();
    let outcome = v.inner.lock.wait_for_var(&v.var, 0);
    if let VarWait::Changed(x) = outcome {
        assert_eq!(x, 1, "WaitForVar returned a value that was never set");
        // SAFETY: the inserter wrote `inserted` before publishing 1 (AcqRel swap), and we read 1.
        let seen = unsafe { v.inserted.read(|x| *x) };
        assert_eq!(seen, 1, "progress advertised before the write it covers");
    }
    outcome
}

/// WaitForVar/UpdateVar: a waiter is never left asleep (it wakes on the update or the release),
/// sees only values that were set, and a seen value publishes what preceded it.
pub fn wait_for_var<L: RawLwLockVar + 'static>() {
    let v = VarShared::<L>::new();
    let v2 = v.clone();
    let t = thread::spawn(move || insert(&v2));
    await_insert(&v);
    t.join().unwrap();
    assert_eq!(
        v.var.load(Ordering::Relaxed),
        0,
        "release_clear_var reset the variable"
    );
    v.inner.assert_quiescent();
}

/// WaitForVar with a competing exclusive acquirer (three threads): the WAIT_UNTIL_FREE waiter is
/// not lost behind woken writers (`e0d97d77bf`).
pub fn wait_for_var3<L: RawLwLockVar + 'static>() {
    let v = VarShared::<L>::new();
    let v2 = v.clone();
    let t = thread::spawn(move || insert(&v2));
    let w = spawn(&v.inner, |s| s.update());
    await_insert(&v);
    t.join().unwrap();
    w.join().unwrap();
    assert_eq!(v.inner.value(), 1);
    v.inner.assert_quiescent();
}
