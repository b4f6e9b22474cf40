//! The workloads: one transaction of each, written once, generic over the lock family.
//!
//! | name | one transaction | lock operations |
//! |---|---|---|
//! | `null` | shared acquire + release, empty critical section | 1 shared |
//! | `null-x` | exclusive acquire + release (the section bumps a counter, for the check) | 1 exclusive |
//! | `snapshot` | one `GetSnapshotData` with the `--snapshot` strategy over the `--layout` proc array, or (`--write-pct` percent of transactions) instead a short write transaction: assign an xid and end it at once (`ProcArrayEndTransaction`, exclusive; no snapshot), so at most one xid per thread runs and a snapshot's cost does not grow with the trial | 1 shared (0 for an `optimistic` snapshot validated without the lock), or 1 exclusive for a write |
//! | `end-xact` | assign an xid, `--work`, `ProcArrayEndTransaction` (exclusive; group clear for group locks) | 1 exclusive |
//! | `clog` | a fresh xid, `--work` (where the commit writes WAL), its commit status set in its CLOG page (exclusive; grouped by page for `clog-group`) | 1 exclusive |
//! | `pgbench-select` | one snapshot plus `--work` (`pgbench -S`) | 1 shared |
//! | `pgbench-write` | xid, snapshot, `--work`, CLOG commit, end of transaction (`pgbench -N`) | 1 shared + 2 exclusive (ProcArrayLock, XactSLRU) |
//! | `pgbench-write-status` | `pgbench-write` plus [`STATUS_READS`] `TransactionIdGetStatus` lookups of recent xids under the CLOG lock shared, each with its SLRU slot search, before `--work` | 1 + 3 shared + 2 exclusive |
//! | `pin` | pin a hot buffer (atomic refcount in its header), read it under its content lock shared, `--work` (the page's tuples, processed with the lock released), unpin | 1 shared |
//! | `pin-held` | the same read and `--work`, the pin kept across accesses | 1 shared |
//! | `pin-vm` | the hot page kept pinned; each read checks its visibility-map bit with no lock, then `--work` (seed 003's patch 3) | none |
//!
//! `--work` in the pin workloads is the per-page work of a sequential scan: `heapgetpage`
//! (`heap_prepare_pagescan` since 17) pins the page, takes its content lock shared only to
//! collect the visible tuples' offsets, releases the lock, and the executor then processes those
//! tuples with the page still pinned; the pin is dropped when the scan moves to the next page.
//! Seed 003's scan spends about 24 µs per heap page. `pin-vm` is the seed's patch 3: the
//! visibility-map page stays pinned across heap pages (one pin per scan, not per page) and its
//! bit is read with no lock (`visibilitymap_get_status`), so a read moves no shared line.
//!
//! # Checks
//! Every trial is checked, during the run and after it:
//! * **Section checks** ([`SectionCheck`], one per lock): a sampled critical section (one in
//!   [`CHECK_EVERY`] on average) asks the lock whether it is held in its mode (a shared section
//!   must find it held, an exclusive one held exclusively) and asserts no overlap: an exclusive
//!   section counts itself in and out of a writer counter (no second writer) and bumps a writer
//!   epoch; a shared section, which writes nothing shared (so that the check does not limit a
//!   reader-scalable lock), requires no writer inside and the epoch unchanged across it, as a
//!   seqlock reader does. Writers write a four-word value that they keep equal, so a reader that
//!   overlaps a writer may also see it torn. A lock that takes nothing for a shared acquire, or
//!   only a shared hold for an exclusive one, fails these (`--locks broken` proves it per
//!   workload).
//! * **After the trial**: every ended transaction is counted in `xactCompletionCount`, no xid is
//!   left running, every CLOG commit is in the CLOG, the null-x counter equals its exclusive
//!   sections, no buffer pin is left, and every snapshot's running xids lie in `[xmin, xmax)`;
//!   `pin-vm` counted one map read per transaction, each found its page all-visible, and the map
//!   word is unchanged; `pgbench-write-status` did [`STATUS_READS`] lookups per transaction, each
//!   read a valid status, and each thread saw its own previous commit committed.

use crate::bufmgr::HotPage;
use crate::clock::{self, Ticks};
use crate::lmgr::{LmgrRelease, LockManager};
use crate::locks::{BenchLock, LockFamily};
use crate::pgshared::{
    BufferDesc, Clog, Page, XidGen, CLOG_XACTS_PER_PAGE, FIRST_NORMAL_XID, INVALID_XID,
    VISIBILITY_MAP, VM_WORD_ALL_VISIBLE, XACT_COMMITTED,
};
use crate::snapshot::{
    AnyProcArray, Layout, Outcome, ProcArrayState, SharedSection, SnapshotCache, Strategy,
};
use crossbeam_utils::CachePadded;
use hdrhistogram::Histogram;
use lwlock::Tranche;
use std::cell::Cell;
use std::hint::black_box;
// The shim's atomics and mutex: std's in a normal build, the simulator's under `--cfg lwsim`, so
// that `--engine sim` runs this same workload code on a simulated machine.
use lwlock::sync::{touch, AtomicBool, AtomicU32, AtomicU64, Mutex, Ordering};

/// One critical section in this many (on average, randomly spaced) runs the section checks.
pub const CHECK_EVERY: u32 = 16;

/// The harness's own check that a lock excludes (see the module docs, "Checks").
///
/// Everything in it is atomic, so the check itself stays well-defined when the lock under test
/// does not exclude.
///
/// A checked *shared* section writes nothing shared: it reads the writer line at entry and at
/// exit and the four words in between. A check that counted readers in a shared counter would
/// itself move a line between every two readers, and would cap a reader-scalable lock's
/// scaling at the check's own (docs/results.md, "The checks' own cost", has the measurement:
/// dated figures live there, not in comments). So overlap is seen from the reader's side, as a
/// seqlock reader sees a writer:
/// * `writers` counts the checked exclusive holders inside (two at once: a violation), and
///   `epoch` counts checked exclusive entries;
/// * a checked shared holder reads `epoch`, then requires `writers == 0`; after its section it
///   requires `writers == 0` and `epoch` unchanged. A checked writer that overlapped any part of
///   the section either was inside at the first check or entered after it, and then moved
///   `epoch` before the second.
///
/// SeqCst throughout: the writer increments `writers` then `epoch`, the reader loads `epoch` then
/// `writers` (at entry) and `writers` then `epoch` (at exit); the argument above needs the single
/// total order of those accesses. The checks run on sampled sections only, so their cost is
/// small, and the shared side's is a few loads of lines that only writers write.
#[derive(Debug, Default)]
pub struct SectionCheck {
    /// Checked exclusive holders inside, and checked exclusive entries (a line only checked
    /// writers write).
    writer: CachePadded<WriterLine>,
    /// Writers set all four to one new value, word by word; readers require them equal.
    words: CachePadded<[AtomicU64; 4]>,
    violations: AtomicU64,
    first: Mutex<Option<String>>,
}

