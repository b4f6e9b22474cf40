//! The FlexLock: a lock of the [`RawLwLock`] trait with a group operation, under two policies.
//!
//! * [`GroupPolicy::Leader`] mirrors `ProcArrayEndTransaction` + `ProcArrayGroupClearXid` (PostgreSQL
//!   9.6+, `0e141c0fbb`): try the exclusive lock conditionally; otherwise push onto the group list;
//!   the thread that pushed onto an empty list is the leader: it takes the lock exclusively (new
//!   members keep joining while it waits), detaches the whole list with one swap, runs every
//!   member's operation, releases, and wakes the members.
//! * [`GroupPolicy::LastReleaser`] mirrors the 2011 FlexLock design of ProcArrayLock (never committed;
//!   reconstructed from its commit message): a thread that cannot get the lock exclusively queues
//!   its operation; whoever releases the lock to free (the last shared holder, or the exclusive
//!   holder) runs the queued operations under exclusive rights, then wakes the submitters.
//! * [`HolderServesLock`], a variant beyond PostgreSQL and the 2011 design: exclusive holders
//!   serve the queue before they release, but no release re-checks it; a submitter nobody served
//!   waits for the lock in the wrapped lock's own queue and drains itself.
//!
//! # Design
//! Both policies share the group list and serving pass of `group_list.rs` and a bound
//! `max_group` (CC-Synch's *h*) on the operations one server runs per hold; the rest of its chain
//! is handed to the first unserved member, which takes the lock and continues.
//!
//! **Last releaser, race-free.** The policy is built from two halves of a queue-then-recheck
//! handshake, each with a `fence(SeqCst)`: a submitter pushes, fences and tries the lock once
//! more; every release through the lock (guards, direct group operations) drains the queue while
//! still holding, releases, fences and re-checks the queue. So a queued operation is never
//! stranded while the lock is free. The protocol: `group/last_releaser.rs` (the submitter) and
//! `group/drain.rs` (the releaser).
//!
//! **Holder serves (the fast variant).** [`HolderServesLock`] drops the release's fence and
//! re-check: exclusive holders drain before they release, and a submitter nobody served waits for
//! the lock in `L`'s own queue (`acquire_or_wait`), whose queue-then-recheck wakes it at the next
//! release; a submitter whose operation a server already detached sleeps on its operation. The
//! protocol, its invariant and its measurements: `group/holder_serves.rs`.
//!
//! The leader policy's protocol is in `group/leader.rs`, the guards and the release each performs
//! in `group/guards.rs`, the state they share in `group/core.rs`.
//!
//! **No shared holder sees half a batch.** Each *batch* (at most `max_group` operations, the
//! unit [`crate::GroupStats`] counts as a group) is run inside one exclusive hold: the drainer
//! holds exclusively from a batch's first operation to its last, and an exclusive holder's
//! release is converted into the drain before the lock is given up. A whole queue is not one
//! hold: past `max_group` the rest is handed to its oldest member, which takes the lock anew, and
//! a drainer that found more operations queued after its release re-acquires (conditionally)
//! for the next batch; readers may run between batches. Shared holders exist only outside exclusive holds, so
//! they see every batch applied entirely or not at all. Further, as in
//! the 2011 design ("the final releaser applies all pending clears before anyone can take a new
//! snapshot"), a new reader that finds operations queued first takes the lock exclusively and
//! drains them, so a snapshot taken after `group()` returned includes the operation. (An
//! operation that is only queued may be missed: a drain that ends in a handover has taken it off
//! the queue before its server holds the lock.) Consequence: a
//! thread must not take a second read guard of a LastReleaser FlexLock it already reads (it may
//! wait for its own first guard).
//!
//! # Unwinding
//! A group operation's own panic is caught where it runs (`op.rs`) and re-raised in its
//! submitter. The wrapped lock `L` may unwind too (the trait allows an acquire to unwind holding
//! nothing, and a release to unwind after giving the hold up): for a lock of this project only on
//! shared-holder overflow, for others (or `lwlock::fault::FaultLock`) anywhere. Once a submitter
//! has pushed its operation, its stack frame holds an operation other threads may run, so it must
//! not leave until the operation is finished with; each step therefore handles an unwinding lock
//! call itself, so that the protocol completes for every other member:
//!
//! | step | if the lock call unwinds |
//! |---|---|
//! | direct attempt, clog fallback (nothing pushed) | the panic propagates; the operation did not run |
//! | leader's / handover target's `acquire` (Leader policy) | it leaves the chain it heads (its own operation not run), hands the rest to the next member, resets its record, and gets the panic |
//! | handover target's `acquire` (LastReleaser) | as above; with no rest, it re-checks the queue (the releaser half) before leaving |
//! | `release` after serving (both policies, guards too) | the hold is given up (trait rule); the served members are woken and the rest handed over as usual; then the panic is re-raised in the server (its own operation, if it had one, ran) |
//! | LastReleaser `conditional_acquire` (submitter's re-check, releaser's re-check, drain loop) | retried once: nobody else may be left to drain the queue; a second unwind aborts the process (continuing could strand queued operations); after the protocol the first panic is re-raised (the caller's operation ran) |
//! | holder-serves submitter's `conditional_acquire` (after the push) or `acquire_or_wait` | retried once (its operation is queued on its stack); a second unwind aborts; after the operation ran the first panic is re-raised |
//! | holder-serves handover target's `acquire` | it leaves the chain it heads (its own operation not run), hands the rest over (no re-check is owed: queued submitters wait for the lock themselves), and gets the panic |
//!
//! A [`lwlock::elog::CritSection`] spans every step from the push until the operation is
//! finished with; an unwind that escapes the handling above aborts with a message instead of
//! freeing a queued operation.
//!
//! # State
//! The wrapped lock `L`, the group list head (`AtomicU32`, see `group_list.rs`), the value.
//! Under `LastReleaser` the list is the pending queue; under `Leader` it is the forming group.
//!
//! # Invariants
//! 1. Every operation passed to [`GroupLock::group`] runs exactly once, under the exclusive lock,
//!    and its result (or panic) reaches the thread that passed it.
//! 2. `LastReleaser`: if the queue is non-empty, then the lock is held by a thread that will check
//!    the queue when it releases, or a handover target is about to take the lock, or a submitter
//!    is about to retry the lock.
//! 3. An operation's panic is caught where it runs; every other operation still runs, the lock is
//!    released and every member is woken; the payload is re-raised in the submitter.
//!
//! # Memory orderings
//! The list orderings are in `group_list.rs`. The two `fence(SeqCst)` calls are the
//! store-load (Dekker) barrier of invariant 2: submitter "push; fence; try-acquire" against
//! releaser "release; fence; load head". Without them both loads could miss both stores.

