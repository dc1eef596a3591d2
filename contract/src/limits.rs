//! Every default and hard maximum of sandgrep, in one table: the component
//! clamps requests with it, and the host's library, agent tools, command
//! line and server take their defaults, schemas and help texts from it. The
//! WIT comments, the README and `docs/` restate some of these numbers in prose; a
//! test (`tests/limits.rs`) fails when any of them states a number that is
//! not here.

/// A number a request may set: `default` when absent, clamped into
/// `min..=max` otherwise (with a warning).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    pub default: u64,
    pub min: u64,
    pub max: u64,
}

impl Limit {
    /// What a request's `value` comes to: the default when absent, else
    /// clamped into `min..=max`.
    pub fn applied(self, value: Option<u64>) -> u64 {
        value.unwrap_or(self.default).clamp(self.min, self.max)
    }
}

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

macro_rules! table {
    ($( $(#[$doc:meta])* $name:ident : $ty:ty = $value:expr; )*) => {
        $( $(#[$doc])* pub const $name: $ty = $value; )*

        /// Every number in the table (a `Limit`'s default, minimum and
        /// maximum), for checking what front ends state.
        pub fn numbers() -> Vec<u64> {
            let mut all = Vec::new();
            $( Entry::push(&$name, &mut all); )*
            all
        }
    };
}

trait Entry {
    fn push(&self, all: &mut Vec<u64>);
}

impl Entry for Limit {
    fn push(&self, all: &mut Vec<u64>) {
        all.extend([self.default, self.min, self.max]);
    }
}

impl Entry for u64 {
    fn push(&self, all: &mut Vec<u64>) {
        all.push(*self);
    }
}

impl Entry for usize {
    fn push(&self, all: &mut Vec<u64>) {
        all.push(*self as u64);
    }
}

table! {
    // What a request may ask (the component clamps it).
    /// Bytes of a text query or structural pattern.
    MAX_QUERY_BYTES: usize = 64 * KIB as usize;
    /// Search roots in one request.
    MAX_PATHS: usize = 256;
    /// Include globs, and exclude globs, in one request.
    MAX_GLOBS: usize = 256;
    /// File types in one request.
    MAX_TYPES: usize = 256;
    /// Lines of context before, and after, each match.
    CONTEXT: Limit = Limit { default: 2, min: 0, max: 10 };
    /// Matches (or files) on one page of a text or structural search.
    MAX_RESULTS: Limit = Limit { default: 200, min: 1, max: 5000 };
    /// Matching lines per file (content output; count output is exact
    /// unless a cap is asked for).
    PER_FILE: Limit = Limit { default: 50, min: 1, max: 1000 };
    /// Bytes of a match's line returned (a window around the match past it).
    MAX_COLUMNS: Limit = Limit { default: 500, min: 20, max: 10_000 };
    /// Larger files are skipped and counted.
    MAX_FILESIZE: Limit = Limit { default: 8 * MIB, min: 0, max: 256 * MIB };
    /// Structural search parses whole files (a syntax tree is several times
    /// the text): its own file size limit.
    AST_FILESIZE: Limit = Limit { default: 2 * MIB, min: 0, max: 8 * MIB };
    /// Milliseconds a call searches before it returns what it found.
    TIMEOUT_MS: Limit = Limit { default: 10_000, min: 1, max: 60_000 };
    /// Entries on one page of a listing.
    LIST_RESULTS: Limit = Limit { default: 500, min: 1, max: 10_000 };
    /// Bytes of a bytes-mode read.
    READ_BYTES: Limit = Limit { default: 64 * KIB, min: 1, max: MIB };
    /// Lines of a lines-mode read.
    READ_LINES: Limit = Limit { default: 200, min: 1, max: 5000 };

    // What one answer may hold, whatever the files hold.
    /// Bytes a lines-mode read returns at most (a 1 MiB line still fits).
    MAX_READ_LINES_BYTES: u64 = 2 * MIB;
    /// Entries a listing walks past its page to learn `total`.
    LIST_COUNT_BUDGET: u64 = 100_000;
    /// Largest buffer the searcher may grow to: the longest line it can
    /// hold, or (multiline) the largest file. Beyond it a file is skipped as
    /// too large.
    HEAP_LIMIT: usize = 32 * MIB as usize;
    /// What the strings of one response (paths, match lines, context,
    /// meta-variables) may add up to, counted as JSON escapes them (a control
    /// byte is six). With the rest of the response, and a front end that
    /// also renders it as text (MCP), the answer stays under 16 MiB.
    MAX_OUTPUT_BYTES: usize = 6 * MIB as usize;
    /// Bytes of source text one structural match (or meta-variable) returns.
    MAX_AST_TEXT: usize = 4 * KIB as usize;
    /// Bytes of the text rendering of one agent-tool answer.
    MAX_TOOL_TEXT: usize = 3 * MIB as usize;

    /// What one decoder may allocate for its window (an xz or lzma
    /// dictionary, a zstd window) when search-zip decompresses a file: a
    /// file that asks for more is an error on that file, never allocated.
    /// (The decompressed text itself is capped by max-filesize.)
    DECOMPRESS_WINDOW: u64 = 128 * MIB;
    /// The heap one PCRE2 match may use (`-P`): past it the match is an
    /// error on that file. (PCRE2's `HEAP_LIMIT`, set in KiB where
    /// host/build.rs compiles it.)
    PCRE2_HEAP: u64 = 64 * MIB;
    /// Larger files are not indexed (searches always read them).
    INDEX_FILESIZE: u64 = 8 * MIB;
    /// Linear memory of the instance that builds or refreshes an index.
    INDEX_MEMORY: u64 = 4096 * MIB;
    /// A file written this close (ms) to when the index read it is not
    /// trusted by its times (a write in the same clock tick keeps them).
    INDEX_RACY_MS: u64 = 2_000;
    /// Milliseconds of quiet after a change before a long-lived host
    /// refreshes its index.
    INDEX_QUIET_MS: u64 = 2_500;
    /// Milliseconds a long-lived host waits before trying a failed refresh
    /// again, doubled after each failure up to `INDEX_RETRY_MAX_MS`.
    INDEX_RETRY_MS: u64 = 5_000;
    INDEX_RETRY_MAX_MS: u64 = 300_000;
    /// Bytes the indexes in the user's cache may take together
    /// (`SANDGREP_CACHE_MAX` sets another cap): past it, a build removes the
    /// least recently used others.
    INDEX_CACHE_MAX: u64 = 10 * 1024 * MIB;
    /// Milliseconds one open of a workspace file may block (a FIFO swapped
    /// in for a file) before the host interrupts it and the file is skipped.
    OPEN_TIMEOUT_MS: u64 = 5_000;
    /// Directories one walk (or one chain of directories opened again after
    /// it) keeps open at once: a deeper tree's outer ones are closed and
    /// opened again when needed, so depth costs no descriptors.
    OPEN_DIRS: usize = 16;

    // What the host decides (the library's `Policy`, the server's config).
    /// Linear memory the helper instances a long-lived host keeps between
    /// calls may hold, all its workspaces together (more are made per call).
    HELPERS_MEMORY: u64 = 256 * MIB;
    /// Open files the host needs at the least (`ulimit -n`): below it, the
    /// command line refuses to start rather than fail in a search.
    MIN_OPEN_FILES: u64 = 64;
    /// Linear memory of one call's instance, bytes (the server's
    /// `memory_mib` is clamped to this range).
    MEMORY: Limit = Limit { default: 512 * MIB, min: 16 * MIB, max: 4096 * MIB };
    /// Milliseconds past a call's timeout before the host interrupts it.
    DEADLINE_GRACE_MS: u64 = 5_000;
    /// The same, for the server's tenants (their calls hold shared slots).
    SERVE_DEADLINE_GRACE_MS: u64 = 2_000;
    /// Milliseconds a server client has to send a request's headers (and
    /// then its body).
    HEADER_TIMEOUT_MS: Limit = Limit { default: 10_000, min: 1, max: 600_000 };
    /// Connections a server holds open at once.
    MAX_CONNECTIONS: Limit = Limit { default: 512, min: 1, max: 1_000_000 };
    /// Milliseconds a server asked to stop (SIGTERM, Ctrl-C) goes on
    /// accepting calls while `/readyz` says 503, so that a load balancer
    /// stops sending it new ones first.
    STOP_DRAIN_MS: Limit = Limit { default: 0, min: 0, max: 600_000 };
    /// Then milliseconds the calls in flight have to finish before it exits.
    STOP_TIMEOUT_MS: Limit = Limit { default: 5_000, min: 0, max: 600_000 };
    /// MCP sessions open at once, per tenant.
    MAX_SESSIONS: usize = 64;
    /// Calls running at once, per tenant.
    MAX_CONCURRENT: usize = 4;
    /// Calls per second, sustained, per tenant (bursts up to that many).
    REQUESTS_PER_SECOND: u64 = 20;
    /// Bytes of one HTTP request body.
    MAX_BODY: usize = MIB as usize;
    /// Characters a server token has at least.
    MIN_TOKEN_CHARS: usize = 16;
}
