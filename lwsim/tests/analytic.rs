//! The coherence model against its closed forms, with latency spread and arbitration off (so the
//! figures are exact): `fetch_add`s on one hot line saturate at one ownership per residency window
//! plus one transfer, serving ceil(residency / RMW) operations per ownership, whatever the core
//! count (one operation per transfer with no residency); on lines of their own they scale linearly
//! at the RMW-hit cost. Then what the closed forms cannot show: an atomic takes effect when its
//! line arrives, not when it was requested, and a CAS loop on two threads fails about as often as
//! on this machine's real threads.

use lwsim::atomic::AtomicU64;
use lwsim::profile::cost;
use lwsim::{Profile, Report, SimConfig};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// A value alone on its 64-byte line.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Padded<T>(T);

/// A built-in profile with latency spread and arbitration off, under model 2's structural
/// choices (`lwsim::profile::MODEL_2`), for which the closed forms here are written; each
/// structural option's test sets its choices explicitly and checks the built-in default apart.
fn profile(name: &str) -> Profile {
    let mut p = Profile::builtin(name).unwrap();
    p.set_all("jitter=0,arbitration=0,model=2").unwrap();
    p
}

/// `threads` threads each do `k` `fetch_add`s, on one shared line or on their own padded lines.
/// Returns (ops per virtual second, report).
fn fetch_add_run(p: &Profile, threads: usize, k: u64, own_lines: bool) -> (f64, Report) {
    let report = lwsim::run(SimConfig::new(p.clone(), threads), move || {
        let counters: Arc<Vec<Padded<AtomicU64>>> =
            Arc::new((0..threads).map(|_| Padded(AtomicU64::new(0))).collect());
        let hs: Vec<_> = (0..threads)
            .map(|i| {
                let c = counters.clone();
                lwsim::thread::spawn(move || {
                    let slot = if own_lines { i } else { 0 };
                    for _ in 0..k {
                        c[slot].0.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        let sum: u64 = (0..threads).map(|i| c_load(&counters[i].0)).sum();
        assert_eq!(sum, threads as u64 * k);
    });
    let ops = threads as f64 * k as f64;
    (ops / (report.end_ps as f64 * 1e-12), report)
}

fn c_load(a: &AtomicU64) -> u64 {
    a.load(Ordering::Relaxed)
}

fn within(got: f64, want: f64, tol: f64) -> bool {
    (got - want).abs() <= tol * want
}

/// N cores doing fetch_add on one line saturate once N ≥ 2: an owner serves ceil(R / h)
/// operations in its residency window R (h = the RMW-hit cost), then the line takes one transfer
/// c to the next requester: ceil(R / h) / (max(R, h) + c) operations per unit of time. With no
/// residency that is 1 / (h + c), one transfer per operation.
#[test]
fn analytic_one_hot_line_saturates_at_one_ownership_per_residency_plus_transfer() {
    for residency in [None, Some(0.0)] {
        let mut p = profile("xeon-2s-broadwell");
        if let Some(r) = residency {
            p.set("residency_ns", r).unwrap();
        }
        let r_ps = (p.param(lwsim::profile::model::RESIDENCY_NS) * 1000.0).round() as u64;
        let h = p.ps(cost::RMW_HIT);
        let c = p.ps(cost::TRANSFER_L3);
        let per_ownership = if r_ps > h { (r_ps - 1) / h + 1 } else { 1 };
        let period_ns = (r_ps.max(h) + c) as f64 / 1000.0;
        let want = per_ownership as f64 * 1e9 / period_ns;
        for n in [2, 4, 8, 16] {
            let (got, r) = fetch_add_run(&p, n, 2000, false);
            println!(
                "one line, residency {:.1} ns, {n:>2} cores: {got:.3e} ops/s, formula {want:.3e} \
                 ({per_ownership} per ownership)",
                r_ps as f64 / 1000.0
            );
            assert!(within(got, want, 0.05), "{n} cores: {got} vs {want}");
            let transfers = r.total().rfo_from_modified;
            let ops = n as u64 * 2000;
            assert!(
                transfers * per_ownership >= ops * 97 / 100
                    && transfers <= ops / per_ownership + n as u64,
                "{transfers} transfers for {ops} ops"
            );
        }
        // Across sockets (cores 0..36 on a 2 x 18-core machine) the cost sits between the two.
        let (got, _) = fetch_add_run(&p, 36, 500, false);
        let remote_period = (r_ps.max(h) + p.ps(cost::TRANSFER_REMOTE)) as f64 / 1000.0;
        let remote = per_ownership as f64 * 1e9 / remote_period;
        assert!(
            got < want && got > remote * 0.95,
            "{got} not within [{remote}, {want}]"
        );
    }
}

/// N cores each on their own padded line scale linearly: N / RMW-hit cost.
#[test]
fn analytic_own_lines_scale_linearly() {
    let p = profile("xeon-2s-broadwell");
    let hit_ns = p.ps(cost::RMW_HIT) as f64 / 1000.0;
    for n in [1, 2, 8, 32, 64] {
        let (got, r) = fetch_add_run(&p, n, 5000, true);
        let want = n as f64 * 1e9 / hit_ns;
        println!("own lines, {n:>2} cores: {got:.3e} ops/s, formula {want:.3e}");
        assert!(within(got, want, 0.05), "{n} cores: {got} vs {want}");
        assert_eq!(r.total().rfo_from_modified, 0);
    }
}

/// An atomic takes effect when its line arrives: a `fetch_add` requested while another core owns
/// the line returns a value that counts the owner's increments up to the hand-over, not only those
/// before the request (a model that performs it at request time returns the smaller value).
#[test]
fn an_rmw_reads_its_value_when_the_line_arrives_not_when_it_was_requested() {
    let mut p = profile("xeon-2s-broadwell");
    p.set("residency_ns", 200.0).unwrap();
    let seen = Arc::new(AtomicU64::new(0));
    let seen2 = seen.clone();
    let before = Arc::new(AtomicU64::new(0));
    let before2 = before.clone();
    lwsim::run(SimConfig::new(p, 2), move || {
        let c = Arc::new(Padded(AtomicU64::new(0)));
        let start = Arc::new(Padded(AtomicU64::new(0)));
        let (c1, s1) = (c.clone(), start.clone());
        // The owner: takes the line, then increments it back to back for a while.
        let owner = lwsim::thread::spawn(move || {
            s1.0.store(1, Ordering::Relaxed);
            for _ in 0..100 {
                c1.0.fetch_add(1, Ordering::Relaxed);
            }
        });
        let (c2, s2) = (c.clone(), start.clone());
        let (seen2, before2) = (seen2.clone(), before2.clone());
        let requester = lwsim::thread::spawn(move || {
            while s2.0.load(Ordering::Relaxed) == 0 {
                lwsim::pause();
            }
            lwsim::compute(30);
            // What the owner has done by now (read without a coherence access).
            let now = c2.0.as_std().load(Ordering::Relaxed);
            let got = c2.0.fetch_add(1000, Ordering::Relaxed);
            before2.as_std().store(now, Ordering::Relaxed);
            seen2.as_std().store(got, Ordering::Relaxed);
        });
        owner.join().unwrap();
        requester.join().unwrap();
    });
    let (now, got) = (
        before.as_std().load(Ordering::Relaxed),
        seen.as_std().load(Ordering::Relaxed),
    );
    println!("owner's count at the request: {now}; the requester's fetch_add returned {got}");
    assert!(now > 0, "the owner had started");
    assert!(
        got > now,
        "the RMW took effect at its request ({got} <= {now})"
    );
}

/// A 2-thread CAS-loop increment on the `this-machine` profile (its residency, spread and
/// arbitration on): about as many CAS per success as this machine's real threads (1.52-1.56,
/// measured with `cargo run --release -p lwsim --example cas_runs`), where handing the line over on
/// every request gives exactly 2.
#[test]
fn a_two_thread_cas_loop_fails_about_as_often_as_on_real_threads() {
    let full = Profile::builtin("this-machine").unwrap();
    let mut eager = full.clone();
    eager
        .set_all("residency_ns=0,jitter=0,arbitration=0")
        .unwrap();
    let (with, without) = (cas_per_success(full), cas_per_success(eager));
    println!("CAS per success: {with:.3} with residency, {without:.3} without");
    assert!((without - 2.0).abs() < 0.01, "no residency: {without}");
    assert!(
        (1.52 * 0.75..=1.56 * 1.25).contains(&with),
        "{with} CAS per success, real threads 1.52-1.56 (±25 %)"
    );
}

/// The same CAS loop held against measurements the residency was not fitted on: two sessions on
/// another host (a 2-vCPU Intel Xeon VM: RMW 9.4 ns, PAUSE 12.4 ns, one-way transfer 63-70 ns;
/// docs/results.md, "This machine"), whose real CAS attempts per success were 1.441 (1.212-1.490,
/// seven trials) and 1.269 (1.034-1.320, nine trials). The model gets that host's measured costs
/// and the residency every profile without a calibration gets, 3 × its RMW (28.2 ns): the rule
/// taken from the first host, not a fit to these figures. The band: the simulated figure within
/// ±25 % of each session's median (reported; a model change that moves it out fails here).
#[test]
fn the_cas_loop_against_another_hosts_measurements_it_was_not_fitted_on() {
    let mut p = Profile::builtin("this-machine").unwrap();
    p.set_all("rmw_hit_ns=9.4,pause_ns=12.4,transfer_l3_ns=70,residency_ns=28.2")
        .unwrap();
    let sim = cas_per_success(p);
    for (real, lo, hi) in [(1.441, 1.212, 1.490), (1.269, 1.034, 1.320)] {
        println!(
            "simulated {sim:.3} CAS per success, real {real} ({lo}-{hi}): sim / real {:.2}",
            sim / real
        );
        assert!(
            (real * 0.75..=real * 1.25).contains(&sim),
            "{sim} CAS per success against {real} (±25 %)"
        );
    }
}

/// `ownership_until_snoop` against the measurements that bear on how long an owner keeps a
/// contended line (docs/design.md, "Model 3: the structural defaults"), on `this-machine` with
/// its spread and arbitration: this machine's real threads give `fetch_add` runs of median 2 with
/// about 10 % of length 1 (results.md, Validation, "Against this machine"). The window (0, the default) gives runs of
/// median 4 and almost none of 1; the snoop (1) median 3 and 22 % of 1: neither matches, the
/// snoop nearer. The CAS loop with the other host's costs (the test above) gives 1.608 CAS per
/// success under 1, 1.12× and 1.27× that host's two sessions' medians (outside the ±25 % band of
/// the second), where the window gives 1.211 (0.84× and 0.95×). Pinned, so a model change that
/// moves the evidence is seen.
#[test]
fn ownership_until_snoop_against_the_run_lengths_and_the_other_hosts_cas_loop() {
    // (share of runs of length 1, median, 90th percentile), to the printed precision.
    let stats = |runs: Vec<u64>| {
        let mut sorted = runs.clone();
        sorted.sort();
        let ones = runs.iter().filter(|&&r| r == 1).count() as f64 / runs.len() as f64;
        (
            format!("{ones:.2}"),
            sorted[sorted.len() / 2],
            sorted[sorted.len() * 9 / 10],
        )
    };
    let window = Profile::builtin("this-machine").unwrap();
    let mut snoop = window.clone();
    snoop.set("ownership_until_snoop", 1.0).unwrap();
    let (w, s) = (
        stats(fetch_add_run_lengths(window, 5_000)),
        stats(fetch_add_run_lengths(snoop.clone(), 5_000)),
    );
    println!("fetch_add runs (share of 1, median, p90): window {w:?}, snoop {s:?}");
    assert_eq!(w, ("0.00".to_string(), 4, 4), "the window");
    assert_eq!(s, ("0.22".to_string(), 3, 4), "the snoop");
    snoop
        .set_all("rmw_hit_ns=9.4,pause_ns=12.4,transfer_l3_ns=70,residency_ns=28.2")
        .unwrap();
    let sim = cas_per_success(snoop);
    println!("ownership_until_snoop 1: {sim:.3} CAS per success");
    assert_eq!(format!("{sim:.3}"), "1.608");
    assert!(sim > 1.269 * 1.25 && sim < 1.441 * 1.25, "{sim}");
}

/// CAS attempts per successful increment of a 2-thread CAS loop (2000 increments each) under `p`.
fn cas_per_success(p: Profile) -> f64 {
    let run = |p: Profile| {
        let tries = Arc::new(AtomicU64::new(0));
        let t2 = tries.clone();
        lwsim::run(SimConfig::new(p, 2), move || {
            let c = Arc::new(Padded(AtomicU64::new(0)));
            let hs: Vec<_> = (0..2)
                .map(|_| {
                    let (c, t) = (c.clone(), t2.clone());
                    lwsim::thread::spawn(move || {
                        let mut n = 0;
                        for _ in 0..2000 {
                            loop {
                                n += 1;
                                let v = c.0.load(Ordering::Relaxed);
                                if c.0
                                    .compare_exchange(
                                        v,
                                        v + 1,
                                        Ordering::Relaxed,
                                        Ordering::Relaxed,
                                    )
                                    .is_ok()
                                {
                                    break;
                                }
                            }
                        }
                        t.as_std().fetch_add(n, Ordering::Relaxed);
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
        });
        tries.as_std().load(Ordering::Relaxed) as f64 / 4000.0
    };
    run(p)
}

/// The run lengths of a 2-thread `fetch_add` race (consecutive increments by one thread) under
/// `p`: the values each thread's `fetch_add`s returned, merged.
fn fetch_add_run_lengths(p: Profile, k: u64) -> Vec<u64> {
    let seen = Arc::new(std::sync::Mutex::new(vec![Vec::new(), Vec::new()]));
    let s2 = seen.clone();
    lwsim::run(SimConfig::new(p, 2), move || {
        let c = Arc::new(Padded(AtomicU64::new(0)));
        let hs: Vec<_> = (0..2)
            .map(|i| {
                let (c, s) = (c.clone(), s2.clone());
                lwsim::thread::spawn(move || {
                    let v: Vec<u64> = (0..k)
                        .map(|_| c.0.fetch_add(1, Ordering::Relaxed))
                        .collect();
                    s.lock().unwrap()[i] = v;
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    });
    let seen = seen.lock().unwrap();
    let mut owner = vec![0usize; 2 * k as usize];
    for (t, vals) in seen.iter().enumerate() {
        for &v in vals {
            owner[v as usize] = t;
        }
    }
    // Only the stretch in which both threads were incrementing.
    let from = seen.iter().map(|v| v[0]).max().unwrap() as usize;
    let to = seen.iter().map(|v| *v.last().unwrap()).min().unwrap() as usize;
    let mut runs = vec![1u64];
    for i in from + 1..=to {
        if owner[i] == owner[i - 1] {
            *runs.last_mut().unwrap() += 1;
        } else {
            runs.push(1);
        }
    }
    runs
}

/// `residency_spread` changes the shape of the residency window, not its mean: with a narrow
/// window (0) every ownership serves about residency / RMW operations and none serves one alone;
/// with an exponential window (1) short windows give runs of length 1 and long ones long runs,
/// about as many operations per ownership on average.
#[test]
fn residency_spread_widens_the_run_lengths_around_the_same_mean() {
    let mut p = profile("xeon-2s-broadwell");
    let rmw = p.ps(cost::RMW_HIT) as f64 / 1000.0;
    p.set("residency_ns", 6.0 * rmw).unwrap();
    let stats = |runs: &[u64]| {
        let ones = runs.iter().filter(|&&r| r == 1).count() as f64 / runs.len() as f64;
        let mean = runs.iter().sum::<u64>() as f64 / runs.len() as f64;
        let max = *runs.iter().max().unwrap();
        (ones, mean, max)
    };
    let narrow = stats(&fetch_add_run_lengths(p.clone(), 20_000));
    p.set("residency_spread", 1.0).unwrap();
    let wide = stats(&fetch_add_run_lengths(p, 20_000));
    println!("runs (share of length 1, mean, longest): spread 0 {narrow:?}, spread 1 {wide:?}");
    assert_eq!(
        narrow.0, 0.0,
        "a narrow window never serves one operation alone"
    );
    assert!(wide.0 > 0.1, "an exponential window often does: {wide:?}");
    assert!(
        wide.2 > 2 * narrow.2,
        "and sometimes many more: {wide:?} vs {narrow:?}"
    );
    assert!(
        within(wide.1, narrow.1, 0.3),
        "the mean run stays about the same: {wide:?} vs {narrow:?}"
    );
}

/// One thread stores to a line (a plain store, as a lock's release), another loads it while the
/// store's line is on its way: the load's transfer starts when the store's owner answers, which with
/// `residency_after_store` 1 (model 2's choice) is a residency window after the
/// store's grant and with 0 (the default since model 3) at once, so the load completes exactly
/// one window earlier; an RMW keeps its window under both settings.
#[test]
fn residency_after_store_is_a_structural_option() {
    fn load_done_ps(p: &Profile, rmw: bool) -> u64 {
        let out = Arc::new(std::sync::Mutex::new(0u64));
        let o = out.clone();
        lwsim::run(SimConfig::new(p.clone(), 2), move || {
            let x = Arc::new(Padded(AtomicU64::new(0)));
            let x2 = x.clone();
            let w = lwsim::thread::spawn(move || {
                if rmw {
                    x2.0.fetch_add(1, Ordering::Relaxed);
                } else {
                    x2.0.store(1, Ordering::Relaxed);
                }
            });
            let o = o.clone();
            let r = lwsim::thread::spawn(move || {
                // Requested while the store's line is still on its way: booked behind it.
                lwsim::compute(10);
                x.0.load(Ordering::Relaxed);
                *o.lock().unwrap() =
                    lwsim::machine::with_machine(|m| m.map_or(0, |m| m.clock_of_current()));
            });
            w.join().unwrap();
            r.join().unwrap();
        });
        let v = *out.lock().unwrap();
        v
    }
    let base = profile("xeon-2s-broadwell");
    assert_eq!(
        base.get("residency_after_store"),
        Some(1.0),
        "model 2's choice"
    );
    assert_eq!(
        Profile::builtin("xeon-2s-broadwell")
            .unwrap()
            .get("residency_after_store"),
        Some(0.0),
        "the default since model 3"
    );
    let residency = (base.get("residency_ns").unwrap() * 1000.0).round() as u64;
    let mut off = base.clone();
    off.set("residency_after_store", 0.0).unwrap();
    let (store_on, store_off) = (load_done_ps(&base, false), load_done_ps(&off, false));
    let (rmw_on, rmw_off) = (load_done_ps(&base, true), load_done_ps(&off, true));
    println!(
        "store: {store_on} / {store_off} ps; rmw: {rmw_on} / {rmw_off} ps; residency {residency}"
    );
    assert_eq!(store_on - store_off, residency);
    assert_eq!(rmw_on, rmw_off);
}

/// Four readers re-fetch a line Shared by two cores (a writer and a first reader), all at the same
/// instant T1, on `xeon-2s-broadwell` (one socket, one L3; jitter and arbitration off). The
/// writer's store made the line Modified; the first reader's load at 1 µs fetched it from the
/// writer (a Modified load, a transfer under both values) and left it Shared by the two.
///
/// `shared_load_llc` 0 (model 2's choice, and the default on the profiles without an inclusive L3): each re-fetch is a transfer from the
/// nearest sharer, c = `transfer_l3_ns` = 43.5 ns, and with `shared_load_occupancy` 1 it holds
/// the line for its whole cost, so the k-th reader in booking order starts (k − 1)·c after T1
/// and waits k·c: 43 500, 87 000, 130 500 and 174 000 ps.
///
/// `shared_load_llc` 1 (the default on the Intel profiles since model 3): the L3 serves each at `llc_shared_load_ns` = 31.0 ns and holds the line
/// for no time, so all four start at T1 and each waits exactly 31 000 ps.
///
/// The same with one L3 per core (`cores_per_l3` 1, `transfer_socket_ns` set to 100): no sharer is
/// in the reader's L3, so the remote L3 serves it at the transfer to the nearest sharer
/// (`transfer_socket_ns`, 100 000 ps), still pipelined: every reader waits 100 000 ps.
///
/// Under both values every reader joins the sharer set: a second load right after the first
/// hits (`load_hit_ns`, 1.9 ns).
#[test]
fn shared_load_llc_is_a_structural_option() {
    const READERS: usize = 4;
    const T1_NS: u64 = 2_000;
    /// Each reader's (wait of its re-fetch, cost of the load right after it), ps, in reader order.
    fn waits_ps(p: &Profile) -> Vec<(u64, u64)> {
        let out = Arc::new(std::sync::Mutex::new(Vec::new()));
        let o = out.clone();
        let clock = || lwsim::machine::with_machine(|m| m.map_or(0, |m| m.clock_of_current()));
        lwsim::run(SimConfig::new(p.clone(), READERS + 3), move || {
            let x = Arc::new(Padded(AtomicU64::new(0)));
            let x2 = x.clone();
            let w = lwsim::thread::spawn(move || x2.0.store(1, Ordering::Relaxed));
            let x3 = x.clone();
            let first = lwsim::thread::spawn(move || {
                lwsim::compute(1_000);
                x3.0.load(Ordering::Relaxed)
            });
            let rs: Vec<_> = (0..READERS)
                .map(|_| {
                    let x = x.clone();
                    lwsim::thread::spawn(move || {
                        lwsim::compute(T1_NS - lwsim::now_nanos());
                        let t1 = clock();
                        assert_eq!(t1, T1_NS * 1000, "every reader requests at T1");
                        x.0.load(Ordering::Relaxed);
                        let t2 = clock();
                        x.0.load(Ordering::Relaxed);
                        (t2 - t1, clock() - t2)
                    })
                })
                .collect();
            w.join().unwrap();
            assert_eq!(first.join().unwrap(), 1);
            let mut got: Vec<_> = rs.into_iter().map(|h| h.join().unwrap()).collect();
            got.sort();
            *o.lock().unwrap() = got;
        });
        let v = out.lock().unwrap().clone();
        v
    }
    let base = profile("xeon-2s-broadwell");
    assert_eq!(base.get("shared_load_llc"), Some(0.0), "model 2's choice");
    for (name, default) in [
        ("xeon-2s-broadwell", 1.0),
        ("xeon-8s-westmere-ex", 1.0),
        ("epyc-2s-genoa", 0.0),
        ("opteron-4s-6128", 0.0),
        ("this-machine", 0.0),
    ] {
        let p = Profile::builtin(name).unwrap();
        assert_eq!(p.get("shared_load_llc"), Some(default), "{name}'s default");
    }
    assert_eq!(base.get("shared_load_occupancy"), Some(1.0));
    let (c, llc, hit) = (43_500, 31_000, 1_900);
    assert_eq!(base.ps(cost::TRANSFER_L3), c);
    assert_eq!(base.ps(cost::LLC_SHARED_LOAD), llc);
    assert_eq!(base.ps(cost::LOAD_HIT), hit);
    let mut on = base.clone();
    on.set("shared_load_llc", 1.0).unwrap();
    let mut remote = on.clone();
    remote.cores_per_l3 = 1;
    remote.set("transfer_socket_ns", 100.0).unwrap();
    let (w_off, w_on, w_remote) = (waits_ps(&base), waits_ps(&on), waits_ps(&remote));
    println!("shared_load_llc 0: {w_off:?}\n1: {w_on:?}\n1, one L3 per core: {w_remote:?}");
    assert_eq!(
        w_off,
        vec![(c, hit), (2 * c, hit), (3 * c, hit), (4 * c, hit)]
    );
    assert_eq!(w_on, vec![(llc, hit); READERS]);
    assert_eq!(w_remote, vec![(100_000, hit); READERS]);
    // The option's 1 set explicitly is the Intel profile's default, draw for draw.
    let mut shipped = Profile::builtin("xeon-2s-broadwell").unwrap();
    shipped
        .set_all("jitter=0,arbitration=0,residency_after_store=1,wake_placement=0,pair_latency=0")
        .unwrap();
    assert_eq!(waits_ps(&shipped), w_on);
}

/// The (issue, done) clocks of every `fetch_add` of thread A (a burst of `k` on one line, from
/// the start) and of thread B's one `fetch_add` on the same line, issued at `tb_ns`.
type Burst = (Vec<(u64, u64)>, (u64, u64));

fn burst_and_one(p: &Profile, k: usize, tb_ns: u64) -> Burst {
    let out = Arc::new(std::sync::Mutex::new((Vec::new(), (0, 0))));
    let o = out.clone();
    let clock = || lwsim::machine::with_machine(|m| m.map_or(0, |m| m.clock_of_current()));
    lwsim::run(SimConfig::new(p.clone(), 2), move || {
        let x = Arc::new(Padded(AtomicU64::new(0)));
        let x2 = x.clone();
        let a = lwsim::thread::spawn(move || {
            (0..k)
                .map(|_| {
                    let t = clock();
                    x2.0.fetch_add(1, Ordering::Relaxed);
                    (t, clock())
                })
                .collect::<Vec<_>>()
        });
        let b = lwsim::thread::spawn(move || {
            lwsim::compute(tb_ns - lwsim::now_nanos());
            let t = clock();
            assert_eq!(t, tb_ns * 1000, "B requests at tb");
            x.0.fetch_add(1, Ordering::Relaxed);
            (t, clock())
        });
        let ra = a.join().unwrap();
        let rb = b.join().unwrap();
        *o.lock().unwrap() = (ra, rb);
    });
    let v = out.lock().unwrap().clone();
    v
}

/// `ownership_until_snoop`, two threads on `xeon-2s-broadwell` (one socket: c = `transfer_l3_ns`
/// = 43.5 ns between them; h = `rmw_hit_ns` = 8.6 ns; R = `residency_ns` = 25.8 ns, exactly, with
/// jitter off), A running a burst of `fetch_add`s on one line from the start (its first a fill
/// from memory, granted at G), B one `fetch_add` on it at tB.
///
/// B mid-burst (tB = 300 ns, long after G + R):
/// - 0 (the default): B's transfer starts at tB; it is granted at tB + c and done at tB + c + h =
///   tB + 52 100 ps. A's first operation issued after tB misses and waits for B's window: it
///   starts at tB + c + R and is done at tB + 2c + R + h = tB + 121 400 ps.
/// - 1: B's snoop, s = `snoop_fraction` × c = 21 750 ps, reaches A at tB + s; A's operations
///   issued before then hit (two or three of them: h apart); the line reaches B c − s later, so B
///   is done at tB + c + h as under 0. A's first operation issued at or after tB + s sends its
///   snoop at once, but B keeps the line for its own RMW: the transfer starts at tB + c + h and A
///   is done c − s + h later, at tB + 2c − s + 2h = tB + 82 450 ps.
///
/// B early (tB = 50 ns, while A's fill is on its way, so tB + s < G + h): B's transfer starts when
/// A's own RMW is done, G + h, under 1 (B done at G + h + c − s + h) and when A's window ends,
/// G + R, under 0 (B done at G + R + c + h).
#[test]
fn ownership_until_snoop_is_a_structural_option() {
    let base = profile("xeon-2s-broadwell");
    let (c, h, r) = (43_500u64, 8_600u64, 25_800u64);
    assert_eq!(base.ps(cost::TRANSFER_L3), c);
    assert_eq!(base.ps(cost::TRANSFER_SOCKET), c);
    assert_eq!(base.ps(cost::RMW_HIT), h);
    assert_eq!(base.get("residency_ns"), Some(25.8));
    assert_eq!(base.get("residency_spread"), Some(0.0));
    assert_eq!(base.get("ownership_until_snoop"), Some(0.0), "the default");
    assert_eq!(base.get("snoop_fraction"), Some(0.5));
    let s = c / 2;
    let mut on = base.clone();
    on.set("ownership_until_snoop", 1.0).unwrap();
    const K: usize = 60;
    // A's first operation issued at or after `from`: (its index, issue, done).
    let first_after = |a: &[(u64, u64)], from: u64| {
        let i = a.iter().position(|&(t, _)| t >= from).unwrap();
        (i, a[i].0, a[i].1)
    };
    let tb = 300_000;
    for (p, until_snoop) in [(&base, false), (&on, true)] {
        let (a, b) = burst_and_one(p, K, tb / 1000);
        let g = a[0].1 - h;
        assert_eq!(g, 90_000, "A's fill: memory_ns from its start at 0");
        assert!(g + r < tb, "B requests after A's window: {a:?}");
        assert_eq!(
            b,
            (tb, tb + c + h),
            "B's fetch_add, until_snoop {until_snoop}"
        );
        let start = if until_snoop { tb + s } else { tb };
        let (i, t, done) = first_after(&a, start);
        // Every operation of A before the transfer's start hits; the next one waits.
        for (j, &(t0, t1)) in a[1..i].iter().enumerate() {
            assert_eq!(t1 - t0, h, "A's operation {} hits", j + 1);
        }
        let hits_after_tb = a[..i].iter().filter(|&&(t0, _)| t0 >= tb).count();
        let want_done = if until_snoop {
            tb + 2 * c - s + 2 * h
        } else {
            tb + 2 * c + r + h
        };
        println!(
            "until_snoop {until_snoop}: A granted at {g}, {hits_after_tb} hits after tB, \
             A's miss issued at {t} done at {done} (tB + {})",
            done - tb
        );
        assert_eq!(done, want_done, "A's first miss after B");
        if until_snoop {
            assert!(
                (2..=3).contains(&hits_after_tb),
                "A keeps hitting until the snoop arrives: {hits_after_tb}"
            );
        } else {
            assert_eq!(hits_after_tb, 0, "under 0 the line leaves at B's request");
        }
    }
    // B requests while A's fill is on its way.
    let tb = 50_000;
    for (p, until_snoop) in [(&base, false), (&on, true)] {
        let (a, b) = burst_and_one(p, K, tb / 1000);
        let g = a[0].1 - h;
        assert!(
            tb + s < g + h,
            "B's snoop arrives before A's own RMW is done: {a:?}"
        );
        let want = if until_snoop {
            g + h + c - s + h
        } else {
            g + r + c + h
        };
        println!(
            "until_snoop {until_snoop}, B at 50 ns: A granted at {g}, B done at {}",
            b.1
        );
        assert_eq!(b, (tb, want), "B's fetch_add, until_snoop {until_snoop}");
    }
    // The option's 0 set explicitly is the default, draw for draw.
    let mut off = base.clone();
    off.set("ownership_until_snoop", 0.0).unwrap();
    assert_eq!(burst_and_one(&off, K, 300), burst_and_one(&base, K, 300));
}

/// `home_node`, on `xeon-8s-westmere-ex`'s costs reduced to three one-core sockets (so the run's
/// two cores are sockets 0 and 1, one thread each): thread A takes three lines with a `fetch_add`
/// each and stays busy; thread B takes each of them at 1 µs, 2 µs and 3 µs. Each of B's
/// `fetch_add`s is a transfer from A's socket: c + h with h = `rmw_hit_ns` = 9.4 ns, c =
/// `transfer_remote_ns` = 135.7 ns under 0 (the default) for every line.
///
/// Under 1 the request goes through the line's home socket (line index mod 3): with every pair
/// one hop apart (no hop table), a home on A's or B's socket adds nothing and the third socket one
/// one-way hop, (135.7 − 51.2) / 2 = 42.25 ns. With a hop table that puts sockets 0 and 1 two hops
/// apart (0 – 2 – 1), every path is two hops longer than a one-hop pair's: 84.5 ns more whatever
/// the home (and nothing more under 0, which knows no hops). (The lines' addresses, so their
/// homes, differ from run to run; each run reports its own.)
#[test]
fn home_node_is_a_structural_option() {
    /// B's wait for each line's `fetch_add`, ps, with the line's home socket.
    fn waits(p: &Profile) -> Vec<(usize, u64)> {
        let out = Arc::new(std::sync::Mutex::new(Vec::new()));
        let o = out.clone();
        let clock = || lwsim::machine::with_machine(|m| m.map_or(0, |m| m.clock_of_current()));
        lwsim::run(SimConfig::new(p.clone(), 2), move || {
            let xs: Arc<Vec<Padded<AtomicU64>>> =
                Arc::new((0..3).map(|_| Padded(AtomicU64::new(0))).collect());
            let x2 = xs.clone();
            let a = lwsim::thread::spawn(move || {
                for x in x2.iter() {
                    x.0.fetch_add(1, Ordering::Relaxed);
                }
                lwsim::compute(5_000 - lwsim::now_nanos());
            });
            let b = lwsim::thread::spawn(move || {
                xs.iter()
                    .enumerate()
                    .map(|(i, x)| {
                        lwsim::compute(1_000 * (i as u64 + 1) - lwsim::now_nanos());
                        let t = clock();
                        x.0.fetch_add(1, Ordering::Relaxed);
                        let home = (&x.0 as *const AtomicU64 as usize >> 6) % 3;
                        (home, clock() - t)
                    })
                    .collect::<Vec<_>>()
            });
            a.join().unwrap();
            *o.lock().unwrap() = b.join().unwrap();
        });
        let v = out.lock().unwrap().clone();
        v
    }
    let mut base = profile("xeon-8s-westmere-ex");
    base.sockets = 3;
    base.cores_per_socket = 1;
    base.cores_per_l3 = 1;
    base.threads_per_core = 1;
    base.hops.clear();
    let (c, h, hop) = (135_700u64, 9_400u64, 42_250u64);
    assert_eq!(base.ps(cost::TRANSFER_REMOTE), c);
    assert_eq!(base.ps(cost::RMW_HIT), h);
    assert_eq!((c - base.ps(cost::TRANSFER_SOCKET)) / 2, hop);
    assert_eq!(base.get("home_node"), Some(0.0), "the default");
    let mut on = base.clone();
    on.set("home_node", 1.0).unwrap();
    let mut two = base.clone();
    two.hops = vec![vec![0, 2, 1], vec![2, 0, 1], vec![1, 1, 0]];
    let mut two_on = two.clone();
    two_on.set("home_node", 1.0).unwrap();
    let (w_off, w_on, w_two, w_two_on) = (waits(&base), waits(&on), waits(&two), waits(&two_on));
    println!(
        "home_node 0: {w_off:?}\n1: {w_on:?}\ntwo hops, 0: {w_two:?}\ntwo hops, 1: {w_two_on:?}"
    );
    for w in [&w_off, &w_on, &w_two, &w_two_on] {
        let mut homes: Vec<usize> = w.iter().map(|w| w.0).collect();
        homes.sort();
        assert_eq!(
            homes,
            vec![0, 1, 2],
            "three consecutive lines, one per home"
        );
    }
    for i in 0..3 {
        assert_eq!(w_off[i].1, c + h);
        assert_eq!(w_two[i].1, c + h, "under 0 the hop table is not used");
        let home = w_on[i].0;
        let detour = if home == 2 { hop } else { 0 };
        assert_eq!(w_on[i].1, c + h + detour, "home {home}");
        assert_eq!(
            w_two_on[i].1,
            c + h + 2 * hop,
            "two hops, home {}",
            w_two_on[i].0
        );
    }
    // 0 set explicitly is the default.
    let mut off = base.clone();
    off.set("home_node", 0.0).unwrap();
    assert!(waits(&off).iter().all(|w| w.1 == c + h));
}

/// `pair_latency` on `xeon-2s-e5-2680v4` (all 56 hardware threads, one simulated thread on each;
/// arbitration off, SMT siblings at full speed, jitter left at the profile's 0.2): an owner takes a line with a `fetch_add` at
/// T = 200 µs (after every thread started), and a second hardware thread takes it with a
/// `fetch_add` at T + 1 µs, T + 2 µs, ..., one line per pair. The second thread waits transfer(owner, it) + `rmw_hit_ns` (7.5 ns).
///
/// Under 1 transfer(a, b) is the measured matrix's value for the pair, not jittered (the file
/// `profiles/matrices/xeon-2s-e5-2680v4.csv`, from nviennot/core-to-core-latency's CSV of this
/// CPU: 11.6 ns for threads 0 and 28, 8.0 ns for 2 and 30, both SMT siblings; 36.3 ns for 0 and
/// 5, 51.2 ns for 0 and 1, both on one socket; 123.3 ns for 0 and 14, 130.7 ns for 0 and 15,
/// across sockets): two pairs of one class differ by what the matrix says. Under 0 (the
/// default; jitter 0 for exact figures) each pair costs its class's `transfer_*_ns` (7.6, 43.5,
/// 118 ns), the two pairs of a class alike.
#[test]
fn pair_latency_is_a_structural_option() {
    const PAIRS: [(usize, usize); 6] = [(0, 28), (2, 30), (0, 5), (0, 1), (0, 14), (0, 15)];
    const START: u64 = 200_000;
    /// Each pair's wait (ps) for its line's second `fetch_add`, and the hardware threads that
    /// found a thread of the run on them.
    fn waits(p: &Profile) -> (Vec<u64>, Vec<usize>) {
        let out = Arc::new(std::sync::Mutex::new((vec![0u64; PAIRS.len()], Vec::new())));
        let o = out.clone();
        let hw = p.hw_threads();
        let clock = || lwsim::machine::with_machine(|m| m.map_or(0, |m| m.clock_of_current()));
        let core = || lwsim::machine::with_machine(|m| m.and_then(|m| m.core_of_current()));
        lwsim::run(SimConfig::new(p.clone(), hw), move || {
            let xs: Arc<Vec<Padded<AtomicU64>>> = Arc::new(
                (0..PAIRS.len())
                    .map(|_| Padded(AtomicU64::new(0)))
                    .collect(),
            );
            let hs: Vec<_> = (0..hw)
                .map(|_| {
                    let (xs, o) = (xs.clone(), o.clone());
                    lwsim::thread::spawn(move || {
                        // After the last thread's start (the supervisor's spawns take time).
                        let t0 = lwsim::now_nanos();
                        assert!(t0 < START, "started at {t0} ns");
                        lwsim::compute(START - t0);
                        let me = core().expect("a simulated thread runs on a core");
                        o.lock().unwrap().1.push(me);
                        for (i, &(a, _)) in PAIRS.iter().enumerate() {
                            if a == me {
                                xs[i].0.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        for (i, &(_, b)) in PAIRS.iter().enumerate() {
                            if b == me {
                                let at = START + 1_000 * (i as u64 + 1);
                                lwsim::compute(at - lwsim::now_nanos());
                                let t = clock();
                                xs[i].0.fetch_add(1, Ordering::Relaxed);
                                o.lock().unwrap().0[i] = clock() - t;
                            }
                        }
                        // Every core keeps its thread until the last pair is done.
                        lwsim::compute(START + 10_000 - lwsim::now_nanos());
                        assert_eq!(core(), Some(me), "the thread stayed on its core");
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
        });
        let v = out.lock().unwrap().clone();
        v
    }
    let shipped = Profile::builtin("xeon-2s-e5-2680v4").unwrap();
    assert_eq!(
        shipped.get("pair_latency"),
        Some(1.0),
        "the default since model 3"
    );
    let mut base = shipped.clone();
    base.set_all("model=2").unwrap();
    assert_eq!(base.get("pair_latency"), Some(0.0), "model 2's choice");
    assert_eq!(base.get("jitter"), Some(0.2));
    let h = base.ps(cost::RMW_HIT);
    assert_eq!(h, 7_500);
    let measured: Vec<u64> = PAIRS
        .iter()
        .map(|&(a, b)| base.pair_ps(a, b).unwrap())
        .collect();
    assert_eq!(
        measured,
        vec![11_600, 8_000, 36_300, 51_200, 123_300, 130_700],
        "the matrix file's values, tenths of ns"
    );
    let mut on = base.clone();
    // smt_share 1: the threads' waits until their times are not stretched by a busy sibling.
    on.set_all("pair_latency=1,arbitration=0,smt_share=1")
        .unwrap();
    let mut off = base.clone();
    off.set_all("jitter=0,arbitration=0,smt_share=1").unwrap();
    let ((w_on, cores_on), (w_off, cores_off)) = (waits(&on), waits(&off));
    println!("pair_latency 1: {w_on:?}\n0: {w_off:?}");
    for cores in [cores_on, cores_off] {
        let mut c = cores;
        c.sort();
        assert_eq!(
            c,
            (0..56).collect::<Vec<_>>(),
            "one thread per hardware thread"
        );
    }
    for (i, &(a, b)) in PAIRS.iter().enumerate() {
        assert_eq!(
            w_on[i],
            measured[i] + h,
            "pair_latency 1, threads {a} and {b}"
        );
        assert_eq!(
            w_off[i],
            base.transfer_ps(a, b) + h,
            "0, threads {a} and {b}"
        );
    }
    // Two pairs of one class: the matrix's difference under 1, none under 0.
    for k in [0, 2, 4] {
        assert_eq!(
            w_on[k].abs_diff(w_on[k + 1]),
            measured[k].abs_diff(measured[k + 1])
        );
        assert_eq!(w_off[k], w_off[k + 1]);
    }
    // The option's 0 set explicitly is the default, draw for draw.
    let mut zero = off.clone();
    zero.set("pair_latency", 0.0).unwrap();
    assert_eq!(waits(&zero), waits(&off));
}
