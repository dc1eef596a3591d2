//! A runaway guest for the host's limit tests: `search-text` with the query
//! `spin` never returns, `alloc` allocates until something stops it,
//! `recurse` recurses until the stack runs out; any other query returns an
//! empty response, so a sandbox can be shown to work again afterwards. The
//! shards of a parallel search behave the same.

wit_bindgen::generate!({ path: "../../wit", world: "sandgrep" });

use exports::sandgrep::search::files::{ListFilesRequest, ListFilesResponse, ReadFileRequest, ReadFileResponse};
use exports::sandgrep::search::parallel::ShardResult;
use exports::sandgrep::search::search::{SearchAstRequest, SearchAstResponse, SearchTextRequest, SearchTextResponse};
use sandgrep::search::types::{IndexUse, Policy, SearchError, SearchStats, SkipCounts};

struct Runaway;

#[inline(never)]
#[allow(unconditional_recursion)]
fn recurse(n: u64) -> u64 {
    let mut buf = [n; 64];
    std::hint::black_box(&mut buf);
    recurse(buf[n as usize % 64] + 1) + 1
}

fn misbehave(query: &str) {
    match query {
        "spin" => loop {
            std::hint::black_box(());
        },
        "alloc" => {
            let mut hoard: Vec<Vec<u8>> = Vec::new();
            loop {
                hoard.push(vec![1u8; 1 << 20]);
                std::hint::black_box(&hoard);
            }
        }
        "recurse" => {
            std::hint::black_box(recurse(0));
        }
        _ => {}
    }
}

impl exports::sandgrep::search::search::Guest for Runaway {
    fn search_text(request: SearchTextRequest, _: Policy) -> Result<SearchTextResponse, SearchError> {
        misbehave(&request.query);
        Ok(SearchTextResponse {
            matches: Vec::new(),
            files: Vec::new(),
            truncated: false,
            timed_out: false,
            next_cursor: None,
            stats: SearchStats {
                files_scanned: 0,
                files_matched: 0,
                bytes_searched: 0,
                matches_returned: 0,
                elapsed_ms: 0,
                skipped: SkipCounts { binary: 0, too_large: 0, denied: 0, unreadable: 0, ignored: 0, hidden: 0 },
                index: IndexUse::None,
                files_skipped_by_index: 0,
                lines_redacted: 0,
                redacted_by: Vec::new(),
            },
            warnings: Vec::new(),
            binary_notices: Vec::new(),
        })
    }

    fn search_ast(_: SearchAstRequest, _: Policy) -> Result<SearchAstResponse, SearchError> {
        Err(SearchError::Io("not implemented by the runaway guest".into()))
    }

    fn search_bytes(
        request: SearchTextRequest,
        policy: Policy,
        _: exports::sandgrep::search::search::ByteChunk,
    ) -> Result<SearchTextResponse, SearchError> {
        Self::search_text(request, policy)
    }
}

impl exports::sandgrep::search::parallel::Guest for Runaway {
    fn walk_files(
        _: SearchTextRequest,
        _: Policy,
        _: bool,
        _: u32,
    ) -> Result<exports::sandgrep::search::parallel::WalkedFiles, SearchError> {
        let file = exports::sandgrep::search::parallel::WalkedFile { path: "a".into(), real: None };
        Ok(exports::sandgrep::search::parallel::WalkedFiles {
            events: Vec::new(),
            files: vec![file],
            done: true,
            timed_out: false,
            index: IndexUse::None,
        })
    }

    fn search_files(
        request: SearchTextRequest,
        _: Policy,
        _: bool,
        _: Vec<exports::sandgrep::search::parallel::WalkedFile>,
    ) -> Result<ShardResult, SearchError> {
        misbehave(&request.query);
        Ok(ShardResult { events: Vec::new(), stopped: None, index: IndexUse::None, results: 0, page_takes: 0 })
    }

    fn walk_search(
        request: SearchTextRequest,
        _: Policy,
        _: bool,
        _: Option<exports::sandgrep::search::parallel::WalkPart>,
        _: u32,
        _: bool,
    ) -> Result<exports::sandgrep::search::parallel::WalkSearched, SearchError> {
        misbehave(&request.query);
        Ok(exports::sandgrep::search::parallel::WalkSearched {
            events: Vec::new(),
            given: Vec::new(),
            done: true,
            stopped: None,
            results: 0,
            page_takes: 0,
            divided: false,
        })
    }

    fn merge_shards(
        request: SearchTextRequest,
        policy: Policy,
        _: Vec<ShardResult>,
    ) -> Result<SearchTextResponse, SearchError> {
        <Runaway as exports::sandgrep::search::search::Guest>::search_text(request, policy)
    }

    fn search_ast_shard(
        _: SearchAstRequest,
        _: Policy,
        _: u32,
        _: u32,
    ) -> Result<exports::sandgrep::search::parallel::AstShardResult, SearchError> {
        Err(SearchError::Io("not implemented by the runaway guest".into()))
    }

    fn merge_ast_shards(
        _: SearchAstRequest,
        _: Policy,
        _: Vec<exports::sandgrep::search::parallel::AstShardResult>,
    ) -> Result<SearchAstResponse, SearchError> {
        Err(SearchError::Io("not implemented by the runaway guest".into()))
    }
}

impl exports::sandgrep::search::index::Guest for Runaway {
    fn refresh_index(_: Policy) -> Result<exports::sandgrep::search::index::IndexReport, SearchError> {
        Err(SearchError::Io("not implemented by the runaway guest".into()))
    }

    fn index_walk(_: Policy, _: bool, _: u64) -> Result<exports::sandgrep::search::index::IndexBatch, SearchError> {
        Err(SearchError::Io("not implemented by the runaway guest".into()))
    }

    fn index_read(
        _: Policy,
        _: Vec<exports::sandgrep::search::index::IndexFile>,
        _: bool,
    ) -> Result<exports::sandgrep::search::index::IndexPart, SearchError> {
        Err(SearchError::Io("not implemented by the runaway guest".into()))
    }

    fn index_split(
        _: Policy,
        _: Vec<exports::sandgrep::search::index::IndexPart>,
        _: u32,
    ) -> Result<exports::sandgrep::search::index::IndexMergePlan, SearchError> {
        Err(SearchError::Io("not implemented by the runaway guest".into()))
    }

    fn index_merge(
        _: Policy,
        _: exports::sandgrep::search::index::IndexMergePlan,
        _: u32,
    ) -> Result<exports::sandgrep::search::index::IndexMerged, SearchError> {
        Err(SearchError::Io("not implemented by the runaway guest".into()))
    }

    fn index_finish(
        _: Policy,
        _: Vec<exports::sandgrep::search::index::IndexMerged>,
    ) -> Result<exports::sandgrep::search::index::IndexReport, SearchError> {
        Err(SearchError::Io("not implemented by the runaway guest".into()))
    }

    fn unchanged_since(_: Option<u64>) {}
}

impl exports::sandgrep::search::files::Guest for Runaway {
    fn list_files(_: ListFilesRequest, _: Policy) -> Result<ListFilesResponse, SearchError> {
        Err(SearchError::Io("not implemented by the runaway guest".into()))
    }

    fn read_file(_: ReadFileRequest, _: Policy) -> Result<ReadFileResponse, SearchError> {
        Err(SearchError::Io("not implemented by the runaway guest".into()))
    }
}

#[cfg(target_arch = "wasm32")]
export!(Runaway);
