//! A certificate from `records/` read byte by byte from docs/certificate.md
//! alone: this decoder uses none of perft-certificate's code, only zlib,
//! BLAKE3 and perft-core to re-plan the root and recount a unit. If the
//! spec and the writer ever disagree, this test says where. A version 3
//! file that perft-certificate writes today is read the same way, its
//! provenance block first.

use std::io::Read;

use perft_core::{Game, Plan, Reversi, ReversiOeis, perft};

/// The smallest certificate in `records/`: A124004(15), 322 units.
const FILE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../records/a124004-15/certificate.cert"
);

/// A cursor over the body with the spec's primitives.
struct Body<'a> {
    bytes: &'a [u8],
}

impl<'a> Body<'a> {
    /// Unsigned LEB128, at most 19 bytes, in its shortest form.
    fn varint(&mut self) -> u128 {
        let mut value = 0u128;
        for i in 0..19 {
            let (&byte, rest) = self.bytes.split_first().expect("the body ends inside a varint");
            self.bytes = rest;
            let bits = u128::from(byte & 0x7F);
            assert!(i < 18 || bits <= 0b11, "a varint past 128 bits");
            value |= bits << (7 * i);
            if byte & 0x80 == 0 {
                assert!(i == 0 || byte != 0, "a varint not in its shortest form");
                return value;
            }
        }
        panic!("a varint longer than 19 bytes")
    }

    fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        head
    }

    /// A varint byte length (at most 256) and that much UTF-8.
    fn text(&mut self) -> String {
        let n = self.varint();
        assert!(n <= 256, "a text of {n} bytes");
        let text = std::str::from_utf8(self.take(n as usize)).expect("UTF-8");
        assert!(!text.chars().any(char::is_control), "{text:?}");
        text.to_owned()
    }

    /// `all` then `higher`.
    fn leaves(&mut self) -> (u128, u128) {
        let (all, higher) = (self.varint(), self.varint());
        assert!(higher <= all);
        (all, higher)
    }
}

/// The spec's varint, written canonically.
fn put(out: &mut Vec<u8>, mut value: u128) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// A packed Reversi position per the spec: the mover's discs, the other
/// side's, the colour to move.
fn reversi_boards(packed: &[u8]) -> (u64, u64, u8) {
    assert_eq!(packed.len(), 17);
    let word = |at: usize| u64::from_le_bytes(packed[at..at + 8].try_into().unwrap());
    let (mover, other) = (word(0), word(8));
    assert_eq!(mover & other, 0, "a square of both colours");
    assert!(packed[16] <= 1, "colour byte {}", packed[16]);
    (mover, other, packed[16])
}

/// The Merkle tree of the spec: leaves `0x00 || i || unit bytes`, nodes
/// `0x01 || left || right`, an odd last node carried up.
fn merkle_root(units: &[Vec<u8>]) -> [u8; 32] {
    let mut level: Vec<[u8; 32]> = units
        .iter()
        .enumerate()
        .map(|(i, unit)| {
            let mut h = blake3::Hasher::new();
            h.update(&[0]).update(&(i as u64).to_le_bytes()).update(unit);
            *h.finalize().as_bytes()
        })
        .collect();
    while level.len() > 1 {
        level = level
            .chunks(2)
            .map(|pair| match pair {
                [l, r] => *blake3::Hasher::new()
                    .update(&[1])
                    .update(l)
                    .update(r)
                    .finalize()
                    .as_bytes(),
                [lone] => *lone,
                _ => unreachable!(),
            })
            .collect();
    }
    level[0]
}

/// A file's version and its body, decompressed: the one zlib stream after
/// the magic and version, with nothing after it.
fn opened(file: &[u8]) -> (u16, Vec<u8>) {
    assert_eq!(&file[..8], b"DPERFTC\n");
    let version = u16::from_le_bytes([file[8], file[9]]);
    let mut zlib = flate2::bufread::ZlibDecoder::new(&file[10..]);
    let mut raw = Vec::new();
    zlib.read_to_end(&mut raw).expect("one zlib stream");
    assert!(zlib.into_inner().is_empty(), "nothing may follow the zlib stream");
    (version, raw)
}

/// A version 1 body of a Reversi certificate (17-byte positions), every
/// field as the spec lays it out.
#[derive(Debug)]
struct Reversi1 {
    convention: u8,
    root: Vec<u8>,
    depth: u32,
    split: u32,
    first_moves: Vec<String>,
    settled: Vec<(u128, u128)>,
    participants: Vec<String>,
    positions: Vec<Vec<u8>>,
    weights: Vec<Vec<(usize, u64)>>,
    counts: Vec<(u128, u128)>,
    deciders: Vec<Vec<usize>>,
    divide: Vec<(u128, u128)>,
    total: (u128, u128),
    merkle: [u8; 32],
}

