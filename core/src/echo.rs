//! Input text as error messages echo it.

/// At most 80 characters of `text`, control characters escaped, so one bad
/// argument can neither flood a message nor break it over lines.
pub fn echo(text: &str) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == 80 {
            out.push_str("...");
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::echo;

    #[test]
    fn long_text_is_cut_and_control_characters_escaped() {
        assert_eq!(echo("e2e4"), "e2e4");
        assert_eq!(echo("a\nb\u{1b}"), "a\\nb\\u{1b}");
        assert_eq!(echo(&"x".repeat(81)), format!("{}...", "x".repeat(80)));
        assert_eq!(echo(&"x".repeat(80)), "x".repeat(80));
    }
}
