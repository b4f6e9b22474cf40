//! `--era-traffic`: shared traffic of PostgreSQL 9.1's `pgbench -S` transaction that the
//! `select-*` shapes leave out by default, each addition switchable so that an experiment can
//! show what it changes (seed 000's thread, 2011). Off by default: every shape without it is
//! unchanged, operation for operation.
//!
//! * `sinval`: `AcceptInvalidationMessages` → `SIGetDataEntries` as 9.1 ran it, four times per
//!   transaction (SInvalReadLock shared, the `msgnumLock` spinlock inside;
//!   [`crate::sinval`]).
//! * `freelist`: the lock table's dynahash freelist spinlocks, taken for each shared `LOCK` and
//!   `PROCLOCK` entry created and removed ([`crate::dynahash_freelist`]).
//!
//! Only the `select-*` workloads take them; the others ignore the setting.

/// Which of 9.1's left-out traffic a `select-*` transaction runs (a set; empty by default).
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
    /// Every addition.
    pub const ALL: EraTraffic = EraTraffic(3);

    /// The additions by name, in their order.
    pub const NAMED: [(&'static str, EraTraffic); 2] = [
        ("sinval", EraTraffic::SINVAL),
        ("freelist", EraTraffic::FREELIST),
    ];

    /// Whether `sinval` is on.
    pub fn sinval(self) -> bool {
        self.0 & EraTraffic::SINVAL.0 != 0
    }

    /// Whether `freelist` is on.
    pub fn freelist(self) -> bool {
        self.0 & EraTraffic::FREELIST.0 != 0
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

    /// One name: `sinval`, `freelist`, `all` or `none`. `Err` names the bad value and the
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
                    format!("unknown era traffic '{s}' (valid: sinval, freelist, all, none)")
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
            EraTraffic::ALL
        );
        assert_eq!(EraTraffic::parse("freelist").unwrap().name(), "freelist");
        assert_eq!(EraTraffic::parse("all").unwrap().name(), "sinval,freelist");
        assert_eq!(EraTraffic::parse("none").unwrap(), EraTraffic::NONE);
        assert!(EraTraffic::ALL.without(EraTraffic::SINVAL).freelist());
        assert!(!EraTraffic::ALL.without(EraTraffic::SINVAL).sinval());
        let e = EraTraffic::parse("sinval,clients").unwrap_err();
        assert!(e.contains("'clients'"), "{e}");
    }
}
