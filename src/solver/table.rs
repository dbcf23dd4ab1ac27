//! The transposition table: both bounds of a position's score, by key, in
//! 8-byte words, two to a bucket, that threads share without locks.
//!
//! The table has a prime number `p` of buckets. A key goes to bucket
//! `key mod p` and its word stores the quotient `key / p`: bucket and
//! quotient together give the key back, so a hit is never a collision (Pons'
//! trick, with the quotient instead of the low bits, which needs no condition
//! on `p` beyond `key / p` fitting the word). A word packs
//! `(quotient + 1) << 19 | work << 14 | (lo + 64) << 7 | (hi + 64)`; 0 is
//! empty. `work` is `log2` of the nodes the search that stored it took.
//! Keys have `(rows + 1) × cols` bits; [`Table::new`] makes `p` large enough
//! that every quotient fits 45 bits (for 6×7's 49-bit keys, any table of 64
//! words or more).
//!
//! Why two words: with one word a bucket, every store replaces what was
//! there, and a cheap position near the leaves pushes out one whose search
//! took millions of nodes. A bucket's first word keeps the costliest recent
//! search (depth-preferred, by work), its second the newest, so the big
//! subtrees stay while the leaves churn; both words sit in one 16-byte,
//! aligned half of a cache line, so a probe still costs one memory access.
//!
//! Every bound stored is a true bound of the exact score, whatever window
//! produced it, so bounds from different searches of the same position can be
//! intersected on store: the null-window searches of
//! [`Solver::solve`](super::Solver::solve) probe the same positions with
//! different windows, and keeping the lower bound from one probe with the
//! upper bound from another is what lets later probes stop at once. A
//! new key goes into its bucket as [`Table::put_at`] says.
//!
//! Threads: each word is an `AtomicU64` read and written with relaxed
//! ordering. A word is never torn, so a reader sees some thread's whole entry
//! (a true bound of the key it names) or nothing; two threads merging into the
//! same slot at once may lose one update, which costs only a re-search.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Bits of the quotient in a word.
const QUOTIENT_BITS: u32 = 64 - 19;
/// Bits of a word's work: `log2` of the nodes its search took, up to 31.
const WORK_BITS: u32 = 5;

/// Two words, one key each, in one half of a cache line: a key may live in
/// either, so a probe reads both from one memory access.
#[repr(C, align(16))]
struct Bucket([AtomicU64; 2]);

pub(crate) struct Table {
    buckets: Vec<Bucket>,
    /// The prime number of buckets.
    p: u64,
    /// `floor(2^64 / p) + 1`: `key * magic >> 64` is `key / p` or one more
    /// (see [`Table::slot`]), a multiply instead of a division.
    magic: u64,
}

/// Where a key lives: its bucket and the quotient stored there.
#[derive(Clone, Copy)]
pub(crate) struct Slot {
    index: usize,
    q: u64,
}

/// Asks Linux to back the (not yet touched) buffer of `v` with 2 MiB
/// pages. The table is read at random, one bucket a node, so with 4 KiB
/// pages nearly every probe of a large table also misses the TLB; with huge
/// pages the page walk mostly disappears. Only advice: where the kernel has
/// no transparent huge pages (or another system), nothing changes.
fn huge_pages<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let end = start + v.capacity() * std::mem::size_of::<T>();
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

/// `log2` of a search's node count, the work a word keeps.
#[inline]
pub(crate) fn work_of(nodes: u64) -> u32 {
    (63 - (nodes | 1).leading_zeros()).min((1 << WORK_BITS) - 1)
}

#[inline]
fn encode(q: u64, work: u32, lo: i32, hi: i32) -> u64 {
    ((q + 1) << 19) | ((work as u64) << 14) | (((lo.clamp(-64, 63) + 64) as u64) << 7) | (hi.clamp(-64, 63) + 64) as u64
}

#[inline]
fn decode_bounds(w: u64) -> (i32, i32) {
    (((w >> 7) & 127) as i32 - 64, (w & 127) as i32 - 64)
}

#[inline]
fn work(w: u64) -> u32 {
    ((w >> 14) & ((1 << WORK_BITS) - 1)) as u32
}

