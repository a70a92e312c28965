//! One stratified resample evaluated against score columns sorted once (`super::ranked`): the
//! resample's counts (how often each sample was drawn, a byte each unless a count wraps) and one
//! walk per column that feeds both pAUCs (`super::bootstrap`'s replicates).

use super::auc::{CreditSum, MetricError, RankRange, normalized};
use super::ci::try_with_capacity;
use super::ranked::{KeptPairs, RankedColumn, walk};

/// How often each slot was drawn.
pub(crate) enum Counts<'a> {
    /// Every count below 256 (one byte per slot keeps the counts in cache).
    Narrow(&'a [u8]),
    /// Some slot drawn 256 times or more.
    Wide(&'a [u32]),
}

/// The count buffers of one thread.
pub(crate) struct Counter {
    narrow: Vec<u8>,
    wide: Vec<u32>,
}

impl Counter {
    pub(crate) fn new(slots: usize) -> Result<Self, MetricError> {
        let mut narrow = try_with_capacity(slots, "resample counts")?;
        narrow.resize(slots, 0);
        Ok(Counter {
            narrow,
            wide: Vec::new(),
        })
    }

    /// Count `draws`, in bytes unless a count wraps. A wrap shows in the sum of the byte
    /// counts (each wrap loses 256), checked in one pass after the counting, so that the
    /// counting loop is an increment and nothing else.
    fn count(&mut self, draws: &[u32]) -> Counts<'_> {
        self.narrow.fill(0);
        for &s in draws {
            let c = &mut self.narrow[s as usize];
            *c = c.wrapping_add(1);
        }
        let total: u64 = self
            .narrow
            .chunks(1 << 16)
            .map(|c| c.iter().map(|&v| u32::from(v)).sum::<u32>() as u64)
            .sum();
        if total == draws.len() as u64 {
            return Counts::Narrow(&self.narrow);
        }
        self.wide.clear();
        self.wide.resize(self.narrow.len(), 0);
        for &s in draws {
            self.wide[s as usize] += 1;
        }
        Counts::Wide(&self.wide)
    }
}

/// The statistics a resample is evaluated for: our pAUC over a rank range and, when asked,
/// LibAUC's two-way pAUC with the samples it keeps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Statistics {
    /// Our pAUC's rank range.
    pub(crate) range: RankRange,
    /// The positives and negatives the two-way pAUC keeps, when asked.
    pub(crate) kept: Option<(usize, usize)>,
}

/// What every resample is evaluated against.
pub(crate) struct Columns<'a> {
    /// The sorted columns.
    pub(crate) columns: &'a [RankedColumn],
    /// Their positives (every column has the same samples).
    pub(crate) positives: usize,
    /// What to compute.
    pub(crate) stats: Statistics,
}

impl Columns<'_> {
    /// The statistics of every column on one resample: `out[2 c]` our pAUC of column `c`,
    /// `out[2 c + 1]` its two-way pAUC (NaN when not asked).
    pub(crate) fn evaluate(&self, counter: &mut Counter, draws: &[u32], out: &mut Vec<f64>) {
        out.clear();
        let counts = counter.count(draws);
        let (positives, stats) = (self.positives, self.stats);
        for column in self.columns {
            let mut sum = CreditSum::new(stats.range);
            let mut two = stats.kept.map(|kept| KeptPairs::new(positives, kept));
            match counts {
                Counts::Narrow(c) => walk(&column.order, c, positives, &mut sum, two.as_mut()),
                Counts::Wide(c) => walk(&column.order, c, positives, &mut sum, two.as_mut()),
            }
            out.push(normalized(sum.total(), positives, stats.range));
            out.push(two.map_or(f64::NAN, |t| t.value()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::auc::pauc;

    #[test]
    fn a_count_that_wraps_a_byte_is_counted_again_wide() {
        let mut counter = Counter::new(3).unwrap();
        let mut draws = vec![1u32; 300];
        draws.push(2);
        match counter.count(&draws) {
            Counts::Wide(c) => assert_eq!(c, &[0, 300, 1]),
            Counts::Narrow(_) => panic!("300 draws of one slot fit no byte"),
        }
        match counter.count(&[0, 0, 2]) {
            Counts::Narrow(c) => assert_eq!(c, &[2, 0, 1]),
            Counts::Wide(_) => panic!("small counts are narrow"),
        }
    }

    #[test]
    fn narrow_and_wide_counts_give_the_same_pauc() {
        // 3 positives (slots 0-2), 4 negatives (3-6); scores 0.9 0.5 0.5 | 0.5 0.7 0.1 0.5.
        let col = [0.9, 0.5, 0.5, 0.5, 0.7, 0.1, 0.5];
        let labels = [1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0];
        let column = RankedColumn::new(&col, &labels).unwrap();
        let range = RankRange::from_fpr(0.1, 0.8, 4).unwrap();
        let draws = [0u32, 1, 1, 3, 4, 4, 6];
        let mut narrow = [0u8; 7];
        let mut wide = [0u32; 7];
        for &d in &draws {
            narrow[d as usize] += 1;
            wide[d as usize] += 1;
        }
        let walked = |counts: &dyn Fn(&mut CreditSum)| {
            let mut sum = CreditSum::new(range);
            counts(&mut sum);
            normalized(sum.total(), 3, range)
        };
        let a = walked(&|sum| walk(&column.order, &narrow, 3, sum, None));
        let b = walked(&|sum| walk(&column.order, &wide, 3, sum, None));
        // The resample as scores: positives 0.9 0.5 0.5, negatives 0.5 0.7 0.7 0.5.
        let s = [0.9, 0.5, 0.5, 0.5, 0.7, 0.7, 0.5];
        let want = pauc(&s, &labels, 0.1, 0.8).unwrap();
        assert_eq!(a.to_bits(), want.to_bits());
        assert_eq!(b.to_bits(), want.to_bits());
    }
}
