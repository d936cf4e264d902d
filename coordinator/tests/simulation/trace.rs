//! The trace a failing seed shows: the seed's world, its last steps with
//! what each did, and the drain's last rounds (`PERFT_SIM_TRACE=full`
//! keeps every step).

use std::cell::RefCell;
use std::collections::VecDeque;

/// Steps of the trace a failing seed shows (and drain rounds after them).
const TRACE_STEPS: usize = 50;
const TRACE_ROUNDS: usize = 8;

/// The current seed's trace: the last steps, each with what it did, and
/// the last rounds of the drain.
#[derive(Default)]
struct Trace {
    /// The seed and its world.
    header: String,
    steps: VecDeque<Vec<String>>,
    rounds: VecDeque<Vec<String>>,
    draining: bool,
    /// Keep every step (`PERFT_SIM_TRACE=full`).
    full: bool,
}

thread_local! {
    static TRACE: RefCell<Trace> = RefCell::new(Trace::default());
}

/// Notes the seed and its world.
pub(super) fn note_header(header: String) {
    TRACE.with(|t| t.borrow_mut().header = header);
}

/// Starts a step (or a drain round) of the trace.
pub(super) fn note_step(header: String) {
    TRACE.with(|t| {
        let mut t = t.borrow_mut();
        let (full, draining) = (t.full, t.draining);
        let (blocks, cap) = if draining {
            (&mut t.rounds, TRACE_ROUNDS)
        } else {
            (&mut t.steps, TRACE_STEPS)
        };
        if !full && blocks.len() >= cap {
            blocks.pop_front();
        }
        blocks.push_back(vec![header]);
    });
}

/// Notes what the current step did.
pub(super) fn note(line: String) {
    TRACE.with(|t| {
        let mut t = t.borrow_mut();
        let blocks = if t.draining { &mut t.rounds } else { &mut t.steps };
        match blocks.back_mut() {
            Some(block) => block.push(line),
            None => blocks.push_back(vec![line]),
        }
    });
}

/// The trace so far, as lines, and a fresh one.
pub fn take_trace() -> Vec<String> {
    TRACE.with(|t| {
        let full = std::env::var("PERFT_SIM_TRACE").is_ok_and(|v| v == "full");
        let t = std::mem::replace(
            &mut *t.borrow_mut(),
            Trace {
                full,
                ..Trace::default()
            },
        );
        let mut lines = vec![t.header];
        lines.extend(t.steps.into_iter().flatten());
        if !t.rounds.is_empty() {
            lines.push(format!("... the drain's last {} rounds:", t.rounds.len()));
            lines.extend(t.rounds.into_iter().flatten());
        }
        lines
    })
}

pub(super) fn start_drain_trace() {
    TRACE.with(|t| t.borrow_mut().draining = true);
}
