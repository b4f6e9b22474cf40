//! The OS model, exactly: timed sleeps, futex wake-to-run latency, time slices and context
//! switches. (Lock-holder preemption, which needs a lock, is checked in lwlock's `sim_os` test.)

use lwsim::atomic::AtomicU32;
use lwsim::profile::cost;
use lwsim::{now_nanos, Profile, SimConfig};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// A value alone on its 64-byte line.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Padded<T>(T);

fn broadwell() -> Profile {
    Profile::builtin("xeon-2s-broadwell").unwrap()
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
        lwsim::thread::spawn(move || {
            let t0 = now_nanos();
            lwsim::sleep_micros(100);
            *g.lock().unwrap() = (now_nanos() - t0) * 1000;
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
        let f = Arc::new(Padded(AtomicU32::new(0)));
        let (f1, t1) = (f.clone(), t2.clone());
        let sleeper = lwsim::thread::spawn(move || {
            while f1.0.load(Ordering::Acquire) == 0 {
                lwsim::futex_wait(&f1.0, 0);
            }
            t1.lock().unwrap().0 = now_nanos();
        });
        let (f2, t3) = (f.clone(), t2.clone());
        let waker = lwsim::thread::spawn(move || {
            lwsim::compute(10_000);
            f2.0.store(1, Ordering::Release);
            let start = now_nanos();
            lwsim::futex_wake(&f2.0, 1);
            let mut t = t3.lock().unwrap();
            t.1 = start;
            t.2 = now_nanos() - start;
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
                lwsim::thread::spawn(|| {
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

/// Outside a simulation the futex is a host futex: a waiter on real threads sleeps until the
/// word changes and a wake comes, and a wait on a word that already differs returns at once.
#[test]
fn futex_outside_a_simulation_waits_for_the_wake() {
    let word = Arc::new(AtomicU32::new(0));
    lwsim::futex_wait(&word, 1); // differs: returns at once
    let w = word.clone();
    let waiter = std::thread::spawn(move || {
        while w.load(Ordering::Acquire) == 0 {
            lwsim::futex_wait(&w, 0);
        }
        w.load(Ordering::Acquire)
    });
    std::thread::sleep(std::time::Duration::from_millis(20));
    word.store(7, Ordering::Release);
    lwsim::futex_wake(&word, 1);
    assert_eq!(waiter.join().unwrap(), 7);
}

/// The running task's virtual clock in picoseconds.
fn ps() -> u64 {
    lwsim::machine::with_machine(|m| m.map(|m| m.clock_of_current()).unwrap_or(0))
}

/// Computes until the running task's clock reaches `ns` nanoseconds (keeping its sub-ns part).
fn until_ns(ns: u64) {
    let now = ps() / 1000;
    assert!(now <= ns, "already at {now} ns, past {ns} ns");
    lwsim::compute(ns - now);
}

/// The futex compare is its own scheduling point, after the system call's cost and the word's
/// coherence access: a store issued 40 ns after the waiter entered FUTEX_WAIT (inside the 75 ns
/// system call) is seen by the compare, so the waiter does not sleep. (Compared at entry, the
/// waiter slept although nobody would wake it; the supervisor's wake 1 ms later rescued it.)
#[test]
fn futex_compare_sees_a_store_made_during_the_system_call() {
    let p = broadwell();
    let (syscall, transfer) = (p.ps(cost::SYSCALL), p.ps(cost::TRANSFER_L3));
    let times = Arc::new(Mutex::new((0u64, 0u64)));
    let t2 = times.clone();
    let r = lwsim::run(SimConfig::new(p, 2), move || {
        let word = Arc::new(Padded(AtomicU32::new(0)));
        let (w, t) = (word.clone(), t2.clone());
        let storer = lwsim::thread::spawn(move || {
            w.0.store(0, Ordering::Relaxed); // owns the line from now on
            until_ns(10_040);
            w.0.store(1, Ordering::Release); // never followed by a wake
        });
        let w = word.clone();
        let waiter = lwsim::thread::spawn(move || {
            until_ns(10_000);
            let entry = ps();
            lwsim::futex_wait(&w.0, 0);
            *t.lock().unwrap() = (entry, ps());
        });
        lwsim::sleep_micros(1_000);
        lwsim::futex_wake(&word.0, 1);
        storer.join().unwrap();
        waiter.join().unwrap();
    });
    let (entry, back) = *times.lock().unwrap();
    let t = r.total();
    assert_eq!((t.futex_sleeps, t.futex_wakes), (0, 0), "{}", r.summary());
    // System call, then the load that takes the line from the storer, then the compare.
    assert_eq!(back - entry, syscall + transfer, "{entry} {back}");
}
