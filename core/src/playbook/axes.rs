//! The regime axes a row was measured under: the numbers the matcher compares by distance.
//!
//! Values are kept unrounded, exactly as [`Regime`] computes them (the predecessor truncated
//! percentiles to integers, which moved its distances in the third digit). Every axis is finite
//! and positive (burstiness: non-negative), so every distance between two valid axes is a
//! finite number: the matcher never meets an infinity or a NaN.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::plan::TimedTraceReader;
use crate::receipt::{Receipt, block};
use crate::regime::{MAX_WINDOWS, Regime, Window};
use crate::stats::{Percentiles, dispersion_index};

/// One regime axis. The order of [`RegimeAxis::ALL`] breaks ties when two axes are equally far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum RegimeAxis {
    /// Requests per second (an axis only when the policy says so).
    #[serde(rename = "rate_rps")]
    Rate,
    /// Index of dispersion D at the row's window.
    #[serde(rename = "burstiness")]
    Burstiness,
    /// Prompt tokens, median.
    #[serde(rename = "input_p50")]
    InputP50,
    /// Prompt tokens, 95th percentile.
    #[serde(rename = "input_p95")]
    InputP95,
    /// Completion tokens, median.
    #[serde(rename = "output_p50")]
    OutputP50,
    /// Completion tokens, 95th percentile.
    #[serde(rename = "output_p95")]
    OutputP95,
}

impl RegimeAxis {
    /// Every axis, in tie-breaking order.
    pub const ALL: [RegimeAxis; 6] = [
        RegimeAxis::Rate,
        RegimeAxis::Burstiness,
        RegimeAxis::InputP50,
        RegimeAxis::InputP95,
        RegimeAxis::OutputP50,
        RegimeAxis::OutputP95,
    ];

    /// The name used in JSON and reasons.
    pub fn name(self) -> &'static str {
        match self {
            RegimeAxis::Rate => "rate_rps",
            RegimeAxis::Burstiness => "burstiness",
            RegimeAxis::InputP50 => "input_p50",
            RegimeAxis::InputP95 => "input_p95",
            RegimeAxis::OutputP50 => "output_p50",
            RegimeAxis::OutputP95 => "output_p95",
        }
    }
}

impl fmt::Display for RegimeAxis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why numbers are not a usable regime.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AxesError {
    /// The regime could not compute this axis (a zero span has no rate; one window has no
    /// burstiness).
    #[error("the regime has no {axis}: {why}")]
    Undefined {
        /// The axis.
        axis: RegimeAxis,
        /// Why the regime left it out.
        why: &'static str,
    },
    /// Not a finite number.
    #[error("{axis} is {value}: not a finite number")]
    NotFinite {
        /// The axis.
        axis: RegimeAxis,
        /// The value.
        value: f64,
    },
    /// Zero or negative where only a positive value is meaningful: a ratio to it is undefined.
    #[error("{axis} is {value}: must be > 0 (a ratio to it is undefined)")]
    NotPositive {
        /// The axis.
        axis: RegimeAxis,
        /// The value.
        value: f64,
    },
    /// Burstiness below 0 (a variance cannot be negative).
    #[error("burstiness is {value}: an index of dispersion is never negative")]
    NegativeBurstiness {
        /// The value.
        value: f64,
    },
    /// The burstiness window is not a positive finite number of seconds.
    #[error("burstiness window {value} s: must be a finite number of seconds > 0")]
    BadWindow {
        /// The value.
        value: f64,
    },
    /// Schedule columns that are not one request per row in arrival order.
    #[error("not a schedule: {detail}")]
    Schedule {
        /// What is wrong with the columns.
        detail: String,
    },
    /// A receipt whose fired schedule cannot be read (not embedded, not the bytes its digest
    /// names, another file than the protocol names, or unreadable as it was fired).
    #[error("the receipt's fired schedule: {detail}")]
    Receipt {
        /// What is wrong, naming the evidence block or the protocol field.
        detail: String,
    },
    /// A median above its own 95th percentile.
    #[error("{which} tokens: p50 {p50} is above p95 {p95}")]
    PercentilesOutOfOrder {
        /// `input` or `output`.
        which: &'static str,
        /// The median.
        p50: f64,
        /// The 95th percentile.
        p95: f64,
    },
}

