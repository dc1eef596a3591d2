//! The JSON form of responses, in one place: field names are snake_case (as
//! the generated types' fields), and enum values are snake_case strings as
//! well (`"range_type": "lines"`), which the derived serde impls of the
//! generated types would spell `"Lines"`.

use serde::Serialize;
use serde_json::Value;

/// A response as the JSON object front ends print or send.
pub fn to_value(response: &impl Serialize) -> Value {
    let mut v = serde_json::to_value(response).expect("responses serialize");
    // The enums a response carries: read-file's `range.range_type`, a
    // search's `stats.index`.
    for at in ["/range/range_type", "/stats/index"] {
        if let Some(t) = v.pointer_mut(at) {
            if let Some(s) = t.as_str() {
                *t = Value::String(snake_case(s));
            }
        }
    }
    // A text match's offset and its file's bytes searched are for rg's
    // JSON Lines (the CLI's `search --json`); the page leaves them out.
    // A search's binary notices are the CLI's text (rg's messages); empty
    // unless the request asked for rg's binary handling, which the tools
    // and the server never do: the page leaves them out too.
    if let Some(o) = v.as_object_mut().filter(|o| o.contains_key("matches")) {
        o.remove("binary_notices");
    }
    if let Some(Value::Array(matches)) = v.get_mut("matches") {
        for m in matches.iter_mut().filter_map(Value::as_object_mut) {
            if m.contains_key("context_before") {
                m.remove("offset");
                m.remove("bytes_searched");
            }
        }
    }
    v
}

/// `CannotNarrow` → `cannot_narrow`.
fn snake_case(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RangeType, ReadRange};

    #[test]
    fn enum_values_are_snake_case() {
        #[derive(Serialize)]
        struct R {
            range: ReadRange,
        }
        let r = R {
            range: ReadRange {
                range_type: RangeType::Lines,
                offset_bytes: None,
                max_bytes: None,
                start_line: Some(1),
                max_lines: Some(2),
            },
        };
        assert_eq!(to_value(&r)["range"]["range_type"], "lines");
        assert_eq!(snake_case("CannotNarrow"), "cannot_narrow");
    }
}
