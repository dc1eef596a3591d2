//! Text search: every page of the component's stream printed as rg prints it.

use std::collections::HashMap;
use std::io::{self, Write};

use sandgrep::limits::{LIST_RESULTS, MAX_FILESIZE, MAX_RESULTS};
use sandgrep::{
    render, BinaryMode, FileCount, ListFilesRequest, OutputMode, QueryMode, Sandbox, SearchError, SearchTextRequest,
    SearchTextResponse, TextMatch,
};

use super::args::unescape;
use super::flags::{sat, SearchArgs};
use super::printer;
use super::{go_on, json_line, jsonl, notes, Outcome};

/// What prints a search's pages as they come: rg's text
/// ([`printer::Printer`]) or its JSON Lines ([`jsonl::Printer`]).
pub(crate) trait Results {
    fn text_match(&mut self, m: &TextMatch) -> io::Result<()>;
    /// One file of `-l` (no count) or `-c` output.
    fn file_count(&mut self, f: &FileCount, count: bool) -> io::Result<()>;
    /// The search of the `i`th path named begins.
    fn next_root(&mut self, i: usize) -> io::Result<()>;
    fn totals(&mut self) -> &mut printer::Totals;
    /// A page goes on in the file the last one ended in (searching it again).
    fn searched_again(&mut self) {}
    /// The search of the file at `path` ended in an error after its results.
    fn broken(&mut self, _path: &str) {}
    /// Flushes the output; with `queued`, what was given so far is final
    /// and printed first (stdin's pieces).
    fn flush(&mut self, _queued: bool) -> io::Result<()> {
        Ok(())
    }
    /// Whether it stops printing a stream at a NUL byte, as rg's text does
    /// (its JSON goes on), saying so with [`Results::binary_matches`].
    fn stops_at_binary(&self) -> bool {
        false
    }
    fn binary_matches(&mut self, _path: &str, _offset: u64) -> io::Result<()> {
        Ok(())
    }
    /// rg's notice after a file's results: its search met a NUL byte.
    fn binary_notice(&mut self, _n: &sandgrep::BinaryNotice) -> io::Result<()> {
        Ok(())
    }
}

impl<W: Write> Results for printer::Printer<W> {
    fn text_match(&mut self, m: &TextMatch) -> io::Result<()> {
        printer::Printer::text_match(self, m)
    }

    fn file_count(&mut self, f: &FileCount, count: bool) -> io::Result<()> {
        printer::Printer::file_count(self, f, count)
    }

    fn next_root(&mut self, i: usize) -> io::Result<()> {
        printer::Printer::next_root(self, i)
    }

    fn totals(&mut self) -> &mut printer::Totals {
        &mut self.totals
    }

    fn flush(&mut self, queued: bool) -> io::Result<()> {
        printer::Printer::flush(self, queued)
    }

    fn stops_at_binary(&self) -> bool {
        !self.counting
    }

    fn binary_matches(&mut self, path: &str, offset: u64) -> io::Result<()> {
        printer::Printer::binary_matches(self, path, offset)
    }

    fn binary_notice(&mut self, n: &sandgrep::BinaryNotice) -> io::Result<()> {
        printer::Printer::binary_notice(self, n)
    }
}

impl<W: Write> Results for jsonl::Printer<W> {
    fn text_match(&mut self, m: &TextMatch) -> io::Result<()> {
        jsonl::Printer::text_match(self, m)
    }

    fn file_count(&mut self, _: &FileCount, _: bool) -> io::Result<()> {
        // (JSON Lines are of content output only: -c and -l print text.)
        Ok(())
    }

    fn next_root(&mut self, i: usize) -> io::Result<()> {
        jsonl::Printer::next_root(self, i)
    }

    fn totals(&mut self) -> &mut printer::Totals {
        &mut self.totals
    }

    fn searched_again(&mut self) {
        jsonl::Printer::searched_again(self)
    }

    fn broken(&mut self, path: &str) {
        jsonl::Printer::broken(self, path)
    }

    fn binary_notice(&mut self, n: &sandgrep::BinaryNotice) -> io::Result<()> {
        jsonl::Printer::binary_notice(self, n);
        Ok(())
    }
}

