//! Secrets with a format of their own, found anywhere in a line: the
//! table of known formats ([`super::rules`]), `sk-` keys, the credential
//! after an HTTP auth scheme, the password of a URL.

#[allow(unused_imports)]
use super::*;

/// One known secret format: a row of [`FORMATS`].
pub(super) struct Format {
    pub(super) rule: Rule,
    /// Strings one of which every match holds (case as written): a text
    /// with none of them skips the row (and the table's pattern is only
    /// run on a text that holds one of some row's).
    pub(super) keywords: &'static [&'static str],
    /// The pattern, ASCII, never matching a newline; a match is redacted
    /// whole (group 1 when the pattern has one).
    pub(super) pattern: &'static str,
    /// The least Shannon entropy (bits per byte) of the match: under it the
    /// match is a placeholder (`ghp_xxxxxxxx…`).
    pub(super) entropy: f64,
    /// The format's own checksum. A valid one adds confidence (the entropy
    /// floor and `context` are not needed); a failed one changes nothing.
    pub(super) checksum: Option<fn(&[u8]) -> bool>,
    /// Words one of which (ASCII case aside) must be on the line, for a
    /// format too plain to stand alone (`s.` Vault tokens); empty: none.
    pub(super) context: &'static [&'static str],
    /// What else the match must be (`sk-` keys hold digits and are no name).
    pub(super) shape: Option<fn(&[u8]) -> bool>,
}

macro_rules! opt {
    () => {
        None
    };
    ($e:expr) => {
        Some($e)
    };
}

macro_rules! formats {
    ($($rule:ident [$($kw:literal),+] $pat:literal $(, entropy $e:literal)? $(, checksum $ck:expr)? $(, context [$($cx:literal),+])? $(, shape $sh:expr)?;)+) => {
        /// The known formats, after gitleaks' rules and trufflehog's
        /// detectors (prefixes and lengths as they give them; lengths are
        /// minimums where a format has grown).
        pub(super) const FORMATS: &[Format] = &[$(Format {
            rule: Rule::$rule,
            keywords: &[$($kw),+],
            pattern: $pat,
            entropy: 0.0 $(+ $e)?,
            checksum: opt!($($ck)?),
            context: &[$($($cx),+)?],
            shape: opt!($($sh)?),
        }),+];
    };
}

