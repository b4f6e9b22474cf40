//! Bounded adaptive spinning before queueing, and the slow path around it: the [`Adaptive`]
//! policy's mechanism, beyond PostgreSQL.
//!
//! Which PostgreSQL code each part mirrors:
//! * **the spin** (`spin_acquire`, `spin_for_readers`): none in `lwlock.c` (`LWLockAcquire` queues
//!   at once after a failed `LWLockAttemptLock`). The nearest is `s_lock.c`'s `s_lock` with
//!   `perform_spin_delay`, a spin on a TAS word before sleeping; the schedule here is
//!   parking_lot's `SpinWait` (`parking_lot_core/src/spinwait.rs`): rounds 1..=3 execute 2, 4, 8
//!   PAUSEs, rounds 4..=10 yield the CPU;
//! * **the queue / re-check / sleep loop** (`acquire_contended`, `contended.rs`, the one
//!   contended path of every drop-in policy): `LWLockAcquire`'s loop
//!   (`LWLockQueueSelf`, the second `LWLockAttemptLock`, `LWLockDequeueSelf`, the semaphore
//!   sleep, `RELEASE_OK` re-set by the woken thread), with a spin in front of each queueing;
//! * **the writer's handoff** (`queue_self_writer`, `take_handoff_at_bound` in `handoff.rs`,
//!   under `Rule::Ordered`): none (the
//!   [`Handoff`]/[`TaskFair`] policies' bit, invariant 7 of the layout);
//! * **the release**: `LWLockRelease` (the parent's `release`: one `fetch_sub`; a wake pass only
//!   when `HAS_WAITERS` is set), with `LWLockWakeup`'s throttle bounded to 50 µs
//!   (`WAKE_STALE_NANOS`: past that a release wakes the next waiters even with `RELEASE_OK`
//!   clear, for the woken thread is waiting for a core; the parent's `release_wake`).
//!
//! # What a thread does when the lock is held
//! * **Spin first**, only while spinning can pay off: the word must show `HAS_WAITERS` and
//!   `HANDOFF` clear (nobody sleeps on the list, parking_lot's `PARKED_BIT` rule; no handoff
//!   pending). A writer spins only behind a *writer*: behind readers it queues at once (below).
//!   Each round re-reads the word with a plain load (no RMW, so spinners do not bounce the line
//!   while the holder runs) and attempts the lock only when the load shows it could succeed. The
//!   spin does not look at the starvation bound: it is at most 10 rounds (3 of PAUSEs, 7 yields).
//! * **A writer held off by readers** queues with `HANDOFF` taken in the same RMW that sets
//!   `HAS_WAITERS` (as [`TaskFair`]'s writer, but only behind readers, and only if no exclusive
//!   waiter is queued: the rule below): new readers queue behind it, so the readers inside
//!   drain; it spins for that (the PAUSE rounds, then two yields, which let a preempted reader
//!   run and leave: `DRAIN_YIELDS`), then sleeps (if the readers left during its last yield, the
//!   last one's release has posted it and the sleep returns at once). parking_lot's writer bit
//!   does the same (with up to seven yields). If an exclusive waiter is queued, it queues at the
//!   tail as below.
//! * **A writer held off by a writer, and a reader held off by a writer**, queue at the tail and
//!   sleep. A release wakes one waiter (the head writer, or the shared waiters), which competes
//!   with newcomers (barging, as PostgreSQL's) with one attempt; when it loses it queues again
//!   (at the tail, except a writer past its bound: below). Its spin phase runs again first, but
//!   returns at once while `HAS_WAITERS` is set, i.e. whenever others are still queued.
//! * **Starvation bound (writers)**: a queued writer sleeps with a deadline 250 µs after it
//!   first queued (after its first spin: a spin that wins reads no clock). When it passes and the writer is still queued, it takes `HANDOFF` and
//!   moves to the front (invariant 7), **unless another waiter owns the bit or an exclusive
//!   waiter is queued ahead of it**; then it sleeps on, untimed, until a wake pass picks it. A
//!   writer past its bound that is woken and loses re-queues at the front, taking `HANDOFF` if
//!   nobody owns it, else right behind the owner (the first waiter past the leading
//!   WAIT_UNTIL_FREE run). The rule: *nobody takes the handoff, or the front, ahead of a queued
//!   writer* (the owner aside, and a woken late writer, which was ahead of it already). So once
//!   writer A's bound has passed, the waiters ahead of A are only ever fewer: each wake pass
//!   takes the head writer or the shared waiters off the list; a woken reader that loses goes to
//!   the tail; a woken writer that loses and is past its bound comes back in front of A but takes
//!   the bit (at the latest at its second wakeup) and then the lock at the next free moment; at
//!   most one owner of the bit at a time goes first. When A is the first waiter it takes the bit
//!   at its next wakeup at the latest, and from then no newcomer (reader, writer, spinner) gets
//!   in and the release that frees the lock wakes it. A's wait past its bound is therefore
//!   bounded by the lock holds of the waiters queued ahead of it (about three wake passes each)
//!   plus one barging holder per wake pass, not by a time. Timed, recursive and upgradable
//!   acquires obey the same rule: they run the same contended path, a timed one with a deadline
//!   besides (a timed writer that gives up the bit clears it and wakes the waiters it held back;
//!   recursive and upgradable readers take no bit).
//! * **Readers have no bound**: a reader waits for the writers queued ahead of it, for any
//!   writer that takes the handoff in front of it (as it queues behind readers, or at its
//!   bound), and for bargers when woken; a reader that loses re-queues at the tail.
//!
//! # What it costs on the word
//! No new bit and no new RMW on the fast paths: the acquire is the parent's one CAS and the
//! release its one `fetch_sub`; a spinner adds Relaxed loads of the word and the attempt's CAS.
//! A writer queued behind readers sets `HANDOFF` in the RMW that sets `HAS_WAITERS` (no extra
//! RMW). Timed, recursive and upgradable acquires spin and queue the same way.
//!
//! [`Handoff`]: super::Handoff
//! [`TaskFair`]: super::TaskFair

