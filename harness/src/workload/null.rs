//! `null` and `null-x`: the lock microbenchmarks, one acquire and release of one lock (tranche
//! DEFAULT) per transaction.

use super::steps::{ns_since, shared_checked};
use super::worker::Worker;
use super::Shared;
use crate::locks::{BenchLock, LockFamily};
use lwlock::sync::touch;

/// `null`: a shared acquire and release, an empty section.
#[inline]
pub(super) fn null<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    let t0 = w.timer();
    let checked = w.checked();
    let waited = shared_checked(&s.null, &s.null_check, checked, |_| ns_since(t0));
    Worker::record(&mut w.shared_wait, waited);
    w.ops += 1;
}

/// `null-x`: an exclusive acquire and release; the section bumps a counter, for the check.
#[inline]
pub(super) fn null_x<F: LockFamily>(s: &Shared<F>, w: &mut Worker) {
    let t0 = w.timer();
    let checked = w.checked();
    let (lock, check) = (&s.null, &*s.null_check);
    let waited = s.null.exclusive(|n| {
        let waited = ns_since(t0);
        touch(n as *const u64, 8, true);
        if checked {
            check.exclusive(lock.held(), || *n += 1);
        } else {
            *n += 1;
        }
        waited
    });
    Worker::record(&mut w.excl_wait, waited);
    w.ops += 1;
}

/// `null-x`'s counter equals its exclusive sections.
pub(super) fn check_null_x<F: LockFamily>(s: &Shared<F>, workers: &[Worker]) -> Result<(), String> {
    let ops: u64 = workers.iter().map(|w| w.ops).sum();
    let n = s.null.shared(|n| *n);
    if n != ops {
        return Err(format!("null-x: counter {n} != {ops} exclusive sections"));
    }
    Ok(())
}
