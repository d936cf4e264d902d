//! The counting threads: plain OS threads (perft blocks for as long as it
//! runs, so never on the async runtime), one transposition table shared by
//! all of them and kept across units of the same game.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use perft_core::stats::StatsRequestError;
use perft_core::stats::{GameStats, StatsVisitor};
use perft_core::{
    ByKind, Convention, ConventionRefused, Game, GameKind, GameVisitor, Measure, Plain, PreparedTable,
    TranspositionTable,
};
use perft_model::{Count, Epoch, JobId, UnitId};

/// One leased unit as the counting threads see it: the wire's per-job
/// group flattened, the position still packed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitLease {
    pub job_id: JobId,
    pub game: GameKind,
    /// The job's counting convention (`None`: the game's default).
    pub convention: Option<Convention>,
    pub depth: u32,
    /// Count the leaves by kind too (a statistics job).
    pub stats: bool,
    pub unit_id: UnitId,
    pub epoch: Epoch,
    pub position: Vec<u8>,
    pub lease_tag: Vec<u8>,
}

/// What this worker has done since it started, for its heartbeats.
#[derive(Debug, Default)]
pub struct Totals {
    pub table_probes: AtomicU64,
    pub table_hits: AtomicU64,
    /// The table's fill in millionths, last sampled.
    pub table_fill_ppm: AtomicU64,
    pub units_done: AtomicU64,
    /// Leaves counted, saturating at `u64::MAX` (the heartbeat's figure;
    /// exact counts go in reports).
    pub leaves_done: AtomicU64,
}

/// What a counting thread hands back.
// The large variant is the common one: boxing it would allocate per unit
// to make the rare refusal smaller.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Outcome {
    /// The unit's count.
    Counted {
        lease: UnitLease,
        /// Its leaves and, in a statistics job, its leaves by kind.
        count: Count,
        /// CPU seconds of the counting thread (a unit is counted on one
        /// thread): the participant's credit, not wall time.
        cpu_seconds: f64,
    },
    /// The unit could not be counted here (bad game or position: a bug or a
    /// version mismatch); it is handed back.
    Refused { lease: UnitLease, reason: UnitRefused },
}

