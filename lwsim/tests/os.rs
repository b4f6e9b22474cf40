//! The OS model, exactly: timed sleeps, futex wake-to-run latency, the futex compare's place in
//! virtual time, CFS slices, wakeup preemption, idle-state exit latency and context switches. (Lock-holder preemption, which needs a lock, is checked in lwlock's `sim_os` test.)

use lwsim::atomic::AtomicU32;
use lwsim::profile::cost;
use lwsim::{now_nanos, Profile, SimConfig};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// A value alone on its 64-byte line.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Padded<T>(T);

/// The profile with fixed latencies, first-come arbitration and no store buffer, so costs are
/// exact, under model 2's structural choices (`lwsim::profile::MODEL_2`: distance classes, so a
/// reduced topology keeps its costs; the tests of `wake_placement` set it explicitly).
fn broadwell() -> Profile {
    let mut p = Profile::builtin("xeon-2s-broadwell").unwrap();
    p.set_all("jitter=0,arbitration=0,store_buffer_entries=0,model=2")
        .unwrap();
    p
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

/// An idle wait (a backend waiting on its socket) costs one system call and the wait, exactly:
/// no timer slack, and it is not counted as a sleep; the core is free meanwhile.
#[test]
fn idle_wait_has_no_timer_slack() {
    let p = broadwell();
    let want = p.ps(cost::SYSCALL) + 100_000_000;
    assert!(p.ps(cost::TIMER_SLACK) > 0);
    let got = Arc::new(Mutex::new(0));
    let g = got.clone();
    let r = lwsim::run(SimConfig::new(p, 1), move || {
        let g = g.clone();
        let waiter = lwsim::thread::spawn(move || {
            let t0 = now_nanos();
            lwsim::idle_nanos(100_000);
            *g.lock().unwrap() = (now_nanos() - t0) * 1000;
        });
        // A second thread on the one core runs while the first waits.
        let other = lwsim::thread::spawn(|| lwsim::compute(50_000));
        waiter.join().unwrap();
        other.join().unwrap();
    });
    assert_eq!(*got.lock().unwrap() / 1000, want / 1000);
    assert_eq!(r.total().sleeps, 0);
    assert!(
        r.total().idle_ps > 0,
        "the core should be idle for part of the wait"
    );
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

/// The CFS parameters of a profile (ps), scaled as the kernel scales them on a machine with
/// the profile's hardware threads: `(sched_latency, min_granularity, wakeup_granularity)`.
fn cfs(p: &Profile) -> (u64, u64, u64) {
    let factor = 1 + p.hw_threads().min(8).ilog2() as u64;
    let ps = |k: &str| (p.get(k).unwrap() * 1000.0) as u64 * factor;
    (
        ps("sched_latency_ns"),
        ps("min_granularity_ns"),
        ps("wakeup_granularity_ns"),
    )
}

/// `n` compute-bound threads on one core, each doing `work_ms` of work in 10 us steps: every
/// thread's runs on the core (each but its last, which ends when it exits), in ps.
fn runs_on_one_core(n: usize, work_ms: u64) -> (Vec<u64>, lwsim::Report) {
    let runs = Arc::new(Mutex::new(Vec::new()));
    let r2 = runs.clone();
    let r = lwsim::run(SimConfig::new(broadwell(), 1), move || {
        let hs: Vec<_> = (0..n)
            .map(|_| {
                let runs = r2.clone();
                lwsim::thread::spawn(move || {
                    let (mut start, mut last) = (ps(), ps());
                    for _ in 0..work_ms * 100 {
                        lwsim::compute(10_000);
                        let now = ps();
                        if now - last > 10_000_000 {
                            // Preempted at the end of that step, back at `now`.
                            runs.lock().unwrap().push(last + 10_000_000 - start);
                            start = now;
                        }
                        last = now;
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    });
    let v = runs.lock().unwrap().clone();
    (v, r)
}

/// The CFS slice: a thread alone on its core is never preempted; `n` compute-bound threads on
/// one core each run max(sched_latency / n, min_granularity) at a time (both scaled by
/// 1 + ilog2(min(72, 8)) = 4 on the 72-thread Broadwell: 12 ms at 2 threads, 3 ms at 8, and the
/// 3 ms floor at 16 where 24 ms / 16 would be 1.5 ms).
#[test]
fn cfs_slice_by_runnable_threads() {
    let p = broadwell();
    let (latency, min_gran, _) = cfs(&p);
    assert_eq!((latency, min_gran), (24_000_000_000, 3_000_000_000));
    let (runs, r) = runs_on_one_core(1, 60);
    assert!(runs.is_empty(), "{runs:?}");
    assert_eq!(r.total().preemptions, 0);
    assert_eq!(r.end_ps, 60_000_000_000, "{}", r.summary());
    for (n, slice, work_ms) in [
        (2, 12_000_000_000u64, 40),
        (8, 3_000_000_000, 10),
        (16, 3_000_000_000, 10),
    ] {
        assert_eq!(slice, (latency / n as u64).max(min_gran));
        let (runs, r) = runs_on_one_core(n, work_ms);
        assert!(runs.len() >= 2 * n, "{n}: {runs:?}");
        assert!(runs.iter().all(|&x| x == slice), "{n}: {runs:?}");
        assert_eq!(r.total().preemptions, runs.len() as u64, "{}", r.summary());
    }
}

/// Two compute-bound threads on one core share it in CFS slices (12 ms at two runnable threads
/// here): each slice end with a queued thread is a preemption and a context switch.
#[test]
fn time_slices_and_context_switches() {
    let p = broadwell();
    let cs = p.ps(cost::CONTEXT_SWITCH);
    let (latency, min_gran, _) = cfs(&p);
    let slice = (latency / 2).max(min_gran);
    let r = lwsim::run(SimConfig::new(p, 1), || {
        let hs: Vec<_> = (0..2)
            .map(|_| {
                lwsim::thread::spawn(|| {
                    for _ in 0..1000 {
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
    // 100 ms each in 12 ms slices: 8 full slices each, then 4 ms to finish.
    let work = 200_000_000_000u64;
    assert_eq!(t.preemptions, 2 * (work / 2 / slice), "{}", r.summary());
    assert_eq!(t.dispatches, t.preemptions + 1, "{}", r.summary()); // + the exit hand-off
    assert_eq!(r.end_ps, work + t.dispatches * cs, "{}", r.summary());
    // As Linux counts them: each preemption an involuntary switch, the exit none.
    assert_eq!(
        (t.voluntary_switches, t.involuntary_switches),
        (0, t.preemptions),
        "{}",
        r.summary()
    );
}

/// One core: a waiter sleeps on a futex, a thread `R` starts computing (in 1 us steps) on the
/// core, and the supervisor wakes the waiter after `wake_after_us`. Returns (R's start, the
/// waker's clock at FUTEX_WAKE, the waiter's clock when it runs again), in ps.
fn wakeup_onto_a_busy_core(p: Profile, wake_after_us: u64) -> (u64, u64, u64, lwsim::Report) {
    let times = Arc::new(Mutex::new((0u64, 0u64, 0u64)));
    let t2 = times.clone();
    let r = lwsim::run(SimConfig::new(p, 1), move || {
        let f = Arc::new(Padded(AtomicU32::new(0)));
        let (f1, t) = (f.clone(), t2.clone());
        let waiter = lwsim::thread::spawn(move || {
            lwsim::futex_wait(&f1.0, 0);
            t.lock().unwrap().2 = ps();
        });
        lwsim::settle(); // the waiter runs and sleeps first
        let t = t2.clone();
        let runner = lwsim::thread::spawn(move || {
            let r0 = ps();
            t.lock().unwrap().0 = r0;
            while ps() - r0 < 30_000_000_000 {
                lwsim::compute(1_000);
            }
        });
        lwsim::sleep_micros(wake_after_us);
        f.0.store(1, Ordering::Release);
        t2.lock().unwrap().1 = ps();
        lwsim::futex_wake(&f.0, 1);
        waiter.join().unwrap();
        runner.join().unwrap();
    });
    let (r0, start, back) = *times.lock().unwrap();
    (r0, start, back, r)
}

/// CFS wakeup preemption: a woken thread queued behind a running one preempts it when the
/// running one's vruntime is more than wakeup_granularity (4 ms here) past its own: here, when
/// the running thread has run longer than that since the waiter slept. Woken after 2 ms, the
/// waiter waits for the end of the runner's 12 ms slice; woken after 6 ms, it runs at the
/// runner's next operation.
#[test]
fn wakeup_preempts_a_long_running_thread_not_a_fresh_one() {
    let mut p = broadwell();
    p.set("idle_exit_ns", 0.0).unwrap();
    let (w2r, cs) = (p.ps(cost::WAKE_TO_RUN), p.ps(cost::CONTEXT_SWITCH));
    let (latency, _, gran) = cfs(&p);
    assert_eq!(gran, 4_000_000_000);

    let (r0, start, back, r) = wakeup_onto_a_busy_core(p.clone(), 2_000);
    assert!(start + w2r - r0 < gran, "{r0} {start}");
    assert_eq!(back, r0 + latency / 2 + cs, "{}", r.summary());
    assert_eq!(r.total().preemptions, 1);

    let (r0, start, back, r) = wakeup_onto_a_busy_core(p, 6_000);
    let arrival = start + w2r;
    assert!(arrival - r0 > gran, "{r0} {start}");
    // The runner's next operation after the arrival: its clock runs on a 1 us grid from r0.
    let next = r0 + (arrival - r0) / 1_000_000 * 1_000_000 + 1_000_000;
    assert_eq!(back, next + cs, "{r0} {start} {back}: {}", r.summary());
    assert_eq!(r.total().preemptions, 1);
}

/// Wake-to-run after a long idle: the waiter's core, idle longer than C6's target residency
/// (400 us on Broadwell-EP), pays C6's exit latency (133 us) on top of wake_to_run; after a
/// short idle it does not.
#[test]
fn idle_exit_latency_after_a_long_idle_only() {
    let p = broadwell();
    let w2r = p.ps(cost::WAKE_TO_RUN);
    let exit = (p.get("idle_exit_ns").unwrap() * 1000.0) as u64;
    assert_eq!(exit, 133_000_000);
    assert_eq!(p.get("idle_exit_after_ns"), Some(400_000.0));
    for (after_us, extra) in [(100, 0), (1_000, exit)] {
        let times = Arc::new(Mutex::new((0u64, 0u64)));
        let t2 = times.clone();
        lwsim::run(SimConfig::new(p.clone(), 1), move || {
            let f = Arc::new(Padded(AtomicU32::new(0)));
            let (f1, t) = (f.clone(), t2.clone());
            let waiter = lwsim::thread::spawn(move || {
                lwsim::futex_wait(&f1.0, 0);
                t.lock().unwrap().1 = ps();
            });
            lwsim::settle();
            lwsim::sleep_micros(after_us);
            f.0.store(1, Ordering::Release);
            t2.lock().unwrap().0 = ps();
            lwsim::futex_wake(&f.0, 1);
            waiter.join().unwrap();
        });
        let (start, back) = *times.lock().unwrap();
        assert_eq!(back - start, w2r + extra, "woken after {after_us} us");
    }
}

/// `sched_yield` (CFS's skip buddy): a thread alone on its core keeps it (the call costs a
/// system call); with a queued thread it hands over only while that thread's vruntime is at
/// most wakeup_granularity past its own. Threads `Y` (yields after every 10 us step) and `B`
/// (computes) share one core: Y's first yield hands over at once (both start level), B then
/// runs its 12 ms slice, and Y's later yields keep the core until Y has caught up to within
/// 4 ms of B: Y runs 8 ms (to the step) before its yield hands over again.
#[test]
fn sched_yield_hands_over_within_the_wakeup_granularity() {
    let p = broadwell();
    let (latency, _, gran) = cfs(&p);
    let syscall = p.ps(cost::SYSCALL);
    // Alone: no switch, one system call per yield.
    let r = lwsim::run(SimConfig::new(p.clone(), 1), || {
        lwsim::thread::spawn(|| {
            for _ in 0..10 {
                lwsim::thread::yield_now();
            }
        })
        .join()
        .unwrap();
    });
    let t = r.total();
    assert_eq!((t.yields, t.context_switches(), t.dispatches), (10, 0, 0));
    assert_eq!(r.end_ps, 10 * syscall);

    let runs = Arc::new(Mutex::new(Vec::new()));
    let r2 = runs.clone();
    let r = lwsim::run(SimConfig::new(p, 1), move || {
        let runs = r2.clone();
        let y = lwsim::thread::spawn(move || {
            let mut start = ps();
            for _ in 0..2_000 {
                lwsim::compute(10_000);
                let before = ps();
                lwsim::thread::yield_now();
                let now = ps();
                if now - before > syscall {
                    runs.lock().unwrap().push(before + syscall - start);
                    start = now;
                }
            }
        });
        let b = lwsim::thread::spawn(|| {
            for _ in 0..3_000 {
                lwsim::compute(10_000);
            }
        });
        y.join().unwrap();
        b.join().unwrap();
    });
    let runs = runs.lock().unwrap().clone();
    assert!(runs.len() >= 2, "{runs:?} {}", r.summary());
    assert_eq!(runs[0], 10_000_000 + syscall, "{runs:?}");
    // B ran latency / 2 = 12 ms; Y hands over once its vruntime is within `gran` of B's.
    let step = 10_000_000 + syscall;
    let want = latency / 2 - gran;
    assert!(
        runs[1] >= want - step && runs[1] <= want + step,
        "{} vs {want} ± {step}: {runs:?}",
        runs[1]
    );
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

/// Two cores, five threads started together: two long ones (300 ms of work) and three short
/// ones (a 1 ms sleep, then 100 ms of work), all in 10 us steps. Starts and wakeups to the last
/// core leave core 0 with a long thread and one short one and core 1 with the other long one
/// and two short ones; when core 0's short one ends (at 197 ms) core 0 runs one thread and
/// core 1 three. `factor` is `balance_busy_factor`. Returns the short threads' finish times (ps) and
/// the report.
fn three_against_one(factor: u32) -> (Vec<u64>, lwsim::Report) {
    let mut p = broadwell();
    p.set_all(&format!("balance_busy_factor={factor}")).unwrap();
    let done = Arc::new(Mutex::new(Vec::new()));
    let d2 = done.clone();
    let r = lwsim::run(SimConfig::new(p, 2), move || {
        let long = || {
            lwsim::thread::spawn(|| {
                for _ in 0..30_000 {
                    lwsim::compute(10_000);
                }
            })
        };
        let mut hs = vec![long()];
        for _ in 0..3 {
            let done = d2.clone();
            hs.push(lwsim::thread::spawn(move || {
                lwsim::sleep_micros(1000);
                for _ in 0..10_000 {
                    lwsim::compute(10_000);
                }
                done.lock().unwrap().push(ps());
            }));
        }
        hs.push(long());
        for h in hs {
            h.join().unwrap();
        }
    });
    let v = done.lock().unwrap().clone();
    (v, r)
}

/// Periodic load balancing (`balance_busy_factor`): without it a busy core never takes work
/// from a busier one, so three threads share core 1 while core 0 runs one; with it (factor 1:
/// the two cores' L3 domain, 36 hardware threads on the Broadwell, every 36 ms from a busy
/// core) core 0 pulls a queued thread from core 1, and the last short thread finishes sooner.
/// Deterministic: without balancing the run is the same as before the balancer existed.
#[test]
fn periodic_balancing_moves_a_queued_thread_to_the_less_loaded_core() {
    let (off, r_off) = three_against_one(0);
    let (on, r_on) = three_against_one(1);
    assert_eq!((off.len(), on.len()), (3, 3));
    assert_eq!(r_off.total().balance_pulls, 0, "{}", r_off.summary());
    let pulls: Vec<u64> = r_on.per_core.iter().map(|c| c.balance_pulls).collect();
    assert_eq!(pulls, [1, 0], "{}", r_on.summary());
    let last = |v: &[u64]| *v.iter().max().unwrap();
    // Without balancing the last two short threads share core 1 with a long one to the end.
    assert!(last(&off) >= 300_000_000_000, "{off:?}");
    assert!(
        (last(&on) as f64) < 0.92 * last(&off) as f64,
        "balancing did not shorten the run: {on:?} against {off:?}"
    );
}

/// Four cores on two sockets, one L3 each (cores 0-1 and 2-3), fixed latencies. A waker `A`
/// starts on core 0; a thread on core 1 exits at about 6 us; the waiter `B` starts on core 2 and
/// sleeps on a futex; a compute-bound `X` then takes core 2. At 20 us `A` sets the word and
/// wakes `B`, whose previous core is busy and cores 1 and 3 idle. `B` re-reads the word (a
/// transfer from core 0) and pauses 5 times. Returns the report and `B`'s clock after the
/// re-read minus `A`'s at its FUTEX_WAKE (ps).
fn wake_onto_two_sockets(wake_placement: f64) -> (lwsim::Report, u64) {
    let mut p = broadwell();
    (
        p.sockets,
        p.cores_per_socket,
        p.cores_per_l3,
        p.threads_per_core,
    ) = (2, 2, 2, 1);
    p.set("idle_exit_ns", 0.0).unwrap();
    p.set("balance_busy_factor", 0.0).unwrap();
    p.set("wake_placement", wake_placement).unwrap();
    let times = Arc::new(Mutex::new((0u64, 0u64)));
    let t2 = times.clone();
    let r = lwsim::run(SimConfig::new(p, 4), move || {
        let f = Arc::new(Padded(AtomicU32::new(0)));
        let (fa, ta) = (f.clone(), t2.clone());
        let a = lwsim::thread::spawn(move || {
            lwsim::compute(20_000);
            fa.0.store(1, Ordering::Release);
            ta.lock().unwrap().0 = ps();
            lwsim::futex_wake(&fa.0, 1);
            lwsim::compute(50_000);
        });
        lwsim::supervisor_wait_until(1_000);
        let y = lwsim::thread::spawn(|| lwsim::compute(5_000));
        lwsim::supervisor_wait_until(2_000);
        let (fb, tb) = (f.clone(), t2.clone());
        let b = lwsim::thread::spawn(move || {
            while fb.0.load(Ordering::Acquire) == 0 {
                lwsim::futex_wait(&fb.0, 0);
            }
            tb.lock().unwrap().1 = ps();
            for _ in 0..5 {
                lwsim::pause();
            }
        });
        lwsim::supervisor_wait_until(3_000);
        let x = lwsim::thread::spawn(|| lwsim::compute(100_000));
        for h in [a, y, b, x] {
            h.join().unwrap();
        }
    });
    let (start, back) = *times.lock().unwrap();
    (r, back - start)
}

/// `wake_placement` 0 puts the woken `B` on the lowest idle core, core 1, in the waker's L3:
/// its re-read is an L3 transfer. Under 1 (`select_idle_sibling`), `wake_affine` keeps the
/// target at `B`'s previous core 2 (the waker's core, busy, would hold two threads against one)
/// and the scan of that core's L3 finds core 3 idle: `B` runs across the socket from the waker
/// and its re-read is a remote transfer. Which core `B` ran on is read from the pause counts.
#[test]
fn wake_placement_picks_the_previous_cores_l3_under_select_idle_sibling() {
    for name in [
        "xeon-2s-broadwell",
        "xeon-8s-westmere-ex",
        "epyc-2s-genoa",
        "opteron-4s-6128",
        "this-machine",
    ] {
        let p = Profile::builtin(name).unwrap();
        assert_eq!(
            p.get("wake_placement"),
            Some(1.0),
            "{name}: the default since model 3"
        );
    }
    let p = broadwell();
    let (w2r, l3, remote) = (
        p.ps(cost::WAKE_TO_RUN),
        p.ps(cost::TRANSFER_L3),
        p.ps(cost::TRANSFER_REMOTE),
    );
    let pauses = |r: &lwsim::Report| r.per_core.iter().map(|c| c.pauses).collect::<Vec<_>>();
    let (r0, d0) = wake_onto_two_sockets(0.0);
    let (r1, d1) = wake_onto_two_sockets(1.0);
    println!(
        "placement 0: {d0} ps {:?}; 1: {d1} ps {:?}",
        pauses(&r0),
        pauses(&r1)
    );
    assert_eq!(pauses(&r0), vec![0, 5, 0, 0], "{}", r0.summary());
    assert_eq!(pauses(&r1), vec![0, 0, 0, 5], "{}", r1.summary());
    // The re-read's transfer: from core 0 to core 1 (same L3), or to core 3 (other socket).
    assert_eq!(r0.per_core[1].load_from_modified, 1);
    assert_eq!(r1.per_core[3].load_from_modified, 1);
    assert_eq!(d1 - d0, remote - l3);
    assert!(d0 >= w2r + l3 && d0 <= w2r + l3 + 1000, "{d0}");
    // Everything else is the same: the same operations, threads and wakeups.
    let (t0, t1) = (r0.total(), r1.total());
    assert_eq!((t0.ops, t0.futex_wakes), (t1.ops, t1.futex_wakes));
}

/// One core: a holder sets a flag and computes 20 ms in 10 us steps before clearing it; a
/// poller, queued behind it, reads the flag between 1 ms sleeps (PostgreSQL's `s_lock` delays).
/// Returns the holder's release time, the poller's reads and the report.
fn holder_and_sleeping_poller() -> (u64, u64, lwsim::Report) {
    let out = Arc::new(Mutex::new((0u64, 0u64)));
    let o2 = out.clone();
    let r = lwsim::run(SimConfig::new(broadwell(), 1), move || {
        let flag = Arc::new(Padded(AtomicU32::new(0)));
        let (f1, o1) = (flag.clone(), o2.clone());
        let holder = lwsim::thread::spawn(move || {
            f1.0.store(1, Ordering::Release);
            for _ in 0..2000 {
                lwsim::compute(10_000);
            }
            o1.lock().unwrap().0 = ps();
            f1.0.store(0, Ordering::Release);
        });
        let (f2, o3) = (flag.clone(), o2.clone());
        let poller = lwsim::thread::spawn(move || {
            let mut reads = 0;
            while f2.0.load(Ordering::Acquire) == 1 {
                reads += 1;
                lwsim::sleep_micros(1000);
            }
            o3.lock().unwrap().1 = reads;
        });
        holder.join().unwrap();
        poller.join().unwrap();
    });
    let (release, reads) = *out.lock().unwrap();
    (release, reads, r)
}

/// A thread in a timed sleep is off its core's run queue until its timer fires (the kernel
/// dequeues it at the sleep and enqueues it at the wakeup): the holder, preempted at its slice's
/// end and at each of the poller's wakeups (the poller's vruntime stays far behind), runs
/// whenever the poller sleeps, and releases after its 20 ms of work and the poller's few short
/// runs. Before the fix, the OS model took the poller's wakeup as soon as it began to sleep,
/// putting it back on the run queue (and, when the holder ran next, asking for its preemption)
/// for the whole sleep, so the holder was preempted again at nearly every run and released
/// only after more than 100 s of virtual time and 100 000 reads: the stuck-spinlock pattern.
#[test]
fn a_sleeping_thread_leaves_the_core_to_a_preempted_holder() {
    let (release, reads, r) = holder_and_sleeping_poller();
    let work = 20_000_000_000u64;
    assert!(
        release < work + 1_000_000_000,
        "the holder released at {release} ps after {reads} reads: {}",
        r.summary()
    );
    // The poller read the flag about once per ms from its first run (the holder's slice end,
    // at 12 ms) to the release, and was woken into the queue each time.
    assert!((5..=12).contains(&reads), "{reads} reads: {}", r.summary());
    assert!(r.total().involuntary_switches >= reads, "{}", r.summary());
}