use super::layout::{
    handoff_owned, has_waiters, is_exclusive, is_free, is_read_locked, shared_count, HANDOFF,
    LOCK_MASK, UPGRADABLE, VAL_EXCLUSIVE,
};
use super::{AtomicLwLock, Attempt, Policy, Want};

use crate::sync::{self, Ordering};

/// Bounded adaptive spinning with barging among writers, task-fair writers behind readers, and
/// a 250 µs handoff bound ([`RawAdaptiveLwLock`](super::RawAdaptiveLwLock); beyond PostgreSQL).
/// What each thread does when the lock is held: the module docs of `adaptive_spin.rs`.
///
/// * A writer behind a writer spins (at most 10 rounds, while nobody is queued), then queues
///   and sleeps; woken, it makes one attempt against newcomers and re-queues if it loses.
/// * A writer behind readers queues at once with the handoff bit (new readers wait behind it;
///   not if an exclusive waiter is queued) and spins for the readers to drain before it sleeps.
/// * A reader behind a writer spins the same way, then queues. Readers have no bound.
/// * Starvation bound: a writer still queued 250 µs after it first queued takes the
///   handoff bit unless another owns it or a writer is queued ahead of it; nobody takes the bit
///   or the front ahead of a queued writer, so its wait past the bound is bounded by the waiters
///   ahead of it (module docs).
#[derive(Debug)]
pub enum Adaptive {}

impl Policy for Adaptive {
    const HANDOFF: bool = true;
    const BOUND_NANOS: u64 = 250_000;
    const SPIN: bool = true;
    const WAKE_STALE_NANOS: u64 = 50_000;
    const NAME: &'static str = "atomic-adaptive";
    const TYPE_NAME: &'static str = "RawAdaptiveLwLock";
}

