//! The charts' colours in the page's colour scheme (`prefers-color-scheme`), so a chart in
//! the dark scheme is not a white slab: the paper and ink follow the page's CSS colour roles
//! (`--card` and `--fg` in `style.css`), and a series colour keeps its hue with its lightness
//! turned over, so the light scheme's dark-ish blue reads as a light blue on dark paper.

/// The page's colour scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// Dark text on light paper.
    Light,
    /// Light text on dark paper.
    Dark,
}

/// An sRGB colour, 8 bits a channel.
pub type Rgb = (u8, u8, u8);

impl Scheme {
    /// A chart's background: the cards' colour (`--card`).
    pub fn paper(self) -> Rgb {
        match self {
            Scheme::Light => (255, 255, 255),
            Scheme::Dark => (22, 27, 34),
        }
    }

    /// Text, axes and frames: the page's text colour (`--fg`).
    pub fn ink(self) -> Rgb {
        match self {
            Scheme::Light => (31, 35, 40),
            Scheme::Dark => (230, 237, 243),
        }
    }

    /// A series colour chosen for light paper, as this scheme draws it.
    pub fn series(self, color: Rgb) -> Rgb {
        match self {
            Scheme::Light => color,
            Scheme::Dark => {
                let (h, s, l) = to_hsl(color);
                from_hsl(h, s, (1.2 - l).clamp(0.62, 0.8))
            }
        }
    }
}

thread_local! {
    /// True between `beforeprint` and `afterprint`: paper is white, whatever the screen's scheme.
    static PRINTING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Says the page is (or no longer is) being printed: [`page_scheme`] is light meanwhile, as
/// the print stylesheet is, so a report printed from a dark screen has no dark slabs.
pub fn set_printing(on: bool) {
    PRINTING.with(|p| p.set(on));
}

/// The scheme the page is shown in (light when the browser cannot say, and in print).
pub fn page_scheme() -> Scheme {
    if PRINTING.with(std::cell::Cell::get) {
        return Scheme::Light;
    }
    let dark = web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|q| q.matches());
    if dark { Scheme::Dark } else { Scheme::Light }
}

/// Hue in turns (0–1), saturation and lightness (0–1).
fn to_hsl((r, g, b): Rgb) -> (f64, f64, f64) {
    let [r, g, b] = [r, g, b].map(|c| f64::from(c) / 255.0);
    let (max, min) = (r.max(g).max(b), r.min(g).min(b));
    let l = (max + min) / 2.0;
    let d = max - min;
    if d == 0.0 {
        return (0.0, 0.0, l);
    }
    let s = d / (1.0 - (2.0 * l - 1.0).abs());
    let h = if max == r {
        ((g - b) / d).rem_euclid(6.0)
    } else if max == g {
        (b - r) / d + 2.0
    } else {
        (r - g) / d + 4.0
    };
    (h / 6.0, s, l)
}

fn from_hsl(h: f64, s: f64, l: f64) -> Rgb {
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let h6 = h * 6.0;
    let x = c * (1.0 - (h6.rem_euclid(2.0) - 1.0).abs());
    let (r, g, b) = match h6 as u8 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let byte = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    (byte(r), byte(g), byte(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lightness(c: Rgb) -> f64 {
        to_hsl(c).2
    }

    #[test]
    fn light_scheme_keeps_series_colours() {
        assert_eq!(Scheme::Light.series((37, 99, 235)), (37, 99, 235));
    }

    #[test]
    fn dark_scheme_lightens_series_and_keeps_their_hue() {
        for c in [(37, 99, 235), (22, 163, 74), (200, 30, 30), (217, 119, 6)] {
            let d = Scheme::Dark.series(c);
            assert!(lightness(d) >= 0.6, "{c:?} → {d:?}");
            assert!((to_hsl(d).0 - to_hsl(c).0).abs() < 0.01, "{c:?} → {d:?}");
        }
    }

    #[test]
    fn hsl_round_trips() {
        for c in [
            (37, 99, 235),
            (0, 0, 0),
            (255, 255, 255),
            (124, 58, 237),
            (14, 116, 144),
        ] {
            let (h, s, l) = to_hsl(c);
            assert_eq!(from_hsl(h, s, l), c);
        }
    }

    #[test]
    fn dark_paper_is_dark_and_its_ink_light() {
        assert!(lightness(Scheme::Dark.paper()) < 0.2);
        assert!(lightness(Scheme::Dark.ink()) > 0.8);
    }
}
