//! The names of `lwbench`'s subcommands and their lines for `--help` (their entry points are in
//! [`crate::cli::SUBCOMMANDS`], in this order).

/// A subcommand's name (the first argument) and one line for `--help`.
#[derive(Clone, Copy, Debug)]
pub struct Info {
    /// Its name.
    pub name: &'static str,
    /// One line for `--help`.
    pub about: &'static str,
}

/// Every subcommand, in the order of [`crate::cli::SUBCOMMANDS`].
pub const LIST: &[Info] = &[
    Info {
        name: "pg",
        about: "a real PostgreSQL in the loop: `lwbench pg record` records its LWLock traffic",
    },
    Info {
        name: "merge",
        about: "`lwbench merge DIR... --out OUT`: the files of one run from the N partial \
                directories of `--shard K/N` (refuses a missing, duplicate, foreign or \
                incomplete shard)",
    },
];
