//! One trial's protocol and its data, written once for both engines: what a point is
//! ([`PointSpec`]), what a trial measures ([`TrialResult`]), the start gate, the wait-event
//! sampler's pass, and `run_protocol` over a `TrialEngine`, the interface the real and the
//! simulated engine implement (`crate::engine`: `engine/real.rs`, `engine/sim.rs`). See
//! `crate::runner` for the measurement window and how CPU time is read on each engine.

use crate::engine::{SimSetup, SimTrial};
use crate::era_traffic::EraTraffic;
use crate::locks::{BenchLock, LockCounters, LockFamily};
use crate::perf::CounterValues;
use crate::registry::LockKind;
use crate::snapshot::{Layout, Outcome};
use crate::workload::{self, Progress, Shared, Worker, WorkerConfig, Workload};
use hdrhistogram::Histogram;
use lwlock::sync::Futex;
use lwlock::sync::{AtomicU32, Ordering};
use lwlock::Proc;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

/// Everything that defines one data point.
#[derive(Clone, Debug)]
pub struct PointSpec {
    /// The workload.
    pub workload: Workload,
    /// The lock.
    pub lock: LockKind,
    /// Worker threads.
    pub threads: usize,
    /// Proc-array size (at least `threads`).
    pub procs: usize,
    /// Proc-array layout.
    pub layout: Layout,
    /// Trial length.
    pub duration: Duration,
    /// Worker settings.
    pub worker: WorkerConfig,
    /// Wait-event sampling interval (zero: no sampler).
    pub sample_interval: Duration,
    /// The simulated machine (`--engine sim`), or `None` for the real one.
    pub sim: Option<SimSetup>,
    /// 9.1's shared traffic added to a `select-*` shape (`--era-traffic`; none by default).
    pub era: EraTraffic,
    /// `pgbench-write-status`'s `TransactionIdGetStatus` lookups per hundred transactions
    /// (`--status-lookups`; [`workload::STATUS_READS_PER_100`] by default, which allocates
    /// nothing; other workloads must leave it at the default).
    pub status_lookups_per_100: u64,
    /// `pgbench-n`'s busy work inside the WAL insertion lock per record (`--wal-hold`;
    /// [`workload::DEFAULT_WAL_HOLD`] by default; other workloads ignore it).
    pub wal_hold: u32,
}

/// The label of a sample of a thread that was not waiting (pg_stat_activity's empty row).
pub const RUNNING: &str = "(running)";

/// Measurements of one trial.
#[derive(Debug)]
pub struct TrialResult {
    /// The measurement window: from opening the start gate to the stop signal (see the module
    /// docs).
    pub elapsed: Duration,
    /// The trial length that was asked for (the window is longer when the driver woke late).
    pub requested: Duration,
    /// From the stop signal until the last worker stopped.
    pub tail: Duration,
    /// Lock operations in the window.
    pub ops: u64,
    /// Transactions in the window.
    pub txns: u64,
    /// Lock operations including the tail.
    pub ops_total: u64,
    /// Transactions per thread in the window.
    pub per_thread: Vec<u64>,
    /// Sampled shared-mode waits, ns.
    pub shared_wait: Histogram<u64>,
    /// Sampled exclusive-mode (or group) waits, ns, of every lock but the CLOG's.
    pub excl_wait: Histogram<u64>,
    /// Sampled exclusive (or group) waits for the CLOG lock, ns.
    pub clog_wait: Histogram<u64>,
    /// Wait-event samples taken, and the sampler's own time spent sampling.
    pub sampler: SamplerCost,
    /// The shared `spins_per_delay` estimate after the trial (threads fold theirs in as they
    /// exit).
    pub spins_per_delay: u32,
    /// Counter totals over the workers.
    pub counters: CounterValues,
    /// The locks' own counters, all locks of the workload together.
    pub lock: LockCounters,
    /// ProcArrayLock's counters alone (also in `lock`).
    pub proc_array_lock: LockCounters,
    /// The CLOG lock's (XactSLRU's) counters alone (also in `lock`): with
    /// [`proc_array_lock`](Self::proc_array_lock), each lock of a workload that takes two
    /// (pgbench-write) reported apart, which matters where they are of different types
    /// (`group-clear`).
    pub clog_lock: LockCounters,
    /// Sampled wait events of the workers: `"type:event"` (or [`RUNNING`]) → samples.
    pub waits: BTreeMap<String, u64>,
    /// Snapshots by how they were obtained, indexed by [`Outcome`] as `usize`.
    pub snapshot_outcomes: [u64; Outcome::COUNT],
    /// The simulator's side of a simulated trial (`None` on the real engine).
    pub sim: Option<SimTrial>,
    /// The workers' CPU time in the window (see the module docs, "CPU time"); `None` where a
    /// worker's CPU clock could not be read.
    pub cpu: Option<CpuTime>,
}

