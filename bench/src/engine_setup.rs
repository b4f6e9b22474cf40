//! The engine a sweep runs on, resolved from `--engine`, `--platform`, `--cores`, `--set`,
//! `--sensitivity` and `--jobs`: the real one, or a simulated machine with its overrides and the
//! machines of its sensitivity arms. Bad input exits 2 naming the argument.

use crate::args::{opt_list, usage_error, Args, LockSel};
use lwharness::engine::{self, Engine, SimSetup};

/// The simulated machine of a sweep, with its overrides and the machines of its sensitivity
/// arms (`--engine sim`; the real engine needs no setting: [`check_engine`] returns `None`).
#[derive(Clone, Debug)]
pub struct SimSweep {
    /// The machine (with the `--set` overrides applied).
    pub setup: SimSetup,
    /// The `--set` overrides, in order.
    pub overrides: Vec<crate::sensitivity::Override>,
    /// The `--sensitivity` keys.
    pub sensitivity: Vec<crate::sensitivity::SensKey>,
    /// The machines the sweep runs on: `setup` first, then each sensitivity arm that runs
    /// (the keys' [`crate::sensitivity::Arm::Run`] index into this list).
    pub arms: Vec<SimSetup>,
    /// OS threads running simulated trials side by side.
    pub jobs: usize,
}

/// Resolves the engine settings, exiting 2 (naming the argument) on bad input: `--engine sim`
/// in a build without the simulator backend (or `real` in one with it), an unknown platform, a
/// malformed profile file, more `--cores` than the profile has, a simulator-only option with
/// `--engine real`, or a lock the simulator cannot run. `None`: the real engine.
pub fn check_engine(args: &Args) -> Option<SimSweep> {
    if args.engine == Engine::Real {
        if engine::SIM_BACKEND {
            usage_error(
                "--engine <ENGINE>",
                "real",
                "this lwbench is the simulator build (--cfg lwsim): its atomics consult the \
                 simulator, so it runs only --engine sim; build without RUSTFLAGS=\"--cfg lwsim\" \
                 for the real engine",
            );
        }
        for (name, given) in [
            ("--platform <PLATFORM>", args.platform.clone()),
            ("--cores <CORES>", args.cores.map(|c| c.to_string())),
            ("--set <KEY=VALUE[,KEY=VALUE]>", opt_list(&args.set)),
            ("--sensitivity <KEY[,KEY]>", opt_list(&args.sensitivity)),
        ] {
            if let Some(v) = given {
                usage_error(name, &v, "applies only to --engine sim");
            }
        }
        if args.interleave && args.trials() < 2 {
            usage_error(
                "--interleave",
                "1 trial",
                "interleaves the trials of the locks compared at a point: it needs --trials 2 \
                 or more",
            );
        }
        if let Some(n) = args.jobs.filter(|&n| n > 1) {
            usage_error(
                "--jobs <JOBS>",
                &n.to_string(),
                "the real engine measures one trial at a time (parallel trials would compete \
                 for this machine's cores); --jobs applies to --engine sim",
            );
        }
        return None;
    }
    if args.interleave {
        usage_error(
            "--interleave",
            "--engine sim",
            "a simulated trial is deterministic and runs on a machine of its own: there is no \
             drift to interleave against (--interleave applies to the real engine)",
        );
    }
    if !engine::SIM_BACKEND {
        usage_error(
            "--engine <ENGINE>",
            "sim",
            &format!(
                "this lwbench was built without the simulator backend; build and run it with: {}",
                engine::SIM_COMMAND
            ),
        );
    }
    for s in &args.locks {
        if let LockSel::One(k) = s {
            if !k.simulatable() {
                usage_error(
                    "--locks <LOCKS>",
                    k.name(),
                    &format!(
                        "{} cannot run on the simulator (--engine sim): its atomics and sleeps are \
                         its own, not lwlock::sync's, so the simulated machine would not see them",
                        k.name()
                    ),
                );
            }
        }
    }
    Some(sim_sweep(args))
}

#[cfg(lwsim)]
fn sim_sweep(args: &Args) -> SimSweep {
    let name = args
        .platform
        .clone()
        .unwrap_or_else(|| engine::DEFAULT_PLATFORM.to_string());
    let profile = engine::Profile::load(&name)
        .unwrap_or_else(|e| usage_error("--platform <PLATFORM>", &name, &e));
    let hw = profile.hw_threads();
    let cores = args.cores.unwrap_or(hw);
    if cores > hw {
        usage_error(
            "--cores <CORES>",
            &cores.to_string(),
            &format!("platform {} has {hw} hardware threads", profile.name),
        );
    }
    let mut overrides = Vec::new();
    let mut profile = profile;
    for spec in &args.set {
        // Recorded with the profile's value before the override.
        let applied = profile
            .set_all(spec)
            .unwrap_or_else(|e| usage_error("--set <KEY=VALUE[,KEY=VALUE]>", spec, &e));
        overrides.extend(applied.into_iter().map(|(key, value, profile)| {
            crate::sensitivity::Override {
                key,
                value,
                profile,
            }
        }));
    }
    let setup = SimSetup {
        platform: profile.name.clone(),
        cores,
        seed: args.seed,
        warmup: args.warmup(),
        profile,
    };
    let (sensitivity, arms) =
        crate::sensitivity::plan(&setup, &args.sensitivity).unwrap_or_else(|e| {
            usage_error("--sensitivity <KEY[,KEY]>", &args.sensitivity.join(","), &e)
        });
    let mut jobs = args.jobs.unwrap_or_else(crate::jobs::default_jobs);
    for var in ["LWSIM_LINES", "LWSIM_TRACE"] {
        if jobs > 1 && std::env::var_os(var).is_some() {
            // Each simulation prints its line profile or trace to stderr: one at a time keeps
            // them whole and in sweep order.
            eprintln!("note: {var} is set: the simulations run one at a time (--jobs 1)");
            jobs = 1;
        }
    }
    SimSweep {
        setup,
        overrides,
        sensitivity,
        arms,
        jobs,
    }
}

#[cfg(not(lwsim))]
fn sim_sweep(_args: &Args) -> SimSweep {
    unreachable!("checked: no simulator backend in this build")
}
