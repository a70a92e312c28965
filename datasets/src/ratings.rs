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
/// optional header row (RecBole's `user_id:token ...`).
///
/// # Errors
/// [`DataError::Invalid`] for an unreadable file (the message says what the file must hold
/// and where MovieLens 100K comes from), [`DataError::Parse`] for a short row or a rating that is
/// not a finite number, [`DataError::Invalid`] for a file without ratings or a repeated
/// (user, item) pair.
pub fn read_ratings(path: &Path) -> Result<Ratings, DataError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        DataError::invalid(
            path.display().to_string(),
            format!(
                "cannot read it ({e}); expected a ratings file, `user item rating [timestamp]` \
                 per row: MovieLens 100K's u.data from \
                 https://grouplens.org/datasets/movielens/100k/, or ml-100k.inter, which `bash \
                 datasets/fetch-test-data.sh` puts in datasets/test-data/movielens"
            ),
        )
    })?;
    let (mut users, mut items) = (HashMap::new(), HashMap::new());
    let mut out = Ratings {
        user: Vec::new(),
        item: Vec::new(),
        rating: Vec::new(),
        users: 0,
        items: 0,
    };
    let mut seen = std::collections::HashSet::new();
    for (k, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() || (k == 0 && fields[0].contains(':')) {
            continue;
        }
        if fields.len() < 3 {
            return Err(DataError::parse(
                path,
                k + 1,
                format!("{} fields; expected user, item, rating", fields.len()),
            ));
        }
        let rating: f64 = fields[2]
            .parse()
            .ok()
            .filter(|r: &f64| r.is_finite())
            .ok_or_else(|| {
                DataError::parse(
                    path,
                    k + 1,
                    format!("rating '{}' is not a number", fields[2]),
                )
            })?;
        let next = users.len();
        let u = *users.entry(fields[0].to_string()).or_insert(next);
        let next = items.len();
        let i = *items.entry(fields[1].to_string()).or_insert(next);
        if !seen.insert((u, i)) {
            return Err(DataError::invalid(
                path.display().to_string(),
                format!(
                    "line {}: user {} rated item {} twice",
                    k + 1,
                    fields[0],
                    fields[1]
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
        let missing = read_ratings(&dir.join("absent")).unwrap_err().to_string();
        assert!(missing.contains("fetch-test-data.sh"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
