//! The `sandgrep` command line (see the `cli` module).

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
