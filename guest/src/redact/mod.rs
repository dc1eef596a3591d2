//! Redaction (see "Safety model" in the README): secrets in returned text —
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
//! # What is covered
//! - **Known formats**, anywhere in a line: AWS access key ids, GitHub tokens
//!   (`ghp_` `gho_` `ghu_` `ghs_` `ghr_` `github_pat_`), GitLab `glpat-`, Slack
//!   `xox[abeoprs]-`/`xapp-` tokens and webhook paths, Stripe `sk_`/`rk_`
//!   (`live`/`test`/`prod`) and `whsec_`, Google `AIza…` and `GOCSPX-`, npm
//!   `npm_`, PyPI, Hugging Face, SendGrid, DigitalOcean, Shopify, age secret
//!   keys, JWTs, OpenAI/Anthropic-style `sk-…` keys, base64-encoded PEM private
//!   keys (`LS0tLS1CRUdJTi…`), the credential after `Bearer`/`Basic`/
//!   `Authorization: token`, and the password of `scheme://user:pass@host`
//!   (the password only).
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
//!   part, not `bypass`), `password`/`passwd`/`passphrase`, `pwd`, `secret`,
//!   `token` or `bearer`, and is not named like a non-secret (gitleaks'
//!   allowlist, extended: `keyboard`, `author`, `public_key`, `key_id`,
//!   `token_url`, `max_tokens`, `password_length`…). Then an operator: `=`,
//!   `:`, `:=`, `::=`, `:::=`, `?=`, `=>`, `==`, `!=`, `.=`, `+=`, `||`, `,`
//!   after a quoted key (`setProperty("API_TOKEN", "…")`, literal values
//!   only) or XML `<apiToken>…</apiToken>`; also `<add key="ApiKey"
//!   value="…"/>` and `<entry key="password">…</entry>`. Then the value:
//!   quoted any way (`"`, `'`, backtick, `\"`, prefixes, triple quotes, the
//!   first literal of a list); unquoted after a key that starts its line
//!   (`.env`, YAML, INI), the rest of the line less a ` #` comment, so
//!   `?,;()<>[]{}&` stay in it; unquoted mid-line, up to a space or
//!   `,;&#)]}` or a quote. It is redacted when it is 10 bytes or more and has
//!   Shannon entropy ≥ 3.5 bits per byte (gitleaks' thresholds; 3.0 for
//!   password keys, whose values people choose), unless it is plainly not a
//!   secret: a placeholder (`${VAR}` — but not `${VAR:-default}` —, `$VAR`,
//!   `{{ x }}`, `%VAR%`, `<your-token>`, `xxxx`, `null`…), letters and
//!   separators only (gitleaks; for a password key that is not code, only if
//!   it holds a word like `your`, `example`, `changeme`), a code expression
//!   (`self.next_token()`, `os.environ["X"]`, `getenv("X")`, `Option<String>`,
//!   `a.b`, `X509SubjectKeyIDExtension`), a regular expression, a URL, a file
//!   path, `host:port`, an SSH public key, prose, or mostly punctuation.
//! - **Values on the lines after their key**: the lines of a YAML block scalar
//!   (`key: |`, `key: >-`), a YAML value or list of values indented under
//!   `password:` (the key starting its line), and string literals continued
//!   under `KEY = (`, `KEY = \` or a triple quote (without commas: a list is
//!   not a value); the same value checks apply.
//!
//! # What is not
//! - A secret with no marker, no known format and no secret-named key: a bare
//!   random string, a key split over lines without markers, a password in
//!   prose or on a command line (`mysql -pSECRET`), key formats without PEM
//!   markers (PuTTY `.ppk`, JWK `"d"` members).
//! - Values gitleaks' thresholds let through: under 10 bytes
//!   (`password: hunter2`), low entropy, letters only and unquoted
//!   (`password: correcthorsebattery`), three or more plain words.
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

#[cfg(test)]
mod code_lines_test;
mod netrc;
#[allow(dead_code)] // rule_names, set_disabled, table_fingerprint: for the host and the index
mod rules;

use rules::Enabled;
#[allow(unused_imports)] // for the host's configuration and the index
pub use rules::{rule_names, set_disabled, table_fingerprint, Rule};

pub const MARK: &[u8] = b"[REDACTED]";

/// How many bytes of the text before a range callers pass as `before` to
/// [`redact_lines`]: enough to hold a private-key block of any common key
/// (an 8192-bit RSA PEM is under 7 KiB, as string literals under 8 KiB) from
/// its BEGIN line to any of its body lines, with room to spare.
pub const LOOKBACK: usize = 64 * 1024;

/// How many lines above a value its key may be (YAML block scalars, lists).
const MAX_VALUE_LINES: usize = 64;

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
    let edits = find(before, text, at, memo);
    if edits.is_empty() {
        return (text.to_vec(), edits);
    }
    let mut out = Vec::with_capacity(text.len());
    let mut at = 0;
    for e in &edits {
        out.extend_from_slice(&text[at..e.start]);
        out.extend_from_slice(MARK);
        at = e.end;
    }
    out.extend_from_slice(&text[at..]);
    (out, edits)
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
        const $src: &str = concat!($($pat),+);
        $(#[$doc])*
        fn $name() -> &'static Regex {
            static R: OnceLock<Regex> = OnceLock::new();
            R.get_or_init(|| Regex::new($src).unwrap())
        }
    };
}

regex! {
    /// Secrets with a format of their own, redacted whole. Lengths are
    /// minimums, to keep the automaton small.
    tokens_re, TOKENS_PAT = r"(?-u)\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b",
    r"|\bgh[pousr]_[A-Za-z0-9]{36,}|\bgithub_pat_[A-Za-z0-9_]{22,}",
    r"|\bglpat-[A-Za-z0-9_-]{20,}",
    r"|\bxox[abeoprs]-[A-Za-z0-9-]{10,}|\bxapp-[0-9]-[A-Za-z0-9-]{10,}",
    r"|hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}",
    r"|\b[rs]k_(?:live|test|prod)_[A-Za-z0-9]{10,}|\bwhsec_[A-Za-z0-9+/=]{24,}",
    r"|\bAIza[0-9A-Za-z_-]{30,}|\bGOCSPX-[A-Za-z0-9_-]{20,}",
    r"|\bnpm_[A-Za-z0-9]{36,}|\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{20,}|\bhf_[A-Za-z]{30,}",
    r"|\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{30,}|\bdop_v1_[a-f0-9]{40,}|\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32,}",
    r"|AGE-SECRET-KEY-1[0-9A-Z]{40,}",
    // A PEM private key, base64-encoded whole (Kubernetes secrets): "-----BEGIN",
    // then "PRIVATE" at any of its three alignments; certificates stay.
    r"|\bLS0tLS1CRUdJTi[A-Za-z0-9+/]{0,40}?(?:UFJJVkFUR|BSSVZBVE|QUklWQVRF)[A-Za-z0-9+/=]*",
    r"|\beyJ[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]*)*",
}

/// The rule of a [`tokens_re`] match, by its prefix.
fn token_rule(s: &[u8]) -> Rule {
    let p = |x: &[u8]| s.starts_with(x);
    match s[0] {
        b'g' if p(b"gh") || p(b"github_pat_") => Rule::GITHUB_TOKEN,
        b'g' => Rule::GITLAB_TOKEN,
        b'x' => Rule::SLACK_TOKEN,
        b'h' if p(b"hooks.") => Rule::SLACK_WEBHOOK,
        b'h' => Rule::HUGGINGFACE_TOKEN,
        b's' if p(b"shp") => Rule::SHOPIFY_TOKEN,
        b'r' | b's' | b'w' => Rule::STRIPE_KEY,
        b'A' if p(b"AIza") => Rule::GOOGLE_API_KEY,
        b'A' if p(b"AGE-") => Rule::AGE_SECRET_KEY,
        b'G' => Rule::GOOGLE_OAUTH_SECRET,
        b'n' => Rule::NPM_TOKEN,
        b'p' => Rule::PYPI_TOKEN,
        b'S' => Rule::SENDGRID_KEY,
        b'd' => Rule::DIGITALOCEAN_TOKEN,
        b'L' => Rule::BASE64_PRIVATE_KEY,
        b'e' => Rule::JWT,
        _ => Rule::AWS_ACCESS_KEY_ID,
    }
}

regex! {
    /// `sk-…` keys (checked for digits: `sk-` starts ordinary words too).
    sk_re, SK_PAT = r"(?-u)\bsk-(?:[a-z]{2,10}-){0,2}[A-Za-z0-9_-]{20,}"
}
regex! {
    /// The credential after an HTTP auth scheme (group 1).
    auth_re, AUTH_PAT = r#"(?-u)(?:\b(?:[Bb]earer|BEARER|[Bb]asic|BASIC)|(?i:authorization)["']?[ \t]*[:=][ \t]*["']?(?i:token))"#,
    r"[ \t]+([A-Za-z0-9._~+/-]{8,}=*)",
}
regex! {
    /// The password of a URL (group 1).
    url_re, URL_PAT = r#"(?i-u)\b[a-z][a-z0-9+.-]{1,30}://[^ \t\r\n:@/?#"'`<>]*:([^ \t\r\n/?#"'`<>]+)@"#
}
regex! {
    /// Private-key block markers.
    marker_re, MARKER_PAT = r"(?-u)-{4,5} ?(?:BEGIN|END)[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)? ?-{4,5}"
}
regex! {
    /// A name and value given as attributes or element text:
    /// `<add key="ApiKey" value="…"/>`, `<entry key="password">…</entry>`.
    attr_re, ATTR_PAT = r#"(?i-u)\b(?:key|name)[ \t]*=[ \t]*["']([A-Za-z0-9_.:-]+)["']"#,
    r#"(?:[ \t]+value[ \t]*=[ \t]*(?:"([^"\n]*)"|'([^'\n]*)')|[ \t]*>([^<\n]*)<)"#,
}
regex! {
    /// Whole values that stand for a value rather than being one.
    placeholder_re, PLACEHOLDER_PAT = r"(?i-u)^(?:\$\{[^}]*\}|\$\([^)]*\)|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9]+|\$\{\{.*\}\}|\{\{.*\}\}",
    r"|%[A-Za-z_][A-Za-z0-9_]*%|@[A-Za-z_][A-Za-z0-9_]*@|<[^<>]*>|\[[A-Za-z _-]*\]|%[+# 0-]?[a-z]|\{[0-9]{0,2}\}",
    r"|x+|\*+|\.+|#+|-+|_+|0+|null|nil|none|undefined|true|false)$",
}
regex! {
    /// A shell default, `${VAR:-value}`: the value is literal.
    shell_default_re, SHELL_DEFAULT_PAT = r"(?-u)\$\{[A-Za-z_][A-Za-z0-9_]*:?[-=]"
}
regex! {
    /// Regular expressions (`[a-z0-9]`, `\w`, `(?:`).
    regexy_re, REGEXY_PAT = r"(?-u)a-z|A-Z|0-9|\\[wdsbWDSB]|\[\^|\(\?[:=!<P]"
}
regex! {
    /// Interpolations inside a value (`${X}`, `{{ x }}`, `{name}`, `%s`).
    interp_re, INTERP_PAT = r"(?-u)\$\{[^}]*\}|\{\{[^}]*\}\}|\$\([^)]*\)|\{[^{}]*\}|%(?:\([A-Za-z_]+\))?[-+ #0-9]*[sdifxXrv]"
}
regex! {
    /// URLs, file paths, SSH public keys, `host:port`.
    not_secret_re, NOT_SECRET_PAT = r"(?-u)^(?:[A-Za-z][A-Za-z0-9+.-]*://.*",
    r"|(?:~|\.\.?)/[A-Za-z0-9_.@~+ /\\-]*|[A-Za-z]:\\[A-Za-z0-9_.@~+ /\\-]*",
    r"|/(?:bin|etc|home|opt|tmp|usr|var|run|srv|mnt|dev|proc|sys|root|Users|Library|Volumes|private|secrets?",
    r"|data|app|config|workspace|media|certs?|keys?)(?:/[A-Za-z0-9_.@~+ -]*)*",
    r"|[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*\.(?:json|ya?ml|pem|key|crt|cer|der|txt|p12|pfx|jks|keystore|env|ini",
    r"|conf|cfg|toml|xml|properties|gpg|asc|pub|gz|tgz|zip|tar|whl|jar|so|dll|exe|html?|md|rs|py|js|ts|go|c|h",
    r"|cpp|java|png|jpe?g|svg|css|lock|log|csv)",
    r"|(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp[0-9]+|sk-ssh-ed25519@openssh\.com)[ \t].*",
    r"|[A-Za-z0-9.-]+:[0-9]{1,5})$",
}

/// Whether `hay` contains `needle`, ASCII case aside.
fn contains_ci(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle))
}

/// The keywords of secret-named keys (what [`keywords`] finds).
#[allow(dead_code)] // hashed by table_fingerprint
const KEYWORDS: &str = "access auth api bearer credential creds key password passwd passphrase pass pwd secret token";

/// The first two letters of each keyword (lower case), a bit per pair.
static KEYWORD_STARTS: [u64; 1024] = {
    let starts: [&[u8; 2]; 10] = [b"ac", b"au", b"ap", b"be", b"cr", b"ke", b"pa", b"pw", b"se", b"to"];
    let mut bits = [0u64; 1024];
    let mut k = 0;
    while k < starts.len() {
        let pair = (starts[k][0] as usize) << 8 | starts[k][1] as usize;
        bits[pair >> 6] |= 1 << (pair & 63);
        k += 1;
    }
    bits
};

