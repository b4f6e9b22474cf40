//! A reader-biased LWLock: BRAVO (Dice & Kogan, "BRAVO — Biased Locking for Reader-Writer
//! Locks", USENIX ATC '19) over the atomic-state LWLock. A variant beyond PostgreSQL: no
//! PostgreSQL function mirrors it (the nearest is the per-backend "fast-path" lock slots of the
//! heavyweight lock manager, `FastPathGrantRelationLock`, which likewise lets the common case
//! avoid the shared lock word).
//!
//! # Design
//! A one-word reader-writer lock does not scale on read-only work: every shared acquire and
//! release is an RMW on the one word, so the word's cache line moves between every two readers
//! on different cores. BRAVO adds a *reader bias*: while it is on, a reader does not touch the
//! lock word at all; it publishes itself in its own slot of a *visible-readers table* (a slot
//! per cache line, so readers on different cores write different lines), re-checks the bias, and
//! enters. A writer takes the underlying lock exclusively (which stops new slow-path readers),
//! revokes the bias, and waits until the table has drained of the readers that published before
//! the revocation. Revocation costs the writer a scan of the table, so after one the bias stays
//! off for [`INHIBIT_FACTOR`] times as long as the revocation took (BRAVO's *N* = 9): a
//! write-heavy phase runs at the underlying lock's cost, plus one load per shared acquire. A
//! slow-path reader (bias off, or its slot taken) takes the underlying lock shared and, once
//! the inhibition has expired, turns the bias back on.
//!
//! The table is per lock (BRAVO shares one global table among all locks; a per-lock table keeps
//! the lock self-contained and visible to the model checkers, at [`SLOTS`] cache lines per
//! lock). A reader's slot is its wait record's number modulo [`SLOTS`], so up to [`SLOTS`]
//! threads with consecutive numbers never collide; a reader whose slot is taken (by another
//! thread, or by itself holding this lock already) takes the slow path.
//!
//! Shared holds are not transferable: a release must run on the thread that acquired (it finds
//! its slot by its own record number), so [`ScalableRwLock`]'s guards are not `Send`
//! (`lock_api::GuardNoSend`).
//!
//! # State
//! * `inner`: a [`RawAtomicLwLock`]: writers, and readers on the slow path.
//! * `bias.rbias` (`AtomicU32`, own cache line): [`ON`] = reader bias on (readers may publish in
//!   the table); [`DRAINING`] = revoked, but fast readers may still be inside (a conditional
//!   writer revoked and gave up); [`OFF`] = off and the table drained of every reader that saw it
//!   on.
//! * `bias.inhibit_until` (`AtomicU64`, same line): [`crate::sync::clock_nanos`] time before
//!   which slow-path readers do not turn the bias on.
//! * `slots[i]` (`AtomicU32`, one per 128-byte line): `0` = empty, or `(d << 24) | (n + 1)`
//!   where `n` is the wait-record number of the thread that holds the lock shared through this
//!   slot (or is publishing, about to re-check the bias) and `d` counts its *nested* shared
//!   holds through the slot (bits 24..31, at most [`MAX_NESTED`]).
//!
//! # Invariants
//! 1. `rbias` becomes [`ON`] only by a thread holding `inner` shared, and leaves [`ON`] (to
//!    [`DRAINING`], then [`OFF`]) only by a thread holding `inner` exclusively: while a writer
//!    holds `inner`, `rbias` is not [`ON`] once it has revoked it. It is [`OFF`] only after a
//!    writer saw every slot empty after its fence.
//! 2. A slot holds `n + 1` only while thread `n` is between its publishing CAS and its release
//!    (or its retreat, if the re-check found the bias off). Only thread `n` writes `n + 1` into
//!    a slot or clears a slot holding `n + 1`.
//! 3. A thread holds the lock shared through a slot only if, after publishing, it saw
//!    `rbias == ON` (after the SeqCst fence).
//! 4. A writer holding `inner` exclusively enters its critical section only after it has seen
//!    `rbias == OFF`, or revoked it itself and seen every slot empty after its SeqCst fence.
//!    Hence (5): no fast-path reader and a writer are in their critical sections together.
//! 6. A thread whose slot holds its token takes a further shared hold in the slot (`d + 1`),
//!    whatever `rbias` says, and never on `inner`: a writer may hold `inner` and be waiting for
//!    that very slot to drain, so a nested acquire that waited for `inner` would deadlock
//!    (PostgreSQL lets a backend take an LWLock shared twice; so does the atomic LWLock, which
//!    never makes a shared acquirer wait for a queued writer).
//!
//! # Memory orderings
//! * **Publish vs revoke (the store-load pair).** Reader: CAS its slot `0 → n + 1`;
//!   `fence(SeqCst)`; load `rbias`. Writer: store `rbias = DRAINING`; `fence(SeqCst)`; load every
//!   slot.
//!   Each side stores, then loads the location the other side stores: without a full barrier
//!   between its store and its load (x86 too reorders a store after a later load: store
//!   buffering) both loads could miss both stores, and the reader would enter while the writer
//!   sees an empty table. With the two SeqCst fences, one fence is first in their single total
//!   order; the side whose fence is second sees the other's store: either the reader sees
//!   `rbias != ON` (and retreats to the slow path, which the writer's `inner` blocks), or the
//!   writer sees the slot taken (and waits for it to clear). The slot CAS and the `rbias`
//!   loads and store are Relaxed: the fences order them. Mutant `bravo_no_fence` (models only)
//!   drops the reader's fence, and a model must find a reader and a writer in their critical
//!   sections together.
//! * **Data, writer to fast reader.** The re-check load of `rbias` is Acquire and the bias is
//!   turned on with a Release store by a thread holding `inner` shared, whose shared acquire came
//!   after the previous writer's Release of `inner`: so that writer's critical section
//!   happens-before the fast reader's (through the bias store).
//! * **Data, fast reader to writer.** A fast reader clears its slot with a Release store; the
//!   revoking writer's slot loads are Acquire: the reader's critical section happens-before the
//!   writer's.
//! * A writer's first load of `rbias` (before revoking) is Relaxed: a bias store it must see was
//!   made under `inner` shared, which happens-before its own exclusive acquire.
//! * `inhibit_until` is written (Relaxed) only under `inner` exclusive and read (Relaxed) under
//!   `inner` shared: `inner`'s Acquire/Release orders them.
//!
//! # Costs
//! Shared acquire + release, bias on: a load of `rbias` (a line every reader keeps shared), the
//! thread's record number, a CAS and a store on the thread's own slot line, and one
//! `fence(SeqCst)`; no write to a line another reader writes. Exclusive acquire with the bias
//! off: the atomic LWLock's, plus one load. Exclusive acquire that revokes: a store, a fence and
//! a scan of [`SLOTS`] lines (the cost the inhibition amortises; see the reader-bias figures in
//! docs/results.md). Size: [`SLOTS`] + 2 cache lines.

