//! Redaction (see docs/safety.md, item 4): secrets in returned text —
//! match lines, context, read content, structural matches — are replaced by
//! `[REDACTED]` before anything leaves the component.
//!
//! One pass serves every operation: [`redact_lines`] takes whole lines of a
//! file's text and the [`LOOKBACK`] bytes before them, and decides each line
//! from that line and the `LOOKBACK` bytes before *it* only. So a line comes
//! out the same whether it is asked for alone (search context), in a block (a
//! match, a read range) or inside a whole file (structural search). Pure: it
//! opens no file.
//!
//! **It never touches code** (SPEC §3.3): a value is a secret only when it is
//! a literal — quoted, or a bare word after `=`, `:` or a netrc/CLI keyword —
//! never an expression, a call, an identifier, a path, a placeholder or
//! prose; and it has a known format or is long and random enough. Every edit
//! names its [`Rule`]; the host may switch rules off ([`set_disabled`]);
//! [`table_fingerprint`] hashes what decides it all, for the index.
//!
//! # Modules
//! - `rules`: the rule names, switching them off, the fingerprint.
//! - `formats`: **the table of known formats** ([`formats::FORMATS`]: rule,
//!   keywords as a prefilter, pattern, entropy floor, checksum, context
//!   word), scanned as one automaton; the credential after `Bearer`/`Basic`/
//!   `Authorization: token`; the password of `scheme://user:pass@host`.
//! - `keyblock`: private-key blocks over lines (context no row can express).
//! - `assign`: secret-named keys on a line, their operator and value.
//! - `values`: whether a value is a secret (literal or code, name, prose,
//!   placeholder, entropy).
//! - `continued`: values on the lines after their key (YAML, `KEY = (`).
//! - `netrc`: `machine … password VALUE`, `--password VALUE`.
//! - `prefilter`: the lines each rule within a line has to read (those
//!   holding a literal every match of the rule holds), found in one pass,
//!   sixteen bytes at a time on wasm; the other lines are not read by it.
//!
//! # What is covered
//! - **Known formats**, anywhere in a line (the table): AWS access key ids,
//!   GitHub tokens (`ghp_` `gho_` `ghu_` `ghs_` `ghr_`, with their CRC-32
//!   checksum, and `github_pat_`), GitLab (`glpat-` `gldt-` `glrt-` `glcbt-`
//!   `glptt-` `glft-` `glimt-` `glagent-` `gloas-` `glsoat-` `GR1348941`),
//!   Slack tokens and webhook paths, Stripe `sk_`/`rk_` and `whsec_`, Google
//!   `AIza…` and `GOCSPX-`, GCP service-account `"private_key_id"`, npm
//!   `npm_`, PyPI, Hugging Face, SendGrid, DigitalOcean, Shopify, age, Vault
//!   (`hvs.` `hvb.`, and `s.` on a line that says vault), OpenAI
//!   (`…T3BlbkFJ…`, `sk-proj-`) and Anthropic (`sk-ant-api03-`) keys, other
//!   `sk-` keys with digits, Azure storage `AccountKey=` and Entra client
//!   secrets (`…8Q~…`), JWTs, base64-encoded PEM private keys; the credential
//!   after an auth scheme (not a challenge's `realm="…"`); a URL's password
//!   (8 bytes or more once percent-decoded, and not its user's name:
//!   `a:b@`, `foo:bar@`, `test:test@` are a parser's test vectors).
//!   A match under its row's entropy floor is a placeholder
//!   (`ghp_xxxx…`) unless its checksum holds.
//! - **Private-key blocks** (`-----BEGIN … PRIVATE KEY-----`, PGP, SSH2): every
//!   body line, plain, commented out (`# `, `// `, ` * `…), written as string
//!   literals (`"MII…\n" +`, `+ "…"`, `'…'`, `b"…"`, JSON `"…\n",`), indented
//!   in a YAML block scalar, or all on one line with escaped newlines; the
//!   short last line too. Markers and PEM headers stay visible. A line is in a
//!   block when, within its window, a BEGIN marker ends its line (nothing but
//!   quotes and punctuation after it) and every line since is body, a
//!   `Header: value` line or blank: code that only mentions a marker opens
//!   no block.
//! - **Values of secret-named keys**, our own code covering gitleaks'
//!   `generic-api-key` rule. The key's name holds `access`, `auth`, `api` (a
//!   word part, not `rapid`), `credential`, `creds`, `key`, `pass` (a word
//!   part, not `bypass`), `password`/`passwd`/`passphrase`, `pwd` (not the
//!   shell's `$PWD`), `secret`, `token` or `bearer`, and is not named like a
//!   non-secret (gitleaks' allowlist, extended: `keyboard`, `author`,
//!   `public_key`, `key_id`, `token_url`, `max_tokens`, `password_length`…).
//!   Then an operator: `=`, `:`, `:=`, `::=`, `:::=`, `?=`, `=>`; `==`, `!=`,
//!   `.=`, `+=`, `||` before a quoted literal only (`token.typ != X_TOKEN`
//!   is code); `,` after a quoted key (`setProperty("API_TOKEN", "…")`,
//!   literal values only) or XML `<apiToken>…</apiToken>`; also `<add
//!   key="ApiKey" value="…"/>` and `<entry key="password">…</entry>`. Then
//!   the value: quoted any way (`"`, `'`, backtick, `\"`, prefixes, triple
//!   quotes, the first literal of a list, literals joined by `+`); unquoted
//!   after a key that starts its line (`.env`, YAML, INI), the rest of the
//!   line less a ` #` comment; unquoted mid-line, up to a space or `,;&#)]}`
//!   or a quote. An unquoted value is one word: a blank or a quote in it makes
//!   it code or prose (`eof_token: EOF@1..2 "" [..]`). A key's value (not a
//!   password's) is token characters only (`\w.=+/~-@:!#*^%&$`, as gitleaks'
//!   generic rule): a comma, bracket, quote or backslash makes it a list, a
//!   tag or code. It is redacted when it is 10 bytes or more and has Shannon
//!   entropy ≥ 3.5 bits per byte (gitleaks' thresholds; 3.0 for password
//!   keys, whose values people choose), unless it is plainly not a secret: a
//!   placeholder (`${VAR}` — but not `${VAR:-default}` —, `$VAR`, `{{ x }}`,
//!   `%VAR%`, `<your-token>`, `xxxx`, `null`, `abc123...`…), letters and
//!   separators only (gitleaks; for a password key that is not code, only if
//!   it holds a word like `your`, `example`, `changeme`), a name (words joined
//!   by `_ - . / : # @`, each of one case with at most one run of digits, or
//!   an identifier: `X_KEY_EX_HDR_TYPE`, `diffie-hellman-group14-sha256`), a
//!   code expression (`self.next_token()`, `x?`, `x.(T)`, `quote! {`,
//!   `os.environ["X"]`, `Option<String>`, `a.b`, `Field: name,`), a regular
//!   expression, a URL, a file path, `host:port`, an SSH public key, prose,
//!   or mostly punctuation.
//! - **Values on the lines after their key**: the lines of a YAML block scalar
//!   (`key: |`, `key: >-`), a YAML value or list of values indented under
//!   `password:` (the key starting its line), and string literals continued
//!   under `KEY = (`, `KEY = \` or a triple quote (without commas: a list is
//!   not a value); the same value checks apply.
//! - **Passwords without an operator**: netrc's `password VALUE` after
//!   `machine`/`login`/`default` on its line or under netrc lines (a heredoc),
//!   `--password VALUE` (any long option naming a secret) on a command
//!   line, and `-pVALUE`/`-p'VALUE'` after a MySQL or MariaDB client; the
//!   checks of a password's value apply.
//!
//! # What is not
//! - A secret with no marker, no known format and no secret-named key: a bare
//!   random string, a key split over lines without markers, a password in
//!   prose or attached to a short option of other tools, key formats
//!   without PEM markers (PuTTY `.ppk`, JWK `"d"` members).
//! - Values gitleaks' thresholds let through: under 10 bytes
//!   (`password: hunter2`), low entropy, letters only and unquoted
//!   (`password: correcthorsebattery`), two or more plain words, a name of
//!   words (`"my-secret-value"`), a bare value with a blank in it.
//! - Unquoted values in mid-line stop at a space or `,;&#)]}`; a URL password
//!   stops at `/`, `?`, `#` or a space; a literal inside a call
//!   (`password = hash("…")`) is code, not a value.
//! - Names are trusted: `public_key = <a private key's bytes>` shows.
//! - A value more than 64 lines below its key, or a key-block line more than
//!   [`LOOKBACK`] bytes after its BEGIN marker (real keys are under 16 KiB).
//!   A full window's first line may be cut, so it is never read.
//!
//! # What redaction cannot hide
//! Redaction edits the text that is returned; matching is the caller's. A
//! caller that matches a pattern against the raw line tells, by finding the
//! line or not, whether a hidden value matches (one bit per search: enough to
//! recover a value by guessing it a prefix at a time). Callers must match
//! against the redacted line, so that a redacted value matches only as
//! `[REDACTED]`. Where marks sit and how many there are still show; what
//! they hide, and its length, do not.
//!
//! Works on raw bytes and returns the edits so callers can move spans
//! (submatches) along with [`remap`]. Patterns are ASCII-only and each is
//! compiled on first use (the guest is instantiated per call); the keyword
//! scan and name lists are plain code. A line with no keyword, marker or
//! token prefix costs a few scans.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::bytes::Regex;

