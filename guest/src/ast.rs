//! `search-ast`: structural search with ast-grep's engine (`ast-grep-core`,
//! and `ast-grep-language` for the languages, their extensions and pattern
//! pre-processing, exactly as the ast-grep CLI has them), on the same walk,
//! limits, cursors and redaction as text search.

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::rc::Rc;
use std::time::Instant;

use ast_grep_core::matcher::{Pattern, PatternNode};
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::tree_sitter::LanguageExt;
use ast_grep_core::Language;
use ast_grep_language::SupportLang;

use crate::cursor::Position;
use crate::error::{error_message, io_error};
use crate::index::{Narrowing, Unread};
use crate::page::{self, empty_stats, Paging};
use crate::redact;
use crate::request::{AstQuery, MAX_AST_TEXT};
use crate::search::shard::{self, shard_of};
use crate::session;
use crate::shape::{bounded, json_len, named_warning, LineIndex, RESULT_OVERHEAD};
use crate::walk::{self, walk_deadline, Step, Walker};
use crate::{
    AstEventKind, AstFileOutcome, AstMatch, AstShardEvent, AstShardResult, IndexUse, MetaVariable as MetaVar,
    Redaction, SearchAstRequest, SearchAstResponse, SearchError, SearchStats, ShardStop, Workspace,
};

type Required = Vec<memchr::memmem::Finder<'static>>;

/// The languages whose grammars this build compiled in.
pub const BUILT: &[SupportLang] = &[
    #[cfg(feature = "lang-rust")]
    SupportLang::Rust,
    #[cfg(feature = "lang-python")]
    SupportLang::Python,
    #[cfg(feature = "lang-javascript")]
    SupportLang::JavaScript,
    #[cfg(feature = "lang-typescript")]
    SupportLang::TypeScript,
    #[cfg(feature = "lang-typescript")]
    SupportLang::Tsx,
    #[cfg(feature = "lang-go")]
    SupportLang::Go,
    #[cfg(feature = "lang-java")]
    SupportLang::Java,
    #[cfg(feature = "lang-c")]
    SupportLang::C,
    #[cfg(feature = "lang-cpp")]
    SupportLang::Cpp,
    #[cfg(feature = "lang-json")]
    SupportLang::Json,
];

/// The pattern compiled for `lang`; an error, in the pattern's own `$`
/// syntax, if it does not parse as that language (ast-grep would match
/// with the error nodes left in, and find what nobody asked for).
fn compile(pattern: &str, lang: SupportLang) -> Result<Pattern, String> {
    let name = lang.to_string().to_lowercase();
    match Pattern::try_new(pattern, lang) {
        Ok(p) if !p.has_error() => Ok(p),
        Ok(_) => Err(format!("the pattern does not parse as {name} (it has a syntax error)")),
        // ast-grep writes `$` as its stand-in for languages where `$` is
        // not an identifier character; the caller wrote `$`.
        Err(e) => Err(format!("the pattern does not parse as {name}: {}", e.to_string().replace('µ', "$"))),
    }
}

/// Texts every file the pattern matches in must contain: the named leaves
/// of the pattern. ast-grep's default (smart) matching compares a named
/// leaf's text with the candidate node's, which is a slice of the file, and
/// never skips one (`ast-grep-core`'s `match_tree/strictness.rs`); unnamed
/// leaves compare by kind only, so they are left out.
fn required_texts(pattern: &Pattern) -> Vec<memchr::memmem::Finder<'static>> {
    fn collect(node: &PatternNode, out: &mut Vec<String>) {
        match node {
            PatternNode::Terminal { text, is_named: true, .. } if !text.is_empty() => out.push(text.clone()),
            PatternNode::Internal { children, .. } => children.iter().for_each(|c| collect(c, out)),
            _ => {}
        }
    }
    let mut texts = Vec::new();
    collect(&pattern.node, &mut texts);
    // The longest first: the likeliest to be absent.
    texts.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    texts.dedup();
    texts.iter().map(|t| memchr::memmem::Finder::new(t.as_bytes()).into_owned()).collect()
}

fn built_names() -> String {
    BUILT.iter().map(|l| l.to_string().to_lowercase()).collect::<Vec<_>>().join(", ")
}

