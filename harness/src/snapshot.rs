//! Snapshot strategies from the 2011 "Avoiding repeated snapshot computation" thread, over three
//! proc-array layouts.
//!
//! Mirrors `GetSnapshotData`, `GetSnapshotDataReuse` and `ProcArrayEndTransactionInternal`
//! (`procarray.c`), `GetNewTransactionId` (`varsup.c`), and the proc-array layouts of PostgreSQL
//! ≤ 9.1 (`PGPROC`), 9.2–13 (`PGXACT`) and 14+ (dense `ProcGlobal->xids[]`).
//!
//! This file depends only on `lwlock` and `std`, so the models crate compiles the very same code
//! under loom and shuttle.
//!
//! # Layouts ([`ProcArrayLayout`])
//! * [`Padded`] (≤ 9.1): the hot fields (`xid`, `xmin`) sit inside a 256-byte per-proc record;
//!   every snapshot reads every record's `xid` and `xmin` (for `RecentGlobalXmin`).
//! * [`PgXact`] (9.2–13): a 12-byte hot record per proc (`xid`, `xmin`, flags, `nxids`), about
//!   five to a cache line; `xmin` still shares the line with `xid` and is still read by every scan.
//! * [`Dense`] (14+): a dense `u32` xid array; `xmin` lives in the padded per-proc record and scans
//!   no longer read it (`dc7420c2c9`, `1f51c17c68`, `941697c3c1`).
//!
//! Every snapshot advertises the taker's `xmin` in its own slot, as `GetSnapshotData` does for a
//! new transaction: with `Padded` and `PgXact` that store dirties lines other scanners read.
//!
//! # Strategies ([`Strategy`])
//! * `scan`: the plain scan under the shared lock.
//! * `reuse` (PostgreSQL 14, `623a9ba79b`): each thread keeps its last snapshot and the completion
//!   count it was built at; under the shared lock, an unchanged count means the old contents are
//!   still exactly right.
//! * `optimistic` (Robert Haas's counter idea): ends of transaction bump an even/odd counter around
//!   their changes (a seqlock); a reader scans without the lock and keeps the result only if the
//!   counter was even and unchanged, else falls back to the shared-lock scan.
//! * `shared` (Pavan Deolasee's idea): the first taker after a change computes into a shared slot
//!   under the shared lock; later takers copy it; ends of transaction invalidate it.
//!
//! # State and invariants
//! 1. `latest_completed`, `completion_count`, the xid clears and the shared slot's invalidation
//!    change only under the exclusive ProcArrayLock ([`ProcArrayState::end_xact`]).
//! 2. `seq` is odd exactly while an end of transaction is changing the proc array (single writer:
//!    the exclusive holder).
//! 3. An xid is published in its slot before any later xid is assigned (both under XidGenLock),
//!    so a transaction that completes with a larger xid was assigned after this one was visible.
//! 4. The shared slot's contents are written only by the one thread that moved its state from
//!    `INVALID` to `COMPUTING`, under the shared lock, and read only while the state is `VALID`.
//!
//! # Memory orderings
//! * Xid slots and `xmin`s are atomics read and written Relaxed: under the lock, the lock orders
//!   them; outside it (optimistic), the seqlock does.
//! * Seqlock (Boehm, "Can seqlocks get along with programming language memory models?"): the
//!   writer stores `seq` odd (Relaxed), `fence(Release)`, changes the slots (Relaxed), stores `seq`
//!   even (Release); the reader loads `seq` (Acquire), reads (Relaxed), `fence(Acquire)`, re-loads
//!   `seq` (Relaxed). Equal even values mean no end of transaction overlapped the read.
//! * Shared slot: the computer's Release store of `VALID` pairs with copiers' Acquire load.

use lwlock::sync::{fence, AtomicU32, AtomicU64, Ordering, UnsafeCell};
use lwlock::{Mode, RawAtomicLwLock, RawLwLock, Tranche};

/// `InvalidTransactionId`.
pub const INVALID_XID: u32 = 0;
/// `FirstNormalTransactionId`.
pub const FIRST_NORMAL_XID: u32 = 3;

