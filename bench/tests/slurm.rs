//! The sharded sweep on a real Slurm (a `--cfg lwsim` build; `ci/sim.sh` runs it):
//! `bench/cluster/slurm/local-slurm-test.sh` starts a single-node Slurm of its own, submits a
//! 4-task array of a small simulated experiment and its merge job, checks the merged files
//! byte-identical to a single-process run and stops the daemons. Without Slurm it says
//! "skipped: REASON"; with `LWLAB_REQUIRE_SLURM=1` (CI) that fails instead.
#![cfg(lwsim)]

mod common;

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
