//! lwsim's OS model, exactly: timed sleeps, futex wake-to-run latency, time slices and context
//! switches, and the built-in profiles (every value has a source). Only in `--cfg lwsim` builds
//! (`ci/sim.sh`).
#![cfg(lwsim)]

use lwlock::sync::lwsim::profile::{cost, BUILTIN, COST_KEYS};
use lwlock::sync::lwsim::{self, Profile, SimConfig};
use lwlock::sync::{clock_nanos, Futex, Ordering};
use std::sync::{Arc, Mutex};

fn broadwell() -> Profile {
    Profile::builtin("xeon-2s-broadwell").unwrap()
}

#[test]
fn every_builtin_profile_parses_with_a_source_for_every_value() {
    for (name, _) in BUILTIN {
        let p = Profile::builtin(name).unwrap();
        assert_eq!(&p.name, name);
        assert_eq!(p.sources.len(), COST_KEYS.len());
        for (k, s) in COST_KEYS.iter().zip(&p.sources) {
            assert!(!s.contains("placeholder"), "{name}.{k} is a placeholder");
            assert!(s.len() > 10, "{name}.{k}: {s:?}");
        }
        print!("{}", p.describe());
    }
    assert!(Profile::builtin("epyc-2s-genoa").unwrap().hw_threads() >= 128);
    let w = Profile::builtin("xeon-4s-westmere-ex").unwrap();
    assert!(w.sockets == 4 && (32..=80).contains(&w.hw_threads()));
    // A value without a source is refused.
    let text = BUILTIN[1].1.replacen("\"source\"", "\"no-source\"", 2);
    assert!(Profile::parse(&text).is_err());
}

/// A timed sleep costs one system call, the sleep and the timer slack, exactly.
#[test]
fn timed_sleep_advances_the_sleepers_clock() {
    let p = broadwell();
    let want = p.ps(cost::SYSCALL) + 100_000_000 + p.ps(cost::TIMER_SLACK);
    let got = Arc::new(Mutex::new(0));
    let g = got.clone();
    let r = lwsim::run(SimConfig::new(p, 2), move || {
        let g = g.clone();
        lwlock::sync::thread::spawn(move || {
            let t0 = clock_nanos();
            lwlock::sync::sleep_micros(100);
            *g.lock().unwrap() = (clock_nanos() - t0) * 1000;
        })
        .join()
        .unwrap();
    });
    assert_eq!(*got.lock().unwrap() / 1000, want / 1000);
    assert_eq!(r.total().sleeps, 1);
}

/// A sleeper woken by FUTEX_WAKE runs `wake_to_run` after the waker's call began (its core is
/// idle); the waker pays `futex_wake`.
#[test]
fn futex_wake_to_run_latency() {
    let p = broadwell();
    let (w2r, wake) = (p.ps(cost::WAKE_TO_RUN), p.ps(cost::FUTEX_WAKE));
    let times = Arc::new(Mutex::new((0u64, 0u64, 0u64, 0u64)));
    let t2 = times.clone();
    let r = lwsim::run(SimConfig::new(p, 2), move || {
        let f = Arc::new(lwlock::sync::lwsim::workload::Padded(Futex::new(0)));
        let (f1, t1) = (f.clone(), t2.clone());
        let sleeper = lwlock::sync::thread::spawn(move || {
            while f1.0.word.load(Ordering::Acquire) == 0 {
                f1.0.wait(0);
            }
            t1.lock().unwrap().0 = clock_nanos();
        });
        let (f2, t3) = (f.clone(), t2.clone());
        let waker = lwlock::sync::thread::spawn(move || {
            lwsim::compute(10_000);
            f2.0.word.store(1, Ordering::Release);
            let start = clock_nanos();
            f2.0.wake_one();
            let mut t = t3.lock().unwrap();
            t.1 = start;
            t.2 = clock_nanos() - start;
            t.3 = 1;
        });
        sleeper.join().unwrap();
        waker.join().unwrap();
    });
    let (woke, start, waker_cost, _) = *times.lock().unwrap();
    assert_eq!(waker_cost, wake / 1000);
    // The sleeper's clock when it runs again is start + wake_to_run, plus its own re-check load
    // (a transfer: the waker modified the word).
    let transfer = broadwell().ps(cost::TRANSFER_L3);
    let d = (woke - start) * 1000;
    assert!(
        d + 1000 >= w2r + transfer && d <= w2r + transfer + 1000,
        "{woke} {start}"
    );
    let t = r.total();
    assert_eq!((t.futex_sleeps, t.futex_wakes), (1, 1));
}

/// Two compute-bound threads on one core share it in time slices: each slice end with a queued
/// thread is a preemption and a context switch.
#[test]
fn time_slices_and_context_switches() {
    let p = broadwell();
    let (slice, cs) = (p.ps(cost::TIME_SLICE), p.ps(cost::CONTEXT_SWITCH));
    let r = lwsim::run(SimConfig::new(p, 1), || {
        let hs: Vec<_> = (0..2)
            .map(|_| {
                lwlock::sync::thread::spawn(|| {
                    for _ in 0..100 {
                        lwsim::compute(100_000); // 100 us
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    });
    let t = r.total();
    // 20 ms of work, 3 ms slices: a switch every slice while both run.
    let work = 20_000_000_000u64;
    assert!(t.preemptions >= work / slice - 2, "{}", r.summary());
    assert_eq!(t.context_switches, t.preemptions + 1, "{}", r.summary()); // + the exit hand-off
    assert_eq!(r.end_ps, work + t.context_switches * cs, "{}", r.summary());
}

/// Lock-holder preemption emerges (nothing scripts it): three threads on two cores take a TAS
/// lock for 1 µs at a time; some hold lasts longer than a time slice, which only a holder
/// preempted inside its critical section can produce, while the waiters spin through theirs.
#[test]
fn lock_holder_preemption_emerges() {
    use lwlock::sync::lwsim::reference::TasLock;
    use lwlock::{Mode, RawLwLock};
    let p = broadwell();
    let slice_ns = p.ps(cost::TIME_SLICE) / 1000;
    let longest = Arc::new(Mutex::new(0u64));
    let l2 = longest.clone();
    let r = lwsim::run(SimConfig::new(p, 2), move || {
        let lock = Arc::new(lwlock::sync::lwsim::workload::Padded(TasLock::default()));
        let hs: Vec<_> = (0..3)
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
