use std::io::Write;
use std::rc::Rc;

use super::*;

/// The text the fixtures in `testdata/` hold (see its README).
fn text() -> Vec<u8> {
    (0..3000).map(|i| format!("{i} the quick brown fox {}\n", i * 7919 % 1000)).collect::<String>().into_bytes()
}

const FIXTURES: [(&str, &[u8]); 8] = [
    ("text.gz", include_bytes!("testdata/text.gz")),
    ("text.bz2", include_bytes!("testdata/text.bz2")),
    ("text.xz", include_bytes!("testdata/text.xz")),
    ("text.lzma", include_bytes!("testdata/text.lzma")),
    ("text.lz4", include_bytes!("testdata/text.lz4")),
    ("text.br", include_bytes!("testdata/text.br")),
    ("text.zst", include_bytes!("testdata/text.zst")),
    ("text.Z", include_bytes!("testdata/text.Z")),
];

fn whole(name: &str, bytes: &[u8], cap: u64) -> Result<Vec<u8>, String> {
    let format = Format::of(name).unwrap();
    match decompress(format, bytes, cap, None) {
        Decompressed::Whole(t) => Ok(t.read_at(0, u64::MAX)),
        Decompressed::Failed(t, m) => Err(format!("{m} after {} bytes", t.len())),
        Decompressed::TooLarge => Err("too large".into()),
        Decompressed::TimedOut => Err("timed out".into()),
    }
}

#[test]
fn names_are_rgs() {
    for (name, want) in [
        ("a.gz", Some(Format::Gzip)),
        ("d/a.tgz", Some(Format::Gzip)),
        (".gz", Some(Format::Gzip)),
        ("a.bz2", Some(Format::Bzip2)),
        ("a.tbz2", Some(Format::Bzip2)),
        ("a.xz", Some(Format::Xz)),
        ("a.txz", Some(Format::Xz)),
        ("a.lzma", Some(Format::Lzma)),
        ("a.lz4", Some(Format::Lz4)),
        ("a.br", Some(Format::Brotli)),
        ("a.zst", Some(Format::Zstd)),
        ("a.zstd", Some(Format::Zstd)),
        ("a.Z", Some(Format::Compress)),
        // rg's globs are case-sensitive, and name no other endings.
        ("a.GZ", None),
        ("a.z", None),
        ("a.taz", None),
        ("a.zip", None),
        ("a.gz.txt", None),
        ("a.lz", None),
        ("a.tar", None),
    ] {
        assert_eq!(Format::of(name), want, "{name}");
    }
}

#[test]
fn every_format_decodes_its_fixture() {
    for (name, bytes) in FIXTURES {
        assert_eq!(whole(name, bytes, u64::MAX).as_deref(), Ok(&text()[..]), "{name}");
    }
}

#[test]
fn lzw_reads_past_table_clears() {
    let got = whole("m.Z", include_bytes!("testdata/mixed10.Z"), u64::MAX).unwrap();
    let fnv = got.iter().fold(0xcbf29ce484222325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100000001b3));
    assert_eq!((got.len(), fnv), (111560, 0xd74dda8db6d6fa8b));
    assert!(got.starts_with(&text()));
}

#[test]
fn concatenated_streams_read_to_the_end() {
    // gzip members, bzip2 streams, xz streams, zstd and lz4 frames: the
    // tools decode them all, one after another.
    for (name, bytes) in FIXTURES {
        if matches!(Format::of(name), Some(Format::Lzma | Format::Brotli | Format::Compress)) {
            continue;
        }
        let twice = [bytes, bytes].concat();
        assert_eq!(whole(name, &twice, u64::MAX).unwrap(), [text(), text()].concat(), "{name}");
    }
}

#[test]
fn zstd_skippable_frames_are_passed_over() {
    let bytes = include_bytes!("testdata/text.zst");
    let mut skippable = vec![0x50, 0x2a, 0x4d, 0x18, 5, 0, 0, 0];
    skippable.extend_from_slice(b"hello");
    let stream = [&skippable[..], bytes, &skippable[..]].concat();
    assert_eq!(whole("a.zst", &stream, u64::MAX).unwrap(), text());
}

#[test]
fn lz4_skippable_frames_are_passed_over() {
    // As `lz4 -dc` (what rg runs): before, between and after frames; one
    // cut short ends the stream, a length cut short is an error.
    let bytes = include_bytes!("testdata/text.lz4");
    let mut skippable = vec![0x5f, 0x2a, 0x4d, 0x18, 5, 0, 0, 0];
    skippable.extend_from_slice(b"hello");
    let stream = [&skippable[..], bytes, &skippable[..], bytes, &skippable[..]].concat();
    assert_eq!(whole("a.lz4", &stream, u64::MAX).unwrap(), [text(), text()].concat());
    assert_eq!(whole("a.lz4", &skippable, u64::MAX).unwrap(), b"");
    let cut = [&bytes[..], &skippable[..10]].concat();
    assert_eq!(whole("a.lz4", &cut, u64::MAX).unwrap(), text());
    let cut = [&bytes[..], &skippable[..6]].concat();
    assert!(whole("a.lz4", &cut, u64::MAX).unwrap_err().contains("unexpected end of file"));
}

#[test]
fn text_cut_after_its_last_line_break() {
    let mut t = Text { chunks: vec![b"ab\ncd".to_vec(), b"ef".to_vec(), b"gh".to_vec()], len: 9 };
    t.cut_after_last(b'\n');
    assert_eq!((t.len(), t.read_at(0, u64::MAX)), (3, b"ab\n".to_vec()));
    t.cut_after_last(b'\0');
    assert_eq!(t.len(), 0);
}

