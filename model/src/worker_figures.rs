//! What a worker says of itself in its heartbeats: its table and its
//! totals since it started, for the dashboard and the metrics (never for a
//! count: those travel in reports).

/// A worker's figures since it started.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WorkerFigures {
    /// Table lookups, and the hits among them.
    pub table_probes: u64,
    pub table_hits: u64,
    /// The part of the table in use, 0 to 1 (sampled).
    pub table_fill: f64,
    pub table_bytes: u64,
    /// Units counted, and their leaves.
    pub units_done: u64,
    pub leaves_done: u128,
}

impl WorkerFigures {
    /// The figures made consistent, whatever a worker sent: no more hits
    /// than lookups, a fill between 0 and 1.
    pub fn sanitized(self) -> WorkerFigures {
        WorkerFigures {
            table_hits: self.table_hits.min(self.table_probes),
            table_fill: if self.table_fill.is_finite() {
                self.table_fill.clamp(0.0, 1.0)
            } else {
                0.0
            },
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_figures_are_made_consistent() {
        let sent = WorkerFigures {
            table_probes: 5,
            table_hits: 9,
            table_fill: f64::NAN,
            ..WorkerFigures::default()
        };
        let kept = sent.sanitized();
        assert_eq!((kept.table_hits, kept.table_fill), (5, 0.0));
        let over = WorkerFigures {
            table_fill: 7.5,
            ..WorkerFigures::default()
        };
        assert_eq!(over.sanitized().table_fill, 1.0);
    }
}
