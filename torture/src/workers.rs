//! The workers of a torture run and their supervision: each worker draws its own operation mix
//! and runs a random number of operations on its lock, then exits; a supervisor replaces it
//! (locktorture's writer and reader kthreads, with the thread churn added).

use crate::checks::{Check, Injected, Worker, IDLE, KEYS, N_KINDS};
use crate::rng::{splitmix, think_delay, Rng};
use crate::state::Run;
use lwlock::Proc;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::thread;

/// Sends the slot's exit notice when the worker ends, also by unwinding.
pub(crate) struct ExitNotice {
    pub(crate) tx: mpsc::Sender<(usize, usize)>,
    pub(crate) lock: usize,
    pub(crate) slot: usize,
}

impl Drop for ExitNotice {
    fn drop(&mut self) {
        let _ = self.tx.send((self.lock, self.slot));
    }
}

pub(crate) fn worker(run: &Run, li: usize, si: usize, generation: u64) {
    let l = &run.locks[li];
    let c = &l.ctx;
    let slot = &c.slots[si];
    slot.proc.store(Proc::current().number(), Ordering::Relaxed);
    let mut rng =
        Rng::new(run.cfg.seed ^ splitmix(((li as u64) << 48) ^ ((si as u64) << 32) ^ generation));
    let kinds = l.target.kinds();
    // This worker's own mix: a random weight per operation (some workers never write, some
    // never read, ...).
    let mut weights: Vec<u64> = kinds.iter().map(|_| rng.below(9)).collect();
    if weights.iter().all(|w| *w == 0) {
        let i = rng.below(kinds.len() as u64) as usize;
        weights[i] = 1;
    }
    let total: u64 = weights.iter().sum();
    let budget = 1 + rng.below(run.cfg.max_thread_ops);
    let mut w = Worker {
        c,
        rng,
        tally: [0; N_KINDS],
        uid: run.next_uid.fetch_add(1, Ordering::Relaxed),
        seq: 0,
        panic_pct: run.cfg.panic_pct,
        last_applied: 0,
        last_page: [0; KEYS],
    };
    for _ in 0..budget {
        if run.stop.load(Ordering::Relaxed) {
            break;
        }
        let mut pick = w.rng.below(total);
        let mut k = kinds[0];
        for (kind, weight) in kinds.iter().zip(&weights) {
            if pick < *weight {
                k = *kind;
                break;
            }
            pick -= weight;
        }
        slot.kind.store(k as u8, Ordering::Relaxed);
        l.target.op(k, &mut w);
        slot.kind.store(IDLE, Ordering::Relaxed);
        w.tally[k as usize] += 1;
        c.progress.fetch_add(1, Ordering::Relaxed);
        think_delay(&mut w.rng);
    }
}

pub(crate) fn spawn_worker(
    run: &Arc<Run>,
    tx: &mpsc::Sender<(usize, usize)>,
    li: usize,
    si: usize,
    generation: u64,
) -> std::io::Result<thread::JoinHandle<()>> {
    let r = Arc::clone(run);
    let tx = tx.clone();
    run.locks[li].ctx.live.fetch_add(1, Ordering::Relaxed);
    let h = thread::Builder::new()
        .name(format!("{}-{si}", run.locks[li].name.name()))
        .stack_size(256 << 10)
        .spawn(move || {
            let _notice = ExitNotice {
                tx,
                lock: li,
                slot: si,
            };
            worker(&r, li, si, generation);
        });
    if h.is_err() {
        run.locks[li].ctx.live.fetch_sub(1, Ordering::Relaxed);
    }
    h
}

/// A failed spawn ends the run (counted as a violation: the torture did not run as asked).
pub(crate) fn spawn_failed(run: &Run, li: usize, e: std::io::Error) {
    run.locks[li].ctx.violation(Check::Worker, || {
        format!("cannot spawn a worker thread: {e}")
    });
    run.stop.store(true, Ordering::Relaxed);
}

/// Silences injected panics (thousands of them) and lets every other panic through.
pub(crate) fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<Injected>().is_none() {
                prev(info);
            }
        }));
    });
}
