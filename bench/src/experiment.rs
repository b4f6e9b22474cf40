//! `lwbench --experiment FILE`: a seed thread's experiment as data.
//!
//! An experiment file (TOML, `bench/experiments/*.toml`) names the thread, its hardware and the
//! lwsim profile standing for it, the clients, the transaction shape and its work, the trials, the
//! locks compared (each with the PostgreSQL version it stands for) and the thread's own figures.
//! [`load`] parses and checks it (every error names its field); `args::apply_experiment` turns it
//! into the arguments of an ordinary sweep, so the usual files are written; [`write_table`] then writes
//! `experiment.md`: the seed's figures beside ours. The schema is in the guide, "Experiments".

use lwharness::era_traffic::EraTraffic;
use lwharness::parse::parse_duration;
use lwharness::registry::LockKind;
use lwharness::snapshot::{Layout, Strategy};
use lwharness::workload::Workload;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The fewest trials an experiment file may ask for (a median needs them; `--trials` may ask for
/// fewer on the command line, for a quick look or a test, and the table says so).
pub const MIN_TRIALS: u32 = 5;

/// The seed figures' metrics.
pub const METRICS: &[&str] = &["tps", "runtime_s", "gain"];

/// An experiment file, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    /// The thread the experiment comes from.
    pub thread: Thread,
    /// The thread's machine and the profile standing for it.
    pub hardware: Hardware,
    /// What one transaction is.
    pub workload: WorkloadSpec,
    /// Client counts (lwbench's `--threads`).
    pub clients: Vec<usize>,
    /// Trials per point (≥ [`MIN_TRIALS`]).
    pub trials: u32,
    /// Trial lengths on the simulator.
    pub sim: Option<Lengths>,
    /// Trial lengths on the real engine.
    pub real: Option<Lengths>,
    /// The locks compared.
    pub locks: Vec<LockSpec>,
    /// The thread's own figures.
    pub seed: Vec<SeedRow>,
}

/// `[thread]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Thread {
    /// Its subject line.
    pub title: String,
    /// Who posted the figures.
    pub author: String,
    /// The seed's number (`000`…), as the seeds are numbered.
    pub seed: String,
    /// The date of the message with the figures, as given in the thread.
    pub date: Option<String>,
    /// A link or message id, where the seed gives one.
    pub url: Option<String>,
}

/// `[hardware]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hardware {
    /// The thread's machine, as the thread describes it.
    pub description: String,
    /// The lwsim profile standing for it (`--platform`).
    pub profile: String,
    /// Hardware threads of the profile in use (`--cores`); default: all.
    pub cores: Option<usize>,
}

/// `[workload]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// lwbench workloads (`--workload`).
    pub names: Vec<String>,
    /// The transaction as the thread ran it, and how the workload stands for it.
    pub shape: String,
    /// Work per transaction outside the locks (`--work`, xorshift steps, about 1 ns each).
    #[serde(default)]
    pub work: u32,
    /// `--write-pct`.
    #[serde(default)]
    pub write_pct: u8,
    /// `--procs`.
    pub procs: Option<usize>,
    /// `--layout` (default: dense).
    pub layout: Option<Vec<String>>,
    /// `--snapshot` (default: scan).
    pub snapshot: Option<Vec<String>>,
    /// `--era-traffic` (default: none): 9.1's shared traffic added to the `select-*` shapes;
    /// `--era-traffic` on the command line replaces it.
    pub era_traffic: Option<Vec<String>>,
    /// `--idle` (default: 0us): the round trip to the client after each transaction, off the
    /// CPU (e.g. `"28us"`); `--idle` on the command line replaces it.
    pub idle: Option<String>,
    /// `--status-lookups` (default: 57.62): `pgbench-write-status`'s `TransactionIdGetStatus`
    /// lookups per transaction, a number with at most two decimal places (`10`, `57.62`);
    /// `--status-lookups` on the command line replaces it. Only with `pgbench-write-status`.
    pub status_lookups: Option<toml::Value>,
    /// `--wal-hold` (default: `lwharness::workload::DEFAULT_WAL_HOLD`): a pgbench write shape's
    /// busy work inside the WAL insertion lock per record, in `--work`'s steps, an integer 0 to
    /// 1000000; `--wal-hold` on the command line replaces it. Only with `pgbench-n`,
    /// `pgbench-write` and `pgbench-write-status`.
    pub wal_hold: Option<toml::Value>,
}

/// `[sim]` and `[real]`: trial lengths on one engine.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lengths {
    /// `--duration`.
    pub duration: String,
    /// `--warmup`.
    pub warmup: Option<String>,
}

/// `[[locks]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockSpec {
    /// An lwbench lock (`--locks`).
    pub lock: String,
    /// The PostgreSQL version (or patch) it stands for.
    pub label: String,
}