pub(crate) fn search(sandbox: &Sandbox, args: &SearchArgs, out: &mut impl Write) -> io::Result<Outcome> {
    if args.pcre2_version {
        return pcre2_version(out);
    }
    let sorted;
    let args = match args.type_list || args.json_page || super::stdin::searched(args) {
        false => match sorted_files(sandbox, args)? {
            Some(files) => {
                sorted = files;
                &sorted
            }
            None => args,
        },
        true => args,
    };
    // -q: nothing printed but --stats.
    let mut nothing = io::sink();
    let mut shown: &mut dyn Write = if args.quiet { &mut nothing } else { &mut *out };
    if args.type_list {
        return type_list(args, out);
    }
    if args.files {
        return files(sandbox, args, &mut shown);
    }
    // As rg: a per-file limit of none searches nothing, whatever the output.
    if args.max_count == Some(0) {
        return Ok(Outcome::Nothing);
    }
    let counting = args.count || args.count_matches;
    // As rg: no patterns (an empty -f file) find nothing but with -v.
    if !args.json_page && args.regexp.is_empty() && !args.pattern_files.is_empty() && !args.invert_match {
        return Ok(Outcome::Nothing);
    }
    let unmatched = args.files_without_match && !counting || args.include_zero && counting;
    if !args.json_page && unmatched {
        return with_unmatched(sandbox, args, &mut shown);
    }
    let mut request = args.request();
    if args.json_page {
        let response = sandbox.search_text(&request).map_err(io::Error::other)?;
        json_line(&mut shown, &response)?;
        // (--passthru's lines of context, column 0, are found by no match.)
        let found = response.matches.iter().any(|m| m.column != 0) || !response.files.is_empty();
        return Ok(Outcome::of(found, response.timed_out));
    }
    // As rg: --json prints rg's JSON Lines, but for -c, -l and
    // --files-without-match, which print their text.
    let json = args.json && !(counting || args.files_with_matches || args.files_without_match);
    let started = std::time::Instant::now();
    request.streaming = true;
    // Lines longer than --max-columns are left out, as rg does (see
    // `printer::Style`), so they come whole.
    request.max_columns = None;
    let mut run = Run { left: args.max_results.unwrap_or(u64::MAX), ..Run::default() };
    if json {
        // (rg's JSON shows the lines as they are, and each match's
        // replacement beside it.)
        let replacement = request.replace.take();
        // (As rg's JSON printer: a file searched on past a NUL byte shows
        // every result there, its `end` where the NUL was.)
        request.binary_results = true;
        let mut printer = jsonl::Printer::new(&mut *out, args.quiet, &args.given, &args.paths, replacement);
        printer.null_data = args.null_data;
        printer.line_numbers = !args.no_line_number;
        let (timed_out, ending) = stream_paths(sandbox, &mut request, args, &mut printer, &mut run)?;
        let searching = std::time::Duration::from_millis(run.searching);
        let totals = printer.finish(searching, started.elapsed())?;
        return ended(args, &request, run, totals, timed_out, ending);
    }
    let mut printer = printer::Printer::new(shown, style(args), printer::Names::new(&args.given, &args.paths));
    // (-q prints nothing: rg's quiet printer counts every match, past a NUL too.)
    request.binary_results |= args.quiet;
    printer.counting = args.quiet;
    if args.quiet && !args.stats {
        // The first file with a match answers.
        request.output = Some(OutputMode::FilesWithMatches);
        run.left = run.left.min(1);
    }
    let (timed_out, ending) = stream_paths(sandbox, &mut request, args, &mut printer, &mut run)?;
    let (mut totals, printed) = printer.finish()?;
    if args.stats {
        if request.output != Some(OutputMode::Content) {
            totals = counted(sandbox, args, &mut request, &mut run.searching)?;
            totals.add_counts(&run.stdin);
        }
        let printed = if args.quiet { 0 } else { printed };
        printer::stats(out, &totals, printed, run.searching as f64 / 1000.0, started.elapsed().as_secs_f64())?;
    }
    ended(args, &request, run, totals, timed_out, ending)
}

/// What a search that printed its results says at its end (on stderr),
/// and how it ended.
fn ended(
    args: &SearchArgs,
    request: &SearchTextRequest,
    mut run: Run,
    totals: printer::Totals,
    timed_out: bool,
    ending: Option<String>,
) -> io::Result<Outcome> {
    let found = run.found;
    if args.no_messages {
        run.warnings.clear();
    } else {
        run.withheld.say();
    }
    // (-q asked for one match: that others follow is no news.)
    notes(&run.warnings, ending.filter(|_| !args.quiet || timed_out));
    if run.errored && !(args.quiet && found) {
        return Ok(Outcome::Partial);
    }
    if args.paths.is_empty() && totals.files_searched + totals.files_left == 0 && !timed_out {
        // As rg 15.2: a search of the current directory that no file reached
        // (past the filters) is an error.
        return Ok(nothing_searched(args));
    }
    if !found && !timed_out && args.fixed_strings && render::looks_like_regex(&request.query) {
        eprintln!(
            "sandgrep: no match for the literal text; it reads as a regular expression: drop -F to search it as one"
        );
    }
    Ok(Outcome::of(found, timed_out))
}

/// rg's error when a search of the current directory reached no file,
/// said unless --no-messages.
fn nothing_searched(args: &SearchArgs) -> Outcome {
    if !args.no_messages {
        eprintln!(
            "sandgrep: No files were searched, which means sandgrep probably applied a filter you didn't expect: \
             the paths, globs, types, depth or ignore rules left out every file."
        );
    }
    Outcome::Partial
}

