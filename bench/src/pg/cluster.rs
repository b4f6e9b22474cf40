//! The PostgreSQL server a recording runs against: a throwaway cluster in a temp dir (initdb,
//! started on a private Unix socket with no TCP listener, stopped and removed when the guard is
//! dropped, on error and on Ctrl-C too), or an existing server given by socket directory, port
//! and data directory, which the recording touches only as pgbench does.

use super::process::{self, Failure};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A server and how to reach it.
#[derive(Debug)]
pub struct Cluster {
    /// The server's binaries (`postgres`, `initdb`, `pg_ctl`, `pgbench`, `psql`).
    pub bin: PathBuf,
    /// Its data directory.
    pub data: PathBuf,
    /// The directory of its Unix socket (`-h`).
    pub host: String,
    /// Its port.
    pub port: u16,
    /// The recording's own scratch directory (logs, perf data): removed on drop.
    pub scratch: PathBuf,
    /// Whether this recording started the server (then it stops it and removes its data).
    owned: bool,
    started: bool,
}

/// Settings of a throwaway cluster.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `shared_buffers`.
    pub shared_buffers: String,
    /// `synchronous_commit`.
    pub synchronous_commit: String,
}

impl Cluster {
    /// Starts a throwaway cluster: `initdb` as the `postgres` user in a new temp dir, then the
    /// server on a socket in that dir, `listen_addresses = ''` (no TCP), autovacuum off (its
    /// workers would add transactions of their own to the trace).
    pub fn start(bin: &Path, settings: &Settings) -> Result<Cluster, Failure> {
        let scratch = scratch_dir()?;
        let mut c = Cluster {
            bin: bin.to_path_buf(),
            data: scratch.join("data"),
            host: scratch.join("sock").display().to_string(),
            port: 5432,
            scratch,
            owned: true,
            started: false,
        };
        std::fs::create_dir_all(&c.host)
            .map_err(|e| format!("cannot create the socket dir: {e}"))?;
        process::run(
            Command::new("chown")
                .args(["-R", "postgres:"])
                .arg(&c.scratch),
            &c.log("chown"),
            "chown of the scratch dir to the postgres user",
        )?;
        process::run(
            as_postgres(&c.bin.join("initdb"))
                .args(["-A", "trust", "-U", "postgres", "--no-sync", "-D"])
                .arg(&c.data),
            &c.log("initdb"),
            "initdb",
        )?;
        let opts = format!(
            "-p {} -k {} -c listen_addresses='' -c shared_buffers={} -c synchronous_commit={} \
             -c autovacuum=off -c max_connections=100",
            c.port, c.host, settings.shared_buffers, settings.synchronous_commit
        );
        // From here on the drop stops a server that may have started, whatever `pg_ctl start`
        // reports (an interrupt or its timeout can leave the postmaster running: it is in a
        // session of its own, out of pg_ctl's process group).
        c.started = true;
        process::run(
            as_postgres(&c.bin.join("pg_ctl"))
                .args(["-w", "-t", "60", "-D"])
                .arg(&c.data)
                .arg("-l")
                .arg(c.scratch.join("server.log"))
                .args(["-o", &opts, "start"]),
            &c.log("pg_ctl-start"),
            "pg_ctl start",
        )?;
        Ok(c)
    }

    /// An existing server: its data directory (for `postmaster.pid`), socket directory and port.
    /// Nothing is started, stopped or removed.
    pub fn existing(bin: &Path, data: &Path, host: &str, port: u16) -> Result<Cluster, Failure> {
        let c = Cluster {
            bin: bin.to_path_buf(),
            data: data.to_path_buf(),
            host: host.to_string(),
            port,
            scratch: scratch_dir()?,
            owned: false,
            started: false,
        };
        c.postmaster_pid()?;
        Ok(c)
    }

    /// The postmaster's pid (the first line of `postmaster.pid`), checked to be running.
    pub fn postmaster_pid(&self) -> Result<u32, Failure> {
        let path = self.data.join("postmaster.pid");
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "the server is not running: cannot read {}: {e}",
                path.display()
            )
        })?;
        let pid: u32 = text
            .lines()
            .next()
            .and_then(|l| l.trim().parse().ok())
            .ok_or_else(|| format!("{}: no pid on its first line", path.display()))?;
        if !Path::new(&format!("/proc/{pid}")).exists() {
            return Err(Failure::Error(format!(
                "the server is not running: postmaster {pid} of {} is gone",
                path.display()
            )));
        }
        Ok(pid)
    }

    /// A path for a child's logs in the scratch dir.
    pub fn log(&self, name: &str) -> PathBuf {
        self.scratch.join(format!("{name}.log"))
    }

    /// `psql` running `sql` on database `postgres` (as the `postgres` role, over the socket),
    /// returning its unaligned output.
    pub fn sql(&self, sql: &str) -> Result<String, Failure> {
        let f = process::run(
            Command::new(self.bin.join("psql"))
                .args(["-X", "-At", "-v", "ON_ERROR_STOP=1", "-U", "postgres", "-h"])
                .arg(&self.host)
                .args(["-p", &self.port.to_string(), "-d", "postgres", "-c", sql]),
            &self.log("psql"),
            &format!("psql -c {sql:?}"),
        )?;
        Ok(f.stdout.trim().to_string())
    }

    /// `pgbench` with `args`, as the `postgres` role over the socket.
    pub fn pgbench(&self) -> Command {
        let mut c = Command::new(self.bin.join("pgbench"));
        c.args(["-U", "postgres", "-h"])
            .arg(&self.host)
            .args(["-p", &self.port.to_string()]);
        c
    }
}

impl Cluster {
    /// Stops a server this recording started: `pg_ctl stop -m fast`, then `-m immediate`, then
    /// SIGKILL to the postmaster of `postmaster.pid`, each only while that file remains.
    fn stop(&self) {
        let pidfile = self.data.join("postmaster.pid");
        for mode in ["fast", "immediate"] {
            if !pidfile.exists() {
                return;
            }
            let stop = process::run_cleanup(
                as_postgres(&self.bin.join("pg_ctl"))
                    .args(["-w", "-t", "30", "-m", mode, "-D"])
                    .arg(&self.data)
                    .arg("stop"),
                &self.log("pg_ctl-stop"),
                "pg_ctl stop",
            );
            if let Err(e) = stop {
                eprintln!("lwbench pg: pg_ctl stop -m {mode} of the throwaway server: {e:?}");
            }
        }
        if let Ok(pid) = self.postmaster_pid() {
            eprintln!("lwbench pg: killing the throwaway server's postmaster {pid}");
            // SAFETY: kill(2) of the postmaster this recording started.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.owned && self.started {
            self.stop();
        }
        if let Err(e) = std::fs::remove_dir_all(&self.scratch) {
            eprintln!("lwbench pg: removing {}: {e}", self.scratch.display());
        }
    }
}

/// `runuser -u postgres -- BIN`: the server's tools refuse to run as root.
fn as_postgres(bin: &Path) -> Command {
    let mut c = Command::new("runuser");
    c.args(["-u", "postgres", "--"]).arg(bin);
    c
}

/// A new private scratch directory under the system temp dir.
fn scratch_dir() -> Result<PathBuf, Failure> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!("lwbench-pg-{}-{nanos}", std::process::id()));
    std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}
