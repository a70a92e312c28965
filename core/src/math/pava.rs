//! The z-step of the rank-based ADMM: the refined pool-adjacent-violators algorithm
//! (Algorithm 2 and Appendix B.3 of papers/rank-based-loss-admm.txt) for problem (10),
//!
//! ```text
//! min_z  sum_i sigma_i l(z_i) + rho/2 (z_i - m_i)^2   s.t.  z_1 <= z_2 <= ... <= z_n,
//! ```
//!
//! with `m` sorted ascending and `sigma_i` the weight of the i-th smallest loss.
//!
//! A block `[p, q]` is summarized by its length, its weight sum and the sum of its `m`: its
//! optimal common value is `prox_{t l}(mean m)` with `t = sum sigma / (rho * length)` (see
//! [`Loss::prox`]), so merging two blocks is O(1) plus one 1-D solve.
//!
//! - Proposition 1: a run of consecutive out-of-order blocks ends up in one block, so a
//!   decreasing run of singletons is merged in one solve instead of pairwise.
//! - Proposition 3: blocks can only be out of order where the average weight increases. For
//!   weights that are zero outside one range of ranks and constant inside it (ERM, top-k,
//!   AoRR in both conventions, CVaR with integer `qn`) the only violations are around the
//!   block holding the first rank of that range, so the violator search is O(1) per merge.
//! - CPT weights (eq. 4) make each block a two-piece function; each convex piece is minimized
//!   and the better kept, which satisfies the first-order condition (11).

use crate::math::loss::Loss;
use crate::math::order::ascending;
use crate::math::weights::{Sigma, constant_support};

/// Why the PAVA refused its input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PavaError {
    /// `m` holds NaN or infinity.
    #[error("m[{index}] = {value} is not finite")]
    NonFinite {
        /// Position of the first bad entry.
        index: usize,
        /// Its value.
        value: f64,
    },
    /// `rho` is not a positive finite number.
    #[error("rho must be a positive finite number, got {0}")]
    BadRho(f64),
    /// A block solve left the floating-point range: the loss or its derivative overflows at
    /// this scale of `m` and `rho` (rescale the inputs).
    #[error(
        "the solution overflowed at m[{index}] = {value:e} (the loss or its derivative is not \
         finite at this scale of m and rho)"
    )]
    Overflow {
        /// Position (in the caller's order) of the first non-finite entry of `z`.
        index: usize,
        /// The `m` value there.
        value: f64,
    },
    /// The weights are for another `n`.
    #[error("{weights} weights for {m} values of m")]
    LengthMismatch {
        /// Number of weights.
        weights: usize,
        /// Number of values.
        m: usize,
    },
}

/// Diagnostics of one PAVA solve.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct PavaStats {
    /// Number of blocks (distinct values) in the solution.
    pub blocks: usize,
    /// Number of block merges performed.
    pub merges: usize,
    /// Total Newton/bisection iterations spent in 1-D block solves.
    pub solver_iterations: u64,
    /// Whether the O(1) violator search of Proposition 3 was used.
    pub constant_support: bool,
}

/// Reusable workspace: after the first call of a given size, solves allocate nothing.
#[derive(Debug, Default, Clone)]
pub struct Pava {
    order: Vec<(f64, u32)>,
    m_sorted: Vec<f64>,
    z_sorted: Vec<f64>,
    blocks: Vec<Block>,
}

#[derive(Debug, Clone, Copy)]
struct Block {
    start: usize,
    len: usize,
    /// Sum of sigma (for CPT: of sigma for z <= b).
    s_minus: f64,
    /// For CPT: sum of sigma for z > b (unused otherwise).
    s_plus: f64,
    m_sum: f64,
    value: f64,
}

/// The 1-D block problem: `min_v S l(v) + rho/2 * len * (v - mean)^2`.
struct BlockSolver<'a> {
    loss: &'a Loss,
    rho: f64,
    /// `Some(b)` for CPT weights.
    cpt_b: Option<f64>,
}

impl BlockSolver<'_> {
    fn solve(&self, len: usize, s_minus: f64, s_plus: f64, m_sum: f64, iters: &mut u64) -> f64 {
        let lenf = len as f64;
        let mean = m_sum / lenf;
        let scale = self.rho * lenf;
        match self.cpt_b {
            None => {
                let (v, it) = self.loss.prox(s_minus / scale, mean);
                *iters += u64::from(it);
                v
            }
            Some(b) => {
                // Piece v <= b with weight sum s_minus, piece v > b with s_plus; each convex.
                let (p1, it1) = self.loss.prox(s_minus / scale, mean);
                let (p2, it2) = self.loss.prox(s_plus / scale, mean);
                *iters += u64::from(it1 + it2);
                let v1 = p1.min(b);
                let v2 = p2.max(b);
                let h =
                    |s: f64, v: f64| s * self.loss.value(v) + 0.5 * scale * (v - mean) * (v - mean);
                // When the right piece's infimum sits at b (not attained), b itself belongs to
                // the left piece: keep v1.
                if v2 > b && h(s_plus, v2) < h(s_minus, v1) {
                    v2
                } else {
                    v1
                }
            }
        }
    }
}