/// `[[seed]]`: one of the thread's figures.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedRow {
    /// The thread's name for the series (`unpatched`, `m`, `Head`…).
    pub series: String,
    /// The lock of ours it is compared with (one of `[[locks]]`).
    pub lock: String,
    /// Clients.
    pub clients: usize,
    /// `tps` (transactions per second, as ours), `runtime_s` (seconds for a fixed job per
    /// client: a rate of clients / runtime) or `gain` (the series' TPS over `base`'s, where the
    /// thread gives only the ratio).
    pub metric: String,
    /// For `gain`: the lock of the baseline (one of `[[locks]]`).
    pub base: Option<String>,
    /// The figure.
    pub value: f64,
    /// The workload of ours it is compared with (required when `[workload]` names several).
    pub workload: Option<String>,
    /// The layout (required when `[workload]` lists several).
    pub layout: Option<String>,
    /// The snapshot strategy (required when `[workload]` lists several).
    pub snapshot: Option<String>,
}

/// A checked experiment.
#[derive(Debug)]
pub struct Experiment {
    /// The file it was read from.
    pub path: PathBuf,
    /// Its contents.
    pub file: File,
    /// `workload.names`, resolved.
    pub workloads: Vec<Workload>,
    /// `locks[].lock`, resolved.
    pub locks: Vec<LockKind>,
    /// `workload.layout`, resolved.
    pub layouts: Vec<Layout>,
    /// `workload.snapshot`, resolved.
    pub strategies: Vec<Strategy>,
    /// `workload.era_traffic`, resolved.
    pub era_traffic: EraTraffic,
    /// `workload.idle`, resolved (zero when not given).
    pub idle: std::time::Duration,
    /// `workload.status_lookups` per hundred transactions, resolved (`None` when not given).
    pub status_lookups: Option<u32>,
    /// `workload.wal_hold`, resolved (`None` when not given).
    pub wal_hold: Option<u32>,
    /// The profile's description and hardware threads.
    pub profile_description: String,
    /// The profile's hardware threads.
    pub profile_threads: usize,
}

/// An error in a file: the field (a path such as `locks[1].lock`) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field's path; empty for an error in the file's syntax.
    pub field: String,
    /// What is wrong.
    pub msg: String,
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}", self.msg)
        } else {
            write!(f, "field `{}`: {}", self.field, self.msg)
        }
    }
}

fn err<T>(field: impl Into<String>, msg: impl Into<String>) -> Result<T, FieldError> {
    Err(FieldError {
        field: field.into(),
        msg: msg.into(),
    })
}

/// Parses an experiment file's text, without checking names (see [`check`]).
pub fn parse(text: &str) -> Result<File, FieldError> {
    let de = toml::Deserializer::new(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        // toml's message carries the line and a caret; the field is the last line's subject.
        let inner = e.into_inner();
        let msg = inner.message().to_string();
        let line = inner
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        let at = line.map_or(String::new(), |l| format!(" (line {l})"));
        // A missing field is reported at its table: name it with the table's path.
        if let Some(name) = msg
            .strip_prefix("missing field `")
            .and_then(|m| m.strip_suffix('`'))
        {
            // At the top level toml's span is the whole file: no line to give.
            let (field, at) = if path.is_empty() {
                (name.to_string(), String::new())
            } else {
                (format!("{path}.{name}"), at)
            };
            return FieldError {
                field,
                msg: format!("missing{at}"),
            };
        }
        if let Some(rest) = msg.strip_prefix("unknown field `") {
            let (name, expected) = rest.split_once('`').unwrap_or((rest, ""));
            // The path already ends with the unknown field.
            let field = if path.is_empty() {
                name.to_string()
            } else {
                path
            };
            return FieldError {
                field,
                msg: format!("unknown field{at}{}", expected.trim_start_matches(',')),
            };
        }
        FieldError {
            field: path,
            msg: format!("{}{at}", msg.trim()),
        }
    })
}

