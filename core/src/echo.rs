//! Input echoed back in an error message: cut short and with control
//! characters escaped, so a hostile or mistaken input can neither flood a
//! message (gRPC metadata is limited to a few KiB) nor drive a terminal.

/// Characters of an input kept in a message; the rest is elided.
pub const ECHOED_CHARS: usize = 80;

/// Whether `c` could break a message's one line or reorder what a
/// terminal shows: control characters, the Unicode line and paragraph
/// separators, and the bidirectional marks, embeddings and isolates.
pub fn must_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// `text` as an error message may quote it: at most [`ECHOED_CHARS`]
/// characters, control characters, line separators and bidirectional
/// marks escaped (`\n`, `\u{1b}`, `\u{202e}`), and `...` where it was cut.
pub fn echoed(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(4 * ECHOED_CHARS));
    for (i, c) in text.chars().enumerate() {
        if i == ECHOED_CHARS {
            out.push_str("...");
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else if must_escape(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_printable_text_is_unchanged() {
        assert_eq!(echoed("d3 ééé"), "d3 ééé");
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(echoed("a\nb\u{1b}[31m\0"), "a\\nb\\u{1b}[31m\\u{0}");
    }

    #[test]
    fn line_separators_and_bidirectional_marks_are_escaped() {
        assert_eq!(
            echoed("a\u{2028}MISMATCH\u{202e}b\u{2066}"),
            "a\\u{2028}MISMATCH\\u{202e}b\\u{2066}"
        );
    }

    #[test]
    fn long_text_is_cut_on_a_character_boundary() {
        let long = "é".repeat(100_000);
        let out = echoed(&long);
        assert_eq!(out, format!("{}...", "é".repeat(ECHOED_CHARS)));
    }
}
