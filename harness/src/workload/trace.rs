//! `trace:FILE`: a recorded PostgreSQL transaction stream (`lwbench pg record`'s `trace.tsv`,
//! read by [`crate::pgtrace`]) replayed through the locks' PostgreSQL entry points
//! ([`crate::entry_points`]), on either engine.
//!
//! # What is replayed, and how
//! * **Order and counts exact.** Each replay client runs the transactions of one recorded client
//!   (client `slot % clients`), from transaction `slot / clients × 7919 mod n` on (so that two
//!   replay clients of one recorded client do not run one sequence in lock-step), in a cycle,
//!   every LWLock operation in its recorded order with its recorded entry point and mode: an
//!   attempt of the trace is an attempt of the replay ([`Replay::counts`] counts them by
//!   tranche, mode and entry point; the check after every trial requires them equal to the
//!   trace's for the transactions run).
//! * **Lock identity by tranche.** `LockFastPath`: a backend's own, so each replay client has
//!   its own copies. `WALInsert`: eight locks shared; a client keeps its own as PostgreSQL does
//!   (`MyLockNo`): the trace's WALInsert locks, numbered in their order of first use, are
//!   shifted by the replay client's slot. `BufferContent`: a content lock taken by at least
//!   [`HOT_SHARE`] of the transactions (the index root) is one shared lock; the others (leaf,
//!   heap) are drawn afresh for each transaction from the recorded page population, weighted
//!   by how often each was taken (distinct within a transaction, and handed out in increasing
//!   order along the transaction's nesting of them, so that nested holds follow one global
//!   order and no two clients deadlock), so N clients do not replay one sequence of pages.
//!   Locks in dynamic shared memory (the `PgStats*` tranches), whose address differs per
//!   backend, are one lock per tranche. Every other lock is the recorded lock, shared by every
//!   replay client. Each lock has a cache line of its own, as PostgreSQL pads them.
//! * **The lock family by tranche.** Each lock is created with its tranche, so a split family
//!   ([`crate::locks::SplitFamily`]) picks its type by tranche: `ProcArray` is the
//!   ProcArrayLock slot, `XactSLRU` and `XactBuffer` the CLOG slot.
//! * **The group call sites.** The trace brackets `ProcArrayEndTransaction` and
//!   `TransactionIdSetTreeStatus`. A lock with entry points replays what was recorded there
//!   (PostgreSQL 15 tries `LWLockConditionalAcquire` and on failure joins the group: a failed
//!   attempt here falls back to `LWLockAcquire`, counted apart in [`ClientState::fallbacks`]). A lock
//!   without entry points (the group locks) runs its own protocol: the exclusive hold inside the
//!   bracket becomes one `group` operation, the CPU recorded inside the hold its work. Any other
//!   hold of a lock without entry points is replayed as a closure section with the operations
//!   inside it nested and the CPU recorded up to its release run inside it, as before the
//!   release of a lock with entry points (a hold taken inside it and released after it ends
//!   with it: closures only nest).
//! * **The proc array.** Where the trace's transactions end xids, every ProcArrayLock shared
//!   hold also runs the harness's `GetSnapshotData` scan over the trial's proc array (one slot
//!   per replay client), so the hold grows with the clients as the proc-array model's does (the
//!   recorded hold, a scan of the recorded server's few procs, is kept: a small double count).
//!   A trace that ends no xid (`-S`) keeps the recorded holds: PostgreSQL 15 reuses its
//!   snapshot while `xactCompletionCount` does not move (`GetSnapshotDataReuse`, since 14).
//! * **Times.** The CPU between two operations is the recorded gap (entry to entry) less the
//!   earlier operation's recorded duration and the probes' measured mean cost per event
//!   (`meta.json`'s `probe_cost_ns_per_event_estimate`); all gaps of the trace are then scaled
//!   by one factor so that the mean transaction's CPU equals the unprobed run's server CPU per
//!   transaction (`unprobed.server_cpu_us_per_txn`). It is run as busy work (the simulator
//!   charges it as compute). The time between a client's transactions (pgbench's round trip:
//!   `clients / unprobed TPS` less the server's CPU per transaction) is idle time: a sleep, whose
//!   oversleep (on the simulator the profile's timer slack with it) is carried into the next
//!   one so that the mean is exact.
//!   Without a `meta.json` beside the trace, the recorded gaps are run as they are and there is
//!   no idle time ([`TraceWorkload::notes`] says so).
//!
//! The method's error and what a replay cannot express are listed per trace by
//! [`TraceWorkload::notes`] (and in the guide).

use super::info::{Counted, Info};
use crate::pgtrace::{Entry, Mode as TMode, Trace};
use lwlock::Tranche;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

