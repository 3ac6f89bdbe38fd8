//! Exact token counts with OpenAI's `o200k_base` and `cl100k_base` encodings, a calibrated
//! fast estimator, and the rule for what of a message counts.
//!
//! Exact counts ([`count_exact`]) use the vocabularies and the byte-pair encoder of the
//! `bpe-openai` crate (GitHub's linear-time encoder), which compiles both vocabularies into the
//! binary: nothing is downloaded at run time. Results are those of tiktoken's `encode_ordinary`
//! (special-token strings such as `<|endoftext|>` are counted as plain text). ASCII stretches
//! are pre-tokenized by a hand-written splitter, pieces that are a token count 1 after one hash
//! probe, short pieces are merged without allocating; see [`count_exact`]. The first count with
//! an encoding loads its vocabulary (about 0.1 s).
//!
//! The calibrated estimator ([`estimate`]) runs no byte-pair encoding: it reads the text in
//! 64-byte blocks of bit masks (letters, digits, blanks, newlines, punctuation, non-ASCII),
//! counts what the pre-tokenizer would cut (letter pieces split at lower→upper case changes
//! and their lengths, prefixed pieces, punctuation runs, digit groups, whitespace runs) and,
//! per non-ASCII character, its class (Han, kana, Hangul, CJK punctuation, other letter,
//! symbol), whether it is a token by itself and whether it forms a token with the previous
//! character. Those counts ([`FEATURE_NAMES`]) are weighed with per-encoding weights fitted by
//! least squares on real transcripts and CJK text (`benches/test_token_count.py` fits them;
//! `benches/README.md` gives the accuracy per kind of text).
//!
//! What of a message counts ([`message_tokens`]): the text a model reads, each string counted
//! on its own and summed, with no per-message framing tokens:
//! - `content` as a string, or its blocks: `text` (the text), `thinking` (the thinking text),
//!   tool calls (`toolCall`, `toolUse`, `functionCall`: the name plus the arguments — `arguments`,
//!   else `input`, else `args` — as compact JSON like `JSON.stringify`), `image` (see
//!   [`image_tokens`]); other blocks count nothing;
//! - `bashExecution`: `command` and `output`; `branchSummary` / `compactionSummary`: `summary`.
//!
//! Images are charged by their dimensions, read from the base64 header (PNG, JPEG, GIF, WebP)
//! without decoding it, never by the base64 length: see [`image_tokens`].

use rayon::prelude::*;
use std::borrow::Cow;

use serde_json::value::RawValue;

use crate::images::probe_base64_image;
use crate::json::{parse_value, raw_as_str, to_js_string, RawObject};
use crate::message::PAIRING_TOOL_CALL_TYPES;
use crate::transcript::{Message, Transcript};

/// A byte-pair encoding whose vocabulary ships with clawctx.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// GPT-4o, GPT-4.1, o-series, GPT-5.
    O200kBase,
    /// GPT-4, GPT-3.5-turbo.
    Cl100kBase,
}

impl Encoding {
    pub const ALL: [Encoding; 2] = [Encoding::O200kBase, Encoding::Cl100kBase];

    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    pub fn from_name(name: &str) -> Option<Encoding> {
        Encoding::ALL.into_iter().find(|e| e.name() == name)
    }

    fn tokenizer(self) -> &'static bpe_openai::Tokenizer {
        match self {
            Encoding::O200kBase => bpe_openai::o200k_base(),
            Encoding::Cl100kBase => bpe_openai::cl100k_base(),
        }
    }

    /// The byte sequence of every ordinary token, by rank (token id).
    pub fn vocabulary(self) -> impl ExactSizeIterator<Item = &'static [u8]> {
        let bpe = &self.tokenizer().bpe;
        (0..bpe.num_tokens() as u32).map(move |id| bpe.token_bytes(id))
    }

    fn weights(self) -> &'static [f64; FEATURES] {
        match self {
            Encoding::O200kBase => &O200K_WEIGHTS,
            Encoding::Cl100kBase => &CL100K_WEIGHTS,
        }
    }
}

/// How tokens are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Estimator {
    /// Byte-pair encoding: the count the model's tokenizer gives.
    #[default]
    Exact,
    /// The calibrated estimator ([`estimate`]).
    Calibrated,
}

impl Estimator {
    pub const ALL: [Estimator; 2] = [Estimator::Exact, Estimator::Calibrated];

    pub fn name(self) -> &'static str {
        match self {
            Estimator::Exact => "exact",
            Estimator::Calibrated => "calibrated",
        }
    }

    pub fn from_name(name: &str) -> Option<Estimator> {
        Estimator::ALL.into_iter().find(|e| e.name() == name)
    }
}

/// An encoding and an estimator: what [`TokenCounter::text`] and friends count with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TokenCounter {
    pub encoding: Encoding,
    pub estimator: Estimator,
}

impl TokenCounter {
    pub fn new(encoding: Encoding, estimator: Estimator) -> TokenCounter {
        TokenCounter {
            encoding,
            estimator,
        }
    }

    /// The tokens of one text.
    pub fn text(self, text: &str) -> u64 {
        match self.estimator {
            Estimator::Exact => count_exact(text, self.encoding),
            Estimator::Calibrated => estimate(text, self.encoding),
        }
    }

    /// The tokens of one message (see the module documentation for what counts).
    pub fn message(self, message: &str) -> u64 {
        message_tokens(message, self)
    }

    /// The tokens of each message of a transcript.
    pub fn transcript(self, transcript: &Transcript) -> Vec<u64> {
        transcript
            .messages()
            .iter()
            .map(|m: &Message| message_tokens(m.as_str(), self))
            .collect()
    }
}

// ---- exact counts ---------------------------------------------------------------------------

/// Texts at least this long are split at safe points and counted on several threads.
const PARALLEL_MIN_BYTES: usize = 1 << 20;

/// The exact token count of `text` (tiktoken's `len(encode_ordinary(text))`). Linear in the
/// length of the text, also on long inputs without whitespace (base64, minified JSON).
///
/// ASCII stretches are cut into pre-tokenizer pieces by a hand-written splitter
/// (`split_ascii`, the encoding's regex specialised to ASCII); stretches with other
/// characters go through `bpe-openai`'s regex. A piece that is itself a token counts 1 after
/// one hash lookup; only the others run the byte-pair encoder. Texts of 1 MB and more are cut
/// at line starts (where no piece can cross) and counted on all cores.
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

/// [`count_exact`] on one thread.
fn count_serial(text: &str, encoding: Encoding) -> u64 {
    let vocab = Vocab::get(encoding);
    let bytes = text.as_bytes();
    let mut total = 0u64;
    let mut pos = 0;
    while pos < bytes.len() {
        let Some(offset) = bytes[pos..].iter().position(|&b| b >= 0x80) else {
            return total + vocab.count_ascii(&bytes[pos..]);
        };
        // The stretch with other characters runs from the last cut point before the first
        // non-ASCII byte to the first cut point after it.
        let first = pos + offset;
        let start = (pos + 1..=first)
            .rev()
            .find(|&p| is_cut(bytes, p))
            .unwrap_or(pos);
        let end = (first + 1..bytes.len())
            .find(|&p| is_cut(bytes, p))
            .unwrap_or(bytes.len());
        total += vocab.count_ascii(&bytes[pos..start]);
        total += vocab.count_regex(&text[start..end]);
        pos = end;
    }
    total
}

/// Pieces up to this many bytes that are not a token are merged by [`Vocab::merge_count`].
const SHORT_PIECE: usize = 8;

/// Only pieces up to this many bytes are looked up as a whole: longer ones are rarely a token
/// (the byte-pair encoder counts those as 1 too).
const LIKELY_TOKEN: usize = 24;

