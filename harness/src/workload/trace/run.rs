//! The trace as a row of the workload table: its transaction function, its check after a
//! trial, and a counting run for the tests and the shape tables. (Apart from the replay's state,
//! `replay.rs`, which the workload's shared state holds.)

use super::replay::{cpu, idle, next_rand, run_steps};
use super::TraceRef;
#[allow(unused_imports)] // rustdoc links
use super::TraceWorkload;
use crate::locks::{BenchLock, LockFamily};
use crate::workload::worker::Worker;
use crate::workload::Shared;

/// One transaction of the trace for `w`'s client. Not inlined, so that the replay's code does
/// not change the generated code of the other workloads' transactions: simulated runs depend
/// on it (as `pgbench::write_status`'s note says).
#[inline(never)]
pub(in crate::workload) fn transaction<F: LockFamily>(t: TraceRef, s: &Shared<F>, w: &mut Worker) {
    let r = s.replay().expect("a trace workload has its replay state");
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

/// After a trial: every client's attempts equal the trace's for the transactions it ran, and
/// no client holds a lock.
pub(in crate::workload) fn check<F: LockFamily>(
    t: TraceRef,
    s: &Shared<F>,
    workers: &[Worker],
) -> Result<(), String> {
    let r = s
        .replay()
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
