//! The replay itself: a trial's locks for the trace (by tranche, as the parent module's docs
//! say), each replay client's state, one transaction's steps through the entry points or a
//! lock's closure protocol, and the check of the counts after a trial.

use super::{first_txn, Share, Site, Step, TraceRef, TraceWorkload, WAL_INSERT_LOCKS};
use crate::clock;
use crate::locks::{BenchLock, LockFamily};
use crate::pgtrace::{Entry, Mode as TMode};
use crate::snapshot::{AnyProcArray, ProcArrayState, SharedSection, SnapshotCache, Strategy};
use crossbeam_utils::CachePadded;
use lwlock::sync::AtomicU64;
use lwlock::{AcquireOrWait, Mode, Tranche};
use std::sync::Mutex;

/// One replay client's state (only its own worker touches it).
#[derive(Debug)]
pub struct ClientState {
    pub(super) next: usize,
    pub(super) rng: u64,
    pub(super) held: Vec<(u32, Mode, bool)>,
    pub(super) drawn: Vec<(u32, u32)>,
    pub(super) idle_debt_ns: u64,
    /// Attempts by cell ([`TraceWorkload::cell`]).
    pub counts: Vec<u64>,
    /// Conditional or acquire-or-wait attempts that did not get the lock where the recorded
    /// one did, then took it with `LWLockAcquire` (not counted in `counts`).
    pub fallbacks: u64,
    /// The client's snapshot buffers, for the proc-array scan inside ProcArrayLock's shared
    /// holds.
    pub(super) cache: SnapshotCache,
}

/// The replay's locks and its clients' state for one trial of family `F`.
///
/// Every lock has a cache line of its own, as in PostgreSQL: the main LWLocks are
/// `LWLockPadded`, a buffer's content lock lives in its padded `BufferDesc`, a backend's
/// `fpInfoLock` in its `PGPROC`, each WAL insertion lock (with its `insertingAt`) is
/// `WALInsertLockPadded`. Packed side by side, the locks of different tranches and different
/// clients would share lines, which the simulator charges as transfers PostgreSQL does not pay.
pub struct Replay<F: LockFamily> {
    trace: &'static TraceWorkload,
    shared: Vec<CachePadded<F::Lock<()>>>,
    per_client: Vec<Vec<CachePadded<F::Lock<()>>>>,
    wal: Vec<CachePadded<F::Lock<()>>>,
    wal_vars: Vec<CachePadded<AtomicU64>>,
    pub(super) clients: Box<[CachePadded<Mutex<ClientState>>]>,
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
            shared: t
                .lock_kind
                .iter()
                .map(|&k| CachePadded::new(F::Lock::new((), k)))
                .collect(),
            per_client: (0..procs)
                .map(|_| {
                    t.per_client_locks
                        .iter()
                        .map(|&i| CachePadded::new(F::Lock::new((), t.lock_kind[i as usize])))
                        .collect()
                })
                .collect(),
            wal: (0..WAL_INSERT_LOCKS.max(t.wal_locks))
                .map(|_| CachePadded::new(F::Lock::new((), wal_tranche)))
                .collect(),
            wal_vars: (0..WAL_INSERT_LOCKS.max(t.wal_locks))
                .map(|_| CachePadded::new(AtomicU64::new(0)))
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

    pub(super) fn lock(
        &self,
        slot: usize,
        id: u32,
        drawn: &[(u32, u32)],
    ) -> (&F::Lock<()>, Option<&AtomicU64>) {
        let t = self.trace;
        match t.lock_share[id as usize] {
            Share::Shared => (&*self.shared[id as usize], None),
            Share::ByTranche(first) => (&*self.shared[first as usize], None),
            Share::PerClient => {
                let k = t
                    .per_client_locks
                    .iter()
                    .position(|&x| x == id)
                    .expect("listed");
                (&*self.per_client[slot][k], None)
            }
            Share::WalInsert(k) => {
                let i = (k as usize + slot) % self.wal.len();
                (&*self.wal[i], Some(&*self.wal_vars[i]))
            }
            Share::Drawn => {
                let to = drawn.iter().find(|(from, _)| *from == id).expect("drawn").1;
                (&*self.shared[to as usize], None)
            }
        }
    }
}

pub(super) fn next_rand(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// Busy CPU for `ns` (charged as compute on the simulator).
#[inline]
pub(super) fn cpu(ns: u64) {
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

/// Idle time between transactions: a sleep whose oversleep is carried into the next.
pub(super) fn idle(ns: u64, st: &mut ClientState) {
    if ns == 0 {
        return;
    }
    let want = ns.saturating_sub(st.idle_debt_ns);
    st.idle_debt_ns = st.idle_debt_ns.saturating_sub(ns);
    if want == 0 {
        return;
    }
    // The oversleep, measured on the clock (virtual time on the simulator, where a timed sleep
    // pays the profile's timer slack, 50 us, more than a `-S` round trip), is carried into the
    // next idle time: pgbench's backend waits on its socket, which has no timer slack.
    let t0 = clock::now();
    #[cfg(lwsim)]
    lwlock::sync::sleep_micros(want.div_ceil(1000));
    #[cfg(not(lwsim))]
    std::thread::sleep(std::time::Duration::from_nanos(want));
    st.idle_debt_ns += clock::ns_since(t0).saturating_sub(want);
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
pub(super) fn run_steps<F: LockFamily>(
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
            // The release's gap, the CPU between the hold's last operation and its release,
            // is inside the hold: it runs before the closure returns, as before the release
            // of a lock with entry points.
            let released = end > i && end < to;
            let tail_ns = if released { steps[end].gap_ns } else { 0 };
            match mode {
                Mode::Shared => l.shared(|_| {
                    if scans {
                        scan(procs, slot, st);
                    }
                    run_steps(r, procs, slot, steps, i + 1, end, st);
                    cpu(tail_ns);
                }),
                Mode::Exclusive => l.exclusive(|_| {
                    run_steps(r, procs, slot, steps, i + 1, end, st);
                    cpu(tail_ns);
                }),
            }
            if released {
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
