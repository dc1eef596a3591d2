//! Passwords written without an operator: netrc's `machine h login u
//! password VALUE` (on one line, or spread over lines: a `.netrc` written by
//! a heredoc in a script), and a command line's `--password VALUE`.
//!
//! netrc's `password` is a secret only in netrc context: the line holds
//! `machine`, `default` or `login` before it, or the line starts with it and
//! the lines just above are netrc lines (each starting with a netrc keyword)
//! up to one that starts with `machine` or `default`. Prose ("the password
//! is below") has neither. The value then passes the checks of any
//! password's value ([`super::secret_value`]): placeholders (`$TOKEN`,
//! `%s`, `<password>`) and short values stay.

use super::{key_at, keywords, secret_value, Doc, Edit, Form, Rule};

/// netrc's keywords (what starts a netrc line).
const NETRC: [&[u8]; 7] = [b"machine", b"default", b"login", b"password", b"account", b"macdef", b"port"];

/// How many lines above a lone `password VALUE` line its `machine` may be.
const NETRC_LINES: usize = 6;

/// The words of `line`, split at blanks, with their ranges.
fn words(line: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < line.len() {
        while i < line.len() && super::is_space(line[i]) {
            i += 1;
        }
        let s = i;
        while i < line.len() && !super::is_space(line[i]) {
            i += 1;
        }
        if i > s {
            out.push((s, i));
        }
    }
    out
}

/// A word without the quotes around it (an `echo "machine …"` line).
fn bare(w: &[u8]) -> &[u8] {
    let a = w.iter().position(|&c| !matches!(c, b'"' | b'\'')).unwrap_or(w.len());
    let b = w.iter().rposition(|&c| !matches!(c, b'"' | b'\'' | b';')).map_or(a, |i| i + 1);
    &w[a..b.max(a)]
}

/// Whether the line starting at `v` has netrc lines above it, up to one
/// that starts with `machine` or `default`.
fn netrc_above(doc: &Doc, v: usize) -> bool {
    let lo = doc.window_start(v);
    let mut at = v;
    for _ in 0..NETRC_LINES {
        let Some((start, prev)) = doc.line_before(at, lo) else { return false };
        at = start;
        let ws = words(prev);
        let Some(&(a, b)) = ws.first() else { continue };
        let first = bare(&prev[a..b]);
        if first == b"machine" || first == b"default" {
            return true;
        }
        if !NETRC.contains(&first) {
            return false;
        }
    }
    false
}

/// Redacts netrc passwords of the line at `v`.
pub(super) fn netrc_edits(doc: &Doc, v: usize, line: &[u8], base: usize, edits: &mut Vec<Edit>) {
    let ws = words(line);
    let mut context: Option<bool> = None;
    for k in 0..ws.len().saturating_sub(1) {
        let (a, b) = ws[k];
        if bare(&line[a..b]) != b"password" {
            continue;
        }
        let on_line = ws[..k].iter().any(|&(a, b)| matches!(bare(&line[a..b]), b"machine" | b"default" | b"login"));
        let ok = on_line || k == 0 && *context.get_or_insert_with(|| netrc_above(doc, v));
        if !ok {
            continue;
        }
        let (s, e) = ws[k + 1];
        let w = &line[s..e];
        // Quotes around the value (and a closing quote of an `echo "…"`).
        let qa = w.iter().take_while(|&&c| matches!(c, b'"' | b'\'')).count();
        let qb = w.iter().rev().take_while(|&&c| matches!(c, b'"' | b'\'' | b';')).count();
        if qa + qb >= w.len() {
            continue;
        }
        let (s, e) = (s + qa, e - qb);
        if secret_value(&line[s..e], true, Form::Config) {
            edits.push(Edit { start: base + s, end: base + e, rule: Rule::NETRC_PASSWORD });
        }
    }
}

/// The MySQL and MariaDB clients, whose `-pVALUE` (no space) is a password.
const MYSQL: [&[u8]; 6] = [b"mysql", b"mysqldump", b"mysqladmin", b"mysqlsh", b"mariadb", b"mariadb-dump"];

/// Redacts `-pVALUE`, `-p'VALUE'`, `-p"VALUE"` after a MySQL client on the
/// line (elsewhere `-p` is a port, a path, a flag).
pub(super) fn mysql_edits(line: &[u8], base: usize, edits: &mut Vec<Edit>) {
    let ws = words(line);
    let Some(client) = ws.iter().position(|&(a, b)| {
        let w = &line[a..b];
        let w = &w[w.iter().rposition(|&c| c == b'/').map_or(0, |i| i + 1)..];
        MYSQL.contains(&bare(w))
    }) else {
        return;
    };
    for &(a, b) in &ws[client + 1..] {
        let w = &line[a..b];
        if !w.starts_with(b"-p") || w.len() <= 2 {
            continue;
        }
        let (s, e, form) = match w[2] {
            q @ (b'"' | b'\'') => match w[3..].iter().position(|&c| c == q) {
                Some(p) => (a + 3, a + 3 + p, Form::Literal),
                None => continue,
            },
            _ => {
                let end = w.iter().position(|&c| matches!(c, b';' | b'&' | b'|' | b')' | b'`')).unwrap_or(w.len());
                (a + 2, a + end, Form::Config)
            }
        };
        if s < e && secret_value(&line[s..e], true, form) {
            edits.push(Edit { start: base + s, end: base + e, rule: Rule::CLI_PASSWORD });
        }
    }
}

/// Redacts the values of `--password VALUE` (a space, no `=`: the generic
/// rule reads `--password=VALUE`) on a command line: a long option whose
/// name names a secret, then a quoted or bare word that is not an option.
pub(super) fn cli_edits(line: &[u8], base: usize, edits: &mut Vec<Edit>) {
    let ws = words(line);
    for k in 0..ws.len().saturating_sub(1) {
        let (a, b) = ws[k];
        let w = &line[a..b];
        let Some(name) = w.strip_prefix(b"--") else { continue };
        if name.is_empty() || !name.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_') {
            continue;
        }
        let Some(key) = keywords(name).find_map(|(s, e)| key_at(name, s, e).ok()) else { continue };
        if key.start != 0 && name[key.start - 1] != b'-' && name[key.start - 1] != b'_' {
            continue;
        }
        let (s, e) = ws[k + 1];
        let value = &line[s..e];
        if value.starts_with(b"-") {
            continue;
        }
        let (s, e, form) = match value[0] {
            q @ (b'"' | b'\'') => {
                // To the closing quote (a quoted value holds no blank here).
                match value[1..].iter().position(|&c| c == q) {
                    Some(p) => (s + 1, s + 1 + p, Form::Literal),
                    None => continue,
                }
            }
            _ => {
                let end =
                    value.iter().position(|&c| matches!(c, b';' | b'&' | b'|' | b')' | b'`')).unwrap_or(value.len());
                (s, s + end, Form::Config)
            }
        };
        if secret_value(&line[s..e], key.password, form) {
            edits.push(Edit { start: base + s, end: base + e, rule: Rule::CLI_PASSWORD });
        }
    }
}
