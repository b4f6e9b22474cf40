//! lwsim: fixed latencies and first-come arbitration lock a spinning schedule into a pattern (two
//! threads take nearly every TAS acquisition, every other thread gets one); the profiles' latency
//! spread and arbitration must break it, without a lock's own fairness changing. Only in
//! `--cfg lwsim` builds (`ci/sim.sh`):
//!
//! ```text
//! RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim cargo test --release -p lwlock --test sim_patterns
//! ```
#![cfg(lwsim)]

use lwlock::reference::sweep::{run_lock, Point, Workload};
use lwlock::reference::TasLock;
use lwlock::sync::lwsim::{Profile, SimConfig};
use lwlock::RawLwLock;

fn point<L: RawLwLock + 'static>(p: &Profile, cores: usize, seed: u64) -> Point {
    run_lock::<L>(
        SimConfig::new(p.clone(), cores).seed(seed),
        &Workload::exclusive_short(cores),
    )
}

fn describe(p: &Point) -> String {
    format!("jain {:.3} per thread {:?}", p.jain(), p.per_thread)
}

/// A TAS lock (cs 20 ns, think 100 ns, 300 µs virtual) at 8 and 16 cores of one socket, three
/// seeds. With fixed latencies, first-come arbitration and no residency the schedule is lock-step
/// (every thread's count within one of every other's, whatever the seed); with the profile's
/// spread and arbitration the shares vary as a real TAS lock's do (no lock-step), and the work is
/// not left to a few threads (the earlier request-time model's pattern: two threads took nearly
/// every acquisition, every other thread one): the two busiest threads take under half of them.
#[test]
fn spread_and_arbitration_break_the_fixed_latency_pattern() {
    let full = Profile::builtin("xeon-2s-broadwell").unwrap();
    let mut fixed = full.clone();
    fixed
        .set_all("jitter=0,arbitration=0,residency_ns=0")
        .unwrap();
    let lockstep = |p: &Point| {
        let (lo, hi) = (
            p.per_thread.iter().min().unwrap(),
            p.per_thread.iter().max().unwrap(),
        );
        hi - lo <= 1
    };
    for cores in [8, 16] {
        for seed in [1, 2, 3] {
            let a = point::<TasLock>(&fixed, cores, seed);
            let b = point::<TasLock>(&full, cores, seed);
            println!(
                "tas {cores} cores seed {seed}: fixed {}\n    full  {}",
                describe(&a),
                describe(&b)
            );
            assert!(lockstep(&a), "fixed latencies: {}", describe(&a));
            assert!(!lockstep(&b), "the profile's model: {}", describe(&b));
            let mut v = b.per_thread.clone();
            v.sort_unstable_by(|x, y| y.cmp(x));
            assert!(
                (v[0] + v[1]) * 2 < b.ops,
                "two threads took half the acquisitions: {}",
                describe(&b)
            );
        }
    }
}
