//! The named rules of redaction: every edit carries the [`Rule`] that made
//! it, so an answer can say which rules fired, and the host's configuration
//! (never a request or the workspace) can switch single rules off by name
//! ([`set_disabled`]). [`table_fingerprint`] hashes everything that decides
//! what is redacted, for the index's format fingerprint.

use std::cell::Cell;

/// One redaction rule: a small id, named by [`Rule::name`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rule(u8);

macro_rules! rules {
    ($($konst:ident = $name:literal,)+) => {
        /// Every rule's name, in id order.
        const NAMES: &[&str] = &[$($name),+];
        #[allow(non_camel_case_types, clippy::upper_case_acronyms, dead_code)]
        #[repr(u8)]
        enum Id { $($konst),+ }
        #[allow(dead_code)]
        impl Rule {
            $(pub const $konst: Rule = Rule(Id::$konst as u8);)+
        }
    };
}

rules! {
    AWS_ACCESS_KEY_ID = "aws-access-key-id",
    GITHUB_TOKEN = "github-token",
    GITLAB_TOKEN = "gitlab-token",
    SLACK_TOKEN = "slack-token",
    SLACK_WEBHOOK = "slack-webhook-url",
    STRIPE_KEY = "stripe-key",
    GOOGLE_API_KEY = "google-api-key",
    GOOGLE_OAUTH_SECRET = "google-oauth-client-secret",
    NPM_TOKEN = "npm-token",
    PYPI_TOKEN = "pypi-token",
    HUGGINGFACE_TOKEN = "huggingface-token",
    SENDGRID_KEY = "sendgrid-api-key",
    DIGITALOCEAN_TOKEN = "digitalocean-token",
    SHOPIFY_TOKEN = "shopify-token",
    AGE_SECRET_KEY = "age-secret-key",
    VAULT_TOKEN = "vault-token",
    OPENAI_KEY = "openai-api-key",
    ANTHROPIC_KEY = "anthropic-api-key",
    JWT = "jwt",
    AZURE_STORAGE_KEY = "azure-storage-key",
    AZURE_CLIENT_SECRET = "azure-client-secret",
    GCP_SERVICE_ACCOUNT = "gcp-service-account-key",
    BASE64_PRIVATE_KEY = "base64-private-key",
    PRIVATE_KEY_BLOCK = "private-key-block",
    AUTHORIZATION_HEADER = "authorization-header",
    URL_PASSWORD = "url-password",
    NETRC_PASSWORD = "netrc-password",
    CLI_PASSWORD = "cli-password",
    GENERIC_SECRET_VALUE = "generic-secret-value",
}

const _: () = assert!(NAMES.len() <= 64, "the disabled set is a u64");

impl Rule {
    /// The rule's stable kebab-case name (what configuration names).
    pub fn name(self) -> &'static str {
        NAMES[self.0 as usize]
    }

    fn bit(self) -> u64 {
        1 << self.0
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Every rule's name.
pub fn rule_names() -> impl Iterator<Item = &'static str> {
    NAMES.iter().copied()
}

thread_local! {
    static DISABLED: Cell<u64> = const { Cell::new(0) };
}

/// Switches off the rules named in `names` (and on every other) for the rest
/// of this thread: a disabled rule makes no edits. An unknown name is an
/// error that names it, and changes nothing. `set_disabled(&[])` enables all.
pub fn set_disabled(names: &[String]) -> Result<(), String> {
    let mut bits = 0;
    for n in names {
        match NAMES.iter().position(|k| k == n) {
            Some(i) => bits |= 1u64 << i,
            None => return Err(format!("unknown redaction rule `{n}` (known: {})", NAMES.join(", "))),
        }
    }
    DISABLED.with(|d| d.set(bits));
    Ok(())
}

/// The rules switched off on this thread, one bit per rule.
#[derive(Clone, Copy)]
pub(crate) struct Enabled(u64);

impl Enabled {
    pub(crate) fn now() -> Enabled {
        Enabled(DISABLED.with(Cell::get))
    }

    pub(crate) fn on(self, rule: Rule) -> bool {
        self.0 & rule.bit() == 0
    }
}

/// Bumped whenever the code (not the tables) changes what is redacted.
const LOGIC_VERSION: u64 = 3;

/// A stable hash (FNV-1a, 64 bits) of everything that decides what is
/// redacted: the logic version, the rule names, every pattern, threshold and
/// word list. A changed table gives another fingerprint, so an index built
/// from text redacted the old way is rebuilt.
pub fn table_fingerprint() -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes.iter().chain(&[0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    eat(&LOGIC_VERSION.to_le_bytes());
    for n in NAMES {
        eat(n.as_bytes());
    }
    for part in super::table_parts() {
        eat(part.as_bytes());
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_kebab_case() {
        let mut seen = std::collections::HashSet::new();
        for n in rule_names() {
            assert!(seen.insert(n), "{n} twice");
            assert!(n.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-'), "{n}");
        }
        assert_eq!(Rule::GITHUB_TOKEN.name(), "github-token");
        assert_eq!(Rule::GENERIC_SECRET_VALUE.name(), "generic-secret-value");
    }

    #[test]
    fn set_disabled_checks_names() {
        let err = set_disabled(&["github-token".into(), "no-such-rule".into()]).unwrap_err();
        assert!(err.contains("no-such-rule"), "{err}");
        assert!(Enabled::now().on(Rule::GITHUB_TOKEN), "an error changes nothing");
        set_disabled(&["github-token".into()]).unwrap();
        assert!(!Enabled::now().on(Rule::GITHUB_TOKEN));
        assert!(Enabled::now().on(Rule::AWS_ACCESS_KEY_ID));
        set_disabled(&[]).unwrap();
        assert!(Enabled::now().on(Rule::GITHUB_TOKEN));
    }

    #[test]
    fn fingerprint_is_stable() {
        assert_eq!(table_fingerprint(), table_fingerprint());
        assert_ne!(table_fingerprint(), 0);
    }
}
