//! The two workloads of the group-commit benchmarks, shared by `benches/group_commit.rs` and
//! `examples/eot.rs`:
//!
//! * **end of transaction** (`ProcArrayEndTransaction`): clear my slot of the dense xid array and
//!   advance `latestCompletedXid`, under the ProcArray lock exclusively;
//! * **clog commit** (`TransactionIdSetPageStatus`): set my xid's two status bits on its CLOG page,
//!   under the CLOG lock exclusively, grouped by page.
//!
//! Each transaction also does `work` spin iterations outside the lock (the rest of the
//! transaction), so that the lock is contended but not the only thing running.
#![allow(dead_code)]

use flexlock::{ClogGroupLock, FlexLock, GroupLock, Policy};
use lwlock::RawAtomicLwLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// The lock implementations compared on the end-of-transaction operation.
pub const EOT_VARIANTS: [&str; 4] = ["direct-atomic", "leader", "last-releaser", "parking-lot"];
/// The clog commit operation without and with the group update.
pub const CLOG_VARIANTS: [&str; 2] = ["clog-direct", "clog-group"];

/// The part of the proc array the end of a transaction touches.
#[derive(Debug)]
pub struct ProcArray {
    pub xids: Vec<u64>,
    pub latest_completed: u64,
    pub completions: u64,
}

impl ProcArray {
    pub fn new(threads: usize) -> Self {
        ProcArray {
            xids: vec![0; threads],
            latest_completed: 0,
            completions: 0,
        }
    }

    /// `ProcArrayEndTransactionInternal`.
    #[inline]
    pub fn end(&mut self, slot: usize, xid: u64) {
        self.xids[slot] = 0;
        if xid > self.latest_completed {
            self.latest_completed = xid;
        }
        self.completions += 1;
    }
}

/// One end-of-transaction lock.
///
/// `Direct` is a plain exclusive acquire of the atomic LWLock (a FlexLock's write guard under the
/// leader policy is exactly `LWLockAcquire`/`LWLockRelease`; it keeps the exclusive-acquire count).
pub enum Eot {
    Direct(FlexLock<RawAtomicLwLock, ProcArray>),
    Flex(FlexLock<RawAtomicLwLock, ProcArray>),
    ParkingLot(parking_lot::RwLock<ProcArray>),
}

impl Eot {
    pub fn new(variant: &str, threads: usize) -> Self {
        let pa = ProcArray::new(threads);
        match variant {
            "direct-atomic" => Eot::Direct(FlexLock::new(pa, Policy::Leader)),
            "leader" => Eot::Flex(FlexLock::new(pa, Policy::Leader)),
            "last-releaser" => Eot::Flex(FlexLock::new(pa, Policy::LastReleaser)),
            "parking-lot" => Eot::ParkingLot(parking_lot::RwLock::new(pa)),
            other => panic!("unknown end-of-transaction variant {other:?}"),
        }
    }

    #[inline]
    pub fn end_xact(&self, slot: usize, xid: u64) {
        match self {
            Eot::Direct(l) => l.write().end(slot, xid),
            Eot::Flex(l) => l.group(move |p| p.end(slot, xid)),
            Eot::ParkingLot(l) => l.write().end(slot, xid),
        }
    }

    pub fn stats(&self) -> Option<flexlock::GroupStats> {
        match self {
            Eot::Direct(l) | Eot::Flex(l) => l.stats(),
            Eot::ParkingLot(_) => None,
        }
    }

    pub fn completions(&self) -> u64 {
        match self {
            Eot::Direct(l) => l.read().completions,
            Eot::Flex(l) => l.read().completions,
            Eot::ParkingLot(l) => l.read().completions,
        }
    }
}

/// Transactions per CLOG page (BLCKSZ 8192 × 4 per byte).
pub const XIDS_PER_PAGE: u64 = 32768;
/// CLOG buffers kept (a ring of pages).
pub const CLOG_PAGES: usize = 8;

/// A few CLOG pages, two bits per xid.
pub struct Clog {
    pub pages: Vec<Vec<u8>>,
    pub commits: u64,
}

impl Clog {
    pub fn new() -> Self {
        Clog {
            pages: vec![vec![0; (XIDS_PER_PAGE / 4) as usize]; CLOG_PAGES],
            commits: 0,
        }
    }

    pub fn page_of(xid: u64) -> u64 {
        xid / XIDS_PER_PAGE
    }