use crate::atomic_state::RawAtomicLwLock;
use crate::proc::Proc;
use crate::raw::{AcquireOrWait, Mode, RawLwLock};
use crate::stats::LockStats;
use crate::sync::{fence, spin_loop, AtomicU32, AtomicU64, Ordering};
use crate::wait_event::Tranche;

/// `rbias`: off, and no fast reader inside.
pub const OFF: u32 = 0;
/// `rbias`: on; readers may take the fast path.
pub const ON: u32 = 1;
/// `rbias`: revoked, fast readers may still be inside (the next writer waits for them).
pub const DRAINING: u32 = 2;

/// Slots of the visible-readers table (one 128-byte line each). 64 in normal builds (every
/// thread of a 64-thread run has its own slot when record numbers are consecutive); 2 under loom,
/// where every atomic is a state the model explores.
#[cfg(not(loom))]
pub const SLOTS: usize = 64;
/// Slots of the visible-readers table (loom: 2).
#[cfg(loom)]
pub const SLOTS: usize = 2;

/// Bits 0..23 of a slot: the token (wait-record number + 1).
const TOKEN_MASK: u32 = (1 << 24) - 1;
/// One nested shared hold in a slot's bits 24..31.
const NESTED_ONE: u32 = 1 << 24;
/// The most nested shared holds one thread may take through its slot (above: a panic, as
/// PostgreSQL's `MAX_SIMUL_LWLOCKS` check is an error).
pub const MAX_NESTED: u32 = 255;

