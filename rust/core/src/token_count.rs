//! Exact token counts with OpenAI's `o200k_base` and `cl100k_base` encodings, a calibrated
//! fast estimator, and the rule for what of a message counts.
//!
//! Exact counts use the `bpe-openai` crate (GitHub's linear-time byte-pair encoder), which
//! compiles both vocabularies into the binary: nothing is downloaded at run time. Its results
//! are those of tiktoken's `encode_ordinary` (special-token strings such as `<|endoftext|>` are
//! counted as plain text). The first count with an encoding loads its vocabulary (about 0.1 s).
//!
//! The calibrated estimator ([`estimate`]) reads the text once, sorts it into the pieces the
//! encodings' pre-tokenizer would cut (letter runs split at lower→upper case changes, digit
//! groups, punctuation runs, whitespace runs, newline runs) and characters of a few classes
//! (Han, kana, Hangul, CJK punctuation, other letters, other symbols), and weighs those counts
//! ([`FEATURE_NAMES`]) with per-encoding weights fitted by least squares on real transcripts
//! (see `benches/test_token_count.py` for the fit and `benches/README.md` for its accuracy).
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
/// ([`split_ascii`], the encoding's regex specialised to ASCII); stretches with other
/// characters go through `bpe-openai`'s regex. A piece that is itself a token counts 1 after
/// one hash lookup; only the others run the byte-pair encoder. Texts of 1 MB and more are cut
/// at line starts (where no piece can cross) and counted on all cores.
pub fn count_exact(text: &str, encoding: Encoding) -> u64 {
    if text.len() >= PARALLEL_MIN_BYTES {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        if threads > 1 {
            let chunks = split_at_line_starts(text, threads);
            if chunks.len() > 1 {
                return std::thread::scope(|scope| {
                    let handles: Vec<_> = chunks
                        .iter()
                        .map(|chunk| scope.spawn(move || count_serial(chunk, encoding)))
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| h.join().expect("token counting does not panic"))
                        .sum()
                });
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
/// - after a `\n`, before an ASCII letter or digit: a newline run ends at the next
///   non-whitespace character, a punctuation piece may take trailing newlines (and `/`) but not
///   a letter or digit, and a letter piece cannot start with a newline.
fn is_cut(bytes: &[u8], pos: usize) -> bool {
    if pos == 0 || pos >= bytes.len() {
        return false;
    }
    let (before, after) = (bytes[pos - 1], bytes[pos]);
    if before.is_ascii_alphanumeric() {
        after < 0x80 && !after.is_ascii_alphanumeric() && after != b'\''
    } else {
        before == b'\n' && after.is_ascii_alphanumeric()
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

/// A vocabulary's tokens in an open-addressing hash table, to tell in one probe whether a
/// piece is a single token (then the byte-pair encoder need not run: tiktoken too returns a
/// piece found in the vocabulary as one token).
struct Vocab {
    encoding: Encoding,
    tokenizer: &'static bpe_openai::Tokenizer,
    /// Per slot: the high 32 bits of the token's hash and its id + 1 (0: empty).
    slots: Box<[u64]>,
    mask: usize,
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
        let n = tokenizer.bpe.num_tokens();
        let size = (n * 2).next_power_of_two();
        let mask = size - 1;
        let mut slots = vec![0u64; size].into_boxed_slice();
        for id in 0..n as u32 {
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
            slots,
            mask,
        }
    }

    /// The rank (token id) of `piece` if it is a token.
    fn rank(&self, piece: &[u8]) -> Option<u32> {
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
    "letters",
    "letter_pieces",
    "off1",
    "off2",
    "off3",
    "off4",
    "off5",
    "off6",
    "off7",
    "off8",
    "off10",
    "off12",
    "off14",
    "off16",
    "off20",
    "upper",
    "ul_switch",
    "b64_deep",
    "deep_switch",
    "alnum_switch",
    "camel",
    "space_prefixed",
    "tab_prefixed",
    "punct_prefixed",
    "bs_prefixed",
    "bs_long",
    "punct",
    "punct_runs",
    "space_punct",
    "punct_long",
    "punct_newline",
    "digits",
    "digit_runs",
    "digit_off3",
    "newline_runs",
    "newline_runs_free",
    "newlines",
    "ws_long_letter",
    "ws_long_other",
    "ws_lone",
    "ws",
    "ws_off1",
    "ws_off3",
    "ws_off7",
    "ws_off15",
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

pub const FEATURES: usize = 57;

/// Per-encoding weights of [`FEATURE_NAMES`], fitted by least squares on the training split
/// (`python benches/test_token_count.py fit`).
const O200K_WEIGHTS: [f64; FEATURES] = [
    0.45924954746464586,   // letters
    0.7116872773360736,    // letter_pieces
    -0.2524377298686554,   // off1
    -0.37599319790543695,  // off2
    0.11804411025662254,   // off3
    0.16156884920619802,   // off4
    -0.13986195008171798,  // off5
    0.15420535822467948,   // off6
    -0.3146544575306999,   // off7
    0.23761641036293313,   // off8
    0.41654408724404346,   // off10
    -0.8336119087082307,   // off12
    4.665130965948238,     // off14
    -13.423152240255476,   // off16
    0.0,                   // off20
    0.09604140206090367,   // upper
    0.07244855142271205,   // ul_switch
    0.08911170015359067,   // b64_deep
    0.13542680008149022,   // deep_switch
    -0.13412447325255805,  // alnum_switch
    -0.554070531804161,    // camel
    -1.349395623910036,    // space_prefixed
    -1.252526841311246,    // tab_prefixed
    -1.0710563626024083,   // punct_prefixed
    -0.19570122740543244,  // bs_prefixed
    1.5466410874113539,    // bs_long
    0.02122225879782577,   // punct
    1.029470445499197,     // punct_runs
    -0.945035291323427,    // space_punct
    0.0017566601544531553, // punct_long
    -0.4277303640482716,   // punct_newline
    -0.2285225206420958,   // digits
    1.6337734221397302,    // digit_runs
    0.5463477805901524,    // digit_off3
    0.11054351055195899,   // newline_runs
    0.5382738746000224,    // newline_runs_free
    0.10539403304196981,   // newlines
    1.3090287294366156,    // ws_long_letter
    1.461416956490292,     // ws_long_other
    0.02037540799712234,   // ws_lone
    1.041198399040966,     // ws
    -1.265021538327587,    // ws_off1
    0.17779471770379163,   // ws_off3
    -0.058512064122884566, // ws_off7
    0.12923619473528447,   // ws_off15
    0.9307056202021687,    // han
    0.9367574753353383,    // kana
    0.5761038089730945,    // hangul
    1.239286397809422,     // cjk_punct
    -0.7688843785374144,   // other_letters
    0.8141480971498204,    // symbols
    3.407880611614665,     // astral
    -1.0015985966670655,   // cjk_pairs
    1.9773439728911517,    // cjk_multi
    -0.30052312758743316,  // high_space
    5.106363683886275,     // other_multi
    -0.721840861589456,    // repeat
];

const CL100K_WEIGHTS: [f64; FEATURES] = [
    0.5059255337470718,    // letters
    0.6726408943024951,    // letter_pieces
    -0.16671536055508565,  // off1
    -0.7168562795789818,   // off2
    0.3918308548913887,    // off3
    0.16518385677780445,   // off4
    -0.260581524525855,    // off5
    0.2637003001397348,    // off6
    -0.4523080431676423,   // off7
    0.3021484372369422,    // off8
    0.49366137151204137,   // off10
    -1.2223727802525814,   // off12
    7.20592980769996,      // off14
    -15.742904060930908,   // off16
    0.0,                   // off20
    0.13587238933265305,   // upper
    -0.024330945788884895, // ul_switch
    0.08426647739554458,   // b64_deep
    0.20412531430983394,   // deep_switch
    -0.23095286341368992,  // alnum_switch
    -0.557474628980369,    // camel
    -1.4793938004930611,   // space_prefixed
    -1.474221695558762,    // tab_prefixed
    -1.1156908493428495,   // punct_prefixed
    -0.14900392230034726,  // bs_prefixed
    1.404948102778968,     // bs_long
    0.01766579123994505,   // punct
    1.0089339995545783,    // punct_runs
    -1.0178834892444424,   // space_punct
    -0.001292779191329323, // punct_long
    -0.4532795954360356,   // punct_newline
    -0.26765637372356155,  // digits
    1.8014350160347505,    // digit_runs
    0.5560052986505735,    // digit_off3
    0.01790290104395087,   // newline_runs
    0.4711824964798077,    // newline_runs_free
    0.2626511369235067,    // newlines
    1.1775790323330757,    // ws_long_letter
    1.228158704782573,     // ws_long_other
    -0.158342858795382,    // ws_lone
    1.1619775362458822,    // ws
    -1.3723791051256553,   // ws_off1
    0.16529438143314845,   // ws_off3
    -0.1354390470637572,   // ws_off7
    0.20658881102670268,   // ws_off15
    1.1771244993075856,    // han
    1.1022203200042222,    // kana
    0.20086814264531316,   // hangul
    0.03726122997881734,   // cjk_punct
    -1.1094859454917319,   // other_letters
    0.09885735372159887,   // symbols
    4.105527575626069,     // astral
    -1.9752180466261176,   // cjk_pairs
    1.0446968510001993,    // cjk_multi
    1.4834511585216372,    // high_space
    0.7144198186998163,    // other_multi
    0.0712884117699848,    // repeat
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
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
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
    std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|chunk| scope.spawn(move || text_features(chunk, encoding)))
            .collect();
        let mut total = [0u64; FEATURES];
        for handle in handles {
            let f = handle.join().expect("feature counting does not panic");
            total.iter_mut().zip(f).for_each(|(t, v)| *t += v);
        }
        total
    })
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
fn block_masks(block: &[u8]) -> Masks {
    if block.len() == 64 {
        return full_block_masks(block.try_into().expect("64 bytes"));
    }
    let mut padded = [0u8; 64];
    padded[..block.len()].copy_from_slice(block);
    let mut m = full_block_masks(&padded);
    // Padding bytes are NUL, which only the punctuation mask holds.
    m.punct &= valid(block.len());
    m
}

/// [`block_masks`] of a full block: SSE2 compares and byte masks, 16 bytes at a time.
#[cfg(target_arch = "x86_64")]
#[allow(unused_unsafe)]
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
    cont_letters: u64,
    x1: u64,
    x2: u64,
    x4: u64,
    ws3: u64,
    ws7: u64,
}

/// The feature counts of `text` for the calibrated estimator, in [`FEATURE_NAMES`] order.
pub fn text_features(text: &str, encoding: Encoding) -> [u64; FEATURES] {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has the instruction.
        return unsafe { text_features_popcnt(text, encoding) };
    }
    features_of(text, encoding)
}

/// [`features_of`] compiled with the `popcnt` instruction (not in the x86_64 baseline).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn text_features_popcnt(text: &str, encoding: Encoding) -> [u64; FEATURES] {
    features_of(text, encoding)
}

#[inline(always)]
fn features_of(text: &str, encoding: Encoding) -> [u64; FEATURES] {
    let mut f = [0u64; FEATURES];
    let bytes = text.as_bytes();
    let mut prev = Masks::default();
    let mut prev_d = Derived::default();
    let mut chars = NonAscii::new(CjkTables::get(encoding));
    // Counts of the 45 ASCII features, four to a word in 16-bit lanes (a lane grows by at most
    // 128 per block), moved into `f` every `FLUSH_BLOCKS` blocks: a few registers instead of
    // 45 memory updates per block.
    let mut acc = [0u64; ASCII_FEATURES.div_ceil(4)];
    for (index, block) in bytes.chunks(64).enumerate() {
        if index % FLUSH_BLOCKS == FLUSH_BLOCKS - 1 {
            flush(&mut acc, &mut f);
        }
        let m = block_masks(block);
        let p = |cur: u64, old: u64, k: u32| sh(cur, old, k);
        let prev_letter = p(m.letter, prev.letter, 1);
        let camel = m.upper & p(m.lower, prev.lower, 1);
        let starts = (m.letter & !prev_letter) | camel;
        let cont_letters = m.letter & !starts;
        let prev_starts = p(starts, prev_d.starts, 1);
        add(&mut acc, 0, m.letter);
        add(&mut acc, 1, starts);
        // offN: letters whose previous N-1 letters continue the same piece.
        let run = |k: u32| p(cont_letters, prev_d.cont_letters, k);
        let mut deep = cont_letters;
        add(&mut acc, 2, deep);
        deep &= run(1);
        add(&mut acc, 3, deep);
        deep &= run(2);
        add(&mut acc, 4, deep);
        deep &= run(3);
        add(&mut acc, 5, deep);
        deep &= run(4);
        add(&mut acc, 6, deep);
        deep &= run(5);
        add(&mut acc, 7, deep);
        deep &= run(6);
        add(&mut acc, 8, deep);
        deep &= run(7);
        add(&mut acc, 9, deep);
        deep &= run(8) & run(9);
        add(&mut acc, 10, deep);
        deep &= run(10) & run(11);
        add(&mut acc, 11, deep);
        deep &= run(12) & run(13);
        add(&mut acc, 12, deep);
        deep &= run(14) & run(15);
        add(&mut acc, 13, deep);
        deep &= run(16) & run(17) & run(18) & run(19);
        add(&mut acc, 14, deep);
        add(&mut acc, 15, m.upper);
        let ul_switch = m.lower & p(m.upper, prev.upper, 1);
        add(&mut acc, 16, ul_switch);
        let x1 = m.b64 & p(m.b64, prev.b64, 1);
        let x2 = x1 & p(x1, prev_d.x1, 2);
        let x4 = x2 & p(x2, prev_d.x2, 4);
        let x8 = x4 & p(x4, prev_d.x4, 8);
        let prev_digit = p(m.digit, prev.digit, 1);
        let alnum_switch = (m.digit & prev_letter) | (m.letter & prev_digit);
        add(&mut acc, 17, x8);
        add(&mut acc, 18, x8 & (ul_switch | camel | alnum_switch));
        add(&mut acc, 19, alnum_switch);
        add(&mut acc, 20, camel);
        let prev_space = p(m.space, prev.space, 1);
        let prev_punct = p(m.punct, prev.punct, 1);
        let prev2_punct = p(m.punct, prev.punct, 2);
        let prev2_space = p(m.space, prev.space, 2);
        add(&mut acc, 21, starts & prev_space);
        add(&mut acc, 22, starts & p(m.tab, prev.tab, 1));
        add(&mut acc, 23, starts & prev_punct & !prev2_punct & !prev2_space);
        let prev_backslash = p(m.backslash, prev.backslash, 1);
        add(&mut acc, 24, starts & prev_backslash);
        add(&mut acc, 25, cont_letters & prev_starts & p(m.backslash, prev.backslash, 2));
        add(&mut acc, 26, m.punct);
        let punct_starts = m.punct & !prev_punct;
        add(&mut acc, 27, punct_starts);
        add(&mut acc, 28, punct_starts & prev_space);
        add(&mut acc, 29, m.punct & prev_punct & prev2_punct);
        let prev_newline = p(m.newline, prev.newline, 1);
        add(&mut acc, 30, m.newline & prev_punct);
        add(&mut acc, 31, m.digit);
        add(&mut acc, 32, m.digit & !prev_digit);
        add(&mut acc, 33, m.digit & prev_digit & p(m.digit, prev.digit, 2) & p(m.digit, prev.digit, 3));
        let newline_starts = m.newline & !prev_newline;
        add(&mut acc, 34, newline_starts);
        add(&mut acc, 35, newline_starts & !prev_punct);
        add(&mut acc, 36, m.newline);
        let prev_blank = p(m.blank, prev.blank, 1);
        let prev2_blank = p(m.blank, prev.blank, 2);
        add(&mut acc, 37, m.letter & prev_blank & prev2_blank);
        add(&mut acc, 38, !m.letter & !m.white & valid(block.len()) & prev_blank & prev2_blank);
        let prev2_white = p(m.white, prev.white, 2);
        add(&mut acc, 39, (m.digit | (m.high & !m.cont)) & prev_blank & !prev2_white);
        add(&mut acc, 39, m.punct & p(m.tab, prev.tab, 1) & !prev2_white);
        add(&mut acc, 40, m.blank);
        // ws_offN: blanks preceded by N more blanks.
        let ws1 = m.blank & prev_blank;
        let ws3 = ws1 & prev2_blank & p(m.blank, prev.blank, 3);
        let ws7 = ws3 & p(ws3, prev_d.ws3, 4);
        let ws15 = ws7 & p(ws7, prev_d.ws7, 8);
        add(&mut acc, 41, ws1);
        add(&mut acc, 42, ws3);
        add(&mut acc, 43, ws7);
        add(&mut acc, 44, ws15);
        let leads = m.high & !m.cont;
        if leads != 0 {
            chars.block(bytes, index * 64, leads, &mut f);
        }
        prev = m;
        prev_d = Derived {
            starts,
            cont_letters,
            x1,
            x2,
            x4,
            ws3,
            ws7,
        };
    }
    flush(&mut acc, &mut f);
    f
}

/// The ASCII features come first in [`FEATURE_NAMES`].
const ASCII_FEATURES: usize = 45;
const FLUSH_BLOCKS: usize = 256;

/// Adds the bits of `mask` to feature `k`'s lane.
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

/// The mask of the first `len` bytes of a block.
fn valid(len: usize) -> u64 {
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
    /// Per BMP code point: `index << 4 | single << 3 | class` (class: 0 Han, 1 kana, 2 Hangul,
    /// 3 CJK punctuation, 4 other letter, 5 other symbol; index 0: in no pair).
    info: Box<[u16]>,
    /// Bit `a * stride + b`: the characters of indices `a` and `b` form a token (row and
    /// column 0 are empty).
    pairs: Box<[u64]>,
    stride: usize,
    vocab: &'static Vocab,
}

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
        let mut info: Vec<u16> = (0..0x10000u32).map(bmp_class).collect();
        let mut index = vec![0u16; 0x10000];
        let mut pair_list = Vec::new();
        let mut count = 0u16;
        for token in encoding.vocabulary() {
            let Ok(s) = std::str::from_utf8(token) else {
                continue;
            };
            let mut it = s.chars().map(|c| c as u32);
            match (it.next(), it.next(), it.next()) {
                (Some(a), None, _) if (0x80..0x10000).contains(&a) => info[a as usize] |= 8,
                (Some(a), Some(b), None)
                    if a < 0x10000
                        && b < 0x10000
                        && info[a as usize] & 7 <= CLASS_HANGUL
                        && info[b as usize] & 7 <= CLASS_HANGUL =>
                {
                    for c in [a, b] {
                        if index[c as usize] == 0 && count < 0x0FFF {
                            count += 1;
                            index[c as usize] = count;
                        }
                    }
                    pair_list.push((index[a as usize], index[b as usize]));
                }
                _ => {}
            }
        }
        for (i, idx) in info.iter_mut().zip(&index) {
            *i |= idx << 4;
        }
        let stride = usize::from(count) + 1;
        let mut pairs = vec![0u64; (stride * stride).div_ceil(64)].into_boxed_slice();
        for (a, b) in pair_list {
            if a != 0 && b != 0 {
                let bit = usize::from(a) * stride + usize::from(b);
                pairs[bit / 64] |= 1 << (bit % 64);
            }
        }
        CjkTables {
            info: info.into_boxed_slice(),
            pairs,
            stride,
            vocab: Vocab::get(encoding),
        }
    }
}

