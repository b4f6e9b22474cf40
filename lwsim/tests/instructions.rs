//! Instruction time: `instructions(n)` charges exactly `n` times the profile's `instruction_ns`
//! (whole picoseconds per instruction), nothing else, and nothing at the default of 0.

use lwsim::{CoreCounters, Profile, SimConfig};
use std::sync::{Arc, Mutex};

/// The counters of the window around `f`, run on one simulated thread of `p`.
fn window(p: Profile, f: impl Fn() + Send + Sync + 'static) -> CoreCounters {
    let out = Arc::new(Mutex::new(CoreCounters::default()));
    let o = out.clone();
    let f = Arc::new(f);
    lwsim::run(SimConfig::new(p, 1), move || {
        let (o, f) = (o.clone(), f.clone());
        lwsim::thread::spawn(move || {
            let before = lwsim::totals().unwrap();
            let t0 = lwsim::now_nanos();
            f();
            let d = lwsim::totals().unwrap().since(&before);
            // The clock moved by what the counters say (ns resolution).
            assert_eq!(lwsim::now_nanos() - t0, d.busy_ps / 1000);
            *o.lock().unwrap() = d;
        })
        .join()
        .unwrap();
    });
    let d = out.lock().unwrap().clone();
    d
}

fn broadwell_with(instruction_ns: f64) -> Profile {
    let mut p = Profile::builtin("xeon-2s-broadwell").unwrap();
    p.set("instruction_ns", instruction_ns).unwrap();
    p
}

#[test]
fn charges_n_times_instruction_ns_exactly() {
    let d = window(broadwell_with(0.25), || {
        lwsim::instructions(40);
        lwsim::instructions(3);
        lwsim::instructions(0);
    });
    assert_eq!(d.busy_ps, 43 * 250);
    // Not a memory operation, not a PAUSE, not an OS event.
    assert_eq!((d.ops, d.pauses, d.fills, d.line_wait_ps), (0, 0, 0, 0));
    assert_eq!(
        (d.context_switches(), d.dispatches, d.preemptions, d.yields),
        (0, 0, 0, 0)
    );
}

#[test]
fn rounds_to_whole_picoseconds_per_instruction() {
    // 0.3334 ns -> 333 ps per instruction, the same in one call of 1000 as in 1000 calls of 1.
    let one = window(broadwell_with(0.3334), || lwsim::instructions(1000));
    let many = window(broadwell_with(0.3334), || {
        for _ in 0..1000 {
            lwsim::instructions(1);
        }
    });
    assert_eq!(one.busy_ps, 333_000);
    assert_eq!(many.busy_ps, 333_000);
}

#[test]
fn the_default_is_zero_and_zero_is_free() {
    let base = lwsim::profile::MODEL_KEYS
        .iter()
        .find(|k| k.key == "instruction_ns")
        .expect("instruction_ns is a model key");
    assert_eq!(base.default, 0.0);
    let d = window(broadwell_with(0.0), || lwsim::instructions(1_000_000));
    assert_eq!(d.busy_ps, 0);
}

#[test]
fn outside_a_simulation_it_does_nothing() {
    lwsim::instructions(123);
}
