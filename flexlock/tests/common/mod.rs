//! Shared test helpers: a watchdog against hangs and polling with a deadline.
#![allow(dead_code)]

use std::io::Write as _;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Aborts the whole test process if not dropped within `secs` (a hang must fail, not stall CI).
/// The message goes straight to the process's stderr, not through `eprintln!`: the watchdog
/// thread inherits the test harness's output capture, whose buffer the abort would discard.
pub struct Watchdog(Option<mpsc::Sender<()>>);

pub fn watchdog(name: &'static str, secs: u64) -> Watchdog {
    let (tx, rx) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(Duration::from_secs(secs)) {
            let _ = writeln!(
                std::io::stderr(),
                "watchdog: test `{name}` still running after {secs} s: hang"
            );
            std::process::abort();
        }
    });
    Watchdog(Some(tx))
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

/// Polls `cond` until it holds; panics after 10 s.
pub fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Polls `cond` for at most `max`; returns whether it held.
pub fn wait_up_to(max: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while !cond() {
        if start.elapsed() >= max {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

/// Whether record `proc` is sleeping on a lock (published wait class LWLock).
pub fn waits_on_lwlock(proc: u32) -> bool {
    lwlock::sample_waits()
        .iter()
        .any(|s| s.proc == proc && s.event.to_string().starts_with("LWLock:"))
}

/// The calling thread's wait-record number.
pub fn me() -> u32 {
    lwlock::Proc::current().number()
}
