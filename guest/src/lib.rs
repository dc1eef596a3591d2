//! sandgrep's search logic: the guest side of the `sandgrep:search` component.
//!
//! Built for `wasm32-wasip2` this crate is `sandgrep.wasm`, whose only
//! filesystem is the directory the host preopens as `.`. Built natively it is
//! an ordinary library over a [`Workspace`] directory, which is how its unit
//! tests run.
//!
//! Data flows one way: request (defaults, clamping) → confine (paths) →
//! walk (ignore rules, denylist) → sink (matching lines, caps, context) →
//! shape (text windows, cursors) → response.

mod bindings {
    wit_bindgen::generate!({
        path: "../wit",
        world: "sandgrep",
        additional_derives: [PartialEq],
    });
}

mod ast;
mod confine;
// The requests' defaults, the host's own (for tests: callers send every field).
mod cursor;
mod decompress;
#[cfg(test)]
#[path = "../../host/src/defaults.rs"]
mod defaults;
mod deny;
mod error;
mod fs;
mod index;
mod list;
mod memcmp;
mod page;
mod read;
mod redact;
mod request;
mod search;
mod session;
mod shape;
mod sink;
mod walk;

pub use bindings::exports::sandgrep::search::files::{
    FileEntry, ListFilesRequest, ListFilesResponse, RangeType, ReadFileRequest, ReadFileResponse, ReadRange,
};
pub use bindings::exports::sandgrep::search::index::{
    IndexBatch, IndexFile, IndexMergePlan, IndexMerged, IndexOldLists, IndexPart, IndexReport, ReadOutcome,
};
pub use bindings::exports::sandgrep::search::parallel::{
    AstEventKind, AstFileOutcome, AstShardEvent, AstShardResult, FileOutcome, ShardEvent, ShardEventKind, ShardResult,
    ShardStop, WalkPart, WalkSearched, WalkSkips, WalkedFile, WalkedFiles,
};
pub use bindings::exports::sandgrep::search::search::{
    AstMatch, BinaryMode, BinaryNotice, ByteChunk, CaseMode, FileCount, MetaVariable, OutputMode, QueryMode,
    RegexEngine, SearchAstRequest, SearchAstResponse, SearchTextRequest, SearchTextResponse, Submatch, TextMatch,
};
pub use bindings::sandgrep::search::types::{
    IgnoreOptions, IndexUse, Policy, Redaction, RedactionCount, SearchError, SearchStats, SkipCounts, TypeChange,
};

pub use error::error_message;

use std::path::{Path, PathBuf};
use std::rc::Rc;

/// The directory every request is confined to, and the host's policy for it.
/// Inside the component it is the preopened `.`; native callers (tests) name
/// a directory.
#[derive(Clone, Debug)]
pub struct Workspace {
    /// The root as ignore matchers see paths (`./a/b` inside the component).
    root: PathBuf,
    /// The root, open: every filesystem call starts from it.
    dir: Result<Rc<fs::Dir>, String>,
    deny: deny::Denylist,
    redact: bool,
    inside_git: bool,
    cursor_key: String,
    /// The index directory (SPEC §6), when the host gave one.
    index: Option<PathBuf>,
    extra_deny: Vec<String>,
    /// Redaction rules the host switched off.
    disabled_rules: Vec<String>,
}

impl Workspace {
    /// A workspace under the default policy: redaction on, the built-in
    /// denylist.
    pub fn new(root: impl AsRef<Path>) -> Workspace {
        Workspace {
            root: root.as_ref().to_path_buf(),
            dir: fs::Dir::root(root.as_ref()).map_err(|e| format!("the workspace cannot be opened: {e}")),
            deny: deny::Denylist::default(),
            redact: true,
            inside_git: false,
            cursor_key: String::new(),
            index: fs::index_preopen(),
            extra_deny: Vec::new(),
            disabled_rules: Vec::new(),
        }
    }

    /// Keeps the index in `dir` (natively; a component is given its index
    /// directory by the host).
    pub fn with_index_dir(mut self, dir: impl AsRef<Path>) -> Workspace {
        self.index = Some(dir.as_ref().to_path_buf());
        self
    }

    fn index_dir(&self) -> Option<&Path> {
        self.index.as_deref()
    }

    /// The policy the index is built under.
    fn index_policy(&self) -> u64 {
        index::policy_fingerprint(&self.extra_deny, self.inside_git, self.redact, &self.disabled_rules)
    }

    /// Builds or refreshes the index (see the WIT's `index` interface).
    pub fn refresh_index(&self) -> Result<IndexReport, SearchError> {
        index::refresh(self)
    }

    pub fn with_policy(mut self, policy: &Policy) -> Result<Workspace, SearchError> {
        self.deny = deny::Denylist::new(&policy.extra_deny)?;
        self.extra_deny = policy.extra_deny.clone();
        self.redact = policy.redact;
        self.inside_git = policy.inside_git_repository;
        self.cursor_key = policy.cursor_key.clone();
        // (For this call: an instance kept between calls gets each call's.)
        redact::set_disabled(&policy.disabled_redaction_rules).map_err(SearchError::InvalidArgument)?;
        self.disabled_rules = policy.disabled_redaction_rules.clone();
        Ok(self)
    }

