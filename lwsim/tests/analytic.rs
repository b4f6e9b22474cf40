//! The coherence model against its closed forms: `fetch_add`s on one hot line saturate at one
//! transfer plus one RMW per operation, whatever the core count; on lines of their own they scale
//! linearly at the RMW-hit cost.

use lwsim::atomic::AtomicU64;
use lwsim::profile::cost;
use lwsim::{Profile, Report, SimConfig};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// A value alone on its 64-byte line.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Padded<T>(T);

fn profile(name: &str) -> Profile {
    Profile::builtin(name).unwrap()
}

/// `threads` threads each do `k` `fetch_add`s, on one shared line or on their own padded lines.
/// Returns (ops per virtual second, report).
fn fetch_add_run(p: &Profile, threads: usize, k: u64, own_lines: bool) -> (f64, Report) {
    let report = lwsim::run(SimConfig::new(p.clone(), threads), move || {
        let counters: Arc<Vec<Padded<AtomicU64>>> =
            Arc::new((0..threads).map(|_| Padded(AtomicU64::new(0))).collect());
        let hs: Vec<_> = (0..threads)
            .map(|i| {
                let c = counters.clone();
                lwsim::thread::spawn(move || {
                    let slot = if own_lines { i } else { 0 };
                    for _ in 0..k {
                        c[slot].0.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        let sum: u64 = (0..threads).map(|i| c_load(&counters[i].0)).sum();
        assert_eq!(sum, threads as u64 * k);
    });
    let ops = threads as f64 * k as f64;
    (ops / (report.end_ps as f64 * 1e-12), report)
}

fn c_load(a: &AtomicU64) -> u64 {
    a.load(Ordering::Relaxed)
}

fn within(got: f64, want: f64, tol: f64) -> bool {
    (got - want).abs() <= tol * want
}

/// N cores doing fetch_add on one line saturate at 1 / (transfer + RMW) once N ≥ 2: every
/// operation is an ownership transfer and the line serves one at a time.
#[test]
fn analytic_one_hot_line_saturates_at_one_over_transfer_cost() {
    let p = profile("xeon-2s-broadwell");
    let per_op_ns = (p.ps(cost::TRANSFER_L3) + p.ps(cost::RMW_HIT)) as f64 / 1000.0;
    let want = 1e9 / per_op_ns;
    for n in [2, 4, 8, 16] {
        let (got, r) = fetch_add_run(&p, n, 2000, false);
        println!("one line, {n:>2} cores: {got:.3e} ops/s, formula {want:.3e}");
        assert!(within(got, want, 0.05), "{n} cores: {got} vs {want}");
        assert!(r.total().rfo_from_modified >= (n as u64 * 2000) * 99 / 100);
    }
    // Across sockets (cores 0..36 on a 2 x 18-core machine) the cost sits between the two.
    let (got, _) = fetch_add_run(&p, 36, 500, false);
    let remote = 1e9 / ((p.ps(cost::TRANSFER_REMOTE) + p.ps(cost::RMW_HIT)) as f64 / 1000.0);
    assert!(
        got < want && got > remote * 0.95,
        "{got} not within [{remote}, {want}]"
    );
}

/// N cores each on their own padded line scale linearly: N / RMW-hit cost.
#[test]
fn analytic_own_lines_scale_linearly() {
    let p = profile("xeon-2s-broadwell");
    let hit_ns = p.ps(cost::RMW_HIT) as f64 / 1000.0;
    for n in [1, 2, 8, 32, 64] {
        let (got, r) = fetch_add_run(&p, n, 5000, true);
        let want = n as f64 * 1e9 / hit_ns;
        println!("own lines, {n:>2} cores: {got:.3e} ops/s, formula {want:.3e}");
        assert!(within(got, want, 0.05), "{n} cores: {got} vs {want}");
        assert_eq!(r.total().rfo_from_modified, 0);
    }
}
