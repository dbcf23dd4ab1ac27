//! The transposition table: both bounds of a position's score, by key, in
//! one 8-byte word per entry that threads share without locks.
//!
//! The table has a prime number `p` of slots. A key goes to slot `key mod p`
//! and the slot stores the quotient `key / p`: slot and quotient together
//! give the key back, so a hit is never a collision (Pons' trick, with the
//! quotient instead of the low bits, which needs no condition on `p` beyond
//! `key / p` fitting the word). A word packs
//! `(quotient + 1) << 14 | (lo + 64) << 7 | (hi + 64)`; 0 is an empty slot.
//! Keys have `(rows + 1) × cols` bits; [`Table::new`] makes `p` large enough
//! that every quotient fits 49 bits (6×7's 49-bit keys fit any size).
//!
//! Every bound stored is a true bound of the exact score, whatever window
//! produced it, so bounds from different searches of the same position can be
//! intersected on store: the null-window searches of
//! [`Solver::solve`](super::Solver::solve) probe the same positions with
//! different windows, and keeping the lower bound from one probe with the
//! upper bound from another is what lets later probes stop at once. A
//! different key in the slot is simply replaced (the newest entry is the one
//! most likely to be needed again).
//!
//! Threads: each word is an `AtomicU64` read and written with relaxed
//! ordering. A word is never torn, so a reader sees some thread's whole entry
//! (a true bound of the key it names) or nothing; two threads merging into the
//! same slot at once may lose one update, which costs only a re-search.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Bits of the quotient in a word.
const QUOTIENT_BITS: u32 = 49;

pub(crate) struct Table {
    entries: Vec<AtomicU64>,
    /// The prime number of slots.
    p: u64,
    /// `floor(2^64 / p) + 1`: `key * magic >> 64` is `key / p` or one more
    /// (see [`Table::slot`]), a multiply instead of a division.
    magic: u64,
}

/// Where a key lives: its slot and the quotient stored there.
#[derive(Clone, Copy)]
pub(crate) struct Slot {
    index: usize,
    q: u64,
}

