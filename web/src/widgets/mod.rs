//! What the views share: number formatting and the page's common pieces.

pub mod drop_zone;
pub mod number;
