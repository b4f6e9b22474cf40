//! The atomic LWLock's state word: its bits, the states they encode, the invariants every
//! operation keeps and the memory orderings that order them (`lwlock.c`'s `LW_FLAG_*`,
//! `LW_VAL_*` and `LW_LOCK_MASK`). The lock itself is [`AtomicLwLock`](crate::AtomicLwLock);
//! tests and models read its word with `state()`/`word()` and test it against these bits.
//!
//! # State
//! ```text
//!  31   30           29          28       27   26        25           24          23..0
//! [ 0 | HAS_WAITERS | RELEASE_OK | LOCKED | 0 | HANDOFF | UPGRADABLE | EXCLUSIVE | shared count ]
//! ```
//! (PostgreSQL 9.6–17 positions for bits 28–30, 24 and 23..0; bits 25 and 26 are this
//! library's, beyond PostgreSQL, and stay zero unless the drop-in capabilities of
//! `atomic_state/upgrade.rs`, `contended.rs` and `fair_unlock.rs` are used or the policy is [`Handoff`], [`TaskFair`] or [`Adaptive`].) The lock is
//! free iff `state & LOCK_MASK == 0`.
//!
//! | EXCLUSIVE | UPGRADABLE | shared | meaning                                                  |
//! |-----------|------------|--------|----------------------------------------------------------|
//! | 0         | 0          | 0      | free                                                     |
//! | 0         | 0          | n > 0  | held shared by n threads                                 |
//! | 0         | 1          | n > 0  | one upgradable holder (counted in n) and n − 1 readers    |
//! | 1         | 0          | 0      | held exclusively by one thread                           |
//! | 1         | 0          | n > 0  | upgrading: the former upgradable holder owns EXCLUSIVE and waits for the n readers to leave |
//! | 0         | 1          | 0      | impossible                                               |
//! | 1         | 1          | any    | impossible                                               |
//!
//! Everything said of [`Adaptive`] here holds for [`EmptyYield`] too: it is `Adaptive` with a spin
//! that can end earlier, and nothing of its own on the word.
//!
//! `HANDOFF` (policies [`Handoff`], [`TaskFair`] and [`Adaptive`] only) is independent of the rows above: an
//! exclusive waiter that has waited longer than the bound owns it; while it is set no newcomer
//! takes the lock (shared, upgradable or exclusive; recursive reads excepted), and the next release
//! that frees the lock wakes the owner whatever `RELEASE_OK` says.
//!
//! # Invariants
//! 1. `EXCLUSIVE` is added only when `state & LOCK_MASK == 0`, a shared unit only when
//!    `EXCLUSIVE` is clear and the count is below [`MAX_SHARED`]; both validated by a CAS.
//! 2. The wait list (head/tail here, links in the records) is read or written only while holding
//!    `LOCKED`.
//! 3. `HAS_WAITERS` is never clear while the wait list is non-empty (it may be stale-set, which
//!    costs one spurious wakeup pass).
//! 4. `RELEASE_OK` clear implies that a woken shared/exclusive waiter has not yet re-enabled it.
//! 5. A record's `lw_waiting` goes NOT_WAITING → WAITING (owner, under LOCKED) → PENDING_WAKEUP
//!    (waker, under LOCKED, after unlinking) → NOT_WAITING (waker, Release, after its last access
//!    to the record's links). Only DequeueSelf (or a timed-out waiter, the same way) may take its
//!    own WAITING record off the list.
//! 6. (Beyond PostgreSQL.) `UPGRADABLE` is set only together with one shared unit, and only when
//!    `EXCLUSIVE` and `UPGRADABLE` are clear (one upgradable holder). `EXCLUSIVE` with a non-zero
//!    shared count exists only while that holder upgrades: no shared unit is added then except by
//!    a recursive read (which needs a count above zero), and the shared release that brings the
//!    count to zero wakes the upgrader (a futex wake on the state word).
//! 7. (Policies [`Handoff`], [`TaskFair`], [`Adaptive`].) `HANDOFF` is set only by an exclusive
//!    waiter that is on the list (or queues itself in the same critical section), under LOCKED, moving itself to just behind the leading WAIT_UNTIL_FREE run; its
//!    owner is then the first non-WAIT_UNTIL_FREE entry whenever it is on the list (it re-queues
//!    there) and is the only thread whose exclusive attempt ignores the bit. The owner clears it
//!    when it takes the lock, or when it gives up (a timed wait), then waking the waiters the bit
//!    held back; a fair unlock that hands the lock to the owner clears it for it.
//! 8. (Fair unlock.) A waker that hands the lock over adds the waiters' holds to the word itself
//!    (one AcqRel CAS, under LOCKED) and sets their `lw_granted` before `NOT_WAITING`: a granted
//!    waiter owns the lock when it wakes and does not attempt it again.
//!
//! # Memory orderings
//! * Acquire CAS (`attempt_lock`) / Release `fetch_sub` (`release`): the critical sections.
//! * `LOCKED`: `fetch_or(Acquire)` / `fetch_and(Release)` or the Release CAS in `wakeup`: orders
//!   the wait list (invariant 2).
//! * `HAS_WAITERS`/`RELEASE_OK` updates are Relaxed: they publish no data. **No lost wakeup** needs
//!   only that they are RMWs on the same word as the lock bits. A waiter sets `HAS_WAITERS` before
//!   its re-check (a CAS under PostgreSQL's policies; a load or a failed CAS's read under
//!   [`Adaptive`], below); a releaser learns of waiters from the value its own `fetch_sub`
//!   returns. The modification order of `state` puts the release either before the waiter's
//!   re-check (which then sees the lock free and takes it) or after `HAS_WAITERS` (and the
//!   releaser wakes). The waker takes `LOCKED`, which the waiter held while queueing, so it
//!   finds the waiter.
//! * `lw_waiting = NOT_WAITING` is a Release store paired with the sleeper's Acquire load (and the
//!   semaphore's own Release/Acquire): the unlink is visible before the record can queue again
//!   elsewhere (PostgreSQL's `pg_write_barrier` of `37de8de9e3`).
//! * Variable: `swap(AcqRel)` in `update_var`/`release_clear_var`, `Acquire` loads of the state
//!   and the variable in the conflict check. The re-check after queueing runs after the waiter's
//!   wait-list lock/unlock, so an update that finished before the waiter queued is seen (it
//!   precedes the updater's own wait-list lock).
//!
//! * [`Adaptive`]'s spinning adds no bit and no ordering: a spinner's probe is a Relaxed load (a
//!   hint), and it takes the lock only through the attempt's Acquire CAS. It stops when
//!   `HAS_WAITERS` or `HANDOFF` is set, so it never takes a lock the handoff reserves.
//! * [`Adaptive`]'s attempt (beyond PostgreSQL's `LWLockAttemptLock`) differs in two ways that
//!   add no ordering either. An exclusive newcomer's first CAS expects the idle word
//!   (`RELEASE_OK` alone) instead of a loaded one; a wrong guess fails and returns the word, the
//!   loop goes on from it. And an attempt that reads the lock taken returns "must wait" without
//!   PostgreSQL's CAS of the unchanged value: that CAS orders nothing the caller relies on. Every
//!   "must wait" that leads to a sleep or a give-up is read (a load, or a failed CAS's read)
//!   after the caller's own RMW on the word: `HAS_WAITERS` as it queues (`queue_self_at`,
//!   `queue_self_writer`, `queue_self_taking_handoff`), `HANDOFF` as it takes the bit at its
//!   bound, `RELEASE_OK` as a timed waiter gives up. Read-after-RMW coherence gives that read a
//!   value no older than the RMW, so a release before the RMW is seen (the lock is free) and one
//!   after it sees the bit and wakes: the no-lost-wakeup argument above holds unchanged.
//!   PostgreSQL's comment says its unchanged-value CAS "doubles as a memory barrier"; coherence
//!   is per location, and the one protocol that orders two locations (the last-releaser
//!   FlexLock's check of its queue against the lock word) has its own `fence(SeqCst)` on both
//!   sides. Every other "must wait" (a newcomer's, a spinner's, a try-lock's) is followed by
//!   more attempts or a queue-and-recheck, or returns `false` holding nothing.
//!
//! [`Handoff`]: crate::Handoff
//! [`TaskFair`]: crate::TaskFair
//! [`Adaptive`]: crate::Adaptive
//! [`EmptyYield`]: crate::EmptyYield

