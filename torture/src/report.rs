//! The summary of a torture run (locktorture's `lock_torture_print_module_parms` and final
//! statistics): one line per lock with its operation counts and violations, the totals, the kept
//! violation messages and the final `torture: N operations, ...` line.

use crate::checks::{Kind, LockCtx, CHECKS, KINDS};
use crate::state::Run;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The totals of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Operations completed (attempts, including failed conditional ones).
    pub ops: u64,
    /// Panics thrown inside group closures.
    pub injected: u64,
    /// Injected panics that reached their submitters.
    pub received: u64,
    /// Worker threads replaced.
    pub respawns: u64,
    /// Invariant violations.
    pub violations: u64,
    /// Stalls (a stalled run exits from the monitor, so a returned report has 0).
    pub stalls: u64,
    /// Run time in milliseconds.
    pub elapsed_ms: u64,
}

impl Report {
    /// Whether the run passed.
    pub fn passed(&self) -> bool {
        self.violations == 0 && self.stalls == 0
    }
}

pub(crate) fn counts_line(get: impl Fn(Kind) -> u64) -> String {
    KINDS
        .iter()
        .filter(|k| get(**k) != 0)
        .map(|k| format!("{} {}", k.name(), get(*k)))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn checks_line(c: &LockCtx) -> String {
    CHECKS
        .iter()
        .map(|(k, name)| (name, c.by_check[*k as usize].load(Ordering::Relaxed)))
        .filter(|(_, n)| *n != 0)
        .map(|(name, n)| format!("{name} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn summary(run: &Run, elapsed: Duration, stalls: u64, partial: bool) -> Report {
    let mut out = String::new();
    out.push_str(&format!(
        "{:<22} {:>4} {:>12} {:>9} {:>15} {:>10}  {}\n",
        "lock", "thr", "ops", "respawns", "panics inj/rcv", "violations", "lock under test"
    ));
    let mut r = Report {
        stalls,
        elapsed_ms: elapsed.as_millis() as u64,
        ..Report::default()
    };
    for l in &run.locks {
        let c = &l.ctx;
        let (ops, inj, rcv, resp, viol) = (
            c.ops(),
            c.injected.load(Ordering::Relaxed),
            c.received.load(Ordering::Relaxed),
            c.respawns.load(Ordering::Relaxed),
            c.violations.load(Ordering::Relaxed),
        );
        out.push_str(&format!(
            "{:<22} {:>4} {:>12} {:>9} {:>15} {:>10}  {}\n",
            l.name.name(),
            l.threads,
            ops,
            resp,
            format!("{inj}/{rcv}"),
            viol,
            l.desc
        ));
        out.push_str(&format!("    {}\n", counts_line(|k| c.count(k))));
        if viol > 0 {
            out.push_str(&format!("    violations: {}\n", checks_line(c)));
        }
        r.ops += ops;
        r.injected += inj;
        r.received += rcv;
        r.respawns += resp;
        r.violations += viol;
    }
    out.push_str(&format!(
        "{:<22} {:>4} {:>12} {:>9} {:>15} {:>10}\n",
        "total",
        run.cfg.threads,
        r.ops,
        r.respawns,
        format!("{}/{}", r.injected, r.received),
        r.violations
    ));
    out.push_str(&format!(
        "    {}\n",
        counts_line(|k| run.locks.iter().map(|l| l.ctx.count(k)).sum())
    ));
    for l in &run.locks {
        let m = l.ctx.messages.lock().unwrap_or_else(|e| e.into_inner());
        for msg in m.iter() {
            out.push_str(&format!("violation [{}]: {msg}\n", l.name.name()));
        }
        let n = l.ctx.violations.load(Ordering::Relaxed) as usize;
        if n > m.len() {
            out.push_str(&format!(
                "violation [{}]: ... and {} more\n",
                l.name.name(),
                n - m.len()
            ));
        }
    }
    out.push_str(&format!(
        "torture: {} operations, {} injected panics, {} respawns, {} violations, {} stalls in \
         {:.1}s{}\n",
        r.ops,
        r.injected,
        r.respawns,
        r.violations,
        r.stalls,
        elapsed.as_secs_f64(),
        if partial {
            " (partial: stalled workers' counts are missing)"
        } else {
            ""
        }
    ));
    print!("{out}");
    r
}
