//! The `c4sim` binary: parsing and printing live in [`cli`]; the work is the
//! library's.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