/// The per-character pass over non-ASCII characters.
struct NonAscii<'t> {
    tables: &'t CjkTables,
    /// The previous non-ASCII character (its info, 0 for an astral one) and the byte offset
    /// just after it.
    last_info: u16,
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
    /// bits of the block).
    #[inline(always)]
    fn block(&mut self, bytes: &[u8], base: usize, mut leads: u64, f: &mut [u64; FEATURES]) {
        while leads != 0 {
            let at = base + leads.trailing_zeros() as usize;
            leads &= leads - 1;
            let (c, len) = decode(&bytes[at..]);
            let adjacent = self.last_end == at;
            f[54] += u64::from(at > 0 && bytes[at - 1] == b' ');
            f[56] += u64::from(adjacent && c == self.last_char);
            if c >= 0x10000 {
                f[51] += 1;
                let single = self.tables.vocab.rank(&bytes[at..at + len]).is_some();
                f[55] += u64::from(!single);
                self.last_info = 0;
            } else {
                let info = self.tables.info[c as usize];
                let class = info & 7;
                f[45 + usize::from(class)] += 1;
                let multi = u64::from(info & 8 == 0);
                if class <= CLASS_HANGUL {
                    f[53] += multi;
                    let prev_index = if adjacent {
                        usize::from(self.last_info >> 4)
                    } else {
                        0
                    };
                    let bit = prev_index * self.tables.stride + usize::from(info >> 4);
                    f[52] += (self.tables.pairs[bit / 64] >> (bit % 64)) & 1;
                } else {
                    f[55] += multi;
                }
                self.last_info = info;
            }
            self.last_char = c;
            self.last_end = at + len;
        }
    }
}

/// The code point and length of the UTF-8 character at the start of `bytes` (valid UTF-8).
#[inline(always)]
fn decode(bytes: &[u8]) -> (u32, usize) {
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
        "\u{3000}", "、",
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
        for encoding in Encoding::ALL {
            let tokenizer = encoding.tokenizer();
            for _ in 0..500 {
                let text = rng.text(ASCII_ALPHABET, 80);
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
        let mut rng = Rng(5);
        for _ in 0..2000 {
            let mut block = [0u8; 64];
            block.iter_mut().for_each(|b| *b = rng.next() as u8);
            let (fast, slow) = (full_block_masks(&block), portable_block_masks(&block));
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
            let text = "The quick brown fox jumps over the lazy dog. ".repeat(50);
            let (exact, est) = (count_exact(&text, encoding), estimate(&text, encoding));
            assert!(est.abs_diff(exact) * 10 <= exact, "{exact} {est}");
        }
        let f = text_features("Hello 世界 123\n", Encoding::O200kBase);
        assert_eq!(f[0], 5); // letters
        assert_eq!(f[31], 3); // digits
        assert_eq!(f[45], 2); // han
        assert_eq!(f[54], 1); // non-ASCII after a space
    }
}
