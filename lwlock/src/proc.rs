//! Per-thread wait records: the `PGPROC` of this library, and its counting semaphore.
//!
//! Mirrors `InitProcess`/`ProcKill` (`proc.c`), the LWLock fields of `PGPROC` (`proc.h`),
//! `PGSemaphoreLock`/`PGSemaphoreUnlock` (`posix_sema.c`) and, in [`sample_waits`], the
//! `pg_stat_activity` view of every live record's wait event (`pgstat_get_wait_event`).
//!
//! # Design
//! Every thread that ever has to wait gets one [`Proc`], registered on first use and returned to a
//! free list when the thread exits (so record numbers are reused, like PGPROC slots). Records live
//! in a two-level table of chunks that are allocated once and never freed, so a record's address
//! and its number are stable for the life of the process: wait lists can link records by number
//! (`u32`, like `proclist.h`), which keeps a lock at 16 bytes, and wakers can post a semaphore of a
//! thread that may already be gone (posting a recycled record only causes a spurious wakeup, which
//! every waiter absorbs, see below). No acquire or release path allocates: registration happens
//! once per thread.
//!
//! # The semaphore and the extra-wait idiom
//! Each record owns one counting [`Semaphore`] on a futex word. As in PostgreSQL, several protocols
//! share it (LWLock queues, group updates), so a wakeup may be meant for another protocol. Every
//! waiter therefore loops: `sem.lock()`, check its own "done" flag, count an *extra wait* if not
//! done, and re-post the extra waits once finished ([`Proc::sleep_until`]). Waking is always "set
//! the flag with Release, then post".

use crate::sync::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, Futex, Ordering};
use crate::wait_event::WaitEvent;

/// The `spins_per_delay` estimate's bounds and start value (`s_lock.h`; also re-exported as
/// `s_lock::*`). The estimate itself lives in the records and in the table (`ProcGlobal`), and
/// the spin delay of `s_lock.rs` adapts it.
/// Lower bound of `spins_per_delay` (`MIN_SPINS_PER_DELAY`). Not 1: on Alpha the first TAS after
/// a return from the kernel always failed.
pub const MIN_SPINS_PER_DELAY: u32 = if cfg!(any(loom, shuttle)) { 1 } else { 10 };
/// Upper bound of `spins_per_delay` (`MAX_SPINS_PER_DELAY`).
pub const MAX_SPINS_PER_DELAY: u32 = if cfg!(any(loom, shuttle)) { 2 } else { 1000 };
/// Initial `spins_per_delay` (`DEFAULT_SPINS_PER_DELAY`).
pub const DEFAULT_SPINS_PER_DELAY: u32 = if cfg!(any(loom, shuttle)) { 1 } else { 100 };

/// "No record": the end of a list, like `INVALID_PROC_NUMBER`.
pub const INVALID_PROC: u32 = u32::MAX;

/// `lwWaiting` values (`LWLockWaitState`, PostgreSQL 16+).
pub(crate) mod lw_waiting {
    /// Not on any wait list.
    pub const NOT_WAITING: u8 = 0;
    /// On a lock's wait list; only the owner (in DequeueSelf) or a waker may take it off.
    pub const WAITING: u8 = 1;
    /// Taken off the list by a waker, who will store `NOT_WAITING` and post the semaphore.
    pub const PENDING_WAKEUP: u8 = 2;
}

/// `lwWaitMode` values.
pub(crate) mod lw_mode {
    pub const EXCLUSIVE: u8 = 0;
    pub const SHARED: u8 = 1;
    /// `LW_WAIT_UNTIL_FREE`: wake me when the lock is free, but don't give it to me.
    pub const WAIT_UNTIL_FREE: u8 = 2;
    /// An upgradable-read waiter of the atomic LWLock (a variant beyond PostgreSQL). The faithful
    /// wake pass, which knows only the three modes above, treats it as a shared waiter.
    pub const UPGRADABLE: u8 = 3;
}

/// A counting semaphore on a futex word (`PGSemaphoreLock`/`PGSemaphoreUnlock`).
///
/// The word is the count. `lock` decrements it, sleeping while it is zero; `unlock` increments it
/// and wakes one sleeper. Only a record's owner ever calls `lock`.
#[derive(Debug)]
pub struct Semaphore {
    futex: Futex,
}

