//! What the component (`guest/`) and the host (`host/`) must say alike,
//! written once: the table of defaults and hard maxima ([`limits`]), and the
//! message for each kind of `search-error` (the WIT variant, which each side
//! binds to its own Rust type).

pub mod limits;

/// The one order of paths (SPEC §2), `rg --sort path`'s: component by
/// component, each bytewise, a path before everything beneath it (`a/b`
/// before `a+`, `git/x.go` before `git.go`) — Rust's `Path` order. The
/// workspace root `.` comes first. Answers, cursors, shards, listings and
/// the index's table of files all sort by it.
///
/// It also orders the keys of walk events: a path and a NUL
/// (the guest's `page::walk_anchor`) sorts just after that path and before
/// whatever follows it (beneath it or not). (No name holds a NUL.)
pub fn path_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn bytes(p: &str) -> &[u8] {
        if p == "." {
            &[]
        } else {
            p.as_bytes()
        }
    }
    let (a, b) = (bytes(a), bytes(b));
    // `/` ends a component, so it sorts below every byte a name holds.
    let rank = |c: u8| match c {
        0 => 0,
        b'/' => 1,
        c => u16::from(c) + 1,
    };
    let same = common_prefix(a, b);
    match (a.get(same), b.get(same)) {
        (Some(&x), Some(&y)) => rank(x).cmp(&rank(y)),
        _ => a.len().cmp(&b.len()),
    }
}

/// How many bytes `a` and `b` start with alike, eight at a time (paths
/// that sort near each other share long prefixes).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let word = |s: &[u8]| u64::from_le_bytes(s[i..i + 8].try_into().expect("eight bytes"));
        let differ = word(a) ^ word(b);
        if differ != 0 {
            return i + (differ.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i + a[i..n].iter().zip(&b[i..n]).take_while(|(x, y)| x == y).count()
}

/// The PCRE2 the component compiles in (rg's `-P`), as the pcre2 crate's
/// `version()` names it, which `rg --pcre2-version` prints (the guest's
/// test `pcre2_version_is_the_contracts` holds them equal). Without its
/// JIT: wasm runs no code made at run time.
pub const PCRE2_VERSION: (u32, u32) = (10, 45);

/// The index file's name and header, which the component writes and reads
/// (`guest/src/index`) and the host lists and prunes (`host/src/cache.rs`).
pub mod index_file {
    pub const NAME: &str = "index.v1";
    pub const MAGIC: &[u8; 8] = b"SGINDEX\0";
    /// The changes since the index was written, beside it: a refresh that
    /// read few files writes only these (the whole table, the walk, which
    /// of the index's files still stand, the postings of the files read
    /// since), and folds them into a new index once they grow.
    pub const DELTA_NAME: &str = "index.v1.delta";
    pub const DELTA_MAGIC: &[u8; 8] = b"SGDELTA\0";
    /// Magic, version, 4 spare bytes, then the index's own header checksum
    /// (the index it belongs to), policy, files, trigrams, table and
    /// postings lengths, the table's checksum and the build time (u64 each),
    /// and the checksum of all that.
    pub const DELTA_HEADER: usize = 88;
    /// 6: the table is followed by the build's walk (what it left out
    /// before each file, whether it was whole). 5: the postings before the table (written as they are merged); 4 had
    /// them after it. 4: the table of files in `rg --sort path` order (3
    /// had it bytewise by whole path).
    pub const VERSION: u32 = 6;
    /// Magic, version, 4 spare bytes, then policy, files, trigrams, table
    /// and postings lengths, the table's checksum and the build time (u64
    /// each), and the checksum of all that.
    pub const HEADER: usize = 80;

    /// What a build writes beside the index under a name of its own
    /// (`index.v1.<16 hex>` and a kind), and removes when done.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub enum Scratch {
        /// `.run<N>`: sorted (trigram, file) pairs an instance wrote.
        Run,
        /// `.part`: a range of trigrams' lists, merged.
        Part,
        /// `.tmp`: an older build's index before it was renamed.
        Tmp,
    }

    /// Which of a build's files `name` is, if one.
    pub fn scratch(name: &str) -> Option<Scratch> {
        let rest = name.strip_prefix(NAME)?.strip_prefix('.')?;
        let (hex, tail) = rest.split_at_checked(16)?;
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        match tail {
            ".part" => Some(Scratch::Part),
            ".tmp" => Some(Scratch::Tmp),
            _ => {
                let n = tail.strip_prefix(".run")?;
                (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(Scratch::Run)
            }
        }
    }

    /// A fast checksum, eight bytes at a time (corruption, not attack: the
    /// index lives outside the workspace, where only the user writes).
    pub fn checksum(bytes: &[u8]) -> u64 {
        let mut h: u64 = 0x9e37_79b9_7f4a_7c15 ^ bytes.len() as u64;
        let mut chunks = bytes.chunks_exact(8);
        for c in chunks.by_ref() {
            let w = u64::from_le_bytes(c.try_into().unwrap_or_default());
            h = (h ^ w).wrapping_mul(0x0100_0000_01b3).rotate_left(29);
        }
        for &b in chunks.remainder() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3).rotate_left(29);
        }
        h ^ (h >> 31)
    }
}

