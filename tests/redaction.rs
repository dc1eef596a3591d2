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

/// --passthru prints every line: a secret line among them (a result's
/// neighbour, or in a file with no result) comes back `[REDACTED]` and is
/// counted; NUL-terminated records (--null-data) are redacted as lines are,
/// through files and stdin alike, and so is a file of one huge record
/// without a terminator.
#[test]
fn passthru_and_null_data_lines_are_redacted_and_counted() {
    let key = "AKIAIOSFODNN7EXAMPLE";
    let pw = "Zq8rT3vL0xN7aB2cD4eF";
    let t = Tree::new();
    t.write("app.py", format!("import os\nAWS_ID = \"{key}\"\nprint('hello')\n"));
    t.write("conf.py", format!("password = \"{pw}\"\nnothing else\n"));
    t.write("records.dat", format!("hello\0password = \"{pw}\"\0aws {key}\0bye\0"));
    let mut huge = "x".repeat(3 << 20);
    huge.push_str(&format!(" password = \"{pw}\" hello"));
    t.write("huge.dat", huge);
    let search = |args: &[&str]| {
        let mut all = vec!["search", "--color", "never"];
        all.extend_from_slice(args);
        let out = run(t.path(), &all);
        (stdout(&out), String::from_utf8_lossy(&out.stderr).into_owned(), out.status.code())
    };
    let (out, err, code) = search(&["--passthru", "-n", "hello", "app.py", "conf.py"]);
    assert_eq!(code, Some(0));
    assert!(!out.contains(key) && !out.contains(pw), "{out}");
    assert!(out.contains("app.py-2-AWS_ID = \"[REDACTED]\"\n"), "{out}");
    assert!(out.contains("conf.py-1-password = \"[REDACTED]\"\n"), "{out}");
    assert!(err.contains("2 lines shown with secrets [REDACTED]"), "{err}");
    // The page's answer counts them too.
    let page = crate::util::json(t.path(), &["search", "--json-page", "--passthru", "-n", "hello", "conf.py"]);
    assert_eq!(page["stats"]["lines_redacted"], 1, "{page}");
    assert_eq!(page["matches"][0]["column"], 0, "{page}");
    for args in [&["--null-data", "-n", "a"][..], &["--null-data", "--passthru", "-n", "bye"]] {
        let mut args = args.to_vec();
        args.push("records.dat");
        let (out, err, _) = search(&args);
        assert!(!out.contains(key) && !out.contains(pw), "{args:?}: {out:?}");
        assert!(
            out.contains("2:password = \"[REDACTED]\"\0") || out.contains("2-password = \"[REDACTED]\"\0"),
            "{out:?}"
        );
        assert!(err.contains("2 lines shown with secrets [REDACTED]"), "{args:?}: {err}");
    }
    // Nothing to find inside a record's secret.
    assert_eq!(search(&["--null-data", "-c", "Zq8r", "records.dat"]).0, "");
    assert_eq!(search(&["--null-data", "-c", "AKIAI", "records.dat"]).0, "");
    // One record of 3 MiB, no terminator: its secret hidden all the same.
    let (out, err, code) = search(&["--null-data", "-c", "hello", "huge.dat"]);
    assert_eq!((out.as_str(), code), ("1\0", Some(0)), "{err}");
    let (out, _, _) = search(&["--null-data", "--passthru", "hello", "huge.dat"]);
    assert!(!out.contains(pw) && out.contains("password = \"[REDACTED]\" hello"), "{}", out.len());
    assert_eq!(search(&["--null-data", "-c", "Zq8r", "huge.dat"]).0, "");
}