impl Pava {
    /// An empty workspace.
    pub fn new() -> Self {
        Self::default()
    }

    /// Solve problem (10) for `m` in any order; `z` receives the solution in the caller's
    /// order. `m` is sorted stably (ties keep their input order), so `z` is sorted like `m`.
    ///
    /// # Errors
    /// [`PavaError`] for NaN/infinite `m`, `rho <= 0`, or weights of another length, and
    /// [`PavaError::Overflow`] when the solution is not finite.
    pub fn solve(
        &mut self,
        loss: &Loss,
        sigma: &Sigma,
        rho: f64,
        m: &[f64],
        z: &mut [f64],
    ) -> Result<PavaStats, PavaError> {
        let n = m.len();
        assert_eq!(z.len(), n, "z must have the length of m");
        self.check(sigma, rho, m)?;
        self.order.clear();
        self.order
            .extend(m.iter().enumerate().map(|(i, &v)| (v, i as u32)));
        self.order
            .sort_unstable_by(|a, b| ascending(&a.0, &b.0).then(a.1.cmp(&b.1)));
        self.m_sorted.clear();
        self.m_sorted.extend(self.order.iter().map(|p| p.0));
        self.z_sorted.clear();
        self.z_sorted.resize(n, 0.0);
        let mut m_sorted = std::mem::take(&mut self.m_sorted);
        let mut z_sorted = std::mem::take(&mut self.z_sorted);
        let stats = self.solve_sorted_unchecked(loss, sigma, rho, &m_sorted, &mut z_sorted);
        for (&(_, idx), &v) in self.order.iter().zip(&z_sorted) {
            z[idx as usize] = v;
        }
        m_sorted.clear();
        self.m_sorted = m_sorted;
        self.z_sorted = z_sorted;
        finite(m, z)?;
        Ok(stats)
    }

    /// Solve problem (10) for `m` already sorted ascending; `z` receives the sorted solution.
    ///
    /// # Errors
    /// As [`Pava::solve`]; additionally `m` must be sorted (checked).
    pub fn solve_sorted(
        &mut self,
        loss: &Loss,
        sigma: &Sigma,
        rho: f64,
        m: &[f64],
        z: &mut [f64],
    ) -> Result<PavaStats, PavaError> {
        assert_eq!(z.len(), m.len(), "z must have the length of m");
        self.check(sigma, rho, m)?;
        assert!(
            m.windows(2).all(|w| w[0] <= w[1]),
            "solve_sorted needs m sorted ascending"
        );
        let stats = self.solve_sorted_unchecked(loss, sigma, rho, m, z);
        finite(m, z)?;
        Ok(stats)
    }

    fn check(&self, sigma: &Sigma, rho: f64, m: &[f64]) -> Result<(), PavaError> {
        if !(rho.is_finite() && rho > 0.0) {
            return Err(PavaError::BadRho(rho));
        }
        if sigma.len() != m.len() {
            return Err(PavaError::LengthMismatch {
                weights: sigma.len(),
                m: m.len(),
            });
        }
        if let Some(index) = m.iter().position(|v| !v.is_finite()) {
            return Err(PavaError::NonFinite {
                index,
                value: m[index],
            });
        }
        Ok(())
    }

    fn solve_sorted_unchecked(
        &mut self,
        loss: &Loss,
        sigma: &Sigma,
        rho: f64,
        m: &[f64],
        z: &mut [f64],
    ) -> PavaStats {
        let n = m.len();
        if n == 0 {
            return PavaStats::default();
        }
        match sigma {
            Sigma::Fixed(s) => {
                let solver = BlockSolver {
                    loss,
                    rho,
                    cpt_b: None,
                };
                match constant_support(s) {
                    None if s.iter().all(|&v| v == 0.0) => {
                        z.copy_from_slice(m);
                        PavaStats {
                            blocks: n,
                            ..PavaStats::default()
                        }
                    }
                    Some((start, end, c)) => support_pava(&solver, m, start, end, c, z),
                    None => self.stack_pava(&solver, m, s, s, true, z),
                }
            }
            Sigma::Cpt { minus, plus, b } => {
                let solver = BlockSolver {
                    loss,
                    rho,
                    cpt_b: Some(*b),
                };
                self.stack_pava(&solver, m, minus, plus, false, z)
            }
        }
    }