/// The workers' CPU time in one trial's window.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuTime {
    /// CPU time used in the window, summed over the workers (real: their thread CPU clocks;
    /// sim: the simulated cores' busy time).
    pub busy: Duration,
    /// The share of the workers' CPU time spent in the kernel, 0..=1 (real engine, from
    /// `getrusage(RUSAGE_THREAD)`, gate to exit); `None` on the simulated engine or where
    /// `getrusage` failed.
    pub sys_share: Option<f64>,
}

impl TrialResult {
    /// The workers' context switches as Linux counts them (every time a worker left its core,
    /// voluntarily or not): perf events or getrusage on the real engine, the simulator's count
    /// of the same events on the simulated one (not its run-queue dispatches).
    pub fn ctx_switches(&self) -> Option<u64> {
        match &self.sim {
            Some(s) => Some(s.counters.context_switches()),
            None => self.counters.ctx_switches().0,
        }
    }
    /// The hardware threads the workers ran on (`cores`): the simulated machine's in use, or
    /// the host's CPUs this process may run on.
    pub fn cores(&self) -> usize {
        match &self.sim {
            Some(s) => s.cores,
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
    /// CPU busy over the window, percent of the cores' time (`cores() × elapsed`): 100 when
    /// every core ran a worker throughout.
    pub fn cpu_busy_pct(&self) -> Option<f64> {
        let cap = self.cores() as f64 * self.elapsed.as_secs_f64();
        self.cpu
            .filter(|_| cap > 0.0)
            .map(|c| c.busy.as_secs_f64() / cap * 100.0)
    }
    /// CPU seconds per transaction in the window; `None` without CPU time or transactions.
    pub fn cpu_s_per_txn(&self) -> Option<f64> {
        self.cpu
            .filter(|_| self.txns > 0)
            .map(|c| c.busy.as_secs_f64() / self.txns as f64)
    }
    /// Operations per second.
    pub fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64()
    }
    /// Transactions per second.
    pub fn txn_per_sec(&self) -> f64 {
        self.txns as f64 / self.elapsed.as_secs_f64()
    }
    /// Percent of snapshots that took their strategy's fast path (reused, validated without
    /// the lock, or copied from the shared slot); `None` when no snapshot was taken.
    pub fn snapshot_fast_pct(&self) -> Option<f64> {
        let total: u64 = self.snapshot_outcomes.iter().sum();
        let fast: u64 = [Outcome::Reused, Outcome::Validated, Outcome::Copied]
            .iter()
            .map(|o| self.snapshot_outcomes[*o as usize])
            .sum();
        (total > 0).then(|| (fast as f64 * 1000.0 / total as f64).round() / 10.0)
    }
}

/// What the wait-event sampler cost in one trial.
#[derive(Clone, Copy, Debug, Default)]
pub struct SamplerCost {
    /// Sampling passes (each reads every live wait record once).
    pub passes: u64,
    /// Time spent inside those passes (not sleeping between them).
    pub busy: Duration,
}

/// Jain's fairness index (Σx)² / (n·Σx²): 1 when all threads did equal work, 1/n when one did
/// all of it.
pub fn jain(xs: &[u64]) -> f64 {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().map(|&x| x as f64).sum();
    let s2: f64 = xs.iter().map(|&x| (x as f64) * (x as f64)).sum();
    if s2 == 0.0 {
        1.0
    } else {
        s * s / (n * s2)
    }
}

/// The start line: every thread checks in and sleeps on one futex word; the driver waits for all
/// of them, then opens the gate with one FUTEX_WAKE of everyone. (A `std::sync::Barrier` releases
/// its waiters through a mutex one at a time: with 64 threads on 2 cores the last ones, the
/// driver among them, left it hundreds of milliseconds after the first.)
pub(crate) struct StartGate {
    expected: u32,
    ready: AtomicU32,
    go: Futex,
}

impl StartGate {
    fn new(expected: usize) -> Self {
        StartGate {
            expected: expected as u32,
            ready: AtomicU32::new(0),
            go: Futex::new(0),
        }
    }

