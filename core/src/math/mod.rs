//! Layer 2, the core math every solver shares: vectors ([`vector`]), sorting and ranks
//! ([`order`]), the objective specifications ([`spec`]), the individual losses ([`loss`]), the
//! rank weights sigma of eq. (1)-(6) of the rank-based paper ([`weights`]), the regularizers
//! and their proximal maps ([`regularizer`]) and the refined PAVA of the z-step ([`pava`]).
//! Re-exported at the crate root (`rankrisk::loss`, ...).

pub mod loss;
pub mod order;
pub mod pava;
pub mod regularizer;
pub mod spec;
pub mod vector;
pub mod weights;
