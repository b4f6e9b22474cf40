//! Child processes of a recording, and Ctrl-C: every child runs in a process group of its own (a
//! Ctrl-C at the terminal reaches only `lwbench`), `lwbench` catches SIGINT, SIGTERM and SIGHUP
//! in a flag, and every wait polls that flag, so an interrupted recording ends its children and then
//! unwinds through the guards that remove its probes and stop its server.

use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    // Async-signal-safe: one atomic store.
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Catches SIGINT, SIGTERM and SIGHUP in a flag (see the module docs) for the rest of the
/// process.
pub fn catch_interrupts() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: installs a handler that only stores to an atomic (async-signal-safe); the
        // function pointer lives for the whole program.
        unsafe {
            libc::signal(
                sig,
                on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
}

/// Whether SIGINT, SIGTERM or SIGHUP arrived.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Why a step of a recording did not complete.
#[derive(Debug)]
pub enum Failure {
    /// SIGINT, SIGTERM or SIGHUP: exit 130 after the clean-up.
    Interrupted,
    /// An error with its message: exit 2 after the clean-up.
    Error(String),
}

impl From<String> for Failure {
    fn from(s: String) -> Self {
        Failure::Error(s)
    }
}

/// What a child did: its status, its output (stdout and stderr, in files), and its CPU time.
#[derive(Debug)]
pub struct Finished {
    /// Exit status.
    pub status: ExitStatus,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
    /// User + system CPU of it and the children it waited for, seconds.
    pub cpu_s: f64,
}

/// Starts `cmd` in a process group of its own with stdout and stderr in files `log.out` and
/// `log.err` beside `log` (so nothing can block on a full pipe).
pub fn spawn(cmd: &mut Command, log: &Path) -> Result<Child, Failure> {
    let out = std::fs::File::create(log.with_extension("out"))
        .map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let err = std::fs::File::create(log.with_extension("err"))
        .map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    cmd.stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(|e| Failure::Error(format!("cannot run {:?}: {e}", cmd.get_program())))
}

/// Waits for `child` (started by [`spawn`] with `log`), polling for an interrupt; on one, sends
/// the child's process group SIGTERM (SIGKILL after 5 s) and returns [`Failure::Interrupted`].
/// With a `limit`, a child still running then is killed and reported as an error.
pub fn wait(child: Child, log: &Path, limit: Option<Duration>) -> Result<Finished, Failure> {
    wait_inner(child, log, limit, true)
}

/// As [`wait`], but an interrupt does not end the child: for the clean-up steps an interrupted
/// recording still has to run (removing its probes, stopping its server).
fn wait_inner(
    mut child: Child,
    log: &Path,
    limit: Option<Duration>,
    interruptible: bool,
) -> Result<Finished, Failure> {
    let start = Instant::now();
    let pid = child.id() as libc::pid_t;
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: all-zero is a valid `rusage`.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: our own child's pid; `status` and `usage` are valid for writes.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            // Reaped here (dropping a `Child` neither waits nor kills).
            drop(child);
            let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
            let read = |ext| std::fs::read_to_string(log.with_extension(ext)).unwrap_or_default();
            use std::os::unix::process::ExitStatusExt as _;
            return Ok(Finished {
                status: ExitStatus::from_raw(status),
                stdout: read("out"),
                stderr: read("err"),
                cpu_s: tv(usage.ru_utime) + tv(usage.ru_stime),
            });
        }
        if r < 0 {
            return Err(Failure::Error(format!(
                "waiting for {}: {}",
                log.display(),
                std::io::Error::last_os_error()
            )));
        }
        let over = limit.is_some_and(|l| start.elapsed() > l);
        if (interruptible && interrupted()) || over {
            stop_process_group(&mut child);
            return Err(if over {
                Failure::Error(format!(
                    "{} still running after {:?}: killed",
                    log.display(),
                    limit.unwrap_or_default()
                ))
            } else {
                Failure::Interrupted
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Ends `child` (started by [`spawn`]) and its process group, and reaps it: for a guard that is
/// dropped with its child still running.
pub fn end(mut child: Child, log: &Path) {
    stop_process_group(&mut child);
    let _ = log;
}

/// Ends `child`'s process group and reaps `child`: SIGTERM to the group; once the leader has
/// exited (reaped here: an unreaped zombie would still count as a member) and no member is
/// left, done; after 10 s, SIGKILL to the group.
fn stop_process_group(child: &mut Child) {
    let pgid = child.id() as libc::pid_t;
    // SAFETY: kill(2) on a process group we created.
    unsafe { libc::kill(-pgid, libc::SIGTERM) };
    let start = Instant::now();
    let mut reaped = false;
    while start.elapsed() < Duration::from_secs(10) {
        if !reaped {
            reaped = matches!(child.try_wait(), Ok(Some(_)) | Err(_));
        }
        // SAFETY: signal 0 only checks that a member of the group exists.
        if reaped && unsafe { libc::kill(-pgid, 0) } != 0 {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: as above.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
    if !reaped {
        let _ = child.wait();
    }
}

/// Runs `cmd` to its end (see [`wait`]; at most 10 minutes); a non-zero exit is an error
/// quoting its stderr.
pub fn run(cmd: &mut Command, log: &Path, what: &str) -> Result<Finished, Failure> {
    run_inner(cmd, log, what, true, Duration::from_secs(600))
}

/// As [`run`], with a time limit of `limit`.
pub fn run_for(
    cmd: &mut Command,
    log: &Path,
    what: &str,
    limit: Duration,
) -> Result<Finished, Failure> {
    run_inner(cmd, log, what, true, limit)
}

/// Runs a clean-up step to its end even after an interrupt (at most 2 minutes).
pub fn run_cleanup(cmd: &mut Command, log: &Path, what: &str) -> Result<Finished, Failure> {
    run_inner(cmd, log, what, false, Duration::from_secs(120))
}

fn run_inner(
    cmd: &mut Command,
    log: &Path,
    what: &str,
    interruptible: bool,
    limit: Duration,
) -> Result<Finished, Failure> {
    let child = spawn(cmd, log)?;
    let f = wait_inner(child, log, Some(limit), interruptible)?;
    if !f.status.success() {
        return Err(Failure::Error(format!(
            "{what} failed ({}): {}",
            f.status,
            f.stderr.trim()
        )));
    }
    Ok(f)
}
