//! `lwbench`: the command line of the harness. See `lwbench --help`; `lwbench torture
//! [ARGS]` runs `lwtorture` over the same registry.

fn main() -> std::process::ExitCode {
    lwbench::Lwbench::new().main()
}
