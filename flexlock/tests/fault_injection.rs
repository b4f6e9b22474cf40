//! The fault-injection sweep: every group path of both FlexLock policies and of the
//! holder-serves variant, the last releaser over the reader-biased lock, the clog group update
//! and the drop-in `RwLock`, over a lock that panics at the k-th call of one trait method
//! ([`lwlock::fault::FaultLock`]), for every k a fault-free run of the same case reaches, with 1
//! to 8 threads.
//!
//! Each case asserts:
//! * no hang (a per-case deadline; past it the process aborts, which fails the test);
//! * no lost or doubled operation: operation `id` bumps slot `id`; every slot ends at 0 or 1, a
//!   submitter that got its result finds its slot at exactly 1 and its own id echoed, and the
//!   slots sum to the operation counter;
//! * every injected panic reaches exactly one thread (the number of [`InjectedFault`] payloads
//!   caught equals the number the lock threw), and no other panic escapes;
//! * with one thread (deterministic) the fault fires exactly once;
//! * the lock works afterwards: free, an empty group list, and a group operation, a read and a
//!   write from a new thread succeed.

mod common;

use common::watchdog;
use flexlock::{ClogGroupLock, FlexConfig, FlexLock, GroupLock, GroupPolicy, DEFAULT_MAX_GROUP};
use lwlock::fault::{FaultLock, FaultPoint, InjectedFault};
use lwlock::{RawAtomicLwLock, RawClassicLwLock, RawLwLock};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Operations per thread in each case.
const OPS: usize = 12;
const THREADS: [usize; 6] = [1, 2, 3, 4, 6, 8];

/// The protected value: one slot per operation, and a counter of applied operations.
#[derive(Debug)]
struct Data {
    slots: Vec<u32>,
    applied: u64,
}

impl Data {
    fn new(n: usize) -> Self {
        Data {
            slots: vec![0; n],
            applied: 0,
        }
    }

    /// Operation `id`: bump its slot and the counter; return the id and the slot's new value.
    /// Every fourth operation yields the processor inside the critical section, so that the
    /// other threads find the lock busy and queue (groups, handovers and drains form even on a
    /// machine with fewer cores than threads).
    fn apply(&mut self, id: usize) -> (usize, u32) {
        if id % 4 == 0 {
            std::thread::yield_now();
        }
        self.slots[id] += 1;
        self.applied += 1;
        (id, self.slots[id])
    }
}

/// What one operation's submitter saw.
enum Seen {
    Result,
    Injected,
}

/// A lock under test, behind a [`FaultLock`].
trait Target: Send + Sync + 'static {
    type L: RawLwLock;
    const KIND: &'static str;
    /// The group bound (`usize::MAX` for the drop-in lock, which has no groups).
    const MAX_GROUP: usize;
    /// Whether operations are published to other threads (so faults after the push exist).
    const GROUPS: bool = true;
    fn name() -> String {
        let bound = if Self::MAX_GROUP == usize::MAX {
            String::new()
        } else {
            format!(", max_group {}", Self::MAX_GROUP)
        };
        format!(
            "{} over {}{bound}",
            Self::KIND,
            <Self::L as RawLwLock>::NAME
        )
    }
    fn new(n: usize) -> Self;
    fn fault(&self) -> &FaultLock<Self::L>;
    /// Operation `id` of the thread's `i`-th step: a group operation, or on some steps a plain
    /// guard, so that guard releases (LastReleaser drains) are swept too.
    fn op(&self, id: usize, i: usize);
    fn snapshot(&self) -> (Vec<u32>, u64);
    fn is_idle(&self) -> bool;
    /// Operations run by another thread than their submitter (group locks with feature
    /// `stats` only).
    fn ops_by_leader(&self) -> Option<u64> {
        None
    }
}

/// A FlexLock with group bound `MG`: with a small bound a serving pass stops early and hands
/// the rest of its chain over, so the handover paths are swept too.
struct Flex<const LAST: bool, L: RawLwLock, const MG: usize>(FlexLock<FaultLock<L>, Data>);

