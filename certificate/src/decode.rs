//! Reading a certificate back: every length, index and count is checked
//! against what the header and the game allow, so a damaged or hostile
//! file is refused with one line naming what is wrong, never a panic nor
//! an allocation it did not pay for in bytes.

use std::io::Read;

use flate2::bufread::ZlibDecoder;
use perft_core::{Convention, GameKind, Leaves, Weight};

use crate::build::Header;
use crate::text::{MAX_TEXT, text_fault};
use crate::varint::take;
use perft_model::{Count, DeciderName};

use crate::{
    Certificate, MAGIC, Provenance, Unit, VERSION_LEAVES, VERSION_LEAVES_PROVENANCE, VERSION_STATS,
    VERSION_STATS_PROVENANCE,
};

/// The largest body accepted, uncompressed.
const MAX_BODY: u64 = 16 << 30;
/// The most a body may expand, uncompressed over compressed: a certificate
/// compresses about 3 to 5 times (its positions differ), so a file that
/// expands far more is a zlib bomb, refused before it takes the memory.
const MAX_EXPANSION: u64 = 64;
/// Bodies up to this size are read whatever their expansion (a small
/// certificate's columns of alike bytes compress well).
const ALWAYS_READ: u64 = 1 << 20;
/// Why bytes are not a certificate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Not a certificate at all.
    #[error("not a Deep Perft certificate (the file does not start with its magic bytes)")]
    Magic,
    /// A certificate of a version this code does not read.
    #[error(
        "certificate version {found}, but this perft reads versions {VERSION_LEAVES} to {VERSION_STATS_PROVENANCE} only (leaves, statistics, each without and with its provenance)"
    )]
    Version {
        /// The version in the file.
        found: u16,
    },
    /// The compressed body is damaged or cut short.
    #[error("the certificate's body is damaged or truncated ({0})")]
    Body(String),
    /// The body ends before a field.
    #[error("the certificate is truncated: it ends in the {0}")]
    Truncated(&'static str),
    /// A field holds a value it cannot.
    #[error("the certificate's {field} is invalid: {reason}")]
    Invalid {
        /// Which field.
        field: &'static str,
        /// What is wrong, one line.
        reason: String,
    },
    /// Bytes after the last field.
    #[error("the certificate has {0} bytes after its last field")]
    Trailing(usize),
    /// Bytes after the zlib stream, where the file must end.
    #[error("the certificate has {0} bytes after its zlib stream, where the file must end")]
    AfterStream(usize),
}

fn invalid(field: &'static str, reason: impl Into<String>) -> DecodeError {
    DecodeError::Invalid {
        field,
        reason: reason.into(),
    }
}

/// A reader over the body that names the field it was reading when the
/// body ran out.
struct Fields<'a> {
    input: &'a [u8],
}

impl<'a> Fields<'a> {
    /// A varint in its shortest form: a padded one (a last byte of zero
    /// after others) is refused, so that one value has one encoding.
    fn number(&mut self, field: &'static str) -> Result<u128, DecodeError> {
        let before = self.input;
        let value = take(&mut self.input).ok_or(if before.len() > 19 {
            invalid(field, "an integer longer than 128 bits")
        } else {
            DecodeError::Truncated(field)
        })?;
        let used = before.len() - self.input.len();
        if used > 1 && before[used - 1] == 0 {
            return Err(invalid(field, "an integer not in its shortest form"));
        }
        Ok(value)
    }

    fn small(&mut self, field: &'static str, max: u128) -> Result<u64, DecodeError> {
        let n = self.number(field)?;
        if n > max {
            return Err(invalid(field, format!("{n} is above {max}")));
        }
        Ok(n as u64)
    }

    /// A count of items each taking at least `min_bytes` bytes: never more
    /// than the bytes left could hold.
    fn length(&mut self, field: &'static str, min_bytes: usize) -> Result<usize, DecodeError> {
        let n = self.number(field)?;
        let most = (self.input.len() / min_bytes.max(1)) as u128;
        if n > most {
            return Err(DecodeError::Truncated(field));
        }
        Ok(n as usize)
    }

