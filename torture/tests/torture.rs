//! Runs the built `lwtorture` binary for a few seconds: a clean run passes with every lock
//! exercised, deliberately broken locks are caught (violations, a stall), and bad arguments exit 2
//! naming the argument.

use std::process::{Command, Output};
use std::sync::mpsc;
use std::time::Duration;

/// Runs `lwtorture` with `args`, killing it (and failing) after two minutes.
fn torture(args: &[&str]) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_lwtorture"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn lwtorture");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(out) => out.expect("wait for lwtorture"),
        Err(_) => {
            // Watchdog: never let a hung run hang the test suite.
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("lwtorture {args:?} did not finish within 120 s");
        }
    }
}

/// The numbers of the final line `torture: N operations, M injected panics, R respawns,
/// V violations, S stalls in T s`.
#[derive(Debug)]
struct Summary {
    ops: u64,
    panics: u64,
    respawns: u64,
    violations: u64,
    stalls: u64,
}

fn summary(stdout: &str) -> Summary {
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with("torture: ") && l.contains(" operations, "))
        .unwrap_or_else(|| panic!("no summary line in:\n{stdout}"));
    let num = |what: &str| -> u64 {
        let end = line
            .find(what)
            .unwrap_or_else(|| panic!("no '{what}' in {line}"));
        let start = line[..end].rfind(' ').map_or(0, |i| i + 1);
        line[start..end]
            .parse()
            .unwrap_or_else(|_| panic!("bad number before '{what}' in {line}"))
    };
    assert!(line.contains("s"), "{line}");
    Summary {
        ops: num(" operations"),
        panics: num(" injected panics"),
        respawns: num(" respawns"),
        violations: num(" violations"),
        stalls: num(" stalls"),
    }
}

/// The per-lock table row of `lock`: (threads, ops, violations).
fn lock_row(stdout: &str, lock: &str) -> (u64, u64, u64) {
    let row = stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(lock))
        .unwrap_or_else(|| panic!("no row for {lock} in:\n{stdout}"));
    let f: Vec<&str> = row.split_whitespace().collect();
    (
        f[1].parse().unwrap(),
        f[2].parse().unwrap(),
        f[5].parse().unwrap(),
    )
}

const LOCKS: [&str; 13] = [
    "classic",
    "atomic",
    "atomic-handoff",
    "rwlock",
    "barging-rwlock",
    "classic-rwlock",
    "flex-leader",
    "flex-releaser",
    "flex-holder",
    "flex-leader-classic",
    "flex-releaser-classic",
    "clog-group",
    "scalable-rwlock",
];

#[test]
fn a_clean_run_passes_and_exercises_every_lock() {
    let o = torture(&[
        "--duration",
        "2500ms",
        "--threads",
        "39",
        "--max-thread-ops",
        "300",
        "--panic-pct",
        "10",
        "--seed",
        "0x5eed",
        "--stat-interval",
        "1s",
        "--stall-timeout",
        "10s",
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let s = summary(&stdout);
    assert_eq!((s.violations, s.stalls), (0, 0), "{stdout}");
    assert!(s.ops > 0 && s.panics > 0 && s.respawns > 0, "{s:?}");
    assert!(stdout.contains("seed 0x5eed"), "{stdout}");
    for lock in LOCKS {
        let (threads, ops, violations) = lock_row(&stdout, lock);
        assert_eq!(threads, 3, "{lock}");
        assert!(ops > 0, "{lock} did nothing:\n{stdout}");
        assert_eq!(violations, 0, "{lock}");
    }
    // Every kind of operation ran somewhere, and injected panics were received.
    for kind in [
        "shared ",
        "exclusive ",
        "cond-shared ",
        "cond-exclusive ",
        "aow-shared ",
        "aow-exclusive ",
        "var-update ",
        "var-wait ",
        "read ",
        "write ",
        "try-read ",
        "try-write ",
        "group ",
        "group-panicked ",
    ] {
        assert!(stdout.contains(kind), "no {kind:?} operations:\n{stdout}");
    }
    assert!(
        stdout.contains(&format!("{}/{}", s.panics, s.panics)),
        "{stdout}"
    );
    // The progress lines go to stderr; injected panics print nothing.
    assert!(stderr.contains("torture: 1s:"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn broken_locks_are_caught() {
    for (how, check) in [
        ("shared-takes-nothing", "holders"),
        ("exclusive-takes-shared", "holders"),
    ] {
        // The two breakable raw locks, and a drop-in lock as the control.
        let o = torture(&[
            "--broken-lock",
            how,
            "--locks",
            "classic,atomic,rwlock",
            "--duration",
            "1500ms",
            "--threads",
            "9",
            "--seed",
            "3",
        ]);
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(1), "{how}:\n{stdout}");
        let s = summary(&stdout);
        assert!(s.violations > 0, "{how}: {s:?}");
        assert_eq!(s.stalls, 0, "{how}");
        assert!(stdout.contains(&format!("BROKEN LOCK: {how}")), "{stdout}");
        // The broken raw locks are caught by the holder counter (not only by the lock's own view),
        // and the control stays clean.
        for lock in ["classic", "atomic"] {
            let (_, _, v) = lock_row(&stdout, lock);
            assert!(v > 0, "{how}: {lock} not caught:\n{stdout}");
        }
        assert!(
            stdout
                .lines()
                .any(|l| l.trim_start().starts_with("violations:") && l.contains(check)),
            "{how}: no {check} violations:\n{stdout}"
        );
        assert_eq!(lock_row(&stdout, "rwlock").2, 0, "{how}: rwlock:\n{stdout}");
    }
}

#[test]
fn a_leaked_lock_is_reported_as_a_stall() {
    let o = torture(&[
        "--broken-lock",
        "leak-exclusive",
        "--locks",
        "classic,atomic",
        "--threads",
        "4",
        "--duration",
        "60s",
        "--stall-timeout",
        "2s",
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("STALL: no operation completed on lock"),
        "{stdout}"
    );
    assert!(stdout.contains("lwlock::sample_waits()"), "{stdout}");
    assert!(stdout.contains("LWLock:torture-"), "{stdout}");
    let s = summary(&stdout);
    assert_eq!(s.stalls, 1, "{stdout}");
}

fn expect_usage_error(args: &[&str], needles: &[&str]) {
    let o = torture(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: stderr {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: stderr lacks {n:?}: {err}");
    }
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
}

#[test]
fn bad_arguments_exit_2_naming_the_argument() {
    expect_usage_error(&["--duration", "soon"], &["--duration", "soon"]);
    expect_usage_error(&["--duration", "0s"], &["--duration"]);
    expect_usage_error(&["--stall-timeout", "5 fortnights"], &["--stall-timeout"]);
    expect_usage_error(&["--threads", "0"], &["--threads"]);
    // Fewer threads than locks.
    expect_usage_error(&["--threads", "3"], &["--threads", "13 locks"]);
    expect_usage_error(
        &["--locks", "atomic,spinny"],
        &["--locks", "spinny", "flex-releaser-classic", "clog-group"],
    );
    expect_usage_error(&["--seed", "lucky"], &["--seed"]);
    expect_usage_error(&["--panic-pct", "101"], &["--panic-pct"]);
    expect_usage_error(&["--max-thread-ops", "0"], &["--max-thread-ops"]);
    expect_usage_error(&["--bogus"], &["--bogus"]);
}
