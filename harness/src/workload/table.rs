//! The workload table: one row per workload, as the kernel's locktorture keeps one ops table
//! per lock type. A row names the workload, describes it, says which PostgreSQL locks one
//! transaction takes, what one counted item is, the settings that apply to it, and its
//! transaction function (in a file of its own under `workload/`), with an optional check of its
//! own after a trial. A new workload is a new file and a new row.
//!
//! A workload that carries data (a recorded trace, `trace:FILE`) is the row
//! [`Workload::Trace`]: its [`Info`] is built from the trace when it is loaded.

use super::info::{Counted, Info};
use super::trace::TraceRef;
use super::worker::Worker;
use super::{buffer, clog, end_xact, heapgetpage, null, pgbench, select_lmgr, snapshot, Shared};
use crate::lmgr::LmgrRelease;
use crate::locks::LockFamily;

const SNAPSHOTS_OUT_OF_RANGE: &str = "snapshots with running xids outside [xmin, xmax)";

macro_rules! workloads {
    ($($variant:ident {
        name: $name:literal,
        description: $doc:literal,
        locks: $locks:literal,
        counted: $counted:ident, $short:literal, $meaning:literal,
        clog: $clog:literal, proc_array: $pa:literal, snapshots: $snap:literal,
        pin: $pin:literal, lmgr: $lmgr:expr,
        transaction: $txn:path,
        $(check: $check:path,)?
        bad_reads: $bad:expr,
    })*) => {
        /// A workload, by name: a row of the table, or a recorded trace.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Workload {
            $(#[doc = $doc] $variant,)*
            /// A recorded PostgreSQL trace replayed (`trace:FILE`; `workload::trace`).
            Trace(TraceRef),
        }

        /// The rows, in the order of [`Workload::ALL`].
        const ROWS: &[Info] = &[$(Info {
            name: $name,
            description: $doc,
            locks: $locks,
            counted: Counted::$counted,
            short: $short,
            meaning: $meaning,
            uses_clog: $clog,
            uses_proc_array: $pa,
            takes_snapshots: $snap,
            holds_pin: $pin,
            lmgr: $lmgr,
            bad_reads: $bad,
        },)*];

        impl Workload {
            /// Every workload of the table (a trace is not one of them: it is loaded by name).
            pub const ALL: &'static [Workload] = &[$(Workload::$variant),*];

            /// The workload's row.
            pub fn info(self) -> &'static Info {
                let mut i = 0;
                $(
                    if let Workload::$variant = self {
                        return &ROWS[i];
                    }
                    i += 1;
                )*
                let _ = i;
                match self {
                    Workload::Trace(t) => t.info(),
                    _ => unreachable!("every row is matched above"),
                }
            }

            /// One transaction's lock operations and work (without the progress bookkeeping).
            #[inline]
            pub(super) fn run_one<F: LockFamily>(self, s: &Shared<F>, w: &mut Worker) {
                match self {
                    $(Workload::$variant => $txn(s, w),)*
                    Workload::Trace(t) => super::trace::transaction(t, s, w),
                }
            }

            /// The workload's own checks after a trial, beside the common ones.
            pub(super) fn check_own<F: LockFamily>(
                self,
                s: &Shared<F>,
                workers: &[Worker],
            ) -> Result<(), String> {
                let _ = (s, workers);
                match self {
                    $(Workload::$variant => { $($check(s, workers)?;)? Ok(()) })*
                    Workload::Trace(t) => super::trace::check(t, s, workers),
                }
            }
        }
    };
}

