//! The workloads: one transaction of each, written once, generic over the lock family.
//!
//! Layout: the table of workloads is `table.rs` (one row each: name, description, the
//! PostgreSQL locks it takes, what one transaction counts as, the settings that apply, its
//! transaction function and its own check); each transaction function lives in a file of its
//! own, named after the PostgreSQL code it stands for (`null.rs`, `snapshot.rs`, `end_xact.rs`,
//! `clog.rs`, `pgbench.rs`, `buffer.rs`, `heapgetpage.rs`, `select_lmgr.rs`, and `trace.rs`, the replay of a
//! recorded PostgreSQL trace, `trace:FILE`); the steps they are made of (`GetSnapshotData`,
//! `ProcArrayEndTransaction`, the CLOG commit, a buffer read) are `steps.rs`; a thread's state
//! is `worker.rs`, the section checks `section_check.rs`. This file holds what every workload
//! shares: the trial's shared state, the loop and the checks after a trial.
//!
//! | name | one transaction | lock operations |
//! |---|---|---|
//! | `null` | shared acquire + release, empty critical section | 1 shared |
//! | `null-x` | exclusive acquire + release (the section bumps a counter, for the check) | 1 exclusive |
//! | `snapshot` | one `GetSnapshotData` with the `--snapshot` strategy over the `--layout` proc array, or (`--write-pct` percent of transactions) instead a short write transaction: assign an xid and end it at once (`ProcArrayEndTransaction`, exclusive; no snapshot), so at most one xid per thread runs and a snapshot's cost does not grow with the trial | 1 shared (0 for an `optimistic` snapshot validated without the lock), or 1 exclusive for a write |
//! | `end-xact` | assign an xid, `--work`, `ProcArrayEndTransaction` (exclusive; group clear for group locks) | 1 exclusive |
//! | `clog` | a fresh xid, `--work` (where the commit writes WAL), its commit status set in its CLOG page (exclusive; grouped by page for `clog-group`) | 1 exclusive |
//! | `pgbench-select` | `pgbench -S`: the statement's 2 snapshots, the account's primary-key lookup (root, internal page, leaf, heap page, each `ReadBuffer`'s mapping partition shared and the content lock shared; [`crate::buffer_pool`]), `--work` | 2 + 4 + 4 shared |
//! | `pgbench-write` | `pgbench -N` at the lock level: 2 snapshots per statement (6), the xid under XidGenLock, `--work`, CLOG commit, end of transaction | 6 shared + 3 exclusive (XidGen, XactSLRU, ProcArrayLock) |
//! | `pgbench-write-status` | pgbench's TPC-B-like transaction at the lock level: 10 snapshots, the xid, [`STATUS_READS_PER_100`] ÷ 100 `TransactionIdGetStatus` lookups of recent xids under the CLOG lock shared (PostgreSQL 15's trace; `--status-lookups` sets another count), each with its SLRU slot search, before `--work`; CLOG commit, end | 10 + 57.62 shared + 3 exclusive |
//! | `pgbench-n` | `pgbench -N` statement by statement: each statement's 2 snapshots and relation locks (fast path), the accounts lookups, the xid and its lock, the heap page exclusive with `heap_update`'s MultiXactGenLock shared and WAL record inside, `pgbench_history`'s page exclusive with its WAL record, the commit record, `--work` in four parts (less the WAL records' holds), CLOG commit, end, the locks' release; `--era-traffic walinsertlock,nomultixact` for 9.2 | 6 + 10 + 8 shared + 1 shared + 15 exclusive + 3 WAL exclusive |
//! | `pin` | pin a hot buffer (atomic refcount in its header), read it under its content lock shared, `--work` (the page's tuples, processed with the lock released), unpin | 1 shared |
//! | `pin-held` | the same read and `--work`, the pin kept across accesses | 1 shared |
//! | `pin-vm` | the hot page kept pinned; each read checks its visibility-map bit with no lock, then `--work` (seed 003's patch 3) | none |
//! | `scan-93` | one heap page of a synchronized sequential scan as 9.3 read it (seed 003's patch 1, master; `heapgetpage.rs`, [`crate::bufmgr::ScanBuffers`]): the previous page's unpin (header spinlock), `ReadBuffer` (mapping partition shared, pin under the header spinlock), the visible tuples and `PD_ALL_VISIBLE` under the content lock shared, `--work`; the scanners walk one ring of 32 heap pages in step | 2 shared, 2 header spinlocks |
//! | `pin-93` | `scan-93` with the map page read per heap page as 9.3's `visibilitymap_test` with no buffer kept (patch 2): mapping partition shared and pin, the bit read with no content lock, unpin | 3 shared, 4 header spinlocks |
//! | `pin-93-locked` | not in the thread: `pin-93` with the bit read under the map page's content lock shared (a lock 9.3 did not take; the earlier `pin` shape's), for a with/without comparison | 4 shared, 4 header spinlocks |
//! | `pin-vm-93` | `scan-93` with the map page kept pinned from the scan's first page (patch 3): one load | 2 shared, 2 header spinlocks |
//! | `trace:FILE` | one recorded PostgreSQL transaction replayed through the locks' entry points (`trace.rs`) | as recorded |
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
//!   word is unchanged; `pgbench-write-status` did [`status_reads_at`] lookups per transaction, each
//!   read a valid status, and each thread saw its own previous commit committed; no
//!   `pgbench_accounts` page is left pinned.