/// Counts see nothing inside a secret however many lines of a file match:
/// its lines are redacted one by one, or, once many match, the searcher's
/// buffer at once.
#[test]
fn counts_leave_out_secrets_in_files_where_most_lines_match() {
    let pw = "Zq8rT3vL0xN7aB2cD4eF";
    let t = Tree::new();
    for lines in [4, 40, 400, 4000] {
        let text: String = (0..lines)
            .map(|i| if i % 4 == 3 { format!("password = \"{pw}\"\n") } else { format!("Zq8r {i}\n") })
            .collect();
        t.write(&format!("f{lines}.txt"), text);
    }
    for jobs in ["-j1", "-j2"] {
        let out = run(t.path(), &[jobs, "-c", "--sort", "path", "Zq8r"]);
        assert_eq!(stdout(&out), "f4.txt:3\nf40.txt:30\nf400.txt:300\nf4000.txt:3000\n", "{jobs}");
        let out = run(t.path(), &[jobs, "--count-matches", "Zq8r", "f4000.txt"]);
        assert_eq!(stdout(&out), "3000\n", "{jobs}");
    }
}

/// A line comes back the same whether it is one result among many (the
/// searcher's buffer redacted whole, once most of its lines are asked for)
/// or shown on its own (a line of context, redacted with the text before
/// it): every kind of secret, in a file of several buffers, through one
/// instance and two.
#[test]
fn a_line_is_redacted_alike_as_one_result_of_many_or_alone() {
    let key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n\
               VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA PRIVATE KEY-----\n";
    let mut text = String::from("START\n");
    for i in 0..2000 {
        text.push_str(&format!("fn step_{i}(x: u32) -> u32 {{ x + {i} }}\n"));
        match i % 8 {
            0 => text.push_str("password = \"Zq8rT3vL0xN7aB2cD4eF\"\n"),
            1 => text.push_str(key),
            2 => text.push_str("config:\n  client_secret: |\n    Qm9vL2xK9pT4wR7mZq8vL2xK9pT4\n  name: x\n"),
            3 => text.push_str("AWS_ID = \"AKIAIOSFODNN7EXAMPLE\"\n"),
            4 => text.push_str("url = \"https://deploy:Vx7qP2mLr9Tb4Kz@git.example.org/r\"\n"),
            5 => text.push_str("machine ci.example.org login builder password Vx7qP2mLr9Tb4Kz\n"),
            6 => text.push_str("API_TOKEN = (\n    \"c2VjcmV0LXRva2VuLXZhbHVlLTk4NzY1\"\n)\n"),
            _ => text.push_str("let token = lexer.next_token();\n"),
        }
    }
    let t = Tree::new();
    t.write("mixed.txt", &text);
    for jobs in ["-j1", "-j2"] {
        let search = |args: &[&str]| {
            let mut all = vec!["search", jobs, "--color", "never", "-n"];
            all.extend_from_slice(args);
            all.push("mixed.txt");
            stdout(&run(t.path(), &all))
        };
        // Every line a result, or (but the first) a line of context.
        let results = search(&["-v", "QQQ"]);
        let alone = search(&["--passthru", "START"]).replacen("1:START", "1-START", 1);
        let alone: String = alone.lines().map(|l| l.replacen('-', ":", 1) + "\n").collect();
        assert_eq!(results.lines().count(), text.lines().count(), "{jobs}");
        assert_eq!(results, alone, "{jobs}");
        for secret in ["Zq8r", "MIIEow", "VTLw7", "Qm9vL2", "AKIAIOSF", "Vx7qP", "c2VjcmV0"] {
            assert!(!results.contains(secret), "{jobs}: {secret}");
        }
        assert_eq!(results.matches("[REDACTED]").count(), 250 * 8, "{jobs}");
    }
}