pub const MARK: &[u8] = b"[REDACTED]";

/// How many bytes of the text before a range callers pass as `before` to
/// [`redact_lines`]: enough to hold a private-key block of any common key
/// (an 8192-bit RSA PEM is under 7 KiB, as string literals under 8 KiB) from
/// its BEGIN line to any of its body lines, with room to spare.
pub const LOOKBACK: usize = 64 * 1024;

/// One replacement: `start..end` of the input became `MARK`, by `rule`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub rule: Rule,
}

/// Redacts `text`, which is whole lines of a file's text: it starts at a
/// line start and ends at a line end or at the end of the file.
///
/// `before` is the file's text just before `text`: its last [`LOOKBACK`]
/// bytes, or all of it when there are fewer (then `before` starts the file;
/// empty at the start of the file). It ends with a newline unless empty, and
/// may begin mid-line when cut (a longer `before` is cut to `LOOKBACK`).
/// "Text" is what the operation shows: for a UTF-16 file, its UTF-8
/// transcoding, in the same coordinates as `text`.
///
/// Returns the redacted `text` (never `before`) and the edits made, in
/// `text`'s coordinates, sorted and disjoint, each inside one line. Each
/// line's answer depends only on that line and the `LOOKBACK` bytes before
/// it, so it is the same whichever operation asks and however the lines are
/// grouped — provided callers pass the full lookback.
pub fn redact_lines(before: &[u8], text: &[u8]) -> (Vec<u8>, Vec<Edit>) {
    redact_lines_at(before, text, before.len() as u64, &mut Memo::default())
}

