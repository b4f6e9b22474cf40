//! Per-thread counters: perf-event software and hardware events, with `getrusage` as fallback.
//!
//! * The hardware PMU is probed once ([`probe`]). Without one (a VM without a virtual PMU: every
//!   hardware event fails with ENOENT) the cache-miss, LLC, cycle and instruction columns stay
//!   empty and `meta.json` records why.
//! * Context switches and CPU migrations are kernel-side software events: they count only with
//!   `include_kernel()`, which needs root or `perf_event_paranoid` ≤ 1 (otherwise EACCES, and the
//!   user-only event silently reads 0). When it is denied, context switches come from
//!   `getrusage(RUSAGE_THREAD)` (`ru_nvcsw + ru_nivcsw`) and migrations stay empty.
//! * Every counter is opened by the worker thread itself (pid 0, any CPU: "this thread"), enabled
//!   after the start barrier and disabled when the thread stops.

use std::fmt;

/// What [`probe`] found.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Probe {
    /// Whether hardware events open.
    pub pmu_available: bool,
    /// Why not, when they don't.
    pub pmu_reason: Option<String>,
    /// Where context switches come from: `"perf-event"` (kernel counting) or `"getrusage"`.
    pub ctx_switch_source: &'static str,
    /// Why perf-event was not used for context switches, if it wasn't.
    pub ctx_switch_reason: Option<String>,
}

/// Counter totals of one thread (or, summed, of one trial).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CounterValues {
    /// Voluntary + involuntary context switches.
    pub ctx_switches: u64,
    /// CPU migrations (perf-event only).
    pub cpu_migrations: Option<u64>,
    /// Task clock, ns (perf-event only).
    pub task_clock_ns: Option<u64>,
    /// Hardware `cache-misses`.
    pub cache_misses: Option<u64>,
    /// Last-level cache read misses.
    pub llc_misses: Option<u64>,
    /// CPU cycles.
    pub cycles: Option<u64>,
    /// Instructions retired.
    pub instructions: Option<u64>,
}

fn add_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x + y),
        (x, None) => x,
        (None, y) => y,
    }
}

impl std::ops::Add for CounterValues {
    type Output = CounterValues;
    fn add(self, o: CounterValues) -> CounterValues {
        CounterValues {
            ctx_switches: self.ctx_switches + o.ctx_switches,
            cpu_migrations: add_opt(self.cpu_migrations, o.cpu_migrations),
            task_clock_ns: add_opt(self.task_clock_ns, o.task_clock_ns),
            cache_misses: add_opt(self.cache_misses, o.cache_misses),
            llc_misses: add_opt(self.llc_misses, o.llc_misses),
            cycles: add_opt(self.cycles, o.cycles),
            instructions: add_opt(self.instructions, o.instructions),
        }
    }
}

