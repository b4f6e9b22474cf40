//! The value syntax both programs' command lines share (`lwbench` and `lwtorture`): durations,
//! seeds, thread counts and lists, positive integers. Each parser returns the message a
//! command line prints (exit 2, naming the argument) when the value is bad. Harness plumbing:
//! it mirrors no PostgreSQL function.
//!
//! * Durations: `300ms`, `2s`, `1.5s`, `500us`, `1m`, `2min`, `10ns`; the unit is required (a
//!   bare number is an error naming the units, so that no program reads `300` as seconds and
//!   another as milliseconds); zero and more than a day are rejected.
//! * Seeds: a decimal or `0x`-hexadecimal 64-bit number.
//! * Thread counts: 1 to 4096; thread lists add `a:b`, a doubling range.

use std::time::Duration;

/// The most threads a command line accepts.
pub const MAX_THREADS: usize = 4096;

/// `--idle`: a duration of whole microseconds, at most 65 535 us (see `crate::workload::WorkerConfig::idle_us`).
pub fn parse_idle(s: &str) -> Result<Duration, String> {
    // 0 (with or without a unit) is no idle time; the duration syntax takes positive ones.
    if s.trim_end_matches(|c: char| c.is_ascii_alphabetic()) == "0" {
        return Ok(Duration::ZERO);
    }
    let d = parse_duration(s)?;
    if d.as_nanos() % 1000 != 0 || d.as_micros() > u128::from(u16::MAX) {
        return Err(format!(
            "{s}: whole microseconds from 0us to {}us",
            u16::MAX
        ));
    }
    Ok(d)
}

/// The most `TransactionIdGetStatus` lookups per transaction `--status-lookups` takes.
pub const MAX_STATUS_LOOKUPS: u32 = 1000;

/// `--status-lookups`: a count of lookups per transaction, a decimal with at most two places
/// (`57.62`, `10`, `0.5`), from 0 to [`MAX_STATUS_LOOKUPS`]; returned per hundred transactions
/// (`57.62` → 5 762), the unit the shape counts in.
pub fn parse_status_lookups(s: &str) -> Result<u32, String> {
    let bad = || {
        format!(
            "{s}: a count of lookups per transaction, a decimal with at most two places from 0 \
             to {MAX_STATUS_LOOKUPS} (e.g. 57.62)"
        )
    };
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || whole.len() > 4 || !digits(whole) || frac.len() > 2 || !digits(frac) {
        return Err(bad());
    }
    if s.ends_with('.') {
        return Err(bad());
    }
    let whole: u32 = whole.parse().map_err(|_| bad())?;
    let frac: u32 = format!("{frac:0<2}").parse().map_err(|_| bad())?;
    let per_100 = whole * 100 + frac;
    if per_100 > MAX_STATUS_LOOKUPS * 100 {
        return Err(bad());
    }
    Ok(per_100)
}

/// A count of lookups per hundred transactions as `--status-lookups` takes it and `meta.json`
/// records it: `57.62`, `10`, `30.50`.
pub fn status_lookups_text(per_100: u32) -> String {
    match per_100 % 100 {
        0 => format!("{}", per_100 / 100),
        f => format!("{}.{f:02}", per_100 / 100),
    }
}

