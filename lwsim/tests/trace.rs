//! The access trace (`LWSIM_TRACE`): it prints the accesses and drains of its window and only
//! those, names a watched line, changes no simulated figure, and a malformed window is an error
//! naming the variable. The trace is read from the environment when a machine is built, so each
//! case runs in a child process of this test binary.

use lwsim::atomic::AtomicU64;
use lwsim::{Profile, SimConfig};
use std::process::Command;
use std::sync::atomic::Ordering;
use std::sync::Arc;

#[global_allocator]
static LINE_ALIGNED: lwsim::LineAligned = lwsim::LineAligned;

/// A value alone on its 64-byte line.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Padded<T>(T);

/// Two threads, each 200 `fetch_add`s on one watched line and a plain store to another line
/// both write (buffered when it misses); returns the run's fingerprint.
fn two_threads() -> String {
    let cfg = SimConfig::new(Profile::builtin("xeon-2s-broadwell").unwrap(), 2);
    let r = lwsim::run(cfg, || {
        let hot = Arc::new(Padded(AtomicU64::new(0)));
        lwsim::watch("hot", &hot.0 as *const AtomicU64);
        let side = Arc::new(Padded(AtomicU64::new(0)));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let (hot, side) = (hot.clone(), side.clone());
                lwsim::thread::spawn(move || {
                    for i in 0..200 {
                        hot.0.fetch_add(1, Ordering::Relaxed);
                        side.0.store(i, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    });
    format!("{:?}", r.fingerprint())
}

/// The child: prints the fingerprint of one run.
#[test]
#[ignore = "run as a child process by the tests of this file"]
fn trace_child() {
    if std::env::var_os("LWSIM_TRACE_CHILD").is_none() {
        return;
    }
    println!("FINGERPRINT {}", two_threads());
}

/// Runs the child with `LWSIM_TRACE` set to `window` (or unset): (success, stdout, stderr).
fn child(window: Option<&str>) -> (bool, String, String) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["trace_child", "--exact", "--ignored", "--nocapture"])
        .env("LWSIM_TRACE_CHILD", "1")
        .env_remove("LWSIM_TRACE");
    if let Some(w) = window {
        cmd.env("LWSIM_TRACE", w);
    }
    let out = cmd.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

fn fingerprint(stdout: &str) -> &str {
    stdout
        .lines()
        .find(|l| l.starts_with("FINGERPRINT"))
        .unwrap_or_else(|| panic!("the child printed no fingerprint: {stdout}"))
}

/// The event time (ns) of a trace line, `@<ns> ...`.
fn at(line: &str) -> f64 {
    line[1..line.find(' ').unwrap()].parse().unwrap()
}

#[test]
fn the_trace_prints_its_window_names_watched_lines_and_changes_nothing() {
    let (ok, plain, _) = child(None);
    assert!(ok);
    let (ok, traced, err) = child(Some("500..1500"));
    assert!(ok, "{err}");
    assert_eq!(
        fingerprint(&plain),
        fingerprint(&traced),
        "the trace changed a figure"
    );
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with('@')).collect();
    assert!(lines.len() > 10, "too few trace lines: {err}");
    assert!(
        lines.iter().all(|l| (500.0..1500.0).contains(&at(l))),
        "a line outside the window: {lines:?}"
    );
    // The watched line by name, its RMWs moving it between the two hardware threads; the
    // other lines' buffered stores drain.
    assert!(
        lines
            .iter()
            .any(|l| l.contains(" hot rmw ")
                && (l.contains("rfo-from-M") || l.contains("invalidate"))),
        "no transfer of the watched line: {lines:?}"
    );
    assert!(lines.iter().any(|l| l.contains(" store ")), "{lines:?}");
    // Two threads on one line: some requests draw an arbitration delay, each traced with its
    // retry time inside the run.
    assert!(
        lines.iter().any(|l| l.contains(" arbitrate delay ")),
        "no arbitration traced: {lines:?}"
    );
    assert!(lines.iter().any(|l| l.ends_with(" drain")), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains(" hw0 ")) && lines.iter().any(|l| l.contains(" hw1 ")));
    // A window after the run prints nothing.
    let (ok, _, err) = child(Some("900000000..900000001"));
    assert!(ok);
    assert!(!err.lines().any(|l| l.starts_with('@')), "{err}");
}

#[test]
fn a_malformed_window_is_an_error_naming_the_variable() {
    for bad in ["1000", "20..10", "x..10"] {
        let (ok, _, err) = child(Some(bad));
        assert!(!ok, "LWSIM_TRACE={bad} was accepted");
        assert!(err.contains(&format!("LWSIM_TRACE={bad}")), "{err}");
    }
}
