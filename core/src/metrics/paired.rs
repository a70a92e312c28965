//! DeLong's per-sample components of a sorted column and the paired test of two columns
//! (pROC's `roc.test`, `method = "delong"`), by buckets of consecutive sample indices, so that
//! no pass writes or reads a whole column at random places (issue 70: at 10^8 samples those
//! cache misses were most of a paired test's time).

use super::auc::MetricError;
use super::ci::{PairedTest, Placements, try_with_capacity};
use super::ranked::{LAST, RankedColumn, per_sample};
use super::threads;

/// Per-sample components are written by buckets of `2^20` consecutive indices of a class (8 MB
/// of `f64`, within the last-level cache) ([`RankedColumn::partition`]).
const BUCKET_BITS: u32 = 20;

impl RankedColumn {
    /// DeLong's paired test of this column's AUC against `other`'s on the same samples,
    /// `z = (A1 - A2) / sqrt(Var1 + Var2 - 2 Cov)` (pROC's `roc.test`, `method = "delong"`), as
    /// [`Placements::compare`] gives it to rounding, with one column's components by sample
    /// instead of both. `Var1 + Var2 - 2 Cov` is summed as what it equals in exact arithmetic,
    /// DeLong's variance of the components' differences (`S10` of `V10_1 - V10_2` about
    /// `A1 - A2` over `N+`, and `S01` alike), so that it is never negative and is 0 for a column
    /// against itself. The sums run bucket by bucket over this column's samples partitioned by
    /// blocks of 2^20 indices of their class, each sample's component against `other`'s read
    /// from the same block's stretch (in the cache), so that no pass reads or writes the whole
    /// column at random places, and this column's components are never stored.
    ///
    /// # Errors
    /// [`MetricError::LengthMismatch`] for columns of other samples;
    /// [`MetricError::OutOfMemory`] when `other`'s components or the buckets cannot be
    /// allocated.
    pub fn delong_test(&self, other: &RankedColumn) -> Result<PairedTest, MetricError> {
        self.delong_test_in_buckets(other, BUCKET_BITS)
    }

    /// [`Self::delong_test`] with buckets of `2^bits` slots.
    pub(crate) fn delong_test_in_buckets(
        &self,
        other: &RankedColumn,
        bits: u32,
    ) -> Result<PairedTest, MetricError> {
        let (np, nn) = (self.positives, self.negatives);
        if (other.positives, other.negatives) != (np, nn) {
            return Err(MetricError::LengthMismatch {
                scores: np + nn,
                labels: other.positives + other.negatives,
            });
        }
        // The two columns' passes side by side (each walks its own column once or twice).
        let ((a, packed), (b, theirs)) = threads::join(
            || (self.delong(), self.partition(bits, |_, _, _, _| {})),
            || {
                (
                    other.delong(),
                    other.components_in_buckets(bits, |_, _, _, _| {}),
                )
            },
        );
        let (packed, (v10, v01)) = (packed?, theirs?);
        // Each bucket's sum of squares of the components' differences about `A1 - A2`, ours
        // and theirs read from the bucket's own stretch; the buckets' sums added in bucket
        // order.
        let difference = a.auc - b.auc;
        let squares = |packed: &[u64], theirs: &[f64], count: f64| -> f64 {
            threads::map_chunks(packed, 1 << bits, |k, bucket| {
                let theirs = &theirs[k << bits..];
                bucket.iter().fold(0.0, |sum, &p| {
                    let (at, ours) = unpack(p, bits, count);
                    let d = ours - theirs[at] - difference;
                    sum + d * d
                })
            })
            .into_iter()
            .sum()
        };
        let (s10, s01) = (
            squares(&packed[..np], &v10, nn as f64),
            squares(&packed[np..], &v01, np as f64),
        );
        let std_error = (per_sample(s10, np as u64) + per_sample(s01, nn as u64)).sqrt();
        Ok(PairedTest::from_difference(difference, std_error))
    }

    /// [`Self::delong`] with DeLong's per-sample components, for paired tests.
    ///
    /// # Errors
    /// [`MetricError::OutOfMemory`] when the components cannot be allocated.
    pub fn placements(&self) -> Result<Placements, MetricError> {
        let (v10, v01) = self.components(|_, _, _, _| {})?;
        Ok(Placements {
            delong: self.delong(),
            v10,
            v01,
        })
    }

