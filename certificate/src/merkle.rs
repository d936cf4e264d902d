//! The Merkle tree over a certificate's units (BLAKE3): a leaf hashes one
//! unit with its index, a node its two children, and a lone last node goes
//! up a level unchanged. One unit is proven to belong to a certificate with
//! its bytes and the `log2(units)` sibling hashes on its way to the root.

/// A BLAKE3 hash.
pub type Hash = [u8; 32];

/// Domain tags, so that no leaf can pass for a node or the reverse.
const LEAF: u8 = 0;
const NODE: u8 = 1;
const EMPTY: u8 = 2;

/// The leaf hash of unit `index` whose bytes are `unit`.
pub fn leaf_hash(index: u64, unit: &[u8]) -> Hash {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&[LEAF]);
    hasher.update(&index.to_le_bytes());
    hasher.update(unit);
    *hasher.finalize().as_bytes()
}

fn node_hash(left: &Hash, right: &Hash) -> Hash {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&[NODE]);
    hasher.update(left);
    hasher.update(right);
    *hasher.finalize().as_bytes()
}

/// The level above `level`.
fn parent_level(level: &[Hash]) -> Vec<Hash> {
    level
        .chunks(2)
        .map(|pair| match pair {
            [left, right] => node_hash(left, right),
            [lone] => *lone,
            _ => unreachable!("chunks of two"),
        })
        .collect()
}

/// The root over `leaves` (a fixed hash when there is none).
pub fn root(leaves: &[Hash]) -> Hash {
    if leaves.is_empty() {
        return *blake3::hash(&[EMPTY]).as_bytes();
    }
    let mut level = leaves.to_vec();
    while level.len() > 1 {
        level = parent_level(&level);
    }
    level[0]
}

/// The sibling hashes from leaf `index` up to the root, lowest first (a
/// level where the node is the lone last one has no sibling and adds none).
pub fn proof(leaves: &[Hash], index: usize) -> Vec<Hash> {
    let mut path = Vec::new();
    let mut level = leaves.to_vec();
    let mut at = index;
    while level.len() > 1 {
        let sibling = at ^ 1;
        if sibling < level.len() {
            path.push(level[sibling]);
        }
        level = parent_level(&level);
        at /= 2;
    }
    path
}

/// Whether `leaf` is leaf `index` of a tree of `leaves` leaves with root
/// `root`, by the sibling hashes `path` ([`proof`]).
pub fn verify(root: &Hash, leaves: usize, index: usize, leaf: Hash, path: &[Hash]) -> bool {
    if index >= leaves {
        return false;
    }
    let mut hash = leaf;
    let mut siblings = path.iter();
    let (mut at, mut width) = (index, leaves);
    while width > 1 {
        let sibling = at ^ 1;
        if sibling < width {
            let Some(other) = siblings.next() else {
                return false;
            };
            hash = if at % 2 == 0 {
                node_hash(&hash, other)
            } else {
                node_hash(other, &hash)
            };
        }
        at /= 2;
        width = width.div_ceil(2);
    }
    siblings.next().is_none() && hash == *root
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_leaf_proves_and_a_changed_one_does_not() {
        for n in 1..=9usize {
            let leaves: Vec<Hash> = (0..n).map(|i| leaf_hash(i as u64, &[i as u8])).collect();
            let top = root(&leaves);
            for i in 0..n {
                let path = proof(&leaves, i);
                assert!(verify(&top, n, i, leaves[i], &path), "{i} of {n}");
                assert!(!verify(&top, n, i, leaf_hash(i as u64, &[99]), &path));
                if n > 1 {
                    assert!(!verify(&top, n, (i + 1) % n, leaves[i], &path));
                }
            }
        }
        assert_ne!(root(&[]), root(&[leaf_hash(0, &[])]));
    }
}
