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
mod dropin;
pub mod layout;

pub use adaptive_spin::{Adaptive, EmptyYield};

use crate::elog::CritSection;
use crate::proc::{lw_mode, lw_waiting, Proc};
use crate::proclist::ProcList;
use crate::raw::{AcquireOrWait, Mode, RawLwLock, RawLwLockVar, VarWait};
use crate::s_lock::{SpinDelay, SpinDelayConfig};
use crate::stats::{LockStats, Stat, StatsCounters};
use crate::sync::{instructions, AtomicU32, AtomicU64, AtomicU8, Ordering, UnsafeCell};
use crate::wait_event::{Tranche, WaitEvent};
use layout::{
    HANDOFF, HAS_WAITERS, LOCKED, LOCK_MASK, MAX_SHARED, RELEASE_OK, SHARED_MASK, UPGRADABLE,
    VAL_EXCLUSIVE, VAL_SHARED,
};
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
    /// A shared acquire found [`MAX_SHARED`] holders.
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
            .field("exclusive", &(s & VAL_EXCLUSIVE != 0))
            .field("shared", &(s & SHARED_MASK))
            .field("has_waiters", &(s & HAS_WAITERS != 0))
            .field("release_ok", &(s & RELEASE_OK != 0))
            .field("upgradable", &(s & UPGRADABLE != 0))
            .field("handoff", &(s & HANDOFF != 0))
            .finish()
    }
}

/// The stale-wake rule's clock unit: 2^13 ns (8.192 µs); a `u8` of them wraps after 2.1 ms.
const WAKE_CLOCK_SHIFT: u32 = 13;

/// The stale-wake rule's clock (see `release_wake`), or `None` under the model checkers, whose
/// executions must not branch on real time: they keep PostgreSQL's throttle. Under lwsim the
/// clock is virtual time.
#[cfg(not(any(loom, shuttle)))]
fn wake_clock() -> Option<u8> {
    Some((crate::sync::clock_nanos() >> WAKE_CLOCK_SHIFT) as u8)
}