/// What `--stats` says of a search whatever it prints: rg counts matches
/// and matched lines, so they are counted from the lines, in a second
/// search printing nothing.
pub(crate) fn counted(
    sandbox: &Sandbox,
    args: &SearchArgs,
    request: &mut SearchTextRequest,
    searching: &mut u64,
) -> io::Result<printer::Totals> {
    let mut counter = printer::Printer::new(io::sink(), style(args), printer::Names::new(&args.given, &args.paths));
    counter.counting = true;
    (request.output, request.count_matches, request.streaming) = (Some(OutputMode::Content), false, true);
    // (rg's counting printers go on past a NUL byte: every match counts.)
    request.binary_results = true;
    let mut run = Run { left: u64::MAX, searching: *searching, ..Run::default() };
    stream_paths(sandbox, request, args, &mut counter, &mut run)?;
    *searching = run.searching;
    Ok(counter.finish()?.0)
}

/// What a command's search has come to over its pages.
#[derive(Default)]
pub(crate) struct Run {
    /// Results still to print.
    pub(crate) left: u64,
    pub(crate) warnings: Vec<String>,
    pub(crate) found: bool,
    /// The component's own time, in ms.
    pub(crate) searching: u64,
    /// A path named could not be searched (said on stderr; the others were).
    pub(crate) errored: bool,
    pub(crate) withheld: Withheld,
    /// `--stats`' figures of standard input, counted as it was read (see
    /// `stdin::counted`): a second search cannot read it again.
    pub(crate) stdin: printer::Totals,
}

/// What a search or listing withheld, said once on stderr at its end (its
/// stdout stays rg's): the entries the denylist keeps out, which no flag
/// includes, and the lines shown with secrets redacted, by rule.
#[derive(Default)]
pub(crate) struct Withheld {
    denied: u64,
    redacted: u64,
    by_rule: std::collections::BTreeMap<String, u64>,
}

impl Withheld {
    pub(crate) fn add(&mut self, stats: &sandgrep::SearchStats) {
        self.denied += stats.skipped.denied;
        self.redacted += stats.lines_redacted;
        for r in &stats.redacted_by {
            *self.by_rule.entry(r.rule.clone()).or_default() += r.lines;
        }
    }

    pub(crate) fn say(&self) {
        if self.denied > 0 {
            eprintln!("sandgrep: {} entries withheld by the secrets denylist (no flag includes them)", self.denied);
        }
        if self.redacted > 0 {
            let rules: Vec<String> = self.by_rule.iter().map(|(rule, n)| format!("{rule} {n}")).collect();
            eprintln!("sandgrep: {} lines shown with secrets [REDACTED] ({})", self.redacted, rules.join(", "));
        }
    }
}

/// The guest's notes, for an answer that found nothing, of what the rules
/// left out: rg says nothing of them, and the CLI says the denied count
/// itself ([`Withheld`]).
pub(crate) fn left_out(warning: &str) -> bool {
    warning.contains("withheld by the secrets denylist")
        || warning.contains("entries left out by .gitignore")
        || warning.contains("hidden entries left out")
}

/// Prints the stream of each path named in turn, as rg searches them (a
/// cursor or skip belongs to the stream of all of them); whether time cut
/// it, and what to say at its end.
pub(crate) fn stream_paths(
    sandbox: &Sandbox,
    request: &mut SearchTextRequest,
    args: &SearchArgs,
    printer: &mut impl Results,
    run: &mut Run,
) -> io::Result<(bool, Option<String>)> {
    let each: Vec<Vec<String>> = if args.paths.len() > 1 && args.cursor.is_none() && args.skip.is_none() {
        args.paths.iter().map(|p| vec![p.clone()]).collect()
    } else {
        vec![args.paths.clone()]
    };
    let (mut timed_out, mut ending) = (false, None);
    let one_by_one = each.len() > 1;
    // (A sorted search names the files its walk found: searched as found.)
    let as_rg = matches!(request.binary, Some(BinaryMode::AsRg | BinaryMode::AsRgWalked));
    for (i, paths) in each.into_iter().enumerate() {
        if run.left == 0 || timed_out {
            break;
        }
        if one_by_one {
            printer.next_root(i)?;
        }
        if as_rg {
            let first = if one_by_one { i } else { 0 };
            let walked = !paths.is_empty() && (first..first + paths.len()).all(|k| args.walked.get(k) == Some(&true));
            request.binary = Some(if walked { BinaryMode::AsRgWalked } else { BinaryMode::AsRg });
        }
        request.paths = paths;
        request.cursor = args.cursor.clone();
        request.skip = sat(args.skip);
        let streamed = match request.paths.as_slice() {
            [p] if p == super::stdin::NAME => super::stdin::stream(sandbox, request, args, printer, run),
            _ => stream(sandbox, request, args, printer, run),
        };
        let (cut, cursor, stats) = match streamed {
            // (A path alone too: rg still prints its --stats and summary.)
            Err(e) if unsearchable(args, &e) => {
                run.errored = true;
                continue;
            }
            r => r?,
        };
        timed_out = cut;
        ending = render::search_ending(cut, cursor.as_deref(), &stats, go_on);
    }
    Ok((timed_out, ending))
}

