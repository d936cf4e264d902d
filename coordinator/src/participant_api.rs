//! `perft.v2.ParticipantService`: adding, listing and revoking
//! participants; and the coordinator's side of revoking and recounting.
//! Apart from the registry (`participants`), which knows nothing of jobs.

use std::collections::HashMap;
use std::sync::Arc;

use perft_proto as pb;
use tonic::{Request, Response, Status};

use crate::Coordinator;
use crate::admission::budget::BudgetError;
use crate::admission::{OpenUse, Principal, Resource};
use crate::jobs::Op;
use crate::journal::JournalError;
use crate::participants::{Caller, StoredParticipant};
use perft_model::Action;
use perft_model::ParticipantId;

pub(crate) struct ParticipantApi(pub Arc<Coordinator>);

impl Coordinator {
    /// A participant as `perft participant list` and the dashboard show it:
    /// its record, credit and live machines.
    pub(crate) async fn participant_message(&self, p: &StoredParticipant) -> Result<pb::Participant, Status> {
        let mut messages = self.participant_messages(vec![p.clone()]).await?;
        messages
            .pop()
            .ok_or_else(|| Status::internal("no message for the participant"))
    }

    /// [`Coordinator::participant_message`] of each of `participants`, in
    /// their order: one read of the jobs, one pass over the workers and
    /// the dashboard's sessions for all of them.
    pub(crate) async fn participant_messages(
        &self,
        participants: Vec<StoredParticipant>,
    ) -> Result<Vec<pb::Participant>, Status> {
        let ids: Vec<ParticipantId> = participants.iter().map(|p| p.id.clone()).collect();
        let standings = self
            .peek(move |jobs| {
                let mut open_use = jobs.open_use_by_owner();
                ids.into_iter()
                    .map(|id| {
                        (
                            jobs.credit(&id),
                            jobs.is_quarantined(&id),
                            jobs.is_suspended(&id),
                            open_use.remove(&id).unwrap_or_default(),
                        )
                    })
                    .collect::<Vec<_>>()
            })
            .await?;
        let mut machines_of: HashMap<ParticipantId, (u32, u32)> = HashMap::new();
        for w in self.workers.iter() {
            let (m, t) = machines_of.entry(w.participant.clone()).or_default();
            *m += 1;
            *t = t.saturating_add(w.threads);
        }
        let dashboard_sessions = self.dashboard_sessions.by_owner();
        let now = crate::clock::unix_ms();
        let fade = self.config.policy().standing.strike_fade_ms;
        Ok(participants
            .into_iter()
            .zip(standings)
            .map(|(p, (credit, quarantined, suspended, open))| {
                let (machines, threads) = machines_of.get(&p.id).copied().unwrap_or_default();
                let dashboard = dashboard_sessions.get(&p.id).copied().unwrap_or(0);
                pb::Participant {
                    name: p.id.to_string(),
                    role: pb::Role::from_model(p.role).into(),
                    revoked: p.revoked,
                    quarantined,
                    created_ms: p.created_ms,
                    units: credit.units,
                    leaves: Some(credit.leaves.into()),
                    cpu_seconds: credit.cpu_ms as f64 / 1000.0,
                    lost_votes: credit.lost_votes,
                    machines,
                    threads,
                    lapses: credit.lapses,
                    strikes: credit.strikes_at(now, fade),
                    suspended,
                    lost_votes_forgiven: credit.lost_votes_forgiven,
                    budget: self.budget_lines(&p.id, open, dashboard),
                }
            })
            .collect())
    }

    /// `who`'s budget beside what it holds, a line a resource.
    fn budget_lines(
        &self,
        who: &ParticipantId,
        open: OpenUse,
        dashboard_sessions: u64,
    ) -> Vec<pb::BudgetLine> {
        let budget = self.admission.budget(who);
        let overrides = self.admission.overrides(who);
        Resource::ALL
            .into_iter()
            .map(|resource| {
                let used = match resource {
                    Resource::OpenJobs => open.jobs,
                    Resource::OpenUnits => open.units,
                    Resource::Sessions => self.admission.sessions_of(who),
                    Resource::Streams => self.admission.streams_of(&Principal::Participant(who.clone())),
                    Resource::DashboardSessions => dashboard_sessions,
                };
                let limit = budget.of(resource);
                pb::BudgetLine {
                    resource: resource.name().to_owned(),
                    limit: if limit == u64::MAX { 0 } else { limit },
                    used,
                    overridden: overrides.get(resource).is_some(),
                    unlimited: limit == u64::MAX,
                }
            })
            .collect()
    }

