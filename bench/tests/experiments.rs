//! `lwbench --experiment FILE`: every file in bench/experiments/ parses and runs at a tiny scale
//! (one trial, a few milliseconds, the file's fewest clients) and writes `experiment.md` with a
//! row per seed figure; bad files (an unknown lock, profile or field, a missing field, fewer than
//! five trials) exit 2 naming the field. In a normal build the runs are on the real engine; in a
//! `--cfg lwsim` build (`ci/sim.sh`) on the simulator, 8 cores.
//!
//! A file may name a lock that this registry does not have yet: its run is then checked to exit
//! 2 naming that `locks[i].lock`, and a note says the file was not run.

mod common;
use common::{bench, out_dir};
use lwbench::registry::LockKind;
use std::path::{Path, PathBuf};

fn experiments_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments")
}

fn files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(experiments_dir())
        .expect("bench/experiments")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    v
}

/// The engine options of this build's tiny run.
fn engine_args() -> Vec<&'static str> {
    if cfg!(lwsim) {
        vec![
            "--engine",
            "sim",
            "--cores",
            "8",
            "--duration",
            "200us",
            "--warmup",
            "100us",
            "--jobs",
            "2",
        ]
    } else {
        vec!["--engine", "real", "--duration", "5ms", "--warmup", "2ms"]
    }
}

/// The first table's rows of an experiment.md (the seed's figures beside ours).
fn seed_table_rows(md: &str) -> Vec<&str> {
    md.split("## The thread's figures beside ours")
        .nth(1)
        .expect("the side-by-side section")
        .split("\n## ")
        .next()
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| series "))
        .collect()
}