    /// Whether every thread has checked in.
    pub(crate) fn all_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire) >= self.expected
    }

    /// Opens the gate (every thread has checked in).
    pub(crate) fn release(&self) {
        self.go.word.store(1, Ordering::Release);
        self.go.wake_all();
    }

    /// Checks in and sleeps until the gate opens.
    fn wait(&self) {
        // Release: the driver's Acquire load of `ready` sees this thread's set-up.
        self.ready.fetch_add(1, Ordering::Release);
        // Acquire pairs with the Release store in `open`.
        while self.go.word.load(Ordering::Acquire) == 0 {
            self.go.wait(0);
        }
    }
}

/// A window's wait-event samples by event bits, and what the sampler cost (an error if it
/// panicked).
pub(crate) type Samples = Result<(BTreeMap<u32, u64>, SamplerCost), String>;

/// What an engine supplies to the trial protocol ([`crate::runner`]'s `run_protocol`, written
/// once): its threads, its clock, where the warm-up and the wait-event sampler run, and what it
/// reads at the window's two edges. Everything else (the shared state, the workers' loop, the
/// start gate, the stop signal, the join, the checks and the result) is the protocol's.
pub(crate) trait TrialEngine {
    /// What each worker thread carries of the engine.
    type Side: WorkerSide;
    /// What the engine reads as the window opens.
    type Open;
    /// What the engine reads at the stop signal.
    type Close;

    /// The workers' side for a trial of `threads` workers (called once per trial).
    fn worker_side(&self, threads: usize) -> Self::Side;
    /// Names a lock for the engine's diagnostics (the simulator's line trace).
    fn watch(&self, _name: &'static str, _lock: *const ()) {}
    /// Starts worker `slot`.
    fn spawn<T: Send + 'static>(
        &self,
        slot: usize,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Joiner<T>;
    /// Waits until every worker has checked in at the gate.
    fn await_check_in(&self, gate: &StartGate);
    /// The driver's clock, ns (real: since the engine was made; sim: virtual).
    fn now(&self) -> u64;
    /// Sleeps the driver until `t` on [`now`](Self::now)'s clock (or a little past it).
    fn sleep_until(&self, t: u64);
    /// A warm-up inside the trial before the window opens (then the window's work and lock
    /// counters are differences), or `None`: the window opens at the gate.
    fn warmup(&self) -> Option<Duration>;
    /// One worker's `(ops, txns)` as the driver reads them.
    fn read_progress(&self, p: &Progress) -> (u64, u64);
    /// Reads the engine's side of the window's opening.
    fn open_edge(&self) -> Self::Open;
    /// At the stop signal: runs `work` (the protocol reads the window's work) and reads the
    /// engine's side of the window's end around it.
    fn close_edge<R>(&self, work: impl FnOnce() -> R) -> (R, Self::Close);
    /// Runs the window until `end` on the driver's clock (`duration` after its opening), with
    /// `sampler`'s passes every `interval` (zero: none), then `signal` (the stop signal, which
    /// raises the flag `stopped` reads); returns its result and the samples by event bits.
    fn window<R>(
        &self,
        end: u64,
        duration: Duration,
        interval: Duration,
        sampler: &WaitSampler,
        stopped: &(dyn Fn() -> bool + Sync),
        signal: impl FnOnce() -> R,
    ) -> (R, Samples);
    /// Fills in the engine's part of `result` (CPU time, counters, the simulator's side).
    fn finish(
        &self,
        result: &mut TrialResult,
        open: Self::Open,
        close: Self::Close,
        reports: Vec<<Self::Side as WorkerSide>::Report>,
    );
}

/// What a worker thread carries of its engine: its seed, its clock, and what it measures of
/// itself from the gate to its exit.
pub(crate) trait WorkerSide: Clone + Send + 'static {
    /// The worker's open measurements.
    type Meter;
    /// What the worker measured.
    type Report: Send + 'static;
    /// The seed mixed into the worker's random choices.
    fn seed(&self) -> u64;