/// A snapshot (`SnapshotData`): every xid `< xmin` has finished, every xid `>= xmax` counts as
/// running, and between them exactly the xids in `xip` are running.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Smallest xid still running (or `xmax`).
    pub xmin: u32,
    /// `latestCompletedXid + 1`.
    pub xmax: u32,
    /// Running xids in `[xmin, xmax)`, the taker's own excluded.
    pub xip: Vec<u32>,
    /// `xactCompletionCount` when built (`snapXactCompletionCount`).
    pub completion_count: u64,
    /// The oldest advertised `xmin` (`RecentGlobalXmin`; computed by the ≤ 13 layouts only).
    pub global_xmin: u32,
}

impl Snapshot {
    /// Whether this snapshot treats `xid` as still running (`XidInMVCCSnapshot`).
    pub fn sees_running(&self, xid: u32) -> bool {
        xid >= self.xmax || (xid >= self.xmin && self.xip.contains(&xid))
    }
}

/// How the proc array's hot fields are laid out in memory.
pub trait ProcArrayLayout: Send + Sync + Sized + 'static {
    /// `--layout` name.
    const NAME: &'static str;
    /// A proc array of `procs` entries, all without an xid.
    fn with_procs(procs: usize) -> Self;
    /// Number of entries.
    fn len(&self) -> usize;
    /// Whether there are no entries.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The xid of entry `i` (one Relaxed load, `UINT32_ACCESS_ONCE`).
    fn xid(&self, i: usize) -> u32;
    /// Sets the xid of entry `i` (its owner, or the exclusive holder when clearing).
    fn set_xid(&self, i: usize, xid: u32);
    /// Advertises entry `i`'s snapshot xmin.
    fn set_xmin(&self, i: usize, xmin: u32);
    /// The scan of `GetSnapshotData`: pushes onto `xip` every running xid `< xmax` but `me`'s;
    /// returns `(xmin, global_xmin)` with `xmin` starting at `min(xmax, own xid)`.
    fn scan(&self, me: Option<usize>, xmax: u32, xip: &mut Vec<u32>) -> (u32, u32);
}

/// A per-proc entry that keeps `xid` and `xmin` side by side (the ≤ 13 layouts).
pub trait XidXminEntry: Send + Sync + 'static {
    /// `--layout` name of the array of these entries.
    const NAME: &'static str;
    /// An entry without an xid or xmin.
    fn empty() -> Self;
    /// The running xid.
    fn xid(&self) -> &AtomicU32;
    /// The advertised snapshot xmin.
    fn xmin(&self) -> &AtomicU32;
}

/// ≤ 9.1: hot fields inside a large per-proc record (`PGPROC`).
#[repr(C, align(64))]
#[derive(Debug)]
pub struct PaddedProc {
    xid: AtomicU32,
    xmin: AtomicU32,
    /// The rest of a PGPROC: lock-wait fields, semaphores, the subxid cache...
    _cold: [u8; 248],
}

impl XidXminEntry for PaddedProc {
    const NAME: &'static str = "padded";
    fn empty() -> Self {
        PaddedProc {
            xid: AtomicU32::new(INVALID_XID),
            xmin: AtomicU32::new(INVALID_XID),
            _cold: [0; 248],
        }
    }
    fn xid(&self) -> &AtomicU32 {
        &self.xid
    }
    fn xmin(&self) -> &AtomicU32 {
        &self.xmin
    }
}

/// 9.2–13: `PGXACT`, 12 bytes per proc.
#[repr(C)]
#[derive(Debug)]
pub struct PgXactEntry {
    xid: AtomicU32,
    xmin: AtomicU32,
    /// vacuumFlags, overflowed, delayChkpt, nxids.
    _flags: [u8; 4],
}

impl XidXminEntry for PgXactEntry {
    const NAME: &'static str = "pgxact";
    fn empty() -> Self {
        PgXactEntry {
            xid: AtomicU32::new(INVALID_XID),
            xmin: AtomicU32::new(INVALID_XID),
            _flags: [0; 4],
        }
    }
    fn xid(&self) -> &AtomicU32 {
        &self.xid
    }
    fn xmin(&self) -> &AtomicU32 {
        &self.xmin
    }
}

