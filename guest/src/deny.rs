//! The secrets denylist (see docs/safety.md, item 3): never listed,
//! searched or read, whatever the request says. Matching is by path component
//! and case-insensitive. The host's policy may add globs; a request cannot
//! remove anything.

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use sandgrep_contract::deny::IN_DIR;

use crate::SearchError;

/// The built-in list plus the host's extra globs.
#[derive(Clone, Debug, Default)]
pub struct Denylist {
    extra: Option<Gitignore>,
}

impl Denylist {
    pub fn new(extra_globs: &[String]) -> Result<Denylist, SearchError> {
        if extra_globs.is_empty() {
            return Ok(Denylist { extra: None });
        }
        let mut b = GitignoreBuilder::new("");
        b.case_insensitive(true).map_err(|e| SearchError::InvalidArgument(e.to_string()))?;
        for g in extra_globs {
            b.add_line(None, g).map_err(|e| SearchError::InvalidArgument(format!("policy deny glob {g:?}: {e}")))?;
        }
        let gi = b.build().map_err(|e| SearchError::InvalidArgument(e.to_string()))?;
        Ok(Denylist { extra: Some(gi) })
    }

    pub fn has_extra(&self) -> bool {
        self.extra.is_some()
    }

    /// Whether a walked entry is denied; its ancestors were checked already.
    pub fn entry_denied(&self, rel: &str, name: &str, parent: Option<&str>, is_dir: bool) -> bool {
        name_is_denied(name, parent) || self.extra.as_ref().is_some_and(|gi| gi.matched(rel, is_dir).is_ignore())
    }

    /// Whether a normalized workspace-relative path, or any directory above
    /// it, is denied.
    pub fn path_denied(&self, rel: &str, is_dir: bool) -> bool {
        path_is_denied(rel)
            || self
                .extra
                .as_ref()
                .is_some_and(|gi| rel != "." && gi.matched_path_or_any_parents(rel, is_dir).is_ignore())
    }
}

/// Whether a single entry named `name`, whose parent directory is named
/// `parent`, is denied. Editors' copies of a denied file (`.env~`,
/// `#.env#`, `.#.env`, `.env.swp`, `id_rsa.bak`, `secrets.yml.orig` …) are
/// denied like it.
fn name_is_denied(name: &str, parent: Option<&str>) -> bool {
    // Every copy is a piece of the name, and a denied one holds a listed
    // name, prefix or suffix: most names hold none (one pass over the name).
    LISTED.get_or_init(listed_names).is_match(name) && any_copy_is_denied(name, parent)
}

fn any_copy_is_denied(name: &str, parent: Option<&str>) -> bool {
    // Most names are lower case already: copy only those that are not.
    let lower = name.bytes().any(|b| b.is_ascii_uppercase()).then(|| name.to_ascii_lowercase());
    let denied = copies_of(lower.as_deref().unwrap_or(name)).any(|n| base_name_is_denied(n, parent));
    denied
}

static LISTED: std::sync::OnceLock<aho_corasick::AhoCorasick> = std::sync::OnceLock::new();

/// Finds any name, prefix or suffix of the built-in list in a name, in any
/// ASCII case.
fn listed_names() -> aho_corasick::AhoCorasick {
    let files = IN_DIR.iter().map(|(_, f)| f);
    aho_corasick::AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .kind(Some(aho_corasick::AhoCorasickKind::DFA))
        .build(NAMES.iter().chain(PREFIXES).chain(SUFFIXES).chain(files))
        .expect("a small fixed list")
}

/// `name` (lower case) and the names it is a copy of, one layer at a time
/// (see [`strip_backup`]).
fn copies_of(name: &str) -> impl Iterator<Item = &str> {
    std::iter::successors(Some(name), |n| strip_backup(n).filter(|m| !m.is_empty()))
}

/// Editors', file managers' and package managers' suffixes for a copy.
const BACKUP_SUFFIXES: [&str; 20] = [
    ".bak",
    ".backup",
    ".orig",
    ".old",
    ".save",
    ".tmp",
    ".swp",
    ".swo",
    ".swx",
    ".swn",
    ".kate-swp",
    ",v",
    ".dpkg-old",
    ".dpkg-dist",
    ".dpkg-new",
    ".rpmsave",
    ".rpmnew",
    ".rpmorig",
    " - copy",
    " copy",
];

