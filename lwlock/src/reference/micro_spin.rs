//! folly's `MicroSpinLock` (facebook/folly, `folly/synchronization/MicroSpinLock.h`, with the
//! `detail::Sleeper` of the 2019 results the project holds): a one-byte lock taken by a CAS from
//! free to locked; a waiter that fails waits with the sleeper, then loads the byte (relaxed)
//! until it reads free, and tries the CAS again. The sleeper's first 4000 waits of one `lock()`
//! are one PAUSE each; every later wait is a `nanosleep` of 0.5 ms. It mirrors no PostgreSQL
//! function; it is the spinlock of folly's SmallLocksBenchmark curves (`folly_microspin`), which
//! lwsim's published-curve check runs on the profile of that benchmark's machine.
//!
//! Differences from folly's code: the loop "wait, then load while locked" is
//! [`spin_wait_while_for`] (a load, then a PAUSE while the byte reads locked: the first load comes
//! before the first PAUSE, where folly PAUSEs first), bounded by what is left of the 4000 PAUSEs;
//! the sleep is [`sleep_micros`]`(500)` (`nanosleep` of 0.5 ms, the OS model's timer slack on
//! top). No instruction time is announced (not counted from a disassembly): the profile's memory
//! operations alone.

use crate::sync::{sleep_micros, spin_wait_while_for, AtomicU8, Ordering};
use crate::{AcquireOrWait, Mode, RawLwLock, Tranche};

/// PAUSEs before the sleeper sleeps (folly `detail::Sleeper::kMaxActiveSpin`).
pub const MAX_ACTIVE_SPIN: u64 = 4000;

/// The sleeper's sleep (`nanosleep` of 0.5 ms), in µs.
pub const SLEEP_US: u64 = 500;

const FREE: u8 = 0;
const LOCKED: u8 = 1;

/// folly's `MicroSpinLock`: a byte, CAS to take it, PAUSE then sleep while it is held.
#[derive(Debug, Default)]
pub struct MicroSpinLock {
    lock: AtomicU8,
}

impl MicroSpinLock {
    fn cas(&self) -> bool {
        self.lock
            .compare_exchange(FREE, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }
}

// SAFETY: only the thread whose CAS turned FREE into LOCKED holds the lock; Acquire CAS /
// Release store order the critical sections; nothing unwinds; the conditional acquire is one CAS.
unsafe impl RawLwLock for MicroSpinLock {
    const NAME: &'static str = "folly-microspin";
    fn with_tranche(_: Tranche) -> Self {
        MicroSpinLock::default()
    }
    fn acquire(&self, _: Mode) -> bool {
        let mut fast = true;
        let mut spins = 0u64;
        while !self.cas() {
            fast = false;
            loop {
                if spins < MAX_ACTIVE_SPIN {
                    let (v, n) = spin_wait_while_for(
                        &self.lock,
                        Ordering::Relaxed,
                        MAX_ACTIVE_SPIN - spins,
                        |v| *v == LOCKED,
                    );
                    spins += n;
                    if v != LOCKED {
                        break;
                    }
                } else {
                    sleep_micros(SLEEP_US);
                    if self.lock.load(Ordering::Relaxed) != LOCKED {
                        break;
                    }
                }
            }
        }
        fast
    }
    fn conditional_acquire(&self, _: Mode) -> bool {
        self.cas()
    }
    fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait {
        if self.conditional_acquire(mode) {
            return AcquireOrWait::Acquired;
        }
        let _ = spin_wait_while_for(&self.lock, Ordering::Acquire, u64::MAX, |v| *v == LOCKED);
        AcquireOrWait::Waited
    }
    unsafe fn release(&self, _: Mode) {
        self.lock.store(FREE, Ordering::Release);
    }
    fn is_locked(&self) -> bool {
        self.lock.load(Ordering::Relaxed) != FREE
    }
    fn is_locked_exclusive(&self) -> bool {
        self.is_locked()
    }
    fn tranche(&self) -> Tranche {
        Tranche::DEFAULT
    }
}