formats! {
    AWS_ACCESS_KEY_ID ["A3T", "AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"]
        // (A floor only under `AKIAXXXXXXXXXXXXXXXX`: an id's sixteen are
        // base 32 and need not look random.)
        r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b", entropy 1.5;
    GITHUB_TOKEN ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"] r"\bgh[pousr]_[A-Za-z0-9]{36,}", entropy 3.0,
        checksum github_checksum;
    GITHUB_TOKEN ["github_pat_"] r"\bgithub_pat_[A-Za-z0-9_]{22,}", entropy 3.0;
    GITLAB_TOKEN ["glpat-", "gldt-", "glrt-", "glcbt-", "glffct-", "glft-", "glimt-", "glagent-", "gloas-", "glsoat-"]
        r"\b(?:glpat|gldt|glrt|glcbt|glffct|glft|glimt|glagent|gloas|glsoat)-[A-Za-z0-9_-]{20,}", entropy 3.0;
    GITLAB_TOKEN ["glptt-"] r"\bglptt-[0-9a-f]{40}", entropy 3.0;
    GITLAB_TOKEN ["GR1348941"] r"\bGR1348941[A-Za-z0-9_-]{20,}", entropy 3.0;
    SLACK_TOKEN ["xox"] r"\bxox[abeoprs]-[A-Za-z0-9-]{10,}|\bxoxe\.xox[bp]-1-[A-Za-z0-9-]{20,}", entropy 3.0;
    SLACK_TOKEN ["xapp-"] r"\bxapp-[0-9]-[A-Za-z0-9-]{10,}", entropy 3.0;
    SLACK_WEBHOOK ["hooks.slack.com"] r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}";
    STRIPE_KEY ["sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"] r"\b[rs]k_(?:live|test|prod)_[A-Za-z0-9]{10,}", entropy 3.0;
    STRIPE_KEY ["whsec_"] r"\bwhsec_[A-Za-z0-9+/=]{24,}", entropy 3.0;
    GOOGLE_API_KEY ["AIza"] r"\bAIza[0-9A-Za-z_-]{30,}", entropy 3.0;
    GOOGLE_OAUTH_SECRET ["GOCSPX-"] r"\bGOCSPX-[A-Za-z0-9_-]{20,}", entropy 3.0;
    GCP_SERVICE_ACCOUNT ["private_key_id"] r#""private_key_id"[ \t]*:[ \t]*"([a-f0-9]{40})""#;
    NPM_TOKEN ["npm_"] r"\bnpm_[A-Za-z0-9]{36,}", entropy 3.0;
    PYPI_TOKEN ["pypi-AgEIcHlwaS5vcmc"] r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{20,}";
    HUGGINGFACE_TOKEN ["hf_"] r"\bhf_[A-Za-z]{30,}", entropy 3.0;
    SENDGRID_KEY ["SG."] r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{30,}";
    DIGITALOCEAN_TOKEN ["dop_v1_", "doo_v1_", "dor_v1_"] r"\bdo[por]_v1_[a-f0-9]{40,}";
    SHOPIFY_TOKEN ["shpat_", "shpca_", "shppa_", "shpss_"] r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32,}";
    AGE_SECRET_KEY ["AGE-SECRET-KEY-1"] r"AGE-SECRET-KEY-1[0-9A-Z]{40,}";
    VAULT_TOKEN ["hvs.", "hvb."] r"\bhv[sb]\.[A-Za-z0-9_-]{90,}", entropy 3.0;
    // Vault's older service tokens: `s.` and 24 characters, on a line that says vault.
    VAULT_TOKEN ["s."] r"\bs\.[A-Za-z0-9]{24}\b", entropy 3.5, context ["vault"];
    OPENAI_KEY ["T3BlbkFJ"] r"\bsk-(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{10,}T3BlbkFJ[A-Za-z0-9_-]{10,}";
    ANTHROPIC_KEY ["sk-ant-"] r"\bsk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{20,}", entropy 3.0;
    // Other `sk-` keys (OpenAI's project keys, DeepSeek, …): digits in them, and no name.
    OPENAI_KEY ["sk-"] r"\bsk-(?:[a-z]{2,10}-){0,2}[A-Za-z0-9_-]{20,}", entropy 3.0, shape sk_shape;
    AZURE_STORAGE_KEY ["AccountKey="] r"AccountKey=([A-Za-z0-9+/]{40,}={0,2})";
    // An Azure AD (Entra) client secret: three characters, a digit, `Q~`.
    AZURE_CLIENT_SECRET ["Q~"] r"(?:^|[^A-Za-z0-9_~.-])([A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})(?:$|[^A-Za-z0-9_~.-])",
        entropy 3.0;
    // A PEM private key, base64-encoded whole (Kubernetes secrets): "-----BEGIN",
    // then "PRIVATE" at any of its three alignments; certificates stay.
    BASE64_PRIVATE_KEY ["LS0tLS1CRUdJTi"] r"\bLS0tLS1CRUdJTi[A-Za-z0-9+/]{0,40}?(?:UFJJVkFUR|BSSVZBVE|QUklWQVRF)[A-Za-z0-9+/=]*";
    JWT ["eyJ"] r"\beyJ[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]*)*";
}

const _: () = assert!(FORMATS.len() <= 64, "rows marked in a u64");

/// `sk-…` keys that are not OpenAI's or Anthropic's own formats: two
/// digits or more (`sk-` starts ordinary words too), and not a name
/// (`sk-ecdsa-sha2-nistp256@openssh.com`).
fn sk_shape(s: &[u8]) -> bool {
    s.iter().filter(|c| c.is_ascii_digit()).count() >= 2 && !name_like(s)
}

/// GitHub's token checksum: the last six characters are the CRC-32 of the
/// thirty before them, in base 62 (`0-9A-Za-z`), zero-padded.
pub(super) fn github_checksum(s: &[u8]) -> bool {
    let Some(body) = s.get(4..) else { return false };
    if body.len() != 36 {
        return false;
    }
    let (random, check) = body.split_at(30);
    let mut n = crc32(random);
    let mut want = [b'0'; 6];
    for slot in want.iter_mut().rev() {
        *slot = BASE62[(n % 62) as usize];
        n /= 62;
    }
    want == check
}

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// CRC-32 (IEEE), bit by bit: a checksum is computed only for a match.
pub(super) fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// Whether a row's pattern starts with a literal (after `\b`): such rows
/// are scanned together, one automaton whose literal prefixes are its
/// prefilter; a row that starts with a class is looked for where its
/// keywords are, one that needs a context word where that word is.
fn scanned_together(f: &Format) -> bool {
    let p = f.pattern.strip_prefix("\\b").unwrap_or(f.pattern);
    f.context.is_empty() && p.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '"' || c == '_')
}

