//! Exact counts: tiktoken's `len(encode_ordinary(text))`, from the vocabularies and the
//! byte-pair merge of `encoding`, with a hand-written pre-tokenizer for ASCII and a table of
//! short tokens keyed by their bytes.

use rayon::prelude::*;

use super::boundaries::TokenBoundaries;
use super::encoding::{build_on_roomy_stack, decode, Encoding, Tokenizer, PARALLEL_MIN_BYTES};

/// The exact token count of `text` (tiktoken's `len(encode_ordinary(text))`). Linear in the
/// length of the text, also on long inputs without whitespace (base64, minified JSON); a single
/// piece of megabytes (one letter repeated) costs `n log n`.
///
/// ASCII stretches are cut into pre-tokenizer pieces by a hand-written splitter
/// (`split_ascii`, the encoding's regex specialised to ASCII); stretches with other
/// characters go through the encoding's regex. A piece that is itself a token counts 1 after
/// one hash lookup; a piece with other characters is first cut where no token can cross
/// (`TokenBoundaries`); only segments that are no token run the byte-pair encoder. Texts
/// of 1 MB and more are cut at line starts (where no piece can cross) and counted on all
/// cores.
pub fn count_exact(text: &str, encoding: Encoding) -> u64 {
    if text.len() >= PARALLEL_MIN_BYTES {
        let threads = rayon::current_num_threads();
        if threads > 1 {
            let chunks = split_at_line_starts(text, threads);
            if chunks.len() > 1 {
                // Rayon's pool: no thread is started per call.
                return chunks
                    .par_iter()
                    .map(|chunk| count_serial(chunk, encoding))
                    .sum();
            }
        }
    }
    count_serial(text, encoding)
}

/// Whether a piece boundary of both encodings' pre-tokenizers is certain at `pos`, whatever the
/// text around, and the pieces after `pos` do not depend on the text before it (no pattern looks
/// behind). That holds at two kinds of points:
/// - after an ASCII letter or digit, before an ASCII character that is neither a letter, a digit
///   nor `'`: only letter pieces hold letters and only digit pieces hold digits; a letter piece
///   ends at a non-letter unless an o200k contraction (`'s`, ...) follows, and a digit piece's
///   groups of three are counted from the start of its run, which lies before `pos`;
/// - after a `\n`, before a character that is neither whitespace nor `/`: a whitespace run
///   holding a newline is cut after its last newline when a non-whitespace character follows,
///   a punctuation piece takes trailing newlines (and, in o200k, `/`) but nothing else, and no
///   piece that holds a letter, digit or punctuation starts with a newline.
fn is_cut(bytes: &[u8], pos: usize) -> bool {
    if pos == 0 || pos >= bytes.len() {
        return false;
    }
    let (before, after) = (bytes[pos - 1], bytes[pos]);
    if before.is_ascii_alphanumeric() {
        after < 0x80 && !after.is_ascii_alphanumeric() && after != b'\''
    } else if before == b'\n' {
        if after < 0x80 {
            !matches!(after, b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C | b'/')
        } else {
            let c = decode(bytes, pos).0;
            !char::from_u32(c).is_some_and(char::is_whitespace)
        }
    } else {
        false
    }
}

/// Splits `text` into at most `parts` chunks at [`is_cut`] points near equal sizes.
fn split_at_line_starts(text: &str, parts: usize) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut chunks = Vec::with_capacity(parts);
    let mut start = 0;
    for i in 1..parts {
        let target = text.len() * i / parts;
        if target <= start {
            continue;
        }
        let cut = (target..bytes.len().min(target + (1 << 16))).find(|&p| is_cut(bytes, p));
        if let Some(cut) = cut {
            chunks.push(&text[start..cut]);
            start = cut;
        }
    }
    chunks.push(&text[start..]);
    chunks
}

/// The bytes after which [`is_cut`] can hold: ASCII letters and digits, and `\n`.
static CUT_AFTER: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 128 {
        table[b] = (b as u8).is_ascii_alphanumeric() || b == b'\n' as usize;
        b += 1;
    }
    table
};

