//! Per-thread counters: perf-event software and hardware events, and `getrusage`.
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
//! * The hardware events (cycles, instructions, cache misses, LLC read misses; those of them
//!   that the probe could open, [`Probe::hw_events`]) form one perf-event group per thread, so
//!   they are scheduled onto the PMU together and cover the same time (user space only, like
//!   the software task clock). A group the kernel can never schedule has no counts. Every counter is read with its `time_enabled` / `time_running`; a count that ran for
//!   only part of its enabled time (the kernel multiplexed the PMU) is scaled by
//!   enabled / running, as `perf stat` does, and [`CounterValues::hw_running`] keeps the lowest
//!   running share so the output can say the figures are estimates. A counter that never ran
//!   while enabled has no count.
//!
//! **Partial sums are refused.** Opening can fail for some threads only (256 workers under
//! `ulimit -n 400` run out of file descriptors part-way). A trial's total of a counter is given
//! only when every worker measured it ([`CounterValues::total`]); otherwise it is empty, and
//! [`CounterValues::complete_threads`] says how many workers had all their counters. Context
//! switches have one source per trial ([`CounterValues::ctx_switches`]): perf events when every
//! worker counted them, otherwise `getrusage` for every worker, never a mix.

use std::fmt;

/// What [`probe`] found.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Probe {
    /// Whether hardware events open.
    pub pmu_available: bool,
    /// Why not, when they don't.
    pub pmu_reason: Option<String>,
    /// The hardware events that open here, of [`HW_EVENTS`] (a CPU may lack one, such as the
    /// LLC read-miss event): only these are requested in the workers' groups.
    pub hw_events: Vec<&'static str>,
    /// Where context switches come from: `"perf-event"` (kernel counting) or `"getrusage"`.
    pub ctx_switch_source: &'static str,
    /// Why perf-event was not used for context switches, if it wasn't.
    pub ctx_switch_reason: Option<String>,
}

/// One counter of one thread as the kernel reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    /// The raw count.
    pub count: u64,
    /// Nanoseconds the counter was enabled.
    pub time_enabled: u64,
    /// Nanoseconds it was actually on the PMU (less than enabled when multiplexed).
    pub time_running: u64,
}

impl Reading {
    /// The count scaled for multiplexing, `count × enabled / running` (the kernel's estimate of
    /// what a counter running all the time would have counted). `None` when the counter never ran
    /// while enabled: there is nothing to scale.
    pub fn scaled(self) -> Option<u64> {
        if self.time_running == 0 {
            return (self.time_enabled == 0).then_some(self.count);
        }
        if self.time_running >= self.time_enabled {
            return Some(self.count);
        }
        let v = self.count as u128 * self.time_enabled as u128 / self.time_running as u128;
        Some(u64::try_from(v).unwrap_or(u64::MAX))
    }

    /// `time_running / time_enabled`: 1 when the counter ran all the time it was enabled.
    pub fn running_share(self) -> f64 {
        if self.time_enabled == 0 {
            1.0
        } else {
            (self.time_running as f64 / self.time_enabled as f64).min(1.0)
        }
    }
}

/// One counter summed over the worker threads that measured it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counted {
    /// The sum over those threads.
    pub sum: u64,
    /// How many threads it covers.
    pub threads: u32,
}

impl Counted {
    /// One thread's value: `None` (not opened, not read, never ran) covers no thread.
    pub fn one(v: Option<u64>) -> Counted {
        match v {
            Some(sum) => Counted { sum, threads: 1 },
            None => Counted::default(),
        }
    }
}

impl std::ops::Add for Counted {
    type Output = Counted;
    fn add(self, o: Counted) -> Counted {
        Counted {
            sum: self.sum.saturating_add(o.sum),
            threads: self.threads + o.threads,
        }
    }
}

/// Where a trial's context switches come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CtxSource {
    /// The perf-event software counter with kernel counting, in every worker.
    PerfEvent,
    /// `getrusage(RUSAGE_THREAD)` in every worker.
    Getrusage,
    /// Neither covered every worker: no figure.
    None,
}

impl CtxSource {
    /// `perf-event`, `getrusage`, or empty.
    pub fn name(self) -> &'static str {
        match self {
            CtxSource::PerfEvent => "perf-event",
            CtxSource::Getrusage => "getrusage",
            CtxSource::None => "",
        }
    }
}