    /// Runs the worker's set-up, catching a panic where another thread could be left waiting
    /// for this one (the real engine's gate); the panic is resumed after the gate opened.
    fn guard<R>(&self, setup: impl FnOnce() -> R) -> std::thread::Result<R>;
    /// Opens the worker's measurements, before it checks in at the gate.
    fn open(&self, slot: usize) -> Self::Meter;
    /// Starts them, once the gate opened.
    fn start(&self, m: &mut Self::Meter);
    /// Closes them, once the worker stopped.
    fn finish(&self, m: Self::Meter) -> Self::Report;
    /// The engine's clock, ns.
    fn now(&self) -> u64;
}

/// A worker thread of either engine, to join.
#[derive(Debug)]
pub(crate) enum Joiner<T> {
    /// An OS thread.
    Host(std::thread::JoinHandle<T>),
    /// A simulated thread.
    #[cfg(lwsim)]
    Sim(lwlock::sync::thread::JoinHandle<T>),
}

impl<T> Joiner<T> {
    /// Waits for the thread; its panic's payload on a panic.
    pub(crate) fn join(self) -> std::thread::Result<T> {
        match self {
            Joiner::Host(h) => h.join(),
            #[cfg(lwsim)]
            Joiner::Sim(h) => h.join(),
        }
    }
}

