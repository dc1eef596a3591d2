//! Values on the lines after their key: YAML block scalars and indented
//! values, continued assignments (`KEY = (`, `KEY = \\`, triple quotes).

#[allow(unused_imports)]
use super::*;

/// How many lines above a value its key may be (YAML block scalars, lists).
pub(super) const MAX_VALUE_LINES: usize = 64;

/// Whether `line` ends as a key whose value follows on the next lines
/// does (with what follows a key, or a YAML block scalar's indicator).
pub(super) fn may_dangle(line: &[u8]) -> bool {
    trim(line).last().is_some_and(|&last| {
        matches!(last, b':' | b'|' | b'>' | b'-' | b'+' | b'(' | b'\\' | b'=' | b'"' | b'\'' | b'`' | b'0'..=b'9')
    })
}

/// A key at the end of `line` whose value follows on the next lines.
pub(super) fn dangling_key(line: &[u8]) -> Option<(bool, Dangle)> {
    if !may_dangle(line) {
        return None;
    }
    let mut skip_until = 0;
    for (ms, me) in keywords(line) {
        if ms < skip_until {
            continue;
        }
        match assignment(line, ms, me) {
            // A YAML key starts its line (not `if not self.auth:`).
            Ok((key, Val::Dangling(Dangle::YamlBlock | Dangle::YamlPlain))) if !starts_line(line, key.start) => {
                skip_until = key.end
            }
            Ok((key, Val::Dangling(d))) => return Some((key.password, d)),
            Ok((key, _)) => skip_until = key.end,
            Err(end) => skip_until = end,
        }
    }
    None
}

/// Whether a line ends with a comma (a list item, not a continued string).
pub(super) fn listed(line: &[u8]) -> bool {
    trim(line).ends_with(b",")
}

/// A line that holds one value and nothing else: one literal, or one word
/// that is not a key (`- ` list dashes and concatenation punctuation aside).
/// Returns the value's range and whether it is a literal.
pub(super) fn lone_value(line: &[u8]) -> Option<(usize, usize, bool)> {
    let mut i = indent(line);
    if line[i..].starts_with(b"- ") {
        i += 2;
        while i < line.len() && matches!(line[i], b' ' | b'\t') {
            i += 1;
        }
    }
    let (a, b) = core(&line[i..]);
    let (a, b) = (i + a, i + b);
    if a >= b {
        return None;
    }
    // A literal, with at most decoration after it.
    let start = line[i..a].iter().rposition(|&c| matches!(c, b'"' | b'\'' | b'`')).map(|p| i + p);
    if let Some(q) = start {
        let (ls, le) = literal(line, q);
        let (ca, cb) = core(&line[le..]);
        return (ca == cb).then_some((ls, le, true));
    }
    let v = &line[a..b];
    if v.iter().any(|&c| is_space(c)) || v.ends_with(b":") || v.windows(2).any(|w| w == b": ") {
        return None;
    }
    Some((a, b, false))
}

/// The [`Facts`] of lines of one file, by where they start and their bytes
/// (a line's facts depend on its bytes alone; a file that changes while it
/// is searched can put other bytes at the same place, so the place alone is
/// not the line). The walk up from a value asks for the lines just above
/// it, so a slot per line start, the last line to take it kept: a line
/// whose slot another took is looked at again (the cost without a memo),
/// whatever lengths the file's lines have.
#[derive(Default)]
pub struct Memo {
    slots: Vec<Option<(u64, Vec<u8>, Facts)>>,
}

impl Memo {
    const SLOTS: usize = 1 << 9;

    fn facts(&mut self, start: u64, line: &[u8]) -> &mut Facts {
        if self.slots.is_empty() {
            self.slots.resize(Self::SLOTS, None);
        }
        let slot = &mut self.slots[(start.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 55) as usize];
        if !matches!(slot, Some((s, bytes, _)) if *s == start && bytes[..] == *line) {
            // (The slot's buffer is kept for the next line to take it.)
            let mut bytes = slot.take().map(|(_, b, _)| b).unwrap_or_default();
            bytes.clear();
            bytes.extend_from_slice(line);
            *slot = Some((start, bytes, facts(line)));
        }
        &mut slot.as_mut().expect("just filled").2
    }
}

