//! One torture run: builds every lock's target from the registry, starts the workers and the
//! monitor, replaces exiting workers until `--duration` is over, runs the end-of-run checks and
//! prints the summary.

use crate::checks::{panic_message, Check, LockCtx};
use crate::config::Config;
use crate::monitor::{monitor, progress_line};
use crate::report::{summary, Report};
use crate::state::{LockRun, Run};
use crate::targets::make_target;
use crate::workers::{install_panic_hook, spawn_failed, spawn_worker};
use lwharness::registry::LockKind;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// Runs torture as configured and prints the summary to stdout. A stall exits the process (1)
/// from the monitor thread, after printing its report and the summary so far.
pub fn run(cfg: &Config) -> Report {
    install_panic_hook();
    let per_lock = cfg.threads_per_lock();
    let locks: Vec<LockRun> = cfg
        .locks
        .iter()
        .zip(&per_lock)
        .map(|(&name, &threads)| {
            let broken = match name {
                LockKind::Classic | LockKind::Atomic => cfg.broken,
                _ => None,
            };
            let (target, desc) = make_target(name, broken);
            LockRun {
                name,
                desc,
                threads,
                target,
                ctx: LockCtx::new(name.name(), threads, matches!(name, LockKind::User(_))),
            }
        })
        .collect();
    let run = Arc::new(Run {
        cfg: cfg.clone(),
        locks,
        stop: AtomicBool::new(false),
        done: AtomicBool::new(false),
        next_uid: AtomicU64::new(1),
        print: Mutex::new(()),
        started: Instant::now(),
    });
    println!(
        "torture: {} locks, {} threads ({} per lock), {:.1}s, seed {:#x}, {}% of group ops \
         panic, at most {} ops per thread, stall timeout {:.0}s{}",
        cfg.locks.len(),
        cfg.threads,
        match (per_lock.iter().min(), per_lock.iter().max()) {
            (Some(a), Some(b)) if a != b => format!("{a}-{b}"),
            (Some(a), _) => a.to_string(),
            _ => "0".into(),
        },
        cfg.duration.as_secs_f64(),
        cfg.seed,
        cfg.panic_pct,
        cfg.max_thread_ops,
        cfg.stall_timeout.as_secs_f64(),
        cfg.broken
            .map_or(String::new(), |b| format!(", BROKEN LOCK: {}", b.name()))
    );
    let mon = {
        let r = Arc::clone(&run);
        thread::Builder::new()
            .name("torture-monitor".into())
            .spawn(move || monitor(&r))
            .expect("spawn the torture monitor")
    };

    let (tx, rx) = mpsc::channel::<(usize, usize)>();
    let mut handles: Vec<Vec<Option<thread::JoinHandle<()>>>> = Vec::new();
    let mut generations: Vec<Vec<u64>> = Vec::new();
    let mut live = 0usize;
    for (li, l) in run.locks.iter().enumerate() {
        let slots: Vec<Option<thread::JoinHandle<()>>> = (0..l.threads)
            .map(|si| match spawn_worker(&run, &tx, li, si, 0) {
                Ok(h) => {
                    live += 1;
                    Some(h)
                }
                Err(e) => {
                    spawn_failed(&run, li, e);
                    None
                }
            })
            .collect();
        handles.push(slots);
        generations.push(vec![0; l.threads]);
    }
    let deadline = run.started + cfg.duration;
    let mut next_stat = run.started + cfg.stat_interval;
    while live > 0 {
        let now = Instant::now();
        if now >= deadline {
            run.stop.store(true, Ordering::Relaxed);
        }
        if now >= next_stat {
            eprintln!("{}", progress_line(&run));
            next_stat += cfg.stat_interval;
        }
        let wake = deadline.min(next_stat);
        let wait = wake
            .saturating_duration_since(now)
            .clamp(Duration::from_millis(1), Duration::from_millis(100));
        let (li, si) = match rx.recv_timeout(wait) {
            Ok(x) => x,
            Err(_) => continue,
        };
        let ctx = &run.locks[li].ctx;
        if let Some(h) = handles[li][si].take() {
            if let Err(p) = h.join() {
                let msg = panic_message(&*p);
                ctx.violation(Check::Worker, || format!("worker {si} panicked: {msg}"));
            }
            ctx.live.fetch_sub(1, Ordering::Relaxed);
            live -= 1;
        }
        if !run.stop.load(Ordering::Relaxed) {
            generations[li][si] += 1;
            match spawn_worker(&run, &tx, li, si, generations[li][si]) {
                Ok(h) => {
                    handles[li][si] = Some(h);
                    live += 1;
                    ctx.respawns.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => spawn_failed(&run, li, e),
            }
        }
    }
    let elapsed = run.started.elapsed();
    let g = run.print.lock().unwrap_or_else(|e| e.into_inner());
    run.done.store(true, Ordering::Relaxed);
    for l in &run.locks {
        l.target.final_check(&l.ctx);
    }
    let report = summary(&run, elapsed, 0, false);
    drop(g);
    let _ = mon.join();
    report
}