/// Someone is (or may be) on the wait list. Never clear while the list is non-empty.
pub const HAS_WAITERS: u32 = 1 << 30;
/// Releasers may wake waiters. Cleared by a waker that woke a shared/exclusive waiter; set again
/// by the first woken thread that runs (or by DequeueSelf, or by a WaitForVar queuer).
/// Under [`Adaptive`](crate::Adaptive) a clear bit inhibits wakeups for at most 50 µs after the
/// wake pass that cleared it (the lock's `woke_at` byte, beside the word; `release_wake`).
pub const RELEASE_OK: u32 = 1 << 29;
/// The wait-list spinlock bit. Does not block acquire/release CASes (they just retry).
pub const LOCKED: u32 = 1 << 28;
/// Added to the word by an exclusive holder; only when `LOCK_MASK` bits are all zero.
pub const VAL_EXCLUSIVE: u32 = 1 << 24;
/// Added to the word per shared holder; only while `VAL_EXCLUSIVE` is clear.
pub const VAL_SHARED: u32 = 1;
/// The shared-holder count.
pub const SHARED_MASK: u32 = VAL_EXCLUSIVE - 1;
/// Shared count plus exclusive bit: the lock is free iff these are all zero.
pub const LOCK_MASK: u32 = SHARED_MASK | VAL_EXCLUSIVE;
/// Most shared holders at once (16 777 215); one more panics.
pub const MAX_SHARED: u32 = SHARED_MASK;
/// One upgradable holder exists; it holds one shared unit besides (invariant 6). Beyond
/// PostgreSQL.
pub const UPGRADABLE: u32 = 1 << 25;
/// Policies [`Handoff`] and [`TaskFair`]: an exclusive waiter waited past the bound and owns the
/// handoff; newcomers queue (invariant 7). Beyond PostgreSQL; never set under policy
/// [`Barging`].
///
/// [`Handoff`]: crate::Handoff
/// [`TaskFair`]: crate::TaskFair
/// [`Barging`]: crate::Barging
pub const HANDOFF: u32 = 1 << 26;

