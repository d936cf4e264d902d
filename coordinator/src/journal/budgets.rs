//! An admin's budget overrides in the journal: one row a participant,
//! under a checksum (a damaged row refuses the journal rather than guess
//! a figure).

use std::path::Path;

use rusqlite::{Connection, Transaction, params};

use super::JournalError;
use super::codec::checksum;
use crate::admission::Overrides;
use perft_model::ParticipantId;

pub(super) fn row_checksum(participant: &str, figures: &str) -> i64 {
    checksum(&[b"budget", participant.as_bytes(), figures.as_bytes()])
}

/// Writes `participant`'s overrides (none: its row goes).
pub(super) fn store(
    tx: &Transaction<'_>,
    participant: &ParticipantId,
    overrides: &Overrides,
) -> rusqlite::Result<()> {
    if overrides.is_empty() {
        tx.prepare_cached("DELETE FROM budgets WHERE participant = ?1")?
            .execute([participant.as_str()])?;
        return Ok(());
    }
    let figures = overrides.encode();
    tx.prepare_cached("INSERT OR REPLACE INTO budgets (participant, figures, checksum) VALUES (?1, ?2, ?3)")?
        .execute(params![
            participant.as_str(),
            figures,
            row_checksum(participant.as_str(), &figures)
        ])?;
    Ok(())
}

/// Every participant's overrides.
pub(super) fn load(conn: &Connection, path: &Path) -> Result<Vec<(ParticipantId, Overrides)>, JournalError> {
    let corrupt = |reason: String| JournalError::Corrupt {
        path: path.to_owned(),
        reason,
    };
    let sql = |e: rusqlite::Error| corrupt(e.to_string());
    let mut stmt = conn
        .prepare("SELECT participant, figures, checksum FROM budgets ORDER BY participant")
        .map_err(sql)?;
    let mut rows = stmt.query([]).map_err(sql)?;
    let mut all = Vec::new();
    while let Some(row) = rows.next().map_err(sql)? {
        let name: String = row.get(0).map_err(sql)?;
        let figures: String = row.get(1).map_err(sql)?;
        if row_checksum(&name, &figures) != row.get::<_, i64>(2).map_err(sql)? {
            return Err(corrupt(format!(
                "the budget of participant '{}' failed its checksum",
                perft_core::echoed(&name)
            )));
        }
        let participant = ParticipantId::parse(&name).map_err(|e| corrupt(format!("budgets: {e}")))?;
        let overrides =
            Overrides::decode(&figures).map_err(|e| corrupt(format!("budget of {participant}: {e}")))?;
        all.push((participant, overrides));
    }
    Ok(all)
}