/// The regime axes of a row or a query. Fields are public plain data; [`RegimeAxes::validate`]
/// is run by every constructor that stores them (a row, a match) and by deserialization.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawAxes")]
pub struct RegimeAxes {
    /// Requests per second.
    pub rate_rps: f64,
    /// Index of dispersion D of per-window request counts.
    pub burstiness: f64,
    /// The window D was computed over, seconds. D at one window says nothing about D at
    /// another, so the matcher never compares across windows.
    pub window_s: f64,
    /// Prompt tokens, median.
    pub input_p50: f64,
    /// Prompt tokens, 95th percentile.
    pub input_p95: f64,
    /// Completion tokens, median.
    pub output_p50: f64,
    /// Completion tokens, 95th percentile.
    pub output_p95: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAxes {
    rate_rps: f64,
    burstiness: f64,
    window_s: f64,
    input_p50: f64,
    input_p95: f64,
    output_p50: f64,
    output_p95: f64,
}

impl TryFrom<RawAxes> for RegimeAxes {
    type Error = AxesError;

    fn try_from(r: RawAxes) -> Result<RegimeAxes, AxesError> {
        let axes = RegimeAxes {
            rate_rps: r.rate_rps,
            burstiness: r.burstiness,
            window_s: r.window_s,
            input_p50: r.input_p50,
            input_p95: r.input_p95,
            output_p50: r.output_p50,
            output_p95: r.output_p95,
        };
        axes.validate()?;
        Ok(axes)
    }
}

impl RegimeAxes {
    /// The axes of a computed regime, unrounded. Refuses a regime without a rate or a
    /// burstiness: an axis that is not there cannot be compared.
    pub fn of(regime: &Regime) -> Result<RegimeAxes, AxesError> {
        let rate_rps = regime.rate_rps.ok_or(AxesError::Undefined {
            axis: RegimeAxis::Rate,
            why: "all requests arrive at one instant",
        })?;
        let burstiness = regime.burstiness.ok_or(AxesError::Undefined {
            axis: RegimeAxis::Burstiness,
            why: "the span fits in one window (or in too many)",
        })?;
        let axes = RegimeAxes {
            rate_rps,
            burstiness,
            window_s: regime.window_s,
            input_p50: regime.input_tokens.p50,
            input_p95: regime.input_tokens.p95,
            output_p50: regime.output_tokens.p50,
            output_p95: regime.output_tokens.p95,
        };
        axes.validate()?;
        Ok(axes)
    }

    /// The axes of a replay schedule (a fired `timed_trace` as read back: arrivals in ns, one
    /// token pair per arrival), computed exactly as [`Regime::of`] computes them from a trace:
    /// arrivals rebased to the first, rate = n / span, D over `window` by
    /// [`dispersion_index`], token percentiles by [`Percentiles::of_u32`]. So the regime a row
    /// is filed under is the one its receipts' schedule had, and on a plan's own file it equals
    /// `RegimeAxes::of(&plan.regime)` bit for bit. Refuses columns of unequal length, an empty
    /// schedule and arrivals out of order (a schedule is replayed in file order, and the
    /// windows are counted over ascending arrivals).
    pub fn of_schedule(
        arrival_ns: &[i64],
        input: &[u32],
        output: &[u32],
        window: Window,
    ) -> Result<RegimeAxes, AxesError> {
        if arrival_ns.len() != input.len() || arrival_ns.len() != output.len() {
            return Err(AxesError::Schedule {
                detail: format!(
                    "{} arrivals, {} input lengths, {} output lengths: one of each per request",
                    arrival_ns.len(),
                    input.len(),
                    output.len()
                ),
            });
        }
        let Some(&first) = arrival_ns.first() else {
            return Err(AxesError::Undefined {
                axis: RegimeAxis::Rate,
                why: "the schedule has no requests",
            });
        };
        let mut rebased = Vec::with_capacity(arrival_ns.len());
        let mut previous = 0i64;
        for (i, &t) in arrival_ns.iter().enumerate() {
            let Some(r) = t.checked_sub(first).filter(|r| *r >= previous) else {
                return Err(AxesError::Schedule {
                    detail: format!(
                        "arrival {i} ({t} ns) is before the one preceding it: arrivals must be ascending"
                    ),
                });
            };
            rebased.push(r);
            previous = r;
        }
        let n = rebased.len() as u64;
        let span_ns = previous;
        let span_s = span_ns as f64 / 1e9;
        let rate_rps = (span_ns > 0)
            .then(|| n as f64 / span_s)
            .ok_or(AxesError::Undefined {
                axis: RegimeAxis::Rate,
                why: "all requests arrive at one instant",
            })?;
        let windows = span_ns / window.ns() + 1;
        let burstiness = if (2..=MAX_WINDOWS).contains(&windows) {
            dispersion_index(&rebased, window.ns())
        } else {
            None
        }
        .ok_or(AxesError::Undefined {
            axis: RegimeAxis::Burstiness,
            why: "the span fits in one window (or in too many)",
        })?;
        let input = Percentiles::of_u32(input);
        let output = Percentiles::of_u32(output);
        let axes = RegimeAxes {
            rate_rps,
            burstiness,
            window_s: window.secs(),
            input_p50: input.p50,
            input_p95: input.p95,
            output_p50: output.p50,
            output_p95: output.p95,
        };
        axes.validate()?;
        Ok(axes)
    }

