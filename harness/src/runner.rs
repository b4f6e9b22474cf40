//! Running one trial: threads, start barrier, stop flag, wait-event sampler, counters, checks.
//!
//! # The measurement window
//! A trial's figures cover the window from opening the start gate to the stop signal: at the
//! stop signal the driver reads every worker's published progress ([`workload::Progress`]) and
//! only then raises the stop flag, so the work counted and the time it is divided by are the
//! same interval. Work done after the signal (a straggler finishing its transaction, asleep,
//! preempted or in `s_lock` back-off) is the *tail*: reported apart (`tail_s`, `ops_total`),
//! never mixed into ops/s. The driver's own sleep may overrun under oversubscription: the window
//! is measured, and the requested length is reported beside it.
//!
//! # The simulated engine
//! With [`PointSpec::sim`] set (`--engine sim`, a `--cfg lwsim` build) the same trial runs as one
//! simulation ([`crate::engine`]): the workers are simulated threads running the same
//! [`workload::run_until_stopped`], the driver is the simulation's supervisor, which opens the
//! gate, waits the warm-up, reads the progress and the simulator's counters, samples the wait
//! events every `--sample-interval` of virtual time through the window, then reads them again and
//! raises the stop flag. Every time is virtual; the counters cover the window only.
//!
//! # CPU time
//! [`TrialResult::cpu`] is the CPU time the workers used in the window, for seed 000's argument
//! (removing one lock's contention moved the bottleneck and cost more CPU per transaction).
//! * Real engine: each worker's thread CPU clock (`pthread_getcpuclockid`, user + system),
//!   read by the driver while every worker waits at the start gate and again at the stop signal,
//!   right after the window's work: the window's CPU time, the tail left out. The wait-event
//!   sampler and the driver are not counted. The user/system split is each worker's
//!   `getrusage(RUSAGE_THREAD)` from passing the gate to its exit (tail included; the kernel
//!   splits the precise total by tick samples, so it is a share, not an exact time).
//! * Simulated engine: the simulated cores' busy time, `cores × window − idle`, with the OS
//!   model's idle time (`lwsim::totals().idle_ps`: no thread on the core; a spinning thread is
//!   busy, as `top` shows it; see lwsim's `machine` docs, *OS*) read at the window's two edges.
//!   No user/system split.

use crate::engine::{SimSetup, SimTrial};
use crate::locks::{BenchLock, LockCounters, LockFamily};
use crate::perf::{CounterValues, Probe, ThreadCounters};
use crate::registry::{LockKind, LockVisitor, Program, UserLockId};
#[cfg(test)]
use crate::snapshot::Strategy;
use crate::snapshot::{Layout, Outcome};
use crate::workload::{self, Shared, Worker, WorkerConfig, Workload};
use hdrhistogram::Histogram;
use lwlock::sync::Futex;
use lwlock::sync::{AtomicU32, Ordering};
use lwlock::Proc;
use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

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
    /// The workers' context switches: perf events or getrusage on the real engine, the
    /// simulator's dispatches on the simulated one.
    pub fn ctx_switches(&self) -> Option<u64> {
        match &self.sim {
            Some(s) => Some(s.counters.context_switches),
            None => self.counters.ctx_switches().0,
        }
    }
    /// The cores the workers ran on: the host's, or the simulated machine's.
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
struct StartGate {
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
    fn all_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire) >= self.expected
    }

    /// Opens the gate (every thread has checked in).
    fn release(&self) {
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

    /// Waits for every thread to check in, runs `before` (every thread is at the gate), then
    /// opens the gate; returns `before`'s result and the start time.
    fn open<R>(&self, before: impl FnOnce() -> R) -> (R, Instant) {
        while !self.all_ready() {
            std::thread::sleep(Duration::from_micros(100));
        }
        let r = before();
        let start = Instant::now();
        self.release();
        (r, start)
    }
}

struct TrialVisitor<'a> {
    spec: &'a PointSpec,
    probe: &'a Probe,
}

