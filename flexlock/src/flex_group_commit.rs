//! The FlexLock: a lock of the [`RawLwLock`] trait with a group operation, under two policies.
//!
//! * [`Policy::Leader`] mirrors `ProcArrayEndTransaction` + `ProcArrayGroupClearXid` (PostgreSQL
//!   9.6+, `0e141c0fbb`): try the exclusive lock conditionally; otherwise push onto the group list;
//!   the thread that pushed onto an empty list is the leader: it takes the lock exclusively (new
//!   members keep joining while it waits), detaches the whole list with one swap, runs every
//!   member's operation, releases, and wakes the members.
//! * [`Policy::LastReleaser`] mirrors the 2011 FlexLock design of ProcArrayLock (never committed;
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
//! **Last releaser, race-free.** The trait has no "release, but keep it if someone queued" step,
//! so the policy is built from two halves of a queue-then-recheck handshake (the same shape as the
//! atomic LWLock's queue-then-recheck):
//! * *submitter*: push the operation, `fence(SeqCst)`, try the lock exclusively once more; if that
//!   succeeds, drain the queue itself (its own operation included, unless a drainer took it);
//! * *releaser* (every release through this lock: write guard, read guard, direct group op): an
//!   exclusive holder first drains the queue *while still holding*, so its release and the drain
//!   are one hold; then it releases, `fence(SeqCst)`, loads the queue head and, if non-empty, tries
//!   the lock exclusively and drains.
//!
//! By the two SeqCst fences, either the releaser's load sees the push, or the submitter's retry
//! sees the release (or a later acquisition, whose holder will check the queue on its own release).
//! So a queued operation is never stranded while the lock is free.
//!
//! **Holder serves (the fast variant).** The last-releaser handshake costs every release a
//! `fence(SeqCst)` and a load of the queue head's line, contended or not (and every shared
//! release too). [`HolderServesLock`] moves the whole burden to the submitter that waits: an
//! exclusive holder still drains the queue while it holds (a load of the head first, the detach
//! only if non-empty), and completes the operations it served *before* it releases (their
//! submitters are not asleep on them, so this is a few stores), but it releases without a
//! re-check; a submitter tries the lock once after its push, spins on its operation, and then
//! calls `L::acquire_or_wait(Exclusive)`,
//! which returns when the lock was released (then it re-checks its operation) or with the lock
//! (then it drains the queue, its own operation included unless a server took it). `L`'s
//! queue-then-recheck guarantees that a submitter waiting there is woken by the next release, so
//! invariant 2 becomes: *while an operation is queued, its submitter is running, or waiting in
//! `L`'s queue for a release, or a server or handover target is about to run it.* Submitters
//! whose operation may still be on the queue never announce SLEEPING on it (they sleep in `L`),
//! so servers do not post them; `L`'s release wakes them. The one exception is the handover: a
//! submitter whose own drain (after its push, under the exclusive lock) neither served its
//! operation nor was handed it knows the operation is on a chain handed to another member, which
//! takes the lock with a blocking acquire; it sleeps on the operation, as the other policies'
//! members do, and that member's wake or handover posts it (waiting in `L` instead would find
//! the lock free and take it for nothing, again and again, until the target got it). The same
//! holds for any submitter that sees its record *detached* (its link rewritten by a server's
//! detach, or the queue empty since its push): the operation is on a chain some server owns and
//! will serve or hand over, so after its spin that submitter sleeps on the operation instead of
//! waiting in `L`. Only a submitter whose record may still be on the queue (not detached, or a
//! chain of its record alone, which may leave no sign) waits in `L`. Measured (simulated,
//! `xeon-2s-broadwell`, 64 cores, end-xact at 64 clients): without the detached case, submitters
//! whose operation was already in a 64-operation batch outlasted their ~1 µs spin and queued in
//! `L` by the dozen; `L`'s wait-list lock (its `queue_self`, and every release's wakeup of all
//! WAIT_UNTIL_FREE waiters) then took 83 % of all line transfers (166 transfers and 536 µs of line
//! wait per operation, 0.117 M ops/s); with it, 24.5 transfers per operation and 0.57 M ops/s.
//! What remains is posting: nearly every submitter at 64 clients now sleeps on its operation,
//! and a holder completes (posts) before its release, inside the hold, where the last releaser
//! posts after it. A shared release is a plain release. Mutant
//! `flex_holder_sleeps_on_op` (models only) sleeps on the operation instead, trusting holders:
//! a push that the holder's load missed is stranded.
//!
//! **No shared holder sees half a batch.** Each *batch* (at most `max_group` operations, the
//! unit [`GroupStats`] counts as a group) is run inside one exclusive hold: the drainer holds
//! exclusively from a batch's first operation to its last, and an exclusive holder's release is
//! converted into the drain before the lock is given up. A whole queue is not one hold: past
//! `max_group` the rest is handed to its oldest member, which takes the lock anew, and a drainer
//! that found more operations queued after its release re-acquires (conditionally) for the next
//! batch; readers may run between batches. Shared holders exist only outside exclusive holds, so
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
//! A [`CritSection`] spans every step from the push until the operation is finished with; an
//! unwind that escapes the handling above aborts with a message instead of freeing a queued
//! operation.
//!
//! # State
//! The wrapped lock `L`, the group list head (`AtomicU32`, see `group_list.rs`), the value.
//! Under `LastReleaser` the list is the pending queue; under `Leader` it is the forming group.
//!
//! # Invariants
//! 1. Every operation passed to [`FlexLock::group`] runs exactly once, under the exclusive lock,
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

use crate::group_list::{self, GroupList};
use crate::op::{Op, Payload};
use crate::stats::{Counters, GroupStats, Stat};
use lwlock::elog::{panic_abort, CritSection};
use lwlock::sync::{fence, spin_loop, Ordering, UnsafeCell};
use lwlock::{AcquireOrWait, IpcEvent, Mode, Proc, RawLwLock, Tranche, WaitEvent, INVALID_PROC};
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// A panic caught from the wrapped lock in the middle of a protocol, kept until the protocol is
/// complete for every other thread and then re-raised in the thread whose lock call unwound.
#[derive(Default)]
struct Deferred(Option<Payload>);

impl Deferred {
    /// Keeps the first payload (a later one is dropped: one thread can raise one panic).
    fn keep(&mut self, payload: Payload) {
        if self.0.is_none() {
            self.0 = Some(payload);
        }
    }

    /// Re-raises the kept panic, unless this thread is already unwinding (a guard dropped during
    /// a panic): a second panic would abort, so the kept one is dropped.
    fn raise(self) {
        if let Some(payload) = self.0 {
            if !std::thread::panicking() {
                resume_unwind(payload);
            }
        }
    }