/// The keywords of secret-named keys in `text`, leftmost first, as the
/// pattern `access|auth|api|credential|creds|key|pass(w(or)?d|phrase)?|pwd|
/// secret|token|bearer` (ASCII case aside) would find them; plain code, so
/// nothing to compile.
fn keywords(text: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        // (Every keyword is 3 bytes or more: its first two, either case,
        // are looked up before any is compared.)
        while i + 1 < text.len() {
            let at = i;
            i += 1;
            let pair = usize::from(text[at] | 0x20) << 8 | usize::from(text[i] | 0x20);
            if KEYWORD_STARTS[pair >> 6] >> (pair & 63) & 1 == 0 {
                continue;
            }
            // By first letter, in the pattern's order (`password` before `pass`).
            let words: &[&[u8]] = match text[at] | 0x20 {
                b'a' => &[b"access", b"auth", b"api"],
                b'b' => &[b"bearer"],
                b'c' => &[b"credential", b"creds"],
                b'k' => &[b"key"],
                b'p' => &[b"password", b"passwd", b"passphrase", b"pass", b"pwd"],
                b's' => &[b"secret"],
                b't' => &[b"token"],
                _ => continue,
            };
            let rest = &text[at..];
            if let Some(w) = words.iter().find(|w| rest.len() >= w.len() && rest[..w.len()].eq_ignore_ascii_case(w)) {
                i = at + w.len();
                return Some((at, i));
            }
        }
        None
    })
}

// Names that are not secrets (see `harmless_name`): anywhere in the name.
const ANYWHERE: &str = "authorit unauthori accessib accessor keyboard keyword keystroke keyframe keypress keycode \
    keypad keyup keydown keymap keying keyspace keyof monkey donkey turkey hockey jockey whiskey lackey hotkey \
    issuerkeyhash usersecretsid csrf xsrf tokeniz tokenis withcredentials";
// Words before `key`/`keys` or `token`/`tokens` that end the name's word.
const BEFORE: [(&str, &str); 2] = [
    (
        "key",
        "public pub primary foreign sort partition hash bucket cache idempotency schema sequence natural lookup \
        index idx unique composite row column object i18n translation shard routing dedup dedupe react dict map \
        group event message node websocket",
    ),
    (
        "token",
        "max min num total prompt completion output input next prev page pagination continuation sync cancel \
        cancellation stop special bos eos pad unk sep mask cls public",
    ),
];
// Words after a keyword (and an `s`, and a separator) that end a word.
const PASSWORD: &str = "length len policy field input label hint prompt reset strength min max regex pattern rule \
    rules validator placeholder file path env command cmd manager store encoder type mode expiry expires \
    expiration required visible visibility forgot update";
const AFTER: [(&str, &str); 8] = [
    ("access", "id ids level log mode type control modifier list right rights policy count time"),
    (
        "api",
        "id ids name names version ver url uri endpoint host base path prefix group server port doc docs spec \
        route module status",
    ),
    (
        "key",
        "alias id ids length len mesh name names pair selector signature size store storetype tab file path type \
        vault usage algorithm alg format spec prefix count bits version ref arn url uri location dir directory fn \
        func function field column index up down left right press pressed code event binding bindings handler \
        listener exchange",
    ),
    (
        "secret",
        "length len name names size ref arn manager store provider path file dir mount volume type version count",
    ),
    (
        "token",
        "url uri endpoint file path type count length len index idx kind name names id ids expire expires expiry \
        expiration ttl lifetime limit size stream start end pos position span list budget usage",
    ),
    ("credential", "id ids url uri endpoint file path provider type source helper process store scope"),
    ("password", PASSWORD),
    ("passwd", PASSWORD),
];

/// gitleaks' generic rule: a value of a secret-named key is 10 bytes or more
/// with Shannon entropy of 3.5 bits per byte or more (3.0 for passwords).
const MIN_VALUE_LEN: usize = 10;
const GENERIC_ENTROPY: f64 = 3.5;
const PASSWORD_ENTROPY: f64 = 3.0;

/// Everything [`table_fingerprint`] hashes besides the rule names.
#[allow(dead_code)]
fn table_parts() -> Vec<String> {
    let mut parts: Vec<String> = [
        TOKENS_PAT,
        SK_PAT,
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
    parts.extend(BEFORE.iter().chain(AFTER.iter()).map(|(a, b)| format!("{a}:{b}")));
    parts.push(format!("{MIN_VALUE_LEN} {GENERIC_ENTROPY} {PASSWORD_ENTROPY} {MAX_VALUE_LINES} {LOOKBACK}"));
    parts
}

/// Whether a name that holds a keyword names something that is not a
/// secret (after gitleaks' allowlist for its generic rule): `keyboard`,
/// `author`, `public_key`, `key_id`, `token_url`, `max_tokens`,
/// `password_length`… A word ends at a non-letter, the end, or a capital.
fn harmless_name(name: &[u8]) -> bool {
    // The shell's working directory.
    if name == b"PWD" || name == b"OLDPWD" {
        return true;
    }
    let words = |list: &'static str| list.split_ascii_whitespace().map(str::as_bytes);
    let at = |i: usize, w: &[u8]| name.len() >= i + w.len() && name[i..i + w.len()].eq_ignore_ascii_case(w);
    // A word ends where no lowercase letter follows (a capital starts the
    // next word of a camelCase name).
    let ends = |i: usize| !name.get(i).is_some_and(|c| c.is_ascii_lowercase());
    let sep = |i: usize| usize::from(matches!(name.get(i), Some(b'_' | b'.' | b'-')));
    let plural = |i: usize| usize::from(name.get(i).is_some_and(|c| c.eq_ignore_ascii_case(&b's')));
    // (The list split once; the name lowered once.)
    static ANYWHERE_WORDS: OnceLock<Vec<&'static [u8]>> = OnceLock::new();
    let lower = name.to_ascii_lowercase();
    let anywhere = ANYWHERE_WORDS.get_or_init(|| words(ANYWHERE).collect());
    if anywhere.iter().any(|w| lower.windows(w.len()).any(|x| x == *w)) {
        return true;
    }
    for i in 0..name.len() {
        if at(i, b"author") && !name.get(i + 6).is_some_and(|c| c.eq_ignore_ascii_case(&b'i')) {
            return true;
        }
        let word_start = i == 0 || !name[i - 1].is_ascii_alphabetic();
        if word_start && (at(i, b"rapid") || at(i, b"capital")) {
            return true;
        }
        if at(i, b"random") && at(i + 6 + sep(i + 6), b"access") {
            return true;
        }
        // A stem at `i` that ends its word, a listed word right before it
        // (or before one separator).
        for (stem, before) in BEFORE {
            let (stem, n) = (stem.as_bytes(), stem.len());
            if !at(i, stem) || !ends(i + n + plural(i + n)) {
                continue;
            }
            let ends_with = |end: usize, w: &[u8]| end >= w.len() && at(end - w.len(), w);
            if words(before).any(|w| ends_with(i, w) || sep(i.wrapping_sub(1)) == 1 && ends_with(i - 1, w)) {
                return true;
            }
        }
        for (stem, after) in AFTER {
            if !at(i, stem.as_bytes()) {
                continue;
            }
            let mut j = i + stem.len();
            if !at(j, b"size") {
                j += plural(j);
            }
            j += sep(j);
            if words(after).any(|w| at(j, w) && ends(j + w.len())) {
                return true;
            }
        }
    }
    false
}

/// Whether a letters-only password value reads as a placeholder.
const DUMMY_WORDS: &str = "your example sample placeholder change dummy redacted secret passw here xxx todo fixme \
    replace insert enter fake test none null undefined default empty hidden masked";

fn dummy_word(v: &[u8]) -> bool {
    DUMMY_WORDS.split_ascii_whitespace().any(|w| contains_ci(v, w.as_bytes()))
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

// ---------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------
// Private-key blocks.

/// Whether a line leaves the next one inside a private-key block (opened by
/// the BEGIN marker at this offset), outside one, or unknown yet.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Block {
    Closed,
    Open(usize),
}

#[derive(Clone, Copy, Debug)]
struct Marker {
    start: usize,
    end: usize,
    begin: bool,
}

fn markers(text: &[u8], base: usize) -> impl Iterator<Item = Marker> + '_ {
    marker_re().find_iter(text).map(move |m| {
        let begin = m.as_bytes().iter().find(|&&c| c != b'-' && c != b' ') == Some(&b'B');
        Marker { start: base + m.start(), end: base + m.end(), begin }
    })
}

/// `s` without what surrounds a key-body line written as a string literal,
/// list item or comment: indentation, quotes, string prefixes (`b"`, `r'`,
/// `@"`), escaped newlines, concatenation or separator punctuation, and
/// comment leaders (`#`, `//`, `*`, `;`, `--`, `>`). Returns the range of
/// what is left.
fn core(s: &[u8]) -> (usize, usize) {
    let (mut a, mut b) = (0, s.len());
    let sep = |c: u8| matches!(c, b' ' | b'\t' | b'"' | b'\'' | b'`');
    loop {
        while a < b && is_space(s[a]) {
            a += 1;
        }
        if a < b && matches!(s[a], b'"' | b'\'' | b'`') {
            a += 1;
        } else if a + 2 < b && s[a..].starts_with(b"\\\\n") {
            a += 3;
        } else if a + 1 < b && s[a] == b'\\' && matches!(s[a + 1], b'n' | b'r' | b't' | b'"' | b'\'' | b'\\') {
            a += 2;
        } else if a < b && matches!(s[a], b'+' | b',' | b'.' | b'(' | b'-') && (a + 1 == b || sep(s[a + 1])) {
            a += 1;
        } else if let Some(p) = string_prefix(&s[a..b]) {
            a += p;
        } else if let Some(p) = [&b"//"[..], b"--", b"#", b"*", b";", b">"]
            .into_iter()
            .find(|c| s[a..b].starts_with(c) && (a + c.len() == b || is_space(s[a + c.len()])))
        {
            a += p.len();
        } else {
            break;
        }
    }
    loop {
        while b > a && is_space(s[b - 1]) {
            b -= 1;
        }
        if b > a && matches!(s[b - 1], b'"' | b'\'' | b'`' | b',' | b';' | b')' | b'\\') {
            b -= 1;
        } else if b >= a + 2 && s[b - 2] == b'\\' && matches!(s[b - 1], b'n' | b'r' | b't') {
            b -= 2;
        } else if b > a && matches!(s[b - 1], b'+' | b'.') && (b - 1 == a || sep(s[b - 2])) {
            b -= 1;
        } else {
            break;
        }
    }
    (a, b)
}

/// The length of a string-literal prefix (`b`, `r`, `rb`, `u8`, `@`…) at the
/// start of `s`, when a quote follows it.
fn string_prefix(s: &[u8]) -> Option<usize> {
    let n = s
        .iter()
        .take(3)
        .take_while(|&&c| matches!(c, b'b' | b'B' | b'r' | b'R' | b'u' | b'U' | b'f' | b'F' | b'8' | b'@'))
        .count();
    (n > 0 && n <= 2 && matches!(s.get(n), Some(b'"' | b'\''))).then_some(n)
}

/// Base64 (with escaped newlines between pieces), as a key body is.
fn body_shaped(c: &[u8]) -> bool {
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'+' | b'/' | b'=' => i += 1,
            b'\\' if matches!(c.get(i + 1), Some(b'n' | b'r')) => i += 2,
            _ => return false,
        }
    }
    !c.is_empty()
}

/// A PEM or PGP armor header (`Proc-Type: 4,ENCRYPTED`, `Version: …`).
fn header_line(c: &[u8]) -> bool {
    let name = c.iter().take_while(|&&b| b.is_ascii_alphanumeric() || b == b'-').count();
    name > 0 && c[0].is_ascii_alphabetic() && c.get(name) == Some(&b':')
}

/// Whether a line can sit inside a key block without ending it.
fn block_line(line: &[u8]) -> bool {
    let (a, b) = core(line);
    let c = &line[a..b];
    c.is_empty() || body_shaped(c) || header_line(c)
}

/// Whether what follows a BEGIN marker on its line makes it open a block:
/// nothing but quotes and punctuation, or key body.
fn opens(rest: &[u8]) -> bool {
    let (a, b) = core(rest);
    a == b || body_shaped(&rest[a..b])
}

/// The block state after the line that ends with `line` (starting at `v`),
/// given the state before it.
fn block_after(before: Option<Block>, line: &[u8], ms: &[Marker], v: usize) -> Option<Block> {
    match ms.last() {
        Some(m) if m.begin => Some(if opens(&line[m.end - v..]) { Block::Open(m.start) } else { Block::Closed }),
        Some(_) => Some(Block::Closed),
        None => before.map(|s| match s {
            Block::Open(b) if block_line(line) => Block::Open(b),
            _ => Block::Closed,
        }),
    }
}

/// The block state at the start of the line at `v`, from its window alone.
fn block_at(doc: &Doc, v: usize) -> Block {
    let lo = doc.window_start(v);
    let n = doc.before.len();
    let mut last = None;
    if lo < n {
        last = markers(&doc.before[lo..n.min(v)], lo).last();
    }
    if v > n {
        last = markers(&doc.text[lo.max(n) - n..v - n], lo.max(n)).last().or(last);
    }
    let Some(m) = last.filter(|m| m.begin) else { return Block::Closed };
    let eol = doc.newline_in(m.end, v).unwrap_or(v);
    if !opens(content(doc.slice(m.end, eol))) {
        return Block::Closed;
    }
    let mut at = eol + 1;
    while at < v {
        let end = doc.newline_in(at, v).unwrap_or(v);
        if !block_line(content(doc.slice(at, end))) {
            return Block::Closed;
        }
        at = end + 1;
    }
    Block::Open(m.start)
}