/// Asks Linux to back the (not yet touched) buffer of `v` with 2 MiB
/// pages. The table is read at random, one word a node, so with 4 KiB pages
/// nearly every probe of a large table also misses the TLB; with huge pages
/// the page walk mostly disappears. Only advice: where the kernel has no
/// transparent huge pages (or another system), nothing changes.
fn huge_pages(v: &Vec<AtomicU64>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let end = start + v.capacity() * std::mem::size_of::<AtomicU64>();
        let (lo, hi) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
        if hi > lo {
            // SAFETY: [lo, hi) lies inside the vector's own allocation, and
            // MADV_HUGEPAGE changes neither its contents nor its mapping.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

/// The largest prime at most `n` (`n ≥ 2`).
fn prime_at_most(n: u64) -> u64 {
    let is_prime = |m: u64| m >= 2 && (2..).take_while(|d| d * d <= m).all(|d| m % d != 0);
    (2..=n).rev().find(|&m| is_prime(m)).unwrap_or(2)
}

#[inline]
fn encode(q: u64, lo: i32, hi: i32) -> u64 {
    ((q + 1) << 14) | (((lo.clamp(-64, 63) + 64) as u64) << 7) | (hi.clamp(-64, 63) + 64) as u64
}

#[inline]
fn decode_bounds(w: u64) -> (i32, i32) {
    (((w >> 7) & 127) as i32 - 64, (w & 127) as i32 - 64)
}

impl Table {
    /// About `2^log2` slots of 8 bytes (the largest prime at most `2^log2`),
    /// for keys of `key_bits` bits; grown if needed so quotients fit.
    pub fn new(log2: u32, key_bits: u32) -> Table {
        let log2 = log2.max(key_bits.saturating_sub(QUOTIENT_BITS) + 1).max(1);
        let p = prime_at_most(1u64 << log2);
        let mut entries = Vec::with_capacity(p as usize);
        huge_pages(&entries);
        entries.resize_with(p as usize, || AtomicU64::new(0));
        Table {
            entries,
            p,
            magic: (u64::MAX / p).wrapping_add(1),
        }
    }

    /// `key mod p` and `key / p` without a division: with `magic` above
    /// `2^64 / p` by less than 1, `key * magic / 2^64` exceeds `key / p` by
    /// less than `key / 2^64 < 1`, so its floor is the quotient or one more.
    #[inline]
    pub fn slot(&self, key: u64) -> Slot {
        let mut q = ((key as u128 * self.magic as u128) >> 64) as u64;
        if q as u128 * self.p as u128 > key as u128 {
            q -= 1;
        }
        Slot {
            index: (key - q * self.p) as usize,
            q,
        }
    }

    /// Starts loading slot `s` into the cache, so that a probe made a
    /// little later does not wait for memory.
    #[inline]
    pub fn prefetch(&self, s: Slot) {
        #[cfg(target_arch = "x86_64")]
        {
            let i = s.index;
            // SAFETY: a prefetch is only a hint; the address is inside the table.
            unsafe {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                _mm_prefetch::<_MM_HINT_T0>(self.entries.as_ptr().add(i) as *const i8);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = s;
    }

    /// The (lower, upper) bounds stored for `key`. Lower bounds of -64 and
    /// upper ones of 63 mean "nothing known".
    #[inline]
    pub fn get(&self, key: u64) -> Option<(i32, i32)> {
        self.get_at(self.slot(key))
    }

    /// [`Table::get`] for a key whose slot is known.
    #[inline]
    pub fn get_at(&self, s: Slot) -> Option<(i32, i32)> {
        let w = self.entries[s.index].load(Relaxed);
        (w >> 14 == s.q + 1).then(|| decode_bounds(w))
    }

    /// Records `lo <= score <= hi` for `key`, intersected with what the slot
    /// already knows about the same key.
    #[inline]
    #[cfg(test)]
    pub fn put(&self, key: u64, lo: i32, hi: i32) {
        self.put_at(self.slot(key), lo, hi)
    }

    /// [`Table::put`] for a key whose slot is known.
    #[inline]
    pub fn put_at(&self, s: Slot, lo: i32, hi: i32) {
        let Slot { index: i, q } = s;
        let e = &self.entries[i];
        let w = e.load(Relaxed);
        let (lo, hi) = if w >> 14 == q + 1 {
            let (l, h) = decode_bounds(w);
            (l.max(lo), h.min(hi))
        } else {
            (lo, hi)
        };
        e.store(encode(q, lo, hi), Relaxed);
    }

    pub fn clear(&self) {
        for e in &self.entries {
            e.store(0, Relaxed);
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_divide_exactly() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for log2 in [1, 3, 10, 17, 24] {
            let t = Table::new(log2, 20);
            for k in (0..2000u64).chain([u64::MAX, u64::MAX - 1, t.p, t.p - 1, t.p + 1]) {
                let k = if k < 2000 {
                    rng.gen::<u64>() >> rng.gen_range(0..64)
                } else {
                    k
                };
                let s = t.slot(k);
                assert_eq!((s.index as u64, s.q), (k % t.p, k / t.p), "{k} mod {}", t.p);
            }
        }
    }

    #[test]
    fn primes() {
        assert_eq!(prime_at_most(2), 2);
        assert_eq!(prime_at_most(16), 13);
        assert_eq!(prime_at_most(1 << 10), 1021);
    }

    #[test]
    fn bounds_round_trip_and_merge() {
        let t = Table::new(4, 64);
        assert!(t.len() >= 1 << 14);
        let k = u64::MAX - 5;
        assert_eq!(t.get(k), None);
        t.put(k, -3, 63);
        assert_eq!(t.get(k), Some((-3, 63)));
        t.put(k, -64, 7);
        assert_eq!(t.get(k), Some((-3, 7)));
        // Another key in the same slot replaces it.
        let k2 = k - t.p;
        t.put(k2, 1, 2);
        assert_eq!(t.get(k), None);
        assert_eq!(t.get(k2), Some((1, 2)));
        t.clear();
        assert_eq!(t.get(k2), None);
        let small = Table::new(3, 30);
        assert_eq!(small.len(), 7);
        small.put(0, -32, 32);
        assert_eq!(small.get(0), Some((-32, 32)));
    }
}
