//! JavaScript string semantics shared by every stage: lengths are `string.length`, counted
//! in UTF-16 code units (as pi-mono 0.58.3 and OpenClaw 2026.3.13 count them).

/// `id.replace(/[^a-zA-Z0-9_-]/g, "_")`: the regex has no `u` flag, so each UTF-16 unit of
/// another character becomes one `_` (an astral character two).
pub fn sanitize_id_chars(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for c in id.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else {
            for _ in 0..c.len_utf16() {
                out.push('_');
            }
        }
    }
    out
}

/// `s.slice(0, n)` in UTF-16 units (a cut inside a surrogate pair drops the half).
pub fn utf16_prefix_owned(s: &str, n: usize) -> String {
    let mut units = 0;
    let mut out = String::new();
    for c in s.chars() {
        units += c.len_utf16();
        if units > n {
            break;
        }
        out.push(c);
    }
    out
}

/// JavaScript `string.length`: UTF-16 code units.
pub fn utf16_len(s: &str) -> u64 {
    if s.is_ascii() {
        return s.len() as u64;
    }
    // Counted on the bytes (in blocks the compiler turns into vector code): every character has
    // one byte that is not a continuation byte, and a four-byte character is a surrogate pair.
    s.as_bytes()
        .chunks(1 << 12)
        .map(|block| {
            let units: u32 = block
                .iter()
                .map(|&b| u32::from((b as i8) >= -0x40) + u32::from(b >= 0xF0))
                .sum();
            u64::from(units)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_len_counts_javascript_string_length() {
        let samples = [
            "",
            "abc",
            "é",
            "中文",
            "😀",
            "a😀b中é\u{10FFFF}\u{7F}\u{80}\u{800}\u{FFFF}",
        ];
        for sample in samples {
            let expected: u64 = sample.chars().map(|c| c.len_utf16() as u64).sum();
            assert_eq!(utf16_len(sample), expected, "{sample:?}");
            // Long enough to cross the counting blocks.
            let long = sample.repeat(3000);
            assert_eq!(utf16_len(&long), expected * 3000, "{sample:?} repeated");
        }
    }
}
