//! Code that redaction must return byte for byte: every line here holds a
//! keyword of a secret-named key (token, secret, key, auth, pass…) in a
//! shape of real code, written for this test (none is copied from a
//! repository). One changed byte fails.

use super::*;

/// Each line alone, in a whole file, and after a few lines of lookback.
fn unchanged(lines: &[&str]) {
    let mut bad = Vec::new();
    for line in lines {
        let (out, edits) = redact_lines(b"", line.as_bytes());
        if out != line.as_bytes() {
            bad.push(format!("{line}\n    -> {} ({:?})", String::from_utf8_lossy(&out), edits));
        }
    }
    let file = lines.join("\n") + "\n";
    let (out, _) = redact_lines(b"", file.as_bytes());
    if bad.is_empty() && out != file.as_bytes() {
        let out = String::from_utf8_lossy(&out);
        for (a, b) in file.lines().zip(out.lines()) {
            if a != b {
                bad.push(format!("(in the file) {a}\n    -> {b}"));
            }
        }
    }
    assert!(bad.is_empty(), "{} lines changed:\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn rust_code() {
    unchanged(&[
        "    let r_brace_token = r_brace_token?;",
        "        let semicolon_token = self.semicolon_token()?;",
        "    let name_token = p.expect_token(T![ident])?;",
        "    let access_token = token_cache.get(&account_id).cloned();",
        "    let key_range = key_range.start()..key_range.end();",
        "    let tokens = quote_spanned! {span=>",
        "    let secret_kind = SecretKind::from_str(&raw_kind)?;",
        "    pub api_key: Option<String>,",
        "    pub password_hash: Box<[u8]>,",
        "            dollar_token: DOLLAR@17..18 \"$\" [] [],",
        "        eof_token: EOF@120..121 \"\" [Newline(\"\\n\")] [],",
        "            l_paren_token: L_PAREN@44..45 \"(\" [] [Whitespace(\" \")],",
        "            value_token: JS_STRING_LITERAL@88..97 \"\\\"secret\\\"\" [] [],",
        "    if self.cur_token == TokenKind::Semicolon && prev_token != TokenKind::Comma {",
        "        PassKind::SinglePass => \"single_pass\",",
        "    let auth_header = format!(\"Bearer {}\", auth_token_value);",
        "        .header(\"X-Api-Key\", api_key_from_env)",
        "    let key_span = key_span_start..key_span_end;",
        "    let next_token = tokens.peek().copied();",
        "    let secret_bytes = hex::decode(&secret_hex_str)?;",
    ]);
}

#[test]
fn go_code() {
    unchanged(&[
        "\tif tok.kind != yaml_KEY_TOKEN || mark.line-1 < prev_indent {",
        "\tif parser.token.typ == yaml_BLOCK_END_TOKEN && depth > 0 {",
        "const RegistryAuthHeader = \"X-Registry-Auth\"",
        "\tAuthHeaderName = \"X-Forwarded-Authorization\"",
        "\tpubKey := priv.Public().(*ecdsa.PublicKey)",
        "\tsecretKeys := map[string]struct{}{}",
        "\tpassAlgos = map[crypto.Hash]bool{",
        "\t\tCredentials: transportCredsForTLS13,",
        "\ttokenSourceKey = \"oauth2.example.tokenSourceKey\"",
        "\tKeyExchangeCurve25519 = \"curve25519-sha256@example.org\"",
        "\tKeyAlgoSKEd25519 = \"sk-ssh-ed25519@example.org\"",
        "\tContentHashKey = \"X-Example-Content-Sha256\"",
        "\tSchemeBearerAuth = \"example.api#httpBearerAuth\"",
        "\t\tSecretName: secretRef.Name,",
        "\tAnnotations map[string]string `protobuf:\"bytes,4,rep,name=annotations,proto3\" protobuf_key:\"bytes,1,opt,name=key,proto3\" protobuf_val:\"bytes,2,opt,name=value,proto3\"`",
        "\tlink.HeaderType = TCA_EXAMPLE_KEY_EX_HDR_TYPE_IP6",
        "\t\tEvent{Table: \"table9\", Key: \"network9.table9.delete\", Value: []byte(\"gone\")},",
        "\ttoken, err := lexer.NextToken()",
        "\tauthConfig.IdentityToken = resp.IdentityToken",
    ]);
}

#[test]
fn typescript_and_javascript_code() {
    unchanged(&[
        "  const token = this.scanner.nextToken();",
        "  const apiKey = process.env.SERVICE_API_KEY ?? defaultApiKey;",
        "  tokens.forEach((token) => token.dispose());",
        "export const SECRET_HEADER = \"x-internal-secret-header\";",
        "  const passwordInput = document.querySelector<HTMLInputElement>(\"#password-field\");",
        "  headers: { Authorization: `Bearer ${accessToken}` },",
        "  if (token === undefined || token.kind !== SyntaxKind.Identifier) return;",
        "  private readonly credentialsProvider: CredentialsProvider;",
        "  const keyName = `${prefix}.${key}`;",
        "  secret: options.secret || generateSecret(32),",
    ]);
}

#[test]
fn cpp_python_java_code() {
    unchanged(&[
        "    log(\" > secret_kinds:  \" + str(len(secret_kinds)))",
        "    Printer::Print(\" > token_count: \" + std::to_string(token_count));",
        "  auto secret_entry = catalog.GetSecret(transaction, secret_name);",
        "  if (key == \"row_group_size\") {",
        "    std::string secret_path = secret_directory + \"/\" + secret_name + \".secret\";",
        "  con.Query(\"SET secret_path='\" + temp_secret_path + \"';\");",
        "    passOrSkip = \"** test skipped **\";",
        "            passOrFail = \"-- unexpected state --\";",
        "        self.token = self.tokenizer.next_token()",
        "        api_key = os.environ.get(\"SERVICE_API_KEY\")",
        "    client = Client(api_key=service_api_key, timeout=30)",
        "    for key, value in sorted(secret_map.items()):",
        "        private String secretKey = config.getString(\"service.secret-key\");",
        "        String token = request.getHeader(\"X-Request-Token\");",
        "    password_field = forms.CharField(widget=forms.PasswordInput())",
        "RUN sh -c \"[ \"$PWD\" = \"`+expectedDir+`\" ]\"",
        "\t\trepeatedStringForTokens := \"[]*TokenSecret{\"",
        "TEST_CASE(\"Secret store survives a restart\", \"[secret][storage]\") {",
        "  --aws-secret-key \"${AWS_SECRET_KEY:-}\" \\",
    ]);
}

#[test]
fn config_names_placeholders_and_prose() {
    unchanged(&[
        "password: ${DB_PASSWORD}",
        "api_key: <your-api-key>",
        "token: xxxxxxxxxxxxxxxxxxxx",
        "secret: changeme",
        "AUTH_TOKEN={{ auth_token }}",
        "# The token is read from the environment; never commit a secret here.",
        "// Passwords must be at least 12 characters and rotated every 90 days.",
        "  --password string   Password for the registry",
        "        \"identitytoken\": \"4f1c9a0b7e22d3...\"",
        "  cache_key: build-cache-v3-${{ hashFiles('Cargo.lock') }}",
        "  key: project-cache-{{ checksum \"Cargo.lock\" }}",
        "let header = r#\"Bearer realm_metadata=\"https://auth.example.test/.well-known/resource\"\"#;",
        "    .header(\"Authorization\", \"Bearer token_abc\")",
        "    \"input\": \"http://u:v@host.test/\",",
        "    \"href\": \"http://test:test@proxy.test:3128/\",",
        "    \"input\": \"http://bar:qux%F0%9F@host.test/\",",
        "    \"href\": \"https://x:ab(c]d@host.test/\",",
        "    \"password\": \"%21%22%23$%&'()*+,-.%3A%3B%3C\",",
    ]);
}
