//! The search: the null-window driver over the score range and the
//! fail-soft negamax under it (see the module doc of `solver` for the
//! techniques, each a switch of [`Techniques`](super::Techniques)).

use super::position::{Claim, Geometry, Pos, MAX_COLS};
use super::table::{work_of, Slot};
use super::{MoveOrder, Solver, Techniques, ETC_MIN_EMPTY, NO_HI, NO_LO};
use std::mem::MaybeUninit;
use std::sync::atomic::Ordering::Relaxed;

/// A node's children by column, each with its table slot and the winning
/// cells its parent already knew: `order_moves` makes each once, and ETC,
/// the search and the child's own filter and ordering reuse it (making them
/// again cost a ply-8 solve 6% of its time, the cells 5% more). Only the
/// columns in the node's move list are written.
type Children = [MaybeUninit<Kid>; MAX_COLS];

#[derive(Clone, Copy)]
struct Kid {
    pos: Pos,
    slot: Slot,
    cells: Known,
}

/// Winning cells of a position known before its search (`None`: not known).
#[derive(Clone, Copy, Default)]
struct Known {
    /// The opponent's: the parent's mover's after the move (if the parent
    /// counted them to order its moves).
    opponent: Option<u64>,
    /// The side to move's: the parent's opponent's, less the cell played
    /// (if the parent's non-losing filter made them).
    own: Option<u64>,
}

impl Solver {
    /// The score, with `self.aborted` set if the budget ran out (the value is
    /// then meaningless).
    pub(super) fn solve_inner(&mut self, pos: &Pos) -> i32 {
        self.solve_above(pos, None, 0)
    }

    /// [`Solver::solve_inner`] knowing that the score is at least `floor`
    /// (a score book one ply up proves it): the range starts there, and
    /// MTD(f)'s first probe is at `guess` (clamped into the range). The
    /// book builder guesses the floor itself, so a position whose score is
    /// its floor takes one probe; an analysis guesses 0, which took 10%
    /// fewer nodes on ply-9 positions than the floor.
    pub(super) fn solve_above(&mut self, pos: &Pos, floor: Option<i32>, guess: i32) -> i32 {
        let (cells, n) = (self.geo.cells as i32, pos.moves as i32);
        if pos.can_win_next(&self.geo) {
            return (cells + 1 - n) / 2;
        }
        let mut min = -(cells - n) / 2;
        if let Some(f) = floor {
            min = min.max(f);
        }
        let mut max = (cells + 1 - n) / 2;
        if self.tech.root_bounds && self.tech.table {
            // What earlier searches proved about this very position (a
            // column's child is often met inside another column's search)
            // narrows the range before the first probe.
            if let Some((lo, hi)) = self.table.get(self.key_of(pos)) {
                (min, max) = (min.max(lo), max.min(hi));
            }
        }
        if !self.tech.null_window {
            return self.negamax(pos, min, max);
        }
        if self.tech.aspiration {
            return self.gallop(pos, min, max);
        }
        if self.tech.first_guess {
            return self.mtdf(pos, min, max, guess);
        }
        while min < max {
            // Probe halfway, but nearer 0 first: most positions are close
            // to a draw, and probes near 0 are the cheapest.
            let mut med = min + (max - min) / 2;
            if med <= 0 && min / 2 < med {
                med = min / 2;
            } else if med >= 0 && max / 2 > med {
                med = max / 2;
            }
            let r = self.negamax(pos, med, med + 1);
            if self.aborted {
                return 0;
            }
            if r <= med {
                max = r;
            } else {
                min = r;
            }
        }
        min
    }

    /// The score in `[min, max]` by null-window probes, MTD(f) (Plaat et
    /// al.): each probe asks whether the score reaches the last result, so a
    /// good guess needs two probes.
    fn mtdf(&mut self, pos: &Pos, mut min: i32, mut max: i32, guess: i32) -> i32 {
        let mut g = guess.clamp(min, max);
        while min < max {
            let beta = g.max(min + 1).min(max);
            let r = self.negamax(pos, beta - 1, beta);
            if self.aborted {
                return 0;
            }
            if r < beta {
                max = r.max(min);
            } else {
                min = r.min(max);
            }
            g = r;
        }
        min
    }

