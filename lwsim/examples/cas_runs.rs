//! This machine against its `this-machine` profile, on two figures of one hot line: the CAS
//! attempts per successful increment of a 2-thread CAS loop, and the run lengths of a 2-thread
//! `fetch_add` race (how many consecutive increments one thread makes before the other gets the
//! line). The same code runs twice: on real threads (outside a simulation lwsim's atomics are
//! std's) and on the simulator with the profile. Not a CI check: run it on a quiet machine, in
//! the same session as the calibration the profile came from.
//!
//! ```text
//! cargo run --release -p lwsim --example cas_runs [-- --profile NAME|PATH] [--trials N] [--ops N] [--set KEY=VALUE,...]
//!     [--fit-residency | --fit-spread] [--save-real FILE | --real FILE]
//! ```
//!
//! Run lengths: each thread records the values its `fetch_add`s returned; merged, the values
//! 0, 1, 2, ... name their thread, and a run is a maximal stretch of consecutive values of one
//! thread. Only the stretch in which both threads were incrementing counts (from the later first
//! value to the earlier last one), for the CAS loop too. Each figure is the median over the trials, with the lowest and
//! highest trial; the verdict is the simulated median within ±25 % of the real one.
//!
//! `--fit-residency` calibrates the profile's line residency on the real CAS-loop figure (see
//! `fit_residency`) before the table: a profile calibrated on another host keeps its residency in
//! nanoseconds, which means nothing on a host whose RMWs cost five times as much. `--fit-spread`
//! calibrates the residency window's spread as well, on the real share of runs of length 1
//! (`fit_spread`); the run-length median and p90 are then the checks.
//!
//! `--save-real FILE` writes the real trials' figures; `--real FILE` reads them instead of
//! measuring, so that fits and simulations can be repeated on one quiet-machine measurement
//! (the simulated side is deterministic and does not need a quiet machine). A real trial in which
//! the two threads never overlapped is run again, and the program stops with a message when a
//! loaded machine keeps them apart.

use lwsim::atomic::AtomicU64;
use lwsim::{Profile, SimConfig};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// A value alone on its 64-byte line.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Padded<T>(T);

const THREADS: usize = 2;

