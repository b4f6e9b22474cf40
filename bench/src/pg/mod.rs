//! `lwbench pg`: a real PostgreSQL in the loop. `lwbench pg record` runs pgbench against a
//! PostgreSQL server (a throwaway cluster it starts, or an existing one) with uprobes on the
//! server's LWLock entry points and transaction markers, and writes the client backends'
//! steady-state LWLock traffic as a trace (`trace.tsv`, format in [`trace`]), its
//! `trace-summary.csv` (attempts per transaction by tranche, mode and entry point) and
//! `meta.json` (server, settings, pgbench command, unprobed and probed TPS, CPU per transaction,
//! events lost). The method and its limits: `docs/guide.md`, "Recording a real PostgreSQL".
//!
//! Exit status: 0 recorded; 2 a bad argument, a missing capability (not root, no `perf`, no
//! tracefs, no server binaries), a server or pgbench failure, an unknown major version or
//! tranche, lost events; 130 interrupted. Whatever happens, the recording's probes are removed
//! and a server it started is stopped and its directory removed.

pub mod cluster;
pub mod probes;
pub mod process;
pub mod trace;
pub mod tranches;

use clap::{Args, Parser, Subcommand};
use cluster::{Cluster, Settings};
use process::Failure;
use serde_json::json;
use std::collections::BTreeSet;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

/// `lwbench pg`: a real PostgreSQL server in the loop.
#[derive(Parser, Debug)]
#[command(name = "lwbench pg")]
pub struct PgCli {
    #[command(subcommand)]
    command: PgCommand,
}

#[derive(Subcommand, Debug)]
enum PgCommand {
    /// Record a PostgreSQL server's LWLock traffic under pgbench.
    Record(RecordArgs),
}

/// The options of `lwbench pg record`.
#[derive(Args, Debug, Clone)]
pub struct RecordArgs {
    /// The transaction: `-S` (select-only), `-N` (simple update), `tpcb` (pgbench's default
    /// TPC-B-like) or a pgbench script file.
    #[arg(long, allow_hyphen_values = true, default_value = "-S")]
    pub pgbench: String,
    /// pgbench client connections (`-c`, with as many threads, `-j`).
    #[arg(long, default_value_t = 1)]
    pub clients: u32,
    /// Length of each pgbench run (unprobed, then probed), in whole seconds (`5s`).
    #[arg(long, default_value = "5s")]
    pub duration: String,
    /// pgbench's query mode: `simple` or `prepared`.
    #[arg(long, default_value = "simple")]
    pub query_mode: String,
    /// The directory for `trace.tsv`, `trace-summary.csv` and `meta.json`.
    #[arg(long)]
    pub out: PathBuf,
    /// Transactions dropped at the start of each client backend's run (its warm-up: caches,
    /// the catalog); the last one is always dropped too.
    #[arg(long, default_value_t = 50)]
    pub skip: usize,
    /// Write at most this many steady-state transactions per client to `trace.tsv` (the first
    /// ones; the summary and the meta count them all). Default: all.
    #[arg(long)]
    pub trace_txns: Option<usize>,
    /// pgbench's scale (`pgbench -i -s`), for a cluster the recording starts.
    #[arg(long, default_value_t = 10)]
    pub scale: u32,
    /// `shared_buffers` of a cluster the recording starts.
    #[arg(long, default_value = "256MB")]
    pub shared_buffers: String,
    /// `synchronous_commit` of a cluster the recording starts (`off`: the trace is CPU-bound,
    /// not bound by this machine's commit latency).
    #[arg(long, default_value = "off")]
    pub synchronous_commit: String,
    /// The server's binaries (default: the newest `/usr/lib/postgresql/N/bin`).
    #[arg(long)]
    pub pg_bin: Option<PathBuf>,
    /// Record an existing server instead (with `--port` and `--socket-dir`): its data directory
    /// (for the postmaster's pid). Its tables must be pgbench's; it is touched only as pgbench
    /// touches it, plus a VACUUM of pgbench's tables and a CHECKPOINT before each run.
    #[arg(long, requires_all = ["port", "socket_dir"])]
    pub pgdata: Option<PathBuf>,
    /// The existing server's port.
    #[arg(long)]
    pub port: Option<u16>,
    /// The existing server's Unix-socket directory.
    #[arg(long)]
    pub socket_dir: Option<String>,
}

