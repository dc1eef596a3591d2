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

const PREFIX: &str = "sg1";

pub fn fingerprint(stream_key: &str) -> u64 {
    // FNV-1a: stable across builds and hosts, which std's hasher is not.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in stream_key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

pub fn encode(stream_key: &str, pos: &Position) -> String {
    let hex: String = pos.path.bytes().map(|b| format!("{b:02x}")).collect();
    format!("{PREFIX}.{:016x}.{:x}.{:x}.{hex}", fingerprint(stream_key), pos.line, pos.taken)
}

pub fn decode(stream_key: &str, cursor: &str) -> Result<Position, SearchError> {
    let malformed = || SearchError::InvalidArgument("cursor is malformed; pass back a next-cursor unchanged".into());
    let parts: Vec<&str> = cursor.split('.').collect();
    let [prefix, fp, line, taken, hex] = parts[..] else {
        return Err(malformed());
    };
    if prefix != PREFIX {
        return Err(malformed());
    }
    let fp = u64::from_str_radix(fp, 16).map_err(|_| malformed())?;
    if fp != fingerprint(stream_key) {
        return Err(SearchError::InvalidArgument(
            "cursor belongs to a different request; repeat the request that returned it, changing only paging fields"
                .into(),
        ));
    }
    let line = u64::from_str_radix(line, 16).map_err(|_| malformed())?;
    let taken = u64::from_str_radix(taken, 16).map_err(|_| malformed())?;
    if hex.len() % 2 != 0 {
        return Err(malformed());
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2).ok_or_else(malformed)?, 16).map_err(|_| malformed()))
        .collect::<Result<Vec<u8>, _>>()?;
    let path = String::from_utf8(bytes).map_err(|_| malformed())?;
    Ok(Position { path, line, taken })
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
        assert!(decode("k", &c.replace("sg1", "sg2")).is_err());
        assert!(decode("k", &format!("{c}0")).is_err());
        let done = Position::file_done("x".into());
        assert_eq!(decode("k", &encode("k", &done)).unwrap(), done);
    }
}
