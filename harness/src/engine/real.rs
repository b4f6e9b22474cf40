//! The real engine: the host's threads and clock, perf counters, the workers' CPU clocks.
//!
//! What it supplies to the trial protocol ([`crate::trial`]): named OS threads; the window opens
//! at the start gate (the warm-up is a trial of its own, run by the program); the workers' CPU
//! clocks read at the gate and at the stop signal; perf counters and `getrusage` per worker; the
//! wait-event sampler on a thread of its own (it competes with the workers, as PostgreSQL's
//! `pg_stat_activity` reader would), started when the gate opens and stopped by the stop flag.

use crate::perf::{CounterValues, Probe, ThreadCounters};
use crate::trial::{CpuTime, SamplerCost, StartGate, TrialResult, WaitSampler};
use crate::trial::{Joiner, Samples, TrialEngine, WorkerSide};
use crate::workload::Progress;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The host as a trial engine.
#[derive(Debug)]
pub(crate) struct RealEngine<'a> {
    probe: &'a Probe,
    epoch: Instant,
    /// Each worker's thread handle, for the driver to read its CPU clock.
    cpu_handles: std::cell::OnceCell<Arc<Vec<AtomicU64>>>,
}

impl<'a> RealEngine<'a> {
    pub(crate) fn new(probe: &'a Probe) -> Self {
        RealEngine {
            probe,
            epoch: Instant::now(),
            cpu_handles: std::cell::OnceCell::new(),
        }
    }

    fn workers_cpu_ns(&self) -> Option<u64> {
        self.cpu_handles
            .get()
            .map_or(&[][..], |h| &h[..])
            .iter()
            .map(|h| thread_cpu_ns(h.load(Ordering::Relaxed)))
            .sum()
    }
}

/// A real worker's side: its perf counters, `getrusage` and CPU-clock handle.
#[derive(Clone, Debug)]
pub(crate) struct RealSide {
    probe: Probe,
    epoch: Instant,
    cpu_handles: Arc<Vec<AtomicU64>>,
}

/// A real worker's meter: its perf counters and `getrusage` at the gate.
#[derive(Debug)]
pub(crate) struct RealMeter {
    counters: ThreadCounters,
    rusage0: Option<(u64, u64)>,
}

/// What a real worker measured: its counters and its user and system time, µs.
#[derive(Debug)]
pub(crate) struct RealReport {
    counters: CounterValues,
    user_sys_us: Option<(u64, u64)>,
}

impl WorkerSide for RealSide {
    type Meter = RealMeter;
    type Report = RealReport;
    fn seed(&self) -> u64 {
        0
    }
    fn guard<R>(&self, setup: impl FnOnce() -> R) -> std::thread::Result<R> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(setup))
    }
    fn open(&self, slot: usize) -> RealMeter {
        // Published before checking in at the gate (its Release).
        self.cpu_handles[slot].store(current_thread_handle(), Ordering::Relaxed);
        RealMeter {
            counters: ThreadCounters::open(&self.probe),
            rusage0: None,
        }
    }
    fn start(&self, m: &mut RealMeter) {
        m.rusage0 = rusage_thread_user_sys_us();
        m.counters.enable();
    }
    fn finish(&self, m: RealMeter) -> RealReport {
        let counters = m.counters.finish();
        let user_sys_us = m
            .rusage0
            .zip(rusage_thread_user_sys_us())
            .map(|(a, b)| (b.0.saturating_sub(a.0), b.1.saturating_sub(a.1)));
        RealReport {
            counters,
            user_sys_us,
        }
    }
    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }
}

impl TrialEngine for RealEngine<'_> {
    type Side = RealSide;
    /// The workers' summed CPU clocks at the gate.
    type Open = Option<u64>;
    /// The same at the stop signal.
    type Close = Option<u64>;

    fn worker_side(&self, threads: usize) -> RealSide {
        let handles = self
            .cpu_handles
            .get_or_init(|| Arc::new((0..threads).map(|_| AtomicU64::new(0)).collect()));
        RealSide {
            probe: self.probe.clone(),
            epoch: self.epoch,
            cpu_handles: handles.clone(),
        }
    }

    fn spawn<T: Send + 'static>(
        &self,
        slot: usize,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Joiner<T> {
        Joiner::Host(
            std::thread::Builder::new()
                .name(format!("worker-{slot}"))
                .spawn(f)
                .expect("spawn worker thread"),
        )
    }

    fn await_check_in(&self, gate: &StartGate) {
        while !gate.all_ready() {
            std::thread::sleep(Duration::from_micros(100));
        }
    }

    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    fn sleep_until(&self, t: u64) {
        let now = self.now();
        if now < t {
            std::thread::sleep(Duration::from_nanos(t - now));
        }
    }

    fn warmup(&self) -> Option<Duration> {
        None
    }

    /// A consistent pair: the driver may be preempted between two loads.
    fn read_progress(&self, p: &Progress) -> (u64, u64) {
        p.snapshot()
    }

    /// The workers' CPU clocks while every one waits at the gate.
    fn open_edge(&self) -> Option<u64> {
        self.workers_cpu_ns()
    }

    /// The workers' CPU clocks at the signal, after the window's work and before any worker can
    /// stop (a clock is read while its thread is alive).
    fn close_edge<R>(&self, work: impl FnOnce() -> R) -> (R, Option<u64>) {
        let r = work();
        (r, self.workers_cpu_ns())
    }

    fn window<R>(
        &self,
        _end: u64,
        duration: Duration,
        interval: Duration,
        sampler: &WaitSampler,
        stopped: &(dyn Fn() -> bool + Sync),
        signal: impl FnOnce() -> R,
    ) -> (R, Samples) {
        std::thread::scope(|scope| {
            let sampling = (!interval.is_zero()).then(|| {
                scope.spawn(move || {
                    let mut by_bits = BTreeMap::new();
                    let mut cost = SamplerCost::default();
                    'sampling: while !stopped() {
                        let t0 = Instant::now();
                        sampler.pass(&mut by_bits);
                        cost.passes += 1;
                        cost.busy += t0.elapsed();
                        // Sleep the interval in slices of at most 1 ms, so that the sampler
                        // stops promptly with the trial whatever the interval.
                        let until = Instant::now() + interval;
                        loop {
                            let now = Instant::now();
                            if now >= until {
                                break;
                            }
                            if stopped() {
                                break 'sampling;
                            }
                            std::thread::sleep((until - now).min(Duration::from_millis(1)));
                        }
                    }
                    (by_bits, cost)
                })
            });
            std::thread::sleep(duration);
            let r = signal();
            let samples = match sampling.map(|h| h.join()) {
                None => Ok((BTreeMap::new(), SamplerCost::default())),
                Some(Ok(s)) => Ok(s),
                Some(Err(_)) => Err("the wait-event sampler panicked".to_string()),
            };
            (r, samples)
        })
    }

    fn finish(
        &self,
        result: &mut TrialResult,
        open: Option<u64>,
        close: Option<u64>,
        reports: Vec<RealReport>,
    ) {
        let mut user_sys = Some((0u64, 0u64));
        for r in reports {
            result.counters = std::mem::take(&mut result.counters) + r.counters;
            user_sys = user_sys
                .zip(r.user_sys_us)
                .map(|(a, b)| (a.0 + b.0, a.1 + b.1));
        }
        result.cpu = open.zip(close).map(|(a, b)| CpuTime {
            busy: Duration::from_nanos(b.saturating_sub(a)),
            sys_share: user_sys
                .filter(|(u, s)| u + s > 0)
                .map(|(u, s)| s as f64 / (u + s) as f64),
        });
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