impl Table {
    /// About `2^log2` words of 8 bytes (two in each of the largest prime
    /// number of buckets at most `2^(log2 - 1)`), for keys of `key_bits`
    /// bits; grown if needed so quotients fit.
    pub fn new(log2: u32, key_bits: u32) -> Table {
        let log2 = log2.max(key_bits.saturating_sub(QUOTIENT_BITS) + 2).max(2);
        let p = prime_at_most(1u64 << (log2 - 1));
        let mut buckets = Vec::with_capacity(p as usize);
        huge_pages(&buckets);
        buckets.resize_with(p as usize, || Bucket([AtomicU64::new(0), AtomicU64::new(0)]));
        Table {
            buckets,
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
                _mm_prefetch::<_MM_HINT_T0>(self.buckets.as_ptr().add(i) as *const i8);
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
        let b = &self.buckets[s.index].0;
        let (w0, w1) = (b[0].load(Relaxed), b[1].load(Relaxed));
        if w0 >> 19 == s.q + 1 {
            Some(decode_bounds(w0))
        } else if w1 >> 19 == s.q + 1 {
            Some(decode_bounds(w1))
        } else {
            None
        }
    }

    /// Records `lo <= score <= hi` for `key`, found by a search of about
    /// `2^work` nodes, intersected with what the table already knows about
    /// the same key.
    #[inline]
    #[cfg(test)]
    pub fn put(&self, key: u64, work: u32, lo: i32, hi: i32) {
        self.put_at(self.slot(key), work, lo, hi)
    }

    /// [`Table::put`] for a key whose slot is known. A new key takes the
    /// bucket's first word if its work is at least that word's, moving the
    /// old entry to the second; else it takes the second. So the first word
    /// keeps the costliest recent search, the second the newest.
    #[inline]
    pub fn put_at(&self, s: Slot, work: u32, lo: i32, hi: i32) {
        let Slot { index: i, q } = s;
        let b = &self.buckets[i].0;
        let (w0, w1) = (b[0].load(Relaxed), b[1].load(Relaxed));
        let merge = |w: u64| {
            let (l, h) = decode_bounds(w);
            encode(q, self::work(w).max(work), l.max(lo), h.min(hi))
        };
        if w0 >> 19 == q + 1 {
            b[0].store(merge(w0), Relaxed);
        } else if w1 >> 19 == q + 1 {
            let w = merge(w1);
            if self::work(w) >= self::work(w0) {
                b[0].store(w, Relaxed);
                b[1].store(w0, Relaxed);
            } else {
                b[1].store(w, Relaxed);
            }
        } else if work >= self::work(w0) {
            b[0].store(encode(q, work, lo, hi), Relaxed);
            b[1].store(w0, Relaxed);
        } else {
            b[1].store(encode(q, work, lo, hi), Relaxed);
        }
    }

    pub fn clear(&self) {
        for b in &self.buckets {
            b.0[0].store(0, Relaxed);
            b.0[1].store(0, Relaxed);
        }
    }

    /// The number of words (entries).
    pub fn len(&self) -> usize {
        2 * self.buckets.len()
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
        assert!(t.len() >= 1 << 19, "quotients of 64-bit keys must fit");
        let k = u64::MAX - 5;
        assert_eq!(t.get(k), None);
        t.put(k, 3, -3, 63);
        assert_eq!(t.get(k), Some((-3, 63)));
        t.put(k, 1, -64, 7);
        assert_eq!(t.get(k), Some((-3, 7)));
        t.clear();
        assert_eq!(t.get(k), None);
        let small = Table::new(3, 30);
        assert_eq!(small.len(), 6);
        small.put(0, 0, -32, 32);
        assert_eq!(small.get(0), Some((-32, 32)));
    }

    #[test]
    fn a_bucket_keeps_the_costliest_and_the_newest() {
        let t = Table::new(10, 40);
        let key = |i: u64| 17 + i * t.p;
        t.put(key(0), 3, -3, 63);
        // A cheaper key joins it in the bucket's second word.
        t.put(key(1), 1, 1, 2);
        assert_eq!((t.get(key(0)), t.get(key(1))), (Some((-3, 63)), Some((1, 2))));
        // Another cheap one replaces the newest, not the costliest.
        t.put(key(2), 0, 4, 4);
        assert_eq!(
            (t.get(key(0)), t.get(key(1)), t.get(key(2))),
            (Some((-3, 63)), None, Some((4, 4)))
        );
        // A costlier one takes the first word; the old first moves down.
        t.put(key(3), 5, -1, 0);
        assert_eq!(
            (t.get(key(0)), t.get(key(2)), t.get(key(3))),
            (Some((-3, 63)), None, Some((-1, 0)))
        );
        // A merge that makes the second word costlier moves it up.
        t.put(key(0), 9, -2, 63);
        assert_eq!((t.get(key(0)), t.get(key(3))), (Some((-2, 63)), Some((-1, 0))));
        t.put(key(4), 6, 0, 0);
        assert_eq!(
            (t.get(key(0)), t.get(key(3)), t.get(key(4))),
            (Some((-2, 63)), None, Some((0, 0)))
        );
        // Other buckets are untouched.
        assert_eq!(t.get(18), None);
    }

    #[test]
    fn work_is_a_log2() {
        assert_eq!(
            (work_of(0), work_of(1), work_of(2), work_of(3), work_of(1024)),
            (0, 0, 1, 1, 10)
        );
        assert_eq!(work_of(u64::MAX), 31);
    }
}