/// After a revocation that took `t` ns, slow-path readers leave the bias off for
/// `INHIBIT_FACTOR * t` ns (BRAVO's *N*).
pub const INHIBIT_FACTOR: u64 = 9;

/// Spins of a revoking writer on one occupied slot before it yields the CPU between probes (a
/// reader may be descheduled inside its critical section).
const REVOKE_SPINS: u32 = 100;

/// One slot of the visible-readers table, alone on its (pair of) cache line(s).
#[repr(align(128))]
struct Slot(AtomicU32);

/// The bias flag and the inhibition deadline, on a line of their own (read by every reader,
/// written only by revoking writers and re-biasing readers).
#[repr(align(128))]
struct Bias {
    rbias: AtomicU32,
    inhibit_until: AtomicU64,
}

/// The reader-biased LWLock (BRAVO over [`RawAtomicLwLock`]); see the module docs.
pub struct RawReaderBiasLwLock {
    inner: RawAtomicLwLock,
    bias: Bias,
    slots: [Slot; SLOTS],
}

impl std::fmt::Debug for RawReaderBiasLwLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawReaderBiasLwLock")
            .field("inner", &self.inner)
            .field("rbias", &self.bias.rbias.load(Ordering::Relaxed))
            .field("fast_readers", &self.fast_readers())
            .finish()
    }
}

/// The clock the inhibition runs on. Under loom a constant: loom replays each execution and
/// needs every branch to depend on the schedule only (re-biasing is then never inhibited).
#[inline]
fn now_nanos() -> u64 {
    #[cfg(loom)]
    return 0;
    #[cfg(not(loom))]
    crate::sync::clock_nanos()
}

impl RawReaderBiasLwLock {
    /// A free lock in the default tranche, bias off until the first slow-path reader.
    #[cfg(not(loom))]
    pub const fn new() -> Self {
        Self::new_in(Tranche::DEFAULT)
    }

    /// A free lock reporting its waits under `tranche`.
    #[cfg(not(loom))]
    pub const fn new_in(tranche: Tranche) -> Self {
        RawReaderBiasLwLock {
            inner: RawAtomicLwLock::new_in(tranche),
            bias: Bias {
                rbias: AtomicU32::new(OFF),
                inhibit_until: AtomicU64::new(0),
            },
            slots: [const { Slot(AtomicU32::new(0)) }; SLOTS],
        }
    }