/// A vocabulary's tokens in open-addressing hash tables, to tell in one probe whether a
/// piece is a single token (then the byte-pair encoder need not run: tiktoken too returns a
/// piece found in the vocabulary as one token).
struct Vocab {
    encoding: Encoding,
    tokenizer: &'static bpe_openai::Tokenizer,
    /// Tokens of up to [`SHORT_TOKEN`] bytes, most of the vocabulary and nearly every lookup
    /// (pieces and the pairs the merge tries): per slot the token's [`short_key`] and its id.
    /// The key holds the bytes themselves, so a probe is one load and one compare.
    short_slots: Box<[(u64, u32)]>,
    short_shift: u32,
    /// Longer tokens: per slot the high 32 bits of the token's hash and its id + 1 (0: empty);
    /// a matching tag is confirmed by comparing the token's bytes.
    slots: Box<[u64]>,
    mask: usize,
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
    fn get(encoding: Encoding) -> &'static Vocab {
        let cell = match encoding {
            Encoding::O200kBase => &VOCAB_O200K,
            Encoding::Cl100kBase => &VOCAB_CL100K,
        };
        cell.get_or_init(|| Vocab::build(encoding))
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
        }
    }

    /// The rank (token id) of `piece` if it is a token.
    #[inline(always)]
    fn rank(&self, piece: &[u8]) -> Option<u32> {
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

    fn count_piece(&self, piece: &[u8]) -> u64 {
        if piece.len() == 1 || (piece.len() <= LIKELY_TOKEN && self.rank(piece).is_some()) {
            1
        } else if piece.len() <= SHORT_PIECE {
            self.merge_count(piece)
        } else {
            self.tokenizer.bpe.count(piece) as u64
        }
    }

    /// Byte-pair merging as tiktoken does it (merge the adjacent pair of lowest rank until no
    /// pair is a token), for a short piece: no allocation, a few rank lookups.
    fn merge_count(&self, piece: &[u8]) -> u64 {
        let n = piece.len();
        // Part boundaries and the rank of each part merged with the next.
        let mut bounds = [0u8; SHORT_PIECE + 1];
        let mut ranks = [u32::MAX; SHORT_PIECE];
        for (i, b) in bounds.iter_mut().enumerate().take(n + 1) {
            *b = i as u8;
        }
        let mut parts = n;
        let pair_rank = |bounds: &[u8], i: usize, parts: usize| -> u32 {
            if i + 1 < parts {
                let (a, b) = (usize::from(bounds[i]), usize::from(bounds[i + 2]));
                self.rank(&piece[a..b]).unwrap_or(u32::MAX)
            } else {
                u32::MAX
            }
        };
        for (i, rank) in ranks.iter_mut().enumerate().take(parts.saturating_sub(1)) {
            *rank = pair_rank(&bounds, i, parts);
        }
        loop {
            let (best, &rank) = ranks[..parts]
                .iter()
                .enumerate()
                .min_by_key(|&(_, r)| *r)
                .expect("at least one part");
            if rank == u32::MAX {
                return parts as u64;
            }
            // Merge part `best` with the next one.
            bounds.copy_within(best + 2..=parts, best + 1);
            ranks.copy_within(best + 1..parts, best);
            parts -= 1;
            ranks[parts] = u32::MAX;
            ranks[best] = pair_rank(&bounds, best, parts);
            if best > 0 {
                ranks[best - 1] = pair_rank(&bounds, best - 1, parts);
            }
        }
    }

    fn count_ascii(&self, text: &[u8]) -> u64 {
        let mut total = 0;
        split_ascii(text, self.encoding, |piece| {
            total += self.count_piece(piece)
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

// ---- images ---------------------------------------------------------------------------------

/// Tokens of an image whose dimensions cannot be read (not plain base64, not PNG, JPEG, GIF or
/// WebP, a URL): the most [`image_tokens`] ever charges (2 × 4 tiles).
pub const UNREADABLE_IMAGE_TOKENS: u64 = 85 + 170 * 8;

/// OpenAI's high-detail image rule (GPT-4o, GPT-4.1, GPT-4 Turbo: the models of both
/// encodings): the image is fitted into 2048 × 2048, then scaled down so that its shorter side
/// is at most 768 px (never up), and costs 85 tokens plus 170 per 512 × 512 tile it covers.
pub fn image_tokens(width: u32, height: u32) -> u64 {
    if width == 0 || height == 0 {
        return 0;
    }
    let (mut w, mut h) = (f64::from(width), f64::from(height));
    let fit = (2048.0 / w.max(h)).min(1.0);
    w *= fit;
    h *= fit;
    let short = (768.0 / w.min(h)).min(1.0);
    w = (w * short).round().max(1.0);
    h = (h * short).round().max(1.0);
    let tiles = (w / 512.0).ceil() as u64 * (h / 512.0).ceil() as u64;
    85 + 170 * tiles
}

/// Tokens of an image given as base64 (optionally a `data:` URL): its dimensions from the
/// header, else [`UNREADABLE_IMAGE_TOKENS`].
pub fn base64_image_tokens(data: &str) -> u64 {
    let data = data.trim();
    let payload = match data.strip_prefix("data:") {
        Some(url) => url.split_once(',').map_or("", |(_, p)| p),
        None => data,
    };
    probe_base64_image(payload).map_or(UNREADABLE_IMAGE_TOKENS, |p| image_tokens(p.width, p.height))
}

// ---- messages -------------------------------------------------------------------------------

fn raw_str(raw: Option<&RawValue>) -> Option<Cow<'_, str>> {
    raw.and_then(raw_as_str)
}

/// The tokens of one message given as JSON text (see the module documentation). Text that is
/// not a JSON object counts 0.
pub fn message_tokens(message: &str, counter: TokenCounter) -> u64 {
    let Ok(obj) = RawObject::parse(message) else {
        return 0;
    };
    let text = |raw: Option<&RawValue>| raw_str(raw).map_or(0, |s| counter.text(&s));
    match obj.get_str("role").as_deref() {
        Some("bashExecution") => text(obj.get("command")) + text(obj.get("output")),
        Some("branchSummary" | "compactionSummary") => text(obj.get("summary")),
        _ => content_tokens(obj.get("content"), counter),
    }
}

fn content_tokens(content: Option<&RawValue>, counter: TokenCounter) -> u64 {
    let Some(content) = content else { return 0 };
    if let Some(s) = raw_as_str(content) {
        return counter.text(&s);
    }
    let Ok(blocks) = serde_json::from_str::<Vec<&RawValue>>(content.get()) else {
        return 0;
    };
    blocks.iter().map(|b| block_tokens(b, counter)).sum()
}

fn block_tokens(block: &RawValue, counter: TokenCounter) -> u64 {
    let Ok(obj) = RawObject::parse(block.get()) else {
        return 0;
    };
    let text = |raw: Option<&RawValue>| raw_str(raw).map_or(0, |s| counter.text(&s));
    match obj.get_str("type").as_deref() {
        Some("text") => text(obj.get("text")),
        Some("thinking") => text(obj.get("thinking")),
        Some("image") => {
            let source = obj
                .get("source")
                .and_then(|s| RawObject::parse(s.get()).ok());
            match raw_str(obj.get("data")).or_else(|| source.and_then(|s| s.get_str("data"))) {
                Some(data) => base64_image_tokens(&data),
                None => UNREADABLE_IMAGE_TOKENS,
            }
        }
        Some(t) if PAIRING_TOOL_CALL_TYPES.contains(&t) => {
            let arguments = ["arguments", "input", "args"]
                .iter()
                .find_map(|k| obj.get(k))
                .map_or(0, |raw| {
                    let json = parse_value(raw.get())
                        .map_or_else(|_| raw.get().to_owned(), |v| to_js_string(&v));
                    counter.text(&json)
                });
            text(obj.get("name")) + arguments
        }
        _ => 0,
    }
}

// ---- calibrated estimator -------------------------------------------------------------------

/// The counts the calibrated estimator weighs, in [`text_features`] order. In the names, a
/// "piece" is a letter run cut where a lower-case letter is followed by an upper-case one (as
/// o200k's pre-tokenizer cuts), `offN` counts the letters at offset N or more in their piece
/// (`Σ max(0, length − N)`), "prefixed" pieces follow a character their pre-tokenizer piece
/// starts with, `ws` is spaces and tabs, and the last twelve count non-ASCII characters.
pub const FEATURE_NAMES: [&str; FEATURES] = [
    "letter_pieces",
    "off1",
    "off2",
    "off3",
    "off10",
    "b64_deep",
    "camel",
    "space_prefixed",
    "tab_prefixed",
    "punct_prefixed",
    "bs_long",
    "punct_runs",
    "space_punct",
    "punct_long",
    "digits",
    "digit_runs",
    "digit_off3",
    "newline_runs_free",
    "ws_long_letter",
    "ws_long_other",
    "ws",
    "ws_off1",
    "ws_off15",
    "ws_lone",
    "letters",
    "upper",
    "han",
    "kana",
    "hangul",
    "cjk_punct",
    "other_letters",
    "symbols",
    "astral",
    "cjk_pairs",
    "cjk_multi",
    "high_space",
    "other_multi",
    "repeat",
];

pub const FEATURES: usize = 38;

/// Per-encoding weights of [`FEATURE_NAMES`], fitted by least squares on the training split
/// (`python benches/test_token_count.py fit`).
const O200K_WEIGHTS: [f64; FEATURES] = [
    0.584252486158316,    // letter_pieces
    -0.09875952901244865, // off1
    -0.6208234368325214,  // off2
    0.24808040543924825,  // off3
    0.3562582780482975,   // off10
    0.09898240686798533,  // b64_deep
    -0.48522872194928024, // camel
    -1.3736021831120266,  // space_prefixed
    -1.3738800005481344,  // tab_prefixed
    -1.1108971360640298,  // punct_prefixed
    1.343465546067831,    // bs_long
    1.022128393579902,    // punct_runs
    -0.9176026575378989,  // space_punct
    0.02545532919123324,  // punct_long
    -0.29012739812959515, // digits
    1.7379605257338742,   // digit_runs
    0.6296168706730791,   // digit_off3
    0.8374870424391546,   // newline_runs_free
    1.1134596228153737,   // ws_long_letter
    1.1766224282787674,   // ws_long_other
    1.0304373276188012,   // ws
    -1.1262171068161955,  // ws_off1
    0.11758792160731324,  // ws_off15
    0.1392727809289077,   // ws_lone
    0.4854929571456563,   // letters
    0.11783600985686978,  // upper
    0.9301975314463633,   // han
    0.9377073090681992,   // kana
    0.5752612796526515,   // hangul
    1.260880331059473,    // cjk_punct
    -0.599230226809456,   // other_letters
    0.9230764358222421,   // symbols
    3.197980472453764,    // astral
    -1.0066782496085342,  // cjk_pairs
    1.9740220963019686,   // cjk_multi
    -0.3995696583007836,  // high_space
    4.814549298530936,    // other_multi
    -0.8286419526474629,  // repeat
];

const CL100K_WEIGHTS: [f64; FEATURES] = [
    0.5375969035287071,    // letter_pieces
    0.0021193556265020064, // off1
    -1.004278083177584,    // off2
    0.48786550067037493,   // off3
    0.3384868132486967,    // off10
    0.09355360592712697,   // b64_deep
    -0.4673148550821726,   // camel
    -1.4847270083040742,   // space_prefixed
    -1.5208434290424584,   // tab_prefixed
    -1.158269870054867,    // punct_prefixed
    1.3329718011227334,    // bs_long
    1.0247160036086755,    // punct_runs
    -0.995144103029653,    // space_punct
    0.019672526233393852,  // punct_long
    -0.3454731078026038,   // digits
    1.9021591673138778,    // digit_runs
    0.661048993467182,     // digit_off3
    0.9095530055265728,    // newline_runs_free
    1.0106776375902655,    // ws_long_letter
    1.022497186181942,     // ws_long_other
    1.1542373605194092,    // ws
    -1.2634829740650035,   // ws_off1
    0.131221347155928,     // ws_off15
    0.04191741093907997,   // ws_lone
    0.5397162591555933,    // letters
    0.12107284302434841,   // upper
    1.1774222309579694,    // han
    1.1029692045092938,    // kana
    0.2015132950649967,    // hangul
    0.04182381207496105,   // cjk_punct
    -1.0554404647345674,   // other_letters
    0.1606272011077842,    // symbols
    4.483310220637948,     // astral
    -1.9814949293038548,   // cjk_pairs
    1.0444423575832746,    // cjk_multi
    1.2905070931235434,    // high_space
    0.8038120555839694,    // other_multi
    0.011788220556957774,  // repeat
];

/// The calibrated estimate of the token count of `text` under `encoding`: the weighted
/// [`text_features`], rounded; at least 1 for a non-empty text.
pub fn estimate(text: &str, encoding: Encoding) -> u64 {
    if text.is_empty() {
        return 0;
    }
    let features = if text.len() >= PARALLEL_MIN_BYTES {
        parallel_features(text, encoding)
    } else {
        text_features(text, encoding)
    };
    let total: f64 = features
        .iter()
        .zip(encoding.weights())
        .map(|(&f, &w)| f as f64 * w)
        .sum();
    (total.round().max(1.0)) as u64
}

/// [`text_features`] of a long text, summed over chunks counted on all cores (the chunks are
/// cut at character boundaries; a piece cut in two is counted as two, which moves the estimate
/// by a token per core at most).
fn parallel_features(text: &str, encoding: Encoding) -> [u64; FEATURES] {
    let threads = rayon::current_num_threads();
    let mut chunks = Vec::with_capacity(threads);
    let mut start = 0;
    for i in 1..=threads {
        let mut end = text.len() * i / threads;
        while !text.is_char_boundary(end) {
            end += 1;
        }
        if end > start {
            chunks.push(&text[start..end]);
            start = end;
        }
    }
    chunks
        .par_iter()
        .map(|chunk| text_features(chunk, encoding))
        .reduce(
            || [0u64; FEATURES],
            |mut total, f| {
                total.iter_mut().zip(f).for_each(|(t, v)| *t += v);
                total
            },
        )
}

/// Bit masks of one 64-byte block (bit `i` is byte `i`).
#[derive(Clone, Copy, Default)]
struct Masks {
    upper: u64,
    lower: u64,
    letter: u64,
    digit: u64,
    space: u64,
    /// Tab, vertical tab, form feed.
    tab: u64,
    newline: u64,
    /// Space or tab.
    blank: u64,
    white: u64,
    punct: u64,
    high: u64,
    /// UTF-8 continuation bytes.
    cont: u64,
    backslash: u64,
    /// Letters, digits, `+`, `/`.
    b64: u64,
}

/// The masks of `block` (at most 64 bytes; missing bytes are in no class).
#[inline(always)]
fn block_masks(block: &[u8]) -> Masks {
    if block.len() == 64 {
        return full_block_masks(block.try_into().expect("64 bytes"));
    }
    let mut padded = [0u8; 64];
    padded[..block.len()].copy_from_slice(block);
    let mut m = full_block_masks(&padded);
    // Padding bytes are NUL, which only the punctuation mask holds.
    m.punct &= valid_mask(block.len());
    m
}

/// [`block_masks`] of a full block: SSE2 compares and byte masks, 16 bytes at a time.
#[cfg(target_arch = "x86_64")]
#[allow(unused_unsafe)]
#[inline(always)]
fn full_block_masks(block: &[u8; 64]) -> Masks {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_cmpgt_epi8, _mm_cmplt_epi8, _mm_loadu_si128,
        _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    let mut m = Masks::default();
    let mut plus_slash = 0u64;
    for lane in 0..4 {
        // SAFETY: SSE2 is part of the x86_64 baseline; the load reads 16 bytes of `block`.
        unsafe {
            let v = _mm_loadu_si128(block.as_ptr().add(lane * 16).cast::<__m128i>());
            let bits = |x: __m128i| u64::from(_mm_movemask_epi8(x) as u16) << (lane * 16);
            let eq = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
            let range = |lo: u8, hi: u8| {
                _mm_and_si128(
                    _mm_cmpgt_epi8(v, _mm_set1_epi8(lo as i8 - 1)),
                    _mm_cmplt_epi8(v, _mm_set1_epi8(hi as i8 + 1)),
                )
            };
            m.upper |= bits(range(b'A', b'Z'));
            m.lower |= bits(range(b'a', b'z'));
            m.digit |= bits(range(b'0', b'9'));
            m.space |= bits(eq(b' '));
            m.tab |= bits(_mm_or_si128(eq(b'\t'), range(0x0B, 0x0C)));
            m.newline |= bits(_mm_or_si128(eq(b'\n'), eq(b'\r')));
            m.high |= bits(v);
            // Signed bytes below -64: 0x80..=0xBF.
            m.cont |= bits(_mm_cmplt_epi8(v, _mm_set1_epi8(-64)));
            m.backslash |= bits(eq(b'\\'));
            plus_slash |= bits(_mm_or_si128(eq(b'+'), eq(b'/')));
        }
    }
    m.letter = m.upper | m.lower;
    m.blank = m.space | m.tab;
    m.white = m.blank | m.newline;
    m.punct = !(m.letter | m.digit | m.white | m.high);
    m.b64 = m.letter | m.digit | plus_slash;
    m
}

/// [`block_masks`] of a full block with AVX-512: each class is one or two compares of the
/// whole block straight into a 64-bit mask.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
fn full_block_masks_avx512(block: &[u8; 64]) -> Masks {
    use std::arch::x86_64::{
        __m512i, _mm512_cmpeq_epi8_mask, _mm512_cmple_epu8_mask, _mm512_cmplt_epi8_mask,
        _mm512_loadu_si512, _mm512_movepi8_mask, _mm512_set1_epi8, _mm512_sub_epi8,
    };
    // SAFETY: the unaligned load reads exactly the 64 bytes of `block`.
    let v = unsafe { _mm512_loadu_si512(block.as_ptr().cast::<__m512i>()) };
    macro_rules! eq {
        ($c:expr) => {
            _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8($c as i8))
        };
    }
    // `lo..=hi` as one unsigned compare of `byte - lo` with `hi - lo`.
    macro_rules! range {
        ($lo:expr, $hi:expr) => {
            _mm512_cmple_epu8_mask(
                _mm512_sub_epi8(v, _mm512_set1_epi8($lo as i8)),
                _mm512_set1_epi8(($hi - $lo) as i8),
            )
        };
    }
    let mut m = Masks {
        upper: range!(b'A', b'Z'),
        lower: range!(b'a', b'z'),
        digit: range!(b'0', b'9'),
        space: eq!(b' '),
        tab: eq!(b'\t') | range!(0x0Bu8, 0x0Cu8),
        newline: eq!(b'\n') | eq!(b'\r'),
        high: _mm512_movepi8_mask(v),
        // Signed bytes below -64: 0x80..=0xBF.
        cont: _mm512_cmplt_epi8_mask(v, _mm512_set1_epi8(-64)),
        backslash: eq!(b'\\'),
        ..Masks::default()
    };
    m.letter = m.upper | m.lower;
    m.blank = m.space | m.tab;
    m.white = m.blank | m.newline;
    m.punct = !(m.letter | m.digit | m.white | m.high);
    m.b64 = m.letter | m.digit | eq!(b'+') | eq!(b'/');
    m
}

/// [`block_masks`] of a full block, byte by byte.
#[cfg(not(target_arch = "x86_64"))]
fn full_block_masks(block: &[u8; 64]) -> Masks {
    portable_block_masks(block)
}

/// [`block_masks`] of a full block from a table of byte classes (the reference for the SSE2
/// version).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn portable_block_masks(block: &[u8; 64]) -> Masks {
    let mut m = Masks::default();
    for (i, &b) in block.iter().enumerate() {
        let bit = 1u64 << i;
        let flags = BYTE_FLAGS[usize::from(b)];
        let set = |mask: &mut u64, flag: u16| {
            if flags & flag != 0 {
                *mask |= bit;
            }
        };
        set(&mut m.upper, F_UPPER);
        set(&mut m.lower, F_LOWER);
        set(&mut m.digit, F_DIGIT);
        set(&mut m.space, F_SPACE);
        set(&mut m.tab, F_TAB);
        set(&mut m.newline, F_NEWLINE);
        set(&mut m.punct, F_PUNCT);
        set(&mut m.high, F_HIGH);
        set(&mut m.cont, F_CONT);
        set(&mut m.backslash, F_BACKSLASH);
        set(&mut m.b64, F_B64);
    }
    m.letter = m.upper | m.lower;
    m.blank = m.space | m.tab;
    m.white = m.blank | m.newline;
    m
}

const F_UPPER: u16 = 1;
const F_LOWER: u16 = 2;
const F_DIGIT: u16 = 4;
const F_SPACE: u16 = 8;
const F_TAB: u16 = 16;
const F_NEWLINE: u16 = 32;
const F_PUNCT: u16 = 64;
const F_HIGH: u16 = 128;
const F_CONT: u16 = 256;
const F_BACKSLASH: u16 = 512;
const F_B64: u16 = 1024;

const fn byte_flags() -> [u16; 256] {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        let mut f = if b.is_ascii_uppercase() {
            F_UPPER | F_B64
        } else if b.is_ascii_lowercase() {
            F_LOWER | F_B64
        } else if b.is_ascii_digit() {
            F_DIGIT | F_B64
        } else if b == b' ' {
            F_SPACE
        } else if b == b'\t' || b == 0x0B || b == 0x0C {
            F_TAB
        } else if b == b'\n' || b == b'\r' {
            F_NEWLINE
        } else if b >= 0x80 {
            F_HIGH
        } else {
            F_PUNCT
        };
        if b == b'+' || b == b'/' {
            f |= F_B64;
        }
        if b == b'\\' {
            f |= F_BACKSLASH;
        }
        if b >= 0x80 && b < 0xC0 {
            f |= F_CONT;
        }
        table[i] = f;
        i += 1;
    }
    table
}