/// Why a leased unit cannot be counted here: a bug or a version mismatch
/// between this worker and its coordinator.
#[derive(Debug, thiserror::Error)]
pub enum UnitRefused {
    #[error(transparent)]
    Convention(#[from] ConventionRefused),
    #[error(transparent)]
    Unit(#[from] StatsRequestError),
}

/// Test builds only: makes every n-th count of this worker wrong (one leaf
/// too many), as a faulty machine would.
#[cfg(feature = "fault-injection")]
#[derive(Debug)]
struct FaultInjector {
    every: u64,
    counted: std::sync::atomic::AtomicU64,
}

#[cfg(feature = "fault-injection")]
impl FaultInjector {
    fn from_env() -> Option<FaultInjector> {
        let every = std::env::var("PERFT_FAULT_EVERY")
            .ok()?
            .parse()
            .ok()
            .filter(|&n: &u64| n > 0)?;
        Some(FaultInjector {
            every,
            counted: std::sync::atomic::AtomicU64::new(0),
        })
    }

    fn apply(&self, lease: &UnitLease, mut count: Count) -> Count {
        if !(self.counted.fetch_add(1, Ordering::AcqRel) + 1).is_multiple_of(self.every) {
            return count;
        }
        tracing::warn!(job = %lease.job_id, unit = %lease.unit_id, "fault injected");
        count.leaves.leaves += 1;
        count
    }
}

/// The one table of this process, for the game being counted; emptied and
/// reused in place when the game changes.
#[derive(Debug, Default)]
struct Tables {
    bytes: Option<u64>,
    /// The memory prepared before the first lease, until a game takes it.
    prepared: Mutex<Option<PreparedTable>>,
    current: Mutex<Option<(GameKind, Arc<TranspositionTable>)>>,
    /// When the fill was last sampled (it reads scattered memory).
    last_fill: Mutex<Option<Instant>>,
    totals: Arc<Totals>,
}

impl Tables {
    /// Publishes the table's fill, at most once a second.
    fn sample_fill(&self, table: &TranspositionTable) {
        let mut last = self.last_fill.lock().unwrap_or_else(|p| p.into_inner());
        if last.is_none_or(|t| t.elapsed().as_secs() >= 1) {
            *last = Some(Instant::now());
            let fill = table.fill(10_000);
            self.totals
                .table_fill_ppm
                .store((fill * 1e6) as u64, Ordering::Relaxed);
            metrics::gauge!("perft_worker_table_fill").set(fill);
        }
    }

    fn for_game<G: Game>(&self, game: GameKind) -> Option<Arc<TranspositionTable>> {
        let bytes = self.bytes?;
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        match &*current {
            Some((g, table)) if *g == game => Some(Arc::clone(table)),
            _ => {
                // One table per process: the old game's table is emptied and
                // reused once the threads still counting on it are done
                // (they never need this lock to finish), so two never
                // coexist and its memory is never faulted in twice.
                let table = match current.take() {
                    None => {
                        let prepared = self.prepared.lock().unwrap_or_else(|p| p.into_inner()).take();
                        Arc::new(match prepared {
                            Some(memory) => memory.for_game::<G>()?,
                            None => TranspositionTable::for_game::<G>(bytes)?,
                        })
                    }
                    Some((_, mut table)) => loop {
                        if let Some(reused) = Arc::get_mut(&mut table) {
                            reused.reset_for_game::<G>();
                            break table;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    },
                };
                *current = Some((game, Arc::clone(&table)));
                Some(table)
            }
        }
    }
}

/// Counts one unit of a game chosen at run time: leaves alone
/// ([`GameVisitor`], with the process's table) or by kind
/// ([`StatsVisitor`], without one: the plain table holds no kinds).
struct CountUnit<'a> {
    lease: &'a UnitLease,
    tables: &'a Tables,
}

impl GameVisitor for CountUnit<'_> {
    type Output = Result<Count, StatsRequestError>;

    fn visit<G: Game>(self) -> Self::Output {
        let table = self.tables.for_game::<G>(self.lease.game);
        let count = self.count::<G, Plain>(table.as_deref())?;
        if let Some(table) = table {
            self.tables.sample_fill(&table);
        }
        Ok(count)
    }
}

impl StatsVisitor for CountUnit<'_> {
    type Output = Result<Count, StatsRequestError>;

    fn visit<G: GameStats>(self) -> Self::Output {
        self.count::<G, ByKind>(None)
    }
}

impl CountUnit<'_> {
    /// The unit's count under measure `M`, its table lookups added to the
    /// worker's figures.
    fn count<G: Game, M: Measure<G>>(&self, table: Option<&M::Table>) -> Result<Count, StatsRequestError>
    where
        M::Count: Into<Count>,
    {
        // Packed by the coordinator: no text to parse, but still checked.
        let pos = G::unpack(&self.lease.position)?;
        if self.lease.depth > G::MAX_DEPTH {
            return Err(StatsRequestError::Depth {
                game: G::NAME,
                depth: self.lease.depth,
                max: G::MAX_DEPTH,
            });
        }
        let mut counter = M::counter(table);
        let count = M::count(&mut counter, &pos, self.lease.depth);
        let probes = M::probes(&counter);
        metrics::counter!("perft_worker_table_probes_total").increment(probes.probes);
        metrics::counter!("perft_worker_table_hits_total").increment(probes.hits);
        let totals = &self.tables.totals;
        totals.table_probes.fetch_add(probes.probes, Ordering::Relaxed);
        totals.table_hits.fetch_add(probes.hits, Ordering::Relaxed);
        Ok(count.into())
    }
}

