//! `lwbench pg record` against the real PostgreSQL of this machine: a throwaway cluster, uprobes
//! on the server binary, `perf record` over the server's processes. The recording tests need root,
//! a PostgreSQL server (`/usr/lib/postgresql/N/bin`), `perf`, `readelf` and tracefs; without them
//! they say why and skip, unless `LWLAB_REQUIRE_PG` is set (CI sets it after installing them),
//! when a missing capability fails them. They run one at a time (a lock): each starts a server.

mod common;

use common::bench;
use lwbench::locks::RawFamily;
use lwharness::pgtrace::{Entry, Trace};
use lwharness::workload::trace::{replay_counts, TraceRef};
use lwlock::RawAtomicLwLock;
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Why a recording cannot run here, if it cannot.
fn missing() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root".into());
    }
    let bin = Path::new("/usr/lib/postgresql/15/bin/postgres");
    if !bin.is_file() {
        return Some("no PostgreSQL 15 server (/usr/lib/postgresql/15/bin/postgres)".into());
    }
    for tool in ["perf", "readelf", "runuser"] {
        if Command::new(tool).arg("--version").output().is_err() {
            return Some(format!("no {tool}"));
        }
    }
    let tracefs = Path::new("/sys/kernel/tracing/uprobe_events");
    if !tracefs.exists() {
        let _ = Command::new("mount")
            .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
            .output();
        if !tracefs.exists() {
            return Some("no tracefs with uprobes".into());
        }
    }
    let version = match Command::new(bin).arg("--version").output() {
        Ok(o) => String::from_utf8_lossy(&o.stdout).into_owned(),
        Err(e) => return Some(format!("cannot run {}: {e}", bin.display())),
    };
    if !version.starts_with("postgres (PostgreSQL) 15.") {
        return Some(format!(
            "the server is not PostgreSQL 15 ({})",
            version.trim()
        ));
    }
    None
}

/// Whether to run: false (with the reason printed) where the capabilities are missing, a
/// failure where CI requires them.
fn capable(test: &str) -> bool {
    match missing() {
        None => true,
        Some(why) if std::env::var_os("LWLAB_REQUIRE_PG").is_some() => {
            panic!("{test}: LWLAB_REQUIRE_PG is set but a recording cannot run here: {why}")
        }
        Some(why) => {
            eprintln!("{test}: skipped: {why}");
            false
        }
    }
}

/// The perf probe events registered on this machine (`perf probe -l`), as text.
fn probes_listed() -> String {
    let o = Command::new("perf")
        .args(["probe", "-l"])
        .output()
        .expect("perf probe -l");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The scratch dirs of recorder process `pid` still present.
fn scratch_dirs(pid: u32) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("lwbench-pg-{pid}-")))
        })
        .collect()
}

/// Whether process `pid` runs: it exists and is not a zombie (a stopped server whose parent,
/// pid 1 here, has not reaped it yet counts as stopped).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(')')
            .and_then(|(_, r)| r.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}

/// Per (tranche, mode, entry): the trace's LWLock operations per transaction, and its
/// transactions.
fn counts_per_txn(trace: &Trace) -> (HashMap<(String, String, String), f64>, usize) {
    let mut counts: HashMap<(String, String, String), f64> = HashMap::new();
    for op in trace.clients.iter().flatten().flatten() {
        if let Some(lock) = op.lock {
            let tranche = trace.locks[lock as usize].tranche.clone();
            *counts
                .entry((tranche, op.mode.name().into(), op.entry.name().into()))
                .or_default() += 1.0;
        }
    }
    let n = trace.transactions();
    for v in counts.values_mut() {
        *v /= n as f64;
    }
    (counts, n)
}