    /// A submitter's outcome: the kept panic if there is one (its operation ran, or was never
    /// run; see the module docs, "Unwinding"), otherwise its operation's result or panic. (A
    /// group call made from a destructor during another panic aborts if either is raised, as
    /// any panic there does.)
    fn finish<R>(self, outcome: impl FnOnce() -> R) -> R {
        match self.0 {
            Some(payload) => resume_unwind(payload),
            None => outcome(),
        }
    }
}

/// Operations one server runs per exclusive hold before handing the rest over, unless configured.
///
/// Measured with `examples/eot.rs` on a 2-core machine (2 cores, 32 threads, one 1 s run
/// each for h = 4, 16, 64): groups averaged 1.0–1.1 operations (largest 32), so the bound almost
/// never bit and the throughput differences were within the machine's noise. 64, above the thread
/// counts measured, keeps handovers for genuine pile-ups, where a bound protects the leader's own
/// latency (CC-Synch's reason for *h*).
pub const DEFAULT_MAX_GROUP: usize = 64;

/// How a FlexLock runs operations it cannot run at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Policy {
    /// An elected leader takes the lock and runs the group (`ProcArrayGroupClearXid`, 9.6+).
    Leader,
    /// Whoever releases the lock to free runs the queued operations (the 2011 FlexLock).
    LastReleaser,
}

/// Configuration of a [`FlexLock`] (and of a [`crate::ClogGroupLock`], which uses the leader
/// policy only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlexConfig {
    /// The policy.
    pub policy: Policy,
    /// The bound *h* on operations one server runs per exclusive hold before handing the rest of
    /// its chain over (at least 1).
    pub max_group: usize,
    /// The tranche the lock reports its waits under.
    pub tranche: Tranche,
}

impl FlexConfig {
    /// `policy` with [`DEFAULT_MAX_GROUP`] and [`Tranche::PROC_ARRAY`].
    pub const fn new(policy: Policy) -> Self {
        FlexConfig {
            policy,
            max_group: DEFAULT_MAX_GROUP,
            tranche: Tranche::PROC_ARRAY,
        }
    }
}

impl Default for FlexConfig {
    fn default() -> Self {
        Self::new(Policy::Leader)
    }
}

/// What a drain found of the calling thread's own queued operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mine {
    /// Not on any chain this drain served: someone else will run it and post us.
    NotSeen,
    /// Served by this drain.
    Done,
    /// The rest of a chain starting with it was handed to us: take the lock and serve it.
    HandedOver,
}

/// The lock, the list and the value: everything both lock types share.
pub(crate) struct Core<L, T> {
    raw: L,
    list: GroupList,
    policy: Policy,
    /// The holder-serves variant ([`HolderServesLock`]): `policy` is `LastReleaser` (queue, new
    /// readers drain first, exclusive releasers drain while holding) but no release re-checks
    /// the queue; unserved submitters wait for the lock in `L`'s own queue instead.
    holder_serves: bool,
    max_group: usize,
    stats: Counters,
    data: UnsafeCell<T>,
}

impl<L: RawLwLock, T> Core<L, T> {
    pub(crate) fn new(data: T, policy: Policy, max_group: usize, tranche: Tranche) -> Self {
        assert!(max_group >= 1, "flexlock: max_group must be at least 1");
        Core {
            raw: L::with_tranche(tranche),
            list: GroupList::new(),
            policy,
            holder_serves: false,
            max_group,
            stats: Counters::new(),
            data: UnsafeCell::new(data),
        }
    }

    /// A core for [`HolderServesLock`].
    fn new_holder_serves(data: T, max_group: usize, tranche: Tranche) -> Self {
        Core {
            holder_serves: true,
            ..Self::new(data, Policy::LastReleaser, max_group, tranche)
        }
    }

    pub(crate) fn raw(&self) -> &L {
        &self.raw
    }

    pub(crate) fn stats(&self) -> Option<GroupStats> {
        self.stats.snapshot()
    }

    pub(crate) fn bump(&self, which: Stat) {
        self.stats.bump(which, 1);
    }

    pub(crate) fn group_head(&self) -> Option<u32> {
        let h = self.list.head();
        (h != INVALID_PROC).then_some(h)
    }

    pub(crate) fn into_inner(self) -> T {
        self.data.into_inner()
    }

    /// A pointer to the value for guards (untracked under loom beyond this instant).
    #[inline]
    fn data_ptr(&self) -> *mut T {
        #[cfg(not(loom))]
        return self.data.get();
        #[cfg(loom)]
        return self.data.with_mut(|p| p);
    }

    /// A pointer to the value for shared guards: under loom a shared (read) access, so that two
    /// concurrent readers are not reported as a race.
    #[inline]
    fn data_ptr_shared(&self) -> *const T {
        #[cfg(not(loom))]
        return self.data.get();
        #[cfg(loom)]
        return self.data.with(|p| p);
    }

    // ---- guards ----------------------------------------------------------------------------

