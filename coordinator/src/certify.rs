//! A done job's certificate (docs/certificate.md), made from what the
//! journal holds of it: the plan's units in plan order, each with its
//! decided count and the participants whose counts decided it. Served by
//! `GetCertificate` and the dashboard, and made offline from a stopped
//! coordinator's data dir.

use perft_certificate::{BuildError, Certificate, CountedUnit, Header, Provenance};

use crate::journal::{FinishedError, FinishedJob, Journal, JournalError};
use perft_model::JobId;

/// Why a job has no certificate.
#[derive(Debug, thiserror::Error)]
pub enum CertifyError {
    #[error(transparent)]
    Finished(#[from] FinishedError),
    #[error("job {id}: its root '{}' is no {game} position: {reason}", perft_core::echoed(.position))]
    Root {
        id: JobId,
        game: perft_core::GameKind,
        position: String,
        reason: perft_core::PositionRefused,
    },
    #[error(
        "job {id} counts a list of units, not a root: it has no certificate (read its counts with GetUnitCounts)"
    )]
    UnitList { id: JobId },
    #[error("job {id}: {source}")]
    Build {
        id: JobId,
        #[source]
        source: BuildError,
    },
}

impl From<JournalError> for CertifyError {
    fn from(e: JournalError) -> CertifyError {
        CertifyError::Finished(FinishedError::Journal(e))
    }
}

/// The certificate of a done job read back from the journal, written by
/// `program` (`perft 0.1.0`). Its provenance names the job and the time
/// the journal stamped on it when it was done, to the second (rounded
/// down), or none recorded if the row has none.
pub fn certificate_of(job: FinishedJob, program: &str) -> Result<Certificate, CertifyError> {
    let FinishedJob {
        id,
        spec,
        finished_ms,
        plan,
        counts,
    } = job;
    let finished = finished_ms.map_or(Provenance::NOT_RECORDED, |ms| ms / 1000);
    let provenance = Provenance::of_job(id.as_str(), finished, program);
    if plan.is_unit_list() {
        return Err(CertifyError::UnitList { id });
    }
    let root = spec
        .game
        .fns()
        .pack_text(&spec.position)
        .map_err(|reason| CertifyError::Root {
            id: id.clone(),
            game: spec.game,
            position: spec.position.clone(),
            reason,
        })?;
    let header = Header {
        game: spec.game,
        convention: spec.convention,
        root,
        depth: spec.depth,
        // A root without moves was planned with no split; any split plans
        // it to no unit, and a certificate's split depth is at least 1.
        split_depth: plan.split_depth.max(1),
        first_moves: plan.first_moves,
        settled: plan.settled.iter().map(|c| c.leaves).collect(),
        // A statistics job's certificate (version 4) carries every count's
        // kinds; a plain job's (version 3) none.
        kinds: if spec.stats {
            spec.game.stats_kinds().iter().map(|&k| k.to_owned()).collect()
        } else {
            Vec::new()
        },
        settled_kinds: if spec.stats {
            plan.settled.iter().map(|c| c.kinds().to_vec()).collect()
        } else {
            Vec::new()
        },
    };
    let units = counts.into_iter().enumerate().map(|(i, count)| CountedUnit {
        position: plan.units.position(i).to_vec(),
        weights: plan.units.weights(i).to_vec(),
        count: count.count,
        deciders: count.deciders,
    });
    Certificate::build(header, provenance, units).map_err(|source| CertifyError::Build { id, source })
}

/// The certificate file of done job `job_id` in the journal `journal`,
/// written by `program`. Blocking: reads every unit and compresses them.
pub fn certificate_file(journal: &Journal, job_id: &JobId, program: &str) -> Result<Vec<u8>, CertifyError> {
    let job = journal.read_finished(job_id)?;
    Ok(certificate_of(job, program)?.encode())
}

/// Certificates made at once by a running coordinator: each reads a whole
/// job and compresses it, so more callers wait their turn.
pub(crate) const AT_ONCE: usize = 1;

/// A done job's certificate file, made off the async threads, one at a
/// time (see [`AT_ONCE`]).
pub(crate) async fn served(coordinator: &crate::Coordinator, job_id: JobId) -> Result<Vec<u8>, CertifyError> {
    let stopped = |e: String| {
        CertifyError::from(JournalError::Write(format!(
            "making the certificate stopped: {e}"
        )))
    };
    let _turn = coordinator
        .certificates
        .acquire()
        .await
        .map_err(|e| stopped(e.to_string()))?;
    let journal = std::sync::Arc::clone(&coordinator.journal);
    let program = coordinator.config.program.clone();
    tokio::task::spawn_blocking(move || certificate_file(&journal, &job_id, &program))
        .await
        .map_err(|e| stopped(e.to_string()))?
}

impl CertifyError {
    /// The gRPC answer: unknown job NOT_FOUND, a job not done
    /// FAILED_PRECONDITION, a damaged journal DATA_LOSS.
    pub(crate) fn status(&self) -> tonic::Status {
        let message = self.to_string();
        match self {
            CertifyError::Finished(FinishedError::NotFound(_)) => tonic::Status::not_found(message),
            CertifyError::Finished(FinishedError::NotDone { .. }) | CertifyError::UnitList { .. } => {
                tonic::Status::failed_precondition(message)
            }
            CertifyError::Finished(FinishedError::Journal(_)) => tonic::Status::unavailable(message),
            CertifyError::Finished(FinishedError::Damaged { .. })
            | CertifyError::Root { .. }
            | CertifyError::Build { .. } => tonic::Status::data_loss(message),
        }
    }
}
