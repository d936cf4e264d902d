//! The one planned count on this machine, under any measure: the root
//! planned into units, the table sized to the plan, the units counted on
//! OS threads and summed into the divide, and the certificate of the count
//! when asked for. `perft run` and `perft bench` both count through it.

use perft_certificate::{Certificate, DeciderName, Provenance};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use perft_core::{
    Divide, Game, GameKind, Measure, Plan, count_units_watched, divide_by, local_plan, table_size,
};

use crate::error::LocalError;
use crate::table::{TableChoice, TableReport, table_for};

/// What shapes a planned count on this machine.
#[derive(Debug, Clone)]
pub struct LocalJob {
    /// The game, named in the certificate.
    pub game: GameKind,
    /// Plies counted below the root.
    pub depth: u32,
    /// Plies expanded into units; `None`: enough units for the threads.
    pub split_depth: Option<u32>,
    /// Counting threads.
    pub threads: usize,
    /// The table the threads share.
    pub table: TableChoice,
    /// Whether to build the certificate of the count, decided by `local`,
    /// and the program to name as its maker (`perft 0.1.0`): the caller's
    /// own name and version, not this crate's.
    pub certify: Option<String>,
    /// Where the count shows how far it is, for a caller to render.
    pub progress: Option<Arc<Progress>>,
}

/// How far a planned local count is: units counted of the plan's, read
/// while the threads count.
#[derive(Debug, Default)]
pub struct Progress {
    units_total: AtomicUsize,
    units_done: AtomicUsize,
}

impl Progress {
    /// Units counted and units planned (0 of 0 until the plan is made).
    pub fn units(&self) -> (usize, usize) {
        (
            self.units_done.load(Ordering::Relaxed),
            self.units_total.load(Ordering::Relaxed),
        )
    }
}

impl LocalJob {
    /// A count of `game` to `depth` on `threads` threads with the table
    /// `table`, planned for the threads, with no certificate.
    pub fn new(game: GameKind, depth: u32, threads: usize, table: TableChoice) -> LocalJob {
        LocalJob {
            game,
            depth,
            split_depth: None,
            threads,
            table,
            certify: None,
            progress: None,
        }
    }
}

/// A finished local count under measure `M`.
#[derive(Debug)]
pub struct LocalCount<G: Game, M: Measure<G>> {
    /// The count below each first move, and their sum.
    pub divide: Divide<G::Move, M::Count>,
    /// The table, when one was used, and how it served.
    pub table: Option<TableReport>,
    /// The count's certificate, when [`LocalJob::certify`] asked for it.
    pub certificate: Option<Certificate>,
}

/// The count of `root` by the bare move generator: one thread, no table,
/// nothing merged; the mode to compare with other engines' published
/// speeds.
pub fn count_raw<G: Game, M: Measure<G>>(root: &G, depth: u32) -> LocalCount<G, M> {
    LocalCount {
        divide: divide_by::<G, M>(root, depth),
        table: None,
        certificate: None,
    }
}

/// Plans `root` (to the split depth, or into enough units for the
/// threads), counts the units with the table `job.table` asks for (by
/// default sized to the plan) and sums the divide; builds the certificate
/// when `job.certify` asks (its provenance: no job, finished when the
/// last unit was counted, made by the program named). A depth too shallow to leave the units their plies
/// ([`Measure::UNIT_PLIES`]) is counted without a plan.
pub fn count_planned<G: Game, M: Measure<G>>(root: &G, job: &LocalJob) -> Result<LocalCount<G, M>, LocalError>
where
    M::Count: Into<perft_model::Count>,
{
    let depth = job.depth;
    let shallow = depth <= M::UNIT_PLIES;
    if let Some(split) = job.split_depth
        && M::UNIT_PLIES > 0
        && split + M::UNIT_PLIES > depth
    {
        return Err(LocalError::SplitTooDeep { depth, split });
    }
    if shallow && job.certify.is_some() {
        return Err(if M::UNIT_PLIES == 0 {
            LocalError::CertificateAtDepthZero
        } else {
            LocalError::StatsCertificateTooShallow { depth }
        });
    }
    let plan = match job.split_depth {
        Some(split) => Plan::new(*root, depth, split),
        None if shallow => return Ok(count_raw::<G, M>(root, depth)),
        None => local_plan(root, depth, job.threads),
    }
    .map_err(LocalError::Plan)?;
    let table = table_for::<G, M>(job.table, || table_size::plan_stored_positions::<G, M>(&plan))?;
    let unwatched = Progress::default();
    let progress = job.progress.as_deref().unwrap_or(&unwatched);
    progress.units_total.store(plan.units().len(), Ordering::Relaxed);
    let (counts, probes) = count_units_watched::<G, M>(
        plan.units().positions(),
        plan.remaining_depth(),
        job.threads,
        table.as_ref(),
        &progress.units_done,
    );
    let certificate = if let Some(program) = &job.certify {
        let local = [DeciderName::local()];
        let finished = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(Provenance::NOT_RECORDED, |since| since.as_secs());
        let provenance = Provenance::local(finished, program.as_str());
        let certificate = perft_certificate::from_plan::<G, M>(job.game, &plan, &counts, &local, provenance)
            .map_err(LocalError::Certificate)?;
        Some(certificate)
    } else {
        None
    };
    Ok(LocalCount {
        divide: plan.divide::<M>(&counts),
        table: table.map(|table| TableReport::new(&table, probes)),
        certificate,
    })
}

