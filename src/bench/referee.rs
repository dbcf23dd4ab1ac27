//! `c4sim bench`: performance figures measured against a baseline in the
//! same run, so a noisy machine still gives honest ratios.

use crate::actors::messages::{PlayGame, PlayerHandle, Seat};
use crate::actors::player::bot;
use crate::actors::referee::Referee;
use crate::game::{BoardConfig, Game, DEFAULT_LETTERS};
use crate::players::bots::RandomBot;
use crate::players::{Strategy, TurnView};
use crate::util::{median, seed};
use actix::prelude::*;
use std::time::{Duration, Instant};

/// Games per second both ways, and a checksum proving they are the same games.
#[derive(Debug, Clone, Copy)]
pub struct RefereeBench {
    pub loop_games_per_s: f64,
    pub actor_games_per_s: f64,
    pub ratio: f64,
    pub same_games: bool,
}

fn checksum(acc: u64, moves: &[usize], winner: Option<usize>) -> u64 {
    let mut h = acc ^ winner.map_or(7, |w| w as u64);
    for &m in moves {
        h = h.wrapping_mul(31).wrapping_add(m as u64);
    }
    h
}

/// The baseline: the same referee state machine and the same bots, called
/// directly in a loop (still handing each player a copy of the board).
pub fn plain_loop(games: u64, seed: u64) -> u64 {
    let cfg = BoardConfig::default();
    let mut bots = [RandomBot::new(0), RandomBot::new(0)];
    let mut sum = 0;
    for g in 1..=games {
        let gseed = seed::derive(seed, g, seed::MATCH_GAME);
        for (seat, b) in bots.iter_mut().enumerate() {
            b.new_game(seed::derive(gseed, g, seat as u64));
        }
        let mut game = Game::new(cfg, 2, 5);
        while let Some(seat) = game.to_move() {
            let view = TurnView::of(&game, g, seat, &DEFAULT_LETTERS, None);
            let a = bots[seat].choose(&view);
            game.submit(a);
        }
        sum = checksum(sum, game.moves(), game.outcome().and_then(|o| o.winner));
    }
    sum
}

/// The same games through a referee actor and two player actors.
pub async fn through_actors(games: u64, seed: u64) -> u64 {
    let referee = Referee.start();
    let a = bot("A", Box::new(RandomBot::new(0))).start();
    let b = bot("B", Box::new(RandomBot::new(0))).start();
    let mut sum = 0;
    for g in 1..=games {
        let seats = vec![
            Seat {
                name: "A".into(),
                player: PlayerHandle::of(&a),
                move_time: Some(Duration::from_secs(30)),
            },
            Seat {
                name: "B".into(),
                player: PlayerHandle::of(&b),
                move_time: Some(Duration::from_secs(30)),
            },
        ];
        let msg = PlayGame {
            game: g,
            games,
            cfg: BoardConfig::default(),
            seats,
            letters: DEFAULT_LETTERS.to_vec(),
            opening: Vec::new(),
            max_invalid: 5,
            seed: seed::derive(seed, g, seed::MATCH_GAME),
            sinks: Vec::new(),
        };
        let r = referee.send(msg).await.expect("referee alive");
        sum = checksum(sum, &r.moves, r.outcome.winner);
    }
    sum
}

