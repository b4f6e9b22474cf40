//! The std backend (the default build): the host's atomics and threads, `atomic_wait` futexes,
//! and on Linux `FUTEX_WAIT` with a timeout for the timed waits.
//!
//! Mirrors what PostgreSQL takes from the platform: `pg_atomic_*` (`port/atomics.h`), the
//! semaphore's futex (`posix_sema.c` on a futex-backed `sem_t`), `pg_usleep`.

pub use super::host::{clock_nanos, instructions, touch, UnsafeCell};

pub use std::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, Ordering,
};

/// A blocking mutex of the active backend. Only the wait-record table uses it (registration, once
/// per thread), never a lock's fast or slow path; under the models it must be the checker's, so
/// that registrations are ordered and a thread switch inside one cannot block the real thread.
pub use std::sync::Mutex;

pub use std::thread_local as model_thread_local;

/// Thread spawning and thread-locals of the active backend.
pub mod thread {
    pub use std::thread::{current, spawn, yield_now, JoinHandle};
}

/// A spin-wait hint: PAUSE on x86 (`SPIN_DELAY()` in `s_lock.h`). Under loom and shuttle a
/// yield to the scheduler, so that spin loops are visible to the model; one PAUSE's virtual time
/// under lwsim.
#[inline(always)]
pub fn spin_loop() {
    std::hint::spin_loop();
}

/// Sleep for `micros` microseconds (`pg_usleep`). Under the models this is a yield: time does not
/// exist there, only interleavings.
pub fn sleep_micros(micros: u64) {
    std::thread::sleep(std::time::Duration::from_micros(micros));
}

/// Wait idle for `nanos` (a backend waiting on its socket for its client's next query): a
/// sleep, which on real threads oversleeps by the OS's timer slack.
pub fn idle_nanos(nanos: u64) {
    std::thread::sleep(std::time::Duration::from_nanos(nanos));
}

/// A 32-bit futex word: `wait` sleeps only while the word still equals `expected`; `wake_*`
/// wake sleepers. Spurious returns from `wait` are allowed, so callers re-check in a loop.
///
/// Under loom and shuttle it is emulated on the checker's thread parking, with a list of
/// sleepers per word and no ordering the kernel's futex does not give (`sync/model.rs`); under
/// lwsim its calls go to the simulator's OS model.
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
        atomic_wait::wait(&self.word, expected);
    }

    /// Wakes one sleeper (FUTEX_WAKE 1).
    #[inline]
    pub fn wake_one(&self) {
        atomic_wait::wake_one(&self.word);
    }

    /// Wakes every sleeper (FUTEX_WAKE INT_MAX).
    #[inline]
    pub fn wake_all(&self) {
        atomic_wait::wake_all(&self.word);
    }

    /// Sleeps while the word equals `expected`, at most until `deadline` on the [`clock_nanos`]
    /// timeline (FUTEX_WAIT with a timeout). Returns `true` if the deadline has passed, `false`
    /// if it returned before (woken, the word changed, or spuriously): callers re-check the word
    /// in a loop either way.
    ///
    /// * std on Linux: `FUTEX_WAIT_PRIVATE` with the remaining time as its relative timeout.
    /// * std elsewhere: sleep-polling the word in slices of at most 1 ms (no portable timed
    ///   futex wait exists; a wakeup is seen at the next slice).
    /// * lwsim: sleep-polling in virtual time (slices of at most 10 µs).
    /// * loom/shuttle: time does not exist there, only interleavings: a yield, then the deadline
    ///   counts as passed (the earliest a timeout may fire), unless the word already changed.
    pub fn wait_until_nanos(&self, expected: u32, deadline: u64) -> bool {
        wait_word_until(&self.word, expected, deadline)
    }
}

/// Address-keyed futex calls on any [`AtomicU32`] (a lock's own state word), for waits that have
/// no wait record to sleep on: the atomic LWLock's upgrader waiting for the readers to leave.
///
/// Same contract as [`Futex`]: `wait_word` sleeps only while the word equals `expected`
/// (compare and sleep atomic with respect to [`wake_all_word`]); spurious returns are allowed.
/// Under loom and shuttle a wake unparks the sleepers registered on this word only (the
/// emulation in `sync/model.rs`, keyed by the word's address).
pub fn wait_word(word: &AtomicU32, expected: u32) {
    atomic_wait::wait(word, expected);
}

/// Like [`wait_word`], at most until `deadline` on the [`clock_nanos`] timeline; returns `true`
/// if the deadline has passed (as [`Futex::wait_until_nanos`], whose per-backend behaviour it
/// shares: under loom and shuttle, a yield and then "passed" unless the word changed).
pub fn wait_word_until(word: &AtomicU32, expected: u32, deadline: u64) -> bool {
    let now = clock_nanos();
    if now >= deadline {
        return true;
    }
    let remaining = deadline - now;
    #[cfg(target_os = "linux")]
    {
        let ts = libc::timespec {
            tv_sec: (remaining / 1_000_000_000).min(i32::MAX as u64) as libc::time_t,
            tv_nsec: (remaining % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: FUTEX_WAIT reads the aligned u32 behind the atomic (valid for the call: it
        // is borrowed) and the timespec on our stack; it writes neither. Its result (0,
        // EAGAIN, EINTR, ETIMEDOUT) needs no handling: the caller re-checks.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                expected,
                &ts as *const libc::timespec,
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        if word.load(Ordering::Relaxed) == expected {
            std::thread::sleep(std::time::Duration::from_nanos(remaining.min(1_000_000)));
        }
    }
    clock_nanos() >= deadline
}

/// Wakes every sleeper of `word` (FUTEX_WAKE INT_MAX). The caller changed the word first.
pub fn wake_all_word(word: &AtomicU32) {
    atomic_wait::wake_all(word);
}
