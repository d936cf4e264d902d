//! A certificate of a real plan survives encoding, proves each unit by its
//! Merkle path, and every cut or changed byte of its file is refused
//! cleanly (an error, never a panic); with kinds too, and with its
//! provenance (versions 3 and 4), while one without a provenance (a file
//! of version 1 or 2 read back) stays version 1 or 2 byte for byte.

use perft_certificate::{
    BuildError, Certificate, Count, CountedUnit, DeciderName, DecodeError, Provenance, from_plan, merkle,
};
use perft_core::{
    ByKind, Checkers, Game, GameKind, Leaves, Plain, Plan, ReversiOeis, Tally, count_units, perft_stats,
};

fn certificate() -> Certificate {
    let plan = Plan::new(ReversiOeis::start(), 7, 3).unwrap();
    let (counts, _) = count_units::<_, Plain>(plan.units().positions(), plan.remaining_depth(), 1, None);
    let deciders = [
        DeciderName::parse("w1").unwrap(),
        DeciderName::parse("w2").unwrap(),
    ];
    from_plan::<_, Plain>(GameKind::Reversi, &plan, &counts, &deciders, made()).unwrap()
}

/// The provenance the test certificates carry: a job finished at
/// 2026-11-28T01:23:45Z, written by `perft 0.1.0`.
fn made() -> Provenance {
    Provenance::of_job("3f2a9c01be77", 1_795_829_025, "perft 0.1.0")
}

#[test]
fn round_trips_and_proves_every_unit() {
    let cert = certificate();
    assert_eq!(cert.total, Leaves::full(55_092), "A124004(7)");
    assert_eq!(cert.header.convention, Some(perft_core::Convention::Oeis));
    let bytes = cert.encode();
    assert_eq!(Certificate::decode(&bytes).unwrap(), cert);
    let leaves = cert.leaf_hashes();
    for (i, unit) in cert.units.iter().enumerate() {
        let leaf = merkle::leaf_hash(i as u64, &cert.unit_bytes(unit));
        let path = merkle::proof(&leaves, i);
        assert!(merkle::verify(&cert.merkle_root, leaves.len(), i, leaf, &path));
    }
}

/// Checkers perft(7) split at 3, counted by kind.
fn stats_certificate() -> Certificate {
    let plan = Plan::new(Checkers::start(), 7, 3).unwrap();
    let (counts, _) = count_units::<_, ByKind>(plan.units().positions(), plan.remaining_depth(), 1, None);
    from_plan::<_, ByKind>(
        GameKind::Checkers,
        &plan,
        &counts,
        &[DeciderName::parse("w").unwrap()],
        made(),
    )
    .unwrap()
}

/// Every cut of `bytes` (the file of `cert`) is refused, and every byte
/// flipped is refused or reads back `cert` whole: zlib's checksum catches a
/// changed body, the header is checked; a bit deflate never reads (block
/// padding) changes nothing.
fn every_cut_and_flip_is_refused_or_read_whole(cert: &Certificate, bytes: &[u8]) {
    for len in 0..bytes.len() {
        assert!(Certificate::decode(&bytes[..len]).is_err(), "cut at {len}");
    }
    for at in 0..bytes.len() {
        let mut changed = bytes.to_vec();
        changed[at] ^= 0x10;
        match Certificate::decode(&changed) {
            Err(_) => {}
            Ok(read) => assert_eq!(&read, cert, "byte {at} changed the certificate"),
        }
    }
}

#[test]
fn a_certificate_without_provenance_is_version_1_byte_for_byte() {
    let mut cert = certificate();
    cert.provenance = None;
    let bytes = cert.encode();
    assert_eq!(bytes[8..10], 1u16.to_le_bytes());
    // The file this certificate made before statistics existed.
    assert_eq!(bytes.len(), 254);
    assert_eq!(
        blake3::hash(&bytes).to_hex().as_str(),
        "31323561cea3eac45f499f1ad04f41dafbe56c84e8857701f74e3d291469c7ea"
    );
    // An old file reads back with no provenance and its own version.
    let read = Certificate::decode(&bytes).unwrap();
    assert_eq!((read.version(), &read.provenance), (1, &None));
    assert_eq!(read, cert);
}

