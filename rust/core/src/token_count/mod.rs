//! Exact token counts with OpenAI's `o200k_base` and `cl100k_base` encodings, a calibrated
//! fast estimator, and the rule for what of a message counts.
//!
//! Exact counts ([`count_exact`]) use OpenAI's vocabularies, compiled into the binary
//! gzip-compressed (`encoding`): nothing is downloaded at run time. Results are those of tiktoken's `encode_ordinary`
//! (special-token strings such as `<|endoftext|>` are counted as plain text). ASCII stretches
//! are pre-tokenized by a hand-written splitter, pieces that are a token count 1 after one hash
//! probe, short pieces are merged without allocating, and pieces with other characters are cut
//! where no token of the vocabulary can cross (`boundaries`), so that Chinese and Japanese
//! pieces are encoded a word at a time; see [`count_exact`]. The first count with an encoding
//! loads its vocabulary (about 0.1 s), the first non-ASCII piece its boundary table (10 ms).
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
//!
//! Layout: `encoding` has the encodings (a leaf); this module the counter, the image and
//! message rules; `exact` the exact counter; `boundaries` where pieces can be cut;
//! `calibrated/` the estimator: the estimate and its sample correction (`mod.rs`), the generic
//! block pass, the non-ASCII tables and per-character pass, the per-encoding weights, and one
//! file per x86_64 instruction set (SSE2, AVX2, AVX-512) under `calibrated/x86_64/`.

use std::borrow::Cow;

use serde_json::value::RawValue;

use crate::base::{parse_value, raw_as_str, to_js_string, RawObject};
use crate::hygiene::probe_base64_image;
use crate::transcript::PAIRING_TOOL_CALL_TYPES;
use crate::transcript::{Message, Transcript};

mod boundaries;
mod calibrated;
mod encoding;
mod exact;

pub use calibrated::{estimate, text_features, FEATURES, FEATURE_NAMES};
pub use encoding::{Encoding, OutOfMemory};
pub use exact::count_exact;

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
        // A provider compaction block (`transcript::COMPACTION_BLOCK_TYPE`): the provider
        // bills it as context, its summary and its opaque part alike.
        Some("compaction") => obj
            .get("raw")
            .and_then(|raw| RawObject::parse(raw.get()).ok())
            .map_or(0, |raw| {
                text(raw.get("content")) + text(raw.get("encrypted_content"))
            }),
        _ => 0,
    }
}

/// Test strings shared by the submodules' tests.
#[cfg(test)]
mod test_support {
    /// A deterministic generator of test strings (xorshift).
    pub(super) struct Rng(pub(super) u64);

    impl Rng {
        pub(super) fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        pub(super) fn text(&mut self, alphabet: &[&str], max_len: u64) -> String {
            let len = self.next() % max_len + 1;
            (0..len)
                .map(|_| alphabet[(self.next() % alphabet.len() as u64) as usize])
                .collect()
        }
    }

    pub(super) const ASCII_ALPHABET: &[&str] = &[
        "a", "A", "b", "B", "s", "S", "t", "T", "d", "l", "L", "m", "r", "v", "e", "E", "'", "0",
        "1", "9", " ", " ", "\t", "\n", "\r", "\x0b", ".", ",", "/", "\\", "\"", "{", "}", "(",
        "-", "_", "+", "=", "#", "\x00",
    ];

    pub(super) const MIXED_ALPHABET: &[&str] = &[
        "a", "B", "'", "s", "1", " ", "\n", "\t", ".", "/", "é", "中", "あ", "한", "😀", "\u{a0}",
        "\u{3000}", "、", "\u{85}", "{", "\"", "'",
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // A provider compaction block counts its summary and its opaque content.
        let compacted = r#"{"role":"assistant","content":[{"type":"compaction","api":"anthropic-messages","content":"sum up","raw":{"type":"compaction","content":"sum up","encrypted_content":"opaque bits","signature":"s"}}]}"#;
        for estimator in [Estimator::Exact, Estimator::Calibrated] {
            let counter = TokenCounter::new(Encoding::O200kBase, estimator);
            assert_eq!(
                counter.message(compacted),
                counter.text("sum up") + counter.text("opaque bits")
            );
            assert!(counter.message(compacted) > 0);
        }
    }
}
