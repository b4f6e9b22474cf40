//! The torture targets of the group locks of `flexlock`: `FlexLock` (either policy) and
//! `HolderServesLock` through one group-lock API, and `ClogGroupLock` with keyed updates
//! (`ProcArrayGroupClearXid` and `TransactionGroupUpdateXidStatus` under torture).

use crate::checks::{
    group_body, plain_words, read_plain, write_plain, Check, Kind, LockCtx, Plain, Target, Worker,
    KEYS,
};
use flexlock::{ClogGroupLock, FlexLock, FlexReadGuard, FlexWriteGuard, HolderServesLock};
use lwlock::RawLwLock;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The group-lock API `FlexLock` and `HolderServesLock` share (one torture target for both).
pub(crate) trait GroupLockApi<L: RawLwLock>: Send + Sync {
    fn read(&self) -> FlexReadGuard<'_, L, Plain>;
    fn try_read(&self) -> Option<FlexReadGuard<'_, L, Plain>>;
    fn write(&self) -> FlexWriteGuard<'_, L, Plain>;
    fn try_write(&self) -> Option<FlexWriteGuard<'_, L, Plain>>;
    fn group<R: Send, F: FnOnce(&mut Plain) -> R + Send>(&self, op: F) -> R;
    fn raw(&self) -> &L;
    fn group_head(&self) -> Option<u32>;
}

macro_rules! group_lock_api {
    ($ty:ident) => {
        impl<L: RawLwLock> GroupLockApi<L> for $ty<L, Plain> {
            fn read(&self) -> FlexReadGuard<'_, L, Plain> {
                $ty::read(self)
            }
            fn try_read(&self) -> Option<FlexReadGuard<'_, L, Plain>> {
                $ty::try_read(self)
            }
            fn write(&self) -> FlexWriteGuard<'_, L, Plain> {
                $ty::write(self)
            }
            fn try_write(&self) -> Option<FlexWriteGuard<'_, L, Plain>> {
                $ty::try_write(self)
            }
            fn group<R: Send, F: FnOnce(&mut Plain) -> R + Send>(&self, op: F) -> R {
                $ty::group(self, op)
            }
            fn raw(&self) -> &L {
                $ty::raw(self)
            }
            fn group_head(&self) -> Option<u32> {
                $ty::group_head(self)
            }
        }
    };
}
group_lock_api!(FlexLock);
group_lock_api!(HolderServesLock);

/// `FlexLock` over a raw lock, either policy (or `HolderServesLock`).
pub(crate) struct FlexTarget<L: RawLwLock, G: GroupLockApi<L> = FlexLock<L, Plain>> {
    pub(crate) lock: G,
    pub(crate) _raw: std::marker::PhantomData<fn() -> L>,
}

impl<L: RawLwLock, G: GroupLockApi<L>> FlexTarget<L, G> {
    pub(crate) fn new(lock: G) -> Self {
        FlexTarget {
            lock,
            _raw: std::marker::PhantomData,
        }
    }
}

/// `ClogGroupLock` over a raw lock (the atomic one in the registry).
pub(crate) struct ClogTarget<L: RawLwLock> {
    pub(crate) lock: ClogGroupLock<L, Plain>,
}

/// The guard sections both group locks share.
pub(crate) fn guard_read(c: &LockCtx, w: &mut Worker<'_>, raw: &impl RawLwLock, g: &Plain) {
    c.enter_shared();
    c.probe(false, raw.is_locked(), raw.is_locked_exclusive());
    read_plain(c, &mut w.rng, g);
    c.exit_shared();
}

pub(crate) fn guard_write(c: &LockCtx, w: &mut Worker<'_>, raw: &impl RawLwLock, g: &mut Plain) {
    c.enter_exclusive();
    c.probe(true, raw.is_locked(), raw.is_locked_exclusive());
    write_plain(c, &mut w.rng, g);
    c.exit_exclusive();
}

impl<L: RawLwLock + 'static, G: GroupLockApi<L>> Target for FlexTarget<L, G> {
    fn kinds(&self) -> Vec<Kind> {
        vec![
            Kind::Group,
            Kind::Read,
            Kind::Write,
            Kind::TryRead,
            Kind::TryWrite,
        ]
    }

    fn op(&self, k: Kind, w: &mut Worker<'_>) {
        let c = w.c;
        let raw = self.lock.raw();
        match k {
            Kind::Group => {
                let p = w.plan_group(1);
                let lock = &self.lock;
                let r = catch_unwind(AssertUnwindSafe(|| {
                    lock.group(move |d| group_body(c, lock.raw().is_locked_exclusive(), d, p))
                }));
                w.finish_group(p, r);
            }
            Kind::Read => {
                let g = self.lock.read();
                guard_read(c, w, raw, &g);
            }
            Kind::Write => {
                let mut g = self.lock.write();
                guard_write(c, w, raw, &mut g);
            }
            Kind::TryRead => match self.lock.try_read() {
                Some(g) => guard_read(c, w, raw, &g),
                None => w.tally[Kind::TryFailed as usize] += 1,
            },
            Kind::TryWrite => match self.lock.try_write() {
                Some(mut g) => guard_write(c, w, raw, &mut g),
                None => w.tally[Kind::TryFailed as usize] += 1,
            },
            _ => unreachable!("{k:?} on a FlexLock"),
        }
    }

    fn final_check(&self, c: &LockCtx) {
        c.final_idle_check(self.lock.raw().is_locked(), self.lock.group_head());
        match self.lock.try_write() {
            Some(g) => {
                c.final_words_check(&plain_words(&g));
                c.final_group_check(g.applied, &g.pages);
            }
            None => c.violation(Check::End, || "try_write fails on the idle lock".into()),
        }
    }
}

impl<L: RawLwLock + 'static> Target for ClogTarget<L> {
    fn kinds(&self) -> Vec<Kind> {
        vec![Kind::Group, Kind::Read, Kind::Write, Kind::TryWrite]
    }

    fn op(&self, k: Kind, w: &mut Worker<'_>) {
        let c = w.c;
        let raw = self.lock.raw();
        match k {
            Kind::Group => {
                let p = w.plan_group(KEYS as u64);
                let lock = &self.lock;
                let r = catch_unwind(AssertUnwindSafe(|| {
                    lock.update(p.key, move |d| {
                        group_body(c, lock.raw().is_locked_exclusive(), d, p)
                    })
                }));
                w.finish_group(p, r);
            }
            Kind::Read => {
                let g = self.lock.read();
                guard_read(c, w, raw, &g);
            }
            Kind::Write => {
                let mut g = self.lock.write();
                guard_write(c, w, raw, &mut g);
            }
            Kind::TryWrite => match self.lock.try_write() {
                Some(mut g) => guard_write(c, w, raw, &mut g),
                None => w.tally[Kind::TryFailed as usize] += 1,
            },
            _ => unreachable!("{k:?} on a ClogGroupLock"),
        }
    }

    fn final_check(&self, c: &LockCtx) {
        c.final_idle_check(self.lock.raw().is_locked(), self.lock.group_head());
        match self.lock.try_write() {
            Some(g) => {
                c.final_words_check(&plain_words(&g));
                c.final_group_check(g.applied, &g.pages);
            }
            None => c.violation(Check::End, || "try_write fails on the idle lock".into()),
        }
    }
}