/// [`redact_lines`] for a caller that redacts many ranges of one file's
/// text: `text` starts at byte `at` of it, and `memo` (one per file) keeps
/// what was learned of the lines before, so a value's walk up to its key
/// does not recompute it for every line below.
pub fn redact_lines_at(before: &[u8], text: &[u8], at: u64, memo: &mut Memo) -> (Vec<u8>, Vec<Edit>) {
    let edits = edits_at(before, text, at, memo);
    (apply(text, &edits), edits)
}

/// The edits [`redact_lines_at`] makes, without the redacted copy.
pub fn edits_at(before: &[u8], text: &[u8], at: u64, memo: &mut Memo) -> Vec<Edit> {
    find(before, text, at, memo)
}

/// The redactions of a whole file's `text` ([`redact_lines`] without the
/// redacted copy).
pub fn edits(text: &[u8]) -> Vec<Edit> {
    find(b"", text, 0, &mut Memo::default())
}

/// `text` with `edits` (in order, from [`edits`] or [`redact_lines`]) made.
pub fn apply(text: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut at = 0;
    for e in edits {
        out.extend_from_slice(&text[at..e.start]);
        out.extend_from_slice(MARK);
        at = e.end;
    }
    out.extend_from_slice(&text[at..]);
    out
}

/// Where byte offset `pos` of the redacted text was in the original: the
/// inverse of [`remap`]. A position inside a mark goes to the start of what
/// it replaced (or, with `end_side`, to its end).
pub fn unmap(pos: usize, edits: &[Edit], end_side: bool) -> usize {
    let mut shift: isize = 0;
    for e in edits {
        let mark_start = (e.start as isize + shift) as usize;
        if pos <= mark_start {
            break;
        }
        if pos < mark_start + MARK.len() {
            return if end_side { e.end } else { e.start };
        }
        shift += MARK.len() as isize - (e.end - e.start) as isize;
    }
    (pos as isize - shift) as usize
}

