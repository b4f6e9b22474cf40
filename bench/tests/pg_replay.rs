//! Replaying the committed PostgreSQL traces (`--workload trace:FILE`): at 1 and 2 threads on
//! the real engine the replay's attempts, by tranche, mode and entry point, equal the trace's,
//! counted independently from the trace file; the same through lwbench's trial (whose check
//! requires it) for the lock families whose group call sites run their own protocol; a garbled
//! or truncated trace exits 2 naming the file and the record. No server or root needed.

mod common;
use common::{bench, csv_rows, out_dir, watchdog};
use lwbench::locks::{BenchLock, LockFamily, RawFamily};
use lwharness::pgtrace::{Entry, Mode, Trace};
use lwharness::registry::GroupClearFamily;
use lwharness::workload::trace::{replay_counts, TraceRef, TraceWorkload};
use lwlock::{RawAtomicLwLock, Tranche};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

fn trace_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces")
        .join(name)
}

type Key = (String, Mode, Entry);

/// Attempts by (tranche, mode, entry) of recorded client `c`'s transactions, counted from the
/// trace file with the trace reader only.
fn recorded(trace: &Trace, c: usize) -> BTreeMap<Key, u64> {
    let mut m = BTreeMap::new();
    for op in trace.clients[c].iter().flatten() {
        if let Some(l) = op.lock {
            let tranche = trace.locks[l as usize].tranche.clone();
            *m.entry((tranche, op.mode, op.entry)).or_insert(0) += 1;
        }
    }
    m
}

fn by_key(t: &TraceWorkload, cells: &[u64]) -> BTreeMap<Key, u64> {
    cells
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(i, &n)| {
            let (tr, m, e) = t.cell_name(i);
            ((tr.to_string(), m, e), n)
        })
        .collect()
}

/// Each replay client runs every transaction of its recorded client once: its attempts are the
/// recorded client's, key by key.
fn replay_matches<F: LockFamily>(name: &str, threads: usize) {
    let dir = trace_dir(name);
    let trace = Trace::read(&dir.join("trace.tsv")).unwrap();
    let t = TraceRef::load(&dir).unwrap();
    let clients = trace.clients.len();
    let n = trace.clients[0].len() as u64;
    assert!(trace.clients.iter().all(|c| c.len() as u64 == n));
    let counts = replay_counts::<F>(t, threads, n).unwrap_or_else(|e| panic!("{name}: {e}"));
    for (slot, (cells, _fallbacks)) in counts.iter().enumerate() {
        let want = recorded(&trace, slot % clients);
        let got = by_key(t.get(), cells);
        assert_eq!(
            got, want,
            "{name} at {threads} threads, replay client {slot}: attempts differ from the trace's"
        );
        assert!(want.keys().any(|(tr, _, _)| tr == "ProcArray"));
    }
}

#[test]
fn replay_reproduces_the_traces_attempts_at_1_and_2_threads() {
    let _w = watchdog(
        "replay_reproduces_the_traces_attempts_at_1_and_2_threads",
        120,
    );
    type Atomic = RawFamily<RawAtomicLwLock>;
    for name in [
        "pg15-S-c1",
        "pg15-N-c1",
        "pg15-S-c2",
        "pg15-N-c2",
        "pg15-tpcb-c2",
    ] {
        for threads in [1, 2] {
            replay_matches::<Atomic>(name, threads);
        }
    }
    // ProcArrayLock a group lock (9.6's group clear), its ProcArrayEndTransaction hold one
    // group operation: the attempts are the trace's all the same.
    replay_matches::<GroupClearFamily>("pg15-N-c1", 2);
}

/// A lock without entry points (so the replay runs its holds as closures) that adds up how long
/// its closures ran, by mode.
struct Timed<T>(std::sync::RwLock<T>);

static TIMED_SHARED_NS: AtomicU64 = AtomicU64::new(0);
static TIMED_EXCLUSIVE_NS: AtomicU64 = AtomicU64::new(0);

fn timed<R>(sum: &AtomicU64, f: impl FnOnce() -> R) -> R {
    let t0 = Instant::now();
    let r = f();
    sum.fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
    r
}

impl<T: Send + Sync> BenchLock<T> for Timed<T> {
    fn new(data: T, _tranche: Tranche) -> Self {
        Timed(std::sync::RwLock::new(data))
    }
    fn shared<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        let g = self.0.read().unwrap();
        timed(&TIMED_SHARED_NS, || f(&g))
    }
    fn exclusive<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut g = self.0.write().unwrap();
        timed(&TIMED_EXCLUSIVE_NS, || f(&mut g))
    }
}