#[test]
fn a_certificate_of_leaves_is_version_3_with_its_provenance_first() {
    use std::io::Read;
    let cert = certificate();
    assert_eq!(cert.version(), 3);
    let bytes = cert.encode();
    assert_eq!(bytes[8..10], 3u16.to_le_bytes());
    let read = Certificate::decode(&bytes).unwrap();
    assert_eq!(read, cert);
    assert_eq!(read.provenance, Some(made()));
    // The body is the provenance block, then version 1's body unchanged.
    let body = |bytes: &[u8]| {
        let mut body = Vec::new();
        flate2::read::ZlibDecoder::new(&bytes[10..])
            .read_to_end(&mut body)
            .unwrap();
        body
    };
    let mut old = cert.clone();
    old.provenance = None;
    let mut block = vec![12];
    block.extend_from_slice(b"3f2a9c01be77");
    // 1,795,829,025 in LEB128, then the program.
    block.extend_from_slice(&[0xa1, 0xda, 0xa8, 0xd8, 0x06, 11]);
    block.extend_from_slice(b"perft 0.1.0");
    assert_eq!(body(&bytes), [block, body(&old.encode())].concat());
    // The provenance is a label outside the Merkle root.
    assert_eq!(old.computed_merkle_root(), cert.merkle_root);
    let mut relabelled = cert.clone();
    relabelled.provenance = Some(Provenance::local(1, "someone else 1.0"));
    assert_eq!(relabelled.computed_merkle_root(), cert.merkle_root);
    let read = Certificate::decode(&relabelled.encode()).unwrap();
    assert_eq!(
        read.provenance.unwrap().shown(),
        "a local run (no job), finished 1970-01-01T00:00:01Z, by someone else 1.0"
    );
    every_cut_and_flip_is_refused_or_read_whole(&cert, &bytes);
}

#[test]
fn a_statistics_certificate_is_version_4_and_version_2_without_provenance() {
    let cert = stats_certificate();
    assert_eq!(cert.version(), 4);
    let bytes = cert.encode();
    assert_eq!(bytes[8..10], 4u16.to_le_bytes());
    assert_eq!(Certificate::decode(&bytes).unwrap(), cert);
    let mut old = cert.clone();
    old.provenance = None;
    let old_bytes = old.encode();
    assert_eq!(old_bytes[8..10], 2u16.to_le_bytes());
    let read = Certificate::decode(&old_bytes).unwrap();
    assert_eq!((read.version(), &read.provenance), (2, &None));
    assert_eq!(read, old);
    assert_eq!(read.merkle_root, cert.merkle_root);
}

#[test]
fn a_provenance_a_reader_would_refuse_is_not_written() {
    let plan = Plan::new(ReversiOeis::start(), 3, 1).unwrap();
    let (counts, _) = count_units::<_, Plain>(plan.units().positions(), plan.remaining_depth(), 1, None);
    let build = |provenance| from_plan::<_, Plain>(GameKind::Reversi, &plan, &counts, &[], provenance);
    let refused = |provenance, field: &str, reason: &str| match build(provenance) {
        Err(e @ BuildError::Provenance { .. }) => {
            let line = e.to_string();
            assert!(
                line.starts_with(&format!("the certificate's {field} cannot be written: "))
                    && line.contains(reason),
                "{line}"
            );
        }
        other => panic!("{other:?}"),
    };
    refused(Provenance::local(1, ""), "program", "empty");
    refused(Provenance::local(1, "perft\n"), "program", "control or layout");
    refused(
        Provenance::of_job("j\u{202e}", 1, "perft"),
        "job id",
        "control or layout",
    );
    refused(
        Provenance::of_job("j".repeat(257), 1, "perft"),
        "job id",
        "257 bytes of text, above 256",
    );
    build(Provenance::of_job("j".repeat(256), u64::MAX, "p")).unwrap();
}

