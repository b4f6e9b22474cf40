//! `lwtorture`: locktorture for every lock of the registry. See `lwtorture --help` and the
//! `lwtorture` crate docs.

fn main() -> std::process::ExitCode {
    lwtorture::main()
}