/// Prints every page of `request`'s stream (up to `run.left` results), and
/// says how it ended: cut by time, the cursor past the last result printed.
pub(crate) fn stream(
    sandbox: &Sandbox,
    request: &mut SearchTextRequest,
    args: &SearchArgs,
    printer: &mut impl Results,
    run: &mut Run,
) -> io::Result<(bool, Option<String>, sandgrep::SearchStats)> {
    // Pages through the whole stream (each page bounded); a page cut by
    // the component's time limit goes on unless --timeout asked for one.
    // Instances side by side pass every match they find on to the one that
    // merges their parts: where matches outnumber the files searched, that
    // costs more than the search they share, and the next pages (the same
    // whatever the instances) are one instance's.
    let single = sandbox.clone().with_jobs(1);
    let mut dense = false;
    // A first page of the default size comes soon (a reader may want one
    // line: `| head -1`); the next are as large as pages go, the second
    // one less the first (the two end where one such page would).
    let size = |n: usize| match n {
        0 => MAX_RESULTS.default,
        1 => MAX_RESULTS.max - MAX_RESULTS.default,
        _ => MAX_RESULTS.max,
    };
    let mut pages = 0;
    request.max_results = Some(run.left.min(size(pages)) as u32);
    loop {
        let who = if dense { &single } else { sandbox };
        let mut ended = None;
        let mut show = |r: SearchTextResponse, request: &mut SearchTextRequest| {
            pages += 1;
            match page(r, request, args, printer, run, &mut dense) {
                Ok(None) => {
                    request.max_results = Some(run.left.min(size(pages)) as u32);
                    !dense
                }
                end => {
                    ended = Some(end);
                    false
                }
            }
        };
        who.search_text_stream(request, &mut show).map_err(by_path)?;
        match ended {
            Some(Ok(Some(end))) => return Ok(end),
            Some(Err(e)) => return Err(e),
            _ => {}
        }
    }
}

/// Prints one page of `stream`'s: how the stream ends, or `None` with
/// `request` readied for the next page.
fn page(
    r: SearchTextResponse,
    request: &mut SearchTextRequest,
    args: &SearchArgs,
    printer: &mut impl Results,
    run: &mut Run,
    dense: &mut bool,
) -> io::Result<Option<(bool, Option<String>, sandgrep::SearchStats)>> {
    *dense |= r.stats.matches_returned > r.stats.files_scanned;
    // Files with results whose compressed stream broke off: errors,
    // counted in no stats (as rg's; the page where one is done counts
    // none of it, and takes back what the last page counted).
    let mut broken: Vec<&str> = r.matches.iter().map(|m| m.path.as_str()).filter(|p| broke(&r, p)).collect();
    broken.dedup();
    broken.iter().for_each(|p| printer.broken(p));
    // A page that goes on in the file the last one ended in searched it again.
    let again = request.cursor.is_some() && r.matches.first().is_some_and(|m| m.path == printer.totals().last_path);
    if again {
        printer.searched_again();
    }
    // (How the run ends if the reader goes away while it is printed.)
    super::stdin::printed(&r, &request.paths);
    // A file's binary notice follows its last match (files in path order).
    let mut notices = r.binary_notices.iter().peekable();
    for m in &r.matches {
        while let Some(n) =
            notices.next_if(|n| n.path != m.path && std::path::Path::new(&n.path) < std::path::Path::new(&m.path))
        {
            printer.binary_notice(n)?;
        }
        printer.text_match(m)?;
    }
    for n in notices {
        printer.binary_notice(n)?;
    }
    for f in &r.files {
        printer.file_count(f, args.count || args.count_matches)?;
    }
    // (A page reaches a reader now, `| head` too.)
    printer.flush(false)?;
    // (--passthru's lines of context, column 0, are found by no match.)
    let matched = r.matches.iter().any(|m| m.column != 0);
    run.found |= matched || !r.files.is_empty() || r.binary_notices.iter().any(|n| !n.stopped);
    let t = printer.totals();
    t.files_searched += r.stats.files_scanned + r.stats.files_skipped_by_index;
    if again {
        t.files_searched -= 1;
    }
    t.last_path = r.matches.last().map(|m| m.path.clone()).unwrap_or_default();
    t.bytes_searched += r.stats.bytes_searched;
    t.files_left += r.stats.skipped.unreadable;
    if args.max_filesize.is_none_or(|max| max > MAX_FILESIZE.max) {
        // (sandgrep's own cap: rg would have read them.)
        t.files_left += r.stats.skipped.too_large;
    }
    run.withheld.add(&r.stats);
    run.searching += r.stats.elapsed_ms;
    run.left = run.left.saturating_sub(r.stats.matches_returned);
    let cut_by_time = r.timed_out && args.timeout_ms.is_some();
    let goes_on = r.next_cursor.is_some() && run.left > 0 && !cut_by_time;
    // As rg: an entry that could not be read (a directory, a file, a
    // link -L cannot follow, a compressed file whose stream broke, a
    // PCRE2 match past its limits) is an error, exit 2, said after what
    // was found. (An ignore file that cannot be read is not: rg only
    // says so.)
    run.errored |= r.stats.skipped.unreadable > 0;
    for w in r.warnings {
        // rg says nothing of the binary files it skips in a directory,
        // nor of the files -m cut short; a page full of text is no news
        // when the next one follows.
        let as_rg = w.ends_with(" binary file(s) skipped")
            || left_out(&w)
            || w.contains("(max-matches-per-file)")
            || goes_on && w.starts_with("output reached ");
        if !as_rg {
            warn(&mut run.warnings, w);
        }
    }
    match r.next_cursor {
        Some(c) if goes_on => {
            request.cursor = Some(c);
            request.skip = None;
            Ok(None)
        }
        c => Ok(Some((r.timed_out, c, r.stats))),
    }
}

