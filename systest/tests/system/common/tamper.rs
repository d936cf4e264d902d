//! Tampering with a certificate every way a forger might, and checking
//! that `perft audit` fails each (exit 1, naming the unit, the total or
//! the Merkle root) or refuses the file (exit 2): shared by the tests of
//! certificates made locally and by a cluster, and of statistics
//! certificates' kinds.

use std::path::Path;
use std::process::{Command, Output};

use perft_certificate::{Certificate, CountedUnit, Header, Provenance};

use super::{PERFT, ok, refused};

/// `perft audit FILE` recounting every unit, with a fixed seed.
pub fn audit_all(path: &Path) -> Output {
    audit_with(path, &["--fraction", "1", "--seed", "7"])
}

/// `perft audit FILE` with the sample `sample` asks for (`--sample N`,
/// `--fraction F`, `--seed S`).
pub fn audit_with(path: &Path, sample: &[&str]) -> Output {
    Command::new(PERFT)
        .args(["audit", path.to_str().unwrap()])
        .args(sample)
        .args(["--hash", "64M"])
        .output()
        .expect("perft audit runs")
}

/// The certificate with its divide table, total and Merkle root made
/// again from its (changed) units: a forger's consistent file.
pub fn resealed(cert: &Certificate) -> Certificate {
    let header = Header {
        game: cert.header.game,
        convention: cert.header.convention,
        root: cert.header.root.clone(),
        depth: cert.header.depth,
        split_depth: cert.header.split_depth,
        first_moves: cert.header.first_moves.clone(),
        settled: cert.header.settled.clone(),
        kinds: cert.header.kinds.clone(),
        settled_kinds: cert.header.settled_kinds.clone(),
    };
    let units = cert.units.iter().map(|u| CountedUnit {
        position: u.position.clone(),
        weights: u.weights.clone(),
        count: u.count,
        deciders: u
            .deciders
            .iter()
            .map(|&d| cert.participants[d as usize].clone())
            .collect(),
    });
    let provenance = cert
        .provenance
        .clone()
        .expect("a certificate this perft made names its maker");
    Certificate::build(header, provenance, units).unwrap()
}

/// Audits `cert` written to a file in `dir`: must fail with exit 1, its
/// stdout naming `expected`.
pub fn fails_naming(dir: &Path, cert: &Certificate, expected: &str) {
    fails_sampled_naming(dir, cert, &["--fraction", "1", "--seed", "7"], expected);
}

/// `honest` changed by `edit`, then resealed: only the change is wrong.
fn edited(honest: &Certificate, edit: impl FnOnce(&mut Certificate)) -> Certificate {
    let mut forged = honest.clone();
    edit(&mut forged);
    resealed(&forged)
}

/// [`fails_sampled_naming`] with each of [`ANY_SAMPLE`]: checks that need
/// no count again catch the forgery whatever the sample.
fn fails_any_sample_naming(dir: &Path, cert: &Certificate, expected: &str) {
    for sample in ANY_SAMPLE {
        fails_sampled_naming(dir, cert, sample, expected);
    }
}

/// [`fails_naming`] with the sample `sample` asks for.
pub fn fails_sampled_naming(dir: &Path, cert: &Certificate, sample: &[&str], expected: &str) {
    let path = dir.join("tampered.cert");
    std::fs::write(&path, cert.encode()).unwrap();
    let out = audit_with(&path, sample);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains(expected), "'{expected}' not in:\n{stdout}");
    assert!(stderr.starts_with("error: audit failed"), "{stderr}");
}

