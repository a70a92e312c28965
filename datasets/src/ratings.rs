//! Ratings matrices for matrix factorization and completion (section 5.3 of
//! papers/pdprox-primal-dual-nonsmooth.txt): MovieLens 100K as GroupLens ships it (`u.data`:
//! `user item rating timestamp`, tab-separated, no header) or as RecBole ships it
//! (`ml-100k.inter`, the same columns under a header `user_id:token item_id:token ...`;
//! `datasets/fetch-test-data.sh` fetches that one).

use std::collections::HashMap;
use std::path::Path;

use rand::SeedableRng;
use rand::seq::SliceRandom;

use crate::error::DataError;
use crate::memory::check_dense;
use crate::text::read_text;

/// Observed entries of a `users x items` matrix: observation `k` is `rating[k]` at
/// `(user[k], item[k])`, indices from 0 in order of first appearance in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Ratings {
    /// Row (user) of each observation.
    pub user: Vec<usize>,
    /// Column (item) of each observation.
    pub item: Vec<usize>,
    /// The rating.
    pub rating: Vec<f64>,
    /// Rows of the matrix.
    pub users: usize,
    /// Columns of the matrix.
    pub items: usize,
}

impl Ratings {
    /// Observations.
    pub fn len(&self) -> usize {
        self.rating.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rating.is_empty()
    }

    /// The observations at `idx`, on the same matrix.
    pub fn subset(&self, idx: &[usize]) -> Ratings {
        Ratings {
            user: idx.iter().map(|&k| self.user[k]).collect(),
            item: idx.iter().map(|&k| self.item[k]).collect(),
            rating: idx.iter().map(|&k| self.rating[k]).collect(),
            users: self.users,
            items: self.items,
        }
    }

    /// A seeded split of the observations: the first part holds `fraction` of them.
    ///
    /// # Errors
    /// [`DataError::Invalid`] unless `0 < fraction < 1`.
    pub fn split(&self, fraction: f64, seed: u64) -> Result<(Ratings, Ratings), DataError> {
        if !(fraction > 0.0 && fraction < 1.0) {
            return Err(DataError::invalid(
                "ratings",
                format!("split fraction {fraction} must be in (0, 1)"),
            ));
        }
        let mut idx: Vec<usize> = (0..self.len()).collect();
        idx.shuffle(&mut rand::rngs::StdRng::seed_from_u64(seed));
        let cut = (fraction * self.len() as f64).round() as usize;
        Ok((self.subset(&idx[..cut]), self.subset(&idx[cut..])))
    }
}