impl Semaphore {
    /// A semaphore with count zero.
    #[cfg(not(loom))]
    pub const fn new() -> Self {
        Semaphore {
            futex: Futex::new(0),
        }
    }
    /// A semaphore with count zero.
    #[cfg(loom)]
    pub fn new() -> Self {
        Semaphore {
            futex: Futex::new(0),
        }
    }

    /// Decrements the count, sleeping while it is zero.
    ///
    /// Acquire on the successful decrement pairs with the Release increment in [`unlock`]: whatever
    /// the poster wrote before posting (the waker's "done" flag and the work it did for us) is
    /// visible after this returns. This is the "semaphore acts as a read barrier" of `procarray.c`.
    ///
    /// [`unlock`]: Semaphore::unlock
    pub fn lock(&self) {
        let word = &self.futex.word;
        let mut count = word.load(Ordering::Relaxed);
        loop {
            if count == 0 {
                self.futex.wait(0);
                count = word.load(Ordering::Relaxed);
                continue;
            }
            match word.compare_exchange_weak(count, count - 1, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => count = now,
            }
        }
    }

    /// Like [`lock`](Semaphore::lock), but gives up at `deadline` (on the
    /// [`clock_nanos`](crate::sync::clock_nanos) timeline): returns `true` if it decremented the
    /// count, `false` if the deadline passed first (then the count is untouched: a post that
    /// arrives later stays for the next `lock`). Under loom and shuttle the deadline passes at
    /// the first wait that finds the count still zero (a model has no time, only interleavings).
    pub fn lock_until(&self, deadline: u64) -> bool {
        let word = &self.futex.word;
        let mut count = word.load(Ordering::Relaxed);
        loop {
            if count == 0 {
                if self.futex.wait_until_nanos(0, deadline) {
                    // Timed out; one last look, so that a post racing the deadline is taken.
                    return self.try_lock();
                }
                count = word.load(Ordering::Relaxed);
                continue;
            }
            // Acquire: as in `lock`.
            match word.compare_exchange_weak(count, count - 1, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(now) => count = now,
            }
        }
    }

    /// Decrements the count if it is positive, without sleeping. Returns whether it did.
    pub fn try_lock(&self) -> bool {
        let word = &self.futex.word;
        let mut count = word.load(Ordering::Relaxed);
        while count > 0 {
            match word.compare_exchange_weak(count, count - 1, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(now) => count = now,
            }
        }
        false
    }

    /// Increments the count and wakes the owner if it sleeps.
    pub fn unlock(&self) {
        // Release: publishes the poster's writes to the Acquire decrement in `lock`.
        let prev = self.futex.word.fetch_add(1, Ordering::Release);
        if prev == u32::MAX {
            // The count wrapped to 0: a post is lost and its waiter may sleep forever. Posting
            // happens inside wake paths that cannot be unwound (PANIC, not a panic).
            crate::elog::panic_abort(format_args!("lwlock: semaphore count overflow"));
        }
        self.futex.wake_one();
    }

    /// Sets the count to zero (`PGSemaphoreReset`): a recycled record must not inherit posts
    /// meant for its previous owner. Only the owner calls it, before it waits on anything.
    fn reset(&self) {
        self.futex.word.store(0, Ordering::Relaxed);
    }

    /// The current count (for tests and diagnostics).
    pub fn count(&self) -> u32 {
        self.futex.word.load(Ordering::Relaxed)
    }
}

impl Default for Semaphore {
    fn default() -> Self {
        Self::new()
    }
}

/// Fields a group protocol (FlexLock, the clog group update) keeps in the record of a member,
/// like `procArrayGroupMember`/`procArrayGroupNext`/`procArrayGroupMemberXid` in `PGPROC`.
///
/// A thread is a member of at most one group at a time. The protocol that pushed the record owns
/// these fields until it clears `member`.
#[derive(Debug)]
pub struct GroupLink {
    /// Next member in the group list, or [`INVALID_PROC`].
    pub next: AtomicU32,
    /// "I am in a group and my operation has not been applied yet." Set by the member before it
    /// pushes itself; cleared (Release) by the leader after the operation ran and `next` was reset.
    pub member: AtomicBool,
    /// The member's pending operation, type-erased; meaning defined by the protocol.
    pub op: AtomicPtr<()>,
    /// The member's key (for the clog group update: the CLOG page).
    pub key: AtomicU64,
}

