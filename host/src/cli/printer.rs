//! ripgrep's text output, byte for byte, for the flags the two share: the
//! CLI feeds it every page of a search in order and it prints each line as
//! rg prints it — `path:line:col:text` with the parts asked for, context
//! with `-`, `--` between groups, `--heading`, `-o`, colors — merging a
//! file's matches and context across pages so that no line shows twice.
//! Every path and text goes through `render`'s escaping first (the
//! workspace may be hostile; rg prints raw bytes, sandgrep never does).

use std::collections::BTreeMap;
use std::io::{self, Write};

use sandgrep::render::{self, Field};
use sandgrep::{FileCount, TextMatch};

/// How lines look (rg's flags, resolved for this terminal or pipe).
#[derive(Clone, Default)]
pub struct Style {
    pub color: bool,
    pub heading: bool,
    pub line_numbers: bool,
    pub column: bool,
    pub only_matching: bool,
    /// --crlf: a line -o prints, and the lines the printer makes itself,
    /// end as rg's do then, `\r\n`.
    pub crlf: bool,
    /// Context was asked for: groups are separated by `--`.
    pub context: bool,
    /// `-H` / `--no-filename`; `None`: rg's rule (not for one file).
    pub with_filename: Option<bool>,
    /// `-v` printed as lines: they hold no match (rg's stats count none;
    /// for its summaries, -c, -l or -q, this is off: each line counts one).
    pub invert: bool,
    /// `--vimgrep`: the line again for each match in it, under the match's column.
    pub vimgrep: bool,
    /// `--trim`: no leading whitespace on printed lines.
    pub trim: bool,
    /// `-0`: a NUL byte, not `:`, `-` or a newline, after each path.
    pub null: bool,
    /// `--max-columns`: lines longer (their terminator counted) are left
    /// out, with how many matches they hold if so (as rg says it when it
    /// has found each match for colors, columns or stats).
    pub max_columns: Option<(u64, bool)>,
    /// `--max-columns-preview`: such a line's first characters instead.
    pub max_columns_preview: bool,
    /// What starts each colored part (`--colors`).
    pub colors: Colors,
    /// Between groups of context (`--`; none: `--no-context-separator`).
    pub context_separator: Option<String>,
    /// After the path, line and column of a match (`:`) and of context (`-`).
    pub match_field: String,
    pub context_field: String,
    /// Printed for each `/` of a path (`--path-separator`).
    pub path_separator: Option<String>,
    /// `-r`: the matches are replacements.
    pub replaced: bool,
    /// rg's searcher searches across lines (`-U` with a pattern that can
    /// match a line break): its printer prints a match line by line, the
    /// line breaks a replacement brought too (numbered on); else it prints
    /// a line's replacement as it is, line breaks and all.
    pub across_lines: bool,
    /// `-b`: each line's byte offset in its file (with -o, each match's)
    /// after the line and column.
    pub byte_offset: bool,
    /// `--null-data`: lines end at NUL bytes, and each printed line (a
    /// heading, a separator, a count) ends with one, as rg's.
    pub null_data: bool,
}

impl Style {
    /// How a matching line's text is escaped: with `-r` searching line by
    /// line, the line breaks in it are a replacement's (the user's), which
    /// rg prints as they are.
    fn matched_field(&self) -> Field {
        match self.replaced && !self.across_lines && !self.null_data {
            true => Field::Block,
            false => Field::Line,
        }
    }

    /// What ends a printed line.
    fn eol(&self) -> &'static str {
        if self.null_data {
            "\0"
        } else {
            "\n"
        }
    }

    /// What ends a line the printer makes itself (a heading, a context
    /// separator, a count, a path): `\r\n` with `--crlf`, as rg's.
    fn term(&self) -> &'static str {
        if self.crlf && !self.null_data {
            "\r\n"
        } else {
            self.eol()
        }
    }
}

