//! The simulated machine's blocking mutex: the three-state futex mutex of Drepper's "Futexes Are
//! Tricky" (glibc's `lll_lock` / `__lll_lock_wait`) on a simulated atomic and the simulated futex.

use crate::atomic;
use crate::os::{futex_wait, futex_wake};

/// The blocking mutex of the simulated machine (`lwlock::sync::Mutex` under `--cfg lwsim`): a
/// futex mutex (Drepper's three-state algorithm) on a simulated atomic, so that its waits go
/// through the simulated futex and its cost through the coherence model. (A mutex of the
/// executor's would block tasks where the scheduler cannot see it and let the unblocker run ahead
/// of them.)
///
/// State: `0` free, `1` held without waiters, `2` held with (possible) sleepers.
#[derive(Debug, Default)]
pub struct Mutex<T: ?Sized> {
    state: atomic::AtomicU32,
    data: std::cell::UnsafeCell<T>,
}

// SAFETY: the mutex hands out `&mut T` to one guard at a time (the state word's Acquire/Release
// transitions order the accesses), so sharing it needs only `T: Send`, as for std's.
unsafe impl<T: ?Sized + Send> Sync for Mutex<T> {}
// SAFETY: owning the mutex owns the value.
unsafe impl<T: ?Sized + Send> Send for Mutex<T> {}

/// The guard of a held [`Mutex`].
#[derive(Debug)]
pub struct MutexGuard<'a, T: ?Sized> {
    mutex: &'a Mutex<T>,
}

impl<T> Mutex<T> {
    /// A free mutex holding `value`.
    pub const fn new(value: T) -> Self {
        Mutex {
            state: atomic::AtomicU32::new(0),
            data: std::cell::UnsafeCell::new(value),
        }
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Takes the mutex, sleeping on its futex while it is held. Never poisoned (the `Result`
    /// mirrors std's signature).
    pub fn lock(&self) -> std::sync::LockResult<MutexGuard<'_, T>> {
        use std::sync::atomic::Ordering::{Acquire, Relaxed};
        if self.state.compare_exchange(0, 1, Acquire, Relaxed).is_err() {
            while self.state.swap(2, Acquire) != 0 {
                futex_wait(&self.state, 2);
            }
        }
        Ok(MutexGuard { mutex: self })
    }
}

impl<T: ?Sized> std::ops::Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the mutex: no other reference to the value exists.
        unsafe { &*self.mutex.data.get() }
    }
}

impl<T: ?Sized> std::ops::DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the mutex, and `&mut self` makes this the only access.
        unsafe { &mut *self.mutex.data.get() }
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        if self
            .mutex
            .state
            .swap(0, std::sync::atomic::Ordering::Release)
            == 2
        {
            futex_wake(&self.mutex.state, 1);
        }
    }
}