impl LockVisitor for TrialVisitor<'_> {
    type Output = Result<TrialResult, String>;
    fn visit<F: LockFamily>(self, _kind: LockKind) -> Self::Output {
        run_trial_with::<F>(self.spec, self.probe)
    }
    fn visit_user(self, lock: UserLockId) -> Self::Output {
        let u = lock.get();
        let run = u
            .entry::<Trial>()
            .ok_or_else(|| format!("lock {} was registered without the trial runner", u.name))?;
        run(self.spec, self.probe)
    }
}

/// The trial runner as a [`Program`]: a lock registered at run time carries
/// [`run_trial_for`] instantiated for its family
/// (`UserLock::new(..).with::<Trial, Family>()`).
#[derive(Debug)]
pub struct Trial;

impl Program for Trial {
    type Entry = fn(&PointSpec, &Probe) -> Result<TrialResult, String>;
    fn entry<F: LockFamily>() -> Self::Entry {
        run_trial_for::<F>
    }
}

/// Runs one trial of `spec` with lock family `F` (whatever `spec.lock` names): the entry a lock
/// registered at run time is instantiated with ([`Trial`]).
pub fn run_trial_for<F: LockFamily>(
    spec: &PointSpec,
    probe: &Probe,
) -> Result<TrialResult, String> {
    run_trial_with::<F>(spec, probe)
}

/// Runs one trial of `spec`.
pub fn run_trial(spec: &PointSpec, probe: &Probe) -> Result<TrialResult, String> {
    spec.lock.dispatch(TrialVisitor { spec, probe })
}

fn run_trial_with<F: LockFamily>(spec: &PointSpec, probe: &Probe) -> Result<TrialResult, String> {
    match &spec.sim {
        None => run_real::<F>(spec, probe),
        #[cfg(lwsim)]
        Some(sim) => simulated::run::<F>(spec, sim),
        #[cfg(not(lwsim))]
        Some(_) => Err(format!(
            "--engine sim needs the simulator backend; build it with: {}",
            crate::engine::SIM_COMMAND
        )),
    }
}

/// The calling thread's handle for [`thread_cpu_ns`] (0 off Linux).
fn current_thread_handle() -> u64 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: pthread_self has no preconditions.
        (unsafe { libc::pthread_self() }) as u64
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

/// CPU time (user + system) of the live thread `handle` ([`current_thread_handle`]), ns, from
/// its thread CPU clock; `None` if it cannot be read (or off Linux).
fn thread_cpu_ns(handle: u64) -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let mut clock: libc::clockid_t = 0;
        // SAFETY: `handle` is the pthread_t of a thread that has not been joined (the caller
        // reads it before joining), and `clock` is a valid out-pointer.
        let rc = unsafe { libc::pthread_getcpuclockid(handle as libc::pthread_t, &mut clock) };
        if rc != 0 {
            return None;
        }
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `clock` came from pthread_getcpuclockid and `ts` is a valid out-pointer.
        if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
            return None;
        }
        Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = handle;
        None
    }
}

