//! The transposition table: both bounds of a position's score, by key, in
//! 8-byte words, two to a bucket, that threads share without locks.
//!
//! The table has `2^b` buckets. A key of `k` bits is first mixed by a
//! multiply with an odd constant, modulo `2^k`, which is a bijection of the
//! `k`-bit keys: the mixed key's top `b` bits pick the bucket and its other
//! `k - b` bits, the *quotient*, are what the word stores. Bucket and
//! quotient together give the mixed key, hence the key, back, so a hit is
//! never a collision (Pons' trick, with a power-of-two table: one 64-bit
//! multiply a key, where a prime number of buckets took a 128-bit multiply
//! and a correction; the search computes a slot for every child). A word
//! packs `(quotient + 1) << 19 | work << 14 | (lo + 64) << 7 | (hi + 64)`;
//! 0 is empty. `work` is `log2` of the nodes the search that stored it
//! took. Keys have `(rows + 1) × cols` bits; [`Table::new`] makes `b` large
//! enough that every quotient fits 45 bits (for 6×7's 49-bit keys, any
//! table of 32 words or more).
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
    /// `2^b` buckets.
    buckets: Vec<Bucket>,
    /// The low `k` bits: the keys' bits.
    key_mask: u64,
    /// `k - b`: the quotient's bits.
    shift: u32,
}

/// The mixing multiplier (odd, so a bijection modulo any power of two):
/// `2^64` divided by the golden ratio, as in Fibonacci hashing, whose top
/// bits depend on every bit of the key.
const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

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
    /// About `2^log2` words of 8 bytes (two in each of `2^(log2 - 1)`
    /// buckets), for keys of `key_bits` bits; grown if needed so quotients
    /// fit, and no larger than one word a key.
    pub fn new(log2: u32, key_bits: u32) -> Table {
        let key_bits = key_bits.clamp(1, 64);
        let log2 = log2.max(key_bits.saturating_sub(QUOTIENT_BITS) + 1).max(2);
        let b = (log2 - 1).min(key_bits);
        let mut buckets = Vec::with_capacity(1 << b);
        huge_pages(&buckets);
        buckets.resize_with(1 << b, || Bucket([AtomicU64::new(0), AtomicU64::new(0)]));
        Table {
            buckets,
            key_mask: u64::MAX >> (64 - key_bits),
            shift: key_bits - b,
        }
    }

    /// The mixed key (see the module doc): its top bits are the bucket,
    /// the rest the quotient.
    #[inline]
    pub fn slot(&self, key: u64) -> Slot {
        let h = key.wrapping_mul(MIX) & self.key_mask;
        Slot {
            index: (h >> self.shift) as usize,
            q: h & !(u64::MAX << self.shift),
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

    /// The key of bucket `index` and quotient `q`: the mix undone by the
    /// inverse of `MIX` modulo `2^64` (Newton's iteration doubles the
    /// correct low bits each step).
    fn key_at(t: &Table, index: usize, q: u64) -> u64 {
        let mut inv = MIX;
        for _ in 0..6 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(MIX.wrapping_mul(inv)));
        }
        ((index as u64) << t.shift | q).wrapping_mul(inv) & t.key_mask
    }

    #[test]
    fn slots_give_the_key_back() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for (log2, bits) in [(1, 20), (3, 20), (10, 49), (17, 49), (24, 49), (19, 64), (4, 64)] {
            let t = Table::new(log2, bits);
            for _ in 0..2000 {
                let k = rng.gen::<u64>() >> rng.gen_range(0..64) & t.key_mask;
                let s = t.slot(k);
                assert!(s.index < t.buckets.len() && s.q < 1 << QUOTIENT_BITS);
                assert_eq!(key_at(&t, s.index, s.q), k, "log2 {log2}, {bits} bits");
            }
        }
        // Every key of a small shape has its own slot, even in a table
        // with more buckets than keys.
        for log2 in [4, 12, 20] {
            let t = Table::new(log2, 12);
            let slots: std::collections::HashSet<_> = (0..1u64 << 12)
                .map(|k| {
                    let s = t.slot(k);
                    (s.index, s.q)
                })
                .collect();
            assert_eq!(slots.len(), 1 << 12);
        }
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
        assert_eq!(small.len(), 8);
        small.put(0, 0, -32, 32);
        assert_eq!(small.get(0), Some((-32, 32)));
    }

    #[test]
    fn a_bucket_keeps_the_costliest_and_the_newest() {
        let t = Table::new(10, 40);
        let key = |i: u64| key_at(&t, 17, i);
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
        assert_eq!(t.get(key_at(&t, 18, 0)), None);
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
