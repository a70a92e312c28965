//! One stratified resample evaluated against score columns sorted once (`super::ranked`): its
//! counts drawn in the first column's rank order (`super::draws`) and read by one walk per
//! column that feeds both pAUCs (`super::bootstrap`'s replicates).
//!
//! One column: a single walk down it draws each class's counts a block at a time, reading them
//! in order, and stops with the statistics (the draws beyond are never made). Several columns
//! (paired comparisons): the first column's walk writes each sample's count, and each column's
//! walk reads them by sample, as [`walk`] does; the first column's replicates are the same as
//! on its own.

use super::auc::{CreditSum, MetricError, RankRange, normalized};
use super::ci::try_with_capacity;
use super::draws::{Cursor, DrawBuffers};
use super::ranked::{GroupSink, KeptPairs, LAST, RankedColumn, walk};

/// The statistics a resample is evaluated for: our pAUC over a rank range and, when asked,
/// LibAUC's two-way pAUC with the samples it keeps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Statistics {
    /// Our pAUC's rank range.
    pub(crate) range: RankRange,
    /// The positives and negatives the two-way pAUC keeps, when asked.
    pub(crate) kept: Option<(usize, usize)>,
}

/// The buffers of one thread, reused from resample to resample.
pub(crate) struct Scratch {
    draws: DrawBuffers,
    /// Each sample's count, by slot, a byte each (several columns only): a quarter of the
    /// memory the other columns' walks read at random places.
    by_slot: Vec<u8>,
    /// The counts again in full when one of a resample's is 256 or more (almost never).
    wide: Vec<u32>,
}

impl Scratch {
    /// Buffers for resamples of `slots` samples read by `columns` columns.
    pub(crate) fn new(slots: usize, columns: usize) -> Result<Self, MetricError> {
        let mut by_slot = Vec::new();
        if columns > 1 {
            by_slot = try_with_capacity(slots, "resample counts")?;
            by_slot.resize(slots, 0);
        }
        Ok(Scratch {
            draws: DrawBuffers::default(),
            by_slot,
            wide: Vec::new(),
        })
    }

    /// Each sample's count in resample `b`, by slot, drawn along `order` (the first column's),
    /// by `DrawBuffers::slot_counts` (the copying bootstrap's draws; for the tests).
    #[cfg(test)]
    fn slot_counts(
        &mut self,
        order: &[u32],
        seed: u64,
        b: usize,
        classes: (usize, usize),
    ) -> &[u32] {
        let slots = order.iter().map(|&e| (e & !LAST) as usize);
        self.wide.resize(self.by_slot.len(), 0);
        self.draws
            .slot_counts(slots, (seed, b), classes, &mut self.wide);
        &self.wide
    }
}

/// What every resample is evaluated against.
pub(crate) struct Columns<'a> {
    /// The sorted columns; the first one's order is the draws'.
    pub(crate) columns: &'a [RankedColumn],
    /// Their positives and negatives (every column has the same samples).
    pub(crate) classes: (usize, usize),
    /// What to compute.
    pub(crate) stats: Statistics,
    /// The bootstrap's seed.
    pub(crate) seed: u64,
}

impl Columns<'_> {
    /// The statistics of every column on resample `b`: `out[2 c]` our pAUC of column `c`,
    /// `out[2 c + 1]` its two-way pAUC (NaN when not asked).
    pub(crate) fn evaluate(&self, scratch: &mut Scratch, b: usize, out: &mut Vec<f64>) {
        out.clear();
        let (positives, stats) = (self.classes.0, self.stats);
        let fresh = || {
            (
                CreditSum::new(stats.range),
                stats.kept.map(|kept| KeptPairs::new(positives, kept)),
            )
        };
        let mut push = |sum: CreditSum, two: Option<KeptPairs>| {
            out.push(normalized(sum.total(), positives, stats.range));
            out.push(two.map_or(f64::NAN, |t| t.value()));
        };
        let Some((first, rest)) = self.columns.split_first() else {
            return;
        };
        let (mut sum, mut two) = fresh();
        let mut cursors = scratch.draws.cursors(self.seed, b, self.classes);
        let mut sink = GroupSink::new(&mut sum, two.as_mut());
        let wide = if rest.is_empty() {
            walk_drawn::<false>(&first.order, positives, &mut cursors, &mut sink, &mut [])
        } else {
            let by_slot = &mut scratch.by_slot;
            walk_drawn::<true>(&first.order, positives, &mut cursors, &mut sink, by_slot)
        };
        scratch.draws.keep(cursors);
        push(sum, two);
        if wide {
            // A count of 256 or more: the same draws again, counted in full.
            scratch.wide.resize(scratch.by_slot.len(), 0);
            let slots = first.order.iter().map(|&e| (e & !LAST) as usize);
            let seed = (self.seed, b);
            scratch
                .draws
                .slot_counts(slots, seed, self.classes, &mut scratch.wide);
        }
        for column in rest {
            let (mut sum, mut two) = fresh();
            let mut sink = GroupSink::new(&mut sum, two.as_mut());
            if wide {
                walk(&column.order, &scratch.wide, positives, &mut sink);
            } else {
                walk(&column.order, &scratch.by_slot, positives, &mut sink);
            }
            push(sum, two);
        }
    }
}

