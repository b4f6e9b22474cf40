//! The recording's uprobes on the server binary, in a probe group of its own, removed when the
//! guard is dropped (on error and on Ctrl-C too; another recording's group is never touched),
//! and `perf record` over the server's processes only.
//!
//! # The probes (PostgreSQL 15 on x86-64)
//! Arguments come from the x86-64 SysV registers (first argument `%di`, second `%si`, fourth
//! `%cx`); `struct LWLock` starts with its `uint16 tranche`, so `+0(%di):u16` is the lock's
//! tranche and `%di` its address. Return probes record the return value (`$retval`). The
//! transaction markers are the server's USDT probes `transaction__start`, `transaction__commit`
//! and `transaction__abort` (Debian builds with `--enable-dtrace`), probed at the addresses their
//! `.note.stapsdt` entries give, in our group (perf's own `sdt_postgresql` group is shared by
//! every user of the binary).

use super::process::{self, Failure};
use super::trace::Probe;
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

/// A probe group on the server binary, removed on drop.
#[derive(Debug)]
pub struct ProbeGroup {
    /// The group's name (`lwrec_TAG`: unique per recording).
    pub name: String,
    /// The recording's tag (`PID_SECS`): every event name ends in `_TAG`, because perf refuses
    /// an event name that exists in any group (two recordings at once would clash).
    pub tag: String,
    /// The definitions added, as `GROUP:EVENT=DEFINITION`.
    pub defs: Vec<String>,
    log: PathBuf,
}

impl ProbeGroup {
    /// Adds every probe of [`definitions`] on `binary` in a new group.
    pub fn add(binary: &Path, markers: &Markers, scratch: &Path) -> Result<ProbeGroup, Failure> {
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
        let group = ProbeGroup {
            name,
            tag,
            defs,
            log: scratch.join("perf-probe.log"),
        };
        let mut cmd = Command::new("perf");
        cmd.args(["probe", "-q", "-x"]).arg(binary);
        for d in &group.defs {
            cmd.args(["-a", d]);
        }
        process::run(&mut cmd, &group.log, "perf probe -a")?;
        Ok(group)
    }
}

impl ProbeGroup {
    /// Whether `perf probe -l` still lists the group (true if it cannot tell).
    fn listed(&self) -> bool {
        Command::new("perf")
            .args(["probe", "-l"])
            .output()
            .map_or(true, |o| {
                String::from_utf8_lossy(&o.stdout).contains(&format!("{}:", self.name))
            })
    }
}

impl Drop for ProbeGroup {
    fn drop(&mut self) {
        // A perf record that was just killed may still hold the events for a moment (the
        // kernel refuses to delete an event in use): retry for up to 10 s. `perf probe -d`
        // also fails where nothing of the group was added (an add that failed): only a group
        // still listed is an error.
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

/// A running `perf record` of `group`'s events in process `pid` and the children it forks from
/// now on (perf's default inheritance): given the postmaster, every backend that connects later,
/// and none of the machine's other processes.
///
/// Dropped without [`Recording::stop`] (an error or an interrupt on the way), it ends perf: a
/// perf that went on running would keep the probe group in use, and the group could not be
/// removed.
#[derive(Debug)]
pub struct Recording {
    child: Option<Child>,
    log: PathBuf,
    /// The perf data file.
    pub data: PathBuf,
}

impl Recording {
    /// Starts recording; returns once perf has written its file header (it is attached).
    pub fn start(group: &ProbeGroup, pid: u32, scratch: &Path) -> Result<Recording, Failure> {
        let data = scratch.join("perf.data");
        let log = scratch.join("perf-record.log");
        let child = process::spawn(
            Command::new("perf")
                .args(["record", "-q", "-m", "256M", "-e"])
                .arg(format!("{}:*", group.name))
                .args(["-p", &pid.to_string(), "-o"])
                .arg(&data),
            &log,
        )?;
        let rec = Recording {
            child: Some(child),
            log,
            data,
        };
        let start = std::time::Instant::now();
        while std::fs::metadata(&rec.data).map_or(0, |m| m.len()) == 0 {
            if process::interrupted() {
                return Err(Failure::Interrupted);
            }
            if start.elapsed() > Duration::from_secs(20) {
                return Err(Failure::Error("perf record did not start in 20 s".into()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(200));
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
    fn counts_lost_events() {
        let stats = "Aggregated stats:\n            LOST events:          2  ( 0.0%)\n\
                     SAMPLE events: 472803\n    LOST_SAMPLES events:        720\n";
        assert_eq!(lost_events(stats), 720);
        assert_eq!(lost_events("Aggregated stats:\n SAMPLE events: 5\n"), 0);
    }
}