/// Checks a parsed file: every name against lwbench's registries and the profiles, the numbers'
/// ranges, and that every seed row names a lock, clients and workload of the experiment.
pub fn check(path: &Path, file: File) -> Result<Experiment, FieldError> {
    let t = &file.thread;
    for (f, v) in [
        ("thread.title", &t.title),
        ("thread.author", &t.author),
        ("thread.seed", &t.seed),
        ("hardware.description", &file.hardware.description),
        ("workload.shape", &file.workload.shape),
    ] {
        if v.trim().is_empty() {
            return err(f, "empty");
        }
    }
    let profile = lwsim::Profile::load(&file.hardware.profile).map_err(|e| FieldError {
        field: "hardware.profile".into(),
        msg: format!(
            "unknown profile \"{}\": {e}",
            file.hardware.profile.escape_debug()
        ),
    })?;
    let hw = profile.hw_threads();
    if let Some(c) = file.hardware.cores {
        if c == 0 || c > hw {
            return err(
                "hardware.cores",
                format!(
                    "{c}: profile {} has 1 to {hw} hardware threads",
                    profile.name
                ),
            );
        }
    }
    let w = &file.workload;
    if w.names.is_empty() {
        return err("workload.names", "empty: name at least one workload");
    }
    let mut workloads = Vec::new();
    for (i, n) in w.names.iter().enumerate() {
        // A trace's file is relative to the experiment file's directory.
        let resolved = match n.strip_prefix("trace:") {
            Some(f) if !Path::new(f).is_absolute() => {
                let dir = path.parent().unwrap_or(Path::new("."));
                format!("trace:{}", dir.join(f).display())
            }
            _ => n.clone(),
        };
        let x = match Workload::parse(&resolved) {
            Ok(x) => x,
            Err(e) => return err(format!("workload.names[{i}]"), e),
        };
        if workloads.contains(&x) {
            return err(format!("workload.names[{i}]"), format!("\"{n}\" twice"));
        }
        workloads.push(x);
    }
    if w.write_pct > 100 {
        return err("workload.write_pct", format!("{}: 0 to 100", w.write_pct));
    }
    if w.procs == Some(0) {
        return err("workload.procs", "0: at least 1");
    }
    let mut layouts = Vec::new();
    for (i, n) in w.layout.iter().flatten().enumerate() {
        let x = Layout::from_name(n).ok_or_else(|| FieldError {
            field: format!("workload.layout[{i}]"),
            msg: format!("unknown layout \"{n}\" (valid: padded, pgxact, dense)"),
        })?;
        layouts.push(x);
    }
    let mut strategies = Vec::new();
    for (i, n) in w.snapshot.iter().flatten().enumerate() {
        let x = Strategy::from_name(n).ok_or_else(|| FieldError {
            field: format!("workload.snapshot[{i}]"),
            msg: format!(
                "unknown snapshot strategy \"{n}\" (valid: scan, reuse, optimistic, shared)"
            ),
        })?;
        strategies.push(x);
    }
    let mut era_traffic = EraTraffic::NONE;
    for (i, n) in w.era_traffic.iter().flatten().enumerate() {
        let x = EraTraffic::parse_one(n).map_err(|e| FieldError {
            field: format!("workload.era_traffic[{i}]"),
            msg: e,
        })?;
        era_traffic = era_traffic.with(x);
    }
    let idle = match &w.idle {
        Some(v) => lwharness::parse::parse_idle(v).map_err(|e| FieldError {
            field: "workload.idle".into(),
            msg: e,
        })?,
        None => std::time::Duration::ZERO,
    };
    let status_lookups = match &w.status_lookups {
        Some(v) => {
            let text = match v {
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Float(f) => f.to_string(),
                other => format!("a {}", other.type_str()),
            };
            let x = lwharness::parse::parse_status_lookups(&text).map_err(|e| FieldError {
                field: "workload.status_lookups".into(),
                msg: e,
            })?;
            if let Some(o) = workloads
                .iter()
                .find(|&&o| o != Workload::PgbenchWriteStatus)
            {
                return err(
                    "workload.status_lookups",
                    format!(
                        "workload {} has no status lookups: status_lookups applies to \
                         pgbench-write-status only",
                        o.name()
                    ),
                );
            }
            Some(x)
        }
        None => None,
    };
    let wal_hold = match &w.wal_hold {
        Some(v) => {
            let x = match v {
                toml::Value::Integer(i) if (0..=MAX_WAL_HOLD as i64).contains(i) => *i as u32,
                other => {
                    let got = match other {
                        toml::Value::Integer(i) => i.to_string(),
                        o => format!("a {}", o.type_str()),
                    };
                    return err(
                        "workload.wal_hold",
                        format!(
                            "{got}: give an integer from 0 to {MAX_WAL_HOLD} (busy-work steps)"
                        ),
                    );
                }
            };
            if let Some(o) = workloads.iter().find(|&&o| !o.writes_wal()) {
                return err(
                    "workload.wal_hold",
                    format!(
                        "workload {} has no WAL records: wal_hold applies to pgbench-n, \
                         pgbench-write and pgbench-write-status only",
                        o.name()
                    ),
                );
            }
            Some(x)
        }
        None => None,
    };
    if file.clients.is_empty() {
        return err("clients", "empty: give at least one client count");
    }
    if let Some(i) = file.clients.iter().position(|&c| c == 0) {
        return err(format!("clients[{i}]"), "0: at least 1");
    }
    if file.trials < MIN_TRIALS {
        return err(
            "trials",
            format!(
                "{}: an experiment runs at least {MIN_TRIALS} trials per point (a median and its \
                 spread); `--trials N` on the command line overrides it for a quick run",
                file.trials
            ),
        );
    }
    for (name, l) in [("sim", &file.sim), ("real", &file.real)] {
        if let Some(l) = l {
            parse_duration(&l.duration).map_err(|e| FieldError {
                field: format!("{name}.duration"),
                msg: e,
            })?;
            if let Some(wu) = &l.warmup {
                parse_duration(wu).map_err(|e| FieldError {
                    field: format!("{name}.warmup"),
                    msg: e,
                })?;
            }
        }
    }
    if file.locks.is_empty() {
        return err("locks", "empty: give at least one [[locks]]");
    }
    let mut locks = Vec::new();
    for (i, l) in file.locks.iter().enumerate() {
        let k = LockKind::from_name(&l.lock).ok_or_else(|| FieldError {
            field: format!("locks[{i}].lock"),
            msg: format!(
                "unknown lock \"{}\" (valid: {})",
                l.lock.escape_debug(),
                LockKind::bench_locks()
                    .iter()
                    .map(|k| k.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })?;
        if locks.contains(&k) {
            return err(format!("locks[{i}].lock"), format!("\"{}\" twice", l.lock));
        }
        if l.label.trim().is_empty() {
            return err(format!("locks[{i}].label"), "empty");
        }
        if !workloads
            .iter()
            .any(|w| k.applies_to_workload(w.uses_clog()))
        {
            return err(
                format!("locks[{i}].lock"),
                format!(
                    "{} applies to none of the workloads ({})",
                    l.lock,
                    w.names.join(", ")
                ),
            );
        }
        locks.push(k);
    }
    for (i, r) in file.seed.iter().enumerate() {
        let f = |x: &str| format!("seed[{i}].{x}");
        if r.series.trim().is_empty() {
            return err(f("series"), "empty");
        }
        if !file.locks.iter().any(|l| l.lock == r.lock) {
            return err(
                f("lock"),
                format!(
                    "\"{}\" is not one of the experiment's locks ({})",
                    r.lock,
                    file.locks
                        .iter()
                        .map(|l| l.lock.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
        if !file.clients.contains(&r.clients) {
            return err(f("clients"), format!("{} is not in `clients`", r.clients));
        }
        if !METRICS.contains(&r.metric.as_str()) {
            return err(
                f("metric"),
                format!(
                    "unknown metric \"{}\" (valid: {})",
                    r.metric,
                    METRICS.join(", ")
                ),
            );
        }
        match (&r.base, r.metric == "gain") {
            (None, true) => return err(f("base"), "missing: a `gain` names its baseline lock"),
            (Some(_), false) => {
                return err(
                    f("base"),
                    "only a `gain` has a baseline (metric = \"gain\")",
                )
            }
            (Some(b), true) if b == &r.lock || !file.locks.iter().any(|l| &l.lock == b) => {
                return err(
                    f("base"),
                    format!("\"{b}\": another of the experiment's locks than `lock`"),
                )
            }
            _ => {}
        }
        if !(r.value.is_finite() && r.value > 0.0) {
            return err(f("value"), format!("{}: a positive figure", r.value));
        }
        match &r.workload {
            Some(n) if !w.names.contains(n) => {
                return err(f("workload"), format!("\"{n}\" is not in `workload.names`"))
            }
            None if w.names.len() > 1 => {
                return err(
                    f("workload"),
                    "missing: `workload.names` lists several, name the one it is compared with",
                )
            }
            _ => {}
        }
        for (key, given, listed) in [
            ("layout", &r.layout, &w.layout),
            ("snapshot", &r.snapshot, &w.snapshot),
        ] {
            let listed: &[String] = listed.as_deref().unwrap_or(&[]);
            match given {
                Some(n) if !listed.contains(n) => {
                    return err(f(key), format!("\"{n}\" is not in `workload.{key}`"))
                }
                None if listed.len() > 1 => {
                    return err(
                        f(key),
                        format!(
                            "missing: `workload.{key}` lists several, name the one it is \
                             compared with"
                        ),
                    )
                }
                _ => {}
            }
        }
    }
    Ok(Experiment {
        path: path.to_path_buf(),
        profile_description: profile_description(&profile.name, &file.hardware.profile),
        profile_threads: hw,
        file,
        workloads,
        locks,
        layouts,
        strategies,
        era_traffic,
        idle,
        status_lookups,
        wal_hold,
    })
}

/// The largest `--wal-hold` / `workload.wal_hold` (1 ms of busy work per record).
pub const MAX_WAL_HOLD: u32 = 1_000_000;

/// The profile's description from its file (the built-in ones by name).
fn profile_description(name: &str, arg: &str) -> String {
    let text = lwsim::profile::BUILTIN
        .iter()
        .find(|(n, _)| *n == arg)
        .map(|(_, t)| t.to_string())
        .or_else(|| std::fs::read_to_string(arg).ok());
    text.and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v["description"].as_str().map(String::from))
        .unwrap_or_else(|| name.to_string())
}

/// Reads, parses and checks an experiment file.
pub fn load(path: &Path) -> Result<Experiment, FieldError> {
    let text = std::fs::read_to_string(path).map_err(|e| FieldError {
        field: String::new(),
        msg: format!("cannot read: {e}"),
    })?;
    check(path, parse(&text)?)
}

/// The options an experiment file sets, which the command line may not give beside it.
pub const FILE_OPTIONS: &[&str] = &[
    "workload",
    "locks",
    "work",
    "write_pct",
    "procs",
    "layout",
    "snapshot",
];

/// One point of ours, from `points.csv`.
#[derive(Debug, Clone)]
struct Ours {
    workload: String,
    lock: String,
    layout: String,
    snapshot: String,
    threads: usize,
    trials: usize,
    median: f64,
    min: f64,
    max: f64,
    bimodal: bool,
}

fn read_points(path: &Path) -> Result<Vec<Ours>, String> {
    let mut r = csv::Reader::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let h = r
        .headers()
        .map_err(|e| format!("{}: {e}", path.display()))?
        .clone();
    let col = |n: &str| {
        h.iter()
            .position(|c| c == n)
            .ok_or_else(|| format!("{}: no column {n}", path.display()))
    };
    let c = [
        col("workload")?,
        col("lock")?,
        col("layout")?,
        col("snapshot")?,
        col("threads")?,
        col("trials")?,
        col("median_txn_per_sec")?,
        col("min_txn_per_sec")?,
        col("max_txn_per_sec")?,
        col("bimodal")?,
    ];
    let mut out = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| format!("{}: {e}", path.display()))?;
        let s = |i: usize| rec.get(c[i]).unwrap_or("").to_string();
        let n = |i: usize| s(i).parse::<f64>().unwrap_or(f64::NAN);
        out.push(Ours {
            workload: s(0),
            lock: s(1),
            layout: s(2),
            snapshot: s(3),
            threads: s(4).parse().unwrap_or(0),
            trials: s(5).parse().unwrap_or(0),
            median: n(6),
            min: n(7),
            max: n(8),
            bimodal: s(9) == "true",
        });
    }
    Ok(out)
}

/// A rate with three significant figures and thin thousands separators (`218 688`, `4.57`).
fn fmt_rate(x: f64) -> String {
    if !x.is_finite() {
        return "–".into();
    }
    if x.abs() >= 1000.0 {
        let s = format!("{:.0}", x);
        let mut out = String::new();
        for (i, ch) in s.chars().enumerate() {
            if i > 0 && (s.len() - i) % 3 == 0 && ch.is_ascii_digit() {
                out.push(' ');
            }
            out.push(ch);
        }
        out
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    }
}

fn fmt_ratio(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}")
    } else {
        "–".into()
    }
}

/// The rate a seed figure stands for: TPS as given; for a runtime, clients / runtime (a fixed
/// job per client).
fn seed_rate(r: &SeedRow) -> f64 {
    match r.metric.as_str() {
        "runtime_s" => r.clients as f64 / r.value,
        _ => r.value,
    }
}

/// The point of ours a seed row is compared with.
fn matching<'a>(exp: &Experiment, r: &SeedRow, ours: &'a [Ours]) -> Option<&'a Ours> {
    let w = r
        .workload
        .clone()
        .unwrap_or_else(|| exp.file.workload.names[0].clone());
    ours.iter().find(|p| {
        p.workload == w
            && p.lock == r.lock
            && p.threads == r.clients
            && r.layout.as_ref().map_or(true, |l| *l == p.layout)
            && r.snapshot.as_ref().map_or(true, |s| *s == p.snapshot)
    })
}

