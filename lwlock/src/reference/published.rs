//! The loops of the published lock benchmarks lwsim is held against, each on the profile of the
//! machine that published it, with the published figures beside the simulated ones
//! (`docs/results.md`, *Held against published curves*; the figures' sources:
//! `docs/design.md`, *Published curves*). Only in `--cfg lwsim` builds.
//!
//! * [`contended`]: folly's `SmallLocksBenchmark` `runContended` (facebook/folly,
//!   `folly/synchronization/test/SmallLocksBenchmark.cpp`): `max(hardware threads, N)` threads,
//!   thread `t` on lock `t % (threads / N)` (so "N threads per lock" is the machine's threads
//!   split into `threads / N` groups: 56 threads on one lock at N = 32), each op `lock; burn(100);
//!   ++value; unlock; burn(1000)`. Figure: `time/iter`, the time for each thread to do one op
//!   (here the window over the mean ops per thread).
//! * [`mixed`]: folly's `SharedMutexTest` `runMixed` (`folly/test/SharedMutexTest.cpp`): every
//!   thread on one lock, each op a write (`lock; ++value; unlock`) with the given probability,
//!   else a read (`lock_shared; read value; unlock_shared`), no work outside. Figure: aggregate
//!   ops/s.
//! * [`torture`]: the kernel's locktorture spinlock writer (`kernel/locking/locktorture.c`,
//!   `lock_torture_writer` with `torture_spin_lock_write_delay`, as of v5.9): `lock; write the
//!   held flag; delay; clear it; unlock`, the delay a 2 µs `udelay` with probability
//!   1 / (N × 2 × 2) and a 100 ms `mdelay` with probability 1 / (N × 2000 × 100). A run of a few
//!   ms cannot hold a 100 ms delay, so the simulation runs the short delay and the long one is
//!   added in expectation ([`torture_with_long_delay`]): while one holder sits in it no other
//!   writer completes, so it adds 100 ms × its probability = 500 / N ns to the machine's time
//!   per op. Figure: ops/s (the published unit is total ops per run of an unstated length, so
//!   only the shape is compared).
//!
//! Every loop counts only the operations begun and finished inside the window `[0,
//! duration_ns]`, as [`super::sweep`] does.

use super::sweep::Padded;
use crate::sync::lwsim::{compute, run, SimConfig};
use crate::sync::UnsafeCell;
use crate::{Mode, RawLwLock, Tranche};
use std::sync::{Arc, Mutex};

struct Slot<L> {
    lock: Padded<L>,
    data: Padded<UnsafeCell<u64>>,
}

// SAFETY: `data` is written only under the lock held exclusively and read under it held in
// some mode, the lock's contract.
unsafe impl<L: Sync> Sync for Slot<L> {}
// SAFETY: as above; the lock is Send.
unsafe impl<L: Send> Send for Slot<L> {}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// One loop per thread: `op(slot, rng)` until the thread's clock passes `duration_ns`, thread
/// `t` on slot `t % slots`; returns the operations of each thread finished inside the window.
fn run_loop<L, F>(cfg: SimConfig, threads: usize, slots: usize, duration_ns: u64, op: F) -> Vec<u64>
where
    L: RawLwLock + 'static,
    F: Fn(&Slot<L>, &mut u64) + Send + Sync + Copy + 'static,
{
    let out: Arc<Mutex<Vec<u64>>> = Arc::new(Mutex::new(Vec::new()));
    let out2 = out.clone();
    let seed = cfg.seed;
    run(cfg, move || {
        let slots: Arc<Vec<Slot<L>>> = Arc::new(
            (0..slots.max(1))
                .map(|_| Slot {
                    lock: Padded(L::with_tranche(Tranche::DEFAULT)),
                    data: Padded(UnsafeCell::new(0)),
                })
                .collect(),
        );
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let s = slots.clone();
                crate::sync::thread::spawn(move || {
                    let slot = &s[t % s.len()];
                    let mut rng = 0x9E37_79B9_7F4A_7C15 ^ seed ^ ((t as u64 + 1) << 32);
                    let mut ops = 0u64;
                    while crate::sync::clock_nanos() < duration_ns {
                        op(slot, &mut rng);
                        if crate::sync::clock_nanos() <= duration_ns {
                            ops += 1;
                        }
                    }
                    ops
                })
            })
            .collect();
        let counts: Vec<u64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        *out2.lock().unwrap() = counts;
    });
    let v = std::mem::take(&mut *out.lock().unwrap());
    v
}

