//! A recount of units on this machine: what an audit does with a
//! certificate's sampled units before comparing them with it.

use perft_core::{Game, Measure, count_units, table_size};
use perft_model::Count;

use crate::error::LocalError;
use crate::table::{TableChoice, table_for};

/// The counts of `positions` at `depth` under measure `M` on `threads`
/// threads, with the table `table` asks for (by default sized to the
/// units' work), in the order of `positions`.
pub fn recount<G: Game, M: Measure<G>>(
    positions: &[G],
    depth: u32,
    threads: usize,
    table: TableChoice,
) -> Result<Vec<Count>, LocalError>
where
    M::Count: Into<Count>,
{
    let stored = || table_size::units_stored_positions::<G, M>(positions, depth);
    let table = table_for::<G, M>(table, stored)?;
    let (counts, _) = count_units::<G, M>(positions, depth, threads, table.as_ref());
    Ok(counts.into_iter().map(Into::into).collect())
}

#[cfg(test)]
mod tests {
    use perft_core::{ByKind, Chess, Game, Plain};

    use super::*;

    #[test]
    fn units_are_recounted_in_their_order_with_or_without_kinds() {
        let start = Chess::start();
        let after_e4 = start.play(start.parse_move("e2e4").expect("legal"));
        let units = [start, after_e4];
        let plain = recount::<Chess, Plain>(&units, 2, 2, TableChoice::Default).expect("counted");
        assert_eq!(plain[0].leaves.leaves, 400);
        assert_eq!(plain[1].leaves.leaves, 600);
        let by_kind = recount::<Chess, ByKind>(&units, 2, 1, TableChoice::Off).expect("counted");
        assert_eq!(by_kind[0].leaves, plain[0].leaves);
        assert_eq!(by_kind[1].leaves, plain[1].leaves);
    }
}