/// Parses `300ms`, `2s`, `1.5s`, `500us`, `1m`; a bare number and zero are rejected.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a duration (examples: 300ms, 2s, 1.5s)"))?;
    let secs = match unit.trim() {
        "" => {
            return Err(format!(
                "'{s}' has no unit: a duration needs one of ns, us, ms, s, m (e.g. {num}ms or \
                 {num}s)"
            ))
        }
        "s" => v,
        "ms" => v / 1e3,
        "us" | "µs" => v / 1e6,
        "ns" => v / 1e9,
        "m" | "min" => v * 60.0,
        u => {
            return Err(format!(
                "unknown unit '{u}' in '{s}' (use ns, us, ms, s or m)"
            ))
        }
    };
    if !(secs.is_finite() && secs > 0.0) {
        return Err(format!("duration '{s}' must be greater than zero"));
    }
    if secs > 24.0 * 3600.0 {
        return Err(format!("duration '{s}' is longer than a day"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses a seed: decimal or `0x` hexadecimal.
pub fn parse_seed(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse(),
    };
    r.map_err(|_| format!("'{s}' is not a seed (a decimal or 0x-hex 64-bit number)"))
}

/// Parses one thread count: 1 to [`MAX_THREADS`].
pub fn parse_thread_count(s: &str) -> Result<usize, String> {
    let n: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a thread count"))?;
    if n == 0 {
        return Err("thread counts must be at least 1".into());
    }
    if n > MAX_THREADS {
        return Err(format!(
            "{n} threads is more than the limit of {MAX_THREADS}"
        ));
    }
    Ok(n)
}

/// Parses one item of a thread list: `8`, or `1:64` (1, 2, 4, … doubling up to 64, always
/// including 64).
pub fn parse_thread_range(s: &str) -> Result<Vec<usize>, String> {
    match s.split_once(':') {
        None => Ok(vec![parse_thread_count(s)?]),
        Some((a, b)) => {
            let (a, b) = (parse_thread_count(a)?, parse_thread_count(b)?);
            if a > b {
                return Err(format!("range '{s}' runs backwards"));
            }
            let mut v = Vec::new();
            let mut t = a;
            while t < b {
                v.push(t);
                t *= 2;
            }
            v.push(b);
            Ok(v)
        }
    }
}

/// Parses a positive integer of at most `max`.
pub fn parse_positive(s: &str, max: u64) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) if n > max => Err(format!("{n} is more than the limit of {max}")),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("'{s}' is not a positive integer")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lookups() {
        for (v, want) in [
            ("57.62", 5762),
            ("0", 0),
            ("0.00", 0),
            ("10", 1000),
            ("0.5", 50),
            ("30.05", 3005),
            ("1000", 100_000),
            ("1000.00", 100_000),
        ] {
            assert_eq!(parse_status_lookups(v), Ok(want), "{v}");
            // The text written back parses to the same count.
            assert_eq!(
                parse_status_lookups(&status_lookups_text(want)),
                Ok(want),
                "{v}"
            );
        }
        for bad in [
            "", ".", "5.", ".5", "-1", "1.234", "1000.01", "1001", "1e3", "57,62", "x", "10000",
        ] {
            let e = parse_status_lookups(bad).unwrap_err();
            assert!(e.contains("at most two places"), "{bad}: {e}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("300ms"), Ok(Duration::from_millis(300)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        // A bare number names the units it lacks, whatever program reads it.
        for bare in ["2", "300", "1.5"] {
            let e = parse_duration(bare).unwrap_err();
            assert!(e.contains("no unit") && e.contains("ms"), "{bare}: {e}");
        }
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("10min"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("500us"), Ok(Duration::from_micros(500)));
        for bad in ["0s", "soon", "1h", "2d", "", "90000s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn seeds_are_decimal_or_hex() {
        assert_eq!(parse_seed("42"), Ok(42));
        assert_eq!(parse_seed("0x10"), Ok(16));
        assert_eq!(parse_seed(" 0XfF "), Ok(255));
        assert_eq!(parse_seed("18446744073709551615"), Ok(u64::MAX));
        for bad in ["x", "-1", "0x", "0xg", "1.5", "18446744073709551616"] {
            assert!(parse_seed(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn thread_lists() {
        assert_eq!(parse_thread_range("8"), Ok(vec![8]));
        assert_eq!(parse_thread_range("1:64"), Ok(vec![1, 2, 4, 8, 16, 32, 64]));
        assert_eq!(parse_thread_range("3:10"), Ok(vec![3, 6, 10]));
        for bad in ["0", "4097", "8:2", "a", "1:"] {
            assert!(parse_thread_range(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_positive("5", 10), Ok(5));
        assert!(parse_positive("11", 10).is_err());
        assert!(parse_positive("0", 10).is_err());
    }
}
