//! The network's input encoding and training samples, with the left–right
//! mirror that doubles the data (docs/alphazero.md, "Encoding").
//!
//! Planes are laid out pixels-major (`[rows][cols][3]`, "NHWC"): the
//! network's 3×3 convolutions unfold the neighbourhood of each pixel into
//! one contiguous row and run as one matrix product over the batch, and that
//! layout makes each pixel's channels contiguous. Plane 0 is the mover's
//! pieces, plane 1 the opponent's, plane 2 all ones. Row 0 is the bottom.

use crate::game::bitboard::{Bits, Position};
use crate::game::MAX_SIDE;

/// Input planes per cell.
pub const PLANES: usize = 3;

/// Writes the planes of `pos` (from the mover's view) into `out`
/// (`rows * cols * 3` floats).
pub fn encode<B: Bits>(pos: &Position<B>, rows: usize, cols: usize, out: &mut [f32]) {
    debug_assert_eq!(out.len(), rows * cols * PLANES);
    for i in 0..rows * cols {
        out[i * PLANES] = if pos.mine.has(i) { 1.0 } else { 0.0 };
        out[i * PLANES + 1] = if pos.theirs.has(i) { 1.0 } else { 0.0 };
        out[i * PLANES + 2] = 1.0;
    }
}

/// A set of up to 256 cells, independent of the board's mask type, so the
/// replay buffer and its file format do not depend on the board size.
pub fn to_words<B: Bits>(b: B, cells: usize) -> [u64; 4] {
    let mut w = [0u64; 4];
    for i in 0..cells {
        if b.has(i) {
            w[i / 64] |= 1 << (i % 64);
        }
    }
    w
}

#[inline]
fn word_has(w: &[u64; 4], i: usize) -> bool {
    w[i / 64] >> (i % 64) & 1 == 1
}

/// One training position: the board from the mover's view, the search's
/// visit distribution over columns, the game's result for the mover, and
/// the opponent's reply target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub mine: [u64; 4],
    pub theirs: [u64; 4],
    /// Visit shares per column (zero past `cols`).
    pub policy: [f32; MAX_SIDE],
    /// +1 the mover went on to win, −1 lose, 0 draw.
    pub value: f32,
    /// The policy target of the game's next position, where the opponent
    /// moves (KataGo's auxiliary opponent-policy target, `network.reply_head`);
    /// all zero when there is none (the game ended, the next ply was not
    /// recorded, or this position's move was random), which leaves the
    /// reply loss of this sample at zero.
    pub reply: [f32; MAX_SIDE],
}

impl Sample {
    pub fn new<B: Bits>(pos: &Position<B>, cells: usize, policy: &[f32], value: f32) -> Self {
        let mut p = [0f32; MAX_SIDE];
        p[..policy.len()].copy_from_slice(policy);
        Sample {
            mine: to_words(pos.mine, cells),
            theirs: to_words(pos.theirs, cells),
            policy: p,
            value,
            reply: [0.0; MAX_SIDE],
        }
    }

    /// Whether the sample has a reply target (a row that is not all zero).
    pub fn has_reply(&self) -> bool {
        self.reply.iter().any(|&r| r != 0.0)
    }

