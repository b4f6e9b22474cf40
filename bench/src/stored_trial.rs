//! One trial's result as a shard stores it (`trials.jsonl`, one JSON line per trial) and
//! `lwbench merge` reads it back: every field of [`TrialResult`] that a file of the run is made
//! from, so that the output stage, fed the trials read back, writes what it writes when fed the
//! trials themselves.
//!
//! Floating-point values are stored as their bits (a decimal text would have to round-trip
//! exactly); a wait histogram as its configuration and its non-empty buckets, each with the
//! highest value that bucket holds, which lands in the same bucket when recorded again (every
//! figure the output stage reads from a histogram, its length, maximum and quantiles, is a
//! function of the bucket counts).

use hdrhistogram::Histogram;
use lwharness::engine::{SimCounters, SimTrial};
use lwharness::locks::LockCounters;
use lwharness::perf::{Counted, CounterValues};
use lwharness::runner::{CpuTime, SamplerCost, TrialResult};
use lwharness::snapshot::Outcome;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// A stored wait histogram.
#[derive(Debug, Serialize, Deserialize)]
struct StoredHistogram {
    low: u64,
    high: u64,
    sigfig: u8,
    /// `(highest value of the bucket, count)` of each non-empty bucket, in value order.
    buckets: Vec<(u64, u64)>,
}

impl StoredHistogram {
    fn from(h: &Histogram<u64>) -> Self {
        StoredHistogram {
            low: h.low(),
            high: h.high(),
            sigfig: h.sigfig(),
            buckets: h
                .iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect(),
        }
    }

    fn to_histogram(&self) -> Result<Histogram<u64>, String> {
        let mut h = Histogram::new_with_bounds(self.low, self.high, self.sigfig)
            .map_err(|e| format!("histogram bounds: {e:?}"))?;
        for &(v, n) in &self.buckets {
            h.record_n(v, n)
                .map_err(|e| format!("histogram value {v}: {e:?}"))?;
        }
        Ok(h)
    }
}

/// An `f64` by its bits.
fn bits(x: f64) -> u64 {
    x.to_bits()
}

#[derive(Debug, Serialize, Deserialize)]
struct StoredCounted(u64, u32);