/// Runs both `rounds` times and reports medians.
pub fn referee_bench(games: u64, rounds: usize) -> RefereeBench {
    let mut loop_rates = Vec::new();
    let mut actor_rates = Vec::new();
    let mut same = true;
    let sys = System::new();
    for r in 0..rounds {
        let seed = r as u64;
        let t = Instant::now();
        let a = plain_loop(games, seed);
        loop_rates.push(games as f64 / t.elapsed().as_secs_f64());
        let t = Instant::now();
        let b = sys.block_on(through_actors(games, seed));
        actor_rates.push(games as f64 / t.elapsed().as_secs_f64());
        same &= a == b;
    }
    let l = median(&mut loop_rates);
    let a = median(&mut actor_rates);
    RefereeBench {
        loop_games_per_s: l,
        actor_games_per_s: a,
        ratio: a / l,
        same_games: same,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actors_play_the_same_games_as_the_loop() {
        let sys = System::new();
        assert_eq!(plain_loop(50, 3), sys.block_on(through_actors(50, 3)));
    }
}

/// Tournament throughput against the same games in a plain loop.
#[derive(Debug, Clone)]
pub struct TournamentBench {
    pub games: u64,
    pub loop_games_per_s: f64,
    /// (concurrency, games per second, ratio to the loop)
    pub engine: Vec<(usize, f64, f64)>,
    pub same_games: bool,
}

/// An order-independent digest of one game, so games finishing in any
/// order on any lane can be compared with the loop's.
fn game_digest(index: u64, moves: &[usize], winner: Option<usize>) -> u64 {
    seed::derive(checksum(index, moves, winner), index, 1)
}

/// A round-robin of fast bots (random, leftmost, rightmost, random) of about
/// `games` games: through the tournament engine at each concurrency, and
/// the same planned games in a plain loop (same referee state machine and
/// bots, no actors, no files).
pub fn tournament_bench(games: u64, concurrencies: &[usize]) -> TournamentBench {
    use crate::tournament::{game_seed, play_all, schedule};
    let yaml =
        "mode: tournament\nseed: 3\nplayers: [{kind: random}, {kind: leftmost}, {kind: rightmost}, {kind: random}]\n";
    let sc = crate::scenario::parse_str(yaml, std::path::Path::new("bench.yaml")).expect("bench scenario");
    let per = ((games / 6).max(2) / 2 * 2) as u32;
    let openings = schedule::load_openings(
        &crate::scenario::tournament::OpeningSuite::Plies(2),
        sc.board,
        sc.seed,
        &sc.path,
    )
    .expect("openings");
    let (pairs, per) = schedule::pairings(crate::scenario::tournament::Schedule::RoundRobin, 4, per);
    let plan = schedule::plan(&pairs, per, &openings);
    let total = plan.len() as u64;

    let t = Instant::now();
    let mut bots: Vec<Box<dyn Strategy>> = sc
        .players
        .iter()
        .map(|p| crate::players::build_strategy(p, 0).expect("bot"))
        .collect();
    let mut loop_sum = 0u64;
    for p in &plan {
        let gseed = game_seed(sc.seed, p.index);
        for (seat, &who) in p.seats.iter().enumerate() {
            bots[who].new_game(seed::derive(gseed, p.index, seat as u64));
        }
        let mut game = Game::with_opening(sc.board, 2, 5, &p.opening).expect("opening");
        while let Some(seat) = game.to_move() {
            let view = TurnView::of(&game, p.index, seat, &DEFAULT_LETTERS, None);
            let a = bots[p.seats[seat]].choose(&view);
            game.submit(a);
        }
        loop_sum = loop_sum.wrapping_add(game_digest(
            p.index,
            game.moves(),
            game.outcome().and_then(|o| o.winner),
        ));
    }
    let loop_rate = total as f64 / t.elapsed().as_secs_f64();

    let mut engine = Vec::new();
    let mut same = true;
    for &c in concurrencies {
        let sys = System::new();
        let t = Instant::now();
        let mut sum = 0u64;
        sys.block_on(play_all(&sc, plan.clone(), total, c, |r| {
            sum = sum.wrapping_add(game_digest(r.game, &r.moves, r.outcome.winner));
        }))
        .expect("tournament engine");
        let rate = total as f64 / t.elapsed().as_secs_f64();
        same &= sum == loop_sum;
        engine.push((c, rate, rate / loop_rate));
    }
    TournamentBench {
        games: total,
        loop_games_per_s: loop_rate,
        engine,
        same_games: same,
    }
}
