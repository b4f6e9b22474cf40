//! `--shard K/N` and `lwbench merge`: on the simulator (a `--cfg lwsim` build, `ci/sim.sh`) the
//! merge of N shards writes the files of a single run byte for byte, but for the fields that
//! describe the run, and so does a 4-task Slurm array on a real single-node Slurm; on either
//! engine merge refuses, exit 2 naming the shard, a missing, a duplicate or overlapping, a
//! foreign (plan or commit) and an incomplete shard, and writes nothing; a bad `--shard` exits 2
//! naming it.

mod common;
use common::{bench, out_dir};
use std::path::{Path, PathBuf};
use std::process::Output;

/// A small plan on the build's engine: simulated (two workloads, two locks, two client counts,
/// two seeds, a sensitivity key: 48 trials), or a few milliseconds of the real one.
fn plan_args() -> Vec<&'static str> {
    if cfg!(lwsim) {
        vec![
            "--engine",
            "sim",
            "--cores",
            "8",
            "--workload",
            "end-xact,snapshot",
            "--locks",
            "atomic,classic",
            "--threads",
            "2,8",
            "--trials",
            "2",
            "--duration",
            "100us",
            "--warmup",
            "50us",
            "--sensitivity",
            "futex_wake_ns",
            "--seed",
            "3",
        ]
    } else {
        vec![
            "--workload",
            "end-xact",
            "--locks",
            "atomic,classic",
            "--threads",
            "1,2",
            "--trials",
            "2",
            "--duration",
            "3ms",
            "--warmup",
            "1ms",
            "--sample-interval",
            "off",
        ]
    }
}

fn with(extra: &[&str]) -> Vec<String> {
    plan_args()
        .into_iter()
        .chain(extra.iter().copied())
        .map(String::from)
        .collect()
}

fn run_args(args: &[String]) -> Output {
    let v: Vec<&str> = args.iter().map(String::as_str).collect();
    bench(&v)
}

/// Runs shard `k` of `n` into `base/shard-k`.
fn shard(base: &Path, k: usize, n: usize, extra: &[&str]) -> PathBuf {
    let d = base.join(format!("shard-{k}"));
    let spec = format!("{k}/{n}");
    let mut a = with(extra);
    a.extend([
        "--shard".into(),
        spec,
        "--out".into(),
        d.display().to_string(),
    ]);
    let o = run_args(&a);
    assert!(
        o.status.success(),
        "shard {k}/{n} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(d.join("shard.json").exists() && d.join("trials.jsonl").exists());
    assert!(!d.join("shard-incomplete.json").exists());
    d
}

fn merge(dirs: &[&Path], out: &Path) -> Output {
    let mut a: Vec<String> = vec!["merge".into()];
    a.extend(dirs.iter().map(|d| d.display().to_string()));
    a.extend(["--out".into(), out.display().to_string()]);
    run_args(&a)
}

/// Asserts a refusal: exit 2, nothing written to `out`, and stderr containing each of `want`.
fn refused(o: &Output, out: &Path, want: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "merge did not refuse: {err}");
    for w in want {
        assert!(err.contains(w), "the refusal does not say {w:?}: {err}");
    }
    assert!(!out.exists(), "a refused merge wrote {}", out.display());
}

#[test]
fn bad_shard_values_exit_2_naming_the_argument() {
    for bad in ["4/4", "0/0", "1", "x/2", "-1/2"] {
        let mut a = with(&["--shard", bad]);
        a.extend(["--out".into(), "/nonexistent-never-written".into()]);
        let o = run_args(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert!(err.contains("--shard"), "{bad}: {err}");
    }
}

#[test]
fn help_documents_shard_and_merge() {
    let o = bench(&["--help"]);
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(help.contains("--shard <K/N>"), "{help}");
    assert!(
        help.lines()
            .any(|l| l.trim_start().starts_with("merge ") && l.contains("--out OUT")),
        "--help lists no merge subcommand: {help}"
    );
    let o = bench(&["merge", "--help"]);
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && help.contains("<DIR>..."), "{help}");
}

#[test]
fn merge_refuses_a_missing_shard_and_names_the_k_to_rerun() {
    let base = out_dir("shards", "missing");
    let s0 = shard(&base, 0, 4, &[]);
    let s2 = shard(&base, 2, 4, &[]);
    let out = base.join("merged");
    let o = merge(&[&s0, &s2], &out);
    refused(
        &o,
        &out,
        &[
            "missing shards of 4: K = 1, 3",
            "--shard 1/4",
            "--shard 3/4",
        ],
    );
}

