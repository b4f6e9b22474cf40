//! The clock the wait-time percentiles are read with.
//!
//! A timed operation reads the clock before it asks for the lock and again as its critical
//! section begins, so the second read sits inside the critical section and lengthens it. On
//! x86-64 with an invariant TSC (`constant_tsc` and `nonstop_tsc` in `/proc/cpuinfo`) the clock
//! is the TSC itself (`rdtsc`, a few nanoseconds), calibrated once against `Instant`; elsewhere
//! it is `Instant` (`clock_gettime` through the vDSO). [`floor_ns`] is the measured cost of one
//! back-to-back pair of reads: a wait percentile at or near it is timer overhead, not waiting.
//!
//! In a `--cfg lwsim` build, inside a simulation (`--engine sim`), the clock is the calling
//! simulated thread's virtual clock (`lwlock::sync::clock_nanos`, ticks = ns): reading it costs no
//! virtual time, so the floor there is 0.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A point in time in clock ticks.
pub type Ticks = u64;

struct Clock {
    tsc: bool,
    ns_per_tick: f64,
    origin: Instant,
    floor_ns: f64,
}

fn tsc_is_invariant() -> bool {
    cfg!(target_arch = "x86_64")
        && std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|s| {
            s.lines().find(|l| l.starts_with("flags")).is_some_and(|l| {
                let has = |w: &str| l.split_whitespace().any(|x| x == w);
                has("constant_tsc") && has("nonstop_tsc")
            })
        })
}

#[inline(always)]
fn read(c: &Clock) -> Ticks {
    #[cfg(target_arch = "x86_64")]
    if c.tsc {
        // SAFETY: `rdtsc` has no preconditions on x86-64; it only reads the time-stamp counter.
        return unsafe { core::arch::x86_64::_rdtsc() };
    }
    c.origin.elapsed().as_nanos() as u64
}

fn clock() -> &'static Clock {
    static CLOCK: OnceLock<Clock> = OnceLock::new();
    CLOCK.get_or_init(|| {
        let tsc = tsc_is_invariant();
        let mut c = Clock {
            tsc,
            ns_per_tick: 1.0,
            origin: Instant::now(),
            floor_ns: 0.0,
        };
        if tsc {
            // Calibrate against the monotonic clock over 20 ms.
            let (t0, i0) = (read(&c), Instant::now());
            std::thread::sleep(Duration::from_millis(20));
            let (t1, i1) = (read(&c), Instant::now());
            c.ns_per_tick = (i1 - i0).as_nanos() as f64 / (t1.wrapping_sub(t0)).max(1) as f64;
        }
        // The floor: the median of many back-to-back pairs.
        let mut pairs: Vec<f64> = (0..2001)
            .map(|_| {
                let a = read(&c);
                let b = read(&c);
                b.wrapping_sub(a) as f64 * c.ns_per_tick
            })
            .collect();
        pairs.sort_by(|a, b| a.total_cmp(b));
        c.floor_ns = pairs[pairs.len() / 2];
        c
    })
}

/// Whether the clock is the simulator's (inside an lwsim run).
#[inline(always)]
fn simulated() -> bool {
    #[cfg(lwsim)]
    return lwlock::sync::lwsim::machine::active();
    #[cfg(not(lwsim))]
    false
}

/// Now, in ticks.
#[inline(always)]
pub fn now() -> Ticks {
    if simulated() {
        return lwlock::sync::clock_nanos();
    }
    read(clock())
}

/// Nanoseconds from `t0` to now.
#[inline(always)]
pub fn ns_since(t0: Ticks) -> u64 {
    if simulated() {
        return lwlock::sync::clock_nanos().saturating_sub(t0);
    }
    let c = clock();
    (read(c).wrapping_sub(t0) as f64 * c.ns_per_tick) as u64
}

/// The cost of one timed interval with nothing in it (median of back-to-back reads), ns.
pub fn floor_ns() -> f64 {
    clock().floor_ns
}

/// `"tsc"` or `"instant"`.
pub fn source() -> &'static str {
    if clock().tsc {
        "tsc"
    } else {
        "instant"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_a_sleep_and_has_a_small_floor() {
        let t0 = now();
        std::thread::sleep(Duration::from_millis(5));
        let ns = ns_since(t0);
        assert!(
            (4_000_000..1_000_000_000).contains(&ns),
            "{ns} ns for a 5 ms sleep"
        );
        assert!(floor_ns() >= 0.0 && floor_ns() < 10_000.0, "{}", floor_ns());
    }
}
