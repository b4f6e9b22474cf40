//! Shared by the integration tests that run the built `bench` binary.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::mpsc;
use std::time::Duration;

/// Runs `bench` with `args`, killing it (and failing) after two minutes.
pub fn bench(args: &[&str]) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_lwbench"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn bench");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(out) => out.expect("wait for bench"),
        Err(_) => {
            // Watchdog: never let a hung run hang the test suite.
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("bench {args:?} did not finish within 120 s");
        }
    }
}

/// The rows of a CSV file (results.csv, points.csv, ...) as header → value maps.
pub fn csv_rows(path: &Path) -> Vec<HashMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            header
                .iter()
                .cloned()
                .zip(rec.unwrap().iter().map(String::from))
                .collect()
        })
        .collect()
}

/// Aborts the whole test process if not dropped within `secs`: a hang fails with a message
/// naming the test instead of stalling the test command. The message goes straight to stderr:
/// the watchdog thread inherits the harness's output capture, whose buffer the abort discards.
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

/// A fresh output directory for one test: `lwbench-{tag}-{pid}-{name}` under the temporary
/// directory, removed first if a previous run left it.
pub fn out_dir(tag: &str, name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("lwbench-{tag}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Runs `bench` with `args`, failing with its status and stderr unless it succeeds; returns
/// its stderr.
pub fn run_ok(args: &[&str]) -> String {
    let o = bench(args);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{args:?}: {}\n{err}", o.status);
    err
}

/// Column `k` of a CSV row as a number, failing with the column's name if it is missing or
/// not a number.
pub fn num(row: &HashMap<String, String>, k: &str) -> f64 {
    row.get(k)
        .unwrap_or_else(|| panic!("column {k} missing"))
        .parse()
        .unwrap_or_else(|_| panic!("column {k}: {:?}", row.get(k)))
}
