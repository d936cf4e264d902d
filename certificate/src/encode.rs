//! Writing a certificate: the header, then the body compressed with zlib
//! (whose checksum catches a damaged body). The body is laid out column by
//! column (all positions, then all weights, ...) so that alike bytes sit
//! together and compress well. A statistics certificate (version 2) adds
//! its kinds after the total, in columns too. Versions 3 and 4 start the
//! body with the provenance; the rest is version 1's or 2's, unchanged.

use std::io::Write;

use flate2::Compression;
use flate2::write::ZlibEncoder;
use perft_core::{Convention, Leaves};

use crate::varint::put;
use perft_model::DeciderName;

use crate::{Certificate, MAGIC, Unit};

/// The convention's byte: 0 none, 1 Bik's, 2 A124004's.
pub(crate) fn convention_byte(convention: Option<Convention>) -> u8 {
    match convention {
        None => 0,
        Some(Convention::Bik) => 1,
        Some(Convention::Oeis) => 2,
    }
}

fn put_str(out: &mut Vec<u8>, text: &str) {
    put(out, text.len() as u128);
    out.extend_from_slice(text.as_bytes());
}

fn put_leaves(out: &mut Vec<u8>, leaves: Leaves) {
    put(out, leaves.leaves);
    put(out, leaves.higher);
}

fn put_kinds(out: &mut Vec<u8>, kinds: &[u128]) {
    for &n in kinds {
        put(out, n);
    }
}

fn put_weights(out: &mut Vec<u8>, unit: &Unit) {
    put(out, unit.weights.len() as u128);
    for w in &unit.weights {
        put(out, u128::from(w.first_move));
        put(out, u128::from(w.paths));
    }
}

/// The uncompressed body.
pub(crate) fn body(cert: &Certificate) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + cert.units.len() * 40);
    if let Some(provenance) = &cert.provenance {
        put_str(&mut out, &provenance.job);
        put(&mut out, u128::from(provenance.finished));
        put_str(&mut out, &provenance.program);
    }
    put_str(&mut out, cert.header.game.name());
    out.push(convention_byte(cert.header.convention));
    out.extend_from_slice(&cert.header.root);
    put(&mut out, u128::from(cert.header.depth));
    put(&mut out, u128::from(cert.header.split_depth));
    put(&mut out, cert.header.first_moves.len() as u128);
    for mv in &cert.header.first_moves {
        put_str(&mut out, mv);
    }
    for &settled in &cert.header.settled {
        put_leaves(&mut out, settled);
    }
    put(&mut out, cert.participants.len() as u128);
    for id in &cert.participants {
        put_str(&mut out, id.as_str());
    }
    put(&mut out, cert.units.len() as u128);
    for unit in &cert.units {
        out.extend_from_slice(&unit.position);
    }
    for unit in &cert.units {
        put_weights(&mut out, unit);
    }
    for unit in &cert.units {
        put_leaves(&mut out, unit.count.leaves);
    }
    for unit in &cert.units {
        put(&mut out, unit.deciders.len() as u128);
        for &d in &unit.deciders {
            put(&mut out, u128::from(d));
        }
    }
    for &line in &cert.divide {
        put_leaves(&mut out, line);
    }
    put_leaves(&mut out, cert.total);
    if !cert.header.kinds.is_empty() {
        put(&mut out, cert.header.kinds.len() as u128);
        for kind in &cert.header.kinds {
            put_str(&mut out, kind);
        }
        for line in &cert.header.settled_kinds {
            put_kinds(&mut out, line);
        }
        for unit in &cert.units {
            put_kinds(&mut out, unit.count.kinds());
        }
        for line in &cert.divide_kinds {
            put_kinds(&mut out, line);
        }
        put_kinds(&mut out, &cert.total_kinds);
    }
    out.extend_from_slice(&cert.merkle_root);
    out
}

/// The whole file.
pub(crate) fn encode(cert: &Certificate) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&cert.version().to_le_bytes());
    let mut zlib = ZlibEncoder::new(out, Compression::best());
    // Writing to a Vec cannot fail.
    zlib.write_all(&body(cert)).expect("compressing into memory");
    zlib.finish().expect("compressing into memory")
}

/// One unit as its Merkle leaf covers it: a unit without kinds exactly as
/// version 1 had it.
pub(crate) fn unit_bytes(unit: &Unit, participants: &[DeciderName]) -> Vec<u8> {
    let mut out = Vec::with_capacity(unit.position.len() + 32);
    out.extend_from_slice(&unit.position);
    put_weights(&mut out, unit);
    put_leaves(&mut out, unit.count.leaves);
    put_kinds(&mut out, unit.count.kinds());
    put(&mut out, unit.deciders.len() as u128);
    for &d in &unit.deciders {
        let id = participants.get(d as usize).map_or("", DeciderName::as_str);
        put_str(&mut out, id);
    }
    out
}
