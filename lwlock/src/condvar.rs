//! `Condvar`: a condition variable for [`Mutex`](crate::Mutex), with parking_lot's API. A variant
//! beyond PostgreSQL, whose nearest relative is the `ConditionVariable` of 10+
//! (`condition_variable.c`: `ConditionVariablePrepareToSleep`/`Sleep`/`Signal`/`Broadcast`);
//! that one queues PGPROCs on a spinlock-protected list, this one is a futex sequence word, so a
//! wait or notify touches no wait record and allocates nothing.
//!
//! # State
//! Two words:
//! ```text
//! seq:     [ notification sequence number, 32 bits, wrapping ]   (the futex word)
//! waiters: [ threads between registering in `wait` and leaving it, 32 bits ]
//! ```
//!
//! # Protocol
//! * `wait(guard)`: with the mutex held, `waiters += 1` and read `seq`; unlock the mutex; sleep on
//!   the futex while `seq` still has the value read (with a deadline for the timed waits); then
//!   `waiters -= 1` and lock the mutex again.
//! * `notify_one` / `notify_all`: if `waiters == 0`, return at once (no syscall); otherwise
//!   `seq += 1`, then wake one / every sleeper of the futex.
//!
//! # Invariants
//! 1. A thread counted in `waiters` read `seq` while holding the mutex, and sleeps only while
//!    `seq` still equals that value (the kernel compares and sleeps atomically with respect to a
//!    wake).
//! 2. Every notify that finds `waiters > 0` changes `seq` before it wakes.
//!
//! # No lost notification
//! Let a waiter W test its condition and call `wait` under the mutex, and a notifier N change the
//! condition under the mutex and notify (holding the mutex or after releasing it). If N's critical
//! section comes first, W sees the changed condition and never waits. Otherwise W's unlock
//! (Release) precedes N's lock (Acquire), so W's `waiters += 1` and its read of `seq` happen-before
//! N's load of `waiters` and its `seq += 1`: N sees `waiters > 0`, and its increment is later in
//! `seq`'s modification order than the value W read. If W is not yet asleep, its futex wait sees
//! a changed word and returns; if it is, N's wake finds a sleeper (W or another counted waiter).
//! That is why the orderings can be Relaxed: the mutex orders the two sides, and the futex compare
//! is atomic with respect to wakes; `seq` and `waiters` publish no data (the protected data is the
//! mutex's).
//!
//! # Spurious wakeups
//! Allowed, as parking_lot and std allow them: one `notify_one` may release more than one thread
//! (every waiter that had not yet fallen asleep when `seq` changed sees the change), and a
//! `waiters` count may include a thread that is leaving. Callers loop on their condition
//! (`wait_while` does). A change of `seq` by exactly 2³² notifications between a waiter's read and
//! its sleep would hide them (ABA); that takes far longer than any wait's window.
//!
//! # Fairness
//! Notifications wake in the kernel's futex order (FIFO for one futex on Linux); the woken threads
//! then compete for the mutex under the LWLock's own policy (no requeueing onto the mutex, unlike
//! parking_lot: `notify_all` wakes every waiter, and those that lose queue on the LWLock).

use crate::raw_mutex::AtomicLwMutex;
use crate::sync::{AtomicU32, Futex, Ordering};
use crate::Policy;
#[cfg(not(loom))]
use lock_api::MutexGuard;
#[cfg(not(loom))]
use std::time::{Duration, Instant};

/// A condition variable over [`Mutex`](crate::Mutex) (or [`BargingMutex`](crate::BargingMutex)): parking_lot's `Condvar` API (`wait`,
/// `wait_for`, `wait_until`, `wait_while`, `wait_while_for`, `wait_while_until`, `notify_one`,
/// `notify_all`). `const`-constructible; 8 bytes; `wait` and `notify` never allocate.
///
/// Spurious wakeups are possible (see the module docs): wait in a loop on the condition, or use
/// `wait_while`. Unlike parking_lot's, one `Condvar` may be used with several mutexes.
///
/// ```
/// use lwlock::{Condvar, Mutex};
/// use std::sync::Arc;
/// let pair = Arc::new((Mutex::new(false), Condvar::new()));
/// let pair2 = pair.clone();
/// let t = std::thread::spawn(move || {
///     *pair2.0.lock() = true;
///     pair2.1.notify_one();
/// });
/// let mut ready = pair.0.lock();
/// pair.1.wait_while(&mut ready, |ready| !*ready);
/// assert!(*ready);
/// drop(ready);
/// t.join().unwrap();
/// ```
#[derive(Debug)]
pub struct Condvar {
    /// The notification sequence number; the futex word sleepers wait on.
    seq: Futex,
    /// Threads inside `wait` that registered and have not yet left (see the module docs).
    waiters: AtomicU32,
}

