//! An off-by-default diagnostic: which lines the transfers go to, and from which code.
//!
//! Enabled by the environment variable `LWSIM_LINES=N` (read once per simulation, when the
//! machine is built): every coherence access that is a transfer (a miss of any kind) is counted
//! per 64-byte line, and every `LWSIM_LINES_SAMPLE`-th transfer (default 64) also records a
//! backtrace of the accessing code. When the simulation ends, the `N` lines with the most
//! transfers are printed to stderr, each with its counts and the sampled call sites that
//! touched it most (the innermost `LWSIM_LINES_DEPTH` frames, default 2, outside the simulator,
//! `std`, `core` and the coroutines' crate, with file and line; release builds of this workspace keep line
//! tables, `debug = 1`).
//!
//! The counts cover the whole simulation (warm-up and tail included), not a harness's window.
//! Unset, the cost is one branch per access. Set, sampled backtraces make a run several times
//! slower in real time; the simulated figures are unchanged (nothing here advances a clock).

use std::backtrace::Backtrace;
use std::collections::HashMap;
use std::fmt::Write as _;

use crate::access::{Access, LINE_SHIFT};

/// Per-line counts.
#[derive(Default, Clone)]
struct LineStat {
    transfers: u64,
    load_transfers: u64,
    store_transfers: u64,
    rmw_transfers: u64,
    wait_ps: u64,
    accesses: u64,
}

/// The profile of one simulation (present only when `LWSIM_LINES` is set).
pub(crate) struct LineProfile {
    top: usize,
    sample_every: u64,
    seen: u64,
    lines: HashMap<usize, LineStat>,
    /// `(line, backtrace)` of sampled transfers, resolved when the report is printed.
    samples: Vec<(usize, Backtrace)>,
}

/// At most this many backtraces are kept (later samples are dropped).
const MAX_SAMPLES: usize = 50_000;

impl LineProfile {
    /// `Some` if `LWSIM_LINES` is set to a positive number.
    pub(crate) fn from_env() -> Option<LineProfile> {
        let top: usize = std::env::var("LWSIM_LINES").ok()?.parse().ok()?;
        if top == 0 {
            return None;
        }
        let sample_every = std::env::var("LWSIM_LINES_SAMPLE")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(64u64)
            .max(1);
        Some(LineProfile {
            top,
            sample_every,
            seen: 0,
            lines: HashMap::new(),
            samples: Vec::new(),
        })
    }

    /// Records one access of line number `line` (address >> 6); `transfer`: it missed.
    pub(crate) fn record(&mut self, line: usize, kind: Access, transfer: bool, wait_ps: u64) {
        let s = self.lines.entry(line).or_default();
        s.accesses += 1;
        if !transfer {
            return;
        }
        s.transfers += 1;
        s.wait_ps += wait_ps;
        match kind {
            Access::Load => s.load_transfers += 1,
            Access::Store => s.store_transfers += 1,
            Access::Rmw => s.rmw_transfers += 1,
        }
        self.seen += 1;
        if self.seen % self.sample_every == 0 && self.samples.len() < MAX_SAMPLES {
            self.samples.push((line, Backtrace::force_capture()));
        }
    }

    /// The report: top lines by transfers, with their sampled call sites.
    pub(crate) fn report(self) -> String {
        let total: u64 = self.lines.values().map(|s| s.transfers).sum();
        let mut lines: Vec<(usize, LineStat)> = self.lines.into_iter().collect();
        lines.sort_by_key(|(l, s)| (std::cmp::Reverse(s.transfers), *l));
        lines.truncate(self.top);
        let mut sites: HashMap<usize, HashMap<String, u64>> = HashMap::new();
        let wanted: std::collections::HashSet<usize> = lines.iter().map(|(l, _)| *l).collect();
        for (line, bt) in &self.samples {
            if wanted.contains(line) {
                *sites
                    .entry(*line)
                    .or_default()
                    .entry(site_of(bt))
                    .or_default() += 1;
            }
        }
        let mut out = String::new();
        let _ = writeln!(
            out,
            "lwsim line profile: {total} transfers in all; top {} lines (sampled 1 in {}):",
            lines.len(),
            self.sample_every
        );
        for (line, s) in &lines {
            let _ = writeln!(
                out,
                "  line {:#x}: {} transfers ({:.1}%; loads {}, stores {}, rmws {}), {} accesses, \
                 wait {:.1} us",
                line << LINE_SHIFT,
                s.transfers,
                100.0 * s.transfers as f64 / total.max(1) as f64,
                s.load_transfers,
                s.store_transfers,
                s.rmw_transfers,
                s.accesses,
                s.wait_ps as f64 / 1e6
            );
            if let Some(by_site) = sites.get(line) {
                let mut v: Vec<_> = by_site.iter().collect();
                v.sort_by_key(|(k, n)| (std::cmp::Reverse(**n), (*k).clone()));
                for (site, n) in v.into_iter().take(6) {
                    let _ = writeln!(out, "      {n:6} samples  {site}");
                }
            }
        }
        out
    }
}

/// Frames that are not the program's code: the runtime, the coroutines' (corosensei), this crate's own modules (named
/// one by one: a program's own crate may be called `lwsim` too, as lwlock's sweep example is)
/// and lwlock's `sync` shim over it.
const SKIP: &[&str] = &[
    "std::",
    "core::",
    "alloc::",
    "corosensei",
    "lwsim::access::",
    "lwsim::alloc::",
    "lwsim::atomic::",
    "lwsim::coroutines::",
    "lwsim::host::",
    "lwsim::line_profile::",
    "lwsim::machine::",
    "lwsim::mutex::",
    "lwsim::os::",
    "lwsim::run::",
    "lwsim::thread::",
    "lwlock::sync::",
    "__rust",
    "rust_",
];

/// Frames per call site: `LWSIM_LINES_DEPTH` (default 2).
fn depth() -> usize {
    std::env::var("LWSIM_LINES_DEPTH")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2usize)
        .max(1)
}

/// The innermost frames (see [`depth`]) of `bt` outside the simulator and the runtime, `fn (file:line)`.
fn site_of(bt: &Backtrace) -> String {
    let text = bt.to_string();
    let mut frames: Vec<String> = Vec::new();
    let mut it = text.lines().peekable();
    while let Some(l) = it.next() {
        let l = l.trim();
        // Frame lines are "N: symbol"; the next line may be "at file:line:col".
        let Some((num, sym)) = l.split_once(": ") else {
            continue;
        };
        if num.parse::<u32>().is_err() {
            continue;
        }
        let at = match it.peek() {
            Some(n) if n.trim().starts_with("at ") => it.next().map(|n| n.trim()[3..].to_string()),
            _ => None,
        };
        let s = sym.trim_start_matches('<');
        if SKIP.iter().any(|p| sym.starts_with(p) || s.starts_with(p)) {
            continue;
        }
        let short_at = at
            .map(|a| {
                let a = a.rsplit_once(':').map(|(f, _)| f.to_string()).unwrap_or(a);
                let parts: Vec<&str> = a.rsplit('/').take(2).collect();
                format!(" ({}/{})", parts.get(1).unwrap_or(&""), parts[0])
            })
            .unwrap_or_default();
        let sym = sym.rsplit_once("::h").map(|(s, _)| s).unwrap_or(sym);
        frames.push(format!("{sym}{short_at}"));
        if frames.len() == depth() {
            break;
        }
    }
    if frames.is_empty() {
        "?".to_string()
    } else {
        frames.join(" < ")
    }
}
