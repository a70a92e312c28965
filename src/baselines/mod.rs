//! Competing methods the papers compare against, on the same objectives.

pub mod spectral;