/// Redacts the key-block parts of one line (at `v`, with markers `ms`):
/// body before an END, between markers, and after a BEGIN or in an open
/// block when it looks like key body. `state` gives the state before the
/// line, computed when needed.
fn key_block_edits(line: &[u8], v: usize, ms: &[Marker], state: &mut dyn FnMut() -> Block, edits: &mut Vec<Edit>) {
    let mut push = |a: usize, b: usize| {
        let (ca, cb) = core(&line[a..b]);
        edits.push(Edit { start: v + a + ca, end: v + a + cb, rule: Rule::PRIVATE_KEY_BLOCK });
    };
    let body = |a: usize, b: usize| {
        let (ca, cb) = core(&line[a..b]);
        body_shaped(&line[a + ca..a + cb])
    };
    let mut at = 0;
    let mut inside = None;
    for m in ms {
        let (s, e) = (m.start - v, m.end - v);
        if body(at, s) && *inside.get_or_insert_with(|| matches!(state(), Block::Open(_))) {
            push(at, s);
        }
        inside = Some(m.begin);
        at = e;
    }
    // After a BEGIN on this line, only a one-line key's worth of body.
    let enough = ms.is_empty() || core(&line[at..]).1 - core(&line[at..]).0 >= 16;
    if enough && body(at, line.len()) && *inside.get_or_insert_with(|| matches!(state(), Block::Open(_))) {
        push(at, line.len());
    }
}

// ---------------------------------------------------------------------------
// Secret-named keys and their values.

/// A key whose name contains a keyword: its range in the line.
struct Key {
    start: usize,
    end: usize,
    password: bool,
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

/// The name around keyword `ks..ke` of `line`, and whether it names a
/// secret; `Err` carries the end of a name that does not.
fn key_at(line: &[u8], ks: usize, ke: usize) -> Result<Key, usize> {
    let mut s = ks;
    while s > 0 && is_ident(line[s - 1]) {
        s -= 1;
    }
    let mut e = ke;
    while e < line.len() && is_ident(line[e]) {
        e += 1;
    }
    let kw = &line[ks..ke];
    if kw.eq_ignore_ascii_case(b"pass") {
        // A word part: db_pass, PASS, dbPass; not bypass, passenger, compass.
        let start_ok =
            ks == s || !line[ks - 1].is_ascii_alphabetic() || (kw[0] == b'P' && line[ks - 1].is_ascii_lowercase());
        let end_ok = ke == e || !line[ke].is_ascii_alphabetic() || line[ke].is_ascii_uppercase() && kw[3] == b's';
        if !(start_ok && end_ok) {
            return Err(ke);
        }
    }
    if kw.eq_ignore_ascii_case(b"api") {
        // A word part: api_key, apiKey, API_KEY; not rapid, capital.
        let case_ok = kw == b"api" || kw == b"Api" || kw == b"API";
        let start_ok = ks == s
            || matches!(line[ks - 1], b'_' | b'-' | b'.')
            || (kw[0] == b'A' && !line[ks - 1].is_ascii_uppercase());
        if !(case_ok && start_ok) {
            return Err(ke);
        }
    }
    let name = &line[s..e];
    if harmless_name(name) {
        return Err(e);
    }
    Ok(Key { start: s, end: e, password: key_at_password(name) })
}

fn key_at_password(name: &[u8]) -> bool {
    [&b"pass"[..], b"pwd"].iter().any(|w| name.windows(w.len()).any(|x| x.eq_ignore_ascii_case(w)))
}

/// What follows a key's operator.
#[derive(Debug, PartialEq)]
enum Val {
    /// The value's range in the line and how it is written.
    Span { start: usize, end: usize, form: Form },
    /// Nothing on this line: the value follows on the next lines.
    Dangling(Dangle),
    /// A value that is not a literal (a block, a list of non-literals).
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Dangle {
    /// `key: |`, `key: >-`: every more-indented line after is the value.
    YamlBlock,
    /// `key:`: the more-indented scalar lines after.
    YamlPlain,
    /// `KEY = (`, `KEY = \`, `KEY = """`: the literal lines after.
    Other,
}

/// The operator after a key and where its value starts; `yaml` for `:`,
/// `xml` for `<key>`.
fn operator(line: &[u8], key: &Key) -> Option<(usize, bool, bool, Option<u8>)> {
    let mut i = key.end;
    let mut quoted = false;
    // Closing quotes, and a closing bracket after one: `"key"`, `ENV["KEY"]`.
    while i < line.len() && i < key.end + 4 && matches!(line[i], b'"' | b'\'' | b'`' | b'\\' | b']') {
        if line[i] == b']' && !matches!(line[i - 1], b'"' | b'\'') {
            break;
        }
        quoted |= line[i] != b']';
        i += 1;
    }
    // A key opened by a quote that does not close before the operator sits
    // inside a string (`'Password: '`, `"API_TOKEN=…"`).
    let opened = (key.start > 0 && !quoted).then(|| line[key.start - 1]).filter(|c| matches!(c, b'"' | b'\'' | b'`'));
    let gap = i;
    while i < line.len() && matches!(line[i], b' ' | b'\t') {
        i += 1;
    }
    let rest = &line[i..];
    let found = operator_at(line, rest, i, gap, key, quoted)?;
    // `'Password: '`: what follows ends the string the key is in.
    let mut v = found.0;
    while v < line.len() && matches!(line[v], b' ' | b'\t') {
        v += 1;
    }
    if opened.is_some() && opened == line.get(v).copied() {
        return None;
    }
    Some((found.0, found.1, found.2, opened))
}

fn operator_at(line: &[u8], rest: &[u8], i: usize, gap: usize, key: &Key, quoted: bool) -> Option<(usize, bool, bool)> {
    for op in [&b":::="[..], b"::=", b":=", b"=>", b"===", b"==", b"!=", b"?=", b".=", b"+=", b"||", b"="] {
        if rest.starts_with(op) {
            return Some((i + op.len(), false, false));
        }
    }
    match rest.first() {
        // `key: v`, `"key":"v"`; not `a::b`, `urn:x:y`, `host:port`.
        Some(b':')
            if matches!(rest.get(1), None | Some(b' ' | b'\t' | b'"' | b'\'' | b'`' | b'[' | b'{' | b'|' | b'>')) =>
        {
            Some((i + 1, true, false))
        }
        Some(b',') if quoted => Some((i + 1, false, false)),
        // `<apiToken>…</apiToken>`, not `Option<TokenTree>`.
        Some(b'>')
            if i == gap
                && key.start > 0
                && line[key.start - 1] == b'<'
                && (key.start == 1 || !line[key.start - 2].is_ascii_alphanumeric())
                && line[i..].windows(2).any(|w| w == b"</") =>
        {
            Some((i + 1, false, true))
        }
        _ => None,
    }
}

/// Whether the key at `start` begins its line (after indentation, a YAML
/// list dash, `export`/`set`, or an opening quote): then an unquoted value
/// is the rest of the line.
fn starts_line(line: &[u8], start: usize) -> bool {
    let mut pre = trim(&line[..start]);
    for p in [&b"\\\""[..], b"\"", b"'", b"$", b"@"] {
        if let Some(r) = pre.strip_suffix(p) {
            pre = trim(r);
            break;
        }
    }
    for w in [&b"export"[..], b"set", b"setx", b"ENV", b"declare", b"readonly", b"local", b"typeset"] {
        if let Some(r) = pre.strip_suffix(w) {
            pre = trim(r);
            break;
        }
    }
    pre.is_empty() || pre == b"-"
}

/// The range of a string literal whose opening quote (or `\"`) is at `q`:
/// to its closing quote, or to the end of the line when it does not close.
fn literal(line: &[u8], q: usize) -> (usize, usize) {
    let triple = line[q..].starts_with(b"\"\"\"") || line[q..].starts_with(b"'''");
    let (quote, open): (&[u8], usize) = if triple {
        (&line[q..q + 3], 3)
    } else if line[q] == b'\\' {
        (&line[q..q + 2], 2)
    } else {
        (&line[q..q + 1], 1)
    };
    let a = q + open;
    let mut k = a;
    while k < line.len() {
        if line[k..].starts_with(quote) {
            return (a, k);
        }
        k += if line[k] == b'\\' && open == 1 { 2 } else { 1 };
    }
    (a, line[a..].iter().rposition(|&c| !is_space(c)).map_or(a, |i| a + i + 1))
}

/// The quote at `i` (after an optional string prefix), if a literal starts there.
fn quote_at(line: &[u8], i: usize) -> Option<usize> {
    let q = i + string_prefix(&line[i..]).unwrap_or(0);
    match line.get(q) {
        Some(b'"' | b'\'' | b'`') => Some(q),
        Some(b'\\') if matches!(line.get(q + 1), Some(b'"' | b'\'')) => Some(q),
        _ => None,
    }
}

/// The end of a literal (its content ends at `end`, its quote opened at `q`)
/// and the literals joined to it by `+` (`"Zq8rT3" + "vL0xN7aB2c"`): a value
/// split in pieces is one value.
fn joined(line: &[u8], q: usize, mut end: usize) -> usize {
    let quote = line[q];
    if !matches!(quote, b'"' | b'\'') || end >= line.len() || line[end] != quote {
        return end;
    }
    loop {
        let mut k = end + 1;
        while k < line.len() && is_space(line[k]) {
            k += 1;
        }
        if line.get(k) != Some(&b'+') {
            return end;
        }
        k += 1;
        while k < line.len() && is_space(line[k]) {
            k += 1;
        }
        if line.get(k) != Some(&quote) || line[k..].starts_with(b"\"\"\"") {
            return end;
        }
        let (_, e) = literal(line, k);
        if e >= line.len() || line[e] != quote {
            return end;
        }
        end = e;
    }
}

/// A value's pieces as one (`"ab" + "cd"` as `abcd`), for a [`joined`] value.
fn unjoin(v: &[u8]) -> Cow<'_, [u8]> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut any = false;
    while i < v.len() {
        if matches!(v[i], b'"' | b'\'') {
            let q = v[i];
            let mut k = i + 1;
            while k < v.len() && is_space(v[k]) {
                k += 1;
            }
            if v.get(k) == Some(&b'+') {
                k += 1;
                while k < v.len() && is_space(v[k]) {
                    k += 1;
                }
                if v.get(k) == Some(&q) {
                    i = k + 1;
                    any = true;
                    continue;
                }
            }
        }
        out.push(v[i]);
        i += 1;
    }
    if any {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(v)
    }
}

/// The value after an operator ending at `i`.
fn value_at(line: &[u8], mut i: usize, yaml: bool, xml: bool, line_start: bool) -> Val {
    if xml {
        let end = line[i..].iter().position(|&c| c == b'<').map_or(line.len(), |p| i + p);
        return Val::Span { start: i, end, form: Form::Literal };
    }
    while i < line.len() && matches!(line[i], b' ' | b'\t') {
        i += 1;
    }
    let rest = trim(&line[i..]);
    if rest.is_empty() || rest[0] == b'#' || rest.starts_with(b"//") {
        return Val::Dangling(if yaml { Dangle::YamlPlain } else { Dangle::Other });
    }
    if yaml && matches!(rest[0], b'|' | b'>') {
        let ind = rest[1..].iter().take_while(|c| matches!(c, b'0'..=b'9' | b'+' | b'-')).count();
        let after = trim(&rest[1 + ind..]);
        if ind <= 3 && (after.is_empty() || after[0] == b'#') {
            return Val::Dangling(Dangle::YamlBlock);
        }
    }
    if matches!(rest, b"(" | b"\\" | b"\"\"\"" | b"'''" | b"`" | b"r\"\"\"" | b"b\"\"\"") {
        return Val::Dangling(Dangle::Other);
    }
    if let Some(q) = quote_at(line, i) {
        let (start, end) = literal(line, q);
        return Val::Span { start, end: joined(line, q, end), form: Form::Literal };
    }
    if matches!(rest[0], b'[' | b'{' | b'(') {
        let mut j = i;
        while j < line.len() && matches!(line[j], b'[' | b'{' | b'(' | b' ' | b'\t') {
            j += 1;
        }
        return match quote_at(line, j) {
            Some(q) => {
                let (start, end) = literal(line, q);
                Val::Span { start, end, form: Form::Literal }
            }
            None => Val::Other,
        };
    }
    if line_start {
        // To the end of the line, less a comment (or an escaped newline).
        let mut end = line.len();
        for k in i..line.len() {
            let comment = matches!(line[k], b' ' | b'\t')
                && (line[k + 1..].starts_with(b"#") || line[k + 1..].starts_with(b"//"));
            if comment || line[k..].starts_with(b"\\n") || line[k..].starts_with(b"\\r") {
                end = k;
                break;
            }
        }
        let end = i + trim(&line[i..end]).len();
        return Val::Span { start: i, end, form: Form::Config };
    }
    if line[i] == b'<' {
        let end = line[i..].iter().position(|&c| c == b'>' || is_space(c)).map_or(line.len(), |p| i + p + 1);
        return Val::Span { start: i, end: end.min(line.len()), form: Form::Inline };
    }
    let mut depth = 0usize;
    let mut end = i;
    while end < line.len() {
        let c = line[end];
        let escaped_newline = c == b'\\' && matches!(line.get(end + 1), Some(b'n' | b'r'));
        if is_space(c)
            || escaped_newline
            || depth == 0 && matches!(c, b',' | b';' | b'&' | b'#' | b')' | b']' | b'}' | b'"' | b'\'' | b'`')
        {
            break;
        }
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        end += 1;
    }
    Val::Span { start: i, end, form: Form::Inline }
}

/// The assignment at keyword `ks..ke` of `line`: its key and value, or the
/// end of the name when there is none.
fn assignment(line: &[u8], ks: usize, ke: usize) -> Result<(Key, Val), usize> {
    let key = key_at(line, ks, ke)?;
    let Some((i, yaml, xml, opened)) = operator(line, &key) else { return Err(key.end) };
    // A key inside a string: its value ends with the string.
    let line = match opened {
        Some(q) => &line[..line[i..].iter().position(|&c| c == q).map_or(line.len(), |p| i + p)],
        None => line,
    };
    let val = value_at(line, i, yaml, xml, starts_line(line, key.start));
    // A comparison or an append takes only a literal: `token.typ !=
    // yaml_VALUE_TOKEN || start_mark.column-1` is code.
    let literal_only = [&b"=="[..], b"!=", b"||", b"+=", b".="].iter().any(|o| line[..i].ends_with(o));
    if literal_only && !matches!(val, Val::Span { form: Form::Literal, .. }) {
        return Err(key.end);
    }
    // After `,` (an argument list), only a literal is the key's value, and
    // it is an argument like any other: a name or a word is not a secret.
    if line[..i].ends_with(b",") {
        return match val {
            Val::Span { start, end, form: Form::Literal } => {
                Ok((Key { password: false, ..key }, Val::Span { start, end, form: Form::Argument }))
            }
            _ => Err(key.end),
        };
    }
    Ok((key, val))
}

/// How a value was written.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Form {
    /// In quotes, or text by nature (YAML block scalars, XML element text).
    Literal,
    /// Unquoted, after a key that starts its line (`.env`, YAML, INI).
    Config,
    /// Unquoted, in the middle of a line (code, command lines).
    Inline,
    /// A literal argument after a quoted key: `setProperty("API_KEY", "…")`.
    Argument,
}

