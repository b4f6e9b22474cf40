//! The recording's uprobes on the server binary, a probe set in a perf event group of its own
//! (`perf probe`'s `GROUP:EVENT`), removed when the guard is dropped (on error and on Ctrl-C too;
//! another recording's set is never touched), and `perf record` over the server's processes
//! only.
//!
//! # The probes (PostgreSQL 15 on x86-64)
//! Arguments come from the x86-64 SysV registers (first argument `%di`, second `%si`, fourth
//! `%cx`); `struct LWLock` starts with its `uint16 tranche`, so `+0(%di):u16` is the lock's
//! tranche and `%di` its address. Return probes record the return value (`$retval`). The
//! transaction markers are the server's USDT probes `transaction__start`, `transaction__commit`
//! and `transaction__abort` (Debian builds with `--enable-dtrace`), probed at the addresses their
//! `.note.stapsdt` entries give, in our perf group (perf's own `sdt_postgresql` group is
//! shared by every user of the binary).

use super::process::{self, Failure};
use super::trace::Probe;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

/// The probe definitions of a recording, `(probe, perf probe definition without the
/// `GROUP:EVENT=` prefix)`, given the USDT markers' addresses.
pub fn definitions(markers: &Markers) -> Vec<(Probe, String)> {
    let lock = "tranche=+0(%di):u16 lock=%di:u64";
    let ret = "ret=$retval:u8";
    vec![
        (Probe::Acquire, format!("LWLockAcquire {lock} mode=%si:u32")),
        (Probe::AcquireRet, format!("LWLockAcquire%return {ret}")),
        (
            Probe::Conditional,
            format!("LWLockConditionalAcquire {lock} mode=%si:u32"),
        ),
        (
            Probe::ConditionalRet,
            format!("LWLockConditionalAcquire%return {ret}"),
        ),
        (
            Probe::AcquireOrWait,
            format!("LWLockAcquireOrWait {lock} mode=%si:u32"),
        ),
        (
            Probe::AcquireOrWaitRet,
            format!("LWLockAcquireOrWait%return {ret}"),
        ),
        (Probe::WaitForVar, format!("LWLockWaitForVar {lock}")),
        (
            Probe::WaitForVarRet,
            format!("LWLockWaitForVar%return {ret}"),
        ),
        (Probe::Release, format!("LWLockRelease {lock}")),
        (Probe::XactStart, format!("{:#x}", markers.start)),
        (Probe::XactCommit, format!("{:#x}", markers.commit)),
        (Probe::XactAbort, format!("{:#x}", markers.abort)),
        (Probe::EndXact, "ProcArrayEndTransaction xid=%si:u32".into()),
        (
            Probe::EndXactRet,
            format!("ProcArrayEndTransaction%return {ret}"),
        ),
        (
            Probe::SetStatus,
            "TransactionIdSetTreeStatus xid=%di:u32 status=%cx:u32".into(),
        ),
        (
            Probe::SetStatusRet,
            format!("TransactionIdSetTreeStatus%return {ret}"),
        ),
    ]
}

/// The binary offsets of the transaction markers (USDT probes of provider `postgresql`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Markers {
    /// `transaction__start`.
    pub start: u64,
    /// `transaction__commit`.
    pub commit: u64,
    /// `transaction__abort`.
    pub abort: u64,
}

/// Reads the markers from `readelf -n BINARY` output.
pub fn parse_markers(notes: &str) -> Result<Markers, String> {
    let mut found = [None; 3];
    let mut provider = "";
    let mut name = "";
    for line in notes.lines() {
        let line = line.trim();
        if let Some(p) = line.strip_prefix("Provider:") {
            provider = p.trim();
        } else if let Some(n) = line.strip_prefix("Name:") {
            name = n.trim();
        } else if let Some(rest) = line.strip_prefix("Location:") {
            let loc = rest.split(',').next().unwrap_or("").trim();
            let loc = u64::from_str_radix(loc.trim_start_matches("0x"), 16)
                .map_err(|_| format!("bad USDT location {loc:?}"))?;
            if provider == "postgresql" {
                let slot = match name {
                    "transaction__start" => 0,
                    "transaction__commit" => 1,
                    "transaction__abort" => 2,
                    _ => continue,
                };
                found[slot] = Some(loc);
            }
        }
    }
    match found {
        [Some(start), Some(commit), Some(abort)] => Ok(Markers {
            start,
            commit,
            abort,
        }),
        _ => Err(
            "the server binary has no postgresql:transaction__start/commit/abort USDT \
                  probes (a build without --enable-dtrace?)"
                .into(),
        ),
    }
}