/// Whether a timed wait returned because its timeout elapsed (parking_lot's
/// `WaitTimeoutResult`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitTimeoutResult(bool);

impl WaitTimeoutResult {
    /// `true` if the wait ended because the deadline passed (the condition may still have become
    /// true meanwhile: check it).
    #[inline]
    pub fn timed_out(self) -> bool {
        self.0
    }
}

impl Condvar {
    /// A condition variable with no waiters.
    #[cfg(not(loom))]
    pub const fn new() -> Self {
        Condvar {
            seq: Futex::new(0),
            waiters: AtomicU32::new(0),
        }
    }

    /// A condition variable with no waiters.
    #[cfg(loom)]
    #[allow(clippy::new_without_default)] // `Default` exists outside loom only
    pub fn new() -> Self {
        Condvar {
            seq: Futex::new(0),
            waiters: AtomicU32::new(0),
        }
    }

    /// Threads currently counted as waiting (a relaxed load; for tests and diagnostics).
    pub fn waiters(&self) -> u32 {
        self.waiters.load(Ordering::Relaxed)
    }

    /// Wakes one waiting thread. Returns whether a thread was waiting (it may have been leaving
    /// already because of a timeout or an earlier notification). No syscall when none waits.
    #[inline]
    pub fn notify_one(&self) -> bool {
        // Relaxed: see "No lost notification" (the mutex orders the waiter's registration).
        if self.waiters.load(Ordering::Relaxed) == 0 {
            return false;
        }
        self.bump();
        self.seq.wake_one();
        true
    }

    /// Wakes every waiting thread. Returns how many were counted as waiting.
    #[inline]
    pub fn notify_all(&self) -> usize {
        let n = self.waiters.load(Ordering::Relaxed);
        if n == 0 {
            return 0;
        }
        // Mutant `condvar_notify_all_wake_before_bump` (models only): wake the sleepers first and
        // change the word afterwards (invariant 2 broken), so a waiter between its check of `seq`
        // and its sleep sleeps through the broadcast.
        if crate::mutant!("condvar_notify_all_wake_before_bump") {
            self.seq.wake_all();
            self.bump();
            return n as usize;
        }
        self.bump();
        // Mutant `condvar_notify_all_wakes_one` (models only): a broadcast that wakes one sleeper.
        if crate::mutant!("condvar_notify_all_wakes_one") {
            self.seq.wake_one();
        } else {
            self.seq.wake_all();
        }
        n as usize
    }