/// The calling thread's user and system CPU time so far, µs (`getrusage(RUSAGE_THREAD)`).
fn rusage_thread_user_sys_us() -> Option<(u64, u64)> {
    #[cfg(target_os = "linux")]
    {
        let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: `ru` is a valid, writable rusage; RUSAGE_THREAD is supported on Linux ≥ 2.6.26.
        if unsafe { libc::getrusage(libc::RUSAGE_THREAD, ru.as_mut_ptr()) } != 0 {
            return None;
        }
        // SAFETY: getrusage returned 0, so it filled the struct (and it was zeroed before).
        let ru = unsafe { ru.assume_init() };
        let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        Some((us(ru.ru_utime), us(ru.ru_stime)))
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// The workers' summed thread CPU clocks, ns; `None` if any could not be read.
fn workers_cpu_ns(handles: &[std::sync::atomic::AtomicU64]) -> Option<u64> {
    handles
        .iter()
        .map(|h| thread_cpu_ns(h.load(std::sync::atomic::Ordering::Relaxed)))
        .sum()
}

fn run_real<F: LockFamily>(spec: &PointSpec, probe: &Probe) -> Result<TrialResult, String> {
    let threads = spec.threads;
    let procs = spec.procs.max(threads);
    let shared = Shared::<F>::new(spec.workload, procs, spec.layout);
    let sampler_on = !spec.sample_interval.is_zero();
    let gate = StartGate::new(threads + sampler_on as usize);
    let proc_numbers: Vec<std::sync::atomic::AtomicU32> = (0..threads)
        .map(|_| std::sync::atomic::AtomicU32::new(u32::MAX))
        .collect();
    // Each worker's thread handle, for the driver to read its CPU clock.
    let cpu_handles: Vec<std::sync::atomic::AtomicU64> = (0..threads)
        .map(|_| std::sync::atomic::AtomicU64::new(0))
        .collect();

    let start = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|slot| {
                let (shared, gate, proc_numbers) = (&shared, &gate, &proc_numbers);
                let cpu_handles = &cpu_handles;
                std::thread::Builder::new()
                    .name(format!("worker-{slot}"))
                    .spawn_scoped(scope, move || {
                        // Set-up may not unwind past the barrier: the others would wait forever.
                        let prep = std::panic::catch_unwind(|| {
                            // Register the wait record up front so the sampler knows this thread.
                            proc_numbers[slot].store(
                                Proc::current().number(),
                                std::sync::atomic::Ordering::Relaxed,
                            );
                            // Published before checking in at the gate (its Release).
                            cpu_handles[slot].store(
                                current_thread_handle(),
                                std::sync::atomic::Ordering::Relaxed,
                            );
                            (
                                Worker::new(slot, procs, spec.worker),
                                ThreadCounters::open(probe),
                            )
                        });
                        gate.wait();
                        let (mut w, mut counters) =
                            prep.unwrap_or_else(|p| std::panic::resume_unwind(p));
                        let ru0 = rusage_thread_user_sys_us();
                        counters.enable();
                        workload::run_until_stopped(spec.workload, shared, &mut w);
                        let c = counters.finish();
                        let ru = ru0
                            .zip(rusage_thread_user_sys_us())
                            .map(|(a, b)| (b.0.saturating_sub(a.0), b.1.saturating_sub(a.1)));
                        (w, c, Instant::now(), ru)
                    })
                    .expect("spawn worker thread")
            })
            .collect();
        let sampler = sampler_on.then(|| {
            let (shared, gate, proc_numbers) = (&shared, &gate, &proc_numbers);
            scope.spawn(move || {
                gate.wait();
                let mine: HashSet<u32> = proc_numbers
                    .iter()
                    .map(|p| p.load(std::sync::atomic::Ordering::Relaxed))
                    .collect();
                let mut counts: BTreeMap<String, u64> = BTreeMap::new();
                let mut by_bits: BTreeMap<u32, u64> = BTreeMap::new();
                let mut cost = SamplerCost::default();
                'sampling: while !shared.stop.load(Ordering::Relaxed) {
                    let t0 = Instant::now();
                    for s in lwlock::sample_waits() {
                        if mine.contains(&s.proc) {
                            *by_bits.entry(s.event.to_bits()).or_default() += 1;
                        }
                    }
                    cost.passes += 1;
                    cost.busy += t0.elapsed();
                    // Sleep the interval in slices of at most 1 ms, so that the sampler stops
                    // promptly with the trial whatever the interval.
                    let until = Instant::now() + spec.sample_interval;
                    loop {
                        let now = Instant::now();
                        if now >= until {
                            break;
                        }
                        if shared.stop.load(Ordering::Relaxed) {
                            break 'sampling;
                        }
                        std::thread::sleep((until - now).min(Duration::from_millis(1)));
                    }
                }
                for (bits, n) in by_bits {
                    let e = lwlock::WaitEvent::from_bits(bits);
                    let key = if e.is_waiting() {
                        e.to_string()
                    } else {
                        RUNNING.to_string()
                    };
                    *counts.entry(key).or_default() += n;
                }
                (counts, cost)
            })
        });
        // The workers' CPU clocks while every one waits at the gate.
        let (cpu0, start) = gate.open(|| workers_cpu_ns(&cpu_handles));
        std::thread::sleep(spec.duration);
        // The stop signal: read the window's work first, then raise the flag.
        let stop_at = Instant::now();
        let window: Vec<(u64, u64)> = (0..threads)
            .map(|i| shared.progress[i].snapshot())
            .collect();
        // The workers' CPU clocks at the signal, before any can stop (a clock is read while its
        // thread is alive).
        let cpu1 = workers_cpu_ns(&cpu_handles);
        shared.stop.store(true, Ordering::Relaxed);
        let outcomes: Vec<_> = workers
            .into_iter()
            .map(|h| {
                h.join().map_err(|p| {
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    format!("a worker thread panicked: {msg}")
                })
            })
            .collect();
        let waits = match sampler.map(|h| h.join()) {
            None => Ok((BTreeMap::new(), SamplerCost::default())),
            Some(Ok(w)) => Ok(w),
            Some(Err(_)) => Err("the wait-event sampler panicked".to_string()),
        };
        let cpu_ns = cpu0.zip(cpu1).map(|(a, b)| b.saturating_sub(a));
        (start, stop_at, window, outcomes, waits, cpu_ns)
    });
    let (start, stop_at, window, outcomes, waits, cpu_ns) =
        (start.0, start.1, start.2, start.3, start.4, start.5);
    let (waits, sampler) = waits?;

    let mut workers = Vec::with_capacity(threads);
    let mut counters = CounterValues::default();
    let mut end = start;
    let mut user_sys = Some((0u64, 0u64));
    for o in outcomes {
        let (w, c, t, ru) = o?;
        counters = counters + c;
        end = end.max(t);
        user_sys = user_sys.zip(ru).map(|(a, b)| (a.0 + b.0, a.1 + b.1));
        workers.push(w);
    }
    let cpu = cpu_ns.map(|ns| CpuTime {
        busy: Duration::from_nanos(ns),
        sys_share: user_sys
            .filter(|(u, s)| u + s > 0)
            .map(|(u, s)| s as f64 / (u + s) as f64),
    });
    workload::check(spec.workload, &shared, &workers)
        .map_err(|e| format!("invariant violated with lock {}: {e}", spec.lock.name()))?;

    let mut shared_wait = Histogram::new_from(&workers[0].shared_wait);
    let mut excl_wait = Histogram::new_from(&workers[0].excl_wait);
    let mut clog_wait = Histogram::new_from(&workers[0].clog_wait);
    for w in &workers {
        shared_wait.add(&w.shared_wait).map_err(|e| e.to_string())?;
        excl_wait.add(&w.excl_wait).map_err(|e| e.to_string())?;
        clog_wait.add(&w.clog_wait).map_err(|e| e.to_string())?;
    }
    let per_lock = PerLock::of(&shared);
    Ok(TrialResult {
        elapsed: stop_at - start,
        requested: spec.duration,
        tail: end.saturating_duration_since(stop_at),
        ops: window.iter().map(|w| w.0).sum(),
        txns: window.iter().map(|w| w.1).sum(),
        ops_total: workers.iter().map(|w| w.ops).sum(),
        per_thread: window.iter().map(|w| w.1).collect(),
        shared_wait,
        excl_wait,
        clog_wait,
        sampler,
        spins_per_delay: lwlock::proc::shared_spins_per_delay(),
        counters,
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
        cpu,
    })
}

