//! Small pieces of markup the views print numbers, lists and messages with: a readable number
//! with the exact one in its `title`, a list that says "none" when empty, a table's column
//! headings, a status or error paragraph shown while there is one, a yes/no, a date.
//!
//! They only format; every value comes from core (through a view's model). The digits follow
//! [`super::number`]: [`super::number::readable`] for reading, [`super::number::js`] where a
//! test compares the exact value.

use std::collections::BTreeMap;

use leptos::prelude::*;
use wasm_bindgen::JsValue;

use super::number::{ABSENT, js, readable};

/// A number for reading, `—` when absent.
pub fn num(x: Option<f64>) -> String {
    x.map_or_else(|| ABSENT.to_owned(), readable)
}

/// The exact value, for an element's `title`.
pub fn exact(x: Option<f64>) -> Option<String> {
    x.map(js)
}

/// A whole count for reading.
pub fn int(n: u64) -> String {
    readable(n as f64)
}

/// A whole count for reading, `—` when absent.
pub fn int_opt(n: Option<u64>) -> String {
    n.map_or_else(|| ABSENT.to_owned(), int)
}

/// Names compared as a reader sorts them: runs of digits by their value, so `metrics/2` comes
/// before `metrics/10` and `metrics/200` before `metrics/2000`; ties fall back to the text.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> impl Iterator<Item = (bool, &str)> {
        let mut rest = s;
        std::iter::from_fn(move || {
            let first = rest.chars().next()?;
            let digit = first.is_ascii_digit();
            let end = rest
                .find(|c: char| c.is_ascii_digit() != digit)
                .unwrap_or(rest.len());
            let (chunk, tail) = rest.split_at(end);
            rest = tail;
            Some((digit, chunk))
        })
    }
    let mut x = chunks(a);
    let mut y = chunks(b);
    loop {
        let order = match (x.next(), y.next()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return std::cmp::Ordering::Less,
            (Some(_), None) => return std::cmp::Ordering::Greater,
            (Some((true, p)), Some((true, q))) => {
                let (p, q) = (p.trim_start_matches('0'), q.trim_start_matches('0'));
                p.len().cmp(&q.len()).then_with(|| p.cmp(q))
            }
            (Some((_, p)), Some((_, q))) => p.cmp(q),
        };
        if order.is_ne() {
            return order;
        }
    }
}

/// `yes` or `no`.
pub fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// A Unix-ns instant as an ISO date (UTC), as the browser writes it.
pub fn when(unix_ns: i64) -> String {
    let date = js_sys::Date::new(&JsValue::from_f64(unix_ns as f64 / 1e6));
    String::from(date.to_iso_string())
}

/// `k=v, k2=v2` in key order; empty when there are none (the caller says what that means).
pub fn key_values(pairs: &BTreeMap<String, String>) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A `<td class="num">` with the readable value and the exact one in its title.
pub fn td(x: Option<f64>) -> impl IntoView {
    view! {
        <td class="num" title=exact(x)>
            {num(x)}
        </td>
    }
}

/// A `<dd class="num-dd">` the same way.
pub fn dd(id: &'static str, x: Option<f64>) -> impl IntoView {
    view! {
        <dd id=id class="num-dd" title=exact(x)>
            {num(x)}
        </dd>
    }
}

/// A `<span class="n">` for reading, its exact value as the tooltip and in `data-value`.
pub fn num_span(x: f64) -> impl IntoView {
    view! { <span class="n" title=js(x) data-value=js(x)>{readable(x)}</span> }
}

/// `<ul id=…>` of `items`, or one `<li class="hint">none</li>`.
pub fn list(id: &'static str, items: Vec<String>) -> impl IntoView {
    view! {
        <ul id=id>
            {if items.is_empty() {
                view! { <li class="hint">"none"</li> }.into_any()
            } else {
                items.into_iter().map(|i| view! { <li>{i}</li> }).collect_view().into_any()
            }}
        </ul>
    }
}

/// One column heading of a table.
#[derive(Debug, Clone, Copy)]
pub enum Col {
    /// A column of text.
    Text(&'static str),
    /// A column of numbers (`class="num"`, aligned right).
    Num(&'static str),
}

/// `<thead>` with one `<th scope="col">` per column.
pub fn thead(columns: &[Col]) -> impl IntoView + use<> {
    let heads = columns
        .iter()
        .map(|c| match *c {
            Col::Text(label) => view! { <th scope="col">{label}</th> }.into_any(),
            Col::Num(label) => view! { <th scope="col" class="num">{label}</th> }.into_any(),
        })
        .collect_view();
    view! {
        <thead>
            <tr>{heads}</tr>
        </thead>
    }
}

/// A paragraph (`<p id class role>`) showing `text` while there is one: a status, an error.
#[component]
pub fn Message(
    /// The paragraph's id.
    #[prop(into)]
    id: String,
    /// Its classes (`hint`, `error`).
    class: &'static str,
    /// Its ARIA role (`status`, `alert`), when it has one.
    #[prop(optional)]
    role: Option<&'static str>,
    /// What it says, when it says anything.
    #[prop(into)]
    text: Signal<Option<String>>,
) -> impl IntoView {
    move || {
        text.get().map(|text| {
            view! {
                <p id=id.clone() class=class role=role>
                    {text}
                </p>
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::{int_opt, key_values, natural_cmp, num};

    #[test]
    fn block_names_sort_as_a_reader_expects() {
        let mut names = vec![
            "metrics/2000",
            "metrics/20",
            "metrics/3",
            "bench/stdout",
            "metrics/200",
            "metrics/03",
        ];
        names.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            names,
            [
                "bench/stdout",
                "metrics/03",
                "metrics/3",
                "metrics/20",
                "metrics/200",
                "metrics/2000"
            ]
        );
    }

    #[test]
    fn absent_values_read_as_a_dash() {
        assert_eq!(num(None), "—");
        assert_eq!(num(Some(1234.6)), "1,235");
        assert_eq!(int_opt(None), "—");
        assert_eq!(int_opt(Some(12_345)), "12,345");
    }

    #[test]
    fn key_values_are_one_line_in_key_order() {
        let pairs = BTreeMap::from([
            ("b".to_owned(), "2".to_owned()),
            ("a".to_owned(), "1".to_owned()),
        ]);
        assert_eq!(key_values(&pairs), "a=1, b=2");
        assert_eq!(key_values(&BTreeMap::new()), "");
    }
}