impl StoredCounted {
    fn from(c: Counted) -> Self {
        StoredCounted(c.sum, c.threads)
    }
    fn get(&self) -> Counted {
        Counted {
            sum: self.0,
            threads: self.1,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct StoredCounters {
    threads: u32,
    complete_threads: u32,
    /// ctx_switches_perf, ctx_switches_rusage, cpu_migrations, task_clock_ns, cache_misses,
    /// llc_misses, cycles, instructions.
    counted: [StoredCounted; 8],
    hw_running: Option<u64>,
}

#[derive(Debug, Serialize, Deserialize)]
struct StoredLock {
    blocks: Option<u64>,
    spin_delays: Option<u64>,
    excl_acquires: Option<u64>,
    groups: Option<u64>,
    mean_group_size: Option<u64>,
    max_group_size: Option<u64>,
}

impl StoredLock {
    fn from(l: &LockCounters) -> Self {
        StoredLock {
            blocks: l.blocks,
            spin_delays: l.spin_delays,
            excl_acquires: l.excl_acquires,
            groups: l.groups,
            mean_group_size: l.mean_group_size.map(bits),
            max_group_size: l.max_group_size,
        }
    }
    fn get(&self) -> LockCounters {
        LockCounters {
            blocks: self.blocks,
            spin_delays: self.spin_delays,
            excl_acquires: self.excl_acquires,
            groups: self.groups,
            mean_group_size: self.mean_group_size.map(f64::from_bits),
            max_group_size: self.max_group_size,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct StoredSim {
    platform: String,
    cores: usize,
    seed: u64,
    /// mem_ops, load_from_modified, load_from_shared, rfo_from_modified, invalidations, fills,
    /// line_wait_ns, futex_sleeps, futex_wakes, preemptions, dispatches, sleeps,
    /// voluntary_switches, involuntary_switches.
    counters: [u64; 14],
    real: Duration,
    events_per_sec: u64,
}

#[derive(Debug, Serialize, Deserialize)]
struct StoredCpu {
    busy: Duration,
    sys_share: Option<u64>,
}

/// A trial's result as stored.
#[derive(Debug, Serialize, Deserialize)]
pub struct StoredTrial {
    elapsed: Duration,
    requested: Duration,
    tail: Duration,
    ops: u64,
    txns: u64,
    ops_total: u64,
    per_thread: Vec<u64>,
    shared_wait: StoredHistogram,
    excl_wait: StoredHistogram,
    clog_wait: StoredHistogram,
    sampler_passes: u64,
    sampler_busy: Duration,
    spins_per_delay: u32,
    counters: StoredCounters,
    lock: StoredLock,
    proc_array_lock: StoredLock,
    clog_lock: StoredLock,
    waits: BTreeMap<String, u64>,
    snapshot_outcomes: Vec<u64>,
    sim: Option<StoredSim>,
    cpu: Option<StoredCpu>,
}

impl StoredTrial {
    /// The stored form of `r`.
    pub fn from(r: &TrialResult) -> Self {
        let c = &r.counters;
        StoredTrial {
            elapsed: r.elapsed,
            requested: r.requested,
            tail: r.tail,
            ops: r.ops,
            txns: r.txns,
            ops_total: r.ops_total,
            per_thread: r.per_thread.clone(),
            shared_wait: StoredHistogram::from(&r.shared_wait),
            excl_wait: StoredHistogram::from(&r.excl_wait),
            clog_wait: StoredHistogram::from(&r.clog_wait),
            sampler_passes: r.sampler.passes,
            sampler_busy: r.sampler.busy,
            spins_per_delay: r.spins_per_delay,
            counters: StoredCounters {
                threads: c.threads,
                complete_threads: c.complete_threads,
                counted: [
                    c.ctx_switches_perf,
                    c.ctx_switches_rusage,
                    c.cpu_migrations,
                    c.task_clock_ns,
                    c.cache_misses,
                    c.llc_misses,
                    c.cycles,
                    c.instructions,
                ]
                .map(StoredCounted::from),
                hw_running: c.hw_running.map(bits),
            },
            lock: StoredLock::from(&r.lock),
            proc_array_lock: StoredLock::from(&r.proc_array_lock),
            clog_lock: StoredLock::from(&r.clog_lock),
            waits: r.waits.clone(),
            snapshot_outcomes: r.snapshot_outcomes.to_vec(),
            sim: r.sim.as_ref().map(|s| {
                let k = &s.counters;
                StoredSim {
                    platform: s.platform.clone(),
                    cores: s.cores,
                    seed: s.seed,
                    counters: [
                        k.mem_ops,
                        k.load_from_modified,
                        k.load_from_shared,
                        k.rfo_from_modified,
                        k.invalidations,
                        k.fills,
                        k.line_wait_ns,
                        k.futex_sleeps,
                        k.futex_wakes,
                        k.preemptions,
                        k.dispatches,
                        k.sleeps,
                        k.voluntary_switches,
                        k.involuntary_switches,
                    ],
                    real: s.real,
                    events_per_sec: bits(s.events_per_sec),
                }
            }),
            cpu: r.cpu.map(|c| StoredCpu {
                busy: c.busy,
                sys_share: c.sys_share.map(bits),
            }),
        }
    }

    /// The trial result back.
    pub fn to_result(&self) -> Result<TrialResult, String> {
        let c = &self.counters;
        let [ctx_switches_perf, ctx_switches_rusage, cpu_migrations, task_clock_ns, cache_misses, llc_misses, cycles, instructions] =
            [0, 1, 2, 3, 4, 5, 6, 7].map(|i| c.counted[i].get());
        let snapshot_outcomes: [u64; Outcome::COUNT] = self
            .snapshot_outcomes
            .clone()
            .try_into()
            .map_err(|v: Vec<u64>| {
                format!(
                    "snapshot_outcomes has {} values, this lwbench counts {}",
                    v.len(),
                    Outcome::COUNT
                )
            })?;
        Ok(TrialResult {
            elapsed: self.elapsed,
            requested: self.requested,
            tail: self.tail,
            ops: self.ops,
            txns: self.txns,
            ops_total: self.ops_total,
            per_thread: self.per_thread.clone(),
            shared_wait: self.shared_wait.to_histogram()?,
            excl_wait: self.excl_wait.to_histogram()?,
            clog_wait: self.clog_wait.to_histogram()?,
            sampler: SamplerCost {
                passes: self.sampler_passes,
                busy: self.sampler_busy,
            },
            spins_per_delay: self.spins_per_delay,
            counters: CounterValues {
                threads: c.threads,
                complete_threads: c.complete_threads,
                ctx_switches_perf,
                ctx_switches_rusage,
                cpu_migrations,
                task_clock_ns,
                cache_misses,
                llc_misses,
                cycles,
                instructions,
                hw_running: c.hw_running.map(f64::from_bits),
            },
            lock: self.lock.get(),
            proc_array_lock: self.proc_array_lock.get(),
            clog_lock: self.clog_lock.get(),
            waits: self.waits.clone(),
            snapshot_outcomes,
            sim: self.sim.as_ref().map(|s| {
                let k = s.counters;
                SimTrial {
                    platform: s.platform.clone(),
                    cores: s.cores,
                    seed: s.seed,
                    counters: SimCounters {
                        mem_ops: k[0],
                        load_from_modified: k[1],
                        load_from_shared: k[2],
                        rfo_from_modified: k[3],
                        invalidations: k[4],
                        fills: k[5],
                        line_wait_ns: k[6],
                        futex_sleeps: k[7],
                        futex_wakes: k[8],
                        preemptions: k[9],
                        dispatches: k[10],
                        sleeps: k[11],
                        voluntary_switches: k[12],
                        involuntary_switches: k[13],
                    },
                    real: s.real,
                    events_per_sec: f64::from_bits(s.events_per_sec),
                }
            }),
            cpu: self.cpu.as_ref().map(|c| CpuTime {
                busy: c.busy,
                sys_share: c.sys_share.map(f64::from_bits),
            }),
        })
    }
}