mod buffer;
mod clog;
mod end_xact;
mod heapgetpage;
mod info;
mod null;
mod pgbench;
mod section_check;
mod select_lmgr;
mod snapshot;
mod steps;
mod table;
pub mod trace;
mod worker;
mod write_state;

pub use info::{Counted, Info};
pub use pgbench::{status_reads_at, status_reads_total_at, STATUS_READS_PER_100};
pub use section_check::{SectionCheck, CHECK_EVERY};
pub use table::Workload;
pub use worker::{Worker, WorkerConfig};
pub use write_state::{
    WriteState, DEFAULT_WAL_HOLD, NUM_XLOGINSERT_LOCKS, WAL_RECORDS_PER_N, WAL_RECORDS_PER_TPCB,
};

use crate::buffer_pool::AccountsPages;
use crate::bufmgr::HotPage;
use crate::dynahash_freelist::LockHashFreelists;
use crate::era_traffic::EraTraffic;
use crate::lmgr::LockManager;
use crate::locks::{BenchLock, LockFamily};
use crate::pgshared::{
    BufferDesc, Clog, Page, XidGen, CLOG_XACTS_PER_PAGE, INVALID_XID, XACT_COMMITTED,
};
use crate::sinval::Sinval;
use crate::snapshot::{AnyProcArray, Layout, ProcArrayState};
use crossbeam_utils::CachePadded;
use lwlock::Tranche;
use std::hint::black_box;
// The shim's atomics: std's in a normal build, the simulator's under `--cfg lwsim`, so that
// `--engine sim` runs this same workload code on a simulated machine.
use lwlock::sync::{AtomicBool, AtomicU64, Ordering};

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

/// CLOG pages in the ring (16 × 32 768 xids).
const CLOG_PAGES: usize = 16;

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
    /// workloads and `pgbench-n`).
    pub lmgr: LockManager<F>,
    /// The primary key's root page of the `select-*` workloads, reached as 9.1 reached it; for
    /// the 9.3 scan workloads, the pool that carries the scanned table's buffers
    /// ([`HotPage::scan`]).
    pub root_page: Option<HotPage<F>>,
    /// The xid counter.
    pub xids: XidGen,
    /// XidGenLock (`GetNewTransactionId`; taken by the pgbench write shapes).
    pub xid_gen: F::Lock<()>,
    /// `pgbench_accounts`' pages at scale 10 (the shapes that stand for `pgbench -S` and
    /// `-N`).
    pub accounts: Option<AccountsPages<F>>,
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
    /// Section checks of XidGenLock.
    pub xid_gen_check: CachePadded<SectionCheck>,
    /// Per-slot progress (one per proc-array slot; workers use slots `0..threads`).
    pub progress: Box<[CachePadded<Progress>]>,
    /// A workload's state beyond the common one: a trace's replay, a `select-*` shape's
    /// `--era-traffic` ([`Shared::replay`], [`Shared::era`]), or a pgbench write shape's WAL
    /// insertion locks, MultiXactGenLock and status lookups ([`Shared::write_state`]). One
    /// pointer for all, so that
    /// the shared state keeps its size and layout (the simulated runs of every other workload
    /// their line layout) whatever a workload adds.
    extra: Option<Box<Extra<F>>>,
}

