//! Why an objective refused a batch, a setting or a record: [`TrainError`], the error of every
//! objective of [`crate::train`] (the core crate's, re-exported).

pub use rankrisk_core::objective::TrainError;