impl<const LAST: bool, L: RawLwLock + 'static, const MG: usize> Target for Flex<LAST, L, MG> {
    type L = L;
    const KIND: &'static str = if LAST {
        "flex last-releaser"
    } else {
        "flex leader"
    };
    const MAX_GROUP: usize = MG;
    fn new(n: usize) -> Self {
        let policy = if LAST {
            GroupPolicy::LastReleaser
        } else {
            GroupPolicy::Leader
        };
        Flex(FlexLock::with_config(
            Data::new(n),
            FlexConfig {
                max_group: MG,
                ..FlexConfig::new(policy)
            },
        ))
    }
    fn fault(&self) -> &FaultLock<L> {
        self.0.raw()
    }
    fn op(&self, id: usize, i: usize) {
        match i % 6 {
            3 => {
                let mut g = self.0.write();
                let _ = g.apply(id);
            }
            5 => {
                let g = self.0.read();
                assert!(g.applied as usize <= g.slots.len());
                drop(g);
                let r = self.0.group(move |d| d.apply(id));
                check_result(id, r);
            }
            _ => {
                let r = self.0.group(move |d| d.apply(id));
                check_result(id, r);
            }
        }
    }
    fn snapshot(&self) -> (Vec<u32>, u64) {
        let g = self.0.read();
        (g.slots.clone(), g.applied)
    }
    fn is_idle(&self) -> bool {
        !self.0.raw().is_locked() && self.0.group_head().is_none()
    }
    fn ops_by_leader(&self) -> Option<u64> {
        self.0.stats().map(|s| s.ops_by_leader)
    }
}

/// The holder-serves variant (`flexlock::HolderServesLock`) with group bound `MG`.
struct Holder<L: RawLwLock, const MG: usize>(flexlock::HolderServesLock<FaultLock<L>, Data>);

impl<L: RawLwLock + 'static, const MG: usize> Target for Holder<L, MG> {
    type L = L;
    const KIND: &'static str = "flex holder-serves";
    const MAX_GROUP: usize = MG;
    fn new(n: usize) -> Self {
        Holder(flexlock::HolderServesLock::with_bound(
            Data::new(n),
            MG,
            lwlock::Tranche::PROC_ARRAY,
        ))
    }
    fn fault(&self) -> &FaultLock<L> {
        self.0.raw()
    }
    fn op(&self, id: usize, i: usize) {
        match i % 6 {
            3 => {
                let mut g = self.0.write();
                let _ = g.apply(id);
            }
            5 => {
                let g = self.0.read();
                assert!(g.applied as usize <= g.slots.len());
                drop(g);
                let r = self.0.group(move |d| d.apply(id));
                check_result(id, r);
            }
            _ => {
                let r = self.0.group(move |d| d.apply(id));
                check_result(id, r);
            }
        }
    }
    fn snapshot(&self) -> (Vec<u32>, u64) {
        let g = self.0.read();
        (g.slots.clone(), g.applied)
    }
    fn is_idle(&self) -> bool {
        !self.0.raw().is_locked() && self.0.group_head().is_none()
    }
    fn ops_by_leader(&self) -> Option<u64> {
        self.0.stats().map(|s| s.ops_by_leader)
    }
}

struct Clog<const MG: usize>(ClogGroupLock<FaultLock<RawAtomicLwLock>, Data>);

impl<const MG: usize> Target for Clog<MG> {
    type L = RawAtomicLwLock;
    const KIND: &'static str = "clog group";
    const MAX_GROUP: usize = MG;
    fn new(n: usize) -> Self {
        Clog(ClogGroupLock::with_config(
            Data::new(n),
            FlexConfig {
                max_group: MG,
                tranche: lwlock::Tranche::XACT_SLRU,
                ..FlexConfig::new(GroupPolicy::Leader)
            },
        ))
    }
    fn fault(&self) -> &FaultLock<RawAtomicLwLock> {
        self.0.raw()
    }
    fn op(&self, id: usize, i: usize) {
        // Two pages: some joins are refused (the fallback path).
        let r = self.0.update((id % 2) as u64, move |d| d.apply(id));
        check_result(id, r);
        if i % 4 == 3 {
            // A plain exclusive hold between group updates.
            drop(self.0.write());
        }
    }
    fn snapshot(&self) -> (Vec<u32>, u64) {
        let g = self.0.read();
        (g.slots.clone(), g.applied)
    }
    fn is_idle(&self) -> bool {
        !self.0.raw().is_locked() && self.0.group_head().is_none()
    }
    fn ops_by_leader(&self) -> Option<u64> {
        self.0.stats().map(|s| s.ops_by_leader)
    }
}