    /// DeLong's structural components, `(V10 per positive, V01 per negative)` in index order,
    /// in one pass over the tied groups; `each(gp, gn, tp, fp)` is called on every group, in
    /// descending order of score, with its positives and negatives and the counts of those
    /// above it, for the figures that walk the groups too.
    ///
    /// # Errors
    /// [`MetricError::OutOfMemory`] when the components cannot be allocated.
    pub(super) fn components(
        &self,
        each: impl FnMut(u64, u64, u64, u64),
    ) -> Result<(Vec<f64>, Vec<f64>), MetricError> {
        self.components_in_buckets(BUCKET_BITS, each)
    }

    /// [`Self::components`] through [`Self::partition`]'s buckets of `2^bits` slots: each
    /// bucket's values written into its own stretch of `2^bits` components, on every core.
    fn components_in_buckets(
        &self,
        bits: u32,
        each: impl FnMut(u64, u64, u64, u64),
    ) -> Result<(Vec<f64>, Vec<f64>), MetricError> {
        let (np, nn) = (self.positives, self.negatives);
        let packed = self.partition(bits, each)?;
        let values = |packed: &[u64], len: usize, count: f64| {
            let mut v = try_with_capacity(len, "DeLong components")?;
            v.resize(len, 0.0);
            threads::for_each_chunk_mut(&mut v, 1 << bits, |k, stretch: &mut [f64]| {
                for &p in &packed[k << bits..(k << bits) + stretch.len()] {
                    let (at, value) = unpack(p, bits, count);
                    stretch[at] = value;
                }
            });
            Ok::<_, MetricError>(v)
        };
        Ok((
            values(&packed[..np], np, nn as f64)?,
            values(&packed[np..], nn, np as f64)?,
        ))
    }

    /// Every sample's placement count in half-units (`2 below + ties`: `2 V10 N-` for a
    /// positive, `2 V01 N+` for a negative) packed above the low `bits` bits of its index in
    /// its class, the entries of each class's bucket of `2^bits` indices side by side
    /// (positives' buckets first, at `k 2^bits`, then the negatives' at `N+ + k 2^bits`), in
    /// one pass over the groups (`each` as in [`Self::components`]). Writing the components
    /// in index order from here reads and writes one bucket's stretch at a time instead of
    /// one random place in the whole column per sample (the cache misses that took most of a
    /// paired test's time at 10^8 samples).
    ///
    /// # Errors
    /// [`MetricError::OutOfMemory`] when the buffer cannot be allocated.
    fn partition(
        &self,
        bits: u32,
        mut each: impl FnMut(u64, u64, u64, u64),
    ) -> Result<Vec<u64>, MetricError> {
        let (np, nn) = (self.positives, self.negatives);
        let mut packed: Vec<u64> = try_with_capacity(np + nn, "DeLong components")?;
        packed.resize(np + nn, 0);
        let (size, mask) = (1usize << bits, (1u64 << bits) - 1);
        // Where the next entry of each bucket goes: the positives' buckets, then the negatives'.
        let mut next: Vec<usize> = (0..np.div_ceil(size))
            .map(|k| k * size)
            .chain((0..nn.div_ceil(size)).map(|k| np + k * size))
            .collect();
        let first_negative = np.div_ceil(size);
        self.for_each_group_members(|group, gp, gn, tp, fp| {
            let below = nn as u64 - fp - gn;
            let (h10, h01) = ((2 * below + gn) << bits, (2 * tp + gp) << bits);
            for &e in group {
                let slot = (e & !LAST) as usize;
                let (bucket, index, half) = if slot < np {
                    (slot >> bits, slot, h10)
                } else {
                    (first_negative + ((slot - np) >> bits), slot - np, h01)
                };
                let at = &mut next[bucket];
                packed[*at] = half | (index as u64 & mask);
                *at += 1;
            }
            each(gp, gn, tp, fp);
        });
        Ok(packed)
    }
}