/// The table of an experiment's run: its header (the thread, the hardware, the engine: every
/// simulated figure says so), the seed's figures beside ours (rows without a point of ours:
/// "not run"), and every point of ours.
fn table(exp: &Experiment, meta: &serde_json::Value, ours: &[Ours]) -> String {
    let f = &exp.file;
    let t = &f.thread;
    let mut s = format!("# Experiment: {}\n\n", t.title);
    s.push_str(&format!(
        "- **Thread**: \"{}\", {}{}{} (seed {}); file `{}`.\n",
        t.title,
        t.author,
        t.date.as_ref().map_or(String::new(), |d| format!(", {d}")),
        t.url.as_ref().map_or(String::new(), |u| format!(", <{u}>")),
        t.seed,
        exp.path.display()
    ));
    s.push_str(&format!(
        "- **The thread's hardware**: {}.\n",
        f.hardware.description
    ));
    let engine = meta["engine"].as_str().unwrap_or("");
    let trials = meta["settings"]["trials"].as_u64().unwrap_or(0);
    let dur = meta["settings"]["requested_duration_s"]
        .as_f64()
        .map(|d| format!("{:?}", Duration::from_secs_f64(d)))
        .unwrap_or_default();
    let warm = meta["settings"]["requested_warmup_s"]
        .as_f64()
        .map(|d| format!("{:?}", Duration::from_secs_f64(d)))
        .unwrap_or_default();
    if engine == "sim" {
        let sim = &meta["sim"];
        s.push_str(&format!(
            "- **Ours: SIMULATED** (lwsim, `--engine sim`), not measured: profile `{}` ({}), {} of \
             its {} hardware threads; {} trials per point, each a simulation with its own seed \
             (seeds derived from `--seed {}`: {}), {} of virtual time after a {} warm-up inside \
             the trial. Every figure of ours below is virtual time on a modelled machine.\n",
            sim["platform"].as_str().unwrap_or(""),
            exp.profile_description,
            sim["cores"],
            exp.profile_threads,
            trials,
            sim["seed"],
            sim["trial_seeds"]
                .as_array()
                .map(|v| v
                    .iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(", "))
                .unwrap_or_default(),
            dur,
            warm,
        ));
    } else {
        s.push_str(&format!(
            "- **Ours: measured on this machine** (`--engine real`): {}, {} cores — not the \
             thread's hardware (the profile `{}` applies to `--engine sim` only); {} trials per \
             point of {} after a {} warm-up trial.\n",
            meta["cpu_model"].as_str().unwrap_or("unknown CPU"),
            meta["host_cpus"],
            f.hardware.profile,
            trials,
            dur,
            warm,
        ));
    }
    if engine == "sim" && trials < crate::figures::SIM_CLAIM_TRIALS {
        s.push_str(&format!(
            "- **{trials} trials per point: fewer than {}**, so the simulated figures are \
             indicative, not a claim (a simulated claim is a median over at least {} seeds).\n",
            crate::figures::SIM_CLAIM_TRIALS,
            crate::figures::SIM_CLAIM_TRIALS
        ));
    }
    if trials < MIN_TRIALS as u64 {
        s.push_str(&format!(
            "- **Fewer trials than the file's {} (`--trials {trials}`)**: a quick run, not the \
             experiment.\n",
            f.trials
        ));
    }
    s.push_str(&format!(
        "- **Workload**: {} (`--work {}`{}{}{}{}{}{}{}{}). {}\n",
        f.workload.names.join(", "),
        f.workload.work,
        if f.workload.write_pct > 0 {
            format!(", `--write-pct {}`", f.workload.write_pct)
        } else {
            String::new()
        },
        f.workload
            .procs
            .map_or(String::new(), |p| format!(", `--procs {p}`")),
        f.workload
            .layout
            .as_ref()
            .map_or(String::new(), |l| format!(", `--layout {}`", l.join(","))),
        f.workload
            .snapshot
            .as_ref()
            .map_or(String::new(), |l| format!(", `--snapshot {}`", l.join(","))),
        // As run (the command line may replace the file's).
        meta["settings"]["era_traffic"]
            .as_array()
            .filter(|v| !v.is_empty())
            .map_or(String::new(), |v| format!(
                ", `--era-traffic {}`",
                v.iter()
                    .filter_map(|x| x.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            )),
        // As run (the command line may replace the file's).
        meta["settings"]["idle_us"]
            .as_u64()
            .filter(|&v| v > 0)
            .map_or(String::new(), |v| format!(", `--idle {v}us`")),
        // As run (the command line may replace the file's).
        meta["settings"]["status_lookups"]
            .as_str()
            .filter(|&v| v
                != lwharness::parse::status_lookups_text(
                    lwharness::workload::STATUS_READS_PER_100 as u32
                ))
            .map_or(String::new(), |v| format!(", `--status-lookups {v}`")),
        // As run (the command line may replace the file's).
        meta["settings"]["wal_hold"]
            .as_u64()
            .filter(|&v| v != u64::from(lwharness::workload::DEFAULT_WAL_HOLD))
            .map_or(String::new(), |v| format!(", `--wal-hold {v}`")),
        f.workload.shape.trim()
    ));
    s.push_str("- **Locks**:");
    for (i, l) in f.locks.iter().enumerate() {
        s.push_str(&format!(
            "{} `{}` = {}",
            if i == 0 { "" } else { ";" },
            l.lock,
            l.label
        ));
    }
    s.push_str(".\n");
    if let Some(cmd) = meta["command_line"].as_array() {
        let cmd: Vec<&str> = cmd.iter().filter_map(|x| x.as_str()).collect();
        if !cmd.is_empty() {
            let mut cmd = cmd;
            cmd[0] = "lwbench";
            s.push_str(&format!("- **Command**: `{}`\n", cmd.join(" ")));
        }
    }

    s.push_str(&format!(
        "\n## The thread's figures beside ours{}\n\n",
        if engine == "sim" {
            " (ours simulated)"
        } else {
            " (ours measured here)"
        }
    ));
    s.push_str(
        "Ours: the median over the trials of the matching point (lock, clients), min–max over \
         the trials, `*` = bimodal (a trial below half the median). ours ÷ seed only where the \
         units agree (TPS; for a gain, ours is the ratio of the two locks' medians, and their \
         spreads); rel.: each series' rate over its rate at its fewest clients (for a \
         runtime, clients ÷ runtime), the curves' shapes whatever the units.\n\n",
    );
    s.push_str(&format!(
        "| series | clients | seed | seed rel. | ours: lock ({}; labels above) | ours median | ours min–max | ours rel. | ours ÷ seed |\n",
        if engine == "sim" { "simulated" } else { "this machine" }
    ));
    s.push_str("|---|---:|---:|---:|---|---:|---:|---:|---:|\n");
    // The base of each series' rel. column: its row at the fewest clients.
    fn base<'a>(seed: &'a [SeedRow], r: &'a SeedRow) -> &'a SeedRow {
        seed.iter()
            .filter(|x| {
                x.series == r.series
                    && x.lock == r.lock
                    && x.workload == r.workload
                    && x.layout == r.layout
                    && x.snapshot == r.snapshot
                    && x.metric == r.metric
            })
            .min_by_key(|x| x.clients)
            .unwrap_or(r)
    }
    for r in &f.seed {
        let unit = match r.metric.as_str() {
            "runtime_s" => " s",
            "gain" => "×",
            _ => " tps",
        };
        let b = base(&f.seed, r);
        let seed_rel = seed_rate(r) / seed_rate(b);
        let mut lock_col = format!("`{}`", r.lock);
        if let Some(w) = &r.workload {
            lock_col.push_str(&format!(", {w}"));
        }
        for x in [&r.layout, &r.snapshot].into_iter().flatten() {
            lock_col.push_str(&format!(", {x}"));
        }
        let seed_col = format!("{}{unit}", fmt_rate(r.value));
        if let Some(b) = &r.base {
            let base_row = SeedRow {
                lock: b.clone(),
                series: r.series.clone(),
                clients: r.clients,
                metric: r.metric.clone(),
                value: r.value,
                base: None,
                workload: r.workload.clone(),
                layout: r.layout.clone(),
                snapshot: r.snapshot.clone(),
            };
            lock_col.push_str(&format!(" ÷ `{b}`"));
            match (matching(exp, r, ours), matching(exp, &base_row, ours)) {
                (Some(p), Some(q)) => s.push_str(&format!(
                    "| {} | {} | {} | – | {} | {}× | {}–{} ÷ {}–{} | – | {} |\n",
                    r.series,
                    r.clients,
                    seed_col,
                    lock_col,
                    fmt_ratio(p.median / q.median),
                    fmt_rate(p.min),
                    fmt_rate(p.max),
                    fmt_rate(q.min),
                    fmt_rate(q.max),
                    fmt_ratio(p.median / q.median / r.value),
                )),
                _ => s.push_str(&format!(
                    "| {} | {} | {} | – | {} | not run | | | |\n",
                    r.series, r.clients, seed_col, lock_col
                )),
            }
            continue;
        }
        match matching(exp, r, ours) {
            Some(p) => {
                let ours_base = matching(exp, b, ours).map_or(f64::NAN, |q| q.median);
                s.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {}{} | {}–{} | {} | {} |\n",
                    r.series,
                    r.clients,
                    seed_col,
                    fmt_ratio(seed_rel),
                    lock_col,
                    fmt_rate(p.median),
                    if p.bimodal { "*" } else { "" },
                    fmt_rate(p.min),
                    fmt_rate(p.max),
                    fmt_ratio(p.median / ours_base),
                    if r.metric == "tps" {
                        fmt_ratio(p.median / r.value)
                    } else {
                        "(units differ)".into()
                    }
                ));
            }
            None => s.push_str(&format!(
                "| {} | {} | {} | {} | {} | not run | | | |\n",
                r.series,
                r.clients,
                seed_col,
                fmt_ratio(seed_rel),
                lock_col
            )),
        }
    }

    s.push_str(&format!(
        "\n## Every point of ours{}\n\n",
        if engine == "sim" { " (simulated)" } else { "" }
    ));
    s.push_str("| workload | layout, snapshot | lock | clients | median | min–max | trials |\n");
    s.push_str("|---|---|---|---:|---:|---:|---:|\n");
    for p in ours {
        let unit = Workload::from_name(&p.workload).map_or("", |w| crate::figures::unit(w).rate);
        let layout_snapshot = [p.layout.as_str(), p.snapshot.as_str()]
            .into_iter()
            .filter(|x| !x.is_empty())
            .collect::<Vec<_>>()
            .join(", ");
        s.push_str(&format!(
            "| {} | {} | `{}` | {} | {}{} {unit} | {}–{} | {} |\n",
            p.workload,
            layout_snapshot,
            p.lock,
            p.threads,
            fmt_rate(p.median),
            if p.bimodal { "*" } else { "" },
            fmt_rate(p.min),
            fmt_rate(p.max),
            p.trials
        ));
    }
    s
}