/// What one workload adds to [`Shared`].
// Boxed as a whole in `Shared::extra`, one per trial: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
enum Extra<F: LockFamily> {
    /// The replay's locks and per-client state (a `trace:FILE` workload).
    Replay(trace::Replay<F>),
    /// 9.1's shared traffic of a `select-*` shape (`--era-traffic`).
    Era(EraState<F>),
    /// A pgbench write shape's WAL insertion locks and MultiXactGenLock (and
    /// `pgbench-write-status`'s lookups per hundred transactions).
    Write(WriteState<F>),
}

/// The locks and state `--era-traffic` adds to a `select-*` shape.
#[derive(Debug)]
pub struct EraState<F: LockFamily> {
    /// SInvalReadLock and the sinval segment (`sinval`; [`crate::sinval`]).
    pub sinval: Option<Sinval<F>>,
    /// The lock tables' freelist spinlocks (`freelist`; [`crate::dynahash_freelist`]).
    pub freelists: Option<LockHashFreelists>,
}

impl<F: LockFamily> std::fmt::Debug for Shared<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").finish_non_exhaustive()
    }
}

impl<F: LockFamily> Shared<F> {
    /// Fresh state for `procs` procs in proc-array `layout`.
    pub fn new(workload: Workload, procs: usize, layout: Layout) -> Self {
        Self::with_era(workload, procs, layout, EraTraffic::NONE)
    }

    /// [`Shared::new`], with an older release's differences `era` where the workload has them
    /// (`--era-traffic`: a `select-*` shape its `sinval` and `freelist`, a pgbench write shape its
    /// `walinsertlock` and `nomultixact`; other workloads ignore it). With none, a `select-*`
    /// shape allocates nothing more, so the other shapes' simulated runs keep their layout.
    pub fn with_era(workload: Workload, procs: usize, layout: Layout, era: EraTraffic) -> Self {
        let era = if workload.lmgr().is_some() {
            era.within(EraTraffic::SELECT)
        } else if workload.writes_wal() {
            era.within(EraTraffic::WRITE)
        } else {
            EraTraffic::NONE
        };
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
            lmgr: LockManager::new(if workload.uses_lock_manager() {
                procs
            } else {
                0
            }),
            // Any fixed partition: the root's tag always hashes to the same one.
            root_page: workload
                .lmgr()
                .map(|_| HotPage::new(7))
                .or_else(|| workload.scan_vm_check().map(|_| HotPage::with_scan(7))),
            xids: XidGen::default(),
            xid_gen: F::Lock::new((), Tranche::XID_GEN),
            accounts: workload.accounts_partitions().map(AccountsPages::new),
            stop: AtomicBool::new(false),
            proc_array_check: Default::default(),
            clog_check: Default::default(),
            null_check: Default::default(),
            buffer_check: Default::default(),
            xid_gen_check: Default::default(),
            progress: (0..procs).map(|_| Default::default()).collect(),
            extra: match workload.trace() {
                Some(t) => Some(Box::new(Extra::Replay(trace::Replay::new(t, procs)))),
                None if workload.writes_wal() => Some(Box::new(Extra::Write(WriteState::new(
                    era,
                    STATUS_READS_PER_100,
                )))),
                None if !era.is_none() => Some(Box::new(Extra::Era(EraState {
                    sinval: era.sinval().then(|| Sinval::new(procs)),
                    freelists: era.freelist().then(LockHashFreelists::default),
                }))),
                None => None,
            },
        }
    }

    /// This state with `per_100` `TransactionIdGetStatus` lookups per hundred
    /// `pgbench-write-status` transactions (`--status-lookups`) instead of
    /// [`STATUS_READS_PER_100`]. Panics at another count on a workload without a write state
    /// (the command line refuses `--status-lookups` on any workload but
    /// `pgbench-write-status`).
    pub fn with_status_lookups(mut self, per_100: u64) -> Self {
        match self.extra.as_deref_mut() {
            Some(Extra::Write(st)) => st.status_per_100 = per_100,
            _ => assert!(
                per_100 == STATUS_READS_PER_100,
                "--status-lookups applies to pgbench-write-status only"
            ),
        }
        self
    }

    /// `pgbench-write-status`'s `TransactionIdGetStatus` lookups per hundred transactions:
    /// [`STATUS_READS_PER_100`] unless [`Shared::with_status_lookups`] set another count.
    #[inline]
    pub fn status_lookups_per_100(&self) -> u64 {
        match self.extra.as_deref() {
            Some(Extra::Write(st)) => st.status_per_100,
            _ => STATUS_READS_PER_100,
        }
    }

    /// This state with `hold` steps of busy work inside the WAL insertion lock per WAL record
    /// of a pgbench write shape (`--wal-hold`) instead of [`DEFAULT_WAL_HOLD`]. Other workloads
    /// have no WAL records: unchanged (the command line refuses `--wal-hold` on them).
    pub fn with_wal_hold(mut self, hold: u32) -> Self {
        if let Some(Extra::Write(st)) = self.extra.as_deref_mut() {
            st.hold = hold;
        }
        self
    }

    /// A pgbench write shape's WAL insertion locks and MultiXactGenLock (`pgbench-n`,
    /// `pgbench-write`, `pgbench-write-status` only).
    #[inline]
    pub fn write_state(&self) -> Option<&WriteState<F>> {
        match self.extra.as_deref() {
            Some(Extra::Write(st)) => Some(st),
            _ => None,
        }
    }

    /// The replay's locks and per-client state (a `trace:FILE` workload only).
    pub fn replay(&self) -> Option<&trace::Replay<F>> {
        match self.extra.as_deref() {
            Some(Extra::Replay(r)) => Some(r),
            _ => None,
        }
    }

    /// The `--era-traffic` state of a `select-*` shape that runs some.
    pub fn era(&self) -> Option<&EraState<F>> {
        match self.extra.as_deref() {
            Some(Extra::Era(e)) => Some(e),
            _ => None,
        }
    }

    /// SInvalReadLock and the sinval segment, where `--era-traffic sinval` runs.
    pub fn sinval(&self) -> Option<&Sinval<F>> {
        self.era().and_then(|e| e.sinval.as_ref())
    }

    /// The lock tables' freelist spinlocks, where `--era-traffic freelist` runs.
    pub fn freelists(&self) -> Option<&LockHashFreelists> {
        self.era().and_then(|e| e.freelists.as_ref())
    }

    /// The first section-check violation of any lock, if one failed.
    pub fn section_checks(&self) -> Result<(), String> {
        for (name, c) in [
            ("ProcArrayLock", &self.proc_array_check),
            ("XactSLRU", &self.clog_check),
            ("null lock", &self.null_check),
            ("buffer content lock", &self.buffer_check),
            ("XidGenLock", &self.xid_gen_check),
        ] {
            c.result().map_err(|e| format!("{name}: {e}"))?;
        }
        Ok(())
    }
}