/// The trial protocol, written once for both engines: the shared state, the workers, the start
/// gate, the window with its wait-event samples, the stop signal, the join and the checks. The
/// engine `E` supplies only what differs ([`TrialEngine`]); its edge readings and the workers'
/// reports are returned with the result for it to finish ([`TrialEngine::finish`]).
pub(crate) fn run_protocol<F: LockFamily, E: TrialEngine>(
    spec: &PointSpec,
    engine: &E,
) -> Result<TrialResult, String> {
    let threads = spec.threads;
    let procs = spec.procs.max(threads);
    let shared = Arc::new(
        Shared::<F>::with_era(spec.workload, procs, spec.layout, spec.era)
            .with_status_lookups(spec.status_lookups_per_100)
            .with_wal_hold(spec.wal_hold),
    );
    engine.watch(
        "ProcArrayLock",
        &shared.proc_array as *const F::Lock<()> as *const (),
    );
    let gate = Arc::new(StartGate::new(threads));
    let proc_numbers: Arc<Vec<AtomicU32>> =
        Arc::new((0..threads).map(|_| AtomicU32::new(u32::MAX)).collect());
    let side = engine.worker_side(threads);
    let handles: Vec<_> = (0..threads)
        .map(|slot| {
            let (shared, gate, numbers) = (shared.clone(), gate.clone(), proc_numbers.clone());
            let (workload, cfg, side) = (spec.workload, spec.worker, side.clone());
            engine.spawn(slot, move || {
                // Set-up may not unwind past the gate: the others would wait forever.
                let prep = side.guard(|| {
                    // Register the wait record up front so the sampler knows this thread.
                    numbers[slot].store(Proc::current().number(), Ordering::Relaxed);
                    let w = Worker::with_seed(slot, procs, cfg, side.seed());
                    (w, side.open(slot))
                });
                gate.wait();
                let (mut w, mut meter) = prep.unwrap_or_else(|p| std::panic::resume_unwind(p));
                side.start(&mut meter);
                workload::run_until_stopped(workload, &shared, &mut w);
                let report = side.finish(meter);
                (w, report, side.now())
            })
        })
        .collect();
    engine.await_check_in(&gate);
    let sampler = WaitSampler {
        mine: proc_numbers
            .iter()
            .map(|p| p.load(Ordering::Relaxed))
            .collect(),
    };
    let progress = |shared: &Shared<F>| -> Vec<(u64, u64)> {
        (0..threads)
            .map(|i| engine.read_progress(&shared.progress[i]))
            .collect()
    };
    // The window opens at the gate, or after a warm-up inside the trial: then its work and its
    // lock counters are taken as differences from their values at the opening.
    let (start, before, l0, open) = match engine.warmup() {
        None => {
            let open = engine.open_edge();
            let start = engine.now();
            gate.release();
            (start, None, None, open)
        }
        Some(warmup) => {
            gate.release();
            engine.sleep_until(engine.now() + warmup.as_nanos() as u64);
            let before = progress(&shared);
            let l0 = PerLock::of(&*shared);
            let open = engine.open_edge();
            (engine.now(), Some(before), Some(l0), open)
        }
    };
    let end = start + spec.duration.as_nanos() as u64;
    // The stop signal: the window's work and counters first, then the flag.
    let signal = || {
        let stop_at = engine.now();
        let (after, close) = engine.close_edge(|| progress(&shared));
        let l1 = l0.map(|_| PerLock::of(&*shared));
        shared.stop.store(true, Ordering::Relaxed);
        (stop_at, after, close, l1)
    };
    let stopped = || shared.stop.load(Ordering::Relaxed);
    let (signalled, samples) = engine.window(
        end,
        spec.duration,
        spec.sample_interval,
        &sampler,
        &stopped,
        signal,
    );
    let (stop_at, after, close, l1) = signalled;
    let mut workers = Vec::with_capacity(threads);
    let mut reports = Vec::with_capacity(threads);
    let mut last = stop_at;
    let outcomes: Vec<_> = handles
        .into_iter()
        .map(|h| {
            h.join()
                .map_err(|p| format!("a worker thread panicked: {}", panic_message(&*p)))
        })
        .collect();
    let (by_bits, sampler_cost) = samples?;
    for o in outcomes {
        let (w, report, t) = o?;
        last = last.max(t);
        workers.push(w);
        reports.push(report);
    }
    workload::check(spec.workload, &shared, &workers)
        .map_err(|e| format!("invariant violated with lock {}: {e}", spec.lock.name()))?;
    let mut waits: BTreeMap<String, u64> = BTreeMap::new();
    for (bits, n) in by_bits {
        let e = lwlock::WaitEvent::from_bits(bits);
        let key = if e.is_waiting() {
            e.to_string()
        } else {
            RUNNING.to_string()
        };
        *waits.entry(key).or_default() += n;
    }
    let mut shared_wait = Histogram::new_from(&workers[0].shared_wait);
    let mut excl_wait = Histogram::new_from(&workers[0].excl_wait);
    let mut clog_wait = Histogram::new_from(&workers[0].clog_wait);
    for w in &workers {
        shared_wait.add(&w.shared_wait).map_err(|e| e.to_string())?;
        excl_wait.add(&w.excl_wait).map_err(|e| e.to_string())?;
        clog_wait.add(&w.clog_wait).map_err(|e| e.to_string())?;
    }
    // A warm-up inside the trial: the locks' counts in the window; else the whole trial's.
    let per_lock = match (l0, l1) {
        (Some(a), Some(b)) => PerLock::window(&a, &b),
        _ => PerLock::of(&*shared),
    };
    let window: Vec<(u64, u64)> = match &before {
        Some(before) => after
            .iter()
            .zip(before)
            .map(|(a, b)| (a.0 - b.0, a.1 - b.1))
            .collect(),
        None => after,
    };
    let warm_ops: u64 = before.iter().flatten().map(|b| b.0).sum();
    let mut result = TrialResult {
        elapsed: Duration::from_nanos(stop_at - start),
        requested: spec.duration,
        tail: Duration::from_nanos(last - stop_at),
        ops: window.iter().map(|w| w.0).sum(),
        txns: window.iter().map(|w| w.1).sum(),
        ops_total: workers.iter().map(|w| w.ops).sum::<u64>() - warm_ops,
        per_thread: window.iter().map(|w| w.1).collect(),
        shared_wait,
        excl_wait,
        clog_wait,
        sampler: sampler_cost,
        spins_per_delay: lwlock::proc::shared_spins_per_delay(),
        counters: CounterValues::default(),
        lock: per_lock.all(),
        proc_array_lock: per_lock.proc_array,
        clog_lock: per_lock.clog,
        waits,
        snapshot_outcomes: workers.iter().fold([0; Outcome::COUNT], |mut acc, w| {
            for (a, n) in acc.iter_mut().zip(w.snapshot_outcomes) {
                *a += n;
            }
            acc
        }),
        sim: None,
        cpu: None,
    };
    engine.finish(&mut result, open, close, reports);
    Ok(result)
}

/// The wait-event sampler's one pass, written once; where it runs is the engine's
/// ([`TrialEngine::window`]).
#[derive(Debug)]
pub(crate) struct WaitSampler {
    /// The workers' proc numbers: samples of other threads are not the trial's.
    mine: HashSet<u32>,
}