    fn bytes(&mut self, field: &'static str, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.input.len() < n {
            return Err(DecodeError::Truncated(field));
        }
        let (head, rest) = self.input.split_at(n);
        self.input = rest;
        Ok(head)
    }

    fn text(&mut self, field: &'static str) -> Result<String, DecodeError> {
        let n = self.length(field, 1)?;
        if n > MAX_TEXT {
            return Err(invalid(field, format!("{n} bytes of text, above {MAX_TEXT}")));
        }
        let bytes = self.bytes(field, n)?;
        let text = std::str::from_utf8(bytes).map_err(|_| invalid(field, "not UTF-8"))?;
        // Texts are printed: none may break a line or turn a terminal's
        // text around.
        if let Some(fault) = text_fault(text) {
            return Err(invalid(field, fault));
        }
        Ok(text.to_owned())
    }

    fn leaves(&mut self, field: &'static str) -> Result<Leaves, DecodeError> {
        let leaves = Leaves {
            leaves: self.number(field)?,
            higher: self.number(field)?,
        };
        if !leaves.is_consistent() {
            return Err(invalid(field, "more game-over leaves than leaves"));
        }
        Ok(leaves)
    }

    /// `n` counts of `kinds` kinds each, never more than the bytes left
    /// could hold (a count takes at least a byte).
    fn kinds(&mut self, field: &'static str, n: usize, kinds: usize) -> Result<Vec<Vec<u128>>, DecodeError> {
        if n.saturating_mul(kinds) > self.input.len() {
            return Err(DecodeError::Truncated(field));
        }
        (0..n)
            .map(|_| (0..kinds).map(|_| self.number(field)).collect())
            .collect()
    }
}

/// The body after the header, decompressed (at most [`MAX_BODY`] bytes),
/// and the format version.
fn decompressed(bytes: &[u8]) -> Result<(Vec<u8>, u16), DecodeError> {
    if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
        return Err(DecodeError::Magic);
    }
    let rest = &bytes[MAGIC.len()..];
    let Some(version) = rest.get(..2) else {
        return Err(DecodeError::Truncated("version"));
    };
    let found = u16::from_le_bytes([version[0], version[1]]);
    if !(VERSION_LEAVES..=VERSION_STATS_PROVENANCE).contains(&found) {
        return Err(DecodeError::Version { found });
    }
    let compressed = &rest[2..];
    let most = (compressed.len() as u64)
        .saturating_mul(MAX_EXPANSION)
        .clamp(ALWAYS_READ, MAX_BODY);
    let mut body = Vec::new();
    // Read from the slice itself, not through a buffer of its own: the
    // slice left over is then exactly what follows the stream (a buffered
    // reader would have swallowed up to its buffer's size of it).
    let mut zlib = ZlibDecoder::new(compressed).take(most + 1);
    zlib.read_to_end(&mut body)
        .map_err(|e| DecodeError::Body(e.to_string()))?;
    if body.len() as u64 > most {
        return Err(DecodeError::Body(format!(
            "it expands past {most} bytes, {MAX_EXPANSION} times its {} compressed bytes: a zlib bomb, not a certificate",
            compressed.len()
        )));
    }
    let after = zlib.into_inner().into_inner().len();
    if after > 0 {
        return Err(DecodeError::AfterStream(after));
    }
    Ok((body, found))
}

/// Kind names for an error line: at most a few, each cut short and with
/// control characters escaped.
fn shown_kinds(kinds: &[String]) -> String {
    let mut shown: Vec<String> = kinds.iter().take(4).map(|k| perft_core::echoed(k)).collect();
    if kinds.len() > 4 {
        shown.push(format!("... {} in all", kinds.len()));
    }
    shown.join(" ")
}

/// The provenance block of versions 3 and 4: the job id (empty for a
/// count without a job), the finish time in Unix seconds (at most
/// `u64::MAX`), the program (never empty).
fn provenance(f: &mut Fields<'_>) -> Result<Provenance, DecodeError> {
    let job = f.text("job id")?;
    let finished = f.small("finish time", u128::from(u64::MAX))?;
    let program = f.text("program")?;
    if program.is_empty() {
        return Err(invalid(
            "program",
            "empty: a certificate names the program that wrote it",
        ));
    }
    Ok(Provenance {
        job,
        finished,
        program,
    })
}

