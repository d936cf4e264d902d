//! Why a plan could not be made.

/// Why a plan could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The split depth is outside 1..=depth.
    #[error("split depth {split_depth} must be at least 1 and at most the depth {depth}")]
    SplitDepth {
        /// Asked split depth.
        split_depth: u32,
        /// Depth of the perft.
        depth: u32,
    },
    /// Path counts no longer fit in 64 bits: the split depth is far too deep.
    #[error("more than 2^64 paths reach one frontier position; use a smaller split depth")]
    TooManyPaths,
    /// More than 2^32 weights at one level: the split depth is far too deep.
    #[error("more than 2^32 weights at one level; use a smaller split depth")]
    TooManyWeights,
    /// The expansion passed the unit limit; it stopped there, so memory
    /// stays proportional to the limit.
    #[error("the plan has more than {limit} units at split depth {split_depth}: use a smaller split depth")]
    TooManyUnits {
        /// The limit passed.
        limit: usize,
        /// The ply where it was passed.
        split_depth: u32,
    },
}
