//! Whether a value is a secret: literal or bare, placeholder, code, a
//! name, prose, and the entropy floor (gitleaks' generic rule).

#[allow(unused_imports)]
use super::*;

regex! {
    /// Whole values that stand for a value rather than being one.
    placeholder_re, PLACEHOLDER_PAT = r"(?i-u)^(?:\$\{[^}]*\}|\$\([^)]*\)|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9]+|\$\{\{.*\}\}|\{\{.*\}\}",
    r"|%[A-Za-z_][A-Za-z0-9_]*%|@[A-Za-z_][A-Za-z0-9_]*@|<[^<>]*>|\[[A-Za-z _-]*\]|%[+# 0-]?[a-z]|\{[0-9]{0,2}\}",
    r"|x+|\*+|\.+|#+|-+|_+|0+|null|nil|none|undefined|true|false)$",
}
regex! {
    /// A shell default, `${VAR:-value}`: the value is literal.
    shell_default_re, SHELL_DEFAULT_PAT = r"(?-u)\$\{[A-Za-z_][A-Za-z0-9_]*:?[-=][^}]"
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

/// gitleaks' generic rule: a value of a secret-named key is 10 bytes or more
/// with Shannon entropy of 3.5 bits per byte or more (3.0 for passwords).
pub(super) const MIN_VALUE_LEN: usize = 10;
pub(super) const GENERIC_ENTROPY: f64 = 3.5;
pub(super) const PASSWORD_ENTROPY: f64 = 3.0;

/// Whether a letters-only password value reads as a placeholder.
pub(super) const DUMMY_WORDS: &str =
    "your example sample placeholder change dummy redacted secret passw here xxx todo fixme \
    replace insert enter fake test none null undefined default empty hidden masked";

pub(super) fn dummy_word(v: &[u8]) -> bool {
    DUMMY_WORDS.split_ascii_whitespace().any(|w| contains_ci(v, w.as_bytes()))
}

/// How a value was written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Form {
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
pub(super) fn secret_value(v: &[u8], password: bool, form: Form) -> bool {
    let quoted = matches!(form, Form::Literal | Form::Argument);
    let v = trim(v);
    // `Field: someName,` `field: some_name?,` (a struct literal's field): a name.
    if !quoted
        && matches!(v.last(), Some(b',' | b';'))
        && v[0].is_ascii_alphabetic()
        && v[..v.len() - 1]
            .strip_suffix(b"?")
            .unwrap_or(&v[..v.len() - 1])
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'_')
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
    // quote or a backslash (or, bare, a bracket) makes it a list, a tag, code
    // or text (`"bytes,1,opt,name=key"`, `"openssh-key-v1\x00"`).
    // (In quotes, generated keys hold brackets and the like too: Django's
    // `SECRET_KEY` draws from `!@#$%^&*(-_=+)`.)
    // Long ones: a short quoted `"[]*T{"` or `"[a][b]"` is a type or a tag.
    let generated = quoted && rest.len() >= 32;
    if !password && !rest.iter().all(|&c| token_char(c) || generated && b"()[]{}<>?|;".contains(&c)) {
        return false;
    }
    // Mostly punctuation: a character set, a separator line (also when
    // percent-encoded: `%20!%22$%&'()*+`).
    let decoded = pct_decode(rest);
    if decoded.iter().filter(|c| c.is_ascii_alphanumeric()).count() * 4 < decoded.len() {
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
pub(super) fn name_like(v: &[u8]) -> bool {
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
pub(super) fn token_char(c: u8) -> bool {
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
pub(super) fn code(v: &[u8], form: Form) -> bool {
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
    // (At the very end of a line that starts with its key, `.env` or YAML,
    // a `?` is a password's last character: `PASSWORD=Tr0ub4dor3?`.)
    let tried = rest.strip_prefix(b"?").is_some_and(|r| match r.first() {
        None => form == Form::Inline,
        Some(c) => matches!(c, b'.' | b';' | b')'),
    });
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
pub(super) fn closing(v: &[u8], i: usize) -> Option<usize> {
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
pub(super) fn prose(v: &[u8], password: bool) -> bool {
    let (mut words, mut all) = (0, 0);
    // (Decoration between words, `** error **`, is no word either way.)
    for w in v.split(|&c| c == b' ' || c == b'\t').filter(|w| w.iter().any(u8::is_ascii_alphanumeric)) {
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
pub(super) fn identifier_like(v: &[u8]) -> bool {
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

/// `v` with its `%XX` escapes decoded.
pub(super) fn pct_decode(v: &[u8]) -> Cow<'_, [u8]> {
    if !v.contains(&b'%') {
        return Cow::Borrowed(v);
    }
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(v.len());
    let mut i = 0;
    while i < v.len() {
        match (v[i], v.get(i + 1).and_then(|&c| hex(c)), v.get(i + 2).and_then(|&c| hex(c))) {
            (b'%', Some(h), Some(l)) => {
                out.push(h << 4 | l);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    Cow::Owned(out)
}
