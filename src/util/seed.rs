//! Seeds: every random choice of a run derives from the scenario `seed`
//! through [`derive`], so a game's moves depend only on the seed and the
//! game's number, never on timing, concurrency or the games before it.
//!
//! A derived seed is `derive(base, index, stream)`: `index` numbers the
//! thing being seeded (a game, an iteration, a lane) and `stream` keeps
//! the uses apart, so that, say, game 3's players and game 3's opening
//! never share a random sequence. The streams are the named constants
//! below; a player's seed within a game uses its seat number as the stream.
//! Their values are arbitrary but fixed: changing one changes every
//! recorded game of that kind, so they are never renumbered.

/// Who moves first when `match.first: random`.
pub const FIRST_MOVER: u64 = 0xf125;
/// One game of `mode: match` (and its benchmark twin).
pub const MATCH_GAME: u64 = 0x6a6d;
/// One game of a tournament.
pub const TOURNAMENT_GAME: u64 = 0x7a7a;
/// One match played on the lobby server.
pub const LOBBY_MATCH: u64 = 0x6e6574;
/// A network's initial weights.
pub const NET_INIT: u64 = 0x6e6e;
/// One training iteration's self-play.
pub const SELF_PLAY_ITERATION: u64 = 0x5e1f_9a3e;
/// One self-play game within an iteration.
pub const SELF_PLAY_GAME: u64 = 0x5e1f;
/// The order of an iteration's training batches.
pub const TRAIN_BATCHES: u64 = 0x0b7a;
/// One evaluation game of a training iteration.
pub const EVAL_GAME: u64 = 0xe7a1;
/// One game played in the browser (`c4sim web`).
pub const WEB_GAME: u64 = 0x77eb;
/// The page's AI player of a web game (its `number`): stream 1, the value
/// it had before it was named, so web games play as they did.
pub const WEB_AI: u64 = 1;
/// A page's game between two of the server's players: the second one's stream.
pub const WEB_AI_2: u64 = 0x77eb_0a12;
/// A distributed self-play worker's batches: derived from the run seed and
/// the worker's name, then per batch number (`train::worker`).
pub const SELF_PLAY_WORKER: u64 = 0x5e1f_0a0b;
pub const SELF_PLAY_BATCH: u64 = 0x5e1f_0ba7;

/// A batched environment's random legal actions, per env (`rl::vector`).
pub const VECTOR_ACTIONS: u64 = 0x007e_c0a1;
/// A batched environment's opponent, per env game (`rl::vector`).
pub const VECTOR_OPPONENT: u64 = 0x007e_c0b0;
/// The seed of thing `index` in `stream`, derived from `base`
/// (splitmix64's finaliser: nearby inputs give unrelated outputs).
pub fn derive(base: u64, index: u64, stream: u64) -> u64 {
    let mut z = base ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_and_indices_give_different_seeds() {
        let s = [
            FIRST_MOVER,
            MATCH_GAME,
            TOURNAMENT_GAME,
            LOBBY_MATCH,
            NET_INIT,
            SELF_PLAY_ITERATION,
            SELF_PLAY_GAME,
            TRAIN_BATCHES,
            EVAL_GAME,
            WEB_GAME,
            WEB_AI,
            SELF_PLAY_WORKER,
            SELF_PLAY_BATCH,
            VECTOR_ACTIONS,
            VECTOR_OPPONENT,
        ];
        let mut seen = std::collections::BTreeSet::new();
        for stream in s {
            for index in 0..4 {
                assert!(seen.insert(derive(7, index, stream)));
            }
        }
        // The recorded games depend on these exact values.
        assert_eq!(derive(0, 0, 0), 0);
        assert_ne!(derive(1, 0, 0), derive(0, 1, 0));
    }
}