pub use crate::group::config::{FlexConfig, GroupPolicy, DEFAULT_MAX_GROUP};
use crate::group::core::Core;
pub use crate::group::guards::{FlexReadGuard, FlexWriteGuard};
use crate::group_lock::{sealed::Sealed, GroupLock};
use lwlock::{IpcEvent, RawLwLock, Tranche, WaitEvent};

/// A shared/exclusive lock over `L` whose exclusive operations can be combined: see the
/// [module docs](self) for the two policies. Its API is that of [`GroupLock`].
///
/// ```
/// use flexlock::{FlexLock, GroupLock, GroupPolicy};
/// use lwlock::RawAtomicLwLock;
/// let lock = FlexLock::<RawAtomicLwLock, Vec<u32>>::new(vec![0; 4], GroupPolicy::Leader);
/// let old = lock.group(|v| std::mem::replace(&mut v[2], 7));
/// assert_eq!(old, 0);
/// assert_eq!(lock.read()[2], 7);
/// ```
pub struct FlexLock<L: RawLwLock, T> {
    core: Core<L, T>,
}

// SAFETY: the value is moved with the lock; `L` is Send by the trait's supertrait.
unsafe impl<L: RawLwLock, T: Send> Send for FlexLock<L, T> {}
// SAFETY: shared access hands `&T` to several threads (T: Sync) and `&mut T` to one thread at a
// time, possibly not the caller's (group operations run on a server thread: T: Send).
unsafe impl<L: RawLwLock, T: Send + Sync> Sync for FlexLock<L, T> {}

impl<L: RawLwLock, T> std::fmt::Debug for FlexLock<L, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlexLock")
            .field("lock", &L::NAME)
            .field("policy", &self.core.policy())
            .field("max_group", &self.core.max_group())
            .finish_non_exhaustive()
    }
}

impl<L: RawLwLock, T> FlexLock<L, T> {
    /// A lock with `policy`, [`DEFAULT_MAX_GROUP`] and tranche [`Tranche::PROC_ARRAY`].
    pub fn new(data: T, policy: GroupPolicy) -> Self {
        Self::with_config(data, FlexConfig::new(policy))
    }

    /// A lock with an explicit configuration.
    ///
    /// # Panics
    /// If `config.max_group` is 0.
    pub fn with_config(data: T, config: FlexConfig) -> Self {
        FlexLock {
            core: Core::new(data, config.policy, config.max_group, config.tranche),
        }
    }

    /// The policy.
    pub fn policy(&self) -> GroupPolicy {
        self.core.policy()
    }
}

impl<L: RawLwLock, T> Sealed for FlexLock<L, T> {}

impl<L: RawLwLock, T> GroupLock for FlexLock<L, T> {
    type Raw = L;
    type Data = T;