/// Each lock's counters, read at one moment.
#[derive(Clone, Copy, Debug, Default)]
struct PerLock {
    proc_array: LockCounters,
    clog: LockCounters,
    null: LockCounters,
    buffer: LockCounters,
    lmgr: LockCounters,
}

impl PerLock {
    fn of<F: LockFamily>(shared: &Shared<F>) -> PerLock {
        PerLock {
            proc_array: shared.proc_array.counters(),
            clog: shared.clog.counters(),
            null: shared.null.counters(),
            buffer: shared.buffer.content.counters(),
            lmgr: shared
                .root_page
                .as_ref()
                .map_or(Default::default(), |p| p.counters())
                .merge(shared.lmgr.counters()),
        }
    }

    /// Every lock's together.
    fn all(&self) -> LockCounters {
        self.proc_array
            .merge(self.clog)
            .merge(self.null)
            .merge(self.buffer)
            .merge(self.lmgr)
    }
}

/// One trial on the simulated machine (see the module docs, "The simulated engine").
#[cfg(lwsim)]
mod simulated {
    use super::*;
    use lwlock::sync::lwsim;
    use std::sync::{Arc, Mutex};

    /// What the supervisor hands back from inside the simulation.
    struct Inside {
        result: TrialResult,
        window: (lwsim::CoreCounters, lwsim::CoreCounters),
        /// The cores' idle time in the window, ns (read at its two edges exactly).
        idle_ns: u64,
    }