    /// Invariant 2: a notify that found waiters changes `seq` before it wakes.
    #[inline]
    fn bump(&self) {
        // Mutant `condvar_no_seq_bump` (models only): wake without changing the word, so a waiter
        // between its read of `seq` and its sleep sleeps through the notification.
        if !crate::mutant!("condvar_no_seq_bump") {
            // Relaxed: only the modification order of `seq` matters (module docs).
            self.seq.word.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The raw wait: registers, unlocks `mutex`, sleeps until notified (or until `deadline` on
    /// the [`clock_nanos`](crate::sync::clock_nanos) timeline passes), and locks `mutex` again.
    /// Returns `true` if it returned because the deadline passed. May return spuriously.
    ///
    /// For code built on [`RawMutex`](crate::RawMutex) directly (and for the models); [`wait`](Self::wait) and
    /// its siblings call it with a guard's mutex.
    ///
    /// # Safety
    /// The calling thread holds `mutex` (it is held again when this returns, also on unwind:
    /// nothing here unwinds between the unlock and the re-lock but a re-lock that panics, which
    /// the LWLock's exclusive acquire does not do).
    pub unsafe fn wait_raw<P: Policy>(
        &self,
        mutex: &AtomicLwMutex<P>,
        deadline: Option<u64>,
    ) -> bool {
        // Invariant 1: register and read `seq` while the mutex is held. Relaxed: the unlock below
        // (Release) orders both before any notifier's lock of the mutex.
        // Mutant `condvar_late_register` (models only): register after the unlock, so a notifier
        // in between sees no waiter and skips the wake.
        let late = crate::mutant!("condvar_late_register");
        if !late {
            self.waiters.fetch_add(1, Ordering::Relaxed);
        }
        // `mut`: only the mutant `condvar_timed_rearm_loses_notify` changes it.
        let mut seq = self.seq.word.load(Ordering::Relaxed);
        // SAFETY: held by the caller (this function's contract).
        unsafe { mutex.unlock() };
        if late {
            self.waiters.fetch_add(1, Ordering::Relaxed);
        }
        let timed_out = match deadline {
            None => {
                while self.seq.word.load(Ordering::Relaxed) == seq {
                    self.seq.wait(seq);
                }
                false
            }
            Some(deadline) => loop {
                if self.seq.word.load(Ordering::Relaxed) != seq {
                    break false;
                }
                if self.seq.wait_until_nanos(seq, deadline) {
                    // A notification that raced the deadline still counts as a wakeup.
                    // Mutant `condvar_deadline_race_timed_out` (models only): the futex's timeout
                    // is reported as is, so a notification that changed `seq` before the
                    // deadline passed (its wake going to another sleeper) reads as a timeout.
                    if crate::mutant!("condvar_deadline_race_timed_out") {
                        break true;
                    }
                    break self.seq.word.load(Ordering::Relaxed) == seq;
                }
                // An early return (spurious, or the word changed): not a timeout (only the clock
                // says when the deadline passed); the loop re-checks the word against the value
                // read under the mutex, never a newer one.
                // Mutant `condvar_timed_early_timeout` (models only): take an early return with
                // the word unchanged for the timeout (a futex wait may return before its
                // deadline, e.g. on a signal).
                if crate::mutant!("condvar_timed_early_timeout")
                    && self.seq.word.load(Ordering::Relaxed) == seq
                {
                    break true;
                }
                // Mutant `condvar_timed_rearm_loses_notify` (models only): take the word as it is
                // now as the value to wait on, as if each futex sleep were a fresh wait, so a
                // notification that came during the sleep is absorbed and the wait runs on to
                // its deadline.
                if crate::mutant!("condvar_timed_rearm_loses_notify") {
                    seq = self.seq.word.load(Ordering::Relaxed);
                }
            },
        };
        // Mutant `condvar_timeout_stays_registered` (models only): a timed-out waiter that never
        // deregisters (every later notify would count and bump for a thread that left).
        if !(timed_out && crate::mutant!("condvar_timeout_stays_registered")) {
            self.waiters.fetch_sub(1, Ordering::Relaxed);
        }
        mutex.lock();
        timed_out
    }

    /// The raw `wait_while`: while `condition` returns `true` (it runs with `mutex` held, first
    /// before any wait), waits as [`wait_raw`](Self::wait_raw) with `deadline`. Returns `true`
    /// (timed out) only if the deadline passed and the condition still holds: after a wait that
    /// timed out the condition is checked once more, since it may have been made false while
    /// the deadline passed (by a thread whose notification came after the wait's last look at
    /// the sequence word). std's `wait_timeout_while` does the same; parking_lot 0.12's
    /// `wait_while_until` returns the timeout without that check, which its contract ("the
    /// timeout is known to have elapsed") allows; this result is the stronger one.
    ///
    /// [`wait_while`](Self::wait_while), [`wait_while_until`](Self::wait_while_until) and
    /// [`wait_while_for`](Self::wait_while_for) call it with a guard's mutex.
    ///
    /// # Safety
    /// As [`wait_raw`](Self::wait_raw): the calling thread holds `mutex` (held again when this
    /// returns).
    pub unsafe fn wait_while_raw<P: Policy>(
        &self,
        mutex: &AtomicLwMutex<P>,
        mut condition: impl FnMut() -> bool,
        deadline: Option<u64>,
    ) -> bool {
        while condition() {
            // SAFETY: held (this function's contract; `wait_raw` leaves it held again).
            if unsafe { self.wait_raw(mutex, deadline) } {
                // Mutant `condvar_while_timeout_no_recheck` (models only): report the timeout
                // without looking at the condition again (parking_lot 0.12's result), so a
                // condition made false before the deadline reads as a timeout.
                if crate::mutant!("condvar_while_timeout_no_recheck") {
                    return true;
                }
                return condition();
            }
        }
        false
    }
}

#[cfg(not(loom))]
impl Condvar {
    /// The raw mutex of a guard.
    #[inline]
    fn raw_of<'a, P: Policy, T: ?Sized>(
        guard: &MutexGuard<'a, AtomicLwMutex<P>, T>,
    ) -> &'a AtomicLwMutex<P> {
        // SAFETY: `raw` is unsafe only because unlocking through it would break the guard; we
        // unlock it in `wait_raw` and lock it again before the guard is usable.
        unsafe { MutexGuard::mutex(guard).raw() }
    }

    /// Blocks until notified, unlocking the guard's mutex meanwhile and locking it again before
    /// returning. May wake spuriously.
    pub fn wait<P: Policy, T: ?Sized>(
        &self,
        mutex_guard: &mut MutexGuard<'_, AtomicLwMutex<P>, T>,
    ) {
        // SAFETY: the guard holds its mutex; `wait_raw` leaves it held again.
        unsafe { self.wait_raw(Self::raw_of(mutex_guard), None) };
    }

    /// Like [`wait`](Self::wait), giving up at `timeout`.
    pub fn wait_until<P: Policy, T: ?Sized>(
        &self,
        mutex_guard: &mut MutexGuard<'_, AtomicLwMutex<P>, T>,
        timeout: Instant,
    ) -> WaitTimeoutResult {
        let deadline = crate::sync::deadline_at(timeout);
        // SAFETY: as in `wait`.
        WaitTimeoutResult(unsafe { self.wait_raw(Self::raw_of(mutex_guard), Some(deadline)) })
    }

    /// Like [`wait`](Self::wait), giving up after `timeout`.
    pub fn wait_for<P: Policy, T: ?Sized>(
        &self,
        mutex_guard: &mut MutexGuard<'_, AtomicLwMutex<P>, T>,
        timeout: Duration,
    ) -> WaitTimeoutResult {
        let deadline = crate::sync::deadline_after(timeout);
        // SAFETY: as in `wait`.
        WaitTimeoutResult(unsafe { self.wait_raw(Self::raw_of(mutex_guard), Some(deadline)) })
    }

    /// Waits while `condition` returns `true` (checked with the mutex held, first before any
    /// wait). Spurious wakeups are absorbed.
    pub fn wait_while<P: Policy, T, F>(
        &self,
        mutex_guard: &mut MutexGuard<'_, AtomicLwMutex<P>, T>,
        mut condition: F,
    ) where
        T: ?Sized,
        F: FnMut(&mut T) -> bool,
    {
        let raw = Self::raw_of(mutex_guard);
        // SAFETY: as in `wait`.
        unsafe { self.wait_while_raw(raw, || condition(&mut *mutex_guard), None) };
    }

    /// Waits while `condition` returns `true`, giving up at `timeout`. `timed_out()` is `true`
    /// only if the deadline passed and the condition still holds (checked once more after the
    /// wait that timed out; see [`wait_while_raw`](Self::wait_while_raw)).
    pub fn wait_while_until<P: Policy, T, F>(
        &self,
        mutex_guard: &mut MutexGuard<'_, AtomicLwMutex<P>, T>,
        mut condition: F,
        timeout: Instant,
    ) -> WaitTimeoutResult
    where
        T: ?Sized,
        F: FnMut(&mut T) -> bool,
    {
        let deadline = crate::sync::deadline_at(timeout);
        let raw = Self::raw_of(mutex_guard);
        // SAFETY: as in `wait`.
        WaitTimeoutResult(unsafe {
            self.wait_while_raw(raw, || condition(&mut *mutex_guard), Some(deadline))
        })
    }

    /// Waits while `condition` returns `true`, giving up after `timeout` (`timed_out()` as in
    /// [`wait_while_until`](Self::wait_while_until)).
    pub fn wait_while_for<P: Policy, T, F>(
        &self,
        mutex_guard: &mut MutexGuard<'_, AtomicLwMutex<P>, T>,
        mut condition: F,
        timeout: Duration,
    ) -> WaitTimeoutResult
    where
        T: ?Sized,
        F: FnMut(&mut T) -> bool,
    {
        let deadline = crate::sync::deadline_after(timeout);
        let raw = Self::raw_of(mutex_guard);
        // SAFETY: as in `wait`.
        WaitTimeoutResult(unsafe {
            self.wait_while_raw(raw, || condition(&mut *mutex_guard), Some(deadline))
        })
    }
}

#[cfg(not(loom))]
impl Default for Condvar {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::Mutex;
    use std::sync::Arc;

