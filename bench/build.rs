//! Records the compiler version and git commit the binary was built from (fallbacks for
//! `meta.json` when `rustc` or `git` are not on the PATH at run time).

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

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    println!("cargo:rustc-env=LWBENCH_RUSTC={}", run(&rustc, &["-V"]));
    println!(
        "cargo:rustc-env=LWBENCH_GIT={}",
        run("git", &["rev-parse", "HEAD"])
    );
    println!("cargo:rerun-if-changed=build.rs");
}
