//! What the URL's hash names: a view, and on a published site which of its bundled receipts
//! is on screen (`#/receipt/NAME`, `#/compare/BASELINE/TREATMENT`), so a reviewer can hand a
//! colleague a link to exactly what they see.
//!
//! A name in the hash is untrusted text: it is only ever looked up among the names the site's
//! own `receipts.json` lists (the views fetch the listed path, never the name), and shown as
//! text. Names are percent-encoded in the hash so any file name survives a round trip; a
//! broken escape reads as the literal text, never as an error.

use leptos::prelude::*;
use wasm_bindgen::JsValue;

/// The page's address (provided by `App`): the view and what the hash links to
/// (`#/receipt/NAME`), for the views to follow ([`Here::linked`]) and to name what they show
/// ([`Here::name`]).
#[derive(Debug, Clone, Copy)]
pub struct Here(RwSignal<Address>);

impl Here {
    /// Wraps the page's address signal.
    pub fn new(address: RwSignal<Address>) -> Here {
        Here(address)
    }

    /// The one `App` provides.
    pub fn from_context() -> Here {
        expect_context::<Here>()
    }

    /// The view on screen.
    pub fn route(self) -> Route {
        self.0.with(|a| a.route)
    }

    /// What the hash links to now.
    pub fn linked(self) -> Linked {
        self.0.with(|a| a.linked.clone())
    }

    /// Makes the address bar name `linked` while `route`'s view is on screen, without a new
    /// history entry or a `hashchange` (the view already shows it). A hidden view's change
    /// names nothing: the address bar names what is on screen.
    pub fn name(self, route: Route, linked: Linked) {
        let address = Address { route, linked };
        if self.0.with_untracked(|a| *a == address || a.route != route) {
            return;
        }
        if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
            let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(&address.hash()));
        }
        self.0.set(address);
    }
}

/// What the window's hash says now.
pub fn current_address() -> Address {
    let hash = web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default();
    Address::of_hash(&hash)
}

/// Which view the URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `#/`, `#/trace`, or any hash not known: the trace view.
    Trace,
    /// `#/receipt`, `#/receipt/NAME`.
    Receipt,
    /// `#/compare`, `#/compare/BASELINE/TREATMENT`.
    Compare,
    /// `#/playbook`.
    Playbook,
}

/// Which bundled receipts the hash names, beside its view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Linked {
    /// None: the view's default (the first bundled receipt, the first two) or a local file.
    Nothing,
    /// `#/receipt/NAME`.
    Receipt(String),
    /// `#/compare/BASELINE/TREATMENT`.
    Pair(String, String),
}

/// The whole of what a hash says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    /// The view.
    pub route: Route,
    /// What it shows, when the hash names it.
    pub linked: Linked,
}

impl Route {
    /// Every view, in the navigation's order.
    pub const ALL: [Route; 4] = [
        Route::Trace,
        Route::Receipt,
        Route::Compare,
        Route::Playbook,
    ];

    /// The route's word: in its hash (`#/receipt`) and its ids (`nav-receipt`, `view-receipt`).
    pub fn slug(self) -> &'static str {
        match self {
            Route::Trace => "trace",
            Route::Receipt => "receipt",
            Route::Compare => "compare",
            Route::Playbook => "playbook",
        }
    }

    /// The navigation link's text.
    pub fn label(self) -> &'static str {
        match self {
            Route::Trace => "Trace",
            Route::Receipt => "Receipt",
            Route::Compare => "Compare",
            Route::Playbook => "Playbook",
        }
    }

    /// The route a `location.hash` names.
    pub fn of_hash(hash: &str) -> Route {
        Address::of_hash(hash).route
    }
}

impl Address {
    /// Reads a `location.hash` (`#/receipt/a.json`); anything not understood is the trace view.
    pub fn of_hash(hash: &str) -> Address {
        let path = hash.trim_start_matches('#').trim_start_matches('/');
        let mut parts = path.split('/');
        let head = parts.next().unwrap_or_default();
        let rest: Vec<String> = parts.filter(|p| !p.is_empty()).map(decode).collect();
        let (route, linked) = match (head, rest.as_slice()) {
            ("receipt", []) => (Route::Receipt, Linked::Nothing),
            ("receipt", [name]) => (Route::Receipt, Linked::Receipt(name.clone())),
            ("compare", []) => (Route::Compare, Linked::Nothing),
            ("compare", [a, b]) => (Route::Compare, Linked::Pair(a.clone(), b.clone())),
            // One name, or three: the view, with nothing linked (the view says why).
            ("receipt", _) => (Route::Receipt, Linked::Nothing),
            ("compare", _) => (Route::Compare, Linked::Nothing),
            ("playbook", _) => (Route::Playbook, Linked::Nothing),
            _ => (Route::Trace, Linked::Nothing),
        };
        Address { route, linked }
    }

