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

/// One waiter against a holder that keeps the lock `hold_ns` (virtual), on `cores` cores with
/// `threads` threads (one holder, then waiters that arrive 1 µs into its hold and each take the
/// lock once): the run's `sched_yield` calls and futex sleeps.
fn waiter_yields_and_sleeps<L: RawLwLock + Default + Send + Sync + 'static>(
    cores: usize,
    threads: usize,
    hold_ns: u64,
) -> (u64, u64) {
    let r = lwsim::run(SimConfig::new(broadwell(), cores), move || {
        let lock = Arc::new(L::default());
        let held = Arc::new(lwlock::sync::AtomicBool::new(false));
        let holder = {
            let (lock, held) = (lock.clone(), held.clone());
            lwlock::sync::thread::spawn(move || {
                lock.acquire(Mode::Exclusive);
                held.store(true, lwlock::sync::Ordering::Release);
                lwsim::compute(hold_ns);
                // SAFETY: acquired above by this thread.
                unsafe { lock.release(Mode::Exclusive) };
            })
        };
        let waiters: Vec<_> = (1..threads)
            .map(|_| {
                let (lock, held) = (lock.clone(), held.clone());
                lwlock::sync::thread::spawn(move || {
                    while !held.load(lwlock::sync::Ordering::Acquire) {
                        lwsim::compute(100);
                    }
                    lwsim::compute(1_000);
                    lock.acquire(Mode::Exclusive);
                    // SAFETY: acquired above by this thread.
                    unsafe { lock.release(Mode::Exclusive) };
                })
            })
            .collect();
        holder.join().unwrap();
        for w in waiters {
            w.join().unwrap();
        }
    });
    let t = r.total();
    (t.yields, t.futex_sleeps + t.sleeps)
}

/// The empty-yield rule (`lwlock::EmptyYield`) fires when the yield finds the CPU idle: one
/// waiter on its own core behind a 200 µs hold yields once and then sleeps, where the adaptive
/// policy yields its seven rounds first (both then sleep the same number of times: the hold
/// outlasts the spin). On one core with the holder preempted it fires too, and rightly: CFS's
/// `sched_yield` does not switch to a task whose vruntime is more than the wakeup granularity
/// ahead (a holder that has just used its slice), so the yield comes back at once and more
/// yields would not run the holder either; the sleep does.
#[test]
fn empty_yield_rule_fires_when_the_yield_runs_nothing() {
    use lwlock::{RawAdaptiveLwLock, RawEmptyYieldLwLock};
    let hold = 200_000;
    let (y_adaptive, s_adaptive) = waiter_yields_and_sleeps::<RawAdaptiveLwLock>(2, 2, hold);
    let (y_empty, s_empty) = waiter_yields_and_sleeps::<RawEmptyYieldLwLock>(2, 2, hold);
    assert_eq!(y_adaptive, 7, "adaptive, own core: seven yields");
    assert_eq!(y_empty, 1, "empty-yield, own core: one yield");
    assert!(s_adaptive > 0, "the waiter sleeps behind a 200 us hold");
    assert_eq!(s_empty, s_adaptive, "the same sleeps after the spin");
    // One core, a 30 ms hold (longer than a slice): the waiter runs only once the holder is
    // preempted, and its yield does not switch back to it.
    let (y_adaptive, _) = waiter_yields_and_sleeps::<RawAdaptiveLwLock>(1, 2, 30_000_000);
    let (y_empty, _) = waiter_yields_and_sleeps::<RawEmptyYieldLwLock>(1, 2, 30_000_000);
    assert_eq!(
        (y_adaptive, y_empty),
        (7, 1),
        "one core: seven yields against one"
    );
}

/// The `stats` counters cost the simulated machine nothing (PostgreSQL's `LWLOCK_STATS` counts in
/// backend-local memory): two threads on two cores each add to one shared counter 1,000 times
/// through `lwlock::sync::stat_add` and `stat_max` and read it with `stat_load`. No virtual time
/// passes, no memory operation is counted, and the sum is exact. The same loop with the counter's
/// own `fetch_add` (what the counters did before) is charged: operations, transfers and time.
#[test]
fn stats_counters_are_not_charged() {
    use lwlock::sync::{stat_add, stat_load, stat_max, AtomicU64, Ordering};
    for charged in [false, true] {
        let elapsed = Arc::new(Mutex::new(Vec::new()));
        let (e2, total) = (elapsed.clone(), Arc::new(Mutex::new(0)));
        let t2 = total.clone();
        let r = lwsim::run(SimConfig::new(broadwell(), 2), move || {
            let counter = Arc::new(AtomicU64::new(0));
            let hs: Vec<_> = (0..2)
                .map(|_| {
                    let (counter, e2) = (counter.clone(), e2.clone());
                    lwlock::sync::thread::spawn(move || {
                        let t0 = clock_nanos();
                        for i in 0..1_000 {
                            if charged {
                                counter.fetch_add(1, Ordering::Relaxed);
                            } else {
                                stat_add(&counter, 1);
                                stat_max(&counter, i);
                                let _ = stat_load(&counter);
                            }
                        }
                        e2.lock().unwrap().push(clock_nanos() - t0);
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
            *t2.lock().unwrap() = stat_load(&counter);
        });
        assert_eq!(*total.lock().unwrap(), 2_000, "every increment counted");
        let (elapsed, ops) = (elapsed.lock().unwrap().clone(), r.total().ops);
        if charged {
            assert!(ops >= 2_000, "fetch_add is charged: {}", r.summary());
            assert!(elapsed.iter().all(|&e| e > 0), "{elapsed:?}");
        } else {
            assert_eq!(
                ops,
                0,
                "stat_add/stat_max/stat_load are uncharged: {}",
                r.summary()
            );
            assert_eq!(elapsed, vec![0, 0], "no virtual time passes");
        }
    }
}
