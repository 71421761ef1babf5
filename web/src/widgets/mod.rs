//! What the views share: the chart on a canvas ([`canvas_figure`]), the plotters plumbing
//! under it ([`plot`]), the charts' colours ([`theme`]) and hover readouts ([`probe`]), the
//! file input ([`drop_zone`]), a download and the print dialog ([`export`]), the audit policy
//! panel of the Receipt and Compare views ([`policy_panel`], its trusted keys in
//! [`trusted_keys`]), numbers as text ([`number`]), and
//! the small pieces of markup that print them ([`readout`]: cells, lists, column headings,
//! status and error paragraphs).

pub mod canvas_figure;
pub mod drop_zone;
pub mod export;
pub mod number;
pub mod plot;
pub mod policy_panel;
pub mod probe;
pub mod readout;
pub mod theme;
pub mod trusted_keys;