    /// Runs `op` under the exclusive lock, here or on another thread (the leader, or the last
    /// releaser); the key is ignored. See [`GroupLock::group_keyed`] for the rules on nesting and
    /// panics.
    ///
    /// A member waiting for its server publishes the wait event of the group it is in, chosen by
    /// the lock's tranche: `IPC:ProcArrayGroupUpdate` for [`Tranche::PROC_ARRAY`] (as
    /// `ProcArrayGroupClearXid`), `IPC:XactGroupUpdate` for [`Tranche::XACT_SLRU`], and
    /// `IPC:FlexLockGroupUpdate` for any other tranche and for the last-releaser policy.
    #[inline]
    fn group_keyed<R: Send>(&self, _key: u64, op: impl FnOnce(&mut T) -> R + Send) -> R {
        match self.core.policy() {
            GroupPolicy::Leader => {
                let event = match self.core.raw().tranche() {
                    Tranche::PROC_ARRAY => IpcEvent::ProcArrayGroupUpdate,
                    Tranche::XACT_SLRU => IpcEvent::XactGroupUpdate,
                    _ => IpcEvent::FlexLockGroupUpdate,
                };
                self.core
                    .group_leader(op, WaitEvent::ipc(event), 0, |_| true)
            }
            GroupPolicy::LastReleaser => self.core.group_last_releaser(op),
        }
    }

    fn core(&self) -> &Core<L, T> {
        &self.core
    }

    fn into_core(self) -> Core<L, T> {
        self.core
    }
}

/// The last-releaser FlexLock's fast variant (beyond PostgreSQL and the 2011 design): exclusive
/// holders serve the queued operations before they release, as in [`GroupPolicy::LastReleaser`], but
/// no release re-checks the queue, and shared releases do nothing extra. Its API is that of
/// [`GroupLock`].
///
/// A submitter that cannot take the lock queues its operation, tries the lock once more (and
/// drains the queue itself if it gets it), spins on its operation, and then waits for the lock
/// in `L`'s own queue with `acquire_or_wait(Exclusive)`: woken by the next release, it finds its
/// operation done (served by that holder) or takes the lock and drains. The Dekker handshake the
/// 2011 design does per release (`fence(SeqCst)` and a load of the queue head) is replaced by `L`'s
/// own queue-then-recheck, paid only by submitters that wait. Uncontended, a group call costs a
/// conditional acquire, a load of the queue head and a release. See the [module docs](self)
/// ("Holder serves") for a summary, and `group/holder_serves.rs` for the protocol, its invariant
/// and its unwinding rules.
///
/// ```
/// use flexlock::{GroupLock, HolderServesLock};
/// use lwlock::RawAtomicLwLock;
/// let lock = HolderServesLock::<RawAtomicLwLock, Vec<u32>>::new(vec![0; 4]);
/// let old = lock.group(|v| std::mem::replace(&mut v[2], 7));
/// assert_eq!(old, 0);
/// assert_eq!(lock.read()[2], 7);
/// ```
pub struct HolderServesLock<L: RawLwLock, T> {
    core: Core<L, T>,
}

// SAFETY: as for `FlexLock`: the value moves with the lock; `L` is Send by the trait.
unsafe impl<L: RawLwLock, T: Send> Send for HolderServesLock<L, T> {}
// SAFETY: as for `FlexLock`: `&T` to several threads (T: Sync), `&mut T` to one thread at a time,
// possibly not the caller's (T: Send).
unsafe impl<L: RawLwLock, T: Send + Sync> Sync for HolderServesLock<L, T> {}

impl<L: RawLwLock, T> std::fmt::Debug for HolderServesLock<L, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HolderServesLock")
            .field("lock", &L::NAME)
            .field("max_group", &self.core.max_group())
            .finish_non_exhaustive()
    }
}

impl<L: RawLwLock, T> HolderServesLock<L, T> {
    /// A lock with [`DEFAULT_MAX_GROUP`] and tranche [`Tranche::PROC_ARRAY`].
    pub fn new(data: T) -> Self {
        Self::with_bound(data, DEFAULT_MAX_GROUP, Tranche::PROC_ARRAY)
    }

    /// A lock with bound `max_group` on the operations one server runs per hold, reporting its
    /// waits under `tranche`.
    ///
    /// # Panics
    /// If `max_group` is 0.
    pub fn with_bound(data: T, max_group: usize, tranche: Tranche) -> Self {
        HolderServesLock {
            core: Core::new_holder_serves(data, max_group, tranche),
        }
    }
}

impl<L: RawLwLock, T> Sealed for HolderServesLock<L, T> {}

impl<L: RawLwLock, T> GroupLock for HolderServesLock<L, T> {
    type Raw = L;
    type Data = T;

    /// Runs `op` under the exclusive lock, here or on the thread that holds the lock; the key is
    /// ignored. See [`GroupLock::group_keyed`] for the rules on nesting and panics. A waiting
    /// member publishes nothing while it spins and `L`'s own wait event while it waits for the
    /// lock (`IPC:FlexLockGroupUpdate` while it sleeps on an operation a server detached).
    #[inline]
    fn group_keyed<R: Send>(&self, _key: u64, op: impl FnOnce(&mut T) -> R + Send) -> R {
        self.core.group_holder_serves(op)
    }

    fn core(&self) -> &Core<L, T> {
        &self.core
    }

    fn into_core(self) -> Core<L, T> {
        self.core
    }
}