/// `text` without its leading ASCII whitespace (`--trim`), and how much went.
fn trimmed(text: &str, trim: bool) -> (&str, usize) {
    let rest = if trim { text.trim_start_matches(|c: char| c.is_ascii_whitespace()) } else { text };
    (rest, text.len() - rest.len())
}

const PLAIN: &str = "\x1b[0m";
const RESET: &str = "\x1b[0m";

/// The escapes that start a path, a line number, a column and a match, as
/// rg's `--colors` sets them (termcolor's: a reset, the styles, then the
/// foreground and background).
#[derive(Clone)]
pub struct Colors {
    pub path: String,
    pub line: String,
    pub column: String,
    pub matched: String,
}

/// One of `--colors`' kinds: its styles and colors.
#[derive(Default, Clone, Copy)]
struct Spec {
    bold: bool,
    intense: bool,
    underline: bool,
    italic: bool,
    fg: Option<Color>,
    bg: Option<Color>,
}

#[derive(Clone, Copy)]
enum Color {
    Named(u8),
    Ansi256(u8),
    Rgb(u8, u8, u8),
}

impl Default for Colors {
    /// rg's own.
    fn default() -> Colors {
        Colors::parse(&[]).expect("no specs")
    }
}

impl Colors {
    /// rg's colors with `specs` (`{type}:{attribute}:{value}`, or
    /// `{type}:none`) applied in order.
    pub fn parse(specs: &[String]) -> Result<Colors, String> {
        // rg's own: paths magenta, line numbers green, matches bold red.
        let plain = Spec::default();
        let (red, green, magenta) = (Some(Color::Named(1)), Some(Color::Named(2)), Some(Color::Named(5)));
        let mut kinds =
            [Spec { fg: magenta, ..plain }, Spec { fg: green, ..plain }, plain, Spec { fg: red, bold: true, ..plain }];
        for spec in specs {
            let parts: Vec<&str> = spec.split(':').collect();
            let kind = match parts[0] {
                "path" => &mut kinds[0],
                "line" => &mut kinds[1],
                "column" => &mut kinds[2],
                "match" => &mut kinds[3],
                // (rg 14's highlight: whole matching lines, not drawn here.)
                "highlight" => continue,
                other => {
                    return Err(format!(
                        "unrecognized output type '{other}'. Choose from: path, line, column, match, highlight."
                    ))
                }
            };
            match parts[1..] {
                ["none"] => *kind = Spec::default(),
                ["fg", value] => kind.fg = Some(color(value)?),
                ["bg", value] => kind.bg = Some(color(value)?),
                ["style", value] => match value {
                    "bold" | "nobold" => kind.bold = value == "bold",
                    "intense" | "nointense" => kind.intense = value == "intense",
                    "underline" | "nounderline" => kind.underline = value == "underline",
                    "italic" | "noitalic" => kind.italic = value == "italic",
                    _ => {
                        return Err(format!(
                            "unrecognized style attribute '{value}'. Choose from: nobold, bold, nointense, \
                             intense, nounderline, underline, noitalic, italic."
                        ))
                    }
                },
                [attribute, _] => {
                    return Err(format!(
                        "unrecognized color spec attribute '{attribute}'. Choose from: fg, bg, style, none."
                    ))
                }
                _ => return Err(format!("invalid color spec format: '{spec}'")),
            }
        }
        // (rg colors no match when its spec is empty: `match:none`.)
        let plain = kinds[3].is_none();
        let [path, line, column, matched] = kinds.map(|k| k.escapes());
        Ok(Colors { path, line, column, matched: if plain { String::new() } else { matched } })
    }
}

/// A color's name, number (`N`, `0xNN`) or `r,g,b`, as termcolor reads it.
fn color(value: &str) -> Result<Color, String> {
    let names = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"];
    if let Some(n) = names.iter().position(|&c| c == value) {
        return Ok(Color::Named(n as u8));
    }
    let number = |v: &str| match v.strip_prefix("0x") {
        Some(hex) => u8::from_str_radix(hex, 16).ok(),
        None => v.parse::<u8>().ok(),
    };
    let parts: Vec<Option<u8>> = value.split(',').map(number).collect();
    match parts.as_slice() {
        [Some(n)] => Ok(Color::Ansi256(*n)),
        [Some(r), Some(g), Some(b)] => Ok(Color::Rgb(*r, *g, *b)),
        _ => Err(format!(
            "unrecognized color name '{value}'. Choose from: black, blue, green, red, cyan, magenta, yellow, white"
        )),
    }
}