/// Every kind of tampering with the honest certificate at `path` (more
/// than 40 units) fails its audit; work files go in `dir`.
pub fn every_tampering_fails(dir: &Path, path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    let honest = Certificate::decode(&bytes).unwrap();
    let units = honest.units.len();
    assert!(units > 40, "{units} units");

    // One count changed, the sums and the root made to fit: only the
    // recount can tell, and it names the unit.
    let mut forged = honest.clone();
    forged.units[17].count.leaves.leaves += 1;
    fails_naming(dir, &resealed(&forged), "unit 17 (");

    // One unit removed: the plan has a unit there the certificate lacks.
    let mut forged = honest.clone();
    forged.units.remove(40);
    fails_naming(dir, &resealed(&forged), "unit 40:");

    // Two units of different first moves swapped (in Reversi, whose
    // symmetric first moves share every unit, of different paths).
    let mut forged = honest.clone();
    let first = |i: usize| forged.units[i].weights[0].first_move;
    let other = (0..units)
        .find(|&i| first(i) != first(3))
        .or_else(|| (0..units).find(|&i| forged.units[i].weights != forged.units[3].weights))
        .unwrap();
    forged.units.swap(3, other);
    fails_naming(dir, &resealed(&forged), "unit 3:");

    // One weight changed.
    let mut forged = honest.clone();
    forged.units[25].weights[0].paths += 1;
    fails_naming(dir, &resealed(&forged), "unit 25 (");

    // The total changed, nothing else.
    let mut forged = honest.clone();
    forged.total.leaves += 1;
    let claimed = format!("total: the certificate says {}", forged.total.leaves);
    fails_naming(dir, &forged, &claimed);

    // The Merkle root changed.
    let mut forged = honest.clone();
    forged.merkle_root[0] ^= 1;
    fails_naming(dir, &forged, "Merkle root");

    // A count changed without fixing anything else: sums and root fail too.
    let mut forged = honest.clone();
    forged.units[5].count.leaves.leaves += 3;
    fails_naming(dir, &forged, "unit 5 (");

    // The provenance changed: a label outside the Merkle root, which the
    // audit prints as the file has it and cannot confirm; it still passes.
    let mut relabelled = honest.clone();
    relabelled.provenance = Some(Provenance::of_job("someone-else", 86_400, "forger 1.0"));
    let path = dir.join("relabelled.cert");
    std::fs::write(&path, relabelled.encode()).unwrap();
    let out = ok(audit_with(&path, &["--sample", "1", "--seed", "7"]));
    assert!(
        out.contains("\nmade by: job someone-else, finished 1970-01-02T00:00:00Z, by forger 1.0\n"),
        "{out}"
    );
    assert!(out.ends_with("audit passed\n"), "{out}");

    // A truncated file, and one of another version: bad files, exit 2.
    let cut = dir.join("cut.cert");
    std::fs::write(&cut, &bytes[..bytes.len() - 9]).unwrap();
    let stderr = refused(&audit_all(&cut));
    assert!(stderr.contains("truncated"), "{stderr}");
    let mut newer = bytes.clone();
    newer[8] = 5;
    std::fs::write(&cut, &newer).unwrap();
    let stderr = refused(&audit_all(&cut));
    assert!(
        stderr.contains("certificate version 5, but this perft reads versions 1 to 4 only"),
        "{stderr}"
    );
    // A version 3 file called version 1: its provenance is read as the
    // game, and refused.
    let mut older = bytes.clone();
    older[8] = 1;
    std::fs::write(&cut, &older).unwrap();
    let stderr = refused(&audit_all(&cut));
    assert!(stderr.contains("the certificate's game is invalid"), "{stderr}");
    std::fs::write(&cut, b"hello").unwrap();
    assert!(refused(&audit_all(&cut)).contains("not a Deep Perft certificate"));
}

/// Every kind of tampering with the kinds of the honest statistics
/// certificate at `path` (more than 20 units, chess) fails its audit,
/// naming the unit, line or total and the kind; work files go in `dir`.
pub fn every_kind_tampering_fails(dir: &Path, path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(bytes[8..10], 4u16.to_le_bytes(), "version 4");
    let honest = Certificate::decode(&bytes).unwrap();
    assert!(honest.units.len() > 20, "{} units", honest.units.len());
    let kind = |name: &str| honest.header.kinds.iter().position(|k| k == name).unwrap();
    let (captures, checks, direct) = (kind("captures"), kind("total_checks"), kind("direct_checks"));

    // One unit's kind changed, its leaves kept, the sums and the root made
    // to fit: only the recount can tell, and it names the unit and kind.
    let mut forged = honest.clone();
    forged.units[11].count.kinds_mut()[captures] += 1;
    let said = forged.units[11].count.kinds_mut()[captures];
    fails_naming(
        dir,
        &resealed(&forged),
        &format!("the certificate says captures {said}, recounted captures"),
    );

    // A kind changed with nothing else: the sums name the divide line.
    let mut forged = honest.clone();
    forged.units[4].count.kinds_mut()[captures] += 2;
    fails_naming(dir, &forged, "divide line ");

    // Kinds that no tree can have (a total above the sum of its parts),
    // resealed: refused before any recount.
    let mut forged = honest.clone();
    forged.units[20].count.kinds_mut()[checks] += 1;
    fails_naming(
        dir,
        &resealed(&forged),
        "unit 20: its kinds cannot be those of its",
    );

    // A check added to a unit with its total, so the checks still add
    // up: the recount names the first kind that moved.
    let mut forged = honest.clone();
    let unit = forged.units[7].count.kinds_mut();
    unit[direct] += 1;
    unit[checks] += 1;
    let said = format!("the certificate says direct_checks {}", unit[direct]);
    fails_naming(dir, &resealed(&forged), &said);
    let stdout = audit_all(&dir.join("tampered.cert")).stdout;
    assert!(String::from_utf8_lossy(&stdout).contains("(and 1 more kinds differ)"));

    // A divide line's kinds, the total's kinds and the settled kinds
    // changed alone.
    let mut forged = honest.clone();
    forged.divide_kinds[0][captures] += 1;
    let line = format!(
        "divide line {}: the certificate says captures",
        honest.header.first_moves[0]
    );
    fails_naming(dir, &forged, &line);
    let mut forged = honest.clone();
    forged.total_kinds[checks] += 5;
    fails_naming(dir, &forged, "total: the certificate says total_checks");
    let mut forged = honest.clone();
    forged.header.settled_kinds[1][captures] += 1;
    fails_naming(dir, &resealed(&forged), "settled kinds of first move");

    // The kinds cut from the file's version 4 body, or a file claiming
    // version 3 with kinds in it: bad files, exit 2.
    let mut plain = honest.clone();
    plain.header.kinds.clear();
    let mut as_v3 = plain.encode();
    assert_eq!(as_v3[8..10], 3u16.to_le_bytes());
    as_v3[8] = 4;
    let cut = dir.join("kinds.cert");
    std::fs::write(&cut, &as_v3).unwrap();
    let stderr = refused(&audit_all(&cut));
    assert!(
        ["invalid", "truncated", "after its last field"]
            .iter()
            .any(|what| stderr.contains(what)),
        "{stderr}"
    );
    let mut v3_with_kinds = bytes.clone();
    v3_with_kinds[8] = 3;
    std::fs::write(&cut, &v3_with_kinds).unwrap();
    let stderr = refused(&audit_all(&cut));
    assert!(stderr.contains("certificate"), "{stderr}");
}