    pub(crate) fn read(&self) -> FlexReadGuard<'_, L, T> {
        if self.policy == Policy::LastReleaser && self.list.head() != INVALID_PROC {
            // Queued operations go before a new reader (the 2011 design): drain them first.
            drop(self.write());
        }
        self.raw.acquire(Mode::Shared);
        FlexReadGuard {
            core: self,
            _not_send: PhantomData,
        }
    }

    pub(crate) fn try_read(&self) -> Option<FlexReadGuard<'_, L, T>> {
        if self.policy == Policy::LastReleaser && self.list.head() != INVALID_PROC {
            return None;
        }
        // Not `then_some`: its argument, a guard, would be built (and dropped, releasing a hold
        // never taken) when the acquire fails.
        if !self.raw.conditional_acquire(Mode::Shared) {
            return None;
        }
        Some(FlexReadGuard {
            core: self,
            _not_send: PhantomData,
        })
    }

    pub(crate) fn write(&self) -> FlexWriteGuard<'_, L, T> {
        self.raw.acquire(Mode::Exclusive);
        self.bump(Stat::ExclusiveAcquires);
        FlexWriteGuard {
            core: self,
            _not_send: PhantomData,
        }
    }

    pub(crate) fn try_write(&self) -> Option<FlexWriteGuard<'_, L, T>> {
        if !self.raw.conditional_acquire(Mode::Exclusive) {
            return None;
        }
        self.bump(Stat::ExclusiveAcquires);
        Some(FlexWriteGuard {
            core: self,
            _not_send: PhantomData,
        })
    }

    /// Releases an exclusive hold (LastReleaser: after draining the queue).
    ///
    /// # Safety
    /// The calling thread holds the lock exclusively (through a guard being dropped).
    #[inline]
    unsafe fn release_exclusive(&self) {
        // Holder-serves with an empty queue (the uncontended case): a plain release; the
        // drain's load of the head is this one.
        if self.policy == Policy::Leader || (self.holder_serves && self.list.head() == INVALID_PROC)
        {
            // SAFETY: forwarded caller contract.
            unsafe { self.release_plain(Mode::Exclusive) };
            return;
        }
        if !self.holder_serves && self.list.head() == INVALID_PROC {
            // Last releaser, nothing queued before the release: what the drain would do with
            // an empty chain (release, then the releaser half of the handshake), without
            // entering it. Same protocol, fewer instructions.
            let mut deferred = Deferred::default();
            // SAFETY: the caller holds it exclusively. An unwinding release gave the hold up
            // (trait rule), so the re-check is still owed.
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| unsafe {
                self.raw.release(Mode::Exclusive)
            })) {
                deferred.keep(p);
            }
            self.recheck_after_release(INVALID_PROC, &mut deferred);
            deferred.raise();
            return;
        }
        // SAFETY: forwarded caller contract.
        unsafe { self.release_exclusive_drain() }
    }

    /// `L::release(mode)`, an unwind caught so that a release unwinding while a guard is dropped
    /// during another panic does not abort the process (`raise` drops it then); otherwise it
    /// propagates as before.
    ///
    /// # Safety
    /// The calling thread holds the lock in `mode`.
    #[inline]
    unsafe fn release_plain(&self, mode: Mode) {
        let mut deferred = Deferred::default();
        // SAFETY: the caller holds it in `mode`.
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| unsafe { self.raw.release(mode) })) {
            deferred.keep(p);
        }
        deferred.raise();
    }

    /// [`release_exclusive`](Self::release_exclusive) for the last-releaser protocols.
    ///
    /// # Safety
    /// The calling thread holds the lock exclusively.
    #[inline(never)]
    unsafe fn release_exclusive_drain(&self) {
        match self.policy {
            Policy::Leader => unreachable!("flexlock: the leader policy releases plainly"),
            Policy::LastReleaser => {
                let mut deferred = Deferred::default();
                // SAFETY: the caller holds it exclusively; a thread releasing a guard is not on the
                // queue (it is not inside `group`), so its own operation cannot be met.
                let mine = unsafe {
                    self.drain_release(
                        INVALID_PROC,
                        INVALID_PROC,
                        &mut deferred,
                        !self.holder_serves,
                    )
                };
                debug_assert_eq!(mine, Mine::NotSeen);
                deferred.raise();
            }
        }
    }

    /// Releases a shared hold (LastReleaser: then drains, if the lock is free and ops are queued).
    ///
    /// # Safety
    /// The calling thread holds the lock shared.
    unsafe fn release_shared(&self) {
        // Holder-serves: a shared release owes the queue nothing (its submitters wait for the
        // lock in `L`'s own queue, which `L`'s release wakes), so it is a plain release.
        let policy = if self.holder_serves {
            Policy::Leader
        } else {
            self.policy
        };
        match policy {
            Policy::Leader => {
                let mut deferred = Deferred::default();
                // SAFETY: the caller holds it shared (caught as in `release_exclusive`).
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| unsafe {
                    self.raw.release(Mode::Shared)
                })) {
                    deferred.keep(p);
                }
                deferred.raise();
            }
            Policy::LastReleaser => {
                let mut deferred = Deferred::default();
                // SAFETY: the caller holds it shared. An unwinding release gave the hold up
                // (trait rule), so the re-check below is still owed to queued submitters.
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| unsafe {
                    self.raw.release(Mode::Shared)
                })) {
                    deferred.keep(p);
                }
                self.recheck_after_release(INVALID_PROC, &mut deferred);
                deferred.raise();
            }
        }
    }

    /// The releaser half of the handshake: after a release, if operations are queued and the lock
    /// can be had, drain them. Returns what happened to `me`'s operation.
    fn recheck_after_release(&self, me: u32, deferred: &mut Deferred) -> Mine {
        // SeqCst fence: pairs with the submitter's fence in `group_last_releaser` (Dekker).
        // Mutant `flex_reader_no_fence` (models only): without it a shared releaser may miss a
        // push while the submitter's re-check misses the release.
        if !lwlock::mutant!("flex_reader_no_fence") {
            fence(Ordering::SeqCst);
        }
        if self.list.head() == INVALID_PROC || !self.try_exclusive_owed(deferred) {
            return Mine::NotSeen;
        }
        self.bump(Stat::ExclusiveAcquires);
        // SAFETY: just acquired exclusively.
        unsafe { self.drain_release(INVALID_PROC, me, deferred, true) }
    }

    /// A LastReleaser `conditional_acquire(Exclusive)` that is owed to queued operations (this
    /// thread may be the only one left to drain them), so it cannot give up on an unwind: the
    /// first unwind is kept in `deferred` and the call retried; a second one aborts.
    fn try_exclusive_owed(&self, deferred: &mut Deferred) -> bool {
        match catch_unwind(AssertUnwindSafe(|| {
            self.raw.conditional_acquire(Mode::Exclusive)
        })) {
            Ok(taken) => taken,
            Err(payload) => {
                deferred.keep(payload);
                // Mutant `flex_unwind_no_retry` (models only): give up instead of retrying, which
                // strands the queue when the lock is free.
                if lwlock::mutant!("flex_unwind_no_retry") {
                    return false;
                }
                match catch_unwind(AssertUnwindSafe(|| {
                    self.raw.conditional_acquire(Mode::Exclusive)
                })) {
                    Ok(taken) => taken,
                    Err(_) => panic_abort(format_args!(
                        "flexlock: conditional_acquire of lock {:?} ({}) unwound twice while \
                         group operations were queued; continuing could strand them",
                        self.raw.tranche().name(),
                        L::NAME
                    )),
                }
            }
        }
    }

    /// Runs `chain` (if any) and then every batch detached from the queue, under the exclusive hold
    /// the caller has, at most `max_group` operations; releases; wakes; hands the remainder over or
    /// re-checks the queue. `me` is the caller's record number if it has an operation queued
    /// (`INVALID_PROC` otherwise). `recheck`: do the releaser half of the handshake after the
    /// release (the last-releaser protocol); false for the holder-serves variant, whose unserved
    /// submitters wait for the lock themselves.
    ///
    /// A release or re-acquire of the lock that unwinds is handled as the module docs say
    /// ("Unwinding"); its panic is kept in `deferred` for the caller to raise.
    ///
    /// # Safety
    /// The calling thread holds the lock exclusively; `chain` is `INVALID_PROC` or a chain the
    /// caller owns (a handover to `me`).
    unsafe fn drain_release(
        &self,
        chain: u32,
        me: u32,
        deferred: &mut Deferred,
        recheck: bool,
    ) -> Mine {
        // Detached chains are reachable only from this frame until they are woken or handed
        // over: nothing below may unwind (lock calls are caught).
        let crit = CritSection::start("flexlock: serving a group");
        // SAFETY: forwarded caller contract.
        let mine = unsafe { self.drain_release_inner(chain, me, deferred, recheck) };
        crit.end();
        mine
    }

    /// [`drain_release`](Self::drain_release), inside its critical section.
    ///
    /// # Safety
    /// As [`drain_release`](Self::drain_release).
    unsafe fn drain_release_inner(
        &self,
        mut chain: u32,
        me: u32,
        deferred: &mut Deferred,
        recheck: bool,
    ) -> Mine {
        let mut mine = Mine::NotSeen;
        let mut total = 0usize;
        loop {
            let mut done_first = INVALID_PROC;
            let mut done_last = INVALID_PROC;
            let mut budget = self.max_group;
            let mut rest = INVALID_PROC;
            self.data.with_mut(|data| loop {
                if chain == INVALID_PROC {
                    // Load first: the common case is an empty queue, and a load leaves the
                    // head's line shared where the detach's swap would take it exclusively on
                    // every release. Pure overhead removal: a push this load misses is one
                    // concurrent with the hold, which the post-release re-check (or, holder-
                    // serves, the submitter's own wait for the lock) covers exactly as it
                    // covers a push that lands just after the swap.
                    if self.list.head() == INVALID_PROC {
                        break;
                    }
                    chain = self.list.detach_fifo();
                    if chain == INVALID_PROC {
                        break;
                    }
                }
                // SAFETY: we hold the lock exclusively (caller contract, or re-acquired below) and
                // `data` is its value; `chain` was detached by us or handed to us (owned), and
                // every op on it was submitted to this lock.
                let s =
                    unsafe { group_list::serve(chain, budget, data as *mut (), me, &self.stats) };
                if done_first == INVALID_PROC {
                    done_first = s.first;
                } else {
                    // Append this batch to the wake chain; the previous batch was served
                    // entirely, so its last link was INVALID and nobody else reads it.
                    Proc::by_number(done_last)
                        .group
                        .next
                        .store(s.first, Ordering::Relaxed);
                }
                done_last = s.last;
                budget -= s.count;
                total += s.count;
                chain = INVALID_PROC;
                if budget == 0 {
                    rest = s.rest;
                    break;
                }
            });
            // Holder-serves: complete the served operations *before* the release. Their
            // submitters sleep in `L`, not on the operation (except members of a handed-over
            // chain, rare), so this usually posts nothing and makes no system call under the
            // lock; completing them after the release would let
            // submitters that `L`'s release wakes find their operation not yet done and take
            // the lock again for nothing (measured: 64 threads on 2 cores, 3 M instead of 30 M
            // ops/s).
            if !recheck {
                if group_list::wake(done_first, done_last, me) {
                    mine = Mine::Done;
                }
                // The handover too (it posts only a target that sleeps on its operation): a
                // target that the release below wakes from `L`'s queue then finds its chain at
                // once.
                if rest != INVALID_PROC && group_list::hand_over(rest, me) {
                    mine = Mine::HandedOver;
                }
            }
            // SAFETY: held exclusively since the caller's acquire or ours below. An unwinding
            // release has given the hold up (trait rule): go on as after a normal one.
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| unsafe {
                self.raw.release(Mode::Exclusive)
            })) {
                deferred.keep(p);
            }
            if recheck && group_list::wake(done_first, done_last, me) {
                mine = Mine::Done;
            }
            if rest != INVALID_PROC {
                // The first unserved member takes the lock and goes on (it will also drain the
                // queue, so invariant 2 holds without our re-check).
                if recheck && group_list::hand_over(rest, me) {
                    mine = Mine::HandedOver;
                }
                return mine;
            }
            if !recheck {
                // Holder-serves: submitters the drain did not serve wait for the lock in `L`'s
                // queue, which the release above woke; they drain what is left.
                return mine;
            }
            // The releaser half of the handshake (see `recheck_after_release`).
            fence(Ordering::SeqCst);
            if self.list.head() == INVALID_PROC {
                return mine;
            }
            if total >= self.max_group {
                // Served our share: hand the queue to its oldest member instead of looping.
                let chain = self.list.detach_fifo();
                if chain != INVALID_PROC && group_list::hand_over(chain, me) {
                    mine = Mine::HandedOver;
                }
                return mine;
            }
            if !self.try_exclusive_owed(deferred) {
                // The holder checks the queue when it releases (invariant 2).
                return mine;
            }
            self.bump(Stat::ExclusiveAcquires);
        }
    }

    // ---- group operations ------------------------------------------------------------------

    /// Runs `f` at once if the lock can be had exclusively without waiting. The release goes
    /// through the policy (LastReleaser drains), also if `f` panics.
    fn try_direct<R, F: FnOnce(&mut T) -> R>(&self, f: F) -> Result<R, F> {
        let Some(guard) = self.try_write() else {
            return Err(f);
        };
        self.bump(Stat::OpsBySelf);
        // SAFETY: `guard` holds the lock exclusively until after this closure (if `f` panics, the
        // guard is dropped while unwinding, after the closure's frame is gone).
        let r = self.data.with_mut(move |data| f(unsafe { &mut *data }));
        drop(guard);
        Ok(r)
    }

    /// The leader protocol (`ProcArrayGroupClearXid`; with a key rule,
    /// `TransactionGroupUpdateXidStatus`). `key` is stored in the caller's record for joiners to
    /// read; `admits(head)` is the admission rule a joiner applies to the record at the list head
    /// before each push attempt (`true` for any head: no rule). A refused joiner takes the lock
    /// exclusively on its own (the clog fallback).
    pub(crate) fn group_leader<R, F>(
        &self,
        f: F,
        event: WaitEvent,
        key: u64,
        admits: impl FnMut(u32) -> bool,
    ) -> R
    where
        F: FnOnce(&mut T) -> R + Send,
        R: Send,
    {
        let f = match self.try_direct(f) {
            Ok(r) => return r,
            Err(f) => f,
        };
        let me = Proc::current();
        let op = Op::<T, F, R>::new(f);
        group_list::prepare(me, op.header(), key);
        let pushed = self.list.push_if(me, admits);
        let prev = match pushed {
            Ok(prev) => prev,
            Err(_) => {
                // Not pushed: nothing of ours is reachable by other threads.
                // Clog fallback: a blocking exclusive acquire of our own.
                group_list::unprepare(me);
                self.bump(Stat::ClogFallbacks);
                let guard = self.write();
                self.bump(Stat::OpsBySelf);
                // SAFETY: `guard` holds the lock exclusively; `data_ptr` is its value; the op is
                // ours and has not run.
                self.data.with_mut(|data| unsafe { op.run_here(data) });
                drop(guard);
                return op.take();
            }
        };
        // Pushed: `op` lives on this frame and other threads may run it, so this frame must not
        // be left before the operation is finished with (see "Unwinding").
        let crit = CritSection::start("flexlock: a group operation is queued on this stack");
        let mut deferred = Deferred::default();
        // Leader: Some(INVALID) = detach the list; Some(me) = serve the chain handed to me.
        let mut lead = (prev == INVALID_PROC).then_some(INVALID_PROC);
        loop {
            match lead {
                None => {
                    op.wait(me, event);
                    if op.take_handover() {
                        lead = Some(me.number());
                        continue;
                    }
                    break;
                }
                Some(handed) => {
                    if let Err(p) =
                        catch_unwind(AssertUnwindSafe(|| self.raw.acquire(Mode::Exclusive)))
                    {
                        // We hold nothing and our operation has not run. Leave the chain we
                        // head (we are its oldest member: first in line) and hand the rest to
                        // its next member, which takes the lock and serves it.
                        let chain = if handed == INVALID_PROC {
                            self.list.detach_fifo()
                        } else {
                            handed
                        };
                        debug_assert_eq!(chain, me.number());
                        let rest = group_list::leave(me);
                        // Mutant `flex_leader_unwind_strands` (models only): leave without
                        // handing the rest over, which strands every follower.
                        if rest != INVALID_PROC && !lwlock::mutant!("flex_leader_unwind_strands") {
                            let to_me = group_list::hand_over(rest, me.number());
                            debug_assert!(!to_me);
                        }
                        crit.end();
                        resume_unwind(p);
                    }
                    self.bump(Stat::ExclusiveAcquires);
                    let chain = if handed == INVALID_PROC {
                        // Closes the group: later arrivals start the next one.
                        self.list.detach_fifo()
                    } else {
                        handed
                    };
                    // We pushed onto an empty list, so we are the oldest member: first in line.
                    debug_assert_eq!(chain, me.number());
                    let s = self.data.with_mut(|data| {
                        // SAFETY: held exclusively just above; the chain was detached by us or
                        // handed to us; all its ops were submitted to this lock.
                        unsafe {
                            group_list::serve(
                                chain,
                                self.max_group,
                                data as *mut (),
                                me.number(),
                                &self.stats,
                            )
                        }
                    });
                    // SAFETY: acquired exclusively above. An unwinding release has given the
                    // hold up (trait rule): the members are still woken and the rest handed
                    // over, then the panic is ours.
                    if let Err(p) = catch_unwind(AssertUnwindSafe(|| unsafe {
                        self.raw.release(Mode::Exclusive)
                    })) {
                        deferred.keep(p);
                        // Mutant `flex_release_unwind_no_wake` (models only): skip the wake,
                        // leaving served members asleep.
                        if lwlock::mutant!("flex_release_unwind_no_wake") {
                            break;
                        }
                    }
                    let served_me = group_list::wake(s.first, s.last, me.number());
                    debug_assert!(served_me);
                    if s.rest != INVALID_PROC {
                        let to_me = group_list::hand_over(s.rest, me.number());
                        debug_assert!(!to_me);
                    }
                    break;
                }
            }
        }
        crit.end();
        deferred.finish(|| op.take())
    }

    /// `L::acquire_or_wait(Exclusive)` for a holder-serves submitter whose operation is queued:
    /// like [`try_exclusive_owed`](Self::try_exclusive_owed), a first unwind is kept in
    /// `deferred` and the call retried (the operation must be finished with before this frame
    /// is left); a second one aborts.
    fn acquire_or_wait_owed(&self, deferred: &mut Deferred) -> AcquireOrWait {
        match catch_unwind(AssertUnwindSafe(|| {
            self.raw.acquire_or_wait(Mode::Exclusive)
        })) {
            Ok(outcome) => outcome,
            Err(payload) => {
                deferred.keep(payload);
                match catch_unwind(AssertUnwindSafe(|| {
                    self.raw.acquire_or_wait(Mode::Exclusive)
                })) {
                    Ok(outcome) => outcome,
                    Err(_) => panic_abort(format_args!(
                        "flexlock: acquire_or_wait of lock {:?} ({}) unwound twice while a \
                         group operation was queued; continuing could strand it",
                        self.raw.tranche().name(),
                        L::NAME
                    )),
                }
            }
        }
    }

    /// The holder-serves protocol ([`HolderServesLock`]): queue; exclusive holders serve the
    /// queue before they release; an unserved submitter tries the lock once, spins on its
    /// operation and then, if its record was detached by a server, sleeps on the operation (the
    /// server posts it), otherwise waits for the lock in `L`'s own queue (`acquire_or_wait`), so
    /// that no release owes it a re-check.
    fn group_holder_serves<R, F>(&self, f: F) -> R
    where
        F: FnOnce(&mut T) -> R + Send,
        R: Send,
    {
        let f = match self.try_direct(f) {
            Ok(r) => return r,
            Err(f) => f,
        };
        let me = Proc::current();
        let op = Op::<T, F, R>::new(f);
        group_list::prepare(me, op.header(), 0);
        let pushed = self.list.push_if(me, |_| true);
        debug_assert!(pushed.is_ok());
        // The link our push stored (the record below ours, `INVALID_PROC` if the list was
        // empty): while our operation is pending, only a server that detached it rewrites it
        // (`link_rewritten`).
        let below = pushed.unwrap_or(INVALID_PROC);
        // Pushed: `op` lives on this frame and other threads may run it (see "Unwinding").
        let crit = CritSection::start("flexlock: a group operation is queued on this stack");
        let mut deferred = Deferred::default();
        let mut mine = Mine::NotSeen;
        // Whether our record has been taken off the queue by a server (a detach), so that its
        // operation is on a chain that server owns and will serve or hand over (group_list.rs,
        // invariant 2; every server completes or hands over what it detached, and completing
        // posts a submitter that announced SLEEPING). Two signs, each sufficient:
        // * our link is no longer `below`: after our push only a detach writes our link (it
        //   reverses the chain in place: our link becomes the record pushed after ours, never
        //   the one below ours, or `INVALID_PROC` if ours was the newest; pushes above ours
        //   write their own links), or, after a detach, the same server's batch append and
        //   `wake`'s link reset (which may turn the sign back off: a false "not detached" only
        //   sends us to `L`, the safe path, whose release by the holder wakes us). No write of
        //   an earlier use of our record can land late: every server write comes before its
        //   `complete` (Release), which we acquired before pushing again. The one detach it
        //   cannot show is of a chain of our record alone (`INVALID_PROC` stays
        //   `INVALID_PROC`); the second sign may still show that one;
        // * the head is `INVALID_PROC` (checked once per round, before `L`, since the head's line
        //   is contended): the list empties only by a detach, and any detach after our push
        //   takes our record (it stays on the stack until detached).
        // Relaxed: no data is read on the strength of it. Coherence of the one location is
        // enough: seeing the detacher's store (or the empty head written by its swap) means the
        // detach has happened; the operation's result is then read through `op.wait`'s Acquire
        // of the completion state, as for every member.
        let link_rewritten = || me.group.next.load(Ordering::Relaxed) != below;
        // Set once a drain of ours (under the exclusive lock, after our push) left our operation
        // neither served nor handed to us: then it is on a chain handed to another member (see
        // the `NotSeen` arm), and we sleep on it like the other policies' members.
        let mut handed_elsewhere = false;
        // One attempt right after the push (no fence: a miss only costs the spin below): the
        // holder we failed against has often released already, having missed our push.
        if self.try_exclusive_owed(&mut deferred) {
            self.bump(Stat::ExclusiveAcquires);
            // SAFETY: just acquired exclusively.
            mine = unsafe { self.drain_release(INVALID_PROC, me.number(), &mut deferred, false) };
            handed_elsewhere = mine == Mine::NotSeen;
        }
        let mut spins = 0u32;
        loop {
            match mine {
                Mine::Done => break,
                Mine::HandedOver => {
                    if let Err(p) =
                        catch_unwind(AssertUnwindSafe(|| self.raw.acquire(Mode::Exclusive)))
                    {
                        // We hold nothing; our operation has not run. Leave the chain we head
                        // and hand the rest over. Submitters still queued wait for the lock
                        // themselves, so no re-check is owed.
                        let rest = group_list::leave(me);
                        if rest != INVALID_PROC {
                            let to_me = group_list::hand_over(rest, me.number());
                            debug_assert!(!to_me);
                        }
                        crit.end();
                        drop(deferred); // the acquire's panic is the one to report
                        resume_unwind(p);
                    }
                    self.bump(Stat::ExclusiveAcquires);
                    // SAFETY: just acquired exclusively; the chain starting at our record was
                    // handed to us (we own it).
                    mine = unsafe {
                        self.drain_release(me.number(), me.number(), &mut deferred, false)
                    };
                }
                Mine::NotSeen => {
                    if op.is_done() {
                        if op.take_handover() {
                            mine = Mine::HandedOver;
                            continue;
                        }
                        break;
                    }
                    // Mutant `flex_holder_sleeps_on_op` (models only): sleep on the operation
                    // as the last-releaser members do, trusting a holder to serve it. Without
                    // the releaser's re-check a push that the holder's in-hold load missed is
                    // stranded: the model must report the deadlock.
                    if lwlock::mutant!("flex_holder_sleeps_on_op") {
                        op.wait(me, WaitEvent::ipc(IpcEvent::FlexLockGroupUpdate));
                        continue;
                    }
                    // Our operation was pushed before a drain of ours looked at the queue, and
                    // that drain (holding the lock exclusively, so no other server was mid-pass)
                    // neither served it nor handed it to us: it had been detached already and
                    // is on the unserved rest of a chain handed to another member (every server
                    // completes and hands over before its release). That member takes the lock
                    // with a blocking `acquire` and serves it or hands it on; operations never
                    // return to the queue, so neither the lock nor the queue will bring it to
                    // us. Sleep on the operation, as the members of the other policies do: the
                    // server's `wake` or `hand_over` posts us (we announce SLEEPING). Without
                    // this (the first version) such a submitter found the lock free, took it
                    // through `acquire_or_wait`, drained an empty queue and released, in a
                    // loop, until the handover target got the lock: hundreds of thousands of
                    // lock round trips in a run of 96 operations with a bound of 4, competing
                    // with the target's own acquire (regression test in `holder_serves.rs`).
                    // Mutant `flex_holder_handover_spins` (tests only): that first version; the
                    // regression test must fail on it.
                    if handed_elsewhere && !lwlock::mutant!("flex_holder_handover_spins") {
                        op.wait(me, WaitEvent::ipc(IpcEvent::FlexLockGroupUpdate));
                        continue;
                    }
                    // `spin_limit`: the production count, or fewer under the models (loom never
                    // lets a submitter spin 200 times while a server is busy, so the paths below
                    // would go unexplored; models `holder_detached_sleep2` (the empty-head
                    // sign) and `holder_detached_chain3` (the rewritten link)). A detached
                    // submitter spins again in `op.wait` before it sleeps.
                    if spins < lwlock::sync::spin_limit(crate::op::SPINS_BEFORE_SLEEP) {
                        // Spin on our operation only (a holder serving it completes it before
                        // its release); the lock is tried again by `acquire_or_wait` below.
                        spins += 1;
                        spin_loop();
                        continue;
                    }
                    // Detached by a server (see `link_rewritten`): the same reasoning as the
                    // handover case above; the server serves or hands over our operation and
                    // posts us. Waiting in `L` instead (the first version) is what collapsed at
                    // many cores: a 64-operation batch takes longer to serve than the spin
                    // above, so submitters whose operation was already in a server's hands
                    // queued in `L` by the dozen, and `L`'s wait-list lock (queue_self, and
                    // the release's wakeup of every WAIT_UNTIL_FREE waiter) took 83 % of all
                    // line transfers (simulated, 64 cores; the module docs give the figures).
                    // Checked once per round, after the spin, not on every spin: the link
                    // lives on our record's line, which the server writes while it serves
                    // (polling it cost 20 % at 4 simulated cores).
                    if link_rewritten() || self.list.head() == INVALID_PROC {
                        op.wait(me, WaitEvent::ipc(IpcEvent::FlexLockGroupUpdate));
                        continue;
                    }
                    // Wait for the lock in `L`'s own queue: `L`'s queue-then-recheck makes sure
                    // that a release after our failed attempt wakes us, which is the handshake
                    // the last-releaser design does with two SeqCst fences per release.
                    if self.acquire_or_wait_owed(&mut deferred) == AcquireOrWait::Acquired {
                        self.bump(Stat::ExclusiveAcquires);
                        // SAFETY: just acquired exclusively.
                        mine = unsafe {
                            self.drain_release(INVALID_PROC, me.number(), &mut deferred, false)
                        };
                        handed_elsewhere = mine == Mine::NotSeen;
                    } else {
                        // Woken by a release: spin again before queueing in `L` again.
                        spins = 0;
                    }
                }
            }
        }
        crit.end();
        deferred.finish(|| op.take())
    }

    /// The last-releaser protocol (the 2011 FlexLock).
    fn group_last_releaser<R, F>(&self, f: F) -> R
    where
        F: FnOnce(&mut T) -> R + Send,
        R: Send,
    {
        let f = match self.try_direct(f) {
            Ok(r) => return r,
            Err(f) => f,
        };
        let me = Proc::current();
        let op = Op::<T, F, R>::new(f);
        group_list::prepare(me, op.header(), 0);
        let pushed = self.list.push_if(me, |_| true);
        debug_assert!(pushed.is_ok());
        // Pushed: `op` lives on this frame and other threads may run it (see "Unwinding").
        let crit = CritSection::start("flexlock: a group operation is queued on this stack");
        let mut deferred = Deferred::default();
        let mut mine = Mine::NotSeen;
        // Mutant `flex_no_recheck` (models only, a build of its own): the submitter does not
        // retry the lock after queueing. If the holder released (and found the queue empty)
        // between the submitter's failed attempt and its push, the operation is stranded and the
        // submitter sleeps forever: a model must report the deadlock.
        if !lwlock::mutant!("flex_no_recheck") {
            // The submitter half of the handshake: the holder may have released (finding the
            // queue empty) after our failed attempt; if the lock is free now, drain it ourselves.
            // SeqCst fence: pairs with the releaser's fence (module docs).
            fence(Ordering::SeqCst);
            if self.try_exclusive_owed(&mut deferred) {
                self.bump(Stat::ExclusiveAcquires);
                // SAFETY: just acquired exclusively.
                mine =
                    unsafe { self.drain_release(INVALID_PROC, me.number(), &mut deferred, true) };
            }
        }
        loop {
            match mine {
                Mine::Done => break,
                Mine::HandedOver => {
                    if let Err(p) =
                        catch_unwind(AssertUnwindSafe(|| self.raw.acquire(Mode::Exclusive)))
                    {
                        // We hold nothing; our operation has not run. Leave the chain we head
                        // and hand the rest over; with no rest, the queue may still hold
                        // operations whose submitters count on the handover target (us) to
                        // drain: do the releaser half of the handshake first.
                        let rest = group_list::leave(me);
                        if rest != INVALID_PROC {
                            let to_me = group_list::hand_over(rest, me.number());
                            debug_assert!(!to_me);
                        } else {
                            let m = self.recheck_after_release(INVALID_PROC, &mut deferred);
                            debug_assert_eq!(m, Mine::NotSeen);
                        }
                        crit.end();
                        drop(deferred); // the acquire's panic is the one to report
                        resume_unwind(p);
                    }
                    self.bump(Stat::ExclusiveAcquires);
                    // SAFETY: just acquired exclusively; the chain starting at our record was
                    // handed to us (we own it).
                    mine = unsafe {
                        self.drain_release(me.number(), me.number(), &mut deferred, true)
                    };
                }
                Mine::NotSeen => {
                    op.wait(me, WaitEvent::ipc(IpcEvent::FlexLockGroupUpdate));
                    if !op.take_handover() {
                        break;
                    }
                    mine = Mine::HandedOver;
                }
            }
        }
        crit.end();
        deferred.finish(|| op.take())
    }
}

