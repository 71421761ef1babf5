//! What the views share: the chart on a canvas ([`canvas_figure`]) and the plotters plumbing
//! under it ([`plot`]), the file input ([`drop_zone`]), and numbers as text ([`number`]).

pub mod canvas_figure;
pub mod drop_zone;
pub mod number;
pub mod plot;
pub mod readout;
