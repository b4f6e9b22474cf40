//! What loom and shuttle share: futexes emulated with the checker's `Mutex` + `Condvar`, and
//! time replaced by interleavings (a sleep or a timed wait is a yield), or, for a model that asks
//! for it ([`model_clock_start`]), a manual clock that its threads move.
//!
//! Neither checker has a futex. [`Futex`] keeps the kernel's "compare and sleep atomically with
//! respect to wakers" semantics with one mutex and condvar per futex word, so a lost wakeup is
//! reported as a deadlock rather than a livelock; the address-keyed calls ([`wait_word`]) share
//! one per-execution mutex and condvar.
//!
//! Mirrors the kernel futex contract (FUTEX_WAIT/FUTEX_WAKE) that the semaphores of
//! `posix_sema.c` rest on, and `pg_usleep` as a yield.

#[cfg(loom)]
use loom as checker;
#[cfg(shuttle)]
use shuttle as checker;

use checker::sync::atomic::{AtomicU32, Ordering};
use checker::sync::{Condvar, Mutex};
use checker::thread;

/// A spin-wait hint: a yield to the model's scheduler, so that spin loops are visible to the
/// model (loom's scheduler is deliberately unfair and would otherwise report "exceeded maximum
/// number of branches").
#[inline(always)]
pub fn spin_loop() {
    thread::yield_now();
}

/// Sleep for `micros` microseconds (`pg_usleep`): a yield, since time does not exist under the
/// models, only interleavings.
pub fn sleep_micros(micros: u64) {
    let _ = micros;
    thread::yield_now();
}

/// A 32-bit futex word: `wait` sleeps only while the word still equals `expected`; `wake_*`
/// wake sleepers. Spurious returns from `wait` are allowed, so callers re-check in a loop.
#[derive(Debug)]
pub struct Futex {
    /// The futex word itself. Callers change it before calling `wake_*`.
    pub word: AtomicU32,
    park: (Mutex<()>, Condvar),
}

impl Futex {
    /// A futex word holding `value`.
    #[cfg(loom)]
    pub fn new(value: u32) -> Self {
        Futex {
            word: AtomicU32::new(value),
            park: (Mutex::new(()), Condvar::new()),
        }
    }
    /// A futex word holding `value`.
    #[cfg(shuttle)]
    pub const fn new(value: u32) -> Self {
        Futex {
            word: AtomicU32::new(value),
            park: (Mutex::new(()), Condvar::new()),
        }
    }

    /// Sleeps while the word equals `expected` (FUTEX_WAIT). May return spuriously.
    #[inline]
    pub fn wait(&self, expected: u32) {
        // The kernel compares and enqueues atomically with respect to FUTEX_WAKE; the shim
        // mutex gives the same guarantee: a waker changes the word and then takes the mutex,
        // so a waiter either sees the new value here or is already waiting on the condvar.
        let guard = self.park.0.lock().unwrap();
        if self.word.load(Ordering::SeqCst) == expected {
            drop(self.park.1.wait(guard).unwrap());
        }
    }

    /// Wakes one sleeper (FUTEX_WAKE 1).
    #[inline]
    pub fn wake_one(&self) {
        let _guard = self.park.0.lock().unwrap();
        self.park.1.notify_one();
    }

    /// Wakes every sleeper (FUTEX_WAKE INT_MAX).
    #[inline]
    pub fn wake_all(&self) {
        let _guard = self.park.0.lock().unwrap();
        self.park.1.notify_all();
    }

    /// Sleeps while the word equals `expected`, at most until `deadline`: time does not exist
    /// here, only interleavings, so a yield, then the deadline counts as passed (the earliest a
    /// timeout may fire) unless the word already changed. Returns `true` if the deadline has
    /// passed.
    pub fn wait_until_nanos(&self, expected: u32, deadline: u64) -> bool {
        wait_word_until(&self.word, expected, deadline)
    }
}

/// The one mutex and condvar that every address-keyed wait of an execution sleeps on.
fn word_park() -> &'static (Mutex<()>, Condvar) {
    checker::lazy_static! {
        static ref PARK: (Mutex<()>, Condvar) = (Mutex::new(()), Condvar::new());
    }
    &PARK
}

/// Sleeps while `word` equals `expected` (FUTEX_WAIT on the word's address). May return
/// spuriously; a wake of any word wakes every sleeper, which re-check.
pub fn wait_word(word: &AtomicU32, expected: u32) {
    let park = word_park();
    let guard = park.0.lock().unwrap();
    if word.load(Ordering::SeqCst) == expected {
        drop(park.1.wait(guard).unwrap());
    }
}

/// Like [`wait_word`], at most until `deadline`: a yield and then "passed" unless the word
/// changed (as [`Futex::wait_until_nanos`]). Under a [`model_clock_start`] clock instead: the
/// word is compared first (a changed word returns at once, not passed), then the deadline passes
/// only once the model clock has reached it; before that the call returns early (not passed), as
/// a futex wait may, and the caller waits again.
pub fn wait_word_until(word: &AtomicU32, expected: u32, deadline: u64) -> bool {
    if model_clock()
        .manual
        .load(std::sync::atomic::Ordering::Relaxed)
    {
        if word.load(Ordering::SeqCst) != expected {
            return false;
        }
        thread::yield_now();
        // Acquire: what happened before the clock reached the deadline (a notification before
        // the timeout) is visible to the caller's re-check. A kernel futex wait that times out
        // likewise returns ETIMEDOUT even if the word changed while it slept (when the wake went
        // to another sleeper).
        return model_clock().now.load(Ordering::Acquire) >= deadline;
    }
    let _ = deadline;
    thread::yield_now();
    word.load(Ordering::SeqCst) == expected
}

/// The clock of one model execution's timed waits (see [`model_clock_start`]).
struct ModelClock {
    /// Whether the execution switched to the manual clock (a plain flag, written before the
    /// model spawns its threads; not a checker object, so the default mode adds no operations
    /// for the checker to explore).
    manual: std::sync::atomic::AtomicBool,
    /// The model's "now", on the timeline of the deadlines the model passes (`wait_raw(.., Some(d))`).
    now: checker::sync::atomic::AtomicU64,
}

fn model_clock() -> &'static ModelClock {
    checker::lazy_static! {
        static ref CLOCK: ModelClock = ModelClock {
            manual: std::sync::atomic::AtomicBool::new(false),
            now: checker::sync::atomic::AtomicU64::new(0),
        };
    }
    &CLOCK
}

/// Switches this model execution's timed waits to a manual clock that starts at 0 and moves only
/// by [`advance_model_clock`]: a timed wait then times out only once a thread of the model has
/// moved the clock to its deadline, so a model can order an event before the timeout (by making
/// it happen-before the clock's advance). Without it (every model by default) time does not
/// exist and a deadline counts as passed after one yield. Call it at the start of the execution,
/// before spawning.
pub fn model_clock_start() {
    model_clock()
        .manual
        .store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Moves the manual model clock to `now` (Release: what the caller did before is visible to a
/// timed wait that sees the clock at or past its deadline).
pub fn advance_model_clock(now: u64) {
    model_clock().now.store(now, Ordering::Release);
}

/// Wakes every sleeper of `word` (FUTEX_WAKE INT_MAX). The caller changed the word first.
pub fn wake_all_word(word: &AtomicU32) {
    let _ = word;
    let park = word_park();
    let _guard = park.0.lock().unwrap();
    park.1.notify_all();
}
