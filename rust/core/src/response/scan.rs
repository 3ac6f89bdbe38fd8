//! A cursor over one event's JSON text for the hot path of a long reply: the delta events
//! that make up nearly all of it are read in place, without building a `Value` or running a
//! general deserializer. Anything the cursor does not expect (another shape, a number that is
//! not a small integer, a raw control character, an escape serde refuses) makes the caller
//! fall back to the general path, which reads the event exactly as before.

use std::borrow::Cow;

pub(crate) struct Scan<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Scan<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Self { text, at: 0 }
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// JSON whitespace (space, tab, LF, CR).
    #[inline(always)]
    fn ws(&mut self) {
        let b = self.bytes();
        while matches!(b.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        self.ws();
        (self.bytes().get(self.at) == Some(&byte)).then(|| self.at += 1)
    }

    /// Whitespace, then exactly `token` (a punctuation mark or a quoted key).
    #[inline(always)]
    pub(crate) fn token<const N: usize>(&mut self, token: &[u8; N]) -> Option<()> {
        self.ws();
        let rest = self.bytes().get(self.at..self.at + N)?;
        (rest == token).then(|| self.at += N)
    }

    /// Only whitespace is left.
    pub(crate) fn end(mut self) -> Option<()> {
        self.ws();
        (self.at == self.text.len()).then_some(())
    }

    /// A JSON string: borrowed when it holds no escape, decoded when it does.
    pub(crate) fn string(&mut self) -> Option<Cow<'a, str>> {
        self.ws();
        let b = self.bytes();
        if b.get(self.at) != Some(&b'"') {
            return None;
        }
        let start = self.at + 1;
        let at = first_to_look_at(b, start);
        match *b.get(at)? {
            b'"' => {
                self.at = at + 1;
                Some(Cow::Borrowed(self.text.get(start..at)?))
            }
            b'\\' => self.escaped_string(start, at),
            _ => None, // a raw control character: JSON forbids it, the general path refuses it
        }
    }

    /// The rest of a string from its first escape at `at`, decoded as `JSON.parse` decodes it;
    /// a lone surrogate escape gives up (the general path reads those leniently).
    fn escaped_string(&mut self, start: usize, mut at: usize) -> Option<Cow<'a, str>> {
        let b = self.bytes();
        let mut out: Vec<u8> = Vec::with_capacity(at - start + 32);
        out.extend_from_slice(&b[start..at]);
        loop {
            match *b.get(at)? {
                b'"' => break,
                b'\\' => {
                    let simple = match *b.get(at + 1)? {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'r' => b'\r',
                        b'b' => 0x08,
                        b'f' => 0x0c,
                        _ => 0,
                    };
                    if simple != 0 {
                        out.push(simple);
                        at += 2;
                    } else {
                        let (ch, used) = escape(b.get(at + 1..)?)?;
                        out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                        at += 1 + used;
                    }
                }
                _ => return None,
            }
            let run = first_to_look_at(b, at);
            out.extend_from_slice(&b[at..run]);
            at = run;
        }
        self.at = at + 1;
        // Runs are whole characters of the text and escapes whole characters: valid UTF-8.
        String::from_utf8(out).ok().map(Cow::Owned)
    }

    /// A non-negative integer of at most 15 digits (a content index), as `f64`.
    pub(crate) fn small_int(&mut self) -> Option<f64> {
        self.ws();
        let b = self.bytes();
        let start = self.at;
        let digits = b[start..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 || digits > 15 || (digits > 1 && b[start] == b'0') {
            return None;
        }
        if matches!(b.get(start + digits), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        self.at += digits;
        let value = b[start..start + digits]
            .iter()
            .fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
        Some(value as f64) // exact: below 10^15 < 2^53
    }

    /// An object: `field` is called with each key and reads its value (returning `None`
    /// abandons the scan).
    pub(crate) fn object(
        &mut self,
        mut field: impl FnMut(&mut Self, &str) -> Option<()>,
    ) -> Option<()> {
        self.eat(b'{')?;
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            let key = self.string()?;
            self.eat(b':')?;
            field(self, &key)?;
            if self.eat(b',').is_some() {
                continue;
            }
            return self.eat(b'}');
        }
    }
}