    /// The score in `[min, max]` by null-window probes: the first at 0
    /// (clamped into the range), then outwards from the bound that moved,
    /// by steps doubling while it keeps moving the same way.
    fn gallop(&mut self, pos: &Pos, mut min: i32, mut max: i32) -> i32 {
        if min >= max {
            return min;
        }
        let mut med = 0.clamp(min, max - 1);
        let (mut step, mut last_up) = (1, None);
        while min < max {
            let r = self.negamax(pos, med, med + 1);
            if self.aborted {
                return 0;
            }
            let up = r > med;
            if up {
                min = r;
            } else {
                max = r;
            }
            step = if last_up == Some(up) { step * 2 } else { 1 };
            last_up = Some(up);
            // Up: is the score above min + step - 1? Down: at least
            // max - step + 1?
            med = if up { min + step - 1 } else { max - step };
            med = med.clamp(min, (max - 1).max(min));
        }
        min
    }

    /// The table key of `pos` under the techniques in use.
    #[inline]
    pub(super) fn key_of(&self, pos: &Pos) -> u64 {
        table_key(pos, self.tech.symmetry)
    }

    /// Counts a node; true when the search must stop (budget spent, or the
    /// column cancelled by another thread).
    #[inline]
    fn stop(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes >= self.limit {
            self.aborted = true;
            return true;
        }
        if self.nodes & 4095 == 0 && self.cancel.as_ref().is_some_and(|c| c.load(Relaxed)) {
            self.aborted = true;
            self.cancelled = true;
            return true;
        }
        false
    }

    /// Fail-soft negamax: a result `r <= alpha` means score ≤ r, `r >= beta`
    /// means score ≥ r, anything between is exact; a failing result is the
    /// tightest bound the search proved, which may lie beyond the window
    /// (MTD(f) then skips the scores between). The side to move must not be
    /// able to win at once (every caller checks).
    pub(super) fn negamax(&mut self, pos: &Pos, alpha: i32, beta: i32) -> i32 {
        let (slot, known) = (self.table.slot(self.key_of(pos)), Known::default());
        let specialised = self.tech.specialised;
        let standard = specialised && self.geo.is_standard() && searches_as_all(&self.tech);
        #[cfg(target_arch = "x86_64")]
        if specialised && Bmi::<false>::detected() {
            // SAFETY: this CPU has every feature `negamax_bmi` is compiled for.
            return unsafe {
                if standard {
                    self.negamax_bmi::<true>(pos, slot, known, alpha, beta)
                } else {
                    self.negamax_bmi::<false>(pos, slot, known, alpha, beta)
                }
            };
        }
        if standard {
            Portable::<true>::negamax(self, pos, slot, known, alpha, beta)
        } else {
            Portable::<false>::negamax(self, pos, slot, known, alpha, beta)
        }
    }

    /// The geometry the search of flavour `F` reads: the constant
    /// [`Geometry::STANDARD`] when `F` is for it, else this solver's.
    #[inline(always)]
    fn geo<F: Flavor>(&self) -> &Geometry {
        if F::STANDARD {
            &Geometry::STANDARD
        } else {
            &self.geo
        }
    }

    /// The techniques the search of flavour `F` uses: the constant
    /// [`Techniques::ALL`] when `F` is for the standard search (its
    /// switches then cost nothing at run time), else this solver's.
    #[inline(always)]
    fn tech<F: Flavor>(&self) -> Techniques {
        if F::STANDARD {
            Techniques::ALL
        } else {
            self.tech
        }
    }

    /// The search compiled for x86-64 with the bit-manipulation
    /// instructions (`popcnt` counts winning cells in one instruction
    /// rather than a dozen, BMI1/2 and `lzcnt` shorten masks, shifts and
    /// work logarithms); everything it calls is inlined into it, so it all
    /// gets them.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt,bmi1,bmi2,lzcnt")]
    fn negamax_bmi<const STANDARD: bool>(&mut self, pos: &Pos, slot: Slot, known: Known, alpha: i32, beta: i32) -> i32 {
        self.negamax_at::<Bmi<STANDARD>>(pos, slot, known, alpha, beta)
    }