/// [`Adaptive`] plus one rule in the spin's yielding rounds: a spinner whose `sched_yield` came
/// back within 2 µs (an *empty* yield) stops spinning, queues and sleeps
/// ([`RawEmptyYieldLwLock`](super::RawEmptyYieldLwLock); beyond PostgreSQL).
///
/// An empty yield means nothing else was runnable on the spinner's CPU: the holder is running on
/// another CPU, and more yields are a busy wait that keeps the spinner's CPU, and its cache,
/// away from nothing. With fewer runnable threads than CPUs and short sections (two threads on
/// two cores, a loop with little work outside the lock) the waiter that sleeps leaves the holder
/// to re-take a line that stays in its cache, which is why PostgreSQL's policy, which queues at
/// once, runs 1.1–1.8× parking_lot's rate there (results, "The 2-thread exclusive cells"). With
/// more runnable threads than CPUs a yield runs another thread and takes a slice, so the rule
/// does not fire and the spin is [`Adaptive`]'s. It only ends a spin early, which the spin's
/// bound does anyway, so the word, the queue and the starvation bound are [`Adaptive`]'s
/// unchanged; what it adds is two clock reads around each yield (none on the PAUSE rounds or the
/// fast paths). The threshold: a `sched_yield` with nothing to switch to costs 0.3–1 µs
/// (a system call), one that switches costs a context switch and then the other thread's slice
/// (hundreds of µs under load).
#[derive(Debug)]
pub enum EmptyYield {}

impl Policy for EmptyYield {
    const HANDOFF: bool = true;
    const BOUND_NANOS: u64 = Adaptive::BOUND_NANOS;
    const SPIN: bool = true;
    const WAKE_STALE_NANOS: u64 = Adaptive::WAKE_STALE_NANOS;
    const EMPTY_YIELD_NANOS: u64 = 2_000;
    const NAME: &'static str = "atomic-empty-yield";
    const TYPE_NAME: &'static str = "RawEmptyYieldLwLock";
}

/// Rounds of PAUSE (2, 4, 8 hints) before the yielding rounds.
const PAUSE_ROUNDS: u32 = 3;
/// All rounds (parking_lot's `SpinWait` counter limit).
const ROUNDS: u32 = 10;
/// Yields of a writer that owns the handoff and waits for the readers inside to drain, after its
/// PAUSE rounds and before it sleeps. On an oversubscribed machine a reader inside may be
/// preempted; a yield lets it run and leave, where a sleep costs the writer a wakeup and every
/// new reader a sleep behind it. parking_lot's writer yields up to 7 times; 2 kept most of the
/// gain over 0 without 7's cost to a sleeping writer (the runs that chose it: results, "The
/// drop-in defaults against parking_lot", *Two yields while the readers drain*). Under the
/// models `sync::spin_limit` caps the rounds (loom's adaptive models set 0 or 2, so only the
/// shuttle models run the yields).
const DRAIN_YIELDS: u32 = 2;

/// Whether `want` could be granted on a word `s` (the attempt's own test, without the CAS).
#[inline(always)]
fn could_take(s: u32, want: Want) -> bool {
    match want {
        Want::Exclusive => s & (LOCK_MASK | HANDOFF) == 0,
        Want::Shared => s & (VAL_EXCLUSIVE | HANDOFF) == 0,
        Want::Upgradable => s & (VAL_EXCLUSIVE | UPGRADABLE | HANDOFF) == 0,
        Want::Recursive => shared_count(s) != 0 || !is_exclusive(s),
    }
}

impl<P: Policy> AtomicLwLock<P> {
    /// Spins for `want` as the module docs say; returns whether the lock is now held. Called
    /// after a failed attempt, before queueing.
    #[cold]
    #[inline(never)]
    pub(super) fn spin_acquire(&self, want: Want) -> bool {
        let rounds = sync::spin_limit(ROUNDS);
        let mut round = 0;
        loop {
            // Relaxed: a hint only; the attempt's CAS (Acquire) decides and orders.
            let s = self.state.load(Ordering::Relaxed);
            if has_waiters(s) || handoff_owned(s) {
                return false;
            }
            // A writer held off by readers does not spin among newcomers: it queues and takes
            // the handoff (which keeps new readers out), then waits for the readers to drain.
            if want == Want::Exclusive && is_read_locked(s) {
                return false;
            }
            if could_take(s, want) {
                // Mutant `adaptive_spin_stale_take` (models only): take the lock by writing the
                // word computed from the spin's load (a swap, not a CAS), overwriting whatever
                // changed since (another thread's hold, a queuer's HAS_WAITERS).
                if crate::mutant!("adaptive_spin_stale_take") && want == Want::Exclusive {
                    self.state.swap(s + VAL_EXCLUSIVE, Ordering::Acquire);
                    return true;
                }
                match self.attempt(want, false) {
                    Attempt::Acquired => return true,
                    Attempt::Overflow => self.shared_overflow(),
                    // Mutant `adaptive_spin_claims_lost_race` (models only): a lost CAS race
                    // reported as a win.
                    Attempt::MustWait if crate::mutant!("adaptive_spin_claims_lost_race") => {
                        return true
                    }
                    Attempt::MustWait => {}
                }
            }
            if round >= rounds {
                return false;
            }
            round += 1;
            if round <= PAUSE_ROUNDS {
                for _ in 0..(1u32 << round) {
                    sync::spin_loop();
                }
            } else if P::EMPTY_YIELD_NANOS == 0 {
                sync::thread::yield_now();
            } else if sync::yield_was_empty(P::EMPTY_YIELD_NANOS) {
                // [`EmptyYield`]'s rule: the yield found this CPU idle, so the holder runs on
                // another one: queue and sleep, without another look at the word (a build that
                // re-read it and attempted a free lock first did not show the rule's gain in
                // end-xact at 2 threads: results, "The empty-yield rule").
                // Mutant `empty_yield_claims_lock` (models only): the exit reported as a win, so
                // a model that reaches it sees two holders.
                return crate::mutant!("empty_yield_claims_lock");
            }
        }
    }