/// The drop-in reader-writer lock (lock_api) over the faulty atomic LWLock.
struct DropIn(lwlock::lock_api::RwLock<FaultLock<RawAtomicLwLock>, Data>);

impl Target for DropIn {
    type L = RawAtomicLwLock;
    const KIND: &'static str = "drop-in RwLock";
    const MAX_GROUP: usize = usize::MAX;
    const GROUPS: bool = false;
    fn new(n: usize) -> Self {
        DropIn(lwlock::lock_api::RwLock::new(Data::new(n)))
    }
    fn fault(&self) -> &FaultLock<RawAtomicLwLock> {
        // SAFETY: only used to read counters and arm the plan, never to lock or unlock.
        unsafe { self.0.raw() }
    }
    fn op(&self, id: usize, i: usize) {
        match i % 3 {
            0 => {
                let mut g = self.0.write();
                let r = g.apply(id);
                assert_eq!(r, (id, 1));
            }
            1 => {
                let g = self.0.read();
                assert!(g.applied as usize <= g.slots.len());
                drop(g);
                if let Some(mut g) = self.0.try_write() {
                    g.apply(id);
                } else {
                    self.0.write().apply(id);
                }
            }
            _ => {
                if let Some(g) = self.0.try_read() {
                    assert!(g.applied as usize <= g.slots.len());
                }
                self.0.write().apply(id);
            }
        }
    }
    fn snapshot(&self) -> (Vec<u32>, u64) {
        let g = self.0.read();
        (g.slots.clone(), g.applied)
    }
    fn is_idle(&self) -> bool {
        !self.0.is_locked()
    }
}

/// A group operation's result must be its own and show it ran once.
fn check_result(id: usize, r: (usize, u32)) {
    assert_eq!(
        r,
        (id, 1),
        "a result went to the wrong submitter, or an op ran twice"
    );
}

/// Outcome counts of one case.
#[derive(Default, Debug)]
struct CaseOutcome {
    injected_caught: u64,
    fired: u64,
    by_leader: Option<u64>,
    /// Faults that fired on a thread whose operation was already published (its record a group
    /// member): the steps where an unwind is dangerous.
    after_push: u64,
    calls: [u64; 4],
}

