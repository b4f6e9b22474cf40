//! The lock workload lwsim's sweeps (`examples/lwsim.rs`, `examples/lwsim_reader_bias.rs`) and
//! the simulator's validation tests run on any [`RawLwLock`]: `threads` simulated threads loop
//! acquire (shared with probability `shared_permille`/1000, else exclusive) → touch the protected
//! line (read when shared, write when exclusive; unless `touch_data` is off) → `cs_ns` of work →
//! release → `think_ns` of work, until their clock passes `duration_ns`. It mirrors no PostgreSQL
//! function (a lock microbenchmark). Only in `--cfg lwsim` builds: it drives the simulator (`run`,
//! `watch`, `compute`).
//!
//! **The window.** The measurement window is `[0, duration_ns]` of virtual time. An operation
//! counts only if it began and finished inside it (its release returned by `duration_ns`), as
//! lwbench's engine counts the progress between its window's edges: a thread that is waiting for
//! the lock at the deadline finishes that operation afterwards (it must release what it takes),
//! and counting it would add up to one operation per thread to every point (a TAS lock at many
//! threads, whose waiters all finish after the deadline, most). The per-operation counters
//! ([`Point::window`], [`Point::window_lines`]) are the machine's at `duration_ns` (the
//! supervisor reads them there), so the tail's traffic is not divided by the window's
//! operations either; [`Point::report`] is the whole run's.

use crate::sync::lwsim::{
    compute, run, supervisor_wait_until, totals, watch, watched_lines, CoreCounters, LineCounters,
    Report, SimConfig,
};
use crate::sync::UnsafeCell;
use crate::{Mode, RawLwLock, Tranche};
use std::sync::{Arc, Mutex};

/// The workload's parameters.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Simulated threads (may exceed the cores).
    pub threads: usize,
    /// Virtual duration (ns): a thread starts no operation after it.
    pub duration_ns: u64,
    /// Shared acquisitions per 1000.
    pub shared_permille: u32,
    /// Work inside the critical section (ns).
    pub cs_ns: u64,
    /// Work between operations (ns).
    pub think_ns: u64,
    /// Whether the critical section touches the protected line (read when shared, write when
    /// exclusive). `false` is an empty lock/unlock loop, as in the Linux queued-spinlock
    /// commits' "5M loop" microbenchmark.
    pub touch_data: bool,
}

impl Workload {
    /// The known-shapes microbenchmark of the validation tests: `threads` threads, exclusive
    /// only, cs 20 ns, think 100 ns, 300 µs virtual.
    pub fn exclusive_short(threads: usize) -> Workload {
        Workload {
            threads,
            duration_ns: 300_000,
            shared_permille: 0,
            cs_ns: 20,
            think_ns: 100,
            touch_data: true,
        }
    }
}

/// One simulated point.
#[derive(Clone, Debug)]
pub struct Point {
    /// The whole run's counters, the tail after the window included (the lock's line is watched
    /// as `"lock"`, the data's as `"data"`).
    pub report: Report,
    /// The simulated cores' counters over the window `[0, duration_ns]`.
    pub window: CoreCounters,
    /// The watched lines' counters over the window.
    pub window_lines: Vec<LineCounters>,
    /// Lock operations (acquire + release) begun and finished inside the window, all threads.
    pub ops: u64,
    /// Lock operations begun and finished inside the window, per thread, in spawn order.
    pub per_thread: Vec<u64>,
    /// Lock operations finished after the window (begun before its end), all threads: not
    /// counted in `ops`.
    pub tail_ops: u64,
}

impl Point {
    /// Lock operations per virtual second.
    pub fn throughput(&self, w: &Workload) -> f64 {
        self.ops as f64 / (w.duration_ns as f64 * 1e-9)
    }
    /// Line transfers (all lines) per lock operation, over the window.
    pub fn transfers_per_op(&self) -> f64 {
        self.window.transfers() as f64 / self.ops.max(1) as f64
    }
    /// Jain's fairness index of the per-thread operation counts (1 = equal shares).
    pub fn jain(&self) -> f64 {
        let n = self.per_thread.len() as f64;
        let sum: f64 = self.per_thread.iter().map(|&x| x as f64).sum();
        let sq: f64 = self.per_thread.iter().map(|&x| (x as f64).powi(2)).sum();
        if sq == 0.0 {
            return 1.0;
        }
        sum * sum / (n * sq)
    }
    /// Transfers of the lock's own line per operation, over the window.
    pub fn lock_transfers_per_op(&self) -> f64 {
        self.window_line("lock").map(|l| l.transfers()).unwrap_or(0) as f64 / self.ops.max(1) as f64
    }
    /// A watched line's counters over the window, by name.
    pub fn window_line(&self, name: &str) -> Option<&LineCounters> {
        self.window_lines.iter().find(|l| l.name == name)
    }
}