/// The name a copy was made from, one layer at a time: editors' backups
/// and swap files (`x~`, `x.~1~`, `#x#`, `.#x`, `x.bak`, `x.swp`, `.x.swp`,
/// `x.kate-swp`, `x,v`), file managers' copies (`x copy`, `x - Copy`,
/// `x (1)`, `Copy of x`), package managers' (`x.dpkg-old`, `x.rpmsave`) and
/// numbered ones (`x.1`).
fn strip_backup(n: &str) -> Option<&str> {
    let numbered = |m: &str| -> Option<usize> {
        let digits = m.bytes().rev().take_while(u8::is_ascii_digit).count();
        (digits > 0).then_some(m.len() - digits)
    };
    n.strip_prefix(".#")
        .or_else(|| n.strip_prefix("copy of "))
        .or_else(|| n.strip_prefix('#').map(|m| m.strip_suffix('#').unwrap_or(m)))
        .or_else(|| n.strip_suffix('#'))
        .or_else(|| {
            // `x.~1~`
            let m = n.strip_suffix('~')?;
            let cut = numbered(m)?;
            m[..cut].strip_suffix(".~")
        })
        .or_else(|| n.strip_suffix('~'))
        .or_else(|| BACKUP_SUFFIXES.iter().find_map(|s| n.strip_suffix(s)))
        .or_else(|| {
            // `x (1)`, `x (copy)`, `x (copy 2)`
            let m = n.strip_suffix(')')?;
            let open = m.rfind(" (")?;
            let inner = &m[open + 2..];
            (inner.bytes().all(|b| b.is_ascii_digit()) || inner.starts_with("copy")).then_some(&m[..open])
        })
        .or_else(|| {
            // `x.1`
            let cut = numbered(n)?;
            n[..cut].strip_suffix('.')
        })
        .or_else(|| n.strip_prefix('.'))
}