    #[test]
    fn notify_without_waiters_is_free() {
        let c = Condvar::new();
        assert!(!c.notify_one());
        assert_eq!(c.notify_all(), 0);
        assert_eq!(c.seq.word.load(Ordering::Relaxed), 0, "no waiter: no bump");
    }

    #[test]
    fn timed_wait_times_out_and_deregisters() {
        let m = Mutex::new(());
        let c = Condvar::new();
        let mut g = m.lock();
        let r = c.wait_for(&mut g, Duration::from_millis(5));
        assert!(r.timed_out());
        assert_eq!(c.waiters(), 0);
        assert!(m.is_locked(), "the guard holds the mutex again");
        let r = c.wait_while_until(&mut g, |_| true, Instant::now());
        assert!(r.timed_out());
        let r = c.wait_while_for(&mut g, |_| false, Duration::from_secs(3600));
        assert!(!r.timed_out(), "a false condition never waits");
    }

    #[test]
    fn wait_while_timeout_rechecks_the_condition() {
        // The condition holds when checked before the wait and is false when checked after the
        // wait timed out (as if made false just as the deadline passed, its notification later):
        // not a timeout, as std's `wait_timeout_while`.
        let m = Mutex::new(());
        let c = Condvar::new();
        let mut g = m.lock();
        let mut checks = 0;
        let r = c.wait_while_for(
            &mut g,
            |_| {
                checks += 1;
                checks == 1
            },
            Duration::from_millis(1),
        );
        assert_eq!(
            checks, 2,
            "checked once before the wait and once after its timeout"
        );
        assert!(
            !r.timed_out(),
            "a timeout reported with the condition false"
        );
        let mut checks = 0;
        let r = c.wait_while_until(
            &mut g,
            |_| {
                checks += 1;
                true
            },
            Instant::now() + Duration::from_millis(1),
        );
        assert!(r.timed_out());
        assert_eq!(checks, 2);
        assert_eq!(c.waiters(), 0);
    }

