//! `published_curves`: the simulator held against published lock curves, each on the profile of
//! the machine that published it (`lwlock::reference::published`; the table and its reading:
//! `docs/results.md`, *Held against published curves*).
//!
//! ```text
//! RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim \
//!   cargo run --release -p lwlock --example published_curves -- [--set residency_after_store=0]
//! ```
//!
//! Options: `--curves LIST` (of `folly-microspin`, `folly-mcs`, `rwspin-100`, `rwspin-10`,
//! `rwspin-1`, `rwspin-0` (read-only), `torture`; default all), `--set K=V[,K=V]` (override profile keys, e.g. a
//! structural option), `--seed N` (default 0), `--duration-us N` (every point's virtual window;
//! defaults: folly 1000, rwspin 200, torture 1000), `--threads LIST` (only these rows).
//! Bad input exits 2 naming the argument.

#[cfg(not(lwsim))]
fn main() {
    eprintln!(
        "published_curves runs only on the simulator: build with \
         RUSTFLAGS=\"--cfg lwsim\" CARGO_TARGET_DIR=target/lwsim (see the module docs)."
    );
    std::process::exit(2);
}

#[cfg(lwsim)]
fn main() {
    use lwlock::reference::published::*;
    use lwlock::reference::{McsLock, MicroSpinLock, QSpinLock, RwSpinLock};
    use lwlock::sync::lwsim::{Profile, SimConfig};

    let die = |m: String| -> ! {
        eprintln!("published_curves: {m}");
        std::process::exit(2)
    };
    let all = [
        "folly-microspin",
        "folly-mcs",
        "rwspin-100",
        "rwspin-10",
        "rwspin-1",
        "rwspin-0",
        "torture",
    ];
    let mut curves: Vec<String> = all.iter().map(|s| s.to_string()).collect();
    let mut set: Option<String> = None;
    let mut seed = 0u64;
    let mut duration: Option<u64> = None;
    let mut only: Option<Vec<usize>> = None;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let Some(v) = args.get(i + 1).cloned() else {
            die(format!("{a}: missing its value"))
        };
        i += 2;
        let num = |s: &str| -> u64 {
            s.trim()
                .parse()
                .unwrap_or_else(|_| die(format!("{a}: {s:?} is not a number")))
        };
        match a {
            "--curves" => {
                curves = v.split(',').map(|s| s.trim().to_string()).collect();
                for c in &curves {
                    if !all.contains(&c.as_str()) {
                        die(format!(
                            "--curves: unknown curve {c:?} (have: {})",
                            all.join(", ")
                        ));
                    }
                }
            }
            "--set" => set = Some(v),
            "--seed" => seed = num(&v),
            "--duration-us" => duration = Some(num(&v) * 1000),
            "--threads" => only = Some(v.split(',').map(|s| num(s) as usize).collect()),
            _ => die(format!(
                "unknown option {a} (see the docs of examples/published_curves.rs)"
            )),
        }
    }
    let cfg = |profile: &str, cores: usize| -> SimConfig {
        let mut p = Profile::builtin(profile).unwrap_or_else(|e| die(e));
        if let Some(spec) = &set {
            p.set_all(spec)
                .unwrap_or_else(|e| die(format!("--set: {e}")));
        }
        SimConfig::new(p, cores).seed(seed)
    };
    let pick = |rows: &[usize]| -> Vec<usize> {
        rows.iter()
            .copied()
            .filter(|n| only.as_ref().map_or(true, |o| o.contains(n)))
            .collect()
    };
    println!(
        "# published curves, seed {seed}{}",
        set.as_ref()
            .map(|s| format!(", overrides {s}"))
            .unwrap_or_default()
    );
    for c in &curves {
        let t0 = std::time::Instant::now();
        let curve = match c.as_str() {
            "folly-microspin" | "folly-mcs" => {
                let cf = cfg("xeon-2s-e5-2680v4", 56);
                let d = duration.unwrap_or(1_000_000);
                let rows = pick(&FOLLY_THREADS);
                if c == "folly-microspin" {
                    folly_curve::<MicroSpinLock>(
                        "folly_microspin (folly::MicroSpinLock) on xeon-2s-e5-2680v4",
                        &cf,
                        &FOLLY_MICROSPIN_NS,
                        &rows,
                        d,
                    )
                } else {
                    folly_curve::<McsLock>(
                        "folly_distributedmutex, the MCS lock standing in for it, on xeon-2s-e5-2680v4",
                        &cf,
                        &FOLLY_DISTRIBUTED_NS,
                        &rows,
                        d,
                    )
                }
            }
            "rwspin-100" | "rwspin-10" | "rwspin-1" | "rwspin-0" => {
                let cf = cfg("xeon-2s-e5-2660", 32);
                let d = duration.unwrap_or(200_000);
                let rows = pick(&RWSPIN_THREADS);
                let (permille, published) = match c.as_str() {
                    "rwspin-100" => (1000, &RWSPIN_ALL_WRITE),
                    "rwspin-10" => (100, &RWSPIN_10PCT),
                    "rwspin-1" => (10, &RWSPIN_1PCT),
                    _ => (0, &RWSPIN_READS),
                };
                rwspin_curve::<RwSpinLock>(
                    &format!(
                        "folly_rwspin (folly::RWSpinLock), {} % writes, on xeon-2s-e5-2660 (aggregate ops/s)",
                        permille as f64 / 10.0
                    ),
                    &cf,
                    permille,
                    published,
                    &rows,
                    d,
                )
            }
            _ => {
                let cf = cfg("xeon-4s-e7-8895v3", 144);
                let d = duration.unwrap_or(1_000_000);
                torture_curve::<QSpinLock>(
                    "stock qspinlock under locktorture on xeon-4s-e7-8895v3 (published: ops per run; simulated: ops/s; shape only)",
                    &cf,
                    &pick(&TORTURE_THREADS),
                    d,
                )
            }
        };
        println!("\n{}", curve.table());
        println!("({c}: {:.1} s)", t0.elapsed().as_secs_f64());
    }
}