/// Adds `w` to what a run says at its end, once; a count of files too
/// large to search adds up over the pages, said once.
fn warn(warnings: &mut Vec<String>, w: String) {
    const TOO_LARGE: &str = " file(s) skipped as larger than max-filesize";
    let count =
        |w: &str| w.split_once(TOO_LARGE).and_then(|(n, rest)| Some((n.parse::<u64>().ok()?, rest.to_string())));
    if let Some((n, rest)) = count(&w) {
        for said in warnings.iter_mut() {
            if let Some((m, _)) = count(said).filter(|(_, r)| *r == rest) {
                *said = format!("{}{TOO_LARGE}{rest}", n + m);
                return;
            }
        }
    }
    if !warnings.contains(&w) {
        warnings.push(w);
    }
}

/// Whether the page `r` says the compressed stream of the file at `path`
/// broke off (the component's warning names each such file, as `PATH:
/// FORMAT decompression failed: …`).
fn broke(r: &SearchTextResponse, path: &str) -> bool {
    let named = |w: &str, sep: &str| {
        w.split(&format!("{sep}{path}: "))
            .skip(1)
            .any(|rest| rest.split_once(' ').is_some_and(|(_, after)| after.starts_with("decompression failed: ")))
    };
    r.warnings
        .iter()
        .filter(|w| w.contains(" compressed file(s) could not be decompressed: "))
        .any(|w| named(w, "decompressed: ") || named(w, "; "))
}

/// rg's look for this output: a terminal gets headings, line numbers and
/// colors unless told otherwise; a pipe `path:text`.
pub(crate) fn style(args: &SearchArgs) -> printer::Style {
    use std::io::IsTerminal;
    let tty = io::stdout().is_terminal();
    // --vimgrep: every match with its line and column, under its path, no
    // headings (colors as ever, rg 15). -p was read as the flags it stands
    // for (`SearchArgs::pretty_where_given`). Colors on a terminal as
    // rg's (termcolor's): not for TERM unset or `dumb`, nor with NO_COLOR.
    let vim = args.vimgrep;
    let color = match args.color.as_str() {
        "always" | "ansi" => true,
        "never" => false,
        _ => tty && std::env::var_os("TERM").is_some_and(|t| t != "dumb") && std::env::var_os("NO_COLOR").is_none(),
    };
    let (before, after) = args.contexts();
    printer::Style {
        color,
        heading: !vim && if args.heading || args.no_heading { args.heading } else { tty },
        line_numbers: !args.no_line_number && (vim || args.line_number || args.column || tty),
        column: !args.no_column && (args.column || vim),
        only_matching: args.only_matching,
        crlf: args.crlf,
        context: before > 0 || after > 0,
        with_filename: if vim {
            Some(!args.no_filename)
        } else if args.with_filename || args.no_filename {
            Some(args.with_filename)
        } else {
            None
        },
        // (-v: rg's standard printer counts no match in a line it shows;
        // its summaries — -c, -l, --files-without-match, -q — count each
        // line as one, rg 15.)
        invert: args.invert_match
            && !(args.quiet || args.count || args.count_matches || args.files_with_matches || args.files_without_match),
        vimgrep: vim,
        trim: args.trim,
        null: args.null,
        // (rg counts a long line's matches where it finds each anyway.)
        max_columns: args
            .max_columns
            .filter(|&n| n > 0)
            .map(|n| (n, color || args.column || vim || args.stats || args.replace.is_some())),
        max_columns_preview: args.max_columns_preview,
        // (Checked in `SearchArgs::settle`.)
        colors: printer::Colors::parse(&args.colors).unwrap_or_default(),
        context_separator: (!args.no_context_separator).then(|| unescape(&args.context_separator)),
        match_field: unescape(&args.field_match_separator),
        context_field: unescape(&args.field_context_separator),
        path_separator: args.path_separator.as_deref().map(unescape),
        replaced: args.replace.is_some(),
        across_lines: args.searches_across_lines(),
        byte_offset: args.byte_offset,
        null_data: args.null_data,
    }
}