/// Reads a version 1 Reversi body from `b` to its end: nothing may follow
/// the Merkle root.
fn reversi_body(b: &mut Body<'_>) -> Reversi1 {
    assert_eq!(b.text(), "reversi");
    let convention = b.take(1)[0];
    let root = b.take(17).to_vec();
    reversi_boards(&root);
    let (depth, split) = (b.varint() as u32, b.varint() as u32);
    let f = b.varint() as usize;
    let first_moves: Vec<String> = (0..f).map(|_| b.text()).collect();
    let settled: Vec<_> = (0..f).map(|_| b.leaves()).collect();
    let p = b.varint() as usize;
    let participants: Vec<String> = (0..p).map(|_| b.text()).collect();
    let u = b.varint() as usize;
    let positions: Vec<Vec<u8>> = b.take(u * 17).chunks(17).map(<[u8]>::to_vec).collect();
    let weights: Vec<Vec<(usize, u64)>> = (0..u)
        .map(|_| {
            let w = b.varint() as usize;
            assert!((1..=f).contains(&w));
            let pairs: Vec<(usize, u64)> = (0..w).map(|_| (b.varint() as usize, b.varint() as u64)).collect();
            for (i, &(m, paths)) in pairs.iter().enumerate() {
                assert!(m < f && paths >= 1);
                assert!(pairs[..i].iter().all(|&(n, _)| n != m), "a first move twice");
            }
            pairs
        })
        .collect();
    let counts: Vec<(u128, u128)> = (0..u).map(|_| b.leaves()).collect();
    let deciders: Vec<Vec<usize>> = (0..u)
        .map(|_| (0..b.varint()).map(|_| b.varint() as usize).collect())
        .collect();
    let divide: Vec<_> = (0..f).map(|_| b.leaves()).collect();
    let total = b.leaves();
    let merkle: [u8; 32] = b.take(32).try_into().unwrap();
    assert!(b.bytes.is_empty(), "bytes after the Merkle root");
    Reversi1 {
        convention,
        root,
        depth,
        split,
        first_moves,
        settled,
        participants,
        positions,
        weights,
        counts,
        deciders,
        divide,
        total,
        merkle,
    }
}

/// Checks the sums (settled + paths x count per first move, then the
/// total) and the Merkle root of a body.
fn sums_and_root_hold(body: &Reversi1) {
    let mut summed: Vec<(u128, u128)> = body.settled.clone();
    for (unit_weights, &(all, higher)) in body.weights.iter().zip(&body.counts) {
        for &(m, paths) in unit_weights {
            summed[m].0 += all * u128::from(paths);
            summed[m].1 += higher * u128::from(paths);
        }
    }
    assert_eq!(summed, body.divide);
    assert_eq!(body.divide.iter().map(|d| d.0).sum::<u128>(), body.total.0);
    let unit_bytes: Vec<Vec<u8>> = (0..body.positions.len())
        .map(|i| {
            let mut out = body.positions[i].to_vec();
            put(&mut out, body.weights[i].len() as u128);
            for &(m, paths) in &body.weights[i] {
                put(&mut out, m as u128);
                put(&mut out, u128::from(paths));
            }
            put(&mut out, body.counts[i].0);
            put(&mut out, body.counts[i].1);
            put(&mut out, body.deciders[i].len() as u128);
            for &d in &body.deciders[i] {
                let id = &body.participants[d];
                put(&mut out, id.len() as u128);
                out.extend_from_slice(id.as_bytes());
            }
            out
        })
        .collect();
    assert_eq!(merkle_root(&unit_bytes), body.merkle);
}