    /// Sets and resets `name`'s budget figures, journaled at once.
    pub(crate) async fn set_budget(
        &self,
        name: &str,
        figures: &[(Resource, u64)],
        reset: &[Resource],
    ) -> Result<StoredParticipant, Status> {
        self.writable()?;
        if figures.is_empty() && reset.is_empty() {
            return Err(Status::invalid_argument(
                "nothing to set: give a figure (e.g. --open-units 500000) or a resource to reset",
            ));
        }
        let stored = self.participants.get(name)?;
        let mut overrides = self.admission.overrides(&stored.id);
        for &resource in reset {
            overrides.set(resource, None).map_err(Status::from)?;
        }
        for &(resource, figure) in figures {
            overrides.set(resource, Some(figure)).map_err(Status::from)?;
        }
        let op = Op::Budget {
            participant: stored.id.clone(),
            overrides: overrides.clone(),
        };
        let ((), commit) = self.change(move |jobs| jobs.record(op)).await?;
        self.durable(commit).await?;
        self.admission.set_overrides(stored.id.clone(), overrides.clone());
        tracing::info!(participant = %stored.id, budget = %overrides.encode(), "participant budget set by an admin");
        self.notify();
        Ok(stored)
    }

    /// Lifts `name`'s quarantine and/or suspension (an admin's call after a
    /// false alarm), journaled at once.
    pub(crate) async fn lift(
        &self,
        name: &str,
        quarantine: bool,
        lapses: bool,
    ) -> Result<StoredParticipant, Status> {
        self.writable()?;
        if !quarantine && !lapses {
            return Err(Status::invalid_argument(
                "nothing to lift: ask for the quarantine, the lapses, or both",
            ));
        }
        let stored = self.participants.get(name)?;
        if quarantine {
            self.recount_owed().await?;
        }
        let who = stored.id.clone();
        let (credit, commit) = self
            .change(move |jobs| jobs.lift(&who, quarantine, lapses))
            .await?;
        self.durable(commit).await?;
        tracing::warn!(participant = %stored.id, quarantine, lapses, lost_votes_forgiven = credit.lost_votes_forgiven, "participant lifted by an admin");
        self.notify();
        Ok(stored)
    }

    /// Counts again every unit whose verdict `participant`'s count was part
    /// of (with `alone`, only those it decided by itself): their counts go
    /// from the journal and the jobs (a done one runs again). Returns how
    /// many units were reopened.
    pub(crate) async fn recount(&self, participant: &ParticipantId, alone: bool) -> Result<u64, Status> {
        let who = participant.clone();
        let outcome = self
            .scheduler
            .exclusive(
                move |jobs, journal| -> Result<(u64, Vec<crate::journal::Commit>), JournalError> {
                    let mut reopened = 0;
                    let mut commits = Vec::new();
                    for (job_id, unit_ids) in journal.decided_by(&who, alone)? {
                        if !jobs.contains(&job_id) {
                            continue;
                        }
                        reopened += unit_ids.len() as u64;
                        // No lease of these units from before counts, and
                        // the participant whose counts they were never
                        // leases them again.
                        let floor = jobs.fresh_floor();
                        jobs.record(Op::Reopen {
                            job_id: job_id.clone(),
                            unit_ids,
                            floor,
                            barred: Some(who.clone()),
                        });
                        commits.push(crate::scheduler::write_now(jobs, journal));
                        // Read after the write above: the journal answers in order.
                        let restored = journal.load_job(&job_id)?;
                        if let Err(e) = jobs.reopen(&job_id, restored) {
                            tracing::error!(job = %job_id, error = %e, "cannot reopen a job to recount it");
                        }
                    }
                    Ok((reopened, commits))
                },
            )
            .await?;
        let (reopened, commits) = outcome.map_err(|e| Status::unavailable(e.to_string()))?;
        for commit in commits {
            self.durable(commit).await?;
        }
        // The jobs' new states, journaled after the task: wait for them too.
        self.read(|_| ()).await?;
        if reopened > 0 {
            tracing::warn!(%participant, units = reopened, alone, "units counted again");
            self.notify();
        }
        Ok(reopened)
    }

