//! A donor-site task from the UCI splice-junction sequences shipped in `data/tabular/splice.data`,
//! in the design of section 5.1 of papers/pdprox-primal-dual-nonsmooth.txt (MEMset donor):
//! the 7 positions around a GT dinucleotide (3 exon positions before it, 4 intron positions
//! after it), one-hot encoded with all pairwise and three-way interactions:
//! `7 * 4 + 21 * 16 + 35 * 64 = 2,604` features in `7 + 21 + 35 = 63` groups.
//!
//! Every GT of every sequence with 3 positions before it and 4 after it is a candidate: the GT
//! at positions 31-32 (1-based) of an EI row is a true donor (positive); every other GT is a
//! decoy (negative), as MEMset's decoys are GTs that are not donors. Candidates with a letter
//! other than A, C, G, T at the 7 positions are left out.

use crate::error::DataError;
use crate::tabular::Tabular;
use crate::tabular::builtin::SPLICE;

/// The 7 positions relative to the G of a GT at `p`: 3 before it, 4 after the T.
const OFFSETS: [isize; 7] = [-3, -2, -1, 2, 3, 4, 5];

/// The G of the true donor of an EI row (0-based).
const DONOR: usize = 30;

fn base(c: u8) -> Option<usize> {
    match c {
        b'A' => Some(0),
        b'C' => Some(1),
        b'G' => Some(2),
        b'T' => Some(3),
        _ => None,
    }
}

/// The subsets of the 7 positions of size 1, 2 and 3, in that order (each a feature group).
fn subsets() -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = (0..7).map(|i| vec![i]).collect();
    for i in 0..7 {
        for j in i + 1..7 {
            out.push(vec![i, j]);
        }
    }
    for i in 0..7 {
        for j in i + 1..7 {
            for k in j + 1..7 {
                out.push(vec![i, j, k]);
            }
        }
    }
    out
}

/// The donor task: the table (labels -1/+1, rows not scaled) and the group of every feature.
///
/// # Errors
/// [`DataError::Parse`] for a malformed line of the shipped file (it has none).
pub fn splice_donor() -> Result<(Tabular, Vec<usize>), DataError> {
    let groups = subsets();
    let widths: Vec<usize> = groups.iter().map(|s| 4usize.pow(s.len() as u32)).collect();
    let d: usize = widths.iter().sum();
    let mut feature_group = Vec::with_capacity(d);
    for (g, &w) in widths.iter().enumerate() {
        feature_group.extend(std::iter::repeat_n(g, w));
    }
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for (lineno, line) in SPLICE.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let seq = fields.get(2).map(|s| s.as_bytes()).unwrap_or_default();
        if fields.len() != 3 || seq.len() != 60 {
            return Err(DataError::parse(
                "splice",
                lineno + 1,
                "expected 'class, id, 60 letters'",
            ));
        }
        for p in 3..=seq.len() - 6 {
            if &seq[p..p + 2] != b"GT" {
                continue;
            }
            let Some(letters) = OFFSETS
                .iter()
                .map(|&o| base(seq[(p as isize + o) as usize]))
                .collect::<Option<Vec<_>>>()
            else {
                continue;
            };
            let mut row = vec![0.0; d];
            let mut offset = 0;
            for (subset, &w) in groups.iter().zip(&widths) {
                let code = subset.iter().fold(0, |acc, &i| acc * 4 + letters[i]);
                row[offset + code] = 1.0;
                offset += w;
            }
            x.extend(row);
            y.push(if fields[0] == "EI" && p == DONOR {
                1.0
            } else {
                -1.0
            });
        }
    }
    Ok((Tabular::new("splice-donor", d, x, y, None)?, feature_group))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_design_has_2604_features_in_63_groups_and_one_hot_blocks() {
        let (t, groups) = splice_donor().unwrap();
        assert_eq!(t.d, 2604);
        assert_eq!(groups.len(), 2604);
        assert_eq!(groups.iter().max(), Some(&62));
        let positives = t.y.iter().filter(|&&v| v > 0.0).count();
        assert!(
            positives > 700 && positives < t.n(),
            "{positives} of {}",
            t.n()
        );
        // Every row has exactly one 1 per group: 63 ones.
        for row in t.x.chunks_exact(t.d) {
            assert_eq!(row.iter().filter(|&&v| v == 1.0).count(), 63);
            assert_eq!(row.iter().filter(|&&v| v != 0.0).count(), 63);
        }
    }
}