/// A per-thread wait record.
///
/// Aligned to 128 bytes (two cache lines, as `CachePadded` does on x86-64, against adjacent-line
/// prefetch) so that one thread's record never shares a line with another's.
#[derive(Debug)]
#[repr(align(128))]
pub struct Proc {
    /// This record's number in the table; fixed at creation.
    number: u32,
    /// Whether a live thread owns this record (for samplers).
    live: AtomicBool,
    /// The semaphore this thread sleeps on.
    pub(crate) sem: Semaphore,
    /// `lwWaiting`: one of [`lw_waiting`]. NOT_WAITING → WAITING only by the owner, under the wait
    /// list's lock; WAITING → PENDING_WAKEUP by a waker under the list lock; PENDING_WAKEUP →
    /// NOT_WAITING by the waker with Release, after it has read `lw_next` for the last time.
    pub(crate) lw_waiting: AtomicU8,
    /// `lwWaitMode`: one of [`lw_mode`]; written by the owner under the list lock.
    pub(crate) lw_mode: AtomicU8,
    /// Set (Relaxed, before the Release store of `NOT_WAITING`) by a waker that handed the lock
    /// to this waiter instead of only waking it (the atomic LWLock's fair unlock, a variant beyond
    /// PostgreSQL): the waiter owns the lock in its wait mode when it wakes. Cleared by the owner.
    pub(crate) lw_granted: AtomicBool,
    /// `lwWaitLink.next`/`.prev` by record number. Only touched under the lock of the list the
    /// record is on (or by the single waker that detached it), so Relaxed suffices: the list lock's
    /// Acquire/Release orders them.
    pub(crate) lw_next: AtomicU32,
    pub(crate) lw_prev: AtomicU32,
    /// The published wait (`wait_event_info`). Relaxed stores by the owner, relaxed loads by
    /// samplers: nothing is published through it.
    wait_event: AtomicU32,
    /// This thread's `spins_per_delay` estimate (owner only).
    pub(crate) spins_per_delay: AtomicU32,
    /// This thread's PRNG state for spin backoff (owner only).
    pub(crate) rng: AtomicU64,
    /// Fields owned by group protocols.
    pub group: GroupLink,
}

impl Proc {
    fn new(number: u32) -> Self {
        Proc {
            number,
            live: AtomicBool::new(false),
            sem: Semaphore::new(),
            lw_waiting: AtomicU8::new(lw_waiting::NOT_WAITING),
            lw_mode: AtomicU8::new(lw_mode::EXCLUSIVE),
            lw_granted: AtomicBool::new(false),
            lw_next: AtomicU32::new(INVALID_PROC),
            lw_prev: AtomicU32::new(INVALID_PROC),
            wait_event: AtomicU32::new(0),
            spins_per_delay: AtomicU32::new(DEFAULT_SPINS_PER_DELAY),
            rng: AtomicU64::new(0x9E37_79B9_7F4A_7C15 ^ (number as u64 + 1)),
            group: GroupLink {
                next: AtomicU32::new(INVALID_PROC),
                member: AtomicBool::new(false),
                op: AtomicPtr::new(std::ptr::null_mut()),
                key: AtomicU64::new(0),
            },
        }
    }

    /// Prepares a record taken from the table for its new thread (`InitProcess`): every field a
    /// protocol left behind is reset, so a record recycled from a thread that exited in the middle
    /// of something (a panic between protocol steps) starts clean.
    fn reset_for_new_owner(&self, spins_per_delay: u32) {
        debug_assert_eq!(
            self.lw_waiting.load(Ordering::Relaxed),
            lw_waiting::NOT_WAITING,
            "a recycled wait record is still on a wait list"
        );
        // `InitProcess` asserts `procArrayGroupNext == INVALID`: a thread cannot exit while its
        // operation is queued (flexlock's critical section aborts first), so a stale group state
        // here is a bug somewhere; release builds still reset it.
        debug_assert!(
            !self.group.member.load(Ordering::Relaxed) || cfg!(test),
            "a recycled wait record is still a group member"
        );
        self.lw_next.store(INVALID_PROC, Ordering::Relaxed);
        self.lw_prev.store(INVALID_PROC, Ordering::Relaxed);
        self.lw_granted.store(false, Ordering::Relaxed);
        self.group.next.store(INVALID_PROC, Ordering::Relaxed);
        self.group.member.store(false, Ordering::Relaxed);
        self.group.op.store(std::ptr::null_mut(), Ordering::Relaxed);
        self.group.key.store(0, Ordering::Relaxed);
        self.wait_event.store(0, Ordering::Relaxed);
        self.sem.reset();
        self.spins_per_delay
            .store(spins_per_delay, Ordering::Relaxed);
        self.live.store(true, Ordering::Relaxed);
    }

