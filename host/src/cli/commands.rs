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
/// terminal: entries looked at and files opened so far, and the time.
pub(crate) fn with_progress_line<T>(refresh: impl FnOnce(Option<Arc<Progress>>) -> T) -> T {
    use std::io::IsTerminal;
    if !io::stderr().is_terminal() {
        return refresh(None);
    }
    let progress = Arc::new(Progress::default());
    let bar = indicatif::ProgressBar::new_spinner().with_style(
        indicatif::ProgressStyle::with_template("{spinner} indexing: {msg} [{elapsed}]")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    let (done, ticker) = std::sync::mpsc::channel::<()>();
    let shown = (progress.clone(), bar.clone());
    let ticking = std::thread::spawn(move || loop {
        let (p, bar) = &shown;
        let count = |n: &std::sync::atomic::AtomicU64| n.load(std::sync::atomic::Ordering::Relaxed);
        bar.set_message(format!("{} files looked at, {} opened", count(&p.looked), count(&p.opened)));
        bar.tick();
        if ticker.recv_timeout(std::time::Duration::from_millis(100)).is_ok() {
            return;
        }
    });
    let result = refresh(Some(progress));
    let _ = done.send(());
    let _ = ticking.join();
    bar.finish_and_clear();
    result
}

pub(crate) fn index(sandbox: &Sandbox, json: bool, out: &mut impl Write) -> io::Result<Outcome> {
    let r = with_progress_line(|progress| sandbox.refresh_index_counted(progress)).map_err(io::Error::other)?;
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
        return Ok(Outcome::Found);
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
    Ok(Outcome::Found)
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
