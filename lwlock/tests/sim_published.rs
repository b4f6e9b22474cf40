//! The simulator held against published lock curves, reduced to fit the test command: a few
//! points of each comparison of `docs/results.md` (*Held against published curves*), on the
//! profiles of the machines that published them, with short windows. Asserted: the simulated
//! values exactly (deterministic: a model or profile change that moves them fails here and must
//! be rerun into the docs' table), and which points are within ±30 % of the published ones (so a
//! point that meets or leaves the band is seen). Only in `--cfg lwsim` builds (`ci/sim.sh`):
//!
//! ```text
//! RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim cargo test --release -p lwlock --test sim_published -- --nocapture
//! ```
#![cfg(lwsim)]

use lwlock::reference::published::*;
use lwlock::reference::{McsLock, MicroSpinLock, QSpinLock, RwSpinLock};
use lwlock::sync::lwsim::{Profile, SimConfig};

fn cfg(profile: &str, cores: usize) -> SimConfig {
    SimConfig::new(Profile::builtin(profile).unwrap(), cores)
}

/// The curve's simulated values rounded to integers, and its points within ±30 %.
fn summary(c: &Curve) -> (Vec<u64>, Vec<bool>) {
    println!("{}", c.table());
    (
        c.rows.iter().map(|r| r.2.round() as u64).collect(),
        c.within(0.3),
    )
}

/// folly's RW spinlock on 2 x E5-2660, 100 % and 1 % writes, 1 / 4 / 32 threads, 100 µs: the
/// all-write curve meets the band at 1 and 32 and is 1.32x at 4 (model 3: the pair matrix of the
/// closest published part, whose same-socket pairs are about half the profile's class figure),
/// the 1 % one only at 1 (the mixed curve is too fast from 2 threads: results.md says why).
#[test]
fn rwspin_on_e5_2660_against_folly() {
    let c = cfg("xeon-2s-e5-2660", 32);
    let all =
        rwspin_curve::<RwSpinLock>("100 %", &c, 1000, &RWSPIN_ALL_WRITE, &[1, 4, 32], 100_000);
    let one = rwspin_curve::<RwSpinLock>("1 %", &c, 10, &RWSPIN_1PCT, &[1, 4, 32], 100_000);
    let (a, b) = (summary(&all), summary(&one));
    assert_eq!(
        a,
        (vec![47120000, 6360000, 540000], vec![true, false, true]),
        "100 % writes"
    );
    assert_eq!(
        b,
        (vec![44280000, 19560000, 10980000], vec![true, false, false]),
        "1 % writes"
    );
}

/// The stock queued spinlock under locktorture on 4 x E7-8895 v3 at 1 / 16 / 36 / 72 threads,
/// 200 µs: shape only (the published unit is ops per run).
#[test]
fn qspinlock_torture_on_e7_8895v3_shape() {
    let c = cfg("xeon-4s-e7-8895v3", 144);
    let t = torture_curve::<QSpinLock>("torture", &c, &[1, 16, 36, 72], 200_000);
    let (v, _) = summary(&t);
    assert_eq!(v, vec![992443, 4082879, 3091320, 2297741]);
    let (pp, pr) = t.published_shape();
    let (sp, sr) = t.simulated_shape();
    assert_eq!((pp, sp), (36, 16), "best points");
    // The miss as documented: last / best outside ±30 % of the published one.
    assert!(((sr / pr) - 1.0).abs() > 0.3, "last / best: {sr} vs {pr}");
}

/// folly's MicroSpinLock and the MCS lock standing in for DistributedMutex on 2 x E5-2680 v4,
/// 1 (the burn's calibration) and 2 threads per lock, 200 µs, under the profile with `set`'s
/// overrides: each lock's `summary`.
fn folly_small_locks(set: &str) -> [(Vec<u64>, Vec<bool>); 2] {
    let mut c = cfg("xeon-2s-e5-2680v4", 56);
    c.profile.set_all(set).unwrap();
    let m = folly_curve::<MicroSpinLock>("microspin", &c, &FOLLY_MICROSPIN_NS, &[1, 2], 200_000);
    let d = folly_curve::<McsLock>("mcs", &c, &FOLLY_DISTRIBUTED_NS, &[1, 2], 200_000);
    [summary(&m), summary(&d)]
}

/// The folly locks on the profile as shipped (model 3).
#[test]
fn folly_small_locks_on_e5_2680v4() {
    assert_eq!(
        folly_small_locks(""),
        [
            (vec![1215000, 2204464], vec![true, true]),
            (vec![1441250, 2342321], vec![true, true]),
        ],
        "microspin, mcs"
    );
}

/// The same under model 2's structural choices (`model=2`: distance classes instead of the
/// measured pair matrix, Shared loads served by a sharer one at a time, a window after a release
/// store, the lowest idle core for a wakeup): the figures the previous model's table reports, to
/// the operation: `--set model=2` restores the structure behind a figure marked as model 2's.
#[test]
fn folly_small_locks_on_e5_2680v4_under_model_2() {
    assert_eq!(
        folly_small_locks("model=2"),
        [
            (vec![1215000, 2215536], vec![true, true]),
            (vec![1441250, 2334821], vec![true, true]),
        ],
        "microspin, mcs"
    );
}