impl Spec {
    fn is_none(&self) -> bool {
        !(self.bold || self.intense || self.underline || self.italic || self.fg.is_some() || self.bg.is_some())
    }

    fn escapes(&self) -> String {
        let mut s = String::from(PLAIN);
        for (on, code) in [(self.bold, "1"), (self.italic, "3"), (self.underline, "4")] {
            if on {
                s.push_str(&format!("\x1b[{code}m"));
            }
        }
        for (color, base) in [(self.fg, 38), (self.bg, 48)] {
            match color {
                Some(Color::Named(n)) if self.intense => s.push_str(&format!("\x1b[{base};5;{}m", n + 8)),
                Some(Color::Named(n)) => s.push_str(&format!("\x1b[{}{n}m", base / 10)),
                Some(Color::Ansi256(n)) => s.push_str(&format!("\x1b[{base};5;{n}m")),
                Some(Color::Rgb(r, g, b)) => s.push_str(&format!("\x1b[{base};2;{r};{g};{b}m")),
                None => {}
            }
        }
        s
    }
}

/// A line waiting to be printed: a match's (the 1-based column it is shown
/// under, the byte spans of its matches and the column each is shown under
/// alone, and where in the file the line starts) or context (and where it
/// starts).
enum Pending {
    Match { column: Option<u64>, spans: Vec<(usize, usize)>, columns: Vec<u64>, text: String, offset: u64 },
    Context(String, u64),
}

/// Paths as the command line named them: rg prints `./src/a.rs` for a
/// search of `./src`, the component answers `src/a.rs`.
pub struct Names {
    /// (as given, as a workspace path: no `./`, no trailing `/`, "" for the root).
    roots: Vec<(String, String)>,
    /// The root being searched, when they are searched one by one.
    current: Option<usize>,
}

impl Names {
    pub fn new(given: &[String], workspace: &[String]) -> Names {
        // (The component's name for it: `.`, empty parts and `..` resolved
        // as written, `c/../d` is `d`.)
        let norm = |p: &str| {
            let mut parts: Vec<&str> = Vec::new();
            for part in p.split('/') {
                match part {
                    "" | "." => {}
                    ".." => {
                        parts.pop();
                    }
                    part => parts.push(part),
                }
            }
            parts.join("/")
        };
        Names { roots: given.iter().zip(workspace).map(|(g, w)| (g.clone(), norm(w))).collect(), current: None }
    }

    /// One file named, and `path` is it: rg leaves the name out.
    fn is_the_one_file(&self, path: &str) -> bool {
        matches!(self.roots.as_slice(), [(_, w)] if w == path)
    }

    pub fn show(&self, path: &str) -> String {
        let current = self.current.and_then(|i| self.roots.get(i));
        for (given, w) in current.into_iter().chain(&self.roots) {
            if path == w {
                return given.clone();
            }
            let rest =
                if w.is_empty() { Some(path) } else { path.strip_prefix(w.as_str()).and_then(|r| r.strip_prefix('/')) };
            if let Some(rest) = rest {
                return format!("{}/{rest}", given.trim_end_matches('/'));
            }
        }
        path.to_string()
    }
}

/// What `--stats` reports.
#[derive(Default)]
pub struct Totals {
    pub matches: u64,
    pub matched_lines: u64,
    pub files_matched: u64,
    pub files_searched: u64,
    /// Bytes read; a file a page boundary splits counts twice.
    pub bytes_searched: u64,
    /// The file the last page ended in.
    pub last_path: String,
    /// Files that could not be read, or past sandgrep's own size cap (rg
    /// counts them searched; not one past --max-filesize, which its walk
    /// passes over).
    pub files_left: u64,
}