/// A value alone on its 64-byte line(s).
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct Padded<T>(pub T);

struct Shared<L> {
    lock: Padded<L>,
    data: Padded<UnsafeCell<[u64; 8]>>,
}

// SAFETY: `data` is only accessed while holding `lock` in a mode that permits it (written only
// under Exclusive), which is the lock's contract.
unsafe impl<L: Sync> Sync for Shared<L> {}
// SAFETY: as above; the lock is Send.
unsafe impl<L: Send> Send for Shared<L> {}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// Runs `w` on lock type `L` on the simulated machine `cfg`.
pub fn run_lock<L: RawLwLock + 'static>(cfg: SimConfig, w: &Workload) -> Point {
    type Outcome = (Vec<(u64, u64)>, CoreCounters, Vec<LineCounters>);
    let total: Arc<Mutex<Outcome>> = Arc::new(Mutex::new(Default::default()));
    let (w2, t2) = (w.clone(), total.clone());
    let seed = cfg.seed;
    let report = run(cfg, move || {
        let shared = Arc::new(Shared {
            lock: Padded(L::with_tranche(Tranche::DEFAULT)),
            data: Padded(UnsafeCell::new([0u64; 8])),
        });
        watch("lock", &shared.lock as *const Padded<L>);
        watch("data", &shared.data as *const Padded<UnsafeCell<[u64; 8]>>);
        let handles: Vec<_> = (0..w2.threads)
            .map(|i| {
                let (s, w) = (shared.clone(), w2.clone());
                crate::sync::thread::spawn(move || {
                    let mut rng = 0x9E37_79B9_7F4A_7C15 ^ seed ^ ((i as u64 + 1) << 32);
                    let (mut ops, mut tail) = (0u64, 0u64);
                    while crate::sync::clock_nanos() < w.duration_ns {
                        let shared = (xorshift(&mut rng) % 1000) < w.shared_permille as u64;
                        let mode = if shared {
                            Mode::Shared
                        } else {
                            Mode::Exclusive
                        };
                        s.lock.0.acquire(mode);
                        if w.touch_data {
                            let p = s.data.0.get();
                            crate::sync::touch(p, 64, !shared);
                            if !shared {
                                // SAFETY: held exclusively: nobody else reads or writes `data`.
                                unsafe { (*p)[0] += 1 };
                            }
                        }
                        if w.cs_ns > 0 {
                            compute(w.cs_ns);
                        }
                        // SAFETY: acquired above in `mode` by this thread.
                        unsafe { s.lock.0.release(mode) };
                        if crate::sync::clock_nanos() <= w.duration_ns {
                            ops += 1;
                        } else {
                            tail += 1;
                        }
                        if w.think_ns > 0 {
                            compute(w.think_ns);
                        }
                    }
                    (ops, tail)
                })
            })
            .collect();
        // The window's edge: the machine's counters at `duration_ns`.
        supervisor_wait_until(w2.duration_ns);
        let (at_end, lines_at_end) = (
            totals().unwrap_or_default(),
            watched_lines().unwrap_or_default(),
        );
        let per_thread: Vec<(u64, u64)> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        *t2.lock().unwrap() = (per_thread, at_end, lines_at_end);
    });
    let (counts, window, window_lines) = std::mem::take(&mut *total.lock().unwrap());
    Point {
        report,
        window,
        window_lines,
        ops: counts.iter().map(|c| c.0).sum(),
        per_thread: counts.iter().map(|c| c.0).collect(),
        tail_ops: counts.iter().map(|c| c.1).sum(),
    }
}