/// Counts one leased unit and records its metrics.
fn count_lease(
    lease: UnitLease,
    tables: &Tables,
    #[cfg(feature = "fault-injection")] faults: Option<&FaultInjector>,
) -> Outcome {
    let started = Instant::now();
    let cpu = cpu_time::ThreadTime::now();
    let game = lease.game;
    // Reversi's conventions share one table: their entries are told apart
    // by their depth tags.
    let unit = CountUnit {
        lease: &lease,
        tables,
    };
    let counted = if lease.stats {
        game.dispatch_stats_in(lease.convention, unit)
    } else {
        game.dispatch_in(lease.convention, unit)
    };
    let counted = counted.map_err(UnitRefused::from).and_then(|count| Ok(count?));
    let count = match counted {
        Ok(count) => count,
        Err(reason) => return Outcome::Refused { lease, reason },
    };
    #[cfg(feature = "fault-injection")]
    let count = faults.map_or(count, |faults| faults.apply(&lease, count));
    let leaves = count.leaves;
    let seconds = started.elapsed().as_secs_f64();
    let cpu_seconds = cpu.elapsed().as_secs_f64();
    metrics::counter!("perft_worker_units_total").increment(1);
    tables.totals.units_done.fetch_add(1, Ordering::Relaxed);
    let _ = tables
        .totals
        .leaves_done
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
            Some(n.saturating_add(u64::try_from(leaves.leaves).unwrap_or(u64::MAX)))
        });
    metrics::counter!("perft_worker_leaves_total")
        .increment(u64::try_from(leaves.leaves).unwrap_or(u64::MAX));
    if seconds > 0.0 {
        metrics::gauge!("perft_worker_leaves_per_second").set(leaves.leaves as f64 / seconds);
    }
    Outcome::Counted {
        lease,
        count,
        cpu_seconds,
    }
}

/// Counts finished and not yet collected by the worker's loop, in the
/// order they finished.
type Finished = Arc<Mutex<Vec<Outcome>>>;

/// Counting threads fed by a channel of leases.
#[derive(Debug)]
pub struct Pool {
    sender: crossbeam_channel::Sender<UnitLease>,
    /// A receiver of the same channel: units not started yet can be taken
    /// back out of the queue (to hand them back on shutdown).
    queue: crossbeam_channel::Receiver<UnitLease>,
    /// Units queued or being counted.
    in_flight: Arc<AtomicUsize>,
    finished: Finished,
    threads: Vec<std::thread::JoinHandle<()>>,
    totals: Arc<Totals>,
    table_bytes: u64,
}

impl Pool {
    /// What the pool has done so far.
    pub fn totals(&self) -> &Totals {
        &self.totals
    }

    /// The table's size (0 without one).
    pub fn table_bytes(&self) -> u64 {
        self.table_bytes
    }

    /// Starts `threads` counting threads sharing `table` (none when
    /// `None`), laid out for the first game to arrive. Their outcomes wait
    /// for [`Pool::take_finished`]: the worker's loop collects them every
    /// few milliseconds rather than being woken by each (units of a
    /// fraction of a millisecond made those wake-ups about a tenth of a
    /// worker's CPU on two cores; `BENCHMARKS.md`).
    pub fn start(threads: usize, table: Option<PreparedTable>) -> Pool {
        let (sender, queue) = crossbeam_channel::unbounded::<UnitLease>();
        let in_flight = Arc::new(AtomicUsize::new(0));
        let finished = Finished::default();
        let totals = Arc::new(Totals::default());
        let table_bytes = table.as_ref().map(PreparedTable::bytes);
        let tables = Arc::new(Tables {
            bytes: table_bytes,
            prepared: Mutex::new(table),
            totals: Arc::clone(&totals),
            ..Tables::default()
        });
        #[cfg(feature = "fault-injection")]
        let faults = Arc::new(FaultInjector::from_env());
        let handles = (0..threads.max(1))
            .map(|i| {
                let (queue, finished, in_flight, tables) = (
                    queue.clone(),
                    Arc::clone(&finished),
                    Arc::clone(&in_flight),
                    Arc::clone(&tables),
                );
                #[cfg(feature = "fault-injection")]
                let faults = Arc::clone(&faults);
                std::thread::Builder::new()
                    .name(format!("perft-count-{i}"))
                    .spawn(move || {
                        for lease in queue {
                            #[cfg(feature = "fault-injection")]
                            let outcome = count_lease(lease, &tables, faults.as_ref().as_ref());
                            #[cfg(not(feature = "fault-injection"))]
                            let outcome = count_lease(lease, &tables);
                            // Collectable before the unit stops being in
                            // flight, so `is_busy` never misses a count.
                            finished.lock().unwrap_or_else(|p| p.into_inner()).push(outcome);
                            in_flight.fetch_sub(1, Ordering::AcqRel);
                        }
                    })
                    .expect("the OS starts a counting thread")
            })
            .collect();
        Pool {
            sender,
            queue,
            in_flight,
            finished,
            threads: handles,
            totals,
            table_bytes: table_bytes.unwrap_or(0),
        }
    }