    /// Writes the planes, mirrored left–right when `mirror` is set, and the
    /// policy and reply targets flipped the same way: they must flip
    /// together or the network learns that the mirror image of a good move
    /// is good.
    pub fn encode_into(
        &self,
        rows: usize,
        cols: usize,
        mirror: bool,
        planes: &mut [f32],
        policy: &mut [f32],
        reply: &mut [f32],
    ) {
        for r in 0..rows {
            for c in 0..cols {
                let src = r * cols + if mirror { cols - 1 - c } else { c };
                let dst = (r * cols + c) * PLANES;
                planes[dst] = if word_has(&self.mine, src) { 1.0 } else { 0.0 };
                planes[dst + 1] = if word_has(&self.theirs, src) { 1.0 } else { 0.0 };
                planes[dst + 2] = 1.0;
            }
        }
        for (c, (p, r)) in policy.iter_mut().zip(reply.iter_mut()).enumerate().take(cols) {
            let src = if mirror { cols - 1 - c } else { c };
            *p = self.policy[src];
            *r = self.reply[src];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::bitboard::{Geometry, Status};
    use crate::game::BoardConfig;

    fn planes_of(pos: &Position<u64>, rows: usize, cols: usize) -> Vec<f32> {
        let mut v = vec![0.0; rows * cols * PLANES];
        encode(pos, rows, cols, &mut v);
        v
    }

    #[test]
    fn planes_are_from_the_movers_view() {
        let g = Geometry::<u64>::new(BoardConfig::default());
        // Red plays column 0, Yellow column 6: Red to move.
        let p = Position::from_moves(&g, &[0, 6]).unwrap();
        let v = planes_of(&p, 6, 7);
        assert_eq!(v[0], 1.0, "mover's piece at the bottom left");
        assert_eq!(v[6 * PLANES + 1], 1.0, "opponent's piece at the bottom right");
        assert!(v.chunks(PLANES).all(|c| c[2] == 1.0));
        assert_eq!(v.iter().step_by(PLANES).sum::<f32>(), 1.0);
    }

    #[test]
    fn mirror_flips_planes_and_policy_together() {
        let cfg = BoardConfig::default();
        let g = Geometry::<u64>::new(cfg);
        // Red has three in a row on the bottom at columns 0..2 and wins at 3;
        // the policy puts all its weight on that winning move.
        let pos = Position::from_moves(&g, &[0, 0, 1, 1, 2, 6]).unwrap();
        let mut policy = [0f32; 7];
        policy[3] = 1.0;
        let s = Sample::new(&pos, cfg.cells(), &policy, 1.0);

        let mut planes = vec![0.0; 42 * PLANES];
        let mut pol = vec![0.0; 7];
        let mut reply = vec![9.0; 7];
        s.encode_into(6, 7, true, &mut planes, &mut pol, &mut reply);
        assert_eq!(reply, vec![0.0; 7], "no reply target: a zero row, whatever was there");
        let mirrored = pos.mirrored(&g);
        assert_eq!(
            planes,
            planes_of(&mirrored, 6, 7),
            "mirrored sample = encoding of the mirrored position"
        );
        let best = pol.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap().0;
        assert_eq!(best, 3, "the centre column is its own mirror");
        assert_eq!(mirrored.play(&g, best).1, Status::Won);

        // An off-centre winning move moves with the mirror.
        let pos = Position::from_moves(&g, &[3, 3, 4, 4, 5, 0]).unwrap();
        let mut policy = [0f32; 7];
        policy[6] = 0.75;
        policy[2] = 0.25;
        let mut s = Sample::new(&pos, 42, &policy, 1.0);
        // An asymmetric reply target.
        s.reply[6] = 0.5;
        s.reply[1] = 0.5;
        s.encode_into(6, 7, true, &mut planes, &mut pol, &mut reply);
        let mirrored = pos.mirrored(&g);
        assert_eq!(planes, planes_of(&mirrored, 6, 7));
        assert_eq!(pol, vec![0.75, 0.0, 0.0, 0.0, 0.25, 0.0, 0.0]);
        assert_eq!(
            reply,
            vec![0.5, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0],
            "the reply flips with the planes and the policy"
        );
        assert_eq!(pos.play(&g, 6).1, Status::Won);
        assert_eq!(mirrored.play(&g, 0).1, Status::Won);
        assert_eq!(mirrored.play(&g, 4).1, Status::Won);

        // Unmirrored is the identity.
        s.encode_into(6, 7, false, &mut planes, &mut pol, &mut reply);
        assert_eq!(planes, planes_of(&pos, 6, 7));
        assert_eq!(&pol[..], &policy[..]);
        assert_eq!(&reply[..], &s.reply[..7]);
    }

    #[test]
    fn words_round_trip_big_boards() {
        let cfg = BoardConfig::new(16, 16, 5).unwrap();
        let g = Geometry::<crate::game::bitboard::B256>::new(cfg);
        let pos = Position::from_moves(&g, &[15, 0, 15, 7]).unwrap();
        let s = Sample::new(&pos, 256, &[0.0; 16], 0.0);
        let mut planes = vec![0.0; 256 * PLANES];
        let mut pol = vec![0.0; 16];
        s.encode_into(16, 16, false, &mut planes, &mut pol, &mut [0.0; 16]);
        let mut direct = vec![0.0; 256 * PLANES];
        encode(&pos, 16, 16, &mut direct);
        assert_eq!(planes, direct);
    }
}