static BYTE_FLAGS: [u16; 256] = byte_flags();

/// `cur` shifted towards higher positions by `k` (1..=63), filled from the previous block: bit
/// `i` of the result is the bit `k` bytes earlier.
#[inline(always)]
fn sh(cur: u64, prev: u64, k: u32) -> u64 {
    (cur << k) | (prev >> (64 - k))
}

/// Masks derived from the base masks that later blocks look back into.
#[derive(Clone, Copy, Default)]
struct Derived {
    starts: u64,
    cont: u64,
    a2: u64,
    a4: u64,
    x1: u64,
    x2: u64,
    x4: u64,
    w2: u64,
    w4: u64,
    w8: u64,
}

/// The feature counts of `text` for the calibrated estimator, in [`FEATURE_NAMES`] order.
pub fn text_features(text: &str, encoding: Encoding) -> [u64; FEATURES] {
    #[cfg(target_arch = "x86_64")]
    if wide_features_cpu() {
        // SAFETY: the CPU has the instructions.
        return unsafe { features_wide(text, encoding) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") && std::arch::is_x86_feature_detected!("bmi1")
    {
        // SAFETY: the CPU has the instructions.
        return unsafe { text_features_popcnt(text, encoding) };
    }
    features_of::<true>(text, encoding)
}

/// Whether the CPU runs [`features_wide`] (Ice Lake and later, Zen 4 and later).
#[cfg(target_arch = "x86_64")]
fn wide_features_cpu() -> bool {
    use std::arch::is_x86_feature_detected as has;
    has!("avx512f")
        && has!("avx512bw")
        && has!("avx512vbmi")
        && has!("avx512vbmi2")
        && has!("avx512vpopcntdq")
        && has!("popcnt")
        && has!("bmi1")
        && has!("bmi2")
}

/// [`features_of`] compiled with `popcnt` and `andn` (not in the x86_64 baseline).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,bmi1")]
unsafe fn text_features_popcnt(text: &str, encoding: Encoding) -> [u64; FEATURES] {
    features_of::<true>(text, encoding)
}

/// [`features_of`] with AVX-512, eight blocks at a time: lane `j` of a vector holds a mask of
/// block `j` of a group of eight, the look-back into the previous block is one funnel shift
/// with the lanes moved up by one (lane 0 taking the previous group's last lane), and the
/// counts are vector bit counts. The per-character pass then visits the group's blocks in
/// order (blocks of three-byte characters with the vector pass). Same counts as
/// [`features_of`] (checked by the tests).
///
/// # Safety
/// The CPU must have the features enabled here.
#[cfg(target_arch = "x86_64")]
#[target_feature(
    enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2,avx512vpopcntdq,popcnt,bmi1,bmi2"
)]
unsafe fn features_wide(text: &str, encoding: Encoding) -> [u64; FEATURES] {
    use std::arch::x86_64::*;
    /// The previous group's vectors of everything the features look back at.
    #[derive(Clone, Copy)]
    struct Carry {
        letter: __m512i,
        lower: __m512i,
        b64: __m512i,
        space: __m512i,
        punct: __m512i,
        tab: __m512i,
        digit: __m512i,
        newline: __m512i,
        blank: __m512i,
        white: __m512i,
        backslash: __m512i,
        starts: __m512i,
        cont: __m512i,
        a2: __m512i,
        a4: __m512i,
        x1: __m512i,
        x2: __m512i,
        x4: __m512i,
        w2: __m512i,
        w4: __m512i,
        w8: __m512i,
    }
    let zero = _mm512_setzero_si512();
    let mut carry = Carry {
        letter: zero,
        lower: zero,
        b64: zero,
        space: zero,
        punct: zero,
        tab: zero,
        digit: zero,
        newline: zero,
        blank: zero,
        white: zero,
        backslash: zero,
        starts: zero,
        cont: zero,
        a2: zero,
        a4: zero,
        x1: zero,
        x2: zero,
        x4: zero,
        w2: zero,
        w4: zero,
        w8: zero,
    };
    // Per ASCII feature (and `high_space` last), the counts so far in eight lanes.
    let mut acc = [zero; ASCII_FEATURES + 1];
    let mut f = [0u64; FEATURES];
    let bytes = text.as_bytes();
    let mut chars = NonAscii::new(CjkTables::get(encoding));
    for (group_index, group) in bytes.chunks(512).enumerate() {
        // The last group is padded with NULs (in no class but punctuation, masked by `valid`).
        let mut padded = [0u8; 512];
        let data: &[u8] = if group.len() == 512 {
            group
        } else {
            padded[..group.len()].copy_from_slice(group);
            &padded
        };
        let mut ms = [Masks::default(); 8];
        let mut valid = [0u64; 8];
        for (j, m) in ms.iter_mut().enumerate() {
            let block: &[u8; 64] = data[64 * j..64 * j + 64].try_into().expect("64 bytes");
            *m = full_block_masks_avx512(block);
            valid[j] = valid_mask(group.len().saturating_sub(64 * j));
            m.punct &= valid[j];
        }
        let lanes = |field: fn(&Masks) -> u64| {
            let words: [u64; 8] = std::array::from_fn(|j| field(&ms[j]));
            // SAFETY: reads the eight words of `words`.
            unsafe { _mm512_loadu_si512(words.as_ptr().cast::<__m512i>()) }
        };
        let (upper, lower, letter) = (lanes(|m| m.upper), lanes(|m| m.lower), lanes(|m| m.letter));
        let (digit, space, tab) = (lanes(|m| m.digit), lanes(|m| m.space), lanes(|m| m.tab));
        let (newline, blank, white) =
            (lanes(|m| m.newline), lanes(|m| m.blank), lanes(|m| m.white));
        let (punct, high, cont_bytes) = (lanes(|m| m.punct), lanes(|m| m.high), lanes(|m| m.cont));
        let (backslash, b64) = (lanes(|m| m.backslash), lanes(|m| m.b64));
        // SAFETY: reads the eight words of `valid`.
        let valid_v = unsafe { _mm512_loadu_si512(valid.as_ptr().cast::<__m512i>()) };
        // `x` of each lane's previous block, shifted by `K` bits: the look-back of the
        // scalar pass (`sh`).
        macro_rules! p {
            ($cur:expr, $old:expr, $k:literal) => {
                _mm512_shldi_epi64::<$k>($cur, _mm512_alignr_epi64::<7>($cur, $old))
            };
        }
        let and = |a: __m512i, b: __m512i| _mm512_and_si512(a, b);
        let or = |a: __m512i, b: __m512i| _mm512_or_si512(a, b);
        // `a & !b`
        let but = |a: __m512i, b: __m512i| _mm512_andnot_si512(b, a);
        let mut count = |k: usize, mask: __m512i| {
            acc[k] = _mm512_add_epi64(acc[k], _mm512_popcnt_epi64(mask));
        };
        let prev_letter = p!(letter, carry.letter, 1);
        let camel = and(upper, p!(lower, carry.lower, 1));
        let starts = or(but(letter, prev_letter), camel);
        let cont = but(letter, starts);
        count(0, starts);
        let a2 = and(cont, p!(cont, carry.cont, 1));
        let a3 = and(a2, p!(cont, carry.cont, 2));
        let a4 = and(a2, p!(a2, carry.a2, 2));
        let a8 = and(a4, p!(a4, carry.a4, 4));
        let a10 = and(a8, p!(a2, carry.a2, 8));
        count(1, cont);
        count(2, a2);
        count(3, a3);
        count(4, a10);
        let x1 = and(b64, p!(b64, carry.b64, 1));
        let x2 = and(x1, p!(x1, carry.x1, 2));
        let x4 = and(x2, p!(x2, carry.x2, 4));
        let x8 = and(x4, p!(x4, carry.x4, 8));
        count(5, x8);
        count(6, camel);
        let prev_space = p!(space, carry.space, 1);
        let prev_punct = p!(punct, carry.punct, 1);
        let prev_tab = p!(tab, carry.tab, 1);
        count(7, and(starts, prev_space));
        count(8, and(starts, prev_tab));
        let prev2_punct = p!(punct, carry.punct, 2);
        let prev2_space = p!(space, carry.space, 2);
        count(
            9,
            but(but(and(starts, prev_punct), prev2_punct), prev2_space),
        );
        count(
            10,
            and(
                and(cont, p!(starts, carry.starts, 1)),
                p!(backslash, carry.backslash, 2),
            ),
        );
        let punct_starts = but(punct, prev_punct);
        count(11, punct_starts);
        count(12, and(punct_starts, prev_space));
        count(13, and(and(punct, prev_punct), prev2_punct));
        let prev_digit = p!(digit, carry.digit, 1);
        count(14, digit);
        count(15, but(digit, prev_digit));
        count(
            16,
            and(
                and(and(digit, prev_digit), p!(digit, carry.digit, 2)),
                p!(digit, carry.digit, 3),
            ),
        );
        let prev_newline = p!(newline, carry.newline, 1);
        count(17, but(but(newline, prev_newline), prev_punct));
        let prev_blank = p!(blank, carry.blank, 1);
        let prev2_blank = p!(blank, carry.blank, 2);
        let after_two_blanks = and(prev_blank, prev2_blank);
        count(18, and(letter, after_two_blanks));
        count(19, but(but(and(valid_v, after_two_blanks), letter), white));
        count(20, blank);
        let w2 = and(blank, prev_blank);
        let w4 = and(w2, p!(w2, carry.w2, 2));
        let w8 = and(w4, p!(w4, carry.w4, 4));
        let w16 = and(w8, p!(w8, carry.w8, 8));
        count(21, w2);
        count(22, w16);
        let prev2_white = p!(white, carry.white, 2);
        let leads = but(high, cont_bytes);
        // (Digits, lead bytes and punctuation are disjoint: one count for the three terms.)
        count(
            23,
            but(
                or(and(or(digit, leads), prev_blank), and(punct, prev_tab)),
                prev2_white,
            ),
        );
        count(24, letter);
        count(25, upper);
        count(ASCII_FEATURES, and(leads, prev_space));
        carry = Carry {
            letter,
            lower,
            b64,
            space,
            punct,
            tab,
            digit,
            newline,
            blank,
            white,
            backslash,
            starts,
            cont,
            a2,
            a4,
            x1,
            x2,
            x4,
            w2,
            w4,
            w8,
        };
        for (j, m) in ms.iter().enumerate() {
            let leads = m.high & !m.cont;
            if leads == 0 {
                continue;
            }
            let base = group_index * 512 + 64 * j;
            // SAFETY: the CPU has AVX-512 F, BW and VBMI; an all-non-ASCII block is a full
            // block of the text.
            let done = m.high == u64::MAX
                && unsafe { chars.three_byte_block_wide(bytes, base, leads, &mut f) };
            if !done {
                chars.block(bytes, base, leads, &mut f);
            }
        }
    }
    let mut sums = [0u64; 8];
    for (k, lanes) in acc.iter().enumerate() {
        // SAFETY: writes the eight words of `sums`.
        unsafe { _mm512_storeu_si512(sums.as_mut_ptr().cast::<__m512i>(), *lanes) };
        let total: u64 = sums.iter().sum();
        if k < ASCII_FEATURES {
            f[k] += total;
        } else {
            f[NA + 9] += total;
        }
    }
    f
}

