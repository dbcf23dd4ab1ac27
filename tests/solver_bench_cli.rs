//! `c4sim bench solver` runs and prints both of its tables (a tiny
//! configuration: small table, low node budget, a few late positions).

use assert_cmd::Command;
use predicates::prelude::*;

#[test]
fn bench_solver_prints_its_tables() {
    Command::cargo_bin("c4sim")
        .unwrap()
        .args([
            "bench",
            "solver",
            "--per-ply",
            "2",
            "--min-ply",
            "18",
            "--max-ply",
            "20",
            "--set-size",
            "3",
            "--table-log2",
            "16",
            "--budget",
            "200000",
        ])
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success()
        .stdout(predicate::str::contains("## By ply"))
        .stdout(predicate::str::contains("| 20 | 2 |"))
        .stdout(predicate::str::contains("## By set"))
        .stdout(predicate::str::contains("| end-easy | 28–34 | 1 |"))
        .stdout(predicate::str::contains("| begin-hard | 8–13 | 1 |"));
}
