//! The trust rule, enforced over every field of a receipt: a field the claimant controls can
//! never make a standing positive.
//!
//! Starting from a qualified receipt fired at `loadproof sim` (`data/receipt/native_sim.json`)
//! with a caller note and a stated knob added, every leaf of its JSON is changed, one at a
//! time, and audited. Each edit must end in one of four places: the file is refused as a
//! receipt; the audit refuses it (a digest, the protocol key, the capture block or a standing);
//! or it stays qualified with exactly the same audit and the edited field is one the audit
//! reports as a statement. It never stays qualified with a different number.

use loadproof_core::audit::{Audit, audit};
use loadproof_core::receipt::Receipt;
use serde_json::Value;

const FIXTURE: &[u8] = include_bytes!("data/receipt/native_sim.json");

/// Every leaf (scalar) of `v` as a JSON pointer.
fn leaves(v: &Value, pointer: &str, out: &mut Vec<String>) {
    let escape = |k: &str| k.replace('~', "~0").replace('/', "~1");
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                leaves(child, &format!("{pointer}/{}", escape(k)), out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                leaves(child, &format!("{pointer}/{i}"), out);
            }
        }
        _ => out.push(pointer.to_owned()),
    }
}

/// The edits tried on one leaf.
fn edits(v: &Value) -> Vec<Value> {
    match v {
        Value::Bool(b) => vec![Value::Bool(!b)],
        Value::Number(n) => {
            let mut out = Vec::new();
            if let Some(i) = n.as_i64() {
                out.push(Value::from(i.wrapping_add(1)));
                out.push(Value::from(i.wrapping_sub(1)));
            } else if let Some(u) = n.as_u64() {
                out.push(Value::from(u.wrapping_sub(1)));
            }
            if let Some(f) = n.as_f64()
                && n.as_i64().is_none()
            {
                out.push(Value::from(f * 2.0 + 1.0));
            }
            out
        }
        Value::String(s) => vec![Value::String(format!("{s}x")), Value::String(String::new())],
        Value::Null => vec![Value::from(1), Value::String("x".into())],
        _ => Vec::new(),
    }
}

/// The audit as JSON without what only echoes statements: the statements themselves and the
/// stated knobs.
fn judged(a: &Audit) -> Value {
    let mut v = serde_json::to_value(a).unwrap();
    let map = v.as_object_mut().unwrap();
    map.remove("statements");
    if let Some(Value::Array(knobs)) = map.get_mut("knobs") {
        knobs.retain(|k| k["status"] != "stated");
    }
    v
}

/// `subject/model/source` → `subject.model.source`.
fn dotted(pointer: &str) -> String {
    pointer
        .trim_start_matches('/')
        .split('/')
        .map(|p| p.replace("~1", "/").replace("~0", "~"))
        .collect::<Vec<_>>()
        .join(".")
}

fn base() -> Value {
    let mut v: Value = serde_json::from_slice(FIXTURE).unwrap();
    v["provenance"]["caller"]["ticket"] = Value::from("T-1");
    v["subject"]["knobs"]["scheduling_policy"] = Value::from("fcfs");
    v
}

#[test]
fn no_field_the_claimant_controls_makes_a_standing_positive() {
    let base = base();
    let receipt = Receipt::from_json(&serde_json::to_vec(&base).unwrap()).unwrap();
    let a0 = audit(&receipt);
    assert!(a0.qualified, "the fixture must qualify: {:?}", a0.refusals);
    let j0 = judged(&a0);
    let mut pointers = Vec::new();
    leaves(&base, "", &mut pointers);
    assert!(pointers.len() > 100, "{} leaves", pointers.len());

    let (mut refused_file, mut refused_audit, mut statement) = (0, 0, 0);
    let mut breaches = Vec::new();
    for pointer in &pointers {
        let original = base.pointer(pointer).unwrap().clone();
        for edit in edits(&original) {
            let mut m = base.clone();
            *m.pointer_mut(pointer).unwrap() = edit.clone();
            let Ok(r) = Receipt::from_json(&serde_json::to_vec(&m).unwrap()) else {
                refused_file += 1;
                continue;
            };
            let a = audit(&r);
            if !a.qualified {
                refused_audit += 1;
                continue;
            }
            let field = dotted(pointer);
            let reported = a
                .statements
                .iter()
                .any(|s| field == s.field || field.starts_with(&format!("{}.", s.field)));
            if judged(&a) != j0 {
                breaches.push(format!(
                    "{field} = {edit}: still qualified with another audit"
                ));
            } else if !reported {
                breaches.push(format!(
                    "{field} = {edit}: still qualified, and the audit does not report the field as a statement"
                ));
            } else {
                statement += 1;
            }
        }
    }
    assert!(
        breaches.is_empty(),
        "{} breach(es):\n{}",
        breaches.len(),
        breaches.join("\n")
    );
    assert!(refused_file > 0 && refused_audit > 0 && statement > 0);
    eprintln!(
        "{} leaves: {refused_file} edits refused as a receipt, {refused_audit} refused by the audit, {statement} reported as statements",
        pointers.len()
    );
}

#[test]
fn a_key_twice_anywhere_in_a_receipt_is_refused_by_name() {
    let text = String::from_utf8(FIXTURE.to_vec()).unwrap();
    // A forged number first, the honest one last: a last-wins reader would see the honest one.
    let forged = text.replacen(
        "\"schema\": \"loadproof.receipt/v1\",",
        "\"schema\": \"loadproof.receipt/v1\",\n  \"notes\": [],",
        1,
    );
    let e = Receipt::from_json(forged.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(e.contains("$.notes appears twice"), "{e}");
    let v: Value = serde_json::from_slice(FIXTURE).unwrap();
    let name = v["evidence"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let block = serde_json::to_string(&v["evidence"][&name]).unwrap();
    let doubled = text.replacen(
        "\"evidence\": {",
        &format!("\"evidence\": {{\n    {:?}: {block},", name),
        1,
    );
    let e = Receipt::from_json(doubled.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("$.evidence[{name:?}] appears twice")),
        "{e}"
    );
}
