//! Opaque paging cursors. A cursor names a position in the sorted result
//! stream of one request — the last path handed out, how far into that file,
//! how many results were taken from it — and carries a fingerprint of the
//! request so it cannot be replayed against another one.

use crate::SearchError;

/// Where a stream stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    /// The last path delivered (or fully processed).
    pub path: String,
    /// The last line delivered from `path`; `u64::MAX` once it is finished.
    pub line: u64,
    /// Results already delivered from `path` (they count toward its cap).
    pub taken: u64,
}

impl Position {
    pub fn file_done(path: String) -> Position {
        Position { path, line: u64::MAX, taken: 0 }
    }
}

/// 3: positions in `rg --sort path` order (2 had them bytewise by whole
/// path, a directory as `dir/`).
const PREFIX: &str = "sg3.";
/// Cursors of earlier formats, refused as such.
const EARLIER: [&str; 2] = ["sg1.", "sg2."];
const CHECK_BASIS: u64 = 0x9e37_79b9_7f4a_7c15;

pub fn fingerprint(stream_key: &str) -> u64 {
    fnv(0xcbf2_9ce4_8422_2325, stream_key.as_bytes())
}

/// FNV-1a from `h`: stable across builds and hosts, which std's hasher is
/// not.
fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A cursor: `sg3.` and, in URL-safe base64, the position (line and taken
/// as varints, then the path), 4 bytes of the request's fingerprint
/// (which covers the host's cursor key: a tenant's) and a 4-byte checksum
/// of all that, so that an edited cursor is refused rather than read as
/// another position. (A checksum, not a signature: a cursor names only a
/// place in a stream the caller may read anyway.)
pub fn encode(stream_key: &str, pos: &Position) -> String {
    let mut bytes = Vec::with_capacity(pos.path.len() + 16);
    // Line `u64::MAX` (file done) is 0, so that it costs one byte.
    varint(&mut bytes, pos.line.wrapping_add(1));
    varint(&mut bytes, pos.taken);
    bytes.extend_from_slice(pos.path.as_bytes());
    let request = fingerprint(stream_key);
    bytes.extend_from_slice(&(request as u32).to_le_bytes());
    let check = fnv(CHECK_BASIS, &bytes) as u32;
    bytes.extend_from_slice(&check.to_le_bytes());
    format!("{PREFIX}{}", base64(&bytes))
}

/// The format number of a cursor `sgN.` of a later format than this
/// one's.
fn newer_format(cursor: &str) -> Option<u32> {
    let (n, _) = cursor.strip_prefix("sg")?.split_once('.')?;
    let this: u32 = PREFIX[2..PREFIX.len() - 1].parse().ok()?;
    let format: u32 = n.parse().ok()?;
    (format > this && format.to_string() == n).then_some(format)
}

pub fn decode(stream_key: &str, cursor: &str) -> Result<Position, SearchError> {
    let malformed = || SearchError::InvalidArgument("cursor is malformed; pass back a cursor unchanged".into());
    if EARLIER.iter().any(|p| cursor.starts_with(p)) {
        return Err(SearchError::InvalidArgument(
            "cursor is from an earlier version of sandgrep (another order of results); repeat the request without it"
                .into(),
        ));
    }
    // (A node of an older version, in a rolling upgrade, handed a cursor of
    // a newer one.)
    if let Some(format) = newer_format(cursor) {
        let this = &PREFIX[2..PREFIX.len() - 1];
        return Err(SearchError::InvalidArgument(format!(
            "cursor is from a newer version of sandgrep (cursor format {format}; this one reads {this}); \
             ask the server that gave it, or repeat the request without it"
        )));
    }
    let encoded = cursor.strip_prefix(PREFIX).ok_or_else(malformed)?;
    // Canonical only: a base64 string has one spelling of its bytes.
    let bytes = unbase64(encoded).filter(|b| base64(b) == encoded).ok_or_else(malformed)?;
    let (rest, check) = bytes.split_last_chunk::<4>().ok_or_else(malformed)?;
    let (position, request) = rest.split_last_chunk::<4>().ok_or_else(malformed)?;
    if fnv(CHECK_BASIS, rest) as u32 != u32::from_le_bytes(*check) {
        return Err(malformed());
    }
    if u32::from_le_bytes(*request) != fingerprint(stream_key) as u32 {
        return Err(SearchError::InvalidArgument(
            "cursor belongs to a different request; repeat the request that returned it, changing only paging fields"
                .into(),
        ));
    }
    let mut at = 0;
    let line = read_varint(position, &mut at).ok_or_else(malformed)?.wrapping_sub(1);
    let taken = read_varint(position, &mut at).ok_or_else(malformed)?;
    let path = String::from_utf8(position[at..].to_vec()).map_err(|_| malformed())?;
    Ok(Position { path, line, taken })
}

/// LEB128, as cursors and the index write numbers.
pub(crate) fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(crate) fn read_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f).checked_shl(shift)?;
        if b < 0x80 {
            return Some(v);
        }
    }
    None
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// URL-safe base64 without padding.
fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

fn unbase64(s: &str) -> Option<Vec<u8>> {
    if s.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for chunk in s.as_bytes().chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            let v = B64.iter().position(|&b| b == c)? as u32;
            n |= v << (18 - 6 * i);
        }
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let pos = Position { path: "src/ü dir/a.rs".into(), line: 42, taken: 3 };
        let c = encode("k", &pos);
        assert_eq!(decode("k", &c).unwrap(), pos);
        assert!(decode("other", &c).is_err());
        assert!(decode("k", "garbage").is_err());
        assert!(decode("k", &c.replace("sg3", "sg1")).is_err());
        // A cursor of the earlier order is refused as such, never misread.
        let earlier = decode("k", &c.replace("sg3.", "sg2.")).unwrap_err();
        assert!(format!("{earlier:?}").contains("earlier version"), "{earlier:?}");
        // One of a newer format (from a newer node, in a rolling upgrade) too.
        let newer = decode("k", &c.replace("sg3.", "sg12.")).unwrap_err();
        assert!(format!("{newer:?}").contains("newer version of sandgrep (cursor format 12; this one reads 3)"));
        assert!(!format!("{:?}", decode("k", &c.replace("sg3.", "sg04.")).unwrap_err()).contains("newer"));
        assert!(decode("k", &format!("{c}A")).is_err());
        // Any one character changed is refused.
        for i in PREFIX.len()..c.len() {
            let mut edited = c.clone().into_bytes();
            edited[i] = if edited[i] == b'A' { b'B' } else { b'A' };
            let edited = String::from_utf8(edited).unwrap();
            assert!(decode("k", &edited).is_err(), "{edited} was read");
        }
        // Short: a 16-byte path makes a cursor of under 40 characters.
        assert!(encode("k", &Position { path: "src/lib/main.rs".into(), line: 300, taken: 2 }).len() < 40);
        let done = Position::file_done("x".into());
        assert_eq!(decode("k", &encode("k", &done)).unwrap(), done);
        for (path, line, taken) in [("", 0, 0), ("é/\u{0}x", u64::MAX - 1, u64::MAX), ("a", 127, 128)] {
            let pos = Position { path: path.into(), line, taken };
            assert_eq!(decode("k", &encode("k", &pos)).unwrap(), pos);
        }
    }
}