struct TimedFamily;

impl LockFamily for TimedFamily {
    type Lock<T: Send + Sync + 'static> = Timed<T>;
}

/// A hold replayed as a closure (a lock without entry points: the group locks' ProcArrayLock,
/// std) holds the lock for the CPU recorded inside it, up to its release, as a hold through the
/// entry points does: the release's gap runs before the closure returns. (Run after it, the
/// holds were empty, and a family with such a ProcArrayLock paid one line transfer per shared
/// hold where the atomic LWLock paid two: docs/results.md, "`-S` on the 8-socket profile".)
/// A trace without `meta.json` runs its gaps as recorded: 2 ms inside the shared hold, 1 ms
/// inside the exclusive one.
#[test]
fn a_hold_replayed_as_a_closure_holds_the_lock_for_its_recorded_cpu() {
    let d = out_dir("replay", "closure-hold");
    std::fs::create_dir_all(&d).unwrap();
    let rows = [
        "0\t0\t0\t0\t-\txact_start\t-\t-\t-\t-\t-",
        "0\t0\t1\t1000\t500\tacquire\t4\tProcArray\t0\tshared\timmediate",
        "0\t0\t2\t2001500\t-\trelease\t4\tProcArray\t0\tshared\t-",
        "0\t0\t3\t2002000\t500\tacquire\t59\tLockFastPath\t1\texclusive\timmediate",
        "0\t0\t4\t3002500\t-\trelease\t59\tLockFastPath\t1\texclusive\t-",
    ];
    std::fs::write(
        d.join("trace.tsv"),
        format!(
            "# lwlock-lab PostgreSQL LWLock trace\n# format: 1\n\
             client\ttxn\tseq\tt_ns\tdur_ns\tentry\ttranche_id\ttranche\tlock\tmode\tresult\n\
             {}\n# end: {} rows\n",
            rows.join("\n"),
            rows.len()
        ),
    )
    .unwrap();
    let t = TraceRef::load(&d).unwrap();
    let n = 5;
    replay_counts::<TimedFamily>(t, 1, n).unwrap();
    let (shared, exclusive) = (
        TIMED_SHARED_NS.load(Ordering::Relaxed),
        TIMED_EXCLUSIVE_NS.load(Ordering::Relaxed),
    );
    assert!(
        shared >= n * 2_000_000,
        "{n} shared holds of 2 ms ran {shared} ns in all inside the lock"
    );
    assert!(
        exclusive >= n * 1_000_000,
        "{n} exclusive holds of 1 ms ran {exclusive} ns in all inside the lock"
    );
}

#[test]
fn lwbench_runs_a_trace_and_checks_its_counts() {
    let d = out_dir("replay", "real");
    let trace = format!("trace:{}", trace_dir("pg15-N-c1").display());
    let out = bench(&[
        "--workload",
        &trace,
        "--locks",
        "atomic,group-clear,clog-group",
        "--threads",
        "1,2",
        "--trials",
        "1",
        "--duration",
        "100ms",
        "--warmup",
        "20ms",
        "--out",
        d.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let rows = csv_rows(&d.join("results.csv"));
    assert_eq!(rows.len(), 6, "3 locks x 2 thread counts");
    for r in &rows {
        assert_eq!(r["workload"], trace);
        assert!(r["txns"].parse::<u64>().unwrap() > 0, "{r:?}");
    }
}

#[test]
fn a_garbled_or_truncated_trace_exits_2_naming_the_file_and_the_record() {
    let d = out_dir("replay", "bad");
    std::fs::create_dir_all(&d).unwrap();
    let text = std::fs::read_to_string(trace_dir("pg15-S-c1").join("trace.tsv")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // Truncated: the end line and the last rows gone.
    let cut = d.join("cut.tsv");
    std::fs::write(&cut, lines[..lines.len() - 5].join("\n")).unwrap();
    // Garbled: a row's mode replaced on line 10.
    let mut g = lines.clone();
    let bad = g[9]
        .replace("shared", "sharde")
        .replace("exclusive", "sharde");
    g[9] = &bad;
    let garbled = d.join("garbled.tsv");
    std::fs::write(&garbled, g.join("\n") + "\n").unwrap();
    for (f, what) in [(&cut, "truncated"), (&garbled, ":10:")] {
        let out = bench(&[
            "--workload",
            &format!("trace:{}", f.display()),
            "--out",
            d.join("out").to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&f.display().to_string()) && err.contains(what),
            "{err}"
        );
    }
}