/// Checks that each marker's address is a file offset too (perf probes a raw address of the
/// binary as an offset into the file) and points at the USDT site's `nop`: its `LOAD` segment
/// maps the file one to one (`p_vaddr == p_offset`, as Debian's link of the server does) and the
/// byte there is `0x90`. A probe anywhere else would patch some other instruction of the running
/// server. `phdrs` is `readelf -lW BINARY`'s output, `bytes` the binary.
pub fn check_markers(markers: &Markers, phdrs: &str, bytes: &[u8]) -> Result<(), String> {
    // LOAD  OFFSET  VIRTADDR  PHYSADDR  FILESIZ  MEMSIZ  FLAGS  ALIGN
    let loads: Vec<(u64, u64, u64)> = phdrs
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.first() != Some(&"LOAD") || f.len() < 6 {
                return None;
            }
            let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok();
            Some((hex(f[1])?, hex(f[2])?, hex(f[4])?))
        })
        .collect();
    for (name, at) in [
        ("transaction__start", markers.start),
        ("transaction__commit", markers.commit),
        ("transaction__abort", markers.abort),
    ] {
        let Some(&(offset, vaddr, _)) = loads
            .iter()
            .find(|&&(_, vaddr, size)| (vaddr..vaddr + size).contains(&at))
        else {
            return Err(format!(
                "the USDT marker {name} at {at:#x} is in no LOAD segment"
            ));
        };
        if offset != vaddr {
            return Err(format!(
                "the USDT marker {name} at {at:#x} is in a segment that does not map the file one \
                 to one (offset {offset:#x}, address {vaddr:#x}): unsupported binary"
            ));
        }
        if bytes.get(at as usize) != Some(&0x90) {
            return Err(format!(
                "the USDT marker {name} at {at:#x} is not a nop in the binary: unsupported binary"
            ));
        }
    }
    Ok(())
}

/// The recording's probe set on the server binary, removed on drop.
#[derive(Debug)]
pub struct ProbeSet {
    /// The name of its perf event group (`lwrec_TAG`: unique per recording).
    pub name: String,
    /// The recording's tag (`PID_SECS`): every event name ends in `_TAG`, because perf refuses
    /// an event name that exists in any perf group (two recordings at once would clash).
    pub tag: String,
    /// The definitions added, as `GROUP:EVENT=DEFINITION`.
    pub defs: Vec<String>,
    log: PathBuf,
}

impl ProbeSet {
    /// Adds every probe of [`definitions`] on `binary` in a new perf group.
    pub fn add(binary: &Path, markers: &Markers, scratch: &Path) -> Result<ProbeSet, Failure> {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let tag = format!("{}_{secs}", std::process::id());
        let name = format!("lwrec_{tag}");
        let defs: Vec<String> = definitions(markers)
            .into_iter()
            .map(|(p, d)| format!("{name}:{}_{tag}={d}", p.event()))
            .collect();
        // The guard first: a failure half-way through still removes what was added.
        let set = ProbeSet {
            name,
            tag,
            defs,
            log: scratch.join("perf-probe.log"),
        };
        let mut cmd = Command::new("perf");
        cmd.args(["probe", "-q", "-x"]).arg(binary);
        for d in &set.defs {
            cmd.args(["-a", d]);
        }
        process::run(&mut cmd, &set.log, "perf probe -a")?;
        Ok(set)
    }
}

impl ProbeSet {
    /// Whether `perf probe -l` still lists the set's group (true if it cannot tell).
    fn listed(&self) -> bool {
        match process::run_cleanup(
            Command::new("perf").args(["probe", "-l"]),
            &self.log.with_file_name("perf-probe-list.log"),
            "perf probe -l",
        ) {
            Ok(f) => f.stdout.contains(&format!("{}:", self.name)),
            Err(_) => true,
        }
    }
}

