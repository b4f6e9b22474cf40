//! The TAS spinlock and its adaptive spin/backoff: PostgreSQL's `s_lock.h` and `s_lock.c`.
//!
//! Mirrors `TAS`, `TAS_SPIN`, `S_UNLOCK`, `SPIN_DELAY` (`s_lock.h`) and `s_lock`,
//! `perform_spin_delay`, `finish_spin_delay`, `s_lock_stuck` (`s_lock.c`).
//!
//! # Design
//! * The first attempt is a plain test-and-set (`swap(true)`, an `xchg` on x86-64). While
//!   spinning, the lock is read first and TAS is tried only when it looks free
//!   (test-and-test-and-set, `TAS_SPIN`): spinning stays in the local cache.
//! * Each failed probe executes one PAUSE ([`crate::sync::spin_loop`]). After `spins_per_delay`
//!   probes the thread sleeps: the first sleep is [`SpinDelayConfig::min_delay_us`] (1 ms), each
//!   next one grows by a random factor in [1, 2), and a delay past `max_delay_us` (1 s) wraps back
//!   to the minimum instead of clamping, so that enough attempts happen.
//! * After `num_delays` (1000) sleeps, "usually about 2 minutes", the lock is declared stuck and
//!   the process aborts with a message naming the lock ([`s_lock_stuck`]; PostgreSQL raises
//!   PANIC). It is deliberately not a catchable panic: see [`crate::RawLwLock`], "Unwinding".
//! * `spins_per_delay` adapts per thread: +100 (up to 1000) after an acquisition that did not
//!   sleep, −1 (down to 10) after one that did. It should converge to 1000 on a multiprocessor and
//!   to 10 on a uniprocessor. Threads start from a shared estimate and fold theirs into it as
//!   `(shared * 15 + local) / 16` when they exit (`InitProcess`/`ProcKill`), atomically (one
//!   read-modify-write; PostgreSQL does it under `ProcStructLock`).
//!
//! The same [`SpinDelay`] loop is reused by the atomic LWLock's wait-list bit, as `lwlock.c` does
//! since 9.6.
//!
//! # Memory orderings
//! TAS is `Acquire` (the lock's critical section may not move above it); `unlock` is a `Release`
//! store (`S_UNLOCK`: earlier accesses may not move below it). The spinning pre-test is `Relaxed`:
//! it only decides whether to try TAS, which does the ordering.

use crate::proc::Proc;
use crate::sync::{instructions, AtomicBool, Ordering, SpinEpoch};
use crate::wait_event::{Tranche, WaitEvent};

// The bounds of the `spins_per_delay` estimate live with the estimate, in the wait records
// (`proc`, as `ProcGlobal->spins_per_delay` does); re-exported here under their `s_lock.h` names.
pub use crate::proc::{DEFAULT_SPINS_PER_DELAY, MAX_SPINS_PER_DELAY, MIN_SPINS_PER_DELAY};
/// Sleeps before a spinlock is declared stuck (`NUM_DELAYS`).
pub const NUM_DELAYS: u32 = 1000;
/// First sleep, in microseconds (`MIN_DELAY_USEC`, 1 ms).
pub const MIN_DELAY_USEC: u64 = 1000;
/// Sleeps longer than this wrap back to the minimum (`MAX_DELAY_USEC`, 1 s).
pub const MAX_DELAY_USEC: u64 = 1_000_000;
/// Added to `spins_per_delay` after an acquisition without sleeping.
pub const SPINS_INCREMENT: u32 = 100;

/// The spin/backoff constants. [`SpinDelayConfig::POSTGRES`] holds PostgreSQL's values; tests use
/// smaller ones to reach the stuck-spinlock panic quickly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpinDelayConfig {
    /// First sleep (µs).
    pub min_delay_us: u64,
    /// Wrap-around bound of the sleep (µs).
    pub max_delay_us: u64,
    /// Sleeps before panicking.
    pub num_delays: u32,
}

impl SpinDelayConfig {
    /// PostgreSQL's constants.
    pub const POSTGRES: SpinDelayConfig = SpinDelayConfig {
        min_delay_us: MIN_DELAY_USEC,
        max_delay_us: MAX_DELAY_USEC,
        num_delays: NUM_DELAYS,
    };
}