/// What the walk up from a value needs to know about a line above it.
#[derive(Clone, Copy)]
pub(super) struct Facts {
    pub(super) blank: bool,
    pub(super) indent: usize,
    pub(super) head: Option<(bool, Dangle)>,
    /// Computed when first needed.
    pub(super) lone: Option<bool>,
    pub(super) listed: bool,
}

pub(super) fn facts(line: &[u8]) -> Facts {
    let blank = trim(line).is_empty();
    Facts {
        blank,
        indent: indent(line),
        head: if blank { None } else { dangling_key(line) },
        lone: None,
        listed: listed(line),
    }
}

/// Redacts a line that is the value of a key on a line above it (YAML block
/// scalars and indented values, continued assignments). The line is `line`,
/// at `v`; `above` holds the ranges of the lines of `text` before it and
/// `cache` what is known of them; `memo` knows lines of `before`, which
/// starts at byte `base` of the file (`None`: not known).
#[allow(clippy::too_many_arguments)]
pub(super) fn continued_value(
    doc: &Doc,
    v: usize,
    line: &[u8],
    above: &[(usize, usize)],
    cache: &mut [Option<Facts>],
    base: Option<u64>,
    memo: &mut Memo,
    edits: &mut Vec<Edit>,
) {
    if trim(line).len() < 10 {
        return;
    }
    let i = indent(line);
    let mut any_listed = listed(line);
    let lone = lone_value(line);
    // At the margin only a lone literal under `KEY = (` can be a value (a
    // YAML key above would have to be indented less than nothing); a line
    // that is not a lone value can only be a YAML block's.
    if i == 0 && (lone.is_none() || any_listed) {
        return;
    }
    let lo = doc.window_start(v);
    let n = doc.before.len();
    let (mut j, mut at) = (above.len(), n);
    let mut all_values = lone.is_some();
    let mut scratch = None;
    for _ in 0..MAX_VALUE_LINES {
        // The line above, from the cache within `text`, else read in `before`.
        let (f, prev) = if j > 0 {
            j -= 1;
            let (s, e) = above[j];
            if n + s < lo {
                return;
            }
            let prev = content(&doc.text[s..e]);
            (cache[j].get_or_insert_with(|| facts(prev)), prev)
        } else {
            let Some((start, prev)) = doc.line_before(at, lo) else { return };
            at = start;
            match base {
                Some(base) => (memo.facts(base + start as u64, prev), prev),
                None => (&mut *scratch.insert(facts(prev)), prev),
            }
        };
        if f.blank {
            continue;
        }
        if let Some((password, d)) = f.head {
            let ok = match d {
                Dangle::YamlBlock => f.indent < i,
                Dangle::YamlPlain => f.indent < i && all_values && lone.is_some(),
                // `KEY = (` then `"…"` lines: a string continued; with commas, a list.
                Dangle::Other => all_values && lone.is_some() && !any_listed,
            };
            if !ok {
                return;
            }
            let (a, b, form) = match lone {
                Some((a, b, literal)) if d != Dangle::YamlBlock => {
                    (a, b, if literal { Form::Literal } else { Form::Config })
                }
                _ => (i, i + trim(&line[i..]).len(), Form::Literal),
            };
            if secret_value(&line[a..b], password, form) {
                edits.push(Edit { start: v - n + a, end: v - n + b, rule: Rule::GENERIC_SECRET_VALUE });
            }
            return;
        }
        if f.indent < i {
            return;
        }
        if all_values {
            any_listed |= f.listed;
            let lone = *f.lone.get_or_insert_with(|| lone_value(prev).is_some());
            if !lone {
                all_values = false;
                if i == 0 {
                    return;
                }
            }
        }
    }
}