mod compile;
mod counts;
mod replay;
mod run;
mod step;
use compile::compile;
pub use counts::replay_counts;
pub use replay::{ClientState, Replay};
pub(super) use run::{check, transaction};
pub use step::COUNTED_ENTRIES;
use step::{Share, Site, Step, Txn};

/// A content lock taken by at least this share of the transactions is the index root: one
/// shared lock.
pub const HOT_SHARE: f64 = 0.9;

/// WALInsert locks (`NUM_XLOGINSERT_LOCKS`).
const WAL_INSERT_LOCKS: usize = 8;

/// A loaded trace, ready to replay (see the module docs).
#[derive(Debug)]
pub struct TraceWorkload {
    info: Info,
    path: PathBuf,
    /// The tranches, in order of first use; a count cell is `(tranche × modes + mode) × entries +
    /// entry`.
    pub tranches: Vec<String>,
    lock_share: Vec<Share>,
    lock_kind: Vec<Tranche>,
    per_client_locks: Vec<u32>,
    wal_locks: usize,
    /// The content-lock population: `(trace lock id, cumulative weight)`.
    population: Vec<(u32, u64)>,
    clients: Vec<Vec<Txn>>,
    /// Whether a ProcArrayLock shared hold runs the proc-array model's scan: the trace's
    /// transactions end xids (`ProcArrayEndTransaction` with one), so `xactCompletionCount`
    /// moves and PostgreSQL 15's `GetSnapshotData` cannot reuse its snapshot.
    pub scans_proc_array: bool,
    /// Idle time between a client's transactions (ns).
    pub idle_ns: u64,
    /// The factor the probe-free gaps were scaled by.
    pub scale: f64,
    /// The mean replayed CPU per transaction outside the lock operations (ns).
    pub cpu_ns_per_txn: f64,
    /// What the replay cannot express and the method's error, for this trace.
    pub notes: Vec<String>,
}

/// A loaded trace, by reference: a workload value stays `Copy`. Traces are loaded once per
/// file and kept for the process's life.
#[derive(Clone, Copy, Debug)]
pub struct TraceRef(&'static TraceWorkload);

impl PartialEq for TraceRef {
    fn eq(&self, o: &Self) -> bool {
        self.0.path == o.0.path
    }
}
impl Eq for TraceRef {}
impl std::hash::Hash for TraceRef {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.path.hash(h)
    }
}
impl PartialOrd for TraceRef {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for TraceRef {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.path.cmp(&o.0.path)
    }
}

static LOADED: Mutex<Vec<&'static TraceWorkload>> = Mutex::new(Vec::new());

impl TraceRef {
    /// Loads the trace at `path` (a `trace.tsv`, or the directory holding one), once per
    /// process. `Err` names the file and the record that cannot be read.
    pub fn load(path: &Path) -> Result<TraceRef, String> {
        let file = if path.is_dir() {
            path.join("trace.tsv")
        } else {
            path.to_path_buf()
        };
        let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = loaded.iter().find(|t| t.path == file) {
            return Ok(TraceRef(t));
        }
        let trace = Trace::read(&file).map_err(|e| format!("trace {e}"))?;
        let meta = file.with_file_name("meta.json");
        let meta = std::fs::read_to_string(&meta)
            .ok()
            .map(|text| {
                serde_json::from_str::<serde_json::Value>(&text)
                    .map_err(|e| format!("{}: not JSON: {e}", meta.display()))
            })
            .transpose()?;
        let name: &'static str = Box::leak(format!("trace:{}", path.display()).into_boxed_str());
        let t: &'static TraceWorkload = Box::leak(Box::new(TraceWorkload::new(
            name,
            file,
            &trace,
            meta.as_ref(),
        )?));
        loaded.push(t);
        Ok(TraceRef(t))
    }

    /// The loaded trace.
    pub fn get(self) -> &'static TraceWorkload {
        self.0
    }

    pub(super) fn info(self) -> &'static Info {
        &self.0.info
    }
}

