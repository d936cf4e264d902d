//! The event loop that owns the job table. Every change and read of the
//! jobs is a task run on one OS thread, in arrival order: no async thread
//! ever blocks on a lock, the state has one owner, and the changes of a
//! batch of tasks reach the journal as one write, in the order they were
//! made (the order the journal must replay them in).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;

use tokio::sync::oneshot;
use tonic::Status;

use crate::jobs::{Jobs, Op};
use crate::journal::{Commit, Journal};

/// Most tasks run before their changes go to the journal together.
const MAX_BATCH: usize = 256;

/// Hands its task's answer over once the batch's write is known.
type Respond = Box<dyn FnOnce(Commit) + Send>;
/// A task run with others of its batch.
type Batched = Box<dyn FnOnce(&mut Jobs) -> Respond + Send>;
/// A task run alone, with the journal at hand.
type Alone = Box<dyn FnOnce(&mut Jobs, &Journal) + Send>;

enum Task {
    /// Runs on the job table with others of its batch, and says how to
    /// answer once the batch's changes are handed to the journal.
    Batched(Batched),
    /// Runs alone, after the batch before it went to the journal, with the
    /// journal at hand: it may replace the whole table.
    Alone(Alone),
}

/// Handle to the event loop; dropping it stops the loop and waits for it.
#[derive(Debug)]
pub(crate) struct Scheduler {
    tasks: Option<mpsc::Sender<Task>>,
    thread: Option<JoinHandle<()>>,
}

fn stopped() -> Status {
    Status::unavailable("the coordinator's scheduler stopped: restart the coordinator")
}

impl Scheduler {
    /// Starts the loop with `jobs` as its state; it journals through
    /// `journal`.
    pub(crate) fn start(jobs: Jobs, journal: Arc<Journal>) -> std::io::Result<Scheduler> {
        let (tasks, inbox) = mpsc::channel::<Task>();
        let thread = std::thread::Builder::new()
            .name("scheduler".to_owned())
            .spawn(move || run(jobs, &journal, &inbox))?;
        Ok(Scheduler {
            tasks: Some(tasks),
            thread: Some(thread),
        })
    }

    fn submit(&self, task: Task) -> Result<(), Status> {
        let tasks = self.tasks.as_ref().ok_or_else(stopped)?;
        tasks.send(task).map_err(|_| stopped())
    }

    /// Applies `change` to the jobs; the commit resolves once what it
    /// changed is durable (at once for a change that changed nothing).
    pub(crate) async fn change<R, F>(&self, change: F) -> Result<(R, Commit), Status>
    where
        R: Send + 'static,
        F: FnOnce(&mut Jobs) -> R + Send + 'static,
    {
        let (answer, reply) = oneshot::channel();
        self.submit(Task::Batched(Box::new(move |jobs| {
            let result = change(jobs);
            Box::new(move |commit| {
                let _ = answer.send((result, commit));
            })
        })))?;
        reply.await.map_err(|_| stopped())
    }

    /// Journals `ops` from the loop, in order with every other change: a
    /// plan's chunk, one call (and one transaction) each, so the reports
    /// between chunks are not held back by a whole plan.
    pub(crate) async fn write(&self, ops: Vec<Op>) -> Result<Commit, Status> {
        let ((), commit) = self
            .change(move |jobs| {
                for op in ops {
                    jobs.record(op);
                }
            })
            .await?;
        Ok(commit)
    }

    /// Reads the jobs; the commit is a barrier that resolves once what was
    /// read is durable.
    pub(crate) async fn read<R, F>(&self, read: F) -> Result<(R, Commit), Status>
    where
        R: Send + 'static,
        F: FnOnce(&Jobs) -> R + Send + 'static,
    {
        self.change(move |jobs| read(jobs)).await
    }