#[cfg(test)]
mod tests {
    use perft_core::{ByKind, Chess, Counted, Plain, Reversi};

    use super::*;

    fn job(depth: u32) -> LocalJob {
        LocalJob::new(GameKind::Chess, depth, 2, TableChoice::Bytes(1 << 20))
    }

    #[test]
    fn a_planned_count_is_the_raw_count() {
        let planned = count_planned::<Chess, Plain>(&Chess::start(), &job(3)).expect("counted");
        let raw = count_raw::<Chess, Plain>(&Chess::start(), 3);
        assert_eq!(planned.divide.total.leaves, 8_902);
        assert_eq!(planned.divide.total, raw.divide.total);
        assert!(planned.table.is_some() && raw.table.is_none());
        assert!(planned.certificate.is_none());
    }

    #[test]
    fn a_count_by_kind_keeps_its_kinds_through_the_plan() {
        let planned = count_planned::<Chess, ByKind>(&Chess::start(), &job(3)).expect("counted");
        let raw = count_raw::<Chess, ByKind>(&Chess::start(), 3);
        assert_eq!(planned.divide.total, raw.divide.total);
        assert_eq!(planned.divide.total.leaves().leaves, 8_902);
    }

    #[test]
    fn a_certificate_is_built_when_asked_and_sums_to_the_count() {
        let job = LocalJob {
            certify: Some("perft 9.9.9".to_owned()),
            split_depth: Some(2),
            ..LocalJob::new(GameKind::Reversi, 4, 2, TableChoice::Off)
        };
        let counted = count_planned::<Reversi, Plain>(&Reversi::start(), &job).expect("counted");
        let certificate = counted.certificate.expect("asked for");
        assert_eq!(counted.divide.total.leaves, 244);
        assert_eq!(certificate.total.leaves, 244);
        assert_eq!(certificate.header.split_depth, 2);
        let provenance = certificate.provenance.expect("always written");
        assert_eq!(
            (provenance.job.as_str(), provenance.program.as_str()),
            ("", "perft 9.9.9")
        );
        assert!(provenance.finished > 1_700_000_000, "{provenance:?}");
    }

    #[test]
    fn shallow_certificates_and_deep_splits_are_refused() {
        let at_zero = LocalJob {
            certify: Some("perft".to_owned()),
            ..job(0)
        };
        assert!(matches!(
            count_planned::<Chess, Plain>(&Chess::start(), &at_zero),
            Err(LocalError::CertificateAtDepthZero)
        ));
        let by_kind_at_one = LocalJob {
            certify: Some("perft".to_owned()),
            ..job(1)
        };
        assert!(matches!(
            count_planned::<Chess, ByKind>(&Chess::start(), &by_kind_at_one),
            Err(LocalError::StatsCertificateTooShallow { depth: 1 })
        ));
        let split_at_depth = LocalJob {
            split_depth: Some(3),
            ..job(3)
        };
        assert!(matches!(
            count_planned::<Chess, ByKind>(&Chess::start(), &split_at_depth),
            Err(LocalError::SplitTooDeep { depth: 3, split: 3 })
        ));
    }
}