/// Counter values of one thread or, added up with `+`, of the workers of one trial.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CounterValues {
    /// Worker threads added up.
    pub threads: u32,
    /// Of those, the threads where every counter that the probe found available opened and was
    /// read (the `counters_threads` column).
    pub complete_threads: u32,
    /// Voluntary + involuntary context switches, perf-event (kernel counting).
    pub ctx_switches_perf: Counted,
    /// The same from `getrusage(RUSAGE_THREAD)`.
    pub ctx_switches_rusage: Counted,
    /// CPU migrations (perf-event only).
    pub cpu_migrations: Counted,
    /// Task clock, ns (perf-event).
    pub task_clock_ns: Counted,
    /// Hardware `cache-misses` (scaled for multiplexing).
    pub cache_misses: Counted,
    /// Last-level cache read misses (scaled).
    pub llc_misses: Counted,
    /// CPU cycles (scaled).
    pub cycles: Counted,
    /// Instructions retired (scaled).
    pub instructions: Counted,
    /// The lowest `time_running / time_enabled` of a thread's hardware counter set (1 = counted
    /// the whole time, below 1 = the hardware counts are scaled estimates); `None` when no
    /// hardware counter set counted.
    pub hw_running: Option<f64>,
}

impl std::ops::Add for CounterValues {
    type Output = CounterValues;
    fn add(self, o: CounterValues) -> CounterValues {
        CounterValues {
            threads: self.threads + o.threads,
            complete_threads: self.complete_threads + o.complete_threads,
            ctx_switches_perf: self.ctx_switches_perf + o.ctx_switches_perf,
            ctx_switches_rusage: self.ctx_switches_rusage + o.ctx_switches_rusage,
            cpu_migrations: self.cpu_migrations + o.cpu_migrations,
            task_clock_ns: self.task_clock_ns + o.task_clock_ns,
            cache_misses: self.cache_misses + o.cache_misses,
            llc_misses: self.llc_misses + o.llc_misses,
            cycles: self.cycles + o.cycles,
            instructions: self.instructions + o.instructions,
            hw_running: match (self.hw_running, o.hw_running) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
        }
    }
}

impl CounterValues {
    /// The trial's total of `c`: only when it covers every worker, never a partial sum.
    pub fn total(&self, c: Counted) -> Option<u64> {
        (self.threads > 0 && c.threads == self.threads).then_some(c.sum)
    }

    /// The trial's context switches and their one source: perf events when every worker counted
    /// them, else `getrusage` when every worker's call succeeded, else nothing.
    pub fn ctx_switches(&self) -> (Option<u64>, CtxSource) {
        if let Some(n) = self.total(self.ctx_switches_perf) {
            (Some(n), CtxSource::PerfEvent)
        } else if let Some(n) = self.total(self.ctx_switches_rusage) {
            (Some(n), CtxSource::Getrusage)
        } else {
            (None, CtxSource::None)
        }
    }

    /// [`hw_running`](Self::hw_running), only when every worker's hardware counters are complete.
    pub fn hw_running_share(&self) -> Option<f64> {
        let all = [
            self.cache_misses,
            self.llc_misses,
            self.cycles,
            self.instructions,
        ]
        .iter()
        .any(|c| self.total(*c).is_some());
        all.then_some(self.hw_running).flatten()
    }
}

/// `(voluntary + involuntary)` context switches of the calling thread so far; `None` when
/// `getrusage` fails (or off Linux).
pub fn rusage_thread_ctx_switches() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        rusage(libc::RUSAGE_THREAD).map(Usage::switches)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// `(voluntary + involuntary)` context switches of the whole process so far (every thread, the
/// ended ones included); `None` when `getrusage` fails (or off Linux).
pub fn rusage_process_ctx_switches() -> Option<u64> {
    rusage_process().map(Usage::switches)
}

/// What `getrusage` says about a process or a thread: its context switches split by cause and
/// its CPU time split by mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// `ru_nvcsw`: switches because the thread blocked (a futex sleep, a read).
    pub voluntary_switches: u64,
    /// `ru_nivcsw`: switches while still runnable (preemption at the end of a slice, a wakee
    /// preempting it, `sched_yield` with another thread to run).
    pub involuntary_switches: u64,
    /// `ru_utime`: CPU time in user mode.
    pub user: std::time::Duration,
    /// `ru_stime`: CPU time in the kernel (system calls: futex waits and wakes, yields).
    pub system: std::time::Duration,
}

