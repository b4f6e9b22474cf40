//! Validation that can fail: a ticket lock within one socket against the birth–death model of
//! Boyd-Wickizer, Kaashoek, Morris and Zeldovich, "Non-scalable locks are dangerous" (Linux
//! Symposium 2012), computed from the profile's own parameters, never fitted.
//!
//! The model: state k = 0..n is the number of cores holding or waiting for the lock. A core
//! outside the lock arrives at rate `a` (one over its think time plus its ticket `fetch_add`), so
//! the chain moves k → k+1 at rate (n − k)·a; the lock hands over at rate 1 / (s + c·k/2), with `s`
//! the serial section (the critical section plus the release store's line transfer) and `c` one
//! line transfer: the next ticket holder's re-fetch of the now-serving line waits, on average,
//! behind half of the k spinners' re-fetches. Throughput is Σₖ πₖ / (s + c·k/2) over the
//! stationary distribution π. The chain assumes exponential think times, so the simulated threads
//! draw theirs from a seeded exponential distribution.
//!
//! Without the c·k/2 term the same chain is a lock whose throughput levels off and stays flat (an
//! MCS-like hand-off); [`the_chain_separates_collapse_from_a_flat_lock`] checks that the ±25 %
//! band of the simulated test excludes such a lock at the socket's larger core counts, so the
//! simulated test fails for a model that does not collapse.

use lwsim::atomic::AtomicU64;
use lwsim::profile::cost;
use lwsim::{now_nanos, Profile, SimConfig};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};

#[global_allocator]
static LINE_ALIGNED: lwsim::LineAligned = lwsim::LineAligned;

/// A value alone on its 64-byte line.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Padded<T>(T);

/// The critical section (ns of computation, no shared memory).
const CS_NS: f64 = 100.0;
/// The mean think time between a release and the next acquire (ns, exponential).
const THINK_NS: f64 = 1000.0;
/// Virtual warm-up and measurement window (ns).
const WARM_NS: u64 = 20_000;
const WINDOW_NS: u64 = 300_000;
/// The band the simulation must stay in, relative to the chain.
const TOLERANCE: f64 = 0.25;
const PROFILE: &str = "xeon-2s-broadwell";

/// A ticket lock: `next` hands out tickets (`fetch_add`), `serving` says whose turn it is; a
/// waiter spins on loads of `serving` with a PAUSE between them; release is a plain store. The
/// two counters sit on lines of their own (Linux's ticket spinlock keeps both in one word; the
/// chain models only the now-serving line's hand-off).
#[derive(Debug, Default)]
struct TicketLock {
    next: Padded<AtomicU64>,
    serving: Padded<AtomicU64>,
}

impl TicketLock {
    fn lock(&self) -> u64 {
        let t = self.next.0.fetch_add(1, Ordering::Relaxed);
        while self.serving.0.load(Ordering::Acquire) != t {
            lwsim::pause();
        }
        t
    }
    fn unlock(&self, ticket: u64) {
        self.serving.0.store(ticket + 1, Ordering::Release);
    }
}

/// The transfer cost c (ns) among `n` cores of socket 0: `transfer_l3_ns`, or under the
/// structural option `pair_latency` 1 the mean of the measured pair latencies among hardware
/// threads 0..n (where the run's threads are: one per physical core of socket 0).
fn transfer_ns(p: &Profile, n: usize) -> f64 {
    if p.get("pair_latency") >= Some(0.5) {
        let sum: u64 = (0..n)
            .flat_map(|a| (0..n).filter(move |&b| b != a).map(move |b| (a, b)))
            .map(|(a, b)| p.pair_ps(a, b).expect("a measured pair"))
            .sum();
        sum as f64 / (n * (n - 1)) as f64 / 1000.0
    } else {
        p.ps(cost::TRANSFER_L3) as f64 / 1000.0
    }
}

/// The model's parameters from a profile at `n` cores: (a per ns, s in ns, c in ns).
fn chain_params(p: &Profile, n: usize) -> (f64, f64, f64) {
    let ns = |i: usize| p.ps(i) as f64 / 1000.0;
    let c = transfer_ns(p, n);
    let s = CS_NS + c;
    let a = 1.0 / (THINK_NS + c + ns(cost::RMW_HIT));
    (a, s, c)
}

/// Throughput (acquisitions per second) of the birth–death chain at `n` cores; `collapse` false
/// drops the c·k/2 term (a hand-off whose cost does not grow with the waiters).
fn chain_throughput(n: usize, a: f64, s: f64, c: f64, collapse: bool) -> f64 {
    birth_death(n, a, |k| {
        s + if collapse { c * k as f64 / 2.0 } else { 0.0 }
    })
}

