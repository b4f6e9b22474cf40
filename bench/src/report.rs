//! Output files: `results.csv`, `points.csv`, `waits.csv` and their rows; `summary.md`, the SVGs
//! and the stdout tables are drawn from [`PointRow`]s in the `figures` module.

use lwharness::locks::LockCounters;
use lwharness::registry::LockKind;
use lwharness::runner::{self, TrialResult};
use lwharness::workload::Workload;
use serde::Serialize;
use std::collections::BTreeMap;

/// The proc-array layout and snapshot strategy of a point; empty where they do not apply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LayoutSnapshot {
    /// `--layout` name, or empty.
    pub layout: &'static str,
    /// `--snapshot` name, or empty.
    pub snapshot: &'static str,
}

impl LayoutSnapshot {
    /// `layout/snapshot`, leaving out what does not apply.
    pub fn label(&self) -> String {
        [self.layout, self.snapshot]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join("/")
    }
}

/// One row of `results.csv`: one trial of one point. Counts are totals for the trial; empty
/// cells mean "not measured here" (no PMU, or a lock without that counter, or no `stats`).
#[derive(Debug, Serialize)]
pub struct ResultRow {
    /// Workload name.
    pub workload: &'static str,
    /// Lock name.
    pub lock: &'static str,
    /// Proc-array layout (empty where it does not apply).
    pub layout: &'static str,
    /// Snapshot strategy (empty where it does not apply).
    pub snapshot: &'static str,
    /// Worker threads.
    pub threads: usize,
    /// Proc-array size.
    pub procs: usize,
    /// Trial number (1-based).
    pub trial: u32,
    /// The measurement window, s: from the start gate to the stop signal. `ops`, `txns` and
    /// the rates count the work done in it.
    pub duration_s: f64,
    /// The trial length asked for, s (the window is longer when the stop signal came late).
    pub requested_s: f64,
    /// From the stop signal until the last worker stopped, s (not part of any rate).
    pub tail_s: f64,
    /// Lock operations in the window.
    pub ops: u64,
    /// Transactions in the window.
    pub txns: u64,
    /// Lock operations including the tail.
    pub ops_total: u64,
    /// Lock operations per second.
    pub ops_per_sec: f64,
    /// Transactions per second.
    pub txn_per_sec: f64,
    /// Jain's fairness index over per-thread transactions.
    pub jain: f64,
    /// Context switches per worker (`ctx_switches` / threads, as Linux counts them on both
    /// engines): the scheduling rounds behind the Jain index. With more threads than cores and
    /// fewer than [`FAIR_MIN_SLICES`] per thread, Jain measures slice luck rather than the lock
    /// (see `fair_short`).
    pub cs_per_thread: f64,
    /// Whether this trial was too short for its Jain index to mean anything (more threads than
    /// cores and fewer than [`FAIR_MIN_SLICES`] context switches per thread).
    pub fair_short: bool,
    /// Sampled operations timed (both modes).
    pub timed_ops: u64,
    /// Shared waits, ns.
    pub shared_wait_p50_ns: Option<u64>,
    /// Shared waits, ns.
    pub shared_wait_p99_ns: Option<u64>,
    /// Shared waits, ns.
    pub shared_wait_p999_ns: Option<u64>,
    /// Shared waits, ns.
    pub shared_wait_max_ns: Option<u64>,
    /// Exclusive (or group) waits, ns.
    pub excl_wait_p50_ns: Option<u64>,
    /// Exclusive (or group) waits, ns.
    pub excl_wait_p99_ns: Option<u64>,
    /// Exclusive (or group) waits, ns.
    pub excl_wait_p999_ns: Option<u64>,
    /// Exclusive (or group) waits, ns.
    pub excl_wait_max_ns: Option<u64>,
    /// CLOG-lock (XactSLRU) exclusive or group waits, ns (pgbench-write takes both locks).
    pub clog_wait_p50_ns: Option<u64>,
    /// CLOG-lock waits, ns.
    pub clog_wait_p99_ns: Option<u64>,
    /// CLOG-lock waits, ns.
    pub clog_wait_p999_ns: Option<u64>,
    /// CLOG-lock waits, ns.
    pub clog_wait_max_ns: Option<u64>,
    /// The cost of an empty timed interval (two back-to-back clock reads), ns: a wait
    /// percentile near it is timer overhead, not waiting.
    pub timer_floor_ns: f64,
    /// Worker threads whose perf counters all opened. Every counter column below is a total
    /// over all `threads` workers or empty: a counter that some worker could not open (out of
    /// file descriptors, say) is never summed over the others.
    pub counters_threads: u32,
    /// Context switches of the workers (all from one source, `ctx_switch_source`): every time
    /// a worker left its core, voluntarily (it blocked) or not (preempted, or a yield that ran
    /// another thread), as Linux's `nvcsw + nivcsw` count them.
    pub ctx_switches: Option<u64>,
    /// `perf-event` (kernel counting in every worker), `getrusage` (every worker's
    /// `RUSAGE_THREAD`, when perf events were denied or missing in some worker); never mixed.
    /// On the simulator [`SIM_CTX_SWITCH_SOURCE`] (`lwsim-linux`): the simulator's count of the
    /// same events. Files written before that count existed say `lwsim` here, and their
    /// `ctx_switches` are the simulator's run-queue dispatches (now `sim_dispatches`).
    pub ctx_switch_source: &'static str,
    /// CPU migrations of the workers.
    pub cpu_migrations: Option<u64>,
    /// Workers' task clock, ms.
    pub task_clock_ms: Option<f64>,
    /// Hardware cache misses (scaled for multiplexing, see `hw_counted_pct`).
    pub cache_misses: Option<u64>,
    /// LLC read misses (scaled).
    pub llc_misses: Option<u64>,
    /// Cycles (scaled).
    pub cycles: Option<u64>,
    /// Instructions (scaled).
    pub instructions: Option<u64>,
    /// The lowest share of its enabled time that a worker's hardware counter group (cycles,
    /// instructions, cache and LLC misses) was on the PMU, percent: 100 = counted throughout;
    /// below 100 the kernel multiplexed the PMU and the four counts are estimates scaled by
    /// enabled / running, as `perf stat` does. Empty without hardware counts.
    pub hw_counted_pct: Option<f64>,
    /// Semaphore sleeps (`stats`).
    pub blocks: Option<u64>,
    /// Spin-delay sleeps (`stats`).
    pub spin_delays: Option<u64>,
    /// Exclusive acquisitions (`stats`, or the group lock's count).
    pub excl_acquires: Option<u64>,
    /// Groups run by a group lock.
    pub groups: Option<u64>,
    /// Mean group size.
    pub mean_group_size: Option<f64>,
    /// Largest group.
    pub max_group_size: Option<u64>,
    /// Wait-event samples taken of the workers.
    pub wait_samples: u64,
    /// Sampling passes of the wait-event sampler (0 with `--sample-interval off`).
    pub sampler_passes: u64,
    /// The sampler's time spent sampling, as a percent of one core over the window (its own
    /// overhead; it competes with the workers for the cores).
    pub sampler_cpu_pct: f64,
    /// The shared `spins_per_delay` estimate after the trial (reset to the default at the start
    /// of every point).
    pub spins_per_delay: u32,
    /// Percent of snapshots that took the strategy's fast path (reused, validated, copied).
    pub snapshot_fast_pct: Option<f64>,
    /// Whether the point this trial belongs to is bimodal.
    pub bimodal: bool,
    /// `real` or `sim`.
    pub engine: &'static str,
    /// The simulated profile's name, or `host` on the real engine.
    pub platform: String,
    /// Cores the workers ran on: the host's, or the simulated ones in use.
    pub cores: usize,
    /// The trial's simulator seed (empty on the real engine).
    pub sim_seed: Option<u64>,
    /// Simulated memory operations (atomics and touched lines) per lock operation.
    pub sim_mem_ops_per_op: Option<f64>,
    /// Simulated line transfers of every kind per lock operation (the simulator's stand-in for
    /// `cache_misses`, which stays the PMU's).
    pub sim_transfers_per_op: Option<f64>,
    /// Loads of a line Modified at another core, per lock operation.
    pub sim_load_modified_per_op: Option<f64>,
    /// Loads of a line Shared by other cores, per lock operation.
    pub sim_load_shared_per_op: Option<f64>,
    /// Stores/RMWs taking a line Modified elsewhere (RFO), per lock operation.
    pub sim_rfo_per_op: Option<f64>,
    /// Stores/RMWs invalidating sharers, per lock operation.
    pub sim_invalidate_per_op: Option<f64>,
    /// First touches of a line, per lock operation.
    pub sim_fill_per_op: Option<f64>,
    /// Time requests waited for a busy line, ns per lock operation.
    pub sim_line_wait_ns_per_op: Option<f64>,
    /// Futex waits that slept, in the window.
    pub sim_futex_sleeps: Option<u64>,
    /// Threads woken by FUTEX_WAKE, in the window.
    pub sim_futex_wakes: Option<u64>,
    /// Lock holders or others preempted at the end of their slice, in the window.
    pub sim_preemptions: Option<u64>,
    /// Timed sleeps (s_lock back-off), in the window.
    pub sim_sleeps: Option<u64>,
    /// Voluntary context switches (a worker blocked and left its core), in the window.
    pub sim_voluntary_switches: Option<u64>,
    /// Involuntary context switches (preempted, or a yield that ran another thread), in the
    /// window; with `sim_voluntary_switches` they sum to `ctx_switches`.
    pub sim_involuntary_switches: Option<u64>,
    /// Dispatches of a queued worker onto a core (each pays the profile's `context_switch`),
    /// in the window: the simulator's `ctx_switches` in files whose `ctx_switch_source` is
    /// `lwsim`.
    pub sim_dispatches: Option<u64>,
    /// ProcArrayLock's exclusive acquisitions alone (`excl_acquires` counts every lock).
    pub proc_array_excl_acquires: Option<u64>,
    /// Groups run by ProcArrayLock alone (group clear).
    pub proc_array_groups: Option<u64>,
    /// The CLOG lock's (XactSLRU's) exclusive acquisitions alone.
    pub clog_excl_acquires: Option<u64>,
    /// Groups run by the CLOG lock alone (the CLOG group update).
    pub clog_groups: Option<u64>,
    /// The workers' CPU time in the window over the cores' time (`cores × duration_s`),
    /// percent: real, their thread CPU clocks (user + system); sim, the simulated cores' busy
    /// time (a thread on the core, spinning included; idle = no thread on it). Empty where a
    /// CPU clock could not be read.
    pub cpu_busy_pct: Option<f64>,
    /// The workers' CPU seconds per transaction in the window (same source); seed 000's
    /// "CPU per transaction". Empty without CPU time or transactions.
    pub cpu_s_per_txn: Option<f64>,
    /// The system (kernel) share of the workers' CPU time, percent (real engine,
    /// `getrusage(RUSAGE_THREAD)` from the gate to each worker's exit; empty on the simulated
    /// engine).
    pub cpu_sys_pct: Option<f64>,
}