/// An array of per-proc entries with `xid` and `xmin` together; every scan reads both.
#[derive(Debug)]
pub struct Records<E>(Box<[E]>);

/// The ≤ 9.1 layout.
pub type Padded = Records<PaddedProc>;
/// The 9.2–13 layout.
pub type PgXact = Records<PgXactEntry>;

impl<E: XidXminEntry> ProcArrayLayout for Records<E> {
    const NAME: &'static str = E::NAME;
    fn with_procs(procs: usize) -> Self {
        Records((0..procs).map(|_| E::empty()).collect())
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn xid(&self, i: usize) -> u32 {
        self.0[i].xid().load(Ordering::Relaxed)
    }
    fn set_xid(&self, i: usize, xid: u32) {
        self.0[i].xid().store(xid, Ordering::Relaxed)
    }
    fn set_xmin(&self, i: usize, xmin: u32) {
        self.0[i].xmin().store(xmin, Ordering::Relaxed)
    }
    /// The ≤ 13 scan also reads every entry's advertised xmin, for the global xmin.
    fn scan(&self, me: Option<usize>, xmax: u32, xip: &mut Vec<u32>) -> (u32, u32) {
        let mut xmin = xmax;
        let mut global = xmax;
        for (i, p) in self.0.iter().enumerate() {
            let xid = p.xid().load(Ordering::Relaxed);
            let proc_xmin = p.xmin().load(Ordering::Relaxed);
            if proc_xmin != INVALID_XID && proc_xmin < global {
                global = proc_xmin;
            }
            if xid == INVALID_XID || xid >= xmax {
                continue;
            }
            xmin = xmin.min(xid);
            if Some(i) != me {
                xip.push(xid);
            }
        }
        (xmin, global.min(xmin))
    }
}

/// A per-proc record holding the advertised xmin, alone on its cache lines (PG 14+ `PGPROC.xmin`).
#[repr(C, align(128))]
#[derive(Debug)]
pub struct XminSlot(AtomicU32);

/// 14+: the dense `ProcGlobal->xids[]` array; `xmin` lives elsewhere and is not scanned.
#[derive(Debug)]
pub struct Dense {
    xids: Box<[AtomicU32]>,
    xmins: Box<[XminSlot]>,
}

impl ProcArrayLayout for Dense {
    const NAME: &'static str = "dense";
    fn with_procs(procs: usize) -> Self {
        Dense {
            xids: (0..procs).map(|_| AtomicU32::new(INVALID_XID)).collect(),
            xmins: (0..procs)
                .map(|_| XminSlot(AtomicU32::new(INVALID_XID)))
                .collect(),
        }
    }
    fn len(&self) -> usize {
        self.xids.len()
    }
    fn xid(&self, i: usize) -> u32 {
        self.xids[i].load(Ordering::Relaxed)
    }
    fn set_xid(&self, i: usize, xid: u32) {
        self.xids[i].store(xid, Ordering::Relaxed)
    }
    fn set_xmin(&self, i: usize, xmin: u32) {
        self.xmins[i].0.store(xmin, Ordering::Relaxed)
    }
    fn scan(&self, me: Option<usize>, xmax: u32, xip: &mut Vec<u32>) -> (u32, u32) {
        let mut xmin = xmax;
        for (i, slot) in self.xids.iter().enumerate() {
            let xid = slot.load(Ordering::Relaxed);
            if xid == INVALID_XID || xid >= xmax {
                continue;
            }
            xmin = xmin.min(xid);
            if Some(i) != me {
                xip.push(xid);
            }
        }
        // PG 14 no longer computes the global horizon here (GlobalVisTest is lazy).
        (xmin, INVALID_XID)
    }
}

/// The proc-array layouts (`--layout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// ≤ 9.1: [`Padded`].
    Padded,
    /// 9.2–13: [`PgXact`].
    PgXact,
    /// 14+: [`Dense`].
    Dense,
}

impl Layout {
    /// Every layout, in `--layout all` order (oldest first).
    pub const ALL: [Layout; 3] = [Layout::Padded, Layout::PgXact, Layout::Dense];