/// The features block by block (64 bytes). `SHORTCUTS`: blocks of non-ASCII bytes only skip
/// the ASCII features, and blocks without digits, backslashes and tabs the features about
/// those (off only in tests, to check the shortcuts give the same counts).
#[inline(always)]
fn features_of<const SHORTCUTS: bool>(text: &str, encoding: Encoding) -> [u64; FEATURES] {
    let mut f = [0u64; FEATURES];
    let bytes = text.as_bytes();
    let mut prev = Masks::default();
    let mut prev_d = Derived::default();
    let mut chars = NonAscii::new(CjkTables::get(encoding));
    // Counts of the ASCII features, four to a word in 16-bit lanes (a lane grows by at most 128
    // per block), moved into `f` every `FLUSH_BLOCKS` blocks.
    let mut acc = [0u64; ASCII_FEATURES.div_ceil(4)];
    for (index, block) in bytes.chunks(64).enumerate() {
        if index % FLUSH_BLOCKS == FLUSH_BLOCKS - 1 {
            flush(&mut acc, &mut f);
        }
        let m = block_masks(block);
        let p = |cur: u64, old: u64, k: u32| sh(cur, old, k);
        if SHORTCUTS && m.high == u64::MAX {
            // CJK text: a block without ASCII bytes. Every ASCII mask is empty, so of the
            // ASCII features only the two that look back at blanks ending the previous block
            // can count here (the same terms as below, with the empty masks folded in).
            let leads = !m.cont;
            let prev_blank = p(0, prev.blank, 1);
            let prev2_blank = p(0, prev.blank, 2);
            add(&mut acc, 19, prev_blank & prev2_blank);
            add(&mut acc, 23, leads & prev_blank & !p(0, prev.white, 2));
            f[NA + 9] += u64::from((leads & p(0, prev.space, 1)).count_ones());
            chars.block(bytes, index * 64, leads, &mut f);
            prev = m;
            prev_d = Derived::default();
            continue;
        }
        let prev_letter = p(m.letter, prev.letter, 1);
        let camel = m.upper & p(m.lower, prev.lower, 1);
        let starts = (m.letter & !prev_letter) | camel;
        let cont = m.letter & !starts;
        add(&mut acc, 0, starts);
        // offN: letters with N-1 letters of the same piece before them (doubling runs).
        let a2 = cont & p(cont, prev_d.cont, 1);
        let a3 = a2 & p(cont, prev_d.cont, 2);
        let a4 = a2 & p(a2, prev_d.a2, 2);
        let a8 = a4 & p(a4, prev_d.a4, 4);
        let a10 = a8 & p(a2, prev_d.a2, 8);
        add(&mut acc, 1, cont);
        add(&mut acc, 2, a2);
        add(&mut acc, 3, a3);
        add(&mut acc, 4, a10);
        // Letters, digits, `+` and `/` with 15 of them before: base64 and other long runs.
        let x1 = m.b64 & p(m.b64, prev.b64, 1);
        let x2 = x1 & p(x1, prev_d.x1, 2);
        let x4 = x2 & p(x2, prev_d.x2, 4);
        let x8 = x4 & p(x4, prev_d.x4, 8);
        add(&mut acc, 5, x8);
        add(&mut acc, 6, camel);
        let prev_space = p(m.space, prev.space, 1);
        let prev_punct = p(m.punct, prev.punct, 1);
        add(&mut acc, 7, starts & prev_space);
        let prev2_punct = p(m.punct, prev.punct, 2);
        let prev2_space = p(m.space, prev.space, 2);
        add(
            &mut acc,
            9,
            starts & prev_punct & !prev2_punct & !prev2_space,
        );
        let punct_starts = m.punct & !prev_punct;
        add(&mut acc, 11, punct_starts);
        add(&mut acc, 12, punct_starts & prev_space);
        add(&mut acc, 13, m.punct & prev_punct & prev2_punct);
        let prev_newline = p(m.newline, prev.newline, 1);
        add(&mut acc, 17, m.newline & !prev_newline & !prev_punct);
        let prev_blank = p(m.blank, prev.blank, 1);
        let prev2_blank = p(m.blank, prev.blank, 2);
        add(&mut acc, 18, m.letter & prev_blank & prev2_blank);
        add(
            &mut acc,
            19,
            !m.letter & !m.white & valid_mask(block.len()) & prev_blank & prev2_blank,
        );
        add(&mut acc, 20, m.blank);
        // Blanks with 1 and 15 blanks before them.
        let w2 = m.blank & prev_blank;
        let w4 = w2 & p(w2, prev_d.w2, 2);
        let w8 = w4 & p(w4, prev_d.w4, 4);
        let w16 = w8 & p(w8, prev_d.w8, 8);
        add(&mut acc, 21, w2);
        add(&mut acc, 22, w16);
        // A lone blank before a digit or a non-ASCII character, or a lone tab before
        // punctuation: a piece of its own.
        let prev2_white = p(m.white, prev.white, 2);
        add(&mut acc, 23, m.high & !m.cont & prev_blank & !prev2_white);
        // Digits, backslashes and tabs are rare in prose. Their features count nothing in a
        // block without any (when the previous block does not end in a backslash or a tab,
        // which they look back at), so such a block skips them.
        if !SHORTCUTS
            || (m.digit | m.backslash | m.tab | (prev.backslash >> 62) | (prev.tab >> 63)) != 0
        {
            let prev_tab = p(m.tab, prev.tab, 1);
            add(&mut acc, 8, starts & prev_tab);
            add(
                &mut acc,
                10,
                cont & p(starts, prev_d.starts, 1) & p(m.backslash, prev.backslash, 2),
            );
            let prev_digit = p(m.digit, prev.digit, 1);
            add(&mut acc, 14, m.digit);
            add(&mut acc, 15, m.digit & !prev_digit);
            add(
                &mut acc,
                16,
                m.digit & prev_digit & p(m.digit, prev.digit, 2) & p(m.digit, prev.digit, 3),
            );
            // (Digits and punctuation are disjoint: one count for both terms.)
            add(
                &mut acc,
                23,
                ((m.digit & prev_blank) | (m.punct & prev_tab)) & !prev2_white,
            );
        }
        add(&mut acc, 24, m.letter);
        add(&mut acc, 25, m.upper);
        let leads = m.high & !m.cont;
        if leads != 0 {
            f[NA + 9] += u64::from((leads & prev_space).count_ones());
            chars.block(bytes, index * 64, leads, &mut f);
        }
        prev = m;
        prev_d = Derived {
            starts,
            cont,
            a2,
            a4,
            x1,
            x2,
            x4,
            w2,
            w4,
            w8,
        };
    }
    flush(&mut acc, &mut f);
    f
}

