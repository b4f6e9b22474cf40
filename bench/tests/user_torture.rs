//! A lock registered with `Lwbench::lock` runs under `lwtorture` too (`PROGRAM torture ...`,
//! over the same registry): the example's ticket lock passes with operations counted, and the
//! registry's deliberately broken lock, registered the same way, is caught as a violation.
//! (One test: both runs share the process's registry and torture's panic hook.)
#![cfg(not(lwsim))]

use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

#[allow(dead_code)]
#[path = "../examples/ticket_lock.rs"]
mod ticket_lock;

/// Runs this test binary again as a child whose `main`-like entry is `Lwbench::main_with`
/// (selected by the environment), so that torture's output and exit status are the child's.
fn child(lock: &str, args: &[&str]) -> (i32, String) {
    let exe = std::env::current_exe().unwrap();
    let c = Command::new(exe)
        .args([
            "--exact",
            "child_entry",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("LWBENCH_TORTURE_CHILD", lock)
        .env("LWBENCH_TORTURE_ARGS", args.join(" "))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = c.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(c.wait_with_output());
    });
    let out = match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(out) => out.expect("wait for the child"),
        Err(_) => {
            // Watchdog: never let a hung run hang the test suite.
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("the torture child for {lock} {args:?} did not finish within 120 s");
        }
    };
    let code = out.status.code().unwrap_or(-1);
    let (out, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    (code, format!("{out}\n--- stderr ---\n{err}"))
}

/// The child: registers the lock and runs `PROGRAM torture ARGS`, exiting with its status.
#[test]
fn child_entry() {
    let Ok(lock) = std::env::var("LWBENCH_TORTURE_CHILD") else {
        return; // not a child: nothing to do
    };
    let args = std::env::var("LWBENCH_TORTURE_ARGS").unwrap();
    let b = match lock.as_str() {
        "ticket" => lwbench::Lwbench::new().lock::<ticket_lock::TicketLock>(
            "ticket",
            "ticket spinlock (a user lock registered by its own main)",
        ),
        "my-broken" => lwbench::Lwbench::new().lock::<lwbench::locks::BrokenLock>(
            "my-broken",
            "the registry's broken lock, registered as a user's",
        ),
        other => panic!("unknown child lock {other}"),
    };
    let argv: Vec<String> = ["my-bench", "torture"]
        .into_iter()
        .map(String::from)
        .chain(args.split_whitespace().map(String::from))
        .collect();
    let code = b.main_with(argv);
    let code = if code == std::process::ExitCode::SUCCESS {
        0
    } else {
        1
    };
    std::process::exit(code);
}

/// The summary row of `lock`: its `ops` and `violations` columns.
fn row(out: &str, lock: &str) -> (u64, u64) {
    let line = out
        .lines()
        .find(|l| l.split_whitespace().next() == Some(lock))
        .unwrap_or_else(|| panic!("no summary row for {lock}:\n{out}"));
    let f: Vec<&str> = line.split_whitespace().collect();
    (f[2].parse().unwrap(), f[5].parse().unwrap())
}

#[test]
fn a_registered_lock_runs_under_torture() {
    // The ticket lock beside two built-in locks: it is tortured, counted, and clean.
    let (code, out) = child(
        "ticket",
        &[
            "--duration",
            "1500ms",
            "--threads",
            "6",
            "--locks",
            "atomic,ticket,flex-leader",
            "--seed",
            "7",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let (ops, violations) = row(&out, "ticket");
    assert!(ops > 0, "the ticket lock ran no operation:\n{out}");
    assert_eq!(violations, 0, "{out}");
    assert!(out.contains("ticket spinlock"), "{out}");
    // Its raw target: conditional and acquire_or_wait operations ran too (its counts line
    // follows its row).
    let counts = out
        .lines()
        .skip_while(|l| l.split_whitespace().next() != Some("ticket"))
        .nth(1)
        .unwrap_or_default();
    for op in ["cond-exclusive", "aow-shared", "aow-exclusive"] {
        assert!(
            counts.contains(op),
            "no {op} on the ticket lock: {counts}\n{out}"
        );
    }
    // `all` includes the registered lock beside the built-in set.
    let (code, out) = child(
        "ticket",
        &["--duration", "1s", "--threads", "28", "--seed", "3"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(row(&out, "ticket").0 > 0, "{out}");
    assert!(row(&out, "clog-group").0 > 0, "{out}");

    // The broken lock, registered by a user: torture catches it.
    let (code, out) = child(
        "my-broken",
        &["--duration", "1s", "--threads", "4", "--locks", "my-broken"],
    );
    assert_eq!(code, 1, "{out}");
    let (ops, violations) = row(&out, "my-broken");
    assert!(ops > 0 && violations > 0, "{out}");
    assert!(out.contains("violation [my-broken]"), "{out}");
}