    /// The `--layout` name.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Padded => Padded::NAME,
            Layout::PgXact => PgXact::NAME,
            Layout::Dense => Dense::NAME,
        }
    }

    /// Parses a `--layout` name.
    pub fn from_name(name: &str) -> Option<Layout> {
        Layout::ALL.into_iter().find(|l| l.name() == name)
    }
}

/// A proc array of a layout chosen at run time. Each call dispatches once, outside the scan
/// loop, so the layouts are measured at their own speed.
#[derive(Debug)]
pub enum AnyProcArray {
    /// ≤ 9.1.
    Padded(Padded),
    /// 9.2–13.
    PgXact(PgXact),
    /// 14+.
    Dense(Dense),
}

impl AnyProcArray {
    /// A proc array of `procs` entries in `layout`.
    pub fn new(layout: Layout, procs: usize) -> Self {
        match layout {
            Layout::Padded => AnyProcArray::Padded(Padded::with_procs(procs)),
            Layout::PgXact => AnyProcArray::PgXact(PgXact::with_procs(procs)),
            Layout::Dense => AnyProcArray::Dense(Dense::with_procs(procs)),
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $p:ident => $e:expr) => {
        match $self {
            AnyProcArray::Padded($p) => $e,
            AnyProcArray::PgXact($p) => $e,
            AnyProcArray::Dense($p) => $e,
        }
    };
}

impl ProcArrayLayout for AnyProcArray {
    const NAME: &'static str = "any";
    fn with_procs(procs: usize) -> Self {
        AnyProcArray::new(Layout::Dense, procs)
    }
    fn len(&self) -> usize {
        dispatch!(self, p => p.len())
    }
    fn xid(&self, i: usize) -> u32 {
        dispatch!(self, p => p.xid(i))
    }
    fn set_xid(&self, i: usize, xid: u32) {
        dispatch!(self, p => p.set_xid(i, xid))
    }
    fn set_xmin(&self, i: usize, xmin: u32) {
        dispatch!(self, p => p.set_xmin(i, xmin))
    }
    fn scan(&self, me: Option<usize>, xmax: u32, xip: &mut Vec<u32>) -> (u32, u32) {
        dispatch!(self, p => p.scan(me, xmax, xip))
    }
}

/// The snapshot strategies (`--snapshot`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Scan under the shared lock.
    Scan,
    /// Reuse the thread's last snapshot under the shared lock if no transaction completed.
    Reuse,
    /// Scan without the lock, validated by the even/odd end-of-transaction counter.
    Optimistic,
    /// Copy a snapshot computed once into a shared slot.
    Shared,
}

impl Strategy {
    /// Every strategy, in `--snapshot all` order.
    pub const ALL: [Strategy; 4] = [
        Strategy::Scan,
        Strategy::Reuse,
        Strategy::Optimistic,
        Strategy::Shared,
    ];

    /// The `--snapshot` name.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Scan => "scan",
            Strategy::Reuse => "reuse",
            Strategy::Optimistic => "optimistic",
            Strategy::Shared => "shared",
        }
    }

    /// Parses a `--snapshot` name.
    pub fn from_name(name: &str) -> Option<Strategy> {
        Strategy::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// How a snapshot was obtained (for per-strategy counts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(usize)]
pub enum Outcome {
    /// Scanned under the shared lock.
    Scanned,
    /// Reused the thread's previous snapshot.
    Reused,
    /// Optimistic scan validated without the lock.
    Validated,
    /// Optimistic scan failed validation; scanned under the lock.
    Fallback,
    /// Copied from the shared slot.
    Copied,
    /// Computed into the shared slot for others.
    Published,
}

impl Outcome {
    /// Number of outcomes.
    pub const COUNT: usize = 6;
    /// Every outcome, in `as usize` order.
    pub const ALL: [Outcome; Outcome::COUNT] = [
        Outcome::Scanned,
        Outcome::Reused,
        Outcome::Validated,
        Outcome::Fallback,
        Outcome::Copied,
        Outcome::Published,
    ];
}

/// A critical section under the ProcArrayLock in shared mode, whatever the lock type.
pub trait SharedSection {
    /// Runs `f` while holding the lock shared.
    fn shared_section<R>(&self, f: impl FnOnce() -> R) -> R;
}

impl<L: RawLwLock> SharedSection for Direct<L> {
    fn shared_section<R>(&self, f: impl FnOnce() -> R) -> R {
        self.0.acquire(Mode::Shared);
        struct Release<'a, L: RawLwLock>(&'a L);
        impl<L: RawLwLock> Drop for Release<'_, L> {
            fn drop(&mut self) {
                // SAFETY: acquired shared just above, released once here.
                unsafe { self.0.release(Mode::Shared) }
            }
        }
        let _release = Release(&self.0);
        f()
    }
}

