//! The simulated world: a job table on a hand-moved clock over a real
//! journal, honest and hostile participants, an admin, a reaper and
//! crashes, driven by one seeded generator; every step is checked against
//! the model.

use std::collections::BTreeSet;
use std::sync::Arc;

use perft_coordinator::clock::{Clock, ManualClock};
use perft_coordinator::jobs::{Jobs, Op, Policy, Standing};
use perft_coordinator::journal::Journal;
use perft_model::ParticipantId;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::actors::{Actor, Kind, Stats};
use super::model::{Broken, Issued, Model};
use super::plans::{Plan, plans};
use super::trace::{note, note_header, note_step};

/// A lease of a unit of average size must bring its count this soon.
pub const PROGRESS_MS: u64 = 10_000;

/// One seed's world.
pub struct World {
    pub(super) rng: Xoshiro256PlusPlus,
    pub(super) clock: Arc<ManualClock>,
    pub(super) dir: tempfile::TempDir,
    pub(super) journal: Option<Journal>,
    pub(super) jobs: Jobs,
    pub(super) policy: Policy,
    pub(super) rt: tokio::runtime::Runtime,
    pub(super) actors: Vec<Actor>,
    /// Jobs yet to be submitted.
    pub(super) unsubmitted: Vec<(&'static Plan, bool)>,
    pub(super) model: Model,
    /// Ops the journal has not taken yet: a crash loses them.
    pub(super) unsent: Vec<Op>,
    /// Leases answered once the journal takes `unsent`.
    pub(super) deliveries: Vec<(usize, Issued)>,
    pub(super) draining: bool,
    /// Check every answer and view against the model's (invariant 7);
    /// `PERFT_SIM_ORACLE=off` leaves that out, to see what the other
    /// invariants catch alone.
    pub(super) oracle: bool,
    /// How likely the journal takes the changes after a step: some seeds
    /// let many steps' changes wait, for a crash to lose.
    pub(super) flush_chance: f64,
    pub stats: Stats,
}

/// Runs one seed: random steps, then the honest workers finish the jobs.
pub fn run(seed: u64) -> Result<Stats, Broken> {
    let mut world = World::new(seed);
    let steps = world.rng.random_range(120..=260);
    for step in 0..steps {
        world.step(step)?;
    }
    world.drain()?;
    world.stats.no_majority = world.model.no_majority;
    Ok(world.stats)
}

fn temp_dir() -> tempfile::TempDir {
    // A journal in memory: fsync costs nothing there.
    let shm = std::path::Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = tempfile::Builder::new().prefix("perft-sim").tempdir_in(shm)
    {
        return dir;
    }
    tempfile::Builder::new()
        .prefix("perft-sim")
        .tempdir()
        .expect("a temporary directory")
}

impl World {
    pub(super) fn new(seed: u64) -> World {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let quarantine_after = [None, Some(1), Some(1), Some(2)][rng.random_range(0..4)];
        let flush_chance = [0.3, 0.75, 0.95][rng.random_range(0..3)];
        let policy = Policy {
            standing: Standing {
                quarantine_after,
                lapse_limit: rng.random_range(2..=4),
                strike_fade_ms: rng.random_range(2..=30) * PROGRESS_MS,
            },
            progress_ms: PROGRESS_MS,
        };
        let mut actors = Vec::new();
        for i in 0..rng.random_range(3..=4) {
            let kind = if rng.random_bool(0.3) {
                Kind::Slow
            } else {
                Kind::Honest
            };
            actors.push(Actor::new(format!("h{i}"), kind));
        }
        if rng.random_bool(0.5) {
            actors.push(Actor::new(ParticipantId::OPERATOR.to_owned(), Kind::Owner));
        }
        let hostile_kinds = [
            (Kind::Forger, "f"),
            (Kind::Replayer, "r"),
            (Kind::Lapser, "l"),
            (Kind::Parker, "p"),
        ];
        for (kind, prefix) in hostile_kinds {
            let most = if kind == Kind::Forger { 3 } else { 2 };
            for i in 0..rng.random_range(0..=most) {
                actors.push(Actor::new(format!("{prefix}{i}"), kind));
            }
        }
        if rng.random_bool(0.6) || actors.iter().all(|a| !a.kind.hostile()) {
            actors.push(Actor::new("c0".to_owned(), Kind::Colluder));
            actors.push(Actor::new("c1".to_owned(), Kind::Colluder));
        }
        // Some participants run a second machine: one identity, two
        // sessions, never two votes.
        for a in 0..actors.len() {
            if actors[a].kind != Kind::Owner && rng.random_bool(0.15) {
                let machine = Actor::machine_of(&actors[a]);
                actors.push(machine);
            }
        }
        let hostile = actors
            .iter()
            .filter(|a| a.kind.hostile())
            .map(|a| a.id.clone())
            .collect();
        let mut unsubmitted = Vec::new();
        for i in 0..rng.random_range(2..=3) {
            let plan = &plans()[rng.random_range(0..plans().len())];
            // The first job is verified, so votes are lost and won.
            unsubmitted.push((plan, i == 0 || rng.random_bool(0.5)));
        }
        let clock = Arc::new(ManualClock::at(1_800_000_000_000));
        let dir = temp_dir();
        let opened = Journal::open(dir.path()).expect("a new journal");
        let jobs = Jobs::new(policy, clock.clone(), opened.restored.credit);
        note_header(format!(
            "seed {seed}: {} | quarantine after {:?}, lapse limit {}, strikes fade in {} s, journal takes {:.0}% of steps | jobs {}",
            actors
                .iter()
                .map(|a| format!("{}={:?}", a.name, a.kind))
                .collect::<Vec<_>>()
                .join(" "),
            quarantine_after,
            policy.standing.lapse_limit,
            policy.standing.strike_fade_ms / 1000,
            flush_chance * 100.0,
            unsubmitted
                .iter()
                .map(|(p, v)| format!("perft({}){}", p.depth, if *v { "+verify" } else { "" }))
                .collect::<Vec<_>>()
                .join(" ")
        ));
        let mut world = World {
            rng,
            clock,
            dir,
            journal: Some(opened.journal),
            jobs,
            policy,
            rt: tokio::runtime::Builder::new_current_thread()
                .build()
                .expect("a runtime"),
            actors,
            unsubmitted,
            model: Model::new(policy.standing, hostile),
            unsent: Vec::new(),
            deliveries: Vec::new(),
            draining: false,
            oracle: std::env::var("PERFT_SIM_ORACLE").map_or(true, |v| v != "off"),
            flush_chance,
            stats: Stats::default(),
        };
        world.submit().expect("the first job is submitted");
        world
    }

