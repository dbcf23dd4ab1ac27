//! The transposition table: both bounds of a position's score, by key.
//!
//! Each entry holds the full 64-bit key (so a hit is never a collision) and a
//! lower and an upper bound. Every bound stored is a true bound of the exact
//! score, whatever window produced it, so bounds from different searches of
//! the same position can be intersected on store: the null-window searches of
//! [`Solver::solve`](super::Solver::solve) probe the same positions with
//! different windows, and keeping the lower bound from one probe with the
//! upper bound from another is what lets later probes stop at once. A
//! different key in the slot is simply replaced (the newest entry is the one
//! most likely to be needed again).

/// A key no position has: each column's part of a key is below
/// `2^(rows+1) - 1`, so no key has all of a column's bits set.
const EMPTY: u64 = u64::MAX;

#[derive(Clone, Copy)]
struct Entry {
    key: u64,
    lo: i8,
    hi: i8,
}

pub(crate) struct Table {
    entries: Vec<Entry>,
    shift: u32,
}

impl Table {
    /// `2^log2` entries of 16 bytes.
    pub fn new(log2: u32) -> Table {
        Table {
            entries: vec![
                Entry {
                    key: EMPTY,
                    lo: i8::MIN,
                    hi: i8::MAX
                };
                1usize << log2
            ],
            shift: 64 - log2,
        }
    }

    #[inline]
    fn index(&self, key: u64) -> usize {
        // Fibonacci hashing: keys of nearby positions differ in a few low
        // bits of one column, which the multiply spreads to the top bits.
        if self.shift == 64 {
            return 0;
        }
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The (lower, upper) bounds stored for `key`.
    #[inline]
    pub fn get(&self, key: u64) -> Option<(i32, i32)> {
        let e = &self.entries[self.index(key)];
        (e.key == key).then_some((e.lo as i32, e.hi as i32))
    }

    /// Records `lo <= score <= hi` for `key`, intersected with what the slot
    /// already knows about the same key.
    #[inline]
    pub fn put(&mut self, key: u64, lo: i32, hi: i32) {
        let i = self.index(key);
        let e = &mut self.entries[i];
        if e.key == key {
            e.lo = e.lo.max(lo as i8);
            e.hi = e.hi.min(hi as i8);
        } else {
            *e = Entry {
                key,
                lo: lo as i8,
                hi: hi as i8,
            };
        }
    }

    pub fn clear(&mut self) {
        for e in &mut self.entries {
            e.key = EMPTY;
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }
}