impl TraceWorkload {
    fn new(
        name: &'static str,
        path: PathBuf,
        trace: &Trace,
        meta: Option<&serde_json::Value>,
    ) -> Result<TraceWorkload, String> {
        let file = path.display().to_string();
        let mut tranches: Vec<String> = Vec::new();
        let lock_tranche: Vec<u32> = trace
            .locks
            .iter()
            .map(|l| {
                let i = tranches.iter().position(|t| *t == l.tranche);
                i.unwrap_or_else(|| {
                    tranches.push(l.tranche.clone());
                    tranches.len() - 1
                }) as u32
            })
            .collect();
        let txns = trace.transactions().max(1) as f64;
        // How many transactions take each lock (for the index root), and how often.
        let mut txns_taking = vec![0u64; trace.locks.len()];
        let mut takes = vec![0u64; trace.locks.len()];
        for t in trace.clients.iter().flatten() {
            let mut seen = vec![false; trace.locks.len()];
            for op in t
                .iter()
                .filter(|o| o.entry.is_lock() && o.entry != Entry::Release)
            {
                let l = op.lock.expect("a lock op names its lock") as usize;
                takes[l] += 1;
                if !std::mem::replace(&mut seen[l], true) {
                    txns_taking[l] += 1;
                }
            }
        }
        let mut wal = 0u32;
        let mut first_of_tranche: Vec<Option<u32>> = vec![None; tranches.len()];
        let lock_share: Vec<Share> = trace
            .locks
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let first = *first_of_tranche[lock_tranche[i] as usize].get_or_insert(i as u32);
                match l.tranche.as_str() {
                    "LockFastPath" => Share::PerClient,
                    "WALInsert" => {
                        wal += 1;
                        Share::WalInsert(wal - 1)
                    }
                    "BufferContent" if (txns_taking[i] as f64) < HOT_SHARE * txns => Share::Drawn,
                    t if t.starts_with("PgStats") => Share::ByTranche(first),
                    _ => Share::Shared,
                }
            })
            .collect();
        let lock_kind: Vec<Tranche> = trace
            .locks
            .iter()
            .map(|l| match l.tranche.as_str() {
                "ProcArray" => Tranche::PROC_ARRAY,
                "XactSLRU" | "XactBuffer" => Tranche::XACT_SLRU,
                "BufferContent" => Tranche::BUFFER_CONTENT,
                "WALWrite" => Tranche::WAL_WRITE,
                "XidGen" => Tranche::XID_GEN,
                other => Tranche::register(Box::leak(other.to_string().into_boxed_str())),
            })
            .collect();
        let per_client_locks: Vec<u32> = (0..trace.locks.len() as u32)
            .filter(|&i| lock_share[i as usize] == Share::PerClient)
            .collect();
        let mut acc = 0;
        let population: Vec<(u32, u64)> = (0..trace.locks.len())
            .filter(|&i| lock_share[i] == Share::Drawn)
            .map(|i| {
                acc += takes[i];
                (i as u32, acc)
            })
            .collect();

        // Times: the probe cost and the unprobed CPU and TPS from the meta.
        let num = |path: &[&str]| -> Option<f64> {
            let mut v = meta?;
            for p in path {
                v = v.get(p)?;
            }
            v.as_f64()
        };
        let probe_ns = num(&["probe_cost_ns_per_event_estimate"]).unwrap_or(0.0);
        let cpu_target_ns = num(&["unprobed", "server_cpu_us_per_txn"]).map(|us| us * 1e3);
        let tps = num(&["unprobed", "tps"]);
        let recorded_clients = num(&["pgbench", "clients"]).unwrap_or(trace.clients.len() as f64);

        let mut notes = Vec::new();
        let mut clients: Vec<Vec<Txn>> = Vec::new();
        let mut raw_cpu = 0f64;
        for (c, ct) in trace.clients.iter().enumerate() {
            let mut out = Vec::new();
            for (ti, ops) in ct.iter().enumerate() {
                let (txn, cpu) = compile(ops, probe_ns, &lock_tranche, &lock_share)
                    .map_err(|e| format!("{file}: client {c} transaction {ti}: {e}"))?;
                raw_cpu += cpu;
                out.push(txn);
            }
            clients.push(out);
        }
        let raw_mean = raw_cpu / txns;
        let scale = match cpu_target_ns {
            Some(target) if raw_mean > 0.0 => target / raw_mean,
            _ => 1.0,
        };
        for t in clients.iter_mut().flatten() {
            for s in t.steps.iter_mut() {
                s.gap_ns = (s.gap_ns as f64 * scale).round() as u64;
            }
            t.tail_ns = (t.tail_ns as f64 * scale).round() as u64;
        }
        let idle_ns = match (tps, cpu_target_ns) {
            (Some(tps), Some(cpu)) if tps > 0.0 => (recorded_clients * 1e9 / tps - cpu).max(0.0),
            _ => 0.0,
        } as u64;
        if meta.is_none() {
            notes.push(
                "no meta.json beside the trace: the recorded gaps are replayed as they are \
                 (probe cost included, no scaling) and there is no idle time between \
                 transactions"
                    .to_string(),
            );
        } else {
            notes.push(format!(
                "times: each gap less the earlier operation's duration and {probe_ns:.0} ns per \
                 return probe, then scaled by {scale:.3} so a transaction's CPU is the unprobed \
                 run's {:.1} us (CPU outside the traced span, before the first and after the \
                 last LWLock operation, is spread over the gaps; the probe cost is a mean); idle \
                 {:.1} us between transactions (pgbench's round trip: clients / unprobed TPS \
                 less the server CPU per transaction)",
                cpu_target_ns.unwrap_or(0.0) / 1e3,
                idle_ns as f64 / 1e3
            ));
        }
        notes.push(
            "not expressed: heavyweight-lock waits, WAL flushes and other I/O, spinlocks and \
             atomics outside LWLocks (the probes see LWLock entry points only)"
                .to_string(),
        );
        let scans_proc_array = trace
            .clients
            .iter()
            .flatten()
            .flatten()
            .any(|o| o.entry == Entry::EndXact && o.result == "xid");
        notes.push(if scans_proc_array {
            "ProcArrayLock's shared holds also run the harness's GetSnapshotData scan over the \
             trial's proc array (one slot per replay client), so they grow with the clients as \
             the model's do; the recorded hold (a scan of the recorded server's procs) is kept \
             too, a small double count"
                .to_string()
        } else {
            "ProcArrayLock's shared holds are the recorded ones: the trace ends no xid, so \
             PostgreSQL 15 reuses its snapshot (xactCompletionCount unchanged) and does not \
             scan the proc array"
                .to_string()
        });
        let has = |name: &str| tranches.iter().any(|t| t == name);
        let description: &'static str = Box::leak(
            format!(
                "a recorded PostgreSQL trace ({} clients, {} transactions) replayed",
                trace.clients.len(),
                trace.transactions()
            )
            .into_boxed_str(),
        );
        let locks: &'static str =
            Box::leak(format!("as recorded: {}", tranches.join(", ")).into_boxed_str());
        Ok(TraceWorkload {
            info: Info {
                name,
                description,
                locks,
                counted: Counted::Transactions,
                short: "one recorded transaction",
                meaning: "one recorded PostgreSQL transaction, every LWLock operation in its \
                          recorded order, its CPU and the round trip after it",
                uses_clog: has("XactSLRU"),
                uses_proc_array: false,
                takes_snapshots: false,
                holds_pin: false,
                lmgr: None,
                bad_reads: "",
            },
            path,
            tranches,
            lock_share,
            lock_kind,
            per_client_locks,
            wal_locks: wal as usize,
            population,
            clients,
            scans_proc_array,
            idle_ns,
            scale,
            cpu_ns_per_txn: raw_mean * scale,
            notes,
        })
    }

    /// `trace-` and the trace's directory name (its file's, for a file not named `trace.tsv`),
    /// as a file name.
    pub fn file_stem(&self) -> String {
        let p = if self.path.file_name().is_some_and(|f| f == "trace.tsv") {
            self.path.parent().unwrap_or(&self.path)
        } else {
            &self.path
        };
        let base = p
            .file_stem()
            .map_or("trace".into(), |f| f.to_string_lossy());
        let safe: String = base
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        format!("trace-{safe}")
    }

    /// Count cells: tranches × modes × entries.
    pub fn cells(&self) -> usize {
        self.tranches.len() * TMode::ALL.len() * COUNTED_ENTRIES.len()
    }

    /// The cell of `(tranche, mode, entry)`.
    pub fn cell(tranche: usize, mode: TMode, entry: Entry) -> usize {
        step::cell(tranche, mode, entry)
    }

    /// `(tranche, mode, entry)` of a cell.
    pub fn cell_name(&self, cell: usize) -> (&str, TMode, Entry) {
        let e = cell % COUNTED_ENTRIES.len();
        let m = (cell / COUNTED_ENTRIES.len()) % TMode::ALL.len();
        let t = cell / COUNTED_ENTRIES.len() / TMode::ALL.len();
        (&self.tranches[t], TMode::ALL[m], COUNTED_ENTRIES[e])
    }

    /// The recorded clients.
    pub fn clients(&self) -> usize {
        self.clients.len()
    }

    /// Transactions of recorded client `c` in the trace.
    pub fn transactions_of(&self, c: usize) -> usize {
        self.clients[c].len()
    }

    /// The attempts per cell of `n` transactions of the replay client in `slot` (what
    /// [`Replay::counts`] must show after it ran them).
    pub fn expected_counts(&self, slot: usize, n: u64) -> Vec<u64> {
        let c = slot % self.clients.len();
        let txns = &self.clients[c];
        let mut out = vec![0u64; self.cells()];
        let mut add = |t: &Txn, times: u64| {
            for &(cell, k) in &t.counts {
                out[cell as usize] += k as u64 * times;
            }
        };
        let len = txns.len() as u64;
        let start = first_txn(slot, self.clients.len(), txns.len()) as u64;
        for (i, t) in txns.iter().enumerate() {
            // Transactions start, start+1, ... (mod len), n of them.
            let off = (i as u64 + len - start) % len;
            let times = n / len + u64::from(off < n % len);
            add(t, times);
        }
        out
    }
}

/// The first transaction a replay client runs (module docs).
fn first_txn(slot: usize, clients: usize, len: usize) -> usize {
    (slot / clients * 7919) % len.max(1)
}