// The state predicates, named once beside the bits (as std's futex `RwLock` keeps its
// `is_unlocked`, `has_readers_waiting`, ...). Each reads one value of the word; which ordering
// that value was read with is the caller's (see "Memory orderings" above).

/// No holder: neither `EXCLUSIVE` nor a shared unit (flags aside).
#[inline]
pub const fn is_free(state: u32) -> bool {
    state & LOCK_MASK == 0
}

/// `EXCLUSIVE` is set: an exclusive holder, or an upgrader waiting for its readers.
#[inline]
pub const fn is_exclusive(state: u32) -> bool {
    state & VAL_EXCLUSIVE != 0
}

/// The shared-holder count (the upgradable holder counts as one).
#[inline]
pub const fn shared_count(state: u32) -> u32 {
    state & SHARED_MASK
}

/// Held shared only: a count above zero and no `EXCLUSIVE` (a writer behind it waits for readers).
#[inline]
pub const fn is_read_locked(state: u32) -> bool {
    !is_exclusive(state) && shared_count(state) != 0
}

/// Someone is (or may be) queued (`HAS_WAITERS`).
#[inline]
pub const fn has_waiters(state: u32) -> bool {
    state & HAS_WAITERS != 0
}

/// Releasers may wake (`RELEASE_OK`).
#[inline]
pub const fn release_ok(state: u32) -> bool {
    state & RELEASE_OK != 0
}

/// A waiter owns the handoff (`HANDOFF`, invariant 7).
#[inline]
pub const fn handoff_owned(state: u32) -> bool {
    state & HANDOFF != 0
}

/// An upgradable holder exists (`UPGRADABLE`, invariant 6).
#[inline]
pub const fn is_upgradable_held(state: u32) -> bool {
    state & UPGRADABLE != 0
}

/// The wait list's spinlock bit is held (`LOCKED`, invariant 2).
#[inline]
pub const fn wait_list_locked(state: u32) -> bool {
    state & LOCKED != 0
}