fn write_op<L: RawLwLock>(slot: &Slot<L>) {
    slot.lock.0.acquire(Mode::Exclusive);
    let p = slot.data.0.get();
    crate::sync::touch(p, 8, true);
    // SAFETY: held exclusively: nobody else reads or writes `data`.
    unsafe { *p += 1 };
    // SAFETY: acquired above in Exclusive by this thread.
    unsafe { slot.lock.0.release(Mode::Exclusive) };
}

/// folly's `runContended` on `hw_threads` hardware threads: `N = per_lock` threads per lock
/// (see the module docs), `cs_ns` of burn inside (before the protected increment) and
/// `outside_ns` after the release. Returns the mean time per op per thread, ns.
pub fn contended<L: RawLwLock + 'static>(
    cfg: SimConfig,
    per_lock: usize,
    cs_ns: u64,
    outside_ns: u64,
    duration_ns: u64,
) -> f64 {
    let hw = cfg.cores;
    let threads = hw.max(per_lock);
    let groups = threads / per_lock;
    let counts = run_loop::<L, _>(cfg, threads, groups, duration_ns, move |slot, _| {
        slot.lock.0.acquire(Mode::Exclusive);
        if cs_ns > 0 {
            compute(cs_ns);
        }
        let p = slot.data.0.get();
        crate::sync::touch(p, 8, true);
        // SAFETY: held exclusively: nobody else reads or writes `data`.
        unsafe { *p += 1 };
        // SAFETY: acquired above in Exclusive by this thread.
        unsafe { slot.lock.0.release(Mode::Exclusive) };
        if outside_ns > 0 {
            compute(outside_ns);
        }
    });
    let ops: u64 = counts.iter().sum();
    duration_ns as f64 * threads as f64 / ops.max(1) as f64
}

/// folly's `runMixed`: `threads` threads on one lock on `cfg.cores` hardware threads, a write
/// with probability `write_permille` / 1000, else a read. Returns aggregate ops/s.
pub fn mixed<L: RawLwLock + 'static>(
    cfg: SimConfig,
    threads: usize,
    write_permille: u32,
    duration_ns: u64,
) -> f64 {
    let counts = run_loop::<L, _>(cfg, threads, 1, duration_ns, move |slot, rng| {
        if xorshift(rng) % 1000 < write_permille as u64 {
            write_op(slot);
        } else {
            slot.lock.0.acquire(Mode::Shared);
            crate::sync::touch(slot.data.0.get(), 8, false);
            // SAFETY: acquired above in Shared by this thread.
            unsafe { slot.lock.0.release(Mode::Shared) };
        }
    });
    counts.iter().sum::<u64>() as f64 / (duration_ns as f64 * 1e-9)
}

/// The 2 µs `udelay` of locktorture's spinlock writer (ns).
pub const TORTURE_SHORT_DELAY_NS: u64 = 2_000;
/// The 100 ms `mdelay` of locktorture's spinlock writer (ns).
pub const TORTURE_LONG_DELAY_NS: f64 = 100e6;