    /// Algorithm 2 with a stack of in-order blocks. With `run_merge` (convex blocks), a
    /// decreasing run of singletons is pooled at once (Proposition 1).
    fn stack_pava(
        &mut self,
        solver: &BlockSolver<'_>,
        m: &[f64],
        s_minus: &[f64],
        s_plus: &[f64],
        run_merge: bool,
        z: &mut [f64],
    ) -> PavaStats {
        let n = m.len();
        let mut stats = PavaStats::default();
        let blocks = &mut self.blocks;
        blocks.clear();
        blocks.reserve(n);
        let single =
            |i: usize, iters: &mut u64| solver.solve(1, s_minus[i], s_plus[i], m[i], iters);
        let mut i = 0;
        let mut next_value = single(0, &mut stats.solver_iterations);
        while i < n {
            let mut block = Block {
                start: i,
                len: 1,
                s_minus: s_minus[i],
                s_plus: s_plus[i],
                m_sum: m[i],
                value: next_value,
            };
            i += 1;
            if i < n {
                next_value = single(i, &mut stats.solver_iterations);
            }
            if run_merge {
                // Extend over the decreasing run v_i > v_{i+1} > ... of singletons.
                let mut last = block.value;
                while i < n && next_value < last {
                    last = next_value;
                    block.len += 1;
                    block.s_minus += s_minus[i];
                    block.s_plus += s_plus[i];
                    block.m_sum += m[i];
                    i += 1;
                    if i < n {
                        next_value = single(i, &mut stats.solver_iterations);
                    }
                }
                if block.len > 1 {
                    stats.merges += block.len - 1;
                    block.value = solver.solve(
                        block.len,
                        block.s_minus,
                        block.s_plus,
                        block.m_sum,
                        &mut stats.solver_iterations,
                    );
                }
            }
            // Pool backwards while the previous block is out of order.
            while let Some(prev) = blocks.last() {
                if prev.value <= block.value {
                    break;
                }
                block.start = prev.start;
                block.len += prev.len;
                block.s_minus += prev.s_minus;
                block.s_plus += prev.s_plus;
                block.m_sum += prev.m_sum;
                blocks.pop();
                stats.merges += 1;
                block.value = solver.solve(
                    block.len,
                    block.s_minus,
                    block.s_plus,
                    block.m_sum,
                    &mut stats.solver_iterations,
                );
            }
            blocks.push(block);
        }
        for b in blocks.iter() {
            z[b.start..b.start + b.len].fill(b.value);
        }
        stats.blocks = blocks.len();
        stats
    }
}

/// Proposition 3: weights `c` on ranks `[start, end)` and 0 elsewhere. Every singleton is in
/// order except around rank `start`; only the block holding it, its predecessor and its
/// successor are ever compared.
fn support_pava(
    solver: &BlockSolver<'_>,
    m: &[f64],
    start: usize,
    end: usize,
    c: f64,
    z: &mut [f64],
) -> PavaStats {
    let n = m.len();
    let mut stats = PavaStats {
        constant_support: true,
        ..PavaStats::default()
    };
    z[..start].copy_from_slice(&m[..start]);
    z[end..].copy_from_slice(&m[end..]);
    for i in start..end {
        z[i] = solver.solve(1, c, 0.0, m[i], &mut stats.solver_iterations);
    }
    let (mut lo, mut hi) = (start, start);
    let mut s_sum = c;
    let mut m_sum = m[start];
    let mut value = z[start];
    loop {
        if lo > 0 && z[lo - 1] > value {
            // Ranks below `start` carry no weight.
            lo -= 1;
            m_sum += m[lo];
        } else if hi + 1 < n && value > z[hi + 1] {
            hi += 1;
            m_sum += m[hi];
            if hi < end {
                s_sum += c;
            }
        } else {
            break;
        }
        stats.merges += 1;
        value = solver.solve(hi - lo + 1, s_sum, 0.0, m_sum, &mut stats.solver_iterations);
    }
    z[lo..=hi].fill(value);
    stats.blocks = n - (hi - lo);
    stats
}

/// [`PavaError::Overflow`] at the first non-finite `z`.
fn finite(m: &[f64], z: &[f64]) -> Result<(), PavaError> {
    match z.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(PavaError::Overflow {
            index,
            value: m[index],
        }),
        None => Ok(()),
    }
}

/// The objective of problem (10) at `z`: `Omega(z) + rho/2 ||z - m||^2`, with `Omega` of
/// eq. (9) (weights by the rank of `z`).
pub fn objective(loss: &Loss, sigma: &Sigma, rho: f64, m: &[f64], z: &[f64]) -> f64 {
    let quad: f64 = z.iter().zip(m).map(|(a, b)| (a - b) * (a - b)).sum();
    sigma.rank_loss(loss, z) + 0.5 * rho * quad
}

/// Convenience: solve problem (10) with a fresh workspace, returning `z` in the order of `m`.
///
/// # Errors
/// As [`Pava::solve`].
pub fn solve(
    loss: &Loss,
    sigma: &Sigma,
    rho: f64,
    m: &[f64],
) -> Result<(Vec<f64>, PavaStats), PavaError> {
    let mut z = vec![0.0; m.len()];
    let stats = Pava::new().solve(loss, sigma, rho, m, &mut z)?;
    Ok((z, stats))
}
