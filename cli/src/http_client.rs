//! What loadproof's two HTTP clients share: `fire`'s (`fire/http.rs`, `fire/native.rs`) and the
//! gateway's (`gate/proxy.rs`, `gate/readback.rs`), both talking to an OpenAI-compatible
//! server. A failed exchange is described in one line, and a `/v1/models` answer is read for the
//! model it serves.

/// The whole error chain in one line (hyper's top-level message alone says little).
pub fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// The first model id of a `/v1/models` body.
pub fn first_model_id(body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    v.get("data")?
        .as_array()?
        .first()?
        .get("id")?
        .as_str()
        .map(str::to_owned)
}
