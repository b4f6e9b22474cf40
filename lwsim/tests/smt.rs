//! SMT siblings share their core's execution (`model.smt_share`): a thread's computation takes
//! `1 / smt_share` as long while its sibling runs a thread, and the same time as alone when the
//! sibling is idle, when the other thread is on another physical core, or at `smt_share` 1.

use lwsim::atomic::AtomicU32;
use lwsim::{now_nanos, Profile, SimConfig};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

#[repr(align(64))]
struct Padded<T>(T);

/// One socket of `cores` physical cores with `threads` hardware threads each, exact costs (the
/// distance classes: the profile's measured pair matrix is of its own 72 hardware threads).
fn machine(cores: usize, threads: usize, smt_share: f64) -> Profile {
    let mut p = Profile::builtin("xeon-2s-broadwell").unwrap();
    p.set_all("jitter=0,arbitration=0,store_buffer_entries=0,pair_latency=0")
        .unwrap();
    p.set("smt_share", smt_share).unwrap();
    p.sockets = 1;
    p.cores_per_socket = cores;
    p.cores_per_l3 = cores;
    p.threads_per_core = threads;
    p
}

/// How long `lwsim::compute(10_000)` and `lwsim::instructions(1000)` take on a thread whose
/// partner (the second thread, on the second simulated hardware thread) is spinning, and on the
/// same thread after the partner has exited. ns.
fn compute_beside_a_spinner(p: Profile) -> (u64, u64, u64) {
    let out = Arc::new(Mutex::new((0, 0, 0)));
    let o = out.clone();
    lwsim::run(SimConfig::new(p, 2), move || {
        let started = Arc::new(Padded(AtomicU32::new(0)));
        let done = Arc::new(Padded(AtomicU32::new(0)));
        let (s1, d1, o1) = (started.clone(), done.clone(), o.clone());
        let worker = lwsim::thread::spawn(move || {
            while s1.0.load(Ordering::Acquire) == 0 {
                lwsim::pause();
            }
            let t0 = now_nanos();
            lwsim::compute(10_000);
            let t1 = now_nanos();
            lwsim::instructions(1000);
            let t2 = now_nanos();
            d1.0.store(1, Ordering::Release);
            let mut g = o1.lock().unwrap();
            g.0 = t1 - t0;
            g.1 = t2 - t1;
        });
        let (s2, d2) = (started.clone(), done.clone());
        let spinner = lwsim::thread::spawn(move || {
            s2.0.store(1, Ordering::Release);
            while d2.0.load(Ordering::Acquire) == 0 {
                lwsim::pause();
            }
        });
        spinner.join().unwrap();
        worker.join().unwrap();
        // Alone now: a third thread on the machine, its sibling idle.
        let o3 = o.clone();
        lwsim::thread::spawn(move || {
            let t0 = now_nanos();
            lwsim::compute(10_000);
            o3.lock().unwrap().2 = now_nanos() - t0;
        })
        .join()
        .unwrap();
    });
    let r = *out.lock().unwrap();
    r
}

#[test]
fn a_busy_sibling_stretches_computation_by_one_over_smt_share() {
    // One physical core, two hardware threads: the two threads are siblings.
    let (beside, instr, alone) = compute_beside_a_spinner(machine(1, 2, 0.5));
    assert_eq!(
        beside, 20_000,
        "10 us of work beside a running sibling, at half speed"
    );
    let per_instr = machine(1, 2, 0.5).param(lwsim::profile::model::INSTRUCTION_NS);
    assert_eq!(instr, (1000.0 * per_instr / 0.5).round() as u64);
    assert_eq!(alone, 10_000, "the sibling idle: full speed");
    let (beside, _, _) = compute_beside_a_spinner(machine(1, 2, 0.8));
    assert_eq!(beside, 12_500);
}

#[test]
fn other_physical_cores_and_smt_share_one_do_not_stretch() {
    // Two physical cores of one thread each: not siblings.
    let (beside, _, alone) = compute_beside_a_spinner(machine(2, 1, 0.5));
    assert_eq!((beside, alone), (10_000, 10_000));
    // Siblings, but sharing off.
    let (beside, _, _) = compute_beside_a_spinner(machine(1, 2, 1.0));
    assert_eq!(beside, 10_000);
}

#[test]
fn the_default_is_off() {
    let k = lwsim::profile::MODEL_KEYS
        .iter()
        .find(|k| k.key == "smt_share")
        .expect("smt_share is a model key");
    assert_eq!(k.default, 1.0);
}