/// Throughput of the birth–death chain at `n` cores with hand-off time `service_ns(k)` in state
/// k: π_k ∝ Π_{i<k} λ_i / μ_{i+1}, λ_i = (n − i)·a, μ_k = 1 / service(k).
fn birth_death(n: usize, a: f64, service_ns: impl Fn(usize) -> f64) -> f64 {
    let mut pi = vec![1.0f64];
    for k in 1..=n {
        let prev = pi[k - 1];
        pi.push(prev * (n - k + 1) as f64 * a * service_ns(k));
    }
    let z: f64 = pi.iter().sum();
    (1..=n).map(|k| pi[k] / z / service_ns(k)).sum::<f64>() * 1e9
}

/// The same chain with the hand-off time worked out under its own assumption (one line, its
/// transfers served one at a time) instead of c·k/2, from the profile's own parameters. In state
/// k the release store leaves w = k − 1 spinners to re-fetch the now-serving line: the first
/// fetches it from the releaser once the releaser's residency window `r` has passed (r + c), the
/// second starts when the first's transfer ends, each later one `o`·c after the one before (`o`:
/// `shared_load_occupancy`), and each arrives c after its start. Under the structural option
/// `shared_load_llc` 1 every re-fetch after the first is a load of a Shared line served by the L3:
/// it costs `llc_shared_load_ns` instead of c and holds the line for no time (`o` = 0), so they
/// all start when the first's transfer ends. Under `ownership_until_snoop` 1 the release store
/// opens no window and the first re-fetch's snoop was sent before the release's line arrived, so
/// the first arrives c − snoop after the release's grant (r = −snoop); under
/// `residency_after_store` 0 the release store opens no window (r = 0). The next ticket holder is at a uniform position j among them; it runs its critical
/// section from its arrival, and its release store's ownership request starts when both it is
/// ready and the line has served the re-fetches booked before it, then costs c plus
/// `invalidate_per_sharer_ns` for each sharer beyond the first. The OLS'12 c·k/2 counts the wait
/// before the next holder's re-fetch, not the release's wait behind the re-fetches after it.
fn release_wait_service_ns(p: &Profile, n: usize, k: usize) -> f64 {
    let ns = |i: usize| p.ps(i) as f64 / 1000.0;
    let c = transfer_ns(p, n);
    let key = |name: &str| p.get(name).expect("a model key");
    let (r, o, inv) = (
        key("residency_ns"),
        key("shared_load_occupancy"),
        key("invalidate_per_sharer_ns"),
    );
    // Under `ownership_until_snoop` 1 a release store opens no window and the first re-fetch,
    // requested while the release's ownership transfer is on its way, sends its snoop on at
    // once: it arrives c − snoop after the release's grant, as if the window were −snoop.
    let r = if key("ownership_until_snoop") >= 0.5 {
        -key("snoop_fraction") * c
    } else if key("residency_after_store") < 0.5 {
        0.0
    } else {
        r
    };
    // The re-fetches after the first: their cost and the fraction of it they hold the line.
    let (re, o) = if key("shared_load_llc") >= 0.5 {
        (ns(cost::LLC_SHARED_LOAD), 0.0)
    } else {
        (c, o)
    };
    let w = k - 1;
    if w == 0 {
        return CS_NS + c;
    }
    let arrive = |j: usize| {
        if j == 1 {
            r + c
        } else {
            r + c + (j - 2) as f64 * o * re + re
        }
    };
    let free = r + c + (w - 1) as f64 * o * re;
    let rfo = c + (w - 1) as f64 * inv;
    (1..=w)
        .map(|j| (arrive(j) + CS_NS).max(free) + rfo)
        .sum::<f64>()
        / w as f64
}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// An exponential draw with mean `mean` (ns), from 53 random bits.
fn exponential(rng: &mut u64, mean: f64) -> u64 {
    let u = ((xorshift(rng) >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    (-mean * u.ln()).round() as u64
}

/// `n` cores take the ticket lock for the window; acquisitions per virtual second.
fn simulate(p: &Profile, n: usize) -> f64 {
    let count = Arc::new(Mutex::new(0u64));
    let out = count.clone();
    lwsim::run(SimConfig::new(p.clone(), n), move || {
        let lock = Arc::new(TicketLock::default());
        let hs: Vec<_> = (0..n as u64)
            .map(|i| {
                let lock = lock.clone();
                lwsim::thread::spawn(move || {
                    let mut rng = 0x9E37_79B9_7F4A_7C15 ^ ((i + 1) << 32);
                    let mut mine = 0u64;
                    loop {
                        lwsim::compute(exponential(&mut rng, THINK_NS));
                        let t = lock.lock();
                        let at = now_nanos();
                        if at >= WARM_NS + WINDOW_NS {
                            lock.unlock(t);
                            return mine;
                        }
                        if at >= WARM_NS {
                            mine += 1;
                        }
                        lwsim::compute(CS_NS as u64);
                        lock.unlock(t);
                    }
                })
            })
            .collect();
        let total: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
        *out.lock().unwrap() = total;
    });
    let total = *count.lock().unwrap();
    total as f64 / (WINDOW_NS as f64 * 1e-9)
}

/// The test can fail: a lock that stays flat past its peak (the chain without the c·k/2 term, or
/// the chain's own peak held constant) lies outside the ±25 % band at the socket's larger core
/// counts.
#[test]
fn the_chain_separates_collapse_from_a_flat_lock() {
    let p = Profile::builtin(PROFILE).unwrap();
    let mut peak = 0.0f64;
    let mut missed_flat = Vec::new();
    let mut missed_peak = Vec::new();
    for n in 2..=p.cores_per_socket {
        let (a, s, c) = chain_params(&p, n);
        let model = chain_throughput(n, a, s, c, true);
        let flat = chain_throughput(n, a, s, c, false);
        peak = peak.max(model);
        if (flat / model - 1.0).abs() > TOLERANCE {
            missed_flat.push(n);
        }
        if (peak / model - 1.0).abs() > TOLERANCE {
            missed_peak.push(n);
        }
    }
    println!("outside ±25 %: no c·k/2 term at {missed_flat:?}; peak held flat at {missed_peak:?}");
    assert!(
        missed_flat.len() >= 4 && missed_flat.contains(&p.cores_per_socket),
        "the band does not exclude a lock without the c·k/2 term: {missed_flat:?}"
    );
    assert!(
        missed_peak.len() >= 3 && missed_peak.contains(&p.cores_per_socket),
        "the band does not exclude a lock that stays at its peak: {missed_peak:?}"
    );
}

/// One row of the table: the simulated ticket lock beside the chains at `cores`.
#[derive(Clone, Copy, Debug)]
struct Row {
    cores: usize,
    sim: f64,
    /// The OLS'12 chain (c·k/2).
    chain: f64,
    /// The chain without the c·k/2 term (a lock that does not collapse).
    flat: f64,
    /// The chain with the release's wait behind the re-fetches ([`release_wait_service_ns`]).
    release_wait: f64,
}

/// The simulated ticket lock beside the chains at 2..(socket size), printed.
fn table(p: &Profile) -> Vec<Row> {
    let (a, s, c) = chain_params(p, p.cores_per_socket);
    println!(
        "{PROFILE}: c = {c:.2} ns at {} cores (transfer_l3_ns, or the mean measured pair under \
         pair_latency 1), s = cs {CS_NS} + c = {s:.2} ns, 1/a = think {THINK_NS} + c + \
         rmw_hit_ns = {:.1} ns",
        p.cores_per_socket,
        1.0 / a
    );
    println!(
        "cores  sim Mops/s  chain Mops/s  sim/chain  flat/chain  release-wait chain  sim/release-wait"
    );
    (2..=p.cores_per_socket)
        .map(|n| {
            let (a, s, c) = chain_params(p, n);
            let row = Row {
                cores: n,
                sim: simulate(p, n),
                chain: chain_throughput(n, a, s, c, true),
                flat: chain_throughput(n, a, s, c, false),
                release_wait: birth_death(n, a, |k| release_wait_service_ns(p, n, k)),
            };
            println!(
                "{n:>5}  {:>10.3}  {:>12.3}  {:>9.2}  {:>10.2}  {:>18.3}  {:>16.2}",
                row.sim / 1e6,
                row.chain / 1e6,
                row.sim / row.chain,
                row.flat / row.chain,
                row.release_wait / 1e6,
                row.sim / row.release_wait,
            );
            row
        })
        .collect()
}

/// The table on the profile as shipped (or with `LWSIM_SET`'s overrides), simulated once for
/// all the tests of this file.
fn shared_table() -> &'static [Row] {
    static TABLE: OnceLock<Vec<Row>> = OnceLock::new();
    TABLE.get_or_init(|| table(&profile_with_overrides()))
}

fn profile_with_overrides() -> Profile {
    let mut p = Profile::builtin(PROFILE).unwrap();
    // `LWSIM_SET=KEY=VALUE,...` overrides profile keys for a sensitivity run (printed); the
    // chain is recomputed from the overridden values.
    if let Ok(spec) = std::env::var("LWSIM_SET") {
        p.set_all(&spec).unwrap();
        println!("overrides: {spec}");
    }
    p
}

/// The band the simulation must stay in relative to the release-wait chain.
const RELEASE_WAIT_TOLERANCE: f64 = 0.15;

/// The miss below, explained by a check that can fail (in the test command): the simulated
/// ticket lock is within ±15 % of the chain whose hand-off time is worked out under the chain's
/// own serial assumption, the release's wait included ([`release_wait_service_ns`]), at every
/// core count 2..18, and that chain is itself far below a flat lock's at the socket's larger core
/// counts (so a model that does not collapse fails it too).
#[test]
fn ticket_lock_matches_the_chain_once_the_release_waits_behind_the_re_fetches() {
    let rows = shared_table();
    let misses: Vec<_> = rows
        .iter()
        .map(|r| (r.cores, r.sim / r.release_wait))
        .filter(|&(_, q)| (q - 1.0).abs() > RELEASE_WAIT_TOLERANCE)
        .collect();
    assert!(
        misses.is_empty(),
        "outside ±15 % of the release-wait chain at (cores, sim/release-wait): {misses:?}"
    );
    let far: Vec<_> = rows
        .iter()
        .filter(|r| r.flat / r.release_wait > 1.0 + RELEASE_WAIT_TOLERANCE)
        .map(|r| r.cores)
        .collect();
    let socket = rows.last().unwrap().cores;
    assert!(
        far.len() >= 4 && far.contains(&socket),
        "the band does not exclude a flat lock: {far:?}"
    );
}

/// The OLS'12 comparison as a reported table, not a one-sided check (in the test command): on the
/// profile as shipped (model 3: Shared re-fetches served by the L3, pipelined; no window after
/// the release store; the measured pair matrix) the simulated ticket lock's figures are those
/// `docs/results.md` reports (pinned to the printed precision, so a model change that moves any
/// of them is seen and the table is rerun with it), and the core counts within ±25 % of the
/// OLS'12 chain are those it reports: 2..10. Past them the simulation is flatter than the chain
/// (sim/chain 1.32 at 11 cores to 2.06 at 18): a miss, reported with its mechanism. Once the
/// spinners' re-fetches overlap, a hand-off costs nearly the same whatever the number of
/// waiters, where the chain's c·k/2 serializes them; the release-wait chain worked out under the
/// same choices (the test above) is within ±15 % at every core count. Under model 2's choices
/// (`LWSIM_SET=model=2`: re-fetches served one at a time) the model collapsed more steeply than
/// the chain instead (0.60 at 18). The OLS'12 measurements were taken on an AMD machine; which
/// choice an Intel part's collapse supports needs a measured Intel curve. Not fitted. Under
/// `LWSIM_SET` (a sensitivity run) the table is printed, not pinned.
#[test]
fn ticket_lock_against_the_ols12_chain_as_reported() {
    /// (cores, sim Mops/s, sim/chain), as `docs/results.md` reports them.
    const REPORTED: &[(usize, f64, f64)] = &[
        (2, 1.647, 1.02),
        (3, 2.437, 1.03),
        (4, 3.213, 1.05),
        (5, 3.877, 1.07),
        (6, 4.367, 1.08),
        (7, 4.720, 1.10),
        (8, 4.897, 1.13),
        (9, 4.887, 1.16),
        (10, 4.767, 1.22),
        (11, 4.677, 1.32),
        (12, 4.577, 1.42),
        (13, 4.477, 1.53),
        (14, 4.443, 1.65),
        (15, 4.403, 1.75),
        (16, 4.353, 1.85),
        (17, 4.300, 1.95),
        (18, 4.270, 2.06),
    ];
    let rows = shared_table();
    let within: Vec<usize> = rows
        .iter()
        .filter(|r| (r.sim / r.chain - 1.0).abs() <= TOLERANCE)
        .map(|r| r.cores)
        .collect();
    println!("within ±25 % of the OLS'12 chain at {within:?} cores");
    if std::env::var_os("LWSIM_SET").is_some() {
        return;
    }
    let got: Vec<(usize, String, String)> = rows
        .iter()
        .map(|r| {
            (
                r.cores,
                format!("{:.3}", r.sim / 1e6),
                format!("{:.2}", r.sim / r.chain),
            )
        })
        .collect();
    let want: Vec<(usize, String, String)> = REPORTED
        .iter()
        .map(|&(n, sim, q)| (n, format!("{sim:.3}"), format!("{q:.2}")))
        .collect();
    assert_eq!(
        got, want,
        "the simulated ticket lock moved: rerun the OLS'12 table in docs/results.md"
    );
    assert_eq!(
        within,
        (2..=10).collect::<Vec<_>>(),
        "the points within the band moved: rerun the OLS'12 table in docs/results.md"
    );
}