/// `--files-without-match`, and `-c --include-zero`: the files a search
/// reads, each with what the search found in it. They are the files a
/// listing with the search's filters names that are empty or that a search
/// of every line finds (it leaves out binary files and those past the size
/// limit).
pub(crate) fn with_unmatched(sandbox: &Sandbox, args: &SearchArgs, out: &mut impl Write) -> io::Result<Outcome> {
    let started = std::time::Instant::now();
    // (--include-zero counts only with -c or --count-matches.)
    let zero = args.include_zero && (args.count || args.count_matches);
    let mut printer = printer::Printer::new(&mut *out, style(args), printer::Names::new(&args.given, &args.paths));
    let mut request = args.request();
    request.streaming = true;
    request.output = Some(if zero { OutputMode::Count } else { OutputMode::FilesWithMatches });
    let mut every_line = args.request();
    (every_line.query, every_line.mode, every_line.invert_match) = (String::new(), Some(QueryMode::Regex), false);
    (every_line.word, every_line.multiline) = (false, false);
    every_line.output = Some(OutputMode::FilesWithMatches);
    let roots = if args.paths.is_empty() { vec![".".to_string()] } else { args.paths.clone() };
    let (mut found, mut printed) = (false, false);
    let (mut errored, mut listed, mut unnamed) = (false, false, false);
    // Files past sandgrep's own size cap (rg reads them; the search cannot).
    let cap = MAX_FILESIZE.applied(request.max_filesize);
    let mut over_cap = 0;
    let mut stdin = Run { left: u64::MAX, ..Run::default() };
    for (i, root) in roots.iter().enumerate() {
        printer.next_root(i)?;
        if root == super::stdin::NAME {
            // (Read as it comes: it says itself whether it matched.)
            stdin.found = false;
            super::stdin::stream(sandbox, &mut args.request(), args, &mut printer, &mut stdin)?;
            (found, printed, listed) = (found || stdin.found, printed || stdin.found, true);
            continue;
        }
        // The files searched as text: as rg reads a file without a match to
        // its end, one the walk found is binary with a NUL anywhere (not
        // only before its first line); one named is searched on.
        let counted = file_counts(sandbox, &mut request, root).and_then(|counts| {
            let named = file_counts(sandbox, &mut every_line, root)?;
            // (With --binary or -a, every file is searched whole.)
            if matches!(request.binary, Some(sandgrep::BinaryMode::Search | sandgrep::BinaryMode::Text)) {
                return Ok((counts, named.clone(), named));
            }
            every_line.binary = Some(sandgrep::BinaryMode::Skip);
            let whole = file_counts(sandbox, &mut every_line, root);
            every_line.binary = request.binary;
            Ok((counts, named, whole?))
        });
        let (counts, named, text) = match counted {
            Err(e) if unsearchable(args, &e) => {
                errored = true;
                continue;
            }
            r => r?,
        };
        found |= !counts.is_empty();
        let mut list = listing(args, root);
        list.include_metadata = true;
        let root_file = as_listed(root);
        let mut boms = None;
        loop {
            let response = sandbox.list_files(&list).map_err(by_path)?;
            let searched = |e: &sandgrep::FileEntry| {
                e.size == Some(0)
                    || text.contains_key(&e.path)
                    || std::path::Path::new(&e.path) == root_file
                        && args.walked.get(i) != Some(&true)
                        && named.contains_key(&e.path)
            };
            for e in response.entries {
                // rg's walk passes over a file past --max-filesize: not read.
                // One past sandgrep's own cap rg reads; the search skipped it
                // (and said so).
                let size = e.size.unwrap_or(0);
                if request.max_filesize.is_some_and(|max| size > max) {
                    continue;
                }
                listed = true;
                if size > cap {
                    over_cap += 1;
                    continue;
                }
                let count = counts.get(&e.path).copied();
                // (A file of 2 or 3 bytes no search of every line found may be
                // only a byte order mark: the tree's such files, read once.)
                let mut bom = || {
                    matches!(e.size, Some(2..=BOMS))
                        && boms.get_or_insert_with(|| only_boms(sandbox, &every_line, root)).contains_key(&e.path)
                };
                if !(searched(&e) || bom()) {
                    // Binary: read up to its NUL without a match, never named.
                    unnamed |= count.is_none();
                    continue;
                }
                if zero || count.is_none() {
                    printer.file_count(&FileCount { path: e.path, count: count.unwrap_or(0) }, zero)?;
                    printed = true;
                }
            }
            match response.next_cursor {
                Some(c) => list.cursor = Some(c),
                None => break,
            }
        }
    }
    printer.finish()?;
    if over_cap > 0 && !args.no_messages {
        notes(&[format!("{over_cap} file(s) skipped as larger than max-filesize ({cap} bytes)")], None);
    }
    if args.stats {
        let mut searching = 0;
        let mut totals = counted(sandbox, args, &mut args.request(), &mut searching)?;
        totals.add_counts(&stdin.stdin);
        searching += stdin.searching;
        printer::stats(out, &totals, 0, searching as f64 / 1000.0, started.elapsed().as_secs_f64())?;
    }
    if errored {
        return Ok(Outcome::Partial);
    }
    if args.paths.is_empty() && !listed {
        return Ok(nothing_searched(args));
    }
    // (As rg: exit 0 when a file without a match was read (printed, or
    // binary), or with --include-zero when anything matched.)
    Ok(Outcome::of(if zero { found } else { printed || unnamed }, false))
}