/// `(voluntary + involuntary)` context switches of the calling thread so far.
pub fn rusage_thread_ctx_switches() -> u64 {
    #[cfg(target_os = "linux")]
    {
        let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: `ru` is a valid, writable rusage; RUSAGE_THREAD is supported on Linux ≥ 2.6.26.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, ru.as_mut_ptr()) };
        if rc != 0 {
            return 0;
        }
        // SAFETY: getrusage returned 0, so it filled the struct (and it was zeroed before).
        let ru = unsafe { ru.assume_init() };
        (ru.ru_nvcsw + ru.ru_nivcsw) as u64
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use super::*;
    use perf_event::events::{Cache, CacheOp, CacheResult, Event, Hardware, Software, WhichCache};
    use perf_event::{Builder, Counter};

    fn build(kind: impl Into<Event>, kernel: bool) -> std::io::Result<Counter> {
        let mut b = Builder::new().kind(kind);
        if kernel {
            b.include_kernel();
        }
        b.build()
    }

    fn describe(e: &std::io::Error, what: &str) -> String {
        match e.raw_os_error() {
            Some(libc::ENOENT) => format!("{what}: ENOENT (no hardware PMU: this CPU or VM exposes no perf 'cpu' event source)"),
            Some(libc::EACCES) | Some(libc::EPERM) => {
                format!("{what}: permission denied ({e}; needs root, CAP_PERFMON or a lower perf_event_paranoid)")
            }
            Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => format!("{what}: not supported ({e})"),
            _ => format!("{what}: {e}"),
        }
    }

    /// Probes hardware events and kernel-side software counting once.
    pub fn probe() -> Probe {
        let (pmu_available, pmu_reason) = match build(Hardware::INSTRUCTIONS, false) {
            Ok(_) => (true, None),
            Err(e) => (false, Some(describe(&e, "hardware instructions event"))),
        };
        let (ctx_switch_source, ctx_switch_reason) = match build(Software::CONTEXT_SWITCHES, true) {
            Ok(_) => ("perf-event", None),
            Err(e) => (
                "getrusage",
                Some(describe(&e, "context-switches with kernel counting")),
            ),
        };
        Probe {
            pmu_available,
            pmu_reason,
            ctx_switch_source,
            ctx_switch_reason,
        }
    }

    /// The counters of one worker thread.
    pub struct ThreadCounters {
        ctx: Option<Counter>,
        migrations: Option<Counter>,
        task_clock: Option<Counter>,
        hw: [Option<Counter>; 4],
        rusage_start: u64,
    }

    impl fmt::Debug for ThreadCounters {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("ThreadCounters").finish_non_exhaustive()
        }
    }

    const LLC_READ_MISS: Cache = Cache {
        which: WhichCache::LL,
        operation: CacheOp::READ,
        result: CacheResult::MISS,
    };

    impl ThreadCounters {
        /// Opens the counters for the calling thread (disabled).
        pub fn open(probe: &Probe) -> Self {
            let kernel = probe.ctx_switch_source == "perf-event";
            let hw = if probe.pmu_available {
                [
                    build(Hardware::CACHE_MISSES, false).ok(),
                    build(LLC_READ_MISS, false).ok(),
                    build(Hardware::CPU_CYCLES, false).ok(),
                    build(Hardware::INSTRUCTIONS, false).ok(),
                ]
            } else {
                [None, None, None, None]
            };
            ThreadCounters {
                ctx: if kernel {
                    build(Software::CONTEXT_SWITCHES, true).ok()
                } else {
                    None
                },
                migrations: if kernel {
                    build(Software::CPU_MIGRATIONS, true).ok()
                } else {
                    None
                },
                task_clock: build(Software::TASK_CLOCK, false).ok(),
                hw,
                rusage_start: 0,
            }
        }

        fn all(&mut self) -> impl Iterator<Item = &mut Counter> {
            [&mut self.ctx, &mut self.migrations, &mut self.task_clock]
                .into_iter()
                .chain(self.hw.iter_mut())
                .filter_map(|c| c.as_mut())
        }

        /// Starts counting.
        pub fn enable(&mut self) {
            self.rusage_start = rusage_thread_ctx_switches();
            for c in self.all() {
                let _ = c.enable();
            }
        }

        /// Stops counting and reads the totals.
        pub fn finish(mut self) -> CounterValues {
            for c in self.all() {
                let _ = c.disable();
            }
            let rusage = rusage_thread_ctx_switches().saturating_sub(self.rusage_start);
            let read = |c: &mut Option<Counter>| c.as_mut().and_then(|c| c.read().ok());
            let ctx = read(&mut self.ctx);
            let [a, b, cy, ins] = &mut self.hw;
            CounterValues {
                ctx_switches: ctx.unwrap_or(rusage),
                cpu_migrations: read(&mut self.migrations),
                task_clock_ns: read(&mut self.task_clock),
                cache_misses: read(a),
                llc_misses: read(b),
                cycles: read(cy),
                instructions: read(ins),
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::*;

    /// No perf events off Linux.
    pub fn probe() -> Probe {
        Probe {
            pmu_available: false,
            pmu_reason: Some("perf events need Linux".into()),
            ctx_switch_source: "none",
            ctx_switch_reason: Some("perf events need Linux".into()),
        }
    }

    /// No counters off Linux.
    #[derive(Debug)]
    pub struct ThreadCounters;

    impl ThreadCounters {
        /// Opens nothing.
        pub fn open(_probe: &Probe) -> Self {
            ThreadCounters
        }
        /// Does nothing.
        pub fn enable(&mut self) {}
        /// Zeros.
        pub fn finish(self) -> CounterValues {
            CounterValues::default()
        }
    }
}

pub use imp::{probe, ThreadCounters};

impl fmt::Display for Probe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "PMU: {}; context switches from {}",
            if self.pmu_available {
                "available".to_string()
            } else {
                format!(
                    "unavailable ({})",
                    self.pmu_reason.as_deref().unwrap_or("?")
                )
            },
            self.ctx_switch_source
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_context_switches_of_a_sleeping_thread() {
        let p = probe();
        if !p.pmu_available {
            assert!(p.pmu_reason.is_some());
        }
        let mut c = ThreadCounters::open(&p);
        c.enable();
        for _ in 0..20 {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        let v = c.finish();
        if cfg!(target_os = "linux") {
            assert!(v.ctx_switches >= 10, "{v:?} via {}", p.ctx_switch_source);
        }
    }
}