impl WaitSampler {
    /// Reads every live wait record once, counting the workers' events by their bits.
    pub(crate) fn pass(&self, by_bits: &mut BTreeMap<u32, u64>) {
        for s in lwlock::sample_waits() {
            if self.mine.contains(&s.proc) {
                *by_bits.entry(s.event.to_bits()).or_default() += 1;
            }
        }
    }
}

/// The text of a panic's payload.
pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Each lock's counters, read at one moment.
#[derive(Clone, Copy, Debug, Default)]
struct PerLock {
    proc_array: LockCounters,
    clog: LockCounters,
    null: LockCounters,
    buffer: LockCounters,
    /// Every other lock: the lock manager's, the accounts pages', XidGenLock, SInvalReadLock
    /// (and the root page's pool: the 9.3 scans' pages).
    rest: LockCounters,
}

impl PerLock {
    fn of<F: LockFamily>(shared: &Shared<F>) -> PerLock {
        PerLock {
            proc_array: shared.proc_array.counters(),
            clog: shared.clog.counters(),
            null: shared.null.counters(),
            buffer: shared.buffer.content.counters(),
            rest: shared
                .root_page
                .as_ref()
                .map_or(Default::default(), |p| p.counters())
                .merge(shared.lmgr.counters())
                .merge(
                    shared
                        .accounts
                        .as_ref()
                        .map_or(Default::default(), |p| p.counters()),
                )
                .merge(shared.xid_gen.counters())
                .merge(shared.sinval().map_or(Default::default(), |s| s.counters())),
        }
    }

    /// The window's counters of each lock, from their values at its two edges.
    fn window(a: &PerLock, b: &PerLock) -> PerLock {
        PerLock {
            proc_array: window_counters(&a.proc_array, &b.proc_array),
            clog: window_counters(&a.clog, &b.clog),
            null: window_counters(&a.null, &b.null),
            buffer: window_counters(&a.buffer, &b.buffer),
            rest: window_counters(&a.rest, &b.rest),
        }
    }

    /// Every lock's together.
    fn all(&self) -> LockCounters {
        self.proc_array
            .merge(self.clog)
            .merge(self.null)
            .merge(self.buffer)
            .merge(self.rest)
    }
}

/// The locks' counts in the window: the same interval as the operations they are compared
/// with (the largest group is the trial's).
fn window_counters(a: &LockCounters, b: &LockCounters) -> LockCounters {
    let d = |x: Option<u64>, y: Option<u64>| match (x, y) {
        (Some(x), Some(y)) => Some(y.saturating_sub(x)),
        (_, y) => y,
    };
    let groups = d(a.groups, b.groups);
    let grouped =
        |c: &LockCounters| c.groups.unwrap_or(0) as f64 * c.mean_group_size.unwrap_or(0.0);
    LockCounters {
        blocks: d(a.blocks, b.blocks),
        spin_delays: d(a.spin_delays, b.spin_delays),
        excl_acquires: d(a.excl_acquires, b.excl_acquires),
        groups,
        mean_group_size: match groups {
            Some(g) if g > 0 => Some((grouped(b) - grouped(a)) / g as f64),
            _ => b.mean_group_size,
        },
        max_group_size: b.max_group_size,
    }
}

/// The median of `xs` (mean of the middle two for even lengths).
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Seed 001's pileups: a point is bimodal when its trials fall apart by more than a factor of
/// two: some trial below half the median, or above twice it (a *low majority*, such as
/// `[10, 10, 4, 4, 4]`, has its median in the low mode, so only the second test sees it).
pub fn bimodal(xs: &[f64]) -> bool {
    let m = median(xs);
    xs.iter().any(|&x| x < m / 2.0 || x > m * 2.0)
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index() {
        assert!((jain(&[5, 5, 5, 5]) - 1.0).abs() < 1e-12);
        assert!((jain(&[8, 0, 0, 0]) - 0.25).abs() < 1e-12);
        assert!((jain(&[]) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn median_and_bimodal() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        // Kevin Grittner's m64 point: one run of five at a fifth of the others.
        let m64 = [380407.8, 79197.5, 381112.2, 378579.0, 380326.8];
        assert!(bimodal(&m64));
        assert!(!bimodal(&[100.0, 90.0, 110.0]));
        // A low majority: the median sits in the low mode.
        assert!(bimodal(&[10.0, 10.0, 4.0, 4.0, 4.0]));
    }
}