/// `lwbench pg ARGS...`: `args` starts with the program name (`lwbench pg`), as
/// [`crate::cli::SUBCOMMANDS`] hands it.
pub fn main_with(args: Vec<std::ffi::OsString>) -> ExitCode {
    let cli = match PgCli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match cli.command {
        PgCommand::Record(a) => {
            process::catch_interrupts();
            match record(&a) {
                Ok(()) => ExitCode::SUCCESS,
                Err(Failure::Interrupted) => {
                    eprintln!("lwbench pg record: interrupted; probes removed, server stopped");
                    ExitCode::from(130)
                }
                Err(Failure::Error(e)) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
    }
}

/// The transaction arguments of pgbench for `--pgbench`.
fn transaction_args(spec: &str) -> Result<Vec<String>, String> {
    Ok(match spec {
        "-S" | "select-only" => vec!["-S".into()],
        "-N" | "simple-update" => vec!["-N".into()],
        "tpcb" | "tpcb-like" => vec!["-b".into(), "tpcb-like".into()],
        file if Path::new(file).is_file() => vec!["-f".into(), file.into()],
        other => {
            return Err(format!(
                "--pgbench: {other:?} is not -S, -N, tpcb or a script file"
            ))
        }
    })
}

/// Checks what a recording needs, naming what is missing.
fn capabilities() -> Result<(), String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(
            "recording needs root (uprobes and the server's postgres user); \
                    missing capability: root"
                .into(),
        );
    }
    if !cfg!(target_arch = "x86_64") {
        return Err("the probes read x86-64 argument registers; missing capability: x86-64".into());
    }
    // In a process group of their own, as every child: a Ctrl-C here is an interrupt, not a
    // missing tool.
    let ok = |prog: &str, arg: &str| {
        Command::new(prog)
            .arg(arg)
            .process_group(0)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !ok("perf", "--version") {
        return Err("missing capability: the perf tool (Debian package linux-perf)".into());
    }
    if !ok("readelf", "--version") {
        return Err("missing capability: readelf (Debian package binutils)".into());
    }
    let tracefs = Path::new("/sys/kernel/tracing/uprobe_events");
    if !tracefs.exists() {
        let _ = Command::new("mount")
            .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
            .process_group(0)
            .output();
        if !tracefs.exists() {
            return Err(
                "missing capability: tracefs with uprobes (/sys/kernel/tracing/\
                        uprobe_events; `mount -t tracefs nodev /sys/kernel/tracing`)"
                    .into(),
            );
        }
    }
    Ok(())
}

/// The newest `/usr/lib/postgresql/N/bin` with a server binary of a supported major version,
/// else the newest of any (whose version is then refused, by name).
fn default_bin() -> Result<PathBuf, String> {
    let mut best: Option<(bool, u32, PathBuf)> = None;
    if let Ok(dir) = std::fs::read_dir("/usr/lib/postgresql") {
        for e in dir.flatten() {
            let Some(n) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            let bin = e.path().join("bin");
            let key = (tranches::supported(n), n);
            if bin.join("postgres").is_file()
                && best.as_ref().map_or(true, |(s, b, _)| key > (*s, *b))
            {
                best = Some((key.0, n, bin));
            }
        }
    }
    let best = best.map(|(_, n, b)| (n, b));
    best.map(|(_, b)| b).ok_or_else(|| {
        "missing capability: a PostgreSQL server (no /usr/lib/postgresql/N/bin/postgres; Debian \
         packages postgresql and postgresql-contrib, or --pg-bin)"
            .into()
    })
}

/// `postgres --version` → (the version line, the major version).
fn server_version(bin: &Path) -> Result<(String, u32), String> {
    let out = Command::new(bin.join("postgres"))
        .arg("--version")
        .output()
        .map_err(|e| {
            format!(
                "--pg-bin: cannot run {}: {e}",
                bin.join("postgres").display()
            )
        })?;
    let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let major = line
        .strip_prefix("postgres (PostgreSQL) ")
        .and_then(|v| v.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|m| m.parse::<u32>().ok())
        .ok_or_else(|| {
            format!(
                "--pg-bin: {} is not a PostgreSQL server ({line:?})",
                bin.display()
            )
        })?;
    Ok((line, major))
}

/// pgbench's `number of transactions actually processed` and `tps = ...`.
fn pgbench_result(stdout: &str) -> Result<(u64, f64), String> {
    let txns = stdout
        .lines()
        .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
        .and_then(|v| v.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok());
    let tps = stdout
        .lines()
        .find_map(|l| l.strip_prefix("tps = "))
        .and_then(|v| v.split_whitespace().next()?.parse().ok());
    match (txns, tps) {
        (Some(n), Some(t)) => Ok((n, t)),
        _ => Err(format!("pgbench printed no result:\n{stdout}")),
    }
}

/// Busy and total jiffies of every CPU (`/proc/stat`'s `cpu` line).
fn cpu_jiffies() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let v: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let total: u64 = v.iter().sum();
    let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
    (total - idle, total)
}