/// The language a request names, if this build has it.
fn language(name: &str) -> Result<SupportLang, SearchError> {
    match name.parse::<SupportLang>() {
        Ok(lang) if BUILT.contains(&lang) => Ok(lang),
        _ => Err(SearchError::InvalidArgument(format!("unknown language {name:?}: this build has {}", built_names()))),
    }
}

pub fn search_ast(ws: &Workspace, request: SearchAstRequest) -> Result<SearchAstResponse, SearchError> {
    run(ws, request, None).map(|(resp, _)| resp)
}

/// Parses only the files of shard `index` of `count` and reports every
/// event in walk order, for [`merge_ast_shards`] (as text search's shards).
pub fn search_ast_shard(
    ws: &Workspace,
    request: SearchAstRequest,
    index: u32,
    count: u32,
) -> Result<AstShardResult, SearchError> {
    shard::exists(index, count)?;
    run(ws, request, Some((index, count))).map(|(_, shard)| shard)
}

/// The page `search-ast` returns, from the events of every shard, replayed
/// in walk order up to where the first stopped shard stopped.
pub fn merge_ast_shards(
    ws: &Workspace,
    request: SearchAstRequest,
    shards: Vec<AstShardResult>,
) -> Result<SearchAstResponse, SearchError> {
    let started = Instant::now();
    let mut warnings = Vec::new();
    let q = AstQuery::from_request(request, &mut warnings)?;
    let stream_key = ws.stream_key(q.stream_key());
    let resume = page::resume_from(&stream_key, q.cursor.as_deref())?;
    let index = shards.first().map_or(IndexUse::None, |s| s.index);
    let (events, cut) = shard::in_walk_order(shards.into_iter().map(|s| (s.events, s.stopped)).collect(), |e| &e.key);
    let roots = Walker::new(ws, &q.walk)?.roots(&q.paths)?;
    let mut page = Page::new(&q, resume, warnings, walk::named_files(&roots));
    for event in events {
        if page.paging.stopped() {
            break;
        }
        page.accept(&event.key, event.kind);
    }
    shard::stop_at(&mut page.paging, cut);
    page.finish(&stream_key, started, index)
}

