//! The futex outside a simulation: the simulated atomics are std's there, and a futex wait or
//! wake made on real threads (a program's set-up before [`crate::run()`], or a lock used outside
//! one) must still be a futex. Emulated with std only: one process-wide mutex and condition
//! variable, with the kernel's contract (`FUTEX_WAIT` compares and sleeps atomically with respect
//! to `FUTEX_WAKE`, spurious returns allowed). This emulation orders more than a kernel futex
//! does (its compare is a SeqCst load under the mutex, and every wake is an edge to every
//! sleeper); that is harmless here, where it only serves set-up code outside a simulation. The
//! model checkers' backends (lwlock's `sync/model.rs`) emulate the futex differently, giving
//! only the ordering a kernel futex gives.
//!
//! A waiter compares the word while holding the mutex and sleeps by releasing it atomically; a
//! waker changed the word before its wake and takes the mutex to notify, so it either runs before
//! the waiter's compare (which then sees the new value) or finds the waiter asleep. A wake
//! notifies every sleeper of every word: they re-check their words (as a futex's callers do after
//! any return), which costs only host time outside the simulation.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

static PARK: Mutex<()> = Mutex::new(());
static WOKEN: Condvar = Condvar::new();

/// `FUTEX_WAIT` on real threads: returns at once unless `word == expected`, else after a wake
/// (or spuriously).
pub(crate) fn wait(word: &AtomicU32, expected: u32) {
    let guard = PARK.lock().unwrap_or_else(PoisonError::into_inner);
    if word.load(Ordering::SeqCst) != expected {
        return;
    }
    drop(WOKEN.wait(guard).unwrap_or_else(PoisonError::into_inner));
}

/// `FUTEX_WAKE` on real threads: wakes the sleepers (all of them; `n` is an upper bound a futex
/// may exceed only by spurious returns, which its callers tolerate).
pub(crate) fn wake(_word: &AtomicU32, _n: u32) {
    let _guard = PARK.lock().unwrap_or_else(PoisonError::into_inner);
    WOKEN.notify_all();
}