/// Read a ratings file: tab- or space-separated `user item rating [timestamp]` rows, an
/// optional header as the first non-empty line (RecBole's `user_id:token ...`). The
/// `users x items` matrix the solvers hold densely must fit in memory.
///
/// # Errors
/// [`DataError::Invalid`] for an unreadable file (the message says what the file must hold
/// and where MovieLens 100K comes from), [`DataError::NotUtf8`], [`DataError::Parse`] for a row
/// of fewer than 3 or more than 4 fields, a rating that is not a finite number or a repeated
/// (user, item) pair, [`DataError::Invalid`] for a file without ratings,
/// [`DataError::TooLarge`] for a `users x items` matrix that does not fit in memory.
pub fn read_ratings(path: &Path) -> Result<Ratings, DataError> {
    let text = read_text(path).map_err(|e| match e {
        DataError::Io { source, .. } => DataError::invalid(
            path.display().to_string(),
            format!(
                "cannot read it ({source}); expected a ratings file, `user item rating \
                 [timestamp]` per row: MovieLens 100K's u.data from \
                 https://grouplens.org/datasets/movielens/100k/, or ml-100k.inter, which `bash \
                 datasets/fetch-test-data.sh` puts in datasets/test-data/movielens"
            ),
        ),
        other => other,
    })?;
    let (mut users, mut items) = (HashMap::new(), HashMap::new());
    let mut out = Ratings {
        user: Vec::new(),
        item: Vec::new(),
        rating: Vec::new(),
        users: 0,
        items: 0,
    };
    let mut seen = std::collections::HashMap::new();
    let mut first = true;
    for (k, line) in text.lines().enumerate() {
        let line_no = k + 1;
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        if std::mem::take(&mut first) && fields[0].contains(':') {
            continue; // RecBole's header
        }
        if !(3..=4).contains(&fields.len()) {
            return Err(DataError::parse(
                path,
                line_no,
                format!(
                    "{} fields; expected user, item, rating and an optional timestamp",
                    fields.len()
                ),
            ));
        }
        let rating: f64 = fields[2]
            .parse()
            .ok()
            .filter(|r: &f64| r.is_finite())
            .ok_or_else(|| {
                DataError::parse(
                    path,
                    line_no,
                    format!("rating '{}' is not a finite number", fields[2]),
                )
            })?;
        let next = users.len();
        let u = *users.entry(fields[0].to_string()).or_insert(next);
        let next = items.len();
        let i = *items.entry(fields[1].to_string()).or_insert(next);
        if let Some(earlier) = seen.insert((u, i), line_no) {
            return Err(DataError::parse(
                path,
                line_no,
                format!(
                    "user {} rated item {} twice (also on line {earlier})",
                    fields[0], fields[1]
                ),
            ));
        }
        out.user.push(u);
        out.item.push(i);
        out.rating.push(rating);
    }
    if out.is_empty() {
        return Err(DataError::invalid(
            path.display().to_string(),
            "no ratings in the file",
        ));
    }
    (out.users, out.items) = (users.len(), items.len());
    check_dense(
        out.users,
        out.items,
        8,
        &format!("{} (the users x items matrix)", path.display()),
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_layouts_and_refuses_bad_rows() {
        let dir = std::env::temp_dir().join(format!("rankrisk-ratings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let inter = dir.join("a.inter");
        std::fs::write(
            &inter,
            "user_id:token\titem_id:token\trating:float\ttimestamp:float\n\
             196\t242\t3\t881250949\n186\t302\t3\t891717742\n196\t302\t5\t1\n",
        )
        .unwrap();
        let r = read_ratings(&inter).unwrap();
        assert_eq!((r.users, r.items, r.len()), (2, 2, 3));
        assert_eq!(
            (r.user.clone(), r.item.clone()),
            (vec![0, 1, 0], vec![0, 1, 1])
        );
        assert_eq!(r.rating, vec![3.0, 3.0, 5.0]);
        let (a, b) = r.split(2.0 / 3.0, 0).unwrap();
        assert_eq!((a.len(), b.len(), a.users, b.items), (2, 1, 2, 2));
        let mut all: Vec<f64> = a.rating.iter().chain(&b.rating).copied().collect();
        all.sort_by(f64::total_cmp);
        assert_eq!(all, vec![3.0, 3.0, 5.0]);

        let short = dir.join("short.data");
        std::fs::write(&short, "1 2 3\n4 5\n").unwrap();
        assert!(matches!(
            read_ratings(&short),
            Err(DataError::Parse { line: 2, .. })
        ));
        let twice = dir.join("twice.data");
        std::fs::write(&twice, "1 2 3\n1 2 4\n").unwrap();
        assert!(
            read_ratings(&twice)
                .unwrap_err()
                .to_string()
                .contains("twice")
        );
        let long = dir.join("long.data");
        std::fs::write(&long, "1 2 3 4 5\n").unwrap();
        assert!(matches!(
            read_ratings(&long),
            Err(DataError::Parse { line: 1, .. })
        ));
        let odd = dir.join("odd.data");
        std::fs::write(&odd, b"\n1 2 3\n1 3 \xff\n").unwrap();
        let msg = read_ratings(&odd).unwrap_err().to_string();
        assert!(msg.contains("line 3") && msg.contains("not UTF-8"), "{msg}");
        std::fs::write(&odd, "1 2 3\n1 3 nan\n").unwrap();
        let msg = read_ratings(&odd).unwrap_err().to_string();
        assert!(msg.contains("line 2") && msg.contains("'nan'"), "{msg}");
        let missing = read_ratings(&dir.join("absent")).unwrap_err().to_string();
        assert!(missing.contains("fetch-test-data.sh"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
