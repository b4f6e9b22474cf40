//! `lwbench`: the command line of the harness. See `lwbench --help`.

fn main() -> std::process::ExitCode {
    lwbench::cli::main()
}
