use super::*;

#[test]
fn match_seeds_follow_the_scenario_seed() {
    let player = |scenario: u64, index: u64| seed::derive(scenario, 0, index);
    let base = match_seed(player(7, 0), 1, 0);
    assert_eq!(base, match_seed(player(7, 0), 1, 0), "the same seed, the same game");
    let others = [
        ("another scenario seed", match_seed(player(8, 0), 1, 0)),
        ("another player", match_seed(player(7, 1), 1, 0)),
        ("another match", match_seed(player(7, 0), 2, 0)),
        ("another seat", match_seed(player(7, 0), 1, 1)),
    ];
    for (what, seed) in others {
        assert_ne!(seed, base, "{what}");
    }
}

#[test]
fn the_match_board_takes_its_win_length_from_the_game() {
    for game in GameKind::ALL {
        for n in game.min_players()..=game.max_players() {
            let rules = game.board(n);
            let got = match_board(game, n, rules.cols as u64, rules.rows as u64).unwrap();
            assert_eq!(got, rules, "{} with {n} players", game.as_str());
        }
    }
    // The size is the server's word; the win length still the game's.
    let got = match_board(GameKind::Connect4Classic, 2, 9, 7).unwrap();
    assert_eq!((got.cols, got.rows), (9, 7));
    assert_eq!(got.win_length, GameKind::Connect4Classic.board(2).win_length);
    assert!(
        match_board(GameKind::Connect4, 3, 0, 6).is_err(),
        "a board it cannot play on"
    );
}