/// The writer side of a [`SectionCheck`].
#[derive(Debug, Default)]
struct WriterLine {
    writers: AtomicU32,
    epoch: AtomicU64,
}

impl SectionCheck {
    fn violation(&self, what: String) {
        if self.violations.fetch_add(1, Ordering::SeqCst) == 0 {
            *self.first.lock().unwrap_or_else(|e| e.into_inner()) = Some(what);
        }
    }

    /// Runs the checks of a shared section around `f`. `held` is the lock's own view.
    #[inline]
    pub fn shared<R>(&self, held: Option<(bool, bool)>, f: impl FnOnce() -> R) -> R {
        if held.is_some_and(|(locked, _)| !locked) {
            self.violation("a shared holder found the lock not held".into());
        }
        let epoch = self.writer.epoch.load(Ordering::SeqCst);
        if self.writer.writers.load(Ordering::SeqCst) != 0 {
            self.violation("a shared holder overlapped an exclusive holder".into());
        }
        let w: [u64; 4] = std::array::from_fn(|i| self.words[i].load(Ordering::SeqCst));
        if w.iter().any(|&x| x != w[0]) {
            self.violation(format!("a shared holder read a torn value {w:?}"));
        }
        let r = f();
        if self.writer.writers.load(Ordering::SeqCst) != 0
            || self.writer.epoch.load(Ordering::SeqCst) != epoch
        {
            self.violation("an exclusive holder entered beside a shared holder".into());
        }
        r
    }

    /// Runs the checks of an exclusive section around `f`.
    #[inline]
    pub fn exclusive<R>(&self, held: Option<(bool, bool)>, f: impl FnOnce() -> R) -> R {
        if held.is_some_and(|(_, exclusive)| !exclusive) {
            self.violation("an exclusive holder found the lock not held exclusively".into());
        }
        if self.writer.writers.fetch_add(1, Ordering::SeqCst) != 0 {
            self.violation("two exclusive holders at once".into());
        }
        self.writer.epoch.fetch_add(1, Ordering::SeqCst);
        let v = self.words[0].load(Ordering::SeqCst).wrapping_add(1);
        for x in self.words.iter() {
            x.store(v, Ordering::SeqCst);
            lwlock::sync::spin_loop();
        }
        let r = f();
        self.writer.writers.fetch_sub(1, Ordering::SeqCst);
        r
    }

    /// `Err(first violation, count)` if any check failed.
    pub fn result(&self) -> Result<(), String> {
        match self.violations.load(Ordering::SeqCst) {
            0 => Ok(()),
            n => Err(format!(
                "{} ({n} section-check violation{})",
                self.first
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone()
                    .unwrap_or_default(),
                if n == 1 { "" } else { "s" }
            )),
        }
    }
}

/// One worker's progress, published after every transaction so that the driver can count the
/// work done inside the measurement window (start to stop signal) without waiting for
/// stragglers. Padded: each worker writes only its own.
#[derive(Debug, Default)]
pub struct Progress {
    /// Lock operations done.
    pub ops: AtomicU64,
    /// Transactions done.
    pub txns: AtomicU64,
}

impl Progress {
    /// `(ops, txns)` as one pair while the worker runs: `txns` is read between two reads of
    /// `ops` that agree (retried up to 64 times, then the last reads are taken), so the pair
    /// is off by at most the one transaction whose two stores it fell between. A reader
    /// preempted between two plain loads would otherwise pair an old `ops` with a `txns`
    /// thousands of transactions newer. Acquire keeps the three loads in order (they publish
    /// nothing; the worker's stores stay Relaxed).
    pub fn snapshot(&self) -> (u64, u64) {
        let mut last = (0, 0);
        for _ in 0..64 {
            let o1 = self.ops.load(Ordering::Acquire);
            let t = self.txns.load(Ordering::Acquire);
            let o2 = self.ops.load(Ordering::Acquire);
            last = (o2, t);
            if o1 == o2 {
                break;
            }
        }
        last
    }
}

macro_rules! workloads {
    ($($variant:ident => $name:literal, clog: $clog:literal, $doc:literal;)*) => {
        /// A workload, by name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Workload { $(#[doc = $doc] $variant,)* }
        impl Workload {
            /// Every workload.
            pub const ALL: &'static [Workload] = &[$(Workload::$variant),*];
            /// The command-line name.
            pub fn name(self) -> &'static str { match self { $(Workload::$variant => $name,)* } }
            /// One-line description.
            pub fn description(self) -> &'static str { match self { $(Workload::$variant => $doc,)* } }
            /// Whether the workload updates the CLOG (where `clog-group` applies).
            pub fn uses_clog(self) -> bool { match self { $(Workload::$variant => $clog,)* } }
        }
    };
}

workloads! {
    Null => "null", clog: false, "shared acquire + release, empty critical section";
    NullX => "null-x", clog: false, "exclusive acquire + release";
    Snapshot => "snapshot", clog: false, "GetSnapshotData under ProcArrayLock shared, or (--write-pct) a short write transaction";
    EndXact => "end-xact", clog: false, "assign an xid, then ProcArrayEndTransaction under exclusive";
    Clog => "clog", clog: true, "set a fresh xid's commit status in its CLOG page (after --work, where a commit writes WAL)";
    PgbenchSelect => "pgbench-select", clog: false, "pgbench -S: one snapshot plus --work";
    PgbenchWrite => "pgbench-write", clog: true, "pgbench -N: snapshot, xid, CLOG commit, end-xact";
    PgbenchWriteStatus => "pgbench-write-status", clog: true, "pgbench -N with TransactionIdGetStatus lookups of recent xids under the CLOG lock shared";
    Pin => "pin", clog: false, "pin/unpin a hot buffer around each shared read";
    PinHeld => "pin-held", clog: false, "shared reads of a hot buffer kept pinned";
    PgbenchN => "pgbench-n", clog: true, "pgbench -N statement by statement: a snapshot per statement (3), the xid at the first write, --work over the statements and the commit's WAL, CLOG commit, end-xact";
    SelectLmgr => "select-lmgr", clog: false, "pgbench -S of 9.1: vxid and two relation locks through the lock partitions, a snapshot, --work";
    SelectFastpath => "select-fastpath", clog: false, "pgbench -S with 9.2's fast-path relation locks (the vxid lock still partitioned)";
    SelectLazyVxid => "select-lazy-vxid", clog: false, "pgbench -S with fast-path relation locks and lazy vxid locks: no lock-partition traffic";
    PinVm => "pin-vm", clog: false, "a pinned page's visibility-map bit read with no lock, then --work (seed 003's patch 3)";
}