/// The samples an impossible count must fail under: none at all, a
/// single unit, and 1% with three seeds.
const ANY_SAMPLE: [&[&str]; 5] = [
    &["--sample", "0"],
    &["--sample", "1", "--seed", "1"],
    &["--fraction", "0.01", "--seed", "2"],
    &["--fraction", "0.01", "--seed", "3"],
    &["--fraction", "0.01", "--seed", "4"],
];

/// Counts that no position can have, in the honest certificate of leaves
/// only at `path` (checkers, remaining depth 5, more than 20 units),
/// resealed so that every sum and the Merkle root fit: each fails its
/// audit whatever the sample, naming the unit and what cannot be; bytes
/// after the zlib stream are refused. Work files go in `dir`.
pub fn every_impossible_count_fails_unsampled(dir: &Path, path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    let honest = Certificate::decode(&bytes).unwrap();
    assert_eq!(honest.header.game, perft_core::GameKind::Checkers);
    assert_eq!(honest.header.depth - honest.header.split_depth, 5);
    assert!(honest.units.len() > 20, "{} units", honest.units.len());

    // 10^15 leaves below a 5-ply checkers subtree: at most 128 moves a
    // ply make 128^5 = 34359738368.
    let forged = edited(&honest, |forged| {
        forged.units[13].count.leaves.leaves = 1_000_000_000_000_000
    });
    fails_any_sample_naming(
        dir,
        &forged,
        "MISMATCH  unit 13: 1000000000000000 leaves, more than a unit of remaining depth 5 can have (34359738368: 128 legal moves at most a ply)",
    );

    // A game-over ("higher") leaf, which checkers never counts.
    let forged = edited(&honest, |forged| forged.units[6].count.leaves.higher = 1);
    let expected = "MISMATCH  unit 6: 1 game-over leaves, but checkers counts none";
    fails_any_sample_naming(dir, &forged, expected);

    // Bytes after the zlib stream: a bad file (exit 2), however many.
    let longer = dir.join("longer.cert");
    for extra in [1, 20_000] {
        let mut appended = bytes.clone();
        appended.resize(bytes.len() + extra, 0);
        std::fs::write(&longer, &appended).unwrap();
        let stderr = refused(&audit_all(&longer));
        assert_eq!(
            stderr,
            format!(
                "error: '{}': the certificate has {extra} bytes after its zlib stream, where the file must end\n",
                longer.display()
            )
        );
    }
}

/// Kinds above their leaves in the honest statistics certificate at
/// `path` (more than 20 units), resealed: refused whatever the sample,
/// naming the unit and the kind. Work files go in `dir`.
pub fn kinds_above_their_leaves_fail_unsampled(dir: &Path, path: &Path) {
    let honest = Certificate::decode(&std::fs::read(path).unwrap()).unwrap();
    assert!(honest.units.len() > 20, "{} units", honest.units.len());
    let captures = honest.header.kinds.iter().position(|k| k == "captures").unwrap();
    let mut forged = honest.clone();
    let unit = &mut forged.units[9];
    unit.count.kinds_mut()[captures] = unit.count.leaves.leaves + 1;
    let expected = format!(
        "MISMATCH  unit 9: its kinds cannot be those of its {} leaves: captures {} is more than the leaves",
        unit.count.leaves.leaves,
        unit.count.leaves.leaves + 1
    );
    let forged = resealed(&forged);
    fails_any_sample_naming(dir, &forged, &expected);
}