/// The longest byte order mark (UTF-8's).
const BOMS: u64 = 3;

/// The files of 2 or 3 bytes under `root` that are text without decoding
/// (`-E none`): those no search of every line found are only a byte order
/// mark, which decodes to nothing, as an empty file does (rg reads them).
fn only_boms(sandbox: &Sandbox, every_line: &SearchTextRequest, root: &str) -> HashMap<String, u64> {
    let mut raw = SearchTextRequest {
        encoding: Some("none".into()),
        binary: Some(sandgrep::BinaryMode::Skip),
        max_filesize: Some(every_line.max_filesize.map_or(BOMS, |m| m.min(BOMS))),
        ..every_line.clone()
    };
    file_counts(sandbox, &mut raw, root).unwrap_or_default()
}

/// Each file `request` finds under `root`, with its count.
pub(crate) fn file_counts(
    sandbox: &Sandbox,
    request: &mut SearchTextRequest,
    root: &str,
) -> io::Result<HashMap<String, u64>> {
    (request.paths, request.cursor) = (vec![root.to_string()], None);
    let mut counts = HashMap::new();
    loop {
        let r = sandbox.search_text(request).map_err(by_path)?;
        counts.extend(r.files.into_iter().map(|f| (f.path, f.count)));
        match r.next_cursor {
            Some(c) => request.cursor = Some(c),
            None => return Ok(counts),
        }
    }
}

/// `--type-list`: the types the component's walker knows, as rg lists them.
pub(crate) fn type_list(args: &SearchArgs, out: &mut impl Write) -> io::Result<Outcome> {
    for def in args.type_table()?.definitions() {
        writeln!(out, "{}: {}", def.name(), def.globs().join(", "))?;
    }
    Ok(Outcome::Found)
}

/// `--pcre2-version`: the PCRE2 the component compiles in, as rg says it
/// (rg's JIT clause: the component's PCRE2 has none).
pub(crate) fn pcre2_version(out: &mut impl Write) -> io::Result<Outcome> {
    let (major, minor) = sandgrep_contract::PCRE2_VERSION;
    writeln!(out, "PCRE2 {major}.{minor} is available (JIT is unavailable)")?;
    Ok(Outcome::Found)
}

/// `--files`: every file a search would look at, as `rg --files`.
pub(crate) fn files(sandbox: &Sandbox, args: &SearchArgs, out: &mut impl Write) -> io::Result<Outcome> {
    let roots = if args.paths.is_empty() { vec![".".to_string()] } else { args.paths.clone() };
    let mut printer = printer::Printer::new(out, style(args), printer::Names::new(&args.given, &args.paths));
    let (mut found, mut errored) = (false, false);
    let mut withheld = Withheld::default();
    for (i, root) in roots.iter().enumerate() {
        printer.next_root(i)?;
        let mut r = listing(args, root);
        loop {
            let response = match sandbox.list_files(&r).map_err(by_path) {
                Ok(response) => response,
                Err(e) if unsearchable(args, &e) => {
                    errored = true;
                    break;
                }
                Err(e) => return Err(e),
            };
            for e in response.entries {
                printer.file_count(&FileCount { path: e.path, count: 0 }, false)?;
                found = true;
            }
            // The files the denylist withholds are said once, at the end;
            // as rg's --files, nothing of what the ignore rules leave out.
            withheld.denied += response.skipped.denied;
            errored |= response.skipped.unreadable > 0;
            let warnings: Vec<String> =
                response.warnings.into_iter().filter(|w| !args.no_messages && !left_out(w)).collect();
            notes(&warnings, None);
            match response.next_cursor {
                Some(c) => r.cursor = Some(c),
                None => break,
            }
        }
    }
    printer.finish()?;
    if !args.no_messages {
        withheld.say();
    }
    Ok(if errored { Outcome::Partial } else { Outcome::of(found, false) })
}