#[test]
fn the_cap_counts_text_not_input() {
    let len = text().len() as u64;
    for (name, bytes) in FIXTURES {
        assert_eq!(whole(name, bytes, len).map(|t| t.len() as u64), Ok(len), "{name}: exactly the cap");
        assert_eq!(whole(name, bytes, len - 1), Err("too large".into()), "{name}: one byte over");
    }
}

#[test]
fn a_bomb_stops_at_the_cap_with_little_memory() {
    // 1 GiB of zeros in about 1 MiB of gzip: stopped at the cap, holding
    // no more than it.
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..1024 {
        enc.write_all(&zeros).unwrap();
    }
    let bomb = enc.finish().unwrap();
    assert!(bomb.len() < 2 << 20);
    let started = Instant::now();
    assert!(matches!(decompress(Format::Gzip, &bomb[..], 8 << 20, None), Decompressed::TooLarge));
    assert!(started.elapsed().as_secs() < 5);
    // bzip2 too (its runs make the largest ratios).
    let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
    for _ in 0..64 {
        enc.write_all(&zeros).unwrap();
    }
    let bomb = enc.finish().unwrap();
    assert!(matches!(decompress(Format::Bzip2, &bomb[..], 1 << 20, None), Decompressed::TooLarge));
}

#[test]
fn broken_streams_fail_with_the_text_before_the_break() {
    let full = text();
    for (name, bytes) in FIXTURES {
        let format = Format::of(name).unwrap();
        // Not in the format at all.
        match decompress(format, &b"hello foo\nbar\n"[..], u64::MAX, None) {
            Decompressed::Failed(_, m) => {
                assert!(m.starts_with(format.name()), "{name}: {m}");
                // (Never the file's bytes, say a magic number it read.)
                let number = m.as_bytes().windows(3).any(|w| w.iter().all(u8::is_ascii_digit));
                assert!(!m.contains("0x") && !number, "{name}: {m}");
            }
            _ if format == Format::Lz4 => {}
            _ => panic!("{name}: garbage decoded"),
        }
        // Empty: every tool but lz4 says it ends early.
        match decompress(format, &b""[..], u64::MAX, None) {
            Decompressed::Failed(t, m) => {
                assert_eq!(t.len(), 0);
                assert!(m.contains("unexpected end of file"), "{name}: {m}");
            }
            Decompressed::Whole(t) if format == Format::Lz4 => assert_eq!(t.len(), 0),
            _ => panic!("{name}: empty"),
        }
        // Cut short: what came before the cut is text of the file; the
        // cut is an error (LZW has no end mark: it just ends).
        for cut in [bytes.len() / 2, bytes.len() - 1] {
            let r = decompress(format, &bytes[..cut], u64::MAX, None);
            let t = match r {
                Decompressed::Failed(t, _) => t,
                Decompressed::Whole(t) if format == Format::Compress => t,
                Decompressed::Whole(t) => panic!("{name} cut at {cut}: whole ({} bytes)", t.len()),
                _ => panic!("{name} cut at {cut}"),
            };
            let got = t.read_at(0, u64::MAX);
            assert!(full.starts_with(&got), "{name} cut at {cut}: text that is not the file's");
        }
    }
}

#[test]
fn garbage_never_panics() {
    // Fixtures with bytes flipped: an error or some text, never a panic
    // nor more than the cap.
    let mut seed = 1u64;
    for (name, bytes) in FIXTURES {
        let format = Format::of(name).unwrap();
        for _ in 0..40 {
            let mut b = bytes.to_vec();
            for _ in 0..4 {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let i = (seed >> 33) as usize % b.len();
                b[i] ^= (seed >> 13) as u8 | 1;
            }
            let _ = decompress(format, &b[..], 1 << 20, None);
        }
    }
}

#[test]
fn text_reads_at_offsets_across_chunks() {
    let full = [text(), text(), text()].concat();
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&full).unwrap();
    let Decompressed::Whole(t) = decompress(Format::Gzip, &enc.finish().unwrap()[..], u64::MAX, None) else { panic!() };
    assert!(t.chunks.len() > 2, "{}", t.chunks.len());
    for (at, len) in [(0, 10), (65530, 20), (65536, 70000), (full.len() as u64 - 5, 100), (1 << 40, 5)] {
        let end = (at + len).min(full.len() as u64) as usize;
        let at_ = (at as usize).min(end);
        assert_eq!(t.read_at(at, len), &full[at_..end], "{at} {len}");
    }
    let mut back = Vec::new();
    Text::reader(Rc::new(t)).read_to_end(&mut back).unwrap();
    assert_eq!(back, full);
}

#[test]
fn a_deadline_passed_stops_it() {
    let (_, bytes) = FIXTURES[0];
    let past = Instant::now();
    assert!(matches!(decompress(Format::Gzip, bytes, u64::MAX, Some(past)), Decompressed::TimedOut));
}

#[test]
fn a_window_past_the_memory_cap_is_refused_before_it_is_allocated() {
    // An .lzma header asking for a 1 GiB dictionary.
    let mut header = vec![0x5d];
    header.extend_from_slice(&(1u32 << 30).to_le_bytes());
    header.extend_from_slice(&u64::MAX.to_le_bytes());
    header.extend_from_slice(&[0; 16]);
    assert!(matches!(decompress(Format::Lzma, &header[..], u64::MAX, None), Decompressed::Failed(..)));
}
