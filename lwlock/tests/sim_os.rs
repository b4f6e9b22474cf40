//! lwsim's OS model under a lock: lock-holder preemption emerges from time slices. (The model's
//! exact costs, timed sleeps, futex wake-to-run latency, time slices and context switches, and
//! the built-in profiles are the lwsim crate's tests.) Only in `--cfg lwsim` builds
//! (`ci/sim.sh`).
#![cfg(lwsim)]

use lwlock::reference::sweep::Padded;
use lwlock::reference::TasLock;
use lwlock::sync::clock_nanos;
use lwlock::sync::lwsim::{self, Profile, SimConfig};
use lwlock::{Mode, RawLwLock};
use std::sync::{Arc, Mutex};

fn broadwell() -> Profile {
    Profile::builtin("xeon-2s-broadwell").unwrap()
}

/// Lock-holder preemption emerges (nothing scripts it): four threads on two cores (so both
/// cores have a run queue) take a TAS lock for 1 µs at a time; some hold lasts longer than a time
/// slice (CFS's at two runnable threads on a core: max(sched_latency / 2, min_granularity),
/// scaled by 1 + ilog2(min(72, 8))), which only a holder preempted inside its critical section can
/// produce, while the waiters spin through theirs.
#[test]
fn lock_holder_preemption_emerges() {
    let p = broadwell();
    let ns = |k: &str| p.get(k).unwrap() as u64 * 4;
    let slice_ns = (ns("sched_latency_ns") / 2).max(ns("min_granularity_ns"));
    assert_eq!(slice_ns, 12_000_000);
    let longest = Arc::new(Mutex::new(0u64));
    let l2 = longest.clone();
    let r = lwsim::run(SimConfig::new(p, 2), move || {
        let lock = Arc::new(Padded(TasLock::default()));
        let hs: Vec<_> = (0..4)
            .map(|_| {
                let (lock, longest) = (lock.clone(), l2.clone());
                lwlock::sync::thread::spawn(move || {
                    let mut max = 0;
                    while clock_nanos() < 30_000_000 {
                        lock.0.acquire(Mode::Exclusive);
                        let t0 = clock_nanos();
                        lwsim::compute(1_000);
                        let held = clock_nanos() - t0;
                        // SAFETY: acquired above by this thread.
                        unsafe { lock.0.release(Mode::Exclusive) };
                        max = max.max(held);
                        lwsim::compute(1_000);
                    }
                    let mut l = longest.lock().unwrap();
                    *l = (*l).max(max);
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    });
    let longest = *longest.lock().unwrap();
    assert!(r.total().preemptions > 0, "{}", r.summary());
    assert!(
        longest > slice_ns,
        "no hold outlasted a slice ({longest} ns): {}",
        r.summary()
    );
}
