//! The torture target of the group locks of `flexlock`: `FlexLock` (either policy),
//! `HolderServesLock` and `ClogGroupLock` (keyed by CLOG page) through their one `GroupLock`
//! trait (`ProcArrayGroupClearXid` and `TransactionGroupUpdateXidStatus` under torture).

use crate::checks::{
    group_body, plain_words, read_plain, write_plain, Check, Kind, LockCtx, Plain, Target, Worker,
    KEYS,
};
use flexlock::GroupLock;
use lwlock::RawLwLock;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// One torture target for every group lock of `flexlock`, through its [`GroupLock`] trait.
///
/// `keys` is the number of distinct keys a group operation draws (1 for the unkeyed locks, whose
/// key is ignored; [`KEYS`] CLOG pages for `ClogGroupLock`); `kinds` is the operation mix the
/// lock is tortured with.
pub(crate) struct GroupTarget<G> {
    lock: G,
    keys: u64,
    kinds: Vec<Kind>,
}

impl<G> GroupTarget<G> {
    /// `FlexLock` (either policy) or `HolderServesLock`: unkeyed groups, guards, try-guards.
    pub(crate) fn unkeyed(lock: G) -> Self {
        let kinds = vec![
            Kind::Group,
            Kind::Read,
            Kind::Write,
            Kind::TryRead,
            Kind::TryWrite,
        ];
        GroupTarget {
            lock,
            keys: 1,
            kinds,
        }
    }

    /// `ClogGroupLock`: groups keyed by CLOG page, guards, and the exclusive try-guard.
    pub(crate) fn keyed(lock: G) -> Self {
        let kinds = vec![Kind::Group, Kind::Read, Kind::Write, Kind::TryWrite];
        GroupTarget {
            lock,
            keys: KEYS as u64,
            kinds,
        }
    }
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

impl<G> Target for GroupTarget<G>
where
    G: GroupLock<Data = Plain> + Send + Sync,
    G::Raw: 'static,
{
    fn kinds(&self) -> Vec<Kind> {
        self.kinds.clone()
    }

    fn op(&self, k: Kind, w: &mut Worker<'_>) {
        let c = w.c;
        let raw = self.lock.raw();
        match k {
            Kind::Group => {
                let p = w.plan_group(self.keys);
                let lock = &self.lock;
                let r = catch_unwind(AssertUnwindSafe(|| {
                    lock.group_keyed(p.key, move |d| {
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
            Kind::TryRead => match self.lock.try_read() {
                Some(g) => guard_read(c, w, raw, &g),
                None => w.tally[Kind::TryFailed as usize] += 1,
            },
            Kind::TryWrite => match self.lock.try_write() {
                Some(mut g) => guard_write(c, w, raw, &mut g),
                None => w.tally[Kind::TryFailed as usize] += 1,
            },
            _ => unreachable!("{k:?} on a group lock"),
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
