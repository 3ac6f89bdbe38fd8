//! Turns written whole: the marks [`super::Session::append_turn`] puts on a turn's entries, and
//! finding a turn that a crash cut short at the end of a file.
//!
//! A turn (the prompt, the assistant replies and the tool results of one model call) is
//! appended in one write of one or more lines. A write can still be cut short: `kill -9`
//! during a large `write(2)` (Linux stops copying at a pending fatal signal), a full disk, a
//! power loss. What is left is a prefix of the turn's bytes: some whole lines and perhaps a
//! torn one. A turn of more than one entry therefore carries a mark on every entry, an extra
//! top-level field that pi ignores and that round-trips with the rest of the line:
//!
//! ```json
//! {"type":"message","id":"…","parentId":"…","timestamp":"…","message":{…},
//!  "clawctxTurn":{"key":"…","part":1,"of":3}}
//! ```
//!
//! `part` counts from 1, `of` is the number of entries; `key` (the turn key, when the turn has
//! one) is on the first entry only. A file whose last complete lines are parts `1..k` of a turn
//! of `of > k` entries (then perhaps a torn line) ends in a cut-short turn: the writer died
//! before the write finished, nobody was told the turn was recorded, and the bytes from the
//! start of part 1 are removed (a writable open, under the lock) or not read (read-only opens,
//! refresh). Anything else at the end of a file is left as it is.

use std::fs::File;
use std::io;

use serde_json::{Map, Value};

use super::read_at::read_exact_at;
use crate::base::RawObject;

/// The entry field that marks a turn's entries.
pub const TURN_FIELD: &str = "clawctxTurn";

/// The mark of one entry of a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnMark {
    /// The turn key (first entry only).
    pub key: Option<String>,
    /// 1-based position in the turn.
    pub part: u64,
    /// Entries in the turn.
    pub of: u64,
}

impl TurnMark {
    /// The mark as the JSON value written on the entry.
    pub(crate) fn to_value(&self) -> Value {
        let mut map = Map::new();
        if let Some(key) = &self.key {
            map.insert("key".into(), key.clone().into());
        }
        map.insert("part".into(), self.part.into());
        map.insert("of".into(), self.of.into());
        Value::Object(map)
    }

    /// The mark of an entry's JSON text, if it has a well-formed one.
    pub fn of_text(text: &str) -> Option<TurnMark> {
        // Most entries have no mark: a byte search before any parsing.
        memchr::memmem::find(text.as_bytes(), TURN_FIELD.as_bytes())?;
        let raw = RawObject::parse(text).ok()?;
        let value: Value = serde_json::from_str(raw.get(TURN_FIELD)?.get()).ok()?;
        let part = value.get("part")?.as_u64()?;
        let of = value.get("of")?.as_u64()?;
        if part == 0 || part > of {
            return None;
        }
        let key = value.get("key").and_then(Value::as_str).map(str::to_owned);
        Some(TurnMark { key, part, of })
    }

    fn of_line(line: &[u8]) -> Option<TurnMark> {
        TurnMark::of_text(std::str::from_utf8(line).ok()?)
    }
}

/// What [`cut_short_turn_in`] found in a suffix of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TailTurn {
    /// The file does not end in a cut-short turn.
    Whole,
    /// The cut-short turn starts at this offset of the slice.
    CutShortAt(usize),
    /// The slice does not reach back to the turn's first entry.
    NeedMore,
}

