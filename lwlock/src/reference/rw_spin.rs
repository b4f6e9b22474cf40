//! folly's `RWSpinLock` (facebook/folly, `folly/synchronization/RWSpinLock.h`): a reader-writer
//! spinlock in one 32-bit word, a writer bit (1), an upgrade bit (2) and a reader count in units
//! of 4. A reader `fetch_add`s 4 and, if it finds the writer or upgrade bit set, `fetch_add`s −4
//! back and retries; a writer CASes 0 to the writer bit; either calls `sched_yield` on every try
//! after its first 1000 failed ones. No PAUSE anywhere: a waiter hammers the word with RMWs.
//! Writers release with a `fetch_and` of both bits, readers with a `fetch_add` of −4. It mirrors
//! no PostgreSQL function; it is the one-word RW spinlock of folly's SharedMutexTest curves
//! (`folly_rwspin`, 1 / 10 / 100 % writes on 2 x E5-2660), which lwsim's published-curve check
//! runs on that machine's profile: the nearest published analogue of an LWLock's two modes on
//! one word.
//!
//! [`Mode::Shared`] is `lock_shared`, [`Mode::Exclusive`] `lock`. The upgrade mode is not ported
//! (the benchmark does not use it). No instruction time is announced (not counted from a
//! disassembly): the profile's memory operations alone.

use crate::sync::{thread, AtomicU32, Ordering};
use crate::{AcquireOrWait, Mode, RawLwLock, Tranche};

const WRITER: u32 = 1;
const UPGRADED: u32 = 2;
const READER: u32 = 4;

/// Failed tries before every further try yields (folly's `++count > 1000`).
pub const TRIES_BEFORE_YIELD: u32 = 1000;

/// folly's `RWSpinLock`: readers count in one word, a writer bit, RMW retries, yield after 1000.
#[derive(Debug, Default)]
pub struct RwSpinLock {
    bits: AtomicU32,
}

impl RwSpinLock {
    fn try_lock(&self) -> bool {
        self.bits
            .compare_exchange(0, WRITER, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }
    fn try_lock_shared(&self) -> bool {
        let v = self.bits.fetch_add(READER, Ordering::Acquire);
        if v & (WRITER | UPGRADED) != 0 {
            self.bits.fetch_sub(READER, Ordering::Release);
            return false;
        }
        true
    }
    fn try_mode(&self, mode: Mode) -> bool {
        match mode {
            Mode::Shared => self.try_lock_shared(),
            Mode::Exclusive => self.try_lock(),
        }
    }
}

// SAFETY: a writer holds the lock only after its CAS turned 0 (no reader, no writer) into WRITER;
// a reader only after its fetch_add found neither bit set, and no writer's CAS succeeds while
// its count is in the word; Acquire on the taking RMWs, Release on the releasing ones; nothing
// unwinds; the conditional acquire is one try.
unsafe impl RawLwLock for RwSpinLock {
    const NAME: &'static str = "folly-rwspin";
    fn with_tranche(_: Tranche) -> Self {
        RwSpinLock::default()
    }
    fn acquire(&self, mode: Mode) -> bool {
        let mut count = 0u32;
        let mut fast = true;
        while !self.try_mode(mode) {
            fast = false;
            count += 1;
            if count > TRIES_BEFORE_YIELD {
                thread::yield_now();
            }
        }
        fast
    }
    fn conditional_acquire(&self, mode: Mode) -> bool {
        self.try_mode(mode)
    }
    fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait {
        if self.try_mode(mode) {
            return AcquireOrWait::Acquired;
        }
        // Wait for the mode to become free, without taking it.
        let busy = match mode {
            Mode::Shared => WRITER | UPGRADED,
            Mode::Exclusive => u32::MAX,
        };
        while self.bits.load(Ordering::Acquire) & busy != 0 {
            thread::yield_now();
        }
        AcquireOrWait::Waited
    }
    unsafe fn release(&self, mode: Mode) {
        match mode {
            Mode::Shared => {
                self.bits.fetch_sub(READER, Ordering::Release);
            }
            Mode::Exclusive => {
                self.bits.fetch_and(!(WRITER | UPGRADED), Ordering::Release);
            }
        }
    }
    fn is_locked(&self) -> bool {
        self.bits.load(Ordering::Relaxed) != 0
    }
    fn is_locked_exclusive(&self) -> bool {
        self.bits.load(Ordering::Relaxed) & WRITER != 0
    }
    fn tranche(&self) -> Tranche {
        Tranche::DEFAULT
    }
}