/// A shared/exclusive lock over `L` whose exclusive operations can be combined: see the
/// [module docs](self) for the two policies.
///
/// ```
/// use flexlock::{FlexLock, Policy};
/// use lwlock::RawAtomicLwLock;
/// let lock = FlexLock::<RawAtomicLwLock, Vec<u32>>::new(vec![0; 4], Policy::Leader);
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
            .field("policy", &self.core.policy)
            .field("max_group", &self.core.max_group)
            .finish_non_exhaustive()
    }
}

impl<L: RawLwLock, T> FlexLock<L, T> {
    /// A lock with `policy`, [`DEFAULT_MAX_GROUP`] and tranche [`Tranche::PROC_ARRAY`].
    pub fn new(data: T, policy: Policy) -> Self {
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
    pub fn policy(&self) -> Policy {
        self.core.policy
    }

    /// Takes the lock shared. Under `LastReleaser`, queued operations are applied first.
    pub fn read(&self) -> FlexReadGuard<'_, L, T> {
        self.core.read()
    }

    /// Takes the lock shared if that is possible without waiting (and, under `LastReleaser`, no
    /// operation is queued).
    pub fn try_read(&self) -> Option<FlexReadGuard<'_, L, T>> {
        self.core.try_read()
    }

    /// Takes the lock exclusively. Under `LastReleaser`, dropping the guard applies the operations
    /// queued meanwhile before the lock is released.
    pub fn write(&self) -> FlexWriteGuard<'_, L, T> {
        self.core.write()
    }

    /// Takes the lock exclusively if that is possible without waiting.
    pub fn try_write(&self) -> Option<FlexWriteGuard<'_, L, T>> {
        self.core.try_write()
    }

    /// Runs `op` on the value under the exclusive lock, here or on another thread (the leader, or
    /// the last releaser), and returns its result. If `op` panics, the panic is re-raised here
    /// after the rest of the group ran and the lock was released.
    ///
    /// `op` must not take this lock (it runs while it is held exclusively) and must not start
    /// another group operation on any lock: it may run as part of a group, and a nested group
    /// operation from a thread whose own operation is pending panics. (When `op` runs directly
    /// on its own thread, nesting on another lock is not detected and works.)
    ///
    /// A member waiting for its server publishes the wait event of the group it is in, chosen by
    /// the lock's tranche: `IPC:ProcArrayGroupUpdate` for [`Tranche::PROC_ARRAY`] (as
    /// `ProcArrayGroupClearXid`), `IPC:XactGroupUpdate` for [`Tranche::XACT_SLRU`], and
    /// `IPC:FlexLockGroupUpdate` for any other tranche and for the last-releaser policy.
    pub fn group<R: Send>(&self, op: impl FnOnce(&mut T) -> R + Send) -> R {
        match self.core.policy {
            Policy::Leader => {
                let event = match self.core.raw().tranche() {
                    Tranche::PROC_ARRAY => IpcEvent::ProcArrayGroupUpdate,
                    Tranche::XACT_SLRU => IpcEvent::XactGroupUpdate,
                    _ => IpcEvent::FlexLockGroupUpdate,
                };
                self.core
                    .group_leader(op, WaitEvent::ipc(event), 0, |_| true)
            }
            Policy::LastReleaser => self.core.group_last_releaser(op),
        }
    }

    /// Group counters (`Some` only with the `stats` feature).
    pub fn stats(&self) -> Option<GroupStats> {
        self.core.stats()
    }

    /// The wrapped lock, for inspection (`is_locked`, `stats`) and for configuring it (a
    /// `FaultLock`'s plan, say).
    ///
    /// Acquiring and releasing through it bypasses the policy: under [`Policy::LastReleaser`] a
    /// release through `raw()` does not run the operations queued meanwhile (the last-releaser
    /// re-check is in this type's guards and group calls), so they wait for the next release
    /// through the FlexLock, which may never come. Take holds with [`read`](Self::read) and
    /// [`write`](Self::write).
    pub fn raw(&self) -> &L {
        self.core.raw()
    }

    /// The record number at the head of the group list (the newest member), if any: a racy
    /// snapshot for tests and diagnostics.
    pub fn group_head(&self) -> Option<u32> {
        self.core.group_head()
    }

    /// Consumes the lock, returning the value.
    pub fn into_inner(self) -> T {
        self.core.into_inner()
    }
}