/// The ASCII features come first in [`FEATURE_NAMES`].
const ASCII_FEATURES: usize = 26;
const FLUSH_BLOCKS: usize = 256;

/// Adds the number of bits of `mask` to feature `k`'s lane.
#[inline(always)]
fn add(acc: &mut [u64; ASCII_FEATURES.div_ceil(4)], k: usize, mask: u64) {
    acc[k / 4] += u64::from(mask.count_ones()) << (16 * (k % 4));
}

fn flush(acc: &mut [u64; ASCII_FEATURES.div_ceil(4)], f: &mut [u64; FEATURES]) {
    for (k, slot) in f.iter_mut().enumerate().take(ASCII_FEATURES) {
        *slot += (acc[k / 4] >> (16 * (k % 4))) & 0xFFFF;
    }
    *acc = [0; ASCII_FEATURES.div_ceil(4)];
}

/// The mask of the first `len` bytes of a block (all of it from 64 bytes on).
fn valid_mask(len: usize) -> u64 {
    if len >= 64 {
        u64::MAX
    } else {
        (1u64 << len) - 1
    }
}

/// Per-encoding table of the BMP for the non-ASCII features: per code point, its class (the
/// feature slot it counts in), whether it is a token by itself, and its index among the
/// characters that are half of a two-character CJK token; and the set of those pairs.
struct CjkTables {
    /// Per BMP code point, laid out so the per-character pass needs no arithmetic on it:
    /// `index << 20 | other_multi << 16 | cjk_multi << 8 | 8 * class`, where `index` is its
    /// index among the pair characters (0: in no pair), the two flags tell a character that is
    /// not a token by itself in a CJK class or another class (bits already at their lanes in
    /// [`NonAscii::block`]'s counters), and `class` is 0 Han, 1 kana, 2 Hangul,
    /// 3 CJK punctuation, 4 other letter, 5 other symbol.
    info: Box<[u32; 0x10000]>,
    /// Bit `a << PAIR_INDEX_BITS | b`: the characters of indices `a` and `b` form a token
    /// (row and column 0 are empty).
    pairs: Box<[u64; PAIR_WORDS]>,
    vocab: &'static Vocab,
}

