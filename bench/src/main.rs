//! `bench`: the lwbench command line. See `bench --help`.

fn main() -> std::process::ExitCode {
    lwbench::cli::main()
}
