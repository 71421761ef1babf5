//! What the views share: number formatting and the page's common pieces.

pub mod number;
