//! Reading a chart back under the pointer: where each panel was drawn, and what the drawn x
//! axis says at a pointer's position. A drawing records one [`Probe`] per panel it draws; the
//! chart's readout ([`super::canvas_figure::Readout`]) asks [`Probes::read`] what is under the
//! pointer, and each probe's `read` writes it with the tables' own formatter.

use std::cell::RefCell;
use std::rc::Rc;

/// A panel's plotting rectangle in CSS pixels of its canvas, and the drawn x range across it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    /// Left edge, px.
    pub left: i32,
    /// Right edge, px (exclusive).
    pub right: i32,
    /// Top edge, px.
    pub top: i32,
    /// Bottom edge, px (exclusive).
    pub bottom: i32,
    /// The drawn x value at the left edge.
    pub from: f64,
    /// The drawn x value at the right edge.
    pub to: f64,
    /// The drawn y value at the top edge.
    pub y_top: f64,
    /// The drawn y value at the bottom edge.
    pub y_bottom: f64,
}

impl Frame {
    /// The drawn x value at `x` px, when `(x, y)` is inside the rectangle.
    pub fn x_at(&self, x: f64, y: f64) -> Option<f64> {
        let inside = x >= f64::from(self.left)
            && x < f64::from(self.right)
            && y >= f64::from(self.top)
            && y < f64::from(self.bottom);
        let width = f64::from(self.right - self.left);
        (inside && width > 0.0)
            .then(|| self.from + (x - f64::from(self.left)) / width * (self.to - self.from))
    }

    /// The drawn y value at `y` px, when `(x, y)` is inside the rectangle.
    pub fn y_at(&self, x: f64, y: f64) -> Option<f64> {
        self.x_at(x, y)?;
        let height = f64::from(self.bottom - self.top);
        (height > 0.0)
            .then(|| self.y_top + (y - f64::from(self.top)) / height * (self.y_bottom - self.y_top))
    }
}

/// One panel of a chart: where it is, whether its x axis is log10 of the value, and what to
/// say about a value on it.
pub struct Probe {
    /// Where the panel was drawn.
    pub frame: Frame,
    /// True when the drawn x is log10 of the value.
    pub log: bool,
    /// True when the readout reads the drawn y (the row under the pointer), not x.
    pub along_y: bool,
    /// The readout for a value (not a drawn x): `None` where there is nothing to say.
    pub read: Box<dyn Fn(f64) -> Option<String>>,
}

/// The probes of a chart's latest drawing, shared by the drawing and its readout.
#[derive(Clone, Default)]
pub struct Probes(Rc<RefCell<Vec<Probe>>>);

impl Probes {
    /// Replaces the probes (a drawing starts afresh).
    pub fn set(&self, probes: Vec<Probe>) {
        *self.0.borrow_mut() = probes;
    }

    /// What the panel under `(x, y)` says there.
    pub fn read(&self, x: f64, y: f64) -> Option<String> {
        self.0.borrow().iter().find_map(|p| {
            let drawn = if p.along_y {
                p.frame.y_at(x, y)?
            } else {
                p.frame.x_at(x, y)?
            };
            (p.read)(if p.log { 10f64.powf(drawn) } else { drawn })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRAME: Frame = Frame {
        left: 100,
        right: 300,
        top: 10,
        bottom: 110,
        from: 0.0,
        to: 2.0,
        y_top: 10.0,
        y_bottom: 0.0,
    };

    #[test]
    fn a_frame_maps_pixels_to_its_x_range_linearly() {
        assert_eq!(FRAME.x_at(100.0, 50.0), Some(0.0));
        assert_eq!(FRAME.x_at(200.0, 50.0), Some(1.0));
        assert_eq!(FRAME.x_at(99.0, 50.0), None);
        assert_eq!(FRAME.x_at(200.0, 110.0), None);
    }

    #[test]
    fn probes_read_the_value_not_its_logarithm() {
        let probes = Probes::default();
        probes.set(vec![Probe {
            frame: FRAME,
            log: true,
            along_y: false,
            read: Box::new(|v| Some(format!("{v:.0}"))),
        }]);
        assert_eq!(probes.read(200.0, 50.0).as_deref(), Some("10"));
        assert_eq!(probes.read(10.0, 50.0), None);
    }

    #[test]
    fn a_row_probe_reads_the_drawn_y() {
        assert_eq!(FRAME.y_at(200.0, 10.0), Some(10.0));
        assert_eq!(FRAME.y_at(200.0, 60.0), Some(5.0));
        assert_eq!(FRAME.y_at(200.0, 120.0), None);
        let probes = Probes::default();
        probes.set(vec![Probe {
            frame: FRAME,
            log: false,
            along_y: true,
            read: Box::new(|v| Some(format!("{v:.0}"))),
        }]);
        assert_eq!(probes.read(150.0, 60.0).as_deref(), Some("5"));
    }
}