    /// The handoff owner, queued, spins (the PAUSE rounds of the schedule, then
    /// [`DRAIN_YIELDS`] yields) for the lock to become free and takes it; returns whether it did.
    /// The caller dequeues itself then.
    pub(super) fn spin_for_readers(&self) -> bool {
        let rounds = sync::spin_limit(PAUSE_ROUNDS + DRAIN_YIELDS);
        for round in 1..=rounds {
            // Relaxed: a hint; the attempt's CAS decides.
            if is_free(self.state.load(Ordering::Relaxed))
                && self.attempt(Want::Exclusive, true) == Attempt::Acquired
            {
                return true;
            }
            if round <= PAUSE_ROUNDS {
                for _ in 0..(1u32 << round) {
                    sync::spin_loop();
                }
            } else {
                sync::thread::yield_now();
            }
        }
        false
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::super::layout::{HAS_WAITERS, RELEASE_OK, SHARED_MASK};
    use super::super::RawAdaptiveLwLock;
    use super::*;
    use crate::raw::{Mode, RawLwLock};
    use std::sync::Arc;

    #[test]
    fn sixteen_bytes() {
        if cfg!(not(feature = "stats")) {
            assert_eq!(std::mem::size_of::<RawAdaptiveLwLock>(), 16);
        }
    }

    #[test]
    fn the_exclusive_guess_takes_any_free_word_and_nothing_else() {
        // `attempt_lock`'s CAS expects the idle word; a free word with other bits fails the
        // guess, and the attempt goes on from the word the failed CAS returned.
        for extra in [0, HAS_WAITERS, RELEASE_OK, HAS_WAITERS | RELEASE_OK] {
            let l = RawAdaptiveLwLock::new();
            l.state.store(extra, Ordering::Relaxed);
            assert!(
                RawLwLock::conditional_acquire(&l, Mode::Exclusive),
                "free word {extra:#x} not taken"
            );
            assert_eq!(l.state(), extra | VAL_EXCLUSIVE);
            // SAFETY: held exclusively.
            unsafe { l.release(Mode::Exclusive) };
        }
        // The handoff reserves a free word for its owner: the guess fails and so does the
        // attempt, writing nothing.
        let l = RawAdaptiveLwLock::new();
        l.state.fetch_or(HANDOFF | HAS_WAITERS, Ordering::Relaxed);
        let before = l.state();
        assert!(!RawLwLock::conditional_acquire(&l, Mode::Exclusive));
        assert_eq!(l.state(), before);
    }

    #[test]
    fn a_busy_attempt_leaves_the_word_unchanged() {
        let l = RawAdaptiveLwLock::new();
        assert!(l.acquire(Mode::Shared));
        l.state.fetch_or(HAS_WAITERS, Ordering::Relaxed);
        let before = l.state();
        assert!(!RawLwLock::conditional_acquire(&l, Mode::Exclusive));
        assert_eq!(l.attempt(Want::Exclusive, false), Attempt::MustWait);
        assert_eq!(l.state(), before, "a busy attempt wrote the word");
        l.state.fetch_and(!HAS_WAITERS, Ordering::Relaxed);
        // SAFETY: held shared once.
        unsafe { l.release(Mode::Shared) };
        assert_eq!(l.state(), RELEASE_OK);
    }

    #[test]
    fn spin_takes_a_free_word() {
        let l = RawAdaptiveLwLock::new();
        assert!(l.spin_acquire(Want::Exclusive));
        assert!(RawLwLock::is_locked_exclusive(&l));
        // SAFETY: held exclusively.
        unsafe { l.release(Mode::Exclusive) };
        assert_eq!(l.state(), RELEASE_OK);
    }

    #[test]
    fn spin_gives_up_on_a_held_lock_without_queueing() {
        let l = RawAdaptiveLwLock::new();
        assert!(l.acquire(Mode::Shared));
        assert!(!l.spin_acquire(Want::Exclusive));
        assert_eq!(l.state() & (HAS_WAITERS | VAL_EXCLUSIVE), 0);
        // A reader spins for nothing: it gets in at once.
        assert!(l.spin_acquire(Want::Shared));
        assert_eq!(l.state() & SHARED_MASK, 2);
        // SAFETY: held shared twice.
        unsafe {
            l.release(Mode::Shared);
            l.release(Mode::Shared);
        }
    }

    #[test]
    fn spin_never_passes_queued_waiters_or_a_handoff() {
        let l = RawAdaptiveLwLock::new();
        // A free word with a (stale) waiter flag: the spinner leaves it to the queue.
        l.state.fetch_or(HAS_WAITERS, Ordering::Relaxed);
        assert!(!l.spin_acquire(Want::Exclusive));
        assert!(!l.spin_acquire(Want::Shared));
        assert_eq!(
            l.state() & LOCK_MASK,
            0,
            "a spinner took the lock past a waiter"
        );
        l.state.fetch_or(HANDOFF, Ordering::Relaxed);
        assert!(!l.spin_acquire(Want::Shared));
        assert_eq!(
            l.state() & LOCK_MASK,
            0,
            "a spinner took the lock past a handoff"
        );
        l.state
            .fetch_and(!(HAS_WAITERS | HANDOFF), Ordering::Relaxed);
    }

    #[test]
    fn a_sleeping_writer_is_woken_and_the_list_empties() {
        let l = Arc::new(RawAdaptiveLwLock::new());
        l.acquire(Mode::Exclusive);
        let l2 = l.clone();
        let t = std::thread::spawn(move || {
            let fast = l2.acquire(Mode::Exclusive);
            // SAFETY: held exclusively.
            unsafe { l2.release(Mode::Exclusive) };
            fast
        });
        while l.state() & HAS_WAITERS == 0 {
            std::thread::yield_now();
        }
        // SAFETY: held exclusively.
        unsafe { l.release(Mode::Exclusive) };
        // Whether it slept or its re-check after queueing won depends on the schedule; either
        // way it got the lock and left the list (and the word) clean.
        let _slept = !t.join().unwrap();
        assert_eq!(l.state() & (HAS_WAITERS | LOCK_MASK | HANDOFF), 0);
    }

    /// The stale-wake rule: with wakeups inhibited (`RELEASE_OK` clear, as after a wake pass whose
    /// woken thread has not run) and that pass older than the bound, a release still wakes the
    /// queued reader (a reader: it sleeps without a bound of its own); PostgreSQL's throttle
    /// alone would leave it asleep for good here (nobody else would ever set `RELEASE_OK`).
    #[test]
    fn a_stale_throttle_does_not_keep_a_waiter_asleep() {
        let l = Arc::new(RawAdaptiveLwLock::new());
        l.acquire(Mode::Exclusive);
        let l2 = l.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            l2.acquire(Mode::Shared);
            // SAFETY: held shared.
            unsafe { l2.release(Mode::Shared) };
            tx.send(()).unwrap();
        });
        while l.state() & HAS_WAITERS == 0 {
            std::thread::yield_now();
        }
        // As after a wake pass whose woken thread never ran, 100 clock units (0.8 ms) ago.
        l.state.fetch_and(!RELEASE_OK, Ordering::Relaxed);
        let now = super::super::wakeup::wake_clock().expect("a clock outside the models");
        l.woke_at.store(now.wrapping_sub(100), Ordering::Relaxed);
        // SAFETY: held exclusively.
        unsafe { l.release(Mode::Exclusive) };
        rx.recv_timeout(std::time::Duration::from_secs(10))
            .expect("the release left the queued reader asleep behind a stale throttle");
        t.join().unwrap();
        assert_eq!(l.state() & (HAS_WAITERS | LOCK_MASK | HANDOFF), 0);
    }

    /// The stale-wake rule's test itself: a pass just recorded is fresh (the throttle holds), one
    /// 100 units (0.8 ms) old is stale. Three tries each: a preemption between the two clock
    /// reads could make either look wrong once.
    #[test]
    fn a_fresh_throttle_holds_and_a_stale_one_does_not() {
        let l = RawAdaptiveLwLock::new();
        let clock = || super::super::wakeup::wake_clock().expect("a clock outside the models");
        let fresh = (0..3).any(|_| {
            l.woke_at.store(clock(), Ordering::Relaxed);
            !l.wake_stale()
        });
        assert!(fresh, "a wake pass just recorded counted as stale");
        let stale = (0..3).any(|_| {
            l.woke_at
                .store(clock().wrapping_sub(100), Ordering::Relaxed);
            l.wake_stale()
        });
        assert!(stale, "a wake pass 0.8 ms old counted as fresh");
    }

    /// Writers past their bound and readers mixed, with sections long enough that bounds pass
    /// (the re-queue at the front, behind an owner, the rule's scans): every section runs, no
    /// update is lost and the word ends clean.
    #[test]
    fn late_writers_and_readers_all_finish() {
        // Watchdog: a hang (a stranded waiter) aborts with a message instead of hanging the run.
        let (done, watch) = std::sync::mpsc::channel::<()>();
        std::thread::spawn(move || {
            if watch.recv_timeout(std::time::Duration::from_secs(60))
                == Err(std::sync::mpsc::RecvTimeoutError::Timeout)
            {
                eprintln!("late_writers_and_readers_all_finish: no progress in 60 s, aborting");
                std::process::abort();
            }
        });
        let l = Arc::new(RawAdaptiveLwLock::new());
        let count = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let threads: Vec<_> = (0..6)
            .map(|i| {
                let (l, count) = (l.clone(), count.clone());
                std::thread::spawn(move || {
                    for _ in 0..200 {
                        if i % 3 == 2 {
                            l.acquire(Mode::Shared);
                            std::thread::sleep(std::time::Duration::from_micros(50));
                            // SAFETY: held shared.
                            unsafe { l.release(Mode::Shared) };
                        } else {
                            l.acquire(Mode::Exclusive);
                            // Not an RMW: a second writer inside would lose updates.
                            let v = count.load(std::sync::atomic::Ordering::Relaxed);
                            std::thread::sleep(std::time::Duration::from_micros(300));
                            count.store(v + 1, std::sync::atomic::Ordering::Relaxed);
                            // SAFETY: held exclusively.
                            unsafe { l.release(Mode::Exclusive) };
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(count.load(std::sync::atomic::Ordering::Relaxed), 4 * 200);
        drop(done);
        assert_eq!(l.state() & (HAS_WAITERS | LOCK_MASK | HANDOFF), 0);
    }

    #[test]
    fn a_writer_behind_a_reader_takes_the_handoff_and_new_readers_queue() {
        let l = Arc::new(RawAdaptiveLwLock::new());
        l.acquire(Mode::Shared);
        let l2 = l.clone();
        let w = std::thread::spawn(move || {
            l2.acquire(Mode::Exclusive);
            // SAFETY: held exclusively.
            unsafe { l2.release(Mode::Exclusive) };
        });
        // The writer is held off by a reader: it queues with the handoff at once (no exclusive
        // waiter is queued), without waiting for its bound.
        let t0 = std::time::Instant::now();
        while l.state() & HANDOFF == 0 {
            assert!(
                t0.elapsed() < std::time::Duration::from_secs(10),
                "the writer never took the handoff"
            );
            std::thread::yield_now();
        }
        assert!(
            !l.conditional_acquire(Mode::Shared),
            "a new reader overtook a writer past its bound"
        );
        // SAFETY: held shared.
        unsafe { l.release(Mode::Shared) };
        w.join().unwrap();
        assert_eq!(l.state() & (HAS_WAITERS | LOCK_MASK | HANDOFF), 0);
    }
}
