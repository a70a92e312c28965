//! The draws of the stratified bootstrap (`super::bootstrap`): the seeded `StdRng` stream of
//! `super::ci`'s resamples (positives first, each draw `random_range(0..class size)`), decoded
//! as rand 0.9 decodes `random_range`, so that the resamples are the same to the last draw.
//!
//! `StdRng` is ChaCha12, a counter-mode generator: the word at any position of its stream can
//! be computed without the words before it. The stream is therefore produced in windows, the
//! words of a window by several threads at once ([`Keystream::words_at`]), and only the decode
//! into draws, a multiply and a compare per word ([`decode`]), reads the window in order (a draw
//! takes a second word once in about `2^32 / class size` draws, so where a draw starts depends
//! on every draw before it).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

/// The seeded stream of the resamples: `StdRng::seed_from_u64(seed)`'s words, by position.
#[derive(Clone)]
pub(crate) struct Keystream {
    start: ChaCha12Rng,
}

impl Keystream {
    /// The stream of `StdRng::seed_from_u64(seed)` (the same generator, ChaCha12, seeded the
    /// same way; the tests hold the two to the same words).
    pub(crate) fn new(seed: u64) -> Self {
        Keystream {
            start: ChaCha12Rng::seed_from_u64(seed),
        }
    }

    /// The stream's words from word `pos` on, into `out`: what `StdRng::random::<u32>()` would
    /// return after `pos` calls, one after another.
    pub(crate) fn words_at(&self, pos: u128, out: &mut [u32]) {
        let mut rng = self.start.clone();
        rng.set_word_pos(pos);
        rng.fill(out);
    }
}

/// `offset + rng.random_range(0..n)` into each of `out` from `words`, as rand 0.9 computes it
/// (`UniformInt::<u32>::sample_single_inclusive`, Canon's method: the high word of
/// `word * n`, and a second word when the low word is within `n` of overflowing). Returns the
/// words taken, or `None` when `words` ran out first. Blocks of 64 words with no second word
/// among them (nearly all) are decoded in a loop without branches.
pub(crate) fn decode(words: &[u32], n: u32, offset: u32, out: &mut [u32]) -> Option<usize> {
    let (wide, limit) = (u64::from(n), n.wrapping_neg());
    let (mut i, mut k) = (0, 0);
    while k < out.len() {
        let m = (out.len() - k).min(words.len() - i).min(64);
        if m == 0 {
            return None;
        }
        let block = &words[i..i + m];
        // A fold, not `all`: no early exit, so the compiler keeps it in vector registers.
        let second = block.iter().fold(false, |any, &w| {
            any | ((u64::from(w) * wide) as u32 > limit)
        });
        if !second {
            for (o, &w) in out[k..k + m].iter_mut().zip(block) {
                *o = offset + ((u64::from(w) * wide) >> 32) as u32;
            }
            (i, k) = (i + m, k + m);
            continue;
        }
        let stop = i + m;
        while i < stop && k < out.len() {
            let full = u64::from(words[i]) * wide;
            let (mut result, low) = ((full >> 32) as u32, full as u32);
            i += 1;
            if low > limit {
                let high = ((u64::from(*words.get(i)?) * wide) >> 32) as u32;
                result += u32::from(low.checked_add(high).is_none());
                i += 1;
            }
            out[k] = offset + result;
            k += 1;
        }
    }
    Some(i)
}

/// Decode consecutive stratified resamples from `words` in place: resample `r` becomes
/// `words[r n..(r + 1) n]` as slots, `positives` draws from the positives (slots
/// `0..positives`), then `negatives` from the negatives (slots `positives..n`), as
/// `super::ci`'s resample draws them. Returns the words taken, or `None` when `words` ran out
/// first (the caller makes the window longer and decodes again).
pub(crate) fn decode_resamples(
    words: &mut [u32],
    resamples: usize,
    (positives, negatives): (usize, usize),
) -> Option<usize> {
    let n = positives + negatives;
    let (p, q) = (positives as u32, negatives as u32);
    let mut taken = 0;
    let mut draw = vec![0u32; n.min(1 << 16)];
    for r in 0..resamples {
        // A draw takes at least one word, so the draws written (at `r n + k`) never overtake the
        // words still to read (at `taken >= r n + k`); each piece goes through a small buffer.
        let mut k = 0;
        while k < n {
            let (class, offset, left) = if k < positives {
                (p, 0, positives - k)
            } else {
                (q, p, n - k)
            };
            let m = left.min(draw.len());
            let used = decode(&words[taken..], class, offset, &mut draw[..m])?;
            words[r * n + k..r * n + k + m].copy_from_slice(&draw[..m]);
            taken += used;
            k += m;
        }
    }
    Some(taken)
}

/// The first `n` draws of `StdRng::seed_from_u64(seed)` for one class of `class` samples, by
/// `random_range` itself (for the tests).
#[cfg(test)]
fn reference(seed: u64, class: u32, n: usize) -> Vec<u32> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| rng.random_range(0..class as usize) as u32)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;

    #[test]
    fn the_keystream_is_std_rngs_stream_from_any_position() {
        for seed in [0u64, 1, 42] {
            let mut rng = StdRng::seed_from_u64(seed);
            let want: Vec<u32> = (0..5000).map(|_| rng.random::<u32>()).collect();
            let ks = Keystream::new(seed);
            for pos in [0usize, 1, 15, 16, 17, 63, 64, 1000, 4095] {
                let mut out = vec![0; 5000 - pos];
                ks.words_at(pos as u128, &mut out);
                assert_eq!(out, want[pos..], "seed {seed}, from word {pos}");
            }
        }
    }

    #[test]
    fn decoding_draws_what_random_range_draws() {
        for (seed, n) in [
            (0, 1u32),
            (1, 2),
            (2, 3),
            (3, 1000),
            (4, 250_366),
            (5, 1 << 31),
            (6, u32::MAX),
            (7, (1 << 31) + 12_345),
        ] {
            let count = 20_000;
            let want = reference(seed, n, count);
            let mut words = vec![0; 3 * count];
            Keystream::new(seed).words_at(0, &mut words);
            let mut out = vec![0; count];
            let used = decode(&words, n, 0, &mut out).unwrap();
            assert_eq!(out, want, "seed {seed}, n {n}");
            assert!(used >= count, "{used}");
            // Too few words: None, not a wrong draw.
            assert_eq!(decode(&words[..count - 1], n, 0, &mut out), None);
        }
    }

    #[test]
    fn resamples_decoded_in_place_are_random_range_draws_in_order() {
        let (pos, neg) = (70_001usize, 200_000usize);
        let n = pos + neg;
        let mut rng = StdRng::seed_from_u64(9);
        let mut want = Vec::new();
        for _ in 0..3 {
            want.extend((0..pos).map(|_| rng.random_range(0..pos) as u32));
            want.extend((0..neg).map(|_| pos as u32 + rng.random_range(0..neg) as u32));
        }
        let mut words = vec![0; 3 * n + 1000];
        Keystream::new(9).words_at(0, &mut words);
        let used = decode_resamples(&mut words, 3, (pos, neg)).unwrap();
        assert_eq!(words[..3 * n], want[..]);
        assert!(used >= 3 * n);
        let mut short = vec![0; 3 * n - 1];
        Keystream::new(9).words_at(0, &mut short);
        assert_eq!(decode_resamples(&mut short, 3, (pos, neg)), None);
    }
}