impl Workload {
    /// Whether the workload uses the proc array (where `--layout` applies).
    pub fn uses_proc_array(self) -> bool {
        matches!(
            self,
            Workload::Snapshot
                | Workload::EndXact
                | Workload::PgbenchSelect
                | Workload::PgbenchWrite
                | Workload::PgbenchN
                | Workload::PgbenchWriteStatus
        ) || self.lmgr().is_some()
    }
    /// Whether the workload takes snapshots (where `--snapshot` applies).
    pub fn takes_snapshots(self) -> bool {
        matches!(
            self,
            Workload::Snapshot
                | Workload::PgbenchSelect
                | Workload::PgbenchWrite
                | Workload::PgbenchN
                | Workload::PgbenchWriteStatus
        ) || self.lmgr().is_some()
    }
    /// The lock manager a `pgbench -S` workload of seed 000's thread runs, if it is one.
    pub fn lmgr(self) -> Option<LmgrRelease> {
        match self {
            Workload::SelectLmgr => Some(LmgrRelease::Partitioned),
            Workload::SelectFastpath => Some(LmgrRelease::FastPath),
            Workload::SelectLazyVxid => Some(LmgrRelease::LazyVxid),
            _ => None,
        }
    }
    /// Whether each thread keeps the hot buffer pinned for the whole trial.
    pub fn holds_pin(self) -> bool {
        matches!(self, Workload::PinHeld | Workload::PinVm)
    }
    /// Looks a workload up by name.
    pub fn from_name(name: &str) -> Option<Workload> {
        Workload::ALL.iter().copied().find(|w| w.name() == name)
    }
    /// All names, comma-separated.
    pub fn valid_names() -> String {
        Workload::ALL
            .iter()
            .map(|w| w.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// CLOG pages in the ring (16 × 32 768 xids).
const CLOG_PAGES: usize = 16;

/// `TransactionIdGetStatus` lookups per `pgbench-write-status` transaction: the visibility
/// checks of a `pgbench -N` transaction on tuples whose hint bits are not yet set
/// (`HeapTupleSatisfiesMVCC` → `TransactionIdDidCommit` → `TransactionLogFetch`): the UPDATE's
/// index scan checks the accounts row's xmin and the xmax of its previous version, and the
/// SELECT the row's chain again. A choice (an upper estimate: once a check sets the hint bits
/// the next skips the CLOG), not a measurement; each lookup takes the CLOG lock shared
/// (`SimpleLruReadPage_ReadOnly`), the reads seed 004's CLogControlLock waits include besides
/// the commits.
pub const STATUS_READS: u32 = 3;

/// The lookups' xids lie in the `RECENT_XIDS` xids before the transaction's own: tuples
/// written by recently committed (or still running) transactions, whose hint bits no one has
/// set yet.
const RECENT_XIDS: u64 = 1024;

/// Everything the threads of one trial share.
pub struct Shared<F: LockFamily> {
    /// The proc array, `latestCompletedXid` and `xactCompletionCount` (shared memory: atomics
    /// that ProcArrayLock orders, so that the optimistic snapshot can read them without it).
    pub procs: ProcArrayState<AnyProcArray>,
    /// ProcArrayLock.
    pub proc_array: F::Lock<()>,
    /// The CLOG lock and the CLOG.
    pub clog: F::Lock<Clog>,
    /// The lock of the null workloads (a counter for the exclusive one).
    pub null: F::Lock<u64>,
    /// The hot buffer of the pin workloads.
    pub buffer: BufferDesc<F::Lock<Page>>,
    /// The lock manager's partition and fast-path locks (empty but for the `select-*`
    /// workloads).
    pub lmgr: LockManager<F>,
    /// The primary key's root page of the `select-*` workloads, reached as 9.1 reached it.
    pub root_page: Option<HotPage<F>>,
    /// The xid counter.
    pub xids: XidGen,
    /// Set by the driver when the trial's time is up.
    pub stop: AtomicBool,
    /// Section checks of ProcArrayLock.
    pub proc_array_check: CachePadded<SectionCheck>,
    /// Section checks of the CLOG lock.
    pub clog_check: CachePadded<SectionCheck>,
    /// Section checks of the null workloads' lock.
    pub null_check: CachePadded<SectionCheck>,
    /// Section checks of the buffer content lock.
    pub buffer_check: CachePadded<SectionCheck>,
    /// Per-slot progress (one per proc-array slot; workers use slots `0..threads`).
    pub progress: Box<[CachePadded<Progress>]>,
}

impl<F: LockFamily> std::fmt::Debug for Shared<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").finish_non_exhaustive()
    }
}

impl<F: LockFamily> Shared<F> {
    /// Fresh state for `procs` procs in proc-array `layout`.
    pub fn new(workload: Workload, procs: usize, layout: Layout) -> Self {
        let clog_pages = if workload.uses_clog() { CLOG_PAGES } else { 1 };
        Shared {
            procs: ProcArrayState::with_layout(AnyProcArray::new(layout, procs)),
            proc_array: F::Lock::new((), Tranche::PROC_ARRAY),
            clog: F::Lock::new(Clog::new(clog_pages), Tranche::XACT_SLRU),
            null: F::Lock::new(0, Tranche::DEFAULT),
            buffer: BufferDesc {
                refcount: Default::default(),
                content: F::Lock::new(Page::default(), Tranche::BUFFER_CONTENT),
            },
            lmgr: LockManager::new(if workload.lmgr().is_some() { procs } else { 0 }),
            // Any fixed partition: the root's tag always hashes to the same one.
            root_page: workload.lmgr().map(|_| HotPage::new(7)),
            xids: XidGen::default(),
            stop: AtomicBool::new(false),
            proc_array_check: Default::default(),
            clog_check: Default::default(),
            null_check: Default::default(),
            buffer_check: Default::default(),
            progress: (0..procs).map(|_| Default::default()).collect(),
        }
    }