/// Writes `experiment.md` in the sweep's output directory (from its `points.csv` and
/// `meta.json`) and returns it.
pub fn write_table(exp: &Experiment, out: &Path) -> Result<String, String> {
    let meta: serde_json::Value = std::fs::read_to_string(out.join("meta.json"))
        .map_err(|e| format!("{}: {e}", out.join("meta.json").display()))
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))?;
    let ours = read_points(&out.join("points.csv"))?;
    let md = table(exp, &meta, &ours);
    std::fs::write(out.join("experiment.md"), &md)
        .map_err(|e| format!("writing {}: {e}", out.join("experiment.md").display()))?;
    plot(exp, &meta, &ours, &out.join("experiment.svg"))?;
    Ok(md)
}

/// `experiment.svg`: each of the thread's series (its `tps` and `runtime_s` rows as rates)
/// dashed, beside the points of ours it is compared with (median, min–max of the trials).
fn plot(
    exp: &Experiment,
    meta: &serde_json::Value,
    ours: &[Ours],
    path: &Path,
) -> Result<(), String> {
    let mut series: Vec<crate::figures::VersusSeries> = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for r in exp.file.seed.iter().filter(|r| r.metric != "gain") {
        if !names.contains(&r.series.as_str()) {
            names.push(&r.series);
        }
    }
    for name in names {
        let rows: Vec<&SeedRow> = exp
            .file
            .seed
            .iter()
            .filter(|r| r.series == name && r.metric != "gain")
            .collect();
        series.push(crate::figures::VersusSeries {
            label: format!("the thread: {name}"),
            points: rows
                .iter()
                .map(|r| {
                    let v = seed_rate(r);
                    (r.clients as f64, v, v, v)
                })
                .collect(),
            published: true,
        });
        let mine: Vec<(f64, f64, f64, f64)> = rows
            .iter()
            .filter_map(|r| matching(exp, r, ours))
            .map(|p| (p.threads as f64, p.median, p.min, p.max))
            .collect();
        if let Some(r) = rows.first() {
            let w = r
                .workload
                .clone()
                .unwrap_or_else(|| exp.file.workload.names[0].clone());
            series.push(crate::figures::VersusSeries {
                label: format!("ours: {w}, {}", r.lock),
                points: mine,
                published: false,
            });
        }
    }
    let engine = meta["engine"].as_str().unwrap_or("real");
    let title = format!(
        "seed {}: the thread's figures (dashed) and ours ({}{})",
        exp.file.thread.seed,
        if engine == "sim" { "SIMULATED on " } else { "" },
        if engine == "sim" {
            meta["sim"]["platform"].as_str().unwrap_or("?").to_string()
        } else {
            "this machine".to_string()
        }
    );
    crate::figures::plot_versus(path, &title, "transactions per second", &series)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
clients = [1, 2]
trials = 5
[thread]
title = "t"
author = "a"
seed = "000"
[hardware]
description = "a box"
profile = "xeon-4s-westmere-ex"
cores = 8
[workload]
names = ["pgbench-select"]
shape = "pgbench -S"
work = 100
[sim]
duration = "1ms"
[[locks]]
lock = "classic"
label = "9.4"
[[seed]]
series = "unpatched"
lock = "classic"
clients = 1
metric = "tps"
value = 7808.1
"#;

    fn check_str(text: &str) -> Result<Experiment, FieldError> {
        check(Path::new("x.toml"), parse(text)?)
    }

    /// A trace in an experiment file is found relative to the file's directory; a missing one
    /// is an error naming the field and the file.
    #[test]
    fn a_trace_workload_is_relative_to_the_experiment_file() {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/x.toml");
        let text = GOOD.replace("\"pgbench-select\"", "\"trace:../traces/pg15-S-c1\"");
        let e = check(&file, parse(&text).unwrap()).unwrap();
        let t = e.workloads[0].trace().expect("a trace workload");
        assert_eq!(t.get().clients(), 1);
        assert!(!e.workloads[0].uses_clog() && e.workloads[0].name().starts_with("trace:"));
        let text = GOOD.replace("\"pgbench-select\"", "\"trace:../traces/none\"");
        let err = check(&file, parse(&text).unwrap()).unwrap_err();
        assert_eq!(err.field, "workload.names[0]");
        assert!(err.msg.contains("traces/none"), "{}", err.msg);
    }

    #[test]
    fn good_file_checks() {
        let e = check_str(GOOD).unwrap();
        assert_eq!(e.workloads, vec![Workload::PgbenchSelect]);
        assert_eq!(e.locks, vec![LockKind::Classic]);
        assert_eq!(e.profile_threads, 80);
    }

    #[test]
    fn wal_hold_resolves_for_pgbench_n() {
        let text = GOOD.replacen(
            "names = [\"pgbench-select\"]",
            "names = [\"pgbench-n\"]\nwal_hold = 500",
            1,
        );
        assert_eq!(check_str(&text).unwrap().wal_hold, Some(500));
        assert_eq!(check_str(GOOD).unwrap().wal_hold, None);
    }

    #[test]
    fn errors_name_their_field() {
        let cases: &[(&str, &str, &str)] = &[
            ("lock = \"classic\"", "lock = \"foo\"", "locks[0].lock"),
            ("xeon-4s-westmere-ex", "nehalem-8s", "hardware.profile"),
            ("trials = 5", "trials = 4", "trials"),
            ("trials = 5", "", "trials"),
            ("title = \"t\"", "", "thread.title"),
            (
                "title = \"t\"",
                "title = \"t\"\ncolour = 1",
                "thread.colour",
            ),
            ("cores = 8", "cores = 81", "hardware.cores"),
            (
                "names = [\"pgbench-select\"]",
                "names = [\"x\"]",
                "workload.names[0]",
            ),
            (
                "names = [\"pgbench-select\"]",
                "names = [\"pgbench-select\"]\nera_traffic = [\"sinval\", \"client\"]",
                "workload.era_traffic[1]",
            ),
            (
                "names = [\"pgbench-select\"]",
                "names = [\"pgbench-select\"]\nidle = \"70ms\"",
                "workload.idle",
            ),
            (
                "names = [\"pgbench-select\"]",
                "names = [\"pgbench-select\"]\nidle = \"1500ns\"",
                "workload.idle",
            ),
            (
                "names = [\"pgbench-select\"]",
                "names = [\"pgbench-n\"]\nwal_hold = -1",
                "workload.wal_hold",
            ),
            (
                "names = [\"pgbench-select\"]",
                "names = [\"pgbench-n\"]\nwal_hold = \"1us\"",
                "workload.wal_hold",
            ),
            (
                "names = [\"pgbench-select\"]",
                "names = [\"pgbench-select\"]\nwal_hold = 500",
                "workload.wal_hold",
            ),
            ("metric = \"tps\"", "metric = \"qps\"", "seed[0].metric"),
            ("clients = 1\n", "clients = 3\n", "seed[0].clients"),
            (
                "duration = \"1ms\"",
                "duration = \"1 fortnight\"",
                "sim.duration",
            ),
        ];
        for (from, to, field) in cases {
            assert!(GOOD.contains(from), "{from}");
            let text = GOOD.replacen(from, to, 1);
            let e = check_str(&text).expect_err(field);
            assert_eq!(e.field, *field, "{from} -> {to}: {e}");
        }
    }

    #[test]
    fn rates_format() {
        assert_eq!(fmt_rate(218687.66), "218 688");
        assert_eq!(fmt_rate(4.567), "4.567");
        assert_eq!(fmt_rate(45.67), "45.7");
        assert_eq!(fmt_rate(1234567.0), "1 234 567");
    }
}