/// Whether `v` (a value of a key that names a secret) is one.
fn secret_value(v: &[u8], password: bool, form: Form) -> bool {
    let quoted = matches!(form, Form::Literal | Form::Argument);
    let v = trim(v);
    // `Field: someName,` (a struct literal's field): a name.
    if !quoted
        && matches!(v.last(), Some(b',' | b';'))
        && v[0].is_ascii_alphabetic()
        && v[..v.len() - 1].iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
    {
        return false;
    }
    let v = if quoted {
        v
    } else {
        let v = v.strip_suffix(b"\\").map_or(v, trim);
        trim(v.strip_suffix(b",").or_else(|| v.strip_suffix(b";")).or_else(|| v.strip_suffix(b":")).unwrap_or(v))
    };
    // An elided example (`9cbaf023786cd7...`).
    if v.ends_with(b"...") || v.ends_with("\u{2026}".as_bytes()) {
        return false;
    }
    // A bare value is one word: a blank or a quote inside it makes it code
    // or prose (`EOF@56..57 "" [Newline("\n")]`).
    if !quoted && v.iter().any(|&c| is_space(c) || matches!(c, b'"' | b'\'' | b'`')) {
        return false;
    }
    let literal_default = shell_default_re().is_match(v);
    // Short, a placeholder, or holding a key block's marker (the block rule's).
    if v.len() < MIN_VALUE_LEN || !literal_default && placeholder_re().is_match(v) || marker_re().is_match(v) {
        return false;
    }
    let interpolated = !literal_default && v.iter().any(|&c| matches!(c, b'{' | b'$' | b'%'));
    let rest: Cow<[u8]> = if interpolated { interp_re().replace_all(v, &b""[..]) } else { Cow::Borrowed(v) };
    let rest = trim(&rest);
    if code(v, form)
        || code(rest, form)
        || rest.len() < MIN_VALUE_LEN
        || not_secret_re().is_match(rest)
        || regexy_re().is_match(rest)
    {
        return false;
    }
    // A key's value (not a password, which people choose) is made of token
    // characters, as gitleaks' generic rule reads it: a blank, a comma, a
    // bracket, a quote or a backslash makes it a list, a tag, code or text
    // (`"bytes,1,opt,name=key"`, `"openssh-key-v1\x00"`).
    if !password && !rest.iter().all(|&c| token_char(c)) {
        return false;
    }
    // Mostly punctuation: a character set, a separator line.
    if rest.iter().filter(|c| c.is_ascii_alphanumeric()).count() * 4 < rest.len() {
        return false;
    }
    if form != Form::Literal && rest.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_') && identifier_like(rest) {
        return false;
    }
    // A name: words joined by `_`, `-`, `.`, `/` or `:` (`TCA_PEDIT_KEY_EX_HDR`,
    // `diffie-hellman-group14-sha256`, `oauth2.google.tokenSource`).
    let words = rest.split(|&c| matches!(c, b'_' | b'-' | b'.')).filter(|w| !w.is_empty()).count();
    if (!(password && quoted) || words >= 2) && name_like(rest) {
        return false;
    }
    // Letters and separators only (gitleaks' allowlist): names, words, paths.
    // A password of letters, though, is one unless it reads as a placeholder.
    let wordy = rest.iter().all(|&c| {
        c.is_ascii_alphabetic()
            || matches!(c, b'_' | b'.' | b'-' | b' ' | b'$' | b'@' | b':' | b'/' | b'\\' | b'=' | b'*')
    });
    if wordy && !(password && form != Form::Inline && !dummy_word(rest)) {
        return false;
    }
    if prose(rest, password) {
        return false;
    }
    entropy(rest) >= if password { PASSWORD_ENTROPY } else { GENERIC_ENTROPY }
}

/// Whether `v` is words joined by separators, each word one case of
/// letters with at most one run of digits (`group14`, `P256`, `sha256`), or
/// an identifier (`tokenSource`): a name. A random token has words of mixed
/// case or digits all through (`7c37Cc8654o6p38Hn`, `fpjqlhnwb19zds35k8`).
fn name_like(v: &[u8]) -> bool {
    let mut words = 0;
    for w in v.split(|&c| matches!(c, b'_' | b'-' | b'.' | b'/' | b':' | b'#' | b'@')) {
        if w.is_empty() {
            continue;
        }
        words += 1;
        if !w.iter().all(u8::is_ascii_alphanumeric) {
            return false;
        }
        let lower = w.iter().all(|c| !c.is_ascii_uppercase());
        let upper = w.iter().all(|c| !c.is_ascii_lowercase())
            || w[0].is_ascii_uppercase() && w[1..].iter().all(|c| !c.is_ascii_uppercase());
        let digit_runs = w.windows(2).filter(|p| !p[0].is_ascii_digit() && p[1].is_ascii_digit()).count()
            + usize::from(w[0].is_ascii_digit());
        let cased = (lower || upper) && digit_runs <= 1 && w.len() <= 16;
        let ident = digit_runs <= 1 && identifier_like(w);
        if !(cased || ident) {
            return false;
        }
    }
    words > 0
}

/// What a generic secret value is made of.
fn token_char(c: u8) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            b'_' | b'.'
                | b'='
                | b'+'
                | b'/'
                | b'~'
                | b'-'
                | b'@'
                | b':'
                | b'!'
                | b'#'
                | b'*'
                | b'^'
                | b'%'
                | b'&'
                | b'$'
        )
}

/// Whether an unquoted value reads as code rather than as a value: an
/// expression that starts with an identifier chain and goes on like code (a
/// call, an index, a macro, generics, a member access, an operator after a
/// space, a struct literal, a call left open at the end of the line), or
/// starts with a keyword or sigil of code. In the middle of a line a
/// snake_case identifier is a name too.
fn code(v: &[u8], form: Form) -> bool {
    let v = trim(v);
    let Some(&first) = v.first() else { return false };
    let literal = matches!(form, Form::Literal | Form::Argument);
    if !literal {
        for kw in [
            "lambda", "new", "await", "function", "fn", "async", "yield", "not", "typeof", "match", "if", "move",
            "ref", "mut", "impl", "dyn",
        ] {
            if v.starts_with(kw.as_bytes()) && matches!(v.get(kw.len()), Some(b' ' | b'(' | b'|' | b'{')) {
                return true;
            }
        }
        if matches!(first, b'&' | b'*' | b'!' | b'|' | b'(' | b'[' | b'{') {
            return true;
        }
        // `<T as Trait>::f()`, `<Token![where]>::default()`.
        if first == b'<' && closing(v, 0).is_some_and(|e| v[e..].starts_with(b"::")) {
            return true;
        }
    }
    let ident = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'#');
    let mut i = usize::from(matches!(first, b'$' | b'@'));
    let (mut codey, mut called) = (false, false);
    loop {
        let s = i;
        while i < v.len() && ident(v[i]) {
            i += 1;
        }
        if i == s || s == 0 && v[s].is_ascii_digit() {
            return false;
        }
        loop {
            if v[i..].starts_with(b"!") && matches!(v.get(i + 1), Some(b'(' | b'[' | b'{'))
                || v[i..].starts_with(b"::<")
            {
                i += if v[i] == b'!' { 1 } else { 2 };
            }
            match v.get(i) {
                Some(b'(' | b'[' | b'{' | b'<') => match closing(v, i) {
                    Some(e) => i = e,
                    None => return !literal, // open at the end of the line
                },
                _ => break,
            }
            (codey, called) = (true, true);
        }
        let sep = [&b"::"[..], b"->", b"?.", b"."].into_iter().find(|s| v[i..].starts_with(s));
        match sep {
            Some(sep)
                if v.get(i + sep.len())
                    .is_some_and(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'#' | b'$')) =>
            {
                i += sep.len();
                codey = true;
            }
            _ => break,
        }
    }
    let rest = &v[i..];
    // `x?` (Rust's try), `x.(T)` (Go's type assertion) are code.
    let tried = rest.strip_prefix(b"?").is_some_and(|r| matches!(r.first(), None | Some(b'.' | b';' | b')')));
    if !literal && (tried || rest.starts_with(b".(")) {
        return true;
    }
    let rest = rest.strip_suffix(b"\\").unwrap_or(rest);
    let rest = &rest[..rest.iter().rposition(|&c| !is_space(c)).map_or(0, |i| i + 1)];
    let rest = rest.strip_suffix(b".").unwrap_or(rest);
    if literal {
        // In quotes, only a whole call reads as code: `"foo.bar(x)"`.
        return called && rest.is_empty();
    }
    if rest.is_empty() {
        return codey;
    }
    // `quote! {`, `map[K]V{`: a macro, a literal opened at the end of the line.
    if !literal && (rest == b"!" || codey && matches!(rest.last(), Some(b'{' | b'(' | b'['))) {
        return true;
    }
    if rest.starts_with(b", ") || rest[0] == b')' {
        return true; // an argument list goes on
    }
    let after = trim(rest);
    if after.len() < rest.len() {
        // An operator or keyword after a space.
        if matches!(
            after.first(),
            Some(
                b'=' | b'+' | b'-' | b'*' | b'/' | b'%' | b'|' | b'&' | b'?' | b':' | b'<' | b'>' | b'{' | b'.' | b'!'
            )
        ) {
            return true;
        }
        let word = after.split(|&c| c == b' ').next().unwrap_or(b"");
        return [&b"for"[..], b"if", b"else", b"as", b"in", b"and", b"or", b"is", b"not"].contains(&word);
    }
    false
}

/// The end of the bracketed group opening at `i` (after its closing bracket).
fn closing(v: &[u8], i: usize) -> Option<usize> {
    let mut depth = 0usize;
    let angle = v[i] == b'<';
    let mut inner = 0usize; // brackets inside generics: `Option<Token![>]>`
    let mut quote = None;
    for (k, &c) in v.iter().enumerate().skip(i) {
        // Skip string literals: `re.compile(r"\{([^}]+)")`.
        match quote {
            Some(q) if c == q && v[k - 1] != b'\\' => quote = None,
            Some(_) => {}
            None if matches!(c, b'"' | b'\'' | b'`') && !angle => quote = Some(c),
            None => {}
        }
        if quote.is_some() || matches!(c, b'"' | b'\'' | b'`') {
            continue;
        }
        if angle && matches!(c, b'(' | b'[' | b'{') {
            inner += 1;
        } else if angle && matches!(c, b')' | b']' | b'}') {
            inner = inner.saturating_sub(1);
        }
        if angle && inner > 0 {
            continue;
        }
        let (open, close) = if angle {
            (c == b'<', c == b'>')
        } else {
            (matches!(c, b'(' | b'[' | b'{'), matches!(c, b')' | b']' | b'}'))
        };
        if open {
            depth += 1;
        } else if close {
            depth -= 1;
            if depth == 0 {
                return Some(k + 1);
            }
        }
    }
    None
}

/// Words, as in a sentence: two or more, three in four of them words of
/// letters (mostly letters, for a key that is not a password's).
fn prose(v: &[u8], password: bool) -> bool {
    let (mut words, mut all) = (0, 0);
    for w in v.split(|&c| c == b' ' || c == b'\t').filter(|w| !w.is_empty()) {
        all += 1;
        let a = w.iter().position(|c| !matches!(c, b'(' | b'"' | b'\'' | b'`' | b'<')).unwrap_or(w.len());
        let b = w
            .iter()
            .rposition(|c| !matches!(c, b'.' | b',' | b';' | b':' | b'!' | b'?' | b')' | b'"' | b'\'' | b'`' | b'>'))
            .map_or(a, |i| i + 1);
        let w = &w[a..b.max(a)];
        let letters = w.iter().filter(|c| c.is_ascii_alphabetic()).count();
        let word = if password {
            !w.is_empty() && w.iter().all(|&c| c.is_ascii_alphabetic() || matches!(c, b'\'' | b'-' | b'_'))
        } else {
            letters >= 2 && letters * 5 >= w.len() * 3
        };
        words += usize::from(word);
    }
    words >= 2 && words * 4 >= all * 3
}