pub(crate) fn decode(bytes: &[u8]) -> Result<Certificate, DecodeError> {
    let (body, version) = decompressed(bytes)?;
    let mut f = Fields { input: &body };
    let provenance = match version {
        VERSION_LEAVES_PROVENANCE | VERSION_STATS_PROVENANCE => Some(provenance(&mut f)?),
        _ => None,
    };
    let stats = matches!(version, VERSION_STATS | VERSION_STATS_PROVENANCE);
    let game: GameKind = f
        .text("game")?
        .parse()
        .map_err(|e: perft_core::UnknownGame| invalid("game", e.to_string()))?;
    let convention = match f.bytes("convention", 1)?[0] {
        0 => None,
        1 => Some(Convention::Bik),
        2 => Some(Convention::Oeis),
        other => return Err(invalid("convention", format!("byte {other}"))),
    };
    if game.resolve_convention(convention).ok() != Some(convention) {
        return Err(invalid(
            "convention",
            format!(
                "{} does not apply to {game}",
                convention.map_or("none", Convention::name)
            ),
        ));
    }
    let packed = game.packed_bytes();
    let root = f.bytes("root", packed)?.to_vec();
    game.fns()
        .show_packed(&root)
        .map_err(|e| invalid("root", e.to_string()))?;
    let depth = f.small("depth", u128::from(game.max_depth()))? as u32;
    let split_depth = f.small("split depth", u128::from(depth))? as u32;
    if split_depth == 0 {
        return Err(invalid("split depth", "0 (at least 1)"));
    }
    let moves = f.length("first moves", 2)?;
    let first_moves = (0..moves)
        .map(|_| f.text("first moves"))
        .collect::<Result<Vec<_>, _>>()?;
    let settled = (0..moves)
        .map(|_| f.leaves("settled leaves"))
        .collect::<Result<Vec<_>, _>>()?;
    let count = f.length("participants", 1)?;
    let participants = (0..count)
        .map(|_| {
            let name = f.text("participants")?;
            DeciderName::parse(&name).map_err(|e| invalid("participants", e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let units = f.length("units", packed + 4)?;
    let positions = f.bytes("unit positions", units * packed)?;
    let mut all_weights = Vec::with_capacity(units);
    for _ in 0..units {
        let n = f.length("unit weights", 2)?;
        if n == 0 || n > moves {
            return Err(invalid(
                "unit weights",
                format!("{n} weights for {moves} first moves"),
            ));
        }
        let weights = (0..n)
            .map(|_| {
                Ok(Weight {
                    first_move: f.small("unit weights", moves as u128 - 1)? as u32,
                    paths: f.small("unit weights", u128::from(u64::MAX))?,
                })
            })
            .collect::<Result<Vec<_>, DecodeError>>()?;
        all_weights.push(weights);
    }
    let mut counts = Vec::with_capacity(units);
    for _ in 0..units {
        counts.push(f.leaves("unit counts")?);
    }
    let mut all_deciders = Vec::with_capacity(units);
    for _ in 0..units {
        let n = f.length("unit deciders", 1)?;
        let deciders = (0..n)
            .map(|_| {
                let most = (participants.len() as u128).saturating_sub(1);
                if participants.is_empty() {
                    return Err(invalid("unit deciders", "a decider but no participant"));
                }
                Ok(f.small("unit deciders", most)? as u32)
            })
            .collect::<Result<Vec<_>, DecodeError>>()?;
        all_deciders.push(deciders);
    }
    let divide = (0..moves)
        .map(|_| f.leaves("divide table"))
        .collect::<Result<Vec<_>, _>>()?;
    let total = f.leaves("total")?;
    let (kinds, settled_kinds, unit_kinds, divide_kinds, total_kinds) = if stats {
        if split_depth >= depth {
            return Err(invalid(
                "split depth",
                format!(
                    "{split_depth} is not below the depth {depth}: a statistics certificate's units need a ply (a leaf's kinds are its move's)"
                ),
            ));
        }
        let k = f.length("list of kinds", 1)?;
        let expected = game.stats_kinds();
        let kinds = (0..k)
            .map(|_| f.text("list of kinds"))
            .collect::<Result<Vec<_>, _>>()?;
        if kinds.is_empty() || kinds.iter().map(String::as_str).ne(expected.iter().copied()) {
            return Err(invalid(
                "list of kinds",
                format!(
                    "[{}], but {game} counts [{}]",
                    shown_kinds(&kinds),
                    expected.join(" ")
                ),
            ));
        }
        let settled_kinds = f.kinds("settled kinds", moves, k)?;
        let unit_kinds = f.kinds("unit kinds", units, k)?;
        let divide_kinds = f.kinds("divide kinds", moves, k)?;
        let total_kinds = f.kinds("total kinds", 1, k)?.pop().unwrap_or_default();
        (kinds, settled_kinds, unit_kinds, divide_kinds, total_kinds)
    } else {
        (
            Vec::new(),
            Vec::new(),
            vec![Vec::new(); units],
            Vec::new(),
            Vec::new(),
        )
    };
    let merkle_root: [u8; 32] = f
        .bytes("Merkle root", 32)?
        .try_into()
        .map_err(|_| DecodeError::Truncated("Merkle root"))?;
    if !f.input.is_empty() {
        return Err(DecodeError::Trailing(f.input.len()));
    }
    let units = positions
        .chunks_exact(packed.max(1))
        .zip(all_weights)
        .zip(counts)
        .zip(unit_kinds)
        .zip(all_deciders)
        .map(|((((position, weights), leaves), kinds), deciders)| {
            let count = Count::with_kinds(leaves, &kinds).ok_or_else(|| {
                invalid(
                    "unit kinds",
                    format!("{} kinds, more than a count holds", kinds.len()),
                )
            })?;
            Ok(Unit {
                position: position.to_vec(),
                weights,
                count,
                deciders,
            })
        })
        .collect::<Result<Vec<_>, DecodeError>>()?;
    Ok(Certificate {
        header: Header {
            game,
            convention,
            root,
            depth,
            split_depth,
            first_moves,
            settled,
            kinds,
            settled_kinds,
        },
        participants,
        units,
        divide,
        total,
        divide_kinds,
        total_kinds,
        merkle_root,
        provenance,
    })
}
