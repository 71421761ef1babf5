//! The page's views, one module per area. Views hold signals and markup only; every number
//! they show comes from `loadproof_core` (directly or through [`crate::series`]).

pub mod charts;
pub mod compare;
pub mod playbook;
pub mod receipt;
pub mod trace;