    /// The axes of the traffic a receipt replayed: its embedded schedule (evidence block
    /// [`block::TIMED_TRACE`], digest verified and equal to `protocol.timed_trace_sha256`), read
    /// with the protocol's multiplier and chunk size as it was fired, then
    /// [`RegimeAxes::of_schedule`] with burstiness over `window` — the computation a playbook
    /// row's regime comes from, so a receipt of a row's own arms matches it at distance 0.
    /// Also returns the number of requests in the schedule.
    pub fn of_receipt(receipt: &Receipt, window: Window) -> Result<(RegimeAxes, usize), AxesError> {
        let bad = |detail: String| AxesError::Receipt { detail };
        let p = &receipt.protocol;
        let Some(embedded) = receipt.recorded_sha256(block::TIMED_TRACE) else {
            return Err(bad(format!(
                "not embedded (evidence block {:?}); fire embeds files up to 64 MiB",
                block::TIMED_TRACE
            )));
        };
        if let Some(named) = &p.timed_trace_sha256
            && named != embedded
        {
            return Err(bad(format!(
                "evidence block {:?} has sha256 {embedded}, the protocol names {named}",
                block::TIMED_TRACE,
            )));
        }
        let bytes = receipt
            .block(block::TIMED_TRACE)
            .map_err(|e| bad(e.to_string()))?;
        let multiplier = p.sec_multiplier.as_deref().ok_or_else(|| {
            bad("the protocol states no sec_multiplier: the timestamps are read with it".to_owned())
        })?;
        let chunk = p.chunk_size.ok_or_else(|| {
            bad(
                "the protocol states no chunk_size: the schedule is read as it was fired"
                    .to_owned(),
            )
        })?;
        let mut reader =
            TimedTraceReader::new(multiplier, chunk).map_err(|e| bad(e.to_string()))?;
        reader.push(&bytes);
        let back = reader.finish().map_err(|e| bad(e.to_string()))?;
        let axes = RegimeAxes::of_schedule(
            &back.arrival_ns,
            &back.input_tokens,
            &back.output_tokens,
            window,
        )?;
        Ok((axes, back.arrival_ns.len()))
    }

    /// The value on `axis`.
    pub fn get(&self, axis: RegimeAxis) -> f64 {
        match axis {
            RegimeAxis::Rate => self.rate_rps,
            RegimeAxis::Burstiness => self.burstiness,
            RegimeAxis::InputP50 => self.input_p50,
            RegimeAxis::InputP95 => self.input_p95,
            RegimeAxis::OutputP50 => self.output_p50,
            RegimeAxis::OutputP95 => self.output_p95,
        }
    }

    /// Every rule the distance relies on: finite values, positive rate and token percentiles
    /// (a log-ratio to 0 is infinite), D ≥ 0, a positive window, p50 ≤ p95.
    pub fn validate(&self) -> Result<(), AxesError> {
        for axis in RegimeAxis::ALL {
            let value = self.get(axis);
            if !value.is_finite() {
                return Err(AxesError::NotFinite { axis, value });
            }
            if axis == RegimeAxis::Burstiness {
                if value < 0.0 {
                    return Err(AxesError::NegativeBurstiness { value });
                }
            } else if value <= 0.0 {
                return Err(AxesError::NotPositive { axis, value });
            }
        }
        if !(self.window_s.is_finite() && self.window_s > 0.0) {
            return Err(AxesError::BadWindow {
                value: self.window_s,
            });
        }
        for (which, p50, p95) in [
            ("input", self.input_p50, self.input_p95),
            ("output", self.output_p50, self.output_p95),
        ] {
            if p50 > p95 {
                return Err(AxesError::PercentilesOutOfOrder { which, p50, p95 });
            }
        }
        Ok(())
    }
}