/// Rounds to `sig` significant digits (CPU seconds per transaction span nanoseconds to
/// milliseconds).
fn sig_digits(x: f64, sig: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(sig - 1 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

/// A percentage to one decimal.
fn pct1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// `n / ops` to three decimals, `None` without a simulation.
fn per_op(r: &TrialResult, f: impl Fn(&lwharness::engine::SimCounters) -> u64) -> Option<f64> {
    r.sim
        .as_ref()
        .map(|s| (f(&s.counters) as f64 / r.ops.max(1) as f64 * 1000.0).round() / 1000.0)
}

/// The `engine`, `platform` and `cores` columns of a trial.
pub fn engine_columns(r: &TrialResult) -> (&'static str, String, usize) {
    match &r.sim {
        Some(s) => ("sim", s.platform.clone(), s.cores),
        None => ("real", "host".to_string(), r.cores()),
    }
}

/// Scheduler slices (context switches) per thread below which, with more threads than cores,
/// Jain's index is dominated by time-slice luck: with n slices per thread the per-thread work
/// varies by about 1/√n, so noise alone pulls Jain down to about n/(n+1) (0.95 at 20).
pub const FAIR_MIN_SLICES: f64 = 20.0;

/// `ctx_switch_source` of a simulated trial: context switches counted as Linux counts them
/// (`nvcsw + nivcsw`). Earlier files say `lwsim`, whose count was the run-queue dispatches.
pub const SIM_CTX_SWITCH_SOURCE: &str = "lwsim-linux";

/// What a simulated run's `ctx_switches` counts, as `meta.json` states it (`sim.ctx_switches`;
/// a file without the key counted run-queue dispatches).
pub const SIM_CTX_SWITCHES_MEANING: &str =
    "as Linux counts them (nvcsw + nivcsw): every time a worker left its core, blocking \
     (voluntary) or still runnable (involuntary); run-queue dispatches are sim_dispatches";

fn quantile(h: &hdrhistogram::Histogram<u64>, q: f64) -> Option<u64> {
    (!h.is_empty()).then(|| h.value_at_quantile(q))
}

impl ResultRow {
    /// The row of `trial` (1-based) of a point.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        workload: Workload,
        lock: LockKind,
        layout_snapshot: LayoutSnapshot,
        threads: usize,
        procs: usize,
        trial: u32,
        r: &TrialResult,
        bimodal: bool,
    ) -> Self {
        let (s, x, c) = (&r.shared_wait, &r.excl_wait, &r.clog_wait);
        let cores = r.cores();
        let pc = &r.counters;
        let (ctx_switches, ctx_source) = match &r.sim {
            Some(_) => (r.ctx_switches(), SIM_CTX_SWITCH_SOURCE),
            None => {
                let (n, src) = pc.ctx_switches();
                (n, src.name())
            }
        };
        let (engine, platform, _) = engine_columns(r);
        let sim = r.sim.as_ref().map(|s| s.counters);
        let cs_per_thread = ctx_switches.unwrap_or(0) as f64 / threads.max(1) as f64;
        let window = r.elapsed.as_secs_f64();
        ResultRow {
            workload: workload.name(),
            lock: lock.name(),
            layout: layout_snapshot.layout,
            snapshot: layout_snapshot.snapshot,
            threads,
            procs,
            trial,
            duration_s: window,
            requested_s: r.requested.as_secs_f64(),
            tail_s: r.tail.as_secs_f64(),
            ops: r.ops,
            txns: r.txns,
            ops_total: r.ops_total,
            ops_per_sec: r.ops_per_sec().round(),
            txn_per_sec: r.txn_per_sec().round(),
            jain: (runner::jain(&r.per_thread) * 10_000.0).round() / 10_000.0,
            cs_per_thread: (cs_per_thread * 10.0).round() / 10.0,
            fair_short: threads > cores && cs_per_thread < FAIR_MIN_SLICES,
            timed_ops: s.len() + x.len() + c.len(),
            shared_wait_p50_ns: quantile(s, 0.5),
            shared_wait_p99_ns: quantile(s, 0.99),
            shared_wait_p999_ns: quantile(s, 0.999),
            shared_wait_max_ns: (!s.is_empty()).then(|| s.max()),
            excl_wait_p50_ns: quantile(x, 0.5),
            excl_wait_p99_ns: quantile(x, 0.99),
            excl_wait_p999_ns: quantile(x, 0.999),
            excl_wait_max_ns: (!x.is_empty()).then(|| x.max()),
            clog_wait_p50_ns: quantile(c, 0.5),
            clog_wait_p99_ns: quantile(c, 0.99),
            clog_wait_p999_ns: quantile(c, 0.999),
            clog_wait_max_ns: (!c.is_empty()).then(|| c.max()),
            timer_floor_ns: if r.sim.is_some() {
                0.0
            } else {
                (lwharness::clock::floor_ns() * 10.0).round() / 10.0
            },
            counters_threads: r.counters.complete_threads,
            ctx_switches,
            ctx_switch_source: ctx_source,
            cpu_migrations: pc.total(pc.cpu_migrations),
            task_clock_ms: pc
                .total(pc.task_clock_ns)
                .map(|n| (n as f64 / 1e3).round() / 1e3),
            cache_misses: pc.total(pc.cache_misses),
            llc_misses: pc.total(pc.llc_misses),
            cycles: pc.total(pc.cycles),
            instructions: pc.total(pc.instructions),
            hw_counted_pct: pc.hw_running_share().map(|s| (s * 1000.0).round() / 10.0),
            blocks: r.lock.blocks,
            spin_delays: r.lock.spin_delays,
            excl_acquires: r.lock.excl_acquires,
            groups: r.lock.groups,
            mean_group_size: r.lock.mean_group_size.map(|m| (m * 100.0).round() / 100.0),
            max_group_size: r.lock.max_group_size,
            wait_samples: r.waits.values().sum(),
            sampler_passes: r.sampler.passes,
            sampler_cpu_pct: if window > 0.0 {
                (r.sampler.busy.as_secs_f64() / window * 1000.0).round() / 10.0
            } else {
                0.0
            },
            spins_per_delay: r.spins_per_delay,
            snapshot_fast_pct: r.snapshot_fast_pct(),
            bimodal,
            engine,
            platform,
            cores,
            sim_seed: r.sim.as_ref().map(|s| s.seed),
            sim_mem_ops_per_op: per_op(r, |c| c.mem_ops),
            sim_transfers_per_op: per_op(r, |c| c.transfers()),
            sim_load_modified_per_op: per_op(r, |c| c.load_from_modified),
            sim_load_shared_per_op: per_op(r, |c| c.load_from_shared),
            sim_rfo_per_op: per_op(r, |c| c.rfo_from_modified),
            sim_invalidate_per_op: per_op(r, |c| c.invalidations),
            sim_fill_per_op: per_op(r, |c| c.fills),
            sim_line_wait_ns_per_op: per_op(r, |c| c.line_wait_ns),
            sim_futex_sleeps: sim.map(|c| c.futex_sleeps),
            sim_futex_wakes: sim.map(|c| c.futex_wakes),
            sim_preemptions: sim.map(|c| c.preemptions),
            sim_sleeps: sim.map(|c| c.sleeps),
            sim_voluntary_switches: sim.map(|c| c.voluntary_switches),
            sim_involuntary_switches: sim.map(|c| c.involuntary_switches),
            sim_dispatches: sim.map(|c| c.dispatches),
            proc_array_excl_acquires: r.proc_array_lock.excl_acquires,
            proc_array_groups: r.proc_array_lock.groups,
            clog_excl_acquires: r.clog_lock.excl_acquires,
            clog_groups: r.clog_lock.groups,
            cpu_busy_pct: r.cpu_busy_pct().map(pct1),
            cpu_s_per_txn: r.cpu_s_per_txn().map(|x| sig_digits(x, 4)),
            cpu_sys_pct: r.cpu.and_then(|c| c.sys_share).map(|s| pct1(s * 100.0)),
        }
    }
}

/// One row of `waits.csv`: how often the sampler saw the workers of one trial in one state.
#[derive(Debug, Serialize)]
pub struct WaitRow {
    /// Workload name.
    pub workload: &'static str,
    /// Lock name.
    pub lock: &'static str,
    /// Proc-array layout (empty where it does not apply).
    pub layout: &'static str,
    /// Snapshot strategy (empty where it does not apply).
    pub snapshot: &'static str,
    /// Worker threads.
    pub threads: usize,
    /// Trial number.
    pub trial: u32,
    /// `LWLock`, `Spin`, `IPC`, or empty for a running thread.
    pub wait_event_type: String,
    /// The tranche or IPC event, or `(running)`.
    pub wait_event: String,
    /// Samples.
    pub samples: u64,
    /// `real` or `sim`.
    pub engine: &'static str,
    /// The simulated profile, or `host`.
    pub platform: String,
    /// Cores the workers ran on.
    pub cores: usize,
}

impl WaitRow {
    /// The rows of one trial.
    pub fn rows(
        workload: Workload,
        lock: LockKind,
        layout_snapshot: LayoutSnapshot,
        threads: usize,
        trial: u32,
        r: &TrialResult,
    ) -> Vec<WaitRow> {
        let (engine, platform, cores) = engine_columns(r);
        r.waits
            .iter()
            .map(|(k, &n)| {
                let (t, e) = match k.split_once(':') {
                    Some((t, e)) => (t.to_string(), e.to_string()),
                    None => (String::new(), k.clone()),
                };
                WaitRow {
                    workload: workload.name(),
                    lock: lock.name(),
                    layout: layout_snapshot.layout,
                    snapshot: layout_snapshot.snapshot,
                    threads,
                    trial,
                    wait_event_type: t,
                    wait_event: e,
                    samples: n,
                    engine,
                    platform: platform.clone(),
                    cores,
                }
            })
            .collect()
    }
}

/// One point (workload × lock × threads) over its trials: a row of `points.csv`.
///
/// Every figure is computed from the per-trial values exactly as `results.csv` writes them
/// (rates rounded to whole numbers), so a median or a min/max here, in `summary.md`, on stdout
/// and in the SVGs is the one a reader recomputes from `results.csv`.
#[derive(Clone, Debug, Serialize)]
pub struct PointRow {
    /// Workload name.
    pub workload: &'static str,
    /// Lock name.
    pub lock: &'static str,
    /// Proc-array layout (empty where it does not apply).
    pub layout: &'static str,
    /// Snapshot strategy (empty where it does not apply).
    pub snapshot: &'static str,
    /// Worker threads.
    pub threads: usize,
    /// Trials.
    pub trials: usize,
    /// Median transactions/s (TPS). For `null` and `null-x` a transaction is one lock
    /// operation, so this equals the lock operations/s.
    pub median_txn_per_sec: f64,
    /// Slowest trial's TPS.
    pub min_txn_per_sec: f64,
    /// Fastest trial's TPS.
    pub max_txn_per_sec: f64,
    /// Average latency per transaction at the median TPS, µs: threads / TPS (pgbench's
    /// "latency average" without think time).
    pub latency_avg_us: Option<f64>,
    /// The same at the fastest trial (threads / max TPS).
    pub min_latency_us: Option<f64>,
    /// The same at the slowest trial (threads / min TPS).
    pub max_latency_us: Option<f64>,
    /// Median lock operations/s.
    pub median_ops_per_sec: f64,
    /// Slowest trial's lock operations/s.
    pub min_ops_per_sec: f64,
    /// Fastest trial's lock operations/s.
    pub max_ops_per_sec: f64,
    /// Median Jain index.
    pub median_jain: f64,
    /// Any trial below half the median (lock operations/s).
    pub bimodal: bool,
    /// Median over the trials of each trial's shared-wait p50, ns (trials that timed none
    /// left out).
    pub shared_wait_p50_ns: Option<f64>,
    /// Median of the trials' shared-wait p99, ns.
    pub shared_wait_p99_ns: Option<f64>,
    /// Median of the trials' exclusive (or group) wait p50, ns (CLOG lock excluded).
    pub excl_wait_p50_ns: Option<f64>,
    /// Median of the trials' exclusive-wait p99, ns.
    pub excl_wait_p99_ns: Option<f64>,
    /// Median of the trials' CLOG-lock wait p50, ns.
    pub clog_wait_p50_ns: Option<f64>,
    /// Median of the trials' CLOG-lock wait p99, ns.
    pub clog_wait_p99_ns: Option<f64>,
    /// Trials whose perf counters covered every worker (`counters_threads == threads`).
    pub counters_complete_trials: usize,
    /// Median semaphore sleeps per trial (`stats`).
    pub blocks: Option<f64>,
    /// Median spin-delay sleeps per trial (`stats`).
    pub spin_delays: Option<f64>,
    /// Median exclusive acquisitions per trial (`stats`, or the group lock's count).
    pub excl_acquires: Option<f64>,
    /// Median groups per trial (group locks, `stats`).
    pub groups: Option<f64>,
    /// Median of the trials' mean group size.
    pub mean_group_size: Option<f64>,
    /// Largest group of any trial.
    pub max_group_size: Option<u64>,
    /// Top wait event over all trials (by samples), `(running)` excluded.
    pub top_wait_event: String,
    /// Its share of the workers' samples.
    pub top_wait_share: f64,
    /// Median percent of snapshots that took the strategy's fast path.
    pub snapshot_fast_pct: Option<f64>,
    /// Median context switches per worker (scheduler slices behind the Jain index).
    pub median_cs_per_thread: f64,
    /// Whether any trial was too short for Jain to mean anything (see `ResultRow::fair_short`).
    pub fair_short: bool,
    /// Whether the lock publishes wait events (the project's locks do; std and parking_lot do
    /// not, so "no wait sampled" means "not instrumented" for them).
    pub instrumented: bool,
    /// Median of the sampler's own CPU time over the window, percent of one core.
    pub sampler_cpu_pct: f64,
    /// `real` or `sim`.
    pub engine: &'static str,
    /// The simulated profile, or `host`.
    pub platform: String,
    /// Cores the workers ran on.
    pub cores: usize,
    /// Median exclusive acquisitions per lock operation (`stats`, or the group lock's count):
    /// below 1 where a group lock served several operations with one acquisition.
    pub excl_acquires_per_op: Option<f64>,
    /// Median simulated line transfers per lock operation.
    pub sim_transfers_per_op: Option<f64>,
    /// Median simulated line-wait time per lock operation, ns.
    pub sim_line_wait_ns_per_op: Option<f64>,
    /// Median simulated futex sleeps per lock operation.
    pub sim_futex_sleeps_per_op: Option<f64>,
    /// Median simulated preemptions per trial window.
    pub sim_preemptions: Option<f64>,
    /// Median of ProcArrayLock's exclusive acquisitions per transaction, alone.
    pub proc_array_excl_per_txn: Option<f64>,
    /// Median of the CLOG lock's exclusive acquisitions per transaction, alone.
    pub clog_excl_per_txn: Option<f64>,
    /// Median of the trials' `cpu_busy_pct` (see [`ResultRow::cpu_busy_pct`]).
    pub cpu_busy_pct: Option<f64>,
    /// Median of the trials' `cpu_s_per_txn`.
    pub cpu_s_per_txn: Option<f64>,
    /// The workers' wait-event samples summed over the trials, `(running)` included (the
    /// sensitivity tables' wait columns; `waits.csv` has them per trial).
    #[serde(skip)]
    pub waits: BTreeMap<String, u64>,
}

/// The median of the values present, `None` when there are none.
fn median_of(xs: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = xs.flatten().collect();
    (!v.is_empty()).then(|| runner::median(&v))
}

fn min_max(xs: &[f64]) -> (f64, f64) {
    (
        xs.iter().copied().fold(f64::INFINITY, f64::min),
        xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    )
}

/// `threads / tps` in µs, to 0.1 ns; 0 for a point that did no transaction.
/// threads / TPS in µs; `None` at 0 TPS (no transaction finished in the window: the latency is
/// unbounded, not zero).
fn latency_us(threads: usize, tps: f64) -> Option<f64> {
    (tps > 0.0).then(|| (threads as f64 / tps * 1e10).round() / 1e4)
}

impl PointRow {
    /// Summarises the trials of one point.
    pub fn new(
        workload: Workload,
        lock: LockKind,
        layout_snapshot: LayoutSnapshot,
        threads: usize,
        trials: &[TrialResult],
    ) -> Self {
        // The per-trial rates exactly as results.csv has them.
        let ops: Vec<f64> = trials.iter().map(|t| t.ops_per_sec().round()).collect();
        let txn: Vec<f64> = trials.iter().map(|t| t.txn_per_sec().round()).collect();
        let jain: Vec<f64> = trials.iter().map(|t| runner::jain(&t.per_thread)).collect();
        let cores = trials.first().map_or_else(
            || std::thread::available_parallelism().map_or(1, |n| n.get()),
            |t| t.cores(),
        );
        let cs: Vec<f64> = trials
            .iter()
            .map(|t| t.ctx_switches().unwrap_or(0) as f64 / threads.max(1) as f64)
            .collect();
        let (engine, platform, _) =
            trials
                .first()
                .map(engine_columns)
                .unwrap_or(("real", "host".to_string(), cores));
        let sim_per_op = |f: fn(&lwharness::engine::SimCounters) -> u64, scale: f64| {
            median_of(trials.iter().map(|t| {
                t.sim
                    .as_ref()
                    .map(|s| f(&s.counters) as f64 / t.ops.max(1) as f64 * scale)
            }))
            .map(|m| (m * 1000.0).round() / 1000.0)
        };
        let sampler: Vec<f64> = trials
            .iter()
            .map(|t| {
                let w = t.elapsed.as_secs_f64();
                if w > 0.0 {
                    t.sampler.busy.as_secs_f64() / w * 100.0
                } else {
                    0.0
                }
            })
            .collect();
        let mut waits: BTreeMap<String, u64> = BTreeMap::new();
        for t in trials {
            for (k, v) in &t.waits {
                *waits.entry(k.clone()).or_default() += v;
            }
        }
        let total: u64 = waits.values().sum();
        let top = waits
            .iter()
            .filter(|(k, _)| *k != runner::RUNNING)
            .max_by_key(|(_, v)| **v);
        let top_wait_event = top.map(|(k, _)| k.to_string()).unwrap_or_default();
        let top_wait_share = match top {
            Some((_, v)) if total > 0 => (*v as f64 / total as f64 * 1e3).round() / 1e3,
            _ => 0.0,
        };
        let fast: Vec<f64> = trials
            .iter()
            .filter_map(|t| t.snapshot_fast_pct())
            .collect();
        let q = |h: fn(&TrialResult) -> &hdrhistogram::Histogram<u64>, p: f64| {
            median_of(trials.iter().map(|t| quantile(h(t), p).map(|v| v as f64)))
                .map(|m| (m * 10.0).round() / 10.0)
        };
        let stat = |f: fn(&LockCounters) -> Option<u64>| {
            median_of(trials.iter().map(|t| f(&t.lock).map(|v| v as f64)))
        };
        let per_txn = |f: fn(&TrialResult) -> Option<u64>| {
            median_of(
                trials
                    .iter()
                    .map(|t| f(t).map(|n| n as f64 / t.txns.max(1) as f64)),
            )
            .map(|m| (m * 10_000.0).round() / 10_000.0)
        };
        let (min_txn, max_txn) = min_max(&txn);
        let (min_ops, max_ops) = min_max(&ops);
        let median_txn = runner::median(&txn).round();
        PointRow {
            workload: workload.name(),
            lock: lock.name(),
            layout: layout_snapshot.layout,
            snapshot: layout_snapshot.snapshot,
            threads,
            trials: trials.len(),
            median_txn_per_sec: median_txn,
            min_txn_per_sec: min_txn,
            max_txn_per_sec: max_txn,
            latency_avg_us: latency_us(threads, median_txn),
            min_latency_us: latency_us(threads, max_txn),
            max_latency_us: latency_us(threads, min_txn),
            median_ops_per_sec: runner::median(&ops).round(),
            min_ops_per_sec: min_ops,
            max_ops_per_sec: max_ops,
            median_jain: (runner::median(&jain) * 1e4).round() / 1e4,
            bimodal: runner::bimodal(&txn),
            shared_wait_p50_ns: q(|t| &t.shared_wait, 0.5),
            shared_wait_p99_ns: q(|t| &t.shared_wait, 0.99),
            excl_wait_p50_ns: q(|t| &t.excl_wait, 0.5),
            excl_wait_p99_ns: q(|t| &t.excl_wait, 0.99),
            clog_wait_p50_ns: q(|t| &t.clog_wait, 0.5),
            clog_wait_p99_ns: q(|t| &t.clog_wait, 0.99),
            counters_complete_trials: trials
                .iter()
                .filter(|t| t.counters.complete_threads as usize == threads)
                .count(),
            blocks: stat(|l| l.blocks),
            spin_delays: stat(|l| l.spin_delays),
            excl_acquires: stat(|l| l.excl_acquires),
            groups: stat(|l| l.groups),
            mean_group_size: median_of(trials.iter().map(|t| t.lock.mean_group_size))
                .map(|m| (m * 100.0).round() / 100.0),
            max_group_size: trials.iter().filter_map(|t| t.lock.max_group_size).max(),
            top_wait_event,
            top_wait_share,
            snapshot_fast_pct: (!fast.is_empty()).then(|| runner::median(&fast)),
            median_cs_per_thread: (runner::median(&cs) * 10.0).round() / 10.0,
            fair_short: threads > cores && runner::median(&cs) < FAIR_MIN_SLICES,
            instrumented: lock.is_project() || lock == LockKind::Broken,
            sampler_cpu_pct: (runner::median(&sampler) * 10.0).round() / 10.0,
            engine,
            platform,
            cores,
            excl_acquires_per_op: median_of(
                trials
                    .iter()
                    .map(|t| t.lock.excl_acquires.map(|n| n as f64 / t.ops.max(1) as f64)),
            )
            .map(|m| (m * 10_000.0).round() / 10_000.0),
            sim_transfers_per_op: sim_per_op(|c| c.transfers(), 1.0),
            sim_line_wait_ns_per_op: sim_per_op(|c| c.line_wait_ns, 1.0),
            sim_futex_sleeps_per_op: sim_per_op(|c| c.futex_sleeps, 1.0),
            sim_preemptions: median_of(
                trials
                    .iter()
                    .map(|t| t.sim.as_ref().map(|s| s.counters.preemptions as f64)),
            ),
            proc_array_excl_per_txn: per_txn(|t| t.proc_array_lock.excl_acquires),
            clog_excl_per_txn: per_txn(|t| t.clog_lock.excl_acquires),
            // Medians of the values exactly as results.csv has them.
            cpu_busy_pct: median_of(trials.iter().map(|t| t.cpu_busy_pct().map(pct1))).map(pct1),
            cpu_s_per_txn: median_of(
                trials
                    .iter()
                    .map(|t| t.cpu_s_per_txn().map(|x| sig_digits(x, 4))),
            )
            .map(|x| sig_digits(x, 4)),
            waits,
        }
    }

    /// The series this point belongs to: lock, layout, strategy.
    pub fn series_key(&self) -> (&'static str, &'static str, &'static str) {
        (self.lock, self.layout, self.snapshot)
    }
}

#[cfg(test)]
mod tests {
    use super::latency_us;

    #[test]
    fn latency_is_threads_over_tps_and_unbounded_at_zero_tps() {
        assert_eq!(latency_us(4, 1_000_000.0), Some(4.0));
        assert_eq!(latency_us(4, 0.0), None);
    }
}