#[test]
fn every_experiment_file_runs_at_a_tiny_scale() {
    let files = files();
    assert!(
        files.len() >= 6,
        "the seeds' files and group clear: {files:?}"
    );
    for path in files {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let file =
            lwbench::experiment::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let missing: Vec<(usize, String)> = file
            .locks
            .iter()
            .enumerate()
            .filter(|(_, l)| LockKind::from_name(&l.lock).is_none())
            .map(|(i, l)| (i, l.lock.clone()))
            .collect();
        let clients = *file.clients.iter().min().unwrap();
        let out = out_dir("exp", &name);
        let threads = clients.to_string();
        let mut args = vec![
            "--experiment",
            path.to_str().unwrap(),
            "--trials",
            "1",
            "--threads",
            &threads,
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(engine_args());
        let o = bench(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        if let Some((i, lock)) = missing.first() {
            assert_eq!(o.status.code(), Some(2), "{name}: {err}");
            assert!(
                err.contains(&format!("locks[{i}].lock")) && err.contains(lock.as_str()),
                "{name}: {err}"
            );
            eprintln!(
                "note: {name} names locks this registry does not have yet ({}): checked that \
                 it exits 2 naming the field; not run",
                missing
                    .iter()
                    .map(|(_, l)| l.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            continue;
        }
        assert!(o.status.success(), "{name}: {}\n{err}", o.status);
        let md = std::fs::read_to_string(out.join("experiment.md"))
            .unwrap_or_else(|e| panic!("{name}: experiment.md: {e}"));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("## The thread's figures beside ours"),
            "{name}: the table is printed"
        );
        for f in ["points.csv", "results.csv", "summary.md", "meta.json"] {
            assert!(out.join(f).exists(), "{name}: {f}");
        }
        // The plot: every series of the thread that has rates (not only gains), dashed, beside
        // ours.
        if let Some(r) = file.seed.iter().find(|r| r.metric != "gain") {
            let svg = std::fs::read_to_string(out.join("experiment.svg"))
                .unwrap_or_else(|e| panic!("{name}: experiment.svg: {e}"));
            assert!(
                svg.contains(&format!("the thread: {}", r.series)),
                "{name}: the plot names the thread's series {:?}",
                r.series
            );
        }
        assert!(md.contains(&file.thread.title), "{name}");
        assert!(md.contains(&file.hardware.description), "{name}");
        if cfg!(lwsim) {
            assert!(md.contains("SIMULATED"), "{name}: {md}");
        } else {
            assert!(md.contains("measured on this machine"), "{name}: {md}");
        }
        let rows = seed_table_rows(&md);
        assert_eq!(
            rows.len(),
            file.seed.len(),
            "{name}: a row per seed row\n{md}"
        );
        for (r, line) in file.seed.iter().zip(&rows) {
            assert!(
                line.contains(&format!("| {} |", r.series)),
                "{name}: {line}"
            );
            let not_run = line.contains("not run");
            assert_eq!(
                not_run,
                r.clients != clients,
                "{name}: only the {clients}-client rows ran: {line}"
            );
        }
    }
}

/// A good file to break: the real engine's tiny run of seed 000.
fn good() -> String {
    std::fs::read_to_string(experiments_dir().join("seed-000-pgbench-select.toml")).unwrap()
}

fn expect_bad(name: &str, text: &str, field: &str) {
    let dir = out_dir("exp", &format!("bad-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    let mut args = vec![
        "--experiment",
        path.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ];
    args.extend(engine_args());
    let o = bench(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{name}: {err}");
    assert!(
        err.contains(&format!("field `{field}`")),
        "{name}: names `{field}`: {err}"
    );
    assert!(!dir.join("points.csv").exists(), "{name}: nothing ran");
}

#[test]
fn bad_files_exit_2_naming_the_field() {
    let g = good();
    let sub = |from: &str, to: &str| {
        assert!(g.contains(from), "{from}");
        g.replacen(from, to, 1)
    };
    expect_bad(
        "unknown-lock",
        &sub("lock = \"atomic\"", "lock = \"foo\""),
        "locks[1].lock",
    );
    expect_bad(
        "unknown-profile",
        &sub(
            "profile = \"xeon-4s-westmere-ex\"",
            "profile = \"nehalem-8s\"",
        ),
        "hardware.profile",
    );
    expect_bad("missing-trials", &sub("trials = 10\n", ""), "trials");
    expect_bad(
        "missing-title",
        &sub("title = \"Re: lazy vxid locks, v1\"\n", ""),
        "thread.title",
    );
    expect_bad(
        "unknown-field",
        &sub("work = 128000", "work = 128000\nthink = 5"),
        "workload.think",
    );
    expect_bad("few-trials", &sub("trials = 10", "trials = 3"), "trials");
    expect_bad(
        "seed-lock",
        &sub(
            "lock = \"classic\"\nclients = 1\n",
            "lock = \"atomic-handoff\"\nclients = 1\n",
        ),
        "seed[0].lock",
    );
    expect_bad("syntax", &sub("trials = 10", "trials = \"ten\""), "trials");
    expect_bad(
        "era-traffic",
        &sub(
            "era_traffic = [\"sinval\", \"freelist\"]",
            "era_traffic = [\"sinval\", \"client\"]",
        ),
        "workload.era_traffic[1]",
    );
    // Seed 000's workloads have no status lookups.
    expect_bad(
        "status-lookups-workload",
        &sub("work = 128000", "work = 128000\nstatus_lookups = 10"),
        "workload.status_lookups",
    );
    let seed004 =
        std::fs::read_to_string(experiments_dir().join("seed-004-clog-group.toml")).unwrap();
    for (i, bad) in ["1000.01", "1.234", "-1", "\"ten\""].iter().enumerate() {
        expect_bad(
            &format!("status-lookups-value-{i}"),
            &seed004.replacen(
                "work = 175000",
                &format!("work = 175000\nstatus_lookups = {bad}"),
                1,
            ),
            "workload.status_lookups",
        );
    }
}

/// Runs experiment file `file` at one client and one trial with `extra` on the command line,
/// into a fresh directory named after `tag`; returns what the run wrote to `meta.json` and
/// `experiment.md`, and removes the directory.
fn run_file_with(file: &str, extra: &[&str], tag: &str) -> (serde_json::Value, String) {
    let path = experiments_dir().join(file);
    let out = out_dir("exp", tag);
    let mut args = vec![
        "--experiment",
        path.to_str().unwrap(),
        "--trials",
        "1",
        "--threads",
        "1",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    args.extend(engine_args());
    let o = bench(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let meta =
        serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).unwrap()).unwrap();
    let md = std::fs::read_to_string(out.join("experiment.md")).unwrap();
    std::fs::remove_dir_all(&out).ok();
    (meta, md)
}

/// Seed 000's file turns 9.1's shared traffic on; `--era-traffic` on the command line replaces
/// it (the with/without arms), and `meta.json` and `experiment.md` say what ran.
#[test]
fn the_command_line_era_traffic_replaces_the_files() {
    for (extra, want) in [
        (&[][..], &["sinval", "freelist"][..]),
        (&["--era-traffic", "freelist"], &["freelist"]),
        (&["--era-traffic", "none"], &[]),
    ] {
        let (meta, md) = run_file_with(
            "seed-000-pgbench-select.toml",
            extra,
            &format!("era-{}", want.join("-")),
        );
        assert_eq!(meta["settings"]["era_traffic"], serde_json::json!(want));
        assert_eq!(
            md.contains(&format!("`--era-traffic {}`", want.join(","))),
            !want.is_empty(),
            "{extra:?}"
        );
    }
}

/// `--status-lookups` on the command line replaces the file's `status_lookups` (seed 004's file
/// has none: the default, 57.62), and `meta.json` and `experiment.md` say what ran.
#[test]
fn the_command_line_status_lookups_replace_the_files() {
    let file = "seed-004-clog-group.toml";
    let text = std::fs::read_to_string(experiments_dir().join(file)).unwrap();
    let dir = out_dir("exp", "status-lookups-file");
    std::fs::create_dir_all(&dir).unwrap();
    let ten = dir.join("seed-004-status-10.toml");
    assert!(text.contains("work = 175000"));
    std::fs::write(
        &ten,
        text.replacen("work = 175000", "work = 175000\nstatus_lookups = 10", 1),
    )
    .unwrap();
    let ten = ten.to_str().unwrap();
    for (f, extra, want) in [
        (file, &[][..], "57.62"),
        (file, &["--status-lookups", "0"], "0"),
        (ten, &[], "10"),
        (ten, &["--status-lookups", "30.5"], "30.50"),
    ] {
        let (meta, md) = run_file_with(f, extra, &format!("status-lookups-{want}"));
        assert_eq!(meta["settings"]["status_lookups"], want, "{f} {extra:?}");
        assert_eq!(
            md.contains(&format!("`--status-lookups {want}`")),
            want != "57.62",
            "{f} {extra:?}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `--idle` on the command line replaces the file's `idle` (none in seed 001's file), and
/// `meta.json` and `experiment.md` say what ran.
#[test]
fn the_command_line_idle_replaces_the_files() {
    for (extra, want) in [(&[][..], 0u64), (&["--idle", "30us"], 30)] {
        let (meta, md) = run_file_with("seed-001-flexlock.toml", extra, &format!("idle-{want}"));
        assert_eq!(meta["settings"]["idle_us"], want);
        assert_eq!(md.contains("`--idle 30us`"), want == 30, "{extra:?}");
    }
}

#[test]
fn the_file_sets_what_runs() {
    // --locks, --workload, --work ... beside --experiment: exit 2 naming the option.
    let path = experiments_dir().join("seed-000-pgbench-select.toml");
    let out = out_dir("exp", "conflict");
    for extra in [
        &["--locks", "atomic"][..],
        &["--work", "5"],
        &["--workload", "clog"],
    ] {
        let mut args = vec![
            "--experiment",
            path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        args.extend(engine_args());
        let o = bench(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(extra[0]), "{extra:?}: {err}");
    }
}
