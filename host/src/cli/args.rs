//! From the flags to the component's requests: patterns, globs, context,
//! separators, as rg reads them.

use std::io;

use sandgrep::{
    BinaryMode, CaseMode, IgnoreOptions, OutputMode, QueryMode, RegexEngine, SearchTextRequest, TypeChange,
};

use super::flags::{sat, SearchArgs};

/// `glob` matching either case (rg's --iglob): each letter a class of both
/// (`*.RS` → `*.[rR][sS]`), each class with its letters' other case.
pub(crate) fn either_case(glob: &str) -> String {
    // (ASCII letters only, as rg's: globs match bytes.)
    let other = |c: char| match c {
        'a'..='z' => Some(c.to_ascii_uppercase()),
        'A'..='Z' => Some(c.to_ascii_lowercase()),
        _ => None,
    };
    let (mut out, mut chars) = (String::new(), glob.chars().peekable());
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e) => match other(e) {
                    Some(o) => out.extend(['[', e, o, ']']),
                    None => out.extend(['\\', e]),
                },
                None => out.push('\\'),
            },
            '[' => {
                // The class as written, then the other case of its letters
                // and ranges of letters.
                let mut class = String::from('[');
                if let Some(&n) = chars.peek().filter(|&&n| n == '!' || n == '^') {
                    class.push(n);
                    chars.next();
                }
                let (mut body, mut closed) = (Vec::new(), false);
                for k in chars.by_ref() {
                    if k == ']' && !body.is_empty() {
                        closed = true;
                        break;
                    }
                    body.push(k);
                }
                class.extend(&body);
                if !closed {
                    // (Not a class: as written, for the glob's own error.)
                    out.push_str(&class);
                    continue;
                }
                let mut i = 0;
                while i < body.len() {
                    match (body.get(i + 1), body.get(i + 2).and_then(|&z| other(z)), other(body[i])) {
                        (Some('-'), Some(z), Some(a)) => {
                            class.extend([a, '-', z]);
                            i += 3;
                        }
                        (_, _, Some(a)) => {
                            class.push(a);
                            i += 1;
                        }
                        _ => i += 1,
                    }
                }
                class.push(']');
                out.push_str(&class);
            }
            c => match other(c) {
                Some(o) => out.extend(['[', c, o, ']']),
                None => out.push(c),
            },
        }
    }
    out
}

/// rg's `-g`: `GLOB` includes, `!GLOB` excludes.
pub(crate) fn split_globs(globs: &[String]) -> (Vec<String>, Vec<String>) {
    let (ex, inc): (Vec<&String>, Vec<&String>) = globs.iter().partition(|g| g.starts_with('!'));
    (inc.into_iter().cloned().collect(), ex.into_iter().map(|g| g[1..].to_string()).collect())
}

