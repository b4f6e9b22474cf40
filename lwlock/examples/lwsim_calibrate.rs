//! Calibrates lwsim's `this-machine` profile: measures here, on real threads, the costs the
//! simulator charges, and writes `lwsim/profiles/this-machine.json` (or `--out PATH`).
//!
//! ```text
//! cargo run --release -p lwlock --example lwsim_calibrate [-- --out PATH] [--quick]
//! ```
//!
//! Measured (threads pinned with `sched_setaffinity`): L1 load latency (pointer chase in 16 KiB),
//! store and uncontended `lock xadd` on an owned line, `mfence`, PAUSE, DRAM latency (pointer
//! chase over 256 MiB), the two-core line ping-pong (a CAS on one `AtomicBool` bounced between
//! CPUs 0 and 1, one-way = round trip / 2, the method of nviennot/core-to-core-latency), an empty
//! FUTEX_WAKE (the system-call cost), the waker's cost of a FUTEX_WAKE that wakes a sleeper and the
//! sleeper's wake-to-run latency (from before the wake call to the sleeper running, same
//! CLOCK_MONOTONIC), each after the sleeper's CPU idled briefly (20 µs) and after a long idle
//! (1 ms), a futex ping-pong of two threads pinned to one CPU (a context switch each way) and the
//! overshoot of a 1 ms sleep (timer slack). The time slice is computed from the CPU count and the
//! kernel's formula. The topology is read from `/sys/devices/system/cpu`.
//!
//! Of the model parameters, only the instruction time is fitted here: the uncontended
//! acquire+release of the atomic and the classic LWLock, shared and exclusive, measured as the
//! criterion benchmark does, against their memory operations at the costs just measured plus
//! their instruction counts (least squares, `fit_instruction_ns`). The others (residency,
//! spread, arbitration, store buffer, ...) are the shipped profile's, each with its source;
//! `lwsim`'s `cas_runs --fit-residency` fits the residency in the same session.
//!
//! Every figure is the median of its trials, reported with its spread (p10–p90) and the number of
//! trials, in the table printed to stderr and in each value's source. On a loaded or virtualised
//! machine the figures move between sessions (a one-way transfer of 35 ns in one session and
//! 87–112 ns in another has been seen on the same VM), so a profile calibrated here is valid only
//! for comparisons run in the same session as its calibration; the program says so when it ends.

use std::hint::black_box;