/// One resample's walk down the column its counts are drawn along: each sample's count is the
/// next of its class's cursor, read without a branch on the class (which alternates
/// unpredictably down a sorted column); each group's counts feed our pAUC's credit sum and,
/// when asked, LibAUC's two-way pAUC, and the walk (with the draws) stops once neither can
/// change. With `RECORD` it writes each sample's count into `by_slot` (a byte each) instead of
/// stopping, for the other columns, and returns whether a count did not fit a byte.
fn walk_drawn<const RECORD: bool>(
    order: &[u32],
    positives: usize,
    [pos, neg]: &mut [Cursor; 2],
    sink: &mut GroupSink<'_>,
    by_slot: &mut [u8],
) -> bool {
    let mut wide = false;
    let p = positives as u32;
    let (mut all, mut negs) = (0u64, 0u64);
    for &e in order {
        let slot = e & !LAST;
        let is_neg = slot >= p;
        let count = [pos.counts[pos.at], neg.counts[neg.at]][usize::from(is_neg)];
        if RECORD {
            by_slot[slot as usize] = count as u8;
            wide |= count > 255;
        }
        let c = u64::from(count);
        pos.at += usize::from(!is_neg);
        neg.at += usize::from(is_neg);
        if pos.at == pos.len {
            pos.next_block();
        }
        if neg.at == neg.len {
            neg.next_block();
        }
        all += c;
        negs += c & 0u64.wrapping_sub(u64::from(is_neg));
        if e & LAST != 0 {
            if !sink.push(all - negs, negs) && !RECORD {
                return false;
            }
            (all, negs) = (0, 0);
        }
    }
    wide
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::auc::pauc;

    #[test]
    fn the_walk_that_draws_equals_the_walk_of_the_counts_it_drew() {
        // 9000 samples (blocks of both classes, ties), one column: the fused walk against
        // the counts by slot read by the plain walk, and against the copied resample.
        let n = 9000;
        let labels: Vec<f64> = (0..n)
            .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
            .collect();
        let col: Vec<f64> = (0..n).map(|i| ((i * 7919) % 613) as f64 * 0.25).collect();
        let column = RankedColumn::new(&col, &labels).unwrap();
        let classes = (column.positives, column.negatives);
        let range = RankRange::from_fpr(0.05, 0.5, classes.1).unwrap();
        let kept = Some((classes.0 / 2, classes.1 / 3));
        let stats = Statistics { range, kept };
        let one = Columns {
            columns: std::slice::from_ref(&column),
            classes,
            stats,
            seed: 11,
        };
        let mut scratch = Scratch::new(n, 1).unwrap();
        let mut both = Scratch::new(n, 2).unwrap();
        let (mut fused, mut out) = (Vec::new(), Vec::new());
        for b in [0, 1, 7] {
            one.evaluate(&mut scratch, b, &mut fused);
            let counts = both.slot_counts(&column.order, 11, b, classes).to_vec();
            let mut sum = CreditSum::new(range);
            let mut two = kept.map(|k| KeptPairs::new(classes.0, k));
            walk(
                &column.order,
                &counts,
                classes.0,
                &mut GroupSink::new(&mut sum, two.as_mut()),
            );
            out.clear();
            out.push(normalized(sum.total(), classes.0, range));
            out.push(two.map_or(f64::NAN, |t| t.value()));
            assert_eq!(fused, out, "resample {b}");
            // Two columns: the first drawn and recorded in one walk, the second read by slot.
            let pair = [column.clone(), column.clone()];
            let two_columns = Columns {
                columns: &pair,
                ..one
            };
            let mut paired = Vec::new();
            two_columns.evaluate(&mut both, b, &mut paired);
            assert_eq!(paired, [out.clone(), out.clone()].concat(), "resample {b}");
            // The copies: slot k is the k-th positive, slot N+ + k the k-th negative.
            let (pos_idx, neg_idx): (Vec<usize>, Vec<usize>) =
                (0..n).partition(|&i| labels[i] > 0.0);
            let (mut s, mut y) = (Vec::new(), Vec::new());
            for (slot, &c) in counts.iter().enumerate() {
                let (i, label) = if slot < classes.0 {
                    (pos_idx[slot], 1.0)
                } else {
                    (neg_idx[slot - classes.0], -1.0)
                };
                for _ in 0..c {
                    s.push(col[i]);
                    y.push(label);
                }
            }
            let want = pauc(&s, &y, 0.05, 0.5).unwrap();
            assert_eq!(fused[0].to_bits(), want.to_bits(), "resample {b}");
        }
    }
}