/// Pair characters are numbered 1 to [`MAX_PAIR_INDEX`] (characters past that are in no pair).
const PAIR_INDEX_BITS: u32 = 11;
const MAX_PAIR_INDEX: u16 = (1 << PAIR_INDEX_BITS) - 1;
/// Words of the pair bitmap: one bit per pair of indices.
const PAIR_WORDS: usize = (1 << (2 * PAIR_INDEX_BITS)) / 64;

static CJK_O200K: std::sync::OnceLock<CjkTables> = std::sync::OnceLock::new();
static CJK_CL100K: std::sync::OnceLock<CjkTables> = std::sync::OnceLock::new();

const CLASS_HAN: u16 = 0;
const CLASS_KANA: u16 = 1;
const CLASS_HANGUL: u16 = 2;
const CLASS_CJK_PUNCT: u16 = 3;
const CLASS_OTHER_LETTER: u16 = 4;
const CLASS_SYMBOL: u16 = 5;

fn bmp_class(c: u32) -> u16 {
    match c {
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF => CLASS_HAN,
        0x3040..=0x30FF | 0x31F0..=0x31FF => CLASS_KANA,
        0xAC00..=0xD7AF | 0x1100..=0x11FF | 0x3130..=0x318F => CLASS_HANGUL,
        0x3000..=0x303F | 0xFF00..=0xFFEF => CLASS_CJK_PUNCT,
        _ if char::from_u32(c).is_some_and(char::is_alphabetic) => CLASS_OTHER_LETTER,
        _ => CLASS_SYMBOL,
    }
}

impl CjkTables {
    fn get(encoding: Encoding) -> &'static CjkTables {
        let cell = match encoding {
            Encoding::O200kBase => &CJK_O200K,
            Encoding::Cl100kBase => &CJK_CL100K,
        };
        cell.get_or_init(|| CjkTables::build(encoding))
    }

    fn build(encoding: Encoding) -> CjkTables {
        let class: Vec<u16> = (0..0x10000u32).map(bmp_class).collect();
        let mut single = vec![false; 0x10000];
        let mut index = vec![0u16; 0x10000];
        let mut pair_list = Vec::new();
        let mut count = 0u16;
        for token in encoding.vocabulary() {
            let Ok(s) = std::str::from_utf8(token) else {
                continue;
            };
            let mut it = s.chars().map(|c| c as u32);
            match (it.next(), it.next(), it.next()) {
                (Some(a), None, _) if (0x80..0x10000).contains(&a) => single[a as usize] = true,
                (Some(a), Some(b), None)
                    if a < 0x10000
                        && b < 0x10000
                        && class[a as usize] <= CLASS_HANGUL
                        && class[b as usize] <= CLASS_HANGUL =>
                {
                    for c in [a, b] {
                        // (o200k has 1,707 such characters, cl100k 342.)
                        if index[c as usize] == 0 && count < MAX_PAIR_INDEX {
                            count += 1;
                            index[c as usize] = count;
                        }
                    }
                    pair_list.push((index[a as usize], index[b as usize]));
                }
                _ => {}
            }
        }
        let info: Vec<u32> = (0..0x10000)
            .map(|c| {
                let multi = u32::from(!single[c]);
                let multi_lane = if class[c] <= CLASS_HANGUL {
                    CJK_MULTI_LANE
                } else {
                    OTHER_MULTI_LANE
                };
                (u32::from(index[c]) << 20) | (multi << multi_lane) | (8 * u32::from(class[c]))
            })
            .collect();
        let mut pairs: Box<[u64; PAIR_WORDS]> = vec![0u64; PAIR_WORDS]
            .into_boxed_slice()
            .try_into()
            .expect("PAIR_WORDS words");
        for (a, b) in pair_list {
            if a != 0 && b != 0 {
                let bit = (usize::from(a) << PAIR_INDEX_BITS) | usize::from(b);
                pairs[bit / 64] |= 1 << (bit % 64);
            }
        }
        CjkTables {
            info: info
                .into_boxed_slice()
                .try_into()
                .expect("one entry per BMP code point"),
            pairs,
            vocab: Vocab::get(encoding),
        }
    }
}

/// The first non-ASCII feature: `han`, then `kana`, `hangul`, `cjk_punct`, `other_letters`,
/// `symbols` (in the order of the `CLASS_*` constants), `astral`, `cjk_pairs`, `cjk_multi`,
/// `high_space`, `other_multi`, `repeat`.
const NA: usize = ASCII_FEATURES;

/// The 8-bit lanes of [`NonAscii::block`]'s second counter word (`astral` is lane 0).
const CJK_MULTI_LANE: u32 = 8;
const OTHER_MULTI_LANE: u32 = 16;
const PAIR_LANE: u32 = 24;
const REPEAT_LANE: u32 = 32;

/// The per-character pass over non-ASCII characters.
struct NonAscii<'t> {
    tables: &'t CjkTables,
    /// The previous non-ASCII character (its info, 0 for an astral one) and the byte offset
    /// just after it.
    last_info: u32,
    last_char: u32,
    last_end: usize,
}

impl<'t> NonAscii<'t> {
    fn new(tables: &'t CjkTables) -> Self {
        NonAscii {
            tables,
            last_info: 0,
            last_char: 0,
            last_end: usize::MAX,
        }
    }

    /// Counts the characters whose first byte is in the block at `base` (`leads`: the lead-byte
    /// bits of the block). `high_space` (a character right after a space) is counted by the
    /// caller from the block masks.
    #[inline(always)]
    fn block(&mut self, bytes: &[u8], base: usize, mut leads: u64, f: &mut [u64; FEATURES]) {
        // Counts of this block in 8-bit lanes of two words (at most 64 characters start in a
        // block): per class in `classes`; `astral`, `cjk_multi`, `other_multi`, `cjk_pairs`
        // and `repeat` in `others`. Two scalar words rather than seven counters keeps the
        // compiler from packing the counters into a vector it spills on every character.
        const MULTI_BITS: u64 = (1 << CJK_MULTI_LANE) | (1 << OTHER_MULTI_LANE);
        let (mut classes, mut others) = (0u64, 0u64);
        let (mut last_info, mut last_char, mut last_end) =
            (self.last_info, self.last_char, self.last_end);
        let tables = self.tables;
        let (info_table, pair_bits) = (&*tables.info, &*tables.pairs);
        // (Visiting the lead bits keeps the characters independent: stepping by lengths
        // would chain every character's position to the decoding of the one before.)
        while leads != 0 {
            let at = base + leads.trailing_zeros() as usize;
            leads &= leads - 1;
            let (c, len) = decode(bytes, at);
            let adjacent = last_end == at;
            others += u64::from(adjacent && c == last_char) << REPEAT_LANE;
            if c >= 0x10000 {
                let multi = u64::from(tables.vocab.rank(&bytes[at..at + len]).is_none());
                others += 1 | (multi << OTHER_MULTI_LANE);
                last_info = 0;
            } else {
                let info = info_table[c as usize];
                classes += 1 << (info & 63);
                // Without a branch: characters outside the CJK classes have pair index 0, whose
                // row and column of the pair bitmap are empty.
                let prev_index = (last_info >> 20) as usize * usize::from(adjacent);
                let bit = (prev_index << PAIR_INDEX_BITS) | (info >> 20) as usize;
                // (The mask keeps the index provably in bounds; it never changes it.)
                let pair = (pair_bits[(bit / 64) & (PAIR_WORDS - 1)] >> (bit % 64)) & 1;
                others += (u64::from(info) & MULTI_BITS) | (pair << PAIR_LANE);
                last_info = info;
            }
            last_char = c;
            last_end = at + len;
        }
        for (class, slot) in f[NA..NA + 6].iter_mut().enumerate() {
            *slot += (classes >> (8 * class)) & 0xFF;
        }
        let lane = |shift: u32| (others >> shift) & 0xFF;
        f[NA + 6] += lane(0);
        f[NA + 7] += lane(PAIR_LANE);
        f[NA + 8] += lane(CJK_MULTI_LANE);
        f[NA + 10] += lane(OTHER_MULTI_LANE);
        f[NA + 11] += lane(REPEAT_LANE);
        (self.last_info, self.last_char, self.last_end) = (last_info, last_char, last_end);
    }
}

