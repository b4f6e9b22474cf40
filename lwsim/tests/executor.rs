//! lwsim's own executor (`coroutines.rs`): joins return their thread's result in virtual-time
//! order, thread-locals are per simulated thread and destroyed at its exit in the order of first
//! use, a lazy static is made once per run, a panic in a simulated thread ends the run with its
//! own message and leaves the next run on the same OS thread unharmed, and a join that can never
//! return is reported, not hung.

use lwsim::{now_nanos, Profile, SimConfig};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

fn config(cores: usize) -> SimConfig {
    let mut p = Profile::builtin("xeon-2s-broadwell").unwrap();
    p.set_all("jitter=0,arbitration=0").unwrap();
    SimConfig::new(p, cores)
}

/// Each thread computes for its own time; the joins return every result, and a join waits for
/// its thread in virtual time: the supervisor's clock after the joins is the longest thread's
/// end (a join passes no time of its own).
#[test]
fn joins_return_results_and_wait_in_virtual_time() {
    let out = Arc::new(Mutex::new((Vec::new(), 0)));
    let o = out.clone();
    lwsim::run(config(8), move || {
        let handles: Vec<_> = (1..=6u64)
            .map(|i| {
                lwsim::thread::spawn(move || {
                    lwsim::compute(i * 1000);
                    (i, now_nanos())
                })
            })
            .collect();
        let got: Vec<(u64, u64)> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        *o.lock().unwrap() = (got, now_nanos());
    });
    let (got, after) = out.lock().unwrap().clone();
    assert_eq!(
        got.iter().map(|g| g.0).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5, 6]
    );
    // Each thread ends its own compute time after its start; the later ones started later.
    for w in got.windows(2) {
        assert!(w[1].1 > w[0].1 + 900, "{got:?}");
    }
    assert_eq!(after, got.last().unwrap().1, "{got:?}");
}

lwsim::thread_local! {
    static COUNT: Cell<u32> = Cell::new(0);
    static FIRST: Recorder = Recorder("first");
    static SECOND: Recorder = Recorder("second");
}