    /// The first section-check violation of any lock, if one failed.
    pub fn section_checks(&self) -> Result<(), String> {
        for (name, c) in [
            ("ProcArrayLock", &self.proc_array_check),
            ("XactSLRU", &self.clog_check),
            ("null lock", &self.null_check),
            ("buffer content lock", &self.buffer_check),
        ] {
            c.result().map_err(|e| format!("{name}: {e}"))?;
        }
        Ok(())
    }
}

/// Per-thread settings.
#[derive(Clone, Copy, Debug)]
pub struct WorkerConfig {
    /// Percent of snapshot operations that end a transaction instead.
    pub write_pct: u8,
    /// Iterations of busy work outside locks per transaction.
    pub work: u32,
    /// Time one operation in this many, on average (the spacing is random, so that it cannot
    /// alias with a transaction's fixed sequence of operations).
    pub time_every: u32,
    /// How snapshots are taken.
    pub strategy: Strategy,
}

/// One thread's state and tallies.
#[derive(Debug)]
pub struct Worker {
    /// The thread's proc-array slot.
    pub slot: usize,
    cfg: WorkerConfig,
    rng: u64,
    countdown: u32,
    check_countdown: u32,
    /// The thread's snapshot buffers (and, for `reuse`, its previous snapshot).
    pub cache: SnapshotCache,
    /// The thread's running xid, or `INVALID_XID`.
    xid: u32,
    /// Lock operations done.
    pub ops: u64,
    /// Transactions done.
    pub txns: u64,
    /// End-of-transaction operations done (checked against `xactCompletionCount`).
    pub ends: u64,
    /// CLOG updates done (checked against the CLOG's count).
    pub clog_ops: u64,
    /// The last xid this thread committed in the CLOG.
    pub last_clog_xid: u32,
    /// Reads that break their invariant (must stay 0): snapshots whose running xids are not all
    /// in `[xmin, xmax)`, `pin-vm` map reads that found the page not all-visible,
    /// `pgbench-write-status` lookups that read an invalid status or missed the thread's own
    /// previous commit. (One counter for all, so that `Worker` keeps its size and the other
    /// workloads' simulated runs their addresses.)
    pub bad_reads: u64,
    /// Snapshots by how they were obtained, indexed by [`Outcome`] as `usize`.
    pub snapshot_outcomes: [u64; Outcome::COUNT],
    /// Wait until the shared critical section began, for timed shared operations.
    pub shared_wait: Histogram<u64>,
    /// Wait until the exclusive (or grouped) operation ran, for timed exclusive operations of
    /// every lock but the CLOG's (ProcArrayLock, the null lock).
    pub excl_wait: Histogram<u64>,
    /// The same for the CLOG lock (XactSLRU), kept apart: pgbench-write takes both.
    pub clog_wait: Histogram<u64>,
    sink: u64,
}

fn histogram() -> Histogram<u64> {
    // 1 ns .. 100 s at 2 significant digits (1 %), about 80 KB.
    Histogram::new_with_bounds(1, 100_000_000_000, 2).expect("valid histogram bounds")
}

impl Worker {
    /// A worker for proc-array slot `slot`.
    pub fn new(slot: usize, procs: usize, cfg: WorkerConfig) -> Self {
        Worker::with_seed(slot, procs, cfg, 0)
    }

    /// The same, its random choices (timing and check spacing, `--write-pct` draws) also mixed
    /// with `seed` (seed 0 gives [`Worker::new`]'s): simulated trials use a seed each, so that
    /// they differ as real trials do.
    pub fn with_seed(slot: usize, procs: usize, cfg: WorkerConfig, seed: u64) -> Self {
        let mixed = seed.wrapping_mul(0xA24B_AED4_963E_E407).rotate_left(17);
        Worker {
            slot,
            cfg,
            rng: (0x2545_F491_4F6C_DD1D
                ^ (slot as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
                ^ mixed)
                .max(1),
            countdown: 1 + (slot as u32 % cfg.time_every.max(1)),
            check_countdown: 1 + (slot as u32 % CHECK_EVERY),
            cache: SnapshotCache::with_capacity(procs),
            xid: INVALID_XID,
            ops: 0,
            txns: 0,
            ends: 0,
            clog_ops: 0,
            last_clog_xid: INVALID_XID,
            bad_reads: 0,
            snapshot_outcomes: [0; Outcome::COUNT],
            shared_wait: histogram(),
            excl_wait: histogram(),
            clog_wait: histogram(),
            sink: 0,
        }
    }

    #[inline]
    fn rand(&mut self) -> u64 {
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        x
    }

    /// A random spacing with mean `every`: uniform in `[1, 2·every − 1]`.
    #[inline]
    fn spacing(&mut self, every: u32) -> u32 {
        if every <= 1 {
            1
        } else {
            1 + (self.rand() % (2 * every as u64 - 1)) as u32
        }
    }

    /// `Some(now)` for one operation in `time_every` on average, randomly spaced.
    #[inline]
    fn timer(&mut self) -> Option<Ticks> {
        self.countdown -= 1;
        if self.countdown == 0 {
            self.countdown = self.spacing(self.cfg.time_every);
            Some(clock::now())
        } else {
            None
        }
    }

    /// Whether this critical section runs the section checks (one in [`CHECK_EVERY`]).
    #[inline]
    fn checked(&mut self) -> bool {
        self.check_countdown -= 1;
        if self.check_countdown == 0 {
            self.check_countdown = self.spacing(CHECK_EVERY);
            true
        } else {
            false
        }
    }

    /// Busy work outside any lock: `--work` xorshift steps (charged as 1 ns each on the
    /// simulator, which times memory operations only).
    #[inline]
    fn work(&mut self) {
        #[cfg(lwsim)]
        if self.cfg.work > 0 {
            lwlock::sync::lwsim::compute(self.cfg.work as u64);
        }
        for _ in 0..self.cfg.work {
            let r = self.rand();
            self.sink = self.sink.wrapping_add(black_box(r));
        }
    }

    /// Part `part` of `parts` of the transaction's `--work` (the parts add up to it exactly:
    /// the last takes the remainder).
    #[inline]
    fn work_part(&mut self, part: u32, parts: u32) {
        let each = self.cfg.work / parts;
        let n = if part + 1 == parts {
            self.cfg.work - each * (parts - 1)
        } else {
            each
        };
        #[cfg(lwsim)]
        if n > 0 {
            lwlock::sync::lwsim::compute(n as u64);
        }
        for _ in 0..n {
            let r = self.rand();
            self.sink = self.sink.wrapping_add(black_box(r));
        }
    }

    fn record(h: &mut Histogram<u64>, waited: Option<u64>) {
        if let Some(ns) = waited {
            h.saturating_record(ns.max(1));
        }
    }
}

fn ns_since(t0: Option<Ticks>) -> Option<u64> {
    t0.map(clock::ns_since)
}

/// Runs `f` in a shared section of `lock`, with the section checks of `check` if `checked`.
#[inline]
fn shared_checked<T: Send + Sync, L: BenchLock<T>, R>(
    lock: &L,
    check: &SectionCheck,
    checked: bool,
    f: impl FnOnce(&T) -> R,
) -> R {
    lock.shared(|d| {
        if checked {
            check.shared(lock.held(), || f(d))
        } else {
            f(d)
        }
    })
}

/// ProcArrayLock as the snapshot code's shared section, noting how long entering it took.
struct TimedSection<'a, L> {
    lock: &'a L,
    check: &'a SectionCheck,
    checked: bool,
    t0: Option<Ticks>,
    waited: Cell<Option<u64>>,
}

impl<L: BenchLock<()>> SharedSection for TimedSection<'_, L> {
    fn shared_section<R>(&self, f: impl FnOnce() -> R) -> R {
        shared_checked(self.lock, self.check, self.checked, |_| {
            self.waited.set(ns_since(self.t0));
            f()
        })
    }
}

