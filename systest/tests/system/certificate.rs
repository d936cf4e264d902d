//! Certificates end to end with the real binary: `perft run --certificate`
//! writes one, `perft audit` passes it at 100% and fails every kind of
//! tampering, naming the unit (exit 1), or refuses a bad file (exit 2).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::jobs::words;
use crate::common::tamper::{
    audit_all, audit_with, every_impossible_count_fails_unsampled, every_kind_tampering_fails,
    every_tampering_fails, fails_sampled_naming, kinds_above_their_leaves_fail_unsampled, resealed,
};
use crate::common::{PERFT, ok, refused};
use perft_certificate::Certificate;

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
        assert_eq!(cert.participants, [perft_certificate::DeciderName::local()]);
    }
}

/// Now, in Unix seconds.
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[test]
fn a_local_certificate_names_no_job_its_finish_and_this_perft() {
    let dir = tempfile::tempdir().unwrap();
    let before = unix_now();
    let (path, _) = certified(dir.path(), "reversi", 8, 3, &[]);
    let after = unix_now();
    let cert = Certificate::decode(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(cert.version(), 3);
    let made = cert.provenance.expect("perft run names its maker");
    assert_eq!(made.job, "", "a local run has no job");
    assert_eq!(made.program, format!("perft {}", env!("CARGO_PKG_VERSION")));
    assert!(
        (before..=after).contains(&made.finished),
        "{made:?} not in {before}..={after}"
    );
    let out = ok(audit_all(&path));
    let second = out.lines().nth(1).unwrap();
    assert_eq!(
        second,
        format!(
            "made by: a local run (no job), finished {}, by perft {}",
            perft_certificate::rfc3339(made.finished),
            env!("CARGO_PKG_VERSION")
        )
    );
    assert!(out.ends_with("audit passed\n"), "{out}");
}

#[test]
fn every_tampering_fails_the_audit() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = certified(dir.path(), "checkers", 11, 4, &[]);
    every_tampering_fails(dir.path(), &path);
}

