//! Redaction through the real binary: what it hides in every operation, and
//! code it must return untouched (SPEC §3.3). Lines are written for these
//! tests, in the shapes of real code; none is copied from a repository.

use crate::util::{run, stdout, Tree};

/// A `.netrc` written by a script: the password is hidden when the file is
/// read, when its lines are search context, and a search for the password
/// itself finds nothing.
#[test]
fn netrc_passwords_are_hidden_in_read_search_and_context() {
    let pw = "Vx7qP2mLr9Tb4Kz";
    let t = Tree::new();
    t.write(
        "deploy.sh",
        format!(
            "#!/bin/sh\ncat > \"$HOME/.netrc\" <<EOF\nmachine ci.example.org\n  login builder\n  password {pw}\nEOF\n\
             echo \"machine git.example.org login bot password {pw}\" >> \"$HOME/.netrc\"\nrun --password {pw} --verbose\n"
        ),
    );
    let read = stdout(&run(t.path(), &["read", "deploy.sh"]));
    assert!(!read.contains(pw), "{read}");
    assert_eq!(read.matches("[REDACTED]").count(), 3, "{read}");
    assert!(read.contains("  password [REDACTED]\n"), "{read}");
    let ctx = stdout(&run(t.path(), &["search", "--color", "never", "-C", "3", "login builder"]));
    assert!(!ctx.contains(pw) && ctx.contains("password [REDACTED]"), "{ctx}");
    let hit = stdout(&run(t.path(), &["search", "--color", "never", "machine git"]));
    assert!(!hit.contains(pw) && hit.contains("password [REDACTED]"), "{hit}");
    // Matching runs on the redacted text: the value is not there to find.
    for probe in [pw, "Vx7q", "Kz$"] {
        assert_eq!(stdout(&run(t.path(), &["search", "--color", "never", "-c", probe])), "", "{probe}");
    }
}

/// Code that names tokens, secrets, keys and passwords comes back byte for
/// byte, from `read` and from a search, and every line a plain scan finds,
/// sandgrep finds.
#[test]
fn code_with_secret_names_comes_back_unchanged() {
    let files = [
        (
            "parser.rs",
            "fn parse(p: &mut Parser) -> Option<Node> {\n    let l_brace_token = l_brace_token?;\n    \
             let access_token = token_cache.get(&account_id).cloned();\n    eof_token: EOF@10..11 \"\" [Newline(\"\\n\")] [],\n    \
             if tok.kind != yaml_KEY_TOKEN || mark.col-1 < indent {\n        return None;\n    }\n}\n",
        ),
        (
            "headers.go",
            "const RegistryAuthHeader = \"X-Registry-Auth\"\n\tpubKey := priv.Public().(*ecdsa.PublicKey)\n\
             \tsecretKeys := map[string]struct{}{}\n\tlink.HeaderType = TCA_SAMPLE_KEY_EX_HDR_TYPE_IP4\n\
             \tKeyExchangeCurve = \"curve25519-sha256@example.org\"\n",
        ),
        ("report.py", "    log(\" > secret_kinds:  \" + str(len(secret_kinds)))\n    api_key = os.environ.get(\"API_KEY\")\n"),
        ("app.ts", "  const token = this.scanner.nextToken();\n  tokens.forEach((token) => token.dispose());\n"),
    ];
    let t = Tree::new();
    for (name, body) in files {
        t.write(name, body);
    }
    for (name, body) in files {
        assert_eq!(stdout(&run(t.path(), &["read", name])), body, "{name}");
        // Every line that holds a keyword, as a plain scan finds it.
        let want: String = body
            .lines()
            .enumerate()
            .filter(|(_, l)| ["token", "secret", "Key", "key", "Auth"].iter().any(|k| l.contains(k)))
            .map(|(i, l)| format!("{}:{l}\n", i + 1))
            .collect();
        let got = stdout(&run(t.path(), &["search", "--color", "never", "-n", "token|secret|Key|key|Auth", name]));
        assert_eq!(got, want, "{name}");
    }
}