#[test]
fn a_record_certificate_decodes_from_the_spec_alone_replans_and_recounts() {
    let file = std::fs::read(FILE).expect("the record's certificate");
    assert_eq!(file.len(), 3522);
    let (version, raw) = opened(&file);
    assert_eq!(version, 1, "version 1: leaves, no provenance");
    let body = reversi_body(&mut Body { bytes: &raw });
    sums_and_root_hold(&body);
    assert_eq!(body.convention, 2, "OEIS A124004's body.convention");
    let (mover, other, colour) = reversi_boards(&body.root);
    // The start per the spec's example bytes: dark (e4, d5) to move.
    assert_eq!((mover, other, colour), (1 << 28 | 1 << 35, 1 << 27 | 1 << 36, 0));
    assert_eq!((body.depth, body.split), (15, 5));
    // Ascending square number: d3 = 19, c4 = 26, f5 = 37, e6 = 44.
    assert_eq!(body.first_moves, ["d3", "c4", "f5", "e6"]);
    assert_eq!(body.participants, ["worker-a", "worker-b"]);
    let u = body.positions.len();
    assert_eq!(u, 322);
    assert_eq!(body.total, (1_891_831_332_208, 0));
    assert!(
        body.counts.iter().all(|&(_, higher)| higher == 0),
        "OEIS body.counts no game over"
    );
    // Every unit decided by both workers, in the order their body.counts
    // arrived.
    for (i, who) in body.deciders.iter().enumerate() {
        let mut who = who.clone();
        who.sort_unstable();
        assert_eq!(who, [0, 1], "unit {i}");
    }

    // Re-plan the body.root with perft-core: the same first moves, body.settled
    // leaves, units byte for byte, and body.weights in the order first met.
    let root_pos = ReversiOeis::unpack(&body.root).expect("a packed Reversi position");
    assert_eq!(root_pos, ReversiOeis::start());
    let mut start = Vec::new();
    Reversi::start().pack(&mut start);
    assert_eq!(start, body.root, "the spec's start bytes");
    let plan = Plan::new(root_pos, body.depth, body.split).unwrap();
    let planned: Vec<String> = plan
        .first_moves()
        .iter()
        .map(|&mv| root_pos.format_move(mv))
        .collect();
    assert_eq!(planned, body.first_moves);
    let planned_settled: Vec<_> = plan.settled().iter().map(|l| (l.leaves, l.higher)).collect();
    assert_eq!(planned_settled, body.settled);
    assert_eq!(plan.units().len(), u);
    for (i, (pos, planned_weights)) in plan.units().iter().enumerate() {
        let mut packed = Vec::new();
        pos.pack(&mut packed);
        reversi_boards(&packed);
        assert_eq!(packed, body.positions[i], "unit {i}");
        let pairs: Vec<(usize, u64)> = planned_weights
            .iter()
            .map(|w| (w.first_move as usize, w.paths))
            .collect();
        assert_eq!(pairs, body.weights[i], "unit {i}'s body.weights");
    }

    // Recount the cheapest unit at the remaining body.depth.
    let (cheapest, &(all, _)) = body.counts.iter().enumerate().min_by_key(|(_, c)| c.0).unwrap();
    let unit = ReversiOeis::unpack(&body.positions[cheapest]).unwrap();
    let recount = perft(&unit, body.depth - body.split);
    assert_eq!((cheapest, all), (225, 69_849_784));
    assert_eq!((recount.leaves, recount.higher), (all, 0));
}

#[test]
fn a_version_3_certificate_opens_with_its_provenance_then_a_version_1_body() {
    // Written by perft-certificate as `perft run` would; read by the spec.
    let plan = Plan::new(ReversiOeis::start(), 6, 2).unwrap();
    let (counts, _) = perft_core::count_units::<_, perft_core::Plain>(
        plan.units().positions(),
        plan.remaining_depth(),
        1,
        None,
    );
    let made = perft_certificate::Provenance::of_job("3f2a9c01be77", 1_795_829_025, "perft 0.1.0");
    let deciders = [perft_certificate::DeciderName::local()];
    let file = perft_certificate::from_plan::<_, perft_core::Plain>(
        perft_core::GameKind::Reversi,
        &plan,
        &counts,
        &deciders,
        made,
    )
    .unwrap()
    .encode();
    let (version, raw) = opened(&file);
    assert_eq!(version, 3, "version 3: leaves, with provenance");
    let mut b = Body { bytes: &raw };
    // The provenance: job id, finish time (Unix seconds), program.
    assert_eq!(b.text(), "3f2a9c01be77");
    assert_eq!(b.varint(), 1_795_829_025, "2026-11-28T01:23:45Z");
    assert_eq!(b.text(), "perft 0.1.0");
    // Then exactly a version 1 body, whose root does not cover the block.
    let body = reversi_body(&mut b);
    sums_and_root_hold(&body);
    assert_eq!((body.convention, body.depth, body.split), (2, 6, 2));
    assert_eq!(body.total.0, 8_200, "A124004(6)");
    assert_eq!(body.participants, ["local"]);
}