#[test]
fn statistics_certificates_audit_clean_and_fail_every_tampering_with_kinds() {
    let dir = tempfile::tempdir().unwrap();
    // Chess perft(5) by kind, against the Grand Chess Tree's row: the
    // certificate's total kinds are the published ones.
    let (path, leaves) = certified(dir.path(), "chess", 5, 2, &["--stats"]);
    let row = crate::common::published_stats_row(5);
    assert_eq!(leaves, row[0].1.to_string());
    let cert = Certificate::decode(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(cert.version(), 4);
    for (kind, (column, value)) in cert.header.kinds.iter().zip(&row[1..]) {
        assert_eq!(kind, column);
        let i = cert.header.kinds.iter().position(|k| k == column).unwrap();
        assert_eq!(cert.total_kinds[i], *value, "{column}");
    }
    let out = ok(audit_all(&path));
    assert!(out.contains("total 4865609, 14 kinds of leaves"), "{out}");
    assert!(out.contains("recount: 400 of 400 units (100.00%)"), "{out}");
    assert!(
        out.contains(
            "units: every count checked at remaining depth 3: at most 16777216 leaves (256 moves a ply), no game-over leaves, kinds that fit the leaves\n"
        ),
        "{out}"
    );
    assert!(out.contains("sampled units: all 400 (0 to 399)\n"), "{out}");
    assert!(out.ends_with("audit passed\n"), "{out}");
    every_kind_tampering_fails(dir.path(), &path);
    kinds_above_their_leaves_fail_unsampled(dir.path(), &path);

    // Checkers and Reversi (both conventions) by kind audit clean too.
    for (game, depth, split, extra) in [
        ("checkers", 9, 3, &["--stats"][..]),
        ("reversi", 8, 3, &["--stats"][..]),
        ("reversi", 8, 3, &["--stats", "--convention", "oeis"][..]),
    ] {
        let (path, _) = certified(dir.path(), game, depth, split, extra);
        let out = ok(audit_all(&path));
        assert!(out.contains("kinds of leaves"), "{game}: {out}");
        assert!(out.ends_with("audit passed\n"), "{game}: {out}");
    }

    // A mated root has no units: its audit makes the whole count again.
    let mated = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3";
    let path = dir.path().join("mated.cert");
    ok(perft(&[
        "run",
        "--game",
        "chess",
        "--depth",
        "3",
        "--stats",
        "--position",
        mated,
        "--certificate",
        path.to_str().unwrap(),
    ]));
    let out = ok(audit_all(&path));
    assert!(out.contains("0 units, total 0, 14 kinds of leaves"), "{out}");
    assert!(out.contains("the root has no moves and so no units"), "{out}");
    assert!(out.ends_with("audit passed\n"), "{out}");

    // A statistics certificate needs a ply below its units.
    let stderr = refused(&perft(&words(
        "run --game chess --depth 1 --stats --certificate x",
    )));
    assert!(
        stderr.contains("a statistics certificate needs depth 2 or more"),
        "{stderr}"
    );
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
    let stderr = refused(&perft(&words("run --game chess --depth 2 --convention oeis")));
    assert!(stderr.contains("applies to reversi only"), "{stderr}");
    let stderr = refused(&perft(&words(
        "run --game reversi --depth 3 --raw --certificate x",
    )));
    assert!(stderr.contains("--certificate"), "{stderr}");
}

/// The Merkle root as `perft audit` prints it: 64 lower-case hex digits.
fn hex(root: &[u8; 32]) -> String {
    root.iter().map(|b| format!("{b:02x}")).collect()
}

/// The unit indices of the audit's `sampled units:` lines, in order.
fn sampled(out: &str) -> Vec<usize> {
    out.lines()
        .filter_map(|line| line.strip_prefix("sampled units: "))
        .flat_map(|line| line.split(' ').map(|i| i.parse::<usize>().unwrap()))
        .collect()
}

#[test]
fn impossible_counts_fail_every_audit_whatever_its_sample() {
    let dir = tempfile::tempdir().unwrap();
    // Checkers perft(9) split at 4: units of 5 plies.
    let (path, _) = certified(dir.path(), "checkers", 9, 4, &[]);
    let out = ok(audit_with(&path, &["--sample", "0"]));
    assert!(
        out.contains(
            "units: every count checked at remaining depth 5: at most 34359738368 leaves (128 moves a ply), no game-over leaves\n"
        ),
        "{out}"
    );
    assert!(out.contains("sampled units: none\n"), "{out}");
    assert!(out.ends_with("audit passed\n"), "{out}");
    every_impossible_count_fails_unsampled(dir.path(), &path);

    // Reversi counts game-over leaves in Bik's convention only, and even
    // there never below two plies: a unit of one ply ends its game with a
    // pass to full depth.
    let (path, _) = certified(dir.path(), "reversi", 7, 4, &["--convention", "oeis"]);
    let mut forged = Certificate::decode(&std::fs::read(&path).unwrap()).unwrap();
    forged.units[2].count.leaves.higher = 1;
    fails_sampled_naming(
        dir.path(),
        &resealed(&forged),
        &["--sample", "0"],
        "MISMATCH  unit 2: 1 game-over leaves, but reversi (oeis convention) counts none",
    );
    let (path, _) = certified(dir.path(), "reversi", 6, 5, &[]);
    let mut forged = Certificate::decode(&std::fs::read(&path).unwrap()).unwrap();
    forged.units[4].count.leaves.higher = 1;
    fails_sampled_naming(
        dir.path(),
        &resealed(&forged),
        &["--sample", "0"],
        "MISMATCH  unit 4: 1 game-over leaves, but a unit of remaining depth 1 has none (a game-over node below two plies ends in a full-depth pass)",
    );
    let out = ok(audit_with(&path, &["--sample", "0"]));
    assert!(
        out.contains("at most 64 leaves (64 moves a ply), no game-over leaves (none below two plies)\n"),
        "{out}"
    );
    // Above two plies Bik's convention has them: only the bound applies.
    let (path, _) = certified(dir.path(), "reversi", 7, 4, &[]);
    let out = ok(audit_with(&path, &["--sample", "0"]));
    assert!(
        out.contains(
            "units: every count checked at remaining depth 3: at most 262144 leaves (64 moves a ply), game-over leaves no more than the leaves\n"
        ),
        "{out}"
    );
}

#[test]
fn an_audit_prints_the_merkle_root_and_the_units_it_drew() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = certified(dir.path(), "checkers", 9, 4, &[]);
    let honest = Certificate::decode(&std::fs::read(&path).unwrap()).unwrap();
    let n = honest.units.len();
    let out = ok(audit_with(&path, &["--sample", "25", "--seed", "11"]));
    let root = format!(
        "merkle: root {} (the certificate's), recomputed over the units\n",
        hex(&honest.merkle_root)
    );
    assert!(out.contains(&root), "{out}");
    // 25 distinct units in plan order, 20 a line.
    let drawn = sampled(&out);
    assert_eq!(drawn.len(), 25, "{out}");
    assert!(drawn.windows(2).all(|w| w[0] < w[1]), "{drawn:?}");
    assert!(drawn.iter().all(|&i| i < n), "{drawn:?}");
    assert_eq!(
        out.lines().filter(|l| l.starts_with("sampled units: ")).count(),
        2
    );
    // The same seed draws the same units; another seed others.
    let again = ok(audit_with(&path, &["--sample", "25", "--seed", "11"]));
    assert_eq!(sampled(&again), drawn);
    assert_ne!(
        sampled(&ok(audit_with(&path, &["--sample", "25", "--seed", "12"]))),
        drawn
    );
    // The units printed are those recounted: with every count one too
    // many (sums and root made to fit), exactly they are named.
    let mut forged = honest.clone();
    for unit in &mut forged.units {
        unit.count.leaves.leaves += 1;
    }
    let forged = resealed(&forged);
    let file = dir.path().join("forged.cert");
    std::fs::write(&file, forged.encode()).unwrap();
    let out = audit_with(&file, &["--sample", "25", "--seed", "11"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(sampled(&stdout), drawn);
    assert!(
        stdout.contains(&format!("merkle: root {} ", hex(&forged.merkle_root))),
        "{stdout}"
    );
    let named: Vec<usize> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("MISMATCH  unit "))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(named[..20], drawn[..20], "{stdout}");
    assert!(stdout.contains("... and 5 more\n"), "{stdout}");
}

#[test]
fn the_recorded_certificates_still_audit() {
    // records/: real cluster runs' certificates. The exact checks, every
    // unit's bounds included, pass on each (their recounts are recorded
    // beside them).
    let records = Path::new(env!("CARGO_MANIFEST_DIR")).join("../records");
    let mut audited = Vec::new();
    for entry in std::fs::read_dir(&records).unwrap() {
        let path = entry.unwrap().path().join("certificate.cert");
        if !path.exists() {
            continue;
        }
        let cert = Certificate::decode(&std::fs::read(&path).unwrap()).unwrap();
        // Made before certificates named their maker: version 1, read as
        // it always was, its provenance said to be missing.
        assert_eq!((cert.version(), &cert.provenance), (1, &None));
        let out = ok(audit_with(&path, &["--sample", "0"]));
        assert_eq!(
            out.lines().nth(1),
            Some("made by: not recorded (format version 1)"),
            "{out}"
        );
        assert!(
            out.contains(&format!("merkle: root {} ", hex(&cert.merkle_root))),
            "{out}"
        );
        assert!(
            out.contains("units: every count checked at remaining depth"),
            "{out}"
        );
        assert!(out.ends_with("audit passed\n"), "{out}");
        audited.push((cert.header.depth, cert.units.len()));
    }
    audited.sort_unstable();
    assert_eq!(audited, [(15, 322), (15, 322), (16, 10649)]);
}
