//! A recorded transaction compiled into replay steps: the probe-free CPU before each LWLock
//! operation, where each hold ends, its count cell, and the order the drawn content locks are
//! handed out in.

use super::step::{cell, Share, Site, Step, Txn};
use crate::pgtrace::{Entry, Op};

/// Events the recorder's probes fired for `op` after its entry timestamp: its return probe.
fn return_events(op: &Op) -> u64 {
    u64::from(op.dur_ns.is_some())
}

/// The drawn locks of a transaction ordered so that every lock comes after the locks held
/// while it was taken (outer before inner; otherwise in order of first use). The replay gives
/// them drawn locks in increasing order, so that every replay client nests drawn locks in one
/// global order (the instances' order) and no two deadlock, whatever was drawn.
fn nesting_order(first_use: &[u32], nested: &[(u32, u32)]) -> Result<Vec<u32>, String> {
    let mut out = Vec::with_capacity(first_use.len());
    let mut left: Vec<u32> = first_use.to_vec();
    while !left.is_empty() {
        let Some(i) = left.iter().position(|&l| {
            !nested
                .iter()
                .any(|&(outer, inner)| inner == l && left.contains(&outer))
        }) else {
            return Err(format!(
                "content locks {left:?} are nested in a cycle: no order to replay them in"
            ));
        };
        out.push(left.remove(i));
    }
    Ok(out)
}

/// A recorded transaction as steps; its probe-free CPU (ns).
pub(super) fn compile(
    ops: &[Op],
    probe_ns: f64,
    lock_tranche: &[u32],
    lock_share: &[Share],
) -> Result<(Txn, f64), String> {
    let mut txn = Txn::default();
    let mut site = Site::Plain;
    let mut cpu = 0f64;
    let mut pending = 0f64;
    let mut prev: Option<&Op> = None;
    let mut open: Vec<(u32, usize)> = Vec::new();
    let mut nested: Vec<(u32, u32)> = Vec::new();
    for op in ops {
        if let Some(p) = prev {
            let gap = op.t_ns.saturating_sub(p.t_ns) as f64
                - p.dur_ns.unwrap_or(0) as f64
                - probe_ns * return_events(p) as f64;
            pending += gap.max(0.0);
        }
        prev = Some(op);
        match op.entry {
            Entry::EndXact => site = Site::EndXact,
            Entry::SetStatus => site = Site::SetStatus,
            Entry::EndXactDone | Entry::SetStatusDone => site = Site::Plain,
            _ => {}
        }
        if !op.entry.is_lock() {
            continue;
        }
        let lock = op.lock.expect("a lock op names its lock");
        let held_after = match op.entry {
            Entry::Acquire => true,
            Entry::Conditional | Entry::AcquireOrWait => op.result == "acquired",
            _ => false,
        };
        let idx = txn.steps.len();
        if op.entry == Entry::Release {
            if let Some(k) = open.iter().rposition(|&(l, _)| l == lock) {
                let (_, at) = open.remove(k);
                txn.steps[at].release_at = idx as u32;
            }
        } else if held_after {
            open.push((lock, idx));
        }
        let cell = cell(lock_tranche[lock as usize] as usize, op.mode, op.entry) as u32;
        match txn.counts.iter_mut().find(|(c, _)| *c == cell) {
            Some((_, k)) => *k += 1,
            None => txn.counts.push((cell, 1)),
        }
        if lock_share[lock as usize] == Share::Drawn {
            if !txn.drawn.contains(&lock) {
                txn.drawn.push(lock);
            }
            if held_after {
                // Taken inside the holds of the drawn locks still open: each an edge.
                for &(outer, _) in open.iter().filter(|&&(l, _)| l != lock) {
                    if lock_share[outer as usize] == Share::Drawn {
                        nested.push((outer, lock));
                    }
                }
            }
        }
        cpu += pending;
        txn.ops += u64::from(op.entry != Entry::Release);
        txn.steps.push(Step {
            gap_ns: pending.round() as u64,
            entry: op.entry,
            lock,
            mode: op.mode,
            held_after,
            site,
            cell,
            release_at: u32::MAX,
        });
        pending = 0.0;
    }
    cpu += pending;
    txn.tail_ns = pending.round() as u64;
    txn.drawn = nesting_order(&txn.drawn, &nested)?;
    if let Some((l, _)) = open.first() {
        return Err(format!(
            "lock {l} is still held at the end of the transaction"
        ));
    }
    Ok((txn, cpu))
}