#[cfg(any(loom, shuttle))]
fn wake_clock() -> Option<u8> {
    None
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

    /// `LWLockAttemptLock`: one CAS loop. The CAS is done even when the lock is busy (storing the
    /// unchanged value), as PostgreSQL does, except under the spinning policies ([`Adaptive`],
    /// [`EmptyYield`]: no load before a newcomer's exclusive CAS, no CAS when busy; see
    /// `attempt_from`).
    #[inline(always)]
    fn attempt_lock(&self, mode: Mode) -> Attempt {
        // The spinning policy (the drop-in types') guesses that an exclusive newcomer finds the
        // lock idle (only RELEASE_OK set) and tries its CAS without a load first, as
        // parking_lot's `lock` does: one RMW when the guess holds; when it fails, the failed CAS
        // returned the word and the attempt goes on from there. Only here, on a newcomer's first
        // attempt: a spinner or a queued waiter has read the word already. PostgreSQL's
        // policies load first. The trade-off (a faster uncontended pair against a failed guess
        // taking a held lock's line exclusive on many cores) is measured in design, "The
        // adaptive policy".
        if P::SPIN && mode == Mode::Exclusive {
            return self.attempt_from(Want::Exclusive, false, RELEASE_OK);
        }
        self.attempt(Want::of(mode), false)
    }

    /// `LWLockAttemptLock` for any [`Want`]. Under [`Barging`] and for the two PostgreSQL modes
    /// this is PostgreSQL's test (`handoff` is the constant 0). `token`: the caller owns
    /// [`HANDOFF`] (exclusive only), may ignore it and clears it with the same CAS.
    #[inline(always)]
    fn attempt(&self, want: Want, token: bool) -> Attempt {
        self.attempt_from(want, token, self.state.load(Ordering::Relaxed))
    }

    /// [`attempt`](Self::attempt) from a value of the word the caller read (or guessed: see
    /// `attempt_lock`).
    #[inline(always)]
    fn attempt_from(&self, want: Want, token: bool, mut old: u32) -> Attempt {
        // Mutant `handoff_shared_barges` (models only): shared newcomers ignore HANDOFF.
        let handoff = if P::HANDOFF && !token { HANDOFF } else { 0 };
        let shared_handoff = if crate::mutant!("handoff_shared_barges") {
            0
        } else {
            handoff
        };
        loop {
            let (free, new) = match want {
                Want::Exclusive => {
                    let free = old & (LOCK_MASK | handoff) == 0;
                    let clear = if P::HANDOFF && token { HANDOFF } else { 0 };
                    (
                        free,
                        if free {
                            (old + VAL_EXCLUSIVE) & !clear
                        } else {
                            old
                        },
                    )
                }
                Want::Shared | Want::Recursive | Want::Upgradable => {
                    let busy = match want {
                        Want::Shared => VAL_EXCLUSIVE | shared_handoff,
                        Want::Upgradable => VAL_EXCLUSIVE | UPGRADABLE | shared_handoff,
                        // Only an exclusive *holder* excludes a recursive reader: not HANDOFF,
                        // not an upgrader waiting for readers (the count is above zero then).
                        _ if old & SHARED_MASK != 0 => 0,
                        _ => VAL_EXCLUSIVE,
                    };
                    let free = old & busy == 0;
                    if free && old & SHARED_MASK == MAX_SHARED {
                        return Attempt::Overflow;
                    }
                    let add = if want == Want::Upgradable {
                        VAL_SHARED | UPGRADABLE
                    } else {
                        VAL_SHARED
                    };
                    (free, if free { old + add } else { old })
                }
            };
            // The spinning policy does not write a word it cannot take: `old` was read from the
            // word (a load or a failed CAS; the guess of `attempt_lock` is always "free"), and
            // the caller's re-check after queueing reads the word after its own HAS_WAITERS RMW,
            // which coherence orders as that RMW does (layout.rs, "Memory orderings").
            // PostgreSQL's policies keep `LWLockAttemptLock`'s CAS of the unchanged value.
            if P::SPIN && !free {
                instructions(2); // coarse: the test's branch and the return
                return Attempt::MustWait;
            }
            // The tests and the new value between the load (or a failed CAS) and the CAS (coarse:
            // after `attempt_lock`'s guess the test folds to a constant).
            instructions(if want == Want::Exclusive { 5 } else { 8 });
            // Acquire on success: the critical section (if `free`) starts after this CAS.
            match self
                .state
                .compare_exchange_weak(old, new, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) if free => {
                    instructions(3); // the CAS's test, the result and the return
                    return Attempt::Acquired;
                }
                Ok(_) => return Attempt::MustWait,
                Err(now) => old = now,
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn shared_overflow(&self) -> ! {
        panic!(
            "too many shared holders of LWLock {:?} (limit {MAX_SHARED})",
            Tranche::from_id(self.tranche).name()
        )
    }

    /// `LWLockWaitListLock`: sets `LOCKED`, spinning with backoff while someone else holds it.
    #[inline]
    fn wait_list_lock(&self) {
        // Acquire: the wait list written by the previous holder is visible (invariant 2).
        if self.state.fetch_or(LOCKED, Ordering::Acquire) & LOCKED == 0 {
            return;
        }
        self.wait_list_lock_slow();
    }

    #[cold]
    fn wait_list_lock_slow(&self) {
        instructions(20); // coarse: the call and `init_local_spin_delay`
        loop {
            let mut delay =
                SpinDelay::new(Tranche::from_id(self.tranche), &SpinDelayConfig::POSTGRES);
            // Read-only spinning until the bit looks clear.
            while self.state.load(Ordering::Relaxed) & LOCKED != 0 {
                instructions(5); // per failed probe, besides its PAUSE (as `s_lock`'s)
                delay.perform();
            }
            self.stats.bump(Stat::SpinDelay, delay.finish() as u64);
            if self.state.fetch_or(LOCKED, Ordering::Acquire) & LOCKED == 0 {
                return;
            }
        }
    }

    /// `LWLockWaitListUnlock`.
    #[inline]
    fn wait_list_unlock(&self) {
        // Release: our wait-list writes are visible to the next holder (invariant 2).
        let old = self.state.fetch_and(!LOCKED, Ordering::Release);
        debug_assert!(old & LOCKED != 0, "wait list unlocked but not locked");
        // Spinners of the bit may probe again (a no-op outside loom).
        crate::sync::spin_released();
    }

    /// Runs `f` on the wait list.
    ///
    /// # Safety
    /// The caller must hold `LOCKED` (invariant 2).
    #[inline]
    unsafe fn with_waiters<R>(&self, f: impl FnOnce(&mut ProcList) -> R) -> R {
        // SAFETY: LOCKED is held (caller's contract), so no other thread accesses the list; the
        // Acquire that took LOCKED ordered us after the previous holder's writes.
        self.waiters.with_mut(|l| f(unsafe { &mut *l }))
    }

    /// `LWLockQueueSelf`: puts `me` on the wait list in `mode` (one of [`lw_mode`]).
    fn queue_self(&self, me: &Proc, mode: u8) {
        self.queue_self_at(me, mode, false)
    }

    /// `LWLockQueueSelf`; `front`: behind the leading WAIT_UNTIL_FREE run instead of at the tail
    /// (the [`HANDOFF`] owner re-queueing, invariant 7; never under [`Barging`]).
    fn queue_self_at(&self, me: &Proc, mode: u8, front: bool) {
        assert_eq!(
            me.lw_waiting.load(Ordering::Relaxed),
            lw_waiting::NOT_WAITING,
            "queueing for an LWLock while already waiting"
        );
        instructions(10); // coarse: the assertion and the call
        self.wait_list_lock();
        // Relaxed: see "No lost wakeup" in the module docs; only the word's modification order
        // matters, and this RMW precedes our re-check CAS on the same word.
        // Mutant `atomic_no_has_waiters` (models only): queue without telling releasers.
        if !crate::mutant!("atomic_no_has_waiters") {
            self.state.fetch_or(HAS_WAITERS, Ordering::Relaxed);
        }
        me.lw_waiting.store(lw_waiting::WAITING, Ordering::Relaxed);
        me.lw_mode.store(mode, Ordering::Relaxed);
        // SAFETY: LOCKED is held.
        unsafe {
            self.with_waiters(|l| {
                if mode == lw_mode::WAIT_UNTIL_FREE {
                    l.push_head(me)
                } else if P::HANDOFF && front {
                    l.push_after_wait_until_free(me)
                } else {
                    l.push_tail(me)
                }
            })
        };
        instructions(20); // coarse: the list insertion
        self.wait_list_unlock();
    }

    /// `LWLockDequeueSelf`: after queueing, the re-check got the lock (or no longer needs to wait).
    /// Returns whether a fair unlock had meanwhile handed us the lock as well (invariant 8: then
    /// we hold one more shared unit, which the caller gives back; never under PostgreSQL's own
    /// operations, which grant nothing).
    fn dequeue_self(&self, me: &Proc) -> bool {
        self.stats.bump(Stat::DequeueSelf, 1);
        instructions(10); // coarse: the call
        self.wait_list_lock();
        // Under LOCKED, a waker that detached us already set PENDING_WAKEUP (invariant 5): O(1).
        let on_list = me.lw_waiting.load(Ordering::Relaxed) == lw_waiting::WAITING;
        // SAFETY: LOCKED is held.
        let empty = unsafe {
            self.with_waiters(|l| {
                if on_list {
                    l.delete(me);
                }
                l.is_empty()
            })
        };
        instructions(25); // coarse: the list deletion and the emptiness test
        if empty && self.state.load(Ordering::Relaxed) & HAS_WAITERS != 0 {
            self.state.fetch_and(!HAS_WAITERS, Ordering::Relaxed);
        }
        self.wait_list_unlock();
        if on_list {
            me.lw_waiting
                .store(lw_waiting::NOT_WAITING, Ordering::Relaxed);
            false
        } else {
            // A waker detached us and inhibited wakeups on our behalf: re-enable them, then
            // absorb its post (and any foreign ones, re-posted afterwards).
            self.state.fetch_or(RELEASE_OK, Ordering::Relaxed);
            let extra = Self::sleep_until_woken(me, WaitEvent::NONE);
            me.repost(extra);
            take_granted(me)
        }
    }

    /// Sleeps until a waker sets our `lw_waiting` to NOT_WAITING; returns the absorbed foreign
    /// wakeups, which the caller re-posts when it is done sleeping.
    fn sleep_until_woken(me: &Proc, event: WaitEvent) -> u32 {
        // Acquire: pairs with the waker's Release store after unlinking us (invariant 5).
        me.sleep_absorbing(event, || {
            me.lw_waiting.load(Ordering::Acquire) == lw_waiting::NOT_WAITING
        })
    }

    /// `LWLockWakeup`: detaches the wake set (see module docs) and wakes it outside the list lock.
    #[cold]
    fn wakeup(&self) {
        let mut wake = ProcList::EMPTY;
        let mut release_ok = true;
        instructions(11); // the prologue, up to the wait-list bit's RMW
        self.wait_list_lock();
        // SAFETY: LOCKED is held.
        let empty = unsafe {
            self.with_waiters(|l| {
                let mut woke_nonfree = false;
                let mut cur = l.first();
                while let Some(w) = cur {
                    instructions(40); // coarse, per scanned waiter: the list calls and tests
                    cur = ProcList::next_of(w);
                    let mode = w.lw_mode.load(Ordering::Relaxed);
                    if woke_nonfree && mode == lw_mode::EXCLUSIVE {
                        continue; // later writers stay queued behind the woken shared run
                    }
                    l.delete(w);
                    wake.push_tail(w);
                    if mode != lw_mode::WAIT_UNTIL_FREE {
                        release_ok = false;
                        woke_nonfree = true;
                    }
                    w.lw_waiting
                        .store(lw_waiting::PENDING_WAKEUP, Ordering::Relaxed);
                    if mode == lw_mode::EXCLUSIVE {
                        break; // a writer is woken alone
                    }
                }
                l.is_empty()
            })
        };
        if P::WAKE_STALE_NANOS != 0 && !release_ok {
            if let Some(now) = wake_clock() {
                // Relaxed: a hint for releases (a stale read costs one early or late pass).
                self.woke_at.store(now, Ordering::Relaxed);
            }
        }
        // One CAS updates the flags and releases LOCKED, so no queuer slips in between.
        instructions(10); // the flags' new value
        let mut old = self.state.load(Ordering::Relaxed);
        loop {
            debug_assert!(old & LOCKED != 0);
            let mut new = old & !LOCKED;
            if release_ok {
                new |= RELEASE_OK;
            } else {
                new &= !RELEASE_OK;
            }
            if empty {
                new &= !HAS_WAITERS; // the *wait list* is empty (81f7738953)
            }
            // Release: our list writes are visible to the next LOCKED holder.
            match self
                .state
                .compare_exchange_weak(old, new, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => break,
                Err(now) => old = now,
            }
        }
        // Spinners of the bit may probe again (a no-op outside loom).
        crate::sync::spin_released();
        Self::wake_all(&mut wake);
    }

    /// What a release does after its `fetch_sub` when [`HAS_WAITERS`], an upgrader's `EXCLUSIVE`
    /// or [`HANDOFF`] is in the new value. For a word with neither of the latter two (always,
    /// under PostgreSQL's own operations) it is `LWLockRelease`'s test: wake only when the lock
    /// became free, someone waits and wakeups are not inhibited.
    ///
    /// Beyond PostgreSQL (policies with `WAKE_STALE_NANOS`, [`Adaptive`], [`EmptyYield`]): when wakeups are
    /// inhibited but the throttling pass is older than the bound, its woken thread has not run
    /// yet: it waits for a core (an oversubscribed machine). The release then runs a wake pass
    /// all the same. Without this the cores idle with the lock free while everyone else sleeps
    /// on the list (64 threads on 2 cores: 65-71 % busy); without the throttle at all, wake
    /// passes on every release collapse the lock on many cores (results: the drop-in defaults).
    /// The pass is the one a release with `RELEASE_OK` set runs; under the model checkers (no
    /// real time) this branch is never taken.
    #[inline]
    fn release_wake(&self, new: u32) {
        if new & (HAS_WAITERS | RELEASE_OK | LOCK_MASK) == HAS_WAITERS | RELEASE_OK {
            self.wakeup();
        } else if new & (VAL_EXCLUSIVE | HANDOFF) != 0 {
            self.release_ext(new);
        } else if P::WAKE_STALE_NANOS != 0
            && new & (HAS_WAITERS | LOCK_MASK) == HAS_WAITERS
            && self.wake_stale()
        {
            self.wakeup();
        }
    }

    /// Whether the last throttling wake pass is `WAKE_STALE_NANOS` old, in whole clock units
    /// (50 µs: 6 units, so it fires between about 41 and 49 µs after the pass), modulo the
    /// clock's wrap (a pass a multiple of 2.1 ms old looks fresh for at most the bound).
    #[cold]
    fn wake_stale(&self) -> bool {
        const {
            assert!(
                P::WAKE_STALE_NANOS == 0
                    || (P::WAKE_STALE_NANOS >> WAKE_CLOCK_SHIFT >= 1
                        && P::WAKE_STALE_NANOS >> WAKE_CLOCK_SHIFT <= 255),
                "WAKE_STALE_NANOS must be 0 (off) or 1 to 255 clock units (8.2 us to 2.09 ms)"
            )
        };
        let Some(now) = wake_clock() else {
            return false;
        };
        let bound = (P::WAKE_STALE_NANOS >> WAKE_CLOCK_SHIFT) as u8;
        // Relaxed: a hint (see `woke_at`).
        now.wrapping_sub(self.woke_at.load(Ordering::Relaxed)) >= bound
    }

    /// Wakes every record of a detached list: last link access, then NOT_WAITING, then post.
    fn wake_all(wake: &mut ProcList) {
        // The detached records are reachable only from `wake`: an unwind would strand them.
        let crit = CritSection::start("atomic LWLock: waking detached waiters");
        // Mutant `wake_before_unlink` (models only): NOT_WAITING and the post come before the
        // unlink, so a woken waiter may queue again before the waker's last access to its links.
        while crate::mutant!("wake_before_unlink") {
            let Some(w) = wake.first() else { break };
            w.lw_waiting
                .store(lw_waiting::NOT_WAITING, Ordering::Release);
            w.sem.unlock();
            wake.pop_head();
        }
        while let Some(w) = wake.pop_head() {
            // Coarse, per woken waiter: the pop and the post's setup.
            instructions(15);
            // Release: the unlink (done by pop_head just now) is visible before the waiter can
            // see NOT_WAITING and queue itself elsewhere.
            // Mutant `wake_relaxed_not_waiting` (models only): a waiter that wakes on a foreign
            // post and sees NOT_WAITING is not ordered after the waker.
            let order = if crate::mutant!("wake_relaxed_not_waiting") {
                Ordering::Relaxed
            } else {
                Ordering::Release
            };
            w.lw_waiting.store(lw_waiting::NOT_WAITING, order);
            w.sem.unlock();
        }
        crit.end();
    }

    #[cold]
    fn acquire_slow(&self, mode: Mode) -> bool {
        instructions(20); // coarse: the call, the prologue and the wait record
        let me = Proc::current();
        let wait_mode = if mode == Mode::Exclusive {
            lw_mode::EXCLUSIVE
        } else {
            lw_mode::SHARED
        };
        let mut slept = false;
        let mut extra = 0;
        loop {
            // Phase 2: queue; phase 3: re-check. From the queueing until we are off the list
            // nothing may unwind: our record would stay linked (`LWLockDequeueSelf` never ran).
            let crit = CritSection::start("atomic LWLock: queued on the wait list");
            self.queue_self(me, wait_mode);
            // Mutant `atomic_no_recheck` (models only): sleep without re-checking after queueing.
            let recheck = if crate::mutant!("atomic_no_recheck") {
                Attempt::MustWait
            } else {
                self.attempt_lock(mode)
            };
            match recheck {
                Attempt::Acquired => {
                    if self.dequeue_self(me) {
                        // SAFETY: a fair unlock granted us a second shared unit (invariant 8).
                        unsafe { self.release(Mode::Shared) };
                    }
                    crit.end();
                    break;
                }
                Attempt::Overflow => {
                    if self.dequeue_self(me) {
                        // SAFETY: as above; the grant is the only unit we hold.
                        unsafe { self.release(Mode::Shared) };
                    }
                    crit.end();
                    me.repost(extra);
                    self.shared_overflow();
                }
                Attempt::MustWait => {}
            }
            // Phase 4: sleep until woken, then compete again (no handoff).
            instructions(12); // coarse: the wait event and the sleep loop's setup
            self.stats.bump(Stat::Block, 1);
            extra += Self::sleep_until_woken(me, WaitEvent::lwlock(Tranche::from_id(self.tranche)));
            crit.end();
            // A fair unlock handed us the lock (invariant 8; never under PostgreSQL's own
            // operations): we hold it.
            if take_granted(me) {
                slept = true;
                break;
            }
            // We ran: wakeups may happen again.
            // Mutant `atomic_no_release_ok_reset` (models only): never re-enable wakeups.
            if !crate::mutant!("atomic_no_release_ok_reset") {
                self.state.fetch_or(RELEASE_OK, Ordering::Relaxed);
            }
            slept = true;
            match self.attempt_lock(mode) {
                Attempt::Acquired => break,
                Attempt::Overflow => {
                    me.repost(extra);
                    self.shared_overflow()
                }
                Attempt::MustWait => {}
            }
        }
        me.repost(extra);
        !slept
    }

    /// `LWLockConflictsWithVar`: `Some(outcome)` if no need to wait, `None` if we must.
    fn conflicts_with_var(&self, var: &AtomicU64, oldval: u64) -> Option<VarWait> {
        // Acquire: a `Free` answer synchronises with the holder's Release in `release`, so the
        // work the variable tracked is visible to the caller (PostgreSQL leaves this barrier to
        // the caller; it costs nothing extra on x86).
        // Mutant `var_free_relaxed` (models only): a Free answer that orders nothing.
        let order = if crate::mutant!("var_free_relaxed") {
            Ordering::Relaxed
        } else {
            Ordering::Acquire
        };
        if self.state.load(order) & VAL_EXCLUSIVE == 0 {
            return Some(VarWait::Free);
        }
        let value = var.load(Ordering::Acquire);
        (value != oldval).then_some(VarWait::Changed(value))
    }
}

/// Clears and returns the record's `lw_granted` (owner only, after it saw NOT_WAITING with
/// Acquire, which orders the waker's Relaxed store of the flag before it).
#[inline]
fn take_granted(me: &Proc) -> bool {
    if me.lw_granted.load(Ordering::Relaxed) {
        me.lw_granted.store(false, Ordering::Relaxed);
        true
    } else {
        false
    }
}

#[cfg(not(loom))]
impl<P: Policy> Default for AtomicLwLock<P> {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: mutual exclusion and Acquire/Release by invariant 1 and the orderings in the module
// docs; an acquire that panics (shared overflow) dequeues itself first and holds nothing; nothing
// unwinds while queued or waking (critical sections; a stuck wait-list bit aborts);
// `conditional_acquire` is one CAS loop.
unsafe impl<P: Policy> RawLwLock for AtomicLwLock<P> {
    const NAME: &'static str = P::NAME;

    fn with_tranche(tranche: Tranche) -> Self {
        Self::new_in(tranche)
    }

    #[inline]
    fn acquire(&self, mode: Mode) -> bool {
        self.stats.bump(
            if mode == Mode::Shared {
                Stat::ShAcquire
            } else {
                Stat::ExAcquire
            },
            1,
        );
        match self.attempt_lock(mode) {
            Attempt::Acquired => true,
            Attempt::Overflow => self.shared_overflow(),
            // Spinning policies first spin a bounded while (never under Barging).
            Attempt::MustWait if P::SPIN => self.acquire_adaptive(Want::of(mode)),
            // The bounded policy's slow path (timed sleeps to notice the bound, the handoff)
            // lives beside PostgreSQL's, which stays as it is.
            Attempt::MustWait if P::HANDOFF => self
                .acquire_ext(Want::of(mode), None)
                .expect("an acquire without deadline does not time out"),
            Attempt::MustWait => self.acquire_slow(mode),
        }
    }

    #[inline]
    fn conditional_acquire(&self, mode: Mode) -> bool {
        match self.attempt_lock(mode) {
            Attempt::Acquired => true,
            Attempt::Overflow => self.shared_overflow(),
            Attempt::MustWait => false,
        }
    }

    fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait {
        match self.attempt_lock(mode) {
            Attempt::Acquired => return AcquireOrWait::Acquired,
            Attempt::Overflow => self.shared_overflow(),
            Attempt::MustWait => {}
        }
        let me = Proc::current();
        let crit = CritSection::start("atomic LWLock: queued on the wait list");
        self.queue_self(me, lw_mode::WAIT_UNTIL_FREE);
        // Mutant `aow_no_recheck` (models only): sleep without re-checking after queueing.
        let recheck = if crate::mutant!("aow_no_recheck") {
            Attempt::MustWait
        } else {
            // A load, not `attempt_lock`'s guess: a queued waiter expects the lock taken.
            self.attempt(Want::of(mode), false)
        };
        match recheck {
            Attempt::Acquired => {
                // Our queue entry may have been chosen by a waker meanwhile; DequeueSelf handles
                // that, and the eventual release re-triggers any inhibited wakeups.
                self.dequeue_self(me);
                crit.end();
                AcquireOrWait::Acquired
            }
            Attempt::Overflow => {
                self.dequeue_self(me);
                crit.end();
                self.shared_overflow()
            }
            Attempt::MustWait => {
                self.stats.bump(Stat::Block, 1);
                let extra =
                    Self::sleep_until_woken(me, WaitEvent::lwlock(Tranche::from_id(self.tranche)));
                crit.end();
                me.repost(extra);
                AcquireOrWait::Waited
            }
        }
    }

    #[inline]
    unsafe fn release(&self, mode: Mode) {
        let delta = if mode == Mode::Exclusive {
            VAL_EXCLUSIVE
        } else {
            VAL_SHARED
        };
        // Release: the critical section happens-before the next Acquire CAS that sees this value.
        // Mutant `atomic_relaxed_release` (models only): an unlock that does not publish.
        let order = if crate::mutant!("atomic_relaxed_release") {
            Ordering::Relaxed
        } else {
            Ordering::Release
        };
        instructions(1); // the delta
        let old = self.state.fetch_sub(delta, order);
        instructions(4); // the new value, the one test and the return
        debug_assert!(
            if mode == Mode::Exclusive {
                old & VAL_EXCLUSIVE != 0
            } else {
                old & SHARED_MASK != 0
            },
            "LWLock released in a mode it is not held in"
        );
        let new = old.wrapping_sub(delta);
        // One test on the fast path: only a waiter, an upgrader or the handoff needs more.
        if new & (HAS_WAITERS | VAL_EXCLUSIVE | HANDOFF) != 0 {
            self.release_wake(new);
        }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        self.state.load(Ordering::Relaxed) & LOCK_MASK != 0
    }

    #[inline]
    fn is_locked_exclusive(&self) -> bool {
        self.state.load(Ordering::Relaxed) & VAL_EXCLUSIVE != 0
    }

    fn tranche(&self) -> Tranche {
        Tranche::from_id(self.tranche)
    }

    fn stats(&self) -> Option<LockStats> {
        self.stats.snapshot()
    }
}

impl<P: Policy> RawLwLockVar for AtomicLwLock<P> {
    fn wait_for_var(&self, var: &AtomicU64, oldval: u64) -> VarWait {
        let me = Proc::current();
        let mut extra = 0;
        let outcome = loop {
            if let Some(outcome) = self.conflicts_with_var(var, oldval) {
                break outcome;
            }
            let crit = CritSection::start("atomic LWLock: queued on the wait list");
            self.queue_self(me, lw_mode::WAIT_UNTIL_FREE);
            // Force wakeups on: the next release must wake us even if a woken writer is still
            // retrying (e0d97d77bf).
            // Mutant `var_no_release_ok` (models only): the waiter is woken late (by the woken
            // writer's own release), not by the release that freed the lock.
            if !crate::mutant!("var_no_release_ok") {
                self.state.fetch_or(RELEASE_OK, Ordering::Relaxed);
            }
            if let Some(outcome) = self.conflicts_with_var(var, oldval) {
                self.dequeue_self(me);
                crit.end();
                break outcome;
            }
            self.stats.bump(Stat::Block, 1);
            extra += Self::sleep_until_woken(me, WaitEvent::lwlock(Tranche::from_id(self.tranche)));
            crit.end();
        };
        me.repost(extra);
        outcome
    }

    unsafe fn update_var(&self, var: &AtomicU64, val: u64) {
        debug_assert!(
            self.is_locked_exclusive(),
            "update_var without the exclusive lock"
        );
        // AcqRel swap (a full barrier in PostgreSQL): the value is visible before any wake.
        // Mutant `var_relaxed_update` (models only): a value that does not publish what precedes it.
        let order = if crate::mutant!("var_relaxed_update") {
            Ordering::Relaxed
        } else {
            Ordering::AcqRel
        };
        var.swap(val, order);
        let mut wake = ProcList::EMPTY;
        self.wait_list_lock();
        // SAFETY: LOCKED is held.
        unsafe {
            self.with_waiters(|l| {
                while let Some(w) = l.first() {
                    if w.lw_mode.load(Ordering::Relaxed) != lw_mode::WAIT_UNTIL_FREE {
                        break; // only the leading WAIT_UNTIL_FREE run
                    }
                    l.delete(w);
                    wake.push_tail(w);
                    w.lw_waiting
                        .store(lw_waiting::PENDING_WAKEUP, Ordering::Relaxed);
                }
            })
        };
        self.wait_list_unlock();
        Self::wake_all(&mut wake);
    }

    unsafe fn release_clear_var(&self, var: &AtomicU64, val: u64) {
        var.swap(val, Ordering::AcqRel);
        // SAFETY: the caller holds the lock exclusively.
        unsafe { self.release(Mode::Exclusive) };
    }
}

#[cfg(not(loom))]
// SAFETY: forwards to the `RawLwLock` implementation, whose contract (mutual exclusion,
// Acquire/Release, non-blocking try) is lock_api's; guards may be sent because an LWLock hold is
// not tied to the acquiring thread.
unsafe impl<P: Policy> lock_api::RawRwLock for AtomicLwLock<P> {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Self::new();
    type GuardMarker = lock_api::GuardSend;

    #[inline]
    fn lock_shared(&self) {
        self.acquire(Mode::Shared);
    }
    #[inline]
    fn try_lock_shared(&self) -> bool {
        self.conditional_acquire(Mode::Shared)
    }
    #[inline]
    unsafe fn unlock_shared(&self) {
        // SAFETY: lock_api's contract: the lock is held shared.
        unsafe { self.release(Mode::Shared) }
    }
    #[inline]
    fn lock_exclusive(&self) {
        self.acquire(Mode::Exclusive);
    }
    #[inline]
    fn try_lock_exclusive(&self) -> bool {
        self.conditional_acquire(Mode::Exclusive)
    }
    #[inline]
    unsafe fn unlock_exclusive(&self) {
        // SAFETY: lock_api's contract: the lock is held exclusively.
        unsafe { self.release(Mode::Exclusive) }
    }
    #[inline]
    fn is_locked(&self) -> bool {
        RawLwLock::is_locked(self)
    }
    #[inline]
    fn is_locked_exclusive(&self) -> bool {
        RawLwLock::is_locked_exclusive(self)
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

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
        // SAFETY: held shared.
        unsafe { l.release(Mode::Shared) };
        let fast = t.join().unwrap();
        assert!(!fast, "the writer had to sleep");
        assert_eq!(l.state() & (HAS_WAITERS | LOCK_MASK), 0);
        assert_ne!(
            l.state() & RELEASE_OK,
            0,
            "the woken writer re-enabled wakeups"
        );
    }
}