/// rg's --sortr and --sort modified|accessed: rg orders the files it
/// searches, so these are listed first (with their times, in nanoseconds),
/// ordered — stable, so files of the same second stay in path order — and
/// searched as paths named, each under the name rg shows it by. `None`:
/// the walk's order is rg's (path), or nothing was listed.
fn sorted_files(sandbox: &Sandbox, args: &SearchArgs) -> io::Result<Option<SearchArgs>> {
    let Some((kind, reverse)) = args.sorting() else { return Ok(None) };
    if kind == "path" && !reverse {
        return Ok(None);
    }
    let roots = if args.paths.is_empty() { vec![".".to_string()] } else { args.paths.clone() };
    // (path, shown as, time in nanoseconds, found by the walk of a directory)
    let mut files: Vec<(String, String, Option<u64>, bool)> = Vec::new();
    for (i, root) in roots.iter().enumerate() {
        let names = match args.given.get(i) {
            Some(given) => printer::Names::new(std::slice::from_ref(given), std::slice::from_ref(root)),
            None => printer::Names::new(&[], &[]),
        };
        let mut r = listing(args, root);
        r.include_metadata = kind != "path";
        loop {
            // (A path that cannot be listed is searched as named: the
            // search says why, as rg, and it sorts last.)
            let Ok(response) = sandbox.list_files(&r) else {
                files.push((root.clone(), args.given.get(i).unwrap_or(root).clone(), None, false));
                break;
            };
            for e in response.entries.into_iter().filter(|e| !e.is_dir) {
                let time = if kind == "accessed" { e.accessed_ns } else { e.modified_ns };
                let walked = std::path::Path::new(&e.path) != as_listed(root);
                files.push((e.path.clone(), names.show(&e.path), time, walked));
            }
            match response.next_cursor {
                Some(c) => r.cursor = Some(c),
                None => break,
            }
        }
    }
    if files.is_empty() {
        return Ok(None);
    }
    if kind == "path" {
        files.sort_by(|a, b| std::path::Path::new(&b.1).cmp(std::path::Path::new(&a.1)));
    } else {
        // As rg: a file without a time after those with one.
        files.sort_by(|a, b| {
            let order = match (a.2, b.2) {
                (Some(x), Some(y)) => x.cmp(&y),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            };
            if reverse {
                order.reverse()
            } else {
                order
            }
        });
    }
    let named: Vec<std::path::PathBuf> = roots.iter().map(|r| as_listed(r)).collect();
    let one_file_named =
        matches!((named.as_slice(), files.as_slice()), ([p], [(f, ..)]) if p == std::path::Path::new(f));
    let mut sorted = args.clone();
    if !one_file_named && !args.with_filename && !args.no_filename {
        sorted.with_filename = true;
    }
    // (A file the walk found stops at its NUL byte, as rg's; one named
    // is searched on.)
    sorted.walked = files.iter().map(|f| f.3).collect();
    (sorted.paths, sorted.given) = files.into_iter().map(|(path, shown, ..)| (path, shown)).unzip();
    Ok(Some(sorted))
}

/// A path as given, as the listing names it when it is a file (`./a` as `a`).
fn as_listed(path: &str) -> std::path::PathBuf {
    std::path::Path::new(path).components().filter(|c| !matches!(c, std::path::Component::CurDir)).collect()
}

/// The listing of what a search of `root` reads: its filters, all entries a page.
pub(crate) fn listing(args: &SearchArgs, root: &str) -> ListFilesRequest {
    let mut r = ListFilesRequest::new(root);
    r.include_globs = args.globs.clone();
    r.hidden = args.hidden;
    (r.no_ignore, r.ignore) = args.ignore_request();
    r.follow_symlinks = args.follow;
    r.types = args.all_types();
    r.type_changes = args.type_changes.clone();
    r.max_depth = args.max_depth;
    // (As rg's --files: larger files are not listed.)
    r.max_filesize = args.max_filesize;
    r.max_results = Some(LIST_RESULTS.max as u32);
    // Every page is printed and no total: no walk past each page's end.
    r.no_total = true;
    r
}

/// Whether `e` is of a path that cannot be searched (see [`by_path`]); if
/// so it is said (unless --no-messages), and, as in rg, the other paths
/// are searched.
pub(crate) fn unsearchable(args: &SearchArgs, e: &io::Error) -> bool {
    let path = e.kind() == io::ErrorKind::NotFound;
    if path && !args.no_messages {
        eprintln!("sandgrep: {}", render::path(&e.to_string()));
    }
    path
}

/// A call's error as io's: `NotFound` for a path that cannot be searched
/// (missing, outside the workspace, denied, unreadable: a link leading out,
/// a loop, a FIFO put there), which spares the other paths, as rg goes on
/// past a path it cannot read. (A sorted search names every file it
/// listed: one swapped meanwhile for a link out must not end the rest.)
pub(crate) fn by_path(e: sandgrep::Error) -> io::Error {
    match e {
        sandgrep::Error::Search(
            SearchError::NotFound(_) | SearchError::OutsideWorkspace(_) | SearchError::Denied(_) | SearchError::Io(_),
        ) => io::Error::new(io::ErrorKind::NotFound, e),
        e => io::Error::other(e),
    }
}