/// The children of process `pid` (`/proc/PID/task/PID/children`).
fn children(pid: u32) -> Result<BTreeSet<u32>, String> {
    let path = format!("/proc/{pid}/task/{pid}/children");
    std::fs::read_to_string(&path)
        .map(|s| {
            s.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect()
        })
        .map_err(|e| format!("cannot read {path}: {e}"))
}

/// The postmaster's children once no client is connected: its background processes. The set
/// must stay the same for a second (a backend of a statement just run may not be reaped yet).
fn background_processes(pm: u32) -> Result<BTreeSet<u32>, Failure> {
    let start = std::time::Instant::now();
    let mut last = children(pm)?;
    let mut since = std::time::Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(50));
        if process::interrupted() {
            return Err(Failure::Interrupted);
        }
        let now = children(pm)?;
        if now != last {
            last = now;
            since = std::time::Instant::now();
        } else if since.elapsed() >= Duration::from_secs(1) {
            return Ok(last);
        }
        if start.elapsed() > Duration::from_secs(30) {
            return Err(Failure::Error(
                "the server's processes did not settle in 30 s".into(),
            ));
        }
    }
}

/// User + system CPU of the children process `pid` has waited for (`cutime` + `cstime` of
/// `/proc/PID/stat`), seconds. For the postmaster: every backend that exited and was reaped.
fn reaped_cpu_s(pid: u32) -> Result<f64, String> {
    let path = format!("/proc/{pid}/stat");
    let stat = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
    // Fields after the command name (which may hold spaces), from field 3 (state) on.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
    // cutime and cstime are fields 16 and 17 (1-based): 13 and 14 after the state field.
    let (Some(u), Some(s)) = (ticks(13), ticks(14)) else {
        return Err(format!("{path}: no cutime/cstime"));
    };
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    Ok((u + s) as f64 / hz)
}