/// The last-releaser FlexLock's fast variant (beyond PostgreSQL and the 2011 design): exclusive
/// holders serve the queued operations before they release, as in [`Policy::LastReleaser`], but
/// no release re-checks the queue, and shared releases do nothing extra.
///
/// A submitter that cannot take the lock queues its operation, tries the lock once more (and
/// drains the queue itself if it gets it), spins on its operation, and then waits for the lock
/// in `L`'s own queue with `acquire_or_wait(Exclusive)`: woken by the next release, it finds its operation
/// done (served by that holder) or takes the lock and drains. The Dekker handshake the 2011
/// design does per release (`fence(SeqCst)` and a load of the queue head) is replaced by `L`'s
/// own queue-then-recheck, paid only by submitters that wait. Uncontended, a group call costs a
/// conditional acquire, a load of the queue head and a release. See the [module docs](self)
/// ("Holder serves") for the protocol, its invariant and its unwinding rules.
///
/// ```
/// use flexlock::HolderServesLock;
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
            .field("max_group", &self.core.max_group)
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

    /// Takes the lock shared; queued operations are applied first (as under
    /// [`Policy::LastReleaser`]).
    pub fn read(&self) -> FlexReadGuard<'_, L, T> {
        self.core.read()
    }

    /// Takes the lock shared if that is possible without waiting and no operation is queued.
    pub fn try_read(&self) -> Option<FlexReadGuard<'_, L, T>> {
        self.core.try_read()
    }

    /// Takes the lock exclusively; dropping the guard applies the operations queued meanwhile
    /// before the lock is released.
    pub fn write(&self) -> FlexWriteGuard<'_, L, T> {
        self.core.write()
    }

    /// Takes the lock exclusively if that is possible without waiting.
    pub fn try_write(&self) -> Option<FlexWriteGuard<'_, L, T>> {
        self.core.try_write()
    }

    /// Runs `op` on the value under the exclusive lock, here or on the thread that holds the
    /// lock, and returns its result; as [`FlexLock::group`] (same rules on nesting and panics).
    /// A waiting member publishes nothing while it spins and `L`'s own wait event while it
    /// waits for the lock.
    pub fn group<R: Send>(&self, op: impl FnOnce(&mut T) -> R + Send) -> R {
        self.core.group_holder_serves(op)
    }

    /// Group counters (`Some` only with the `stats` feature).
    pub fn stats(&self) -> Option<GroupStats> {
        self.core.stats()
    }

    /// The wrapped lock, for inspection. A release through it skips the drain; queued
    /// operations are then run by their own submitters (which wait for the lock), not stranded.
    pub fn raw(&self) -> &L {
        self.core.raw()
    }

    /// The record number at the head of the queue (the newest member), if any: a racy snapshot.
    pub fn group_head(&self) -> Option<u32> {
        self.core.group_head()
    }

    /// Consumes the lock, returning the value.
    pub fn into_inner(self) -> T {
        self.core.into_inner()
    }
}

