//! Workspaces on shared storage (SPEC §7): on a network or FUSE file
//! system, other machines (or the FUSE server's own side) write files this
//! machine's watcher never hears of. A long-lived host whose workspace lies
//! on one — or holds one mounted inside it — does not trust its watcher:
//! every call checks file metadata against the index, as the CLI does.

use std::path::{Path, PathBuf};

/// File system types whose files can change without an event here. FUSE
/// file systems come as `fuse` or `fuse.NAME` (`fuseblk`, a local disk
/// through FUSE, is not among them).
const SHARED: &[&str] = &[
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "ceph",
    "glusterfs",
    "lustre",
    "gpfs",
    "beegfs",
    "afs",
    "ocfs2",
    "gfs2",
    "9p",
    "virtiofs",
    "fuse",
];

fn is_shared_type(fstype: &str) -> bool {
    SHARED.contains(&fstype) || fstype.starts_with("fuse.")
}

/// The type of the shared file system the workspace at `root` lies on or
/// holds (`nfs4`, `fuse.sshfs`, …), if any (Linux: `/proc/self/mountinfo`;
/// elsewhere none is detected).
pub fn shared_storage(root: &Path) -> Option<String> {
    let root = std::fs::canonicalize(root).ok()?;
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    from_mountinfo(&mountinfo, &root)
}

/// Tells when this process's mount table changed (a file system mounted
/// inside a workspace after its host started: the watcher of the directory
/// it covers hears nothing of the files beneath it). Linux: the kernel
/// marks an open `/proc/self/mountinfo` at each mount or unmount; elsewhere
/// it never tells.
pub struct Mounts {
    #[cfg(target_os = "linux")]
    file: std::fs::File,
}

impl Mounts {
    pub fn watch() -> Option<Mounts> {
        #[cfg(target_os = "linux")]
        return std::fs::File::open("/proc/self/mountinfo").ok().map(|file| Mounts { file });
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// Whether a mount or unmount happened since the last time it said so
    /// (or since [`Mounts::watch`]). Never blocks.
    pub fn changed(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let mut fd = libc::pollfd { fd: self.file.as_raw_fd(), events: libc::POLLPRI, revents: 0 };
            // SAFETY: one valid pollfd, no wait.
            let n = unsafe { libc::poll(&mut fd, 1, 0) };
            n > 0 && fd.revents & (libc::POLLPRI | libc::POLLERR) != 0
        }
        #[cfg(not(target_os = "linux"))]
        false
    }
}

/// As [`shared_storage`], from the text of a mountinfo file: the mount
/// `root` lies on (the last one listed at the longest mount point above
/// it), and every mount below it.
fn from_mountinfo(mountinfo: &str, root: &Path) -> Option<String> {
    let mut on: Option<(usize, String)> = None;
    let mut inside = None;
    for line in mountinfo.lines() {
        // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPEROPTIONS
        let fields: Vec<&str> = line.split(' ').collect();
        let Some(dash) = fields.iter().position(|&f| f == "-") else { continue };
        let (Some(point), Some(fstype)) = (fields.get(4), fields.get(dash + 1)) else { continue };
        let point = unescape(point);
        if root.starts_with(&point) {
            let depth = point.components().count();
            if on.as_ref().is_none_or(|(d, _)| depth >= *d) {
                on = Some((depth, fstype.to_string()));
            }
        } else if point.starts_with(root) && is_shared_type(fstype) {
            inside.get_or_insert_with(|| fstype.to_string());
        }
    }
    on.map(|(_, t)| t).filter(|t| is_shared_type(t)).or(inside)
}

/// A mount point as mountinfo writes it: space, tab, newline and backslash
/// as three octal digits after a backslash.
fn unescape(field: &str) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    let bytes = field.as_bytes();
    let (mut out, mut i) = (Vec::with_capacity(bytes.len()), 0);
    while i < bytes.len() {
        let octal =
            bytes.get(i + 1..i + 4).filter(|d| bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match octal {
            Some(d) => {
                out.push(d.iter().fold(0u8, |n, b| n.wrapping_mul(8).wrapping_add(b - b'0')));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
40 27 0:40 / /mnt/nfs rw,relatime shared:5 - nfs4 server:/export rw,vers=4.2
41 40 254:1 / /mnt/nfs/local rw,relatime - ext4 /dev/vdb rw
42 27 0:41 / /home/me/repo/vendor/remote rw - fuse.sshfs me@host:/src rw
43 27 0:42 / /srv/with\\040space rw - cifs //host/share rw
44 27 0:43 / /data rw - fuseblk /dev/sdc1 rw
45 27 0:44 / /data/over rw - nfs host:/a rw
46 27 0:45 / /data/over rw - tmpfs tmpfs rw
";

    fn on(root: &str) -> Option<String> {
        from_mountinfo(MOUNTINFO, Path::new(root))
    }

    #[test]
    fn the_mount_a_workspace_lies_on_or_holds_decides() {
        // On the root file system, or a local disk through FUSE: not shared.
        assert_eq!(on("/home/me/other"), None);
        assert_eq!(on("/data/x"), None);
        // On NFS, whatever the depth; a local mount inside NFS is local.
        assert_eq!(on("/mnt/nfs/a/b").as_deref(), Some("nfs4"));
        assert_eq!(on("/mnt/nfs").as_deref(), Some("nfs4"));
        assert_eq!(on("/mnt/nfs/local/x"), None);
        // Not a prefix by bytes: /mnt/nfsx is not under /mnt/nfs.
        assert_eq!(on("/mnt/nfsx"), None);
        // A shared mount inside the workspace.
        assert_eq!(on("/home/me/repo").as_deref(), Some("fuse.sshfs"));
        assert_eq!(on("/").as_deref(), Some("nfs4"));
        // Mount points with escaped spaces.
        assert_eq!(on("/srv/with space/x").as_deref(), Some("cifs"));
        // The last mount at a point hides the ones before it.
        assert_eq!(on("/data/over/y"), None);
    }
}
