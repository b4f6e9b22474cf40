//! Stall detection and progress lines: a monitor thread reports the first lock on which no
//! operation completed for `--stall-timeout`, with what each of its threads is doing and
//! `lwlock::sample_waits()`, and exits 1 (locktorture's `torture_stutter` and stall checks).

use crate::checks::KINDS;
use crate::report::summary;
use crate::state::Run;
use lwlock::{Proc, WaitEvent};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

pub(crate) fn kind_name(k: u8) -> &'static str {
    KINDS.get(k as usize).map_or("idle", |k| k.name())
}

/// The monitor: reports the first lock without progress for `stall_timeout` and exits 1.
pub(crate) fn monitor(run: &Run) {
    let timeout = run.cfg.stall_timeout;
    let tick = (timeout / 20).clamp(Duration::from_millis(5), Duration::from_millis(250));
    let now = Instant::now();
    let mut last: Vec<(u64, Instant)> = run.locks.iter().map(|_| (0, now)).collect();
    while !run.done.load(Ordering::Relaxed) {
        thread::sleep(tick);
        let now = Instant::now();
        for (i, l) in run.locks.iter().enumerate() {
            let p = l.ctx.progress.load(Ordering::Relaxed);
            if p != last[i].0 || l.ctx.live.load(Ordering::Relaxed) == 0 {
                last[i] = (p, now);
            } else if now - last[i].1 >= timeout {
                stall(run, i, now - last[i].1);
                return; // the run finished meanwhile
            }
        }
    }
}

/// Prints the stall report and the summary so far, and exits 1; returns only if the run
/// finished meanwhile (then the final summary owns stdout).
pub(crate) fn stall(run: &Run, li: usize, quiet: Duration) {
    let _g = run.print.lock().unwrap_or_else(|e| e.into_inner());
    if run.done.load(Ordering::Relaxed) {
        return;
    }
    let l = &run.locks[li];
    let mut out = String::new();
    out.push_str(&format!(
        "torture: STALL: no operation completed on lock {} for {:.1}s ({} live workers)\n",
        l.name.name(),
        quiet.as_secs_f64(),
        l.ctx.live.load(Ordering::Relaxed)
    ));
    out.push_str("  its workers (slot, wait record, operation, wait event):\n");
    for (si, s) in l.ctx.slots.iter().enumerate() {
        let p = s.proc.load(Ordering::Relaxed);
        let event = if p == u32::MAX {
            "-".to_string()
        } else {
            Proc::by_number(p).wait_event().to_string()
        };
        out.push_str(&format!(
            "    {si:>4} proc {p:>5} {:<15} {event}\n",
            kind_name(s.kind.load(Ordering::Relaxed))
        ));
    }
    let samples = lwlock::sample_waits();
    let mut by_event: BTreeMap<String, usize> = BTreeMap::new();
    for s in &samples {
        *by_event.entry(s.event.to_string()).or_default() += 1;
    }
    out.push_str(&format!(
        "  lwlock::sample_waits(): {} live wait records\n",
        samples.len()
    ));
    for (e, n) in &by_event {
        out.push_str(&format!("    {n:>5} {e}\n"));
    }
    out.push_str(&format!(
        "    waiting: {}\n",
        samples
            .iter()
            .filter(|s| s.event != WaitEvent::NONE)
            .map(|s| format!("{}={}", s.proc, s.event))
            .collect::<Vec<_>>()
            .join(" ")
    ));
    print!("{out}");
    let _ = summary(run, run.started.elapsed(), 1, true);
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    std::process::exit(1);
}

pub(crate) fn progress_line(run: &Run) -> String {
    let parts: Vec<String> = run
        .locks
        .iter()
        .map(|l| {
            format!(
                "{} {}",
                l.name.name(),
                l.ctx.progress.load(Ordering::Relaxed)
            )
        })
        .collect();
    let (ops, v) = run.locks.iter().fold((0, 0), |(o, v), l| {
        (
            o + l.ctx.progress.load(Ordering::Relaxed),
            v + l.ctx.violations.load(Ordering::Relaxed),
        )
    });
    format!(
        "torture: {:.0}s: {ops} ops, {v} violations ({})",
        run.started.elapsed().as_secs_f64(),
        parts.join(", ")
    )
}
