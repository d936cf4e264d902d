//! A job as a client asks for it and as the coordinator reports it, read
//! off the wire once and checked: a reply of another build's shape is a
//! [`ReplyError`], never a wrong figure.

use perft_core::{Convention, GameKind};
use perft_model::{Count, DivideLine, JobId, JobState, UnitId};
use perft_proto as pb;

use crate::error::ReplyError;

/// What to count: the root (or packed units) of a game to a depth.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submission {
    pub game: GameKind,
    /// Reversi's convention (`None`: the game's default).
    pub convention: Option<Convention>,
    /// The root in the game's text; `None` for the start position.
    pub position: Option<String>,
    pub depth: u32,
    /// Plies expanded into units; `None` lets the coordinator choose.
    pub split_depth: Option<u32>,
    /// Count every unit on two different participants' machines.
    pub verify: bool,
    /// Count the leaves by kind too.
    pub stats: bool,
    /// Instead of a root: these packed positions, one unit each.
    pub units: Vec<Vec<u8>>,
}

impl Submission {
    /// `depth` plies of `game` from its start, split by the coordinator.
    pub fn new(game: GameKind, depth: u32) -> Submission {
        Submission {
            game,
            convention: None,
            position: None,
            depth,
            split_depth: None,
            verify: false,
            stats: false,
            units: Vec::new(),
        }
    }

    pub(crate) fn request(&self) -> pb::SubmitJobRequest {
        pb::SubmitJobRequest {
            game: pb::Game::from_kind(self.game).into(),
            position: self.position.clone().unwrap_or_default(),
            depth: self.depth,
            split_depth: self.split_depth.unwrap_or(0),
            verify: self.verify,
            convention: pb::Convention::from_core(self.convention).into(),
            units: self.units.clone(),
            stats: self.stats,
        }
    }
}

/// A job as the coordinator reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub id: JobId,
    pub game: GameKind,
    /// The convention counted in (`None` for games without a choice).
    pub convention: Option<Convention>,
    /// The root's canonical text (empty for a job of units).
    pub position: String,
    pub depth: u32,
    pub split_depth: u32,
    pub verify: bool,
    pub stats: bool,
    pub state: JobState,
    /// Why it failed or is being counted again, when it did or is.
    pub error: Option<String>,
    pub units_total: u64,
    pub units_done: u64,
    /// Units handed out again after a lease lapsed or was handed back.
    pub units_released: u64,
    /// Leaves counted so far (units done, weighted, and settled leaves).
    pub leaves_done: u128,
    /// Seconds since it started running (to its end once finished).
    pub seconds: f64,
    /// Units whose counts disagreed.
    pub disagreements: u64,
    /// The part of the expected work done, 0 to 1.
    pub work_done: f64,
    /// The participant that submitted it.
    pub owner: String,
}

impl Job {
    /// Leaves a second over its running time (0 before it ran).
    pub fn leaves_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.leaves_done as f64 / self.seconds
        } else {
            0.0
        }
    }

    /// How many kinds each of its counts carries (0 without statistics).
    pub fn kinds(&self) -> usize {
        perft_model::kinds_of(self.game, self.stats)
    }
}

impl TryFrom<pb::Job> for Job {
    type Error = ReplyError;

    fn try_from(job: pb::Job) -> Result<Job, ReplyError> {
        Ok(Job {
            id: JobId::parse(&job.job_id)?,
            game: pb::game_kind(job.game)?,
            convention: pb::convention(job.convention)?,
            state: pb::JobState::try_from(job.state)
                .ok()
                .and_then(pb::JobState::to_model)
                .ok_or(perft_proto::UnknownValue::JobState { raw: job.state })?,
            error: (!job.error.is_empty()).then_some(job.error),
            leaves_done: pb::count(job.leaves_done),
            position: job.position,
            depth: job.depth,
            split_depth: job.split_depth,
            verify: job.verify,
            stats: job.stats,
            units_total: job.units_total,
            units_done: job.units_done,
            units_released: job.units_released,
            seconds: job.seconds,
            disagreements: job.disagreements,
            work_done: job.work_done,
            owner: job.owner,
        })
    }
}

/// A job's divide table: a line a first move, and the total.
#[derive(Clone, Debug, PartialEq)]
pub struct Divide {
    pub job: Job,
    /// In the coordinator's order (the plan's).
    pub lines: Vec<DivideLine>,
    pub total: Count,
}

impl Divide {
    /// First moves whose units are all decided, and first moves in all.
    pub fn first_moves_finished(&self) -> (usize, usize) {
        let done = self
            .lines
            .iter()
            .filter(|line| line.units_done >= line.units_total)
            .count();
        (done, self.lines.len())
    }
}

impl TryFrom<pb::DivideTable> for Divide {
    type Error = ReplyError;

    fn try_from(table: pb::DivideTable) -> Result<Divide, ReplyError> {
        let job = Job::try_from(table.job.unwrap_or_default())?;
        let count = |leaves: Option<pb::Leaves>| count_of(&leaves.unwrap_or_default(), job.game, job.kinds());
        let lines = table
            .entries
            .into_iter()
            .map(|e| {
                Ok(DivideLine {
                    count: count(e.leaves)?,
                    first_move: e.r#move,
                    units_total: e.units_total,
                    units_done: e.units_done,
                })
            })
            .collect::<Result<Vec<_>, ReplyError>>()?;
        let total = count(table.total)?;
        Ok(Divide { job, lines, total })
    }
}