/// GetSnapshotData with the configured strategy.
#[inline]
fn take_snapshot<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    let checked = w.checked();
    let section = TimedSection {
        lock: &s.proc_array,
        check: &s.proc_array_check,
        checked,
        t0: w.timer(),
        waited: Cell::new(None),
    };
    let outcome = s
        .procs
        .snapshot(w.cfg.strategy, &section, w.slot, &mut w.cache);
    w.snapshot_outcomes[outcome as usize] += 1;
    let snap = black_box(&w.cache.snap);
    if checked && snap.xip.iter().any(|&x| x < snap.xmin || x >= snap.xmax) {
        w.bad_reads += 1;
    }
    if outcome == Outcome::Validated {
        // Validated without the lock: no lock operation, and no wait (timed as zero, so that
        // the percentiles describe every snapshot, not only those that took the lock).
        if section.t0.is_some() {
            w.shared_wait.saturating_record(0);
        }
    } else {
        Worker::record(&mut w.shared_wait, section.waited.get());
        w.ops += 1;
    }
}

/// The next xid; the first xid of a CLOG page extends the CLOG (`ExtendCLOG`, under the CLOG
/// lock, once per 32 768 xids).
#[inline]
fn next_xid<F: LockFamily>(s: &Shared<F>) -> u32 {
    let xid = s.xids.next();
    if xid % CLOG_XACTS_PER_PAGE == 0 {
        s.clog.exclusive(|c| c.extend(xid));
    }
    xid
}

/// GetNewTransactionId: a fresh xid published in the thread's slot.
#[inline]
fn begin_xact<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    let xid = next_xid(s);
    s.procs.publish_xid(w.slot, xid);
    w.xid = xid;
}

/// ProcArrayEndTransaction for the thread's running xid.
#[inline]
fn end_xact<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    let t0 = w.timer();
    let checked = w.checked();
    let (slot, xid, procs) = (w.slot, w.xid, &s.procs);
    let (lock, check) = (&s.proc_array, &*s.proc_array_check);
    let waited = s.proc_array.group(0, move |_| {
        let waited = ns_since(t0);
        if checked {
            check.exclusive(lock.held(), || procs.end_xact(slot, xid));
        } else {
            procs.end_xact(slot, xid);
        }
        waited
    });
    Worker::record(&mut w.excl_wait, waited);
    w.xid = INVALID_XID;
    w.ends += 1;
    w.ops += 1;
}

/// TransactionIdSetPageStatus for `xid` (committed).
#[inline]
fn clog_commit<F: LockFamily>(s: &Shared<F>, w: &mut Worker, xid: u32) {
    let t0 = w.timer();
    let checked = w.checked();
    let (lock, check) = (&s.clog, &*s.clog_check);
    let waited = s.clog.group(Clog::page_of(xid), move |clog| {
        let waited = ns_since(t0);
        if checked {
            check.exclusive(lock.held(), || clog.set_status(xid, XACT_COMMITTED));
        } else {
            clog.set_status(xid, XACT_COMMITTED);
        }
        waited
    });
    Worker::record(&mut w.clog_wait, waited);
    w.last_clog_xid = xid;
    w.clog_ops += 1;
    w.ops += 1;
}

#[inline]
fn read_buffer<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    let t0 = w.timer();
    let checked = w.checked();
    let slot = w.slot;
    let (waited, v) = shared_checked(&s.buffer.content, &s.buffer_check, checked, |p| {
        let waited = ns_since(t0);
        touch(p as *const Page, std::mem::size_of::<Page>(), false);
        (waited, p.flags as u64 + p.tuples[slot % 8])
    });
    w.sink = w.sink.wrapping_add(v);
    Worker::record(&mut w.shared_wait, waited);
    w.ops += 1;
}

/// `visibilitymap_get_status` with no lock (the map page kept pinned): one atomic load of the
/// map word's line, which no one writes. Timed as a zero wait when the timer fires, as an
/// optimistic snapshot is, so that the percentiles describe every read.
#[inline]
fn read_vm(w: &mut Worker) {
    if w.timer().is_some() {
        w.shared_wait.saturating_record(0);
    }
    if !VISIBILITY_MAP.all_visible(w.slot) {
        w.bad_reads += 1;
    }
}

/// `STATUS_READS` `TransactionIdGetStatus` lookups, each its own shared section of the CLOG
/// lock (`SimpleLruReadPage_ReadOnly` takes it and `TransactionIdGetStatus` releases it). The
/// first looks up the thread's previous commit (which must read committed, unless the ring
/// has wrapped over it), the others recent xids. Not timed: `shared_wait` stays the
/// snapshot's.
#[inline]
fn status_lookups<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    let window = (CLOG_PAGES as u32 - 1) * CLOG_XACTS_PER_PAGE;
    for i in 0..STATUS_READS {
        let own = i == 0 && w.last_clog_xid != INVALID_XID;
        let xid = if own {
            w.last_clog_xid
        } else {
            let back = 1 + (w.rand() % RECENT_XIDS) as u32;
            w.xid.saturating_sub(back).max(FIRST_NORMAL_XID)
        };
        let checked = w.checked();
        let status = shared_checked(&s.clog, &s.clog_check, checked, |c| c.lookup_status(xid));
        let wrapped = w.xid.wrapping_sub(xid) >= window;
        if status > XACT_COMMITTED || (own && status != XACT_COMMITTED && !wrapped) {
            w.bad_reads += 1;
        }
        w.sink = w.sink.wrapping_add(status as u64);
        w.ops += 1;
    }
}