/// Marker words, whether ASCII case is ignored, and the rows each sends to
/// be looked for.
type Markers = Vec<(String, bool, Vec<usize>)>;

/// The keywords of the rows not [`scanned_together`] as markers (a row's
/// context words in any ASCII case, as its check reads them: `vAuLt` too),
/// each with the rows it sends to be looked for.
fn markers() -> &'static Markers {
    static M: OnceLock<Markers> = OnceLock::new();
    M.get_or_init(|| {
        let mut markers: Markers = Vec::new();
        for (i, f) in FORMATS.iter().enumerate().filter(|(_, f)| !scanned_together(f)) {
            let words: Vec<(String, bool)> = match f.context {
                [] => f.keywords.iter().map(|k| (k.to_string(), false)).collect(),
                cx => cx.iter().map(|w| (w.to_ascii_lowercase(), true)).collect(),
            };
            for (w, fold) in words {
                match markers.iter_mut().find(|(m, f, _)| *m == w && *f == fold) {
                    Some((_, _, rows)) => rows.push(i),
                    None => markers.push((w, fold, vec![i])),
                }
            }
        }
        markers
    })
}

/// The source of [`formats_re`].
pub(super) fn formats_pattern() -> String {
    let all: Vec<String> =
        FORMATS.iter().filter(|f| scanned_together(f)).map(|f| format!("(?:{})", f.pattern)).collect();
    format!("(?-u){}", all.join("|"))
}

/// The literals one of which every match of [`formats_re`] holds, and
/// whether ASCII case is ignored: the keywords of the rows scanned together
/// (every match of a row holds one of its keywords, case as written) and
/// the markers.
pub(super) fn format_gates() -> Vec<(String, bool)> {
    let rows =
        FORMATS.iter().filter(|f| scanned_together(f)).flat_map(|f| f.keywords.iter().map(|k| (k.to_string(), false)));
    rows.chain(markers().iter().map(|(m, fold, _)| (m.clone(), *fold))).collect()
}

/// The patterns of the rows [`scanned_together`] as one, so a text is
/// scanned once (which row matched is found after).
fn formats_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(&formats_pattern()).unwrap())
}

/// Row `i`'s pattern alone, compiled when a match needs it: anchored (to
/// tell a match's row) or not (to scan for a row of its own).
fn row_re(i: usize, anchored: bool) -> &'static Regex {
    static R: OnceLock<Vec<[OnceLock<Regex>; 2]>> = OnceLock::new();
    let rows = R.get_or_init(|| FORMATS.iter().map(|_| [OnceLock::new(), OnceLock::new()]).collect());
    rows[i][usize::from(anchored)].get_or_init(|| {
        let p = FORMATS[i].pattern;
        Regex::new(&if anchored { format!("(?-u)^(?:{p})$") } else { format!("(?-u){p}") }).unwrap()
    })
}

/// Redacts the matches of the table's rows in `text`, whose `lines` (start
/// and end) are those that can hold one (see `prefilter`).
pub(super) fn format_edits(text: &[u8], lines: impl Iterator<Item = (usize, usize)>, edits: &mut Vec<Edit>) {
    let mut marked = 0u64; // rows whose marker was found
    for (ls, le) in lines {
        let line = &text[ls..le];
        // A marker anywhere in the line, inside a match of another row or
        // not (a token that fails its own row's checks may hold one that
        // passes this row's: `sk-glpat-…`).
        for (w, fold, rows) in markers() {
            let found = if *fold {
                contains_ci(line, w.as_bytes())
            } else {
                memchr::memmem::find(line, w.as_bytes()).is_some()
            };
            if found {
                marked |= rows.iter().fold(0, |acc, &i| acc | 1 << i);
            }
        }
        for m in formats_re().find_iter(line) {
            let s = m.as_bytes();
            // The row: the first whose keyword the match holds and whose pattern
            // matches it whole (the scan's leftmost-first order).
            let row = FORMATS.iter().enumerate().find(|(i, f)| {
                scanned_together(f)
                    && f.keywords.iter().any(|k| memchr::memmem::find(s, k.as_bytes()).is_some())
                    && row_re(*i, true).is_match(s)
            });
            if let Some((i, f)) = row {
                let (ms, me) = (ls + m.start(), ls + m.end());
                let c = row_re(i, true).captures(s).and_then(|c| c.get(1));
                let (a, b) = c.map_or((ms, me), |g| (ms + g.start(), ms + g.end()));
                push_match(text, f, a, b, edits);
            }
        }
    }
    // The rows a marker sent.
    while marked != 0 {
        let i = marked.trailing_zeros() as usize;
        marked &= marked - 1;
        let f = &FORMATS[i];
        for c in row_re(i, false).captures_iter(text) {
            let g = c.get(1).unwrap_or_else(|| c.get(0).unwrap());
            push_match(text, f, g.start(), g.end(), edits);
        }
    }
}

