//! `ls`, `read`, `ast` and `index`.

use std::io::{self, Write};
use std::sync::Arc;

use sandgrep::limits::{LIST_RESULTS, MAX_RESULTS};
use sandgrep::{cache, render, ListFilesRequest, Progress, RangeType, ReadFileRequest, Sandbox, SearchAstRequest};

use super::args::split_globs;
use super::ast_print;
use super::flags::{sat, AstArgs, LsArgs, ReadArgs};
use super::{go_on, json_line, notes, Outcome};

/// Runs `refresh` with a progress line on standard error when that is a
/// terminal: files read of those to read, bytes, rate, time left.
fn with_progress_line<T>(progress: &Arc<Progress>, refresh: impl FnOnce() -> T) -> T {
    use std::io::IsTerminal;
    if !io::stderr().is_terminal() {
        return refresh();
    }
    let bar = indicatif::ProgressBar::new_spinner().with_style(
        indicatif::ProgressStyle::with_template("{spinner} indexing: {msg} [{elapsed}]")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    let (done, ticker) = std::sync::mpsc::channel::<()>();
    let shown = (progress.clone(), bar.clone());
    let started = std::time::Instant::now();
    let ticking = std::thread::spawn(move || loop {
        let (p, bar) = &shown;
        bar.set_message(progress_message(p, started.elapsed()));
        bar.tick();
        if ticker.recv_timeout(std::time::Duration::from_millis(100)).is_ok() {
            return;
        }
    });
    let result = refresh();
    let _ = done.send(());
    let _ = ticking.join();
    bar.finish_and_clear();
    result
}

/// The first Ctrl-C (SIGINT) stops the refresh `progress` counts for: what
/// was read so far is written as an index the next refresh goes on from
/// (the walk's order; the merge that writes it is not stopped). A second
/// one ends the process at once.
fn stop_on_interrupt(progress: Arc<Progress>) {
    static STOP: std::sync::OnceLock<Arc<Progress>> = std::sync::OnceLock::new();
    extern "C" fn on_interrupt(_: libc::c_int) {
        // (Only atomics and _exit: async-signal-safe.)
        match STOP.get() {
            Some(p) if !p.stop.swap(true, std::sync::atomic::Ordering::Relaxed) => {}
            _ => unsafe { libc::_exit(130) },
        }
    }
    if STOP.set(progress).is_ok() {
        let handler: extern "C" fn(libc::c_int) = on_interrupt;
        // SAFETY: the handler only touches an atomic and calls _exit.
        unsafe { libc::signal(libc::SIGINT, handler as libc::sighandler_t) };
    }
}

/// The progress line's text: what the walk found to read and how much of it
/// is read; once the walk is over, the rate and the time left (the merge
/// after the last file is its own step).
fn progress_message(p: &Progress, elapsed: std::time::Duration) -> String {
    use std::sync::atomic::Ordering::Relaxed;
    let mib = |n: u64| n as f64 / (1 << 20) as f64;
    let (read, to_read) = (p.read.load(Relaxed), p.to_read.load(Relaxed));
    let (bytes, to_bytes) = (p.read_bytes.load(Relaxed), p.to_read_bytes.load(Relaxed));
    if !p.walked.load(Relaxed) {
        let looked = p.looked.load(Relaxed);
        return format!(
            "walking: {looked} entries looked at; {read} of {to_read} files so far read ({:.1} of {:.1} MiB)",
            mib(bytes),
            mib(to_bytes)
        );
    }
    if read >= to_read {
        return format!("{read} files read ({:.1} MiB); writing the index", mib(bytes));
    }
    let rate = bytes as f64 / elapsed.as_secs_f64().max(0.001);
    let left = if rate > 0.0 { format!("about {:.0} s left", (to_bytes - bytes) as f64 / rate) } else { String::new() };
    format!(
        "{read} of {to_read} files read ({:.1} of {:.1} MiB, {:.0}%), {:.1} MiB/s, {left}",
        mib(bytes),
        mib(to_bytes),
        100.0 * bytes as f64 / to_bytes.max(1) as f64,
        mib(rate as u64)
    )
}

pub(crate) fn index(sandbox: &Sandbox, json: bool, out: &mut impl Write) -> io::Result<Outcome> {
    let progress = Arc::new(Progress::default());
    stop_on_interrupt(progress.clone());
    let r = with_progress_line(&progress, || sandbox.refresh_index_counted(Some(progress.clone())));
    // (Ctrl-C ends the process again from here on.)
    // SAFETY: restoring the default action.
    unsafe { libc::signal(libc::SIGINT, libc::SIG_DFL) };
    let r = r.map_err(io::Error::other)?;
    // (Stopped by Ctrl-C: an index of what was read, exit status 2.)
    let done = if progress.stop.load(std::sync::atomic::Ordering::Relaxed) { Outcome::Partial } else { Outcome::Found };
    let dir = sandbox.index_path().map(|d| d.display().to_string()).unwrap_or_default();
    let pruned: Vec<String> = sandbox.prune_indexes().iter().map(|p| p.display().to_string()).collect();
    let evicted = sandbox.cap_cache().unwrap_or_else(|e| {
        eprintln!("sandgrep: {e}");
        Vec::new()
    });
    if json {
        let mut v = sandgrep::json::to_value(&r);
        v["index_dir"] = dir.into();
        v["pruned"] = pruned.into();
        v["evicted"] = evicted.iter().map(removal_json).collect::<Vec<_>>().into();
        serde_json::to_writer(&mut *out, &v)?;
        writeln!(out)?;
        return Ok(done);
    }
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    writeln!(
        out,
        "indexed {} files in {:.2} s: {} read ({:.1} MiB), {} removed; {} trigrams, index {:.1} MiB",
        r.files,
        r.elapsed_ms as f64 / 1000.0,
        r.files_read,
        mib(r.bytes_read),
        r.files_removed,
        r.trigrams,
        mib(r.index_bytes),
    )?;
    writeln!(out, "index: {dir}")?;
    for gone in &pruned {
        writeln!(out, "removed the index of {gone} (no longer there)")?;
    }
    for r in &evicted {
        writeln!(out, "{}", cache::evicted_line(r))?;
    }
    if let Some(why) = &r.rebuilt {
        writeln!(out, "({why})")?;
    }
    notes(&r.warnings, None);
    Ok(done)
}

fn secs(t: Option<std::time::SystemTime>) -> Option<i64> {
    Some(t?.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs() as i64)
}

fn removal_json(r: &cache::Removal) -> serde_json::Value {
    serde_json::json!({
        "dir": r.dir.display().to_string(),
        "workspace": r.workspace.as_ref().map(|w| w.display().to_string()),
        "reason": r.reason.name(),
        "bytes": r.bytes,
    })
}

/// Whose an index is, for people: its workspace, else its directory.
fn whose(workspace: &Option<std::path::PathBuf>, dir: &std::path::Path) -> String {
    match workspace {
        Some(w) => w.display().to_string(),
        None => format!("{} (workspace not recorded)", dir.display()),
    }
}

/// `sandgrep index --list`: every index in the cache, and their total.
pub(crate) fn index_list(json: bool, out: &mut impl Write) -> io::Result<()> {
    let root = cache::index_root();
    let all = cache::list();
    let total: u64 = all.iter().map(|i| i.bytes).sum();
    let cap = cache::cap().unwrap_or_else(|e| {
        eprintln!("sandgrep: {e}");
        None
    });
    if json {
        let indexes: Vec<serde_json::Value> = all
            .iter()
            .map(|i| {
                serde_json::json!({
                    "dir": i.dir.display().to_string(),
                    "workspace": i.workspace.as_ref().map(|w| w.display().to_string()),
                    "workspace_exists": i.workspace_exists,
                    "format": i.format.name(),
                    "version": match i.format { cache::Format::Old(v) => Some(v), _ => None },
                    "files": i.files,
                    "bytes": i.bytes,
                    "leftover_files": i.leftover_files,
                    "leftover_bytes": i.leftover_bytes,
                    "built": secs(i.built),
                    "used": secs(i.used),
                })
            })
            .collect();
        let v = serde_json::json!({
            "index_root": root.as_ref().map(|r| r.display().to_string()),
            "indexes": indexes,
            "total_bytes": total,
            "cap_bytes": cap,
        });
        serde_json::to_writer(&mut *out, &v)?;
        return writeln!(out);
    }
    let Some(root) = root else {
        return writeln!(out, "no indexes (no index directory in the cache)");
    };
    let rows: Vec<[String; 6]> = all
        .iter()
        .map(|i| {
            let format = match i.format {
                cache::Format::Old(v) => format!("old (v{v})"),
                f => f.name().to_string(),
            };
            let there = match i.workspace_exists {
                Some(true) => "yes",
                Some(false) => "gone",
                None => "?",
            };
            let mut size = cache::size(i.bytes);
            if i.leftover_files > 0 {
                size += &format!(" ({} left by a build)", cache::size(i.leftover_bytes));
            }
            let built = secs(i.built).map_or("-".into(), render::iso_time);
            let files = i.files.map_or("-".into(), |n| n.to_string());
            [whose(&i.workspace, &i.dir), there.into(), format, files, size, built]
        })
        .collect();
    if !rows.is_empty() {
        let head = ["WORKSPACE", "THERE", "FORMAT", "FILES", "SIZE", "BUILT"].map(String::from);
        let mut widths = [0; 6];
        for row in std::iter::once(&head).chain(&rows) {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        for row in std::iter::once(&head).chain(&rows) {
            let line: Vec<String> = row.iter().zip(widths).map(|(c, w)| format!("{c:<w$}")).collect();
            writeln!(out, "{}", line.join("  ").trim_end())?;
        }
    }
    let cap = cap.map_or("no cap".into(), |c| format!("cap {}", cache::size(c)));
    let n = all.len();
    writeln!(
        out,
        "{n} {}, {} in {} ({cap})",
        if n == 1 { "index" } else { "indexes" },
        cache::size(total),
        root.display()
    )?;
    if all.iter().any(|i| i.format != cache::Format::Current || i.workspace_exists == Some(false)) {
        writeln!(
            out,
            "(an old or damaged index is rebuilt at its workspace's next build; `sandgrep index --prune` removes old \
             ones and those of workspaces gone)"
        )?;
    }
    Ok(())
}

/// `sandgrep index --prune`: what it removed, what it had to keep, and the
/// space freed.
pub(crate) fn index_prune(json: bool, out: &mut impl Write) -> io::Result<()> {
    let all = cache::prune();
    let (removed, kept): (Vec<_>, Vec<_>) =
        all.iter().partition(|r| !matches!(r.reason, cache::Reason::Locked | cache::Reason::Foreign));
    let freed: u64 = removed.iter().map(|r| r.bytes).sum();
    if json {
        let v = serde_json::json!({
            "removed": removed.iter().map(|r| removal_json(r)).collect::<Vec<_>>(),
            "kept": kept.iter().map(|r| removal_json(r)).collect::<Vec<_>>(),
            "freed_bytes": freed,
        });
        serde_json::to_writer(&mut *out, &v)?;
        return writeln!(out);
    }
    for r in &removed {
        let who = whose(&r.workspace, &r.dir);
        let size = cache::size(r.bytes);
        match r.reason {
            cache::Reason::WorkspaceGone => writeln!(out, "removed the index of {who} (workspace gone): {size}")?,
            cache::Reason::OldFormat => writeln!(out, "removed the index of {who} (old format): {size}")?,
            _ => writeln!(out, "removed what an interrupted build left beside the index of {who}: {size}")?,
        }
    }
    for r in &kept {
        let who = whose(&r.workspace, &r.dir);
        match r.reason {
            cache::Reason::Locked => writeln!(out, "kept the index of {who}: another process holds it (a build)")?,
            _ => writeln!(out, "kept {}: it holds files sandgrep did not make", r.dir.display())?,
        }
    }
    if removed.is_empty() {
        writeln!(out, "nothing to prune")
    } else {
        writeln!(out, "freed {}", cache::size(freed))
    }
}

pub(crate) fn ls(sandbox: &Sandbox, args: &LsArgs, out: &mut impl Write) -> io::Result<Outcome> {
    let mut r = ListFilesRequest::new(args.path.clone());
    r.recursive = Some(!args.no_recursive);
    (r.include_globs, r.exclude_globs) = split_globs(&args.globs);
    r.include_dirs = args.dirs;
    r.include_metadata = args.metadata;
    r.hidden = args.hidden;
    r.no_ignore = args.no_ignore;
    r.follow_symlinks = args.follow;
    r.max_results = sat(args.max_results);
    r.skip = sat(args.skip);
    r.cursor = args.cursor.clone();
    use std::io::IsTerminal;
    let human = args.metadata && io::stdout().is_terminal();
    // One page: for JSON, or where the paging flags ask for one.
    let paged = args.max_results.is_some() || args.skip.is_some() || args.cursor.is_some();
    if args.json || args.json_page || paged {
        let response = sandbox.list_files(&r).map_err(io::Error::other)?;
        if args.json || args.json_page {
            json_line(out, &response)?;
        } else {
            if args.tree {
                render::tree(out, &args.path, &response, human)?;
            } else {
                render::list(out, &response, human)?;
            }
            notes(&response.warnings, render::listing_ending(&response, go_on));
        }
        return Ok(Outcome::of(!response.entries.is_empty(), response.timed_out));
    }
    // Every page, as text search streams: a list as it comes, a tree once
    // whole (a directory's last entry may come pages after its first).
    r.max_results = Some(LIST_RESULTS.max as u32);
    r.no_total = true;
    let (mut found, mut warnings, mut all) = (false, Vec::<String>::new(), Vec::new());
    let last = loop {
        let mut page = sandbox.list_files(&r).map_err(io::Error::other)?;
        found |= !page.entries.is_empty();
        for w in std::mem::take(&mut page.warnings) {
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
        if args.tree {
            all.append(&mut page.entries);
        } else {
            render::list(&mut *out, &page, human)?;
            out.flush()?;
        }
        match page.next_cursor.take() {
            Some(c) if r.cursor.as_deref() != Some(c.as_str()) => {
                r.cursor = Some(c);
                r.skip = None;
            }
            _ => break page,
        }
    };
    if args.tree {
        let whole = sandgrep::ListFilesResponse { entries: all, ..last };
        render::tree(out, &args.path, &whole, human)?;
    }
    notes(&warnings, None);
    Ok(Outcome::of(found, false))
}

pub(crate) fn read(sandbox: &Sandbox, args: &ReadArgs, out: &mut impl Write) -> io::Result<Outcome> {
    let mut r = ReadFileRequest::new(args.path.clone());
    if let Some((start, count)) = args.lines {
        r.range_type = Some(RangeType::Lines);
        r.start_line = Some(start);
        r.max_lines = count;
    }
    if let Some((offset, count)) = args.bytes {
        r.range_type = Some(RangeType::Bytes);
        r.offset_bytes = Some(offset);
        r.max_bytes = count;
    }
    let response = sandbox.read_file(&r).map_err(io::Error::other)?;
    if args.json || args.json_page {
        json_line(out, &response)?;
        return Ok(Outcome::Found);
    }
    render::read(out, &response)?;
    notes(&response.warnings, render::read_continuation(&response, "--lines ", "--bytes "));
    Ok(Outcome::Found)
}

pub(crate) fn ast(sandbox: &Sandbox, args: &AstArgs, out: &mut impl Write) -> io::Result<Outcome> {
    let mut r = SearchAstRequest::new(args.pattern.as_str());
    r.language = args.lang.clone();
    r.paths = args.paths.clone();
    (r.include_globs, r.exclude_globs) = split_globs(&args.globs);
    r.hidden = args.hidden;
    r.no_ignore = args.no_ignore;
    r.follow_symlinks = args.follow;
    r.max_results = sat(args.max_results);
    r.max_filesize = args.max_filesize;
    r.cursor = args.cursor.clone();
    r.skip = sat(args.skip);
    r.timeout_ms = sat(args.timeout_ms);
    if args.json_page {
        let response = sandbox.search_ast(&r).map_err(io::Error::other)?;
        json_line(out, &response)?;
        return Ok(Outcome::of(!response.matches.is_empty(), response.timed_out));
    }
    // Every page (one, where the paging flags ask for one), printed as
    // ast-grep prints matches.
    let paged = args.max_results.is_some() || args.skip.is_some() || args.cursor.is_some();
    if !paged {
        r.max_results = Some(MAX_RESULTS.max as u32);
    }
    enum Printer<'s, W: Write> {
        Text(ast_print::TextPrinter<'s, W>),
        Json(ast_print::JsonPrinter<'s, W>),
    }
    let mut printer = if args.json {
        Printer::Json(ast_print::JsonPrinter::new(&mut *out, sandbox, args.lang.clone(), &args.pattern))
    } else {
        use std::io::IsTerminal;
        let tty = io::stdout().is_terminal();
        Printer::Text(ast_print::TextPrinter::new(&mut *out, sandbox, tty, ast_print::colors()))
    };
    let (mut found, mut warnings) = (false, Vec::<String>::new());
    let (timed_out, ending) = loop {
        let page = sandbox.search_ast(&r).map_err(io::Error::other)?;
        found |= !page.matches.is_empty();
        for m in &page.matches {
            match &mut printer {
                Printer::Text(p) => p.print(m)?,
                Printer::Json(p) => p.print(m)?,
            }
        }
        match &mut printer {
            Printer::Text(p) => p.flush()?,
            Printer::Json(p) => p.flush()?,
        }
        let cut_by_time = page.timed_out && args.timeout_ms.is_some();
        let goes_on = !paged && !cut_by_time && page.next_cursor.is_some() && page.next_cursor != r.cursor;
        for w in page.warnings {
            if !(goes_on && w.starts_with("output reached ")) && !warnings.contains(&w) {
                warnings.push(w);
            }
        }
        if goes_on {
            r.cursor = page.next_cursor;
            r.skip = None;
            continue;
        }
        let ending = render::search_ending(page.timed_out, page.next_cursor.as_deref(), &page.stats, go_on);
        break (page.timed_out, ending);
    };
    if let Printer::Text(p) = printer {
        p.finish()?;
    }
    notes(&warnings, ending);
    Ok(Outcome::of(found, timed_out))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering::Relaxed;
    use std::time::Duration;

    use super::*;

    #[test]
    fn the_progress_line_tells_what_is_read_of_what_there_is_to_read() {
        let p = Progress::default();
        p.looked.store(120, Relaxed);
        (p.to_read.store(10, Relaxed), p.to_read_bytes.store(40 << 20, Relaxed));
        (p.read.store(4, Relaxed), p.read_bytes.store(10 << 20, Relaxed));
        let walking = progress_message(&p, Duration::from_secs(2));
        assert_eq!(walking, "walking: 120 entries looked at; 4 of 10 files so far read (10.0 of 40.0 MiB)");
        p.walked.store(true, Relaxed);
        let reading = progress_message(&p, Duration::from_secs(2));
        assert_eq!(reading, "4 of 10 files read (10.0 of 40.0 MiB, 25%), 5.0 MiB/s, about 6 s left");
        (p.read.store(10, Relaxed), p.read_bytes.store(40 << 20, Relaxed));
        assert_eq!(progress_message(&p, Duration::from_secs(8)), "10 files read (40.0 MiB); writing the index");
    }
}
