//! The draws of the stratified bootstrap (`super::bootstrap`): the seeded `StdRng` stream of
//! `super::ci`'s resamples (positives first, each draw `random_range(0..class size)`), read a
//! block of words at a time and decoded as rand 0.9 decodes `random_range`, so that the
//! resamples are the same to the last draw at a fraction of the cost of a call per draw. The
//! draws are the one sequential part of the bootstrap: the stream must be read in order.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The seeded stream of the resamples, read in blocks of words: the same words as one
/// `StdRng::random::<u32>()` after another (`fill` of a `[u32]` takes whole words of the same
/// buffer, little-endian), decoded into draws as `random_range` decodes them.
pub(crate) struct Stream {
    rng: StdRng,
    words: Vec<u32>,
    next: usize,
}

impl Stream {
    /// The stream of `StdRng::seed_from_u64(seed)`.
    pub(crate) fn new(seed: u64) -> Self {
        Stream {
            rng: StdRng::seed_from_u64(seed),
            words: vec![0; 1 << 12],
            next: 1 << 12,
        }
    }

    #[inline]
    fn word(&mut self) -> u32 {
        if self.next == self.words.len() {
            self.rng.fill(&mut self.words[..]);
            self.next = 0;
        }
        self.next += 1;
        self.words[self.next - 1]
    }

    /// `rng.random_range(0..n)` for `0 < n <= u32::MAX`, as rand 0.9 computes it
    /// (`UniformInt::<u32>::sample_single_inclusive`, Canon's method: the high word of
    /// `word * n`, and a second word when the low word is within `n` of overflowing), without
    /// the call per draw; the tests hold it to `random_range` draw for draw.
    #[inline]
    fn below(&mut self, n: u32) -> u32 {
        let full = u64::from(self.word()) * u64::from(n);
        let (mut result, low) = ((full >> 32) as u32, full as u32);
        if low > n.wrapping_neg() {
            let high = ((u64::from(self.word()) * u64::from(n)) >> 32) as u32;
            result += u32::from(low.checked_add(high).is_none());
        }
        result
    }

    /// `offset + random_range(0..n)` into each of `out`: [`Stream::below`] in a loop over the
    /// words of one block at a time.
    fn below_into(&mut self, n: u32, offset: u32, out: &mut [u32]) {
        let (wide, limit) = (u64::from(n), n.wrapping_neg());
        let mut done = 0;
        while done < out.len() {
            if self.next == self.words.len() {
                self.rng.fill(&mut self.words[..]);
                self.next = 0;
            }
            // Stop one word short of the block's end, so that a second word is always there.
            let block = &self.words[self.next..];
            let mut i = 0;
            for slot in &mut out[done..] {
                if i + 1 >= block.len() {
                    break;
                }
                let full = u64::from(block[i]) * wide;
                let (mut result, low) = ((full >> 32) as u32, full as u32);
                i += 1;
                if low > limit {
                    let high = ((u64::from(block[i]) * wide) >> 32) as u32;
                    result += u32::from(low.checked_add(high).is_none());
                    i += 1;
                }
                *slot = offset + result;
                done += 1;
            }
            self.next += i;
            if done < out.len() && self.next + 1 == self.words.len() {
                out[done] = offset + self.below(n);
                done += 1;
            }
        }
    }
}

/// One stratified resample as slots: `positives` draws from the positives, then `negatives`
/// from the negatives, as `super::ci`'s resample draws them (both below `2^31`).
pub(crate) fn draw(stream: &mut Stream, positives: usize, negatives: usize, out: &mut Vec<u32>) {
    // Buffers come back with their length: no zeroing then.
    out.resize(positives + negatives, 0);
    let (p, q) = (positives as u32, negatives as u32);
    let (first, second) = out.split_at_mut(positives);
    stream.below_into(p, 0, first);
    stream.below_into(q, p, second);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_draws_what_random_range_draws() {
        for (seed, n) in [
            (0, 1u32),
            (1, 2),
            (2, 3),
            (3, 1000),
            (4, 250_366),
            (5, 1 << 31),
            (6, u32::MAX),
        ] {
            let mut stream = Stream::new(seed);
            let mut rng = StdRng::seed_from_u64(seed);
            for k in 0..20_000 {
                let want = rng.random_range(0..n as usize) as u32;
                assert_eq!(stream.below(n), want, "seed {seed}, n {n}, draw {k}");
            }
            // In blocks, across block ends, after an odd number of single draws.
            let offset = if n < 1 << 30 { 7 } else { 0 };
            for count in [1, 4095, 4096, 9000] {
                let mut out = vec![0; count];
                stream.below_into(n, offset, &mut out);
                let _ = stream.below(n);
                let want: Vec<u32> = (0..count)
                    .map(|_| offset + rng.random_range(0..n as usize) as u32)
                    .collect();
                let _ = rng.random_range(0..n as usize);
                assert_eq!(out, want, "seed {seed}, n {n}, {count} in a block");
            }
        }
    }
}
