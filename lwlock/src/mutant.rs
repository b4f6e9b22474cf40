//! Mutants: deliberately broken variants of the project's locks, which prove that each model and
//! test can fail. The one description of the three kinds; `ci/mutation.list` names every mutant
//! with its kind, and `ci/mutation.sh` runs them (`ci/models.sh` the CI sample). No PostgreSQL
//! counterpart: test tooling.
//!
//! * **runtime**: a `lwlock::mutant!("NAME")` branch in the source, selected at run time by the
//!   environment variable `LWLOCK_MUTANT=NAME` in the builds with
//!   `RUSTFLAGS='--cfg lwlock_mutant="runtime"'` (one build serves every runtime mutant: each
//!   `mutant_*` test of `models/tests` re-runs its model in a child process with the variable set).
//! * **build**: the same `mutant!("NAME")` branch, selected at compile time by
//!   `--cfg lwlock_mutant="NAME"` (its own build), for a variant that would change every model
//!   of a shared runtime build (flexlock's `flex_done_before_apply`, `flex_no_recheck`,
//!   `clog_ignore_key`).
//! * **patch**: a literal replacement `FILE|OLD|NEW` in `ci/mutation.list`, applied by
//!   `ci/mutation.sh` to a scratch copy of the tree (weakened orderings and dropped flag updates
//!   that need no branch in the shipped source; `ci/mutation.sh --check-list` checks that every
//!   patch still applies and that every `mutant!` name is listed).
//!
//! `mutant!("NAME")` is `cfg!(lwlock_mutant = "NAME")`, a constant `false` in every normal build
//! (so the broken branch is compiled out), plus, in a `--cfg lwlock_mutant="runtime"` build, the
//! run-time check `runtime_mutant`.

/// `mutant!("name")`: whether the deliberately broken variant `name` is active.
///
/// Used only by the model-checking suites, to prove that each model can fail. It is
/// `cfg!(lwlock_mutant = "name")`, a constant `false` in every normal build (so the broken branch
/// is compiled out). A build with `--cfg lwlock_mutant="runtime"` also selects a variant at run
/// time from the environment variable `LWLOCK_MUTANT`, so that one build serves every variant.
/// See the `mutant` module for the kinds of mutant.
#[cfg(not(lwlock_mutant = "runtime"))]
#[doc(hidden)]
#[macro_export]
macro_rules! mutant {
    ($name:literal) => {
        cfg!(lwlock_mutant = $name)
    };
}

/// `mutant!("name")`: whether the deliberately broken variant `name` is active (here: selected
/// at compile time, or at run time by `LWLOCK_MUTANT=name`).
#[cfg(lwlock_mutant = "runtime")]
#[doc(hidden)]
#[macro_export]
macro_rules! mutant {
    ($name:literal) => {
        cfg!(lwlock_mutant = $name) || $crate::mutant::runtime_mutant($name)
    };
}

/// Whether `LWLOCK_MUTANT` names `name` (read once per process). Only in
/// `--cfg lwlock_mutant="runtime"` builds.
#[cfg(lwlock_mutant = "runtime")]
#[doc(hidden)]
pub fn runtime_mutant(name: &str) -> bool {
    static SELECTED: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    SELECTED
        .get_or_init(|| std::env::var("LWLOCK_MUTANT").ok())
        .as_deref()
        == Some(name)
}
