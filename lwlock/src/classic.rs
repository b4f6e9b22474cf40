//! The classic spinlock-protected LWLock of PostgreSQL 7.2–9.4.
//!
//! Mirrors, in 9.4's `lwlock.c`: `LWLockAcquireCommon`, `LWLockConditionalAcquire`,
//! `LWLockAcquireOrWait` and `LWLockRelease` (with 9.2+'s wake selection).
//!
//! # Design
//! A TAS spinlock ([`SpinLock`], `s_lock`) protects every field: the exclusive flag, the shared
//! count, `releaseOK` and a FIFO wait queue of per-thread records. Even a shared acquire of a
//! free lock takes the spinlock twice (acquire and release), so readers of a hot lock serialise on
//! the spinlock's cache line: the scalability wall that 9.5's atomic-state LWLock removed.
//!
//! * **Acquire** takes the spinlock, takes the lock if compatible (a shared request ignores queued
//!   writers: readers barge) and otherwise appends itself at the tail, drops the spinlock and
//!   sleeps. A wakeup only means "the lock may be free": the wakee competes again and, if it loses,
//!   re-queues at the tail (`5b9a058384`, 2002).
//! * **releaseOK** is cleared by a releaser that woke a shared/exclusive waiter and set again by
//!   the first woken waiter that re-takes the spinlock: "don't wake more until one of them runs".
//! * **Wake selection** (9.2+): the leading run of `WAIT_UNTIL_FREE` waiters; then, if the next
//!   waiter is exclusive, it alone; otherwise the run of consecutive non-exclusive waiters up to the
//!   first exclusive one.
//! * Wakeups happen after the spinlock is released.
//!
//! # State
//! Everything below is protected by `mutex`:
//!
//! | field        | meaning                                                    |
//! |--------------|------------------------------------------------------------|
//! | `exclusive`  | 0 or 1; `exclusive == 1` implies `shared == 0`             |
//! | `shared`     | shared holders, at most [`MAX_SHARED`]                     |
//! | `release_ok` | releasers may wake waiters (initially true)                |
//! | `waiters`    | FIFO queue of records, linked by record number             |
//!
//! `held` mirrors `exclusive`/`shared` in one atomic word so that `is_locked` can be answered
//! without the spinlock; it is written only under `mutex` (Relaxed) and read racily.
//!
//! # Invariants
//! 1. Every field of `inner` changes only under `mutex`.
//! 2. A record is on at most one queue; its `lw_waiting` is WAITING from enqueue until the waker
//!    sets NOT_WAITING, which happens after the unlink and after the spinlock was released.
//! 3. `release_ok == false` implies a woken shared/exclusive waiter has not re-taken `mutex` yet.
//!
//! # Memory orderings
//! The spinlock's Acquire TAS / Release store order all fields and the protected data. The
//! waker's NOT_WAITING store is Release (the `pg_write_barrier` of `37de8de9e3`), paired with the
//! waiter's Acquire load.
//!
//! # Instruction time
//! The `instructions(n)` calls announce the release build's instruction counts between the
//! memory operations of the uncontended paths (and, coarsely, of the wait paths) to the
//! simulator; they compile to nothing outside `--cfg lwsim`. The counts and how they were taken:
//! the design document's simulator section, "Instruction time".

use crate::elog::CritSection;
use crate::layout::MAX_SHARED;
use crate::proc::{lw_mode, lw_waiting, Proc};
use crate::proclist::ProcList;
use crate::raw::{AcquireOrWait, Mode, RawLwLock};
use crate::s_lock::SpinLock;
use crate::stats::{LockStats, Stat, StatsCounters};
use crate::sync::{instructions, AtomicU32, Ordering, UnsafeCell};
use crate::wait_event::{Tranche, WaitEvent};

/// `held` bit for an exclusive holder; the low bits count shared holders.
const HELD_EXCLUSIVE: u32 = 1 << 31;

/// What one pass under the spinlock did for an acquire.
enum Taken {
    /// The lock is ours.
    Yes,
    /// Busy; we are queued and must sleep.
    Queued,
    /// Busy, and this thread has no wait record yet: register outside the spinlock, retry.
    NeedRecord,
}

/// The fields protected by the spinlock.
#[derive(Debug)]
struct ClassicState {
    release_ok: bool,
    exclusive: u8,
    shared: u32,
    waiters: ProcList,
}