/// Runs one case: `threads` threads × OPS operations on a fresh target, with `plan` armed.
fn run_case<T: Target>(threads: usize, plan: Option<(FaultPoint, u64)>) -> CaseOutcome {
    let n = threads * OPS;
    // Two more slots for the follow-up operations after the case.
    let target = Arc::new(T::new(n + 2));
    let after_push = Arc::new(std::sync::atomic::AtomicU64::new(0));
    if let Some((point, k)) = plan {
        let a = after_push.clone();
        target.fault().arm_with(point, k, move || {
            if lwlock::Proc::current()
                .group
                .member
                .load(std::sync::atomic::Ordering::Relaxed)
            {
                a.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
    let barrier = Arc::new(Barrier::new(threads));
    let done = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let target = target.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                let mut seen = Vec::with_capacity(OPS);
                for i in 0..OPS {
                    let id = t * OPS + i;
                    match catch_unwind(AssertUnwindSafe(|| target.op(id, i))) {
                        Ok(()) => seen.push((id, Seen::Result)),
                        Err(payload) => match payload.downcast_ref::<InjectedFault>() {
                            Some(_) => seen.push((id, Seen::Injected)),
                            None => std::panic::resume_unwind(payload),
                        },
                    }
                }
                seen
            })
        })
        .collect();
    // Per-case deadline: a hang aborts the process (the test fails).
    let d2 = done.clone();
    let name = T::name();
    let name2 = name.clone();
    let deadline = std::thread::spawn(move || {
        let start = Instant::now();
        while !d2.load(Ordering::Acquire) {
            if start.elapsed() > Duration::from_secs(30) {
                eprintln!("fault sweep: {name2} threads={threads} plan={plan:?} hung");
                std::process::abort();
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    let mut outcome = CaseOutcome::default();
    let mut results = Vec::new();
    for h in handles {
        let seen = h
            .join()
            .unwrap_or_else(|_| panic!("{name} {plan:?}: a non-injected panic escaped"));
        results.extend(seen);
    }
    done.store(true, Ordering::Release);
    deadline.join().unwrap();

    let fault = target.fault();
    fault.disarm();
    outcome.fired = fault.fired();
    outcome.by_leader = target.ops_by_leader();
    outcome.after_push = after_push.load(Ordering::Relaxed);
    for p in FaultPoint::ALL {
        outcome.calls[p as usize] = fault.calls(p);
    }
    let ctx = format!("{name} threads={threads} plan={plan:?}");
    assert!(
        target.is_idle(),
        "{ctx}: the lock is held or the list is not empty afterwards"
    );
    let (slots, applied) = target.snapshot();
    assert!(
        slots.iter().all(|&s| s <= 1),
        "{ctx}: an operation ran twice: {slots:?}"
    );
    assert_eq!(
        slots.iter().map(|&s| s as u64).sum::<u64>(),
        applied,
        "{ctx}: slots and the applied counter disagree"
    );
    for (id, seen) in &results {
        match seen {
            Seen::Result => assert_eq!(slots[*id], 1, "{ctx}: op {id} returned but is lost"),
            Seen::Injected => outcome.injected_caught += 1,
        }
    }
    assert_eq!(
        outcome.injected_caught, outcome.fired,
        "{ctx}: every injected panic reaches exactly one thread"
    );
    assert!(outcome.fired <= 1, "{ctx}: one armed call fires once");
    // The lock works afterwards, from a new thread and from this one.
    let t2 = target.clone();
    std::thread::spawn(move || t2.op(n, 0))
        .join()
        .unwrap_or_else(|_| panic!("{ctx}: the lock does not work afterwards (new thread)"));
    target.op(n + 1, 0);
    assert!(
        target.is_idle(),
        "{ctx}: not idle after the follow-up operations"
    );
    outcome
}

/// Sweeps every point and every k up to the calls a fault-free run of the same thread count
/// made. Returns (cases, faults injected).
fn sweep<T: Target>() -> (u64, u64) {
    let _w = watchdog("fault sweep", 900);
    lwlock::fault::quiet_injected_panics();
    let mut cases = 0;
    let mut injected = 0;
    let mut by_leader: Option<u64> = None;
    let mut after_push = 0;
    for threads in THREADS {
        let baseline = run_case::<T>(threads, None);
        assert_eq!(baseline.fired, 0);
        for point in FaultPoint::ALL {
            let calls = baseline.calls[point as usize];
            for k in 1..=calls {
                let out = run_case::<T>(threads, Some((point, k)));
                if threads == 1 {
                    assert_eq!(
                        out.fired,
                        1,
                        "{}: with one thread call {k} of {point:?} is reached again",
                        T::name()
                    );
                }
                cases += 1;
                injected += out.fired;
                after_push += out.after_push;
                if let Some(n) = out.by_leader {
                    *by_leader.get_or_insert(0) += n;
                }
            }
        }
    }
    let grouped = by_leader
        .map(|n| format!(", {n} operations run by another thread"))
        .unwrap_or_default();
    eprintln!(
        "fault sweep: {}: {cases} cases, {injected} faults injected ({after_push} after the \
         operation was published), 0 violations{grouped}",
        T::name()
    );
    if T::GROUPS {
        assert!(
            after_push > 0,
            "{}: no fault hit a step after an operation was published",
            T::name()
        );
    }
    (cases, injected)
}

const DEF: usize = DEFAULT_MAX_GROUP;

#[test]
fn sweep_flex_leader_atomic() {
    let (cases, injected) = sweep::<Flex<false, RawAtomicLwLock, DEF>>();
    assert!(cases > 0 && injected > 0);
}

#[test]
fn sweep_flex_leader_atomic_handovers() {
    let (cases, injected) = sweep::<Flex<false, RawAtomicLwLock, 2>>();
    assert!(cases > 0 && injected > 0);
}

#[test]
fn sweep_flex_leader_classic() {
    let (cases, injected) = sweep::<Flex<false, RawClassicLwLock, DEF>>();
    assert!(cases > 0 && injected > 0);
}

#[test]
fn sweep_flex_last_releaser_atomic() {
    let (cases, injected) = sweep::<Flex<true, RawAtomicLwLock, DEF>>();
    assert!(cases > 0 && injected > 0);
}

#[test]
fn sweep_flex_last_releaser_atomic_handovers() {
    let (cases, injected) = sweep::<Flex<true, RawAtomicLwLock, 2>>();
    assert!(cases > 0 && injected > 0);
}

#[test]
fn sweep_flex_last_releaser_classic() {
    let (cases, injected) = sweep::<Flex<true, RawClassicLwLock, DEF>>();
    assert!(cases > 0 && injected > 0);
}

/// The atomic LWLock with bounded writer starvation (`RawHandoffLwLock`, `RawTaskFairLwLock`).
#[test]
fn sweep_flex_leader_handoff() {
    let (cases, injected) = sweep::<Flex<false, lwlock::RawHandoffLwLock, DEF>>();
    assert!(cases > 0 && injected > 0);
}

#[test]
fn sweep_flex_last_releaser_handoff() {
    let (cases, injected) = sweep::<Flex<true, lwlock::RawHandoffLwLock, DEF>>();
    assert!(cases > 0 && injected > 0);
}

#[test]
fn sweep_flex_holder_serves_atomic() {
    let (cases, injected) = sweep::<Holder<RawAtomicLwLock, DEF>>();
    assert!(cases > 0 && injected > 0);
}

#[test]
fn sweep_flex_holder_serves_atomic_handovers() {
    let (cases, injected) = sweep::<Holder<RawAtomicLwLock, 2>>();
    assert!(cases > 0 && injected > 0);
}

#[test]
fn sweep_flex_last_releaser_reader_bias() {
    let (cases, injected) = sweep::<Flex<true, lwlock::RawReaderBiasLwLock, DEF>>();
    assert!(cases > 0 && injected > 0);
}

#[test]
fn sweep_flex_leader_taskfair() {
    let (cases, injected) = sweep::<Flex<false, lwlock::RawTaskFairLwLock, DEF>>();
    assert!(cases > 0 && injected > 0);
}

/// The drop-in types' policy before the empty-yield rule (`RawAdaptiveLwLock`: spinning, the
/// bounded wake throttle, the bound).
#[test]
fn sweep_flex_leader_adaptive() {
    let (cases, injected) = sweep::<Flex<false, lwlock::RawAdaptiveLwLock, DEF>>();
    assert!(cases > 0 && injected > 0);
}

#[test]
fn sweep_flex_last_releaser_adaptive() {
    let (cases, injected) = sweep::<Flex<true, lwlock::RawAdaptiveLwLock, DEF>>();
    assert!(cases > 0 && injected > 0);
}

/// The empty-yield variant (`RawEmptyYieldLwLock`: the adaptive policy whose spinner sleeps once
/// a yield finds its CPU idle).
#[test]
fn sweep_flex_leader_empty_yield() {
    let (cases, injected) = sweep::<Flex<false, lwlock::RawEmptyYieldLwLock, DEF>>();
    assert!(cases > 0 && injected > 0);
}

#[test]
fn sweep_clog_group() {
    let (cases, injected) = sweep::<Clog<DEF>>();
    assert!(cases > 0 && injected > 0);
}

#[test]
fn sweep_clog_group_handovers() {
    let (cases, injected) = sweep::<Clog<2>>();
    assert!(cases > 0 && injected > 0);
}

#[test]
fn sweep_drop_in_rwlock() {
    let (cases, injected) = sweep::<DropIn>();
    assert!(cases > 0 && injected > 0);
}
