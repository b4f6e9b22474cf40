//! `--era-traffic`: where an older release's transaction took other shared locks than the
//! shapes do by default (PostgreSQL 15's), each difference switchable so that an experiment can
//! show what it changes. Off by default: every shape without it is unchanged, operation for
//! operation.
//!
//! For the `select-*` shapes, 9.1's `pgbench -S` (seed 000's thread, 2011):
//! * `sinval`: `AcceptInvalidationMessages` → `SIGetDataEntries` as 9.1 ran it, four times per
//!   transaction (SInvalReadLock shared, the `msgnumLock` spinlock inside;
//!   [`crate::sinval`]).
//! * `freelist`: the lock table's dynahash freelist spinlocks, taken for each shared `LOCK` and
//!   `PROCLOCK` entry created and removed ([`crate::dynahash_freelist`]).
//!
//! For `pgbench-n`, `-N` before 9.3 and 9.4 (seed 002's thread, 2011: 9.2 development):
//! * `walinsertlock`: 9.1-9.3's one `WALInsertLock`, taken exclusive by every `XLogInsert`
//!   (the record copied into the WAL buffers under it), instead of 9.4+'s eight WAL insertion
//!   locks, one of which a backend keeps (`MyLockNo`; commit 9a20a9b2, "Improve scalability of
//!   WAL insertions").
//! * `nomultixact`: no `MultiXactIdSetOldestMember` in `heap_update` (MultiXactGenLock shared,
//!   once per transaction), which 9.3 added (commit 0ac5ad51, "Improve concurrency of foreign
//!   key locking": an `UPDATE` that changes no key column takes `FOR NO KEY UPDATE`).
//!
//! Each workload takes only its own; the others ignore them.

/// Which of an older release's differences a transaction runs (a set; empty by default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EraTraffic(u8);

impl EraTraffic {
    /// None of the additions: the shapes as they are.
    pub const NONE: EraTraffic = EraTraffic(0);
    /// `sinval`: `SIGetDataEntries` (SInvalReadLock shared + `msgnumLock`), 4 per transaction.
    pub const SINVAL: EraTraffic = EraTraffic(1);
    /// `freelist`: the LOCK and PROCLOCK tables' freelist spinlocks, per entry created or
    /// removed.
    pub const FREELIST: EraTraffic = EraTraffic(2);
    /// `walinsertlock`: `pgbench-n`'s WAL records under 9.1-9.3's one WALInsertLock.
    pub const WAL_INSERT_LOCK: EraTraffic = EraTraffic(4);
    /// `nomultixact`: `pgbench-n`'s `heap_update` without 9.3's MultiXactGenLock shared.
    pub const NO_MULTIXACT: EraTraffic = EraTraffic(8);
    /// The `select-*` shapes' differences (9.1's `-S`).
    pub const SELECT: EraTraffic = EraTraffic(3);
    /// `pgbench-n`'s differences (`-N` before 9.3).
    pub const WRITE: EraTraffic = EraTraffic(12);
    /// Every difference.
    pub const ALL: EraTraffic = EraTraffic(15);

    /// The differences by name, in their order.
    pub const NAMED: [(&'static str, EraTraffic); 4] = [
        ("sinval", EraTraffic::SINVAL),
        ("freelist", EraTraffic::FREELIST),
        ("walinsertlock", EraTraffic::WAL_INSERT_LOCK),
        ("nomultixact", EraTraffic::NO_MULTIXACT),
    ];

    /// Whether `sinval` is on.
    pub fn sinval(self) -> bool {
        self.0 & EraTraffic::SINVAL.0 != 0
    }

    /// Whether `freelist` is on.
    pub fn freelist(self) -> bool {
        self.0 & EraTraffic::FREELIST.0 != 0
    }

    /// Whether `walinsertlock` is on.
    pub fn wal_insert_lock(self) -> bool {
        self.0 & EraTraffic::WAL_INSERT_LOCK.0 != 0
    }

    /// Whether `nomultixact` is on.
    pub fn no_multixact(self) -> bool {
        self.0 & EraTraffic::NO_MULTIXACT.0 != 0
    }

    /// The set restricted to `other`'s members.
    pub fn within(self, other: EraTraffic) -> EraTraffic {
        EraTraffic(self.0 & other.0)
    }

    /// Whether nothing is on.
    pub fn is_none(self) -> bool {
        self.0 == 0
    }

    /// The union of two sets.
    pub fn with(self, other: EraTraffic) -> EraTraffic {
        EraTraffic(self.0 | other.0)
    }

    /// The set without `other`.
    pub fn without(self, other: EraTraffic) -> EraTraffic {
        EraTraffic(self.0 & !other.0)
    }

    /// The names of the additions on, in their order (empty for none).
    pub fn names(self) -> Vec<&'static str> {
        EraTraffic::NAMED
            .iter()
            .filter(|(_, e)| self.0 & e.0 != 0)
            .map(|(n, _)| *n)
            .collect()
    }

    /// `none`, or the additions joined by `,` (the command line's form).
    pub fn name(self) -> String {
        if self.is_none() {
            "none".to_string()
        } else {
            self.names().join(",")
        }
    }

    /// One name: `sinval`, `freelist`, `walinsertlock`, `nomultixact`, `all` or `none`. `Err` names the bad value and the
    /// valid ones.
    pub fn parse_one(s: &str) -> Result<EraTraffic, String> {
        let s = s.trim();
        match s {
            "none" => Ok(EraTraffic::NONE),
            "all" => Ok(EraTraffic::ALL),
            _ => EraTraffic::NAMED
                .iter()
                .find(|(n, _)| *n == s)
                .map(|(_, e)| *e)
                .ok_or_else(|| {
                    format!(
                        "unknown era traffic '{s}' (valid: sinval, freelist, walinsertlock, \
                         nomultixact, all, none)"
                    )
                }),
        }
    }

    /// A comma-separated list of names (their union).
    pub fn parse(s: &str) -> Result<EraTraffic, String> {
        s.split(',').try_fold(EraTraffic::NONE, |acc, n| {
            Ok(acc.with(EraTraffic::parse_one(n)?))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_a_bad_name_is_named() {
        assert_eq!(
            EraTraffic::parse("sinval,freelist").unwrap(),
            EraTraffic::SELECT
        );
        assert_eq!(
            EraTraffic::parse("walinsertlock,nomultixact").unwrap(),
            EraTraffic::WRITE
        );
        assert_eq!(EraTraffic::SELECT.with(EraTraffic::WRITE), EraTraffic::ALL);
        assert_eq!(EraTraffic::ALL.within(EraTraffic::WRITE), EraTraffic::WRITE);
        assert_eq!(EraTraffic::parse("freelist").unwrap().name(), "freelist");
        assert_eq!(
            EraTraffic::parse("all").unwrap().name(),
            "sinval,freelist,walinsertlock,nomultixact"
        );
        let w = EraTraffic::parse("walinsertlock").unwrap();
        assert!(w.wal_insert_lock() && !w.no_multixact() && !w.sinval());
        assert_eq!(EraTraffic::parse("none").unwrap(), EraTraffic::NONE);
        assert!(EraTraffic::ALL.without(EraTraffic::SINVAL).freelist());
        assert!(!EraTraffic::ALL.without(EraTraffic::SINVAL).sinval());
        let e = EraTraffic::parse("sinval,clients").unwrap_err();
        assert!(e.contains("'clients'"), "{e}");
    }
}