/// An entry of [`RankedColumn::partition`]: its index within its bucket, and its placement
/// value (its half-units over `count`, the other class's size), the same float as
/// `placement_values` gives its group.
#[inline]
fn unpack(p: u64, bits: u32, count: f64) -> (usize, f64) {
    (
        (p & ((1u64 << bits) - 1)) as usize,
        (p >> bits) as f64 * 0.5 / count,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::order::order_key;

    /// The components and the paired test are the same with buckets of 8 slots (many buckets,
    /// both classes' last ones short) as with one bucket of the whole column.
    #[test]
    fn buckets_give_the_same_components_and_test() {
        let n = 1003;
        let y: Vec<f64> = (0..n).map(|i| f64::from(i * 7 % 10 < 3)).collect();
        let a: Vec<f64> = (0..n)
            .map(|i| f64::from(i * 37 % 101 / 10) + y[i as usize])
            .collect();
        let b: Vec<f64> = (0..n).map(|i| f64::from(i * 13 % 29) * 0.5).collect();
        let (ra, rb) = (
            RankedColumn::new(&a, &y).unwrap(),
            RankedColumn::new(&b, &y).unwrap(),
        );
        let one = ra.components_in_buckets(20, |_, _, _, _| {}).unwrap();
        let many = ra.components_in_buckets(3, |_, _, _, _| {}).unwrap();
        assert_eq!(one, many);
        assert!(one.0.iter().chain(&one.1).all(|&v| v > 0.0 && v <= 1.0));
        // Against the placements by brute force: V10 of a positive is the share of negatives
        // below it (ties 1/2).
        let (pos, neg): (Vec<usize>, Vec<usize>) = (0..n as usize).partition(|&i| y[i] > 0.0);
        for (k, &i) in pos.iter().enumerate() {
            let below: f64 = neg
                .iter()
                .map(|&j| match a[i].partial_cmp(&a[j]).unwrap() {
                    std::cmp::Ordering::Greater => 1.0,
                    std::cmp::Ordering::Equal => 0.5,
                    std::cmp::Ordering::Less => 0.0,
                })
                .sum();
            assert_eq!(one.0[k], below / neg.len() as f64);
        }
        let t1 = ra.delong_test_in_buckets(&rb, 20).unwrap();
        let t3 = ra.delong_test_in_buckets(&rb, 3).unwrap();
        assert_eq!(t1.difference, t3.difference);
        assert!(
            (t1.std_error / t3.std_error - 1.0).abs() < 1e-13,
            "{t1:?} {t3:?}"
        );
        // Large enough for the keys, the order and the buckets to be built on the pool's
        // threads: the same as one bucket, and the order the same as a plain sort's.
        let n = 70_001u32;
        let y: Vec<f64> = (0..n).map(|i| f64::from(i % 9 == 2)).collect();
        let a: Vec<f64> = (0..n).map(|i| f64::from(i * 7919 % 5003)).collect();
        let b: Vec<f64> = (0..n)
            .map(|i| f64::from(i * 104_729 % 7001) + y[i as usize])
            .collect();
        let (ra, rb) = (
            RankedColumn::new(&a, &y).unwrap(),
            RankedColumn::new(&b, &y).unwrap(),
        );
        let slots: Vec<u32> = {
            let (mut p, mut q, np) = (0, 0, y.iter().filter(|&&v| v > 0.0).count() as u32);
            y.iter()
                .map(|&v| {
                    let s = if v > 0.0 { p } else { np + q };
                    if v > 0.0 {
                        p += 1
                    } else {
                        q += 1
                    }
                    s
                })
                .collect()
        };
        let mut plain: Vec<(u64, u32)> = (0..n as usize)
            .map(|i| (!order_key(a[i]), slots[i]))
            .collect();
        plain.sort_unstable();
        let got: Vec<u32> = ra.order.iter().map(|&e| e & !LAST).collect();
        assert_eq!(got, plain.iter().map(|&(_, s)| s).collect::<Vec<_>>());
        assert_eq!(
            ra.components_in_buckets(20, |_, _, _, _| {}).unwrap(),
            ra.components_in_buckets(10, |_, _, _, _| {}).unwrap()
        );
        let (t20, t10) = (
            ra.delong_test_in_buckets(&rb, 20).unwrap(),
            ra.delong_test_in_buckets(&rb, 10).unwrap(),
        );
        assert_eq!(t20.difference, t10.difference);
        assert!(
            (t20.std_error / t10.std_error - 1.0).abs() < 1e-12,
            "{t20:?} {t10:?}"
        );
        let want = ra
            .placements()
            .unwrap()
            .compare(&rb.placements().unwrap())
            .unwrap();
        assert!(
            (t20.std_error / want.std_error - 1.0).abs() < 1e-10,
            "{t20:?} {want:?}"
        );
    }
}