    /// What a cursor is bound to: the request's result stream, under the
    /// host's cursor key.
    fn stream_key(&self, request_key: String) -> String {
        if self.cursor_key.is_empty() {
            request_key
        } else {
            format!("{}\0{request_key}", self.cursor_key)
        }
    }

    /// The workspace root, open.
    fn root_dir(&self) -> Result<Rc<fs::Dir>, SearchError> {
        self.dir.clone().map_err(SearchError::Io)
    }

    /// A caller-given path, confined ([`confine::normalize`]), checked
    /// against the denylist, and opened through any links
    /// ([`confine::open`]), which checks where it really leads — the one way
    /// a named path gets in. A trailing `/` asks for a directory.
    fn resolve(&self, path: &str) -> Result<(String, confine::Opened), SearchError> {
        let rel = confine::normalize(path)?;
        if self.denied(&rel) {
            return Err(SearchError::Denied(rel));
        }
        let trimmed = path.trim_end_matches('/');
        let must_be_dir = trimmed.len() < path.len() || trimmed.ends_with("/.") || trimmed.ends_with("/..");
        let shown = if must_be_dir && rel != "." { format!("{rel}/") } else { rel.clone() };
        let opened = confine::open(self, &rel, must_be_dir, &shown)?;
        Ok((rel, opened))
    }

    /// Whether the entry `name` at `rel`, in a directory named `parent`
    /// whose own path was checked, is denied (as a file or a directory).
    fn entry_denied(&self, rel: &str, name: &str, parent: Option<&str>) -> bool {
        let rel = if self.deny.has_extra() { rel } else { "" };
        self.deny.entry_denied(rel, name, parent, false) || self.deny.entry_denied(rel, name, parent, true)
    }

    /// Whether a normalized path (as a file or a directory) is denied.
    fn denied(&self, rel: &str) -> bool {
        rel != "." && (self.deny.path_denied(rel, false) || self.deny.path_denied(rel, true))
    }

    /// The filesystem path of a normalized workspace-relative path.
    fn fs_path(&self, rel: &str) -> PathBuf {
        if rel == "." {
            return self.root.clone();
        }
        // `root.join(rel)` without its component parsing (a walk asks once
        // per entry; `rel` is normalized, never absolute).
        match self.root.to_str() {
            Some(root) => {
                let mut path = String::with_capacity(root.len() + 1 + rel.len());
                path.push_str(root);
                if !root.ends_with('/') {
                    path.push('/');
                }
                path.push_str(rel);
                PathBuf::from(path)
            }
            None => self.root.join(rel),
        }
    }

    /// Run `search-text` over this workspace.
    pub fn search_text(&self, request: SearchTextRequest) -> Result<SearchTextResponse, SearchError> {
        search::search_text(self, request)
    }

    pub fn search_ast(&self, request: SearchAstRequest) -> Result<SearchAstResponse, SearchError> {
        ast::search_ast(self, request)
    }

    /// Run `search-bytes`: `search-text` over a piece of a stream.
    pub fn search_bytes(
        &self,
        request: SearchTextRequest,
        chunk: ByteChunk,
    ) -> Result<SearchTextResponse, SearchError> {
        search::search_bytes(self, request, chunk)
    }

    /// The next files of a parallel search's walk (see the WIT's `walk-files`).
    pub fn walk_files(&self, request: SearchTextRequest, start: bool, max: u32) -> Result<WalkedFiles, SearchError> {
        search::walk_files(self, request, start, max)
    }

    /// A batch of a parallel search's files, searched (see the WIT's `search-files`).
    pub fn search_files(
        &self,
        request: SearchTextRequest,
        start: bool,
        files: Vec<WalkedFile>,
    ) -> Result<ShardResult, SearchError> {
        search::search_files(self, request, start, files)
    }

    /// The next events of a divided search's part (see the WIT's `walk-search`).
    pub fn walk_search(
        &self,
        request: SearchTextRequest,
        start: bool,
        part: Option<WalkPart>,
        max: u32,
        give: bool,
    ) -> Result<WalkSearched, SearchError> {
        search::walk_search(self, request, start, part, max, give)
    }

    /// The page of a parallel search, from its shards' results.
    pub fn merge_shards(
        &self,
        request: SearchTextRequest,
        shards: Vec<ShardResult>,
    ) -> Result<SearchTextResponse, SearchError> {
        search::merge_shards(self, request, shards)
    }

    /// One shard of a parallel structural search.
    pub fn search_ast_shard(
        &self,
        request: SearchAstRequest,
        index: u32,
        count: u32,
    ) -> Result<AstShardResult, SearchError> {
        ast::search_ast_shard(self, request, index, count)
    }

    /// The page of a parallel structural search, from its shards' results.
    pub fn merge_ast_shards(
        &self,
        request: SearchAstRequest,
        shards: Vec<AstShardResult>,
    ) -> Result<SearchAstResponse, SearchError> {
        ast::merge_ast_shards(self, request, shards)
    }