/// One `pgbench-write-status` transaction. Not inlined, so that adding it left the generated
/// code of the other workloads' transactions as it was: simulated runs depend on it (inlined,
/// it changed `pgbench-write` on `clog-group` under `--engine sim`).
#[inline(never)]
fn pgbench_write_status<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    begin_xact(s, w);
    take_snapshot(s, w);
    status_lookups(s, w);
    w.work();
    clog_commit(s, w, w.xid);
    end_xact(s, w);
}

/// One transaction of `workload`.
#[inline]
fn transaction<F: LockFamily>(workload: Workload, s: &Shared<F>, w: &mut Worker) {
    match workload {
        Workload::Null => {
            let t0 = w.timer();
            let checked = w.checked();
            let waited = shared_checked(&s.null, &s.null_check, checked, |_| ns_since(t0));
            Worker::record(&mut w.shared_wait, waited);
            w.ops += 1;
        }
        Workload::NullX => {
            let t0 = w.timer();
            let checked = w.checked();
            let (lock, check) = (&s.null, &*s.null_check);
            let waited = s.null.exclusive(|n| {
                let waited = ns_since(t0);
                touch(n as *const u64, 8, true);
                if checked {
                    check.exclusive(lock.held(), || *n += 1);
                } else {
                    *n += 1;
                }
                waited
            });
            Worker::record(&mut w.excl_wait, waited);
            w.ops += 1;
        }
        Workload::Snapshot => {
            if w.cfg.write_pct > 0 && (w.rand() % 100) < w.cfg.write_pct as u64 {
                begin_xact(s, w);
                end_xact(s, w);
            } else {
                take_snapshot(s, w);
            }
        }
        Workload::EndXact => {
            begin_xact(s, w);
            w.work();
            end_xact(s, w);
        }
        Workload::Clog => {
            let xid = next_xid(s);
            // Where PostgreSQL's commit inserts and flushes its WAL record (between xid
            // assignment and the CLOG update); 0 by default.
            w.work();
            clog_commit(s, w, xid);
        }
        Workload::PgbenchSelect => {
            take_snapshot(s, w);
            w.work();
        }
        Workload::PgbenchWrite => {
            begin_xact(s, w);
            take_snapshot(s, w);
            w.work();
            clog_commit(s, w, w.xid);
            end_xact(s, w);
        }
        Workload::PgbenchWriteStatus => pgbench_write_status(s, w),
        Workload::Pin => {
            s.buffer.pin();
            read_buffer(s, w);
            // The page's tuples, processed with the content lock released, still pinned.
            w.work();
            s.buffer.unpin();
        }
        Workload::PinHeld => {
            read_buffer(s, w);
            w.work();
        }
        Workload::PinVm => {
            read_vm(w);
            w.work();
        }
        Workload::PgbenchN => {
            // pgbench's simple-update script under read committed: each statement takes its
            // own snapshot. UPDATE pgbench_accounts: its snapshot, then the xid at the first
            // write (AssignTransactionId).
            take_snapshot(s, w);
            begin_xact(s, w);
            w.work_part(0, 4);
            // SELECT abalance.
            take_snapshot(s, w);
            w.work_part(1, 4);
            // INSERT INTO pgbench_history.
            take_snapshot(s, w);
            w.work_part(2, 4);
            // END: RecordTransactionCommit's WAL insert and flush, then the CLOG, then
            // ProcArrayEndTransaction.
            w.work_part(3, 4);
            clog_commit(s, w, w.xid);
            end_xact(s, w);
        }
        Workload::SelectLmgr | Workload::SelectFastpath | Workload::SelectLazyVxid => {
            let release = workload.lmgr().expect("a select-* workload");
            // The backend's local transaction id (`MyProc->lxid`), for its vxid lock's tag.
            let lxid = w.txns as u32;
            w.ops += s.lmgr.begin_select(release, w.slot, lxid);
            take_snapshot(s, w);
            // The index scan's descent starts at the primary key's root page, which every
            // backend looks up, pins and reads as 9.1 did (the leaf and heap pages are spread
            // over the table: their cost is part of --work).
            let page = s
                .root_page
                .as_ref()
                .expect("a select-* workload has its root page");
            let (ops, v) = page.read();
            w.ops += ops;
            w.sink = w.sink.wrapping_add(v);
            w.work();
            w.ops += s.lmgr.end_select(release, w.slot, lxid);
        }
    }
    w.txns += 1;
    // Relaxed: read by the driver at the stop signal; a value a few transactions old is fine.
    let p = &s.progress[w.slot];
    p.ops.store(w.ops, Ordering::Relaxed);
    p.txns.store(w.txns, Ordering::Relaxed);
}

/// Runs `n` transactions of `workload` (the criterion benchmarks' unit of work: each sample
/// runs a fixed number of operations spread over the threads).
pub fn run_transactions<F: LockFamily>(workload: Workload, s: &Shared<F>, w: &mut Worker, n: u64) {
    for _ in 0..n {
        transaction(workload, s, w);
    }
    black_box(w.sink);
}

/// Runs transactions until `s.stop` is set.
pub fn run_until_stopped<F: LockFamily>(workload: Workload, s: &Shared<F>, w: &mut Worker) {
    if workload.holds_pin() {
        s.buffer.pin();
    }
    // Relaxed: the flag carries no data; the join that follows orders everything.
    while !s.stop.load(Ordering::Relaxed) {
        transaction(workload, s, w);
    }
    if workload.holds_pin() {
        s.buffer.unpin();
    }
    // A snapshot-workload writer leaves its last transaction running; end it outside the count
    // so that the proc array is clean for the checks.
    if w.xid != INVALID_XID {
        let (slot, xid, procs) = (w.slot, w.xid, &s.procs);
        s.proc_array.exclusive(|_| procs.end_xact(slot, xid));
        w.ends += 1;
        w.xid = INVALID_XID;
    }
    black_box(w.sink);
}

