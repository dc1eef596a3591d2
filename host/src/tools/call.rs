//! A tool call: JSON arguments to a typed request, the call on the sandbox,
//! and the response as the tool guide's structured result and as text.

use serde_json::{json, Map, Value};

use super::args::Args;
use super::{definitions, requests, ToolError, ToolOutput};
use crate::json::to_value;
use crate::{render, OutputMode, QueryMode, Sandbox, TextMatch};

/// The longest text rendering (bytes). Escaped again as JSON it is at most
/// twice this (the renderer writes printable ASCII for anything unsafe), so
/// with the structured result the answer stays under 16 MiB.
use sandgrep_contract::limits::MAX_TOOL_TEXT as MAX_TEXT;

/// Runs tool `name` with JSON `args` against `sandbox` (blocking).
pub fn call(sandbox: &Sandbox, name: &str, args: &Map<String, Value>) -> Result<ToolOutput, ToolError> {
    let def = definitions().into_iter().find(|d| d.name == name).ok_or_else(|| ToolError::UnknownTool(name.into()))?;
    let mut a = Args::new(args, &def.arguments(), name)?;
    match name {
        "search_text" => search_text(sandbox, &mut a),
        "search_ast" => search_ast(sandbox, &mut a),
        "list_files" => list_files(sandbox, &mut a),
        _ => read_file(sandbox, &mut a),
    }
}

fn search_text(sandbox: &Sandbox, a: &mut Args) -> Result<ToolOutput, ToolError> {
    let r = requests::search_text(a)?;
    let response = sandbox.search_text(&r).map_err(ToolError::Failed)?;

    let empty = response.matches.is_empty() && response.files.is_empty();
    let literal = r.mode != Some(QueryMode::Regex);
    let nothing = if !empty {
        None
    } else if response.timed_out {
        Some("No matches in the files searched before the time limit".to_string())
    } else if literal && r.skip.unwrap_or(0) == 0 && render::looks_like_regex(&r.query) {
        Some(format!(
            "No matches found for the literal text {}. It reads as a regular expression: to search it as one, \
             pass mode: \"regex\"",
            render::path(&serde_json::to_string(&r.query).expect("a string serializes"))
        ))
    } else {
        Some("No matches found".to_string())
    };
    let (text, notes) = rendered(
        |out| render::search_grouped(out, &response, r.output == Some(OutputMode::Count)),
        nothing.as_deref(),
        &said(&response.warnings, response.stats.lines_redacted, &response.stats.redacted_by),
        render::search_ending(response.timed_out, response.next_cursor.as_deref(), &response.stats, go_on),
    );
    let hits: Vec<Value> = response
        .matches
        .iter()
        .map(|m| {
            json!({
                "path": m.path, "line": m.line, "column": m.column, "end_line": m.end_line,
                "end_column": m.end_column, "line_text": m.text, "submatches": submatches(m),
                "context_before": m.context_before, "context_after": m.context_after,
                "redactions": m.redactions,
            })
        })
        .collect();
    let mut structured = json!({
        "hits": hits,
        "files": response.files,
        "has_more": response.next_cursor.is_some(),
        "next_cursor": response.next_cursor,
        "truncated": response.truncated,
        "timed_out": response.timed_out,
        "warnings": response.warnings,
    });
    let response = to_value(&response);
    structured["stats"] = response["stats"].clone();
    Ok(ToolOutput { structured, text, notes, response })
}

fn search_ast(sandbox: &Sandbox, a: &mut Args) -> Result<ToolOutput, ToolError> {
    let r = requests::search_ast(a)?;
    let response = sandbox.search_ast(&r).map_err(ToolError::Failed)?;
    let nothing = match (response.matches.is_empty(), response.timed_out) {
        (false, _) => None,
        (true, true) => Some("No matches in the files searched before the time limit"),
        (true, false) => Some("No matches found"),
    };
    let (text, notes) = rendered(
        |out| render::ast(out, &response),
        nothing,
        &said(&response.warnings, response.stats.lines_redacted, &response.stats.redacted_by),
        render::search_ending(response.timed_out, response.next_cursor.as_deref(), &response.stats, go_on),
    );
    let full = to_value(&response);
    let mut structured = full.clone();
    structured["has_more"] = response.next_cursor.is_some().into();
    Ok(ToolOutput { structured, text, notes, response: full })
}