impl SearchArgs {
    /// With `-e` (or `--files`), every positional argument is a path.
    pub(crate) fn settle(&mut self) -> io::Result<()> {
        let refused = |message: &str| Err(io::Error::new(io::ErrorKind::InvalidInput, message.to_string()));
        if self.pre.as_deref().is_some_and(|p| !p.is_empty()) {
            return refused("--pre: sandgrep runs no program (a preprocessor would run outside the sandbox, on files anyone may have written)");
        }
        if self.hostname_bin.as_deref().is_some_and(|p| !p.is_empty()) {
            return refused("--hostname-bin: sandgrep runs no program (and writes no hyperlinks)");
        }
        if self.one_file_system {
            return refused(
                "--one-file-system is not supported: the component's walk cannot tell one file system from another",
            );
        }
        if self.hyperlink_format.as_deref().is_some_and(|f| !matches!(f, "" | "none")) {
            let message = "--hyperlink-format: sandgrep writes no hyperlinks (they would carry the host's paths)";
            return Err(io::Error::new(io::ErrorKind::InvalidInput, message));
        }
        if let Err(e) = super::printer::Colors::parse(&self.colors) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("error parsing flag --colors: {e}")));
        }
        for file in &self.pattern_files {
            let text =
                if file.as_os_str() == "-" { io::read_to_string(io::stdin()) } else { std::fs::read_to_string(file) };
            let text = text.map_err(|e| io::Error::other(format!("{}: {e}", file.display())))?;
            self.regexp.extend(text.lines().map(str::to_string));
        }
        if !self.regexp.is_empty() || !self.pattern_files.is_empty() || self.files || self.type_list {
            if let Some(p) = self.pattern.take() {
                self.paths.insert(0, p);
            }
        }
        if self.paths.iter().any(String::is_empty) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "a path is empty"));
        }
        // (As rg: an empty one is the default.)
        self.path_separator = self.path_separator.take().filter(|sep| !sep.is_empty());
        if let Some(sep) = &self.path_separator {
            if unescaped(sep).len() != 1 {
                let message = format!("--path-separator takes one byte, not {sep:?}");
                return Err(io::Error::new(io::ErrorKind::InvalidInput, message));
            }
        }
        if self.glob_case_insensitive {
            self.iglobs.splice(0..0, std::mem::take(&mut self.globs));
        }
        for g in std::mem::take(&mut self.iglobs) {
            let (not, glob) = g.strip_prefix('!').map_or(("", g.as_str()), |rest| ("!", rest));
            self.globs.push(format!("{not}{}", either_case(glob)));
        }
        if let Some(("created", reverse)) = self.sorting() {
            let flag = if reverse { "--sortr" } else { "--sort" };
            let message = format!(
                "{flag} created is not supported: WASI gives no file's creation time (modified and accessed are)"
            );
            return Err(io::Error::new(io::ErrorKind::InvalidInput, message));
        }
        self.type_table()?;
        // As rg: with binary detection on, a pattern that must match a NUL
        // byte somewhere can never match.
        // (PCRE2 makes no such check: rg's -P finds nothing instead.)
        let pcre2 = self.pcre2 || self.engine.as_deref() == Some("pcre2");
        if !self.text && !self.null_data && !pcre2 {
            let (query, mode) = self.query();
            let query = if mode == QueryMode::Literal { regex_syntax::escape(&query) } else { query };
            if regex_syntax::Parser::new().parse(&query).is_ok_and(|hir| must_match_nul(&hir)) {
                let message = "pattern contains \"\\0\" but it is impossible to match\n\n\
                    Consider enabling text mode with the --text flag (or -a for short). Otherwise,\n\
                    binary detection is enabled and matching a NUL byte is impossible.";
                return Err(io::Error::new(io::ErrorKind::InvalidInput, message));
            }
        }
        // (-u's --no-ignore: see `ignore_where_given`.)
        if self.unrestricted > 3 {
            let message = "flag -u can only be repeated up to 3 times";
            return Err(io::Error::new(io::ErrorKind::InvalidInput, message));
        }
        if self.unrestricted >= 2 {
            self.hidden = true;
        }
        if self.unrestricted >= 3 {
            self.binary = true;
        }
        Ok(())
    }

    /// -p as rg 15 reads it: `--color always --heading --line-number` where
    /// it stands, so that these flags (or their opposites) given after it
    /// win over it, and those before it lose.
    pub(crate) fn pretty_where_given(&mut self, m: &clap::ArgMatches) {
        // (Where each was given last; a default is given nowhere.)
        let at = |id: &str| {
            m.indices_of(id)
                .and_then(Iterator::max)
                .filter(|_| m.value_source(id) == Some(clap::parser::ValueSource::CommandLine))
        };
        let Some(pretty) = at("pretty") else { return };
        let after = |ids: &[&str]| ids.iter().any(|&id| at(id).is_some_and(|i| i > pretty));
        if !after(&["color"]) {
            self.color = "always".into();
        }
        if !after(&["heading", "no_heading"]) {
            (self.heading, self.no_heading) = (true, false);
        }
        if !after(&["line_number", "no_line_number"]) {
            (self.line_number, self.no_line_number) = (true, false);
        }
    }

    /// --passthru and -A, -B, -C as rg 15 reads them: one context mode,
    /// the last given wins — -A, -B or -C after --passthru end it (and
    /// those before it are forgotten: `-A2 --passthru -B1` is -B1 alone).
    pub(crate) fn passthru_where_given(&mut self, m: &clap::ArgMatches) {
        let given = |id: &str| m.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
        let Some(pass) = m.indices_of("passthru").and_then(Iterator::max).filter(|_| given("passthru")) else {
            return;
        };
        let after = |id: &str| m.indices_of(id).and_then(Iterator::max).filter(|&i| given(id) && i > pass).is_some();
        let ids = ["after_context", "before_context", "context"];
        if ids.iter().any(|id| after(id)) {
            self.passthru = false;
            if !after("after_context") {
                self.after_context = None;
            }
            if !after("before_context") {
                self.before_context = None;
            }
            if !after("context") {
                self.context = None;
            }
        } else {
            (self.after_context, self.before_context, self.context) = (None, None, None);
        }
    }

    /// --type-add and --type-clear as rg applies them: in the order given,
    /// whichever flag each is.
    pub(crate) fn type_changes_where_given(&mut self, m: &clap::ArgMatches) {
        let at = |id: &str| m.indices_of(id).into_iter().flatten().collect::<Vec<_>>();
        let adds = at("type_add").into_iter().zip(self.type_add.iter().cloned().map(TypeChange::Add));
        let clears = at("type_clear").into_iter().zip(self.type_clear.iter().cloned().map(TypeChange::Clear));
        let mut changes: Vec<_> = adds.chain(clears).collect();
        changes.sort_by_key(|(i, _)| *i);
        self.type_changes = changes.into_iter().map(|(_, c)| c).collect();
    }

    /// The file types -t knows: rg's, with --type-add and --type-clear
    /// applied (an error in rg's words for a bad one).
    pub(crate) fn type_table(&self) -> io::Result<ignore::types::TypesBuilder> {
        let mut types = ignore::types::TypesBuilder::new();
        types.add_defaults();
        for change in &self.type_changes {
            match change {
                TypeChange::Add(spec) => {
                    types.add_def(spec).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?
                }
                TypeChange::Clear(name) => {
                    types.clear(name);
                }
            }
        }
        Ok(types)
    }

    /// The ignore flags as rg 15 reads them: --no-ignore, --ignore and -u
    /// set each of --no-ignore-dot, -exclude, -global, -parent and -vcs
    /// where they stand, so that the last given of these wins, field by
    /// field (`--no-ignore --ignore-vcs` respects .gitignore alone).
    pub(crate) fn ignore_where_given(&mut self, m: &clap::ArgMatches) {
        let given = |id: &str| m.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
        let at = |id: &str| m.indices_of(id).and_then(Iterator::max).filter(|_| given(id));
        // (The first -u is the --no-ignore; the next ones are --hidden and --binary.)
        let u = m.indices_of("unrestricted").and_then(Iterator::min).filter(|_| given("unrestricted"));
        let all = [(at("no_ignore"), true), (at("ignore"), false), (u, true)];
        let field = |no: &str, yes: &str| {
            let own = [(at(no), true), (at(yes), false)];
            own.iter().chain(&all).filter_map(|&(i, v)| Some((i?, v))).max_by_key(|&(i, _)| i).is_some_and(|(_, v)| v)
        };
        self.no_ignore_dot = field("no_ignore_dot", "ignore_dot");
        self.no_ignore_exclude = field("no_ignore_exclude", "ignore_exclude");
        self.no_ignore_global = field("no_ignore_global", "ignore_global");
        self.no_ignore_parent = field("no_ignore_parent", "ignore_parent");
        self.no_ignore_vcs = field("no_ignore_vcs", "ignore_vcs");
        self.no_ignore = self.no_ignore_dot && self.no_ignore_vcs;
    }

    /// --ignore-file paths as the component takes them: relative to the
    /// workspace (an absolute one inside it made relative, as PATHs are); one
    /// outside the workspace is an error naming it as given.
    pub(crate) fn ignore_files_in(&mut self, root: &std::path::Path) -> io::Result<()> {
        use std::path::{Component, Path};
        let roots: Vec<_> =
            [std::fs::canonicalize(root).ok(), std::path::absolute(root).ok()].into_iter().flatten().collect();
        for file in &mut self.ignore_file {
            let outside = || {
                let message =
                    format!("--ignore-file {file}: outside the workspace (the sandbox reads nothing outside it)");
                io::Error::new(io::ErrorKind::InvalidInput, message)
            };
            let mut rel = Path::new(file.as_str()).to_path_buf();
            if rel.is_absolute() {
                rel = roots.iter().find_map(|r| rel.strip_prefix(r).ok()).ok_or_else(outside)?.to_path_buf();
            }
            let mut depth = 0usize;
            for c in rel.components() {
                match c {
                    Component::Normal(_) => depth += 1,
                    Component::ParentDir => depth = depth.checked_sub(1).ok_or_else(outside)?,
                    Component::CurDir => {}
                    Component::RootDir | Component::Prefix(_) => return Err(outside()),
                }
            }
            let rel = rel.to_string_lossy();
            *file = if rel.is_empty() { ".".into() } else { rel.into_owned() };
        }
        Ok(())
    }

    /// rg's default for memory maps, settled once the PATHs are relative to
    /// `root`: without --mmap or --no-mmap, a search of at most 10 PATHs,
    /// every one a file (stdin is none), maps them (hiargs.rs, `MmapMode::
    /// Auto`): as if --mmap were given. (Each PATH is looked up beneath
    /// the workspace, links followed only while they stay inside it, as
    /// the sandbox resolves paths: one that leaves it counts as no file.)
    pub(crate) fn mmap_as_rg(&mut self, root: &std::path::Path) {
        use cap_primitives::fs::FollowSymlinks;
        let Ok(dir) = std::fs::File::open(root) else { return };
        let file = |p: &String| {
            let path = std::path::Path::new(p.as_str());
            p != super::stdin::NAME
                && cap_primitives::fs::stat(&dir, path, FollowSymlinks::Yes).is_ok_and(|m| m.file_type().is_file())
        };
        if !self.mmap && !self.no_mmap && (1..=10).contains(&self.paths.len()) && self.paths.iter().all(file) {
            self.mmap = true;
        }
    }

    /// The request's `no-ignore` and `ignore` fields for the ignore flags
    /// (resolved by `ignore_where_given`).
    pub(crate) fn ignore_request(&self) -> (bool, Option<IgnoreOptions>) {
        let files = if self.no_ignore_files { Vec::new() } else { self.ignore_file.clone() };
        if self.no_ignore_dot && self.no_ignore_vcs && files.is_empty() {
            return (true, None);
        }
        let options = IgnoreOptions {
            no_vcs: self.no_ignore_vcs,
            no_exclude: self.no_ignore_exclude,
            no_parent: self.no_ignore_parent,
            no_dot: self.no_ignore_dot,
            no_require_git: self.no_require_git,
            case_insensitive: self.ignore_file_case_insensitive,
            files,
        };
        let default = !(options.no_vcs
            || options.no_exclude
            || options.no_parent
            || options.no_dot
            || options.no_require_git
            || options.case_insensitive)
            && options.files.is_empty();
        (false, (!default).then_some(options))
    }

    /// The query: the pattern, or the `-e` patterns as one alternation.
    pub(crate) fn query(&self) -> (String, QueryMode) {
        let mode = if self.fixed_strings { QueryMode::Literal } else { QueryMode::Regex };
        let (query, mode) = match (self.regexp.as_slice(), &self.pattern) {
            ([one], _) => (one.clone(), mode),
            ([], Some(p)) => (p.clone(), mode),
            // No patterns (an empty -f file): no line matches (so with -v
            // every line does, rg 15).
            ([], None) if !self.pattern_files.is_empty() => (r"[^\s\S]".to_string(), QueryMode::Regex),
            ([], None) => (String::new(), mode),
            (many, _) => {
                let each = |p: &String| if self.fixed_strings { regex_syntax::escape(p) } else { format!("(?:{p})") };
                (many.iter().map(each).collect::<Vec<_>>().join("|"), QueryMode::Regex)
            }
        };
        if !(self.line_regexp || self.multiline && self.multiline_dotall || self.no_unicode) {
            return (query, mode);
        }
        let mut query = if mode == QueryMode::Literal { regex_syntax::escape(&query) } else { query };
        if self.line_regexp {
            query = format!("^(?:{query})$");
        }
        if self.multiline && self.multiline_dotall {
            query = format!("(?s:{query})");
        }
        // (rg builds its matcher without Unicode, -w's word boundaries
        // too: so -w is asked here, as ASCII's half boundaries, not of the
        // component. With PCRE2, whose syntax has no `(?-u)`, the component
        // reads a pattern wrapped whole in it as PCRE2's without UTF, and
        // puts -w's boundaries around it itself.)
        let pcre2 = self.pcre2 || self.engine.as_deref() == Some("pcre2");
        if self.no_unicode && self.word_regexp && !pcre2 {
            query = format!(r"(?-u:\b{{start-half}}(?:{query})\b{{end-half}})");
        } else if self.no_unicode {
            query = format!("(?-u:{query})");
        }
        (query, QueryMode::Regex)
    }

    /// Whether rg's searcher searches across lines (grep-searcher's
    /// `multi_line_with_matcher`): with -U, when the pattern can match a
    /// line break — grep-regex's non-matching bytes leave `\n` out of a
    /// literal or class that holds it and of every `^` and `$`; PCRE2 says
    /// nothing of its bytes, so with it always (and where the pattern is
    /// none of Rust's syntax: rg's automatic engine then takes PCRE2).
    /// Its printer then prints a match line by line, a replacement's line
    /// breaks too.
    pub(crate) fn searches_across_lines(&self) -> bool {
        if !self.multiline {
            return false;
        }
        if self.pcre2 || self.engine.as_deref() == Some("pcre2") {
            return true;
        }
        let (query, mode) = self.query();
        let query = if mode == QueryMode::Literal { regex_syntax::escape(&query) } else { query };
        let parsed = regex_syntax::ParserBuilder::new().multi_line(true).crlf(self.crlf).build().parse(&query);
        parsed.map_or(true, |hir| may_match_newline(&hir))
    }

    /// Lines of context before and after, as rg 15 reads -A, -B and -C:
    /// -B and -A override -C's before and after parts, wherever each is
    /// given.
    pub(crate) fn contexts(&self) -> (u64, u64) {
        let both = self.context.unwrap_or(0);
        (self.before_context.unwrap_or(both), self.after_context.unwrap_or(both))
    }

    /// The order asked for (--sort, --sortr, --sort-files: the last
    /// given), and whether reversed; `None`: the walk's (path order).
    pub(crate) fn sorting(&self) -> Option<(&str, bool)> {
        match (&self.sort, &self.sortr) {
            (Some(kind), _) if kind != "none" => Some((kind.as_str(), false)),
            (_, Some(kind)) if kind != "none" => Some((kind.as_str(), true)),
            _ if self.sort_files => Some(("path", false)),
            _ => None,
        }
    }

    /// -t's types, and -T's as `!TYPE`; `all` (rg's: every type defined)
    /// as each type's name.
    pub(crate) fn all_types(&self) -> Vec<String> {
        let each = |t: &String| match t.as_str() {
            "all" => self.type_table().map_or_else(
                |_| Vec::new(),
                |types| types.definitions().iter().map(|d| d.name().to_string()).collect(),
            ),
            _ => vec![t.clone()],
        };
        let selected = self.types.iter().flat_map(each);
        selected.chain(self.types_not.iter().flat_map(each).map(|t| format!("!{t}"))).collect()
    }

    pub(crate) fn request(&self) -> SearchTextRequest {
        let (query, mode) = self.query();
        let mut r = SearchTextRequest::new(query);
        r.mode = Some(mode);
        r.case = Some(if self.ignore_case {
            CaseMode::Insensitive
        } else if self.smart_case {
            CaseMode::Smart
        } else {
            CaseMode::Sensitive
        });
        r.word = self.word_regexp && (!self.no_unicode || self.pcre2 || self.engine.as_deref() == Some("pcre2"));
        r.multiline = self.multiline;
        r.invert_match = self.invert_match;
        // (As rg: -c with -o counts matches.)
        r.count_matches = self.count_matches || self.count && self.only_matching;
        r.paths = self.paths.clone();
        // (-g globs go in order, `!GLOB` as given: the last that matches a
        // path decides, as in rg.)
        r.include_globs = self.globs.clone();
        r.types = self.all_types();
        r.type_changes = self.type_changes.clone();
        r.max_depth = self.max_depth;
        r.replace = self.replace.clone();
        r.hidden = self.hidden;
        (r.no_ignore, r.ignore) = self.ignore_request();
        r.follow_symlinks = self.follow;
        // As rg: a file found by the walk stops at its first NUL byte, a file
        // named is searched on ("binary file matches"). The one-object page
        // is the tools' and the server's answer: a binary file is left out
        // whole there, as they leave it, unless -a or --binary says otherwise.
        r.binary = if self.text {
            Some(BinaryMode::Text)
        } else if self.binary {
            Some(BinaryMode::Search)
        } else if self.json_page {
            None
        } else {
            Some(BinaryMode::AsRg)
        };
        r.crlf = self.crlf;
        r.null_data = self.null_data;
        r.stop_on_nonmatch = self.stop_on_nonmatch;
        // (The flags override each other: the last given is set.)
        r.engine = match (self.pcre2, self.auto_hybrid_regex, self.engine.as_deref()) {
            (true, _, _) | (_, _, Some("pcre2")) => Some(RegexEngine::Pcre2),
            (_, true, _) | (_, _, Some("auto")) => Some(RegexEngine::Auto),
            _ => None,
        };
        r.search_zip = self.search_zip;
        // (Of --mmap and --no-mmap the last given is set; neither: rg's
        // choice, see `mmap_as_rg`.)
        r.mmap = self.mmap;
        r.passthru = self.passthru;
        r.encoding = self.encoding.clone().filter(|_| !self.no_encoding);
        // As rg: no context unless asked for.
        let (before, after) = self.contexts();
        (r.context_before, r.context_after) = (sat(Some(before)), sat(Some(after)));
        r.output = Some(if self.count || self.count_matches {
            OutputMode::Count
        } else if self.files_with_matches {
            OutputMode::FilesWithMatches
        } else {
            OutputMode::Content
        });
        r.max_results = sat(self.max_results);
        r.max_matches_per_file = sat(self.max_count);
        r.max_columns = sat(self.max_columns);
        r.max_filesize = self.max_filesize;
        r.timeout_ms = sat(self.timeout_ms);
        r.cursor = self.cursor.clone();
        r.skip = sat(self.skip);
        r
    }
}