    /// Revokes `name`: its credential stops working at once, its sessions
    /// end, its leases go back to the queue and its undecided votes are
    /// dropped; with `recount`, every unit it helped decide is counted again.
    /// The last active admin is refused (FAILED_PRECONDITION).
    pub(crate) async fn revoke(&self, name: &str, recount: bool) -> Result<StoredParticipant, Status> {
        self.writable()?;
        // Checked and revoked under one lock: two admins revoking each
        // other at once cannot both pass the last-admin check.
        let revoking = self.participants.revoking().await;
        let mut stored = self.participants.get(name)?;
        self.participants.revocable(&stored)?;
        stored.revoked = true;
        let record = stored.clone();
        let who = stored.id.clone();
        let (dropped, commit) = self
            .change(move |jobs| {
                jobs.record(Op::Participant(record));
                jobs.drop_votes_of(&who)
            })
            .await?;
        self.durable(commit).await?;
        self.participants.insert(stored.clone());
        drop(revoking);
        let mut sessions = Vec::new();
        self.workers.retain(|id, w| {
            let keep = w.participant != stored.id;
            if !keep {
                self.admission.session_ended(&w.participant);
                sessions.push(id.clone());
            }
            keep
        });
        let (expired, commit) = self.change(move |jobs| jobs.expire(&sessions)).await?;
        self.durable(commit).await?;
        tracing::warn!(participant = %stored.id, votes_dropped = dropped, leases_requeued = expired, "participant revoked");
        if recount {
            self.recount(&stored.id, false).await?;
        }
        self.notify();
        Ok(stored)
    }
}

#[tonic::async_trait]
impl pb::participant_service_server::ParticipantService for ParticipantApi {
    async fn add_participant(
        &self,
        request: Request<pb::AddParticipantRequest>,
    ) -> Result<Response<pb::AddParticipantResponse>, Status> {
        Caller::of(&request)?.may(Action::Manage)?;
        let req = request.into_inner();
        let role = pb::role(req.role).map_err(|e| Status::invalid_argument(e.to_string()))?;
        self.0.writable()?;
        let (stored, secret) = self.0.participants.mint(&req.name, role)?;
        let record = stored.clone();
        let ((), commit) = self
            .0
            .change(move |jobs| jobs.record(Op::Participant(record)))
            .await?;
        self.0.durable(commit).await?;
        self.0.participants.insert(stored.clone());
        tracing::info!(participant = %stored.id, role = role.name(), "participant added");
        Ok(Response::new(pb::AddParticipantResponse {
            participant: Some(self.0.participant_message(&stored).await?),
            secret: secret.expose().to_owned(),
        }))
    }

    async fn list_participants(
        &self,
        request: Request<pb::ListParticipantsRequest>,
    ) -> Result<Response<pb::ListParticipantsResponse>, Status> {
        Caller::of(&request)?.may(Action::Read)?;
        let participants = self.0.participant_messages(self.0.participants.list()).await?;
        Ok(Response::new(pb::ListParticipantsResponse { participants }))
    }

    async fn revoke_participant(
        &self,
        request: Request<pb::RevokeParticipantRequest>,
    ) -> Result<Response<pb::Participant>, Status> {
        Caller::of(&request)?.may(Action::Manage)?;
        let req = request.into_inner();
        let stored = self.0.revoke(&req.name, req.recount).await?;
        Ok(Response::new(self.0.participant_message(&stored).await?))
    }

    async fn set_budget(
        &self,
        request: Request<pb::SetBudgetRequest>,
    ) -> Result<Response<pb::Participant>, Status> {
        Caller::of(&request)?.may(Action::Manage)?;
        let req = request.into_inner();
        let figures = req
            .figures
            .iter()
            .map(|f| Resource::parse(&f.resource).map(|r| (r, f.figure)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Status::from(BudgetError::from(e)))?;
        let reset = req
            .reset
            .iter()
            .map(|r| Resource::parse(r))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Status::from(BudgetError::from(e)))?;
        let stored = self.0.set_budget(&req.name, &figures, &reset).await?;
        Ok(Response::new(self.0.participant_message(&stored).await?))
    }

    async fn lift_participant(
        &self,
        request: Request<pb::LiftParticipantRequest>,
    ) -> Result<Response<pb::Participant>, Status> {
        Caller::of(&request)?.may(Action::Manage)?;
        let req = request.into_inner();
        let stored = self.0.lift(&req.name, req.quarantine, req.lapses).await?;
        Ok(Response::new(self.0.participant_message(&stored).await?))
    }
}