/// The position of the first byte of `bytes[from..]` that is not ASCII, eight bytes at a time
/// (a byte-by-byte scan cost about as much as splitting English text into pieces).
#[inline]
fn first_non_ascii(bytes: &[u8], from: usize) -> Option<usize> {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let rest = &bytes[from..];
    let mut words = rest.chunks_exact(8);
    let mut at = from;
    for word in words.by_ref() {
        let high = u64::from_le_bytes(word.try_into().expect("eight bytes")) & HIGH;
        if high != 0 {
            return Some(at + (high.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&b| b >= 0x80)
        .map(|offset| at + offset)
}

/// [`count_exact`] on one thread.
fn count_serial(text: &str, encoding: Encoding) -> u64 {
    let vocab = Vocab::get(encoding);
    let bytes = text.as_bytes();
    let mut total = 0u64;
    let mut pos = 0;
    while pos < bytes.len() {
        let Some(first) = first_non_ascii(bytes, pos) else {
            return total + vocab.count_ascii(&bytes[pos..]);
        };
        // The stretch with other characters runs from the last cut point before the first
        // non-ASCII byte to the first cut point after it. Only a byte of `CUT_AFTER` can
        // precede a cut: the scans test that first (most bytes of CJK text are not).
        let start = (pos + 1..=first)
            .rev()
            .find(|&p| CUT_AFTER[usize::from(bytes[p - 1])] && is_cut(bytes, p))
            .unwrap_or(pos);
        let end = (first + 1..bytes.len())
            .find(|&p| CUT_AFTER[usize::from(bytes[p - 1])] && is_cut(bytes, p))
            .unwrap_or(bytes.len());
        total += vocab.count_ascii(&bytes[pos..start]);
        total += vocab.count_regex(&text[start..end]);
        pos = end;
    }
    total
}

/// ASCII pieces up to this many bytes that are not a token are merged by
/// [`Vocab::merge_count`] (faster than the byte-pair encoder on them: base64 and identifiers).
const SHORT_PIECE: usize = 16;

/// Pieces with other characters longer than this are cut where no token can cross; the
/// others, and the segments, are merged by [`Vocab::merge_count`] (on longer ones, mostly
/// Chinese words and phrases, the byte-pair encoder is faster).
const CUT_PIECE: usize = 8;

/// Only pieces up to this many bytes are looked up as a whole: longer ones are rarely a token
/// (the byte-pair encoder counts those as 1 too).
const LIKELY_TOKEN: usize = 24;

/// A vocabulary's tokens in open-addressing hash tables, to tell in one probe whether a
/// piece is a single token (then the byte-pair encoder need not run: tiktoken too returns a
/// piece found in the vocabulary as one token).
pub(super) struct Vocab {
    encoding: Encoding,
    tokenizer: &'static Tokenizer,
    /// Tokens of up to [`SHORT_TOKEN`] bytes, most of the vocabulary and nearly every lookup
    /// (pieces and the pairs the merge tries): per slot the token's [`short_key`] and its id.
    /// The key holds the bytes themselves, so a probe is one load and one compare.
    short_slots: Box<[(u64, u32)]>,
    short_shift: u32,
    /// Longer tokens: per slot the high 32 bits of the token's hash and its id + 1 (0: empty);
    /// a matching tag is confirmed by comparing the token's bytes.
    slots: Box<[u64]>,
    mask: usize,
    /// Where pieces with non-ASCII characters can be cut (built on first use: most texts never
    /// need it).
    boundaries: std::sync::OnceLock<TokenBoundaries>,
}

/// Tokens up to this many bytes are keyed by their bytes in [`Vocab::short_slots`].
const SHORT_TOKEN: usize = 7;

/// A piece of 1 to [`SHORT_TOKEN`] bytes as one word: its bytes (little-endian) and its
/// length in the top byte, so that no two pieces share a key and no key is 0.
#[inline(always)]
fn short_key(piece: &[u8]) -> u64 {
    let n = piece.len();
    debug_assert!((1..=SHORT_TOKEN).contains(&n));
    let word = if n >= 4 {
        // Two overlapping four-byte loads; the shared bytes are equal, so `|` is exact.
        let lo = u32::from_le_bytes(piece[..4].try_into().expect("four bytes"));
        let hi = u32::from_le_bytes(piece[n - 4..].try_into().expect("four bytes"));
        u64::from(lo) | (u64::from(hi) << (8 * (n - 4)))
    } else {
        u64::from(piece[0])
            | (u64::from(piece[n / 2]) << (8 * (n / 2)))
            | (u64::from(piece[n - 1]) << (8 * (n - 1)))
    };
    word | ((n as u64) << 56)
}

static VOCAB_O200K: std::sync::OnceLock<Vocab> = std::sync::OnceLock::new();
static VOCAB_CL100K: std::sync::OnceLock<Vocab> = std::sync::OnceLock::new();

fn hash_piece(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in chunks.by_ref() {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        h = (h ^ word).wrapping_mul(K).rotate_left(29);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(word))
            .wrapping_mul(K)
            .rotate_left(29);
    }
    h ^ (h >> 32)
}

/// The home slot of a [`short_key`] in a table of `2^(64 - shift)` slots (Fibonacci hashing:
/// the top bits of the product mix every byte of the key).
#[inline(always)]
fn short_slot(key: u64, shift: u32) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

impl Vocab {
    pub(super) fn get(encoding: Encoding) -> &'static Vocab {
        let cell = match encoding {
            Encoding::O200kBase => &VOCAB_O200K,
            Encoding::Cl100kBase => &VOCAB_CL100K,
        };
        cell.get_or_init(|| build_on_roomy_stack(|| Vocab::build(encoding)))
    }

    fn build(encoding: Encoding) -> Vocab {
        let tokenizer = encoding.tokenizer();
        let n = tokenizer.bpe.num_tokens() as u32;
        let (short, long): (Vec<u32>, Vec<u32>) =
            (0..n).partition(|&id| tokenizer.bpe.token_bytes(id).len() <= SHORT_TOKEN);
        // At most half full: probes stay short (a miss ends at the first empty slot).
        let short_size = (short.len() * 2).next_power_of_two();
        let short_shift = 64 - short_size.trailing_zeros();
        let mut short_slots = vec![(0u64, 0u32); short_size].into_boxed_slice();
        for id in short {
            let key = short_key(tokenizer.bpe.token_bytes(id));
            let mut i = short_slot(key, short_shift);
            while short_slots[i].0 != 0 {
                i = (i + 1) & (short_size - 1);
            }
            short_slots[i] = (key, id);
        }
        let size = (long.len() * 2).next_power_of_two();
        let mask = size - 1;
        let mut slots = vec![0u64; size].into_boxed_slice();
        for id in long {
            let hash = hash_piece(tokenizer.bpe.token_bytes(id));
            let mut i = hash as usize & mask;
            while slots[i] != 0 {
                i = (i + 1) & mask;
            }
            slots[i] = (hash & 0xFFFF_FFFF_0000_0000) | u64::from(id + 1);
        }
        Vocab {
            encoding,
            tokenizer,
            short_slots,
            short_shift,
            slots,
            mask,
            boundaries: std::sync::OnceLock::new(),
        }
    }

    /// The rank (token id) of `piece` if it is a token.
    #[inline(always)]
    pub(super) fn rank(&self, piece: &[u8]) -> Option<u32> {
        if (1..=SHORT_TOKEN).contains(&piece.len()) {
            let key = short_key(piece);
            let mask = self.short_slots.len() - 1;
            let mut i = short_slot(key, self.short_shift);
            loop {
                let (slot_key, id) = self.short_slots[i];
                if slot_key == key {
                    return Some(id);
                }
                if slot_key == 0 {
                    return None;
                }
                i = (i + 1) & mask;
            }
        }
        self.long_rank(piece)
    }

    /// [`Vocab::rank`] of a piece longer than [`SHORT_TOKEN`] bytes.
    fn long_rank(&self, piece: &[u8]) -> Option<u32> {
        let hash = hash_piece(piece);
        let tag = hash & 0xFFFF_FFFF_0000_0000;
        let mut i = hash as usize & self.mask;
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return None;
            }
            let id = (slot as u32).wrapping_sub(1);
            if slot & 0xFFFF_FFFF_0000_0000 == tag && self.tokenizer.bpe.token_bytes(id) == piece {
                return Some(id);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The token count of one pre-tokenizer piece (whole UTF-8 characters).
    fn count_piece(&self, piece: &[u8]) -> u64 {
        if piece.len() > CUT_PIECE && !piece.is_ascii() {
            // Chinese and Japanese pieces run to dozens of characters; cut where no token can
            // cross, most segments are one character or a two-character word.
            let boundaries = self.boundaries.get_or_init(|| {
                let bpe = &self.tokenizer.bpe;
                TokenBoundaries::build((0..bpe.num_tokens() as u32).map(|id| bpe.token_bytes(id)))
            });
            boundaries.count_segments(piece, |segment| self.count_segment(segment))
        } else {
            self.count_segment(piece)
        }
    }

    /// [`Vocab::count_piece`] without cutting: a token, a short piece to merge, or the
    /// byte-pair encoder.
    fn count_segment(&self, piece: &[u8]) -> u64 {
        self.count_segment_of::<false>(piece)
    }

    /// [`Vocab::count_segment`]; `ASCII`: the caller knows the piece is ASCII.
    #[inline(always)]
    fn count_segment_of<const ASCII: bool>(&self, piece: &[u8]) -> u64 {
        if piece.len() == 1 || (piece.len() <= LIKELY_TOKEN && self.rank(piece).is_some()) {
            1
        } else if piece.len() <= CUT_PIECE
            || (piece.len() <= SHORT_PIECE && (ASCII || piece.is_ascii()))
        {
            self.merge_count(piece)
        } else {
            self.tokenizer.bpe.count(piece) as u64
        }
    }

    /// Byte-pair merging as tiktoken does it (merge the adjacent pair of lowest rank until no
    /// pair is a token), for a short piece: no allocation, a few rank lookups.
    fn merge_count(&self, piece: &[u8]) -> u64 {
        let n = piece.len();
        if n < 2 {
            return n as u64;
        }
        // Parts as a list over their first byte, in place (nothing shifts when two merge):
        // `next[i]` is where the part starting at `i` ends, `ranks[i]` the rank of it merged
        // with the next part (`u32::MAX`: no token, the last part, or merged away), and
        // `prev[i]` the start of the part before.
        let mut next = [0u8; SHORT_PIECE];
        let mut prev = [0u8; SHORT_PIECE];
        let mut ranks = [u32::MAX; SHORT_PIECE];
        for i in 0..n {
            next[i] = i as u8 + 1;
            prev[i] = (i as u8).wrapping_sub(1);
        }
        let rank_of = |from: usize, to: usize| self.rank(&piece[from..to]).unwrap_or(u32::MAX);
        for (i, rank) in ranks.iter_mut().enumerate().take(n - 1) {
            *rank = rank_of(i, i + 2);
        }
        let mut parts = n;
        loop {
            // The lowest rank, the leftmost of equals (as tiktoken's `byte_pair_merge`).
            let mut best = 0;
            let mut low = ranks[0];
            for (i, &rank) in ranks.iter().enumerate().take(n - 1).skip(1) {
                if rank < low {
                    low = rank;
                    best = i;
                }
            }
            if low == u32::MAX {
                return parts as u64;
            }
            // Merge the part at `best` with the next one.
            let right = usize::from(next[best]);
            let end = usize::from(next[right]);
            next[best] = end as u8;
            ranks[right] = u32::MAX;
            parts -= 1;
            if end < n {
                prev[end] = best as u8;
                ranks[best] = rank_of(best, usize::from(next[end]));
            } else {
                ranks[best] = u32::MAX;
            }
            if best > 0 {
                let before = usize::from(prev[best]);
                ranks[before] = rank_of(before, end);
            }
        }
    }

    fn count_ascii(&self, text: &[u8]) -> u64 {
        let mut total = 0;
        // ASCII pieces are never cut (`count_piece`): straight to the segment counter.
        split_ascii(text, self.encoding, |piece| {
            total += self.count_segment_of::<true>(piece)
        });
        total
    }

    fn count_regex(&self, text: &str) -> u64 {
        self.tokenizer
            .split(text)
            .map(|piece| self.count_piece(piece.as_bytes()))
            .sum()
    }
}

/// The classes of ASCII characters for [`split_ascii`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Lower,
    Upper,
    Digit,
    /// Space, vertical tab, form feed.
    Space,
    Tab,
    Newline,
    /// Everything else, control characters included.
    Punct,
}

const fn ascii_classes() -> [Class; 256] {
    let mut table = [Class::Punct; 256];
    let mut i = 0;
    while i < 128 {
        let b = i as u8;
        table[i] = if b.is_ascii_lowercase() {
            Class::Lower
        } else if b.is_ascii_uppercase() {
            Class::Upper
        } else if b.is_ascii_digit() {
            Class::Digit
        } else if b == b' ' || b == 0x0B || b == 0x0C {
            Class::Space
        } else if b == b'\t' {
            Class::Tab
        } else if b == b'\n' || b == b'\r' {
            Class::Newline
        } else {
            Class::Punct
        };
        i += 1;
    }
    table
}

static ASCII_CLASSES: [Class; 256] = ascii_classes();

/// Calls `emit` with each pre-tokenizer piece of the ASCII `text`, as the encoding's regex
/// cuts it (tiktoken's patterns, in their order: the first alternative that matches at a
/// position wins):
///
/// - o200k_base: `[^\r\n\p{L}\p{N}]?\p{Lu}*\p{Ll}+'s?` | `[^\r\n\p{L}\p{N}]?\p{Lu}+\p{Ll}*'s?`
///   (`'s` standing for the case-insensitive contractions `'s 't 're 've 'm 'll 'd`) |
///   `\p{N}{1,3}` | ` ?[^\s\p{L}\p{N}]+[\r\n/]*` | `\s*[\r\n]+` | `\s+(?!\S)` | `\s+`;
/// - cl100k_base: the contractions alone | `[^\r\n\p{L}\p{N}]?\p{L}+` | `\p{N}{1,3}` |
///   ` ?[^\s\p{L}\p{N}]+[\r\n]*` | `\s*[\r\n]+` | `\s+(?!\S)` | `\s+`.
///
/// In ASCII, letters are `A-Z a-z`, digits `0-9`, whitespace `\t \n \x0b \x0c \r` and space.
fn split_ascii(text: &[u8], encoding: Encoding, mut emit: impl FnMut(&[u8])) {
    let o200k = encoding == Encoding::O200kBase;
    let len = text.len();
    let class_at = |i: usize| text.get(i).map(|&b| ASCII_CLASSES[usize::from(b)]);
    let mut i = 0;
    while i < len {
        let c = text[i];
        let class = ASCII_CLASSES[usize::from(c)];
        let next_is_letter = matches!(class_at(i + 1), Some(Class::Lower | Class::Upper));
        let end = if !o200k && c == b'\'' && contraction(text, i) > 0 {
            i + contraction(text, i)
        } else if matches!(class, Class::Lower | Class::Upper)
            || (next_is_letter && !matches!(class, Class::Newline | Class::Digit))
        {
            // A letter piece with an optional prefix (here: `class` is neither letter, digit nor
            // newline when the piece starts one character later).
            let start = if matches!(class, Class::Lower | Class::Upper) {
                i
            } else {
                i + 1
            };
            if o200k {
                let upper = text[start..]
                    .iter()
                    .take_while(|b| b.is_ascii_uppercase())
                    .count();
                let lower = text[start + upper..]
                    .iter()
                    .take_while(|b| b.is_ascii_lowercase())
                    .count();
                let end = start + upper + lower;
                end + contraction(text, end)
            } else {
                start
                    + text[start..]
                        .iter()
                        .take_while(|b| b.is_ascii_alphabetic())
                        .count()
            }
        } else if class == Class::Digit {
            i + text[i..]
                .iter()
                .take(3)
                .take_while(|b| b.is_ascii_digit())
                .count()
        } else if class == Class::Punct || (c == b' ' && class_at(i + 1) == Some(Class::Punct)) {
            let start = if c == b' ' { i + 1 } else { i };
            let mut end = start
                + text[start..]
                    .iter()
                    .take_while(|&&b| ASCII_CLASSES[usize::from(b)] == Class::Punct)
                    .count();
            end += text[end..]
                .iter()
                .take_while(|&&b| b == b'\r' || b == b'\n' || (o200k && b == b'/'))
                .count();
            end
        } else {
            // Whitespace: up to the last newline of the run (`\s*[\r\n]+`), else the run less
            // its last character when a non-space follows (`\s+(?!\S)`), else the run.
            let run = text[i..]
                .iter()
                .take_while(|&&b| {
                    matches!(
                        ASCII_CLASSES[usize::from(b)],
                        Class::Space | Class::Tab | Class::Newline
                    )
                })
                .count();
            let ws = &text[i..i + run];
            if let Some(last_newline) = ws.iter().rposition(|&b| b == b'\n' || b == b'\r') {
                i + last_newline + 1
            } else if i + run == len || run == 1 {
                i + run
            } else {
                i + run - 1
            }
        };
        emit(&text[i..end]);
        i = end;
    }
}

/// The length of the contraction (`'s 't 're 've 'm 'll 'd`, any case) at `i`, or 0.
fn contraction(text: &[u8], i: usize) -> usize {
    if text.get(i) != Some(&b'\'') {
        return 0;
    }
    let lower = |k: usize| text.get(i + k).map(u8::to_ascii_lowercase);
    match (lower(1), lower(2)) {
        (Some(b's' | b't' | b'm' | b'd'), _) => 2,
        (Some(b'r' | b'v'), Some(b'e')) => 3,
        (Some(b'l'), Some(b'l')) => 3,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token_count::test_support::*;

    #[test]
    fn token_count_known_vectors() {
        for (text, o200k, cl100k) in [
            ("", 0, 0),
            ("hello world", 2, 2),
            ("tiktoken is great!", 6, 6),
            ("お誕生日おめでとう", 8, 9),
        ] {
            assert_eq!(count_exact(text, Encoding::O200kBase), o200k, "{text:?}");
            assert_eq!(count_exact(text, Encoding::Cl100kBase), cl100k, "{text:?}");
        }
    }

    #[test]
    fn token_count_ascii_splitter_matches_the_regex() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for encoding in Encoding::ALL {
            let tokenizer = encoding.tokenizer();
            for _ in 0..3000 {
                let text = rng.text(ASCII_ALPHABET, 60);
                let mut pieces = Vec::new();
                split_ascii(text.as_bytes(), encoding, |p| pieces.push(p.to_vec()));
                let expected: Vec<Vec<u8>> = tokenizer
                    .split(&text)
                    .map(|p| p.as_bytes().to_vec())
                    .collect();
                assert_eq!(pieces, expected, "{encoding:?} {text:?}");
            }
        }
    }

    #[test]
    fn token_count_matches_the_plain_encoder_on_mixed_text() {
        let mut rng = Rng(42);
        for encoding in Encoding::ALL {
            for _ in 0..2000 {
                let text = rng.text(MIXED_ALPHABET, 80);
                let expected = encoding.tokenizer().count(text.as_str()) as u64;
                assert_eq!(
                    count_exact(&text, encoding),
                    expected,
                    "{encoding:?} {text:?}"
                );
            }
        }
    }

    #[test]
    fn token_count_cut_points_are_piece_boundaries() {
        let mut rng = Rng(7);
        for (encoding, alphabet) in Encoding::ALL
            .into_iter()
            .flat_map(|e| [(e, ASCII_ALPHABET), (e, MIXED_ALPHABET)])
        {
            let tokenizer = encoding.tokenizer();
            for _ in 0..800 {
                let text = rng.text(alphabet, 80);
                let whole = tokenizer.count(text.as_str());
                for pos in (1..text.len()).filter(|&p| is_cut(text.as_bytes(), p)) {
                    let parts = tokenizer.count(&text[..pos]) + tokenizer.count(&text[pos..]);
                    assert_eq!(parts, whole, "{encoding:?} {text:?} cut at {pos}");
                }
            }
        }
    }

    #[test]
    fn token_count_parallel_chunks_add_up() {
        let line = "fn main() { println!(\"héllo\"); }\nlet x = 42; // 中文\n";
        let text = line.repeat(PARALLEL_MIN_BYTES / line.len() + 100);
        let chunks = split_at_line_starts(&text, 4);
        assert!(chunks.len() > 1);
        assert_eq!(chunks.concat(), text);
        for encoding in Encoding::ALL {
            let serial = encoding.tokenizer().count(text.as_str()) as u64;
            assert_eq!(count_exact(&text, encoding), serial);
        }
    }

    #[test]
    fn token_count_vocab_finds_every_token_and_nothing_else() {
        for encoding in Encoding::ALL {
            let vocab = Vocab::get(encoding);
            let bpe = &vocab.tokenizer.bpe;
            for id in 0..bpe.num_tokens() as u32 {
                assert_eq!(vocab.rank(bpe.token_bytes(id)), Some(id), "token {id}");
            }
            // Pieces of every length around the short/long boundary, with NULs (which the
            // short keys pad with) and bytes that are not UTF-8.
            let mut rng = Rng(7);
            for _ in 0..20_000 {
                let len = (rng.next() % 10 + 1) as usize;
                let piece: Vec<u8> = (0..len)
                    .map(|_| match rng.next() % 4 {
                        0 => 0,
                        1 => b"ab e.\n"[(rng.next() % 6) as usize],
                        _ => rng.next() as u8,
                    })
                    .collect();
                assert_eq!(
                    vocab.rank(&piece).is_some(),
                    bpe.count(&piece) == 1,
                    "{piece:?}"
                );
            }
        }
    }

    /// The bytes of a token made whole: a token starting inside a character gets that
    /// character's lead byte (and continuation bytes) in front, one ending inside a character
    /// gets continuation bytes behind; `None` if no valid UTF-8 results.
    fn complete_token(token: &[u8]) -> Option<String> {
        let head = token
            .iter()
            .take_while(|&&b| (0x80..0xC0).contains(&b))
            .count();
        for lead in [
            &[0xC3u8][..],
            &[0xE4, 0xB8],
            &[0xE4],
            &[0xF0, 0x9F, 0x98],
            &[0xF0, 0x9F],
        ] {
            let mut bytes = if head > 0 { lead.to_vec() } else { Vec::new() };
            bytes.extend_from_slice(token);
            for _ in 0..3 {
                if let Ok(text) = std::str::from_utf8(&bytes) {
                    return Some(text.to_owned());
                }
                bytes.push(0x80);
            }
        }
        None
    }

    #[test]
    fn token_count_cut_pieces_match_the_encoder() {
        for encoding in Encoding::ALL {
            let vocab = Vocab::get(encoding);
            let bpe = &vocab.tokenizer.bpe;
            let mut rng = Rng(1234);
            // Random pieces of Chinese, Japanese, Korean, Cyrillic, accented Latin, emoji and
            // ASCII, and real CJK sentences.
            let alphabet = [
                "中", "国", "我们", "的", "是", "了", "人", "日本", "語", "の", "は", "テ", "ス",
                "ト", "です", "한", "국", "어", "는", "я", "не", "Ω", "é", "ü", "😀", "👍", "a",
                "b", " ", "1", "。", "、", "「", "\u{3000}",
            ];
            for _ in 0..3000 {
                let piece = rng.text(&alphabet, 30);
                assert_eq!(
                    vocab.count_piece(piece.as_bytes()),
                    bpe.count(piece.as_bytes()) as u64,
                    "{encoding:?} {piece:?}"
                );
            }
            // Every token that crosses a character boundary starting or ending inside a
            // character (the boundaries told by parts of characters), made whole and put
            // between other characters.
            let mut checked = 0;
            for id in 0..bpe.num_tokens() as u32 {
                let token = bpe.token_bytes(id);
                let partial_start = token.first().is_some_and(|&b| (0x80..0xC0).contains(&b));
                let partial_end = std::str::from_utf8(token).is_err();
                let crosses = token[1..].iter().any(|&b| !(0x80..0xC0).contains(&b));
                if !(crosses && (partial_start || partial_end)) {
                    continue;
                }
                let Some(whole) = complete_token(token) else {
                    continue;
                };
                for (before, after) in [("", ""), ("中", "国"), ("の", "😀"), ("a", "é")] {
                    let piece = format!("{before}{whole}{after}");
                    assert_eq!(
                        vocab.count_piece(piece.as_bytes()),
                        bpe.count(piece.as_bytes()) as u64,
                        "{encoding:?} token {id} in {piece:?}"
                    );
                }
                checked += 1;
            }
            assert!(
                checked > 20,
                "{encoding:?}: only {checked} partial tokens checked"
            );
        }
    }

    #[test]
    fn token_count_cut_points_split_cjk_pieces_but_never_a_token() {
        let vocab = Vocab::get(Encoding::O200kBase);
        let bpe = &vocab.tokenizer.bpe;
        let boundaries =
            TokenBoundaries::build((0..bpe.num_tokens() as u32).map(|id| bpe.token_bytes(id)));
        let sentence = "我们今天去了北京的博物馆看展览然后在附近的餐厅吃了晚饭";
        let mut segments = Vec::new();
        let total = boundaries.count_segments(sentence.as_bytes(), |segment| {
            segments.push(
                std::str::from_utf8(segment)
                    .expect("whole characters")
                    .to_owned(),
            );
            bpe.count(segment) as u64
        });
        assert_eq!(total, bpe.count(sentence.as_bytes()) as u64);
        assert_eq!(segments.concat(), sentence);
        assert!(segments.len() > 5, "{segments:?}");
        // A two-character token is never cut.
        let word = (0..bpe.num_tokens() as u32)
            .filter_map(|id| std::str::from_utf8(bpe.token_bytes(id)).ok())
            .find(|t| {
                t.chars().count() == 2 && t.chars().all(|c| ('\u{4E00}'..='\u{9FFF}').contains(&c))
            })
            .expect("o200k has two-character Chinese tokens");
        let mut pieces = 0;
        boundaries.count_segments(word.as_bytes(), |_| {
            pieces += 1;
            1
        });
        assert_eq!(pieces, 1, "{word:?}");
    }

    #[test]
    fn token_count_short_piece_merging_matches_the_encoder() {
        let vocab = Vocab::get(Encoding::O200kBase);
        let mut rng = Rng(99);
        let alphabet = ["q", "Z", "x", "7", "k", "J", "w", "v"];
        for _ in 0..5000 {
            let piece = rng.text(&alphabet, SHORT_PIECE as u64);
            let expected = vocab.tokenizer.bpe.count(piece.as_bytes()) as u64;
            assert_eq!(vocab.count_piece(piece.as_bytes()), expected, "{piece:?}");
        }
    }
}
