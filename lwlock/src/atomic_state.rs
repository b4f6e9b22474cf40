//! The atomic-state LWLock of PostgreSQL 9.5+ (`ab5194e6f6`, "Improve LWLock scalability"), with
//! the wait-list bit of 9.6 and the three waiting states of 16.
//!
//! Mirrors, in `lwlock.c`: `LWLockAttemptLock`, `LWLockWaitListLock`/`LWLockWaitListUnlock`,
//! `LWLockQueueSelf`, `LWLockDequeueSelf`, `LWLockWakeup`, `LWLockAcquire`,
//! `LWLockConditionalAcquire`, `LWLockAcquireOrWait`, `LWLockConflictsWithVar`,
//! `LWLockWaitForVar`, `LWLockUpdateVar`, `LWLockRelease` and `LWLockReleaseClearVar`.
//!
//! # Design
//! One `AtomicU32` holds the lock (shared count or exclusive sentinel), two flags and a spinlock
//! bit for the wait list. Acquiring and releasing a free or shared lock is a single CAS or
//! `fetch_sub`: no spinlock, unlike the classic LWLock. Waiters queue on an intrusive list of
//! per-thread wait records (by record number, so the whole lock is 16 bytes) and sleep on their
//! record's semaphore.
//!
//! * **Queue, then re-check.** A thread that finds the lock busy queues itself (setting
//!   `HAS_WAITERS`), then tries again; if it now gets the lock, it dequeues itself. This closes the
//!   window between its failed attempt and its queueing.
//! * **No handoff.** A release frees the lock and then wakes; woken threads compete again with
//!   newcomers and may re-queue at the tail (the 2002 throughput-over-fairness trade-off).
//! * **Shared lockers barge.** A shared attempt ignores `HAS_WAITERS`, so readers overtake queued
//!   writers (the pathology behind ProcArrayLock's group clear).
//! * **Wake set.** All `WAIT_UNTIL_FREE` waiters at the front; then, if the first other waiter
//!   is exclusive, only it; otherwise every shared waiter on the whole list, exclusive ones staying.
//! * **RELEASE_OK.** After waking a shared/exclusive waiter, further wakeups are inhibited until
//!   one woken thread runs and re-enables them: the thundering herd is one generation. (Beyond
//!   PostgreSQL: under [`Adaptive`] and [`EmptyYield`] for about 50 µs at most, `Policy::WAKE_STALE_NANOS`.)
//!
//! # Files
//! One file per mechanism, each named after the PostgreSQL function it mirrors or the policy it
//! holds:
//!
//! | file | what |
//! |------|------|
//! | `layout.rs` | the state word: bits, states, invariants, orderings, the named state predicates |
//! | `attempt_lock.rs` | `LWLockAttemptLock` |
//! | `wait_list.rs` | `LWLockWaitListLock`/`Unlock`, `LWLockQueueSelf`, `LWLockDequeueSelf` |
//! | `wakeup.rs` | `LWLockWakeup` and the release's wake decision |
//! | `lwlock_acquire.rs` | `LWLockAcquire`'s loop (the faithful mirror), `LWLockConditionalAcquire`, `LWLockAcquireOrWait`, `LWLockRelease`: the [`RawLwLock`](crate::RawLwLock) impl |
//! | `wait_for_var.rs` | `LWLockWaitForVar`, `LWLockUpdateVar`, `LWLockReleaseClearVar` |
//! | `contended.rs` | the drop-in policies' contended path (timed, recursive, upgradable, bounded acquires) |
//! | `handoff.rs` | who takes the `HANDOFF` bit, when and where it queues |
//! | `adaptive_spin.rs` | the spinning policies ([`Adaptive`], [`EmptyYield`]) and their spin |
//! | `upgrade.rs` | upgradable reads, upgrade, downgrade |
//! | `fair_unlock.rs` | fair unlock, bump, the wakes that do not free the lock |
//! | `raw_rwlock.rs` | lock_api's traits, every API line together |
//!
//! Measurements are not kept in these files' comments: they are dated, hold for one host and
//! one version of the code, and live in `docs/results.md`, where a rerun replaces them; a
//! comment names the section that chose a constant.
//!
//! # State
//! The lock word's bits, the table of its states, the invariants and the memory orderings are
//! documented once, with the bits, in [`layout`] (`lwlock::layout`).
//!
//! # Instruction time
//! The `instructions(n)` calls announce the release build's instruction counts between the
//! memory operations of `LWLockAttemptLock` and `LWLockRelease` (exact for the uncontended
//! paths) and, coarsely, of the wait-list paths to the simulator; they compile to nothing outside
//! `--cfg lwsim`. The counts and how they were taken: the design document's simulator section,
//! "Instruction time".

