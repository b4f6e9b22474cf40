//! A counting lock family: any family's locks, each acquisition counted by the lock's tranche
//! and mode (and a buffer header's spinlock, by [`count_spinlock`]), so that what a workload's transaction takes is counted, not read off its code
//! (the shape-against-PostgreSQL table of `docs/results.md` is made with it).
//!
//! Harness plumbing: it mirrors no PostgreSQL function. A shared section counts as `shared`,
//! an exclusive section and a group operation (`ProcArrayEndTransaction`, the CLOG update) as
//! `exclusive`: the acquisition PostgreSQL's code asks for there. The counts are per thread
//! (a thread-local table), so tests running at once do not mix theirs.

use crate::locks::{BenchLock, LockCounters, LockFamily};
use lwlock::Tranche;
use std::cell::RefCell;
use std::collections::BTreeMap;

thread_local! {
    static COUNTS: RefCell<BTreeMap<(&'static str, &'static str), u64>> =
        const { RefCell::new(BTreeMap::new()) };
}

fn count(tranche: Tranche, mode: &'static str) {
    COUNTS.with(|c| *c.borrow_mut().entry((tranche.name(), mode)).or_insert(0) += 1);
}

/// This thread's counts so far, by (tranche name, `shared` or `exclusive`), and clears them.
pub fn take_counts() -> BTreeMap<(&'static str, &'static str), u64> {
    COUNTS.with(|c| std::mem::take(&mut *c.borrow_mut()))
}

/// `F`'s locks, counted.
#[derive(Debug)]
pub struct CountingFamily<F>(std::marker::PhantomData<F>);

impl<F: LockFamily> LockFamily for CountingFamily<F> {
    type Lock<T: Send + Sync + 'static> = Counting<F::Lock<T>>;
    const COUNTING: bool = true;
}

/// Counts one acquisition of a spinlock that is not one of the family's locks (a buffer
/// header's `slock_t`), as `(name, "spinlock")`; called only where [`LockFamily::COUNTING`]
/// is set.
pub fn count_spinlock(name: &'static str) {
    COUNTS.with(|c| *c.borrow_mut().entry((name, "spinlock")).or_insert(0) += 1);
}

/// A lock of [`CountingFamily`].
#[derive(Debug)]
pub struct Counting<L> {
    inner: L,
    tranche: Tranche,
}

impl<T: Send + Sync, L: BenchLock<T>> BenchLock<T> for Counting<L> {
    fn new(data: T, tranche: Tranche) -> Self {
        Counting {
            inner: L::new(data, tranche),
            tranche,
        }
    }
    fn shared<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        count(self.tranche, "shared");
        self.inner.shared(f)
    }
    fn exclusive<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        count(self.tranche, "exclusive");
        self.inner.exclusive(f)
    }
    fn group<R: Send>(&self, key: u64, f: impl FnOnce(&mut T) -> R + Send) -> R {
        count(self.tranche, "exclusive");
        self.inner.group(key, f)
    }
    fn counters(&self) -> LockCounters {
        self.inner.counters()
    }
    fn held(&self) -> Option<(bool, bool)> {
        self.inner.held()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locks::StdFamily;

    #[test]
    fn counts_by_tranche_and_mode() {
        let _ = take_counts();
        let l = <CountingFamily<StdFamily> as LockFamily>::Lock::<u32>::new(0, Tranche::PROC_ARRAY);
        l.shared(|_| ());
        l.shared(|_| ());
        l.group(0, |v| *v += 1);
        let c = take_counts();
        assert_eq!(c[&("ProcArray", "shared")], 2);
        assert_eq!(c[&("ProcArray", "exclusive")], 1);
        assert!(take_counts().is_empty());
    }
}