#[test]
fn records_select_only_at_one_client() {
    if !capable("records_select_only_at_one_client") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = std::env::temp_dir().join(format!("pg-record-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = bench(&[
        "pg",
        "record",
        "--pgbench=-S",
        "--clients",
        "1",
        "--duration",
        "1s",
        "--scale",
        "1",
        "--skip",
        "20",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "pg record failed: {stderr}");
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["events"]["lost"], 0, "{meta}");
    assert_eq!(meta["server"]["major"], 15, "{meta}");
    assert!(meta["unprobed"]["tps"].as_f64().unwrap() > 0.0);
    assert!(meta["probed"]["server_cpu_us_per_txn"].as_f64().unwrap() > 0.0);
    let perf_group = meta["probe_group"].as_str().unwrap().to_string();
    // The summary: every steady-state transaction of -S takes ProcArrayLock shared for its
    // snapshot, pins through BufferMapping and reads through BufferContent shared, and
    // releases what it acquires.
    let summary = std::fs::read_to_string(out.join("trace-summary.csv")).unwrap();
    let mut rows = summary.lines();
    assert_eq!(rows.next(), Some("tranche,mode,entry,per_txn"));
    let per: HashMap<(String, String, String), f64> = rows
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                (f[0].into(), f[1].into(), f[2].into()),
                f[3].parse::<f64>().unwrap(),
            )
        })
        .collect();
    let get = |t: &str, m: &str, e: &str| *per.get(&(t.into(), m.into(), e.into())).unwrap_or(&0.0);
    assert!(get("ProcArray", "shared", "acquire") >= 1.0, "{summary}");
    assert!(
        get("BufferMapping", "shared", "acquire") >= 1.0,
        "{summary}"
    );
    assert!(
        get("BufferContent", "shared", "acquire") >= 1.0,
        "{summary}"
    );
    for (t, m, _) in per.keys() {
        assert_ne!(
            m, "unknown",
            "{t}: a release without its acquire: {summary}"
        );
    }
    // The trace file holds every steady-state transaction (no --trace-txns): its own counts
    // are the summary's.
    let trace = std::fs::read_to_string(out.join("trace.tsv")).unwrap();
    assert!(trace.starts_with("# lwlock-lab PostgreSQL LWLock trace\n# format: 1\n"));
    let parsed = Trace::read(&out.join("trace.tsv")).unwrap_or_else(|e| panic!("{e}"));
    let (counts, txns) = counts_per_txn(&parsed);
    // Every hold taken (an acquire; a conditional acquire or acquire-or-wait that got the lock)
    // is released, in its mode.
    let mut held: HashMap<(u32, &str), i64> = HashMap::new();
    for op in parsed.clients.iter().flatten().flatten() {
        let Some(lock) = op.lock else { continue };
        let took = match op.entry {
            Entry::Acquire => true,
            Entry::Conditional | Entry::AcquireOrWait => op.result == "acquired",
            _ => false,
        };
        let k = (lock, op.mode.name());
        if op.entry == Entry::Release {
            *held.entry(k).or_default() -= 1;
        } else if took {
            *held.entry(k).or_default() += 1;
        }
    }
    for ((lock, mode), n) in &held {
        assert_eq!(*n, 0, "lock {lock} in {mode}: {n} holds never released");
    }
    assert_eq!(
        txns as u64,
        meta["steady_state"]["transactions"].as_u64().unwrap()
    );
    assert_eq!(counts.len(), per.len(), "{summary}");
    for (k, v) in &counts {
        let s = per[k];
        assert!((s - v).abs() < 1e-4, "{k:?}: trace {v}, summary {s}");
    }
    // The fresh recording replayed at 1 and 2 threads on the real engine: each replay client
    // runs every recorded transaction once, and its attempts per transaction by tranche, mode
    // and entry point are the summary's.
    let t = TraceRef::load(&out).unwrap_or_else(|e| panic!("{e}"));
    for threads in [1, 2] {
        let n = parsed.clients[0].len() as u64;
        let replayed = replay_counts::<RawFamily<RawAtomicLwLock>>(t, threads, n)
            .unwrap_or_else(|e| panic!("replay at {threads} threads: {e}"));
        for (slot, (cells, _)) in replayed.iter().enumerate() {
            let mut got: HashMap<(String, String, String), f64> = HashMap::new();
            for (i, &k) in cells.iter().enumerate().filter(|(_, &k)| k > 0) {
                let (tr, m, e) = t.get().cell_name(i);
                got.insert(
                    (tr.to_string(), m.name().into(), e.name().into()),
                    k as f64 / n as f64,
                );
            }
            assert_eq!(
                got.len(),
                per.len(),
                "replay client {slot} of {threads}: {got:?}"
            );
            for (k, v) in &got {
                let s = per[k];
                assert!(
                    (s - v).abs() < 1e-4,
                    "replay client {slot} of {threads}, {k:?}: replay {v}, summary {s}"
                );
            }
        }
    }
    // Nothing left behind.
    assert!(
        !probes_listed().contains(&perf_group),
        "perf group {perf_group} still registered"
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn an_interrupted_recording_leaves_nothing_behind() {
    if !capable("an_interrupted_recording_leaves_nothing_behind") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = std::env::temp_dir().join(format!("pg-record-int-{}", std::process::id()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_lwbench"))
        .args([
            "pg",
            "record",
            "--pgbench=-S",
            "--duration",
            "8s",
            "--scale",
            "1",
        ])
        .arg("--out")
        .arg(&out)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let perf_group = format!("lwrec_{pid}_");
    // Interrupt it while it records: its probes are registered and its server runs.
    let start = Instant::now();
    while !probes_listed().contains(&perf_group) {
        if let Some(st) = child.try_wait().unwrap() {
            panic!("the recording ended before it was interrupted: {st}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no perf group appeared"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let scratch = scratch_dirs(pid);
    assert_eq!(scratch.len(), 1, "{scratch:?}");
    let postmaster: u32 = std::fs::read_to_string(scratch[0].join("data/postmaster.pid"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGINT) };
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "not stopped 60 s after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(
        !probes_listed().contains(&perf_group),
        "perf group left registered"
    );
    assert!(scratch_dirs(pid).is_empty(), "scratch dir left behind");
    assert!(
        !alive(postmaster),
        "the throwaway server {postmaster} still runs"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn bad_arguments_exit_2_naming_them() {
    for (args, names) in [
        (&["--duration", "500ms"][..], "--duration"),
        (&["--duration", "2"][..], "--duration"),
        (&["--pgbench=-X"][..], "--pgbench"),
        (&["--clients", "0"][..], "--clients"),
        (&["--query-mode", "extended"][..], "--query-mode"),
    ] {
        let mut all = vec!["pg", "record", "--out", "/nonexistent/never-written"];
        all.extend_from_slice(args);
        let o = bench(&all);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(names), "{args:?}: {err}");
    }
}
