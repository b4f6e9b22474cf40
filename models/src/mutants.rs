//! Proof that the models can fail.
//!
//! lwlock and flexlock contain deliberately broken variants behind `lwlock::mutant!("name")`,
//! compiled in only with `--cfg lwlock_mutant="runtime"` (and then selected by the environment
//! variable `LWLOCK_MUTANT`). [`expect_caught`] re-runs one model of the current test binary in a
//! child process with a variant selected and passes only if the model reports the bug: a loom
//! deadlock aborts the whole process, so it cannot be caught in-process.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a model reports when it catches a broken variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// A lost wakeup: every thread blocked (loom: "deadlock; threads = …", shuttle: "deadlock!").
    Deadlock,
    /// Unordered accesses to protected data (loom: "Causality violation").
    Race,
    /// A failed assertion of the model: the text it must print.
    Assertion(&'static str),
}

impl Failure {
    fn matches(self, output: &str) -> bool {
        match self {
            Failure::Deadlock => output.contains("deadlock"),
            Failure::Race => output.contains("Causality violation"),
            Failure::Assertion(text) => output.contains(text),
        }
    }
}

/// Runs test `model` (a test of the current binary) in a child process with `LWLOCK_MUTANT` set
/// to `mutant`; panics unless the child fails within `timeout` reporting `failure`.
///
/// # Panics
/// If the child passes, times out, or fails in some other way: the mutant was not caught.
pub fn expect_caught(model: &str, mutant: &str, failure: Failure, timeout: Duration) {
    let exe = std::env::current_exe().expect("test binary path");
    let start = Instant::now();
    let mut child = Command::new(exe)
        .args([model, "--exact", "--nocapture", "--test-threads=1"])
        .env("LWLOCK_MUTANT", mutant)
        .env("RUST_BACKTRACE", "0")
        .env_remove("MODELS_REPORT")
        .env_remove("MUTANTS_REPORT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the model in a child process");
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let err = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the model") {
            break Some(status);
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = format!(
        "{}{}",
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default()
    );
    let seconds = start.elapsed().as_secs_f64();
    let tail: String = {
        let lines: Vec<&str> = output.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    };
    let status = status.unwrap_or_else(|| {
        panic!("mutant {mutant} not caught by {model} within {timeout:?}; output tail:\n{tail}")
    });
    assert!(
        output.contains("running 1 test"),
        "model {model} not found in this binary; output tail:\n{tail}"
    );
    assert!(
        !status.success(),
        "mutant {mutant} NOT caught: model {model} passed; output tail:\n{tail}"
    );
    assert!(
        failure.matches(&output),
        "mutant {mutant}: model {model} failed, but not with {failure:?}; output tail:\n{tail}"
    );
    let line = format!("| `{mutant}` | `{model}` | {failure:?} | {seconds:.2} |");
    eprintln!("{line}");
    if let Ok(path) = std::env::var("MUTANTS_REPORT") {
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            // One write per row (O_APPEND): parallel writers cannot interleave a row and its newline.
            let _ = f.write_all(format!("{line}\n").as_bytes());
        }
    }
}