    /// [`Solver::negamax`] with `pos`'s table slot already found, and what
    /// is known of its winning cells; children are searched through `I`.
    #[inline(always)]
    fn negamax_at<I: Flavor>(&mut self, pos: &Pos, slot: Slot, known: Known, mut alpha: i32, mut beta: i32) -> i32 {
        if self.stop() {
            return 0;
        }
        let start = self.nodes;
        let tech = self.tech::<I>();
        let (cells, n) = (self.geo::<I>().cells as i32, pos.moves as i32);
        let mut opponent_wins = known.opponent;
        let next = if tech.non_losing {
            let wins = opponent_wins.unwrap_or_else(|| pos.opponent_winning_cells(self.geo::<I>()));
            opponent_wins = Some(wins);
            let next = pos.non_losing_moves_given(self.geo::<I>(), wins);
            if next == 0 {
                // Every move lets the opponent win at once.
                return -(cells - n) / 2;
            }
            if n >= cells - 2 {
                // Neither of the last two plies can make a line.
                return 0;
            }
            // The opponent cannot win with its next move.
            alpha = alpha.max(-(cells - 2 - n) / 2);
            if alpha >= beta {
                return alpha;
            }
            next
        } else {
            match pos.possible(self.geo::<I>()) {
                0 => return 0,
                next => next,
            }
        };
        // We cannot win with this move, so at best with the one after.
        let mut max = (cells - 1 - n) / 2;
        // With `even_table`, only positions with an even number of empty
        // cells use the table; the others look their children up instead.
        let odd = (cells - n) & 1 == 1;
        let use_table = tech.table && !(tech.even_table && odd);
        if use_table {
            if let Some((lo, hi)) = self.table.get_at(slot) {
                alpha = alpha.max(lo);
                if alpha >= beta {
                    return alpha;
                }
                max = max.min(hi);
            }
        }
        if beta > max {
            beta = max;
            if alpha >= beta {
                return beta;
            }
        }
        if tech.claimeven {
            match self.geo::<I>().claimeven(pos, opponent_wins, alpha, beta) {
                Claim::Nothing => {}
                Claim::AtMost(hi) => {
                    if alpha >= hi {
                        return hi;
                    }
                    beta = beta.min(hi);
                }
                Claim::AtLeast(lo) => {
                    if beta <= lo {
                        return lo;
                    }
                    alpha = alpha.max(lo);
                }
            }
        }
        let mut list = [(0u32, 0u32); MAX_COLS];
        let mut kids: Children = [MaybeUninit::uninit(); MAX_COLS];
        let known = Known {
            opponent: opponent_wins,
            ..known
        };
        let len = match self.order_moves::<I>(pos, next, known, &mut list, &mut kids) {
            Some(len) => len,
            None => {
                // A move leaves two threats the opponent cannot both stop.
                if use_table {
                    self.table.put_at(slot, 0, max, max);
                }
                return max;
            }
        };
        let etc_here = if tech.even_table {
            odd
        } else {
            n + ETC_MIN_EMPTY <= cells
        };
        if tech.table && tech.etc && etc_here {
            if let Some(s) = self.etc_cut(&list[..len], &kids, beta) {
                return s;
            }
        }
        let store = use_table.then_some((slot, start));
        self.search_moves::<I>(pos, store, &list[..len], &kids, alpha, beta)
    }

    /// The child of `col`, written by `order_moves` for every column of the
    /// list it returned.
    #[inline]
    fn kid(kids: &Children, col: u32) -> &Kid {
        // SAFETY: callers pass only columns of the move list, and
        // `order_moves` wrote the child of each column it put in the list.
        unsafe { kids[col as usize].assume_init_ref() }
    }