    pub(super) fn journal(&self) -> &Journal {
        self.journal.as_ref().expect("the journal is open")
    }

    pub(super) fn now(&self) -> u64 {
        self.clock.now_ms()
    }

    /// Takes what the table queued for the journal and checks it.
    pub(super) fn after_call(&mut self) -> Result<(), Broken> {
        let ops = self.jobs.take_ops();
        let before: BTreeSet<ParticipantId> = self
            .model
            .hostile
            .iter()
            .chain(self.actors.iter().map(|a| &a.id))
            .filter(|p| self.model.quarantined(p))
            .cloned()
            .collect();
        let observed = self.model.observe(&ops);
        for op in &ops {
            match op {
                Op::Result {
                    job_id,
                    unit_id,
                    count,
                    deciders,
                } => note(format!(
                    "    verdict {job_id}/u{} = {} by {}",
                    unit_id.0,
                    count.leaves.leaves,
                    deciders.iter().map(|d| d.as_str()).collect::<Vec<_>>().join(",")
                )),
                Op::DropVotesOf { voter } => note(format!("    votes of {voter} dropped")),
                Op::JobState { job_id, state, .. } => note(format!("    {job_id} {state:?}")),
                _ => {}
            }
        }
        for actor in &self.actors {
            if self.model.quarantined(&actor.id) && !before.contains(&actor.id) {
                note(format!("    {} quarantined", actor.id));
            }
        }
        observed?;
        self.unsent.extend(ops);
        Ok(())
    }

    /// The journal takes every change so far (one transaction): they are
    /// acknowledged, and the leases waiting for it are handed out.
    pub(super) fn flush(&mut self) {
        let ops = std::mem::take(&mut self.unsent);
        let commit = self.journal().send(ops);
        self.rt.block_on(commit.wait()).expect("a journal write");
        self.model.acknowledge();
        for (a, issued) in std::mem::take(&mut self.deliveries) {
            let actor = &mut self.actors[a];
            actor.held.push(issued.clone());
            actor.issued.push(issued);
        }
        for actor in &mut self.actors {
            actor.in_flight.clear();
        }
    }

    pub(super) fn step(&mut self, step: u64) -> Result<(), Broken> {
        self.stats.steps += 1;
        self.model.begin_step();
        let t = self.now() - 1_800_000_000_000;
        note_step(format!("#{step} t={}.{:03}s", t / 1000, t % 1000));
        match self.rng.random_range(0..100) {
            0..20 => self.lease_some()?,
            20..42 => self.work_some()?,
            42..47 => self.replay()?,
            47..52 => self.park()?,
            52..56 => self.lose_session()?,
            56..66 => self.reap()?,
            66..78 => self.advance_clock(),
            78..79 => self.revoke()?,
            79..82 => self.lift()?,
            82..83 => self.crash()?,
            83..84 => self.crash_with_damage()?,
            84..89 => self.flush_step(),
            89..94 => self.submit()?,
            94..96 => self.resume_failed()?,
            _ => self.hand_back()?,
        }
        if self.rng.random_bool(self.flush_chance) {
            self.flush();
        }
        self.check()
    }

    pub(super) fn flush_step(&mut self) {
        note(format!("  flush {} ops", self.unsent.len()));
        self.flush();
    }

    /// A random actor able to act, matching `pick`.
    pub(super) fn pick_actor(&mut self, pick: impl Fn(&Actor) -> bool) -> Option<usize> {
        let able: Vec<usize> = (0..self.actors.len())
            .filter(|&a| self.actors[a].active() && pick(&self.actors[a]))
            .collect();
        (!able.is_empty()).then(|| able[self.rng.random_range(0..able.len())])
    }

    pub(super) fn advance_clock(&mut self) {
        let ms = match self.rng.random_range(0..100) {
            0..70 => self.rng.random_range(100..=3_000),
            70..95 => self.rng.random_range(5_000..=30_000),
            _ => self.rng.random_range(10..=120) * PROGRESS_MS,
        };
        self.clock.advance(ms);
        note(format!("  clock +{ms} ms"));
    }
}