/// One transaction of `workload`, and the progress it publishes.
#[inline]
fn transaction<F: LockFamily>(workload: Workload, s: &Shared<F>, w: &mut Worker) {
    workload.run_one(s, w);
    w.txns += 1;
    // Relaxed: read by the driver at the stop signal; a value a few transactions old is fine.
    let p = &s.progress[w.slot];
    p.ops.store(w.ops, Ordering::Relaxed);
    p.txns.store(w.txns, Ordering::Relaxed);
    if w.cfg.idle_us > 0 {
        // The round trip to the client, off the CPU (after the progress is published, so a
        // stop signal during it finds the transaction counted).
        lwlock::sync::idle_nanos(u64::from(w.cfg.idle_us) * 1000);
    }
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
    workload.end_own(s, w);
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
    s.lmgr
        .check()
        .map_err(|e| format!("{}: {e}", workload.name()))?;
    if let Some(p) = &s.root_page {
        p.check().map_err(|e| format!("{}: {e}", workload.name()))?;
    }
    if let Some(f) = s.freelists() {
        f.check().map_err(|e| format!("{}: {e}", workload.name()))?;
    }
    if let Some(si) = s.sinval() {
        si.check()
            .map_err(|e| format!("{}: {e}", workload.name()))?;
        let txns: u64 = workers.iter().map(|w| w.txns).sum();
        if si.calls() != crate::sinval::ACCEPTS_PER_SELECT * txns {
            return Err(format!(
                "{}: {} SIGetDataEntries calls for {txns} transactions",
                workload.name(),
                si.calls()
            ));
        }
    }
    if let Some(p) = &s.accounts {
        p.check().map_err(|e| format!("{}: {e}", workload.name()))?;
    }
    workload.check_own(s, workers)?;
    let pins = s.buffer.refcount.load(Ordering::Acquire);
    if pins != 0 {
        return Err(format!("{}: buffer left with {pins} pins", workload.name()));
    }
    if bad != 0 {
        let what = workload.info().bad_reads;
        return Err(format!("{}: {bad} {what}", workload.name()));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
