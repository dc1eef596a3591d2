//! The secrets denylist (SPEC §3.2): never listed, searched or read, whatever
//! the request says. Matching is by path component and case-insensitive.

/// Whether a single entry named `name`, whose parent directory is named
/// `parent`, is denied.
pub fn name_is_denied(name: &str, parent: Option<&str>) -> bool {
    let n = name.to_ascii_lowercase();
    let prefix = |p: &str| n.starts_with(p);
    let suffix = |s: &str| n.ends_with(s);
    matches!(
        n.as_str(),
        ".git" | ".ssh" | ".env" | ".netrc" | ".npmrc" | ".pypirc" | "secrets.yml"
    ) || prefix(".env.")
        || [".pem", ".key", ".p12", ".pfx", ".kdbx"].iter().any(|s| suffix(s))
        || ["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"].iter().any(|p| prefix(p))
        || (n == "credentials" && parent.is_some_and(|p| p.eq_ignore_ascii_case(".aws")))
}

/// Whether any component of a normalized workspace-relative path is denied.
pub fn path_is_denied(path: &str) -> bool {
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
    fn the_contract_list() {
        for p in [
            ".git", ".git/HEAD", "sub/.GIT/config", ".env", ".env.local", "a/.Env.production",
            "server.pem", "tls/KEY.PEM", "x.key", "cert.p12", "c.pfx", "id_rsa", "id_rsa.pub",
            ".ssh/known_hosts", "home/id_ed25519", "id_ecdsa", "id_dsa", ".aws/credentials",
            ".netrc", ".npmrc", ".pypirc", "config/secrets.yml", "vault.kdbx", ".key",
        ] {
            assert!(path_is_denied(p), "{p} should be denied");
        }
    }

    #[test]
    fn near_misses_are_allowed() {
        for p in [
            "environment.rs", ".envrc", "src/key.rs", "keyboard.key.rs", "aws/credentials",
            "credentials", "gitignore", ".gitignore", "secrets.yaml.example", "pem",
            "monkey", "docs/id_rsa_howto.md.txt",
        ] {
            // "docs/id_rsa_howto…" starts with id_rsa: denied by the contract.
            let expected = p.starts_with("docs/id_rsa");
            assert_eq!(path_is_denied(p), expected, "{p}");
        }
    }
}
