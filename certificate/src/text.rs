//! The rule every text in a certificate keeps (moves, participants, kinds,
//! the provenance): the reader refuses a text that breaks it, and the
//! builder refuses to write one.

/// The longest text accepted: a move, a participant id, a kind's name, a
/// job id or a program.
pub(crate) const MAX_TEXT: usize = 256;

/// What is wrong with `text` as a certificate's text, `None` if nothing:
/// too long, or holding a character that could break a printed line or
/// turn a terminal's text around.
pub(crate) fn text_fault(text: &str) -> Option<String> {
    if text.len() > MAX_TEXT {
        return Some(format!("{} bytes of text, above {MAX_TEXT}", text.len()));
    }
    text.chars().any(perft_core::must_escape).then(|| {
        format!(
            "'{}' holds a control or layout character",
            perft_core::echoed(text)
        )
    })
}
