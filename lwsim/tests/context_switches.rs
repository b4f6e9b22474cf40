//! Context switches counted as Linux counts them (`__schedule` in kernel/sched/core.c: `nvcsw`
//! when the leaving thread blocks, `nivcsw` when it is still runnable, nothing when the same
//! thread goes on), beside the run-queue dispatches the simulator charges `context_switch` for.

use lwsim::atomic::AtomicU32;
use lwsim::{Profile, SimConfig};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The profile with fixed latencies, so every run is exact.
fn broadwell() -> Profile {
    let mut p = Profile::builtin("xeon-2s-broadwell").unwrap();
    p.set_all("jitter=0,arbitration=0,store_buffer_entries=0")
        .unwrap();
    p
}

/// A client that blocks `k` times on a machine with free cores is woken each time onto an idle
/// core: never dispatched from a run queue, yet each block is a voluntary switch, whether a
/// timed sleep, an idle wait (a backend waiting for its client) or a FUTEX_WAIT that slept.
#[test]
fn each_block_on_an_idle_machine_is_a_voluntary_switch() {
    let k = 7u64;
    for how in ["sleep", "idle", "futex"] {
        let word = Arc::new(AtomicU32::new(0));
        let w = word.clone();
        let r = lwsim::run(SimConfig::new(broadwell(), 4), move || {
            let w2 = w.clone();
            let t = lwsim::thread::spawn(move || {
                for i in 0..k {
                    lwsim::compute(5_000);
                    match how {
                        "sleep" => lwsim::sleep_micros(50),
                        "idle" => lwsim::idle_nanos(50_000),
                        _ => {
                            // Sleep until the supervisor's i + 1st wake.
                            while w2.load(Ordering::Acquire) == i as u32 {
                                lwsim::futex_wait(&w2, i as u32);
                            }
                        }
                    }
                }
            });
            if how == "futex" {
                lwsim::settle();
                for i in 0..k {
                    lwsim::sleep_micros(100);
                    w.store(i as u32 + 1, Ordering::Release);
                    lwsim::futex_wake(&w, 1);
                }
            }
            t.join().unwrap();
        });
        let t = r.total();
        let s = r.summary();
        match how {
            "sleep" => assert_eq!(t.sleeps, k, "{s}"),
            "futex" => assert_eq!(t.futex_sleeps, k, "{how}: {s}"),
            _ => {}
        }
        assert_eq!(t.voluntary_switches, k, "{how}: {s}");
        assert_eq!(t.involuntary_switches, 0, "{how}: {s}");
        assert_eq!(t.context_switches(), k, "{how}: {s}");
        assert_eq!((t.dispatches, t.preemptions), (0, 0), "{how}: {s}");
        // The supervisor, which has no core, counts none of its own sleeps.
        assert_eq!(r.supervisor.voluntary_switches, 0, "{how}: {s}");
    }
}

/// Two compute-bound threads sharing one core: each slice end with the other queued is a
/// preemption, an involuntary switch and a dispatch, exactly as before; the one thread that
/// exits first hands the core over (a dispatch, but no switch counted for the exiting thread).
#[test]
fn preemptions_at_slice_ends_are_involuntary_switches() {
    let r = lwsim::run(SimConfig::new(broadwell(), 1), || {
        let hs: Vec<_> = (0..2)
            .map(|_| {
                lwsim::thread::spawn(|| {
                    for _ in 0..1000 {
                        lwsim::compute(100_000);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    });
    let t = r.total();
    let s = r.summary();
    assert!(t.preemptions > 10, "{s}");
    assert_eq!(t.involuntary_switches, t.preemptions, "{s}");
    assert_eq!(t.voluntary_switches, 0, "{s}");
    assert_eq!(t.dispatches, t.preemptions + 1, "{s}");
    assert_eq!(
        t.context_switches(),
        t.voluntary_switches + t.involuntary_switches,
        "{s}"
    );
}

/// Threads that both block and get preempted, more of them than cores: every block counts as
/// voluntary, every preemption and every yield that ran another thread as involuntary, and
/// their sum is the Linux count; dispatches are a different number.
#[test]
fn mixed_blocks_preemptions_and_yields_add_up() {
    let r = lwsim::run(SimConfig::new(broadwell(), 2).seed(5), || {
        let hs: Vec<_> = (0..5)
            .map(|i| {
                lwsim::thread::spawn(move || {
                    for j in 0..12 {
                        for _ in 0..30 {
                            lwsim::compute(1_000_000); // 30 ms a round, in 1 ms steps
                        }
                        match (i + j) % 3 {
                            0 => lwsim::sleep_micros(200),
                            1 => lwsim::idle_nanos(100_000),
                            _ => lwsim::thread::yield_now(),
                        }
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    });
    let t = r.total();
    let s = r.summary();
    // 5 threads x 12 rounds: the rounds whose (i + j) % 3 is 0 or 1 block.
    let blocks: u64 = (0..5u64)
        .map(|i| (0..12u64).filter(|j| (i + j) % 3 != 2).count() as u64)
        .sum();
    assert_eq!(t.voluntary_switches, blocks, "{s}");
    assert!(t.involuntary_switches >= t.preemptions, "{s}");
    assert!(t.preemptions > 0, "{s}");
    assert_eq!(t.context_switches(), blocks + t.involuntary_switches, "{s}");
    assert_ne!(t.context_switches(), t.dispatches, "{s}");
}