/// The built-in list, by lower-case name: files whose whole purpose is
/// credentials (SPEC §3.2).
const NAMES: &[&str] = &[
    ".git",
    ".ssh",
    ".env",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".git-credentials",
    ".htpasswd",
    "secrets.yml",
    "pgpass.conf",
    "kubeconfig",
];
const PREFIXES: &[&str] = &[".env.", ".env-", ".env_", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"];
const SUFFIXES: &[&str] =
    &[".pem", ".key", ".p12", ".pfx", ".kdbx", ".jks", ".keystore", ".tfstate", ".tfstate.backup"];

fn base_name_is_denied(n: &str, parent: Option<&str>) -> bool {
    NAMES.contains(&n)
        || PREFIXES.iter().any(|p| n.starts_with(p))
        || SUFFIXES.iter().any(|s| n.ends_with(s))
        || IN_DIR.iter().any(|(d, f)| {
            // In the directory or in a copy of it (`.docker.old/config.json`).
            n == *f && parent.is_some_and(|p| copies_of(&p.to_ascii_lowercase()).any(|p| p == *d))
        })
}

/// What the built-in list is made of, as bytes: an index built under
/// another list is rebuilt (it may hold what this one denies).
pub fn table() -> Vec<u8> {
    let mut out = Vec::new();
    for part in [NAMES, PREFIXES, SUFFIXES, &BACKUP_SUFFIXES] {
        for s in part {
            out.extend_from_slice(s.as_bytes());
            out.push(0);
        }
        out.push(1);
    }
    for (d, f) in IN_DIR {
        out.extend_from_slice(format!("{d}/{f}").as_bytes());
        out.push(0);
    }
    out
}

/// Whether any component of a normalized workspace-relative path is denied.
fn path_is_denied(path: &str) -> bool {
    let mut parent = None;
    for part in path.split('/') {
        if name_is_denied(part, parent) {
            return true;
        }
        parent = Some(part);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_passed_over_at_a_glance_hold_nothing_listed() {
        // Listed names, prefixes and suffixes, in copies' dress and in any
        // case, between other names' pieces: whatever the full check
        // denies, the glance looks at.
        let listed: Vec<&str> = NAMES.iter().chain(PREFIXES).chain(SUFFIXES).copied().collect();
        let dress =
            ["{}", "{}~", "#{}#", ".#{}", "{}.swp", ".{}.swp", "{}.bak", "copy of {}", "{} (1)", "{}.1", "{}.~2~"];
        let others = ["", "a", "x.", ".y", "config", "Docker", "ENV", "id", "-1"];
        let mut seen = 0;
        for l in &listed {
            for d in dress {
                for (before, after) in others.iter().flat_map(|b| others.iter().map(move |a| (b, a))) {
                    let name = d.replace("{}", &format!("{before}{l}{after}"));
                    for name in [name.clone(), name.to_ascii_uppercase()] {
                        for parent in [None, Some(".kube"), Some(".AWS.bak"), Some(".docker")] {
                            if any_copy_is_denied(&name, parent) {
                                seen += 1;
                                assert!(name_is_denied(&name, parent), "{name:?} in {parent:?}");
                            }
                        }
                    }
                }
            }
        }
        for (d, f) in IN_DIR {
            assert!(name_is_denied(&f.to_ascii_uppercase(), Some(d)), "{d}/{f}");
        }
        assert!(seen > 10_000, "{seen}");
        assert!(!name_is_denied("main.go", None) && !LISTED.get_or_init(listed_names).is_match("main.go"));
    }

    #[test]
    fn the_contract_list() {
        for p in [
            ".git",
            ".git/HEAD",
            "sub/.GIT/config",
            ".env",
            ".env.local",
            "a/.Env.production",
            "server.pem",
            "tls/KEY.PEM",
            "x.key",
            "cert.p12",
            "c.pfx",
            "id_rsa",
            "id_rsa.pub",
            ".ssh/known_hosts",
            "home/id_ed25519",
            "id_ecdsa",
            "id_dsa",
            ".aws/credentials",
            ".netrc",
            ".npmrc",
            ".pypirc",
            "config/secrets.yml",
            "vault.kdbx",
            ".key",
            ".env~",
            "#.env#",
            ".#.env",
            ".env.swp",
            "..env.swp",
            "a/.env-prod",
            "id_rsa~",
            "secrets.yml.orig",
            "secrets.yml.bak~",
            ".secrets.yml.swp",
            ".netrc.old",
            ".env copy",
            ".env - Copy",
            ".env (1)",
            "Copy of .env",
            ".netrc (copy)",
            ".netrc.~1~",
            "secrets.yml.~12~",
            "server.pem.~1~",
            ".npmrc.swn",
            ".env.kate-swp",
            ".env#",
            "secrets.yml,v",
            "server.pem.1",
            ".npmrc.dpkg-old",
            ".aws/credentials (copy)",
            ".aws/credentials.bak",
            "_netrc",
            "home/_NETRC",
            ".pgpass",
            ".git-credentials",
            "a/.docker/config.json",
            ".Docker/Config.JSON",
            ".kube/config",
            "infra/terraform.tfstate",
            "terraform.tfstate.backup",
            "prod.TFSTATE",
            "release.jks",
            "android/app/upload.keystore",
            "etc/.htpasswd",
            ".htpasswd.bak",
            ".pgpass~",
            ".docker.old/config.json",
            ".aws.bak/credentials",
            ".kube~/config",
            ".kube (copy)/config",
            ".kube/config.yaml",
            "deploy/kubeconfig",
            "data/pgpass.conf",
        ] {
            assert!(path_is_denied(p), "{p} should be denied");
        }
    }

    #[test]
    fn host_globs_extend_the_list() {
        let d = Denylist::new(&["*.secret".into(), "private/".into()]).unwrap();
        assert!(d.path_denied("a/B.SECRET", false));
        assert!(d.path_denied("private/x.txt", false));
        assert!(d.path_denied("private", true));
        assert!(!d.path_denied("public/x.txt", false));
        assert!(d.path_denied(".env", false), "the built-in list still applies");
        assert!(d.entry_denied("x/y.secret", "y.secret", Some("x"), false));
    }

    #[test]
    fn near_misses_are_allowed() {
        for p in [
            "environment.rs",
            ".envrc",
            "src/key.rs",
            "keyboard.key.rs",
            "aws/credentials",
            "credentials",
            "gitignore",
            ".gitignore",
            "secrets.yaml.example",
            "pem",
            "monkey",
            "docs/id_rsa_howto.md.txt",
            "netrc.go",
            "docker/config.json",
            "kube/config",
            ".kube/config.go",
            ".docker/daemon.json",
            "tfstate.go",
            "keystore.rs",
            "htpasswd.c",
        ] {
            // "docs/id_rsa_howto…" starts with id_rsa: denied by the contract.
            let expected = p.starts_with("docs/id_rsa");
            assert_eq!(path_is_denied(p), expected, "{p}");
        }
    }
}
