//! The page's four views, one folder each: the view (signals and markup), its model (what it
//! shows, computed with `loadproof_core`) and its drawing code. Views hold signals and markup
//! only; every number they show comes from `loadproof_core`, directly or through their model.

pub mod compare;
pub mod playbook;
pub mod receipt;
pub mod trace;