impl Totals {
    /// `other`'s counts added (not its files searched: a search that
    /// counts on counted them too).
    pub fn add_counts(&mut self, other: &Totals) {
        self.matches += other.matches;
        self.matched_lines += other.matched_lines;
        self.files_matched += other.files_matched;
        self.bytes_searched += other.bytes_searched;
    }
}

pub struct Printer<W: Write> {
    out: W,
    bytes_printed: u64,
    style: Style,
    names: Names,
    /// Whether results carry the file's name (decided at the first one).
    filenames: Option<bool>,
    /// The file being printed (as the component names it), and its name as shown.
    file: Option<(String, String)>,
    /// Some line was printed: the next group (or file) is separated.
    printed: bool,
    /// The last line printed of the current file.
    last: Option<u64>,
    /// The current file has a match (not only passthru's lines of context).
    matched: bool,
    pending: BTreeMap<u64, Pending>,
    pub totals: Totals,
    /// It only counts (for `--stats`): it goes on past a stream's NUL
    /// byte, as rg's counting printers do.
    pub counting: bool,
}

impl<W: Write> Printer<W> {
    pub fn new(out: W, style: Style, names: Names) -> Printer<W> {
        Printer {
            out,
            bytes_printed: 0,
            style,
            names,
            filenames: None,
            file: None,
            printed: false,
            last: None,
            matched: false,
            pending: BTreeMap::new(),
            totals: Totals::default(),
            counting: false,
        }
    }

    fn write(&mut self, s: &str) -> io::Result<()> {
        // (rg's count leaves colors out.)
        let colors = match self.style.color {
            true => s.split('\x1b').skip(1).map(|c| c.find('m').map_or(0, |m| m + 2)).sum(),
            false => 0,
        };
        self.bytes_printed += (s.len() - colors) as u64;
        self.out.write_all(s.as_bytes())
    }

    fn paint(&self, color: &str, s: &str) -> String {
        // (Nothing to color: rg writes no escapes either.)
        if self.style.color && !s.is_empty() && !color.is_empty() {
            format!("{color}{s}{RESET}")
        } else {
            s.to_string()
        }
    }

    fn filenames(&mut self, path: &str) -> bool {
        let style = self.style.with_filename;
        *self.filenames.get_or_insert_with(|| style.unwrap_or(!self.names.is_the_one_file(path)))
    }

    fn shown_name(&self, path: &str) -> String {
        let name = render::path(&self.names.show(path)).into_owned();
        match &self.style.path_separator {
            Some(sep) => name.replace('/', sep),
            None => name,
        }
    }

