//! The encodings whose vocabularies ship with clawctx, and the helpers every counter shares
//! (UTF-8 decoding, the size from which texts are counted on all cores). A leaf of the folder.

/// Texts at least this long are split and counted on all cores (rayon's pool).
pub(super) const PARALLEL_MIN_BYTES: usize = 1 << 20;

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

    pub(super) fn tokenizer(self) -> &'static bpe_openai::Tokenizer {
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
}

/// The code point and length of the UTF-8 character that starts at `bytes[at]` (a lead byte
/// of valid UTF-8).
#[inline(always)]
pub(super) fn decode(bytes: &[u8], at: usize) -> (u32, usize) {
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