/// locktorture's spinlock writer, `threads` threads on as many hardware threads, the short
/// delay simulated (the long one is [`torture_with_long_delay`]'s). Returns ops/s.
pub fn torture<L: RawLwLock + 'static>(cfg: SimConfig, threads: usize, duration_ns: u64) -> f64 {
    let every = (threads as u64) * 2 * 2;
    let counts = run_loop::<L, _>(cfg, threads, 1, duration_ns, move |slot, rng| {
        slot.lock.0.acquire(Mode::Exclusive);
        let p = slot.data.0.get();
        // lock_is_write_held = true ... = false: one shared line written under the lock.
        crate::sync::touch(p, 8, true);
        if xorshift(rng) % every == 0 {
            compute(TORTURE_SHORT_DELAY_NS);
        }
        crate::sync::touch(p, 8, true);
        // SAFETY: acquired above in Exclusive by this thread.
        unsafe { slot.lock.0.release(Mode::Exclusive) };
    });
    counts.iter().sum::<u64>() as f64 / (duration_ns as f64 * 1e-9)
}

/// The rate `short_rate` (ops/s, [`torture`]'s) with locktorture's 100 ms delay added in
/// expectation: 100 ms × 1 / (N × 2000 × 100) of the machine's time per op.
pub fn torture_with_long_delay(short_rate: f64, threads: usize) -> f64 {
    let p = 1.0 / (threads as f64 * 2000.0 * 100.0);
    1.0 / (1.0 / short_rate + TORTURE_LONG_DELAY_NS * 1e-9 * p)
}

/// A published curve and the simulated one, point by point.
#[derive(Clone, Debug)]
pub struct Curve {
    /// What was measured and where.
    pub name: String,
    /// Whether a larger value is better (throughput) or worse (time per op).
    pub higher_is_better: bool,
    /// `(threads, published, simulated)`.
    pub rows: Vec<(usize, f64, f64)>,
}

/// The shape of a curve: the thread count of its best point, and its last point over its best.
pub fn shape(values: &[(usize, f64)], higher_is_better: bool) -> (usize, f64) {
    let best = values
        .iter()
        .copied()
        .fold(None::<(usize, f64)>, |b, p| match b {
            Some(b) if (higher_is_better && b.1 >= p.1) || (!higher_is_better && b.1 <= p.1) => {
                Some(b)
            }
            _ => Some(p),
        })
        .unwrap_or((0, f64::NAN));
    let last = values.last().map(|p| p.1).unwrap_or(f64::NAN);
    (best.0, last / best.1)
}

impl Curve {
    /// The published curve's shape.
    pub fn published_shape(&self) -> (usize, f64) {
        let v: Vec<_> = self.rows.iter().map(|r| (r.0, r.1)).collect();
        shape(&v, self.higher_is_better)
    }
    /// The simulated curve's shape.
    pub fn simulated_shape(&self) -> (usize, f64) {
        let v: Vec<_> = self.rows.iter().map(|r| (r.0, r.2)).collect();
        shape(&v, self.higher_is_better)
    }
    /// Whether each point's simulated value is within `band` (0.3: ±30 %) of the published one.
    pub fn within(&self, band: f64) -> Vec<bool> {
        self.rows
            .iter()
            .map(|r| ((r.2 / r.1) - 1.0).abs() <= band)
            .collect()
    }
    /// A markdown table: threads, published, simulated, ratio, within ±30 %; then the shapes.
    pub fn table(&self) -> String {
        let mut s = format!("{}\n\n| threads | published | simulated | sim / published | within ±30 % |\n|---:|---:|---:|---:|---|\n", self.name);
        for (r, ok) in self.rows.iter().zip(self.within(0.3)) {
            s += &format!(
                "| {} | {} | {} | {:.2} | {} |\n",
                r.0,
                fmt(r.1),
                fmt(r.2),
                r.2 / r.1,
                if ok { "yes" } else { "no" }
            );
        }
        let (pp, pr) = self.published_shape();
        let (sp, sr) = self.simulated_shape();
        s += &format!(
            "\nshape: best point at {pp} threads published, {sp} simulated; last / best {pr:.3} published, {sr:.3} simulated (ratio {:.2}, within ±30 %: {})\n",
            sr / pr,
            if ((sr / pr) - 1.0).abs() <= 0.3 { "yes" } else { "no" }
        );
        s
    }
}