/// One contended wait: `SpinDelayStatus` with `perform_spin_delay`/`finish_spin_delay`.
///
/// Publishes a [`WaitEvent::spin`] for its tranche while it exists.
#[derive(Debug)]
pub struct SpinDelay<'a> {
    /// The waiting thread's record, if it has one (a release can spin on a thread that never
    /// registered one; the delay then uses the shared estimate and a local PRNG, and publishes no
    /// wait event, like `init_local_spin_delay` without a PGPROC).
    proc: Option<&'static Proc>,
    /// PRNG state when there is no record.
    rng: u64,
    config: &'a SpinDelayConfig,
    tranche: Tranche,
    spins: u32,
    delays: u32,
    cur_delay_us: u64,
    spins_per_delay: u32,
    /// The spin-wait state between probes (under loom: the release epoch read before the next
    /// probe; zero-sized otherwise).
    epoch: SpinEpoch,
}

/// The seed of a record-less spin delay's PRNG: the config's address (cheap, varies per process).
/// Under lwsim an address would make simulations depend on ASLR, so the virtual clock seeds it.
#[cfg(not(lwsim))]
fn local_seed(config: &SpinDelayConfig) -> u64 {
    config as *const SpinDelayConfig as u64
}

/// The seed of a record-less spin delay's PRNG: the virtual clock (deterministic, see above).
#[cfg(lwsim)]
fn local_seed(_: &SpinDelayConfig) -> u64 {
    crate::sync::clock_nanos()
}

impl<'a> SpinDelay<'a> {
    /// Starts a contended wait on a lock of `tranche` (`init_local_spin_delay`).
    pub fn new(tranche: Tranche, config: &'a SpinDelayConfig) -> Self {
        // Never registers a record: this runs inside `release` too (see `proc` above).
        let proc = Proc::current_if_registered();
        let spins_per_delay = match proc {
            Some(p) => {
                p.report_wait_start(WaitEvent::spin(tranche));
                p.spins_per_delay.load(Ordering::Relaxed)
            }
            None => crate::proc::shared_spins_per_delay(),
        };
        SpinDelay {
            proc,
            rng: 0x9E37_79B9_7F4A_7C15 ^ local_seed(config),
            config,
            tranche,
            spins: 0,
            delays: 0,
            cur_delay_us: 0,
            spins_per_delay,
            epoch: SpinEpoch::start(),
        }
    }

    /// One failed probe (`perform_spin_delay`): PAUSE, and every `spins_per_delay` probes a
    /// randomized, exponentially growing sleep.
    ///
    /// # Aborts
    /// After `num_delays` sleeps: "stuck spinlock detected" ([`s_lock_stuck`]).
    pub fn perform(&mut self) {
        // PAUSE (`SPIN_DELAY`); under loom: block until a release since the probe.
        self.epoch.wait();
        self.spins += 1;
        if self.spins >= self.spins_per_delay {
            self.delays += 1;
            if self.delays > self.config.num_delays {
                s_lock_stuck(self.tranche, self.config.num_delays);
            }
            if self.cur_delay_us == 0 {
                self.cur_delay_us = self.config.min_delay_us;
            }
            crate::sync::sleep_micros(self.cur_delay_us);
            // Grow by a random fraction in [0, 1) of itself, rounded: a factor in [1, 2).
            let grow = (self.cur_delay_us as f64 * self.next_random() + 0.5) as u64;
            self.cur_delay_us += grow;
            if self.cur_delay_us > self.config.max_delay_us {
                self.cur_delay_us = self.config.min_delay_us;
            }
            self.spins = 0;
        }
    }

