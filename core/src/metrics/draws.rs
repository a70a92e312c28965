//! The draws of the stratified bootstrap ([`super::bootstrap`], [`super::ci`]): each class's
//! resample as counts (how often each of its samples is drawn) in the order of the first score
//! column, so that a resample is evaluated in one sequential walk down that column and no
//! draw lands at a random place of an `n`-long array (issue 70: at `10^7` rows the old draws
//! in index order, a random increment and a random read per row, cost about 20 ns a row).
//!
//! The scheme, [`DRAW_SCHEME`]: a class of `m` samples is drawn `m` times with replacement,
//! its samples ranked by the first column (descending score, ties by index: the order of
//! [`super::ranked::RankedColumn`]) and cut into blocks of [`BLOCK`] consecutive ranks.
//!
//! 1. The block totals: `m` draws of a rank uniform on `0..m`, each counted in its block
//!    (a few thousand counters, in cache): the totals are multinomial over the blocks with
//!    probabilities proportional to their sizes.
//! 2. Given its total `T_j`, block `j`'s counts: `T_j` draws of a rank uniform within the
//!    block, counted (one block's counters, in cache).
//!
//! Given the totals, the draws within a block are independent and uniform on it, so the counts
//! are exactly the multinomial of `m` draws with replacement, the stratified bootstrap's
//! resample; only which sample gets which count differs from a draw in index order, and no
//! statistic of a resample depends on that. The generator is ChaCha8 seeded with the
//! bootstrap's seed, resample `b` on stream `b`, each class's totals and each block in a region
//! of `2^36` words of its own ([`Region`]): a block is drawn alike whether or not the blocks
//! before it were, on any thread, in any order, so the walk draws a block only when it reaches
//! it and stops drawing where the statistic stops reading.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The name of the bootstrap's draws, written beside every interval it makes (JSON, CSV and
/// tables), so that a saved result says which scheme drew its resamples.
pub const DRAW_SCHEME: &str = "class-rank blocks (ChaCha8)";

/// Ranks per block of a class: 4096 counters of 4 bytes stay in the first-level cache.
pub(crate) const BLOCK: usize = 4096;

/// Where a class's draws lie in its resample's stream: `2^36` words each, more than the two
/// words per draw that a block or a class of up to `2^31` samples can take.
#[derive(Debug, Clone, Copy)]
enum Region {
    /// The block totals of class 0 (positives) or 1 (negatives).
    Totals(u64),
    /// Block `j` of class `c`: `(c, j)`.
    Block(u64, u64),
}

impl Region {
    fn word(self) -> u128 {
        let index = match self {
            Region::Totals(c) => c,
            Region::Block(c, j) => 2 + 2 * j + c,
        };
        u128::from(index) << 36
    }
}

/// The generator of one resample: ChaCha8 seeded with the bootstrap's seed, on stream `b`.
#[derive(Clone)]
pub(crate) struct ResampleStream {
    start: ChaCha8Rng,
}

impl ResampleStream {
    pub(crate) fn new(seed: u64, resample: usize) -> Self {
        let mut start = ChaCha8Rng::seed_from_u64(seed);
        start.set_stream(resample as u64);
        ResampleStream { start }
    }

    fn at(&self, region: Region) -> ChaCha8Rng {
        let mut rng = self.start.clone();
        rng.set_word_pos(region.word());
        rng
    }
}

/// A region's words of the stream, read from a buffer the generator fills.
struct Words {
    rng: ChaCha8Rng,
    buf: [u32; 256],
    at: usize,
}

impl Words {
    fn new(rng: ChaCha8Rng) -> Self {
        Words {
            rng,
            buf: [0; 256],
            at: 256,
        }
    }

    #[inline]
    fn next(&mut self) -> u32 {
        if self.at == self.buf.len() {
            self.rng.fill(&mut self.buf[..]);
            self.at = 0;
        }
        self.at += 1;
        self.buf[self.at - 1]
    }

    /// `count` ranks uniform on `0..m`, exactly (Lemire 2019), each handed to `take`: the high
    /// word of `word * m`, a word skipped when its low word falls below `2^32 mod m` (those
    /// would favour some ranks; at most `m` of the `2^32` words).
    #[inline]
    fn ranks(&mut self, m: u32, count: usize, mut take: impl FnMut(usize)) {
        let skip_below = m.wrapping_neg() % m;
        let mut left = count;
        while left > 0 {
            if self.at == self.buf.len() {
                self.rng.fill(&mut self.buf[..]);
                self.at = 0;
            }
            let end = self.buf.len().min(self.at + left);
            for &w in &self.buf[self.at..end] {
                let full = u64::from(w) * u64::from(m);
                if (full as u32) < skip_below {
                    left += 1;
                    continue;
                }
                take((full >> 32) as usize);
            }
            left -= end - self.at;
            self.at = end;
        }
    }
}