impl NonAscii<'_> {
    /// [`NonAscii::block`] for a block of three-byte characters only (most Chinese and
    /// Japanese text), sixteen characters per vector instruction: decoded with byte
    /// permutes, their table entries and pair bits gathered. Returns false, having counted
    /// nothing, when the block holds another kind of character.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, BW and VBMI; `bytes[base..base + 64]` must be a block of
    /// valid UTF-8 text whose bytes are all non-ASCII.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,popcnt,bmi1,bmi2")]
    unsafe fn three_byte_block_wide(
        &mut self,
        bytes: &[u8],
        base: usize,
        leads: u64,
        f: &mut [u64; FEATURES],
    ) -> bool {
        use std::arch::x86_64::*;
        let block = &bytes[base..base + 64];
        // SAFETY: reads the 64 bytes of `block`.
        let v0 = unsafe { _mm512_loadu_si512(block.as_ptr().cast::<__m512i>()) };
        let three = _mm512_cmple_epu8_mask(
            _mm512_sub_epi8(v0, _mm512_set1_epi8(0xE0u8 as i8)),
            _mm512_set1_epi8(0x0F),
        );
        if leads == 0 || three != leads {
            return false;
        }
        // Valid UTF-8 of three-byte characters: a lead every third byte from the first.
        let first = leads.trailing_zeros() as usize;
        let n = leads.count_ones() as usize;
        // The last character may end up to two bytes past the block; the masked load reads
        // only bytes of the text.
        let rest = bytes.len() - (base + 64);
        let rest_mask = if rest >= 64 {
            u64::MAX
        } else {
            (1u64 << rest) - 1
        };
        // SAFETY: the mask limits the load to `bytes[base + 64..]`.
        let v1 =
            unsafe { _mm512_maskz_loadu_epi8(rest_mask, bytes.as_ptr().add(base + 64).cast()) };
        let tables = self.tables;
        let adjacent_first = self.last_end == base + first;
        let (mut classes, mut cjk_multi, mut other_multi) = ([0u64; 6], 0u64, 0u64);
        let (mut pairs, mut repeat) = (0u64, 0u64);
        // Lane 15 of the carries: the character before this vector's first.
        let mut carry_char = _mm512_set1_epi32(self.last_char as i32);
        let mut carry_index = _mm512_set1_epi32((self.last_info >> 20) as i32);
        for (half, lanes) in THREE_BYTE_LANES.iter().enumerate() {
            let chars_here = n.saturating_sub(16 * half).min(16);
            if chars_here == 0 {
                break;
            }
            let valid = ((1u32 << chars_here) - 1) as u16;
            // Lane k: the three bytes of character 16 * half + k, lead byte lowest.
            // SAFETY: reads the 64 bytes of `lanes`.
            let offsets = unsafe { _mm512_loadu_si512(lanes.as_ptr().cast::<__m512i>()) };
            let index = _mm512_add_epi8(offsets, _mm512_set1_epi8(first as i8));
            let w = _mm512_permutex2var_epi8(v0, index, v1);
            let c = _mm512_or_si512(
                _mm512_slli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x0F)), 12),
                _mm512_or_si512(
                    _mm512_srli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x3F00)), 2),
                    _mm512_srli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x3F_0000)), 16),
                ),
            );
            // SAFETY: every code point is below 0x10000, the length of the table.
            let info = unsafe {
                _mm512_mask_i32gather_epi32::<4>(
                    _mm512_setzero_si512(),
                    valid,
                    c,
                    tables.info.as_ptr().cast(),
                )
            };
            let shift = _mm512_and_si512(info, _mm512_set1_epi32(63));
            for (class, count) in classes.iter_mut().enumerate() {
                let k =
                    _mm512_mask_cmpeq_epi32_mask(valid, shift, _mm512_set1_epi32(8 * class as i32));
                *count += u64::from(k.count_ones());
            }
            let test = |bit: u32| {
                u64::from(
                    _mm512_mask_test_epi32_mask(valid, info, _mm512_set1_epi32(1 << bit))
                        .count_ones(),
                )
            };
            cjk_multi += test(CJK_MULTI_LANE);
            other_multi += test(OTHER_MULTI_LANE);
            // The previous character of each lane; lane 0 of the first vector is adjacent
            // only if the previous character ended where this block's first one starts.
            let adjacent = if half == 0 && !adjacent_first {
                valid & !1
            } else {
                valid
            };
            let prev_char = _mm512_alignr_epi32(c, carry_char, 15);
            repeat += u64::from(_mm512_mask_cmpeq_epi32_mask(adjacent, c, prev_char).count_ones());
            let pair_index = _mm512_srli_epi32(info, 20);
            let prev_index =
                _mm512_maskz_mov_epi32(adjacent, _mm512_alignr_epi32(pair_index, carry_index, 15));
            let bit = _mm512_or_si512(_mm512_slli_epi32(prev_index, PAIR_INDEX_BITS), pair_index);
            // SAFETY: `bit` is below 2^(2 * PAIR_INDEX_BITS), the bitmap's length in bits;
            // the gather reads its 32-bit word.
            let word = unsafe {
                _mm512_mask_i32gather_epi32::<4>(
                    _mm512_setzero_si512(),
                    valid,
                    _mm512_srli_epi32(bit, 5),
                    tables.pairs.as_ptr().cast(),
                )
            };
            let pair_bits = _mm512_srlv_epi32(word, _mm512_and_si512(bit, _mm512_set1_epi32(31)));
            pairs += u64::from(
                _mm512_mask_test_epi32_mask(valid, pair_bits, _mm512_set1_epi32(1)).count_ones(),
            );
            carry_char = c;
            carry_index = pair_index;
        }
        for (slot, count) in f[NA..NA + 6].iter_mut().zip(classes) {
            *slot += count;
        }
        f[NA + 7] += pairs;
        f[NA + 8] += cjk_multi;
        f[NA + 10] += other_multi;
        f[NA + 11] += repeat;
        let last = base + first + 3 * (n - 1);
        let (c, _) = decode(bytes, last);
        (self.last_info, self.last_char, self.last_end) = (tables.info[c as usize], c, last + 3);
        true
    }
}

/// Byte `4k + j` of vector `h`: the offset from a block's first lead byte of byte `j` of its
/// character `16h + k` when all characters are three bytes (byte 3 repeats byte 2 and is
/// masked off by the decoding).
#[cfg(target_arch = "x86_64")]
static THREE_BYTE_LANES: [[u8; 64]; 2] = {
    let mut lanes = [[0u8; 64]; 2];
    let mut h = 0;
    while h < 2 {
        let mut k = 0;
        while k < 16 {
            let start = 3 * (16 * h + k) as u8;
            lanes[h][4 * k] = start;
            lanes[h][4 * k + 1] = start + 1;
            lanes[h][4 * k + 2] = start + 2;
            lanes[h][4 * k + 3] = start + 2;
            k += 1;
        }
        h += 1;
    }
    lanes
};