/// Runs `f` on `THREADS` threads, simulated inside a simulation and real outside, and returns
/// their results.
fn on_threads<T, F>(f: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn() -> T + Clone + Send + 'static,
{
    if lwsim::machine::active() {
        let hs: Vec<_> = (0..THREADS)
            .map(|_| lwsim::thread::spawn(f.clone()))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    } else {
        let hs: Vec<_> = (0..THREADS)
            .map(|_| std::thread::spawn(f.clone()))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    }
}

/// Both threads arrive before either starts (a spin on a start gate).
fn start_gate(go: &AtomicU64) {
    go.fetch_add(1, Ordering::AcqRel);
    while go.load(Ordering::Acquire) < THREADS as u64 {
        lwsim::pause();
        if !lwsim::machine::active() {
            std::hint::spin_loop();
        }
    }
}

/// Each thread makes `ops` increments with a load + CAS loop (the failed CAS's value is the next
/// expected one, as `fetch_update` does) and records, per success, the value it wrote and its
/// attempts; returns CAS attempts per success over the stretch in which both threads were
/// incrementing (NaN if they never overlapped).
fn cas_loop(ops: u64) -> f64 {
    let word = Arc::new(Padded(AtomicU64::new(0)));
    let go = Arc::new(Padded(AtomicU64::new(0)));
    let seen: Vec<Vec<(u64, u32)>> = on_threads({
        let (word, go) = (word.clone(), go.clone());
        move || {
            let mut seen = Vec::with_capacity(ops as usize);
            start_gate(&go.0);
            for _ in 0..ops {
                let mut cur = word.0.load(Ordering::Relaxed);
                let mut attempts = 0u32;
                loop {
                    attempts += 1;
                    match word.0.compare_exchange(
                        cur,
                        cur + 1,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => break,
                        Err(now) => cur = now,
                    }
                }
                seen.push((cur, attempts));
            }
            seen
        }
    });
    assert_eq!(word.0.load(Ordering::Relaxed), ops * THREADS as u64);
    let from = seen.iter().map(|v| v[0].0).max().unwrap();
    let to = seen.iter().map(|v| v.last().unwrap().0).min().unwrap();
    let (mut n, mut attempts) = (0u64, 0u64);
    for &(v, a) in seen.iter().flatten() {
        if (from..=to).contains(&v) {
            n += 1;
            attempts += a as u64;
        }
    }
    if from >= to {
        return f64::NAN;
    }
    attempts as f64 / n as f64
}

/// Each thread makes `ops` `fetch_add`s and records what they returned; returns the run lengths.
fn fetch_add_runs(ops: u64) -> Vec<u64> {
    let word = Arc::new(Padded(AtomicU64::new(0)));
    let go = Arc::new(Padded(AtomicU64::new(0)));
    let seen: Vec<Vec<u64>> = on_threads({
        let (word, go) = (word.clone(), go.clone());
        move || {
            let mut seen = Vec::with_capacity(ops as usize);
            start_gate(&go.0);
            for _ in 0..ops {
                seen.push(word.0.fetch_add(1, Ordering::Relaxed));
            }
            seen
        }
    });
    let total = ops as usize * THREADS;
    let mut owner = vec![usize::MAX; total];
    for (t, vals) in seen.iter().enumerate() {
        for &v in vals {
            owner[v as usize] = t;
        }
    }
    let from = seen.iter().map(|v| v[0]).max().unwrap() as usize;
    let to = seen.iter().map(|v| *v.last().unwrap()).min().unwrap() as usize;
    let mut runs = Vec::new();
    if from >= to {
        return runs; // the threads never overlapped (one was descheduled throughout)
    }
    let mut len = 0u64;
    for i in from..=to {
        if i > from && owner[i] != owner[i - 1] {
            runs.push(len);
            len = 0;
        }
        len += 1;
    }
    runs.push(len);
    runs
}

fn quantile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// One trial's figures.
#[derive(Clone, Copy, Debug)]
struct Figures {
    cas_per_success: f64,
    run_median: f64,
    run_p90: f64,
    /// The share of runs of length 1.
    ones: f64,
}

/// One column of the report.
type Column = fn(&Figures) -> f64;

/// One trial, or `None` where the two threads never incremented at the same time (one was
/// descheduled throughout: a loaded machine), so that there is no figure to report.
fn trial(ops: u64) -> Option<Figures> {
    let cas = cas_loop(ops);
    let runs = fetch_add_runs(ops);
    if cas.is_nan() || runs.is_empty() {
        return None;
    }
    let ones = runs.iter().filter(|&&r| r == 1).count() as f64 / runs.len() as f64;
    let mut r: Vec<f64> = runs.iter().map(|&x| x as f64).collect();
    Some(Figures {
        cas_per_success: cas,
        run_median: quantile(&mut r, 0.5),
        run_p90: quantile(&mut r, 0.9),
        ones,
    })
}

/// `trials` real trials; a trial in which the threads never overlapped is run again, at most
/// `trials` more times in all, then the program stops naming the cause.
fn real_trials(trials: usize, ops: u64) -> Vec<Figures> {
    let mut out = Vec::new();
    let mut missed = 0;
    while out.len() < trials {
        match trial(ops) {
            Some(f) => out.push(f),
            None if missed < trials => missed += 1,
            None => {
                eprintln!(
                    "cas_runs: in {} trials the two threads never ran at the same time (a \
                     loaded machine: the load average is in /proc/loadavg); run it on a quiet one",
                    missed + 1
                );
                std::process::exit(1);
            }
        }
    }
    out
}

const REAL_HEADER: &str = "cas_per_success,run_median,run_p90,ones";

/// Reads the real trials `--save-real` wrote (a header and one line per trial).
fn load_real(path: &str) -> Result<Vec<Figures>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("--real {path}: {e}"))?;
    let mut lines = text.lines();
    if lines.next() != Some(REAL_HEADER) {
        return Err(format!(
            "--real {path}: not a file --save-real wrote (its header is {REAL_HEADER})"
        ));
    }
    let v: Vec<Figures> = lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let x: Vec<f64> = l
                .split(',')
                .map(|f| f.trim().parse::<f64>())
                .collect::<Result<_, _>>()
                .map_err(|e| format!("--real {path}: bad line {l:?}: {e}"))?;
            match x[..] {
                [c, m, p, o] => Ok(Figures {
                    cas_per_success: c,
                    run_median: m,
                    run_p90: p,
                    ones: o,
                }),
                _ => Err(format!("--real {path}: bad line {l:?}")),
            }
        })
        .collect::<Result<_, _>>()?;
    if v.is_empty() {
        return Err(format!("--real {path}: no trials"));
    }
    Ok(v)
}