/// One class's draws in one resample: its block totals, drawn when made, and each block's
/// counts on demand ([`ClassDraws::block`]).
pub(crate) struct ClassDraws {
    stream: ResampleStream,
    class: u64,
    size: usize,
    totals: Vec<u32>,
}

impl ClassDraws {
    /// The draws of class `class` (0 positives, 1 negatives) of `size` samples in the
    /// resample `stream` draws; `totals` is a buffer to reuse (its contents are replaced).
    pub(crate) fn new(
        stream: &ResampleStream,
        class: u64,
        size: usize,
        mut totals: Vec<u32>,
    ) -> Self {
        let blocks = size.div_ceil(BLOCK);
        totals.clear();
        totals.resize(blocks, 0);
        if blocks == 1 {
            totals[0] = size as u32;
        } else if blocks > 1 {
            let mut words = Words::new(stream.at(Region::Totals(class)));
            words.ranks(size as u32, size, |r| totals[r / BLOCK] += 1);
        }
        ClassDraws {
            stream: stream.clone(),
            class,
            size,
            totals,
        }
    }

    /// The number of blocks.
    pub(crate) fn blocks(&self) -> usize {
        self.totals.len()
    }

    /// The counts of block `j` (ranks `j BLOCK ..`, at most [`BLOCK`] of them) into `out`,
    /// which is cleared first; returns how many ranks the block has. A full block's ranks are
    /// 12 bits: each word gives two (its bits 0-11 and 16-27), with nothing to draw again.
    pub(crate) fn block(&self, j: usize, out: &mut [u32]) -> usize {
        let len = BLOCK.min(self.size - j * BLOCK);
        let counts = &mut out[..len];
        counts.fill(0);
        let total = self.totals[j] as usize;
        if len == 1 {
            counts[0] = total as u32;
            return len;
        }
        let mut words = Words::new(self.stream.at(Region::Block(self.class, j as u64)));
        if len == BLOCK {
            const MASK: u32 = BLOCK as u32 - 1;
            for _ in 0..total / 2 {
                let w = words.next();
                counts[(w & MASK) as usize] += 1;
                counts[((w >> 16) & MASK) as usize] += 1;
            }
            if total % 2 == 1 {
                counts[(words.next() & MASK) as usize] += 1;
            }
        } else {
            words.ranks(len as u32, total, |r| counts[r] += 1);
        }
        len
    }

    /// The totals buffer back, for the next resample.
    pub(crate) fn into_buffer(self) -> Vec<u32> {
        self.totals
    }
}

/// A class's counts read in rank order, one block drawn at a time: `counts[at]` is the count
/// of the next rank; past the last rank it reads 0.
pub(crate) struct Cursor {
    draws: ClassDraws,
    /// The current block's counts, and one 0 after them.
    pub(crate) counts: Vec<u32>,
    /// The next rank within the block.
    pub(crate) at: usize,
    /// The block's length (`usize::MAX` once every block is read).
    pub(crate) len: usize,
    block: usize,
}

impl Cursor {
    /// A cursor at the first rank of `draws`, with `counts` (at least `BLOCK + 1` long) as its
    /// buffer.
    pub(crate) fn new(draws: ClassDraws, mut counts: Vec<u32>) -> Self {
        counts.resize(counts.len().max(BLOCK + 1), 0);
        let mut c = Cursor {
            draws,
            counts,
            at: 0,
            len: 0,
            block: 0,
        };
        c.load();
        c
    }

    fn load(&mut self) {
        if self.block < self.draws.blocks() {
            self.len = self.draws.block(self.block, &mut self.counts);
            self.counts[self.len] = 0;
        } else {
            self.counts[0] = 0;
            self.len = usize::MAX;
        }
        self.at = 0;
    }

    /// Past the block's last rank: draw the next block.
    #[inline]
    pub(crate) fn next_block(&mut self) {
        self.block += 1;
        self.load();
    }

    /// The buffers back, for the next resample.
    pub(crate) fn into_buffers(self) -> (Vec<u32>, Vec<u32>) {
        (self.draws.into_buffer(), self.counts)
    }
}

/// The draw buffers of one thread, reused from resample to resample.
#[derive(Default)]
pub(crate) struct DrawBuffers {
    totals: [Vec<u32>; 2],
    blocks: [Vec<u32>; 2],
}