    /// Run `list-files` over this workspace.
    pub fn list_files(&self, request: ListFilesRequest) -> Result<ListFilesResponse, SearchError> {
        list::list_files(self, request)
    }

    /// Run `read-file` in this workspace.
    pub fn read_file(&self, request: ReadFileRequest) -> Result<ReadFileResponse, SearchError> {
        read::read_file(self, request)
    }
}

#[cfg(target_arch = "wasm32")]
mod component {
    use super::bindings::exports::sandgrep::search::search::Guest;
    use super::*;

    struct Component;

    impl Guest for Component {
        fn search_text(request: SearchTextRequest, policy: Policy) -> Result<SearchTextResponse, SearchError> {
            Workspace::new(".").with_policy(&policy)?.search_text(request)
        }

        fn search_ast(request: SearchAstRequest, policy: Policy) -> Result<SearchAstResponse, SearchError> {
            Workspace::new(".").with_policy(&policy)?.search_ast(request)
        }

        fn search_bytes(
            request: SearchTextRequest,
            policy: Policy,
            chunk: ByteChunk,
        ) -> Result<SearchTextResponse, SearchError> {
            Workspace::new(".").with_policy(&policy)?.search_bytes(request, chunk)
        }
    }

    impl super::bindings::exports::sandgrep::search::parallel::Guest for Component {
        fn walk_files(
            request: SearchTextRequest,
            policy: Policy,
            start: bool,
            max: u32,
        ) -> Result<WalkedFiles, SearchError> {
            Workspace::new(".").with_policy(&policy)?.walk_files(request, start, max)
        }

        fn search_files(
            request: SearchTextRequest,
            policy: Policy,
            start: bool,
            files: Vec<WalkedFile>,
        ) -> Result<ShardResult, SearchError> {
            Workspace::new(".").with_policy(&policy)?.search_files(request, start, files)
        }

        fn walk_search(
            request: SearchTextRequest,
            policy: Policy,
            start: bool,
            part: Option<WalkPart>,
            max: u32,
            give: bool,
        ) -> Result<WalkSearched, SearchError> {
            Workspace::new(".").with_policy(&policy)?.walk_search(request, start, part, max, give)
        }

        fn merge_shards(
            request: SearchTextRequest,
            policy: Policy,
            shards: Vec<ShardResult>,
        ) -> Result<SearchTextResponse, SearchError> {
            Workspace::new(".").with_policy(&policy)?.merge_shards(request, shards)
        }

        fn search_ast_shard(
            request: SearchAstRequest,
            policy: Policy,
            index: u32,
            count: u32,
        ) -> Result<AstShardResult, SearchError> {
            Workspace::new(".").with_policy(&policy)?.search_ast_shard(request, index, count)
        }

        fn merge_ast_shards(
            request: SearchAstRequest,
            policy: Policy,
            shards: Vec<AstShardResult>,
        ) -> Result<SearchAstResponse, SearchError> {
            Workspace::new(".").with_policy(&policy)?.merge_ast_shards(request, shards)
        }
    }

    impl super::bindings::exports::sandgrep::search::index::Guest for Component {
        fn refresh_index(policy: Policy) -> Result<IndexReport, SearchError> {
            Workspace::new(".").with_policy(&policy)?.refresh_index()
        }

        fn index_walk(policy: Policy, start: bool, max_bytes: u64) -> Result<IndexBatch, SearchError> {
            index::walk_batch(&Workspace::new(".").with_policy(&policy)?, start, max_bytes)
        }

        fn index_read(policy: Policy, files: Vec<IndexFile>, last: bool) -> Result<IndexPart, SearchError> {
            index::read_batch(&Workspace::new(".").with_policy(&policy)?, files, last)
        }

        fn index_split(policy: Policy, reads: Vec<IndexPart>, count: u32) -> Result<IndexMergePlan, SearchError> {
            index::split(&Workspace::new(".").with_policy(&policy)?, reads, count)
        }

        fn index_merge(policy: Policy, plan: IndexMergePlan, range: u32) -> Result<IndexMerged, SearchError> {
            index::merge_range(&Workspace::new(".").with_policy(&policy)?, &plan, range)
        }

        fn index_finish(policy: Policy, merged: Vec<IndexMerged>) -> Result<IndexReport, SearchError> {
            index::finish(&Workspace::new(".").with_policy(&policy)?, merged)
        }

        fn unchanged_since(generation: Option<u64>) {
            session::unchanged_since(generation)
        }
    }

    impl super::bindings::exports::sandgrep::search::files::Guest for Component {
        fn list_files(request: ListFilesRequest, policy: Policy) -> Result<ListFilesResponse, SearchError> {
            Workspace::new(".").with_policy(&policy)?.list_files(request)
        }

        fn read_file(request: ReadFileRequest, policy: Policy) -> Result<ReadFileResponse, SearchError> {
            Workspace::new(".").with_policy(&policy)?.read_file(request)
        }
    }

    super::bindings::export!(Component with_types_in super::bindings);
}