/// A lock of the trait used directly as ProcArrayLock.
#[derive(Debug)]
pub struct Direct<L>(pub L);

/// `INVALID`: the shared slot holds nothing usable.
const SLOT_INVALID: u32 = 0;
/// One thread is computing into the shared slot.
const SLOT_COMPUTING: u32 = 1;
/// The shared slot holds the snapshot of the current state.
const SLOT_VALID: u32 = 2;

/// The shared snapshot slot of the `shared` strategy (invariant 4).
#[derive(Debug)]
struct SharedSlot {
    state: AtomicU32,
    snap: UnsafeCell<Snapshot>,
}

/// The shared state a snapshot is computed from.
#[derive(Debug)]
pub struct ProcArrayState<P> {
    /// The proc array.
    pub procs: P,
    /// `XidGenLock`: serialises xid assignment with the slot store (invariant 3).
    xid_gen_lock: RawAtomicLwLock,
    /// `nextXid`; changed only under `xid_gen_lock`.
    next_xid: AtomicU32,
    /// `latestCompletedXid` (invariant 1).
    latest_completed: AtomicU32,
    /// `xactCompletionCount` (invariant 1).
    completion_count: AtomicU64,
    /// The even/odd end-of-transaction counter (invariant 2).
    seq: AtomicU64,
    /// The `shared` strategy's slot.
    slot: SharedSlot,
}

// SAFETY: the only non-atomic field is the shared slot's snapshot, accessed per invariant 4.
unsafe impl<P: Sync> Sync for ProcArrayState<P> {}

/// A thread's snapshot buffers: the current snapshot, and what `reuse` needs.
#[derive(Debug, Default)]
pub struct SnapshotCache {
    /// The last snapshot taken.
    pub snap: Snapshot,
    /// Whether `snap` may be reused (the `reuse` strategy).
    valid: bool,
}

impl SnapshotCache {
    /// Buffers for a proc array of `procs` entries, allocated once (as `GetSnapshotData` sizes
    /// `xip` for MaxBackends on first use).
    pub fn with_capacity(procs: usize) -> Self {
        SnapshotCache {
            snap: Snapshot {
                xip: Vec::with_capacity(procs),
                ..Snapshot::default()
            },
            valid: false,
        }
    }
}

impl<P: ProcArrayLayout> ProcArrayState<P> {
    /// A proc array of `procs` entries with no transaction running.
    pub fn new(procs: usize) -> Self {
        Self::with_layout(P::with_procs(procs))
    }

    /// The state over an already built proc array with no transaction running.
    pub fn with_layout(procs: P) -> Self {
        ProcArrayState {
            procs,
            xid_gen_lock: RawAtomicLwLock::new_in(Tranche::XID_GEN),
            next_xid: AtomicU32::new(FIRST_NORMAL_XID),
            latest_completed: AtomicU32::new(FIRST_NORMAL_XID - 1),
            completion_count: AtomicU64::new(0),
            seq: AtomicU64::new(0),
            slot: SharedSlot {
                state: AtomicU32::new(SLOT_INVALID),
                snap: UnsafeCell::new(Snapshot::default()),
            },
        }
    }

    /// `GetNewTransactionId`: assigns the next xid to entry `me` and publishes it, under
    /// XidGenLock (invariant 3).
    pub fn assign_xid(&self, me: usize) -> u32 {
        self.xid_gen_lock.acquire(Mode::Exclusive);
        let xid = self.next_xid.load(Ordering::Relaxed);
        assert!(xid < u32::MAX - 1, "xid counter wrapped around");
        self.next_xid.store(xid + 1, Ordering::Relaxed);
        self.procs.set_xid(me, xid);
        // SAFETY: acquired exclusively above.
        unsafe { self.xid_gen_lock.release(Mode::Exclusive) };
        xid
    }