/// A count on the wire as a count of a job of `game` that counts `kinds`
/// kinds (0: a plain job), checked as the coordinator checks a worker's.
pub(crate) fn count_of(leaves: &pb::Leaves, game: GameKind, kinds: usize) -> Result<Count, ReplyError> {
    leaves
        .to_count(game.fns(), kinds)
        .map_err(|source| ReplyError::Count { game, source })
}

/// A unit of a verified job whose counts disagreed.
#[derive(Clone, Debug, PartialEq)]
pub struct Disagreement {
    pub unit: UnitId,
    /// The unit's position as text.
    pub position: String,
    /// Every count received, in order.
    pub votes: Vec<Vote>,
    /// The majority count taken; `None` while none is reached.
    pub decided: Option<Count>,
}

/// One count sent for a unit, and who sent it.
#[derive(Clone, Debug, PartialEq)]
pub struct Vote {
    /// The participant and machine that sent it, as the coordinator names them.
    pub worker: String,
    pub count: Count,
}

impl Disagreement {
    /// Reads a disagreement of `job`, its counts checked against the job's
    /// kinds.
    pub(crate) fn read(d: pb::Disagreement, job: &Job) -> Result<Disagreement, ReplyError> {
        let count = |leaves: Option<&pb::Leaves>| {
            count_of(&leaves.cloned().unwrap_or_default(), job.game, job.kinds())
        };
        Ok(Disagreement {
            unit: UnitId(d.unit_id),
            votes: d
                .votes
                .iter()
                .map(|vote| {
                    Ok(Vote {
                        worker: vote.worker.clone(),
                        count: count(vote.leaves.as_ref())?,
                    })
                })
                .collect::<Result<_, ReplyError>>()?,
            decided: d.decided.as_ref().map(|l| count(Some(l))).transpose()?,
            position: d.position,
        })
    }
}

/// A copy of the coordinator's journal, made on its machine.
#[derive(Clone, Debug, PartialEq)]
pub struct Backup {
    /// The commit sequence the copy holds (its commit mark says so too).
    pub sequence: u64,
    /// The copy's database, in bytes.
    pub bytes: u64,
    /// The directory written, as the coordinator resolved it.
    pub dir: String,
    /// How long the copy took.
    pub seconds: f64,
}

impl From<pb::BackupJournalResponse> for Backup {
    fn from(reply: pb::BackupJournalResponse) -> Backup {
        Backup {
            sequence: reply.sequence,
            bytes: reply.bytes,
            dir: reply.dir,
            seconds: reply.seconds,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_moves_count_when_all_their_units_are_done() {
        let job = Job::try_from(pb::Job {
            job_id: "j".to_owned(),
            game: pb::Game::Checkers.into(),
            state: pb::JobState::Running.into(),
            ..pb::Job::default()
        })
        .unwrap();
        let line = |units_done, units_total| DivideLine {
            first_move: "9-13".to_owned(),
            count: Count::ZERO,
            units_done,
            units_total,
        };
        let mut divide = Divide {
            job,
            lines: [(3, 3), (0, 5), (2, 5), (0, 0), (7, 7)]
                .into_iter()
                .map(|(done, total)| line(done, total))
                .collect(),
            total: Count::ZERO,
        };
        assert_eq!(divide.first_moves_finished(), (3, 5));
        divide.lines.clear();
        assert_eq!(divide.first_moves_finished(), (0, 0));
    }

    #[test]
    fn a_reply_of_another_shape_is_refused() {
        let unknown_state = pb::Job {
            job_id: "j".to_owned(),
            game: pb::Game::Checkers.into(),
            state: 99,
            ..pb::Job::default()
        };
        assert!(
            Job::try_from(unknown_state)
                .unwrap_err()
                .to_string()
                .contains("unknown job state 99")
        );
        let bad_id = pb::Job {
            job_id: "a\nb".to_owned(),
            game: pb::Game::Checkers.into(),
            state: pb::JobState::Done.into(),
            ..pb::Job::default()
        };
        assert!(
            Job::try_from(bad_id)
                .unwrap_err()
                .to_string()
                .contains("malformed job id")
        );
    }

    #[test]
    fn a_disagreement_reads_with_its_counts_checked_against_the_job() {
        let job = Job::try_from(pb::Job {
            job_id: "j".to_owned(),
            game: pb::Game::Checkers.into(),
            state: pb::JobState::Running.into(),
            verify: true,
            ..pb::Job::default()
        })
        .unwrap();
        let leaves = |n: u128| pb::Leaves::from(perft_core::Leaves { leaves: n, higher: 0 });
        let wire = pb::Disagreement {
            unit_id: 7,
            position: "W:W21:B1".to_owned(),
            votes: vec![
                pb::Vote {
                    worker: "alice/m1".to_owned(),
                    leaves: Some(leaves(10)),
                },
                pb::Vote {
                    worker: "bob/m2".to_owned(),
                    leaves: Some(leaves(11)),
                },
            ],
            decided: None,
        };
        let read = Disagreement::read(wire.clone(), &job).unwrap();
        assert_eq!(read.unit, UnitId(7));
        assert_eq!(read.votes[1].worker, "bob/m2");
        assert_eq!(read.votes[1].count.leaves.leaves, 11);
        assert_eq!(read.decided, None);
        // A plain job's count with kinds is none of its counts.
        let mut with_kinds = wire;
        with_kinds.decided = Some(pb::Leaves::with_kinds(
            perft_core::Leaves {
                leaves: 10,
                higher: 0,
            },
            &[1, 2],
        ));
        assert!(matches!(
            Disagreement::read(with_kinds, &job),
            Err(ReplyError::Count { .. })
        ));
    }
}