    /// A free lock in the default tranche.
    #[cfg(loom)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Self::new_in(Tranche::DEFAULT)
    }

    /// A free lock reporting its waits under `tranche`.
    #[cfg(loom)]
    pub fn new_in(tranche: Tranche) -> Self {
        RawReaderBiasLwLock {
            inner: RawAtomicLwLock::new_in(tranche),
            bias: Bias {
                rbias: AtomicU32::new(OFF),
                inhibit_until: AtomicU64::new(0),
            },
            slots: std::array::from_fn(|_| Slot(AtomicU32::new(0))),
        }
    }

    /// Whether the reader bias is on (a racy snapshot).
    pub fn is_biased(&self) -> bool {
        self.bias.rbias.load(Ordering::Relaxed) == ON
    }

    /// Threads holding the lock shared through the table right now (a racy snapshot).
    pub fn fast_readers(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| s.0.load(Ordering::Relaxed) != 0)
            .count()
    }

    /// The underlying atomic LWLock (for inspection).
    pub fn inner(&self) -> &RawAtomicLwLock {
        &self.inner
    }

    /// The calling thread's slot and its token in it.
    #[inline]
    fn my_slot(&self) -> (&AtomicU32, u32) {
        let n = Proc::current().number();
        assert!(
            n < TOKEN_MASK,
            "wait record number {n} does not fit a reader-bias slot"
        );
        (&self.slots[n as usize % SLOTS].0, n + 1)
    }

    /// The fast path: publish in our slot and re-check the bias. True if we now hold the lock
    /// shared through the slot.
    #[inline]
    fn try_fast_shared(&self) -> bool {
        let (slot, token) = self.my_slot();
        // Relaxed: only this thread writes `token` into the slot (invariant 2).
        let v = slot.load(Ordering::Relaxed);
        if v != 0 && v & TOKEN_MASK == token {
            // Already held through our slot: a nested hold, whatever `rbias` says
            // (invariant 6). Relaxed: the slot stays non-zero, so no writer is released by it.
            assert!(
                v >> 24 < MAX_NESTED,
                "too many nested shared holds of reader-bias lock {}",
                self.inner.tranche().name()
            );
            slot.store(v + NESTED_ONE, Ordering::Relaxed);
            return true;
        }
        if self.bias.rbias.load(Ordering::Relaxed) != ON {
            return false;
        }
        // A taken slot (a colliding thread's) is not written. Relaxed CAS: the fence below
        // orders it before the re-check.
        if v != 0
            || slot
                .compare_exchange(0, token, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return false;
        }
        // The reader half of the store-load pair (module docs). Mutant `bravo_no_fence`
        // (models only): without it a revoking writer and this reader can miss each other.
        if !crate::mutant!("bravo_no_fence") {
            fence(Ordering::SeqCst);
        }
        // Acquire: pairs with the Release store that turned the bias on (module docs, "Data").
        if self.bias.rbias.load(Ordering::Acquire) == ON {
            return true;
        }
        // Revoked meanwhile: retreat. Release: nothing read under it, but a writer waiting for
        // the slot must not see it clear before our loads above.
        slot.store(0, Ordering::Release);
        false
    }

    /// After a slow-path shared acquire: turn the bias on unless a recent revocation inhibits it.
    #[inline]
    fn maybe_rebias(&self) {
        if self.bias.rbias.load(Ordering::Relaxed) == ON {
            return;
        }
        self.rebias_slow();
    }

    #[cold]
    fn rebias_slow(&self) {
        // Relaxed: written under `inner` exclusive, which our shared hold excludes and orders.
        if now_nanos() < self.bias.inhibit_until.load(Ordering::Relaxed) {
            return;
        }
        // Release: our `inner` shared acquire came after the last writer's release, so its
        // critical section happens-before any fast reader that reads this store (module docs).
        // (From DRAINING too: readers still inside are compatible with us, and the next writer
        // waits for every slot.)
        self.bias.rbias.store(ON, Ordering::Release);
    }

    /// The writer half: with `inner` held exclusively, revoke the bias and wait for the table
    /// to drain (`wait == true`), or only check it once (`wait == false`). Returns whether the
    /// table is empty (the writer may enter).
    #[inline]
    fn revoke(&self, wait: bool) -> bool {
        // Relaxed: see the module docs (a bias store we must see happened-before our acquire).
        if self.bias.rbias.load(Ordering::Relaxed) == OFF {
            return true;
        }
        self.revoke_slow(wait)
    }

    #[cold]
    #[inline(never)]
    fn revoke_slow(&self, wait: bool) -> bool {
        let start = now_nanos();
        self.bias.rbias.store(DRAINING, Ordering::Relaxed);
        // The writer half of the store-load pair (module docs).
        fence(Ordering::SeqCst);
        let mut empty = true;
        for slot in &self.slots {
            let mut spins = 0u32;
            // Acquire: pairs with the reader's Release clear (its critical section is over).
            while slot.0.load(Ordering::Acquire) != 0 {
                if !wait {
                    empty = false;
                    break;
                }
                if spins < REVOKE_SPINS {
                    spins += 1;
                    spin_loop();
                } else {
                    crate::sync::thread::yield_now();
                }
            }
        }
        // Mutant `bravo_draining_is_off` (models only): a writer that gave up with fast readers
        // inside marks the bias OFF, so the next writer does not wait for them.
        if empty || crate::mutant!("bravo_draining_is_off") {
            // Relaxed: read by writers only under `inner`, by readers only as "not ON".
            self.bias.rbias.store(OFF, Ordering::Relaxed);
        }
        let took = now_nanos().saturating_sub(start);
        // Relaxed: read only under `inner` (module docs). At least one tick, so that a
        // revocation always inhibits re-biasing for a moment.
        self.bias.inhibit_until.store(
            now_nanos().saturating_add(INHIBIT_FACTOR * took.max(1)),
            Ordering::Relaxed,
        );
        empty
    }
}

