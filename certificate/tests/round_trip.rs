//! A certificate of a real plan survives encoding, proves each unit by its
//! Merkle path, and every cut or changed byte of its file is refused
//! cleanly (an error, never a panic).

use perft_certificate::{Certificate, DecodeError, ParticipantId, from_plan, merkle};
use perft_core::parallel::count_units;
use perft_core::{Game, GameKind, Leaves, Plan, ReversiOeis};

fn certificate() -> Certificate {
    let plan = Plan::new(ReversiOeis::start(), 7, 3).unwrap();
    let (counts, _) = count_units(plan.units().positions(), plan.remaining_depth(), 1, None);
    let deciders = [ParticipantId("w1".to_owned()), ParticipantId("w2".to_owned())];
    from_plan(GameKind::Reversi, &plan, &counts, &deciders).unwrap()
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

#[test]
fn every_cut_and_flipped_byte_is_refused_or_read_whole() {
    let cert = certificate();
    let bytes = cert.encode();
    for len in 0..bytes.len() {
        assert!(Certificate::decode(&bytes[..len]).is_err(), "cut at {len}");
    }
    for at in 0..bytes.len() {
        let mut changed = bytes.clone();
        changed[at] ^= 0x10;
        // zlib's checksum catches a changed body, the header is checked;
        // a bit deflate never reads (block padding) changes nothing.
        match Certificate::decode(&changed) {
            Err(_) => {}
            Ok(read) => assert_eq!(read, cert, "byte {at} changed the certificate"),
        }
    }
    let mut other = bytes.clone();
    other[8] = 9;
    assert_eq!(
        Certificate::decode(&other),
        Err(DecodeError::Version { found: 9 })
    );
}
