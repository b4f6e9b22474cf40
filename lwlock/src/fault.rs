//! Fault injection for tests (feature `fault-injection`): a lock wrapper that panics at the k-th
//! call of a chosen trait method (or only pauses there, running a test's hook), and a hook that
//! makes this thread's next wait-record registration panic.
//!
//! The trait ([`RawLwLock`]) allows a lock to unwind out of `acquire`, `conditional_acquire` and
//! `acquire_or_wait` holding nothing, and out of `release` after the hold was given up. A group
//! protocol built on the trait must survive either at every step; [`FaultLock`] produces exactly
//! those unwinds, at a chosen call, so that a test can sweep every step of a protocol:
//!
//! * an acquire-like method panics **before** calling the wrapped lock (it holds nothing);
//! * `release` panics **after** the wrapped lock was released (its call is counted when it
//!   begins, so call numbers follow the order in which calls began).
//!
//! The panic payload is an [`InjectedFault`], so a test can tell an injected panic from any other.
//!
//! A *pause* ([`FaultLock::pause_at`]) injects no fault: at the k-th call of a method it runs a
//! test's hook on the calling thread **before** the wrapped call (a release included, so the hook
//! runs while the lock is still held). A test uses it to make another thread reach a given step
//! of a protocol at exactly that point, for example a push that lands while a drainer still holds
//! the lock. A pause and an armed fault are independent: a test may set both.
//!
//! ```
//! use lwlock::fault::{FaultLock, FaultPoint, InjectedFault};
//! use lwlock::{Mode, RawAtomicLwLock, RawLwLock};
//! let lock = FaultLock::new(RawAtomicLwLock::new());
//! lock.arm(FaultPoint::Acquire, 2);
//! lock.acquire(Mode::Shared); // call 1
//! let call2 = std::panic::AssertUnwindSafe(|| lock.acquire(Mode::Shared));
//! let err = std::panic::catch_unwind(call2).unwrap_err();
//! assert_eq!(err.downcast_ref::<InjectedFault>().unwrap().call, 2);
//! // SAFETY: held shared once (the second acquire unwound holding nothing).
//! unsafe { lock.release(Mode::Shared) };
//! assert!(!lock.is_locked());
//! ```
//!
//! The plan's counters are plain `std` atomics even under the model checkers: they are test
//! bookkeeping, not part of the protocol under test, and keeping them out of the model keeps its
//! state small.

use crate::raw::{AcquireOrWait, Mode, RawLwLock};
use crate::stats::LockStats;
use crate::wait_event::Tranche;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

/// A trait method of [`RawLwLock`] where a fault can be injected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultPoint {
    /// [`RawLwLock::acquire`] (and lock_api's `lock_shared`/`lock_exclusive`).
    Acquire,
    /// [`RawLwLock::conditional_acquire`] (and lock_api's `try_lock_*`).
    ConditionalAcquire,
    /// [`RawLwLock::acquire_or_wait`].
    AcquireOrWait,
    /// [`RawLwLock::release`] (and lock_api's `unlock_*`): panics after releasing.
    Release,
}