    /// Searches the ordered moves of `pos` in the window and stores the
    /// result's bound in `store`'s slot (if any), with the nodes counted
    /// since `store`'s node count as its work.
    #[inline(always)]
    fn search_moves<I: Flavor>(
        &mut self,
        pos: &Pos,
        store: Option<(Slot, u64)>,
        list: &[(u32, u32)],
        kids: &Children,
        mut alpha: i32,
        beta: i32,
    ) -> i32 {
        let tech = self.tech::<I>();
        let (cells, n) = (self.geo::<I>().cells as i32, pos.moves as i32);
        let alpha0 = alpha;
        let mut best = NO_LO;
        for &(col, _) in list {
            let kid = Self::kid(kids, col);
            let child = &kid.pos;
            let s = if !tech.non_losing && child.can_win_next(self.geo::<I>()) {
                // Without the non-losing filter the child may win at once,
                // which negamax must not be asked.
                -(cells - n) / 2
            } else {
                -I::negamax(self, child, kid.slot, kid.cells, -beta, -alpha)
            };
            if self.aborted {
                return 0;
            }
            if s >= beta {
                if let Some((slot, start)) = store {
                    self.table.put_at(slot, work_of(self.nodes - start), s, NO_HI);
                }
                return s;
            }
            best = best.max(s);
            alpha = alpha.max(s);
        }
        if let Some((slot, start)) = store {
            // A child inside the window makes the best exact; else it is
            // only an upper bound.
            let lo = if best > alpha0 { best } else { NO_LO };
            self.table.put_at(slot, work_of(self.nodes - start), lo, best);
        }
        best
    }

    /// Fills `list` with the moves of `next` (one bit a column), best first,
    /// and returns how many; `None` when one of them wins by force (see
    /// [`Techniques::double_threat`](super::Techniques::double_threat)).
    #[inline(always)]
    fn order_moves<I: Flavor>(
        &self,
        pos: &Pos,
        next: u64,
        known: Known,
        list: &mut [(u32, u32); MAX_COLS],
        kids: &mut Children,
    ) -> Option<usize> {
        let g = self.geo::<I>();
        let tech = self.tech::<I>();
        let scored = tech.order == MoveOrder::CentreThenThreats;
        let double = tech.double_threat && tech.non_losing;
        // Own winning cells now: a move right below one lets the opponent
        // block it by playing on top.
        let spoil = if tech.spoil_order && scored {
            known.own.unwrap_or_else(|| g.winning_cells(pos.current, pos.mask)) >> 1
        } else {
            0
        };
        let col_at = |i: u32| match tech.order {
            MoveOrder::LeftToRight => i,
            _ => g.order[i as usize] as u32,
        };
        // The moves as one bit each, in the order they are tried: the loop
        // below then visits only them, rather than testing every column
        // (a branch the CPU mispredicted twice a node).
        let mut todo = g.move_bits(next, tech.order != MoveOrder::LeftToRight);
        // The mover's threats on its own rows count half again (see
        // `Techniques::threat_parity`).
        let good = match (tech.threat_parity, pos.moves % 2 == 0) {
            (false, _) => 0,
            (true, true) => g.first_rows,
            (true, false) => g.board ^ g.first_rows,
        };
        // The opponent's winning cells after a move: ours above one of them
        // count for nothing (see `Techniques::dead_threats`).
        // Filled once a node: only a move that blocks one of the
        // opponent's cells (then the node's only move) changes it.
        let theirs = match (tech.dead_threats, known.opponent) {
            (true, Some(theirs)) => theirs,
            _ => 0,
        };
        let dead_now = g.above(theirs);
        let dead = |mv: u64| {
            if mv & theirs == 0 {
                dead_now
            } else {
                g.above(theirs & !mv)
            }
        };
        let mut len = 0;
        while todo != 0 {
            let col = col_at(todo.trailing_zeros());
            todo &= todo - 1;
            let mv = next & g.column_mask(col);
            let mut child = *pos;
            child.play(g, col);
            let slot = self.table.slot(table_key(&child, tech.symmetry));
            if tech.table {
                self.table.prefetch(slot);
            }
            // The mover's winning cells after the move are the child's
            // opponent's: its non-losing filter reuses them.
            let wins = (scored || double).then(|| g.winning_cells(pos.current | mv, pos.mask | mv));
            kids[col as usize] = MaybeUninit::new(Kid {
                pos: child,
                slot,
                cells: Known {
                    opponent: wins,
                    own: known.opponent.map(|w| w & !mv),
                },
            });
            let score = match wins {
                Some(wins) => {
                    if double && forced_win(g, wins, pos.mask | mv) {
                        return None;
                    }
                    match (scored, mv & spoil != 0) {
                        (false, _) => 0,
                        (true, true) => 0,
                        (true, false) => {
                            let live = wins & !dead(mv);
                            2 * live.count_ones() + (live & good).count_ones() + 1
                        }
                    }
                }
                None => 0,
            };
            // Insertion sort, stable: equal scores keep the centre order.
            let mut j = len;
            while j > 0 && list[j - 1].1 < score {
                list[j] = list[j - 1];
                j -= 1;
            }
            list[j] = (col, score);
            len += 1;
        }
        Some(len)
    }