#[test]
fn merge_refuses_a_duplicate_or_overlapping_shard() {
    let base = out_dir("shards", "duplicate");
    let s0 = shard(&base, 0, 2, &[]);
    let s1 = shard(&base, 1, 2, &[]);
    let copy = base.join("copy-of-1");
    std::fs::create_dir_all(&copy).unwrap();
    for f in ["shard.json", "trials.jsonl"] {
        std::fs::copy(s1.join(f), copy.join(f)).unwrap();
    }
    let out = base.join("merged");
    let o = merge(&[&s0, &s1, &copy], &out);
    refused(&o, &out, &["shard 1/2 is given twice", "copy-of-1"]);
    // A part of another partition of the same plan holds trials of this one's parts.
    let other = base.join("other-n");
    std::fs::create_dir_all(&other).unwrap();
    let three = shard(&other, 1, 3, &[]);
    let o = merge(&[&s0, &s1, &three], &out);
    refused(&o, &out, &["shard 1/3", "another partition", "overlap"]);
}

#[test]
fn merge_refuses_a_shard_of_another_plan_or_commit() {
    let base = out_dir("shards", "foreign");
    let s0 = shard(&base, 0, 2, &[]);
    let s1 = shard(&base, 1, 2, &[]);
    let other = base.join("other-plan");
    std::fs::create_dir_all(&other).unwrap();
    let foreign = shard(&other, 1, 2, &["--time-every", "32"]);
    let out = base.join("merged");
    let o = merge(&[&s0, &foreign], &out);
    refused(
        &o,
        &out,
        &[
            "shard 1/2 is of another plan",
            &foreign.display().to_string(),
        ],
    );
    // The same shard, recorded as run by another commit's build.
    let old = base.join("old-commit");
    std::fs::create_dir_all(&old).unwrap();
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s1.join("shard.json")).unwrap()).unwrap();
    m["commit"] = "0123456789abcdef0123456789abcdef01234567".into();
    std::fs::write(old.join("shard.json"), m.to_string()).unwrap();
    std::fs::copy(s1.join("trials.jsonl"), old.join("trials.jsonl")).unwrap();
    let o = merge(&[&s0, &old], &out);
    refused(
        &o,
        &out,
        &[
            "shard 1/2 is of another commit: 0123456789abcdef",
            "old-commit",
        ],
    );
}

