//! Unsigned LEB128 integers: small counts and indices take a byte or two.

/// Appends `value` as unsigned LEB128.
pub(crate) fn put(out: &mut Vec<u8>, mut value: u128) {
    loop {
        let byte = (value & 0x7F) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Reads one unsigned LEB128 integer of at most 128 bits from the front of
/// `input`, advancing it; `None` when it is cut short or too long.
pub(crate) fn take(input: &mut &[u8]) -> Option<u128> {
    let mut value = 0u128;
    for shift in (0..19).map(|i| i * 7) {
        let (&byte, rest) = input.split_first()?;
        *input = rest;
        let bits = u128::from(byte & 0x7F);
        if shift == 126 && bits > 0b11 {
            return None;
        }
        value |= bits << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_overlong() {
        for value in [0, 1, 127, 128, 300, u128::from(u64::MAX), u128::MAX] {
            let mut out = Vec::new();
            put(&mut out, value);
            let mut input = out.as_slice();
            assert_eq!(take(&mut input), Some(value));
            assert!(input.is_empty());
        }
        let mut too_long: &[u8] = &[0xFF; 20];
        assert_eq!(take(&mut too_long), None);
        let mut cut: &[u8] = &[0x80];
        assert_eq!(take(&mut cut), None);
    }
}