/// Whether some part of `hir` matches only a NUL byte (rg's banned byte
/// under binary detection: grep-regex's `ban::check`).
fn must_match_nul(hir: &regex_syntax::hir::Hir) -> bool {
    use regex_syntax::hir::{Class, HirKind};
    match hir.kind() {
        HirKind::Literal(lit) => lit.0.contains(&0),
        HirKind::Class(Class::Unicode(c)) => {
            c.ranges().iter().map(|r| r.len()).sum::<usize>() == 1 && c.ranges()[0].start() == '\0'
        }
        HirKind::Class(Class::Bytes(c)) => {
            c.ranges().iter().map(|r| r.len()).sum::<usize>() == 1 && c.ranges()[0].start() == 0
        }
        HirKind::Repetition(r) => must_match_nul(&r.sub),
        HirKind::Capture(c) => must_match_nul(&c.sub),
        HirKind::Concat(xs) | HirKind::Alternation(xs) => xs.iter().any(must_match_nul),
        HirKind::Empty | HirKind::Look(_) => false,
    }
}

/// Whether `hir` may match a `\n` as grep-regex's `non_matching_bytes` tells.
fn may_match_newline(hir: &regex_syntax::hir::Hir) -> bool {
    use regex_syntax::hir::{Class, HirKind, Look};
    match hir.kind() {
        HirKind::Literal(lit) => lit.0.contains(&b'\n'),
        HirKind::Class(Class::Unicode(c)) => c.ranges().iter().any(|r| r.start() <= '\n' && '\n' <= r.end()),
        HirKind::Class(Class::Bytes(c)) => c.ranges().iter().any(|r| r.start() <= b'\n' && b'\n' <= r.end()),
        HirKind::Look(l) => {
            matches!(l, Look::Start | Look::End | Look::StartLF | Look::EndLF | Look::StartCRLF | Look::EndCRLF)
        }
        HirKind::Repetition(r) => may_match_newline(&r.sub),
        HirKind::Capture(c) => may_match_newline(&c.sub),
        HirKind::Concat(xs) | HirKind::Alternation(xs) => xs.iter().any(may_match_newline),
        HirKind::Empty => false,
    }
}

/// rg's escapes in a separator: `\t`, `\n`, `\r`, `\\`, `\0` and `\xHH`
/// (a byte; bytes that are not UTF-8 show as `�`).
pub(crate) fn unescape(s: &str) -> String {
    String::from_utf8_lossy(&unescaped(s)).into_owned()
}

pub(crate) fn unescaped(s: &str) -> Vec<u8> {
    let (mut out, mut bytes) = (Vec::new(), s.bytes());
    while let Some(b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match bytes.next() {
            Some(b't') => out.push(b'\t'),
            Some(b'n') => out.push(b'\n'),
            Some(b'r') => out.push(b'\r'),
            Some(b'0') => out.push(0),
            Some(b'\\') => out.push(b'\\'),
            Some(b'x') => {
                let hex: Vec<u8> = bytes.clone().take(2).collect();
                match std::str::from_utf8(&hex)
                    .ok()
                    .filter(|h| h.len() == 2)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(v) => {
                        out.push(v);
                        bytes.nth(1);
                    }
                    None => out.extend(b"\\x"),
                }
            }
            Some(o) => out.extend([b'\\', o]),
            None => out.push(b'\\'),
        }
    }
    out
}