/// The byte just past the `}` that closes the JSON object whose `{` is at `open` in `text`
/// (nested objects and strings, with their escapes, skipped).
fn object_end(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_str = false;
    let mut escaped = false;
    for (i, ch) in text[open..].char_indices() {
        if in_str {
            match (escaped, ch) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match ch {
            '"' => in_str = true,
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// `section` (a JSON object's text) with its member `key`'s object value replaced by `member`
/// (`"key": {...}`); a section without that member gets `member` added as its first.
fn replace_member(section: &str, key: &str, member: &str) -> String {
    let Some(start) = section.find(&format!("\"{key}\"")) else {
        return match section.find('{') {
            Some(open) => format!("{} {member},{}", &section[..=open], &section[open + 1..]),
            None => section.to_string(),
        };
    };
    match section[start..]
        .find('{')
        .and_then(|i| object_end(section, start + i))
    {
        Some(end) => format!("{}{member}{}", &section[..start], &section[end..]),
        None => section.to_string(),
    }
}

/// The `"model": { ... }` member of the shipped this-machine profile, as text.
fn shipped_model_section() -> Option<&'static str> {
    let text: &'static str = include_str!("../../lwsim/profiles/this-machine.json");
    let start = text.find("\"model\"")?;
    let open = start + text[start..].find('{')?;
    Some(&text[start..object_end(text, open)?])
}
use lwlock::{Mode, RawAtomicLwLock, RawClassicLwLock, RawLwLock, Tranche};
use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn pin(cpu: usize) {
    // SAFETY: `set` is a plain bitmask initialised by CPU_ZERO; sched_setaffinity(0) applies it to
    // the calling thread and only reads the mask.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// A figure: the median of its trials, their p10 and p90, and how many there were.
#[derive(Clone, Copy, Debug)]
struct Stat {
    median: f64,
    p10: f64,
    p90: f64,
    n: usize,
}

impl Stat {
    fn of(mut v: Vec<f64>) -> Stat {
        assert!(!v.is_empty());
        v.sort_by(f64::total_cmp);
        let q = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
        Stat {
            median: q(0.5),
            p10: q(0.1),
            p90: q(0.9),
            n: v.len(),
        }
    }
    /// "median of n trials (p10-p90 a-b)".
    fn describe(&self) -> String {
        format!(
            "median of {} trials (p10-p90 {:.3}-{:.3})",
            self.n, self.p10, self.p90
        )
    }
}

fn trials(n: usize, mut f: impl FnMut() -> f64) -> Stat {
    Stat::of((0..n).map(|_| f()).collect())
}

/// Spins (keeping the waker's CPU busy) for `ns` nanoseconds.
fn spin_for(ns: u64) {
    let t = Instant::now();
    while (t.elapsed().as_nanos() as u64) < ns {
        std::hint::spin_loop();
    }
}

fn ns_per(iters: u64, f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_nanos() as f64 / iters as f64
}

/// A random cyclic permutation (Sattolo) of `n` slots spaced `stride` words apart.
fn chase_ring(n: usize, stride: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in (1..n).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let j = (x % i as u64) as usize;
        order.swap(i, j);
    }
    let mut ring = vec![0usize; n * stride];
    for k in 0..n {
        ring[order[k] * stride] = order[(k + 1) % n] * stride;
    }
    ring
}

fn chase(ring: &[usize], steps: u64) -> f64 {
    let mut p = 0usize;
    ns_per(steps, || {
        for _ in 0..steps {
            p = ring[p];
        }
        black_box(p);
    })
}

fn ping_pong(rounds: u64) -> f64 {
    let flag = Arc::new(AtomicBool::new(false));
    let f2 = flag.clone();
    let t = std::thread::spawn(move || {
        pin(1);
        for _ in 0..rounds {
            while f2
                .compare_exchange(true, false, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
            {
                std::hint::spin_loop();
            }
        }
    });
    pin(0);
    // Let the partner start spinning.
    std::thread::sleep(Duration::from_millis(2));
    let start = Instant::now();
    for _ in 0..rounds {
        while flag
            .compare_exchange(false, true, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
    }
    let ns = start.elapsed().as_nanos() as f64;
    t.join().unwrap();
    ns / rounds as f64 / 2.0
}

/// (waker's cost, wake-to-run latency) of one FUTEX_WAKE that wakes a sleeper, in ns, the
/// sleeper's CPU having idled about `idle_ns` (the waker spins that long after the sleeper says it
/// is about to wait, so only the sleeper's CPU idles).
fn futex_wake_once(epoch: &Instant, idle_ns: u64) -> (f64, f64) {
    let word = Arc::new(AtomicU32::new(0));
    let ready = Arc::new(AtomicBool::new(false));
    let woke_at = Arc::new(AtomicU64::new(0));
    let (w2, r2, at2) = (word.clone(), ready.clone(), woke_at.clone());
    let e = *epoch;
    let t = std::thread::spawn(move || {
        pin(1);
        r2.store(true, Ordering::Release);
        while w2.load(Ordering::Acquire) == 0 {
            atomic_wait::wait(&w2, 0);
        }
        at2.store(e.elapsed().as_nanos() as u64, Ordering::Release);
    });
    pin(0);
    while !ready.load(Ordering::Acquire) {
        std::hint::spin_loop();
    }
    spin_for(idle_ns); // the sleeper enters FUTEX_WAIT and its CPU idles
    let t0 = epoch.elapsed().as_nanos() as u64;
    word.store(1, Ordering::Release);
    atomic_wait::wake_one(&*word);
    let t1 = epoch.elapsed().as_nanos() as u64;
    t.join().unwrap();
    let t2 = woke_at.load(Ordering::Acquire);
    ((t1 - t0) as f64, t2.saturating_sub(t0) as f64)
}

/// Two threads on one CPU handing a futex token back and forth: ns per switch.
fn same_cpu_switch(rounds: u32) -> f64 {
    let word = Arc::new(AtomicU32::new(0));
    let w2 = word.clone();
    let t = std::thread::spawn(move || {
        pin(0);
        for i in 0..rounds {
            let want = 2 * i + 1;
            while w2.load(Ordering::Acquire) != want {
                atomic_wait::wait(&w2, w2.load(Ordering::Acquire).min(want - 1));
            }
            w2.store(want + 1, Ordering::Release);
            atomic_wait::wake_one(&*w2);
        }
    });
    pin(0);
    let start = Instant::now();
    for i in 0..rounds {
        word.store(2 * i + 1, Ordering::Release);
        atomic_wait::wake_one(&*word);
        let want = 2 * i + 2;
        loop {
            let v = word.load(Ordering::Acquire);
            if v == want {
                break;
            }
            atomic_wait::wait(&word, v);
        }
    }
    let ns = start.elapsed().as_nanos() as f64;
    t.join().unwrap();
    ns / rounds as f64 / 2.0
}

/// ns per uncontended acquire+release of a lock of type `L` in `mode` on this thread (the
/// criterion benchmark's loop, `lwlock/benches/uncontended.rs`).
fn lock_pair<L: RawLwLock>(mode: Mode, iters: u64) -> f64 {
    let lock = L::with_tranche(Tranche::DEFAULT);
    ns_per(iters, || {
        for _ in 0..iters {
            black_box(&lock).acquire(mode);
            // SAFETY: held in `mode` by this thread, just acquired.
            unsafe { black_box(&lock).release(mode) };
        }
    })
}

/// The per-instruction cost that makes the profile's four uncontended acquire+release paths cost
/// what they measure here: least squares of `measured − memory = k × instruction_ns` over the
/// paths, `k` their instruction counts and `memory` their memory operations at this calibration's
/// costs (design.md, "Instruction time": atomic shared 16 and exclusive 13 instructions, a load and
/// two RMWs; classic shared 95 and exclusive 90, two RMWs (the spinlock's TAS) and four stores).
/// Clamped to the model key's range; returns the fit and its residuals, ns.
fn fit_instruction_ns(measured: [f64; 4], load: f64, store: f64, rmw: f64) -> (f64, [f64; 4]) {
    let k = [16.0, 13.0, 95.0, 90.0];
    let atomic = load + 2.0 * rmw;
    let classic = 2.0 * rmw + 4.0 * store;
    let memory = [atomic, atomic, classic, classic];
    let num: f64 = (0..4).map(|i| k[i] * (measured[i] - memory[i])).sum();
    let den: f64 = k.iter().map(|k| k * k).sum();
    // NaN (a failed measurement) is no cost: clamp passes it through, JSON has no NaN.
    let x = if num.is_finite() {
        (num / den).clamp(0.0, 10.0)
    } else {
        0.0
    };
    let mut residual = [0.0; 4];
    for i in 0..4 {
        residual[i] = measured[i] - memory[i] - k[i] * x;
    }
    (x, residual)
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

fn list_len(list: &str) -> usize {
    list.split(',')
        .map(|r| match r.split_once('-') {
            Some((a, b)) => b.parse::<usize>().unwrap_or(0) + 1 - a.parse::<usize>().unwrap_or(0),
            None => 1,
        })
        .sum()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Every argument is checked before anything is measured or written: an unknown one (a
    // `--help`, a typo) must not run the calibration and overwrite the shipped profile.
    let usage = "usage: lwsim_calibrate [--out PATH] [--quick] (without --out it writes \
                 lwsim/profiles/this-machine.json)";
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => {}
            "--out" if it.next().is_some() => {}
            "--out" => {
                eprintln!("lwsim_calibrate: --out needs a path\n{usage}");
                std::process::exit(2);
            }
            "-h" | "--help" => {
                println!("{usage}");
                return;
            }
            other => {
                eprintln!("lwsim_calibrate: unknown argument {other:?}\n{usage}");
                std::process::exit(2);
            }
        }
    }
    let quick = args.iter().any(|a| a == "--quick");
    let out = args
        .iter()
        .position(|a| a == "--out")
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_else(|| {
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../lwsim/profiles/this-machine.json"
            )
            .to_string()
        });
    let n = if quick { 3 } else { 7 };
    let ncpu = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    assert!(ncpu >= 2, "the ping-pong needs two CPUs");

    // Topology from sysfs.
    let mut packages = std::collections::BTreeSet::new();
    let mut cores = std::collections::BTreeSet::new();
    for c in 0..ncpu {
        let base = format!("/sys/devices/system/cpu/cpu{c}/topology");
        let p = read(&format!("{base}/physical_package_id")).unwrap_or_default();
        let k = read(&format!("{base}/core_id")).unwrap_or_default();
        packages.insert(p.clone());
        cores.insert((p, k));
    }
    let sockets = packages.len().max(1);
    let phys = cores.len().max(1);
    let tpc = (ncpu / phys).max(1);
    let l3_cpus = read("/sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_list")
        .map(|l| list_len(&l))
        .unwrap_or(ncpu);
    let cores_per_socket = phys / sockets;
    let cores_per_l3 = (l3_cpus / tpc).clamp(1, cores_per_socket);
    let model = read("/proc/cpuinfo")
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let kernel = read("/proc/sys/kernel/osrelease").unwrap_or_default();

    pin(0);
    eprintln!("calibrating on {model}, {ncpu} CPUs, kernel {kernel} ...");
    let l1 = chase_ring(2048, 1);
    let load_hit = trials(n, || chase(&l1, 20_000_000));
    let cell = AtomicU64::new(0);
    let store_hit = trials(n, || {
        ns_per(50_000_000, || {
            for i in 0..50_000_000u64 {
                // A volatile-ish store the compiler keeps (relaxed atomic store: a plain mov).
                black_box(&cell).store(i, Ordering::Relaxed);
            }
        })
    });
    let rmw_hit = trials(n, || {
        ns_per(20_000_000, || {
            for _ in 0..20_000_000u64 {
                black_box(&cell).fetch_add(1, Ordering::Relaxed);
            }
        })
    });
    let mfence = trials(n, || {
        ns_per(10_000_000, || {
            for i in 0..10_000_000u64 {
                // black_box between the fences: LLVM may not merge adjacent fences across it.
                black_box(i);
                fence(Ordering::SeqCst);
            }
        })
    });
    let pause = trials(n, || {
        ns_per(5_000_000, || {
            for _ in 0..5_000_000u64 {
                std::hint::spin_loop();
            }
        })
    });
    let pair_iters = if quick { 2_000_000 } else { 10_000_000 };
    let pairs = [
        trials(n, || lock_pair::<RawAtomicLwLock>(Mode::Shared, pair_iters)),
        trials(n, || {
            lock_pair::<RawAtomicLwLock>(Mode::Exclusive, pair_iters)
        }),
        trials(n, || {
            lock_pair::<RawClassicLwLock>(Mode::Shared, pair_iters)
        }),
        trials(n, || {
            lock_pair::<RawClassicLwLock>(Mode::Exclusive, pair_iters)
        }),
    ];
    let (instruction_ns, residual) = fit_instruction_ns(
        [0, 1, 2, 3].map(|i| pairs[i].median),
        load_hit.median,
        store_hit.median,
        rmw_hit.median,
    );
    let dram = chase_ring(if quick { 1 << 21 } else { 1 << 22 }, 8); // 128 / 256 MiB, one slot a line
    let memory = trials(3, || chase(&dram, 2_000_000));
    drop(dram);
    // The median and its spread, never the minimum: a trial whose partner thread was
    // descheduled shows in the p90, and a session-to-session shift in the median.
    let transfer = trials(2 * n, || ping_pong(if quick { 20_000 } else { 50_000 }));
    let word = AtomicU32::new(0);
    let syscall = trials(n, || {
        ns_per(200_000, || {
            for _ in 0..200_000 {
                atomic_wait::wake_one(&word);
            }
        })
    });
    let epoch = Instant::now();
    let wake_trials = if quick { 30 } else { 200 };
    let wakes = |idle_ns: u64| -> (Stat, Stat) {
        let w: Vec<(f64, f64)> = (0..wake_trials)
            .map(|_| futex_wake_once(&epoch, idle_ns))
            .collect();
        (
            Stat::of(w.iter().map(|w| w.0).collect()),
            Stat::of(w.iter().map(|w| w.1).collect()),
        )
    };
    let (futex_wake_short, wake_to_run_short) = wakes(20_000);
    let (futex_wake, wake_to_run) = wakes(1_000_000);
    let ctx = trials(n, || same_cpu_switch(if quick { 5_000 } else { 20_000 }));
    let slack = Stat::of(
        (0..if quick { 10 } else { 50 })
            .map(|_| {
                let t = Instant::now();
                std::thread::sleep(Duration::from_millis(1));
                t.elapsed().as_nanos() as f64 - 1e6
            })
            .collect(),
    );
    let ilog = (ncpu.min(8) as f64).log2().floor() as u32;
    let base_ms = {
        let mut it = kernel.split(['.', '-']);
        let (maj, min) = (
            it.next().and_then(|x| x.parse::<u32>().ok()).unwrap_or(0),
            it.next().and_then(|x| x.parse::<u32>().ok()).unwrap_or(0),
        );
        if (maj, min) >= (6, 15) {
            0.70
        } else {
            0.75
        }
    };
    let slice_ns = base_ms * 1e6 * (1 + ilog) as f64;

    let when = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let load = read("/proc/loadavg").unwrap_or_default();
    let here = format!(
        "measured here by lwlock/examples/lwsim_calibrate.rs on {when} ({model}, {ncpu} CPUs, kernel {kernel}, loadavg {load}); valid for comparisons run in the same session"
    );
    let e = |v: Stat, how: &str| {
        format!(
            "{{ \"value\": {:.3}, \"source\": \"{here}: {how}, {}\" }}",
            v.median.max(0.0),
            v.describe()
        )
    };
    let costs = [
        ("load_hit_ns", e(load_hit, "pointer chase in 16 KiB (L1 load-to-use)")),
        ("store_hit_ns", e(store_hit, "relaxed stores to one owned line, per store")),
        ("rmw_hit_ns", e(rmw_hit, "fetch_add (lock xadd) on an owned line, per op")),
        ("mfence_ns", e(mfence, "fence(SeqCst) loop, per fence")),
        ("pause_ns", e(pause, "spin_loop (PAUSE) loop, per PAUSE")),
        ("memory_ns", e(memory, "pointer chase over 128-256 MiB, one slot per line")),
        ("transfer_smt_ns", e(transfer, &format!("no SMT siblings here ({tpc} thread(s) per core): the same-L3 value"))),
        ("transfer_l3_ns", e(transfer, "CAS ping-pong of one AtomicBool between CPUs 0 and 1, one-way = round trip / 2")),
        ("transfer_socket_ns", e(transfer, &format!("{sockets} socket(s), one L3 here: the same-L3 value"))),
        ("transfer_remote_ns", e(transfer, "no second socket here: the same-L3 value (unused)")),
        ("syscall_ns", e(syscall, "FUTEX_WAKE with no waiter, per call")),
        ("futex_wake_ns", e(futex_wake, &format!("waker's time in FUTEX_WAKE that wakes a sleeper on another CPU idle for 1 ms (after a 20 us idle: {:.0} ns, {})", futex_wake_short.median, futex_wake_short.describe()))),
        ("wake_to_run_ns", e(wake_to_run, &format!("from before FUTEX_WAKE to the woken thread running, another CPU idle for 1 ms (after a 20 us idle: {:.0} ns, {})", wake_to_run_short.median, wake_to_run_short.describe()))),
        ("context_switch_ns", e(ctx, "futex token passed between two threads pinned to one CPU, per switch (includes the wait/wake system calls)")),
        ("time_slice_ns", format!("{{ \"value\": {slice_ns:.0}, \"source\": \"computed for {ncpu} CPUs: base slice {base_ms} ms x (1 + ilog2(min(ncpus, 8))) (kernel/sched/fair.c; 0.70 ms base from 6.15, commit 2ae891b826958b)\" }}")),
        ("timer_slack_ns", e(slack, "overshoot of std::thread::sleep(1 ms)")),
        ("llc_shared_load_ns", e(transfer, "the CAS ping-pong core-to-core value (transfer_l3_ns); a load of a Shared line from the L3 is not measured (used only under model.shared_load_llc 1)")),
    ];
    let mut json = String::from("{\n  \"name\": \"this-machine\",\n");
    json += &format!("  \"description\": \"calibrated: {model}, {ncpu} CPUs, on {when}; valid only for comparisons run in the same session as this calibration\",\n");
    json += &format!(
        "  \"topology\": {{ \"sockets\": {sockets}, \"cores_per_socket\": {cores_per_socket}, \"threads_per_core\": {tpc}, \"cores_per_l3\": {cores_per_l3}, \"source\": \"/sys/devices/system/cpu topology and cache/index3 on this machine\" }},\n"
    );
    json += "  \"costs\": {\n";
    for (i, (k, v)) in costs.iter().enumerate() {
        json += &format!(
            "    \"{k}\": {v}{}\n",
            if i + 1 < costs.len() { "," } else { "" }
        );
    }
    json += "  }";
    // The model parameters are not measured here: keep the shipped profile's (residency,
    // spread, arbitration, store buffer, ...), each with its source; all but the instruction
    // time, fitted above on this machine's own uncontended lock paths.
    if let Some(model) = shipped_model_section() {
        json += ",\n  ";
        let fitted = format!(
            "\"instruction_ns\": {{ \"value\": {instruction_ns:.4}, \"source\": \"{here}: least squares over the four uncontended acquire+release pairs measured here (atomic shared / exclusive, classic shared / exclusive: {:.2}, {:.2}, {:.2}, {:.2} ns, medians of {n}) against this calibration's memory-operation costs plus the paths' instruction counts (16, 13, 95, 90; docs/design.md, Instruction time); residuals {:.2}, {:.2}, {:.2}, {:.2} ns\" }}",
            pairs[0].median, pairs[1].median, pairs[2].median, pairs[3].median,
            residual[0], residual[1], residual[2], residual[3],
        );
        json += &replace_member(model, "instruction_ns", &fitted);
    }
    json += "\n}\n";
    std::fs::write(&out, &json).unwrap_or_else(|e| panic!("{out}: {e}"));
    print!("{json}");
    let table: [(&str, Stat); 22] = [
        ("load_hit_ns", load_hit),
        ("store_hit_ns", store_hit),
        ("rmw_hit_ns", rmw_hit),
        ("mfence_ns", mfence),
        ("pause_ns", pause),
        ("memory_ns", memory),
        ("transfer_l3_ns (one-way)", transfer),
        ("syscall_ns", syscall),
        ("futex_wake_ns, 20 us idle", futex_wake_short),
        ("futex_wake_ns, 1 ms idle", futex_wake),
        ("wake_to_run_ns, 20 us idle", wake_to_run_short),
        ("wake_to_run_ns, 1 ms idle", wake_to_run),
        ("context_switch_ns", ctx),
        ("timer_slack_ns", slack),
        ("atomic shared pair, ns", pairs[0]),
        ("atomic exclusive pair, ns", pairs[1]),
        ("classic shared pair, ns", pairs[2]),
        ("classic exclusive pair, ns", pairs[3]),
        ("(instruction_ns, fitted)", Stat::of(vec![instruction_ns])),
        ("(time_slice_ns, computed)", Stat::of(vec![slice_ns])),
        ("(cpus)", Stat::of(vec![ncpu as f64])),
        (
            "(load average, 1 min)",
            Stat::of(vec![load
                .split(' ')
                .next()
                .and_then(|x| x.parse().ok())
                .unwrap_or(f64::NAN)]),
        ),
    ];
    eprintln!(
        "{:<28} {:>12} {:>12} {:>12} {:>4}",
        "figure", "median", "p10", "p90", "n"
    );
    for (k, v) in table {
        eprintln!(
            "{k:<28} {:>12.3} {:>12.3} {:>12.3} {:>4}",
            v.median, v.p10, v.p90, v.n
        );
    }
    eprintln!("wrote {out} (wake_to_run_ns and futex_wake_ns: the 1 ms idle figures)");
    eprintln!(
        "this profile is valid only for comparisons run in the same session as this calibration: \
         rerun it before any comparison with real threads (the figures move between sessions)"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instruction_fit_recovers_a_known_cost_and_clamps_at_zero() {
        // Paths built from the memory costs plus 0.2 ns per instruction: the fit finds 0.2 and
        // no residual.
        let (load, store, rmw) = (1.5, 0.5, 9.0);
        let (a, c) = (load + 2.0 * rmw, 2.0 * rmw + 4.0 * store);
        let measured = [a + 3.2, a + 2.6, c + 19.0, c + 18.0];
        let (x, r) = fit_instruction_ns(measured, load, store, rmw);
        assert!((x - 0.2).abs() < 1e-9, "{x}");
        assert!(r.iter().all(|r| r.abs() < 1e-9), "{r:?}");
        // Paths faster than their memory operations alone: no negative instruction time.
        let (x, r) = fit_instruction_ns([a - 1.0, a - 1.0, c - 1.0, c - 1.0], load, store, rmw);
        assert_eq!(x, 0.0);
        assert!((r[2] + 1.0).abs() < 1e-9, "{r:?}");
    }

    #[test]
    fn replace_member_swaps_one_object_and_keeps_the_rest() {
        let section = r#""model": { "a": { "value": 1, "source": "x } y" }, "instruction_ns": { "value": 0.117, "source": "old \" }" }, "b": { "value": 2 } }"#;
        let out = replace_member(
            section,
            "instruction_ns",
            r#""instruction_ns": { "value": 0.05 }"#,
        );
        assert_eq!(
            out,
            r#""model": { "a": { "value": 1, "source": "x } y" }, "instruction_ns": { "value": 0.05 }, "b": { "value": 2 } }"#
        );
        assert_eq!(
            replace_member(
                r#""model": { "a": { "value": 1 } }"#,
                "nope",
                r#""nope": { "value": 2 }"#
            ),
            r#""model": { "nope": { "value": 2 }, "a": { "value": 1 } }"#
        );
    }
}