/// The search, whole or one shard of it: the page, and (for a shard) the
/// events it was made from.
fn run(
    ws: &Workspace,
    request: SearchAstRequest,
    shard: Option<(u32, u32)>,
) -> Result<(SearchAstResponse, AstShardResult), SearchError> {
    let started = Instant::now();
    let mut warnings = Vec::new();
    let q = AstQuery::from_request(request, &mut warnings)?;
    let stream_key = ws.stream_key(q.stream_key());
    let resume = page::resume_from(&stream_key, q.cursor.as_deref())?;
    // The pattern, compiled for the language asked for, or for every one
    // built in (each file is matched as its extension's language): one that
    // parses in none is refused before anything is read.
    let langs = match q.language.as_deref() {
        Some(name) => vec![language(name)?],
        None => BUILT.to_vec(),
    };
    let patterns: HashMap<SupportLang, Result<(Pattern, Required), String>> = langs
        .iter()
        .map(|&lang| {
            (
                lang,
                compile(&q.pattern, lang).map(|p| {
                    let r = required_texts(&p);
                    (p, r)
                }),
            )
        })
        .collect();
    // (Without a language, a pattern that parses in none is refused once
    // the walk has met the files: the error names their languages.)
    let nowhere = patterns.values().all(Result::is_err);
    if let Some(e) = langs.iter().find_map(|l| patterns[l].as_ref().err()).filter(|_| nowhere && q.language.is_some()) {
        return Err(SearchError::InvalidPattern(e.clone()));
    }
    // What the index says of each language's files: those without the
    // pattern's texts cannot match.
    let mut index_use = IndexUse::None;
    let mut narrowings = HashMap::new();
    for (&lang, compiled) in &patterns {
        let Ok((_, required)) = compiled else { continue };
        let texts: Vec<&[u8]> = required.iter().map(|r| r.needle()).collect();
        let (used, narrowing) = Narrowing::for_texts(ws, &texts);
        index_use = index_use.max(used);
        narrowings.extend(narrowing.map(|n| (lang, n)));
    }
    let deadline = started + q.timeout;
    let walker = Rc::new(Walker::new(ws, &q.walk)?.with_deadline(walk_deadline(started, deadline)));
    let roots = walker.roots(&q.paths)?;
    let after = resume.as_ref().map(|r| r.path.clone());
    let mut page = Page::new(&q, resume, warnings, walk::named_files(&roots));
    let mut events = Vec::new();
    // Shard 0 reports what every shard's walk sees.
    let reports_walk = shard.is_none_or(|(index, _)| index == 0);
    let mut emit = |page: &mut Page, key: &str, kind: AstEventKind| {
        if shard.is_some() {
            events.push(AstShardEvent { key: key.to_string(), kind: kind.clone() });
        }
        page.accept(key, kind);
    };
    // Events between two entries sort just after the first one: the last
    // entry walked (its key is made only for such an event).
    let mut last: Option<Cow<'_, Step>> = None;
    let seen = Rc::new(Cell::new(walk::Skips::default()));
    // A kept instance replays a whole walk it made at this generation (a
    // text search's too), or records this one (a first page of a search
    // not split into shards).
    let key = session::listing_key(&q.paths, &q.walk, ws.index_policy());
    let reopen = walk::Reopen::for_walk(ws, &q.walk, &roots);
    let replay = session::Replay::new(key, after.is_none() && shard.is_none(), reopen);
    for step in replay.steps(walk::steps(walker.clone(), roots, after, seen.clone())) {
        let entry = match &*step {
            Step::Entry(entry) => entry,
            Step::Skipped(n) => {
                if reports_walk {
                    emit(&mut page, &page::anchor_after(last.as_deref()), AstEventKind::Skipped(n.wit()));
                }
                continue;
            }
            Step::Problem(e) => {
                if reports_walk {
                    let kind = AstEventKind::Problem((e.message.clone(), e.unreadable));
                    emit(&mut page, &page::anchor_after(last.as_deref()), kind);
                }
                continue;
            }
            Step::TimedOut => {
                let anchor = page::anchor_after(last.as_deref());
                emit(&mut page, &anchor, AstEventKind::Skipped(walk::Skips::default().wit()));
                page.paging.time_out();
                page.paging.walked_to(&anchor);
                continue;
            }
        };
        if let Some(kind) = file_event(ws, &q, &mut page, entry, shard, &patterns, &narrowings, deadline) {
            emit(&mut page, &entry.rel, kind);
        }
        let stopped = page.paging.stopped();
        last = Some(step);
        if stopped {
            break;
        }
    }
    let left = walker.skips().since(seen.get());
    if left.any() {
        if reports_walk {
            emit(&mut page, &page::anchor_after(last.as_deref()), AstEventKind::Skipped(left.wit()));
        }
        replay.push(Step::Skipped(left));
    }
    replay.keep(!page.paging.stopped());
    let stopped = if page.paging.done() {
        Some(ShardStop::PageFull)
    } else {
        page.paging.timed_out().then_some(ShardStop::TimedOut)
    };
    if nowhere && page.other_languages.is_empty() && shard.is_none() {
        let e = langs.iter().find_map(|l| patterns[l].as_ref().err()).cloned().unwrap_or_default();
        return Err(SearchError::InvalidPattern(format!("{e} (nor in any other language)")));
    }
    let resp = page.finish(&stream_key, started, index_use)?;
    Ok((resp, AstShardResult { events, stopped, index: index_use }))
}