/// A file searched on past its NUL bytes (`--binary`) reads them as line
/// breaks; so does redaction, whether the text before a line comes from the
/// searcher's buffer or from the file: a key block that a NUL byte opens
/// (its BEGIN marker, a NUL, a header) hides its body wherever the buffers
/// end. Before, the answer depended on it (10 to 80 lines counted here).
#[test]
fn nul_bytes_read_as_line_breaks_are_line_breaks_to_redaction() {
    let t = Tree::new();
    let body = |i: usize| format!("MIIE{}", &"Qm9vL2xK9pT4wR7mZq8vL2xK9pT4abcdefgh0123456789+/AB".repeat(2)[i % 7..]);
    for filler in (3000..9000).step_by(500) {
        let mut text: String = (0..filler).map(|i| format!("filler {i}\n")).collect();
        text.push_str("MIIE in prose, shown\n-----BEGIN RSA PRIVATE KEY-----\0Proc-Type: 4,ENCRYPTED\n");
        (0..80).for_each(|i| text.push_str(&(body(i) + "\n")));
        text.push_str("-----END RSA PRIVATE KEY-----\n");
        (0..300).for_each(|i| text.push_str(&format!("filler tail {i}\n")));
        t.write(&format!("d{filler}/f.txt"), text);
    }
    let want: String = (3000..9000).step_by(500).map(|f| format!("d{f}/f.txt:1\n")).collect();
    for jobs in ["-j1", "-j2"] {
        let out = run(t.path(), &[jobs, "-c", "--binary", "--sort", "path", "MIIE"]);
        assert_eq!(stdout(&out), want, "{jobs}");
    }
}