/// The classic LWLock: a spinlock, two counts, `releaseOK` and a FIFO wait queue.
pub struct RawClassicLwLock {
    /// `slock_t mutex`: protects `inner` (invariant 1).
    mutex: SpinLock,
    /// Tranche id for wait events.
    tranche: u16,
    /// Racy mirror of the holders, for `is_locked`.
    held: AtomicU32,
    inner: UnsafeCell<ClassicState>,
    stats: StatsCounters,
}

// SAFETY: `inner` is only accessed while holding `mutex` (invariant 1); everything else is atomic.
unsafe impl Sync for RawClassicLwLock {}
// SAFETY: no thread-bound resources.
unsafe impl Send for RawClassicLwLock {}

impl std::fmt::Debug for RawClassicLwLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let h = self.held.load(Ordering::Relaxed);
        f.debug_struct("RawClassicLwLock")
            .field("tranche", &Tranche::from_id(self.tranche).name())
            .field("exclusive", &(h & HELD_EXCLUSIVE != 0))
            .field("shared", &(h & !HELD_EXCLUSIVE))
            .finish()
    }
}

impl RawClassicLwLock {
    /// A free lock in the default tranche.
    #[cfg(not(loom))]
    pub const fn new() -> Self {
        Self::new_in(Tranche::DEFAULT)
    }

    /// A free lock reporting its waits under `tranche` (`LWLockInitialize`).
    #[cfg(not(loom))]
    pub const fn new_in(tranche: Tranche) -> Self {
        RawClassicLwLock {
            mutex: SpinLock::new(),
            tranche: tranche.id(),
            held: AtomicU32::new(0),
            inner: UnsafeCell::new(ClassicState {
                release_ok: true,
                exclusive: 0,
                shared: 0,
                waiters: ProcList::EMPTY,
            }),
            stats: StatsCounters::new(),
        }
    }

    /// A free lock in the default tranche.
    #[cfg(loom)]
    #[allow(clippy::new_without_default)] // `Default` exists outside loom only
    pub fn new() -> Self {
        Self::new_in(Tranche::DEFAULT)
    }

    /// A free lock reporting its waits under `tranche`.
    #[cfg(loom)]
    pub fn new_in(tranche: Tranche) -> Self {
        RawClassicLwLock {
            mutex: SpinLock::new(),
            tranche: tranche.id(),
            held: AtomicU32::new(0),
            inner: UnsafeCell::new(ClassicState {
                release_ok: true,
                exclusive: 0,
                shared: 0,
                waiters: ProcList::EMPTY,
            }),
            stats: StatsCounters::new(),
        }
    }

    /// Takes the spinlock and runs `f` on the protected state, then releases it.
    #[inline]
    fn locked<R>(&self, f: impl FnOnce(&mut ClassicState) -> R) -> R {
        let delays = self.mutex.lock(Tranche::from_id(self.tranche));
        self.stats.bump(Stat::SpinDelay, delays as u64);
        // SAFETY: `mutex` is held, so no other thread accesses `inner` (invariant 1); its Acquire
        // TAS orders us after the previous holder's writes.
        let r = self.inner.with_mut(|s| f(unsafe { &mut *s }));
        // SAFETY: taken above by this thread.
        unsafe { self.mutex.unlock() };
        r
    }

