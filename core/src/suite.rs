//! EPD perft suites, the format engine authors exchange: one position a
//! line, its expected counts after it, `POSITION ;D1 20 ;D2 400 ...`. The
//! position is everything before the first `;` (so any game's text, of one
//! field or many); blank lines and lines starting with `#` are skipped.

use crate::echoed;

/// One line of a suite: a position and the counts expected at some depths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteLine {
    /// 1-based line number in the file, for messages.
    pub line: usize,
    /// The position's text, trimmed.
    pub position: String,
    /// Depths with their expected leaf counts, in the order given.
    pub expected: Vec<(u32, u128)>,
}

/// Why a suite text was refused: the line and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct SuiteError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong, one line, input echoed cut short and escaped.
    pub reason: String,
}

/// Every line of `text` that names a position.
pub fn parse_suite(text: &str) -> Result<Vec<SuiteLine>, SuiteError> {
    let mut lines = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        lines.push(parse_line(line, trimmed)?);
    }
    Ok(lines)
}

/// One non-blank, non-comment line.
fn parse_line(line: usize, text: &str) -> Result<SuiteLine, SuiteError> {
    let error = |reason: String| SuiteError { line, reason };
    let mut parts = text.split(';');
    let position = parts.next().unwrap_or_default().trim();
    if position.is_empty() {
        return Err(error(format!(
            "'{}' has no position before its first ';'",
            echoed(text)
        )));
    }
    let mut expected: Vec<(u32, u128)> = Vec::new();
    for field in parts {
        let field = field.trim();
        if field.is_empty() {
            continue;
        }
        let parsed = field
            .strip_prefix('D')
            .and_then(|rest| rest.split_once(char::is_whitespace))
            .and_then(|(depth, count)| {
                Some((depth.parse::<u32>().ok()?, count.trim().parse::<u128>().ok()?))
            });
        let Some((depth, count)) = parsed else {
            return Err(error(format!(
                "'{}' is not 'D<depth> <count>' (e.g. 'D3 8902')",
                echoed(field)
            )));
        };
        if expected.iter().any(|&(d, _)| d == depth) {
            return Err(error(format!("depth {depth} is given twice")));
        }
        expected.push((depth, count));
    }
    if expected.is_empty() {
        return Err(error(format!(
            "'{}' has no ';D<depth> <count>' field after the position",
            echoed(text)
        )));
    }
    Ok(SuiteLine {
        line,
        position: position.to_owned(),
        expected,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_comments_and_errors() {
        let text = "# a comment\n\n8/8 w - - ;D1 5 ;D2 17\n";
        assert_eq!(
            parse_suite(text),
            Ok(vec![SuiteLine {
                line: 3,
                position: "8/8 w - -".to_owned(),
                expected: vec![(1, 5), (2, 17)],
            }])
        );
        let message = |text: &str| parse_suite(text).unwrap_err().to_string();
        assert_eq!(
            message("x ;D1 5\n;D1 3"),
            "line 2: ';D1 3' has no position before its first ';'"
        );
        assert_eq!(
            message("x"),
            "line 1: 'x' has no ';D<depth> <count>' field after the position"
        );
        assert_eq!(
            message("x ;D1 five"),
            "line 1: 'D1 five' is not 'D<depth> <count>' (e.g. 'D3 8902')"
        );
        assert_eq!(message("x ;D1 5 ;D1 5"), "line 1: depth 1 is given twice");
        assert_eq!(
            message("x ;D1 -5"),
            "line 1: 'D1 -5' is not 'D<depth> <count>' (e.g. 'D3 8902')"
        );
    }
}