/// A search that reads a file redacted whole (PCRE2, stop-on-nonmatch, a
/// pattern that may span lines) reports byte offsets in the file, as rg
/// does: a secret's mark is shorter or longer than the secret, and the
/// lines after it are where they are. The secret's own line is redacted;
/// the others are rg's, byte for byte.
#[test]
fn byte_offsets_after_a_secret_are_the_files() {
    let t = Tree::new();
    t.write("app.py", "a = 1\npassword = \"conta1n3rize14xQ\"\nError one\nok\nError two\n");
    t.write("short.py", "api_key = \"Zq8vL2xK9pT4wR7m\"\nError three\n");
    for args in [
        &["-b", "-n", "Error"][..],
        &["-b", "-n", "-P", "Error"],
        &["-b", "-o", "-P", "E(?=rror)"],
        &["-b", "--stop-on-nonmatch", "Error"],
        &["-b", "-n", "-U", "Error (one|three)\\n"],
        &["-b", "-n", "-P", "-A", "1", "Error t"],
    ] {
        let mut sorted = vec!["--sort", "path"];
        sorted.extend_from_slice(args);
        let theirs = stdout(&crate::conformance::rg(t.path(), &sorted));
        let ours = stdout(&run(t.path(), args));
        assert!(!theirs.is_empty() && !ours.contains("[REDACTED]"), "{args:?}: {theirs}");
        assert_eq!(ours, theirs, "{args:?}");
    }
    // In rg's JSON too (absolute_offset), and on standard input.
    let json = |out: &std::process::Output| -> Vec<(String, u64)> {
        stdout(out)
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|v| v["type"] == "match")
            .map(|v| {
                (
                    v["data"]["lines"]["text"].as_str().unwrap().to_string(),
                    v["data"]["absolute_offset"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let args = ["--json", "-P", "Error", "app.py"];
    assert_eq!(json(&run(t.path(), &args)), json(&crate::conformance::rg(t.path(), &args)));
    let piped = |mut cmd: std::process::Command| {
        let mut child = cmd
            .args(["-b", "-P", "Error"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(b"password = \"conta1n3rize14xQ\"\nError one\n").unwrap();
        stdout(&child.wait_with_output().unwrap())
    };
    // (No --root: a search with no path reads piped standard input.)
    let mut ours = std::process::Command::new(env!("CARGO_BIN_EXE_sandgrep"));
    ours.current_dir(t.path()).env("SANDGREP_CACHE_DIR", crate::util::cache_dir());
    let mut theirs = crate::util::rg_command();
    theirs.current_dir(t.path());
    assert_eq!(piped(ours), piped(theirs));
}

/// A file redacted whole before it is searched (PCRE2, a pattern that may
/// span lines, stop-on-nonmatch, context in a named file, which is searched
/// on past a NUL) is the same answer as one redacted a line at a time: the
/// lines after a key block's END (a heredoc's `EOF`, a certificate) come
/// back as `read` returns them; a secret the searcher shows only once it
/// has decoded the text (UTF-16, a BOM) or split it at NUL bytes is hidden;
/// and NUL-terminated records are its lines, their redactions counted on
/// their own line numbers.
#[test]
fn a_file_redacted_whole_answers_as_one_redacted_by_line() {
    let t = Tree::new();
    let key = "MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun";
    let cert = "MIIDOjCCAvWgAwIBAgIEPCY/UDANBglghkgBZQMEAwIFADBsMRAwDgYDVQQGEwdV";
    let script = format!(
        "cat > id <<EOF\n-----BEGIN RSA PRIVATE KEY-----\n{key}\n{key}\n-----END RSA PRIVATE KEY-----\nEOF\n\
         cat > crt <<EOF\n-----BEGIN CERTIFICATE-----\n{cert}\n-----END CERTIFICATE-----\nEOF\n\
         password = \"conta1n3rize14xQ\"\n"
    );
    t.write("setup.sh", &script);
    let read = stdout(&run(t.path(), &["read", "setup.sh"]));
    assert!(read.contains(&format!("{cert}\n")) && !read.contains(key), "{read}");
    let passthru =
        format!("{}\n", read.lines().enumerate().map(|(i, l)| format!("{}-{l}", i + 1)).collect::<Vec<_>>().join("\n"));
    for engine in [&[][..], &["-P"], &["-U"], &["--stop-on-nonmatch"]] {
        let search = |args: &[&str]| {
            let mut all = vec!["search", "--color", "never", "-n"];
            all.extend_from_slice(engine);
            all.extend_from_slice(args);
            stdout(&run(t.path(), &all))
        };
        assert_eq!(search(&["--passthru", "zzz", "setup.sh"]), passthru, "{engine:?}");
        assert_eq!(search(&["-A1", "END RSA", "setup.sh"]), "5:-----END RSA PRIVATE KEY-----\n6-EOF\n", "{engine:?}");
    }
    // Text the searcher decodes (an encoding asked for, a UTF-8 BOM) or
    // reads with its NUL bytes as line breaks (binary data converted):
    // what the whole redaction saw before that is redacted again.
    let pw = "Zq8rT3vL0xN7aB2cD4eF";
    let utf16: Vec<u8> = format!("a = 1\npassword = \"{pw}\"\n").encode_utf16().flat_map(u16::to_le_bytes).collect();
    t.write("u16.txt", utf16);
    t.write("nul/a.yml", format!("name: x\npassword: |\0  {pw}\nother: 1\n"));
    t.write(
        "bom.yml",
        format!("\u{feff}db:\n  password: |\n    {pw}\n  key: 1\ntoken = \"conta1n3rize14xQ\" # note\n"),
    );
    for args in [
        &["-E", "utf-16le", "-P", "password", "u16.txt"][..],
        &["-E", "utf-16le", "--stop-on-nonmatch", "password", "u16.txt"],
        &["-E", "utf-16le", "-C1", "a", "u16.txt"],
        &["--json", "--binary", "-A1", "password", "nul"],
        &["--json", "--binary", "-P", "-C1", "password", "nul"],
    ] {
        let out = stdout(&run(t.path(), &[&["search", "--color", "never"][..], args].concat()));
        assert!(out.contains("[REDACTED]") && !out.contains(pw), "{args:?}: {out}");
    }
    let guess = run(t.path(), &["search", "--binary", "-P", "-c", "Zq8r", "nul"]);
    assert_eq!(stdout(&guess), "");
    let bom = |args: &[&str]| {
        stdout(&run(t.path(), &[&["search", "--color", "never", "-n"][..], args, &["bom.yml"]].concat()))
    };
    assert_eq!(bom(&["-P", "key|note"]), "4:  key: 1\n5:token = \"[REDACTED]\" # note\n");
    assert_eq!(
        bom(&["--passthru", "zzz"]),
        "1-db:\n2-  password: |\n3-    [REDACTED]\n4-  key: 1\n5-token = \"[REDACTED]\" # note\n"
    );
    // Records: a key on one, its value on the next.
    t.write("records.dat", "deploy\0password: |\0  Zq8rT3vL0xN7aB2cD4eF\0x = 1\0api_key = \"Qm9vL2xK9pT4wR7m\"\0bye\0");
    for engine in [&[][..], &["-P"], &["-U"]] {
        let mut args = vec!["search", "--json-page", "--null-data", "--passthru", "x", "records.dat"];
        args.extend_from_slice(engine);
        let page = crate::util::json(t.path(), &args);
        let lines: Vec<(u64, String, Vec<u64>)> = page["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let redactions = m["redactions"].as_array().unwrap().iter().map(|r| r["line"].as_u64().unwrap());
                (m["line"].as_u64().unwrap(), m["text"].as_str().unwrap().to_string(), redactions.collect())
            })
            .collect();
        let want = [
            (1, "deploy", vec![]),
            (2, "password: |", vec![]),
            (3, "  [REDACTED]", vec![3]),
            (4, "x = 1", vec![]),
            (5, "api_key = \"[REDACTED]\"", vec![5]),
            (6, "bye", vec![]),
        ];
        let want: Vec<(u64, String, Vec<u64>)> = want.into_iter().map(|(n, l, r)| (n, l.to_string(), r)).collect();
        assert_eq!(lines, want, "{engine:?}");
    }
}

/// The text before a line, which redaction reads back from the file when
/// the searcher's buffer does not reach far enough, is read as the searcher
/// decoded it: transcoded from the encoding asked for, and without the
/// UTF-8 byte order mark its reader drops. Before, it was read at the same
/// offsets in the raw bytes, and a YAML value under `password: |` showed.
#[test]
fn text_before_a_line_is_read_as_the_searcher_decoded_it() {
    let t = Tree::new();
    let pw = "Xk9pQ2vLmN8rT4wZ7yB3";
    let tail = format!("db:\n  password: |\n    {pw}\n  user: admin\n");
    // Past the searcher's first buffer (64 KiB), in Latin-1 that grows
    // when decoded, and in UTF-16.
    let filler: String = (0..5000).map(|i| format!("x{i} = \"caf\u{e9} {}\"\n", "\u{e9}".repeat(20))).collect();
    let latin1: Vec<u8> = format!("{filler}{tail}").chars().map(|c| c as u32 as u8).collect();
    t.write("w/latin1.txt", latin1);
    let filler: String = (0..4000).map(|i| format!("filler line {i}\n")).collect();
    t.write("w/utf16.txt", format!("{filler}{tail}").encode_utf16().flat_map(u16::to_le_bytes).collect::<Vec<u8>>());
    t.write("w/bom.yml", format!("\u{feff}{tail}"));
    // A UTF-8 BOM is dropped however the file is searched: walked, named
    // (searched whole), or with --mmap.
    let filler = format!("{}\n", "x".repeat(99)).repeat(655);
    t.write("big_bom.txt", format!("\u{feff}{filler}{tail}"));
    for args in [
        &["-n", ".", "big_bom.txt"][..],
        &["-n", "--mmap", ".", "big_bom.txt"],
        &["-n", "-b", "-U", "user", "big_bom.txt"],
    ] {
        let out = stdout(&run(t.path(), &[&["search", "--color", "never"][..], args].concat()));
        assert!(!out.contains(pw) && out.contains("user: admin"), "{args:?}: {out}");
    }
    let offset = |out: std::process::Output| stdout(&out).lines().last().unwrap().to_string();
    let args = ["-n", "-b", "user", "big_bom.txt"];
    assert_eq!(
        offset(run(t.path(), &[&["search", "--color", "never"][..], &args].concat())),
        offset(crate::conformance::rg(t.path(), &args))
    );
    for (encoding, file) in [("latin1", "w/latin1.txt"), ("utf-16le", "w/utf16.txt"), ("auto", "w/bom.yml")] {
        // (Walked, and named: searched whole.)
        for args in [&["-n", "Xk9p|admin", "w"][..], &["-c", "Xk9p|admin", "w"], &["-n", "-C2", "admin", file]] {
            let all = [&["search", "--color", "never", "-E", encoding][..], args].concat();
            let out = stdout(&run(t.path(), &all));
            assert!(!out.contains(pw) && !out.contains(":2\n"), "{all:?}: {out}");
            assert!(out.contains("admin") || out.contains(":1"), "{all:?}: {out}");
        }
    }
}