workloads! {
    Null {
        name: "null",
        description: "shared acquire + release, empty critical section",
        locks: "one lock (tranche DEFAULT) shared",
        counted: LockOps, "one shared acquire + release",
            "one shared acquire + release (a lock microbenchmark: lock operations per second \
             is the unit)",
        clog: false, proc_array: false, snapshots: false, pin: false, lmgr: None,
        transaction: null::null,
        bad_reads: SNAPSHOTS_OUT_OF_RANGE,
    }
    NullX {
        name: "null-x",
        description: "exclusive acquire + release",
        locks: "one lock (tranche DEFAULT) exclusive",
        counted: LockOps, "one exclusive acquire + release",
            "one exclusive acquire + release (a lock microbenchmark: lock operations per \
             second is the unit)",
        clog: false, proc_array: false, snapshots: false, pin: false, lmgr: None,
        transaction: null::null_x,
        check: null::check_null_x,
        bad_reads: SNAPSHOTS_OUT_OF_RANGE,
    }
    Snapshot {
        name: "snapshot",
        description: "GetSnapshotData under ProcArrayLock shared, or (--write-pct) a short write transaction",
        locks: "ProcArrayLock shared (none for a validated optimistic snapshot), or exclusive for a write",
        counted: Transactions, "one snapshot or one short write transaction",
            "one snapshot (GetSnapshotData under ProcArrayLock shared), or with --write-pct one \
             short write transaction (assign an xid, end it)",
        clog: false, proc_array: true, snapshots: true, pin: false, lmgr: None,
        transaction: snapshot::snapshot,
        bad_reads: SNAPSHOTS_OUT_OF_RANGE,
    }
    EndXact {
        name: "end-xact",
        description: "assign an xid, then ProcArrayEndTransaction under exclusive",
        locks: "ProcArrayLock exclusive (group clear for group locks)",
        counted: Transactions, "one commit",
            "one commit: assign an xid, then ProcArrayEndTransaction",
        clog: false, proc_array: true, snapshots: false, pin: false, lmgr: None,
        transaction: end_xact::end_xact,
        bad_reads: SNAPSHOTS_OUT_OF_RANGE,
    }
    Clog {
        name: "clog",
        description: "set a fresh xid's commit status in its CLOG page (after --work, where a commit writes WAL)",
        locks: "XactSLRU exclusive (grouped by page for clog-group)",
        counted: Transactions, "one CLOG status update",
            "one CLOG status update (a fresh xid's commit status)",
        clog: true, proc_array: false, snapshots: false, pin: false, lmgr: None,
        transaction: clog::clog,
        bad_reads: SNAPSHOTS_OUT_OF_RANGE,
    }
    PgbenchSelect {
        name: "pgbench-select",
        description: "pgbench -S: the statement's two snapshots, the account's index lookup (4 pages), --work",
        locks: "ProcArrayLock 2 shared, BufferMapping 4 shared (128 partitions), BufferContent 4 shared",
        counted: Transactions, "2 snapshots, index lookup, work",
            "pgbench -S: the statement's two snapshots, the account's primary-key lookup (root, \
             internal page, leaf, heap page), --work",
        clog: false, proc_array: true, snapshots: true, pin: false, lmgr: None,
        transaction: pgbench::select,
        bad_reads: SNAPSHOTS_OUT_OF_RANGE,
    }
    PgbenchWrite {
        name: "pgbench-write",
        description: "pgbench -N at the lock level: 2 snapshots per statement, the xid (XidGenLock), MultiXactGenLock shared, 3 WAL records, CLOG commit, end-xact",
        locks: "ProcArrayLock 6 shared + exclusive, XidGen exclusive, MultiXactGen shared, WALInsert 3 exclusive (the backend's own of 8; --era-traffic walinsertlock: 9.1-9.3's one), XactSLRU exclusive",
        counted: Transactions, "6 snapshots, xid, MultiXactGen, 3 WAL records, CLOG commit, end-of-transaction",
            "6 snapshots (2 per statement), the xid under XidGenLock, MultiXactGenLock shared, \
             3 WAL records (the UPDATE's, the INSERT's, the commit's), CLOG commit, end of \
             transaction (pgbench -N at the lock level; 13 lock operations, 12 with \
             --era-traffic nomultixact)",
        clog: true, proc_array: true, snapshots: true, pin: false, lmgr: None,
        transaction: pgbench::write,
        check: pgbench::check_write,
        bad_reads: SNAPSHOTS_OUT_OF_RANGE,
    }
    PgbenchWriteStatus {
        name: "pgbench-write-status",
        description: "pgbench's TPC-B-like transaction at the lock level, with its TransactionIdGetStatus lookups under the CLOG lock shared (57.62 per transaction, PostgreSQL 15's trace)",
        locks: "ProcArrayLock 10 shared + exclusive, XidGen exclusive, MultiXactGen shared, WALInsert 5 exclusive (the backend's own of 8), XactSLRU 57.62 shared + exclusive",
        counted: Transactions, "10 snapshots, xid, MultiXactGen, 5 WAL records, CLOG lookups, CLOG commit, end-of-transaction",
            "10 snapshots (2 per statement), the xid under XidGenLock, MultiXactGenLock \
             shared, 5 WAL records (3 UPDATEs', the INSERT's, the commit's), 57.62 CLOG status \
             lookups (shared), CLOG commit, end of transaction (pgbench's TPC-B-like script)",
        clog: true, proc_array: true, snapshots: true, pin: false, lmgr: None,
        transaction: pgbench::write_status,
        check: pgbench::check_write_status,
        bad_reads: "snapshots with running xids outside [xmin, xmax), or status lookups that \
                    read an invalid status or missed the thread's own previous commit",
    }
    Pin {
        name: "pin",
        description: "pin/unpin a hot buffer around each shared read",
        locks: "BufferContent shared (the pin is an atomic refcount)",
        counted: Transactions, "one buffer read",
            "one buffer read: pin, read under the content lock shared, unpin",
        clog: false, proc_array: false, snapshots: false, pin: false, lmgr: None,
        transaction: buffer::pin,
        bad_reads: SNAPSHOTS_OUT_OF_RANGE,
    }
    PinHeld {
        name: "pin-held",
        description: "shared reads of a hot buffer kept pinned",
        locks: "BufferContent shared",
        counted: Transactions, "one buffer read",
            "one buffer read (the pin kept across reads)",
        clog: false, proc_array: false, snapshots: false, pin: true, lmgr: None,
        transaction: buffer::pin_held,
        bad_reads: SNAPSHOTS_OUT_OF_RANGE,
    }
    PgbenchN {
        name: "pgbench-n",
        description: "pgbench -N statement by statement: 2 snapshots per statement, its relation locks (fast path), the accounts lookups, the xid at the first write and its lock, the updated heap page exclusive with MultiXactGenLock shared and the update's WAL record inside, pgbench_history's page exclusive with its WAL record, the commit record, --work over the statements and the commit, CLOG commit, end-xact, the locks' release",
        locks: "ProcArrayLock 6 shared + exclusive, XidGen exclusive, LockFastPath 8 exclusive, LockManager 2 exclusive, BufferMapping 10 shared, BufferContent 8 shared + 2 exclusive, MultiXactGen shared, WALInsert 3 exclusive (the backend's own of 8; --era-traffic walinsertlock: 9.1-9.3's one), XactSLRU exclusive",
        counted: Transactions, "6 snapshots, xid, 10 lock-manager operations, 10 pages, MultiXactGen, 3 WAL records, CLOG commit, end-of-transaction",
            "pgbench -N statement by statement: 2 snapshots per statement with its relation \
             locks between them (fast path), the accounts lookups (UPDATE, SELECT), the xid at \
             the first write and its lock, the heap page exclusive with MultiXactGenLock shared \
             and the update's WAL record inside, pgbench_history's page exclusive with its WAL \
             record, the commit record, --work over the statements and the commit, CLOG commit, \
             end of transaction, the locks' release (43 lock operations; 42 with --era-traffic \
             nomultixact)",
        clog: true, proc_array: true, snapshots: true, pin: false, lmgr: None,
        transaction: pgbench::n,
        check: pgbench::check_n,
        bad_reads: SNAPSHOTS_OUT_OF_RANGE,
    }
    SelectLmgr {
        name: "select-lmgr",
        description: "pgbench -S of 9.1: vxid and two relation locks through the lock partitions, 2 snapshots, the index lookup, --work",
        locks: "LockManager partitions (6 exclusive), ProcArrayLock 2 shared, BufferMapping and BufferContent 4 shared each (the hot root, then the account's pages over 16 partitions)",
        counted: Transactions, "vxid + 2 relation locks (partitioned), 2 snapshots, index lookup, work",
            "pgbench -S as 9.1 ran it: the vxid lock and two relation locks through the lock \
             partitions, 2 snapshots, the index lookup (the hot root, internal page, leaf, heap \
             page), --work, LockReleaseAll (6 partition-lock operations)",
        clog: false, proc_array: true, snapshots: true, pin: false,
        lmgr: Some(LmgrRelease::Partitioned),
        transaction: select_lmgr::partitioned,
        bad_reads: SNAPSHOTS_OUT_OF_RANGE,
    }
    SelectFastpath {
        name: "select-fastpath",
        description: "pgbench -S with 9.2's fast-path relation locks (the vxid lock still partitioned)",
        locks: "LockFastPath (the backend's own), LockManager for the vxid, ProcArrayLock 2 shared, BufferMapping and BufferContent 4 shared each (the index lookup)",
        counted: Transactions, "fast-path relation locks, partitioned vxid, 2 snapshots, index lookup, work",
            "pgbench -S with 9.2's fast-path relation locks: the vxid lock through its \
             partition, the relation locks under the backend's own fpInfoLock",
        clog: false, proc_array: true, snapshots: true, pin: false,
        lmgr: Some(LmgrRelease::FastPath),
        transaction: select_lmgr::fast_path,
        bad_reads: SNAPSHOTS_OUT_OF_RANGE,
    }
    SelectLazyVxid {
        name: "select-lazy-vxid",
        description: "pgbench -S with fast-path relation locks and lazy vxid locks: no lock-partition traffic",
        locks: "LockFastPath (the backend's own), ProcArrayLock 2 shared, BufferMapping and BufferContent 4 shared each (the index lookup)",
        counted: Transactions, "fast-path and lazy vxid locks, 2 snapshots, index lookup, work",
            "pgbench -S with fast-path relation locks and lazy vxid locks: only the backend's \
             own fpInfoLock, ProcArrayLock and the index lookup's buffer locks",
        clog: false, proc_array: true, snapshots: true, pin: false,
        lmgr: Some(LmgrRelease::LazyVxid),
        transaction: select_lmgr::lazy_vxid,
        bad_reads: SNAPSHOTS_OUT_OF_RANGE,
    }
    PinVm {
        name: "pin-vm",
        description: "a pinned page's visibility-map bit read with no lock, then --work (seed 003's patch 3)",
        locks: "none (the map bit is read with no lock)",
        counted: Transactions, "one visibility-map read",
            "one visibility-map bit read with no lock and --work (the pin kept across reads)",
        clog: false, proc_array: false, snapshots: false, pin: true, lmgr: None,
        transaction: buffer::pin_vm,
        check: buffer::check_pin_vm,
        bad_reads: "map reads found the page not all-visible",
    }
    Scan93 {
        name: "scan-93",
        description: "one heap page of a sequential scan as 9.3 read it (seed 003's patch 1, master): the previous page unpinned, the page's mapping partition shared and pin under its header spinlock, its content lock shared around the visible tuples and PD_ALL_VISIBLE, then --work",
        locks: "BufferMapping 1 shared (16 partitions), BufferContent 1 shared; 2 buffer-header spinlocks (pin, the previous page's unpin)",
        counted: Transactions, "one heap page",
            "one heap page of a synchronized sequential scan on 9.3: the previous page's \
             unpin, ReadBuffer (mapping partition shared, pin under the header spinlock), the \
             visible tuples and PD_ALL_VISIBLE under the content lock shared, --work",
        clog: false, proc_array: false, snapshots: false, pin: false, lmgr: None,
        transaction: heapgetpage::scan_93,
        bad_reads: "heap pages found not all-visible",
    }
    Pin93 {
        name: "pin-93",
        description: "scan-93 with the visibility-map page read per heap page as 9.3's visibilitymap_test with no buffer kept (seed 003's patch 2): its mapping partition shared, pin and unpin under the map buffer's header spinlock, the bit read with no content lock",
        locks: "BufferMapping 2 shared (16 partitions), BufferContent 1 shared (the heap page's); 4 buffer-header spinlocks (2 on the map page)",
        counted: Transactions, "one heap page, the map page pinned and released",
            "one heap page of scan-93, its visibility-map bit read through a pin of the map \
             page taken and released for the page (no content lock on the map page)",
        clog: false, proc_array: false, snapshots: false, pin: false, lmgr: None,
        transaction: heapgetpage::pin_93,
        bad_reads: "map reads found the page not all-visible",
    }
    Pin93Locked {
        name: "pin-93-locked",
        description: "not in the thread: pin-93 with the map bit read under the map page's content lock shared (a lock 9.3 did not take), for a with/without comparison",
        locks: "BufferMapping 2 shared (16 partitions), BufferContent 2 shared (the heap page's, the map page's); 4 buffer-header spinlocks",
        counted: Transactions, "one heap page, the map page pinned, locked and released",
            "one heap page of pin-93 with its map bit read under the map page's content lock \
             shared (model-only: 9.3 read the bit with no lock)",
        clog: false, proc_array: false, snapshots: false, pin: false, lmgr: None,
        transaction: heapgetpage::pin_93_locked,
        bad_reads: "map reads found the page not all-visible",
    }
    PinVm93 {
        name: "pin-vm-93",
        description: "scan-93 with the visibility-map page kept pinned from the scan's first page (seed 003's patch 3): the bit read with one load, no lock",
        locks: "BufferMapping 1 shared (16 partitions), BufferContent 1 shared (the heap page's); 2 buffer-header spinlocks (the map page's pin once per scan)",
        counted: Transactions, "one heap page, the map page kept pinned",
            "one heap page of scan-93, its visibility-map bit read with one load (the map \
             page pinned once per scan)",
        clog: false, proc_array: false, snapshots: false, pin: false, lmgr: None,
        transaction: heapgetpage::pin_vm_93,
        bad_reads: "map reads found the page not all-visible",
    }
}