    /// Publishes `xid`, taken from a generator of the caller's, as entry `me`'s running xid.
    ///
    /// Unlike [`assign_xid`](Self::assign_xid) this does not serialise with other assignments,
    /// so invariant 3 does not hold: a snapshot may miss an xid assigned concurrently with it
    /// even though a larger one already completed. The harness uses it so that xid assignment
    /// does not add XidGenLock contention to the lock under study; the correctness tests use
    /// `assign_xid`.
    pub fn publish_xid(&self, me: usize, xid: u32) {
        self.procs.set_xid(me, xid);
    }

    /// `xactCompletionCount`: transactions with an xid ended so far.
    pub fn completion_count(&self) -> u64 {
        self.completion_count.load(Ordering::Relaxed)
    }

    /// The first entry that still has a running xid, if any.
    pub fn first_running(&self) -> Option<usize> {
        (0..self.procs.len()).find(|&i| self.procs.xid(i) != INVALID_XID)
    }

    /// `ProcArrayEndTransactionInternal`: clears `me`'s xid and xmin, advances
    /// `latestCompletedXid` and `xactCompletionCount`, and invalidates the shared snapshot.
    /// The caller must hold the ProcArrayLock exclusively (or be the group leader doing it for
    /// `me`).
    pub fn end_xact(&self, me: usize, xid: u32) {
        let s = self.seq.load(Ordering::Relaxed);
        debug_assert!(s % 2 == 0, "nested end of transaction");
        self.seq.store(s + 1, Ordering::Relaxed);
        // Release fence: the odd value is visible before any of the changes below.
        fence(Ordering::Release);
        self.procs.set_xid(me, INVALID_XID);
        self.procs.set_xmin(me, INVALID_XID);
        if xid > self.latest_completed.load(Ordering::Relaxed) {
            self.latest_completed.store(xid, Ordering::Relaxed);
        }
        self.completion_count.store(
            self.completion_count.load(Ordering::Relaxed) + 1,
            Ordering::Relaxed,
        );
        // Mutant `snapshot_shared_no_invalidate` (models only): keep serving the old snapshot.
        if !lwlock::mutant!("snapshot_shared_no_invalidate") {
            self.slot.state.store(SLOT_INVALID, Ordering::Relaxed);
        }
        // Release: the changes are visible to a reader that sees the new even value.
        self.seq.store(s + 2, Ordering::Release);
    }

    /// The scan proper, into `out`, for taker `me` (`None`: include every xid).
    fn scan_into(&self, me: Option<usize>, out: &mut Snapshot) {
        let latest = self.latest_completed.load(Ordering::Relaxed);
        let xmax = latest + 1;
        out.xip.clear();
        let own = me.map_or(INVALID_XID, |i| self.procs.xid(i));
        let (mut xmin, global) = self.procs.scan(me, xmax, &mut out.xip);
        if own != INVALID_XID && own < xmin {
            xmin = own;
        }
        out.xmin = xmin;
        out.xmax = xmax;
        out.global_xmin = global;
        out.completion_count = self.completion_count.load(Ordering::Relaxed);
    }

