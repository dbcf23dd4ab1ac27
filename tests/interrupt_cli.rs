//! End-to-end: Ctrl-C (SIGINT) ends a run cleanly, bot processes included.

mod common;
use common::alive;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn sigint_ends_the_run_and_kills_bot_processes() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let sc = dir.path().join("s.yaml");
    std::fs::write(
        &sc,
        format!(
            "players:\n  - {{name: Sleepy, kind: external, command: [python3, tests/bots/sleeper.py], env: {{PID_FILE: '{}'}}}}\n  - {{name: You, kind: human}}\n",
            pid_file.display()
        ),
    )
    .unwrap();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("c4sim"))
        .args(["run", sc.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !pid_file.exists() || std::fs::read_to_string(&pid_file).unwrap().trim().is_empty() {
        assert!(start.elapsed() < Duration::from_secs(20), "the bot never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    let bot: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    // SAFETY: sending signals to processes this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("Interrupted"), "{err}");
    std::thread::sleep(Duration::from_millis(200));
    assert!(!alive(bot), "bot {bot} outlived the run");
}