    /// One match of content output, with its context.
    pub fn text_match(&mut self, m: &TextMatch) -> io::Result<()> {
        // (--passthru: a line that is no result comes on its own, column 0.)
        let context = m.column == 0;
        // As rg: every line a match spans, and no match in a line -v shows
        // (a match hidden in a secret still counts one).
        let ends_at_line_start = m.end_column == 1 && m.end_line > m.line;
        if !context {
            self.totals.matched_lines += m.end_line.max(m.line) - m.line + 1 - u64::from(ends_at_line_start);
            self.totals.matches += if self.style.invert { 0 } else { m.submatches.len().max(1) as u64 };
        }
        if self.file.as_ref().is_none_or(|(p, _)| *p != m.path) {
            self.end_file()?;
            self.matched = false;
            let name = self.shown_name(&m.path);
            // (Files are apart under headings, named or not.)
            if self.style.heading && self.printed {
                self.write(self.style.term())?;
            }
            if self.style.heading && self.filenames(&m.path) {
                let line = format!(
                    "{}{}",
                    self.paint(&self.style.colors.path, &name),
                    if self.style.null { "\0" } else { self.style.term() }
                );
                self.write(&line)?;
            }
            self.file = Some((m.path.clone(), name));
        }
        if !context && !self.matched {
            self.matched = true;
            self.totals.files_matched += 1;
        }
        if context {
            self.flush_before(m.line)?;
            self.pend(m.line, Pending::Context(m.text.clone(), m.offset), false);
            return Ok(());
        }
        let first = m.line - m.context_before.len() as u64;
        self.flush_before(first)?;
        // (Context lines' offsets counted from the match's line, each line
        // with a one-byte terminator.)
        let mut offset = m.offset.saturating_sub(m.context_before.iter().map(|t| t.len() as u64 + 1).sum::<u64>());
        for (i, text) in m.context_before.iter().enumerate() {
            self.pend(first + i as u64, Pending::Context(text.clone(), offset), false);
            offset += text.len() as u64 + 1;
        }
        // The match's lines, each with the spans inside it and their columns
        // as rg prints them: a match's own (--vimgrep), its distance from the
        // first match of the lines plus that one's (-o), and every line of
        // several under the first match's column.
        let mut start = 0;
        // (A line break a replacement brought is no line of the file, but
        // rg prints a match that spans lines line by line, numbered on.)
        let inside = |i: usize| m.submatches.iter().any(|s| (s.start as usize..s.end as usize).contains(&i));
        let brought = |i: usize| self.style.replaced && inside(i);
        let mut lines: Vec<&str> = Vec::new();
        let mut rest = 0;
        // (--null-data: a record is one line, whatever it holds.)
        let breaks = m.text.match_indices('\n').filter(|_| !self.style.null_data);
        for (i, _) in breaks.filter(|&(i, _)| self.style.across_lines || !brought(i)) {
            lines.push(&m.text[rest..i]);
            rest = i + 1;
        }
        lines.push(&m.text[rest..]);
        // (The file's own lines: where its after-context starts.)
        let own = m.text.match_indices('\n').filter(|&(i, _)| !self.style.null_data && !brought(i)).count() + 1;
        let first_match = m.submatches.first().map_or(0, |s| s.start as u64);
        for (i, text) in lines.iter().enumerate() {
            let end = start + text.len();
            let (spans, columns): (Vec<(usize, usize)>, Vec<u64>) = m
                .submatches
                .iter()
                .map(|s| (s.start as usize, s.end as usize))
                .filter(|&(s, e)| s < end && e > start || s == e && s >= start && s <= end)
                // (--vimgrep: a match under the line it starts on only.)
                .filter(|&(s, _)| !self.style.vimgrep || s >= start)
                .map(|(s, e)| {
                    let column = match self.style.vimgrep && i > 0 {
                        true => (s - start) as u64 + 1,
                        false => m.column + s as u64 - first_match,
                    };
                    ((s.max(start) - start, e.min(end) - start), column)
                })
                .unzip();
            if self.style.vimgrep && i > 0 && spans.is_empty() {
                start = end + 1;
                continue;
            }
            let column = (!m.submatches.is_empty()).then_some(m.column);
            let offset = m.offset + start as u64;
            let line = Pending::Match { column, spans, columns, text: text.to_string(), offset };
            self.pend(m.line + i as u64, line, true);
            start = end + 1;
        }
        // After-context follows the match's last line (see `render::merged`).
        let end = (m.end_line - u64::from(ends_at_line_start)).max(m.line + own as u64 - 1);
        let mut offset = m.offset + m.text.len() as u64 + 1;
        for (i, text) in m.context_after.iter().enumerate() {
            self.pend(end + 1 + i as u64, Pending::Context(text.clone(), offset), false);
            offset += text.len() as u64 + 1;
        }
        Ok(())
    }

    /// Queues line `n`; a match replaces context, and a line printed
    /// already is not queued again.
    fn pend(&mut self, n: u64, line: Pending, is_match: bool) {
        if self.last.is_some_and(|l| n <= l) {
            return;
        }
        if is_match {
            self.pending.insert(n, line);
        } else {
            self.pending.entry(n).or_insert(line);
        }
    }