#[cfg(not(loom))]
impl Default for RawReaderBiasLwLock {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: exclusion by invariants 1–5 (module docs): slow-path readers and writers exclude each
// other through `inner`; fast-path readers and writers through the store-load pair and the
// drain. Acquire/Release as in "Memory orderings" (and `inner`'s own). An acquire unwinds only
// in `inner` (shared-holder overflow), holding nothing: the fast path cannot fail that way, and
// a writer's revocation does not unwind. `conditional_acquire` never waits: a writer that finds
// fast readers after revoking gives `inner` back and fails. A shared release must run on the
// acquiring thread (module docs): the drop-in's guards are not `Send`.
unsafe impl RawLwLock for RawReaderBiasLwLock {
    const NAME: &'static str = "reader-bias";

    fn with_tranche(tranche: Tranche) -> Self {
        Self::new_in(tranche)
    }

    #[inline]
    fn acquire(&self, mode: Mode) -> bool {
        match mode {
            Mode::Shared => {
                if self.try_fast_shared() {
                    return true;
                }
                let fast = self.inner.acquire(Mode::Shared);
                self.maybe_rebias();
                fast
            }
            Mode::Exclusive => {
                let fast = self.inner.acquire(Mode::Exclusive);
                self.revoke(true);
                fast
            }
        }
    }

    #[inline]
    fn conditional_acquire(&self, mode: Mode) -> bool {
        match mode {
            Mode::Shared => {
                if self.try_fast_shared() {
                    return true;
                }
                if !self.inner.conditional_acquire(Mode::Shared) {
                    return false;
                }
                self.maybe_rebias();
                true
            }
            Mode::Exclusive => {
                if !self.inner.conditional_acquire(Mode::Exclusive) {
                    return false;
                }
                if self.revoke(false) {
                    return true;
                }
                // Fast readers still inside: give `inner` back (the bias stays revoked, so
                // they drain and the next attempt can succeed).
                // SAFETY: acquired exclusively just above.
                unsafe { self.inner.release(Mode::Exclusive) };
                false
            }
        }
    }

    fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait {
        if mode == Mode::Shared && self.try_fast_shared() {
            return AcquireOrWait::Acquired;
        }
        match self.inner.acquire_or_wait(mode) {
            AcquireOrWait::Acquired => {
                match mode {
                    Mode::Shared => self.maybe_rebias(),
                    Mode::Exclusive => {
                        self.revoke(true);
                    }
                }
                AcquireOrWait::Acquired
            }
            AcquireOrWait::Waited => AcquireOrWait::Waited,
        }
    }

    #[inline]
    unsafe fn release(&self, mode: Mode) {
        if mode == Mode::Shared {
            let (slot, token) = self.my_slot();
            // Relaxed: only this thread writes `token` into the slot (invariant 2).
            let v = slot.load(Ordering::Relaxed);
            if v != 0 && v & TOKEN_MASK == token {
                if v >> 24 > 0 {
                    // A nested hold: the slot stays ours (Relaxed: no writer waits on it).
                    slot.store(v - NESTED_ONE, Ordering::Relaxed);
                } else {
                    // Release: our critical sections happen-before a revoking writer's
                    // Acquire load.
                    slot.store(0, Ordering::Release);
                }
                return;
            }
        }
        // SAFETY: the caller holds the lock in `mode`, and a shared hold that is not in our
        // slot is a shared hold of `inner` (a thread's holds of one lock are interchangeable:
        // if it holds both kinds, which one this release gives up does not matter).
        unsafe { self.inner.release(mode) }
    }

    fn is_locked(&self) -> bool {
        // The calling thread's own slot first: a holder asking (the common caller: an assertion
        // inside its own critical section) answers from its own line, without reading the
        // other readers' lines (reading them would pull each line out of its owner's cache
        // and make the owner's next release a transfer). Then the first occupied slot, if any.
        let own = Proc::current_if_registered().map(|p| p.number() as usize % SLOTS);
        self.inner.is_locked()
            || own.is_some_and(|i| self.slots[i].0.load(Ordering::Relaxed) != 0)
            || self.slots.iter().any(|s| s.0.load(Ordering::Relaxed) != 0)
    }