/// A shared hold of a [`FlexLock`] or [`crate::ClogGroupLock`].
#[must_use = "the lock is released when the guard is dropped"]
pub struct FlexReadGuard<'a, L: RawLwLock, T> {
    core: &'a Core<L, T>,
    /// Released on the thread that acquired it.
    _not_send: PhantomData<*const ()>,
}

// SAFETY: a shared guard only hands out `&T`.
unsafe impl<L: RawLwLock, T: Sync> Sync for FlexReadGuard<'_, L, T> {}

impl<L: RawLwLock, T> Deref for FlexReadGuard<'_, L, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the lock is held shared for the guard's life: no `&mut T` exists meanwhile.
        unsafe { &*self.core.data_ptr_shared() }
    }
}

impl<L: RawLwLock, T> Drop for FlexReadGuard<'_, L, T> {
    fn drop(&mut self) {
        // SAFETY: this guard holds the lock shared.
        unsafe { self.core.release_shared() }
    }
}

impl<L: RawLwLock, T: std::fmt::Debug> std::fmt::Debug for FlexReadGuard<'_, L, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

/// An exclusive hold of a [`FlexLock`] or [`crate::ClogGroupLock`].
#[must_use = "the lock is released when the guard is dropped"]
pub struct FlexWriteGuard<'a, L: RawLwLock, T> {
    core: &'a Core<L, T>,
    /// Released on the thread that acquired it.
    _not_send: PhantomData<*const ()>,
}

// SAFETY: `&FlexWriteGuard` only hands out `&T`.
unsafe impl<L: RawLwLock, T: Sync> Sync for FlexWriteGuard<'_, L, T> {}

impl<L: RawLwLock, T> Deref for FlexWriteGuard<'_, L, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the lock is held exclusively for the guard's life.
        unsafe { &*self.core.data_ptr() }
    }
}

impl<L: RawLwLock, T> DerefMut for FlexWriteGuard<'_, L, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the lock is held exclusively for the guard's life, and `&mut self` makes this
        // the only reference derived from the guard.
        unsafe { &mut *self.core.data_ptr() }
    }
}

impl<L: RawLwLock, T> Drop for FlexWriteGuard<'_, L, T> {
    fn drop(&mut self) {
        // SAFETY: this guard holds the lock exclusively.
        unsafe { self.core.release_exclusive() }
    }
}

impl<L: RawLwLock, T: std::fmt::Debug> std::fmt::Debug for FlexWriteGuard<'_, L, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}
