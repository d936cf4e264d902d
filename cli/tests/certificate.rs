//! Certificates end to end with the real binary: `perft run --certificate`
//! writes one, `perft audit` passes it at 100% and fails every kind of
//! tampering, naming the unit (exit 1), or refuses a bad file (exit 2).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{PERFT, ok, refused};
use perft_certificate::{Certificate, CountedUnit, Header};

fn perft(args: &[&str]) -> Output {
    Command::new(PERFT).args(args).output().expect("perft runs")
}

/// A certificate made by a local run of `game` at `depth`, split at
/// `split`, and the report's total.
fn certified(dir: &Path, game: &str, depth: u32, split: u32, extra: &[&str]) -> (PathBuf, String) {
    let path = dir.join(format!("{game}-{depth}.cert"));
    let (d, s) = (depth.to_string(), split.to_string());
    let mut args = vec!["run", "--game", game, "--depth", &d, "--split-depth", &s];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--hash", "64M", "--format", "json", "--certificate"]);
    args.push(path.to_str().unwrap());
    let report: serde_json::Value = serde_json::from_str(&ok(perft(&args))).unwrap();
    (path, report["leaves"].as_str().unwrap().to_owned())
}

fn audit_all(path: &Path) -> Output {
    perft(&[
        "audit",
        path.to_str().unwrap(),
        "--fraction",
        "1",
        "--seed",
        "7",
        "--hash",
        "64M",
    ])
}

/// The certificate with its divide table, total and Merkle root made
/// again from its (changed) units: a forger's consistent file.
fn resealed(cert: &Certificate) -> Certificate {
    let header = Header {
        game: cert.game,
        convention: cert.convention,
        root: cert.root.clone(),
        depth: cert.depth,
        split_depth: cert.split_depth,
        first_moves: cert.first_moves.clone(),
        settled: cert.settled.clone(),
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
    Certificate::build(header, units).unwrap()
}

/// Audits `cert` written to a file: must fail with exit 1, its stdout
/// naming `expected`.
fn fails_naming(dir: &Path, cert: &Certificate, expected: &str) {
    let path = dir.join("tampered.cert");
    std::fs::write(&path, cert.encode()).unwrap();
    let out = audit_all(&path);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains(expected), "'{expected}' not in:\n{stdout}");
    assert!(stderr.starts_with("error: audit failed"), "{stderr}");
}

#[test]
fn small_certificates_audit_clean_at_100_percent() {
    let dir = tempfile::tempdir().unwrap();
    for (game, depth, split, extra, total) in [
        ("checkers", 11, 4, &[][..], "85242128"),
        ("reversi", 10, 5, &[][..], "24571284"),
        ("reversi", 10, 5, &["--convention", "oeis"][..], "24571056"),
    ] {
        let (path, leaves) = certified(dir.path(), game, depth, split, extra);
        assert_eq!(leaves, total);
        let out = ok(audit_all(&path));
        assert!(out.contains("audit passed"), "{out}");
        assert!(out.contains(&format!("total {total}")), "{out}");
        let cert = Certificate::decode(&std::fs::read(&path).unwrap()).unwrap();
        let recounted = format!("recount: {0} of {0} units (100.00%)", cert.units.len());
        assert!(out.contains(&recounted), "{out}");
        assert!(out.contains("probability at most 0.000e0"), "{out}");
        assert_eq!(
            cert.participants,
            [perft_certificate::ParticipantId("local".to_owned())]
        );
    }
}

#[test]
fn every_tampering_fails_the_audit() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = certified(dir.path(), "checkers", 11, 4, &[]);
    let bytes = std::fs::read(&path).unwrap();
    let honest = Certificate::decode(&bytes).unwrap();
    let units = honest.units.len();
    assert!(units > 100, "{units} units");

    // One count changed, the sums and the root made to fit: only the
    // recount can tell, and it names the unit.
    let mut forged = honest.clone();
    forged.units[17].count.leaves += 1;
    fails_naming(dir.path(), &resealed(&forged), "unit 17 (");

    // One unit removed: the plan has a unit there the certificate lacks.
    let mut forged = honest.clone();
    forged.units.remove(40);
    fails_naming(dir.path(), &resealed(&forged), "unit 40:");

    // Two units of different first moves swapped.
    let mut forged = honest.clone();
    let other = (0..units)
        .find(|&i| forged.units[i].weights[0].first_move != forged.units[3].weights[0].first_move)
        .unwrap();
    forged.units.swap(3, other);
    fails_naming(dir.path(), &resealed(&forged), "unit 3:");

    // One weight changed.
    let mut forged = honest.clone();
    forged.units[25].weights[0].paths += 1;
    fails_naming(dir.path(), &resealed(&forged), "unit 25 (");

    // The total changed, nothing else.
    let mut forged = honest.clone();
    forged.total.leaves += 1;
    fails_naming(dir.path(), &forged, "total: the certificate says 85242129");

    // The Merkle root changed.
    let mut forged = honest.clone();
    forged.merkle_root[0] ^= 1;
    fails_naming(dir.path(), &forged, "Merkle root");

    // A count changed without fixing anything else: sums and root fail too.
    let mut forged = honest.clone();
    forged.units[5].count.leaves += 3;
    fails_naming(dir.path(), &forged, "unit 5 (");

    // A truncated file, and one of another version: bad files, exit 2.
    let cut = dir.path().join("cut.cert");
    std::fs::write(&cut, &bytes[..bytes.len() - 9]).unwrap();
    let stderr = refused(&audit_all(&cut));
    assert!(stderr.contains("truncated"), "{stderr}");
    let mut newer = bytes.clone();
    newer[8] = 2;
    std::fs::write(&cut, &newer).unwrap();
    let stderr = refused(&audit_all(&cut));
    assert!(
        stderr.contains("certificate version 2, but this perft reads version 1 only"),
        "{stderr}"
    );
    std::fs::write(&cut, b"hello").unwrap();
    assert!(refused(&audit_all(&cut)).contains("not a Deep Perft certificate"));
}

#[test]
fn a_sampled_audit_states_its_guarantee() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = certified(dir.path(), "reversi", 9, 5, &[]);
    let out = ok(perft(&[
        "audit",
        path.to_str().unwrap(),
        "--sample",
        "10",
        "--seed",
        "1",
    ]));
    let cert = Certificate::decode(&std::fs::read(&path).unwrap()).unwrap();
    let n = cert.units.len();
    assert!(out.contains(&format!("recount: 10 of {n} units")), "{out}");
    // Ten drawn of n, one wrong: it passes unseen with chance (n - 10) / n.
    let p = (n - 10) as f64 / n as f64;
    assert!(
        out.contains(&format!(
            "(1 or more of {n}) would have passed this audit with probability at most {p:.3e}"
        )),
        "{out}"
    );
    // A certificate needs a planned run, and a convention needs Reversi.
    let stderr = refused(&perft(&[
        "run",
        "--game",
        "chess",
        "--depth",
        "2",
        "--convention",
        "oeis",
    ]));
    assert!(stderr.contains("applies to reversi only"), "{stderr}");
    let stderr = refused(&perft(&[
        "run",
        "--game",
        "reversi",
        "--depth",
        "3",
        "--raw",
        "--certificate",
        "x",
    ]));
    assert!(stderr.contains("--certificate"), "{stderr}");
}
