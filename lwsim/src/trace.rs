//! An off-by-default diagnostic: every coherence access and store-buffer drain in a window of
//! virtual time, one line each on stderr, to follow a lock's hand-off step by step.
//!
//! Enabled by the environment variable `LWSIM_TRACE=FROM_NS..TO_NS` (read once per simulation,
//! when the machine is built; both bounds in virtual nanoseconds, `TO_NS` excluded). Each access
//! whose request time falls in the window prints
//!
//! ```text
//! @<request ns> hw<hardware thread> t<task> <line> <load|store|rmw> <case> wait <ns> done <ns>
//! ```
//!
//! with `<line>` the name a [`watch`](crate::machine::watch) gave the line or its line address
//! (hex: the byte address shifted right by 6), `<case>` one of `hit`, `load-from-M`, `load-from-S`, `rfo-from-M`, `invalidate`,
//! `fill` (the coherence table of [`machine`](crate::machine)), `wait` the time the request
//! waited for the line (residency, earlier bookings) and `done` the time its transfer ends (the
//! grant plus any RMW: the requester's clock moves there, except for a store the store buffer
//! takes, whose clock moves on by a store hit while the line is on its way). A request that
//! draws an arbitration delay first prints
//!
//! ```text
//! @<request ns> hw<h> t<task> <line> <kind> arbitrate delay <ns> retry <ns>
//! ```
//!
//! and its retry prints the line above at the retry time, its `wait` without the delay. A
//! buffered store that becomes visible in the window prints `@<drain ns> hw<h> t<task> <line>
//! drain`. The supervisor's accesses are `hw-`. The trace reads the machine's state and advances
//! no clock: figures are unchanged. A malformed value, or one that is not UTF-8, is an error
//! naming the variable.

/// The window of a trace, in picoseconds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Trace {
    from_ps: u64,
    to_ps: u64,
}

impl Trace {
    /// `Some` if `LWSIM_TRACE` is set; panics with a message naming it if it is malformed.
    pub(crate) fn from_env() -> Option<Trace> {
        let spec = std::env::var_os("LWSIM_TRACE")?;
        let spec = spec
            .into_string()
            .unwrap_or_else(|v| panic!("LWSIM_TRACE={v:?}: not UTF-8"));
        Some(Trace::parse(&spec).unwrap_or_else(|e| panic!("LWSIM_TRACE={spec}: {e}")))
    }

    fn parse(spec: &str) -> Result<Trace, String> {
        let (a, b) = spec
            .split_once("..")
            .ok_or("expected FROM_NS..TO_NS (virtual nanoseconds)")?;
        let ns = |x: &str| -> Result<u64, String> {
            x.trim()
                .parse::<u64>()
                .map_err(|_| format!("{x:?} is not a whole number of nanoseconds"))?
                .checked_mul(1000)
                .ok_or_else(|| format!("{x} ns is out of range"))
        };
        let (from_ps, to_ps) = (ns(a)?, ns(b)?);
        if from_ps >= to_ps {
            return Err("the window is empty (FROM_NS must be below TO_NS)".into());
        }
        Ok(Trace { from_ps, to_ps })
    }

    /// Whether an event at `t` (ps) is printed.
    pub(crate) fn covers(&self, t: u64) -> bool {
        (self.from_ps..self.to_ps).contains(&t)
    }
}

/// The name of a coherence case (`what` in the machine's counters).
pub(crate) fn case_name(what: u8) -> &'static str {
    match what {
        0 => "hit",
        1 => "load-from-M",
        2 => "load-from-S",
        3 => "rfo-from-M",
        4 => "invalidate",
        _ => "fill",
    }
}

/// Nanoseconds with three decimals, from picoseconds.
pub(crate) fn ns(ps: u64) -> String {
    format!("{}.{:03}", ps / 1000, ps % 1000)
}

#[cfg(test)]
mod tests {
    use super::Trace;

    #[test]
    fn parses_a_window_and_rejects_bad_ones() {
        let t = Trace::parse("10000..10500").unwrap();
        assert!(t.covers(10_000_000) && t.covers(10_499_999) && !t.covers(10_500_000));
        assert!(!t.covers(9_999_999));
        for bad in [
            "",
            "10000",
            "10..5",
            "7..7",
            "a..9",
            "1..99999999999999999999",
            "0..18446744073709552",
        ] {
            assert!(Trace::parse(bad).is_err(), "{bad:?} accepted");
        }
    }
}
