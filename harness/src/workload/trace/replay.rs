//! The replay itself: a trial's locks for the trace (by tranche, as the parent module's docs
//! say), each replay client's state, one transaction's steps through the entry points or a
//! lock's closure protocol, and the check of the counts after a trial.

use super::{first_txn, Share, Site, Step, TraceRef, TraceWorkload, WAL_INSERT_LOCKS};
#[cfg(not(lwsim))]
use crate::clock;
use crate::locks::{BenchLock, LockFamily};
use crate::pgtrace::{Entry, Mode as TMode};
use crate::snapshot::{AnyProcArray, ProcArrayState, SharedSection, SnapshotCache, Strategy};
use crate::workload::worker::Worker;
use crate::workload::Shared;
use crossbeam_utils::CachePadded;
use lwlock::sync::AtomicU64;
use lwlock::{AcquireOrWait, Mode, Tranche};
use std::sync::Mutex;

/// One replay client's state (only its own worker touches it).
#[derive(Debug)]
pub struct ClientState {
    next: usize,
    rng: u64,
    held: Vec<(u32, Mode, bool)>,
    drawn: Vec<(u32, u32)>,
    idle_debt_ns: u64,
    /// Attempts by cell ([`TraceWorkload::cell`]).
    pub counts: Vec<u64>,
    /// Conditional or acquire-or-wait attempts that did not get the lock where the recorded
    /// one did, then took it with `LWLockAcquire` (not counted in `counts`).
    pub fallbacks: u64,
    /// The client's snapshot buffers, for the proc-array scan inside ProcArrayLock's shared
    /// holds.
    cache: SnapshotCache,
}

/// The replay's locks and its clients' state for one trial of family `F`.
pub struct Replay<F: LockFamily> {
    trace: &'static TraceWorkload,
    shared: Vec<F::Lock<()>>,
    per_client: Vec<Vec<F::Lock<()>>>,
    wal: Vec<F::Lock<()>>,
    wal_vars: Vec<AtomicU64>,
    clients: Box<[CachePadded<Mutex<ClientState>>]>,
}

impl<F: LockFamily> std::fmt::Debug for Replay<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replay").finish_non_exhaustive()
    }
}

impl<F: LockFamily> Replay<F> {
    /// The locks of `t` for `procs` replay clients.
    pub fn new(t: TraceRef, procs: usize) -> Self {
        let t = t.0;
        let wal_tranche = t
            .lock_share
            .iter()
            .position(|s| matches!(s, Share::WalInsert(_)))
            .map_or(Tranche::DEFAULT, |i| t.lock_kind[i]);
        Replay {
            trace: t,
            shared: t.lock_kind.iter().map(|&k| F::Lock::new((), k)).collect(),
            per_client: (0..procs)
                .map(|_| {
                    t.per_client_locks
                        .iter()
                        .map(|&i| F::Lock::new((), t.lock_kind[i as usize]))
                        .collect()
                })
                .collect(),
            wal: (0..WAL_INSERT_LOCKS.max(t.wal_locks))
                .map(|_| F::Lock::new((), wal_tranche))
                .collect(),
            wal_vars: (0..WAL_INSERT_LOCKS.max(t.wal_locks))
                .map(|_| AtomicU64::new(0))
                .collect(),
            clients: (0..procs)
                .map(|slot| {
                    CachePadded::new(Mutex::new(ClientState {
                        next: first_txn(
                            slot,
                            t.clients.len(),
                            t.clients[slot % t.clients.len()].len(),
                        ),
                        rng: 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(slot as u64 + 1) | 1,
                        held: Vec::new(),
                        drawn: Vec::new(),
                        idle_debt_ns: 0,
                        counts: vec![0; t.cells()],
                        fallbacks: 0,
                        cache: SnapshotCache::with_capacity(procs),
                    }))
                })
                .collect(),
        }
    }

    /// Replay client `slot`'s attempts by cell and its fallbacks.
    pub fn counts(&self, slot: usize) -> (Vec<u64>, u64) {
        let c = self.clients[slot].lock().unwrap_or_else(|e| e.into_inner());
        (c.counts.clone(), c.fallbacks)
    }