#[test]
fn merge_refuses_an_incomplete_shard_and_a_killed_one_leaves_no_file_half_written() {
    let base = out_dir("shards", "incomplete");
    let s0 = shard(&base, 0, 2, &[]);
    // A shard killed mid-run: its plan runs long, and it is killed once its marker is there.
    let killed = base.join("killed");
    let long: Vec<&str> = if cfg!(lwsim) {
        vec![
            "--engine",
            "sim",
            "--workload",
            "end-xact",
            "--locks",
            "atomic",
            "--threads",
            "64",
            "--trials",
            "50",
            "--duration",
            "20ms",
            "--jobs",
            "1",
        ]
    } else {
        vec![
            "--workload",
            "end-xact",
            "--locks",
            "atomic",
            "--threads",
            "1",
            "--trials",
            "50",
            "--duration",
            "1s",
        ]
    };
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_lwbench"))
        .args(&long)
        .args(["--shard", "0/1", "--out", killed.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while !killed.join("shard-incomplete.json").exists() {
        assert!(
            t0.elapsed().as_secs() < 60,
            "the shard wrote no incomplete marker"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!killed.join("shard.json").exists());
    assert!(!killed.join("trials.jsonl").exists());
    for f in ["results.csv", "points.csv", "waits.csv"] {
        assert!(!killed.join(f).exists(), "a shard wrote {f}");
    }
    let out = base.join("merged");
    let o = merge(&[&killed], &out);
    refused(
        &o,
        &out,
        &["shard 0/1 is incomplete", &killed.display().to_string()],
    );
    // A complete record whose trials file lost lines (copied by hand, say) is refused too.
    let s1 = shard(&base, 1, 2, &[]);
    let text = std::fs::read_to_string(s1.join("trials.jsonl")).unwrap();
    let first = text.lines().next().unwrap();
    std::fs::write(s1.join("trials.jsonl"), format!("{first}\n")).unwrap();
    let o = merge(&[&s0, &s1], &out);
    refused(&o, &out, &["trials.jsonl", "shard 1/2", "not the"]);
}

/// The fields of `meta.json` that describe the run rather than the result (the guide lists
/// them); the host's are equal here, where every run is on one machine; the working tree's
/// state (`git_commit`, `git_dirty`, as `git` reads it at the start) may change between runs.
#[cfg(lwsim)]
const RUN_FIELDS: &[&[&str]] = &[
    &["command_line"],
    &["started_unix"],
    &["elapsed_s"],
    &["settings", "jobs"],
    &["sim", "real_s"],
    &["sim", "median_events_per_real_s"],
    &["shards"],
    &["git_commit"],
    &["git_dirty"],
];

#[cfg(lwsim)]
fn result_fields(path: &Path) -> serde_json::Value {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for f in RUN_FIELDS {
        let (last, parents) = f.split_last().unwrap();
        let mut o = &mut v;
        for p in parents {
            o = &mut o[*p];
        }
        o.as_object_mut().unwrap().remove(*last);
    }
    v
}

#[cfg(lwsim)]
#[test]
fn merged_shards_write_the_files_of_a_single_run_byte_for_byte() {
    let base = out_dir("shards", "identical");
    let single = base.join("single");
    let mut a = with(&["--jobs", "2", "--out"]);
    a.push(single.display().to_string());
    let o = run_args(&a);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let n = 3;
    // Each shard on one OS thread: the files do not depend on --jobs.
    let dirs: Vec<PathBuf> = (0..n)
        .map(|k| shard(&base, k, n, &["--jobs", "1"]))
        .collect();
    // Given in any order.
    let merged = base.join("merged");
    let o = merge(&[&dirs[2], &dirs[0], &dirs[1]], &merged);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let names = |d: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let files = names(&single);
    assert_eq!(files, names(&merged), "the merge wrote other files");
    for f in [
        "results.csv",
        "points.csv",
        "waits.csv",
        "sensitivity.md",
        "sensitivity.csv",
        "end-xact.svg",
        "snapshot.svg",
    ] {
        assert!(
            files.contains(&f.to_string()),
            "the single run wrote no {f}"
        );
    }
    for f in &files {
        let (x, y) = (
            std::fs::read(single.join(f)).unwrap(),
            std::fs::read(merged.join(f)).unwrap(),
        );
        match f.as_str() {
            "meta.json" => assert_eq!(
                result_fields(&single.join(f)),
                result_fields(&merged.join(f)),
                "meta.json differs beyond the run's fields"
            ),
            "summary.md" => {
                // Its second paragraph's first line echoes the command line.
                let strip = |b: &[u8]| {
                    String::from_utf8_lossy(b)
                        .lines()
                        .filter(|l| !l.starts_with("Command: `"))
                        .collect::<Vec<_>>()
                        .join("\n")
                };
                assert_eq!(
                    strip(&x),
                    strip(&y),
                    "summary.md differs beyond its command line"
                );
            }
            _ => assert!(x == y, "{f} differs between the single run and the merge"),
        }
    }
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(merged.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["shards"]["n"], 3);
    assert_eq!(meta["shards"]["parts"].as_array().unwrap().len(), 3);
    // The parts, balanced by cost: 24 trials at 8 threads and 24 at 2 (same virtual time),
    // dealt longest first to the least loaded part, give each part 8 of each.
    let trials: Vec<u64> = meta["shards"]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["trials"].as_u64().unwrap())
        .collect();
    assert_eq!(trials, vec![16, 16, 16]);
}

/// The sharded sweep on a real Slurm: `bench/cluster/slurm/local-slurm-test.sh` starts a
/// single-node Slurm of its own, submits a 4-task array of a small simulated experiment and its
/// merge job, checks the merged files byte-identical to a single-process run and stops the
/// daemons. Without Slurm it says "skipped: REASON"; with `LWLAB_REQUIRE_SLURM=1` (CI) that
/// fails instead.
#[cfg(lwsim)]
#[test]
fn a_slurm_array_and_its_merge_write_the_files_of_one_run() {
    let _w = common::watchdog("slurm", 300);
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/cluster/slurm/local-slurm-test.sh"
    );
    let o = std::process::Command::new(script)
        .arg(env!("CARGO_BIN_EXE_lwbench"))
        .output()
        .expect("run local-slurm-test.sh");
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    println!("{out}");
    assert!(
        o.status.success(),
        "local-slurm-test.sh failed:\n{out}\n{err}"
    );
    assert!(
        out.starts_with("skipped: ") || out.contains("ok: the merge of 4 Slurm array tasks"),
        "{out}"
    );
}