    fn flush_before(&mut self, line: u64) -> io::Result<()> {
        while let Some(entry) = self.pending.first_entry() {
            if *entry.key() >= line {
                break;
            }
            let (n, pending) = entry.remove_entry();
            self.print_line(n, pending)?;
        }
        Ok(())
    }

    /// The search of the `i`th path named begins (rg prints a file named
    /// twice twice, under each name).
    pub fn next_root(&mut self, i: usize) -> io::Result<()> {
        self.end_file()?;
        self.names.current = Some(i);
        Ok(())
    }

    /// Prints what is queued of the current file.
    pub fn end_file(&mut self) -> io::Result<()> {
        self.flush_before(u64::MAX)?;
        self.file = None;
        self.last = None;
        Ok(())
    }

    fn print_line(&mut self, n: u64, line: Pending) -> io::Result<()> {
        let Some((path, name)) = self.file.clone() else { return Ok(()) };
        let gap = match self.last {
            Some(last) => n > last + 1,
            None => self.printed && !self.style.heading,
        };
        if let Some(sep) = self.style.context_separator.as_ref().filter(|_| self.style.context && gap) {
            let line = format!("{sep}{}", self.style.term());
            self.write(&line)?;
        }
        self.last = Some(n);
        self.printed = true;
        let filenames = self.filenames(&path);
        let prefix = |p: &Self, context: bool, column: Option<u64>, offset: u64| {
            let sep = if context { &p.style.context_field } else { &p.style.match_field };
            let mut s = String::new();
            if filenames && !p.style.heading {
                s.push_str(&p.paint(&p.style.colors.path, &name));
                s.push_str(if p.style.null { "\0" } else { sep });
            }
            if p.style.line_numbers {
                s.push_str(&p.paint(&p.style.colors.line, &n.to_string()));
                s.push_str(sep);
            }
            if let Some(c) = column.filter(|_| p.style.column) {
                s.push_str(&p.paint(&p.style.colors.column, &c.to_string()));
                s.push_str(sep);
            }
            if p.style.byte_offset {
                s.push_str(&p.paint(PLAIN, &offset.to_string()));
                s.push_str(sep);
            }
            s
        };
        match line {
            Pending::Context(text, offset) => {
                // (A line the printer makes itself ends as its other lines.)
                let (shown, end) = match self.omitted(&text, &[]) {
                    Some(preview) if self.style.max_columns_preview => (preview.into(), self.style.term()),
                    Some(_) => ("[Omitted long context line]".into(), self.style.term()),
                    None => (render::line(trimmed(&text, self.style.trim).0), self.style.eol()),
                };
                let s = format!("{}{shown}{end}", prefix(self, true, None, offset));
                self.write(&s)
            }
            Pending::Match { column, spans, columns, text, offset }
                if self.style.only_matching && !spans.is_empty() =>
            {
                for ((s, e), c) in spans.into_iter().zip(columns) {
                    let (piece, rest) = match self.style.max_columns {
                        // (rg's preview of a match alone: no match follows it.)
                        Some((max, _)) if (e - s) as u64 > max && self.style.max_columns_preview => {
                            let piece = trimmed(&text[s..e], self.style.trim).0;
                            let end = piece.char_indices().nth(max as usize).map_or(piece.len(), |(i, _)| i);
                            (
                                render::escape(&piece[..end], self.style.matched_field()).into_owned(),
                                " [... 0 more matches]",
                            )
                        }
                        Some((max, _)) if (e - s) as u64 > max => ("[Omitted long matching line]".into(), ""),
                        _ => {
                            let piece = trimmed(&text[s..e], self.style.trim).0;
                            (render::escape(piece, self.style.matched_field()).into_owned(), "")
                        }
                    };
                    let column = column.map(|_| c);
                    let at = offset + s as u64;
                    let end = if self.style.crlf { "\r\n" } else { self.style.eol() };
                    let line = format!(
                        "{}{}{rest}{end}",
                        prefix(self, false, column, at),
                        self.paint(&self.style.colors.matched, &piece)
                    );
                    self.write(&line)?;
                }
                Ok(())
            }
            Pending::Match { column, spans, columns, text, offset } if self.style.vimgrep && !spans.is_empty() => {
                for (&(s, e), c) in spans.iter().zip(columns) {
                    // (Each line colors its own match.)
                    let (shown, end) = self.shown(&text, &spans, &[(s, e)]);
                    let column = column.map(|_| c);
                    let line = format!("{}{shown}{end}", prefix(self, false, column, offset + s as u64));
                    self.write(&line)?;
                }
                Ok(())
            }
            Pending::Match { column, spans, text, offset, .. } => {
                let (shown, end) = self.shown(&text, &spans, &spans);
                let s = format!("{}{shown}{end}", prefix(self, false, column, offset));
                self.write(&s)
            }
        }
    }