/// The code point and length of the UTF-8 character that starts at `bytes[at]` (a lead byte
/// of valid UTF-8).
#[inline(always)]
fn decode(bytes: &[u8], at: usize) -> (u32, usize) {
    let b0 = u32::from(bytes[at]);
    if let Some(word) = bytes.get(at..at + 4) {
        // The common case: four bytes to read at once (the character and what follows).
        let w = u32::from_le_bytes(word.try_into().expect("four bytes"));
        let cont = |i: u32| (w >> (8 * i)) & 0x3F;
        return match b0 {
            0xF0.. => (
                ((b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3),
                4,
            ),
            0xE0.. => (((b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2), 3),
            _ => (((b0 & 0x1F) << 6) | cont(1), 2),
        };
    }
    decode_at_end(&bytes[at..])
}

/// The code point and length of the UTF-8 character at the start of `bytes` (valid UTF-8).
#[cold]
fn decode_at_end(bytes: &[u8]) -> (u32, usize) {
    let b0 = u32::from(bytes[0]);
    let cont = |i: usize| u32::from(bytes.get(i).copied().unwrap_or(0x80) & 0x3F);
    match b0 {
        0xF0.. => (
            ((b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3),
            4,
        ),
        0xE0.. => (((b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2), 3),
        _ => (((b0 & 0x1F) << 6) | cont(1), 2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic generator of test strings (xorshift).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn text(&mut self, alphabet: &[&str], max_len: u64) -> String {
            let len = self.next() % max_len + 1;
            (0..len)
                .map(|_| alphabet[(self.next() % alphabet.len() as u64) as usize])
                .collect()
        }
    }

    const ASCII_ALPHABET: &[&str] = &[
        "a", "A", "b", "B", "s", "S", "t", "T", "d", "l", "L", "m", "r", "v", "e", "E", "'", "0",
        "1", "9", " ", " ", "\t", "\n", "\r", "\x0b", ".", ",", "/", "\\", "\"", "{", "}", "(",
        "-", "_", "+", "=", "#", "\x00",
    ];

    const MIXED_ALPHABET: &[&str] = &[
        "a", "B", "'", "s", "1", " ", "\n", "\t", ".", "/", "é", "中", "あ", "한", "😀", "\u{a0}",
        "\u{3000}", "、", "\u{85}", "{", "\"", "'",
    ];

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
    fn token_count_matches_bpe_openai_on_mixed_text() {
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

    #[test]
    fn token_count_image_rule() {
        assert_eq!(image_tokens(100, 100), 255);
        assert_eq!(image_tokens(1024, 1024), 85 + 170 * 4);
        assert_eq!(image_tokens(4096, 2048), 85 + 170 * 6);
        assert_eq!(image_tokens(0, 10), 0);
        assert_eq!(base64_image_tokens("not an image"), UNREADABLE_IMAGE_TOKENS);
        // A 1×1 PNG.
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
        assert_eq!(base64_image_tokens(png), 255);
        assert_eq!(
            base64_image_tokens(&format!("data:image/png;base64,{png}")),
            255
        );
    }

    #[test]
    fn token_count_message_rules() {
        let counter = TokenCounter::new(Encoding::O200kBase, Estimator::Exact);
        let t = |s: &str| count_exact(s, Encoding::O200kBase);
        let message = r#"{"role":"assistant","content":[{"type":"text","text":"hi there"},{"type":"thinking","thinking":"hmm"},{"type":"toolCall","id":"1","name":"read","arguments":{"path": "a.txt"}},{"type":"other","text":"no"}]}"#;
        assert_eq!(
            counter.message(message),
            t("hi there") + t("hmm") + t("read") + t(r#"{"path":"a.txt"}"#)
        );
        let bash = r#"{"role":"bashExecution","command":"ls","output":"a\nb"}"#;
        assert_eq!(counter.message(bash), t("ls") + t("a\nb"));
        assert_eq!(
            counter.message(r#"{"role":"user","content":"x y"}"#),
            t("x y")
        );
        assert_eq!(counter.message("not json"), 0);
    }

    #[test]
    fn token_count_sse2_masks_match_the_table() {
        assert_masks_match_the_table(full_block_masks);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn token_count_avx512_masks_match_the_table() {
        if !wide_features_cpu() {
            eprintln!("skipped: this CPU lacks an AVX-512 extension the wide pass needs");
            return;
        }
        // SAFETY: checked just above.
        assert_masks_match_the_table(|block| unsafe { full_block_masks_avx512(block) });
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn token_count_features_wide_match_the_block_pass() {
        if !wide_features_cpu() {
            eprintln!("skipped: this CPU lacks an AVX-512 extension the wide pass needs");
            return;
        }
        let mut rng = Rng(47);
        let alphabets: [&[&str]; 3] = [
            ASCII_ALPHABET,
            MIXED_ALPHABET,
            &[
                "中", "文", "字", "日本", "한", " ", "\n", "a", "7", "😀", "é", "\t", "\\",
            ],
        ];
        for round in 0..900 {
            let alphabet = alphabets[round % alphabets.len()];
            // Up to four groups of 512 bytes, so every lane and group boundary is crossed; in
            // a third of the texts, runs of one character up to 40 long, for the features
            // about long runs (blanks, letters, digits, base64).
            let text = if round % 3 == 2 {
                let mut text = String::new();
                while text.len() < (rng.next() % 1800) as usize {
                    let item = alphabet[(rng.next() % alphabet.len() as u64) as usize];
                    text.push_str(&item.repeat((rng.next() % 40 + 1) as usize));
                }
                text
            } else {
                rng.text(alphabet, 1500)
            };
            for encoding in Encoding::ALL {
                // SAFETY: checked above.
                let wide = unsafe { features_wide(&text, encoding) };
                assert_eq!(wide, features_of::<false>(&text, encoding), "{text:?}");
            }
        }
        // Every run length at every offset across a block boundary within a group of eight
        // and across a group boundary, for the features that look back 1 to 16 characters.
        let runs = [
            "a", "aB", "Ab", "x9+/", " ", "\t ", "7", "\\a", "\\ab", ".,", "\n", " \n", "中",
        ];
        for run in runs {
            for len in 1..=24 {
                for offset in (40..=70).chain(490..=520) {
                    let text = format!("{}{}.", "-".repeat(offset), run.repeat(len));
                    // SAFETY: checked above.
                    let wide = unsafe { features_wide(&text, Encoding::O200kBase) };
                    let blocks = features_of::<false>(&text, Encoding::O200kBase);
                    assert_eq!(wide, blocks, "{text:?}");
                }
            }
        }
        for encoding in Encoding::ALL {
            // SAFETY: checked above.
            assert_eq!(unsafe { features_wide("", encoding) }, [0; FEATURES]);
        }
    }

    #[test]
    fn token_count_features_of_blocks_without_digits_take_a_correct_shortcut() {
        // Digits, tabs and backslashes now and then, at every distance from a block's end.
        let mut rng = Rng(31);
        let words = ["the", "Word", " ", "\n", ". ", "x"];
        let rare = ["1", "42", "\t", "\\", "\\n", "\t\t", "a1"];
        for _ in 0..300 {
            let mut text = String::new();
            while text.len() < (rng.next() % 700) as usize {
                if rng.next().is_multiple_of(16) {
                    text.push_str(rare[(rng.next() % rare.len() as u64) as usize]);
                } else {
                    text.push_str(words[(rng.next() % words.len() as u64) as usize]);
                }
            }
            for encoding in Encoding::ALL {
                assert_eq!(
                    features_of::<true>(&text, encoding),
                    features_of::<false>(&text, encoding),
                    "{text:?}"
                );
            }
        }
    }

    #[test]
    fn token_count_features_of_non_ascii_blocks_take_a_correct_shortcut() {
        // Long runs of CJK (whole blocks without ASCII) after blanks, tabs, newlines and
        // letters at every alignment: the shortcut must count exactly what the full pass does.
        let mut rng = Rng(23);
        let runs = [
            "中文字符",
            "日本語のテキスト",
            "한국어",
            "😀",
            "\u{3000}",
            "今今",
            "是的",
            "这个问题",
            "é",
            "中é中",
            "語😀語",
        ];
        let glue = [" ", "  ", "\t ", " \n", "a ", "ab", "1 ", "'", ""];
        for _ in 0..300 {
            let mut text = String::new();
            for _ in 0..rng.next() % 12 + 1 {
                text.push_str(glue[(rng.next() % glue.len() as u64) as usize]);
                let run = runs[(rng.next() % runs.len() as u64) as usize];
                text.push_str(&run.repeat((rng.next() % 60) as usize));
            }
            for encoding in Encoding::ALL {
                let full = features_of::<false>(&text, encoding);
                assert_eq!(features_of::<true>(&text, encoding), full, "{text:?}");
                // The vector pass over blocks of three-byte characters (where the CPU has it):
                // every alignment of the first lead, two-byte and astral characters in the
                // runs, repeats, and characters that end past the block or the text.
                #[cfg(target_arch = "x86_64")]
                if wide_features_cpu() {
                    // SAFETY: checked just above.
                    let wide = unsafe { features_wide(&text, encoding) };
                    assert_eq!(wide, full, "{text:?}");
                }
            }
        }
    }

    fn assert_masks_match_the_table(masks: impl Fn(&[u8; 64]) -> Masks) {
        let mut rng = Rng(5);
        for _ in 0..2000 {
            let mut block = [0u8; 64];
            block.iter_mut().for_each(|b| *b = rng.next() as u8);
            let (fast, slow) = (masks(&block), portable_block_masks(&block));
            let fields = |m: &Masks| {
                [
                    m.upper,
                    m.lower,
                    m.letter,
                    m.digit,
                    m.space,
                    m.tab,
                    m.newline,
                    m.blank,
                    m.white,
                    m.punct,
                    m.high,
                    m.cont,
                    m.backslash,
                    m.b64,
                ]
            };
            assert_eq!(fields(&fast), fields(&slow));
        }
    }

    #[test]
    fn token_count_estimate_basics() {
        for encoding in Encoding::ALL {
            assert_eq!(estimate("", encoding), 0);
            assert!(estimate("a", encoding) >= 1);
            // A sanity check only: the ±10% bound is checked on held-out real text in
            // tests/test_token_count.py.
            let text = "The quick brown fox jumps over the lazy dog. ".repeat(50);
            let (exact, est) = (count_exact(&text, encoding), estimate(&text, encoding));
            assert!(est.abs_diff(exact) * 4 <= exact, "{exact} {est}");
        }
        let f = text_features("Hello 世界 123\n", Encoding::O200kBase);
        assert_eq!(f[0], 1); // letter pieces
        assert_eq!(f[14], 3); // digits
        assert_eq!(f[NA], 2); // han
        assert_eq!(f[NA + 9], 1); // non-ASCII after a space
    }
}