    /// Enhanced transposition cutoff: a child whose stored upper bound
    /// already puts its move at or above beta ends the node without a
    /// search. Only far from the end, where a saved search is worth the
    /// extra probes.
    fn etc_cut(&self, list: &[(u32, u32)], kids: &Children, beta: i32) -> Option<i32> {
        for &(col, _) in list {
            if let Some((_, hi)) = self.table.get_at(Self::kid(kids, col).slot) {
                if -hi >= beta {
                    return Some(-hi);
                }
            }
        }
        None
    }
}

/// One compiled copy of the search: the instruction set it may use, and
/// whether it is the standard search, [`Geometry::STANDARD`] under
/// [`Techniques::ALL`] (whose masks, shifts and switches are then
/// constants). A child is searched by the same copy as its parent.
trait Flavor {
    const STANDARD: bool;
    fn negamax(s: &mut Solver, pos: &Pos, slot: Slot, known: Known, alpha: i32, beta: i32) -> i32;
}

/// Any CPU: the target's baseline instructions.
struct Portable<const STANDARD: bool>;

impl<const STANDARD: bool> Flavor for Portable<STANDARD> {
    const STANDARD: bool = STANDARD;
    fn negamax(s: &mut Solver, pos: &Pos, slot: Slot, known: Known, alpha: i32, beta: i32) -> i32 {
        s.negamax_at::<Self>(pos, slot, known, alpha, beta)
    }
}

/// x86-64 with `popcnt`, BMI1, BMI2 and `lzcnt` (Haswell, Zen and later).
#[cfg(target_arch = "x86_64")]
struct Bmi<const STANDARD: bool>;

#[cfg(target_arch = "x86_64")]
impl<const STANDARD: bool> Bmi<STANDARD> {
    /// Whether this CPU has them (cached by the standard library).
    #[inline]
    fn detected() -> bool {
        use std::arch::is_x86_feature_detected as has;
        has!("popcnt") && has!("bmi1") && has!("bmi2") && has!("lzcnt")
    }
}

#[cfg(target_arch = "x86_64")]
impl<const STANDARD: bool> Flavor for Bmi<STANDARD> {
    const STANDARD: bool = STANDARD;
    #[inline(always)]
    fn negamax(s: &mut Solver, pos: &Pos, slot: Slot, known: Known, alpha: i32, beta: i32) -> i32 {
        // SAFETY: only `negamax_bmi`'s search calls this, after
        // `Bmi::detected` said yes.
        unsafe { s.negamax_bmi::<STANDARD>(pos, slot, known, alpha, beta) }
    }
}

/// The table key of `pos`: shared with its mirror image under `symmetry`.
/// The search's copies pass their own switch, a constant in the standard
/// ones.
#[inline(always)]
fn table_key(pos: &Pos, symmetry: bool) -> u64 {
    if symmetry {
        pos.symmetric_key()
    } else {
        pos.key()
    }
}

/// Whether the search under `t` is the search under [`Techniques::ALL`]:
/// the switches of the driver above it (the window and the probes) may
/// differ, since only the driver reads them (threads helping with a column
/// flip `aspiration`).
fn searches_as_all(t: &Techniques) -> bool {
    let all = Techniques::ALL;
    let driver = Techniques {
        null_window: all.null_window,
        aspiration: all.aspiration,
        root_bounds: all.root_bounds,
        first_guess: all.first_guess,
        ..*t
    };
    driver == all
}

/// Whether the side that just moved (its pieces' winning cells `wins`,
/// all pieces `mask`) now wins by force, the opponent being unable to win
/// at once: two playable winning cells, or one with another of its winning
/// cells right above (the block makes the second playable).
#[inline]
fn forced_win(g: &Geometry, wins: u64, mask: u64) -> bool {
    let playable = wins & ((mask + g.bottom) & g.board);
    // Two bits, or one under another winning cell (none if none playable).
    (playable & playable.wrapping_sub(1)) | (playable & (wins >> 1)) != 0
}