/// Whether a name made of letters, digits and underscores reads as an
/// identifier (`X509SubjectKeyIDExtension`, `nl80211_key_attrs`) rather than
/// random (`Zq8rT3vL0xN7aB2cD4eF`): its words, split at case and digit
/// changes and underscores, are 3.5 characters long on average.
fn identifier_like(v: &[u8]) -> bool {
    let (mut runs, mut chars) = (0usize, 0usize);
    let mut prev: Option<u8> = None;
    for (i, &c) in v.iter().enumerate() {
        if c == b'_' {
            prev = None;
            continue;
        }
        chars += 1;
        let next_lower = v.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
        let new_run = match prev {
            None => true,
            Some(p) if p.is_ascii_digit() => !c.is_ascii_digit(),
            Some(p) if p.is_ascii_lowercase() => !c.is_ascii_lowercase(),
            // After a capital: lowercase goes on (Word); a capital goes on an
            // acronym unless it starts a word (IDExtension).
            Some(_) => c.is_ascii_digit() || c.is_ascii_uppercase() && next_lower,
        };
        runs += usize::from(new_run);
        prev = Some(c);
    }
    // Digits all through a long word read as random (`abcd1234efgh5678XYZ`).
    let digit_runs = v.windows(2).filter(|p| !p[0].is_ascii_digit() && p[1].is_ascii_digit()).count();
    if digit_runs >= 2 && v.len() >= 16 && !v.contains(&b'_') {
        return false;
    }
    runs > 0 && chars * 2 >= runs * 7
}

/// Redacts the values of secret-named keys in `text`, line by line.
fn assignment_edits(text: &[u8], edits: &mut Vec<Edit>) {
    for c in attr_re().captures_iter(text) {
        let name = c.get(1).unwrap().as_bytes();
        let value = (2..=4).find_map(|i| c.get(i)).unwrap();
        let secret_name = keywords(name).any(|(s, e)| key_at(name, s, e).is_ok());
        if secret_name && secret_value(value.as_bytes(), key_at_password(name), Form::Literal) {
            edits.push(Edit { start: value.start(), end: value.end(), rule: Rule::GENERIC_SECRET_VALUE });
        }
    }
    let mut skip_until = 0;
    let (mut ls, mut le) = (0, 0);
    for (ms, me) in keywords(text) {
        if ms < skip_until {
            continue;
        }
        if ms >= le {
            // The line of this match (found going forward: lines can be long).
            ls = newline_back(&text[le..ms]).map_or(le, |i| le + i + 1);
            le = newline(&text[me..]).map_or(text.len(), |i| me + i);
        }
        let line = content(&text[ls..le]);
        match assignment(line, ms - ls, me - ls) {
            Ok((key, val)) => {
                skip_until = ls + key.end;
                if let Val::Span { start, end, form } = val {
                    if secret_value(&unjoin(&line[start..end]), key.password, form) {
                        edits.push(Edit { start: ls + start, end: ls + end, rule: Rule::GENERIC_SECRET_VALUE });
                    }
                }
            }
            Err(end) => skip_until = ls + end,
        }
    }
}

/// A key at the end of `line` whose value follows on the next lines.
fn dangling_key(line: &[u8]) -> Option<(bool, Dangle)> {
    let last = *trim(line).last()?;
    if !matches!(last, b':' | b'|' | b'>' | b'-' | b'+' | b'(' | b'\\' | b'=' | b'"' | b'\'' | b'`' | b'0'..=b'9') {
        return None;
    }
    let mut skip_until = 0;
    for (ms, me) in keywords(line) {
        if ms < skip_until {
            continue;
        }
        match assignment(line, ms, me) {
            // A YAML key starts its line (not `if not self.auth:`).
            Ok((key, Val::Dangling(Dangle::YamlBlock | Dangle::YamlPlain))) if !starts_line(line, key.start) => {
                skip_until = key.end
            }
            Ok((key, Val::Dangling(d))) => return Some((key.password, d)),
            Ok((key, _)) => skip_until = key.end,
            Err(end) => skip_until = end,
        }
    }
    None
}

/// Whether a line ends with a comma (a list item, not a continued string).
fn listed(line: &[u8]) -> bool {
    trim(line).ends_with(b",")
}

/// A line that holds one value and nothing else: one literal, or one word
/// that is not a key (`- ` list dashes and concatenation punctuation aside).
/// Returns the value's range and whether it is a literal.
fn lone_value(line: &[u8]) -> Option<(usize, usize, bool)> {
    let mut i = indent(line);
    if line[i..].starts_with(b"- ") {
        i += 2;
        while i < line.len() && matches!(line[i], b' ' | b'\t') {
            i += 1;
        }
    }
    let (a, b) = core(&line[i..]);
    let (a, b) = (i + a, i + b);
    if a >= b {
        return None;
    }
    // A literal, with at most decoration after it.
    let start = line[i..a].iter().rposition(|&c| matches!(c, b'"' | b'\'' | b'`')).map(|p| i + p);
    if let Some(q) = start {
        let (ls, le) = literal(line, q);
        let (ca, cb) = core(&line[le..]);
        return (ca == cb).then_some((ls, le, true));
    }
    let v = &line[a..b];
    if v.iter().any(|&c| is_space(c)) || v.ends_with(b":") || v.windows(2).any(|w| w == b": ") {
        return None;
    }
    Some((a, b, false))
}

/// The [`Facts`] of lines of one file, by where they start and their length
/// (a line's facts depend on its bytes alone). The walk up from a value
/// asks for the lines just above it, so a slot per line start, the last
/// line to take it kept: a line whose slot another took is looked at again
/// (the cost without a memo), whatever lengths the file's lines have.
#[derive(Default)]
pub struct Memo {
    slots: Vec<Option<(u64, usize, Facts)>>,
}

impl Memo {
    const SLOTS: usize = 1 << 9;

    fn facts(&mut self, start: u64, line: &[u8]) -> &mut Facts {
        if self.slots.is_empty() {
            self.slots.resize(Self::SLOTS, None);
        }
        let slot = &mut self.slots[(start.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 55) as usize];
        if !matches!(slot, Some((s, len, _)) if *s == start && *len == line.len()) {
            *slot = None;
        }
        &mut slot.get_or_insert_with(|| (start, line.len(), facts(line))).2
    }
}

/// What the walk up from a value needs to know about a line above it.
#[derive(Clone, Copy)]
struct Facts {
    blank: bool,
    indent: usize,
    head: Option<(bool, Dangle)>,
    /// Computed when first needed.
    lone: Option<bool>,
    listed: bool,
}

fn facts(line: &[u8]) -> Facts {
    let blank = trim(line).is_empty();
    Facts {
        blank,
        indent: indent(line),
        head: if blank { None } else { dangling_key(line) },
        lone: None,
        listed: listed(line),
    }
}