fn submatches(m: &TextMatch) -> Value {
    m.submatches.iter().map(|s| json!({"start": s.start, "end": s.end})).collect()
}

fn list_files(sandbox: &Sandbox, a: &mut Args) -> Result<ToolOutput, ToolError> {
    let r = requests::list_files(a)?;
    let response = sandbox.list_files(&r).map_err(ToolError::Failed)?;
    let nothing = match (response.entries.is_empty(), response.timed_out) {
        (false, _) => None,
        (true, true) => Some("No files listed before the time limit"),
        (true, false) => Some("No files found"),
    };
    let (text, notes) = rendered(
        |out| render::list(out, &response, false),
        nothing,
        &response.warnings,
        render::listing_ending(&response, go_on),
    );
    let full = to_value(&response);
    let mut structured = full.clone();
    // As the tool guide: size and modified only when asked for.
    if !r.include_metadata {
        structured["entries"] = response.entries.iter().map(|e| json!({"path": e.path, "is_dir": e.is_dir})).collect();
    }
    Ok(ToolOutput { structured, text, notes, response: full })
}

fn read_file(sandbox: &Sandbox, a: &mut Args) -> Result<ToolOutput, ToolError> {
    let r = requests::read_file(a)?;
    let response = sandbox.read_file(&r).map_err(ToolError::Failed)?;
    let go_on = render::read_continuation(&response, "start_line=", "offset_bytes=");
    let (text, notes) = rendered(|out| render::read(out, &response), None, &response.warnings, go_on);
    let full = to_value(&response);
    Ok(ToolOutput { structured: full.clone(), text, notes, response: full })
}

/// An answer's warnings, and how many lines it shows with secrets
/// redacted, by rule.
fn said(warnings: &[String], lines: u64, by: &[crate::RedactionCount]) -> Vec<String> {
    let mut said = warnings.to_vec();
    if lines > 0 {
        let rules: Vec<String> = by.iter().map(|r| format!("{} {}", r.rule, r.lines)).collect();
        said.push(format!("{lines} line(s) shown with secrets [REDACTED] by rule: {}", rules.join(", ")));
    }
    said
}

/// How the tools say to pass a cursor back.
fn go_on(cursor: &str) -> String {
    format!("cursor \"{cursor}\"")
}

/// A response's text — its rendering (or `empty` when it has nothing), cut
/// at [`MAX_TEXT`] — and its notes: warnings and where to go on.
fn rendered(
    render: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>,
    empty: Option<&str>,
    warnings: &[String],
    continuation: Option<String>,
) -> (String, String) {
    let mut out = Vec::new();
    render(&mut out).expect("writes to memory");
    let mut text = String::from_utf8(out).expect("rendered text is UTF-8");
    let mut notes = String::new();
    if text.len() > MAX_TEXT {
        // At a line's end (a newline is never inside a character).
        let cut = text.as_bytes()[..MAX_TEXT].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        text.truncate(cut);
        notes.push_str(&format!(
            "[the text was cut at {MAX_TEXT} bytes: structuredContent holds every result of this page]\n"
        ));
    }
    if let Some(empty) = empty {
        text.push_str(empty);
        text.push('\n');
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    for w in warnings {
        notes.push_str(&format!("[warning: {}]\n", render::path(w)));
    }
    if let Some(c) = continuation {
        notes.push_str(&format!("[{c}]\n"));
    }
    (text, notes)
}

#[cfg(test)]
mod tests {
    use super::{rendered, MAX_TEXT};

    #[test]
    fn text_is_cut_at_a_line_end_whatever_the_characters() {
        // Three-byte characters: byte MAX_TEXT falls inside one.
        let line = format!("{}\n", "文".repeat(1000));
        let (text, notes) = rendered(
            |out| {
                while out.len() <= MAX_TEXT {
                    out.extend_from_slice(line.as_bytes());
                }
                Ok(())
            },
            None,
            &[],
            None,
        );
        assert!(text.len() <= MAX_TEXT && text.ends_with('\n'), "{}", text.len());
        assert!(notes.contains("the text was cut"), "{notes}");
    }
}