/// Redacts `a..b`, a match of row `f`, if it passes the row's checks.
fn push_match(text: &[u8], f: &Format, a: usize, b: usize, edits: &mut Vec<Edit>) {
    let v = &text[a..b];
    let confident = f.checksum.is_some_and(|ck| ck(v));
    if !confident {
        if entropy(v) < f.entropy || f.shape.is_some_and(|sh| !sh(v)) {
            return;
        }
        if !f.context.is_empty() {
            let ls = text[..a].iter().rposition(|&c| c == b'\n').map_or(0, |p| p + 1);
            let le = text[b..].iter().position(|&c| c == b'\n').map_or(text.len(), |p| b + p);
            if !f.context.iter().any(|w| contains_ci(&text[ls..le], w.as_bytes())) {
                return;
            }
        }
    }
    edits.push(Edit { start: a, end: b, rule: f.rule });
}

/// Everything of the table that decides what is redacted, for
/// [`super::table_fingerprint`].
pub(super) fn table_text() -> String {
    let mut out = format!("markers {:?}\n", markers());
    for f in FORMATS {
        out += &format!(
            "{} {:?} {} {} {} {:?} {}\n",
            f.rule.name(),
            f.keywords,
            f.pattern,
            f.entropy,
            f.checksum.is_some(),
            f.context,
            f.shape.is_some()
        );
    }
    out
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

/// Redacts the credential after an HTTP auth scheme (`Bearer …`, `Basic …`,
/// `Authorization: token …`) in the `lines` of `text` that can hold one.
pub(super) fn auth_edits(text: &[u8], lines: impl Iterator<Item = (usize, usize)>, edits: &mut Vec<Edit>) {
    for (ls, le) in lines {
        let line = &text[ls..le];
        // (A search for captures sets them up first: most lines have none to find.)
        if !auth_re().is_match(line) {
            continue;
        }
        for c in auth_re().captures_iter(line) {
            let g = c.get(1).unwrap();
            let s = g.as_bytes();
            let (gs, ge) = (ls + g.start(), ls + g.end());
            let words = s.iter().all(|&c| c.is_ascii_alphabetic() || matches!(c, b'_' | b'.' | b'-' | b'/'));
            // `Bearer realm="…"`, `Bearer resource_metadata="…"`: a
            // challenge's parameter, not a credential.
            // (A name, then one `=`: base64 credentials end `==` or hold digits.)
            let name = &s[..s.len().saturating_sub(1)];
            let param = s.ends_with(b"=")
                && !name.is_empty()
                && name.iter().all(|&c| c.is_ascii_alphabetic() || c == b'_' || c == b'-')
                && text.get(ge).is_some_and(|&c| c == b'"' || c.is_ascii_alphanumeric());
            let dummy = dummy_word(s) || contains_ci(s, b"token");
            if !words && !param && !dummy && entropy(s) >= 3.0 && !placeholder_re().is_match(s) {
                edits.push(Edit { start: gs, end: ge, rule: Rule::AUTHORIZATION_HEADER });
            }
        }
    }
}

/// Redacts the password of a URL (`scheme://user:password@host`).
pub(super) fn url_edits(text: &[u8], edits: &mut Vec<Edit>) {
    static SCHEME: OnceLock<memchr::memmem::Finder<'static>> = OnceLock::new();
    if finder(&SCHEME, b"://").find(text).is_some() {
        for c in url_re().captures_iter(text) {
            let g = c.get(1).unwrap();
            let s = g.as_bytes();
            let dummy = [&b"password"[..], b"passwd", b"pass", b"pwd", b"secret", b"changeme"]
                .iter()
                .any(|w| s.eq_ignore_ascii_case(w));
            // `test:test@`, `a:b@`: a parser's test vector, not a password.
            let user = &text[..g.start() - 1];
            let user = &user[user.iter().rposition(|&c| c == b'/').map_or(0, |i| i + 1)..];
            // Long enough to be a password: 8 bytes or more once decoded
            // (`foobar`, `%F0%9F%92%A9` are a parser's test vectors).
            let echo = pct_decode(s).len() < 8 || s.eq_ignore_ascii_case(user);
            if !dummy && !echo && !placeholder_re().is_match(s) {
                edits.push(Edit { start: g.start(), end: g.end(), rule: Rule::URL_PASSWORD });
            }
        }
    }
}