mod adaptive_spin;
mod attempt_lock;
mod contended;
mod fair_unlock;
mod handoff;
pub mod layout;
mod lwlock_acquire;
#[cfg(not(loom))]
mod raw_rwlock;
mod upgrade;
mod wait_for_var;
mod wait_list;
mod wakeup;

pub use adaptive_spin::{Adaptive, EmptyYield};

use crate::proclist::ProcList;
use crate::raw::Mode;
use crate::stats::StatsCounters;
use crate::sync::{AtomicU32, AtomicU8, Ordering, UnsafeCell};
use crate::wait_event::Tranche;
use layout::RELEASE_OK;
#[allow(unused_imports)] // rustdoc links
use layout::{HANDOFF, UPGRADABLE};
use std::marker::PhantomData;

/// How the atomic LWLock treats queued exclusive waiters: a type parameter of [`AtomicLwLock`],
/// so that each policy compiles to its own code (the faithful [`Barging`] instantiation has no
/// trace of the other's checks: they are `if P::HANDOFF` on a constant).
pub trait Policy: Send + Sync + 'static {
    /// Whether exclusive waiters past [`BOUND_NANOS`](Policy::BOUND_NANOS) set [`HANDOFF`].
    const HANDOFF: bool;
    /// How long the first exclusive waiter waits before it takes the handoff.
    const BOUND_NANOS: u64;
    /// Whether a failed plain acquire spins (bounded, adaptive) before it queues
    /// ([`Adaptive`]; `adaptive_spin.rs`). It also turns on the attempt's two departures from
    /// `LWLockAttemptLock` (a newcomer's exclusive CAS from the guessed idle word; no CAS of the
    /// unchanged value when busy). A spinning policy must also have [`HANDOFF`](Policy::HANDOFF):
    /// its writers behind readers take the handoff bit, which only a handoff policy clears
    /// (checked when the lock is built).
    const SPIN: bool = false;
    /// Beyond PostgreSQL: how long a wake pass's throttle holds (ns; 0, PostgreSQL's: until a
    /// woken thread runs). A release that frees the lock with waiters queued while `RELEASE_OK`
    /// is clear wakes the next waiters anyway once the last throttling wake pass is this old:
    /// its woken thread is waiting for a core ([`Adaptive`]; `release_wake`).
    const WAKE_STALE_NANOS: u64 = 0;
    /// Beyond PostgreSQL, for spinning policies: a spinner whose yield came back within this
    /// many ns (an *empty* yield: nothing else was runnable on its CPU, so the holder runs
    /// elsewhere) stops spinning, queues and sleeps ([`EmptyYield`]; `spin_acquire`). 0: off, the
    /// spin runs its rounds.
    const EMPTY_YIELD_NANOS: u64 = 0;
    /// The lock's name in tests, benches and plots.
    const NAME: &'static str;
    /// The type's name in `Debug` output.
    const TYPE_NAME: &'static str;
}

/// PostgreSQL's policy, unchanged: shared lockers barge past queued writers, and a woken waiter
/// competes with newcomers ([`RawAtomicLwLock`]).
#[derive(Debug)]
pub enum Barging {}

/// Bounded writer starvation, in the spirit of Linux rwsem's handoff bit: once the first queued
/// exclusive waiter has waited longer than 250 µs it sets [`HANDOFF`], new shared (and
/// exclusive) acquirers queue behind it, and the release that frees the lock wakes it
/// ([`RawHandoffLwLock`]). Until then, the lock behaves as [`Barging`].
#[derive(Debug)]
pub enum Handoff {}

impl Policy for Barging {
    const HANDOFF: bool = false;
    const BOUND_NANOS: u64 = u64::MAX;
    const NAME: &'static str = "atomic";
    const TYPE_NAME: &'static str = "RawAtomicLwLock";
}

impl Policy for Handoff {
    const HANDOFF: bool = true;
    const BOUND_NANOS: u64 = 250_000;
    const NAME: &'static str = "atomic-handoff";
    const TYPE_NAME: &'static str = "RawHandoffLwLock";
}

/// Task-fair, parking_lot's policy: [`Handoff`] with a bound of zero. An exclusive waiter takes
/// the handoff as it queues (when nobody owns it), in the same wait-list critical section and
/// the same RMW that sets `HAS_WAITERS`, so from the moment a writer is seen waiting no new
/// reader gets in ([`RawTaskFairLwLock`]). Writers queued behind the owner take it in turn.
#[derive(Debug)]
pub enum TaskFair {}

