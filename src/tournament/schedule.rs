//! Which games a tournament plays: pairings, colours and openings. Pure
//! and deterministic, so a resumed run plans exactly the same games.

use crate::game::openings::{parse_opening_file, shuffled_openings, OpeningsError};
use crate::game::BoardConfig;
use crate::scenario::tournament::{OpeningSuite, Schedule};
use std::path::{Path, PathBuf};

/// One planned game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    /// Game number, from 1, in schedule order.
    pub index: u64,
    /// Player indices in seat order (seat 0 plays RED and moves first).
    pub seats: [usize; 2],
    /// Columns from 0, played before the players are asked.
    pub opening: Vec<usize>,
}

/// The pairs of player indices a schedule plays, with games per pair.
pub fn pairings(schedule: Schedule, players: usize, games_per_pair: u32) -> (Vec<(usize, usize)>, u32) {
    match schedule {
        Schedule::RoundRobin | Schedule::DoubleRoundRobin => {
            let pairs = (0..players)
                .flat_map(|a| (a + 1..players).map(move |b| (a, b)))
                .collect();
            let per = if schedule == Schedule::DoubleRoundRobin {
                2 * games_per_pair
            } else {
                games_per_pair
            };
            (pairs, per)
        }
        Schedule::Gauntlet => ((1..players).map(|b| (0, b)).collect(), games_per_pair),
    }
}

/// Every game of the tournament. Each opening is played twice in a row by
/// each pair, once with each player moving first; rounds go through all
/// pairs before the next opening, so partial results stay balanced.
pub fn plan(pairs: &[(usize, usize)], games_per_pair: u32, openings: &[Vec<usize>]) -> Vec<Planned> {
    let mut out = Vec::new();
    let empty = [Vec::new()];
    let openings = if openings.is_empty() { &empty[..] } else { openings };
    for k in 0..games_per_pair as usize {
        let opening = &openings[(k / 2) % openings.len()];
        for &(a, b) in pairs {
            let seats = if k % 2 == 0 { [a, b] } else { [b, a] };
            out.push(Planned {
                index: out.len() as u64 + 1,
                seats,
                opening: opening.clone(),
            });
        }
    }
    out
}

/// Why a tournament's opening suite cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum OpeningSuiteError {
    /// `plies` so deep that every opening already ends the game.
    #[error("no {plies}-ply openings exist on a {cfg} board that do not already end the game")]
    NoneOfPlies { plies: u32, cfg: BoardConfig },
    #[error("cannot read openings file {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}: {source}", path.display())]
    Parse { path: PathBuf, source: OpeningsError },
    #[error("{}: no openings in the file", path.display())]
    Empty { path: PathBuf },
}

/// The opening suite: generated from `plies` in a seeded order, or read from a file
/// (relative paths are resolved against the scenario's directory, then the current one).
pub fn load_openings(
    suite: &OpeningSuite,
    cfg: BoardConfig,
    seed: u64,
    scenario: &Path,
) -> Result<Vec<Vec<usize>>, OpeningSuiteError> {
    match suite {
        OpeningSuite::Plies(n) => {
            let v = shuffled_openings(cfg, *n as usize, seed);
            if v.is_empty() {
                return Err(OpeningSuiteError::NoneOfPlies { plies: *n, cfg });
            }
            Ok(v)
        }
        OpeningSuite::File(p) => {
            let beside = scenario.parent().map(|d| d.join(p)).filter(|c| c.exists());
            let path = beside.unwrap_or_else(|| p.clone());
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(source) => return Err(OpeningSuiteError::Read { path, source }),
            };
            let v = match parse_opening_file(&text, cfg) {
                Ok(v) => v,
                Err(source) => return Err(OpeningSuiteError::Parse { path, source }),
            };
            if v.is_empty() {
                return Err(OpeningSuiteError::Empty { path });
            }
            Ok(v)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_of_four_with_four_games_is_24_games() {
        let (pairs, per) = pairings(Schedule::RoundRobin, 4, 4);
        assert_eq!(pairs.len(), 6);
        let p = plan(&pairs, per, &[vec![3], vec![2]]);
        assert_eq!(p.len(), 24);
        for player in 0..4 {
            assert_eq!(p.iter().filter(|g| g.seats.contains(&player)).count(), 12);
            let first = p.iter().filter(|g| g.seats[0] == player).count();
            assert_eq!(first, 6, "colours alternate");
        }
        // Each opening twice per pair, once with each colour order.
        let pair01: Vec<&Planned> = p
            .iter()
            .filter(|g| g.seats.contains(&0) && g.seats.contains(&1))
            .collect();
        assert_eq!(pair01[0].seats, [0, 1]);
        assert_eq!(pair01[1].seats, [1, 0]);
        assert_eq!(pair01[0].opening, pair01[1].opening);
        assert_ne!(pair01[0].opening, pair01[2].opening);
        assert_eq!(
            p.iter().map(|g| g.index).collect::<Vec<_>>(),
            (1..=24).collect::<Vec<_>>()
        );
    }

    #[test]
    fn double_round_robin_and_gauntlet() {
        let (pairs, per) = pairings(Schedule::DoubleRoundRobin, 3, 2);
        assert_eq!((pairs.len(), per), (3, 4));
        let (pairs, per) = pairings(Schedule::Gauntlet, 4, 2);
        assert_eq!((pairs, per), (vec![(0, 1), (0, 2), (0, 3)], 2));
    }

    #[test]
    fn openings_from_plies_and_files() {
        let cfg = BoardConfig::default();
        let v = load_openings(&OpeningSuite::Plies(2), cfg, 1, Path::new("x.yaml")).unwrap();
        assert_eq!(v.len(), 49);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("o.txt"), "44\n35\n").unwrap();
        let sc = dir.path().join("s.yaml");
        let v = load_openings(&OpeningSuite::File("o.txt".into()), cfg, 1, &sc).unwrap();
        assert_eq!(v, vec![vec![3, 3], vec![2, 4]]);
        assert!(load_openings(&OpeningSuite::File("nope.txt".into()), cfg, 1, &sc).is_err());
    }
}