/// Waits until the postmaster has no child but its background processes (every backend that
/// exited has been reaped, so its CPU is counted).
fn await_backends_gone(pm: u32, background: &BTreeSet<u32>) -> Result<(), Failure> {
    let start = std::time::Instant::now();
    while !children(pm)?.is_subset(background) {
        if start.elapsed() > Duration::from_secs(30) {
            return Err(Failure::Error(
                "backends of the server still running 30 s after pgbench ended".into(),
            ));
        }
        if process::interrupted() {
            return Err(Failure::Interrupted);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// One pgbench run and what it cost.
#[derive(Debug)]
struct Run {
    command: String,
    txns: u64,
    tps: f64,
    /// The server's CPU per transaction: its backends' (reaped by the postmaster when they
    /// exited), µs.
    server_cpu_us_per_txn: f64,
    /// Machine-wide busy CPU per transaction (every process on the machine), µs.
    machine_cpu_us_per_txn: f64,
    /// pgbench's own CPU per transaction, µs.
    pgbench_cpu_us_per_txn: f64,
}

/// Before each run: no dead tuples for the selects to prune, no checkpoint in the middle, and
/// every backend of these statements gone (reaped), so that the run's CPU is its own.
fn prepare_run(c: &Cluster, background: &BTreeSet<u32>) -> Result<(), Failure> {
    c.sql("VACUUM pgbench_accounts, pgbench_branches, pgbench_tellers, pgbench_history")?;
    c.sql("CHECKPOINT")?;
    await_backends_gone(c.postmaster_pid()?, background)
}

/// One pgbench run (after [`prepare_run`]).
fn pgbench_run(
    c: &Cluster,
    a: &RecordArgs,
    secs: u64,
    tag: &str,
    background: &BTreeSet<u32>,
) -> Result<Run, Failure> {
    let pm = c.postmaster_pid()?;
    let server0 = reaped_cpu_s(pm)?;
    let mut cmd = c.pgbench();
    let n = a.clients.to_string();
    cmd.args([
        "-n",
        "-M",
        &a.query_mode,
        "-c",
        &n,
        "-j",
        &n,
        "-T",
        &secs.to_string(),
    ])
    .args(transaction_args(&a.pgbench)?)
    .arg("postgres");
    let command = format!(
        "pgbench -n -M {} -c {n} -j {n} -T {secs} {}",
        a.query_mode,
        transaction_args(&a.pgbench)?.join(" ")
    );
    let (busy0, _) = cpu_jiffies();
    let f = process::run_for(
        &mut cmd,
        &c.log(tag),
        "pgbench",
        Duration::from_secs(secs + 120),
    )?;
    let (busy1, _) = cpu_jiffies();
    await_backends_gone(pm, background)?;
    let server1 = reaped_cpu_s(pm)?;
    let (txns, tps) = pgbench_result(&f.stdout)?;
    if txns == 0 {
        return Err(Failure::Error("pgbench processed no transaction".into()));
    }
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let per_txn = |s: f64| s * 1e6 / txns as f64;
    Ok(Run {
        command,
        txns,
        tps,
        server_cpu_us_per_txn: per_txn(server1 - server0),
        machine_cpu_us_per_txn: per_txn((busy1 - busy0) as f64 / hz),
        pgbench_cpu_us_per_txn: per_txn(f.cpu_s),
    })
}

/// `lwbench pg record`.
pub fn record(a: &RecordArgs) -> Result<(), Failure> {
    if a.duration.trim().parse::<f64>().is_ok() {
        return Err(Failure::Error(format!(
            "--duration: {:?} has no unit (whole seconds: 5s)",
            a.duration
        )));
    }
    let dur =
        lwharness::parse::parse_duration(&a.duration).map_err(|e| format!("--duration: {e}"))?;
    if dur < Duration::from_secs(1) || dur.subsec_nanos() != 0 {
        return Err(Failure::Error(format!(
            "--duration: {} is not a whole number of seconds (pgbench -T)",
            a.duration
        )));
    }
    let secs = dur.as_secs();
    if a.clients == 0 || a.clients > 64 {
        return Err(Failure::Error("--clients: 1 to 64".into()));
    }
    if !matches!(a.query_mode.as_str(), "simple" | "prepared") {
        return Err(Failure::Error(format!(
            "--query-mode: {:?} is not simple or prepared",
            a.query_mode
        )));
    }
    transaction_args(&a.pgbench)?;
    capabilities()?;
    let bin = match &a.pg_bin {
        Some(b) => b.clone(),
        None => default_bin()?,
    };
    let (version, major) = server_version(&bin)?;
    if !tranches::supported(major) {
        return Err(Failure::Error(format!(
            "PostgreSQL {major} has no tranche table here (supported: {:?}): {version}",
            tranches::SUPPORTED
        )));
    }
    let notes = Command::new("readelf")
        .arg("-n")
        .arg(bin.join("postgres"))
        .output()
        .map_err(|e| format!("readelf -n: {e}"))?;
    let markers = probes::parse_markers(&String::from_utf8_lossy(&notes.stdout))?;
    let phdrs = Command::new("readelf")
        .arg("-lW")
        .arg(bin.join("postgres"))
        .output()
        .map_err(|e| format!("readelf -lW: {e}"))?;
    let image = std::fs::read(bin.join("postgres"))
        .map_err(|e| format!("reading {}: {e}", bin.join("postgres").display()))?;
    probes::check_markers(&markers, &String::from_utf8_lossy(&phdrs.stdout), &image)?;
    drop(image);
    std::fs::create_dir_all(&a.out)
        .map_err(|e| format!("--out: cannot create {}: {e}", a.out.display()))?;

    // The server: its guard stops and removes it (dropped last).
    let cluster = match (&a.pgdata, a.port, &a.socket_dir) {
        (Some(data), Some(port), Some(host)) => {
            eprintln!(
                "lwbench pg record: recording the existing server of {} (port {port}, socket \
                 {host}): it is touched only as pgbench touches it, plus a VACUUM of pgbench's \
                 tables and a CHECKPOINT before each run",
                data.display()
            );
            Cluster::existing(&bin, data, host, port)?
        }
        _ => {
            let c = Cluster::start(
                &bin,
                &Settings {
                    shared_buffers: a.shared_buffers.clone(),
                    synchronous_commit: a.synchronous_commit.clone(),
                },
            )?;
            let mut init = c.pgbench();
            init.args(["-i", "-q", "-s", &a.scale.to_string(), "postgres"]);
            process::run(&mut init, &c.log("pgbench-init"), "pgbench -i")?;
            c
        }
    };
    let show = |name: &str| cluster.sql(&format!("SHOW {name}"));
    let settings = json!({
        "server_version_num": show("server_version_num")?,
        "shared_buffers": show("shared_buffers")?,
        "synchronous_commit": show("synchronous_commit")?,
        "autovacuum": show("autovacuum")?,
        "max_connections": show("max_connections")?,
        "scale": cluster.sql("SELECT count(*) FROM pgbench_branches")?,
        "query_mode": a.query_mode,
    });

    let postmaster = cluster.postmaster_pid()?;
    let background = background_processes(postmaster)?;
    eprintln!("lwbench pg record: unprobed pgbench run ({secs} s)");
    prepare_run(&cluster, &background)?;
    let unprobed = pgbench_run(&cluster, a, secs, "pgbench-unprobed", &background)?;

    let probe_set = probes::ProbeSet::add(&bin.join("postgres"), &markers, &cluster.scratch)?;
    eprintln!(
        "lwbench pg record: probed pgbench run ({secs} s, probe group {})",
        probe_set.name
    );
    // The vacuum and checkpoint before perf attaches: only pgbench's backends are traced.
    prepare_run(&cluster, &background)?;
    let rec = probes::Recording::start(&probe_set, postmaster, &cluster.scratch)?;
    let probed = pgbench_run(&cluster, a, secs, "pgbench-probed", &background);
    let data = rec.stop()?;
    let probed = probed?;

    let stats = process::run(
        Command::new("perf")
            .args(["report", "--stats", "-i"])
            .arg(&data),
        &cluster.log("perf-report"),
        "perf report --stats",
    )?;
    let lost = probes::lost_events(&stats.stdout);
    if lost > 0 {
        return Err(Failure::Error(format!(
            "perf lost {lost} events: the recording is incomplete (fewer clients or a shorter \
             --duration)"
        )));
    }
    let script = process::run(
        Command::new("perf")
            .args(["script", "-F", "pid,time,event,trace", "--ns", "-i"])
            .arg(&data),
        &cluster.log("perf-script"),
        "perf script",
    )?;
    if script.stderr.contains("out of order") {
        return Err(Failure::Error(format!(
            "perf script reports events out of order (entries and returns could not be paired): {}",
            script.stderr.trim()
        )));
    }
    let mut events = Vec::new();
    for (i, line) in script.stdout.lines().enumerate() {
        match trace::parse_line(line, &probe_set.tag) {
            Ok(Some(e)) => events.push(e),
            Ok(None) => {}
            Err(e) => {
                return Err(Failure::Error(format!(
                    "perf script output line {}: {e}: {line:?}",
                    i + 1
                )))
            }
        }
    }
    let total_events = events.len();
    let mut backends = trace::backends(&events)?;
    // The postmaster forks every backend after the recording began; the client backends are
    // the `clients` with the most transactions (pgbench's set-up connection runs a few).
    backends.retain(|b| b.pid != postmaster);
    let mut ranked: Vec<usize> = (0..backends.len()).collect();
    ranked.sort_by_key(|&i| std::cmp::Reverse(backends[i].txns.len()));
    let mut chosen: Vec<usize> = ranked.iter().take(a.clients as usize).copied().collect();
    chosen.sort(); // connection order
    if chosen.len() < a.clients as usize {
        return Err(Failure::Error(format!(
            "only {} backends were traced for {} clients",
            chosen.len(),
            a.clients
        )));
    }
    let excluded: Vec<_> = (0..backends.len())
        .filter(|i| !chosen.contains(i))
        .map(|i| json!({"pid": backends[i].pid, "transactions": backends[i].txns.len()}))
        .collect();
    let clients: Vec<trace::Backend> = chosen.iter().map(|&i| backends[i].clone()).collect();
    // Every transaction pgbench counted must be in the trace (the client backends' traced
    // transactions also hold their start-up's): fewer means perf missed part of the run.
    let traced: usize = clients.iter().map(|b| b.txns.len()).sum();
    if (traced as u64) < probed.txns {
        return Err(Failure::Error(format!(
            "the trace holds {traced} transactions of the client backends, pgbench processed {}: \
             the recording missed part of the run",
            probed.txns
        )));
    }
    let steady = trace::steady(&clients, a.skip);
    for (i, s) in steady.iter().enumerate() {
        if s.is_empty() {
            return Err(Failure::Error(format!(
                "client {i} has no steady-state transaction ({} traced, --skip {}): a longer \
                 --duration",
                clients[i].txns.len(),
                a.skip
            )));
        }
    }
    let name = |id| tranches::name(major, id);
    let written: Vec<&[Vec<trace::Op>]> = steady
        .iter()
        .map(|s| &s[..a.trace_txns.unwrap_or(usize::MAX).min(s.len())])
        .collect();
    let trace_text = trace::write_trace(&written, name)?;
    let summary = trace::summary(&steady, name)?;
    let steady_txns: usize = steady.iter().map(|s| s.len()).sum();
    let steady_ops: usize = steady.iter().flat_map(|s| s.iter()).map(|t| t.len()).sum();
    let lock_ops = steady
        .iter()
        .flat_map(|s| s.iter())
        .flatten()
        .filter(|o| o.entry.is_lock())
        .count();
    let probe_events_per_txn = total_events as f64 / probed.txns as f64;
    let meta = json!({
        "format": trace::FORMAT,
        "what": "PostgreSQL LWLock trace recorded by lwbench pg record",
        "server": {"version": version, "major": major, "binary": bin.join("postgres")},
        "settings": settings,
        "started_by_recording": a.pgdata.is_none(),
        "pgbench": {
            "transaction": a.pgbench,
            "clients": a.clients,
            "duration_s": secs,
        },
        "machine": machine(),
        "unprobed": run_json(&unprobed),
        "probed": run_json(&probed),
        "cpu_note": "server_cpu_us_per_txn: the CPU of the server's backends during the run \
                     (user + system, as the postmaster reaped them), per transaction; \
                     machine_cpu_us_per_txn: every CPU's busy time over the run (the server, \
                     pgbench, perf and anything else on the machine); pgbench_cpu_us_per_txn: \
                     pgbench's own",
        "probe_cost_ns_per_event_estimate":
            (probed.server_cpu_us_per_txn - unprobed.server_cpu_us_per_txn) * 1e3
                / probe_events_per_txn,
        "events": {"total": total_events, "lost": lost, "per_probed_txn": probe_events_per_txn},
        "probe_group": probe_set.name,
        "probes": probe_set.defs,
        "steady_state": {
            "rule": format!("each client backend's first {} transactions and its last one \
                             dropped; a transaction runs from one xact_start to the next", a.skip),
            "client_backends": clients.iter().zip(&steady).map(|(b, s)| json!({
                "pid": b.pid, "transactions_traced": b.txns.len(), "transactions_kept": s.len()
            })).collect::<Vec<_>>(),
            "transactions": steady_txns,
            "transactions_traced_all_clients": traced,
            "transactions_pgbench_processed": probed.txns,
            "transactions_in_trace_file": written.iter().map(|s| s.len()).sum::<usize>(),
            "operations": steady_ops,
            "lwlock_operations": lock_ops,
        },
        "excluded": {
            "other_backends": excluded,
            "background_processes": "not traced: perf follows the postmaster's children forked \
                                     after it attached (background processes started before)",
            "connection_start_up": "each backend's operations before its first xact_start; the \
                                    transactions of its start-up (InitPostgres) are among the \
                                    first --skip ones",
            "lock_identity": "a lock is its address: one lock across backends in the main shared \
                              memory segment; locks in dynamic shared memory (the PgStats* \
                              tranches) may map at other addresses in other backends",
        },
        "files": {"trace": "trace.tsv", "summary": "trace-summary.csv"},
    });
    if process::interrupted() {
        return Err(Failure::Interrupted);
    }
    let write = |file: &str, text: &str| {
        std::fs::write(a.out.join(file), text)
            .map_err(|e| Failure::Error(format!("writing {}: {e}", a.out.join(file).display())))
    };
    write("trace.tsv", &trace_text)?;
    write("trace-summary.csv", &summary)?;
    write(
        "meta.json",
        &(serde_json::to_string_pretty(&meta).expect("json") + "\n"),
    )?;
    eprintln!(
        "lwbench pg record: {} steady-state transactions of {} client(s), {lock_ops} LWLock \
         operations, 0 events lost; unprobed {:.0} TPS, probed {:.0} TPS; wrote {}",
        steady_txns,
        a.clients,
        unprobed.tps,
        probed.tps,
        a.out.display()
    );
    drop(probe_set);
    drop(cluster);
    Ok(())
}

fn run_json(r: &Run) -> serde_json::Value {
    json!({
        "command": r.command,
        "transactions": r.txns,
        "tps": r.tps,
        "server_cpu_us_per_txn": r.server_cpu_us_per_txn,
        "machine_cpu_us_per_txn": r.machine_cpu_us_per_txn,
        "pgbench_cpu_us_per_txn": r.pgbench_cpu_us_per_txn,
    })
}

/// The machine: CPU model, CPUs, kernel.
fn machine() -> serde_json::Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).to_string());
    json!({
        "cpu_model": model,
        "cpus": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "kernel": std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default().trim(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pgbench_output() {
        let out = "transaction type: <builtin: select only>\n\
                   number of transactions actually processed: 9324\n\
                   tps = 3118.639759 (without initial connection time)\n";
        assert_eq!(pgbench_result(out).unwrap(), (9324, 3118.639759));
        assert!(pgbench_result("nothing").is_err());
    }

    #[test]
    fn names_the_transaction() {
        assert_eq!(transaction_args("-S").unwrap(), ["-S"]);
        assert_eq!(transaction_args("tpcb").unwrap(), ["-b", "tpcb-like"]);
        let e = transaction_args("-X").unwrap_err();
        assert!(e.starts_with("--pgbench"), "{e}");
    }
}