/// (median, lowest, highest) of one column of the trials.
fn spread(trials: &[Figures], col: Column) -> [f64; 3] {
    let mut v: Vec<f64> = trials.iter().map(col).collect();
    let med = quantile(&mut v, 0.5);
    [med, v[0], v[v.len() - 1]]
}

/// Calibrates `residency_ns` on this machine: the residency at which the simulated 2-thread
/// CAS loop needs the CAS attempts per success measured on real threads (`target`), found by
/// bisection over 0..=200 ns to 0.25 ns (the simulated figure falls as the residency grows: an
/// owner that keeps the line longer finishes more of its CAS loops before the other core's
/// request takes it). Sets the profile's value and returns the simulated trials at it; the
/// run-length rows of the table that follows are then a check the fit did not aim at.
fn fit_residency(
    profile: &mut Profile,
    target: f64,
    simulate: &dyn Fn(&Profile) -> Vec<Figures>,
) -> Vec<Figures> {
    let at = |profile: &mut Profile, r: f64| -> Vec<Figures> {
        profile
            .set("residency_ns", r)
            .expect("residency_ns is a model key");
        simulate(profile)
    };
    let cas = |sim: &[Figures]| spread(sim, |t| t.cas_per_success)[0];
    let (mut lo, mut hi) = (0.0f64, 200.0f64);
    if cas(&at(profile, lo)) <= target {
        hi = lo;
    } else if cas(&at(profile, hi)) >= target {
        lo = hi;
    }
    while hi - lo > 0.25 {
        let mid = (lo + hi) / 2.0;
        if cas(&at(profile, mid)) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    at(profile, (lo + hi) / 2.0)
}

/// Calibrates `residency_spread` too: for each spread 0, 0.1, ..., 1 the residency is fitted as
/// [`fit_residency`] does, and the spread kept is the one whose simulated share of runs of
/// length 1 is nearest the real one (`ones`). Prints the grid. The run-length median and p90
/// in the table that follows are then checks the fit did not aim at.
fn fit_spread(
    profile: &mut Profile,
    target: f64,
    ones: f64,
    simulate: &dyn Fn(&Profile) -> Vec<Figures>,
) {
    println!("residency_spread  residency_ns  CAS/success  runs of length 1 (real {ones:.3})");
    let mut best = (f64::INFINITY, 0.0, 0.0);
    for i in 0..=10 {
        let s = i as f64 / 10.0;
        profile
            .set("residency_spread", s)
            .expect("residency_spread is a model key");
        let sim = fit_residency(profile, target, simulate);
        let r = profile.get("residency_ns").expect("a model key");
        let (cas, got) = (
            spread(&sim, |t| t.cas_per_success)[0],
            spread(&sim, |t| t.ones)[0],
        );
        println!("{s:>16.1}  {r:>12.2}  {cas:>11.3}  {got:>8.3}");
        if (got - ones).abs() < best.0 {
            best = ((got - ones).abs(), s, r);
        }
    }
    profile
        .set("residency_spread", best.1)
        .expect("a model key");
    profile.set("residency_ns", best.2).expect("a model key");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let profile_name = arg("--profile").unwrap_or_else(|| "this-machine".into());
    let trials: usize = arg("--trials").map_or(7, |s| s.parse().expect("--trials N"));
    let ops: u64 = arg("--ops").map_or(1_000_000, |s| s.parse().expect("--ops N"));
    let mut profile = Profile::load(&profile_name).unwrap_or_else(|e| panic!("{e}"));
    if let Some(spec) = arg("--set") {
        if let Err(e) = profile.set_all(&spec) {
            eprintln!("cas_runs: --set {e}");
            std::process::exit(2);
        }
    }

    // The real figures need both threads on a CPU at once: a loaded machine time-slices them.
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let real: Vec<Figures> = match arg("--real") {
        Some(path) => load_real(&path).unwrap_or_else(|e| {
            eprintln!("cas_runs: {e}");
            std::process::exit(2)
        }),
        None => real_trials(trials, ops),
    };
    if let Some(path) = arg("--save-real") {
        let mut text = format!("{REAL_HEADER}\n");
        for t in &real {
            text += &format!(
                "{},{},{},{}\n",
                t.cas_per_success, t.run_median, t.run_p90, t.ones
            );
        }
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("--save-real {path}: {e}"));
    }
    // The simulation is deterministic per seed; a smaller count keeps it to seconds.
    let sim_ops = ops.min(50_000);
    let simulate = |profile: &Profile| -> Vec<_> {
        (0..trials as u64)
            .map(|seed| {
                let out = Arc::new(Mutex::new(None));
                let o = out.clone();
                let cfg = SimConfig::new(profile.clone(), THREADS).seed(seed);
                lwsim::run(cfg, move || {
                    *o.lock().unwrap() = Some(trial(sim_ops).expect("simulated threads overlap"));
                });
                let r = out.lock().unwrap().take().unwrap();
                r
            })
            .collect()
    };
    let target = spread(&real, |t| t.cas_per_success)[0];
    if args.iter().any(|a| a == "--fit-spread") {
        fit_spread(
            &mut profile,
            target,
            spread(&real, |t| t.ones)[0],
            &simulate,
        );
    } else if args.iter().any(|a| a == "--fit-residency") {
        fit_residency(&mut profile, target, &simulate);
    }
    if args
        .iter()
        .any(|a| a == "--fit-spread" || a == "--fit-residency")
    {
        let (r, sp) = (
            profile.get("residency_ns").expect("a model key"),
            profile.get("residency_spread").expect("a model key"),
        );
        println!(
            "fitted: residency_ns {r:.2}, residency_spread {sp:.1} (real CAS attempts per success \
             {target:.3}); pass them on with --set residency_ns={r:.2},residency_spread={sp:.1}"
        );
    }
    let sim = simulate(&profile);

    match arg("--real") {
        Some(path) => println!(
            "2 threads, one line; real: {} trials read from {path} (measured earlier; its ops \
             per thread and load average are not in the file); simulated ({}, seeds \
             0..{trials}): {sim_ops} ops per thread",
            real.len(),
            profile.name
        ),
        None => {
            println!("load average before: {}", load.trim());
            println!(
                "2 threads, one line; real: {trials} trials x {ops} ops per thread; \
                 simulated ({}, seeds 0..{trials}): {sim_ops} ops per thread",
                profile.name
            );
        }
    }
    println!("figure                       real median (min-max)     lwsim median (min-max)   sim/real  ±25 %");
    let mut all_within = true;
    let rows: [(&str, Column, bool); 4] = [
        ("CAS attempts per success", |t| t.cas_per_success, true),
        ("fetch_add run, median", |t| t.run_median, true),
        ("fetch_add run, p90", |t| t.run_p90, true),
        ("runs of length 1 (share)", |t| t.ones, false),
    ];
    for (name, col, judged) in rows {
        let (r, s) = (spread(&real, col), spread(&sim, col));
        let ratio = s[0] / r[0];
        let within = (ratio - 1.0).abs() <= 0.25;
        let verdict = if !judged {
            "-"
        } else if within {
            "within"
        } else {
            all_within = false;
            "OUTSIDE"
        };
        println!(
            "{name:<26} {:>8.3} ({:.3}-{:.3})  {:>12.3} ({:.3}-{:.3})  {ratio:>8.2}  {verdict}",
            r[0], r[1], r[2], s[0], s[1], s[2]
        );
    }
    println!(
        "verdict: {}",
        if all_within {
            "the profile reproduces this machine's hot-line figures within ±25 %"
        } else {
            "outside ±25 % on at least one figure (see OUTSIDE)"
        }
    );
}