impl Workload {
    /// The command-line name (`trace:FILE` for a trace).
    pub fn name(self) -> &'static str {
        self.info().name
    }
    /// The name as a file name (a plot's): the name, or for a trace `trace-` and the trace's
    /// directory (or file) name with anything but letters, digits, `-` and `_` as `_`.
    pub fn file_stem(self) -> String {
        match self {
            Workload::Trace(t) => t.get().file_stem(),
            _ => self.name().to_string(),
        }
    }
    /// One-line description.
    pub fn description(self) -> &'static str {
        self.info().description
    }
    /// Whether the workload updates the CLOG (where `clog-group` applies).
    pub fn uses_clog(self) -> bool {
        self.info().uses_clog
    }
    /// Whether the workload uses the proc array (where `--layout` applies).
    pub fn uses_proc_array(self) -> bool {
        self.info().uses_proc_array
    }
    /// Whether the workload takes snapshots (where `--snapshot` applies).
    pub fn takes_snapshots(self) -> bool {
        self.info().takes_snapshots
    }
    /// The lock manager a `pgbench -S` workload of seed 000's thread runs, if it is one.
    pub fn lmgr(self) -> Option<LmgrRelease> {
        self.info().lmgr
    }
    /// Whether the workload takes the lock manager's LWLocks (the `select-*` shapes and
    /// `pgbench-n`).
    pub fn uses_lock_manager(self) -> bool {
        self.lmgr().is_some() || self == Workload::PgbenchN
    }
    /// Whether the workload inserts WAL records under WAL insertion locks (the pgbench write
    /// shapes: where `--wal-hold` and `--era-traffic walinsertlock,nomultixact` apply).
    pub fn writes_wal(self) -> bool {
        matches!(
            self,
            Workload::PgbenchN | Workload::PgbenchWrite | Workload::PgbenchWriteStatus
        )
    }
    /// The buffer-mapping partitions of the `pgbench_accounts` pages the workload reads, if it
    /// reads them: 16 for the 9.1 and 9.2 shapes (`NUM_BUFFER_PARTITIONS` until 9.5), 128 for
    /// the others.
    pub fn accounts_partitions(self) -> Option<usize> {
        match self {
            Workload::SelectLmgr | Workload::SelectFastpath | Workload::SelectLazyVxid => {
                Some(crate::bufmgr::NUM_BUFFER_PARTITIONS_91)
            }
            Workload::PgbenchSelect | Workload::PgbenchN => {
                Some(crate::buffer_pool::NUM_BUFFER_PARTITIONS)
            }
            _ => None,
        }
    }
    /// What a 9.3 scan workload (seed 003) does with the visibility-map page, if it is one.
    pub fn scan_vm_check(self) -> Option<crate::bufmgr::VmCheck> {
        use crate::bufmgr::VmCheck;
        match self {
            Workload::Scan93 => Some(VmCheck::PageFlag),
            Workload::Pin93 => Some(VmCheck::PinPerPage),
            Workload::Pin93Locked => Some(VmCheck::PinPerPageLocked),
            Workload::PinVm93 => Some(VmCheck::KeptPinned),
            _ => None,
        }
    }
    /// What a worker leaves behind at the end of a trial that its own workload releases: a 9.3
    /// scan's last heap page and, under patch 3, the map page it kept pinned.
    pub(super) fn end_own<F: LockFamily>(self, s: &Shared<F>, w: &Worker) {
        if let Some(vm) = self.scan_vm_check() {
            heapgetpage::end_scan(vm, s, w);
        }
    }
    /// Whether each thread keeps the hot buffer pinned for the whole trial.
    pub fn holds_pin(self) -> bool {
        self.info().holds_pin
    }
    /// The recorded trace this workload replays, if it is one.
    pub fn trace(self) -> Option<TraceRef> {
        match self {
            Workload::Trace(t) => Some(t),
            _ => None,
        }
    }
    /// Looks a workload up by name: a row's name, or `trace:FILE`, which loads the trace (once
    /// per file and process). `Err` names what is wrong: an unknown name (with the valid
    /// ones), or the trace file and the record that cannot be read.
    pub fn parse(name: &str) -> Result<Workload, String> {
        let name = name.trim();
        if let Some(file) = name.strip_prefix("trace:") {
            return TraceRef::load(std::path::Path::new(file)).map(Workload::Trace);
        }
        Workload::from_name(name).ok_or_else(|| {
            format!(
                "unknown workload '{name}' (valid: {})",
                Workload::valid_names()
            )
        })
    }
    /// Looks a row up by name (a trace is loaded by [`Workload::parse`]).
    pub fn from_name(name: &str) -> Option<Workload> {
        Workload::ALL.iter().copied().find(|w| w.name() == name)
    }
    /// All names, comma-separated, with `trace:FILE`.
    pub fn valid_names() -> String {
        let mut v: Vec<&str> = Workload::ALL.iter().map(|w| w.name()).collect();
        v.push("trace:FILE");
        v.join(", ")
    }
}
