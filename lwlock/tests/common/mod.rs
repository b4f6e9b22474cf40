//! Test support: a watchdog that turns a hang into a test failure.

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Aborts the test process if not dropped within `limit`: a hang fails the test instead of
/// running into the CI timeout.
///
/// The message goes straight to the process's stderr, not through `eprintln!`: the watchdog
/// thread inherits the test harness's output capture, whose buffer the abort would discard.
pub struct Watchdog {
    done: Arc<AtomicBool>,
}

impl Watchdog {
    pub fn new(name: &'static str, limit: Duration) -> Self {
        let done = Arc::new(AtomicBool::new(false));
        let d = done.clone();
        std::thread::spawn(move || {
            let start = Instant::now();
            while start.elapsed() < limit {
                if d.load(Ordering::Acquire) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let waits: Vec<_> = lwlock::sample_waits()
                .iter()
                .filter(|s| s.event.is_waiting())
                .map(|s| format!("{}={}", s.proc, s.event))
                .collect();
            let _ = writeln!(
                std::io::stderr(),
                "watchdog: {name} did not finish within {limit:?}: hang; waits: {waits:?}"
            );
            std::process::abort();
        });
        Watchdog { done }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Release);
    }
}