    #[test]
    fn notify_all_releases_every_waiter() {
        let pair = Arc::new((Mutex::new(0u32), Condvar::new()));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let p = pair.clone();
                std::thread::spawn(move || {
                    let mut g = p.0.lock();
                    *g += 1;
                    p.1.wait_while(&mut g, |n| *n < 100);
                })
            })
            .collect();
        loop {
            let mut g = pair.0.lock();
            if *g == 4 {
                *g = 100;
                pair.1.notify_all();
                break;
            }
            drop(g);
            std::thread::yield_now();
        }
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(pair.1.waiters(), 0);
    }

    #[test]
    fn ping_pong_loses_no_notification() {
        // Two threads hand a token back and forth 2000 times; a lost notification hangs it.
        let pair = Arc::new((Mutex::new(0u32), Condvar::new()));
        let p = pair.clone();
        let t = std::thread::spawn(move || {
            for i in 0..1000 {
                let mut g = p.0.lock();
                p.1.wait_while(&mut g, |n| *n != 2 * i + 1);
                *g += 1;
                p.1.notify_one();
            }
        });
        for i in 0..1000 {
            let mut g = pair.0.lock();
            pair.1.wait_while(&mut g, |n| *n != 2 * i);
            *g += 1;
            drop(g);
            pair.1.notify_one();
        }
        t.join().unwrap();
        assert_eq!(*pair.0.lock(), 2000);
    }
}
