//! The tests' watchdog fails a hang: a deliberately hung section under a 1 s watchdog, run in a
//! child process (this test binary again, output captured as `cargo test` captures it), must
//! abort the child within its limit with a message naming the test.
#![cfg(not(any(loom, shuttle, lwsim)))]

mod common;

use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const CHILD: &str = "FLEXLOCK_WATCHDOG_CHILD";

/// In the child: a writer blocks behind this thread's write hold, and this thread joins it.
#[test]
fn hung_section() {
    if std::env::var_os(CHILD).is_none() {
        return; // not the child: nothing to do
    }
    let _w = common::watchdog("deliberate hang", 1);
    let lock = std::sync::Arc::new(lwlock::RwLock::new(0u32));
    let held = lock.write();
    let l2 = lock.clone();
    let t = std::thread::spawn(move || *l2.write() += 1);
    t.join().unwrap(); // never returns: the writer waits for `held`
    drop(held);
}

#[test]
fn a_hang_aborts_with_a_message_within_the_limit() {
    let exe = std::env::current_exe().unwrap();
    let start = Instant::now();
    let child = Command::new(exe)
        .args(["--exact", "hung_section", "--test-threads", "1"])
        .env(CHILD, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the child");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(out) => out.expect("wait for the child"),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("the watchdog did not end the hung child within 60 s");
        }
    };
    let elapsed = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "the hung child exited successfully: {stderr}"
    );
    assert!(
        stderr.contains("watchdog: test `deliberate hang` still running after 1 s: hang"),
        "no watchdog message naming the test:\n{stderr}"
    );
    assert!(
        elapsed < Duration::from_secs(30),
        "the watchdog took {elapsed:?} to fire"
    );
}