    /// Queues a unit.
    pub fn push(&self, lease: UnitLease) {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        // The pool holds a receiver, so the channel is never disconnected.
        let _ = self.sender.send(lease);
    }

    /// Units queued or being counted.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// The outcomes finished since the last call, in the order they
    /// finished.
    pub fn take_finished(&self) -> Vec<Outcome> {
        std::mem::take(&mut *self.finished())
    }

    /// Whether a unit is queued or being counted, or an outcome waits to
    /// be taken.
    pub fn is_busy(&self) -> bool {
        // In flight first: a thread makes its outcome collectable before
        // the unit leaves the count, so none slips between the two reads.
        self.in_flight() > 0 || !self.finished().is_empty()
    }

    /// The list of finished outcomes, locked (a poisoned lock still holds
    /// whole outcomes: a thread pushes one at a time).
    fn finished(&self) -> std::sync::MutexGuard<'_, Vec<Outcome>> {
        self.finished.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes back every unit not started yet.
    pub fn take_queued(&self) -> Vec<UnitLease> {
        let taken: Vec<UnitLease> = self.queue.try_iter().collect();
        self.in_flight.fetch_sub(taken.len(), Ordering::AcqRel);
        taken
    }

    /// Stops the threads after the units they are counting; returns the
    /// outcomes not taken yet.
    pub fn join(self) -> Vec<Outcome> {
        let Pool {
            sender,
            queue,
            threads,
            finished,
            ..
        } = self;
        drop(sender);
        drop(queue);
        for thread in threads {
            let _ = thread.join();
        }
        std::mem::take(&mut *finished.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perft_core::{Checkers, Counter, Reversi};

    /// Every outcome can be taken, each once, and none is left once the
    /// pool is no longer busy.
    #[test]
    fn every_outcome_is_taken_once_and_none_after_the_pool_is_idle() {
        let pool = Pool::start(2, None);
        let mut position = Vec::new();
        Checkers::start().pack(&mut position);
        let units = 200u64;
        for unit in 0..units {
            pool.push(UnitLease {
                job_id: JobId::parse("j").unwrap(),
                game: GameKind::Checkers,
                convention: None,
                depth: 1 + (unit % 4) as u32,
                stats: false,
                unit_id: UnitId(unit),
                epoch: Epoch(0),
                position: position.clone(),
                lease_tag: Vec::new(),
            });
        }
        let mut seen = std::collections::BTreeSet::new();
        while pool.is_busy() {
            for outcome in pool.take_finished() {
                let Outcome::Counted { lease, count, .. } = outcome else {
                    panic!("a unit was refused");
                };
                assert_eq!(count.leaves, perft_core::perft(&Checkers::start(), lease.depth));
                assert!(seen.insert(lease.unit_id), "{} taken twice", lease.unit_id);
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(seen.len(), units as usize, "all taken once the pool is idle");
        assert!(pool.join().is_empty(), "nothing after the last unit");
    }

    /// A game switch waits for the threads still on the old table, then
    /// empties and reuses that same allocation: never two tables.
    #[test]
    fn a_game_switch_reuses_the_one_table() {
        let tables = Tables {
            bytes: Some(1 << 20),
            ..Tables::default()
        };
        let reversi = tables.for_game::<Reversi>(GameKind::Reversi).unwrap();
        Counter::new(Some(&reversi)).perft(&Reversi::start(), 7);
        assert!(reversi.fill(1000) > 0.0);
        let (first, bytes) = (Arc::as_ptr(&reversi), reversi.bytes());
        // A counting thread still holds the old table for a moment.
        let holder = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            drop(reversi);
        });
        let checkers = tables.for_game::<Checkers>(GameKind::Checkers).unwrap();
        holder.join().unwrap();
        assert_eq!(Arc::as_ptr(&checkers), first);
        assert_eq!(checkers.bytes(), bytes);
        assert_eq!(checkers.fill(1000), 0.0);
        assert_eq!(
            Counter::new(Some(&checkers)).perft(&Checkers::start(), 8),
            perft_core::perft(&Checkers::start(), 8)
        );
    }
}