/// The first byte from `from` on that is `"`, `\\` or a control character (or `b.len()`):
/// eight bytes at a time, then byte by byte in the last word.
#[inline(always)]
fn first_to_look_at(b: &[u8], from: usize) -> usize {
    let mut at = from;
    for word in b.get(from..).unwrap_or_default().chunks_exact(8) {
        let flags = needs_a_look(u64::from_le_bytes(word.try_into().unwrap_or([0; 8])));
        if flags != 0 {
            return at + (flags.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while let Some(&c) = b.get(at) {
        if c == b'"' || c == b'\\' || c < 0x20 {
            break;
        }
        at += 1;
    }
    at
}

/// A high bit in each byte of `word` that is `"`, `\\` or below 0x20 (the lowest flag is
/// always right; a borrow may also flag a byte above it, which the byte loop then reads).
#[inline(always)]
fn needs_a_look(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    (zero_byte(quote) | zero_byte(backslash) | control) & HIGH
}

/// One escape after its backslash: the character and how many bytes it took.
fn escape(b: &[u8]) -> Option<(char, usize)> {
    let simple = match *b.first()? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let unit = hex4(b.get(1..5)?)?;
            if (0xD800..0xDC00).contains(&unit) {
                // A high surrogate must be followed by `\\u` and a low one.
                if b.get(5..7)? != b"\\u" {
                    return None;
                }
                let low = hex4(b.get(7..11)?)?;
                if !(0xDC00..0xE000).contains(&low) {
                    return None;
                }
                let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                return Some((char::from_u32(code)?, 11));
            }
            return Some((char::from_u32(unit)?, 5)); // a lone low surrogate is no char
        }
        _ => return None,
    };
    Some((simple, 1))
}

fn hex4(b: &[u8]) -> Option<u32> {
    let text = std::str::from_utf8(b).ok()?;
    if !text.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(text, 16).ok()
}

/// Sets `slot` once: a key seen twice abandons the scan (`JSON.parse` keeps the last value;
/// the general path does the same).
pub(crate) fn once<T>(slot: &mut Option<T>, value: Option<T>) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(value?);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(text: &str) -> Option<(String, f64, String)> {
        let mut scan = Scan::new(text);
        let (mut kind, mut index, mut inner) = (None, None, None);
        scan.object(|s, key| match key {
            "type" => once(&mut kind, s.string()),
            "index" => once(&mut index, s.small_int()),
            "delta" => {
                let mut text = None;
                s.object(|s, key| match key {
                    "text" => once(&mut text, s.string()),
                    _ => None,
                })?;
                once(&mut inner, text)
            }
            _ => None,
        })?;
        scan.end()?;
        Some((kind?.into_owned(), index?, inner?.into_owned()))
    }

    #[test]
    fn reads_the_shapes_it_expects_with_or_without_whitespace_and_escapes() {
        let want = Some(("d".to_owned(), 2.0, "a\"b\u{e9}\u{1F600}".to_owned()));
        assert_eq!(
            delta(r#"{"type":"d","index":2,"delta":{"text":"a\"b\u00e9\ud83d\ude00"}}"#),
            want
        );
        assert_eq!(
            delta(" {\n\"type\" : \"d\", \"index\": 2 ,\"delta\": {\"text\": \"a\\\"bé😀\"} }\r\n"),
            want
        );
    }

    proptest::proptest! {
        #[test]
        fn any_string_reads_as_serde_reads_it(s in ".*", ascii_only in proptest::bool::ANY) {
            let mut quoted = serde_json::to_string(&s).unwrap();
            if ascii_only {
                // Every non-ASCII character as `\\uXXXX` escapes (pairs above the BMP).
                quoted = quoted
                    .chars()
                    .map(|c| if c.is_ascii() { c.to_string() } else {
                        c.encode_utf16(&mut [0; 2]).iter().map(|u| format!("\\u{u:04x}")).collect()
                    })
                    .collect();
            }
            let read = Scan::new(&quoted).string();
            proptest::prop_assert_eq!(read.as_deref(), Some(s.as_str()));
        }
    }

    #[test]
    fn decodes_every_escape_as_serde_does() {
        let text = r#""a\"\\\/\b\f\n\r\t\u0041\u00e9\u20ac\ud83d\ude00z é""#;
        let want: String = serde_json::from_str(text).unwrap();
        assert_eq!(Scan::new(text).string().as_deref(), Some(want.as_str()));
    }

    #[test]
    fn gives_up_on_anything_else() {
        for text in [
            r#"{"type":"d","index":2,"delta":{"text":"x"},"type":"e"}"#, // duplicate key
            r#"{"type":"d","index":2.0,"delta":{"text":"x"}}"#,          // not a small int
            r#"{"type":"d","index":02,"delta":{"text":"x"}}"#,
            r#"{"type":"d","index":2,"delta":{"text":"x\u0001"}} x"#, // trailing text
            "{\"type\":\"d\",\"index\":2,\"delta\":{\"text\":\"a\tb\"}}", // raw tab
            "{\"type\":\"d\",\"index\":2,\"delta\":{\"text\":\"0123456789abcdefgh\u{1f}ij\"}}",
            "{\"type\":\"d\",\"index\":2,\"delta\":{\"text\":\"0123456789abcdefgh\u{7f}\u{0}\"}}",
            r#"{"type":"d","index":2,"delta":{"text":"\ud800"}}"#, // lone surrogate
            r#"{"type":"d","index":2,"delta":{"text":"x\"#,
            r#"{"type":"d","index":2,"delta":{"text":null}}"#,
            r#"{"type":"d","index":2,"delta":{"text":"\udc00"}}"#,
            r#"{"type":"d","index":2,"delta":{"text":"\ud83dx"}}"#,
            r#"{"type":"d","index":2,"delta":{"text":"\x"}}"#,
            r#"{"type":"d","index":2,"delta":{"text":"\u12g4"}}"#,
        ] {
            assert_eq!(delta(text), None, "{text}");
        }
    }
}
