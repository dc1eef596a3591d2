//! The redaction's unit tests (code that must stay is in `code_lines_test.rs`).

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

/// A file that changes while it is searched puts other bytes where a line
/// was: the memo knows a line by its bytes, not by its place alone.
#[test]
fn memo_knows_a_line_by_its_bytes() {
    let value = b"  Zq8rT3vL0xN7aB2cD4eF\n";
    let fresh = redact_lines_at(b"password: |\n", value, 12, &mut Memo::default()).0;
    assert_ne!(fresh, value);
    let mut memo = Memo::default();
    assert_eq!(redact_lines_at(b"xxxxxxxxxx|\n", value, 12, &mut memo).0, value);
    assert_eq!(redact_lines_at(b"password: |\n", value, 12, &mut memo).0, fresh);
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
    // The generic rule does not stand in for a switched-off format.
    set_disabled(&["github-token".to_string()]).unwrap();
    let named = "github_token = ghp_0123456789abcdefghijABCDEFGHIJ012345";
    assert_eq!(r(named), named);
    set_disabled(&[]).unwrap();
    assert_eq!(r(named), "github_token = [REDACTED]");
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
fn generated_keys_with_brackets_in_quotes() {
    assert_eq!(r("SECRET_KEY = 'django-insecure-7x#(k@v)z!q2w^e8r&t5y*u1i-o3p+a9s=d'"), "SECRET_KEY = '[REDACTED]'");
    assert_eq!(r("api_secret: \"Zq8[rT3]vL0{xN7}aB2<cD4>eF?;|Wp5(Yk9)\""), "api_secret: \"[REDACTED]\"");
    // Bare, brackets are code.
    let code = "    secret_kinds = kinds[first_secret_index](k)";
    assert_eq!(r(code), code);
}

#[test]
fn a_question_mark_ends_a_password_not_code() {
    assert_eq!(r("DB_PASSWORD=Tr0ub4dor3Xq?"), "DB_PASSWORD=[REDACTED]");
    assert_eq!(r("password: Sup3rS3cretPw?"), "password: [REDACTED]");
    for keep in
        ["    let access_token = access_token?;", "        l_curly_token: l_curly_token?,", "    token: next_token?;"]
    {
        assert_eq!(r(keep), keep);
    }
}

#[test]
fn a_shell_command_after_the_value() {
    let s = "Zq8rT3vL0xN7aB2cD4eF";
    assert_eq!(
        r(&format!("export GITHUB_TOKEN_X={s} && ./deploy.sh")),
        "export GITHUB_TOKEN_X=[REDACTED] && ./deploy.sh"
    );
    assert_eq!(r(&format!("API_KEY={s}; ./run")), "API_KEY=[REDACTED]; ./run");
    assert_eq!(r(&format!("SECRET={s} | tee out")), "SECRET=[REDACTED] | tee out");
    assert_eq!(r(&format!("  password: {s}  # rotate")), "  password: [REDACTED]  # rotate");
}

#[test]
fn credentials_before_a_closing_quote_are_not_challenge_parameters() {
    assert_eq!(
        r(r#"curl -H "Authorization: Basic dXNlcjpwYXNzd29yZA==" x"#),
        r#"curl -H "Authorization: Basic [REDACTED]" x"#
    );
    assert_eq!(r(r#"h = "Bearer Zq8rT3vL0xN7aB2cD4eF=""#), r#"h = "Bearer [REDACTED]""#);
    let challenge = r#"  let h = r\#"Bearer realm="example", error="invalid_token""\#;"#;
    assert_eq!(r(challenge), challenge);
}

#[test]
fn mysql_passwords_attached_to_p() {
    let pw = "Vq7rT2xL9mNb4Zk";
    assert_eq!(r(&format!("mysql -u root -p'{pw}' app")), "mysql -u root -p'[REDACTED]' app");
    assert_eq!(
        r(&format!("  /usr/bin/mysqldump -h db -p\"{pw}\" app > a.sql")),
        "  /usr/bin/mysqldump -h db -p\"[REDACTED]\" app > a.sql"
    );
    assert_eq!(r(&format!("mariadb -u u -p{pw} -e 'select 1'")), "mariadb -u u -p[REDACTED] -e 'select 1'");
    assert_eq!(rules_of(&format!("mysql -p{pw}")), ["cli-password"]);
    for keep in [
        "mysql -u root -p app",
        "mysql -p$MYSQL_PWD app",
        "mysql -u root -phunter2 app",
        &format!("ssh -p{pw} host"),
        &format!("tar -p{pw} -xf a.tar"),
        "mkdir -p build/output/directory && mysql --version",
    ] {
        assert_eq!(r(keep), keep);
    }
}

#[test]
fn command_line_passwords_after_a_space() {
    let pw = "Vq7rT2xL9mNb4Zk";
    assert_eq!(r(&format!("mycli login --password {pw} --user bob")), "mycli login --password [REDACTED] --user bob");
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
fn formats_of_the_secret_scanners() {
    let r62 =
        "Ab3dEf5gHi7jKl9mNo1pQr3sTu5vWx7yZaB3cD5eF7gH9iJ1kL3mN5oP7qR9sT1uV3wX5yZ7aB9cD1eF3gH5iJ7kL9mN1oP3qR5sT7uV9";
    let b64 = |n: usize| r62.chars().cycle().take(n).collect::<String>();
    let cases: Vec<(String, &str)> = vec![
        (format!("SLACK=xoxb-1234567890-1234567890123-{}", b64(24)), "slack-token"),
        (format!("x = 'xoxe.xoxp-1-{}'", b64(40)), "slack-token"),
        (format!("key: sk_live_{}", b64(24)), "stripe-key"),
        (format!("k = \"AIza{}\"", b64(35)), "google-api-key"),
        (format!("  \"private_key_id\": \"{}\",", "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"), "gcp-service-account-key"),
        (
            format!("conn = \"DefaultEndpointsProtocol=https;AccountName=acct1;AccountKey={}==;EndpointSuffix=core.windows.net\"", b64(86)),
            "azure-storage-key",
        ),
        (format!("AZURE_CLIENT_SECRET_VALUE {}", "xY7" .to_string() + "8Q~" + &b64(34)), "azure-client-secret"),
        (format!("//registry.npmjs.org/:_authToken=npm_{}", b64(36)), "npm-token"),
        (format!("hdr hvs.{}", b64(95)), "vault-token"),
        (format!("x hvb.{}", b64(140)), "vault-token"),
        (format!("export VAULT_TOKEN_OLD s.{}", b64(24)), "vault-token"),
        // The line says vault in any ASCII case (as the row's check reads it).
        (format!("hashiVaUlT s.{}", b64(24)), "vault-token"),
        (format!("x = s.{} # vAULT", b64(24)), "vault-token"),
        (format!("t glpat-{}", b64(20)), "gitlab-token"),
        (format!("t gldt-{}", b64(20)), "gitlab-token"),
        (format!("t glrt-{}", b64(20)), "gitlab-token"),
        (format!("OPENAI sk-proj-{}T3BlbkFJ{}", b64(40), b64(40)), "openai-api-key"),
        (format!("OPENAI sk-{}T3BlbkFJ{}", b64(20), b64(20)), "openai-api-key"),
        (format!("claude sk-ant-api03-{}AA", b64(93)), "anthropic-api-key"),
        (format!("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.{}", b64(43)), "jwt"),
    ];
    for (line, rule) in &cases {
        let (out, edits) = redact_lines(b"", line.as_bytes());
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains("[REDACTED]"), "{line}");
        assert_eq!(edits.iter().map(|e| e.rule.name()).collect::<Vec<_>>(), [*rule], "{line} -> {out}");
        // Nothing of the secret's random part shows.
        hidden(&out, &[&b64(20)]);
    }
    // Values after their keys in npm and yarn configuration.
    assert_eq!(r("_authToken=Zq8rT3vL0xN7aB2cD4eF"), "_authToken=[REDACTED]");
    assert_eq!(r("npmAuthToken: \"Zq8rT3vL0xN7aB2cD4eF\""), "npmAuthToken: \"[REDACTED]\"");
    // `s.` alone is too plain: only on a line that says vault.
    let plain = format!("x = s.{}", b64(24));
    assert_eq!(r(&plain), plain);
}

#[test]
fn aws_ids_need_not_look_random_but_placeholders_stay() {
    assert_eq!(r("aws = \"AKIAQZZZ5555ZZZZ5555\""), "aws = \"[REDACTED]\"");
    assert_eq!(r("aws_access_key_id = AKIAXXXXXXXXXXXXXXXX"), "aws_access_key_id = AKIAXXXXXXXXXXXXXXXX");
}

#[test]
fn a_valid_checksum_only_adds_confidence() {
    // A GitHub token whose thirty characters are one repeated: under the
    // entropy floor, so a placeholder, unless its checksum holds.
    let body = "A".repeat(30);
    let mut n = formats::crc32(body.as_bytes());
    let mut check = [b'0'; 6];
    for slot in check.iter_mut().rev() {
        *slot = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"[(n % 62) as usize];
        n /= 62;
    }
    let valid = format!("ghp_{body}{}", String::from_utf8(check.to_vec()).unwrap());
    assert!(formats::github_checksum(valid.as_bytes()));
    assert_eq!(r(&format!("t = {valid}")), "t = [REDACTED]");
    let invalid = format!("ghp_{body}AAAAAA");
    assert_eq!(r(&format!("x {invalid}")), format!("x {invalid}"));
    // A random token with a wrong checksum is redacted all the same.
    assert!(!formats::github_checksum(b"ghp_0123456789abcdefghijABCDEFGHIJ012345"));
    assert_eq!(r("x ghp_0123456789abcdefghijABCDEFGHIJ012345"), "x [REDACTED]");
    // The crc is the standard one.
    assert_eq!(formats::crc32(b"123456789"), 0xCBF4_3926);
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
    let encrypted = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B\n\nMIIEow\n";
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
    assert_eq!(
        r(&one),
        "{\"private_key\": \"-----BEGIN PRIVATE KEY-----\\n[REDACTED]\\n-----END PRIVATE KEY-----\\n\", \"id\": 3}\n"
    );
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
    assert_eq!(r("<entry key=\"password\">Zq8rT3vL0xN7aB2cD4eF</entry>"), "<entry key=\"password\">[REDACTED]</entry>");
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
                file.push(b"\x00\x1b\xff\t"[next(4)] as char);
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
    for v in ["Zq8rT3vL0xN7aB2cD4eF", "6da89121079f83b2eb6acccf8219ea98", "Tr0ub4dorHorse", "wJalrXUtnFEMIK7MDENG"] {
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

#[test]
fn a_control_byte_ends_a_bare_value() {
    let v = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzXq3LkP9";
    // An environment dump (NUL-separated, searched with -a), a form feed, a
    // value at a line's start or inside it: the value is redacted alone.
    for (line, want) in [
        (format!("AWS_SECRET_ACCESS_KEY={v}\0"), "AWS_SECRET_ACCESS_KEY=[REDACTED]\0"),
        (format!("x\0AWS_SECRET_ACCESS_KEY={v}\0HOME=/root"), "x\0AWS_SECRET_ACCESS_KEY=[REDACTED]\0HOME=/root"),
        (format!("AWS_SECRET_ACCESS_KEY={v}\x0c"), "AWS_SECRET_ACCESS_KEY=[REDACTED]\x0c"),
        (format!("x AWS_SECRET_ACCESS_KEY={v}\x01y"), "x AWS_SECRET_ACCESS_KEY=[REDACTED]\x01y"),
        (format!("x AWS_SECRET_ACCESS_KEY={v}\x7f"), "x AWS_SECRET_ACCESS_KEY=[REDACTED]\x7f"),
    ] {
        assert_eq!(r(&format!("{line}\n")), format!("{want}\n"), "{line:?}");
    }
}

#[test]
fn a_token_inside_another_rows_failed_match_is_redacted_whatever_follows() {
    // `sk-…` is a candidate of another row that fails its checks; the GitLab
    // token inside it must not depend on `glpat-` showing elsewhere.
    let file = "token = \"sk-glpat-AbCdEfGhIjKlMnOpQrStUvWx\"\nother line\n";
    let lines = consistent(file);
    hidden(&lines[0], &["AbCdEfGhIjKlMnOpQrStUvWx"]);
    let followed = consistent(&format!("{file}# see glpat- docs\n"));
    assert_eq!(followed[..2], lines[..2]);
}