    /// A matching line as printed, `colored` matches drawn, and what ends
    /// it: rg's line for one longer than --max-columns ends as a line the
    /// printer makes itself.
    fn shown(&self, text: &str, spans: &[(usize, usize)], colored: &[(usize, usize)]) -> (String, &'static str) {
        match self.omitted(text, spans) {
            Some(omitted) => (omitted, self.style.term()),
            None => (self.matched_line(text, colored), self.style.eol()),
        }
    }

    /// What rg prints for a line longer than --max-columns (`spans`: a
    /// matching line's matches; none for context).
    fn omitted(&self, text: &str, spans: &[(usize, usize)]) -> Option<String> {
        let (max, counted) = self.style.max_columns?;
        // (rg counts the line's terminator, after a replacement too: rg 15
        // puts it back before it measures.)
        if text.len() as u64 + 1 <= max {
            return None;
        }
        if self.style.max_columns_preview {
            // The first `max` characters (rg: grapheme clusters) of the
            // line as --trim leaves it, their matches colored, then how
            // many matches start past them.
            let (text, cut) = trimmed(text, self.style.trim);
            let spans: Vec<(usize, usize)> =
                spans.iter().filter(|&&(_, e)| e >= cut).map(|&(a, e)| (a.max(cut) - cut, e - cut)).collect();
            let end = text.char_indices().nth(max as usize).map_or(text.len(), |(i, _)| i);
            let shown: Vec<(usize, usize)> =
                spans.iter().filter(|&&(a, _)| a < end).map(|&(a, b)| (a, b.min(end))).collect();
            let rest = match spans.iter().filter(|&&(a, _)| a >= end).count() {
                _ if !counted || spans.is_empty() => " [... omitted end of long line]".to_string(),
                1 => " [... 1 more match]".to_string(),
                n => format!(" [... {n} more matches]"),
            };
            return Some(format!("{}{rest}", self.matched_line(&text[..end], &shown)));
        }
        Some(match spans.len() {
            n if counted && n > 0 => format!("[Omitted long line with {n} matches]"),
            _ => "[Omitted long matching line]".into(),
        })
    }

    /// A matching line as printed: its matches colored when colors are on.
    fn matched_line(&self, text: &str, spans: &[(usize, usize)]) -> String {
        let (text, cut) = trimmed(text, self.style.trim);
        let spans: Vec<(usize, usize)> =
            spans.iter().filter(|&&(_, e)| e >= cut).map(|&(a, e)| (a.max(cut) - cut, e - cut)).collect();
        let field = self.style.matched_field();
        if !self.style.color || spans.is_empty() {
            return render::escape(text, field).into_owned();
        }
        // Matches that touch are one colored run, as rg draws them.
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for (a, b) in spans {
            match runs.last_mut() {
                Some(last) if last.1 == a => last.1 = b,
                _ => runs.push((a, b)),
            }
        }
        let cuts: Vec<usize> = runs.iter().flat_map(|&(a, b)| [a, b]).collect();
        let mut s = String::new();
        for (i, piece) in render::escape_pieces(text, field, &cuts).into_iter().enumerate() {
            // Odd pieces are the matches (empty ones are not drawn).
            if i % 2 == 1 && !piece.is_empty() {
                s.push_str(&self.paint(&self.style.colors.matched, &piece));
            } else {
                s.push_str(&piece);
            }
        }
        s
    }

