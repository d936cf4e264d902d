//! What an audit checks of a certificate, for anyone's program: the exact
//! checks over the whole file (every count possible, the plan made again
//! from the root, the sums, the Merkle root), how a recount of a unit
//! differs from what the certificate says, and which units a seed samples
//! and what a clean sample proves. Counting the sample is the caller's
//! (`perft audit` counts it on its threads or on a cluster).

mod checks;

pub use checks::{check_merkle, check_plan, check_sums, check_units_possible, hex};

use perft_core::{GameStats, Leaves};
use perft_model::Count;

use crate::Certificate;

/// Leaves for people: `12` or `12 (3 higher)`.
pub fn shown_leaves(leaves: Leaves) -> String {
    if leaves.higher == 0 {
        leaves.leaves.to_string()
    } else {
        format!("{} ({} higher)", leaves.leaves, leaves.higher)
    }
}

/// The first kind where `said` and `found` differ, as each gives it
/// (`captures 12`, `captures 11`), with how many other kinds differ; `None`
/// when they agree. A list of the wrong length differs in its first
/// missing kind.
pub fn first_difference(kinds: &[String], said: &[u128], found: &[u128]) -> Option<(String, String)> {
    let shown = |counts: &[u128], i: usize| {
        counts
            .get(i)
            .map_or_else(|| "nothing".to_owned(), u128::to_string)
    };
    let differing: Vec<usize> = (0..said.len().max(found.len()))
        .filter(|&i| said.get(i) != found.get(i))
        .collect();
    let &first = differing.first()?;
    let name = kinds.get(first).map_or("an unnamed kind", String::as_str);
    let more = match differing.len() - 1 {
        0 => String::new(),
        n => format!(" (and {n} more kinds differ)"),
    };
    Some((
        format!("{name} {}", shown(said, first)),
        format!("{name} {}{more}", shown(found, first)),
    ))
}

/// What each unit's sampling key hashes first, so that the key serves no
/// other purpose.
pub const SAMPLE_DOMAIN: &[u8] = b"deep-perft audit sample";

/// The units to recount: the `n` whose keys are smallest, in plan order. A
/// unit's key is the first 8 bytes, little-endian, of the BLAKE3 hash of
/// [`SAMPLE_DOMAIN`], the seed and the unit's index (each a `u64`,
/// little-endian); equal keys go by index. Any program draws the same
/// units from the same seed (docs/certificate.md, "The sample").
pub fn sample_indices(units: usize, n: usize, seed: u64) -> Vec<usize> {
    let key = |index: usize| {
        let mut hasher = blake3::Hasher::new();
        hasher.update(SAMPLE_DOMAIN);
        hasher.update(&seed.to_le_bytes());
        hasher.update(&(index as u64).to_le_bytes());
        let hash = hasher.finalize();
        let mut first = [0u8; 8];
        first.copy_from_slice(&hash.as_bytes()[..8]);
        (u64::from_le_bytes(first), index)
    };
    let mut keyed: Vec<(u64, usize)> = (0..units).map(key).collect();
    let n = n.min(units);
    if n < units {
        keyed.select_nth_unstable(n);
        keyed.truncate(n);
    }
    let mut picked: Vec<usize> = keyed.into_iter().map(|(_, index)| index).collect();
    picked.sort_unstable();
    picked
}

/// How many of `units` units an audit draws: `count` when given, else
/// the share `fraction` (rounded up), else 1% (rounded up); never more
/// than there are.
pub fn sample_size(units: usize, count: Option<usize>, fraction: Option<f64>) -> usize {
    let share = |f: f64| (f * units as f64).ceil() as usize;
    match (count, fraction) {
        (Some(n), _) => n,
        (None, Some(f)) => share(f),
        (None, None) => share(0.01),
    }
    .min(units)
}

/// The chance that a sample of `n` of `units` units, drawn without
/// replacement, misses every one of `wrong` wrong units.
pub fn pass_probability(units: usize, n: usize, wrong: usize) -> f64 {
    if wrong == 0 {
        return 1.0;
    }
    if n + wrong > units {
        return 0.0;
    }
    let log: f64 = (0..n)
        .map(|i| (((units - wrong - i) as f64) / ((units - i) as f64)).ln())
        .sum();
    log.exp()
}

/// A root without moves has no units to sample: its whole count (no move
/// to make, so nothing to spend) is made here and compared with the
/// certificate's total.
pub fn check_root_without_moves<G: GameStats>(cert: &Certificate, root: &G, problems: &mut Vec<String>) {
    let has_moves = root.legal_moves().into_iter().next().is_some();
    if has_moves || !cert.header.first_moves.is_empty() {
        return;
    }
    let depth = cert.header.depth;
    let counted = if cert.header.kinds.is_empty() {
        Count::plain(perft_core::perft(root, depth))
    } else {
        Count::from(perft_core::perft_stats(root, depth))
    };
    if counted.leaves != cert.total {
        problems.push(format!(
            "total: the certificate says {}, the root without moves counts {}",
            shown_leaves(cert.total),
            shown_leaves(counted.leaves)
        ));
    } else if let Some((said, found)) =
        first_difference(&cert.header.kinds, &cert.total_kinds, counted.kinds())
    {
        problems.push(format!(
            "total: the certificate says {said}, the root without moves counts {found}"
        ));
    }
}

/// How unit `i`'s recount differs from the certificate, for people; `None`
/// when they agree.
pub fn unit_differs(cert: &Certificate, i: usize, recounted: &Count) -> Option<String> {
    let unit = &cert.units[i];
    if unit.count.leaves != recounted.leaves {
        return Some(format!(
            "the certificate says {}, recounted {}",
            shown_leaves(unit.count.leaves),
            shown_leaves(recounted.leaves)
        ));
    }
    let (said, found) = first_difference(&cert.header.kinds, unit.count.kinds(), recounted.kinds())?;
    Some(format!("the certificate says {said}, recounted {found}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_probability_is_hypergeometric() {
        assert_eq!(pass_probability(10, 10, 1), 0.0);
        assert!((pass_probability(10, 1, 1) - 0.9).abs() < 1e-12);
        // Two drawn of four, two wrong: only the one good pair of six passes.
        assert!((pass_probability(4, 2, 2) - 1.0 / 6.0).abs() < 1e-12);
        assert_eq!(sample_indices(100, 5, 7), sample_indices(100, 5, 7));
        // The spec's example, computed by another program from its words.
        assert_eq!(sample_indices(322, 4, 20261123), vec![20, 72, 137, 295]);
        assert_eq!(sample_indices(100, 5, 7), vec![6, 19, 57, 59, 90]);
        assert_eq!(&sample_indices(10_649, 107, 20261123)[..4], &[137, 295, 340, 503]);
        assert!(sample_indices(10, 0, 1).is_empty());
        assert_eq!(sample_indices(3, 10, 1), vec![0, 1, 2]);
    }

    #[test]
    fn the_sample_is_a_count_a_share_or_one_percent() {
        assert_eq!(sample_size(1000, Some(7), Some(0.5)), 7);
        assert_eq!(sample_size(1000, Some(7000), None), 1000);
        assert_eq!(sample_size(1000, None, Some(0.0105)), 11);
        assert_eq!(sample_size(1000, None, None), 10);
        assert_eq!(sample_size(1001, None, None), 11);
        assert_eq!(sample_size(0, None, None), 0);
    }
}