/// Where byte offset `pos` of the original text lands after `edits`. A
/// position inside a redacted range moves to the start of its mark (or, with
/// `end_side`, to its end).
pub fn remap(pos: usize, edits: &[Edit], end_side: bool) -> usize {
    let mut shift: isize = 0;
    for e in edits {
        if pos <= e.start {
            break;
        }
        let mark_start = (e.start as isize + shift) as usize;
        if pos < e.end {
            return if end_side { mark_start + MARK.len() } else { mark_start };
        }
        shift += MARK.len() as isize - (e.end - e.start) as isize;
    }
    (pos as isize + shift) as usize
}

/// A pattern compiled when first used: a call compiles only what its text
/// needs (the guest is instantiated per call, so this is paid per call).
/// ASCII only (`(?-u)`): Unicode classes cost milliseconds to compile in
/// wasm. No pattern can match a newline, so running one over many lines
/// finds what it finds in each line alone.
macro_rules! regex {
    ($(#[$doc:meta])* $name:ident, $src:ident = $($pat:expr),+ $(,)?) => {
        pub(super) const $src: &str = concat!($($pat),+);
        $(#[$doc])*
        pub(super) fn $name() -> &'static Regex {
            static R: OnceLock<Regex> = OnceLock::new();
            R.get_or_init(|| Regex::new($src).unwrap())
        }
    };
}

mod assign;
#[cfg(test)]
mod code_lines_test;
mod continued;
mod formats;
mod keyblock;
mod netrc;
mod prefilter;
#[cfg(test)]
mod prefilter_test;
#[allow(dead_code)] // rule_names, set_disabled, table_fingerprint: for the host and the index
mod rules;
mod values;

use assign::*;
pub use continued::Memo;
use continued::*;
use formats::*;
use keyblock::*;
use rules::Enabled;
#[allow(unused_imports)] // for the host's configuration and the index
pub use rules::{rule_names, set_disabled, table_fingerprint, Rule};
use values::*;

static PASSWORD_FINDER: OnceLock<memchr::memmem::Finder<'static>> = OnceLock::new();
static DASHES_FINDER: OnceLock<memchr::memmem::Finder<'static>> = OnceLock::new();
static MYSQL_FINDER: OnceLock<memchr::memmem::Finder<'static>> = OnceLock::new();
static MYSQL_NAME_FINDER: OnceLock<memchr::memmem::Finder<'static>> = OnceLock::new();
static MARIADB_FINDER: OnceLock<memchr::memmem::Finder<'static>> = OnceLock::new();

/// A searcher for `needle`, built once (`memmem::find` builds one per call).
fn finder(
    cell: &'static OnceLock<memchr::memmem::Finder<'static>>,
    needle: &'static [u8],
) -> &'static memchr::memmem::Finder<'static> {
    cell.get_or_init(|| memchr::memmem::Finder::new(needle))
}

/// Where a needle is next in a text, for lines asked in order: whether a
/// line holds it, without a search of every line.
struct Next {
    cell: &'static OnceLock<memchr::memmem::Finder<'static>>,
    needle: &'static [u8],
    /// The first place at or after the last line's start where the needle
    /// is (`usize::MAX`: none); `None` before the first line.
    at: Option<usize>,
}

impl Next {
    fn new(cell: &'static OnceLock<memchr::memmem::Finder<'static>>, needle: &'static [u8]) -> Next {
        Next { cell, needle, at: None }
    }

    /// Whether `text[start..end]` holds the needle, `start` at or after the
    /// last line's. The needle holds no newline or carriage return, so this
    /// is whether the line's content does.
    fn in_line(&mut self, text: &[u8], start: usize, end: usize) -> bool {
        if self.at.is_none_or(|at| at < start) {
            let found = finder(self.cell, self.needle).find(&text[start..]);
            self.at = Some(found.map_or(usize::MAX, |i| start + i));
        }
        self.at.is_some_and(|at| at.saturating_add(self.needle.len()) <= end)
    }
}

/// Whether `hay` contains `needle`, ASCII case aside.
fn contains_ci(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle))
}