    /// Takes a snapshot for entry `me` into `cache.snap` with `strategy`; `lock` is the
    /// ProcArrayLock.
    pub fn snapshot(
        &self,
        strategy: Strategy,
        lock: &impl SharedSection,
        me: usize,
        cache: &mut SnapshotCache,
    ) -> Outcome {
        // Each arm advertises the taker's xmin while still holding the lock (as GetSnapshotData
        // sets MyProc->xmin under ProcArrayLock), so no end of transaction can slip between the
        // snapshot and its advertisement.
        let snap = &mut cache.snap;
        match strategy {
            Strategy::Scan => lock.shared_section(|| {
                self.scan_into(Some(me), snap);
                self.procs.set_xmin(me, snap.xmin);
                Outcome::Scanned
            }),
            Strategy::Reuse => lock.shared_section(|| {
                // Under the shared lock the count cannot change (invariant 1).
                let count = self.completion_count.load(Ordering::Relaxed);
                // Mutant `snapshot_reuse_ignores_count` (models only): reuse a stale snapshot.
                let unchanged = snap.completion_count == count
                    || lwlock::mutant!("snapshot_reuse_ignores_count");
                let outcome = if cache.valid && unchanged {
                    Outcome::Reused
                } else {
                    self.scan_into(Some(me), snap);
                    cache.valid = true;
                    Outcome::Scanned
                };
                self.procs.set_xmin(me, snap.xmin);
                outcome
            }),
            Strategy::Optimistic => {
                let before = self.seq.load(Ordering::Acquire);
                if before % 2 == 0 {
                    self.scan_into(Some(me), snap);
                    // Advertised before validation; if validation fails, the fallback below
                    // advertises again. (Without the lock this is advisory: it only feeds the
                    // global-xmin statistic of the older layouts.)
                    self.procs.set_xmin(me, snap.xmin);
                    // Acquire fence: the reads above happen before the re-read below.
                    fence(Ordering::Acquire);
                    // Mutant `snapshot_no_validate` (models only): trust the unlocked scan.
                    if self.seq.load(Ordering::Relaxed) == before
                        || lwlock::mutant!("snapshot_no_validate")
                    {
                        return Outcome::Validated;
                    }
                }
                lock.shared_section(|| {
                    self.scan_into(Some(me), snap);
                    self.procs.set_xmin(me, snap.xmin);
                });
                Outcome::Fallback
            }
            Strategy::Shared => lock.shared_section(|| {
                let outcome = self.shared_snapshot(me, snap);
                self.procs.set_xmin(me, snap.xmin);
                outcome
            }),
        }
    }

    /// The `shared` strategy's body; runs under the shared lock.
    fn shared_snapshot(&self, me: usize, out: &mut Snapshot) -> Outcome {
        let own = self.procs.xid(me);
        // Acquire: pairs with the computer's Release store of VALID (invariant 4).
        match self.slot.state.load(Ordering::Acquire) {
            SLOT_VALID => {
                self.slot.snap.with(|s| {
                    // SAFETY: VALID, so nobody writes the slot until an end of transaction,
                    // which needs the exclusive lock we are keeping out (invariants 1 and 4).
                    let s = unsafe { &*s };
                    copy_excluding(s, own, out);
                });
                Outcome::Copied
            }
            SLOT_INVALID
                if self
                    .slot
                    .state
                    .compare_exchange(
                        SLOT_INVALID,
                        SLOT_COMPUTING,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    )
                    .is_ok() =>
            {
                self.slot.snap.with_mut(|s| {
                    // SAFETY: we moved the slot to COMPUTING, so we are its only writer and no
                    // one reads it until we publish VALID (invariant 4).
                    let s = unsafe { &mut *s };
                    self.scan_into(None, s);
                    // The shared slot is plain memory that other takers copy: charged under
                    // lwsim (a no-op otherwise).
                    lwlock::sync::touch(s.xip.as_ptr(), s.xip.len() * 4, true);
                    copy_excluding(s, own, out);
                });
                // Release: the slot's contents are visible to copiers that see VALID.
                self.slot.state.store(SLOT_VALID, Ordering::Release);
                Outcome::Published
            }
            _ => {
                // Someone else is computing: don't wait for it, scan privately.
                self.scan_into(Some(me), out);
                Outcome::Scanned
            }
        }
    }

    /// `latestCompletedXid`.
    pub fn latest_completed(&self) -> u32 {
        self.latest_completed.load(Ordering::Relaxed)
    }
}

/// Copies a shared snapshot (built with every running xid) for a taker whose own xid is `own`.
fn copy_excluding(shared: &Snapshot, own: u32, out: &mut Snapshot) {
    lwlock::sync::touch(shared.xip.as_ptr(), shared.xip.len() * 4, false);
    out.xip.clear();
    out.xip
        .extend(shared.xip.iter().copied().filter(|x| *x != own));
    out.xmin = shared.xmin;
    out.xmax = shared.xmax;
    out.global_xmin = shared.global_xmin;
    out.completion_count = shared.completion_count;
}