#[test]
fn a_provenance_read_back_is_held_to_the_text_rules() {
    // A file whose provenance a writer other than this code filled in:
    // each text follows the rules every text does, the program is named.
    for (job, program, expected) in [
        ("ok", "", "the certificate's program is invalid: empty"),
        (
            "ok",
            "perft\u{2028}MISMATCH",
            "the certificate's program is invalid: ",
        ),
        ("a\u{1b}[2J", "perft", "the certificate's job id is invalid: "),
    ] {
        let mut cert = certificate();
        cert.provenance = Some(Provenance::of_job(job, 5, program));
        let refused = Certificate::decode(&cert.encode()).unwrap_err().to_string();
        assert!(refused.starts_with(expected), "{refused}");
        assert_eq!(refused.lines().count(), 1, "{refused}");
    }
}

#[test]
fn a_statistics_certificate_round_trips_with_its_kinds() {
    let cert = stats_certificate();
    let whole = perft_stats(&Checkers::start(), 7);
    assert_eq!(cert.total, whole.leaves);
    assert_eq!(cert.total_kinds, whole.kinds.counts());
    assert_eq!(cert.header.kinds, GameKind::Checkers.stats_kinds());
    assert_eq!(cert.version(), 4);
    let bytes = cert.encode();
    assert_eq!(bytes[8..10], 4u16.to_le_bytes());
    assert_eq!(Certificate::decode(&bytes).unwrap(), cert);
    // Each unit's leaf covers its kinds: one kind changed moves the root.
    let mut changed = cert.clone();
    let mut kinds = changed.units[0].count.kinds().to_vec();
    kinds[0] += 1;
    changed.units[0].count = Count::with_kinds(changed.units[0].count.leaves, &kinds).unwrap();
    assert_ne!(changed.computed_merkle_root(), cert.merkle_root);
    every_cut_and_flip_is_refused_or_read_whole(&cert, &bytes);
}

#[test]
fn a_statistics_certificate_needs_a_ply_below_its_units() {
    // Units at full depth know no kinds (a leaf's kinds are its move's):
    // zero kinds would pass their recount, so the file is refused.
    let mut cert = stats_certificate();
    cert.header.split_depth = cert.header.depth;
    let refused = Certificate::decode(&cert.encode()).unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("split depth is invalid: 7 is not below the depth 7"),
        "{refused}"
    );
    let plan = Plan::new(Checkers::start(), 4, 4).unwrap();
    let (counts, _) = count_units::<_, ByKind>(plan.units().positions(), 0, 1, None);
    let built = from_plan::<_, ByKind>(GameKind::Checkers, &plan, &counts, &[], made());
    assert!(
        matches!(&built, Err(BuildError::Inconsistent(line)) if line.contains("need a ply")),
        "{built:?}"
    );
}

#[test]
fn texts_that_could_forge_a_line_are_refused() {
    // A first move, a participant or a kind name holding a line separator
    // or a bidirectional override would print as a line of its own.
    for text in ["d3\u{2028}MISMATCH  forged", "d3\u{202e}", "w\n"] {
        let mut cert = certificate();
        cert.header.first_moves[0] = text.to_owned();
        let refused = Certificate::decode(&cert.encode()).unwrap_err().to_string();
        assert!(refused.contains("first moves is invalid"), "{refused}");
        assert!(
            refused.contains("holds a control or layout character"),
            "{refused}"
        );
        assert_eq!(refused.lines().count(), 1, "{refused}");
        let mut cert = stats_certificate();
        cert.header.kinds[0] = text.to_owned();
        let refused = Certificate::decode(&cert.encode()).unwrap_err().to_string();
        assert!(refused.contains("list of kinds is invalid"), "{refused}");
        assert_eq!(refused.lines().count(), 1, "{refused}");
    }
}