/// What searching the file `entry` for `page` comes to, if anything (not a
/// file of this shard or of a language searched, or the page resumes past
/// it or is out of time: then it is stopped).
#[allow(clippy::too_many_arguments)]
fn file_event(
    ws: &Workspace,
    q: &AstQuery,
    page: &mut Page,
    entry: &walk::Entry,
    shard: Option<(u32, u32)>,
    patterns: &HashMap<SupportLang, Result<(Pattern, Required), String>>,
    narrowings: &HashMap<SupportLang, Narrowing>,
    deadline: Instant,
) -> Option<AstEventKind> {
    if !entry.is_file || shard.is_some_and(|(index, count)| shard_of(&entry.rel, count) != index) {
        return None;
    }
    let lang = SupportLang::from_path(&entry.rel)?;
    let pattern = patterns.get(&lang)?;
    let (_, taken) = page.paging.resume_point(&entry.rel)?;
    let pattern = match pattern {
        Ok(pattern) => pattern,
        Err(e) => return Some(AstEventKind::OtherLanguage((lang.to_string().to_lowercase(), e.clone()))),
    };
    // Left unread before a look at the clock.
    match narrowings.get(&lang).and_then(|n| n.unread(entry, q.max_filesize)) {
        Some(Unread::TooLarge) => return Some(AstEventKind::TooLarge),
        Some(Unread::Binary) => return Some(AstEventKind::IndexSkipped(true)),
        Some(Unread::NoMatch) => return Some(AstEventKind::IndexSkipped(false)),
        None => {}
    }
    // Every call searches at least one file, so paging past a timeout
    // always makes progress.
    if page.stats.files_scanned > 0 && Instant::now() >= deadline {
        page.paging.time_out();
        return None;
    }
    Some(search_file(ws, q, entry, lang, pattern, taken, page.paging.wanted()))
}

/// Reads one file and, if it holds the pattern's words, parses it: its
/// matches past the first `taken`, at most `limit` and one more.
fn search_file(
    ws: &Workspace,
    q: &AstQuery,
    entry: &walk::Entry,
    lang: SupportLang,
    (pattern, required): &(Pattern, Required),
    taken: u64,
    limit: u64,
) -> AstEventKind {
    let rel = entry.rel.as_str();
    let unreadable = |e: std::io::Error| AstEventKind::Unreadable(error_message(&io_error(rel, &e)));
    let mut file = match entry.open() {
        Ok(f) => f,
        Err(e) => return unreadable(e),
    };
    if file.size() > q.max_filesize {
        return AstEventKind::TooLarge;
    }
    let mut bytes = Vec::with_capacity(file.size() as usize);
    if let Err(e) = file.read_to_end(&mut bytes) {
        return unreadable(e);
    }
    let size = bytes.len() as u64;
    let mut out = AstFileOutcome { bytes_searched: size, matches: Vec::new(), cut_texts: Vec::new() };
    if bytes.contains(&0) {
        return AstEventKind::Binary(size);
    }
    // (Before the UTF-8 check: a file without the pattern's texts is
    // passed over alike whether the index or this look tells.)
    if required.iter().any(|r| r.find(&bytes).is_none()) {
        return AstEventKind::Searched(out);
    }
    let Ok(src) = String::from_utf8(bytes) else {
        return AstEventKind::NotUtf8(size);
    };
    let lines = LineIndex::new(&src);
    let raw = lang.ast_grep(&src);
    if raw.root().find_all(pattern).nth(taken as usize).is_none() {
        return AstEventKind::Searched(out);
    }
    // Redaction is no oracle: in a file with secrets the pattern is
    // matched against the redacted text (a guess at a secret finds
    // nothing), and positions are mapped back onto the file.
    let (shown, edits) = if ws.redact { redact::redact_lines(b"", src.as_bytes()) } else { (Vec::new(), Vec::new()) };
    let (searched, tree) = if edits.is_empty() {
        (src, raw)
    } else {
        // Redaction edits whole ASCII tokens: the text stays UTF-8.
        let Ok(shown) = String::from_utf8(shown) else { return AstEventKind::Searched(out) };
        let tree = lang.ast_grep(&shown);
        (shown, tree)
    };
    let root = tree.root();
    let at = |pos: usize, end_side: bool| lines.line_col(redact::unmap(pos, &edits, end_side));
    for m in root.find_all(pattern).skip(taken as usize).take(limit.saturating_add(1).min(usize::MAX as u64) as usize) {
        let mut cut = 0;
        let mut text_of = |range: std::ops::Range<usize>| bounded(searched[range].to_string(), &mut cut);
        let range = m.range();
        let (line, column) = at(range.start, false);
        let (end_line, end_column) = at(range.end, true);
        let env = m.get_env();
        let mut vars: Vec<MetaVar> = Vec::new();
        for var in env.get_matched_variables() {
            let (name, span) = match var {
                MetaVariable::Capture(name, _) => {
                    let span = env.get_match(&name).map(|n| n.range());
                    (name, span)
                }
                MetaVariable::MultiCapture(name) => {
                    let nodes = env.get_multiple_matches(&name);
                    let span = match (nodes.first(), nodes.last()) {
                        (Some(a), Some(b)) => Some(a.range().start..b.range().end),
                        _ => None,
                    };
                    (name, span)
                }
                MetaVariable::Dropped(_) | MetaVariable::Multiple => continue,
            };
            let text = span.map_or_else(String::new, &mut text_of);
            vars.push(MetaVar { name, text });
        }
        vars.sort_by(|a, b| a.name.cmp(&b.name));
        vars.dedup_by(|a, b| a.name == b.name);
        // The secrets the match's text (and its variables') had redacted.
        let (from, to) = (redact::unmap(range.start, &edits, false), redact::unmap(range.end, &edits, true));
        let redactions = edits
            .iter()
            .filter(|e| e.start < to && e.end > from)
            .map(|e| Redaction { line: lines.line_col(e.start).0, rule: e.rule.name().to_string() })
            .collect();
        let text = text_of(range);
        out.matches.push(AstMatch {
            path: rel.to_string(),
            line,
            column,
            end_line,
            end_column,
            text,
            meta_variables: vars,
            redactions,
        });
        out.cut_texts.push(cut as u32);
    }
    AstEventKind::Searched(out)
}

