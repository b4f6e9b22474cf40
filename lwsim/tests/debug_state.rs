//! `debug_state` describes the scheduler (for a stuck spinlock's report) inside a simulation and
//! is `None` outside one.

use lwsim::{Profile, SimConfig};
use std::sync::{Arc, Mutex};

#[test]
fn names_every_running_task_and_core_inside_a_simulation_only() {
    assert!(lwsim::debug_state().is_none());
    let got = Arc::new(Mutex::new(String::new()));
    let g = got.clone();
    lwsim::run(
        SimConfig::new(Profile::builtin("xeon-2s-broadwell").unwrap(), 2),
        move || {
            let g = g.clone();
            lwsim::thread::spawn(move || {
                lwsim::compute(1000);
                *g.lock().unwrap() = lwsim::debug_state().unwrap();
            })
            .join()
            .unwrap();
        },
    );
    let s = got.lock().unwrap().clone();
    assert!(s.starts_with("lwsim state at "), "{s}");
    assert!(s.contains("  task 1: clock 0.001 ms"), "{s}");
    assert!(
        s.contains("core Some(0)") && s.contains("  core 0: running Some(1)"),
        "{s}"
    );
}
