//! lwsim: a many-core claim rerun over ten seeds, with the profile's latency spread and
//! arbitration on, and asserted for every seed (a claim that holds for one seed is not a claim).
//!
//! The claim (docs/results.md, "The project's locks"): under a read-mostly mix with no work
//! outside the lock (95 % shared, cs 50 ns, think 200 ns) on 64 cores of `xeon-2s-broadwell`,
//! the classic (9.4) LWLock, whose waiters queue and sleep, outruns the atomic (9.5) one. It holds
//! for every seed but reverses on `epyc-2s-genoa` and under a halved residency window, so the
//! results withdraw it as a statement about hardware; this test keeps it as a regression check of
//! the model (a change that moves it must say so). Only in `--cfg lwsim` builds (`ci/sim.sh`).
#![cfg(lwsim)]

use lwlock::reference::sweep::{run_lock, Workload};
use lwlock::sync::lwsim::{Profile, SimConfig};
use lwlock::{RawAtomicLwLock, RawClassicLwLock};

#[test]
fn classic_outruns_atomic_at_64_cores_on_a_zero_work_read_mostly_mix_for_every_seed() {
    let p = Profile::builtin("xeon-2s-broadwell").unwrap();
    let w = Workload {
        threads: 64,
        duration_ns: 1_000_000,
        shared_permille: 950,
        cs_ns: 50,
        think_ns: 200,
        touch_data: true,
    };
    let mut ratios = Vec::new();
    for seed in 1..=10 {
        let a = run_lock::<RawAtomicLwLock>(SimConfig::new(p.clone(), 64).seed(seed), &w);
        let c = run_lock::<RawClassicLwLock>(SimConfig::new(p.clone(), 64).seed(seed), &w);
        let r = c.ops as f64 / a.ops.max(1) as f64;
        println!(
            "seed {seed:>2}: atomic {:.3} Mops/s, classic {:.3} Mops/s, classic/atomic {r:.2}",
            a.throughput(&w) / 1e6,
            c.throughput(&w) / 1e6
        );
        ratios.push(r);
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "classic/atomic over 10 seeds: median {:.2}, min {:.2}, max {:.2}",
        ratios[5], ratios[0], ratios[9]
    );
    assert!(ratios[0] > 1.0, "the claim fails for some seed: {ratios:?}");
}
