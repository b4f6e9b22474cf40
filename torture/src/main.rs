//! `lwtorture`: locktorture for the project's locks. See `lwtorture --help` and the
//! `lwbench::torture` module docs.

fn main() -> std::process::ExitCode {
    lwbench::torture::main()
}