impl FaultPoint {
    /// Every point, in a fixed order.
    pub const ALL: [FaultPoint; 4] = [
        FaultPoint::Acquire,
        FaultPoint::ConditionalAcquire,
        FaultPoint::AcquireOrWait,
        FaultPoint::Release,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

/// The payload of an injected panic: which method, and which call of it (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InjectedFault {
    /// The method that panicked.
    pub point: FaultPoint,
    /// Its call number on this lock, counting from 1.
    pub call: u64,
}

type Hook = Arc<dyn Fn() + Send + Sync>;

/// A lock of the trait that forwards to `L` and panics at the k-th call of one method.
pub struct FaultLock<L> {
    inner: L,
    /// Calls per [`FaultPoint`] so far.
    calls: [AtomicU64; 4],
    /// `1 + FaultPoint::index` of the armed point, or 0.
    armed: AtomicU8,
    /// The call number that panics.
    at: AtomicU64,
    /// Injected panics so far.
    fired: AtomicU64,
    /// Runs on the panicking thread just before the panic (for tests that need another thread to
    /// reach a given step first).
    hook: Mutex<Option<Hook>>,
    /// `1 + FaultPoint::index` of the paused point, or 0 (checked first, so that an unpaused
    /// lock takes no mutex per call).
    paused: AtomicU8,
    /// The call number that pauses, and the hook it runs.
    pause: Mutex<Option<(u64, Hook)>>,
}

impl<L> std::fmt::Debug for FaultLock<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultLock")
            .field("lock", &std::any::type_name::<L>())
            .field("armed", &self.armed.load(Ordering::Relaxed))
            .field("at", &self.at.load(Ordering::Relaxed))
            .field("fired", &self.fired.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl<L> FaultLock<L> {
    /// Wraps `inner`, disarmed.
    pub const fn new(inner: L) -> Self {
        FaultLock {
            inner,
            calls: [const { AtomicU64::new(0) }; 4],
            armed: AtomicU8::new(0),
            at: AtomicU64::new(0),
            fired: AtomicU64::new(0),
            hook: Mutex::new(None),
            paused: AtomicU8::new(0),
            pause: Mutex::new(None),
        }
    }

    /// The wrapped lock.
    pub fn inner(&self) -> &L {
        &self.inner
    }

    /// Makes call number `k` (counting from 1, including calls already made) of `point` panic.
    pub fn arm(&self, point: FaultPoint, k: u64) {
        self.arm_inner(point, k, None);
    }

    /// As [`arm`](Self::arm), and runs `hook` on the panicking thread just before it panics.
    pub fn arm_with(&self, point: FaultPoint, k: u64, hook: impl Fn() + Send + Sync + 'static) {
        self.arm_inner(point, k, Some(Arc::new(hook)));
    }

    fn arm_inner(&self, point: FaultPoint, k: u64, hook: Option<Hook>) {
        self.disarm();
        *self.hook.lock().unwrap_or_else(|e| e.into_inner()) = hook;
        self.at.store(k, Ordering::SeqCst);
        self.armed.store(point.index() as u8 + 1, Ordering::SeqCst);
    }

    /// Runs `hook` on the calling thread at call number `k` (counting from 1, including calls
    /// already made) of `point`, before the wrapped lock is called (for `release`: while the lock
    /// is still held), and goes on normally: no panic. Once; a later `pause_at` replaces it.
    pub fn pause_at(&self, point: FaultPoint, k: u64, hook: impl Fn() + Send + Sync + 'static) {
        *self.pause.lock().unwrap_or_else(|e| e.into_inner()) = Some((k, Arc::new(hook)));
        self.paused.store(point.index() as u8 + 1, Ordering::SeqCst);
    }

    /// No more faults.
    pub fn disarm(&self) {
        self.armed.store(0, Ordering::SeqCst);
    }

    /// Calls of `point` so far.
    pub fn calls(&self, point: FaultPoint) -> u64 {
        self.calls[point.index()].load(Ordering::SeqCst)
    }

    /// Injected panics so far.
    pub fn fired(&self) -> u64 {
        self.fired.load(Ordering::SeqCst)
    }

    /// Counts a call of `point` and panics if it is the armed one.
    #[track_caller]
    fn check(&self, point: FaultPoint) {
        if let Some(call) = self.count(point) {
            self.fire(point, call);
        }
    }

    /// Counts a call of `point`; `Some(call number)` if it is the armed one. Releases are
    /// counted *before* the wrapped release (and fire after it), so that call numbers follow
    /// the order in which the calls began, not the order in which wrapped releases returned.
    fn count(&self, point: FaultPoint) -> Option<u64> {
        let call = self.calls[point.index()].fetch_add(1, Ordering::SeqCst) + 1;
        self.pause_if_due(point, call);
        (self.armed.load(Ordering::SeqCst) == point.index() as u8 + 1
            && call == self.at.load(Ordering::SeqCst))
        .then_some(call)
    }

    /// Runs the pause's hook if call `call` of `point` is the paused one (then the pause is
    /// spent). The hook runs outside the pause's mutex: it may block on other threads' calls.
    fn pause_if_due(&self, point: FaultPoint, call: u64) {
        if self.paused.load(Ordering::SeqCst) != point.index() as u8 + 1 {
            return;
        }
        let hook = {
            let mut pause = self.pause.lock().unwrap_or_else(|e| e.into_inner());
            match pause.as_ref() {
                Some((at, _)) if *at == call => {
                    self.paused.store(0, Ordering::SeqCst);
                    pause.take().map(|(_, hook)| hook)
                }
                _ => None,
            }
        };
        if let Some(hook) = hook {
            hook();
        }
    }

    /// Runs the hook, counts the fault and panics with its payload.
    #[track_caller]
    fn fire(&self, point: FaultPoint, call: u64) {
        let hook = self.hook.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(hook) = hook {
            hook();
        }
        // Counted after the hook: a test that waits for `fired` also waits for the hook.
        self.fired.fetch_add(1, Ordering::SeqCst);
        std::panic::panic_any(InjectedFault { point, call });
    }
}

// SAFETY: forwards every method to `L`, whose contract it inherits; an injected panic in an
// acquire-like method happens before `L` is called (nothing is held), and in `release` after `L`
// released (the trait's rule for an unwinding release); `conditional_acquire` adds no blocking.
unsafe impl<L: RawLwLock> RawLwLock for FaultLock<L> {
    const NAME: &'static str = "fault-injected";
    const INSTRUCTIONS_ANNOUNCED: bool = L::INSTRUCTIONS_ANNOUNCED;

    fn with_tranche(tranche: Tranche) -> Self {
        FaultLock::new(L::with_tranche(tranche))
    }

    fn acquire(&self, mode: Mode) -> bool {
        self.check(FaultPoint::Acquire);
        self.inner.acquire(mode)
    }

    fn conditional_acquire(&self, mode: Mode) -> bool {
        self.check(FaultPoint::ConditionalAcquire);
        self.inner.conditional_acquire(mode)
    }

    fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait {
        self.check(FaultPoint::AcquireOrWait);
        self.inner.acquire_or_wait(mode)
    }

    unsafe fn release(&self, mode: Mode) {
        let fire = self.count(FaultPoint::Release);
        // SAFETY: forwarded caller contract.
        unsafe { self.inner.release(mode) };
        if let Some(call) = fire {
            self.fire(FaultPoint::Release, call);
        }
    }

    fn is_locked(&self) -> bool {
        self.inner.is_locked()
    }

    fn is_locked_exclusive(&self) -> bool {
        self.inner.is_locked_exclusive()
    }

    fn tranche(&self) -> Tranche {
        self.inner.tranche()
    }

    fn stats(&self) -> Option<LockStats> {
        self.inner.stats()
    }
}

#[cfg(not(loom))]
// SAFETY: forwards to `L`'s lock_api implementation, with the same fault rule as above (acquire-
// like methods panic before, unlocks after the wrapped call).
unsafe impl<L: lock_api::RawRwLock> lock_api::RawRwLock for FaultLock<L> {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = FaultLock::new(L::INIT);
    type GuardMarker = L::GuardMarker;

    fn lock_shared(&self) {
        self.check(FaultPoint::Acquire);
        self.inner.lock_shared()
    }
    fn try_lock_shared(&self) -> bool {
        self.check(FaultPoint::ConditionalAcquire);
        self.inner.try_lock_shared()
    }
    unsafe fn unlock_shared(&self) {
        let fire = self.count(FaultPoint::Release);
        // SAFETY: lock_api's contract: held shared.
        unsafe { self.inner.unlock_shared() };
        if let Some(call) = fire {
            self.fire(FaultPoint::Release, call);
        }
    }
    fn lock_exclusive(&self) {
        self.check(FaultPoint::Acquire);
        self.inner.lock_exclusive()
    }
    fn try_lock_exclusive(&self) -> bool {
        self.check(FaultPoint::ConditionalAcquire);
        self.inner.try_lock_exclusive()
    }
    unsafe fn unlock_exclusive(&self) {
        let fire = self.count(FaultPoint::Release);
        // SAFETY: lock_api's contract: held exclusively.
        unsafe { self.inner.unlock_exclusive() };
        if let Some(call) = fire {
            self.fire(FaultPoint::Release, call);
        }
    }
    fn is_locked(&self) -> bool {
        self.inner.is_locked()
    }
    fn is_locked_exclusive(&self) -> bool {
        self.inner.is_locked_exclusive()
    }
}

/// Installs a panic hook that prints nothing for [`InjectedFault`] panics and defers to the
/// previous hook for every other panic (a sweep injects thousands). Idempotent.
pub fn quiet_injected_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<InjectedFault>().is_none() {
                previous(info);
            }
        }));
    });
}

/// Makes the calling thread's next wait-record registration (its first use of a record, see
/// [`crate::Proc::current`]) panic with an [`InjectedFault`]-free message, once. (The hook lives
/// with the registration path, in `proc`.)
pub use crate::proc::fail_next_registration;
