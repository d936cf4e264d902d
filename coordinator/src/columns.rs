//! A plan's units stored column-wise: one flat array of packed positions,
//! one of weights with each unit's end, one of estimated sizes. A unit
//! costs its packed bytes, its weights and eight bytes more, with no
//! allocation of its own, so ten million units fit in well under a GiB.

use perft_core::Weight;

/// The units of one plan, in plan order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UnitColumns {
    /// Bytes of one packed position.
    stride: usize,
    positions: Vec<u8>,
    /// Where each unit's weights end in `weights`.
    weight_ends: Vec<u32>,
    weights: Vec<Weight>,
    /// Each unit's estimated subtree size, relative (for the ETA).
    estimates: Vec<f32>,
}

/// Why columns could not take a unit.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ColumnsError {
    #[error("a packed position of {found} bytes, expected {expected}")]
    Stride { expected: usize, found: usize },
    #[error("more than 2^32 weights in one plan")]
    TooManyWeights,
    #[error("columns of different lengths or weight ends out of order")]
    Inconsistent,
}

impl UnitColumns {
    /// Empty columns for positions of `stride` bytes.
    pub fn new(stride: usize) -> UnitColumns {
        UnitColumns {
            stride,
            ..UnitColumns::default()
        }
    }

    /// Columns made of whole arrays (a plan's, moved rather than copied),
    /// checked for agreeing lengths and weight ends in order.
    pub fn from_parts(
        stride: usize,
        positions: Vec<u8>,
        weight_ends: Vec<u32>,
        weights: Vec<Weight>,
        estimates: Vec<f32>,
    ) -> Result<UnitColumns, ColumnsError> {
        let units = weight_ends.len();
        let ordered = weight_ends.windows(2).all(|pair| pair[0] <= pair[1]);
        let last = weight_ends.last().map_or(0, |&end| end as usize);
        if positions.len() != units.saturating_mul(stride)
            || estimates.len() != units
            || !ordered
            || last != weights.len()
        {
            return Err(ColumnsError::Inconsistent);
        }
        Ok(UnitColumns {
            stride,
            positions,
            weight_ends,
            weights,
            estimates,
        })
    }

    /// Room for `units` units with about `weights` weights.
    pub fn reserve(&mut self, units: usize, weights: usize) {
        self.positions.reserve(units * self.stride);
        self.weight_ends.reserve(units);
        self.estimates.reserve(units);
        self.weights.reserve(weights);
    }

    /// Appends a unit.
    pub fn push(&mut self, position: &[u8], weights: &[Weight], estimate: f32) -> Result<(), ColumnsError> {
        if position.len() != self.stride {
            return Err(ColumnsError::Stride {
                expected: self.stride,
                found: position.len(),
            });
        }
        let end =
            u32::try_from(self.weights.len() + weights.len()).map_err(|_| ColumnsError::TooManyWeights)?;
        self.positions.extend_from_slice(position);
        self.weights.extend_from_slice(weights);
        self.weight_ends.push(end);
        self.estimates.push(estimate);
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.weight_ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.weight_ends.is_empty()
    }

    /// Bytes of one packed position.
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// Unit `i`'s packed position.
    pub fn position(&self, i: usize) -> &[u8] {
        &self.positions[i * self.stride..(i + 1) * self.stride]
    }

    /// Unit `i`'s weights.
    pub fn weights(&self, i: usize) -> &[Weight] {
        let start = if i == 0 {
            0
        } else {
            self.weight_ends[i - 1] as usize
        };
        &self.weights[start..self.weight_ends[i] as usize]
    }

    /// Unit `i`'s estimated size.
    pub fn estimate(&self, i: usize) -> f32 {
        self.estimates[i]
    }

    /// Appends every unit of `other` (same stride).
    pub fn extend(&mut self, other: &UnitColumns) -> Result<(), ColumnsError> {
        for i in 0..other.len() {
            self.push(other.position(i), other.weights(i), other.estimate(i))?;
        }
        Ok(())
    }

    /// Heap bytes held, for memory figures.
    pub fn heap_bytes(&self) -> usize {
        self.positions.capacity()
            + self.weight_ends.capacity() * 4
            + self.weights.capacity() * std::mem::size_of::<Weight>()
            + self.estimates.capacity() * 4
    }

    /// The columns as one blob: unit count, stride, then each column.
    pub fn to_blob(&self) -> Vec<u8> {
        self.blob_of(0..self.len())
    }

    /// The units `range` as a blob of their own (a journal chunk), read
    /// straight from the columns.
    pub fn blob_of(&self, range: std::ops::Range<usize>) -> Vec<u8> {
        let positions = &self.positions[range.start * self.stride..range.end * self.stride];
        let first_weight = match range.start {
            0 => 0,
            i => self.weight_ends[i - 1] as usize,
        };
        let end_weight = match range.end {
            0 => 0,
            i => self.weight_ends[i - 1] as usize,
        };
        let weights = &self.weights[first_weight..end_weight.max(first_weight)];
        let mut blob = Vec::with_capacity(12 + positions.len() + range.len() * 8 + weights.len() * 12);
        blob.extend_from_slice(&(range.len() as u64).to_le_bytes());
        blob.extend_from_slice(&(self.stride as u32).to_le_bytes());
        blob.extend_from_slice(positions);
        for i in range {
            blob.extend_from_slice(&self.estimates[i].to_le_bytes());
            blob.extend_from_slice(&(self.weights(i).len() as u32).to_le_bytes());
        }
        for w in weights {
            blob.extend_from_slice(&w.first_move.to_le_bytes());
            blob.extend_from_slice(&w.paths.to_le_bytes());
        }
        blob
    }