    /// The calling thread's record, registering one on first use (`MyProc`).
    ///
    /// Works during thread-local destruction too: a destructor that runs after the record's own
    /// (one registered before the thread first waited) gets a *fallback record*, registered then
    /// and returned to the free list by its own destructor, which runs after that one. A
    /// destructor that runs even after the fallback's gets a record leased for the rest of the
    /// thread's life (never returned: no code of the thread runs after its last destructor; at
    /// most one record per such thread). The fast path (the record exists) is one thread-local
    /// access, as before.
    #[inline]
    pub fn current() -> &'static Proc {
        match MY_PROC.try_with(|h| h.0) {
            Ok(proc) => proc,
            Err(_) => Self::current_during_destruction(),
        }
    }

    /// [`current`](Self::current) once `MY_PROC` is destroyed: the fallback record, or else the
    /// leased one.
    #[cold]
    #[inline(never)]
    fn current_during_destruction() -> &'static Proc {
        if let Ok(proc) = FALLBACK_PROC.try_with(|h| h.0) {
            return proc;
        }
        // `LEASED` has no destructor, so it is never destroyed (`try_with` cannot fail).
        LEASED
            .try_with(|l| match l.get() {
                Some(proc) => proc,
                None => {
                    let proc = table().register();
                    l.set(Some(proc));
                    let _ = REGISTERED.try_with(|r| r.set(Some(proc)));
                    proc
                }
            })
            .expect("lwlock: a thread-local without destructor is never destroyed")
    }

    /// The calling thread's record if it already has one, without registering (and `None`
    /// during thread-local destruction). PostgreSQL's spin delays need no PGPROC; neither do
    /// ours: a lock can be released by a thread that never waited (a `Send` guard, an
    /// uncontended conditional acquire), and registering there could fail inside `release`.
    #[inline]
    pub fn current_if_registered() -> Option<&'static Proc> {
        REGISTERED.try_with(|r| r.get()).ok().flatten()
    }

    /// The record with this number (`GetPGProcByNumber`).
    ///
    /// # Panics
    /// If the table has no record with this number (records are created a chunk at a time, so a
    /// number near a registered one may return a record that no thread has used yet).
    #[inline]
    pub fn by_number(number: u32) -> &'static Proc {
        table()
            .get(number)
            .expect("lwlock: no wait record with this number")
    }

    /// This record's number (`GetNumberFromPGProc`).
    #[inline]
    pub fn number(&self) -> u32 {
        self.number
    }

    /// The record's semaphore.
    #[inline]
    pub fn sem(&self) -> &Semaphore {
        &self.sem
    }

    /// Publishes what this thread waits for (`pgstat_report_wait_start`): one relaxed store.
    #[inline]
    pub fn report_wait_start(&self, event: WaitEvent) {
        self.wait_event.store(event.to_bits(), Ordering::Relaxed);
    }

    /// Clears the published wait (`pgstat_report_wait_end`).
    #[inline]
    pub fn report_wait_end(&self) {
        self.wait_event.store(0, Ordering::Relaxed);
    }

    /// The currently published wait (one relaxed load; racy but never torn).
    #[inline]
    pub fn wait_event(&self) -> WaitEvent {
        WaitEvent::from_bits(self.wait_event.load(Ordering::Relaxed))
    }

    /// Sleeps on the semaphore until `done()` holds, absorbing wakeups meant for other protocols
    /// and re-posting them afterwards (the `extraWaits` idiom). `event` is published while asleep.
    ///
    /// `done` must read with Acquire (or rely on the semaphore's Acquire) so that what the waker
    /// did before setting the flag is visible. Returns the number of absorbed foreign wakeups.
    pub fn sleep_until(&self, event: WaitEvent, done: impl FnMut() -> bool) -> u32 {
        let extra = self.sleep_absorbing(event, done);
        self.repost(extra);
        extra
    }

    /// Like [`sleep_until`](Self::sleep_until) but leaves the absorbed wakeups to the caller, who
    /// must [`repost`](Self::repost) them once it will not sleep on this semaphore again in the
    /// same operation (otherwise it would consume its own re-posts). LWLock acquire loops use this
    /// and re-post at the very end, as `LWLockAcquire` does.
    pub fn sleep_absorbing(&self, event: WaitEvent, mut done: impl FnMut() -> bool) -> u32 {
        self.report_wait_start(event);
        let mut extra = 0;
        loop {
            self.sem.lock();
            if done() {
                break;
            }
            extra += 1;
        }
        self.report_wait_end();
        extra
    }

    /// Re-posts `extra` absorbed wakeups so that their protocols still see them.
    pub fn repost(&self, extra: u32) {
        for _ in 0..extra {
            self.sem.unlock();
        }
    }

    /// A pseudo-random `f64` in `[0, 1)` from this record's xorshift state (owner only). Used for
    /// the randomized spin backoff (`pg_prng_double`).
    pub(crate) fn next_random(&self) -> f64 {
        let mut x = self.rng.load(Ordering::Relaxed);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng.store(x, Ordering::Relaxed);
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Records per chunk of the table.
const CHUNK_SHIFT: u32 = if cfg!(any(loom, shuttle)) { 2 } else { 6 };
const CHUNK: usize = 1 << CHUNK_SHIFT;
/// Chunks in the table: `MAX_CHUNKS * CHUNK` live threads at most (about one million; 4096
/// simulated threads under lwsim, whose table lives for one simulation).
const MAX_CHUNKS: usize = if cfg!(any(loom, shuttle)) {
    16
} else if cfg!(lwsim) {
    64
} else {
    1 << 14
};

/// Eight chunk pointers, one 64-byte line of them: line-aligned under lwsim, so that which
/// pointers share a simulated line does not depend on where the allocator put the array (a
/// table's fourth chunk, published by the 193rd thread to register, shared the first chunk's
/// line or not by the heap's offset, which moved figures past 64 threads).
#[cfg_attr(lwsim, repr(align(64)))]
struct ChunkLine([AtomicPtr<Proc>; 8]);
const _: () = assert!(MAX_CHUNKS % 8 == 0, "whole lines of chunk pointers");

/// The table of all records: `ProcGlobal->allProcs`, grown a chunk at a time.
///
/// Line-aligned under lwsim, so that which of its fields share a simulated cache line does not
/// depend on where the allocator put it (runs must be deterministic).
#[cfg_attr(lwsim, repr(align(64)))]
struct ProcTable {
    /// Chunk pointers (chunk `c` at `chunks[c / 8].0[c % 8]`); a chunk is published once
    /// (Release) and never changes or goes away.
    chunks: Box<[ChunkLine]>,
    /// Number of records ever created (high-water mark); records below it exist.
    created: AtomicU32,
    /// Numbers of records whose thread exited, ready for reuse (`ProcGlobal->freeProcs`).
    free: crate::sync::Mutex<Vec<u32>>,
    /// `ProcGlobal->spins_per_delay`: the shared estimate that threads start from and fold into.
    pub(crate) spins_per_delay: AtomicU32,
}

impl ProcTable {
    fn new() -> Self {
        ProcTable {
            chunks: (0..MAX_CHUNKS / 8)
                .map(|_| {
                    ChunkLine(std::array::from_fn(
                        |_| AtomicPtr::new(std::ptr::null_mut()),
                    ))
                })
                .collect(),
            created: AtomicU32::new(0),
            free: crate::sync::Mutex::new(Vec::new()),
            spins_per_delay: AtomicU32::new(DEFAULT_SPINS_PER_DELAY),
        }
    }

    fn get(&self, number: u32) -> Option<&'static Proc> {
        let chunk = (number >> CHUNK_SHIFT) as usize;
        let ptr = self.chunks.get(chunk / 8)?.0[chunk % 8].load(Ordering::Acquire);
        if ptr.is_null() {
            return None;
        }
        // SAFETY: a non-null chunk pointer was published (Release, paired with the Acquire load
        // above) after the chunk's CHUNK records were fully initialised; chunks are leaked, never
        // freed or moved, so the pointer is valid for 'static and the offset is within the chunk.
        Some(unsafe { &*ptr.add(number as usize & (CHUNK - 1)) })
    }

    /// Takes a free record or creates one (`InitProcess`).
    fn register(&self) -> &'static Proc {
        #[cfg(feature = "fault-injection")]
        registration_point();
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let number = match free.pop() {
            Some(n) => n,
            None => {
                let n = self.created.load(Ordering::Relaxed);
                let chunk = (n >> CHUNK_SHIFT) as usize;
                assert!(
                    chunk < MAX_CHUNKS,
                    "lwlock: too many live threads for the wait-record table"
                );
                if n as usize & (CHUNK - 1) == 0 {
                    let records: Box<[Proc]> =
                        (0..CHUNK as u32).map(|i| Proc::new(n + i)).collect();
                    let ptr = Box::leak(records).as_mut_ptr();
                    // Release: the records' initialisation happens-before any Acquire load of
                    // the pointer in `get`.
                    self.chunks[chunk / 8].0[chunk % 8].store(ptr, Ordering::Release);
                }
                // Release: samplers that see the new count also see the chunk.
                self.created.store(n + 1, Ordering::Release);
                n
            }
        };
        drop(free);
        let proc = self.get(number).expect("registered record exists");
        proc.reset_for_new_owner(self.spins_per_delay.load(Ordering::Relaxed));
        proc
    }

    /// Returns a record to the free list (`ProcKill`), folding its spin estimate into the shared
    /// one as `(shared * 15 + local) / 16`.
    #[cfg_attr(any(loom, shuttle, lwsim), allow(dead_code))]
    fn unregister(&self, proc: &'static Proc) {
        fold_spins_per_delay(
            &self.spins_per_delay,
            proc.spins_per_delay.load(Ordering::Relaxed),
        );
        proc.report_wait_end();
        proc.live.store(false, Ordering::Relaxed);
        debug_assert_eq!(
            proc.lw_waiting.load(Ordering::Relaxed),
            lw_waiting::NOT_WAITING
        );
        self.free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(proc.number);
    }
}