fn fmt(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.3}M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.1}")
    }
}

/// Threads per lock of folly's SmallLocksBenchmark rows.
pub const FOLLY_THREADS: [usize; 8] = [1, 2, 4, 8, 16, 32, 64, 128];
/// `folly_microspin` time/iter (ns) on the E5-2680 v4 (the results comment's first block).
pub const FOLLY_MICROSPIN_NS: [f64; 8] = [
    821.97, 861.24, 2_360.0, 4_600.0, 11_060.0, 30_740.0, 32_780.0, 74_960.0,
];
/// `folly_distributedmutex` time/iter (ns), same block.
pub const FOLLY_DISTRIBUTED_NS: [f64; 8] = [
    695.23, 937.63, 1_900.0, 2_990.0, 6_840.0, 17_830.0, 20_450.0, 43_850.0,
];
/// The benchmark's burn iterations inside (`--work`) and outside (`--unlocked_work`) the lock.
pub const FOLLY_BURN_INSIDE: u64 = 100;
/// See [`FOLLY_BURN_INSIDE`].
pub const FOLLY_BURN_OUTSIDE: u64 = 1000;

/// Threads of folly's SharedMutexTest rows (all on one lock).
pub const RWSPIN_THREADS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];
/// `folly_rwspin_reads` aggregate ops/s on 2 x E5-2660: read-only (`lock_shared; read;
/// unlock_shared`, `runContendedReaders`, the same loop as [`mixed`] with no writes).
pub const RWSPIN_READS: [f64; 7] = [
    65.95e6, 22.20e6, 16.08e6, 15.60e6, 14.27e6, 17.00e6, 16.89e6,
];
/// `folly_rwspin` aggregate ops/s on 2 x E5-2660, 100 % writes.
pub const RWSPIN_ALL_WRITE: [f64; 7] =
    [42.06e6, 13.15e6, 4.83e6, 3.06e6, 1.37e6, 645.01e3, 492.00e3];
/// The same, 10 % writes.
pub const RWSPIN_10PCT: [f64; 7] = [51.58e6, 4.39e6, 2.25e6, 2.35e6, 1.38e6, 1.23e6, 912.30e3];
/// The same, 1 % writes.
pub const RWSPIN_1PCT: [f64; 7] = [52.57e6, 9.04e6, 7.11e6, 6.02e6, 2.38e6, 2.53e6, 2.36e6];

/// Threads of the CNA letters' locktorture rows.
pub const TORTURE_THREADS: [usize; 10] = [1, 2, 4, 8, 16, 32, 36, 72, 108, 142];
/// Stock qspinlock under locktorture on 4 x E7-8895 v3 (v11 letter, kernel v5.9-rc4), total
/// ops × 10^7 per run.
pub const TORTURE_STOCK: [f64; 10] = [
    2.682, 2.810, 4.273, 5.071, 5.840, 6.246, 6.355, 6.129, 5.921, 5.763,
];

/// The burn per op (ns, inside and outside together) that puts folly's loop with one thread
/// per lock at `t1_ns` per op on `cfg`'s machine (every hardware thread busy, so at the
/// profile's SMT speed): the burn loop's cost taken from the published 1-thread row. Two runs:
/// no burn, and a guess; the time per op is linear in the burn between them.
pub fn folly_burn_from_one_thread<L: RawLwLock + 'static>(
    cfg: &SimConfig,
    t1_ns: f64,
    duration_ns: u64,
) -> f64 {
    let split = |b: f64| {
        let inside = (b * FOLLY_BURN_INSIDE as f64
            / (FOLLY_BURN_INSIDE + FOLLY_BURN_OUTSIDE) as f64)
            .round() as u64;
        (inside, (b.round() as u64).saturating_sub(inside))
    };
    let t0 = contended::<L>(cfg.clone(), 1, 0, 0, duration_ns);
    let guess = t1_ns;
    let (i, o) = split(guess);
    let tg = contended::<L>(cfg.clone(), 1, i, o, duration_ns);
    let slope = (tg - t0) / guess;
    ((t1_ns - t0) / slope).max(0.0)
}