    /// Columns read back from [`UnitColumns::to_blob`]; `None` for a blob
    /// that is not one (any length, any bytes: never panics).
    pub fn from_blob(blob: &[u8]) -> Option<UnitColumns> {
        let mut reader = Reader(blob);
        let units = usize::try_from(reader.u64()?).ok()?;
        let stride = reader.u32()? as usize;
        let positions = reader.take(units.checked_mul(stride)?)?;
        let mut out = UnitColumns::new(stride);
        let mut counts = Vec::with_capacity(units.min(blob.len() / 8));
        let mut estimates = Vec::with_capacity(units.min(blob.len() / 8));
        for _ in 0..units {
            estimates.push(f32::from_le_bytes(reader.take(4)?.try_into().ok()?));
            counts.push(reader.u32()? as usize);
        }
        out.reserve(units, 0);
        for i in 0..units {
            let mut weights = Vec::with_capacity(counts[i].min(reader.0.len() / 12));
            for _ in 0..counts[i] {
                weights.push(Weight {
                    first_move: reader.u32()?,
                    paths: reader.u64()?,
                });
            }
            out.push(&positions[i * stride..(i + 1) * stride], &weights, estimates[i])
                .ok()?;
        }
        reader.0.is_empty().then_some(out)
    }
}

/// Reads little-endian fields off the front of a blob.
struct Reader<'b>(&'b [u8]);

impl<'b> Reader<'b> {
    fn take(&mut self, n: usize) -> Option<&'b [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

/// One bit per unit.
#[derive(Clone, Debug, Default)]
pub struct Bits(Vec<u64>);

impl Bits {
    /// `n` clear bits.
    pub fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }

    pub fn get(&self, i: u64) -> bool {
        self.0
            .get((i / 64) as usize)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Sets bit `i`; returns whether it was clear.
    pub fn set(&mut self, i: u64) -> bool {
        let was = self.get(i);
        if let Some(w) = self.0.get_mut((i / 64) as usize) {
            *w |= 1 << (i % 64);
        }
        !was
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.0.capacity() * 8
    }

    pub fn clear(&mut self, i: u64) {
        if let Some(w) = self.0.get_mut((i / 64) as usize) {
            *w &= !(1 << (i % 64));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> UnitColumns {
        let mut c = UnitColumns::new(3);
        c.push(
            &[1, 2, 3],
            &[Weight {
                first_move: 0,
                paths: 2,
            }],
            1.5,
        )
        .unwrap();
        c.push(&[4, 5, 6], &[], 0.0).unwrap();
        c.push(
            &[7, 8, 9],
            &[
                Weight {
                    first_move: 1,
                    paths: u64::MAX,
                },
                Weight {
                    first_move: 4,
                    paths: 1,
                },
            ],
            9.0,
        )
        .unwrap();
        c
    }

    #[test]
    fn units_read_back_by_index_and_through_a_blob() {
        let mut c = sample();
        assert_eq!(c.len(), 3);
        assert_eq!(c.position(2), &[7, 8, 9]);
        assert!(c.weights(1).is_empty());
        assert_eq!(c.weights(2)[0].paths, u64::MAX);
        assert_eq!(UnitColumns::from_blob(&c.to_blob()), Some(c.clone()));
        let tail = UnitColumns::from_blob(&c.blob_of(1..3)).unwrap();
        assert_eq!(
            (tail.len(), tail.position(0), tail.weights(1).len()),
            (2, &[4u8, 5, 6][..], 2)
        );
        assert_eq!(UnitColumns::from_blob(&c.blob_of(0..0)).unwrap().len(), 0);
        assert_eq!(
            c.push(&[1], &[], 0.0),
            Err(ColumnsError::Stride {
                expected: 3,
                found: 1
            })
        );
    }

    #[test]
    fn a_damaged_blob_is_refused_never_a_panic() {
        let blob = sample().to_blob();
        for cut in 0..blob.len() {
            assert_eq!(UnitColumns::from_blob(&blob[..cut]), None, "cut at {cut}");
        }
        let mut huge = blob.clone();
        huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(UnitColumns::from_blob(&huge), None);
        let mut longer = blob;
        longer.push(0);
        assert_eq!(UnitColumns::from_blob(&longer), None);
    }

    #[test]
    fn bits_set_and_clear() {
        let mut b = Bits::new(130);
        assert!(b.set(129));
        assert!(!b.set(129));
        assert!(b.get(129) && !b.get(128));
        b.clear(129);
        assert!(!b.get(129));
        assert!(!b.get(1000), "out of range reads as clear");
    }
}
