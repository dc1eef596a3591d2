//! `list-files`: the walk of `search-text` (ignore rules as `rg --files`,
//! globs, the denylist, the order of `rg --sort path`), one page of entries
//! at a time.

use std::cell::Cell;
use std::rc::Rc;

use crate::confine::path_cmp;
use crate::cursor::{self, Position};
use crate::page::{self, Paging};
use crate::request::{ListQuery, LIST_COUNT_BUDGET, TIMEOUT_MS};
use crate::session;
use crate::shape::{json_len, named_warning, RESULT_OVERHEAD};
use crate::walk::{self, Step, Walker};
use crate::{FileEntry, ListFilesRequest, ListFilesResponse, SearchError, Workspace};

pub fn list_files(ws: &Workspace, request: ListFilesRequest) -> Result<ListFilesResponse, SearchError> {
    let mut warnings = Vec::new();
    let q = ListQuery::from_request(request, &mut warnings)?;
    let stream_key = ws.stream_key(q.stream_key());
    let resume = page::resume_from(&stream_key, q.cursor.as_deref())?;
    // A listing has no timeout field: it stops at the default search timeout
    // and hands out a cursor, whatever the tree holds.
    let started = std::time::Instant::now();
    let deadline = started + std::time::Duration::from_millis(TIMEOUT_MS.default);
    let walker = Rc::new(Walker::new(ws, &q.walk)?.with_deadline(deadline));
    let roots = walker.roots(std::slice::from_ref(&q.root))?;
    let root = roots[0].rel.clone();
    // Entries are in path order (a directory right before its contents);
    // the cursor holds the last path handed out and how many entries
    // preceded it.
    let after = resume.as_ref().map(|r| r.path.clone());
    let mut ordinal = resume.as_ref().map_or(0, |r| r.taken);
    // The total an earlier page counted travels in the cursor (as its
    // `line`, unused by listings; 0 when not known): a page after it stops
    // at its end instead of walking the rest again, so that paging through
    // a listing walks it about twice, not once per page.
    let counted = resume.as_ref().map(|r| r.line).filter(|&n| n > 0);
    let mut paging = Paging::new(resume, q.skip, q.max_results);
    let mut entries = Vec::new();
    let mut has_more = false;
    let mut counted_past_page = 0u64;
    let mut too_large = 0u64;
    let mut complete = true;
    let (mut skips, mut timed_out) = (walk::Skips::default(), false);
    let mut unreadable = Vec::new();
    let mut problems = Vec::new();
    let mut walked: Option<String> = None;
    // A kept instance replays the whole walk it made at this generation (a
    // text search's too, with the same roots and options), or records this
    // one (a first page only: a cursor starts mid-walk).
    let key = session::listing_key(std::slice::from_ref(&q.root), &q.walk, ws.index_policy());
    let replay = session::Replay::new(key, after.is_none(), walk::Reopen::for_walk(ws, &q.walk, &roots));
    let seen = Rc::new(Cell::new(walk::Skips::default()));
    let steps = replay.steps(walk::steps(walker.clone(), roots, after.clone(), seen.clone()));
    let after = after.as_deref();
    for step in steps {
        let entry = match &*step {
            Step::Entry(entry) => entry,
            Step::Skipped(n) => {
                skips.add(*n);
                continue;
            }
            Step::TimedOut => {
                timed_out = true;
                continue;
            }
            Step::Problem(e) if e.unreadable => {
                unreadable.push(e.message.clone());
                continue;
            }
            Step::Problem(e) => {
                problems.push(e.message.clone());
                continue;
            }
        };
        walked = Some(entry.rel.clone());
        let listed =
            entry.is_file || (entry.is_dir && q.include_dirs && entry.rel != root && walker.dir_selected(&entry.path));
        if !listed {
            continue;
        }
        if after.is_some_and(|a| path_cmp(&entry.rel, a).is_le()) {
            continue;
        }
        // rg's --files --max-filesize: a larger file is left out, and counted.
        if let Some(max) = q.max_filesize.filter(|_| entry.is_file) {
            if entry.meta().is_some_and(|m| m.size > max) {
                too_large += 1;
                continue;
            }
        }
        if paging.full() {
            // The page is full: count on (within a budget) to learn the total.
            has_more = true;
            if counted.is_some() || q.no_total {
                break;
            }
            counted_past_page += 1;
            if counted_past_page > LIST_COUNT_BUDGET {
                complete = false;
                break;
            }
            continue;
        }
        // Saturating: a hand-edited cursor may carry any count.
        ordinal = ordinal.saturating_add(1);
        paging.reached(Position { path: entry.rel.clone(), line: 0, taken: ordinal });
        if paging.skipping() {
            continue;
        }
        let meta = if q.include_metadata { entry.meta() } else { None };
        let (size, modified) = (meta.as_ref().map(|m| m.size), meta.as_ref().and_then(|m| m.modified));
        let ns = |t: Option<u64>| t.filter(|&t| t > 0);
        let (modified_ns, accessed_ns) =
            (ns(meta.as_ref().map(|m| m.modified_ns)), ns(meta.as_ref().map(|m| m.accessed_ns)));
        // A page over its budget is full at the next entry.
        paging.delivered(RESULT_OVERHEAD + json_len(&entry.rel), 0);
        entries.push(FileEntry {
            path: entry.rel.clone(),
            is_dir: entry.is_dir,
            size,
            modified,
            modified_ns,
            accessed_ns,
        });
    }
    if timed_out {
        complete = false;
        has_more = true;
        // A page the time cut short goes on past what was walked.
        if paging.returned() < q.max_results
            && paging.position().is_none_or(|l| walked.as_ref().is_some_and(|w| path_cmp(w, &l.path).is_gt()))
        {
            if let Some(w) = walked {
                paging.reached(Position { path: w, line: 0, taken: ordinal });
            }
        }
    }
    // Entries left out after the last step.
    let left = walker.skips().since(seen.get());
    if left.any() {
        skips.add(left);
        replay.push(Step::Skipped(left));
    }
    replay.keep(complete);
    if entries.is_empty() {
        // Nothing listed: say what the rules left out, and what includes it.
        warnings.extend(page::left_out_warnings(skips.denied, skips.ignored, skips.hidden));
    } else if skips.denied > 0 {
        warnings.push(format!("{} entries withheld by the secrets denylist", skips.denied));
    }
    let skipped = crate::SkipCounts {
        binary: 0,
        too_large,
        denied: skips.denied,
        unreadable: unreadable.len() as u64,
        ignored: skips.ignored,
        hidden: skips.hidden,
    };
    named_warning(&mut warnings, "entries could not be read", &unreadable);
    named_warning(&mut warnings, "problems with ignore files", &problems);
    let total = counted.or(complete.then_some(ordinal.saturating_add(counted_past_page))).filter(|_| !q.no_total);
    let cursor = |p: &Position| cursor::encode(&stream_key, &Position { line: total.unwrap_or(0), ..p.clone() });
    Ok(ListFilesResponse {
        next_cursor: paging.position().filter(|_| has_more).map(cursor),
        total,
        entries,
        has_more,
        timed_out,
        skipped,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req() -> ListFilesRequest {
        ListFilesRequest { root: None, ..ListFilesRequest::new("") }
    }

    fn paths(r: &ListFilesResponse) -> Vec<&str> {
        r.entries.iter().map(|e| e.path.as_str()).collect()
    }

    #[test]
    fn lists_sorted_with_dirs_and_metadata() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["a/x", "a.txt", "b/c/d.rs"] {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "12345").unwrap();
        }
        let ws = Workspace::new(dir.path());
        let r = ws.list_files(req()).unwrap();
        // Path order: a directory's contents right after it.
        assert_eq!(paths(&r), ["a/x", "a.txt", "b/c/d.rs"]);
        assert_eq!((r.has_more, r.total), (false, Some(3)));
        assert!(r.entries[0].size.is_none());
        let mut q = req();
        q.include_dirs = true;
        q.include_metadata = true;
        let r = ws.list_files(q).unwrap();
        assert_eq!(paths(&r), ["a", "a/x", "a.txt", "b", "b/c", "b/c/d.rs"]);
        assert_eq!(r.entries[2].size, Some(5));
        assert!(r.entries[2].modified.unwrap() > 1_600_000_000);
        let mut q = req();
        q.recursive = Some(false);
        q.include_dirs = true;
        assert_eq!(paths(&ws.list_files(q).unwrap()), ["a", "a.txt", "b"]);
    }

    #[test]
    fn pages_go_on_in_path_order_through_directories_named_as_prefixes() {
        let dir = tempfile::tempdir().unwrap();
        let files = ["git/x.go", "git.go", "git-x", "a/b/c", "a+", "a.b/c", "ab", "a!", "a-", "a.", "a/b!/c", "a/b.c"];
        for f in files {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        let ws = Workspace::new(dir.path());
        for dirs in [false, true] {
            let mut q = req();
            q.include_dirs = dirs;
            let all: Vec<String> = paths(&ws.list_files(q.clone()).unwrap()).iter().map(|p| p.to_string()).collect();
            let mut want = all.clone();
            want.sort_by(|a, b| std::path::Path::new(a).cmp(std::path::Path::new(b)));
            assert_eq!(all, want);
            assert_eq!(all.len(), if dirs { files.len() + 5 } else { files.len() });
            for max in [1, 2, 3] {
                q.max_results = Some(max);
                q.cursor = None;
                let mut seen = Vec::new();
                loop {
                    let r = ws.list_files(q.clone()).unwrap();
                    seen.extend(r.entries.into_iter().map(|e| e.path));
                    match r.next_cursor {
                        Some(c) => q.cursor = Some(c),
                        None => break,
                    }
                }
                assert_eq!(seen, all, "dirs {dirs}, pages of {max}");
            }
        }
    }

    #[test]
    fn pages_cover_everything_once() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..25 {
            let p = dir.path().join(format!("d{}/f{i}", i % 4));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        let ws = Workspace::new(dir.path());
        let mut q = req();
        q.include_dirs = true;
        q.max_results = Some(4);
        let mut seen = Vec::new();
        loop {
            let r = ws.list_files(q.clone()).unwrap();
            assert_eq!(r.total, Some(29));
            seen.extend(r.entries.into_iter().map(|e| e.path));
            match r.next_cursor {
                Some(c) => q.cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(seen.len(), 29);
        let all = paths(
            &ws.list_files({
                let mut q = req();
                q.include_dirs = true;
                q.max_results = Some(100);
                q
            })
            .unwrap(),
        )
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>();
        assert_eq!(seen, all);
        // A later page takes the total its first page counted from the
        // cursor and walks no further than its own end: a file made past
        // it meanwhile is listed, not counted.
        q.cursor = None;
        let first = ws.list_files(q.clone()).unwrap();
        std::fs::write(dir.path().join("d3/zz"), "").unwrap();
        q.cursor = first.next_cursor;
        let mut totals = Vec::new();
        let mut last = Vec::new();
        while q.cursor.is_some() {
            let r = ws.list_files(q.clone()).unwrap();
            totals.push(r.total);
            last = paths(&r).iter().map(|p| p.to_string()).collect();
            q.cursor = r.next_cursor;
        }
        assert!(totals.iter().all(|&t| t == Some(29)), "{totals:?}");
        assert_eq!(last.last().map(String::as_str), Some("d3/zz"));
        // A cursor whose page could not count (no total) counts again.
        q.cursor = Some(crate::cursor::encode(
            &ws.stream_key(ListQuery::from_request(q.clone(), &mut Vec::new()).unwrap().stream_key()),
            &Position { path: "d0/f0".into(), line: 0, taken: 2 },
        ));
        assert_eq!(ws.list_files(q.clone()).unwrap().total, Some(30));
        // Without a total, the pages are the same.
        q.cursor = None;
        q.no_total = true;
        let mut streamed = Vec::new();
        loop {
            let r = ws.list_files(q.clone()).unwrap();
            assert_eq!(r.total, None);
            streamed.extend(paths(&r).iter().map(|p| p.to_string()));
            match r.next_cursor {
                Some(c) => q.cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(streamed.len(), 30);
        assert_eq!(streamed.last().map(String::as_str), Some("d3/zz"));
    }

    #[test]
    fn a_kept_instance_lists_from_the_walk_it_kept() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["a/x", "b.txt", "d/id_rsa", "c/d/e.rs"] {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "12").unwrap();
        }
        let ws = Workspace::new(dir.path());
        let mut q = req();
        q.include_dirs = true;
        q.include_metadata = true;
        let fresh = ws.list_files(q.clone()).unwrap();
        assert!(fresh.warnings.iter().any(|w| w.contains("1 entries withheld")), "{:?}", fresh.warnings);
        let same = |r: &ListFilesResponse| {
            assert_eq!(paths(r), paths(&fresh));
            assert_eq!((&r.warnings, r.total, r.has_more), (&fresh.warnings, fresh.total, fresh.has_more));
            let sizes = |r: &ListFilesResponse| r.entries.iter().map(|e| (e.size, e.modified)).collect::<Vec<_>>();
            assert_eq!(sizes(r), sizes(&fresh));
        };
        // The host vouches for an unchanged tree: the first listing walks
        // and is kept, the next replays it (a file made behind the host's
        // back is not walked, which shows the replay).
        crate::session::unchanged_since(Some(1));
        same(&ws.list_files(q.clone()).unwrap());
        std::fs::write(dir.path().join("new.txt"), "").unwrap();
        same(&ws.list_files(q.clone()).unwrap());
        // The same walk listed otherwise is replayed too; another walk (other
        // options) is walked.
        assert!(!paths(&ws.list_files(req()).unwrap()).contains(&"new.txt"));
        let mut hidden = req();
        hidden.hidden = true;
        assert!(paths(&ws.list_files(hidden).unwrap()).contains(&"new.txt"));
        // Nothing vouched for: walked again.
        crate::session::unchanged_since(None);
        assert!(paths(&ws.list_files(q).unwrap()).contains(&"new.txt"));
    }
}