    /// `TransactionIdSetStatusBit` for a commit.
    #[inline]
    pub fn set_committed(&mut self, xid: u64) {
        let page = (Self::page_of(xid) as usize) % CLOG_PAGES;
        let off = xid % XIDS_PER_PAGE;
        let byte = &mut self.pages[page][(off / 4) as usize];
        let shift = (off % 4) * 2;
        *byte = (*byte & !(3 << shift)) | (1 << shift);
        self.commits += 1;
    }
}

impl Default for Clog {
    fn default() -> Self {
        Self::new()
    }
}

/// `Direct`: a plain exclusive acquire per commit (as with `Eot::Direct`).
pub enum ClogLock {
    Direct(FlexLock<RawAtomicLwLock, Clog>),
    Group(ClogGroupLock<RawAtomicLwLock, Clog>),
}

impl ClogLock {
    pub fn new(variant: &str) -> Self {
        match variant {
            "clog-direct" => ClogLock::Direct(FlexLock::with_config(
                Clog::new(),
                flexlock::FlexConfig {
                    tranche: lwlock::Tranche::XACT_SLRU,
                    ..flexlock::FlexConfig::new(Policy::Leader)
                },
            )),
            "clog-group" => ClogLock::Group(ClogGroupLock::new(Clog::new())),
            other => panic!("unknown clog variant {other:?}"),
        }
    }

    #[inline]
    pub fn commit(&self, xid: u64) {
        match self {
            ClogLock::Direct(l) => l.write().set_committed(xid),
            ClogLock::Group(l) => l.update(Clog::page_of(xid), move |c| c.set_committed(xid)),
        }
    }

    pub fn stats(&self) -> Option<flexlock::GroupStats> {
        match self {
            ClogLock::Group(l) => l.stats(),
            ClogLock::Direct(l) => l.stats(),
        }
    }

    pub fn commits(&self) -> u64 {
        match self {
            ClogLock::Direct(l) => l.read().commits,
            ClogLock::Group(l) => l.read().commits,
        }
    }
}

/// The rest of a transaction: `work` iterations of nothing useful.
#[inline]
pub fn spin_work(work: u32) {
    for i in 0..work {
        std::hint::black_box(i);
    }
}

/// Runs `threads` workers until `total` operations are done in all; returns the wall time from
/// the common start to the last worker's end. `op(thread, i)` is one operation.
pub fn run_ops<F>(threads: usize, total: u64, op: Arc<F>) -> Duration
where
    F: Fn(usize, u64) + Send + Sync + 'static,
{
    let per = total.div_ceil(threads as u64);
    let barrier = Arc::new(Barrier::new(threads + 1));
    let hs: Vec<_> = (0..threads)
        .map(|t| {
            let op = op.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                for i in 0..per {
                    op(t, i);
                }
            })
        })
        .collect();
    barrier.wait();
    let start = Instant::now();
    for h in hs {
        h.join().unwrap();
    }
    start.elapsed()
}

/// Runs `threads` workers for `dur`; returns each worker's operation count.
pub fn run_for<F>(threads: usize, dur: Duration, op: Arc<F>) -> Vec<u64>
where
    F: Fn(usize, u64) + Send + Sync + 'static,
{
    let stop = Arc::new(AtomicBool::new(false));
    let barrier = Arc::new(Barrier::new(threads + 1));
    let hs: Vec<_> = (0..threads)
        .map(|t| {
            let op = op.clone();
            let barrier = barrier.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                barrier.wait();
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    op(t, n);
                    n += 1;
                }
                n
            })
        })
        .collect();
    barrier.wait();
    std::thread::sleep(dur);
    stop.store(true, Ordering::Relaxed);
    hs.into_iter().map(|h| h.join().unwrap()).collect()
}

/// Jain's fairness index of per-thread counts: 1 is perfectly fair, 1/n is one thread doing all.
pub fn jain(counts: &[u64]) -> f64 {
    let n = counts.len() as f64;
    let s: f64 = counts.iter().map(|&c| c as f64).sum();
    let s2: f64 = counts.iter().map(|&c| (c as f64) * (c as f64)).sum();
    if s2 == 0.0 {
        return 0.0;
    }
    s * s / (n * s2)
}

/// The xid counter (`GetNewTransactionId`, without XidGenLock).
pub static NEXT_XID: AtomicU64 = AtomicU64::new(3);
