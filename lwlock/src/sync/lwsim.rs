//! The lwsim backend (`--cfg lwsim`): the shim's items over the [`lwsim`](::lwsim) crate, a
//! many-core machine in software (coherence directory, OS model, smallest-virtual-clock scheduler
//! on lwsim's own executor). The atomics are std's, wrapped so that every access is charged virtual
//! time by the coherence model; futexes, sleeps, spin hints, thread spawns and the clock go to its
//! OS model. The crate itself is re-exported as `lwlock::sync::lwsim`, for harnesses.
//!
//! Built with `RUSTFLAGS="--cfg lwsim"` (its own `CARGO_TARGET_DIR`, like the loom and shuttle
//! builds), every atomic, fence, spin hint, futex wait/wake, timed sleep, thread spawn, yield and
//! clock read that goes through [`crate::sync`] is executed by the simulator instead of the host.
//! The simulator itself is a normal crate (`cargo test -p lwsim` needs no cfg); only the choice of
//! backend is a cfg, for the reason the crate's docs give (a feature would be unified across the
//! dependency graph and leak into normal builds).
//!
//! # A user's own lock runs unchanged
//! Any lock written against `lwlock::sync` (atomics, [`crate::sync::spin_loop`],
//! [`crate::sync::Futex`]) is simulated as is; see `lwlock/examples/lwsim.rs` (`UserSpinLock`)
//! and [`crate::reference`]. Outside `lwsim::run` the atomics behave as std's (no simulator is
//! consulted).
//!
//! ```ignore
//! use lwlock::sync::lwsim::{self, Profile, SimConfig};
//! let report = lwsim::run(SimConfig::new(Profile::builtin("xeon-2s-broadwell")?, 8), || {
//!     // spawn threads with lwlock::sync::thread::spawn, run lock code, join them
//! });
//! println!("{}", report.summary());
//! ```

use ::lwsim as sim;

pub use super::host::UnsafeCell;

pub use ::lwsim::atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8};
pub use std::sync::atomic::Ordering;

/// A blocking mutex of the active backend. Only the wait-record table uses it (registration, once
/// per thread), never a lock's fast or slow path; under the simulator it must be the model's, so
/// that registrations are ordered and a thread switch inside one cannot block the real thread.
pub use ::lwsim::Mutex;

pub use ::lwsim::thread_local as model_thread_local;

/// Thread spawning and thread-locals of the active backend.
pub mod thread {
    pub use ::lwsim::thread::{current, spawn, yield_now, JoinHandle};
}

/// The ported code's sub-word store (the shim's `field.rs` says why): charged as the plain store
/// it is there, into the store buffer; the bits `mask`, which hold `from`, become `to`'s.
#[inline]
pub fn store_field(word: &AtomicU64, mask: u64, from: u64, to: u64, order: Ordering) {
    word.store_field(mask, from, to, order);
}

/// The ported code's sub-word exchange (the shim's `field.rs`): one RMW, never a retried CAS.
#[inline]
pub fn swap_field(word: &AtomicU64, mask: u64, v: u64, order: Ordering) -> u64 {
    word.swap_field(mask, v, order)
}

/// A spin-wait hint: one PAUSE's virtual time (`SPIN_DELAY()` in `s_lock.h`).
#[inline(always)]
pub fn spin_loop() {
    sim::pause();
}

/// Charges a plain (non-atomic) access of `len` bytes at `ptr` to the simulator: each 64-byte
/// line the range covers is one coherence access.
#[inline(always)]
pub fn touch<T: ?Sized>(ptr: *const T, len: usize, write: bool) {
    sim::touch(ptr as *const u8 as usize, len, write);
}

/// Charges `n` instructions of a lock path's straight-line code: `n` times the profile's
/// `instruction_ns`, no coherence traffic, no scheduling point.
#[inline(always)]
pub fn instructions(n: u32) {
    sim::instructions(n);
}

/// The calling thread's virtual time in nanoseconds.
pub fn clock_nanos() -> u64 {
    sim::now_nanos()
}

/// Sleep for `micros` microseconds of virtual time (`pg_usleep`).
pub fn sleep_micros(micros: u64) {
    sim::sleep_micros(micros);
}

/// Wait idle for `nanos` of virtual time, off the core and with no timer slack: a backend
/// waiting on its socket for its client's next query (the simulator's idle wait).
pub fn idle_nanos(nanos: u64) {
    sim::idle_nanos(nanos);
}

/// A 32-bit futex word: `wait` sleeps only while the word still equals `expected`; `wake_*`
/// wake sleepers (the simulator's OS model). Spurious returns from `wait` are allowed.
#[derive(Debug)]
pub struct Futex {
    /// The futex word itself. Callers change it before calling `wake_*`.
    pub word: AtomicU32,
}

impl Futex {
    /// A futex word holding `value`.
    pub const fn new(value: u32) -> Self {
        Futex {
            word: AtomicU32::new(value),
        }
    }

    /// Sleeps while the word equals `expected` (FUTEX_WAIT). May return spuriously.
    #[inline]
    pub fn wait(&self, expected: u32) {
        sim::futex_wait(&self.word, expected);
    }

    /// Wakes one sleeper (FUTEX_WAKE 1).
    #[inline]
    pub fn wake_one(&self) {
        sim::futex_wake(&self.word, 1);
    }

    /// Wakes every sleeper (FUTEX_WAKE INT_MAX).
    #[inline]
    pub fn wake_all(&self) {
        sim::futex_wake(&self.word, u32::MAX);
    }

    /// Sleeps while the word equals `expected`, at most until `deadline` of virtual time:
    /// sleep-polling in slices of at most 10 µs. Returns `true` if the deadline has passed.
    pub fn wait_until_nanos(&self, expected: u32, deadline: u64) -> bool {
        wait_word_until(&self.word, expected, deadline)
    }
}

/// Sleeps while `word` equals `expected` (FUTEX_WAIT on the word's address). May return
/// spuriously.
pub fn wait_word(word: &AtomicU32, expected: u32) {
    sim::futex_wait(word, expected);
}

/// Like [`wait_word`], at most until `deadline` of virtual time (as
/// [`Futex::wait_until_nanos`]); returns `true` if the deadline has passed.
pub fn wait_word_until(word: &AtomicU32, expected: u32, deadline: u64) -> bool {
    let now = clock_nanos();
    if now >= deadline {
        return true;
    }
    let remaining = deadline - now;
    if word.load(Ordering::Relaxed) == expected {
        sim::sleep_micros((remaining / 1000).clamp(1, 10));
    }
    clock_nanos() >= deadline
}

/// Wakes every sleeper of `word` (FUTEX_WAKE INT_MAX). The caller changed the word first.
pub fn wake_all_word(word: &AtomicU32) {
    sim::futex_wake(word, u32::MAX);
}