impl DrawBuffers {
    /// The cursors of resample `b` of the bootstrap seeded `seed`, over `classes` (positives,
    /// negatives).
    pub(crate) fn cursors(&mut self, seed: u64, b: usize, classes: (usize, usize)) -> [Cursor; 2] {
        let stream = ResampleStream::new(seed, b);
        let [t0, t1] = &mut self.totals;
        let [b0, b1] = &mut self.blocks;
        [
            Cursor::new(
                ClassDraws::new(&stream, 0, classes.0, std::mem::take(t0)),
                std::mem::take(b0),
            ),
            Cursor::new(
                ClassDraws::new(&stream, 1, classes.1, std::mem::take(t1)),
                std::mem::take(b1),
            ),
        ]
    }

    /// The cursors' buffers back, for the next resample.
    pub(crate) fn keep(&mut self, cursors: [Cursor; 2]) {
        for (c, cursor) in cursors.into_iter().enumerate() {
            (self.totals[c], self.blocks[c]) = cursor.into_buffers();
        }
    }

    /// Each sample's count in resample `b` into `out`, by slot (`k` the `k`-th positive,
    /// `N+ + k` the `k`-th negative), drawn along `slots`: every slot once, in the first
    /// column's rank order.
    pub(crate) fn slot_counts(
        &mut self,
        slots: impl Iterator<Item = usize>,
        (seed, b): (u64, usize),
        classes: (usize, usize),
        out: &mut [u32],
    ) {
        let mut cursors = self.cursors(seed, b, classes);
        for slot in slots {
            let c = &mut cursors[usize::from(slot >= classes.0)];
            out[slot] = c.counts[c.at];
            c.at += 1;
            if c.at == c.len {
                c.next_block();
            }
        }
        self.keep(cursors);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every count of a class, block after block.
    fn counts(seed: u64, b: usize, class: u64, size: usize) -> Vec<u32> {
        let draws = ClassDraws::new(&ResampleStream::new(seed, b), class, size, Vec::new());
        let mut out = Vec::new();
        let mut buf = vec![0; BLOCK];
        for j in 0..draws.blocks() {
            let len = draws.block(j, &mut buf);
            out.extend_from_slice(&buf[..len]);
        }
        out
    }

    #[test]
    fn each_class_is_drawn_as_often_as_it_has_samples_and_reproducibly() {
        for size in [1, 2, 7, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 17] {
            for class in [0, 1] {
                let c = counts(3, 5, class, size);
                assert_eq!(c.len(), size);
                assert_eq!(c.iter().map(|&v| v as usize).sum::<usize>(), size, "{size}");
                assert_eq!(c, counts(3, 5, class, size));
                if size > 100 {
                    // Another resample, class or seed draws otherwise.
                    assert_ne!(c, counts(3, 6, class, size), "{size}");
                    assert_ne!(c, counts(3, 5, 1 - class, size), "{size}");
                    assert_ne!(c, counts(4, 5, class, size), "{size}");
                }
            }
        }
    }

    #[test]
    fn a_block_is_the_same_whether_or_not_the_blocks_before_it_were_drawn() {
        let size = 5 * BLOCK + 3;
        let all = counts(9, 2, 1, size);
        let draws = ClassDraws::new(&ResampleStream::new(9, 2), 1, size, Vec::new());
        let mut buf = vec![0; BLOCK];
        for j in (0..draws.blocks()).rev() {
            let len = draws.block(j, &mut buf);
            assert_eq!(buf[..len], all[j * BLOCK..j * BLOCK + len], "block {j}");
        }
    }

    #[test]
    fn a_cursor_reads_the_counts_in_rank_order_then_zeros() {
        let size = 2 * BLOCK + 5;
        let want = counts(1, 0, 0, size);
        let stream = ResampleStream::new(1, 0);
        let mut cursor = Cursor::new(ClassDraws::new(&stream, 0, size, Vec::new()), Vec::new());
        let mut got = Vec::new();
        for _ in 0..size {
            got.push(cursor.counts[cursor.at]);
            cursor.at += 1;
            if cursor.at == cursor.len {
                cursor.next_block();
            }
        }
        assert_eq!(got, want);
        assert_eq!(cursor.len, usize::MAX);
        assert_eq!(cursor.counts[cursor.at], 0);
    }

    /// Pearson's chi-square of `observed` counts against `probabilities` (summing to 1).
    fn chi_square(observed: &[u64], probabilities: &[f64]) -> f64 {
        let total: u64 = observed.iter().sum();
        observed
            .iter()
            .zip(probabilities)
            .map(|(&o, &p)| {
                let e = p * total as f64;
                (o as f64 - e).powi(2) / e
            })
            .sum()
    }

    #[test]
    fn three_samples_draw_the_multinomials_ten_outcomes_as_often_as_they_should() {
        // Multinomial(3; 1/3, 1/3, 1/3): (3,0,0) 1/27 each, (2,1,0) 3/27 each, (1,1,1) 6/27.
        let outcomes: Vec<[u32; 3]> = (0..=3u32)
            .flat_map(|a| (0..=3 - a).map(move |b| [a, b, 3 - a - b]))
            .collect();
        let p = |o: &[u32; 3]| match o.iter().filter(|&&c| c == 1).count() {
            3 => 6.0 / 27.0,
            1 => 3.0 / 27.0,
            _ => 1.0 / 27.0,
        };
        let probabilities: Vec<f64> = outcomes.iter().map(p).collect();
        let mut observed = vec![0u64; outcomes.len()];
        for b in 0..5400 {
            let c = counts(17, b, 0, 3);
            observed[outcomes.iter().position(|o| o[..] == c[..]).unwrap()] += 1;
        }
        // 9 degrees of freedom: 27.9 is the 0.999 quantile.
        let x2 = chi_square(&observed, &probabilities);
        assert!(x2 < 27.9, "chi-square {x2}: {observed:?}");
    }

    #[test]
    fn counts_on_both_sides_of_a_block_edge_are_binomial_and_the_totals_multinomial() {
        // BLOCK + 1 samples: the last one is a block of its own, its count the block total
        // (the first stage); the first one's count comes from the second stage. Each is
        // Binomial(m, 1/m): P(k) = C(m, k) (1/m)^k (1 - 1/m)^(m - k), k = 0, 1, 2, 3, >= 4.
        let m = BLOCK + 1;
        let mut pk = vec![(1.0 - 1.0 / m as f64).powi(m as i32)];
        for k in 1..4 {
            let last = pk[k - 1];
            pk.push(last * (m - k + 1) as f64 / k as f64 / (m as f64 - 1.0));
        }
        pk.push(1.0 - pk.iter().sum::<f64>());
        let (mut first, mut last) = (vec![0u64; 5], vec![0u64; 5]);
        for b in 0..4000 {
            let c = counts(23, b, 1, m);
            first[(c[0] as usize).min(4)] += 1;
            last[(c[m - 1] as usize).min(4)] += 1;
        }
        // 4 degrees of freedom: 18.5 is the 0.999 quantile.
        for (what, observed) in [("first", &first), ("last", &last)] {
            let x2 = chi_square(observed, &pk);
            assert!(x2 < 18.5, "{what}: chi-square {x2}: {observed:?}");
        }
        // Three blocks (4096, 4096, 5): the totals' means, variances and covariance against
        // the multinomial's, m p_j, m p_j (1 - p_j) and -m p_j p_k, within 4 standard errors.
        let m = 2 * BLOCK + 5;
        let runs = 2000;
        let totals: Vec<Vec<f64>> = (0..runs)
            .map(|b| {
                let d = ClassDraws::new(&ResampleStream::new(29, b), 0, m, Vec::new());
                d.into_buffer().iter().map(|&t| f64::from(t)).collect()
            })
            .collect();
        let mean = |j: usize| totals.iter().map(|t| t[j]).sum::<f64>() / runs as f64;
        let cov = |j: usize, k: usize| {
            let (mj, mk) = (mean(j), mean(k));
            totals
                .iter()
                .map(|t| (t[j] - mj) * (t[k] - mk))
                .sum::<f64>()
                / (runs - 1) as f64
        };
        let p = [
            BLOCK as f64 / m as f64,
            BLOCK as f64 / m as f64,
            5.0 / m as f64,
        ];
        let mf = m as f64;
        for (j, &pj) in p.iter().enumerate() {
            let var = mf * pj * (1.0 - pj);
            let se = (var / runs as f64).sqrt();
            assert!(
                (mean(j) - mf * pj).abs() < 4.0 * se,
                "block {j}: mean {}",
                mean(j)
            );
            let se_var = var * (2.0 / runs as f64).sqrt();
            assert!(
                (cov(j, j) - var).abs() < 4.0 * se_var,
                "block {j}: var {}",
                cov(j, j)
            );
        }
        let want = -mf * p[0] * p[1];
        let se = mf * p[0] * (2.0 / runs as f64).sqrt();
        assert!(
            (cov(0, 1) - want).abs() < 4.0 * se,
            "cov {} vs {want}",
            cov(0, 1)
        );
        // Not a Poisson draw of each block (variance m p_j, twice the multinomial's).
        assert!(cov(0, 0) < 0.6 * mf * p[0]);
    }
}
