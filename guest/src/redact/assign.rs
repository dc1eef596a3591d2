//! Secret-named keys and their values on one line: the keyword scan, the
//! names that are not secrets, the operator, and where the value lies.

#[allow(unused_imports)]
use super::*;

regex! {
    /// A name and value given as attributes or element text:
    /// `<add key="ApiKey" value="…"/>`, `<entry key="password">…</entry>`.
    attr_re, ATTR_PAT = r#"(?i-u)\b(?:key|name)[ \t]*=[ \t]*["']([A-Za-z0-9_.:-]+)["']"#,
    r#"(?:[ \t]+value[ \t]*=[ \t]*(?:"([^"\n]*)"|'([^'\n]*)')|[ \t]*>([^<\n]*)<)"#,
}
/// The keywords of secret-named keys (what [`keywords`] finds).
#[allow(dead_code)] // hashed by table_fingerprint
pub(super) const KEYWORDS: &str =
    "access auth api bearer credential creds key password passwd passphrase pass pwd secret token";

/// The first two letters of each keyword (lower case), a bit per pair.
pub(super) static KEYWORD_STARTS: [u64; 1024] = {
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
pub(super) fn keywords(text: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
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
pub(super) const ANYWHERE: &str =
    "authorit unauthori accessib accessor keyboard keyword keystroke keyframe keypress keycode \
    keypad keyup keydown keymap keying keyspace keyof monkey donkey turkey hockey jockey whiskey lackey hotkey \
    issuerkeyhash usersecretsid csrf xsrf tokeniz tokenis withcredentials";
// Words before `key`/`keys` or `token`/`tokens` that end the name's word.
pub(super) const BEFORE: [(&str, &str); 2] = [
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
pub(super) const PASSWORD: &str =
    "length len policy field input label hint prompt reset strength min max regex pattern rule \
    rules validator placeholder file path env command cmd manager store encoder type mode expiry expires \
    expiration required visible visibility forgot update";
pub(super) const AFTER: [(&str, &str); 8] = [
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

/// Whether a name that holds a keyword names something that is not a
/// secret (after gitleaks' allowlist for its generic rule): `keyboard`,
/// `author`, `public_key`, `key_id`, `token_url`, `max_tokens`,
/// `password_length`… A word ends at a non-letter, the end, or a capital.
pub(super) fn harmless_name(name: &[u8]) -> bool {
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
    // (The lists split once; the name lowered once.)
    static ANYWHERE_WORDS: OnceLock<Vec<Vec<&'static [u8]>>> = OnceLock::new();
    type Listed = Vec<(&'static [u8], Vec<&'static [u8]>)>;
    static BEFORE_WORDS: OnceLock<Listed> = OnceLock::new();
    static AFTER_WORDS: OnceLock<Listed> = OnceLock::new();
    let split = |lists: &'static [(&'static str, &'static str)]| -> Listed {
        lists.iter().map(|(stem, list)| (stem.as_bytes(), words(list).collect())).collect()
    };
    let before_words = BEFORE_WORDS.get_or_init(|| split(&BEFORE));
    let after_words = AFTER_WORDS.get_or_init(|| split(&AFTER));
    let lower = name.to_ascii_lowercase();
    // (By first byte: the words that can start at each place.)
    let anywhere = ANYWHERE_WORDS.get_or_init(|| {
        let mut by_first = vec![Vec::new(); 256];
        words(ANYWHERE).for_each(|w| by_first[usize::from(w[0])].push(w));
        by_first
    });
    if (0..lower.len()).any(|i| anywhere[usize::from(lower[i])].iter().any(|w| lower[i..].starts_with(w))) {
        return true;
    }
    for i in 0..name.len() {
        // Every word looked for below starts at `i` with one of these
        // letters (`author`, `rapid`, `capital`, `random`, and the stems of
        // `BEFORE` and `AFTER`): elsewhere there is nothing to find.
        if !matches!(lower[i], b'a' | b'c' | b'k' | b'p' | b'r' | b's' | b't') {
            continue;
        }
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
        for (stem, before) in before_words {
            let n = stem.len();
            if !at(i, stem) || !ends(i + n + plural(i + n)) {
                continue;
            }
            let ends_with = |end: usize, w: &[u8]| end >= w.len() && at(end - w.len(), w);
            if before.iter().any(|w| ends_with(i, w) || sep(i.wrapping_sub(1)) == 1 && ends_with(i - 1, w)) {
                return true;
            }
        }
        for (stem, after) in after_words {
            if !at(i, stem) {
                continue;
            }
            let mut j = i + stem.len();
            if !at(j, b"size") {
                j += plural(j);
            }
            j += sep(j);
            if after.iter().any(|w| at(j, w) && ends(j + w.len())) {
                return true;
            }
        }
    }
    false
}

/// A key whose name contains a keyword: its range in the line.
pub(super) struct Key {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) password: bool,
}

pub(super) fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

/// The name around keyword `ks..ke` of `line`, and whether it names a
/// secret; `Err` carries the end of a name that does not.
pub(super) fn key_at(line: &[u8], ks: usize, ke: usize) -> Result<Key, usize> {
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

pub(super) fn key_at_password(name: &[u8]) -> bool {
    [&b"pass"[..], b"pwd"].iter().any(|w| name.windows(w.len()).any(|x| x.eq_ignore_ascii_case(w)))
}

/// What follows a key's operator.
#[derive(Debug, PartialEq)]
pub(super) enum Val {
    /// The value's range in the line and how it is written.
    Span { start: usize, end: usize, form: Form },
    /// Nothing on this line: the value follows on the next lines.
    Dangling(Dangle),
    /// A value that is not a literal (a block, a list of non-literals).
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Dangle {
    /// `key: |`, `key: >-`: every more-indented line after is the value.
    YamlBlock,
    /// `key:`: the more-indented scalar lines after.
    YamlPlain,
    /// `KEY = (`, `KEY = \`, `KEY = """`: the literal lines after.
    Other,
}

/// The operator after a key and where its value starts; `yaml` for `:`,
/// `xml` for `<key>`.
pub(super) fn operator(line: &[u8], key: &Key) -> Option<(usize, bool, bool, Option<u8>)> {
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

pub(super) fn operator_at(
    line: &[u8],
    rest: &[u8],
    i: usize,
    gap: usize,
    key: &Key,
    quoted: bool,
) -> Option<(usize, bool, bool)> {
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
pub(super) fn starts_line(line: &[u8], start: usize) -> bool {
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
pub(super) fn literal(line: &[u8], q: usize) -> (usize, usize) {
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
pub(super) fn quote_at(line: &[u8], i: usize) -> Option<usize> {
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
pub(super) fn joined(line: &[u8], q: usize, mut end: usize) -> usize {
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
pub(super) fn unjoin(v: &[u8]) -> Cow<'_, [u8]> {
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

/// A control byte (not a tab or a line's end): it ends a bare value, as a
/// blank does — `KEY=value\0` in NUL-separated records (an environment
/// dump read with `-a`) or before a form feed is the value, not a longer
/// word that no longer reads as a token.
fn control(c: u8) -> bool {
    (c < 0x20 && !matches!(c, b'\t' | b'\r' | b'\n')) || c == 0x7f
}

/// The value after an operator ending at `i`.
pub(super) fn value_at(line: &[u8], mut i: usize, yaml: bool, xml: bool, line_start: bool) -> Val {
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
            let blank = matches!(line[k], b' ' | b'\t');
            let comment = blank && (line[k + 1..].starts_with(b"#") || line[k + 1..].starts_with(b"//"));
            // A shell command goes on after the value: `export T=v && run`,
            // `T=v; run`, `T=v | tee`.
            let after = trim(&line[k..]);
            let shell = blank && ["&&", "||", "|", ";", ">", "2>"].iter().any(|op| after.starts_with(op.as_bytes()))
                || line[k] == b';' && line.get(k + 1).is_some_and(|&c| is_space(c));
            if comment || shell || control(line[k]) || line[k..].starts_with(b"\\n") || line[k..].starts_with(b"\\r") {
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
            || control(c)
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
pub(super) fn assignment(line: &[u8], ks: usize, ke: usize) -> Result<(Key, Val), usize> {
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

/// Redacts the values of secret-named keys in `text`, line by line: the
/// attributes in the `attr` lines, the keys in the `keyword` lines (those
/// that can hold one: see `prefilter`).
pub(super) fn assignment_edits(
    text: &[u8],
    attr: impl Iterator<Item = (usize, usize)>,
    keyword: impl Iterator<Item = (usize, usize)>,
    edits: &mut Vec<Edit>,
) {
    for (ls, le) in attr {
        for c in attr_re().captures_iter(&text[ls..le]) {
            let name = c.get(1).unwrap().as_bytes();
            let value = (2..=4).find_map(|i| c.get(i)).unwrap();
            let secret_name = keywords(name).any(|(s, e)| key_at(name, s, e).is_ok());
            if secret_name && secret_value(value.as_bytes(), key_at_password(name), Form::Literal) {
                edits.push(Edit { start: ls + value.start(), end: ls + value.end(), rule: Rule::GENERIC_SECRET_VALUE });
            }
        }
    }
    // (The keyword scan restarts at each line as it would have gone on:
    // no keyword, and no key's name, holds a newline.)
    for (ls, le) in keyword {
        let line = content(&text[ls..le]);
        let mut skip_until = 0;
        for (ms, me) in keywords(line) {
            if ms < skip_until {
                continue;
            }
            match assignment(line, ms, me) {
                Ok((key, val)) => {
                    skip_until = key.end;
                    if let Val::Span { start, end, form } = val {
                        if secret_value(&unjoin(&line[start..end]), key.password, form) {
                            edits.push(Edit { start: ls + start, end: ls + end, rule: Rule::GENERIC_SECRET_VALUE });
                        }
                    }
                }
                Err(end) => skip_until = end,
            }
        }
    }
}