impl Drop for ProbeSet {
    fn drop(&mut self) {
        // A perf record that was just killed may still hold the events for a moment (the
        // kernel refuses to delete an event in use): retry for up to 10 s. `perf probe -d`
        // also fails where nothing of the set was added (an add that failed): only a set still
        // listed is an error.
        let start = std::time::Instant::now();
        loop {
            let deleted = process::run_cleanup(
                Command::new("perf").args(["probe", "-q", "-d", &format!("{}:*", self.name)]),
                &self.log,
                "perf probe -d",
            );
            let Err(e) = deleted else {
                return;
            };
            if !self.listed() {
                return;
            }
            if start.elapsed() > Duration::from_secs(10) {
                eprintln!(
                    "lwbench pg: removing probe group {} failed ({e:?}); remove it with \
                     `perf probe -d '{}:*'`",
                    self.name, self.name
                );
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// A running `perf record` of `probes`' events in process `pid` and the children it forks from
/// now on (perf's default inheritance): given the postmaster, every backend that connects later,
/// and none of the machine's other processes.
///
/// Dropped without [`Recording::stop`] (an error or an interrupt on the way), it ends perf: a
/// perf that went on running would keep the probe set in use, and the set could not be
/// removed.
#[derive(Debug)]
pub struct Recording {
    child: Option<Child>,
    log: PathBuf,
    /// The perf data file.
    pub data: PathBuf,
    /// Our ends of perf's control and acknowledgement pipes, kept open while perf runs (an end
    /// closed under it reads as a hang-up, after which perf stops).
    _control: Option<(std::fs::File, OwnedFd)>,
}

impl Recording {
    /// Starts recording; returns once perf has written its file header (it is attached).
    pub fn start(probes: &ProbeSet, pid: u32, scratch: &Path) -> Result<Recording, Failure> {
        let data = scratch.join("perf.data");
        let log = scratch.join("perf-record.log");
        // perf's ring buffer is per CPU: 512 MiB in all, at least 16 MiB per CPU.
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let per_cpu_mb = (512 / cpus).max(16).next_power_of_two();
        // perf starts with its events disabled (`-D -1`) and enables them on the command
        // `enable` of its control pipe, acknowledging with `ack` once they are on: the run
        // starts only then, so no transaction of it goes unrecorded (a file header on disk says
        // nothing of whether the events are on yet).
        let (ctl_read, ctl_write) = pipe(0)?;
        let (ack_read, ack_write) = pipe(1)?;
        let child = process::spawn(
            Command::new("perf")
                .args(["record", "-q", "-D", "-1", "--control"])
                .arg(format!(
                    "fd:{},{}",
                    ctl_read.as_raw_fd(),
                    ack_write.as_raw_fd()
                ))
                .args(["-m", &format!("{per_cpu_mb}M"), "-e"])
                .arg(format!("{}:*", probes.name))
                .args(["-p", &pid.to_string(), "-o"])
                .arg(&data),
            &log,
        )?;
        // Its ends are perf's now.
        drop((ctl_read, ack_write));
        let mut ctl = std::fs::File::from(ctl_write);
        std::io::Write::write_all(&mut ctl, b"enable\n")
            .map_err(|e| format!("perf record's control pipe: {e}"))?;
        let ack_fd = ack_read.as_raw_fd();
        let rec = Recording {
            child: Some(child),
            log,
            data,
            _control: Some((ctl, ack_read)),
        };
        let start = std::time::Instant::now();
        let mut ack = Vec::new();
        // perf writes `ack\n` and its string's terminating NUL.
        while !ack.windows(4).any(|w| w == b"ack\n") {
            if process::interrupted() {
                return Err(Failure::Interrupted);
            }
            if start.elapsed() > Duration::from_secs(30) {
                return Err(Failure::Error(
                    "perf record did not enable its events in 30 s".into(),
                ));
            }
            let mut pfd = libc::pollfd {
                fd: ack_fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd on the stack; a 100 ms timeout.
            let n = unsafe { libc::poll(&mut pfd, 1, 100) };
            if n > 0 {
                let mut buf = [0u8; 64];
                // SAFETY: reads into a buffer of ours from a descriptor we own.
                let r = unsafe { libc::read(ack_fd, buf.as_mut_ptr().cast(), 64) };
                if r <= 0 {
                    return Err(Failure::Error(
                        "perf record exited before enabling its events".into(),
                    ));
                }
                ack.extend_from_slice(&buf[..r as usize]);
            }
        }
        Ok(rec)
    }

    /// Stops perf (SIGINT: it flushes and closes its file) and waits for it.
    pub fn stop(mut self) -> Result<PathBuf, Failure> {
        let child = self.child.take().expect("stopped once");
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        let f = process::wait(child, &self.log, Some(Duration::from_secs(120)))?;
        // perf record finishes its file on SIGINT and then dies of the signal it re-raises.
        use std::os::unix::process::ExitStatusExt as _;
        if !f.status.success() && f.status.signal() != Some(libc::SIGINT) {
            return Err(Failure::Error(format!(
                "perf record failed ({}): {}",
                f.status,
                f.stderr.trim()
            )));
        }
        Ok(self.data.clone())
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if let Some(child) = self.child.take() {
            process::end(child, &self.log);
        }
    }
}

/// A pipe `(read end, write end)` for perf's control: both ends close on exec, except the one
/// `for_perf` names (`0` the read end, `1` the write end), which perf inherits.
fn pipe(for_perf: usize) -> Result<(OwnedFd, OwnedFd), Failure> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2(2) writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Failure::Error(format!(
            "pipe: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: clears FD_CLOEXEC on a descriptor pipe2 just returned.
    unsafe { libc::fcntl(fds[for_perf], libc::F_SETFD, 0) };
    // SAFETY: pipe2(2) just returned these two descriptors, owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Events perf lost (the `LOST` counts of `perf report --stats`; the largest one reported).
pub fn lost_events(stats: &str) -> u64 {
    stats
        .lines()
        .filter(|l| l.trim_start().starts_with("LOST"))
        .filter_map(|l| {
            l.split(':')
                .nth(1)?
                .split_whitespace()
                .next()?
                .parse::<u64>()
                .ok()
        })
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_usdt_markers() {
        let notes = "\
  stapsdt              0x00000042	NT_STAPSDT (SystemTap probe descriptors)
    Provider: postgresql
    Name: transaction__start
    Location: 0x00000000001e1f28, Base: 0x0000000000792ea0, Semaphore: 0x0000000000885988
    Arguments: 4@%ebx
  stapsdt              0x00000042	NT_STAPSDT (SystemTap probe descriptors)
    Provider: postgresql
    Name: transaction__commit
    Location: 0x00000000001e4492, Base: 0x0000000000792ea0, Semaphore: 0x0000000000885986
  stapsdt              0x00000042	NT_STAPSDT (SystemTap probe descriptors)
    Provider: postgresql
    Name: transaction__abort
    Location: 0x00000000001e5164, Base: 0x0000000000792ea0, Semaphore: 0x0000000000885984
";
        let m = parse_markers(notes).unwrap();
        assert_eq!((m.start, m.commit, m.abort), (0x1e1f28, 0x1e4492, 0x1e5164));
        assert!(parse_markers("nothing").is_err());
        let defs = definitions(&m);
        assert_eq!(defs.len(), Probe::ALL.len());
        assert!(defs
            .iter()
            .any(|(p, d)| *p == Probe::XactStart && d == "0x1e1f28"));
    }

    #[test]
    fn markers_must_be_nops_in_a_one_to_one_segment() {
        let m = Markers {
            start: 0x10,
            commit: 0x11,
            abort: 0x12,
        };
        let phdrs =
            "  LOAD 0x000000 0x0000000000000000 0x0000000000000000 0x000100 0x000100 R E 0x1000";
        let mut bytes = vec![0u8; 0x100];
        assert!(check_markers(&m, phdrs, &bytes)
            .unwrap_err()
            .contains("not a nop"));
        bytes[0x10..0x13].fill(0x90);
        assert_eq!(check_markers(&m, phdrs, &bytes), Ok(()));
        let shifted = "  LOAD 0x000000 0x0000000000001000 0x0000000000001000 0x000100 0x000100 R E";
        assert!(check_markers(&m, shifted, &bytes)
            .unwrap_err()
            .contains("no LOAD"));
        let moved = "  LOAD 0x000010 0x0000000000000000 0x0000000000000000 0x000100 0x000100 R E";
        assert!(check_markers(&m, moved, &bytes)
            .unwrap_err()
            .contains("one to one"));
    }

    #[test]
    fn counts_lost_events() {
        let stats = "Aggregated stats:\n            LOST events:          2  ( 0.0%)\n\
                     SAMPLE events: 472803\n    LOST_SAMPLES events:        720\n";
        assert_eq!(lost_events(stats), 720);
        assert_eq!(lost_events("Aggregated stats:\n SAMPLE events: 5\n"), 0);
    }
}