    /// A pseudo-random `f64` in `[0, 1)`: the record's PRNG, or a local one without a record.
    fn next_random(&mut self) -> f64 {
        if let Some(p) = self.proc {
            return p.next_random();
        }
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        (x >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Ends the wait (`finish_spin_delay`), adapting this thread's `spins_per_delay`. Returns the
    /// number of sleeps, which LWLOCK_STATS adds to `spin_delay_count`.
    pub fn finish(self) -> u32 {
        let spd = if self.cur_delay_us == 0 {
            (self.spins_per_delay + SPINS_INCREMENT).min(MAX_SPINS_PER_DELAY)
        } else {
            self.spins_per_delay
                .saturating_sub(1)
                .max(MIN_SPINS_PER_DELAY)
        };
        if let Some(p) = self.proc {
            p.spins_per_delay.store(spd, Ordering::Relaxed);
            p.report_wait_end();
        }
        self.delays
    }
}

/// `s_lock_stuck`: a spinlock (or the atomic LWLock's wait-list bit) was not released within
/// `num_delays` sleeps. PostgreSQL raises PANIC, which restarts the cluster; here the process
/// aborts with the message. It is not a catchable panic because every spinlock holder assumes it
/// cannot be interrupted: a waiter that unwound from here would leave its wait record on a list,
/// a release that unwound would leave waiters asleep, and the holder (if any) is gone or broken.
#[cold]
#[inline(never)]
pub fn s_lock_stuck(tranche: Tranche, num_delays: u32) -> ! {
    // On the simulator, the scheduler's state says where the holder is.
    #[cfg(lwsim)]
    if let Some(state) = crate::sync::lwsim::debug_state() {
        eprint!("{state}");
    }
    crate::elog::panic_abort(format_args!(
        "stuck spinlock detected on lock {:?} after {num_delays} delays",
        tranche.name()
    ))
}

/// A test-and-set spinlock (`slock_t`), with no owner, no queue and no fairness.
///
/// Hold it for a few dozen instructions and never sleep or panic while holding it.
#[derive(Debug)]
pub struct SpinLock {
    /// `true` while held. Set by a successful TAS (Acquire), cleared by `unlock` (Release).
    locked: AtomicBool,
}

impl SpinLock {
    /// An unlocked spinlock.
    #[cfg(not(loom))]
    pub const fn new() -> Self {
        SpinLock {
            locked: AtomicBool::new(false),
        }
    }
    /// An unlocked spinlock.
    #[cfg(loom)]
    pub fn new() -> Self {
        SpinLock {
            locked: AtomicBool::new(false),
        }
    }

    /// `TAS`: one test-and-set; true if the lock was taken.
    #[inline(always)]
    pub fn try_lock(&self) -> bool {
        // Mutant `spin_relaxed_tas` (models only): a TAS that does not order the critical section.
        let order = if crate::mutant!("spin_relaxed_tas") {
            Ordering::Relaxed
        } else {
            Ordering::Acquire
        };
        !self.locked.swap(true, order)
    }

    /// `S_LOCK`: takes the lock, spinning and backing off with PostgreSQL's constants. Returns the
    /// number of backoff sleeps (0 on the fast path).
    #[inline]
    pub fn lock(&self, tranche: Tranche) -> u32 {
        if self.try_lock() {
            return 0;
        }
        self.lock_slow(tranche, &SpinDelayConfig::POSTGRES)
    }

    /// [`lock`](Self::lock) with explicit backoff constants.
    pub fn lock_with(&self, tranche: Tranche, config: &SpinDelayConfig) -> u32 {
        if self.try_lock() {
            return 0;
        }
        self.lock_slow(tranche, config)
    }

    /// `s_lock`: spin with `TAS_SPIN` (test, then test-and-set) until taken.
    #[cold]
    fn lock_slow(&self, tranche: Tranche, config: &SpinDelayConfig) -> u32 {
        // Instruction counts of the release build (the design document's "Instruction time"):
        // 30 to the first probe (prologue, `init_local_spin_delay`), 3 from a probe that saw the
        // lock free to the TAS, 5 per failed probe besides its PAUSE, 23 to return.
        instructions(30);
        let mut delay = SpinDelay::new(tranche, config);
        loop {
            // TAS_SPIN: read-only until the lock looks free.
            if !self.locked.load(Ordering::Relaxed) {
                instructions(3);
                if self.try_lock() {
                    instructions(23);
                    return delay.finish();
                }
            }
            instructions(5);
            delay.perform();
        }
    }

    /// `S_UNLOCK`.
    ///
    /// # Safety
    /// The caller must hold the lock.
    #[inline(always)]
    pub unsafe fn unlock(&self) {
        debug_assert!(
            self.locked.load(Ordering::Relaxed),
            "unlocking a free spinlock"
        );
        // Release: the critical section happens-before the next TAS that sees the lock free.
        // Mutant `spin_relaxed_unlock` (models only): an unlock that does not publish.
        let order = if crate::mutant!("spin_relaxed_unlock") {
            Ordering::Relaxed
        } else {
            Ordering::Release
        };
        // A Release store; under loom the same ordering on an RMW (see `release_word`).
        crate::sync::release_word(&self.locked, false, order);
    }

    /// Whether the lock is held right now (racy; for diagnostics).
    pub fn is_locked(&self) -> bool {
        self.locked.load(Ordering::Relaxed)
    }
}

impl Default for SpinLock {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn uncontended_lock_has_no_delays() {
        let s = SpinLock::new();
        assert_eq!(s.lock(Tranche::DEFAULT), 0);
        assert!(s.is_locked());
        assert!(!s.try_lock());
        // SAFETY: held by this thread.
        unsafe { s.unlock() };
        assert!(!s.is_locked());
    }

    #[test]
    fn spinlock_excludes_and_counts_delays() {
        struct Counter(crate::sync::UnsafeCell<u64>);
        // SAFETY: only accessed under the spinlock or after all threads joined.
        unsafe impl Sync for Counter {}
        let s = Arc::new(SpinLock::new());
        let counter = Arc::new(Counter(crate::sync::UnsafeCell::new(0u64)));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (s, c) = (s.clone(), counter.clone());
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        s.lock(Tranche::DEFAULT);
                        // SAFETY: the spinlock gives exclusive access.
                        c.0.with_mut(|p| unsafe { *p += 1 });
                        // SAFETY: held by this thread.
                        unsafe { s.unlock() };
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        // SAFETY: all threads joined.
        assert_eq!(counter.0.with(|p| unsafe { *p }), 160_000);
    }

    #[test]
    fn spins_per_delay_rises_without_sleep_and_falls_after_sleep() {
        let me = Proc::current();
        me.spins_per_delay.store(100, Ordering::Relaxed);
        let cfg = SpinDelayConfig {
            min_delay_us: 1,
            max_delay_us: 4,
            num_delays: 1000,
        };
        let d = SpinDelay::new(Tranche::DEFAULT, &cfg);
        assert_eq!(d.finish(), 0);
        assert_eq!(me.spins_per_delay.load(Ordering::Relaxed), 200);
        me.spins_per_delay.store(995, Ordering::Relaxed);
        SpinDelay::new(Tranche::DEFAULT, &cfg).finish();
        assert_eq!(
            me.spins_per_delay.load(Ordering::Relaxed),
            MAX_SPINS_PER_DELAY
        );
        // Force a sleep: spins_per_delay probes, then one delay.
        me.spins_per_delay
            .store(MIN_SPINS_PER_DELAY, Ordering::Relaxed);
        let mut d = SpinDelay::new(Tranche::DEFAULT, &cfg);
        for _ in 0..MIN_SPINS_PER_DELAY {
            d.perform();
        }
        assert_eq!(d.finish(), 1);
        assert_eq!(
            me.spins_per_delay.load(Ordering::Relaxed),
            MIN_SPINS_PER_DELAY
        );
    }

    #[test]
    fn delay_grows_by_factor_in_one_to_two_and_wraps() {
        let me = Proc::current();
        me.spins_per_delay
            .store(MIN_SPINS_PER_DELAY, Ordering::Relaxed);
        let cfg = SpinDelayConfig {
            min_delay_us: 1,
            max_delay_us: 50,
            num_delays: 1000,
        };
        let mut d = SpinDelay::new(Tranche::DEFAULT, &cfg);
        let mut wrapped = false;
        let mut prev = 0;
        for _ in 0..40 {
            for _ in 0..MIN_SPINS_PER_DELAY {
                d.perform();
            }
            let cur = d.cur_delay_us;
            if prev != 0 && cur < prev {
                assert_eq!(
                    cur, cfg.min_delay_us,
                    "a delay past the maximum wraps to the minimum"
                );
                wrapped = true;
            } else if prev != 0 {
                assert!(
                    cur >= prev && cur <= 2 * prev,
                    "grows by a factor in [1,2]: {prev}->{cur}"
                );
            }
            prev = cur;
        }
        assert!(
            wrapped,
            "40 growing delays from 1µs must pass 50µs and wrap"
        );
        d.finish();
    }

    /// A stuck spinlock aborts the process (PANIC), naming the lock; a catchable panic would let
    /// code run on after a lock that every holder assumes cannot fail. The abort is observed from
    /// a child process running [`stuck_spinlock_child`].
    #[test]
    fn stuck_spinlock_aborts_naming_the_lock() {
        let exe = std::env::current_exe().unwrap();
        let out = std::process::Command::new(exe)
            .args([
                "s_lock::tests::stuck_spinlock_child",
                "--exact",
                "--ignored",
                "--nocapture",
            ])
            .env("LWLOCK_STUCK_CHILD", "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("running 1 test"),
            "child test not found: {stdout}"
        );
        assert!(
            !stdout.contains("caught"),
            "the stuck spinlock was a catchable panic: {stdout}"
        );
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            out.status.signal(),
            Some(6),
            "SIGABRT expected: {:?}",
            out.status
        );
        assert!(
            stderr.contains("PANIC: stuck spinlock detected") && stderr.contains("StuckTestLock"),
            "{stderr}"
        );
    }

    /// Child of [`stuck_spinlock_aborts_naming_the_lock`]: waits on a spinlock nobody releases.
    #[test]
    #[ignore = "run as a child process by stuck_spinlock_aborts_naming_the_lock"]
    fn stuck_spinlock_child() {
        if std::env::var_os("LWLOCK_STUCK_CHILD").is_none() {
            return;
        }
        let s = SpinLock::new();
        assert!(s.try_lock());
        let cfg = SpinDelayConfig {
            min_delay_us: 1,
            max_delay_us: 2,
            num_delays: 3,
        };
        let t = crate::Tranche::register("StuckTestLock");
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            s.lock_with(t, &cfg);
        }));
        println!("caught: {}", r.is_err());
    }
}