/// Whether `bytes`, the last bytes of a file (`at_start`: the whole file), end in a turn cut
/// short (see the module doc).
pub(crate) fn cut_short_turn_in(bytes: &[u8], at_start: bool) -> TailTurn {
    // Lines end at a "\n"; after the last one is a torn line, or a whole entry whose "\n"
    // was not written yet (the loader reads such a last line, as pi does).
    let Some(last_newline) = memchr::memrchr(b'\n', bytes) else {
        return if at_start {
            TailTurn::Whole
        } else {
            TailTurn::NeedMore
        };
    };
    let unterminated = &bytes[last_newline + 1..];
    // End of the line looked at (exclusive, before its "\n").
    let mut end = if !unterminated.is_empty() && TurnMark::of_line(unterminated).is_some() {
        bytes.len()
    } else {
        last_newline
    };
    let mut expected: Option<(u64, u64)> = None; // (part, of) the next line back must have
    loop {
        let start = match memchr::memrchr(b'\n', &bytes[..end]) {
            Some(i) => i + 1,
            None if at_start => 0,
            None => return TailTurn::NeedMore,
        };
        let Some(mark) = TurnMark::of_line(&bytes[start..end]) else {
            return TailTurn::Whole;
        };
        match expected {
            // The last complete line: a whole turn ends here, or a part before the last.
            None if mark.part == mark.of => return TailTurn::Whole,
            None => {}
            Some((part, of)) if mark.part != part || mark.of != of => return TailTurn::Whole,
            Some(_) => {}
        }
        if mark.part == 1 {
            return TailTurn::CutShortAt(start);
        }
        expected = Some((mark.part - 1, mark.of));
        if start == 0 {
            return TailTurn::Whole; // the file starts inside the turn: not ours to cut
        }
        end = start - 1;
    }
}

/// The offset where a cut-short turn at the end of `file` (of `len` bytes) starts, reading
/// the file backwards in growing pieces (usually only its last line).
pub(crate) fn cut_short_turn_start(file: &File, len: u64) -> io::Result<Option<u64>> {
    let mut piece: u64 = 64 << 10;
    loop {
        let start = len.saturating_sub(piece);
        let size = usize::try_from(len - start).map_err(io::Error::other)?;
        let mut buf = vec![0u8; size];
        read_exact_at(file, &mut buf, start)?;
        match cut_short_turn_in(&buf, start == 0) {
            TailTurn::Whole => return Ok(None),
            TailTurn::CutShortAt(at) => return Ok(Some(start + at as u64)),
            TailTurn::NeedMore => piece = piece.saturating_mul(4),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(id: &str, mark: Option<(&str, u64, u64)>) -> String {
        let mut v = serde_json::json!({"type": "message", "id": id, "message": {"role": "user"}});
        if let Some((key, part, of)) = mark {
            let key = (!key.is_empty()).then(|| key.to_owned());
            v[TURN_FIELD] = TurnMark { key, part, of }.to_value();
        }
        format!("{v}\n")
    }

    #[test]
    fn every_prefix_of_a_turn_is_found_and_a_whole_turn_is_not() {
        let head = format!("{}{}", line("h", None), line("a", None));
        let turn = format!(
            "{}{}{}",
            line("t1", Some(("k", 1, 3))),
            line("t2", Some(("", 2, 3))),
            line("t3", Some(("", 3, 3)))
        );
        for cut in 0..=turn.len() {
            let bytes = format!("{head}{}", &turn[..cut]);
            let found = cut_short_turn_in(bytes.as_bytes(), true);
            // Before the first entry is complete there is only a torn line (not read); a
            // whole turn is kept, its last "\n" written or not.
            let first_done = cut + 1 >= line("t1", Some(("k", 1, 3))).len();
            let expected = if first_done && cut + 1 < turn.len() {
                TailTurn::CutShortAt(head.len())
            } else {
                TailTurn::Whole
            };
            assert_eq!(found, expected, "cut at {cut}");
        }
    }

    #[test]
    fn marks_out_of_sequence_and_partial_views_are_left_alone() {
        let odd = format!(
            "{}{}",
            line("x", Some(("", 2, 3))),
            line("y", Some(("", 2, 3)))
        );
        assert_eq!(cut_short_turn_in(odd.as_bytes(), true), TailTurn::Whole);
        // A slice that starts inside the turn asks for more.
        let two = format!(
            "{}{}",
            line("t1", Some(("k", 1, 3))),
            line("t2", Some(("", 2, 3)))
        );
        let first_len = line("t1", Some(("k", 1, 3))).len();
        assert_eq!(
            cut_short_turn_in(&two.as_bytes()[first_len..], false),
            TailTurn::NeedMore
        );
        assert_eq!(
            cut_short_turn_in(two.as_bytes(), true),
            TailTurn::CutShortAt(0)
        );
        let text = line("t1", Some(("k", 1, 2)));
        assert_eq!(
            TurnMark::of_text(text.trim_end()),
            Some(TurnMark {
                key: Some("k".into()),
                part: 1,
                of: 2
            })
        );
    }
}