/// Folds a thread's `spins_per_delay` into the shared estimate as `(shared * 15 + local) / 16`
/// (`set_spins_per_delay`/`update_spins_per_delay`, done under `ProcStructLock` in PostgreSQL).
///
/// One read-modify-write, so two threads exiting at once both count: a load followed by a
/// store would lose one of the updates. Relaxed: the estimate publishes nothing else.
pub fn fold_spins_per_delay(shared: &AtomicU32, local: u32) {
    // Mutant `spins_fold_racy` (models only): the old load-then-store, which loses an update.
    if crate::mutant!("spins_fold_racy") {
        let old = shared.load(Ordering::Relaxed);
        shared.store((old * 15 + local) / 16, Ordering::Relaxed);
        return;
    }
    let _ = shared.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
        Some((old * 15 + local) / 16)
    });
}

#[cfg(not(any(loom, shuttle, lwsim)))]
fn table() -> &'static ProcTable {
    static TABLE: std::sync::OnceLock<ProcTable> = std::sync::OnceLock::new();
    TABLE.get_or_init(ProcTable::new)
}

#[cfg(loom)]
fn table() -> &'static ProcTable {
    loom::lazy_static! { static ref TABLE: ProcTable = ProcTable::new(); }
    &TABLE
}

#[cfg(shuttle)]
fn table() -> &'static ProcTable {
    shuttle::lazy_static! { static ref TABLE: ProcTable = ProcTable::new(); }
    &TABLE
}