/// The part of the secrets denylist the host needs too.
pub mod deny {
    /// A file name denied in a directory of this name (lower case): the
    /// guest checks them in the walk; the host, for a workspace that is such
    /// a directory itself ([`inside`]), whose files have no parent in sight.
    pub const IN_DIR: &[(&str, &str)] = &[
        (".aws", "credentials"),
        (".docker", "config.json"),
        (".kube", "config"),
        (".kube", "config.yaml"),
        (".kube", "config.yml"),
    ];

    /// Globs for the host to deny in a workspace whose own directory is
    /// named `dir_name` (`--root ~/.aws`): its credential files; everything
    /// in a `.ssh` or `.git` directory.
    pub fn inside(dir_name: &str) -> Vec<String> {
        let dir = dir_name.to_ascii_lowercase();
        if dir == ".ssh" || dir == ".git" {
            return vec!["*".into()];
        }
        IN_DIR.iter().filter(|(d, _)| *d == dir).map(|(_, f)| format!("/{f}")).collect()
    }
}

/// The kinds of `search-error` (see `wit/sandgrep.wit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    InvalidArgument,
    InvalidPattern,
    NotFound,
    OutsideWorkspace,
    Denied,
    BinaryFile,
    TooLarge,
    Io,
}

/// The message front ends show for an error of `kind` carrying `detail`
/// (a workspace-relative path, or a message).
pub fn error_message(kind: ErrorKind, detail: &str) -> String {
    match kind {
        ErrorKind::InvalidArgument => format!("invalid argument: {detail}"),
        ErrorKind::InvalidPattern => format!("invalid pattern: {detail}"),
        ErrorKind::NotFound => format!("{detail}: not found in the workspace"),
        ErrorKind::OutsideWorkspace => format!("{detail}: outside the workspace"),
        ErrorKind::Denied => format!("{detail}: denied (secrets and .git internals are never read)"),
        ErrorKind::BinaryFile => format!("{detail}: binary file"),
        ErrorKind::TooLarge => format!("{detail}: too large"),
        ErrorKind::Io => detail.to_string(),
    }
}

/// The message for `$error`, a value of the caller's own `SearchError` (the
/// WIT variant as its bindings name it: guest and host each have one).
#[macro_export]
macro_rules! search_error_message {
    ($error:expr) => {{
        use $crate::ErrorKind as K;
        let (kind, detail) = match $error {
            SearchError::InvalidArgument(m) => (K::InvalidArgument, m),
            SearchError::InvalidPattern(m) => (K::InvalidPattern, m),
            SearchError::NotFound(p) => (K::NotFound, p),
            SearchError::OutsideWorkspace(p) => (K::OutsideWorkspace, p),
            SearchError::Denied(p) => (K::Denied, p),
            SearchError::BinaryFile(p) => (K::BinaryFile, p),
            SearchError::TooLarge(p) => (K::TooLarge, p),
            SearchError::Io(m) => (K::Io, m),
        };
        $crate::error_message(kind, detail)
    }};
}