    fn is_locked_exclusive(&self) -> bool {
        // A revoking writer holds `inner` but waits (`rbias` DRAINING) while fast readers are
        // inside; a writer inside always finds `rbias` OFF (invariant 1: nobody turns it on
        // while `inner` is held exclusively).
        self.inner.is_locked_exclusive() && self.bias.rbias.load(Ordering::Relaxed) == OFF
    }

    fn tranche(&self) -> Tranche {
        self.inner.tranche()
    }

    fn stats(&self) -> Option<LockStats> {
        self.inner.stats()
    }
}

// Guards are not `Send`: a shared release finds its slot by the releasing thread.
crate::raw::lock_api_rwlock_over_lwlock!([] RawReaderBiasLwLock, guard: GuardNoSend);

/// A reader-scalable reader-writer lock: `lock_api::RwLock` over [`RawReaderBiasLwLock`]
/// (BRAVO over the atomic LWLock). Read-mostly data read from many cores at once; guards are
/// not `Send`. Each lock is `SLOTS` (64) + 2 cache lines.
///
/// ```
/// use lwlock::ScalableRwLock;
/// static CONFIG: ScalableRwLock<u32> = ScalableRwLock::new(1);
/// assert_eq!(*CONFIG.read(), 1);
/// *CONFIG.write() = 2;
/// assert_eq!(*CONFIG.read(), 2);
/// ```
#[cfg(not(loom))]
pub type ScalableRwLock<T> = lock_api::RwLock<RawReaderBiasLwLock, T>;
/// Shared guard of [`ScalableRwLock`].
#[cfg(not(loom))]
pub type ScalableRwLockReadGuard<'a, T> = lock_api::RwLockReadGuard<'a, RawReaderBiasLwLock, T>;
/// Exclusive guard of [`ScalableRwLock`].
#[cfg(not(loom))]
pub type ScalableRwLockWriteGuard<'a, T> = lock_api::RwLockWriteGuard<'a, RawReaderBiasLwLock, T>;

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn bias_turns_on_and_is_revoked() {
        let l = RawReaderBiasLwLock::new();
        assert!(!l.is_biased());
        // First reader: slow path, turns the bias on.
        l.acquire(Mode::Shared);
        assert!(l.is_biased());
        assert_eq!(l.fast_readers(), 0);
        // SAFETY: held shared.
        unsafe { l.release(Mode::Shared) };
        // Second reader: fast path.
        l.acquire(Mode::Shared);
        assert_eq!(l.fast_readers(), 1);
        assert!(l.is_locked());
        assert!(!l.is_locked_exclusive());
        // The same thread again: a nested hold in its own slot, never on `inner` (a writer
        // holding `inner` may be waiting for this slot: invariant 6).
        l.acquire(Mode::Shared);
        assert!(!l.inner().is_locked());
        assert_eq!(l.fast_readers(), 1);
        // SAFETY: held shared twice.
        unsafe { l.release(Mode::Shared) };
        assert_eq!(l.fast_readers(), 1);
        // SAFETY: held shared once more.
        unsafe { l.release(Mode::Shared) };
        assert_eq!(l.fast_readers(), 0);
        assert!(!l.is_locked());
        // A fast reader again; a conditional writer revokes, finds it inside and gives up.
        l.acquire(Mode::Shared);
        assert_eq!(l.fast_readers(), 1);
        assert!(!l.conditional_acquire(Mode::Exclusive));
        assert!(!l.is_biased());
        assert!(!l.inner().is_locked());
        // SAFETY: held shared (through the slot).
        unsafe { l.release(Mode::Shared) };
        assert!(!l.is_locked());
        assert!(l.conditional_acquire(Mode::Exclusive));
        assert!(l.is_locked_exclusive());
        // SAFETY: held exclusively.
        unsafe { l.release(Mode::Exclusive) };
    }

    #[test]
    fn drop_in_statics_and_guards() {
        static L: ScalableRwLock<u64> = ScalableRwLock::new(3);
        for _ in 0..3 {
            assert_eq!(*L.read(), 3);
        }
        {
            let (a, b) = (L.read(), L.read());
            assert_eq!(*a + *b, 6);
            assert!(L.try_write().is_none());
        }
        *L.write() += 1;
        assert_eq!(*L.read(), 4);
    }
}