#[cfg(lwsim)]
fn table() -> &'static ProcTable {
    ::lwsim::lazy_static! { static ref TABLE: ProcTable = ProcTable::new(); }
    &TABLE
}

/// The calling thread's claim on a record; returns it to the free list when the thread exits.
///
/// Under loom, shuttle and lwsim the table lives for one execution (a model `lazy_static`) and is
/// torn down before the main thread's thread-locals, so records are not returned: a model
/// execution or a simulation has a fixed set of threads, each with its own record.
struct ProcHandle(&'static Proc);

#[cfg(not(any(loom, shuttle, lwsim)))]
impl Drop for ProcHandle {
    fn drop(&mut self) {
        // The record is no longer this thread's: code that must not register (spin delays)
        // sees `None` from here on.
        let _ = REGISTERED.try_with(|r| r.set(None));
        table().unregister(self.0);
    }
}

crate::sync::model_thread_local! {
    static MY_PROC: ProcHandle = {
        let proc = table().register();
        let _ = REGISTERED.try_with(|r| r.set(Some(proc)));
        ProcHandle(proc)
    };
    /// The record of a thread whose `MY_PROC` is already destroyed (initialised only then, by a
    /// later thread-local destructor that must wait; see [`Proc::current`]).
    static FALLBACK_PROC: ProcHandle = {
        let proc = table().register();
        let _ = REGISTERED.try_with(|r| r.set(Some(proc)));
        ProcHandle(proc)
    };
    /// A record leased by a destructor that runs after `FALLBACK_PROC`'s (never returned).
    #[allow(clippy::missing_const_for_thread_local)]
    static LEASED: std::cell::Cell<Option<&'static Proc>> = std::cell::Cell::new(None);
    /// This thread's record once registered, `None` before and after: lets code that may run on
    /// a thread without a record (a spin delay inside a release) use it without registering one.
    /// (Not a `const` initializer: the same macro call serves loom's and shuttle's
    /// `thread_local!`, which take none.)
    #[allow(clippy::missing_const_for_thread_local)]
    static REGISTERED: std::cell::Cell<Option<&'static Proc>> = std::cell::Cell::new(None);
}

/// Calls `f` for every record currently owned by a live thread (for samplers).
pub fn for_each_live(mut f: impl FnMut(&'static Proc)) {
    let t = table();
    let created = t.created.load(Ordering::Acquire);
    for n in 0..created {
        if let Some(p) = t.get(n) {
            if p.live.load(Ordering::Relaxed) {
                f(p);
            }
        }
    }
}

/// The shared `spins_per_delay` estimate that new threads start from.
pub fn shared_spins_per_delay() -> u32 {
    table().spins_per_delay.load(Ordering::Relaxed)
}

/// Sets the shared `spins_per_delay` estimate that threads registered from now on start from
/// (benchmarks reset it per data point, so that a point does not depend on what ran before it;
/// PostgreSQL's estimate likewise starts from `DEFAULT_SPINS_PER_DELAY` at postmaster start).
pub fn set_shared_spins_per_delay(value: u32) {
    let v = value.clamp(MIN_SPINS_PER_DELAY, MAX_SPINS_PER_DELAY);
    table().spins_per_delay.store(v, Ordering::Relaxed);
}

/// One sampled wait of one live thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitSample {
    /// The thread's wait-record number (its `ProcNumber`).
    pub proc: u32,
    /// What it was waiting for at the moment of the sample.
    pub event: WaitEvent,
}

/// Samples every live thread's current wait, like `SELECT wait_event_type, wait_event FROM
/// pg_stat_activity`. Threads that are not waiting are included with [`WaitEvent::NONE`], so
/// callers can count both waiting and running threads. One relaxed load per thread.
pub fn sample_waits() -> Vec<WaitSample> {
    let mut out = Vec::new();
    for_each_live(|p| {
        out.push(WaitSample {
            proc: p.number(),
            event: p.wait_event(),
        });
    });
    out
}

/// Read-only probes of lock-internal state for model and test assertions: a model or a test may
/// assert on what a wait record's owner cannot see from outside, such as whether a record is
/// still queued after a release that had to wake it (a release takes the waiters it wakes off
/// the list before it returns, so the answer right after it is the same whatever the scheduling).
pub mod probe {
    use super::{lw_waiting, Proc};
    use crate::sync::Ordering;

    /// Whether `p` is on a lock's wait list (`lwWaiting == LW_WS_WAITING`: queued and not yet
    /// taken off by a waker). A SeqCst load: a probe, ordering nothing for the lock.
    pub fn is_queued(p: &Proc) -> bool {
        p.lw_waiting.load(Ordering::SeqCst) == lw_waiting::WAITING
    }
}

#[cfg(feature = "fault-injection")]
std::thread_local! {
    static FAIL_REGISTRATION: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Makes the calling thread's next wait-record registration (its first use of a record, see
/// [`Proc::current`]) panic, once (feature `fault-injection`; also `fault::fail_next_registration`).
#[cfg(feature = "fault-injection")]
pub fn fail_next_registration() {
    FAIL_REGISTRATION.with(|f| f.set(true));
}

/// Called by the registration path: panics once if [`fail_next_registration`] was called.
#[cfg(feature = "fault-injection")]
fn registration_point() {
    if FAIL_REGISTRATION.with(|f| f.replace(false)) {
        panic!("injected fault: wait-record registration");
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn semaphore_counts_posts() {
        let s = Semaphore::new();
        s.unlock();
        s.unlock();
        assert_eq!(s.count(), 2);
        s.lock();
        assert!(s.try_lock());
        assert!(!s.try_lock());
    }

    #[test]
    fn semaphore_wakes_sleeper() {
        let p = Proc::current();
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let d = done.clone();
        let number = p.number();
        let t = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            d.store(true, std::sync::atomic::Ordering::Release);
            Proc::by_number(number).sem().unlock();
        });
        p.sem().lock();
        assert!(done.load(std::sync::atomic::Ordering::Acquire));
        t.join().unwrap();
    }

    #[test]
    fn sleep_until_absorbs_and_reposts_foreign_wakeups() {
        use std::sync::atomic::{AtomicBool, AtomicU32, Ordering as O};
        // Deterministic on a loaded machine: the foreign wakeup is posted before the sleep, and
        // the waker sets the condition only after the sleeper's first check has found it false
        // (so that check must count the foreign wakeup as absorbed).
        let p = Proc::current();
        let flag = Arc::new(AtomicBool::new(false));
        let checks = Arc::new(AtomicU32::new(0));
        let (f, c) = (flag.clone(), checks.clone());
        let number = p.number();
        p.sem().unlock(); // a foreign wakeup
        let t = std::thread::spawn(move || {
            while c.load(O::Acquire) == 0 {
                std::thread::yield_now();
            }
            f.store(true, O::Release);
            Proc::by_number(number).sem().unlock(); // ours
        });
        let extra = p.sleep_until(WaitEvent::NONE, || {
            let done = flag.load(O::Acquire);
            checks.fetch_add(1, O::Release);
            done
        });
        t.join().unwrap();
        assert_eq!(extra, 1);
        assert_eq!(checks.load(O::Relaxed), 2);
        // The absorbed wakeup was re-posted for its owner protocol.
        assert_eq!(p.sem().count(), 1);
        p.sem().lock();
    }

    #[test]
    fn fold_is_the_weighted_average() {
        let shared = AtomicU32::new(100);
        fold_spins_per_delay(&shared, 1000);
        assert_eq!(shared.load(Ordering::Relaxed), (100 * 15 + 1000) / 16);
    }

    /// A record recycled from a thread that left group or wait state behind starts clean
    /// (`InitProcess` resets; before, registration reset nothing, so a stale `member` flag made
    /// the new owner's first group call panic as "nested").
    #[test]
    fn recycled_records_are_reset() {
        for _ in 0..50 {
            let n = std::thread::spawn(|| {
                let me = Proc::current();
                me.group.member.store(true, Ordering::Relaxed);
                me.group.next.store(7, Ordering::Relaxed);
                me.group.key.store(9, Ordering::Relaxed);
                me.sem().unlock();
                me.number()
            })
            .join()
            .unwrap();
            // Records are reused most-recently-freed first; other tests' threads may take it.
            let got = std::thread::spawn(move || {
                let me = Proc::current();
                (me.number() == n).then(|| {
                    (
                        me.group.member.load(Ordering::Relaxed),
                        me.group.next.load(Ordering::Relaxed),
                        me.group.key.load(Ordering::Relaxed),
                        me.sem().count(),
                    )
                })
            })
            .join()
            .unwrap();
            if let Some(state) = got {
                assert_eq!(
                    state,
                    (false, INVALID_PROC, 0, 0),
                    "stale state survived reuse"
                );
                return;
            }
        }
        panic!("no record was reused in 50 tries");
    }

    #[test]
    fn records_are_per_thread_and_reused() {
        let a = Proc::current().number();
        let b = std::thread::spawn(|| Proc::current().number())
            .join()
            .unwrap();
        assert_ne!(a, b);
        // b's thread exited: its record is free again and a new thread may get it.
        let mut seen = Vec::new();
        for _ in 0..4 {
            seen.push(
                std::thread::spawn(|| Proc::current().number())
                    .join()
                    .unwrap(),
            );
        }
        assert!(seen.iter().all(|n| *n != a));
        assert_eq!(Proc::by_number(a).number(), a);
    }

    #[test]
    fn live_records_are_sampled_with_their_wait() {
        let (tx, rx) = std::sync::mpsc::channel();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            let me = Proc::current();
            me.report_wait_start(WaitEvent::lwlock(crate::Tranche::WAL_WRITE));
            tx.send(me.number()).unwrap();
            go_rx.recv().unwrap();
            me.report_wait_end();
        });
        let n = rx.recv().unwrap();
        let samples = sample_waits();
        let mine = samples
            .iter()
            .find(|s| s.proc == n)
            .expect("live thread sampled");
        assert_eq!(mine.event.to_string(), "LWLock:WALWrite");
        go_tx.send(()).unwrap();
        t.join().unwrap();
    }
}