    /// Runs `task` with the loop to itself and the journal at hand (for
    /// rebuilding the jobs from the journal): nothing else runs meanwhile.
    pub(crate) async fn exclusive<R, F>(&self, task: F) -> Result<R, Status>
    where
        R: Send + 'static,
        F: FnOnce(&mut Jobs, &Journal) -> R + Send + 'static,
    {
        let (answer, reply) = oneshot::channel();
        self.submit(Task::Alone(Box::new(move |jobs, journal| {
            let _ = answer.send(task(jobs, journal));
        })))?;
        reply.await.map_err(|_| stopped())
    }
}

/// From a task run alone ([`Scheduler::exclusive`]): hands the changes it
/// made so far to the journal now, so a read of the journal after this
/// sees them. The loop stays the journal's one writer.
pub(crate) fn write_now(jobs: &mut Jobs, journal: &Journal) -> Commit {
    journal.send(jobs.take_ops())
}

impl Drop for Scheduler {
    fn drop(&mut self) {
        drop(self.tasks.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The answers owed for the tasks run since the last write.
struct Batch {
    answers: Vec<(Respond, bool)>,
}

impl Batch {
    /// Runs `task`, noting whether it changed anything. A task that panics
    /// is a bug: it is dropped unanswered (its caller sees the call fail)
    /// and the loop goes on, as a poisoned lock was taken over before.
    fn run(&mut self, task: Batched, jobs: &mut Jobs) {
        let before = jobs.pending_ops();
        match catch_unwind(AssertUnwindSafe(|| task(jobs))) {
            Ok(respond) => self.answers.push((respond, jobs.pending_ops() > before)),
            Err(_) => tracing::error!("a scheduler task panicked; its call fails"),
        }
    }

    /// Sends the batch's changes to the journal as one write and answers
    /// each task with its commit (a barrier for a task that changed
    /// nothing).
    fn flush(&mut self, jobs: &mut Jobs, journal: &Journal) {
        let write = journal.send(jobs.take_ops());
        let barrier = journal.barrier();
        for (respond, wrote) in self.answers.drain(..) {
            respond(if wrote { write.clone() } else { barrier.clone() });
        }
    }
}

/// The loop: runs the tasks waiting, up to [`MAX_BATCH`] a write, until
/// every handle is gone.
fn run(mut jobs: Jobs, journal: &Journal, inbox: &mpsc::Receiver<Task>) {
    let mut batch = Batch {
        answers: Vec::with_capacity(MAX_BATCH),
    };
    while let Ok(first) = inbox.recv() {
        let mut next = Some(first);
        while let Some(task) = next.take() {
            match task {
                Task::Batched(task) => batch.run(task, &mut jobs),
                Task::Alone(task) => {
                    batch.flush(&mut jobs, journal);
                    if catch_unwind(AssertUnwindSafe(|| task(&mut jobs, journal))).is_err() {
                        tracing::error!("a scheduler task panicked; its call fails");
                    }
                }
            }
            if batch.answers.len() < MAX_BATCH {
                next = inbox.try_recv().ok();
            }
        }
        batch.flush(&mut jobs, journal);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use perft_core::{Checkers, Game, GameKind};

    use super::Scheduler;
    use crate::jobs::{JobSpec, Jobs, LeaseHolder, Reported};
    use crate::journal::{Journal, plan_ops};
    use crate::planning::{PlanRequest, plan};
    use perft_model::JobId;
    use perft_model::JobState;

    fn j() -> JobId {
        JobId::parse("j").unwrap()
    }

    /// A scheduler over a real journal file holding one checkers job of
    /// `units` units or so.
    async fn scheduler_with_job(dir: &std::path::Path) -> (Scheduler, Arc<Journal>, usize) {
        let opened = Journal::open(dir).unwrap();
        let (journal, _) = (opened.journal, opened.restored.jobs);
        let journal = Arc::new(journal);
        let planned = plan(GameKind::Checkers, &PlanRequest::split_at(7, 3)).unwrap();
        let units = planned.units.len();
        let owner = perft_model::ParticipantId::parse("test").unwrap();
        let spec = JobSpec::plain(GameKind::Checkers, &planned, 7, owner);
        for op in plan_ops(&j(), &spec, &planned, 0) {
            journal.send(vec![op]).wait().await.unwrap();
        }
        let scheduler = Scheduler::start(Jobs::default(), Arc::clone(&journal)).unwrap();
        let ((), commit) = scheduler
            .change(move |jobs| jobs.submit(j(), spec, planned))
            .await
            .unwrap();
        commit.wait().await.unwrap();
        (scheduler, journal, units)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_reports_are_all_journaled_and_finish_the_job() {
        let dir = tempfile::tempdir().unwrap();
        let (scheduler, journal, units) = scheduler_with_job(dir.path()).await;
        let scheduler = Arc::new(scheduler);
        let (leased, commit) = scheduler
            .change(|jobs| jobs.lease(&LeaseHolder::named("w").unwrap(), 1024, None))
            .await
            .unwrap();
        commit.wait().await.unwrap();
        let depth = leased[0].depth;
        let leased: Vec<_> = leased.into_iter().flat_map(|group| group.units).collect();
        assert_eq!(leased.len(), units);
        // One task a unit, from many async tasks at once: they are batched.
        let mut reports = tokio::task::JoinSet::new();
        for unit in leased {
            let scheduler = Arc::clone(&scheduler);
            reports.spawn(async move {
                let leaves = perft_model::Count::plain(perft_core::perft(
                    &Checkers::unpack(&unit.position).unwrap(),
                    depth,
                ));
                let (reported, commit) = scheduler
                    .change(move |jobs| {
                        jobs.report(
                            &j(),
                            unit.unit_id,
                            unit.epoch,
                            leaves,
                            0,
                            &LeaseHolder::named("w").unwrap(),
                        )
                    })
                    .await
                    .unwrap();
                commit.wait().await.unwrap();
                reported
            });
        }
        while let Some(reported) = reports.join_next().await {
            assert_eq!(reported.unwrap(), Reported::Accepted);
        }
        let view = scheduler.read(|jobs| jobs.divide(&j())).await.unwrap().0.unwrap();
        assert_eq!(view.job.state, JobState::Done);
        let published = GameKind::Checkers.fns().published(7).unwrap();
        assert_eq!(view.total.leaves, published.total);
        // What was acknowledged is what the journal holds.
        let restored = journal.restore().unwrap().jobs;
        assert_eq!(restored.len(), 1);
        assert_eq!(restored[0].state, JobState::Done);
    }

    #[tokio::test]
    async fn a_panicking_task_fails_its_call_only() {
        let dir = tempfile::tempdir().unwrap();
        let (scheduler, _journal, units) = scheduler_with_job(dir.path()).await;
        let failed = scheduler
            .change(|_: &mut Jobs| -> u32 { panic!("a bug in a task") })
            .await;
        assert!(failed.is_err());
        let (view, _) = scheduler.read(|jobs| jobs.view(&j())).await.unwrap();
        assert_eq!(view.unwrap().units_total, units as u64);
    }

    #[tokio::test]
    async fn a_task_alone_runs_after_the_changes_before_it_are_written() {
        let dir = tempfile::tempdir().unwrap();
        let (scheduler, _journal, _) = scheduler_with_job(dir.path()).await;
        let (view, commit) = scheduler.change(|jobs| jobs.cancel(&j())).await.unwrap();
        assert_eq!(view.unwrap().state, JobState::Cancelled);
        // The rebuild sees the cancel: it was written before the rebuild ran.
        let states = scheduler
            .exclusive(|jobs, journal| {
                let restored = journal.restore().unwrap().jobs;
                let states: Vec<JobState> = restored.iter().map(|job| job.state).collect();
                *jobs = Jobs::default();
                for job in restored {
                    jobs.restore(job);
                }
                states
            })
            .await
            .unwrap();
        commit.wait().await.unwrap();
        assert_eq!(states, [JobState::Cancelled]);
        let (view, _) = scheduler.read(|jobs| jobs.view(&j())).await.unwrap();
        assert_eq!(view.unwrap().state, JobState::Cancelled);
    }
}