impl Usage {
    /// Voluntary and involuntary switches together.
    pub fn switches(self) -> u64 {
        self.voluntary_switches + self.involuntary_switches
    }

    /// The change from `earlier` to `self` (saturating: counters never run backwards).
    pub fn since(self, earlier: Usage) -> Usage {
        Usage {
            voluntary_switches: self
                .voluntary_switches
                .saturating_sub(earlier.voluntary_switches),
            involuntary_switches: self
                .involuntary_switches
                .saturating_sub(earlier.involuntary_switches),
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
        }
    }
}

/// The whole process's usage so far (every thread, the ended ones included); `None` when
/// `getrusage` fails (or off Linux).
pub fn rusage_process() -> Option<Usage> {
    #[cfg(target_os = "linux")]
    {
        rusage(libc::RUSAGE_SELF)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// `getrusage(who)`.
#[cfg(target_os = "linux")]
fn rusage(who: libc::c_int) -> Option<Usage> {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `ru` is a valid, writable rusage; RUSAGE_THREAD is supported on Linux ≥ 2.6.26,
    // RUSAGE_SELF everywhere.
    let rc = unsafe { libc::getrusage(who, ru.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: getrusage returned 0, so it filled the struct (and it was zeroed before).
    let ru = unsafe { ru.assume_init() };
    let time = |t: libc::timeval| {
        std::time::Duration::from_secs(t.tv_sec.max(0) as u64)
            + std::time::Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    Some(Usage {
        voluntary_switches: ru.ru_nvcsw.max(0) as u64,
        involuntary_switches: ru.ru_nivcsw.max(0) as u64,
        user: time(ru.ru_utime),
        system: time(ru.ru_stime),
    })
}

/// The hardware events, in their group order: cycles, instructions, cache misses, LLC read misses.
pub const HW_EVENTS: [&str; 4] = ["cycles", "instructions", "cache-misses", "llc-read-misses"];

/// The counters a thread opens, for [`ThreadCounters`]'s open hook (tests make some fail).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
enum Which {
    CtxSwitches,
    CpuMigrations,
    TaskClock,
    HwSet,
    Cycles,
    Instructions,
    CacheMisses,
    LlcMisses,
}

#[cfg(target_os = "linux")]
mod imp {
    use super::*;
    use perf_event::events::{Cache, CacheOp, CacheResult, Event, Hardware, Software, WhichCache};
    use perf_event::{Builder, Counter, Group};
    use std::io;

    fn build(kind: impl Into<Event>, kernel: bool) -> io::Result<Counter> {
        let mut b = Builder::new().kind(kind);
        if kernel {
            b.include_kernel();
        }
        b.build()
    }

    fn describe(e: &io::Error, what: &str) -> String {
        match e.raw_os_error() {
            Some(libc::ENOENT) => format!("{what}: ENOENT (no hardware PMU: this CPU or VM exposes no perf 'cpu' event source)"),
            Some(libc::EACCES) | Some(libc::EPERM) => {
                format!("{what}: permission denied ({e}; needs root, CAP_PERFMON or a lower perf_event_paranoid)")
            }
            Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => format!("{what}: not supported ({e})"),
            _ => format!("{what}: {e}"),
        }
    }

    /// The hardware events of [`HW_EVENTS`], in that order.
    fn hw_kinds() -> [(Which, Event); 4] {
        [
            (Which::Cycles, Hardware::CPU_CYCLES.into()),
            (Which::Instructions, Hardware::INSTRUCTIONS.into()),
            (Which::CacheMisses, Hardware::CACHE_MISSES.into()),
            (Which::LlcMisses, LLC_READ_MISS.into()),
        ]
    }

    /// Probes hardware events and kernel-side software counting once.
    pub fn probe() -> Probe {
        let (pmu_available, pmu_reason) = match build(Hardware::INSTRUCTIONS, false) {
            Ok(_) => (true, None),
            Err(e) => (false, Some(describe(&e, "hardware instructions event"))),
        };
        let hw_events = if pmu_available {
            HW_EVENTS
                .iter()
                .zip(hw_kinds())
                .filter(|(_, (_, kind))| build(kind.clone(), false).is_ok())
                .map(|(name, _)| *name)
                .collect()
        } else {
            Vec::new()
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
            hw_events,
            ctx_switch_source,
            ctx_switch_reason,
        }
    }

    /// The hardware counter set of one thread (one perf-event group, the kernel's term):
    /// cycles, instructions, cache misses, LLC read misses.
    struct HwCounterSet {
        leader: Group,
        members: [Option<Counter>; 4],
    }

    /// The counters of one worker thread.
    pub struct ThreadCounters {
        ctx: Option<Counter>,
        migrations: Option<Counter>,
        task_clock: Option<Counter>,
        hw: Option<HwCounterSet>,
        /// How many counters the probe says should open (the hardware set counts its four).
        requested: u32,
        rusage_start: Option<u64>,
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

    fn read(c: &mut Option<Counter>) -> Option<Reading> {
        let r = c.as_mut()?.read_count_and_time().ok()?;
        Some(Reading {
            count: r.count,
            time_enabled: r.time_enabled,
            time_running: r.time_running,
        })
    }

    impl ThreadCounters {
        /// Opens the counters for the calling thread (disabled).
        pub fn open(probe: &Probe) -> Self {
            Self::open_with(probe, &|_| true)
        }

        /// [`open`](Self::open), where `allow(w) == false` makes opening `w` fail (tests).
        pub(super) fn open_with(probe: &Probe, allow: &dyn Fn(Which) -> bool) -> Self {
            let fail = || io::Error::from_raw_os_error(libc::EMFILE);
            let open = |w: Which, kind: Event, kernel: bool| {
                if allow(w) {
                    build(kind, kernel).ok()
                } else {
                    None
                }
            };
            let kernel = probe.ctx_switch_source == "perf-event";
            let mut requested = 1; // task clock
            let (ctx, migrations) = if kernel {
                requested += 2;
                (
                    open(Which::CtxSwitches, Software::CONTEXT_SWITCHES.into(), true),
                    open(Which::CpuMigrations, Software::CPU_MIGRATIONS.into(), true),
                )
            } else {
                (None, None)
            };
            let task_clock = open(Which::TaskClock, Software::TASK_CLOCK.into(), false);
            // Only the hardware events the probe found; one perf-event group for all of them.
            let wanted: Vec<bool> = HW_EVENTS
                .iter()
                .map(|n| probe.hw_events.contains(n))
                .collect();
            requested += wanted.iter().filter(|w| **w).count() as u32;
            let hw = if wanted.contains(&true) {
                let leader = if allow(Which::HwSet) {
                    Group::new()
                } else {
                    Err(fail())
                };
                leader.ok().map(|mut leader| {
                    // Members are read one by one (each read returns the member's count and the
                    // group's enabled/running times), so a member that failed to open leaves
                    // no hole to trip over in a PERF_FORMAT_GROUP read (perf-event 0.4's
                    // `Group::read` asserts on the size of the reply, which a failed member
                    // makes smaller than it expects).
                    let mut members: [Option<Counter>; 4] = Default::default();
                    for ((m, (w, kind)), want) in members.iter_mut().zip(hw_kinds()).zip(&wanted) {
                        if *want && allow(w) {
                            *m = Builder::new().group(&mut leader).kind(kind).build().ok();
                        }
                    }
                    HwCounterSet { leader, members }
                })
            } else {
                None
            };
            ThreadCounters {
                ctx,
                migrations,
                task_clock,
                hw,
                requested,
                rusage_start: None,
            }
        }

        /// Starts counting. A counter that fails to enable is dropped (it counts for no thread).
        pub fn enable(&mut self) {
            self.rusage_start = rusage_thread_ctx_switches();
            for c in [&mut self.ctx, &mut self.migrations, &mut self.task_clock] {
                if c.as_mut().is_some_and(|c| c.enable().is_err()) {
                    *c = None;
                }
            }
            if self.hw.as_mut().is_some_and(|s| s.leader.enable().is_err()) {
                self.hw = None;
            }
        }

        /// Stops counting and reads this thread's values.
        pub fn finish(mut self) -> CounterValues {
            for c in [&mut self.ctx, &mut self.migrations, &mut self.task_clock]
                .into_iter()
                .flatten()
            {
                let _ = c.disable();
            }
            if let Some(s) = self.hw.as_mut() {
                let _ = s.leader.disable();
            }
            let rusage = match (self.rusage_start, rusage_thread_ctx_switches()) {
                (Some(a), Some(b)) => Some(b.saturating_sub(a)),
                _ => None,
            };
            let ctx = read(&mut self.ctx).and_then(Reading::scaled);
            let migrations = read(&mut self.migrations).and_then(Reading::scaled);
            let task_clock = read(&mut self.task_clock).and_then(Reading::scaled);
            let (mut hw, mut hw_running) = ([None; 4], None);
            if let Some(g) = self.hw.as_mut() {
                for (out, m) in hw.iter_mut().zip(g.members.iter_mut()) {
                    if let Some(r) = read(m) {
                        *out = r.scaled();
                        if out.is_some() {
                            hw_running = Some(r.running_share().min(hw_running.unwrap_or(1.0)));
                        }
                    }
                }
            }
            let [cycles, instructions, cache_misses, llc_misses] = hw;
            let got = [ctx, migrations, task_clock]
                .iter()
                .chain(hw.iter())
                .filter(|v| v.is_some())
                .count() as u32;
            CounterValues {
                threads: 1,
                complete_threads: u32::from(got == self.requested && rusage.is_some()),
                ctx_switches_perf: Counted::one(ctx),
                ctx_switches_rusage: Counted::one(rusage),
                cpu_migrations: Counted::one(migrations),
                task_clock_ns: Counted::one(task_clock),
                cache_misses: Counted::one(cache_misses),
                llc_misses: Counted::one(llc_misses),
                cycles: Counted::one(cycles),
                instructions: Counted::one(instructions),
                hw_running,
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
            hw_events: Vec::new(),
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
        /// One thread, nothing counted.
        pub fn finish(self) -> CounterValues {
            CounterValues {
                threads: 1,
                complete_threads: 1,
                ..CounterValues::default()
            }
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
    fn usage_differences_saturate_and_sum() {
        let ms = std::time::Duration::from_millis;
        let later = Usage {
            voluntary_switches: 7,
            involuntary_switches: 3,
            user: ms(5),
            system: ms(2),
        };
        let earlier = Usage {
            voluntary_switches: 2,
            involuntary_switches: 4,
            user: ms(1),
            system: ms(3),
        };
        let d = later.since(earlier);
        assert_eq!((d.voluntary_switches, d.involuntary_switches), (5, 0));
        assert_eq!((d.user, d.system), (ms(4), ms(0)));
        assert_eq!(d.switches(), 5);
    }

    /// A process that sleeps blocks: its voluntary switches grow, and its counters never fall.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_process_usage_counts_a_sleep_as_voluntary() {
        let before = rusage_process().expect("getrusage(RUSAGE_SELF)");
        sleep_a_little();
        let after = rusage_process().expect("getrusage(RUSAGE_SELF)");
        assert!(
            after.voluntary_switches > before.voluntary_switches,
            "{before:?} -> {after:?}"
        );
        assert!(after.user >= before.user && after.system >= before.system);
        assert!(rusage_process_ctx_switches().is_some());
    }

    fn sleep_a_little() {
        for _ in 0..20 {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }

    #[test]
    fn counts_context_switches_of_a_sleeping_thread() {
        let p = probe();
        if !p.pmu_available {
            assert!(p.pmu_reason.is_some());
        }
        let mut c = ThreadCounters::open(&p);
        c.enable();
        sleep_a_little();
        let v = c.finish();
        assert_eq!(v.threads, 1);
        if cfg!(target_os = "linux") {
            let (n, src) = v.ctx_switches();
            assert!(n.unwrap() >= 10, "{v:?} via {src:?}");
            assert_eq!(src.name(), p.ctx_switch_source);
            // Software events are never multiplexed: every worker's counters opened here.
            assert_eq!(v.complete_threads, 1, "{v:?}");
            assert!(v.total(v.task_clock_ns).is_some());
        }
    }

    #[test]
    fn scaling_for_multiplexing() {
        let r = |count, time_enabled, time_running| Reading {
            count,
            time_enabled,
            time_running,
        };
        // Counted the whole time: as is.
        assert_eq!(r(1000, 50, 50).scaled(), Some(1000));
        assert_eq!(r(1000, 50, 50).running_share(), 1.0);
        // On the PMU a quarter of the time: four times the count, share 0.25.
        assert_eq!(r(1000, 400, 100).scaled(), Some(4000));
        assert_eq!(r(1000, 400, 100).running_share(), 0.25);
        // 7 × 3 / 2, truncated.
        assert_eq!(r(7, 3, 2).scaled(), Some(10));
        // Enabled but never on the PMU: no estimate at all.
        assert_eq!(r(0, 400, 0).scaled(), None);
        // Never enabled (a zero-length window): nothing happened.
        assert_eq!(r(0, 0, 0).scaled(), Some(0));
        // No overflow in the product, clamped to u64.
        assert_eq!(r(u64::MAX, 10, 1).scaled(), Some(u64::MAX));
        assert_eq!(r(u64::MAX / 2, 2, 1).scaled(), Some(u64::MAX - 1));
    }

    fn thread(
        ctx: Option<u64>,
        rusage: Option<u64>,
        tc: Option<u64>,
        hw: Option<(u64, f64)>,
    ) -> CounterValues {
        let h = hw.map(|(v, _)| v);
        CounterValues {
            threads: 1,
            complete_threads: u32::from(
                ctx.is_some() && rusage.is_some() && tc.is_some() && h.is_some(),
            ),
            ctx_switches_perf: Counted::one(ctx),
            ctx_switches_rusage: Counted::one(rusage),
            cpu_migrations: Counted::one(ctx.map(|_| 1)),
            task_clock_ns: Counted::one(tc),
            cache_misses: Counted::one(h),
            llc_misses: Counted::one(h),
            cycles: Counted::one(h),
            instructions: Counted::one(h),
            hw_running: hw.map(|(_, s)| s),
        }
    }

    fn sum(ts: &[CounterValues]) -> CounterValues {
        ts.iter().fold(CounterValues::default(), |a, b| a + *b)
    }

    #[test]
    fn complete_sums_and_one_source() {
        let all = sum(&[
            thread(Some(10), Some(11), Some(500), Some((100, 1.0))),
            thread(Some(20), Some(19), Some(700), Some((300, 0.5))),
        ]);
        assert_eq!((all.threads, all.complete_threads), (2, 2));
        assert_eq!(all.ctx_switches(), (Some(30), CtxSource::PerfEvent));
        assert_eq!(all.total(all.task_clock_ns), Some(1200));
        assert_eq!(all.total(all.cycles), Some(400));
        assert_eq!(all.hw_running_share(), Some(0.5));
    }

    #[test]
    fn partial_sums_are_refused_and_sources_never_mix() {
        // The second thread ran out of file descriptors: no perf counters at all.
        let t = sum(&[
            thread(Some(10), Some(11), Some(500), Some((100, 1.0))),
            thread(None, Some(19), None, None),
        ]);
        assert_eq!((t.threads, t.complete_threads), (2, 1));
        // Not 500 ns of task clock for two threads: empty.
        assert_eq!(t.total(t.task_clock_ns), None);
        assert_eq!(t.total(t.cpu_migrations), None);
        assert_eq!(t.total(t.cycles), None);
        assert_eq!(t.hw_running_share(), None);
        // Context switches: getrusage for both threads (11 + 19), never 10 (perf) + 19 (rusage).
        assert_eq!(t.ctx_switches(), (Some(30), CtxSource::Getrusage));
        // If getrusage failed somewhere too, there is no figure.
        let none = sum(&[
            thread(Some(1), None, Some(1), None),
            thread(None, Some(2), None, None),
        ]);
        assert_eq!(none.ctx_switches(), (None, CtxSource::None));
        // The empty sum covers nothing.
        assert_eq!(CounterValues::default().total(Counted::default()), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_failed_open_leaves_the_thread_incomplete() {
        let p = probe();
        let workers: Vec<CounterValues> = (0..3)
            .map(|i| {
                std::thread::spawn(move || {
                    let p = probe();
                    // Worker 2 cannot open its task clock or its context-switch counter.
                    let mut c = ThreadCounters::open_with(&p, &|w| {
                        i != 2 || !matches!(w, Which::TaskClock | Which::CtxSwitches)
                    });
                    c.enable();
                    sleep_a_little();
                    c.finish()
                })
            })
            .map(|h| h.join().unwrap())
            .collect();
        let t = sum(&workers);
        assert_eq!((t.threads, t.complete_threads), (3, 2), "{t:?}");
        assert_eq!(t.task_clock_ns.threads, 2);
        assert_eq!(
            t.total(t.task_clock_ns),
            None,
            "partial task clock must be empty"
        );
        let (n, src) = t.ctx_switches();
        assert!(n.unwrap() >= 30, "{t:?}");
        assert_eq!(
            src,
            CtxSource::Getrusage,
            "one worker lacked the perf counter"
        );
        if p.ctx_switch_source == "perf-event" {
            // Migrations did open everywhere.
            assert!(t.total(t.cpu_migrations).is_some());
        }
    }
}