/// Redacts a line that is the value of a key on a line above it (YAML block
/// scalars and indented values, continued assignments). The line is `line`,
/// at `v`; `above` holds the ranges of the lines of `text` before it and
/// `cache` what is known of them; `memo` knows lines of `before`, which
/// starts at byte `base` of the file (`None`: not known).
#[allow(clippy::too_many_arguments)]
fn continued_value(
    doc: &Doc,
    v: usize,
    line: &[u8],
    above: &[(usize, usize)],
    cache: &mut [Option<Facts>],
    base: Option<u64>,
    memo: &mut Memo,
    edits: &mut Vec<Edit>,
) {
    if trim(line).len() < 10 {
        return;
    }
    let i = indent(line);
    let mut any_listed = listed(line);
    let lone = lone_value(line);
    // At the margin only a lone literal under `KEY = (` can be a value (a
    // YAML key above would have to be indented less than nothing); a line
    // that is not a lone value can only be a YAML block's.
    if i == 0 && (lone.is_none() || any_listed) {
        return;
    }
    let lo = doc.window_start(v);
    let n = doc.before.len();
    let (mut j, mut at) = (above.len(), n);
    let mut all_values = lone.is_some();
    let mut scratch = None;
    for _ in 0..MAX_VALUE_LINES {
        // The line above, from the cache within `text`, else read in `before`.
        let (f, prev) = if j > 0 {
            j -= 1;
            let (s, e) = above[j];
            if n + s < lo {
                return;
            }
            let prev = content(&doc.text[s..e]);
            (cache[j].get_or_insert_with(|| facts(prev)), prev)
        } else {
            let Some((start, prev)) = doc.line_before(at, lo) else { return };
            at = start;
            match base {
                Some(base) => (memo.facts(base + start as u64, prev), prev),
                None => (&mut *scratch.insert(facts(prev)), prev),
            }
        };
        if f.blank {
            continue;
        }
        if let Some((password, d)) = f.head {
            let ok = match d {
                Dangle::YamlBlock => f.indent < i,
                Dangle::YamlPlain => f.indent < i && all_values && lone.is_some(),
                // `KEY = (` then `"…"` lines: a string continued; with commas, a list.
                Dangle::Other => all_values && lone.is_some() && !any_listed,
            };
            if !ok {
                return;
            }
            let (a, b, form) = match lone {
                Some((a, b, literal)) if d != Dangle::YamlBlock => {
                    (a, b, if literal { Form::Literal } else { Form::Config })
                }
                _ => (i, i + trim(&line[i..]).len(), Form::Literal),
            };
            if secret_value(&line[a..b], password, form) {
                edits.push(Edit { start: v - n + a, end: v - n + b, rule: Rule::GENERIC_SECRET_VALUE });
            }
            return;
        }
        if f.indent < i {
            return;
        }
        if all_values {
            any_listed |= f.listed;
            let lone = *f.lone.get_or_insert_with(|| lone_value(prev).is_some());
            if !lone {
                all_values = false;
                if i == 0 {
                    return;
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------

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

    // Rules within a line, over all lines at once.
    for m in tokens_re().find_iter(text) {
        edits.push(Edit { start: m.start(), end: m.end(), rule: token_rule(m.as_bytes()) });
    }
    for m in sk_re().find_iter(text) {
        let s = m.as_bytes();
        // (`sk-ecdsa-sha2-nistp256@openssh.com` is a name.)
        if s.iter().filter(|c| c.is_ascii_digit()).count() >= 2 && entropy(s) >= 3.0 && !name_like(s) {
            let rule = if s.starts_with(b"sk-ant-") { Rule::ANTHROPIC_KEY } else { Rule::OPENAI_KEY };
            edits.push(Edit { start: m.start(), end: m.end(), rule });
        }
    }
    // (A search for captures sets them up first: most lines have none to find.)
    if auth_re().is_match(text) {
        for c in auth_re().captures_iter(text) {
            let g = c.get(1).unwrap();
            let s = g.as_bytes();
            let words = s.iter().all(|&c| c.is_ascii_alphabetic() || matches!(c, b'_' | b'.' | b'-' | b'/'));
            // `Bearer realm="…"`, `Bearer resource_metadata="…"`: a
            // challenge's parameter, not a credential.
            let param = s.ends_with(b"=") && text.get(g.end()).is_some_and(|&c| c == b'"' || c.is_ascii_alphanumeric());
            let dummy = dummy_word(s) || contains_ci(s, b"token");
            if !words && !param && !dummy && entropy(s) >= 3.0 && !placeholder_re().is_match(s) {
                edits.push(Edit { start: g.start(), end: g.end(), rule: Rule::AUTHORIZATION_HEADER });
            }
        }
    }
    if memchr::memmem::find(text, b"://").is_some() {
        for c in url_re().captures_iter(text) {
            let g = c.get(1).unwrap();
            let s = g.as_bytes();
            let dummy = [&b"password"[..], b"passwd", b"pass", b"pwd", b"secret", b"changeme"]
                .iter()
                .any(|w| s.eq_ignore_ascii_case(w));
            // `test:test@`, `a:b@`: a parser's test vector, not a password.
            let user = &text[..g.start() - 1];
            let user = &user[user.iter().rposition(|&c| c == b'/').map_or(0, |i| i + 1)..];
            let echo = s.len() < 4 || s.eq_ignore_ascii_case(user);
            if !dummy && !echo && !placeholder_re().is_match(s) {
                edits.push(Edit { start: g.start(), end: g.end(), rule: Rule::URL_PASSWORD });
            }
        }
    }
    assignment_edits(text, &mut edits);

    let netrc_text = memchr::memmem::find(text, b"password").is_some();
    let cli_text = memchr::memmem::find(text, b"--").is_some();

    // Rules that look at the lines before: key blocks, values under keys.
    let all_markers: Vec<Marker> = markers(text, n).collect();
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
        let mut line_edits = Vec::new();
        let mut known = block;
        key_block_edits(line, v, ms, &mut || *known.get_or_insert_with(|| block_at(&doc, v)), &mut line_edits);
        block = block_after(known, line, ms, v);
        for e in &mut line_edits {
            e.start -= n;
            e.end -= n;
        }
        edits.extend(line_edits);
        continued_value(&doc, v, line, &above, &mut cache, base, memo, &mut edits);
        if netrc_text && memchr::memmem::find(line, b"password").is_some() {
            netrc::netrc_edits(&doc, v, line, start, &mut edits);
        }
        if cli_text && memchr::memmem::find(line, b"--").is_some() {
            netrc::cli_edits(line, start, &mut edits);
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

    let enabled = Enabled::now();
    edits.retain(|e| enabled.on(e.rule));
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
mod tests {
    use super::*;

    /// `s` redacted as a whole file.
    fn r(s: &str) -> String {
        String::from_utf8(redact_lines(b"", s.as_bytes()).0).unwrap()
    }

    /// Every line of `file` redacted alone, given its lookback, as search
    /// context asks for it (one memo for the file, as a search keeps).
    fn alone(file: &str) -> Vec<String> {
        let bytes = file.as_bytes();
        let mut out = Vec::new();
        let mut start = 0;
        let mut memo = Memo::default();
        while start < bytes.len() {
            let end = newline(&bytes[start..]).map_or(bytes.len(), |i| start + i + 1);
            let before = &bytes[start.saturating_sub(LOOKBACK)..start];
            let (text, _) = redact_lines_at(before, &bytes[start..end], start as u64, &mut memo);
            out.push(String::from_utf8(text).unwrap().trim_end_matches('\n').to_string());
            start = end;
        }
        out
    }

    /// Checks that every line comes out the same alone, in the whole file,
    /// and in blocks of a few lines; returns the lines.
    fn consistent(file: &str) -> Vec<String> {
        let lines = alone(file);
        let whole: Vec<String> = r(file).split('\n').map(str::to_string).take(lines.len()).collect();
        assert_eq!(whole, lines, "whole file vs lines alone");
        let bytes = file.as_bytes();
        for group in [2, 3, 7] {
            let starts: Vec<usize> = std::iter::once(0)
                .chain(bytes.iter().enumerate().filter(|(_, &c)| c == b'\n').map(|(i, _)| i + 1))
                .filter(|&i| i < bytes.len())
                .collect();
            let mut got = Vec::new();
            let mut memo = Memo::default();
            for chunk in starts.chunks(group) {
                let (a, b) =
                    (chunk[0], starts.iter().find(|&&s| s > *chunk.last().unwrap()).copied().unwrap_or(bytes.len()));
                let before = &bytes[a.saturating_sub(LOOKBACK)..a];
                let (text, _) = redact_lines_at(before, &bytes[a..b], a as u64, &mut memo);
                let text = String::from_utf8(text).unwrap();
                got.extend(text.strip_suffix('\n').unwrap_or(&text).split('\n').map(str::to_string));
            }
            assert_eq!(got, lines, "blocks of {group} vs lines alone");
        }
        lines
    }

    fn hidden(out: &str, secrets: &[&str]) {
        for s in secrets {
            assert!(!out.contains(s), "shows {s}: {out}");
        }
    }

    #[test]
    fn edits_name_their_rule_and_disabled_rules_make_none() {
        let line = b"t=ghp_0123456789abcdefghijABCDEFGHIJ012345; id=AKIAIOSFODNN7EXAMPLE";
        let (_, edits) = redact_lines(b"", line);
        let rules: Vec<&str> = edits.iter().map(|e| e.rule.name()).collect();
        assert_eq!(rules, ["github-token", "aws-access-key-id"]);
        set_disabled(&["github-token".to_string()]).unwrap();
        let (out, edits) = redact_lines(b"", line);
        set_disabled(&[]).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "t=ghp_0123456789abcdefghijABCDEFGHIJ012345; id=[REDACTED]");
        assert_eq!(edits.len(), 1);
        assert!(set_disabled(&["githubtoken".to_string()]).unwrap_err().contains("githubtoken"));
        assert_eq!(redact_lines(b"", line).1.len(), 2);
        assert!(rule_names().any(|n| n == "generic-secret-value"));
    }

    #[test]
    fn netrc_passwords_without_an_operator() {
        // One line, several entries, quoted in an echo, spread over lines in a heredoc.
        let pw = "Vq7rT2xL9mNb4Zk";
        let pw2 = "Jd8s2Kq0pLx5Wn3";
        let file = format!(
            "machine api.example.net login deploy password {pw}\n\
             machine a.example login u password {pw} machine b.example login v password {pw2}\n\
             echo \"machine git.example.org login bot password {pw2}\" >> ~/.netrc\n\
             cat > ~/.netrc <<EOF\n\
             machine registry.example.com\n\
             \x20 login ci-user\n\
             \x20 password {pw}\n\
             EOF\n"
        );
        let lines = consistent(&file);
        hidden(&lines.join("\n"), &[pw, pw2]);
        assert_eq!(lines[0], "machine api.example.net login deploy password [REDACTED]");
        assert_eq!(lines[2], "echo \"machine git.example.org login bot password [REDACTED]\" >> ~/.netrc");
        assert_eq!(lines[6], "  password [REDACTED]");
        assert_eq!(rules_of(&file), ["netrc-password"]);
        // Placeholders, short values and prose stay.
        for keep in [
            "machine h login u password $GITHUB_TOKEN",
            "printf 'machine %s login %s password %s\\n' \"$h\" \"$u\" \"$p\"",
            "machine h login u password <password>",
            "machine h login u password hunter2",
            "Type your password below and press enter to continue",
            "password Zq8rT3vL0xN7aB2cD4eF (a lone line with no machine above)",
            "the login password is stored in the keychain, machine-wide",
        ] {
            assert_eq!(r(keep), keep);
        }
        // A `password` line under lines that are not netrc's is not netrc.
        let other = format!("fn main() {{\n    let x = 1;\n  password {pw}\n}}\n");
        assert_eq!(r(&other), other);
    }

    /// The rules of the edits `s` gets, once each.
    fn rules_of(s: &str) -> Vec<&'static str> {
        let mut v: Vec<&str> = redact_lines(b"", s.as_bytes()).1.iter().map(|e| e.rule.name()).collect();
        v.dedup();
        v
    }

    #[test]
    fn command_line_passwords_after_a_space() {
        let pw = "Vq7rT2xL9mNb4Zk";
        assert_eq!(
            r(&format!("mycli login --password {pw} --user bob")),
            "mycli login --password [REDACTED] --user bob"
        );
        assert_eq!(r(&format!("tool --api-token '{pw}' run")), "tool --api-token '[REDACTED]' run");
        assert_eq!(r(&format!("tool --client-secret \"{pw}\"")), "tool --client-secret \"[REDACTED]\"");
        assert_eq!(r(&format!("tool --password={pw}")), "tool --password=[REDACTED]");
        assert_eq!(rules_of(&format!("tool --password {pw}")), ["cli-password"]);
        for keep in [
            "      --password string   Password",
            "      --password-stdin    Take the password from stdin",
            "docker login --username foo --password $REGISTRY_PASSWORD",
            "tool --token \"${{ secrets.DEPLOY_TOKEN }}\" --verbose",
            "tool --token-file /run/secrets/token --verbose",
            "mycli --password --user bob",
            "i-- ; x--; --token",
            "tool --api-key YOUR_API_KEY_HERE",
        ] {
            assert_eq!(r(keep), keep);
        }
    }

    #[test]
    fn values_that_try_to_slip_past() {
        let s = "Zq8rT3vL0xN7aB2cD4eF";
        // Split in pieces by `+`, in either quote.
        assert_eq!(r(r#"password = "Zq8rT3" + "vL0xN7aB2c""#), r#"password = "[REDACTED]""#);
        assert_eq!(r("api_key = 'Zq8rT3vL' + '0xN7aB2cD4eF';"), "api_key = '[REDACTED]';");
        // A .env value shaped like an identifier but random.
        assert_eq!(r("API_KEY=abcd1234efgh5678XYZ"), "API_KEY=[REDACTED]");
        assert_eq!(r(&format!("token: {s}")), "token: [REDACTED]");
        assert_eq!(r(&format!("  client_secret: \"{s}\"")), "  client_secret: \"[REDACTED]\"");
        // Escaped quotes, punctuation, a value with underscores of mixed case.
        assert_eq!(r(&format!(r#"cfg = "{{\"token\": \"{s}\"}}""#)), r#"cfg = "{\"token\": \"[REDACTED]\"}""#);
        assert_eq!(r("SECRET_KEY = 'k3y_V4lue_Zx9Qw2Er7Ty'"), "SECRET_KEY = '[REDACTED]'");
        assert_eq!(r("access_token = \"4642492f-d8bd-47f1-a005-0c08ae4657df\""), "access_token = \"[REDACTED]\"");
        // A comparison with a literal is still one.
        assert_eq!(r(&format!(r#"if password == "{s}" {{"#)), r#"if password == "[REDACTED]" {"#);
        // A value on the line after its key.
        assert_eq!(r(&format!("secret:\n  {s}\n")), "secret:\n  [REDACTED]\n");
    }

    #[test]
    fn known_token_shapes() {
        assert_eq!(r("aws_key_id AKIAIOSFODNN7EXAMPLE here"), "aws_key_id [REDACTED] here");
        assert_eq!(r("t=ghp_0123456789abcdefghijABCDEFGHIJ012345;"), "t=[REDACTED];");
        assert_eq!(r("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"), "[REDACTED]");
        assert_eq!(r("AKIA is a prefix, AKIASHORT is not a key"), "AKIA is a prefix, AKIASHORT is not a key");
    }

    #[test]
    fn well_known_formats() {
        for (line, want) in [
            ("slack xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "slack [REDACTED]"),
            ("STRIPE=sk_live_4eC39HqLyjWDarjtT1zdp7dc", "STRIPE=[REDACTED]"),
            ("r = rk_live_51H8abcDEFghiJKLmno", "r = [REDACTED]"),
            ("maps AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe x", "maps [REDACTED] x"),
            ("npm npm_abcdefghijABCDEFGHIJ0123456789abcdef", "npm [REDACTED]"),
            ("OPENAI sk-proj-Ab3dEf5gHi7jKl9mNo1pQr3sTu5vWx7yZ", "OPENAI [REDACTED]"),
            ("x sk-ant-api03-Ab3dEf5gHi7jKl9mNo1pQr3sTu5vWx7yZaB3", "x [REDACTED]"),
            ("gl glpat-Ab3dEf5gHi7jKl9mNo1p", "gl [REDACTED]"),
            (
                "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
                "jwt [REDACTED] end",
            ),
            ("https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", "https://[REDACTED]"),
            ("  id_rsa: LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZLS0tLS0KYjNCbGJu", "  id_rsa: [REDACTED]"),
            ("  tls.pem: LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlC", "  tls.pem: [REDACTED]"),
        ] {
            assert_eq!(r(line), want, "{line}");
        }
        // Near misses stay visible.
        for line in [
            "pk_live_4eC39HqLyjWDarjtT1zdp7dc is publishable",
            "sk-learn-is-a-python-package-name",
            "xoxb is a prefix",
            "eyJ alone, eyJhbGciOiJIUzI1NiJ9 alone",
            "AIza",
            "  ca.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM",
        ] {
            assert_eq!(r(line), line);
        }
    }

    #[test]
    fn authorization_headers() {
        // The scheme stays visible: only the credential is a secret.
        assert_eq!(r("Authorization: Bearer 8f4e2a9c1b7d3e5f6a0b"), "Authorization: Bearer [REDACTED]");
        assert_eq!(r(r#"-H "Authorization: Bearer 8f4e2a9c1b7d3e5f6a0b""#), r#"-H "Authorization: Bearer [REDACTED]""#);
        assert_eq!(r("curl -H 'authorization: token 0123abcd4567ef89'"), "curl -H 'authorization: token [REDACTED]'");
        assert_eq!(r("  headers['x'] = 'Basic dXNlcjpwYXNzd29yZA=='"), "  headers['x'] = 'Basic [REDACTED]'");
        for line in [
            "The API uses bearer tokens for authentication.",
            r#"-H "Authorization: Bearer ${TOKEN}""#,
            r#"headers = {"Authorization": "Bearer " + token}"#,
            "Basic authentication is enabled",
        ] {
            assert_eq!(r(line), line);
        }
    }

    #[test]
    fn url_credentials_lose_the_password_only() {
        assert_eq!(
            r("DATABASE_URL=postgres://admin:S3cr3t!pw@db.internal:5432/app"),
            "DATABASE_URL=postgres://admin:[REDACTED]@db.internal:5432/app"
        );
        assert_eq!(r("redis://:p4ssw0rd@localhost:6379/0"), "redis://:[REDACTED]@localhost:6379/0");
        assert_eq!(r("amqp://u:p@ss:w0rd@mq/"), "amqp://u:[REDACTED]@mq/");
        for line in [
            "https://user:${PASSWORD}@host/x",
            "https://example.com:8080/path?a=b",
            "git@github.com:org/repo.git",
            "see https://registry.npmjs.org/@scope/pkg",
        ] {
            assert_eq!(r(line), line);
        }
    }

    #[test]
    fn generic_assignments_cover_gitleaks_samples() {
        let s = "Zq8rT3vL0xN7aB2cD4eF";
        for (line, want) in [
            (format!(r#"generic_api_token = "{s}""#), r#"generic_api_token = "[REDACTED]""#.to_string()),
            (format!("apiToken={s}"), "apiToken=[REDACTED]".into()),
            (format!("  \"api_token\": \"{s}\""), "  \"api_token\": \"[REDACTED]\"".into()),
            (format!("api_token: '{s}'"), "api_token: '[REDACTED]'".into()),
            (format!(r#"string apiToken = "{s}";"#), r#"string apiToken = "[REDACTED]";"#.into()),
            (format!("apiToken := `{s}`"), "apiToken := `[REDACTED]`".into()),
            (format!(r#"$apiToken .= "{s}""#), r#"$apiToken .= "[REDACTED]""#.into()),
            (
                format!(r#"System.setProperty("API_TOKEN", "{s}")"#),
                r#"System.setProperty("API_TOKEN", "[REDACTED]")"#.into(),
            ),
            (format!(r#"  "apiToken" => "{s}""#), r#"  "apiToken" => "[REDACTED]""#.into()),
            (format!(r#"API_TOKEN ::= "{s}""#), r#"API_TOKEN ::= "[REDACTED]""#.into()),
            (format!(r#"API_TOKEN ?= "{s}""#), r#"API_TOKEN ?= "[REDACTED]""#.into()),
            (format!("<apiToken>{s}</apiToken>"), "<apiToken>[REDACTED]</apiToken>".into()),
            (
                format!(r#"{{"config.ini": "API_TOKEN={s}\nBACKUP=true"}}"#),
                r#"{"config.ini": "API_TOKEN=[REDACTED]\nBACKUP=true"}"#.into(),
            ),
            (format!("creds = {s}"), "creds = [REDACTED]".into()),
            (format!("mySecretString={s}"), "mySecretString=[REDACTED]".into()),
            (format!("todo_secret_do_not_commit = {s}"), "todo_secret_do_not_commit = [REDACTED]".into()),
            (format!(r#"access_key = "{s}""#), r#"access_key = "[REDACTED]""#.into()),
            (format!(r#"auth = "{s}""#), r#"auth = "[REDACTED]""#.into()),
            (format!(r#"private_key = '{s}'"#), r#"private_key = '[REDACTED]'"#.into()),
            (format!("bearer: {s}"), "bearer: [REDACTED]".into()),
            (format!(r#"os.environ.get("API_KEY", "{s}")"#), r#"os.environ.get("API_KEY", "[REDACTED]")"#.into()),
            (
                "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
                "export AWS_SECRET_ACCESS_KEY=[REDACTED]".into(),
            ),
            (
                r#""client_secret" : "6da89121079f83b2eb6acccf8219ea982c3d79bccc3e9c6a85856480661f8fde","#.into(),
                r#""client_secret" : "[REDACTED]","#.into(),
            ),
            (
                r#"utils.GetEnvOrDefault("api_token", "dafa7817-e246-48f3-91a7-e87653d587b8")"#.into(),
                r#"utils.GetEnvOrDefault("api_token", "[REDACTED]")"#.into(),
            ),
            (format!(r#"cfg = {{\"password\": \"{s}\"}}"#), r#"cfg = {\"password\": \"[REDACTED]\"}"#.into()),
            (format!(r#"api_keys = ["{s}"]"#), r#"api_keys = ["[REDACTED]"]"#.into()),
            (format!("login(user, password={s}, x=1)"), "login(user, password=[REDACTED], x=1)".into()),
        ] {
            assert_eq!(r(&line), want, "{line}");
        }
    }

    #[test]
    fn passwords_with_punctuation_in_every_quoting_style() {
        for pw in ["p?a,s;s(w)o<r>d[1]{2}Xy9!", "Tr0ub4dor&3;horse?", "a(b)c<d>e[f]g{h}i;j,k?", "Zq8!rT3#vL0@xN7$"] {
            for op in ["=", ":", ":=", "=>", "?="] {
                for q in ["", "'", "\"", "`"] {
                    for key in ["password", "DB_PASSWORD", "  db.password", "export MYSQL_PWD"] {
                        let line = format!("{key} {op} {q}{pw}{q}");
                        assert_eq!(r(&line), format!("{key} {op} {q}[REDACTED]{q}"), "{line}");
                    }
                    if !q.is_empty() {
                        let line = format!("connect(host, password {op} {q}{pw}{q}, 3)");
                        assert_eq!(r(&line), format!("connect(host, password {op} {q}[REDACTED]{q}, 3)"), "{line}");
                    }
                }
            }
            let line = format!(r#"  "password": "{pw}","#);
            assert_eq!(r(&line), r#"  "password": "[REDACTED]","#);
            let line = format!("password={pw}  # rotate me");
            assert_eq!(r(&line), "password=[REDACTED]  # rotate me");
        }
        assert_eq!(r("DB_PASSWORD='Tr0ub4dor&3;horse?'"), "DB_PASSWORD='[REDACTED]'");
        // A quoted password of letters is still one, unless it is a placeholder.
        assert_eq!(r(r#"password = "correcthorsebatterystaple""#), r#"password = "[REDACTED]""#);
        assert_eq!(r(r#"password = "your-password-here""#), r#"password = "your-password-here""#);
    }

    #[test]
    fn ordinary_code_and_placeholders_stay_visible() {
        for line in [
            "let keyboard_layout = default_layout();",
            "token = self.next_token()",
            "    token = self.next_token()",
            "fn secret_key(&self) -> &str {",
            "API_KEY=${API_KEY}",
            "key: value",
            "password: hunter2",
            "token = aaaaaaaaaaaaaaaaaaaaaaaa",
            r#"api_key = os.getenv("OPENAI_API_KEY")"#,
            r#"password = os.environ["DB_PASSWORD"]"#,
            "let api_key = std::env::var(\"API_KEY\")?;",
            "token := os.Getenv(\"GITHUB_TOKEN\")",
            "const apiKey = process.env.API_KEY;",
            "    pub api_key: Option<String>,",
            "    api_key: Option<String>,",
            "    secret: &'static str,",
            "auth_token: <your-token>",
            "secret: xxxxxxxxxxxxxxxx",
            "password: changeme",
            r#"api_key: "your-api-key-here""#,
            "key_file: /etc/ssl/private/server.key",
            "credentials = ./secrets/creds.json",
            "credentials: config/service-account.json",
            "const tokenizer = new Tokenizer(options);",
            "max_tokens = 4096",
            r#"author = "Jane Doe <jane@example.com>""#,
            r#""accessor":"rA1wk0Y45YCufyfq","#,
            r#"public_key = "9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit""#,
            r#"capital = "Washington, D.C. 20500""#,
            "token_url: https://github.com/login/oauth/access_token",
            "ssh_authorized_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGmQ2 user@host",
            "password_hash = bcrypt.hash(pw, rounds)",
            "if (token === undefined) return;",
            "  secret_count_ = 0;",
            "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
            "  token: the next token in the stream of input",
            r#"description = "The api key is read from the environment at start""#,
            "$password = $request->input('password');",
            "password = user.password",
            "key_id = 3",
            "private:",
        ] {
            assert_eq!(r(line), line);
        }
    }

    #[test]
    fn pem_blocks_redact_their_body_and_keep_markers() {
        let pem = "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nxyz+/\n-----END RSA PRIVATE KEY-----\nb\n";
        assert_eq!(
            r(pem),
            "a\n-----BEGIN RSA PRIVATE KEY-----\n[REDACTED]\n[REDACTED]\n-----END RSA PRIVATE KEY-----\nb\n"
        );
        assert_eq!(
            r("x\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk"),
            "x\n-----BEGIN OPENSSH PRIVATE KEY-----\n[REDACTED]"
        );
        let encrypted =
            "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B\n\nMIIEow\n";
        assert_eq!(
            r(encrypted),
            "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B\n\n[REDACTED]\n"
        );
        let pgp = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF+abc\n=Ab3d\n-----END PGP PRIVATE KEY BLOCK-----\n";
        assert!(!r(pgp).contains("lQOYBF") && !r(pgp).contains("=Ab3d"));
    }

    const BODY: [&str; 7] = ["MIIEvQ", "MzEfYy", "NMoSfm", "qgtzJ6", "p2PKSQ", "ZVEiR2", "Ab3d"];
    const LINES: [&str; 7] = [
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
        "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu",
        "NMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEovGhLa0VzMaQ8s+CLOyS56YyCFGeJZ",
        "qgtzJ6GR3eqoYSW9b9UMvkBpZODSctWSNGj3P7jRFDO5VoTwCQAWbFnOjDfH5Ulg",
        "p2PKSQnSJP3AJLQNFNe7br1XbrhV//eO+t51mIpGSDCUv3E0DDFcWDTH9cXDTTlR",
        "ZVEiR2BwpZOOkE/Z0/BVnhZYL71oZV34bKfWjQIt6V/isSMahdsAASACp4ZTGtwi",
        "Ab3d==",
    ];

    fn key_file(begin: &str, line: impl Fn(&str) -> String, end: &str) -> String {
        let mut f = String::from("// config\n");
        f += begin;
        for l in LINES {
            f += &line(l);
        }
        f += end;
        f += "after();\n";
        f
    }

    #[test]
    fn pem_short_last_line_alone() {
        let file = key_file("-----BEGIN PRIVATE KEY-----\n", |l| format!("{l}\n"), "-----END PRIVATE KEY-----\n");
        let lines = consistent(&file);
        hidden(&lines.join("\n"), &BODY);
        assert_eq!(lines[8], "[REDACTED]");
        assert_eq!(lines[9], "-----END PRIVATE KEY-----");
        assert_eq!(lines[10], "after();");
    }

    #[test]
    fn pem_as_string_literals() {
        let js = key_file(
            "const KEY = \"-----BEGIN PRIVATE KEY-----\\n\" +\n",
            |l| format!("  \"{l}\\n\" +\n"),
            "  \"-----END PRIVATE KEY-----\\n\";\n",
        );
        let lines = consistent(&js);
        hidden(&lines.join("\n"), &BODY);
        assert_eq!(lines[1], "const KEY = \"-----BEGIN PRIVATE KEY-----\\n\" +");
        assert_eq!(lines[8], "  \"[REDACTED]\\n\" +");
        let java = key_file(
            "String k = \"-----BEGIN RSA PRIVATE KEY-----\\n\"\n",
            |l| format!("    + \"{l}\\n\"\n"),
            "    + \"-----END RSA PRIVATE KEY-----\";\n",
        );
        hidden(&consistent(&java).join("\n"), &BODY);
        let py = key_file(
            "KEY = (\n    b'-----BEGIN EC PRIVATE KEY-----\\n'\n",
            |l| format!("    b'{l}\\n'\n"),
            "    b'-----END EC PRIVATE KEY-----\\n'\n)\n",
        );
        hidden(&consistent(&py).join("\n"), &BODY);
        let json = key_file(
            "{\"key\": [\n  \"-----BEGIN PRIVATE KEY-----\\\\n\",\n",
            |l| format!("  \"{l}\\\\n\",\n"),
            "  \"-----END PRIVATE KEY-----\\\\n\"\n]}\n",
        );
        hidden(&consistent(&json).join("\n"), &BODY);
        let json = key_file(
            "{\"key\": [\n  \"-----BEGIN PRIVATE KEY-----\\n\",\n",
            |l| format!("  \"{l}\\n\",\n"),
            "  \"-----END PRIVATE KEY-----\\n\"\n]}\n",
        );
        hidden(&consistent(&json).join("\n"), &BODY);
        let yaml = key_file(
            "tls:\n  key: |\n    -----BEGIN EC PRIVATE KEY-----\n",
            |l| format!("    {l}\n"),
            "    -----END EC PRIVATE KEY-----\n",
        );
        let lines = consistent(&yaml);
        hidden(&lines.join("\n"), &BODY);
        assert_eq!(lines[3], "    -----BEGIN EC PRIVATE KEY-----");
        let body = LINES.join("\\n");
        let one = format!(
            "{{\"private_key\": \"-----BEGIN PRIVATE KEY-----\\n{body}\\n-----END PRIVATE KEY-----\\n\", \"id\": 3}}\n"
        );
        assert_eq!(r(&one), "{\"private_key\": \"-----BEGIN PRIVATE KEY-----\\n[REDACTED]\\n-----END PRIVATE KEY-----\\n\", \"id\": 3}\n");
    }

    #[test]
    fn commented_out_keys() {
        for lead in ["# ", "// ", " * ", "; ", "-- ", "> "] {
            let file = key_file(
                &format!("{lead}-----BEGIN PRIVATE KEY-----\n"),
                |l| format!("{lead}{l}\n"),
                &format!("{lead}-----END PRIVATE KEY-----\n"),
            );
            let lines = consistent(&file);
            hidden(&lines.join("\n"), &BODY);
            assert_eq!(lines[8], format!("{lead}[REDACTED]").trim_end(), "{lead:?}");
        }
    }

    #[test]
    fn code_that_mentions_markers_opens_no_block() {
        let code = "const BEGIN: &str = \"-----BEGIN RSA PRIVATE KEY-----\";\nfn parse(s: &str) -> Option<Key> {\n    let body = s.strip_prefix(BEGIN)?;\n    decode(body)\n}\nbody\nreturn\n";
        assert_eq!(consistent(code).join("\n") + "\n", code);
        let check = "if line.starts_with(\"-----BEGIN PRIVATE KEY-----\") {\n    inside\n}\n";
        assert_eq!(consistent(check).join("\n") + "\n", check);
    }

    #[test]
    fn values_on_the_lines_after_their_key() {
        let yaml = "db:\n  password:\n    Zq8!rT3#vL0@xN7$\n  client_secret: >-\n    q8Zr3xL0vT7mN2pW5kJ9\n  note: |\n    q8Zr3xL0vT7mN2pW5kJ9\napi_keys:\n  - q8Zr3xL0vT7mN2pW5kJ9aa\n  - \"Xq8Zr3xL0vT7mN2pW5kJ\"\nsecrets:\n  github: abcdefghij123\n  region: eu-west-1a9Zq8X\nauth_help: |\n  Ask the admin for access to the vault.\n";
        let lines = consistent(yaml);
        assert_eq!(lines[2], "    [REDACTED]");
        assert_eq!(lines[4], "    [REDACTED]");
        assert_eq!(lines[6], "    q8Zr3xL0vT7mN2pW5kJ9", "not under a secret key");
        assert_eq!(lines[8], "  - [REDACTED]");
        assert_eq!(lines[9], "  - \"[REDACTED]\"");
        assert_eq!(lines[11], "  github: abcdefghij123", "a nested mapping is not a value");
        assert_eq!(lines[12], "  region: eu-west-1a9Zq8X");
        assert_eq!(lines[14], "  Ask the admin for access to the vault.", "prose");
        let py = "API_KEY = (\n    \"q8Zr3xL0vT7mN2pW5kJ9\"\n    \"aB3dE5fG7hJ9kL1mN3pQ\"\n)\nx = (\n    \"q8Zr3xL0vT7mN2pW5kJ9\"\n)\n";
        let lines = consistent(py);
        assert_eq!(lines[1], "    \"[REDACTED]\"");
        assert_eq!(lines[2], "    \"[REDACTED]\"");
        assert_eq!(lines[5], "    \"q8Zr3xL0vT7mN2pW5kJ9\"");
        // At the margin: a lone literal is the value; a list item or a
        // statement is not.
        let margin = "API_KEY = (\n\"q8Zr3xL0vT7mN2pW5kJ9\"\n)\nAPI_KEYS = (\n\"q8Zr3xL0vT7mN2pW5kJ9\",\n)\nTOKEN = (\nq8Zr3xL0vT7mN2pW5kJ9 + x\n)\n";
        let lines = consistent(margin);
        assert_eq!(lines[1], "\"[REDACTED]\"");
        assert_eq!(lines[4], "\"q8Zr3xL0vT7mN2pW5kJ9\",");
        assert_eq!(lines[7], "q8Zr3xL0vT7mN2pW5kJ9 + x");
        let sh = "export TOKEN=\\\n  q8Zr3xL0vT7mN2pW5kJ9\n";
        assert_eq!(consistent(sh)[1], "  [REDACTED]");
        let cpp = "class A {\nprivate:\n    int secret_count_ = 0;\n    std::string token_name_;\n};\n";
        assert_eq!(consistent(cpp).join("\n") + "\n", cpp);
    }

    #[test]
    fn long_values_go_whole() {
        let data: String = (0..6000).map(|i| LINES[i % 6].as_bytes()[(i * 7) % 64] as char).collect();
        let file = format!("users:\n- name: admin\n  user:\n    client-key-data: {data}\n    token: {}\n", &data[..40]);
        let lines = consistent(&file);
        assert_eq!(lines[3], "    client-key-data: [REDACTED]");
        assert_eq!(lines[4], "    token: [REDACTED]");
    }

    #[test]
    fn lookback_bounds_what_a_line_depends_on() {
        // A key block whose BEGIN is more than LOOKBACK before a body line:
        // lines far enough down read as outside, the same in every split.
        let mut file = String::from("-----BEGIN PRIVATE KEY-----\n");
        while file.len() < LOOKBACK + 200 {
            file += LINES[file.len() % 6];
            file += "\n";
        }
        let lines = consistent(&file);
        assert!(lines[1..100].iter().all(|l| l == "[REDACTED]"));
        assert_eq!(lines.last().unwrap().len(), 64, "beyond the lookback");
        // A longer `before` is cut to LOOKBACK, the same as a cut one.
        let filler = "x = 1\n".repeat(LOOKBACK / 6 + 10);
        let before = format!("-----BEGIN PRIVATE KEY-----\n{filler}");
        let cut = &before[before.len() - LOOKBACK..];
        assert_eq!(redact_lines(before.as_bytes(), b"Ab3d==\n"), redact_lines(cut.as_bytes(), b"Ab3d==\n"));
        // Near the start of a file, `before` is all of it.
        assert_eq!(redact_lines(b"-----BEGIN PRIVATE KEY-----\nMIIE\n", b"Ab3d==\n").0, b"[REDACTED]\n");
    }

    #[test]
    fn a_cut_window_does_not_misread_its_first_line() {
        // The window of the value line starts inside `# the password:`,
        // which cut reads `password:`; that line is not a key, so the
        // value under it (six long lines further down) stays.
        let head = "# the password:\n";
        let cut = head.len() - "password:\n".len();
        let each = (LOOKBACK - (head.len() - cut)) / 6;
        assert_eq!(each * 6, LOOKBACK - (head.len() - cut));
        let filler = format!("  {}\n", "x".repeat(each - 3)).repeat(6);
        let value = "  Zq8!rT3#vL0@xN7$\n";
        let file = format!("{head}{filler}");
        assert_eq!(file.len() - cut, LOOKBACK);
        let (shown, _) = redact_lines(&file.as_bytes()[cut..], value.as_bytes());
        assert_eq!(shown, value.as_bytes());
        let (whole, _) = redact_lines(b"", format!("{file}{value}").as_bytes());
        assert!(whole.ends_with(value.as_bytes()));
        // With the key line whole in the window, the same value goes.
        let (whole, _) = redact_lines(b"", format!("password:\n{}{value}", &filler[each..]).as_bytes());
        assert!(whole.ends_with(b"  [REDACTED]\n"));
    }

    #[test]
    fn a_mixed_file_reads_the_same_in_every_split() {
        let mut file = String::new();
        file += "# settings\naws = AKIAIOSFODNN7EXAMPLE\npassword:\n  Zq8!rT3#vL0@xN7$\n";
        file += &key_file(
            "k = \"-----BEGIN PRIVATE KEY-----\\n\" +\n",
            |l| format!("  \"{l}\\n\" +\n"),
            "  \"-----END PRIVATE KEY-----\\n\";\n",
        );
        file += "DB_PASSWORD='Tr0ub4dor&3;horse?'\nurl = postgres://a:b3cr3tpw@h/db\r\nplain line\n";
        file += &"filler line of ordinary text, nothing to see\n".repeat(50);
        let lines = consistent(&file);
        hidden(&lines.join("\n"), &["AKIAIOSF", "Zq8!", "Tr0ub", "b3cr3t"]);
        hidden(&lines.join("\n"), &BODY);
    }

    #[test]
    fn edits_stay_inside_lines() {
        let text = "<entry key=\"password\">\nZq8rT3vL0xN7aB2cD4eF\n</entry>\n<add key=\"ApiKey\" value=\"\nZq8rT3vL0xN7aB2cD4eF\"/>\n";
        let lines = consistent(text);
        assert!(lines.iter().all(|l| !l.contains("[REDACTED]")), "{lines:?}");
        assert_eq!(
            r("<entry key=\"password\">Zq8rT3vL0xN7aB2cD4eF</entry>"),
            "<entry key=\"password\">[REDACTED]</entry>"
        );
    }

    #[test]
    fn random_files_split_the_same_and_keep_the_invariants() {
        const BITS: [&str; 40] = [
            "password",
            "API_KEY",
            "token",
            "secret",
            "key",
            "auth",
            "pass",
            " = ",
            ": ",
            ":=",
            "=>",
            "=",
            ":",
            "\"",
            "'",
            "`",
            "\\\"",
            "(",
            ")",
            "[",
            "]",
            "{",
            "}",
            ",",
            ";",
            " ",
            "  ",
            "    ",
            "-----BEGIN PRIVATE KEY-----",
            "-----END PRIVATE KEY-----",
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
            "Ab3d==",
            "Zq8!rT3#vL0@xN7$",
            "|",
            ">-",
            "\\n",
            "# ",
            "self.x()",
            "https://u:p4ss@h/",
            "\r",
        ];
        let mut seed = 11u64;
        let mut next = |n: usize| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        for _ in 0..300 {
            let mut file = String::new();
            for _ in 0..next(12) + 1 {
                for _ in 0..next(8) {
                    file += BITS[next(BITS.len())];
                }
                if next(9) == 0 {
                    file.push(char::from(b"\x00\x1b\xff\t"[next(4)] as char));
                }
                file += "\n";
            }
            if next(4) == 0 {
                file.pop(); // no newline at the end of the file
            }
            let lines = consistent(&file);
            let (out, edits) = redact_lines(b"", file.as_bytes());
            let mut at = 0;
            for e in &edits {
                assert!(at <= e.start && e.start < e.end && e.end <= file.len(), "{edits:?} in {file:?}");
                assert!(!file.as_bytes()[e.start..e.end].contains(&b'\n'), "an edit across lines in {file:?}");
                at = e.end;
            }
            assert_eq!(out.iter().filter(|&&c| c == b'\n').count(), file.matches('\n').count());
            assert_eq!(lines.len(), file.lines().count().max(usize::from(!file.is_empty())));
        }
    }

    #[test]
    fn spans_move_with_the_edits() {
        let text = b"x AKIAIOSFODNN7EXAMPLE y";
        let (_, edits) = redact_lines(b"", text);
        assert_eq!(remap(0, &edits, false), 0);
        assert_eq!(remap(22, &edits, false), 2 + MARK.len());
        assert_eq!(remap(5, &edits, false), 2);
        assert_eq!(remap(5, &edits, true), 2 + MARK.len());
    }

    #[test]
    fn keywords_scan_like_their_pattern() {
        let re =
            Regex::new(r"(?i-u)access|auth|api|credential|creds|key|pass(?:w(?:or)?d|phrase)?|pwd|secret|token|bearer")
                .unwrap();
        let mut seed = 7u64;
        let alphabet = b"aAcCeEkKpPsStTbBrRwWdDoOhHiIyYnNlL_ -=";
        for _ in 0..2000 {
            let text: Vec<u8> = (0..40)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    alphabet[(seed >> 33) as usize % alphabet.len()]
                })
                .collect();
            let want: Vec<(usize, usize)> = re.find_iter(&text).map(|m| (m.start(), m.end())).collect();
            assert_eq!(keywords(&text).collect::<Vec<_>>(), want, "{}", String::from_utf8_lossy(&text));
        }
        let text = b"PASSWORD passphrase passwd pass apiKey Bearer CREDS";
        let found: Vec<&[u8]> = keywords(text).map(|(s, e)| &text[s..e]).collect();
        assert_eq!(found, [&b"PASSWORD"[..], b"passphrase", b"passwd", b"pass", b"api", b"Key", b"Bearer", b"CREDS"]);
    }

    #[test]
    fn newlines_found_eight_bytes_at_a_time() {
        for len in 0..40 {
            for at in 0..=len {
                let mut s = vec![b'x'; len];
                if at < len {
                    s[at] = b'\n';
                }
                let want = (at < len).then_some(at);
                assert_eq!(newline(&s), want);
                assert_eq!(newline_back(&s), want);
            }
        }
        assert_eq!(newline(b"a\nb\nc"), Some(1));
        assert_eq!(newline_back(b"a\nb\nc"), Some(3));
        assert_eq!(newline_back(b"\n\x8a\x0a\xff\xffabcdefgh"), Some(2));
    }

    #[test]
    fn names_that_hold_a_keyword_but_no_secret() {
        for name in [
            "keyboard_layout",
            "author",
            "authority",
            "public_key",
            "pubKey",
            "key_id",
            "keyId",
            "apiVersion",
            "api_version_number",
            "token_url",
            "tokenType",
            "max_tokens",
            "maxTokens",
            "next_page_token",
            "pageToken",
            "PublicKey",
            "sort-key",
            "password_length",
            "secret_name",
            "csrf_token",
            "capital",
            "rapidjson",
            "KEY_LEFT",
            "monkey",
            "random_access",
            "credentials_file",
            "accessor",
            "unauthorized",
        ] {
            assert!(harmless_name(name.as_bytes()), "{name}");
        }
        for name in [
            "api_key",
            "apiKey",
            "API_KEY",
            "private_key",
            "secret_key",
            "access_token",
            "auth_token",
            "password",
            "db_password",
            "client_secret",
            "secret_id",
            "key",
            "tokens",
            "keyIdentity",
            "authorization",
            "authentication_token",
            "session_key",
            "passwordHash",
        ] {
            assert!(!harmless_name(name.as_bytes()), "{name}");
        }
    }

    #[test]
    fn every_keyword_is_found_in_any_case() {
        let all = "access auth api bearer credential creds key password passwd passphrase pass pwd secret token";
        for w in all.split(' ') {
            for w in [w.to_string(), w.to_ascii_uppercase(), w[..1].to_ascii_uppercase() + &w[1..]] {
                let text = format!("x.{w}=1");
                assert_eq!(keywords(text.as_bytes()).next(), Some((2, 2 + w.len())), "{w}");
            }
        }
    }

    #[test]
    fn identifiers_read_apart_from_random_strings() {
        for v in ["X509SubjectKeyIDExtension", "nl80211_key_attributes", "URLPatternComponentResult", "CorrectHorse1"] {
            assert!(identifier_like(v.as_bytes()), "{v}");
        }
        for v in ["Zq8rT3vL0xN7aB2cD4eF", "6da89121079f83b2eb6acccf8219ea98", "Tr0ub4dorHorse", "wJalrXUtnFEMIK7MDENG"]
        {
            assert!(!identifier_like(v.as_bytes()), "{v}");
        }
    }

    #[test]
    fn unmap_inverts_remap() {
        let text = b"a = ghp_0123456789abcdefghijABCDEFGHIJ012345 and AKIAIOSFODNN7EXAMPLE z";
        let (shown, edits) = redact_lines(b"", text);
        assert_eq!(edits.len(), 2);
        for pos in [0, 1, 4, text.len() - 1, text.len()] {
            if !edits.iter().any(|e| e.start < pos && pos < e.end) {
                assert_eq!(unmap(remap(pos, &edits, false), &edits, false), pos, "{pos}");
            }
        }
        let z = shown.iter().rposition(|&c| c == b'z').unwrap();
        assert_eq!(unmap(z, &edits, false), text.len() - 1);
        assert_eq!(unmap(5, &edits, false), edits[0].start);
        assert_eq!(unmap(5, &edits, true), edits[0].end);
    }

    #[test]
    fn a_before_without_its_newline_loses_the_partial_line() {
        let (a, _) = redact_lines(b"-----BEGIN PRIVATE KEY-----\nMIIE", b"Ab3d==\n");
        let (b, _) = redact_lines(b"-----BEGIN PRIVATE KEY-----\n", b"Ab3d==\n");
        assert_eq!(a, b);
        assert_eq!(a, b"[REDACTED]\n");
    }
}
