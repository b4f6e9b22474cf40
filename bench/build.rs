//! Records the compiler version and git commit the binary was built from: `meta.json` gives the
//! build's commit beside the working directory's, and uses it when `git` or `rustc` are not on
//! the PATH at run time.
//!
//! The commit is read again whenever git's HEAD moves (a commit, a checkout), not only when this
//! file changes: a binary built after a commit must not name the commit of the target
//! directory's first build.

use std::path::Path;
use std::process::Command;

fn run(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// Asks cargo to rerun this script when HEAD or the branch it names moves. Only files that exist
/// are named (cargo reruns on every build for a missing one).
fn watch_head() {
    let git_dir = run("git", &["rev-parse", "--absolute-git-dir"]);
    let common = run("git", &["rev-parse", "--git-common-dir"]);
    if git_dir == "unknown" || common == "unknown" {
        return;
    }
    let common = if Path::new(&common).is_absolute() {
        Path::new(&common).to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(&common)
    };
    let mut files = vec![Path::new(&git_dir).join("HEAD"), common.join("packed-refs")];
    let head_ref = run("git", &["symbolic-ref", "-q", "HEAD"]);
    if head_ref != "unknown" {
        files.push(common.join(&head_ref));
    }
    for f in files.into_iter().filter(|f| f.is_file()) {
        println!("cargo:rerun-if-changed={}", f.display());
    }
}

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    println!("cargo:rustc-env=LWBENCH_RUSTC={}", run(&rustc, &["-V"]));
    println!(
        "cargo:rustc-env=LWBENCH_GIT={}",
        run("git", &["rev-parse", "HEAD"])
    );
    println!("cargo:rerun-if-changed=build.rs");
    watch_head();
}