/// Everything [`table_fingerprint`] hashes besides the rule names.
#[allow(dead_code)]
fn table_parts() -> Vec<String> {
    let mut parts: Vec<String> = [
        AUTH_PAT,
        URL_PAT,
        MARKER_PAT,
        ATTR_PAT,
        PLACEHOLDER_PAT,
        SHELL_DEFAULT_PAT,
        REGEXY_PAT,
        INTERP_PAT,
        NOT_SECRET_PAT,
        ANYWHERE,
        PASSWORD,
        DUMMY_WORDS,
        KEYWORDS,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    parts.push(table_text());
    parts.extend(BEFORE.iter().chain(AFTER.iter()).map(|(a, b)| format!("{a}:{b}")));
    parts.push(format!("{MIN_VALUE_LEN} {GENERIC_ENTROPY} {PASSWORD_ENTROPY} {MAX_VALUE_LINES} {LOOKBACK}"));
    parts
}

/// Shannon entropy in bits per byte.
fn entropy(s: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for &b in s {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts.iter().filter(|&&c| c > 0).map(|&c| -(c as f64 / n) * (c as f64 / n).log2()).sum()
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r')
}

fn trim(s: &[u8]) -> &[u8] {
    let a = s.iter().position(|&b| !is_space(b)).unwrap_or(s.len());
    let b = s.iter().rposition(|&b| !is_space(b)).map_or(a, |i| i + 1);
    &s[a..b]
}

fn indent(line: &[u8]) -> usize {
    line.iter().take_while(|&&b| b == b' ' || b == b'\t').count()
}

/// The first newline in `s`, eight bytes at a time (`memchr` is not a
/// dependency of this crate; lines are scanned for every call).
fn newline(s: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = LO * b'\n' as u64;
    let mut chunks = s.chunks_exact(8);
    let mut at = 0;
    for c in &mut chunks {
        let x = u64::from_le_bytes(c.try_into().unwrap()) ^ NL;
        let found = x.wrapping_sub(LO) & !x & HI;
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    chunks.remainder().iter().position(|&c| c == b'\n').map(|i| at + i)
}

/// The last newline in `s`.
fn newline_back(s: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = LO * b'\n' as u64;
    let mut end = s.len();
    while end >= 8 {
        let x = u64::from_le_bytes(s[end - 8..end].try_into().unwrap()) ^ NL;
        if x.wrapping_sub(LO) & !x & HI != 0 {
            return s[end - 8..end].iter().rposition(|&c| c == b'\n').map(|i| end - 8 + i);
        }
        end -= 8;
    }
    s[..end].iter().rposition(|&c| c == b'\n')
}

/// A line without its newline (and carriage return).
fn content(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

// The file around `text`: `before` then `text`, in one coordinate space.

struct Doc<'a> {
    before: &'a [u8],
    text: &'a [u8],
}

impl<'a> Doc<'a> {
    /// Bytes `a..b`, which lie in one part (lines never straddle: `before`
    /// ends with a newline).
    fn slice(&self, a: usize, b: usize) -> &'a [u8] {
        let n = self.before.len();
        if b <= n {
            &self.before[a..b]
        } else {
            &self.text[a.max(n) - n..b - n]
        }
    }

    /// The first newline in `a..b`.
    fn newline_in(&self, a: usize, b: usize) -> Option<usize> {
        let n = self.before.len();
        if a < n {
            if let Some(i) = newline(&self.before[a..b.min(n)]) {
                return Some(a + i);
            }
        }
        if b > n {
            let from = a.max(n);
            return newline(&self.text[from - n..b - n]).map(|i| from + i);
        }
        None
    }

    /// The start of the first whole line in the window of the line at `v`:
    /// the `LOOKBACK` bytes before it. A full window may begin mid-line, so
    /// its first line is never used (whatever the byte before it).
    fn window_start(&self, v: usize) -> usize {
        if v < LOOKBACK {
            return 0;
        }
        self.newline_in(v - LOOKBACK, v).map_or(v, |i| i + 1)
    }

    /// The line before the line starting at `v`, if it starts at or after
    /// `lo`: its start and content.
    fn line_before(&self, v: usize, lo: usize) -> Option<(usize, &'a [u8])> {
        if v <= lo {
            return None;
        }
        let end = v - 1; // its newline
        let n = self.before.len();
        let (part, base) = if end < n { (self.before, 0) } else { (self.text, n) };
        let from = lo.max(base) - base;
        let start = newline_back(&part[from..end - base]).map_or(from, |i| from + i + 1) + base;
        Some((start, content(self.slice(start, end))))
    }
}

// Private-key blocks.

/// The ranges of `text` to redact, sorted and disjoint.
fn find(before: &[u8], text: &[u8], at: u64, memo: &mut Memo) -> Vec<Edit> {
    let before = &before[before.len().saturating_sub(LOOKBACK)..];
    // Whole lines only: a `before` that does not end with a newline (against
    // the contract) loses its last, partial line — and where its lines
    // start in the file is not known.
    let whole = newline_back(before).map_or(0, |i| i + 1);
    let base = if whole == before.len() { at.checked_sub(whole as u64) } else { None };
    let before = &before[..whole];
    let doc = Doc { before, text };
    let n = before.len();
    let mut edits = Vec::new();

    // Rules within a line, over the lines that can hold a match of each.
    let gated = prefilter::lines(text);
    format_edits(text, prefilter::gated(&gated, prefilter::FORMAT), &mut edits);
    auth_edits(text, prefilter::gated(&gated, prefilter::AUTH), &mut edits);
    url_edits(text, &mut edits);
    assignment_edits(
        text,
        prefilter::gated(&gated, prefilter::ATTR),
        prefilter::gated(&gated, prefilter::KEYWORD),
        &mut edits,
    );

    let netrc_text = finder(&PASSWORD_FINDER, b"password").find(text).is_some();
    let cli_text = finder(&DASHES_FINDER, b"--").find(text).is_some();
    let mysql_text = finder(&MYSQL_FINDER, b"-p").find(text).is_some()
        && (finder(&MYSQL_NAME_FINDER, b"mysql").find(text).is_some()
            || finder(&MARIADB_FINDER, b"mariadb").find(text).is_some());
    let mut netrc_at = Next::new(&PASSWORD_FINDER, b"password");
    let mut cli_at = Next::new(&DASHES_FINDER, b"--");
    let mut mysql_at = Next::new(&MYSQL_FINDER, b"-p");

    // Rules that look at the lines before: key blocks, values under keys.
    let all_markers: Vec<Marker> = markers(text, n).collect();
    // With no marker in `text` and nothing before it, no line is in a key
    // block (a block opens at a BEGIN marker in a line's window).
    let key_blocks = n > 0 || !all_markers.is_empty() || prefilter::every_line();
    // A value below its key needs its key's line within the
    // `MAX_VALUE_LINES` lines above it: a line that holds a keyword and ends
    // as `dangling_key` needs. The lines of `text` that hold a keyword, by
    // their start, and the last such line passed (its index in `above`).
    let mut keyword_lines = prefilter::gated(&gated, prefilter::KEYWORD).map(|(s, _)| s).peekable();
    let mut last_key: Option<usize> = None;
    let mut mi = 0;
    let mut block: Option<Block> = None;
    let mut above: Vec<(usize, usize)> = Vec::new();
    let mut cache: Vec<Option<Facts>> = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let nl = newline(&text[start..]).map_or(text.len(), |i| start + i);
        let line = content(&text[start..nl]);
        let v = n + start;
        let first = mi;
        while mi < all_markers.len() && all_markers[mi].start < v + line.len() {
            mi += 1;
        }
        let ms = &all_markers[first..mi];
        if key_blocks {
            let mut line_edits = Vec::new();
            let mut known = block;
            key_block_edits(line, v, ms, &mut || *known.get_or_insert_with(|| block_at(&doc, v)), &mut line_edits);
            block = block_after(known, line, ms, v);
            for e in &mut line_edits {
                e.start -= n;
                e.end -= n;
            }
            edits.extend(line_edits);
        }
        // (The walk up from a value looks at the `MAX_VALUE_LINES` lines
        // above it, in `text` alone when it has that many or `before` is
        // empty: then its key's line must be among them.)
        let j = above.len();
        let walk_in_text = (n == 0 || j >= MAX_VALUE_LINES) && !prefilter::every_line();
        if !walk_in_text || last_key.is_some_and(|k| j - k <= MAX_VALUE_LINES) {
            continued_value(&doc, v, line, &above, &mut cache, base, memo, &mut edits);
        }
        // (Every keyword line up to this one taken as this one: were the
        // two ever out of step, values would be walked up from more often,
        // never less.)
        let mut keyword_here = false;
        while keyword_lines.next_if(|&s| s <= start).is_some() {
            keyword_here = true;
        }
        if keyword_here && may_dangle(line) {
            last_key = Some(j);
        }
        if netrc_text && netrc_at.in_line(text, start, nl) {
            netrc::netrc_edits(&doc, v, line, start, &mut edits);
        }
        if cli_text && cli_at.in_line(text, start, nl) {
            netrc::cli_edits(line, start, &mut edits);
        }
        if mysql_text && mysql_at.in_line(text, start, nl) {
            netrc::mysql_edits(line, start, &mut edits);
        }
        above.push((start, nl));
        cache.push(None);
        start = nl + 1;
        // A block opened before the next line's window no longer counts.
        if let Some(Block::Open(b)) = block {
            if start < text.len() && b < doc.window_start(n + start) {
                block = Some(Block::Closed);
            }
        }
    }

    // A switched-off rule makes no edits, and the generic rule does not
    // stand in for it: `github_token = ghp_…` shows whole when
    // `github-token` is off.
    let enabled = Enabled::now();
    let off: Vec<(usize, usize)> = edits.iter().filter(|e| !enabled.on(e.rule)).map(|e| (e.start, e.end)).collect();
    edits.retain(|e| {
        enabled.on(e.rule)
            && !(e.rule == Rule::GENERIC_SECRET_VALUE && off.iter().any(|&(a, b)| a < e.end && e.start < b))
    });
    edits.sort_by_key(|e| (e.start, std::cmp::Reverse(e.end)));
    let mut merged: Vec<Edit> = Vec::with_capacity(edits.len());
    for e in edits {
        match merged.last_mut() {
            Some(last) if e.start < last.end => last.end = last.end.max(e.end),
            _ => merged.push(e),
        }
    }
    merged
}

#[cfg(test)]
mod tests;