static DROPS: Mutex<Vec<(usize, &'static str)>> = Mutex::new(Vec::new());

/// Records its destruction, with the simulated thread it belonged to.
struct Recorder(&'static str);

impl Drop for Recorder {
    fn drop(&mut self) {
        let me = lwsim::thread::current().id();
        DROPS.lock().unwrap().push((me, self.0));
        // A destructor may still use a thread-local not yet destroyed.
        COUNT.with(|c| c.set(c.get() + 100));
    }
}

/// Each simulated thread has its own value of a thread-local; values are destroyed at the
/// thread's exit in the order of their first use, and a destroyed one is an error, not a value.
#[test]
fn thread_locals_are_per_thread_and_destroyed_in_first_use_order() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    lwsim::run(config(4), move || {
        let hs: Vec<_> = (1..=3u32)
            .map(|i| {
                let s = s.clone();
                lwsim::thread::spawn(move || {
                    // SECOND first: it is destroyed first.
                    SECOND.with(|_| ());
                    FIRST.with(|_| ());
                    for _ in 0..i {
                        COUNT.with(|c| c.set(c.get() + 1));
                        lwsim::compute(100);
                    }
                    s.lock().unwrap().push(COUNT.with(|c| c.get()));
                    lwsim::thread::current().id()
                })
            })
            .collect();
        let ids: Vec<usize> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        s.lock().unwrap().push(ids.len() as u32);
        // The supervisor's own value is untouched by the threads'.
        assert_eq!(COUNT.with(|c| c.get()), 0);
    });
    let mut counts = seen.lock().unwrap().clone();
    assert_eq!(counts.pop(), Some(3));
    counts.sort_unstable();
    assert_eq!(counts, [1, 2, 3]);
    let drops = std::mem::take(&mut *DROPS.lock().unwrap());
    assert_eq!(drops.len(), 6, "{drops:?}");
    for pair in drops.chunks(2) {
        assert_eq!(
            pair[0].0, pair[1].0,
            "one thread's values together: {drops:?}"
        );
        assert_eq!((pair[0].1, pair[1].1), ("second", "first"), "{drops:?}");
        assert_ne!(pair[0].0, 0, "not the supervisor's: {drops:?}");
    }
}

lwsim::lazy_static! {
    static ref MADE: AtomicUsize = {
        RUNS_MADE.fetch_add(1, Ordering::SeqCst);
        AtomicUsize::new(0)
    };
}

static RUNS_MADE: AtomicUsize = AtomicUsize::new(0);

lwsim::lazy_static! {
    static ref SLOW: usize = {
        // The initializer takes virtual time: the other threads arrive while it runs.
        lwsim::compute(1000);
        SLOW_MADE.fetch_add(1, Ordering::SeqCst) + 100
    };
}

static SLOW_MADE: AtomicUsize = AtomicUsize::new(0);

/// Threads that first use a lazy static while its initializer runs wait for its value (made
/// once), as they would on a `Once`.
#[test]
fn threads_wait_for_a_lazy_static_being_made() {
    let got = Arc::new(Mutex::new(Vec::new()));
    let g = got.clone();
    lwsim::run(config(8), move || {
        let hs: Vec<_> = (0..6)
            .map(|i| {
                lwsim::thread::spawn(move || {
                    lwsim::compute(10 * i);
                    (*SLOW, now_nanos())
                })
            })
            .collect();
        for h in hs {
            g.lock().unwrap().push(h.join().unwrap());
        }
    });
    let got = got.lock().unwrap().clone();
    assert_eq!(SLOW_MADE.load(Ordering::SeqCst), 1);
    assert!(got.iter().all(|&(v, _)| v == 100), "{got:?}");
    // Every thread had its value only once the initializer's microsecond had passed.
    let first = got.iter().map(|&(_, t)| t).min().unwrap();
    assert!(got.iter().all(|&(_, t)| t >= first && t >= 1000), "{got:?}");
}

/// A lazy static is made once in a run, shared by its threads, and made afresh by the next run.
#[test]
fn a_lazy_static_is_made_once_per_run() {
    for run in 1..=2 {
        let total = Arc::new(AtomicUsize::new(0));
        let t = total.clone();
        lwsim::run(config(4), move || {
            let hs: Vec<_> = (0..4)
                .map(|_| lwsim::thread::spawn(|| MADE.fetch_add(1, Ordering::SeqCst)))
                .collect();
            for h in hs {
                h.join().unwrap();
            }
            t.store(MADE.load(Ordering::SeqCst), Ordering::SeqCst);
        });
        assert_eq!(total.load(Ordering::SeqCst), 4, "run {run}");
        assert_eq!(RUNS_MADE.load(Ordering::SeqCst), run);
    }
}

/// A panic in a simulated thread ends the run with the thread's own message; the next run on
/// the same OS thread starts clean.
#[test]
fn a_panic_in_a_thread_ends_the_run_and_the_next_run_is_clean() {
    let failed = std::panic::catch_unwind(|| {
        lwsim::run(config(4), || {
            let spinner = lwsim::thread::spawn(|| loop {
                lwsim::compute(1000);
            });
            let bad = lwsim::thread::spawn(|| {
                lwsim::compute(5000);
                panic!("the simulated thread's own failure");
            });
            bad.join().unwrap();
            spinner.join().unwrap();
        })
    });
    let msg = failed.expect_err("the run fails");
    let msg = msg
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| msg.downcast_ref::<String>().cloned())
        .unwrap();
    assert!(msg.contains("the simulated thread's own failure"), "{msg}");
    assert!(!lwsim::machine::active());
    let report = lwsim::run(config(2), || {
        lwsim::thread::spawn(|| lwsim::compute(10)).join().unwrap();
    });
    assert_eq!(report.threads, 1);
}

/// Two threads that join each other can never finish: the executor says so instead of hanging.
#[test]
#[should_panic(expected = "lwsim: deadlock")]
fn threads_that_join_each_other_are_reported() {
    lwsim::run(config(4), || {
        let slot: Arc<Mutex<Option<lwsim::thread::JoinHandle<()>>>> = Arc::new(Mutex::new(None));
        let s = slot.clone();
        let a = lwsim::thread::spawn(move || {
            // Wait (in virtual time) until the supervisor has stored the handle of `a` itself.
            lwsim::compute(1000);
            let me = s.lock().unwrap().take().unwrap();
            me.join().unwrap();
        });
        let a_id = a.thread().id();
        *slot.lock().unwrap() = Some(a);
        assert!(a_id > 0);
        lwsim::compute(10_000);
    });
}

/// What the supervisor's closure captures is dropped after the run, with the machine gone: its
/// destructor cannot act on the simulated machine (or move a figure).
#[test]
fn the_supervisors_captures_are_dropped_after_the_run() {
    struct Probe(Arc<Mutex<Option<bool>>>);
    impl Drop for Probe {
        fn drop(&mut self) {
            *self.0.lock().unwrap() = Some(lwsim::machine::active());
        }
    }
    let seen = Arc::new(Mutex::new(None));
    let probe = Probe(seen.clone());
    lwsim::run(config(2), move || {
        let _keep = &probe;
        lwsim::compute(10);
    });
    assert_eq!(*seen.lock().unwrap(), Some(false));
}