    /// Virtual nanoseconds of the calling (simulated) thread.
    fn now() -> u64 {
        lwlock::sync::clock_nanos()
    }

    /// Sleeps until virtual time `until` (ns) or a little past it (the profile's timer slack).
    fn sleep_until(until: u64) {
        let t = now();
        if t < until {
            lwlock::sync::sleep_micros((until - t).div_ceil(1000));
        }
    }

    fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    }

    pub(super) fn run<F: LockFamily>(
        spec: &PointSpec,
        sim: &SimSetup,
    ) -> Result<TrialResult, String> {
        let out: Arc<Mutex<Option<Result<Inside, String>>>> = Arc::new(Mutex::new(None));
        let (spec2, sim2, out2) = (spec.clone(), sim.clone(), out.clone());
        let cfg = lwsim::SimConfig::new(sim.profile.clone(), sim.cores).seed(sim.seed);
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            lwsim::run(cfg, move || {
                let r = supervise::<F>(&spec2, &sim2);
                *out2.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
            })
        }));
        let report = run.map_err(|p| {
            format!(
                "the simulation failed with lock {}: {}",
                spec.lock.name(),
                panic_message(&*p)
            )
        })?;
        let inside = out
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or("the simulation ended without a result")??;
        let mut result = inside.result;
        // Busy core time in the window: every core's time less its idle time.
        let capacity = sim.cores as u64 * result.elapsed.as_nanos() as u64;
        result.cpu = Some(CpuTime {
            busy: Duration::from_nanos(capacity.saturating_sub(inside.idle_ns)),
            sys_share: None,
        });
        result.sim = Some(SimTrial {
            platform: sim.platform.clone(),
            cores: sim.cores,
            seed: sim.seed,
            counters: crate::engine::SimCounters::window(&inside.window.0, &inside.window.1),
            real: report.real,
            events_per_sec: report.events_per_sec(),
        });
        Ok(result)
    }

    /// The window's counters of each lock.
    fn window_per_lock(a: &PerLock, b: &PerLock) -> PerLock {
        PerLock {
            proc_array: window_counters(&a.proc_array, &b.proc_array),
            clog: window_counters(&a.clog, &b.clog),
            null: window_counters(&a.null, &b.null),
            buffer: window_counters(&a.buffer, &b.buffer),
            lmgr: window_counters(&a.lmgr, &b.lmgr),
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

    /// The driver, as the simulation's supervisor.
    fn supervise<F: LockFamily>(spec: &PointSpec, sim: &SimSetup) -> Result<Inside, String> {
        let threads = spec.threads;
        let procs = spec.procs.max(threads);
        let shared = Arc::new(Shared::<F>::new(spec.workload, procs, spec.layout));
        lwsim::watch("ProcArrayLock", &shared.proc_array as *const F::Lock<()>);
        let gate = Arc::new(StartGate::new(threads));
        let proc_numbers: Arc<Vec<AtomicU32>> =
            Arc::new((0..threads).map(|_| AtomicU32::new(u32::MAX)).collect());
        let handles: Vec<_> = (0..threads)
            .map(|slot| {
                let (shared, gate, numbers) = (shared.clone(), gate.clone(), proc_numbers.clone());
                let (workload, cfg, seed) = (spec.workload, spec.worker, sim.seed);
                lwlock::sync::thread::spawn(move || {
                    numbers[slot].store(Proc::current().number(), Ordering::Relaxed);
                    let mut w = Worker::with_seed(slot, procs, cfg, seed);
                    gate.wait();
                    workload::run_until_stopped(workload, &shared, &mut w);
                    (w, now())
                })
            })
            .collect();
        // The workers join the machine here, check in and sleep at the gate.
        lwsim::settle();
        while !gate.all_ready() {
            lwlock::sync::sleep_micros(10);
        }
        let mine: HashSet<u32> = proc_numbers
            .iter()
            .map(|p| p.load(Ordering::Relaxed))
            .collect();
        gate.release();
        let progress = |shared: &Shared<F>| -> Vec<(u64, u64)> {
            (0..threads)
                .map(|i| {
                    let p = &shared.progress[i];
                    (
                        p.ops.load(Ordering::Relaxed),
                        p.txns.load(Ordering::Relaxed),
                    )
                })
                .collect()
        };
        sleep_until(now() + sim.warmup.as_nanos() as u64);
        let before = progress(&shared);
        let l0 = PerLock::of(&*shared);
        let c0 = lwsim::totals().unwrap_or_default();
        let start = now();
        let end = start + spec.duration.as_nanos() as u64;
        let interval = spec.sample_interval.as_nanos() as u64;
        let mut by_bits: BTreeMap<u32, u64> = BTreeMap::new();
        let mut sampler = SamplerCost::default();
        if interval == 0 {
            sleep_until(end);
        } else {
            while now() < end {
                let t0 = now();
                for s in lwlock::sample_waits() {
                    if mine.contains(&s.proc) {
                        *by_bits.entry(s.event.to_bits()).or_default() += 1;
                    }
                }
                sampler.passes += 1;
                sampler.busy += Duration::from_nanos(now() - t0);
                sleep_until((t0 + interval).min(end));
            }
        }
        // The stop signal: the window's work and counters first, then the flag.
        let stop_at = now();
        // The cores' idle time at the window's end, at the clock `stop_at` was read at (the
        // progress loads below advance it).
        let idle1 = lwsim::totals().unwrap_or_default().idle_ps;
        let after = progress(&shared);
        let c1 = lwsim::totals().unwrap_or_default();
        let l1 = PerLock::of(&*shared);
        shared.stop.store(true, Ordering::Relaxed);
        let mut workers = Vec::with_capacity(threads);
        let mut last = stop_at;
        for h in handles {
            let (w, t) = h
                .join()
                .map_err(|p| format!("a worker thread panicked: {}", panic_message(&*p)))?;
            last = last.max(t);
            workers.push(w);
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
        let per_lock = window_per_lock(&l0, &l1);
        let window: Vec<(u64, u64)> = after
            .iter()
            .zip(&before)
            .map(|(a, b)| (a.0 - b.0, a.1 - b.1))
            .collect();
        let warm_ops: u64 = before.iter().map(|b| b.0).sum();
        let result = TrialResult {
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
            sampler,
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
        Ok(Inside {
            result,
            idle_ns: idle1.saturating_sub(c0.idle_ps) / 1000,
            window: (c0, c1),
        })
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

    /// One worker's CPU time: some, and at most one core's worth over the window (a thread runs
    /// on one core at a time; 10 % for the clock reads after the stop signal). No speed is
    /// asserted.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_trial_measures_its_workers_cpu_time() {
        let probe = crate::perf::probe();
        let spec = PointSpec {
            workload: Workload::EndXact,
            lock: LockKind::Atomic,
            threads: 1,
            procs: 1,
            layout: Layout::Dense,
            duration: Duration::from_millis(50),
            worker: WorkerConfig {
                write_pct: 0,
                work: 0,
                time_every: 4,
                strategy: Strategy::Scan,
            },
            sample_interval: Duration::ZERO,
            sim: None,
        };
        // A loaded machine may not run the worker inside a 50 ms window: up to five trials, the
        // first whose window saw work (the bounds below hold on any trial).
        let r = (0..5)
            .map(|_| run_trial(&spec, &probe).expect("trial"))
            .find(|r| r.txns > 0 && r.cpu.is_some_and(|c| c.busy > Duration::ZERO))
            .expect("in five trials the worker never ran inside the window");
        let cpu = r.cpu.expect("the worker's CPU clock");
        assert!(cpu.busy > Duration::ZERO);
        assert!(
            cpu.busy.as_secs_f64() <= r.elapsed.as_secs_f64() * 1.1,
            "{:?} of CPU in a {:?} window",
            cpu.busy,
            r.elapsed
        );
        let pct = r.cpu_busy_pct().unwrap();
        assert!(
            pct > 0.0 && pct <= 110.0 / r.cores() as f64,
            "{pct} % of {} cores",
            r.cores()
        );
        let per = r.cpu_s_per_txn().unwrap();
        assert!(per > 0.0 && per * r.txns as f64 <= r.elapsed.as_secs_f64() * 1.1);
        let sys = cpu.sys_share.expect("getrusage");
        assert!((0.0..=1.0).contains(&sys), "{sys}");
    }

    #[test]
    fn a_short_trial_measures_and_samples() {
        let probe = crate::perf::probe();
        let spec = PointSpec {
            workload: Workload::EndXact,
            lock: LockKind::Atomic,
            threads: 3,
            procs: 3,
            layout: Layout::Dense,
            duration: Duration::from_millis(30),
            worker: WorkerConfig {
                write_pct: 0,
                work: 0,
                time_every: 4,
                strategy: Strategy::Scan,
            },
            sample_interval: Duration::from_micros(500),
            sim: None,
        };
        // A loaded machine may not run the workers and the sampler inside a 30 ms window: up to
        // five trials, the first whose window saw work and a sampling pass (the bounds below
        // hold on any trial).
        let r = (0..5)
            .map(|_| run_trial(&spec, &probe).expect("trial"))
            .find(|r| {
                r.ops > 0
                    && r.sampler.passes > 0
                    && !r.excl_wait.is_empty()
                    && r.waits.values().sum::<u64>() > 0
            })
            .expect("in five trials the workers or the sampler never ran inside the window");
        assert_eq!(r.per_thread.len(), 3);
        // One lock operation per end-xact transaction; a worker's two window counters are read
        // as one pair (`Progress::snapshot`), off by at most one transaction per thread.
        assert!(
            r.ops > 0 && r.txns.abs_diff(r.ops) <= 3,
            "{} vs {}",
            r.ops,
            r.txns
        );
        assert!(
            r.ops <= r.ops_total,
            "the window's work is part of the total"
        );
        assert_eq!(r.per_thread.iter().sum::<u64>(), r.txns);
        assert!(r.elapsed >= Duration::from_millis(30));
        assert_eq!(r.requested, Duration::from_millis(30));
        assert!(r.sampler.passes > 0);
        assert!(!r.excl_wait.is_empty());
        assert_eq!(r.shared_wait.len(), 0);
        assert!(r.waits.values().sum::<u64>() > 0, "{:?}", r.waits);
    }
}
