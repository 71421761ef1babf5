//! Eight bytes at a time in a `u64` (SWAR): where the next separator is.
//!
//! Trace cells are a few bytes long and their lengths vary row to row, so a loop over bytes
//! mispredicts its exit on nearly every text cell; a word's mask answers with one branch per
//! eight bytes, and runs as well in wasm32 as natively (a SIMD search's setup costs more than
//! a dozen bytes). Little-endian: the first byte is the word's lowest.
//!
//! Digits are still read one at a time ([`super::row::leading_digits`]): reading up to eight
//! from a word (a mask, a shift, three dependent multiplies) was measured slower, on the 5M
//! BurstGPT bench (0.87 against 0.78 s of CPU) and on 30M Azure rows (3.94 against 3.81 s).

const ONES: u64 = 0x0101_0101_0101_0101;
const LOWS: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// The eight bytes at `pos` as a word, when `bytes` holds them.
#[inline]
pub(crate) fn word_at(bytes: &[u8], pos: usize) -> Option<u64> {
    let eight: [u8; 8] = bytes.get(pos..pos.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(eight))
}

/// The top bit of each byte set exactly where `word`'s byte is `b` (no false positives: no
/// carry crosses a byte).
#[inline]
pub(crate) fn equal(word: u64, b: u8) -> u64 {
    let x = word ^ (ONES * u64::from(b));
    !(((x & LOWS) + LOWS) | x | LOWS)
}

/// Index of the first byte a mask from [`equal`] marks; 8 when none.
#[inline]
pub(crate) fn first_marked(mask: u64) -> usize {
    (mask.trailing_zeros() / 8) as usize
}

/// Moves `*pos` to the first of `,`, `\n` or `"` at or after it, or to the end of `bytes`.
#[inline]
pub(crate) fn skip_to_separator(bytes: &[u8], pos: &mut usize) {
    while let Some(w) = word_at(bytes, *pos) {
        let stops = equal(w, b',') | equal(w, b'\n') | equal(w, b'"');
        if stops != 0 {
            *pos += first_marked(stops);
            return;
        }
        *pos += 8;
    }
    while let Some(&b) = bytes.get(*pos) {
        if matches!(b, b',' | b'\n' | b'"') {
            return;
        }
        *pos += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn separators_are_found_as_one_byte_at_a_time_finds_them(
            bytes in proptest::collection::vec(proptest::prop_oneof![
                proptest::strategy::Just(b','), proptest::strategy::Just(b'"'),
                proptest::strategy::Just(b'\n'), proptest::prelude::any::<u8>()
            ], 0..40),
            from in 0usize..40,
        ) {
            let from = from.min(bytes.len());
            let mut pos = from;
            skip_to_separator(&bytes, &mut pos);
            let stop = bytes[from..]
                .iter()
                .position(|b| matches!(b, b',' | b'\n' | b'"'))
                .map_or(bytes.len(), |i| from + i);
            proptest::prop_assert_eq!(pos, stop);
        }
    }
}