impl Policy for TaskFair {
    const HANDOFF: bool = true;
    const BOUND_NANOS: u64 = 0;
    const NAME: &'static str = "atomic-taskfair";
    const TYPE_NAME: &'static str = "RawTaskFairLwLock";
}

/// The atomic-state LWLock exactly as PostgreSQL 9.5+ has it (shared lockers barge). 16 bytes.
pub type RawAtomicLwLock = AtomicLwLock<Barging>;
/// The atomic-state LWLock with bounded writer starvation ([`Handoff`]; beyond PostgreSQL). 16
/// bytes; the lock under the drop-in `lwlock::RwLock`.
pub type RawHandoffLwLock = AtomicLwLock<Handoff>;
/// The atomic-state LWLock, task-fair ([`TaskFair`]: a queued writer blocks new readers at
/// once; beyond PostgreSQL). 16 bytes.
pub type RawTaskFairLwLock = AtomicLwLock<TaskFair>;
/// The atomic-state LWLock with bounded adaptive spinning before queueing and the [`Handoff`]
/// bound ([`Adaptive`]; beyond PostgreSQL). 16 bytes.
pub type RawAdaptiveLwLock = AtomicLwLock<Adaptive>;
/// [`RawAdaptiveLwLock`] whose spinner stops at an empty yield and sleeps ([`EmptyYield`];
/// beyond PostgreSQL). 16 bytes.
pub type RawEmptyYieldLwLock = AtomicLwLock<EmptyYield>;

/// What an attempt asks for: the two PostgreSQL modes, and the drop-in's two more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Want {
    Shared,
    Exclusive,
    /// A shared unit that never waits behind queued writers or [`HANDOFF`] (`read_recursive`).
    Recursive,
    /// A shared unit plus [`UPGRADABLE`].
    Upgradable,
}

impl Want {
    #[inline(always)]
    fn of(mode: Mode) -> Want {
        match mode {
            Mode::Shared => Want::Shared,
            Mode::Exclusive => Want::Exclusive,
        }
    }
}

/// Outcome of one `LWLockAttemptLock`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Attempt {
    Acquired,
    MustWait,
    /// A shared acquire found [`MAX_SHARED`](layout::MAX_SHARED) holders.
    Overflow,
}

/// The atomic-state LWLock under a [`Policy`]: [`RawAtomicLwLock`] (PostgreSQL's, barging) or
/// [`RawHandoffLwLock`] (bounded writer starvation). 16 bytes (without the `stats` feature).
pub struct AtomicLwLock<P: Policy> {
    /// The lock word; see the module docs for the layout.
    state: AtomicU32,
    /// The tranche id waits are reported under.
    tranche: u16,
    /// When the last throttling wake pass ran (`wake_clock` units; written in the pass under
    /// `LOCKED`, read by releases as a hint: Relaxed both). Only policies with
    /// `WAKE_STALE_NANOS` use it; it lives in the padding, so the lock stays 16 bytes.
    woke_at: AtomicU8,
    /// Wait list; protected by `LOCKED` (invariant 2).
    waiters: UnsafeCell<ProcList>,
    stats: StatsCounters,
    policy: PhantomData<P>,
}

// SAFETY: all shared mutable state is in atomics, or in `waiters`, which is only accessed while
// holding the LOCKED bit of `state` (invariant 2), which serialises those accesses.
unsafe impl<P: Policy> Sync for AtomicLwLock<P> {}
// SAFETY: the lock owns no thread-bound resources; records are reached by number.
unsafe impl<P: Policy> Send for AtomicLwLock<P> {}

impl<P: Policy> std::fmt::Debug for AtomicLwLock<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.state.load(Ordering::Relaxed);
        f.debug_struct(P::TYPE_NAME)
            .field("tranche", &Tranche::from_id(self.tranche).name())
            .field("exclusive", &layout::is_exclusive(s))
            .field("shared", &layout::shared_count(s))
            .field("has_waiters", &layout::has_waiters(s))
            .field("release_ok", &layout::release_ok(s))
            .field("upgradable", &layout::is_upgradable_held(s))
            .field("handoff", &layout::handoff_owned(s))
            .finish()
    }
}

impl<P: Policy> AtomicLwLock<P> {
    /// A policy that spins must have the handoff (see [`Policy::SPIN`]); evaluated when a lock
    /// of the policy is built, so a custom policy that breaks it fails to compile.
    const SPIN_NEEDS_HANDOFF: () = assert!(
        !P::SPIN || P::HANDOFF,
        "a Policy with SPIN must have HANDOFF: its writers behind readers take the handoff bit"
    );