    /// Takes the lock in `mode` if compatible. Called under `mutex`. `Err` on shared overflow.
    #[inline]
    fn try_take(&self, st: &mut ClassicState, mode: Mode) -> Result<bool, ()> {
        match mode {
            Mode::Exclusive if st.exclusive == 0 && st.shared == 0 => {
                st.exclusive = 1;
                instructions(8); // the TAS's test, the field tests and update
                self.held.store(HELD_EXCLUSIVE, Ordering::Relaxed);
                Ok(true)
            }
            Mode::Shared if st.exclusive == 0 => {
                if st.shared == MAX_SHARED {
                    return Err(());
                }
                st.shared += 1;
                instructions(9); // the TAS's test, the field tests and update
                self.held.store(st.shared, Ordering::Relaxed);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    #[cold]
    #[inline(never)]
    fn shared_overflow(&self) -> ! {
        panic!(
            "too many shared holders of LWLock {:?} (limit {MAX_SHARED})",
            Tranche::from_id(self.tranche).name()
        )
    }

    fn mode_code(mode: Mode) -> u8 {
        match mode {
            Mode::Exclusive => lw_mode::EXCLUSIVE,
            Mode::Shared => lw_mode::SHARED,
        }
    }

    /// Sleeps until a releaser sets our `lw_waiting` to NOT_WAITING. Returns absorbed wakeups.
    fn sleep_until_woken(&self, me: &Proc) -> u32 {
        self.stats.bump(Stat::Block, 1);
        // Acquire: pairs with the waker's Release store (invariant 2).
        me.sleep_absorbing(WaitEvent::lwlock(Tranche::from_id(self.tranche)), || {
            me.lw_waiting.load(Ordering::Acquire) == lw_waiting::NOT_WAITING
        })
    }

    /// Appends `me` at the tail in `mode`. Called under `mutex`.
    fn enqueue(st: &mut ClassicState, me: &Proc, mode: u8) {
        assert_eq!(
            me.lw_waiting.load(Ordering::Relaxed),
            lw_waiting::NOT_WAITING,
            "queueing for an LWLock while already waiting"
        );
        instructions(6); // coarse: the assertion, the stores and the tail link
        me.lw_waiting.store(lw_waiting::WAITING, Ordering::Relaxed);
        me.lw_mode.store(mode, Ordering::Relaxed);
        st.waiters.push_tail(me);
        instructions(20);
    }

    /// `LWLockAcquireCommon`.
    fn acquire_common(&self, mode: Mode) -> bool {
        // `PGPROC *proc = MyProc;` as 9.4 does, but without registering: only a thread that must
        // wait needs a record. A thread that has none yet and finds the lock busy drops the
        // spinlock, registers (allocation, the table's mutex, and a panic if that fails, none of
        // which may happen with the spinlock held), and tries again: once per thread lifetime.
        let mut me = Proc::current_if_registered();
        let mut retry = false;
        let mut extra = 0;
        loop {
            let outcome = self.locked(|st| {
                // Mutant `classic_no_release_ok_reset` (models only): never re-enable wakeups.
                if retry && !crate::mutant!("classic_no_release_ok_reset") {
                    st.release_ok = true; // we were woken and run: others may be woken again
                }
                match self.try_take(st, mode) {
                    Ok(true) => Ok(Taken::Yes),
                    Ok(false) => match me {
                        Some(me) => {
                            Self::enqueue(st, me, Self::mode_code(mode));
                            Ok(Taken::Queued)
                        }
                        None => Ok(Taken::NeedRecord),
                    },
                    Err(()) => Err(()),
                }
            });
            let me = match outcome {
                Ok(Taken::Yes) => break,
                Ok(Taken::NeedRecord) => {
                    me = Some(Proc::current());
                    continue;
                }
                Ok(Taken::Queued) => me.expect("queued with a record"),
                Err(()) => {
                    if let Some(me) = me {
                        me.repost(extra);
                    }
                    self.shared_overflow()
                }
            };
            // Queued: nothing may unwind until a waker has taken us off the queue.
            instructions(12); // coarse: the wait event and the sleep loop's setup
            let crit = CritSection::start("classic LWLock: sleeping on the wait queue");
            extra += self.sleep_until_woken(me);
            crit.end();
            retry = true;
        }
        if let Some(me) = me {
            me.repost(extra);
        }
        !retry
    }
}

#[cfg(not(loom))]
impl Default for RawClassicLwLock {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: every state change happens under the spinlock, whose Acquire/Release orders the
// critical sections; holders are granted only when compatible (invariant 1); a panicking shared
// acquire (overflow) takes nothing and leaves the queue untouched; `conditional_acquire` takes only
// the spinlock, which is held for a bounded number of instructions.
unsafe impl RawLwLock for RawClassicLwLock {
    const NAME: &'static str = "classic";
    const INSTRUCTIONS_ANNOUNCED: bool = true;

    fn with_tranche(tranche: Tranche) -> Self {
        Self::new_in(tranche)
    }

    fn acquire(&self, mode: Mode) -> bool {
        // The call, the prologue, the wait-record lookup and the loop's setup, up to the TAS.
        instructions(28);
        self.stats.bump(
            if mode == Mode::Shared {
                Stat::ShAcquire
            } else {
                Stat::ExAcquire
            },
            1,
        );
        let first = self.acquire_common(mode);
        // After the unlock store: the result and the epilogue.
        instructions(if mode == Mode::Shared { 13 } else { 14 });
        first
    }

    fn conditional_acquire(&self, mode: Mode) -> bool {
        match self.locked(|st| self.try_take(st, mode)) {
            Ok(taken) => taken,
            Err(()) => self.shared_overflow(),
        }
    }

    fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait {
        // The record outside the spinlock, only if we must wait (see `acquire_common`).
        let mut me = Proc::current_if_registered();
        loop {
            let outcome = self.locked(|st| match self.try_take(st, mode) {
                Ok(true) => Ok(Taken::Yes),
                Ok(false) => match me {
                    Some(me) => {
                        // 9.4 queues LW_WAIT_UNTIL_FREE at the tail.
                        Self::enqueue(st, me, lw_mode::WAIT_UNTIL_FREE);
                        Ok(Taken::Queued)
                    }
                    None => Ok(Taken::NeedRecord),
                },
                Err(()) => Err(()),
            });
            match outcome {
                Ok(Taken::Yes) => return AcquireOrWait::Acquired,
                Ok(Taken::NeedRecord) => me = Some(Proc::current()),
                Ok(Taken::Queued) => {
                    let me = me.expect("queued with a record");
                    let crit = CritSection::start("classic LWLock: sleeping on the wait queue");
                    let extra = self.sleep_until_woken(me);
                    crit.end();
                    me.repost(extra);
                    return AcquireOrWait::Waited;
                }
                Err(()) => self.shared_overflow(),
            }
        }
    }

    unsafe fn release(&self, mode: Mode) {
        instructions(12); // the call, the prologue and the wake list, up to the TAS
        let mut wake = ProcList::EMPTY;
        self.locked(|st| {
            match mode {
                Mode::Exclusive => {
                    debug_assert_eq!(st.exclusive, 1, "LWLock released exclusive but not held so");
                    st.exclusive = 0;
                    instructions(9); // the TAS's test, the update and the new `held` value
                }
                Mode::Shared => {
                    debug_assert!(st.shared > 0, "LWLock released shared but not held so");
                    st.shared -= 1;
                    instructions(14);
                }
            }
            self.held.store(
                if st.exclusive == 1 {
                    HELD_EXCLUSIVE
                } else {
                    st.shared
                },
                Ordering::Relaxed,
            );
            instructions(5); // the wake test
            if st.waiters.is_empty() || st.exclusive != 0 || st.shared != 0 || !st.release_ok {
                return;
            }
            // Coarse: the wake selection's setup and the detach, per call.
            instructions(30);
            // (a) skip the leading WAIT_UNTIL_FREE run (all woken).
            let mut last = st.waiters.first().expect("non-empty");
            while last.lw_mode.load(Ordering::Relaxed) == lw_mode::WAIT_UNTIL_FREE {
                match ProcList::next_of(last) {
                    Some(n) => last = n,
                    None => break,
                }
            }
            // (b) if not exclusive, extend over every following non-exclusive waiter.
            let mut new_release_ok = true;
            if last.lw_mode.load(Ordering::Relaxed) != lw_mode::EXCLUSIVE {
                while let Some(n) = ProcList::next_of(last) {
                    if n.lw_mode.load(Ordering::Relaxed) == lw_mode::EXCLUSIVE {
                        break;
                    }
                    if last.lw_mode.load(Ordering::Relaxed) != lw_mode::WAIT_UNTIL_FREE {
                        new_release_ok = false;
                    }
                    last = n;
                }
            }
            if last.lw_mode.load(Ordering::Relaxed) != lw_mode::WAIT_UNTIL_FREE {
                new_release_ok = false;
            }
            // Detach head..=last.
            loop {
                let w = st.waiters.pop_head().expect("prefix is on the queue");
                wake.push_tail(w);
                if std::ptr::eq(w, last) {
                    break;
                }
            }
            st.release_ok = new_release_ok;
        });
        // After the unlock store: the wake list's test and the epilogue.
        instructions(14);
        // Wake outside the spinlock. The detached records are reachable only from `wake`: an
        // unwind here would leave them asleep.
        let crit = CritSection::start("classic LWLock: waking detached waiters");
        while let Some(w) = wake.pop_head() {
            // Mutant `classic_post_before_not_waiting` (models only): post, then clear the flag,
            // so the waiter may take the post for a foreign one and sleep again.
            if crate::mutant!("classic_post_before_not_waiting") {
                w.sem.unlock();
                w.lw_waiting
                    .store(lw_waiting::NOT_WAITING, Ordering::Release);
                continue;
            }
            // Release: the unlink is visible before the waiter can queue again (invariant 2).
            instructions(10); // coarse, per woken waiter: the pop and the post's setup
            w.lw_waiting
                .store(lw_waiting::NOT_WAITING, Ordering::Release);
            w.sem.unlock();
        }
        crit.end();
    }

    fn is_locked(&self) -> bool {
        self.held.load(Ordering::Relaxed) != 0
    }

    fn is_locked_exclusive(&self) -> bool {
        self.held.load(Ordering::Relaxed) & HELD_EXCLUSIVE != 0
    }

    fn tranche(&self) -> Tranche {
        Tranche::from_id(self.tranche)
    }

    fn stats(&self) -> Option<LockStats> {
        self.stats.snapshot()
    }
}

// Guards may be sent: a hold is a count under the lock's spinlock, not tied to a thread.
crate::raw::lock_api_rwlock_over_lwlock!([] RawClassicLwLock, guard: GuardSend);

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn modes_exclude_each_other() {
        let l = RawClassicLwLock::new();
        assert!(l.acquire(Mode::Shared));
        assert!(l.conditional_acquire(Mode::Shared));
        assert!(!l.conditional_acquire(Mode::Exclusive));
        assert!(RawLwLock::is_locked(&l) && !RawLwLock::is_locked_exclusive(&l));
        // SAFETY: held shared twice.
        unsafe {
            l.release(Mode::Shared);
            l.release(Mode::Shared);
        }
        assert!(!RawLwLock::is_locked(&l));
        assert!(l.conditional_acquire(Mode::Exclusive));
        assert!(!l.conditional_acquire(Mode::Shared));
        // SAFETY: held exclusively.
        unsafe { l.release(Mode::Exclusive) };
    }

    #[test]
    fn shared_overflow_panics_with_message() {
        let l = RawClassicLwLock::new();
        l.locked(|st| st.shared = MAX_SHARED - 1);
        assert!(l.conditional_acquire(Mode::Shared));
        let err =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| l.acquire(Mode::Shared)))
                .expect_err("past the limit must panic");
        let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(msg.contains("too many shared holders"), "{msg}");
        assert_eq!(l.locked(|st| st.shared), MAX_SHARED);
        assert!(!l.mutex.is_locked(), "the spinlock is not left held");
    }

    #[test]
    fn release_wakes_the_shared_run_but_not_the_writer_behind_it() {
        // Queue: S, S, X, S (all blocked behind an exclusive holder).
        let l = Arc::new(RawClassicLwLock::new());
        assert!(l.acquire(Mode::Exclusive));
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut handles = Vec::new();
        for (i, mode) in [Mode::Shared, Mode::Shared, Mode::Exclusive, Mode::Shared]
            .into_iter()
            .enumerate()
        {
            let (l2, o) = (l.clone(), order.clone());
            handles.push(std::thread::spawn(move || {
                l2.acquire(mode);
                let got = {
                    let mut v = o.lock().unwrap();
                    v.push(i);
                    v.len()
                };
                // The two readers woken together hold until both are in (at most 10 s: a
                // release that woke one alone then shows in the order), so a woken reader the
                // scheduler runs late still gets in before the lock passes on.
                if got <= 2 {
                    let start = std::time::Instant::now();
                    while o.lock().unwrap().len() < 2
                        && start.elapsed() < std::time::Duration::from_secs(10)
                    {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                }
                // SAFETY: held in `mode`.
                unsafe { l2.release(mode) };
            }));
            // Wait until this one is queued, to fix the queue order.
            let want = i + 1;
            while l.locked(|st| {
                let mut n = 0;
                let mut c = st.waiters.first();
                while let Some(p) = c {
                    n += 1;
                    c = ProcList::next_of(p);
                }
                n
            }) < want
            {
                std::thread::yield_now();
            }
        }
        // SAFETY: held exclusively.
        unsafe { l.release(Mode::Exclusive) };
        for h in handles {
            h.join().unwrap();
        }
        let order = order.lock().unwrap().clone();
        // The writer (2) cannot get in before both leading readers: they were woken together
        // and the writer was left queued.
        let pos = |x| order.iter().position(|&y| y == x).unwrap();
        assert!(pos(2) > pos(0) && pos(2) > pos(1), "{order:?}");
    }
}