    /// One file of `-l` (no count) or `-c` output.
    pub fn file_count(&mut self, f: &FileCount, count: bool) -> io::Result<()> {
        // (rg's --stats counts these lines as no bytes printed; its counts
        // come from a search of the lines.)
        let name = self.paint(&self.style.colors.path, &self.shown_name(&f.path));
        let line = match (count, self.filenames(&f.path)) {
            (false, _) if self.style.null => format!("{name}\0"),
            (false, _) => format!("{name}{}", self.style.term()),
            (true, true) => {
                format!("{name}{}{}{}", if self.style.null { '\0' } else { ':' }, f.count, self.style.term())
            }
            (true, false) => format!("{}{}", f.count, self.style.term()),
        };
        self.out.write_all(line.as_bytes())
    }

    /// Flushes the output, and with `queued` prints what is queued first:
    /// what a page or a stream (stdin) found so far reaches the reader as
    /// it comes. (A page's last lines stay queued: a line after-context
    /// showed may be a match of the next page.)
    pub fn flush(&mut self, queued: bool) -> io::Result<()> {
        if queued {
            self.flush_before(u64::MAX)?;
        }
        self.out.flush()
    }

    /// rg's note where it stops printing a stream that holds a NUL byte
    /// (at its first line past it, or at its end after a match).
    pub fn binary_matches(&mut self, path: &str, offset: u64) -> io::Result<()> {
        self.end_file()?;
        let name = match self.filenames(path) {
            true => format!("{}: ", self.paint(&self.style.colors.path, &self.shown_name(path))),
            false => String::new(),
        };
        self.write(&format!("{name}binary file matches (found \"\\0\" byte around offset {offset})\n"))
    }

    /// rg's line after the results of a file whose search met a NUL byte:
    /// it `stopped` there (a file the walk found), or went on (one named,
    /// or `--binary`) and found a match past it.
    pub fn binary_notice(&mut self, n: &sandgrep::BinaryNotice) -> io::Result<()> {
        let (path, offset, stopped, separated) = (n.path.as_str(), n.offset, n.stopped, n.separated);
        // (rg counts the result it stopped at, which it does not print.)
        self.totals.matches += u64::from(n.hit_matches);
        self.totals.matched_lines += u64::from(n.hit_lines);
        let matched_here = self.matched && self.file.as_ref().is_some_and(|(p, _)| p == path);
        if n.hit_lines > 0 && !matched_here {
            self.totals.files_matched += 1;
        }
        if let Some(sep) = self.style.context_separator.clone().filter(|_| self.style.context && separated) {
            self.end_file()?;
            self.write(&format!("{sep}\n"))?;
        }
        if !stopped {
            return self.binary_matches(path, offset);
        }
        self.end_file()?;
        let name = match self.filenames(path) {
            true => format!("{}: ", self.paint(&self.style.colors.path, &self.shown_name(path))),
            false => String::new(),
        };
        self.write(&format!(
            "{name}WARNING: stopped searching binary file after match (found \"\\0\" byte around offset {offset})\n"
        ))
    }

    /// Prints what is pending; what was counted, and the bytes printed.
    pub fn finish(mut self) -> io::Result<(Totals, u64)> {
        self.end_file()?;
        self.out.flush()?;
        Ok((self.totals, self.bytes_printed))
    }
}

/// rg's `--stats` block.
pub fn stats(out: &mut impl Write, t: &Totals, bytes_printed: u64, searching: f64, total: f64) -> io::Result<()> {
    write!(
        out,
        "\n{} matches\n{} matched lines\n{} files contained matches\n{} files searched\n{bytes_printed} bytes printed\n{} bytes searched\n{searching:.6} seconds spent searching\n{total:.6} seconds total\n",
        t.matches, t.matched_lines, t.files_matched, t.files_searched, t.bytes_searched
    )
}