    /// A free lock in the default tranche (`LWLockInitialize`).
    #[cfg(not(loom))]
    pub const fn new() -> Self {
        Self::new_in(Tranche::DEFAULT)
    }

    /// A free lock reporting its waits under `tranche`.
    #[cfg(not(loom))]
    pub const fn new_in(tranche: Tranche) -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::SPIN_NEEDS_HANDOFF;
        AtomicLwLock {
            state: AtomicU32::new(RELEASE_OK),
            tranche: tranche.id(),
            woke_at: AtomicU8::new(0),
            waiters: UnsafeCell::new(ProcList::EMPTY),
            stats: StatsCounters::new(),
            policy: PhantomData,
        }
    }

    /// A free lock in the default tranche.
    #[cfg(loom)]
    #[allow(clippy::new_without_default)] // `Default` exists outside loom only
    pub fn new() -> Self {
        Self::new_in(Tranche::DEFAULT)
    }

    /// A free lock reporting its waits under `tranche`.
    #[cfg(loom)]
    pub fn new_in(tranche: Tranche) -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::SPIN_NEEDS_HANDOFF;
        AtomicLwLock {
            state: AtomicU32::new(RELEASE_OK),
            tranche: tranche.id(),
            woke_at: AtomicU8::new(0),
            waiters: UnsafeCell::new(ProcList::EMPTY),
            stats: StatsCounters::new(),
            policy: PhantomData,
        }
    }

    /// The raw state word (for tests and diagnostics).
    pub fn state(&self) -> u32 {
        self.state.load(Ordering::Relaxed)
    }
}

#[cfg(not(loom))]
impl<P: Policy> Default for AtomicLwLock<P> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::raw::{Mode, RawLwLock};
    use layout::{HAS_WAITERS, LOCK_MASK, MAX_SHARED, SHARED_MASK};

    #[test]
    fn at_most_16_bytes() {
        if cfg!(not(feature = "stats")) {
            assert!(std::mem::size_of::<RawAtomicLwLock>() <= 16);
        }
    }

    #[test]
    fn modes_exclude_each_other() {
        let l = RawAtomicLwLock::new();
        assert!(l.acquire(Mode::Shared));
        assert!(l.conditional_acquire(Mode::Shared));
        assert!(!l.conditional_acquire(Mode::Exclusive));
        assert_eq!(l.state() & SHARED_MASK, 2);
        // SAFETY: held shared twice.
        unsafe {
            l.release(Mode::Shared);
            l.release(Mode::Shared);
        }
        assert!(!RawLwLock::is_locked(&l));
        assert!(l.conditional_acquire(Mode::Exclusive));
        assert!(RawLwLock::is_locked_exclusive(&l));
        assert!(!l.conditional_acquire(Mode::Shared));
        // SAFETY: held exclusively.
        unsafe { l.release(Mode::Exclusive) };
        assert_eq!(l.state(), RELEASE_OK);
    }

    #[test]
    fn shared_overflow_panics_with_message() {
        let l = RawAtomicLwLock::new();
        for _ in 0..MAX_SHARED {
            assert!(l.conditional_acquire(Mode::Shared));
        }
        let err =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| l.acquire(Mode::Shared)))
                .expect_err("one shared holder past the limit must panic");
        let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(msg.contains("too many shared holders"), "{msg}");
        // The lock is intact: still MAX_SHARED holders, nothing queued.
        assert_eq!(l.state() & SHARED_MASK, MAX_SHARED);
        assert_eq!(l.state() & HAS_WAITERS, 0);
    }

    #[test]
    fn writer_waits_for_readers_and_is_woken() {
        // The writer sets HAS_WAITERS as it queues, before its re-check: a release that lands
        // between the two lets the re-check win without a sleep (LWLockAcquire's own race, not
        // a bug). So the scenario is repeated until the writer did sleep; the invariants are
        // checked every time.
        for _ in 0..20 {
            let l = std::sync::Arc::new(RawAtomicLwLock::new_in(Tranche::PROC_ARRAY));
            l.acquire(Mode::Shared);
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
            // Give the writer time to reach its sleep after the re-check.
            std::thread::sleep(std::time::Duration::from_millis(5));
            // SAFETY: held shared.
            unsafe { l.release(Mode::Shared) };
            let fast = t.join().unwrap();
            assert_eq!(l.state() & (HAS_WAITERS | LOCK_MASK), 0);
            if !fast {
                assert_ne!(
                    l.state() & RELEASE_OK,
                    0,
                    "the woken writer re-enabled wakeups"
                );
                return;
            }
        }
        panic!("in 20 tries the writer never had to sleep behind the reader");
    }
}