/// The harness's correctness checks after a trial (best practice: every benchmark run checks
/// the invariants the lock must keep).
pub fn check<F: LockFamily>(
    workload: Workload,
    s: &Shared<F>,
    workers: &[Worker],
) -> Result<(), String> {
    s.section_checks()
        .map_err(|e| format!("{}: {e}", workload.name()))?;
    let ends: u64 = workers.iter().map(|w| w.ends).sum();
    let clog_ops: u64 = workers.iter().map(|w| w.clog_ops).sum();
    let ops: u64 = workers.iter().map(|w| w.ops).sum();
    let bad: u64 = workers.iter().map(|w| w.bad_reads).sum();
    let completions = s.proc_array.shared(|_| s.procs.completion_count());
    if completions != ends {
        return Err(format!(
            "{}: xactCompletionCount {completions} != {ends} transactions ended",
            workload.name()
        ));
    }
    if let Some(i) = s.procs.first_running() {
        return Err(format!(
            "{}: proc {i} still has a running xid",
            workload.name()
        ));
    }
    // Each thread's last commit must be in the CLOG, unless the page ring has since wrapped
    // over it (a thread starved while the others committed a ring's worth of xids).
    let newest = workers
        .iter()
        .map(|w| w.last_clog_xid)
        .max()
        .unwrap_or(INVALID_XID);
    let window = (CLOG_PAGES as u32 - 1) * CLOG_XACTS_PER_PAGE;
    let (updates, missing) = s.clog.shared(|c| {
        let missing = workers
            .iter()
            .filter(|w| w.last_clog_xid != INVALID_XID && newest - w.last_clog_xid < window)
            .filter(|w| c.status(w.last_clog_xid) != XACT_COMMITTED)
            .count();
        (c.updates, missing)
    });
    if updates != clog_ops || missing != 0 {
        return Err(format!(
            "{}: CLOG has {updates} updates for {clog_ops} commits, {missing} last commits missing",
            workload.name()
        ));
    }
    if workload == Workload::NullX {
        let n = s.null.shared(|n| *n);
        if n != ops {
            return Err(format!("null-x: counter {n} != {ops} exclusive sections"));
        }
    }
    s.lmgr
        .check()
        .map_err(|e| format!("{}: {e}", workload.name()))?;
    if let Some(p) = &s.root_page {
        p.check().map_err(|e| format!("{}: {e}", workload.name()))?;
    }
    let txns: u64 = workers.iter().map(|w| w.txns).sum();
    if workload == Workload::PinVm {
        let word = VISIBILITY_MAP.word.load(Ordering::Acquire);
        if ops != 0 || word != VM_WORD_ALL_VISIBLE {
            return Err(format!(
                "pin-vm: {ops} lock operations (expected none), map word {word:#x}"
            ));
        }
    }
    if workload == Workload::PgbenchWriteStatus {
        // Per transaction: snapshot, STATUS_READS lookups, commit, end (a validated optimistic
        // snapshot takes no lock).
        let validated: u64 = workers
            .iter()
            .map(|w| w.snapshot_outcomes[Outcome::Validated as usize])
            .sum();
        if ops + validated != txns * (3 + STATUS_READS as u64) {
            return Err(format!(
                "pgbench-write-status: {ops} lock operations for {txns} transactions, expected \
                 {} each",
                3 + STATUS_READS
            ));
        }
    }
    let pins = s.buffer.refcount.load(Ordering::Acquire);
    if pins != 0 {
        return Err(format!("{}: buffer left with {pins} pins", workload.name()));
    }
    if bad != 0 {
        let what = match workload {
            Workload::PinVm => "map reads found the page not all-visible",
            Workload::PgbenchWriteStatus => {
                "snapshots with running xids outside [xmin, xmax), or status lookups that read \
                 an invalid status or missed the thread's own previous commit"
            }
            _ => "snapshots with running xids outside [xmin, xmax)",
        };
        return Err(format!("{}: {bad} {what}", workload.name()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{LockKind, LockVisitor};

    struct RunEach;
    impl LockVisitor for RunEach {
        type Output = ();
        fn visit<F: LockFamily>(self, kind: LockKind) {
            let variants = Layout::ALL
                .into_iter()
                .flat_map(|l| Strategy::ALL.into_iter().map(move |st| (l, st)));
            for (&wl, (layout, strategy)) in Workload::ALL
                .iter()
                .flat_map(|w| variants.clone().map(move |v| (w, v)))
            {
                let s = Shared::<F>::new(wl, 2, layout);
                let cfg = WorkerConfig {
                    write_pct: 50,
                    work: 3,
                    time_every: 2,
                    strategy,
                };
                let mut ws = vec![Worker::new(0, 2, cfg), Worker::new(1, 2, cfg)];
                for _ in 0..100 {
                    for w in ws.iter_mut() {
                        transaction(wl, &s, w);
                    }
                }
                s.stop.store(true, Ordering::Relaxed);
                for w in ws.iter_mut() {
                    run_until_stopped(wl, &s, w);
                }
                check(wl, &s, &ws).unwrap_or_else(|e| panic!("{}: {e}", kind.name()));
                assert_eq!(ws[0].txns, 100);
                // Optimistic snapshots validated without the lock, and pin-vm's map reads, are
                // no lock operation.
                let lockless = ws[0].snapshot_outcomes[Outcome::Validated as usize]
                    + if wl == Workload::PinVm { ws[0].txns } else { 0 };
                assert!(ws[0].ops + lockless >= 100);
                let timed = ws[0].shared_wait.len() + ws[0].excl_wait.len() + ws[0].clog_wait.len();
                assert!(timed >= 40, "{} {}: timed {timed}", kind.name(), wl.name());
                if wl.takes_snapshots() {
                    let taken: u64 = ws[0].snapshot_outcomes.iter().sum();
                    assert!(
                        taken >= 50,
                        "{} {}: {taken} snapshots",
                        kind.name(),
                        wl.name()
                    );
                }
            }
        }
    }

    #[test]
    fn every_workload_on_every_lock_passes_its_checks() {
        for k in LockKind::bench_built_in().filter(|k| k.in_bench_all()) {
            k.dispatch(RunEach);
        }
    }

    /// The self-test lock fails the section checks of every workload even single-threaded:
    /// its shared sections find it not held, its exclusive ones not held exclusively.
    #[test]
    fn the_broken_lock_fails_every_workload() {
        struct Broken;
        impl LockVisitor for Broken {
            type Output = ();
            fn visit<F: LockFamily>(self, _kind: LockKind) {
                // pin-vm takes no lock: there is nothing for a broken lock to break.
                for &wl in Workload::ALL.iter().filter(|&&w| w != Workload::PinVm) {
                    let s = Shared::<F>::new(wl, 1, Layout::Dense);
                    let cfg = WorkerConfig {
                        write_pct: 50,
                        work: 0,
                        time_every: 4,
                        strategy: Strategy::Scan,
                    };
                    let mut ws = vec![Worker::new(0, 1, cfg)];
                    for _ in 0..200 {
                        transaction(wl, &s, &mut ws[0]);
                    }
                    s.stop.store(true, Ordering::Relaxed);
                    run_until_stopped(wl, &s, &mut ws[0]);
                    let e = check(wl, &s, &ws).expect_err(wl.name());
                    assert!(e.contains("section-check"), "{}: {e}", wl.name());
                }
            }
        }
        LockKind::Broken.dispatch(Broken);
    }

    #[test]
    fn check_catches_a_lost_update() {
        let s = Shared::<crate::locks::StdFamily>::new(Workload::EndXact, 1, Layout::Dense);
        let mut w = Worker::new(
            0,
            1,
            WorkerConfig {
                write_pct: 0,
                work: 0,
                time_every: 1,
                strategy: Strategy::Scan,
            },
        );
        transaction(Workload::EndXact, &s, &mut w);
        w.ends += 1; // pretend one more transaction ended than the proc array saw
        assert!(check(Workload::EndXact, &s, &[w]).is_err());
    }

    /// `--time-every` equal to a transaction's operation count used to time the same operation
    /// kind every time (pgbench-write has three: with 3, one kind was never timed). The spacing
    /// is random now: every kind is timed, about one in `time_every` of each.
    #[test]
    fn time_every_does_not_alias_with_the_transaction() {
        let s = Shared::<crate::locks::StdFamily>::new(Workload::PgbenchWrite, 1, Layout::Dense);
        let mut w = Worker::new(
            0,
            1,
            WorkerConfig {
                write_pct: 0,
                work: 0,
                time_every: 3,
                strategy: Strategy::Scan,
            },
        );
        let n = 3000u64;
        for _ in 0..n {
            transaction(Workload::PgbenchWrite, &s, &mut w);
        }
        for (kind, h) in [
            ("snapshot", &w.shared_wait),
            ("end of transaction", &w.excl_wait),
            ("CLOG commit", &w.clog_wait),
        ] {
            let timed = h.len();
            assert!(
                (n / 6..n * 2 / 3).contains(&timed),
                "{kind}: {timed} of {n} timed, expected about a third"
            );
        }
    }

    /// The section checks fail for a lock that does not exclude, and pass for one that does.
    #[test]
    fn section_checks_catch_overlap_and_a_lock_that_is_not_held() {
        let c = SectionCheck::default();
        c.shared(Some((true, false)), || ());
        c.exclusive(Some((true, true)), || ());
        assert!(c.result().is_ok());
        c.shared(Some((false, false)), || ());
        assert!(c.result().unwrap_err().contains("not held"));
        let c = SectionCheck::default();
        c.exclusive(None, || c.shared(None, || ()));
        assert!(c.result().unwrap_err().contains("overlapped"));
        // A writer that enters and leaves inside a shared section, seen only at its exit.
        let c = SectionCheck::default();
        c.shared(None, || c.exclusive(None, || ()));
        assert!(c.result().unwrap_err().contains("entered beside"));
        let c = SectionCheck::default();
        c.exclusive(None, || c.exclusive(None, || ()));
        assert!(c.result().unwrap_err().contains("two exclusive"));
        let c = SectionCheck::default();
        c.exclusive(Some((true, false)), || ());
        assert!(c.result().unwrap_err().contains("not held exclusively"));
    }

    fn one_worker(work: u32) -> Worker {
        Worker::new(
            0,
            1,
            WorkerConfig {
                write_pct: 0,
                work,
                time_every: 1,
                strategy: Strategy::Scan,
            },
        )
    }

    /// `--work` is the pin workloads' per-page work: with 5 steps per transaction, each of the
    /// 10 transactions draws 5 more random numbers (the work's xorshift steps) than with none.
    #[test]
    fn work_applies_to_the_pin_workloads() {
        for wl in [Workload::Pin, Workload::PinHeld, Workload::PinVm] {
            let draws = |work| {
                let s = Shared::<crate::locks::StdFamily>::new(wl, 1, Layout::Dense);
                let mut w = one_worker(work);
                let mut reference = one_worker(0);
                if wl.holds_pin() {
                    s.buffer.pin();
                }
                for _ in 0..10 {
                    transaction(wl, &s, &mut w);
                }
                if wl.holds_pin() {
                    s.buffer.unpin();
                }
                check(wl, &s, std::slice::from_ref(&w)).unwrap();
                (0..10_000usize)
                    .find(|_| {
                        let found = reference.rng == w.rng;
                        reference.rand();
                        found
                    })
                    .expect("the worker's generator is the reference's, advanced")
            };
            // Without work the only draws are the timer's spacings (time_every 1: none) and
            // the check countdown's.
            let (none, some) = (draws(0), draws(5));
            assert_eq!(some - none, 50, "{}", wl.name());
        }
    }

    /// pin-vm counts its lock-free map reads, one per transaction, and takes no lock; the
    /// check fails if the map word changed.
    #[test]
    fn pin_vm_reads_the_map_with_no_lock_and_is_checked() {
        let s = Shared::<crate::locks::StdFamily>::new(Workload::PinVm, 1, Layout::Dense);
        let mut w = one_worker(0);
        for _ in 0..50 {
            transaction(Workload::PinVm, &s, &mut w);
        }
        assert_eq!((w.bad_reads, w.ops, w.txns), (0, 0, 50));
        check(Workload::PinVm, &s, std::slice::from_ref(&w)).unwrap();
        w.ops += 1;
        assert!(check(Workload::PinVm, &s, &[w]).is_err());
    }

    /// pgbench-write-status: STATUS_READS shared CLOG lookups per transaction besides the
    /// three lock operations of pgbench-write, its own previous commit seen committed.
    #[test]
    fn pgbench_write_status_looks_up_recent_xids_under_the_clog_lock_shared() {
        let wl = Workload::PgbenchWriteStatus;
        let s = Shared::<crate::locks::StdFamily>::new(wl, 1, Layout::Dense);
        let mut w = one_worker(0);
        for _ in 0..100 {
            transaction(wl, &s, &mut w);
        }
        assert_eq!(w.ops, 100 * (3 + STATUS_READS as u64));
        assert_eq!(w.bad_reads, 0);
        check(wl, &s, std::slice::from_ref(&w)).unwrap();
        w.ops -= 1;
        assert!(check(wl, &s, &[w]).is_err());
    }

    #[test]
    fn names_round_trip() {
        for w in Workload::ALL {
            assert_eq!(Workload::from_name(w.name()), Some(*w));
        }
    }
}