#[test]
fn a_zlib_bomb_is_refused_before_it_takes_the_memory() {
    use std::io::Write;
    let mut file = perft_certificate::MAGIC.to_vec();
    file.extend_from_slice(&1u16.to_le_bytes());
    let mut zlib = flate2::write::ZlibEncoder::new(file, flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..64 {
        zlib.write_all(&zeros).unwrap();
    }
    let bomb = zlib.finish().unwrap();
    assert!(bomb.len() < 100_000, "{} bytes", bomb.len());
    let refused = Certificate::decode(&bomb).unwrap_err();
    assert!(matches!(refused, DecodeError::Body(_)), "{refused}");
    assert!(
        refused.to_string().contains("a zlib bomb, not a certificate"),
        "{refused}"
    );
}

#[test]
fn a_statistics_certificate_refuses_kinds_that_do_not_fit() {
    let cert = stats_certificate();
    let header = || cert.header.clone();
    let units = |kinds: fn(&[u128]) -> Vec<u128>| {
        cert.units
            .iter()
            .map(move |u| CountedUnit {
                position: u.position.clone(),
                weights: u.weights.clone(),
                count: Count::with_kinds(u.count.leaves, &kinds(u.count.kinds())).unwrap(),
                deciders: vec![DeciderName::parse("w").unwrap()],
            })
            .collect::<Vec<_>>()
    };
    let inconsistent = |built: Result<Certificate, BuildError>, expected: &str| match built {
        Err(BuildError::Inconsistent(line)) => assert!(line.contains(expected), "{line}"),
        other => panic!("{other:?}"),
    };
    inconsistent(
        Certificate::build(header(), made(), units(|k| k[1..].to_vec())),
        "unit 0 has 2 kinds, the certificate counts 3",
    );
    let mut chess_kinds = header();
    chess_kinds.kinds = GameKind::Chess
        .stats_kinds()
        .iter()
        .map(|&k| k.to_owned())
        .collect();
    inconsistent(
        Certificate::build(chess_kinds, made(), units(<[u128]>::to_vec)),
        "are not checkers's",
    );
    let mut short = header();
    short.settled_kinds.pop();
    inconsistent(
        Certificate::build(short, made(), units(<[u128]>::to_vec)),
        "the settled kinds are not 7 lines of 3 kinds",
    );
    let overflowing = units(|k| vec![u128::MAX; k.len()]);
    assert!(matches!(
        Certificate::build(header(), made(), overflowing),
        Err(BuildError::Overflow(_))
    ));
    Certificate::build(header(), made(), units(<[u128]>::to_vec)).unwrap();
}

#[test]
fn every_cut_and_flipped_byte_is_refused_or_read_whole() {
    let cert = certificate();
    let bytes = cert.encode();
    every_cut_and_flip_is_refused_or_read_whole(&cert, &bytes);
    for found in [0, 5, 9] {
        let mut other = bytes.clone();
        other[8] = found as u8;
        assert_eq!(Certificate::decode(&other), Err(DecodeError::Version { found }));
    }
    assert_eq!(
        DecodeError::Version { found: 5 }.to_string(),
        "certificate version 5, but this perft reads versions 1 to 4 only (leaves, statistics, each without and with its provenance)"
    );
}

#[test]
fn nothing_may_follow_the_zlib_stream() {
    // One byte after the stream, and 20,000 (once passed unseen, swallowed
    // by the reader's buffer), of every version: refused, naming how many.
    let without = |mut cert: Certificate| {
        cert.provenance = None;
        cert
    };
    for cert in [
        certificate(),
        stats_certificate(),
        without(certificate()),
        without(stats_certificate()),
    ] {
        let bytes = cert.encode();
        assert_eq!(Certificate::decode(&bytes).unwrap(), cert);
        for (extra, fill) in [(1, 0u8), (20_000, 0), (20_000, 0xff), (100_000, 0x78)] {
            let mut longer = bytes.clone();
            longer.resize(bytes.len() + extra, fill);
            let refused = Certificate::decode(&longer).unwrap_err();
            assert_eq!(refused, DecodeError::AfterStream(extra));
            assert_eq!(
                refused.to_string(),
                format!("the certificate has {extra} bytes after its zlib stream, where the file must end")
            );
        }
        // A second certificate after the first is no exception.
        let mut twice = bytes.clone();
        twice.extend_from_slice(&bytes);
        assert_eq!(
            Certificate::decode(&twice),
            Err(DecodeError::AfterStream(bytes.len()))
        );
    }
}

/// A certificate written to a file reads back whole with the file's size;
/// a missing file, one that is no certificate and a place that cannot be
/// written are each their own error, naming the path.
#[test]
fn a_certificate_file_round_trips_and_its_failures_name_the_path() {
    use perft_certificate::file::{self, FileError};
    let dir = std::env::temp_dir().join(format!("perft-certificate-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cert = certificate();
    let bytes = cert.encode();
    let path = dir.join("job.cert");
    file::write(&path, &bytes).unwrap();
    assert!(!dir.join("job.cert.partial").exists());
    assert_eq!(file::read(&path).unwrap(), (cert, bytes.len() as u64));

    let missing = file::read(&dir.join("missing.cert")).unwrap_err();
    assert!(matches!(missing, FileError::Read { .. }) && missing.is_bad_file());
    assert!(missing.to_string().starts_with("cannot read '"), "{missing}");
    let garbage = dir.join("garbage.cert");
    std::fs::write(&garbage, b"no certificate").unwrap();
    let refused = file::read(&garbage).unwrap_err();
    assert!(matches!(refused, FileError::Decode { .. }) && refused.is_bad_file());
    assert!(
        refused
            .to_string()
            .starts_with(&format!("'{}': ", garbage.display()))
    );
    let unwritable = file::write(&dir.join("no-such-dir").join("x.cert"), &bytes).unwrap_err();
    assert!(!unwritable.is_bad_file());
    assert!(
        unwritable.to_string().starts_with("cannot write '"),
        "{unwritable}"
    );
    assert!(std::error::Error::source(&unwritable).is_some());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_varint_not_in_its_shortest_form_is_refused() {
    use std::io::{Read, Write};
    let bytes = certificate().encode();
    let mut body = Vec::new();
    flate2::read::ZlibDecoder::new(&bytes[10..])
        .read_to_end(&mut body)
        .unwrap();
    let refused = |at: usize, padded: &[u8]| {
        let mut body = body.clone();
        body.splice(at..at + padded.len() - 1, padded.iter().copied());
        let mut file = bytes[..10].to_vec();
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        zlib.write_all(&body).unwrap();
        file.extend_from_slice(&zlib.finish().unwrap());
        Certificate::decode(&file).unwrap_err().to_string()
    };
    // The provenance: a job id of 1 + 12 bytes, a finish time of 5, a
    // program of 1 + 11.
    assert_eq!(body[13..18], [0xa1, 0xda, 0xa8, 0xd8, 0x06]);
    assert_eq!(
        refused(13, &[0xa1, 0xda, 0xa8, 0xd8, 0x86, 0x00]),
        "the certificate's finish time is invalid: an integer not in its shortest form"
    );
    // The depth, after the provenance (30 bytes), the game (1 + 7 bytes),
    // convention (1) and root (17).
    assert_eq!(body[56], 7);
    assert_eq!(
        refused(56, &[0x87, 0x00]),
        "the certificate's depth is invalid: an integer not in its shortest form"
    );
}