    /// The hash that names this address (`#/compare/a.json/b.json`).
    pub fn hash(&self) -> String {
        match &self.linked {
            Linked::Nothing => format!("#/{}", self.route.slug()),
            Linked::Receipt(name) => format!("#/receipt/{}", encode(name)),
            Linked::Pair(a, b) => format!("#/compare/{}/{}", encode(a), encode(b)),
        }
    }
}

/// Percent-encodes everything but unreserved characters (RFC 3986), so `/`, `#`, `%`, spaces
/// and markup characters in a file name cannot change what the hash says.
fn encode(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The inverse of [`encode`]; a `%` not followed by two hex digits, or bytes that are not
/// UTF-8, are kept as written (a hand-typed link still names something, if not a receipt).
fn decode(part: &str) -> String {
    let bytes = part.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b, hex) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| part.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linked(hash: &str) -> Linked {
        Address::of_hash(hash).linked
    }

    #[test]
    fn every_link_names_its_own_route() {
        for r in Route::ALL {
            assert_eq!(Route::of_hash(&format!("#/{}", r.slug())), r);
            assert_eq!(Route::of_hash(&format!("#/{}/", r.slug())), r);
        }
        assert_eq!(Route::of_hash(""), Route::Trace);
        assert_eq!(Route::of_hash("#/nowhere"), Route::Trace);
        assert_eq!(Route::of_hash("#playbook"), Route::Playbook);
    }

    #[test]
    fn a_receipt_link_names_one_bundled_receipt() {
        assert_eq!(
            linked("#/receipt/baseline.json"),
            Linked::Receipt("baseline.json".into())
        );
        assert_eq!(Route::of_hash("#/receipt/baseline.json"), Route::Receipt);
        assert_eq!(linked("#/receipt"), Linked::Nothing);
        assert_eq!(linked("#/receipt/"), Linked::Nothing);
        assert_eq!(linked("#/receipt/a/b"), Linked::Nothing);
    }

    #[test]
    fn a_compare_link_names_a_pair_in_order() {
        assert_eq!(
            linked("#/compare/base.json/treat.json"),
            Linked::Pair("base.json".into(), "treat.json".into())
        );
        assert_eq!(linked("#/compare/only.json"), Linked::Nothing);
        assert_eq!(Route::of_hash("#/compare/only.json"), Route::Compare);
        assert_eq!(linked("#/playbook/x"), Linked::Nothing);
    }

    #[test]
    fn any_name_survives_the_round_trip_through_a_hash() {
        for name in [
            "baseline.json",
            "a b.json",
            "50%.json",
            "x/y",
            "#/compare/a/b",
            "<img src=x onerror=alert(1)>",
            "ünï.json",
            "..",
        ] {
            let address = Address {
                route: Route::Receipt,
                linked: Linked::Receipt(name.into()),
            };
            let hash = address.hash();
            assert!(
                !hash[2..].contains(['<', '>', '"', '#', ' ']),
                "{hash}: markup or a second hash in the link"
            );
            assert_eq!(Address::of_hash(&hash), address, "{name:?}");
        }
        let pair = Address {
            route: Route::Compare,
            linked: Linked::Pair("a/b".into(), "c d".into()),
        };
        assert_eq!(Address::of_hash(&pair.hash()), pair);
    }

    #[test]
    fn a_broken_escape_reads_as_written_never_a_panic() {
        for (hash, name) in [
            ("#/receipt/%", "%"),
            ("#/receipt/%4", "%4"),
            ("#/receipt/%zz.json", "%zz.json"),
            ("#/receipt/%FF%FE", "%FF%FE"),
            ("#/receipt/%E2%82", "%E2%82"),
        ] {
            assert_eq!(linked(hash), Linked::Receipt(name.into()), "{hash}");
        }
    }
}
