//! The library entry point: the example's ticket lock, registered by name in a few lines, runs
//! through the whole harness beside a project lock, with the invariant checks, and lands in every
//! output file. (The simulated engine runs the same example in `ci/sim.sh`.)
#![cfg(not(lwsim))]

#[allow(dead_code)]
#[path = "../examples/ticket_lock.rs"]
mod ticket_lock;

#[test]
fn a_registered_lock_gets_the_whole_harness() {
    let dir = std::env::temp_dir().join(format!("lwbench-user-lock-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let code = lwbench::Lwbench::new()
        .lock::<ticket_lock::TicketLock>("ticket", "ticket spinlock (test)")
        .main_with([
            "lwbench",
            "--workload",
            "null-x,end-xact,clog",
            "--locks",
            "atomic,ticket",
            "--threads",
            "1,2",
            "--trials",
            "2",
            "--duration",
            "20ms",
            "--sample-interval",
            "2ms",
            "--out",
            dir.to_str().unwrap(),
        ]);
    assert_eq!(code, std::process::ExitCode::SUCCESS);
    let results = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    for w in ["null-x", "end-xact", "clog"] {
        for t in [1, 2] {
            let rows = results
                .lines()
                .filter(|l| l.starts_with(&format!("{w},ticket,")))
                .filter(|l| l.split(',').nth(4) == Some(&t.to_string()))
                .count();
            assert_eq!(
                rows, 2,
                "{w} x{t}: two trials of the ticket lock\n{results}"
            );
        }
    }
    let points = std::fs::read_to_string(dir.join("points.csv")).unwrap();
    assert_eq!(points.lines().filter(|l| l.contains(",ticket,")).count(), 6);
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("ticket"), "{summary}");
    for svg in ["null-x.svg", "end-xact.svg", "clog.svg"] {
        let s = std::fs::read_to_string(dir.join(svg)).unwrap();
        assert!(s.contains("ticket"), "{svg} has the ticket series");
    }
    // The name is now taken: registering it again is refused.
    assert!(lwbench::locks::register_user_lock(
        lwbench::locks::UserLock::new("ticket", "again")
            .with::<lwbench::runner::Trial, lwbench::locks::RawFamily<ticket_lock::TicketLock>>()
    )
    .is_err());
    let _ = std::fs::remove_dir_all(&dir);
}