struct Page<'q> {
    q: &'q AstQuery,
    paging: Paging,
    resp: SearchAstResponse,
    stats: SearchStats,
    unreadable: Vec<String>,
    problems: Vec<String>,
    not_utf8: Vec<String>,
    cut_texts: usize,
    /// Files the request named (not found by a walk of a directory).
    named: Vec<String>,
    binary_named: Vec<String>,
    /// Languages whose files were passed over: the pattern does not parse
    /// as them (how many files, and why).
    other_languages: BTreeMap<String, (u64, String)>,
}

impl<'q> Page<'q> {
    fn new(q: &'q AstQuery, resume: Option<Position>, warnings: Vec<String>, named: Vec<String>) -> Page<'q> {
        Page {
            q,
            paging: Paging::new(resume, q.skip, q.max_results),
            resp: SearchAstResponse {
                matches: Vec::new(),
                truncated: false,
                timed_out: false,
                next_cursor: None,
                stats: empty_stats(),
                warnings,
            },
            stats: empty_stats(),
            unreadable: Vec::new(),
            problems: Vec::new(),
            not_utf8: Vec::new(),
            cut_texts: 0,
            named,
            binary_named: Vec::new(),
            other_languages: BTreeMap::new(),
        }
    }

    fn binary(&mut self, rel: &str) {
        self.stats.skipped.binary += 1;
        if self.named.iter().any(|n| n == rel) {
            self.binary_named.push(rel.to_string());
        }
    }

    /// Takes one event of the walk into the page: `key` is the file's path
    /// (or, for walk events, where in the walk they happened).
    fn accept(&mut self, key: &str, kind: AstEventKind) {
        match kind {
            AstEventKind::Skipped(n) => {
                crate::page::count_skips(&mut self.stats.skipped, &n);
                return;
            }
            AstEventKind::Problem((message, true)) => {
                self.stats.skipped.unreadable += 1;
                self.unreadable.push(message);
                return;
            }
            AstEventKind::Problem((message, false)) => {
                self.problems.push(message);
                return;
            }
            AstEventKind::OtherLanguage((lang, why)) => {
                let met = self.other_languages.entry(lang).or_insert((0, why));
                met.0 += 1;
                return;
            }
            AstEventKind::Unreadable(message) => {
                self.stats.skipped.unreadable += 1;
                self.unreadable.push(message);
            }
            AstEventKind::TooLarge => self.stats.skipped.too_large += 1,
            // Left unread by the index, counted as the read would have
            // counted it (except in `files_scanned`).
            AstEventKind::IndexSkipped(binary) => {
                self.stats.files_skipped_by_index += 1;
                if binary {
                    self.binary(key);
                }
            }
            AstEventKind::Binary(size) => {
                self.scanned(size);
                self.binary(key);
            }
            AstEventKind::NotUtf8(size) => {
                self.scanned(size);
                self.not_utf8.push(key.to_string());
            }
            AstEventKind::Searched(out) => {
                self.scanned(out.bytes_searched);
                self.take(key, out);
            }
        }
        // Read or passed over: the stream is past it.
        if !self.paging.done() {
            self.paging.file_done(key);
        }
    }

    fn scanned(&mut self, size: u64) {
        self.stats.files_scanned += 1;
        self.stats.bytes_searched += size;
    }

    /// The file's matches, as far as the page takes them.
    fn take(&mut self, rel: &str, out: AstFileOutcome) {
        if out.matches.is_empty() {
            return;
        }
        self.stats.files_matched += 1;
        let (_, mut taken) = self.paging.resume_point(rel).unwrap_or((0, 0));
        for (m, cut) in out.matches.into_iter().zip(out.cut_texts) {
            if !self.paging.take() {
                return;
            }
            taken += 1;
            self.paging.reached(Position { path: rel.to_string(), line: 0, taken });
            if self.paging.skipping() {
                continue;
            }
            self.cut_texts += cut as usize;
            let cost = RESULT_OVERHEAD
                + json_len(rel)
                + json_len(&m.text)
                + m.meta_variables.iter().map(|v| json_len(&v.name) + json_len(&v.text) + 24).sum::<usize>();
            self.resp.matches.push(m);
            if self.paging.delivered(cost, 0) {
                self.resp.warnings.push(page::output_reached());
                self.paging.cut();
                return;
            }
        }
    }

    fn finish(mut self, stream_key: &str, started: Instant, index: IndexUse) -> Result<SearchAstResponse, SearchError> {
        // Every file it met was of a language the pattern does not parse
        // as: that is the answer, as an error.
        let first_page = self.q.cursor.is_none() && self.q.skip == 0;
        // The error is the one of the language of most files met.
        let mut met: Vec<(&String, &(u64, String))> = self.other_languages.iter().collect();
        met.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then_with(|| a.0.cmp(b.0)));
        if let Some((_, (_, e))) = met.first().filter(|_| first_page && self.stats.files_scanned == 0) {
            let others: Vec<&str> = met[1..].iter().map(|(l, _)| l.as_str()).collect();
            let others = if others.is_empty() { String::new() } else { format!(" (nor as {})", others.join(", ")) };
            return Err(SearchError::InvalidPattern(format!("{e}{others}")));
        }
        let w = &mut self.resp.warnings;
        // Languages the caller did not name are each file's own guess: a
        // pattern written for one need not parse as the others.
        if self.q.language.is_some() {
            for lang in self.other_languages.keys() {
                w.push(format!("{lang} files skipped: the pattern does not parse as {lang}"));
            }
        }
        let (found, s) = (self.paging.returned() > 0, &self.stats.skipped);
        if !found {
            w.extend(page::left_out_warnings(s.denied, s.ignored, s.hidden));
        }
        page::binary_skipped(w, s.binary, &self.binary_named, found);
        if self.stats.skipped.too_large > 0 {
            w.push(format!(
                "{} file(s) skipped as larger than max-filesize ({} bytes)",
                self.stats.skipped.too_large, self.q.max_filesize
            ));
        }
        named_warning(w, "entries could not be read", &self.unreadable);
        named_warning(w, "problems with ignore files", &self.problems);
        named_warning(w, "file(s) skipped: not UTF-8, which the parsers need", &self.not_utf8);
        if self.cut_texts > 0 {
            w.push(format!("{} text(s) longer than {MAX_AST_TEXT} bytes were cut (…)", self.cut_texts));
        }
        self.resp.next_cursor = self.paging.finish(stream_key);
        self.resp.truncated = self.paging.truncated();
        self.resp.timed_out = self.paging.timed_out();
        self.stats.matches_returned = self.paging.returned() as u64;
        self.stats.elapsed_ms = started.elapsed().as_millis() as u64;
        self.stats.index = index;
        (self.stats.lines_redacted, self.stats.redacted_by) =
            page::redaction_counts(self.resp.matches.iter().map(|m| (m.path.as_str(), m.redactions.as_slice())));
        self.resp.stats = self.stats;
        Ok(self.resp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws_with(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let ws = Workspace::new(dir.path());
        (dir, ws)
    }

    fn req(pattern: &str) -> SearchAstRequest {
        SearchAstRequest::new(pattern)
    }

    fn spots(r: &SearchAstResponse) -> Vec<(String, u64, u64)> {
        r.matches.iter().map(|m| (m.path.clone(), m.line, m.column)).collect()
    }

    #[test]
    fn languages_by_extension_and_meta_variables_by_name() {
        let (_d, ws) = ws_with(&[
            ("a.rs", "fn main() {\n    let v = foo(1, two);\n}\n"),
            ("b.py", "x = foo(3)\ny = foo(5, 6, 7)\n"),
            ("c.txt", "foo(4)\n"),
        ]);
        let r = ws.search_ast(req("foo($A, $$$REST)")).unwrap();
        assert_eq!(spots(&r), [("a.rs".into(), 2, 13), ("b.py".into(), 2, 5)]);
        let vars: Vec<(&str, &str)> = r.matches[0].meta_variables.iter().map(|v| (&*v.name, &*v.text)).collect();
        assert_eq!(vars, [("A", "1"), ("REST", "two")]);
        assert_eq!(r.matches[1].meta_variables[1].text, "6, 7");
        assert_eq!(
            (r.matches[0].end_line, r.matches[0].end_column, r.matches[0].text.as_str()),
            (2, 24, "foo(1, two)")
        );
        let r = ws.search_ast(SearchAstRequest { language: Some("py".into()), ..req("foo($A)") }).unwrap();
        assert_eq!(spots(&r), [("b.py".into(), 1, 5)]);
    }

    #[test]
    fn a_kept_instance_searches_the_walk_it_kept() {
        let (d, ws) = ws_with(&[("a.py", "foo(1)\n"), ("id_rsa", "x\n"), ("s/b.py", "foo(2)\n")]);
        let fresh = ws.search_ast(req("foo($X)")).unwrap();
        assert_eq!(fresh.stats.skipped.denied, 1);
        let same = |r: &SearchAstResponse| {
            assert_eq!(spots(r), spots(&fresh));
            assert_eq!((r.stats.skipped.denied, r.stats.files_scanned), (1, 2));
        };
        // The host vouches for an unchanged tree: the first search walks and
        // is kept, the next replays it (a file made behind the host's back
        // is not walked, which shows the replay).
        crate::session::unchanged_since(Some(1));
        same(&ws.search_ast(req("foo($X)")).unwrap());
        std::fs::write(d.path().join("c.py"), "foo(3)\n").unwrap();
        same(&ws.search_ast(req("foo($X)")).unwrap());
        crate::session::unchanged_since(None);
        assert_eq!(spots(&ws.search_ast(req("foo($X)")).unwrap()).len(), 3);
    }

    #[test]
    fn pages_follow_the_cursor_within_and_across_files() {
        let body: String = (0..5).map(|i| format!("f({i})\n")).collect();
        let (_d, ws) = ws_with(&[("a.py", &body), ("b.py", &body)]);
        let all = spots(&ws.search_ast(req("f($X)")).unwrap());
        assert_eq!(all.len(), 10);
        let mut got = Vec::new();
        let mut cursor = None;
        loop {
            let r = ws
                .search_ast(SearchAstRequest { max_results: Some(3), cursor: cursor.clone(), ..req("f($X)") })
                .unwrap();
            got.extend(spots(&r));
            assert_eq!(r.truncated, r.next_cursor.is_some());
            match r.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(got, all);
        let r = ws.search_ast(SearchAstRequest { skip: Some(4), max_results: Some(2), ..req("f($X)") }).unwrap();
        assert_eq!(spots(&r), all[4..6]);
        let other =
            ws.search_ast(SearchAstRequest { cursor: cursor.or(Some("sg3.AQAAAAAAAAA".into())), ..req("g($X)") });
        assert!(matches!(other, Err(SearchError::InvalidArgument(_))), "{other:?}");
    }

    #[test]
    fn shards_merge_into_the_single_instance_pages() {
        // Files of every kind a page counts: matches spread over many files,
        // a binary one, one not UTF-8, one without the pattern's words, a
        // secret, a language the pattern does not parse as, a denied file.
        let mut files: Vec<(String, String)> = (0..23)
            .map(|i| (format!("d{}/m{i:02}.py", i % 4), (0..i % 5).map(|j| format!("foo({j})\n")).collect()))
            .collect();
        files.push(("d1/bin.py".into(), "foo(1)\0\n".into()));
        files.push(("d2/none.py".into(), "bar(1)\n".into()));
        files.push(("d2/key.py".into(), "password = \"Zq8rT3vL0xN7aB2cD4eF\"\nfoo(password)\n".into()));
        files.push(("d3/a.rs".into(), "fn main() { foo(1); }\n".into()));
        files.push(("d1/server.pem".into(), "foo(1)\n".into()));
        files.push(("zz/id_rsa".into(), "foo(1)\n".into()));
        let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        let (d, ws) = ws_with(&refs);
        std::fs::write(d.path().join("d3/latin1.py"), b"foo(1) # caf\xe9\n").unwrap();
        for (max, skip) in [(1, 0), (3, 0), (4, 2), (1000, 1)] {
            let mut request = SearchAstRequest { max_results: Some(max), skip: Some(skip), ..req("foo($X)") };
            let mut pages = 0;
            loop {
                let mut single = ws.search_ast(request.clone()).unwrap();
                single.stats.elapsed_ms = 0;
                for count in [2, 3] {
                    let shards = (0..count).map(|i| ws.search_ast_shard(request.clone(), i, count).unwrap()).collect();
                    let mut merged = ws.merge_ast_shards(request.clone(), shards).unwrap();
                    merged.stats.elapsed_ms = 0;
                    assert_eq!(merged, single, "max {max} skip {skip} page {pages} in {count}");
                }
                pages += 1;
                match single.next_cursor {
                    Some(c) => request.cursor = Some(c),
                    None => break,
                }
            }
            assert!(pages > 1 || max == 1000, "{max}: one page");
        }
    }

    #[test]
    fn bad_patterns_and_languages_are_clear_errors() {
        let (_d, ws) = ws_with(&[("a.rs", "fn main() {}\n")]);
        let unknown = ws.search_ast(SearchAstRequest { language: Some("cobol".into()), ..req("x") });
        assert!(matches!(unknown, Err(SearchError::InvalidArgument(m)) if m.contains("cobol") && m.contains("rust")));
        let multi = ws.search_ast(SearchAstRequest { language: Some("rust".into()), ..req("$$$A") });
        assert!(matches!(multi, Err(SearchError::InvalidPattern(_))), "{multi:?}");
        assert!(matches!(ws.search_ast(req("  ")), Err(SearchError::InvalidPattern(_))));
    }

    #[test]
    fn files_without_the_named_leaves_are_passed_over_unparsed() {
        let texts = |pattern: &str, lang: SupportLang| -> Vec<String> {
            let p = compile(pattern, lang).unwrap();
            required_texts(&p).iter().map(|f| String::from_utf8(f.needle().to_vec()).unwrap()).collect()
        };
        // Named leaves only: not the metavariables, not `.`, `(` or `)`.
        assert_eq!(texts("foo.Bar($A, $B)", SupportLang::Go), ["Bar", "foo"]);
        assert_eq!(texts("$A.$B($$$)", SupportLang::Go), Vec::<String>::new());
        assert_eq!(texts("let x = \"µ$Y\";", SupportLang::Rust), ["x"]);
        // And what they skip is what would not have matched.
        let (_d, ws) = ws_with(&[
            ("a.go", "package a\nfunc f() { foo.Bar(1, 2) }\n"),
            ("b.go", "package b\nfunc f() { foo.Baz(1, 2) }\n"),
        ]);
        assert_eq!(spots(&ws.search_ast(req("foo.Bar($A, $B)")).unwrap()), [("a.go".into(), 2, 12)]);
    }

    #[test]
    fn secrets_in_matches_are_redacted() {
        let (_d, ws) = ws_with(&[("k.py", "key = \"AKIAIOSFODNN7EXAMPLE\"\nuse(key)\n")]);
        let r = ws.search_ast(req("$K = $V")).unwrap();
        assert_eq!(r.matches[0].text, "key = \"[REDACTED]\"");
        assert_eq!(r.matches[0].meta_variables[1].text, "\"[REDACTED]\"");
    }
}
