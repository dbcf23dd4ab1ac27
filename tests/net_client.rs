//! c4sim's own network client (`c4sim join`) against a real server: what
//! it plays must follow from the scenario seed, like every other mode.

mod common;

use common::net::*;
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The columns a random player plays in one classic duel, joined with
/// scenario seed `seed`, against a raw client that subscribed first (so
/// moves first) and always plays the left-most open column. `run` keeps
/// the names apart: a name stays taken for the reconnect grace.
fn random_columns(server: &Server, seed: u64, run: usize) -> Vec<u64> {
    let (mut wall, _) = Client::login(&server.addr, &format!("Wall{run}"));
    wall.enter("connect4-classic");
    let randy = format!("Randy{run}");
    let child = Command::new(c4sim_bin())
        .args([
            "join",
            &server.addr,
            "--player",
            &format!("{{kind: random, name: {randy}}}"),
            "--game",
            "connect4-classic",
            "--matches",
            "1",
            "--seed",
            &seed.to_string(),
            "--json",
        ])
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (m, _) = wall.event("game.match_started");
    let played = play_out(&mut wall, &m.unwrap(), 7, 6);
    let out = wait_bounded(child, Duration::from_secs(60));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    wall.close();
    played
        .events
        .iter()
        .filter(|(e, b)| e == "game.action" && b["player"] == Value::String(randy.clone()))
        .map(|(_, b)| b["move"].as_u64().unwrap())
        .collect()
}

#[test]
fn a_joined_players_moves_follow_the_scenario_seed() {
    let server = Server::start("countdown: 100ms, move_timeout: 5s", "");
    let a = random_columns(&server, 11, 0);
    let again = random_columns(&server, 11, 1);
    let other = random_columns(&server, 12, 2);
    assert!(!a.is_empty());
    assert_eq!(a, again, "the same seed plays the same game");
    assert_ne!(a, other, "another seed plays another game");
}
