//! The code blocks shown on the guide's pages, compiled here so that they stay true to Burn 0.21.
#![allow(dead_code, missing_docs)]

pub mod accumulation;
pub mod batch_size;
pub mod no_grad;
