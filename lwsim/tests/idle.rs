//! CPU busy and idle time, exactly: a core is idle while no thread is on it (from its thread's
//! sleep, futex wait or exit until a thread placed on it starts running, an idle-state exit
//! included), and busy otherwise, spinning or not. `totals().idle_ps` is that idle time up to the
//! caller's clock, so a window's busy time is `cores × window − idle`, cut exactly at the window's
//! edges (unlike `busy_ps`, which charges an operation's whole cost when it is charged).

use lwsim::profile::cost;
use lwsim::{now_nanos, CoreCounters, Profile, SimConfig};
use std::sync::{Arc, Mutex};

/// The profile with fixed latencies, so that every time is exact.
fn broadwell() -> Profile {
    let mut p = Profile::builtin("xeon-2s-broadwell").unwrap();
    p.set_all("jitter=0,arbitration=0,store_buffer_entries=0")
        .unwrap();
    p
}

/// The supervisor's reading: its clock (ps) and the cores' totals, after a timed sleep (a sync
/// point, where the reading is exact).
fn read_after_sleep(micros: u64) -> (u64, CoreCounters) {
    lwsim::sleep_micros(micros);
    (now_nanos() * 1000, lwsim::totals().unwrap())
}

/// One thread computing on a 4-core machine keeps one core busy: idle is the other three cores'
/// whole time plus its own core's time before and after the thread.
#[test]
fn one_thread_keeps_one_core_of_four_busy() {
    let out = Arc::new(Mutex::new((0, 0, 0, CoreCounters::default())));
    let o = out.clone();
    let report = lwsim::run(SimConfig::new(broadwell(), 4), move || {
        let t = lwsim::thread::spawn(|| {
            let start = now_nanos();
            lwsim::compute(10_000);
            (start, now_nanos())
        });
        let (start, end) = t.join().unwrap();
        let (at, c) = read_after_sleep(100);
        *o.lock().unwrap() = (start * 1000, end * 1000, at, c);
    });
    let (start, end, at, c) = out.lock().unwrap().clone();
    assert_eq!(end - start, 10_000_000);
    assert_eq!(c.idle_ps, 4 * at - (end - start));
    // The report counts up to the last thread's exit: core 0 was busy all of its 10 µs.
    assert_eq!(report.end_ps, end);
    let idle: Vec<u64> = report.per_core.iter().map(|c| c.idle_ps).collect();
    assert_eq!(idle, vec![start, end, end, end]);
}

/// A timed sleep leaves the core idle from the end of the system call until the thread runs
/// again, the idle-state exit latency (paid after idling longer than its target residency)
/// included; `busy_ps` counts that exit latency as busy.
#[test]
fn a_sleep_idles_its_core_and_the_idle_exit_is_idle() {
    let p = broadwell();
    let (syscall, slack) = (p.ps(cost::SYSCALL), p.ps(cost::TIMER_SLACK));
    let exit = (p.param(lwsim::profile::model::IDLE_EXIT) * 1000.0).round() as u64;
    assert!(exit > 0, "the profile has an idle state");
    let out = Arc::new(Mutex::new((vec![], 0, CoreCounters::default())));
    let o = out.clone();
    lwsim::run(SimConfig::new(p, 2), move || {
        let t = lwsim::thread::spawn(|| {
            let a = now_nanos();
            lwsim::compute(10_000);
            lwsim::sleep_micros(500);
            let b = now_nanos();
            lwsim::compute(5_000);
            vec![a * 1000, b * 1000, now_nanos() * 1000]
        });
        let times = t.join().unwrap();
        let (at, c) = read_after_sleep(1000);
        *o.lock().unwrap() = (times, at, c);
    });
    let (times, at, c) = out.lock().unwrap().clone();
    let (a, b) = (times[0], times[1]);
    // Off the core for the sleep and its slack, then the exit latency: 550 µs idle > 400 µs.
    assert_eq!(b - a, 10_000_000 + syscall + 500_000_000 + slack + exit);
    let busy = 10_000_000 + syscall + 5_000_000;
    assert_eq!(c.idle_ps, 2 * at - busy);
    assert_eq!(c.busy_ps, busy + exit);
}

/// A window's idle time is cut at its edges: a 1 ms computation spans a window read by the
/// supervisor, so its core is busy throughout the window although `busy_ps` charged the whole
/// millisecond before the window opened.
#[test]
fn a_window_cuts_a_long_operation_at_its_edges() {
    let out = Arc::new(Mutex::new(Vec::new()));
    let o = out.clone();
    lwsim::run(SimConfig::new(broadwell(), 2), move || {
        let t = lwsim::thread::spawn(|| lwsim::compute(1_000_000));
        // The thread joins the machine before the supervisor's sleeps (see `settle`).
        lwsim::settle();
        let r0 = read_after_sleep(20);
        let r1 = read_after_sleep(10);
        t.join().unwrap();
        *o.lock().unwrap() = vec![r0, r1];
    });
    let r = out.lock().unwrap().clone();
    let ((t0, c0), (t1, c1)) = (r[0].clone(), r[1].clone());
    assert!(t1 < 1_000_000_000, "both readings inside the computation");
    let d = c1.since(&c0);
    // Core 1 idle all the window, core 0 busy all of it.
    assert_eq!(d.idle_ps, t1 - t0);
    assert_eq!(d.busy_ps, 0);
    // Up to the first reading, core 0 was busy from the start.
    assert_eq!(c0.idle_ps, t0);
}

/// Threads waiting in a run queue keep no core idle: two threads on one core, one queued behind
/// the other, leave it busy until the second exits.
#[test]
fn a_queued_thread_keeps_its_core_busy() {
    let report = lwsim::run(SimConfig::new(broadwell(), 1), || {
        let ts: Vec<_> = (0..2)
            .map(|_| lwsim::thread::spawn(|| lwsim::compute(10_000)))
            .collect();
        for t in ts {
            t.join().unwrap();
        }
    });
    let cs = broadwell().ps(cost::CONTEXT_SWITCH);
    assert_eq!(report.end_ps, 20_000_000 + cs);
    assert_eq!(report.per_core[0].idle_ps, 0);
    assert_eq!(report.per_core[0].dispatches, 1);
    // The first thread's exit is not a switch Linux counts for the process.
    assert_eq!(report.per_core[0].context_switches(), 0);
}