    fn lock(
        &self,
        slot: usize,
        id: u32,
        drawn: &[(u32, u32)],
    ) -> (&F::Lock<()>, Option<&AtomicU64>) {
        let t = self.trace;
        match t.lock_share[id as usize] {
            Share::Shared => (&self.shared[id as usize], None),
            Share::ByTranche(first) => (&self.shared[first as usize], None),
            Share::PerClient => {
                let k = t
                    .per_client_locks
                    .iter()
                    .position(|&x| x == id)
                    .expect("listed");
                (&self.per_client[slot][k], None)
            }
            Share::WalInsert(k) => {
                let i = (k as usize + slot) % self.wal.len();
                (&self.wal[i], Some(&self.wal_vars[i]))
            }
            Share::Drawn => {
                let to = drawn.iter().find(|(from, _)| *from == id).expect("drawn").1;
                (&self.shared[to as usize], None)
            }
        }
    }
}

fn next_rand(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// Busy CPU for `ns` (charged as compute on the simulator).
#[inline]
fn cpu(ns: u64) {
    if ns == 0 {
        return;
    }
    #[cfg(lwsim)]
    lwlock::sync::lwsim::compute(ns);
    #[cfg(not(lwsim))]
    {
        let t0 = clock::now();
        while clock::ns_since(t0) < ns {
            std::hint::spin_loop();
        }
    }
}

fn lw_mode(m: TMode) -> Mode {
    match m {
        TMode::Shared => Mode::Shared,
        _ => Mode::Exclusive,
    }
}

/// One transaction of the trace for `w`'s client. Not inlined, so that the replay's code does
/// not change the generated code of the other workloads' transactions: simulated runs depend
/// on it (as `pgbench::write_status`'s note says).
#[inline(never)]
pub(in crate::workload) fn transaction<F: LockFamily>(t: TraceRef, s: &Shared<F>, w: &mut Worker) {
    let r = s
        .replay
        .as_deref()
        .expect("a trace workload has its replay state");
    let tw = t.0;
    let slot = w.slot;
    let mut st = r.clients[slot].lock().unwrap_or_else(|e| e.into_inner());
    let st = &mut *st;
    let txns = &tw.clients[slot % tw.clients.len()];
    let txn = &txns[st.next];
    st.next = (st.next + 1) % txns.len();
    // Draw this transaction's leaf and heap pages: distinct, weighted by how often each was
    // taken, then handed out in increasing order along the transaction's nesting order (see
    // `nesting_order`), so that nested holds follow one global order in every client.
    st.drawn.clear();
    if let Some(&(_, total)) = tw.population.last() {
        let mut to: Vec<u32> = Vec::with_capacity(txn.drawn.len());
        while to.len() < txn.drawn.len() {
            let x = next_rand(&mut st.rng) % total;
            let i = tw.population.partition_point(|&(_, c)| c <= x);
            let pick = tw.population[i].0;
            if tw.population.len() < txn.drawn.len() || !to.contains(&pick) {
                to.push(pick);
            }
        }
        to.sort_unstable();
        st.drawn.extend(txn.drawn.iter().copied().zip(to));
    }
    run_steps(r, &s.procs, slot, &txn.steps, 0, txn.steps.len(), st);
    cpu(txn.tail_ns);
    w.ops += txn.ops;
    if !st.held.is_empty() {
        // Released nowhere in the trace: the transaction's end releases them (LWLockReleaseAll).
        for (id, mode, _) in std::mem::take(&mut st.held) {
            let (l, _) = r.lock(slot, id, &st.drawn);
            if let Some(ep) = l.entry_points() {
                // SAFETY: `held` lists locks this client took through their entry points in
                // `mode` and has not released.
                unsafe { ep.release(mode) };
            }
        }
    }
    idle(tw.idle_ns, st);
}

/// Idle time between transactions: a sleep whose oversleep is carried into the next.
fn idle(ns: u64, st: &mut ClientState) {
    if ns == 0 {
        return;
    }
    let want = ns.saturating_sub(st.idle_debt_ns);
    st.idle_debt_ns = st.idle_debt_ns.saturating_sub(ns);
    if want == 0 {
        return;
    }
    #[cfg(lwsim)]
    {
        lwlock::sync::sleep_micros(want.div_ceil(1000));
        st.idle_debt_ns += want.div_ceil(1000) * 1000 - want;
    }
    #[cfg(not(lwsim))]
    {
        let t0 = clock::now();
        std::thread::sleep(std::time::Duration::from_nanos(want));
        st.idle_debt_ns += clock::ns_since(t0).saturating_sub(want);
    }
}

/// The lock a replay client already holds, as the proc-array model's shared section.
struct Held;

impl SharedSection for Held {
    fn shared_section<R>(&self, f: impl FnOnce() -> R) -> R {
        f()
    }
}

/// Inside a ProcArrayLock shared hold, the harness's `GetSnapshotData` scan over the trial's
/// proc array (one slot per replay client): the hold grows with the number of clients as the
/// model's does. The recorded hold, which scanned the recorded server's few procs, is kept too.
fn scan(procs: &ProcArrayState<AnyProcArray>, slot: usize, st: &mut ClientState) {
    procs.snapshot(Strategy::Scan, &Held, slot, &mut st.cache);
}

/// Replays `steps[from..to]`.
fn run_steps<F: LockFamily>(
    r: &Replay<F>,
    procs: &ProcArrayState<AnyProcArray>,
    slot: usize,
    steps: &[Step],
    from: usize,
    to: usize,
    st: &mut ClientState,
) {
    let mut i = from;
    while i < to {
        let step = steps[i];
        cpu(step.gap_ns);
        // Counted as it is replayed: an attempt of the trace is an attempt here.
        st.counts[step.cell as usize] += 1;
        let (l, var) = r.lock(slot, step.lock, &st.drawn);
        let mode = lw_mode(step.mode);
        // A ProcArrayLock shared hold: GetSnapshotData's scan, over this trial's proc array.
        let scans = r.trace.scans_proc_array
            && r.trace.lock_kind[step.lock as usize] == Tranche::PROC_ARRAY
            && mode == Mode::Shared
            && step.held_after;
        let Some(ep) = l.entry_points() else {
            // A lock without entry points: its closure protocol, the steps inside its hold
            // nested. (Its releases are the ends of those holds.)
            if step.entry == Entry::Release {
                i += 1;
                continue;
            }
            let end = if step.held_after {
                (step.release_at as usize).min(to)
            } else {
                i
            };
            let group_site = matches!(
                (step.site, r.trace.lock_kind[step.lock as usize]),
                (Site::EndXact, Tranche::PROC_ARRAY) | (Site::SetStatus, Tranche::XACT_SLRU)
            );
            if group_site
                && end <= i + 1
                && mode == Mode::Exclusive
                && matches!(step.entry, Entry::Acquire | Entry::Conditional)
            {
                // The group call site: PostgreSQL 15 joins the group where the conditional
                // attempt fails; a group lock runs its protocol, the hold's CPU its work.
                let work = if step.held_after && end < to {
                    steps[end].gap_ns
                } else {
                    0
                };
                l.group(0, move |_| cpu(work));
                if step.held_after && end < to {
                    st.counts[steps[end].cell as usize] += 1;
                }
                i = if step.held_after { end + 1 } else { i + 1 };
                continue;
            }
            match mode {
                Mode::Shared => l.shared(|_| {
                    if scans {
                        scan(procs, slot, st);
                    }
                    run_steps(r, procs, slot, steps, i + 1, end, st)
                }),
                Mode::Exclusive => {
                    l.exclusive(|_| run_steps(r, procs, slot, steps, i + 1, end, st))
                }
            }
            if end > i && end < to {
                cpu(steps[end].gap_ns);
                st.counts[steps[end].cell as usize] += 1;
            }
            i = end.max(i) + 1;
            continue;
        };
        match step.entry {
            Entry::Acquire => {
                ep.acquire(mode);
                st.held.push((step.lock, mode, true));
            }
            Entry::Conditional | Entry::AcquireOrWait => {
                let got = if step.entry == Entry::Conditional {
                    ep.conditional_acquire(mode)
                } else {
                    ep.acquire_or_wait(mode) == AcquireOrWait::Acquired
                };
                match (got, step.held_after) {
                    (true, true) => st.held.push((step.lock, mode, true)),
                    (false, true) => {
                        st.fallbacks += 1;
                        ep.acquire(mode);
                        st.held.push((step.lock, mode, true));
                    }
                    // SAFETY: just acquired in `mode` through the entry points; the trace
                    // does not hold it here, so it is given back at once.
                    (true, false) => unsafe { ep.release(mode) },
                    (false, false) => {}
                }
            }
            Entry::WaitForVar => {
                let var = var.expect("only WALInsert locks are waited on with a variable");
                let old = var.load(lwlock::sync::Ordering::Acquire);
                if ep.wait_for_var(var, old).is_none()
                    && ep.acquire_or_wait(Mode::Exclusive) == AcquireOrWait::Acquired
                {
                    // No variable protocol: wait until the lock is free instead.
                    // SAFETY: just acquired exclusively through the entry points.
                    unsafe { ep.release(Mode::Exclusive) };
                }
            }
            Entry::Release => {
                if let Some(k) = st.held.iter().rposition(|&(l, _, _)| l == step.lock) {
                    let (_, mode, _) = st.held.remove(k);
                    // SAFETY: `held` says this client took the lock in `mode` through its entry
                    // points and has not released it.
                    unsafe { ep.release(mode) };
                }
            }
            _ => unreachable!("only lock entry points are steps"),
        }
        if scans {
            scan(procs, slot, st);
        }
        i += 1;
    }
}

/// After a trial: every client's attempts equal the trace's for the transactions it ran, and
/// no client holds a lock.
pub(in crate::workload) fn check<F: LockFamily>(
    t: TraceRef,
    s: &Shared<F>,
    workers: &[Worker],
) -> Result<(), String> {
    let r = s
        .replay
        .as_deref()
        .ok_or("a trace workload without its replay state")?;
    for w in workers {
        let st = r.clients[w.slot].lock().unwrap_or_else(|e| e.into_inner());
        if !st.held.is_empty() {
            return Err(format!(
                "{}: replay client {} still holds {} locks",
                t.0.info.name,
                w.slot,
                st.held.len()
            ));
        }
        let want = t.0.expected_counts(w.slot, w.txns);
        if let Some(cell) = (0..want.len()).find(|&c| want[c] != st.counts[c]) {
            let (tr, m, e) = t.0.cell_name(cell);
            return Err(format!(
                "{}: replay client {} made {} {} {} {} attempts in {} transactions, the trace {}",
                t.0.info.name,
                w.slot,
                st.counts[cell],
                tr,
                m.name(),
                e.name(),
                w.txns,
                want[cell]
            ));
        }
    }
    Ok(())
}

/// Replays `n` transactions of `t` on each of `threads` threads (real threads, lock family
/// `F`), checks the trial as a trial is checked, and returns each replay client's attempts by
/// cell ([`TraceWorkload::cell`]) and its fallbacks: the counting the replay tests and the
/// shape tables use.
pub fn replay_counts<F: LockFamily>(
    t: TraceRef,
    threads: usize,
    n: u64,
) -> Result<Vec<(Vec<u64>, u64)>, String> {
    use crate::workload::{check as check_trial, run_transactions, WorkerConfig, Workload};
    let workload = Workload::Trace(t);
    let s = std::sync::Arc::new(Shared::<F>::new(
        workload,
        threads,
        crate::snapshot::Layout::Dense,
    ));
    let cfg = WorkerConfig {
        write_pct: 0,
        work: 0,
        time_every: 64,
        strategy: crate::snapshot::Strategy::Scan,
    };
    let handles: Vec<_> = (0..threads)
        .map(|slot| {
            let s = s.clone();
            std::thread::spawn(move || {
                let mut w = Worker::new(slot, threads, cfg);
                run_transactions(workload, &s, &mut w, n);
                w
            })
        })
        .collect();
    let workers: Vec<Worker> = handles
        .into_iter()
        .map(|h| h.join().map_err(|_| "a replay thread panicked".to_string()))
        .collect::<Result<_, _>>()?;
    check_trial(workload, &s, &workers)?;
    let r = s
        .replay
        .as_deref()
        .expect("a trace workload has its replay state");
    Ok((0..threads).map(|slot| r.counts(slot)).collect())
}