/// folly's curve for lock `L` on `cfg`'s machine at `threads` (a subset of [`FOLLY_THREADS`]),
/// against `published` time/iter: the burn from the 1-thread row, then each row. Values are one
/// lock's acquisitions per second (threads per lock / time per op), published and simulated.
pub fn folly_curve<L: RawLwLock + 'static>(
    name: &str,
    cfg: &SimConfig,
    published: &[f64; 8],
    threads: &[usize],
    duration_ns: u64,
) -> Curve {
    let burn = folly_burn_from_one_thread::<L>(cfg, published[0], duration_ns);
    let inside = (burn * FOLLY_BURN_INSIDE as f64 / (FOLLY_BURN_INSIDE + FOLLY_BURN_OUTSIDE) as f64)
        .round() as u64;
    let outside = (burn.round() as u64).saturating_sub(inside);
    let hw = cfg.cores;
    let rows = threads
        .iter()
        .map(|&n| {
            let i = FOLLY_THREADS
                .iter()
                .position(|&x| x == n)
                .expect("a folly row");
            let total = hw.max(n);
            let per_lock = total as f64 / (total / n) as f64;
            let sim = contended::<L>(cfg.clone(), n, inside, outside, duration_ns);
            (n, per_lock * 1e9 / published[i], per_lock * 1e9 / sim)
        })
        .collect();
    Curve {
        name: format!(
            "{name} (burn {burn:.0} ns per op from the 1-thread row: {inside} inside, {outside} outside; one lock's acquisitions/s)"
        ),
        higher_is_better: true,
        rows,
    }
}

/// folly's RW spinlock curve with `write_permille` writes at `threads` (a subset of
/// [`RWSPIN_THREADS`]) against `published` (aggregate ops/s), on `cfg`'s profile (cores:
/// min(threads, its hardware threads)).
pub fn rwspin_curve<L: RawLwLock + 'static>(
    name: &str,
    cfg: &SimConfig,
    write_permille: u32,
    published: &[f64; 7],
    threads: &[usize],
    duration_ns: u64,
) -> Curve {
    let hw = cfg.profile.hw_threads();
    let rows = threads
        .iter()
        .map(|&n| {
            let i = RWSPIN_THREADS
                .iter()
                .position(|&x| x == n)
                .expect("a rwspin row");
            let mut c = cfg.clone();
            c.cores = n.min(hw);
            (
                n,
                published[i],
                mixed::<L>(c, n, write_permille, duration_ns),
            )
        })
        .collect();
    Curve {
        name: name.to_string(),
        higher_is_better: true,
        rows,
    }
}

/// locktorture's curve at `threads` (a subset of [`TORTURE_THREADS`]): published total ops per
/// run (× 10^7), simulated ops/s with the long delay in expectation. Different units: compare
/// the shapes only.
pub fn torture_curve<L: RawLwLock + 'static>(
    name: &str,
    cfg: &SimConfig,
    threads: &[usize],
    duration_ns: u64,
) -> Curve {
    let rows = threads
        .iter()
        .map(|&n| {
            let i = TORTURE_THREADS
                .iter()
                .position(|&x| x == n)
                .expect("a torture row");
            let mut c = cfg.clone();
            c.cores = n;
            let short = torture::<L>(c, n, duration_ns);
            (n, TORTURE_STOCK[i] * 1e7, torture_with_long_delay(short, n))
        })
        .collect();
    Curve {
        name: name.to_string(),
        higher_is_better: true,
        rows,
    }
}
