//! The encodings whose vocabularies ship with clawctx, and the helpers every counter shares
//! (UTF-8 decoding, the size from which texts are counted on all cores). A leaf of the folder.
//!
//! The vocabularies are OpenAI's `.tiktoken` files, gzip-compressed in `data/` (2.4 MB in all,
//! against 47 MB for ready-built encoder tables). Each is expanded once, on the first exact count
//! with its encoding, into a rank table and the pre-tokenizer; nothing is downloaded.

use std::io::Read;
use std::sync::OnceLock;

use base64::Engine as _;
use regex_automata::meta::Regex;
use regex_automata::{Anchored, Input};
use rustc_hash::FxHashMap;

/// Texts at least this long are split and counted on all cores (rayon's pool).
pub(super) const PARALLEL_MIN_BYTES: usize = 1 << 20;

/// Stack the one-time table builds need below them (the gzip decoder and the regex
/// compiler), and the segment they get when the calling thread has less left.
const TABLE_BUILD_RED_ZONE: usize = 512 << 10;
const TABLE_BUILD_STACK: usize = 2 << 20;

/// Runs a one-time table build (vocabulary expansion, pre-tokenizer compilation, CJK tables)
/// with enough stack under it.
///
/// The first count may come from any thread, and a Python thread can run on a 64 KiB stack
/// (`threading.stack_size`): the gzip decoder and the regex compiler alone need more than that,
/// and an overflow kills the process (issue 33, N6). Where less than the red zone is left, the
/// build runs on a new stack segment that is freed after it (`stacker`, as rustc does); a
/// thread with room builds in place.
pub(super) fn build_on_roomy_stack<T>(build: impl FnOnce() -> T) -> T {
    stacker::maybe_grow(TABLE_BUILD_RED_ZONE, TABLE_BUILD_STACK, build)
}

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

    /// The encoding's tokenizer, built on first use (thread-safe: one thread builds it, the
    /// others wait for it).
    pub(super) fn tokenizer(self) -> &'static Tokenizer {
        static O200K: OnceLock<Tokenizer> = OnceLock::new();
        static CL100K: OnceLock<Tokenizer> = OnceLock::new();
        match self {
            Encoding::O200kBase => {
                O200K.get_or_init(|| build_on_roomy_stack(|| Tokenizer::build(self)))
            }
            Encoding::Cl100kBase => {
                CL100K.get_or_init(|| build_on_roomy_stack(|| Tokenizer::build(self)))
            }
        }
    }

    /// The byte sequence of every ordinary token, by rank (token id).
    pub fn vocabulary(self) -> impl ExactSizeIterator<Item = &'static [u8]> {
        let bpe = &self.tokenizer().bpe;
        (0..bpe.num_tokens() as u32).map(move |id| bpe.token_bytes(id))
    }

    /// The gzip-compressed `.tiktoken` file: one token a line, its bytes in base64 and its rank.
    /// Files as OpenAI publishes them for tiktoken (`data/README.md` has their SHA-256).
    fn compressed_vocabulary(self) -> &'static [u8] {
        match self {
            Encoding::O200kBase => include_bytes!("../../data/o200k_base.tiktoken.gz"),
            Encoding::Cl100kBase => include_bytes!("../../data/cl100k_base.tiktoken.gz"),
        }
    }

    /// The pre-tokenizer's patterns, tried in order at each piece start, and whether a match
    /// ends with one look-ahead character that is not part of the piece.
    ///
    /// These are tiktoken's `pat_str` regexes (tiktoken 0.7 `tiktoken_ext/openai_public.py`)
    /// with `\s+(?!\S)`, which regex-automata cannot express, written as `\s+$` (a run at
    /// the end) and `\s+\s` less its last character (a run before a non-space keeps its last
    /// space for the next piece): the same pieces.
    fn patterns(self) -> [(String, bool); 3] {
        let main = match self {
            Encoding::O200kBase => [
                r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                r"\p{N}{1,3}",
                r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
                r"\s*[\r\n]+",
                r"\s+$",
            ]
            .join("|"),
            Encoding::Cl100kBase => [
                r"(?i:'s|'t|'re|'ve|'m|'ll|'d)",
                r"[^\r\n\p{L}\p{N}]?\p{L}+",
                r"\p{N}{1,3}",
                r" ?[^\s\p{L}\p{N}]+[\r\n]*",
                r"\s*[\r\n]+",
                r"\s+$",
            ]
            .join("|"),
        };
        [
            (main, false),
            (r"\s+\s".to_owned(), true),
            (r"\s+".to_owned(), false),
        ]
    }
}

/// An encoding's vocabulary and pre-tokenizer: tiktoken's `encode_ordinary`, for counting.
pub(super) struct Tokenizer {
    pub(super) bpe: BytePairEncoding,
    pre: Regex,
    /// Per pattern of `pre`: whether its match ends with a look-ahead character.
    lookahead: Vec<bool>,
}

impl Tokenizer {
    fn build(encoding: Encoding) -> Tokenizer {
        // The data and patterns are compiled in and checked by the tests: a failure here is a
        // broken build, not bad input.
        let mut text = String::new();
        flate2::read::GzDecoder::new(encoding.compressed_vocabulary())
            .read_to_string(&mut text)
            .expect("the vocabulary compiled into clawctx is valid gzip");
        let bpe = BytePairEncoding::from_tiktoken(&text);
        let (patterns, lookahead): (Vec<String>, Vec<bool>) =
            encoding.patterns().into_iter().unzip();
        let pre = Regex::new_many(&patterns).expect("the pre-tokenizer patterns are valid");
        Tokenizer {
            bpe,
            pre,
            lookahead,
        }
    }

    /// The pre-tokenizer's pieces of `text`, in order; they concatenate to `text`.
    pub(super) fn split<'a>(&'a self, text: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        let mut start = 0;
        std::iter::from_fn(move || {
            let input = Input::new(text).range(start..).anchored(Anchored::Yes);
            let found = self.pre.find(input)?;
            let mut end = found.end();
            if self.lookahead[found.pattern().as_usize()] {
                let last = text[..end].chars().next_back().map_or(0, char::len_utf8);
                end -= last;
            }
            let piece = &text[start..end];
            start = end;
            Some(piece)
        })
    }

    /// The token count of `text`, piece by piece (the reference the fast counter is tested
    /// against).
    #[cfg(test)]
    pub(super) fn count(&self, text: &str) -> usize {
        self.split(text)
            .map(|piece| self.bpe.count(piece.as_bytes()))
            .sum()
    }
}

/// A vocabulary: every token's bytes by rank, and the rank of each byte sequence that is a
/// token. The lower rank merges first.
pub(super) struct BytePairEncoding {
    /// Every token's bytes, concatenated in rank order; token `id` is
    /// `bytes[starts[id]..starts[id + 1]]`.
    bytes: &'static [u8],
    starts: Vec<u32>,
    ranks: FxHashMap<&'static [u8], u32>,
}

/// Pieces up to this many bytes are merged in arrays on the stack (a scan for the lowest rank
/// per merge, as tiktoken does); longer ones with a heap, so that no piece costs more than
/// `n log n`.
const SCAN_MERGE_MAX: usize = 64;

/// Pieces longer than this are counted a window at a time ([`BytePairEncoding::count_long`]):
/// memory stays bounded (about 1.5 MB of merge state) and time linear in the piece (one letter
/// repeated for megabytes is one pre-tokenizer piece).
const LONG_PIECE: usize = 1 << 16;

/// The window of [`BytePairEncoding::count_long`], and how far from its end a window's tokens
/// are not trusted (the text beyond the window could still change how they merge).
const WINDOW: usize = 1 << 16;
const WINDOW_MARGIN: usize = 1 << 12;

/// An allocation for counting failed (the process ran out of memory or address space). The
/// counters are infallible functions, so this travels as a panic payload
/// (`std::panic::panic_any`) and the Python binding's guard turns it into `MemoryError`
/// instead of an abort.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfMemory;

impl std::fmt::Display for OutOfMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("out of memory while counting tokens")
    }
}

impl From<std::collections::TryReserveError> for OutOfMemory {
    fn from(_: std::collections::TryReserveError) -> OutOfMemory {
        OutOfMemory
    }
}

/// The state of one heap merge, reused from window to window. Parts are a linked list over
/// their first byte: `end[i]` is where part `i` ends (0: merged away), `prev[i]` the start of
/// the part before it. Candidate merges are `(rank, left part, end of the merged pair)`, lowest
/// rank and then leftmost first; an entry whose parts changed since is skipped when popped.
/// Every buffer grows with `try_reserve`: a failed allocation is an [`OutOfMemory`], not an
/// abort.
#[derive(Default)]
struct HeapMerge {
    end: Vec<u32>,
    prev: Vec<u32>,
    heap: std::collections::BinaryHeap<std::cmp::Reverse<(u32, u32, u32)>>,
}

impl HeapMerge {
    /// Merges `piece` (at most `u32::MAX` bytes) as tiktoken's `byte_pair_merge`; returns the
    /// number of tokens. Afterwards [`HeapMerge::token_ends`] walks the tokens.
    fn run(&mut self, bpe: &BytePairEncoding, piece: &[u8]) -> Result<usize, OutOfMemory> {
        use std::cmp::Reverse;
        let n = piece.len();
        debug_assert!(n >= 2 && u32::try_from(n).is_ok());
        self.end.clear();
        self.prev.clear();
        self.heap.clear();
        self.end.try_reserve(n)?;
        self.prev.try_reserve(n)?;
        self.heap.try_reserve(n)?;
        self.end.extend(1..=n as u32);
        self.prev.extend((0..n as u32).map(|i| i.wrapping_sub(1)));
        let (end, prev, heap) = (&mut self.end, &mut self.prev, &mut self.heap);
        for i in 0..n - 1 {
            let rank = bpe.rank(&piece[i..i + 2]);
            if rank != u32::MAX {
                heap.push(Reverse((rank, i as u32, i as u32 + 2)));
            }
        }
        let mut parts = n;
        while let Some(Reverse((_, left, pair_end))) = heap.pop() {
            let (left, pair_end) = (left as usize, pair_end as usize);
            let right = end[left] as usize;
            if right == 0 || right >= n || end[right] as usize != pair_end {
                continue;
            }
            end[left] = pair_end as u32;
            end[right] = 0;
            parts -= 1;
            // At most two pushes per merge; the heap grows (amortised) only through here.
            heap.try_reserve(2)?;
            if pair_end < n {
                prev[pair_end] = left as u32;
                let next_end = end[pair_end] as usize;
                let rank = bpe.rank(&piece[left..next_end]);
                if rank != u32::MAX {
                    heap.push(Reverse((rank, left as u32, next_end as u32)));
                }
            }
            if left > 0 {
                let before = prev[left] as usize;
                let rank = bpe.rank(&piece[before..pair_end]);
                if rank != u32::MAX {
                    heap.push(Reverse((rank, before as u32, pair_end as u32)));
                }
            }
        }
        Ok(parts)
    }

    /// The end of each token of the last [`HeapMerge::run`], in order.
    fn token_ends(&self) -> impl Iterator<Item = usize> + '_ {
        let mut at = 0usize;
        std::iter::from_fn(move || {
            let end = *self.end.get(at)? as usize;
            at = end;
            Some(end)
        })
    }
}

/// How often [`BytePairEncoding::count_long`] found a cut that was no token boundary (tests
/// check that both ways are taken).
#[cfg(test)]
static WHOLE_PIECE_FALLBACKS: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// What [`BytePairEncoding::count_long`] keeps of a window's merge: the tokens it trusts (those
/// ending by `cut`), their count, the first token's end and the last trusted token's start.
#[derive(Clone, Copy)]
struct WindowCount {
    tokens: usize,
    cut: usize,
    first_end: usize,
    last_start: usize,
}

impl BytePairEncoding {
    /// Reads a `.tiktoken` file (lines `<base64 bytes> <rank>`, ranks `0..n` in order).
    fn from_tiktoken(text: &str) -> BytePairEncoding {
        let mut bytes = Vec::with_capacity(text.len() / 2);
        let mut starts = vec![0u32];
        for (rank, line) in text.lines().enumerate() {
            let (token, id) = line
                .split_once(' ')
                .expect("a `.tiktoken` line has two fields");
            debug_assert_eq!(id.parse::<usize>().ok(), Some(rank));
            base64::engine::general_purpose::STANDARD
                .decode_vec(token, &mut bytes)
                .expect("a `.tiktoken` token is base64");
            starts.push(u32::try_from(bytes.len()).expect("under 4 GB of tokens"));
        }
        // The tokenizer lives in a static for the rest of the process: its bytes can be
        // borrowed for `'static`, so the rank table keys need no allocation of their own.
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        let mut ranks = FxHashMap::with_capacity_and_hasher(starts.len(), Default::default());
        for (id, pair) in starts.windows(2).enumerate() {
            ranks.insert(&bytes[pair[0] as usize..pair[1] as usize], id as u32);
        }
        BytePairEncoding {
            bytes,
            starts,
            ranks,
        }
    }

    pub(super) fn num_tokens(&self) -> usize {
        self.starts.len() - 1
    }

    /// The bytes of token `id` (`id < num_tokens()`).
    pub(super) fn token_bytes(&self, id: u32) -> &'static [u8] {
        let id = id as usize;
        &self.bytes[self.starts[id] as usize..self.starts[id + 1] as usize]
    }

    fn rank(&self, bytes: &[u8]) -> u32 {
        self.ranks.get(bytes).copied().unwrap_or(u32::MAX)
    }

    /// The number of tokens byte-pair encoding makes of one pre-tokenizer piece: the adjacent
    /// pair whose concatenation has the lowest rank merges first (the leftmost of equals),
    /// until no adjacent pair is a token, as tiktoken's `byte_pair_merge`.
    pub(super) fn count(&self, piece: &[u8]) -> usize {
        if piece.len() <= 1 {
            piece.len()
        } else if piece.len() <= SCAN_MERGE_MAX {
            self.count_by_scan(piece)
        } else {
            let counted = if piece.len() <= LONG_PIECE {
                HeapMerge::default().run(self, piece)
            } else {
                self.count_long(piece, WINDOW, WINDOW_MARGIN)
            };
            counted.unwrap_or_else(|oom| std::panic::panic_any(oom))
        }
    }

    fn count_by_scan(&self, piece: &[u8]) -> usize {
        let n = piece.len();
        // Part starts (and the end), and per part the rank of it merged with the next.
        let mut starts = [0u8; SCAN_MERGE_MAX + 1];
        let mut ranks = [u32::MAX; SCAN_MERGE_MAX];
        for (i, start) in starts.iter_mut().enumerate().take(n + 1) {
            *start = i as u8;
        }
        let pair_rank = |starts: &[u8], i: usize, parts: usize| {
            if i + 1 < parts {
                self.rank(&piece[usize::from(starts[i])..usize::from(starts[i + 2])])
            } else {
                u32::MAX
            }
        };
        let mut parts = n;
        for (i, rank) in ranks.iter_mut().enumerate().take(parts - 1) {
            *rank = pair_rank(&starts, i, parts);
        }
        loop {
            let (best, rank) =
                ranks[..parts - 1]
                    .iter()
                    .enumerate()
                    .fold(
                        (0, u32::MAX),
                        |low, (i, &r)| if r < low.1 { (i, r) } else { low },
                    );
            if rank == u32::MAX {
                return parts;
            }
            starts.copy_within(best + 2..=parts, best + 1);
            ranks.copy_within(best + 1..parts, best);
            parts -= 1;
            ranks[parts - 1..].fill(u32::MAX);
            ranks[best] = pair_rank(&starts, best, parts);
            if best > 0 {
                ranks[best - 1] = pair_rank(&starts, best - 1, parts);
            }
        }
    }

    /// The token count of a piece longer than [`LONG_PIECE`], in bounded memory and linear
    /// time: the piece is merged a `window` at a time, each window's tokens up to `margin`
    /// bytes before its end are counted, and the next window starts where they end.
    ///
    /// Why the sum is exact: if the byte-pair encoding of the whole piece has a token boundary
    /// at `p`, its tokens before `p` are the encoding of the bytes before `p` (no merge ever
    /// crossed `p`, and merges on either side never depend on the other side), and the same
    /// holds after `p`. Whether a window's cut is such a boundary is checked where the windows
    /// meet: a sequence of tokens is the byte-pair encoding of its bytes exactly when every
    /// adjacent pair is "compatible" (the encoding of the two tokens' bytes is those two
    /// tokens), the property GitHub's `bpe` crate (rust-gems `crates/bpe/README.md`) builds its
    /// backtracking encoder on. Pairs inside a window's encoding are compatible by
    /// construction; the pair across each cut is checked. If one is not (the text after a
    /// window changed how its trusted tokens merge, which needs a cascade of merges longer
    /// than `margin`), the piece is merged whole instead, still with fallible allocation.
    ///
    /// Windows with the same bytes as the one before have the same encoding: a run of one
    /// character is merged once per distinct window, not once per window.
    fn count_long(&self, piece: &[u8], window: usize, margin: usize) -> Result<usize, OutOfMemory> {
        debug_assert!(margin < window);
        let mut merge = HeapMerge::default();
        let mut seam = HeapMerge::default();
        let mut seam_bytes = Vec::new();
        let mut total = 0;
        let mut start = 0;
        // The last trusted token (its bytes' range in `piece`) before `start`.
        let mut last: Option<(usize, usize)> = None;
        // The previous window's start and what it gave.
        let mut previous: Option<(usize, WindowCount)> = None;
        loop {
            let end = piece.len().min(start + window);
            let bytes = &piece[start..end];
            let is_last = end == piece.len();
            let reused = previous.filter(|&(at, _)| {
                !is_last && at + bytes.len() <= piece.len() && &piece[at..at + bytes.len()] == bytes
            });
            let counted = match reused {
                Some((_, counted)) => counted,
                None if bytes.len() < 2 => WindowCount {
                    tokens: bytes.len(),
                    cut: bytes.len(),
                    first_end: bytes.len(),
                    last_start: 0,
                },
                None => {
                    let tokens = merge.run(self, bytes)?;
                    let trusted = if is_last {
                        bytes.len()
                    } else {
                        bytes.len() - margin
                    };
                    let mut counted = WindowCount {
                        tokens: 0,
                        cut: 0,
                        first_end: 0,
                        last_start: 0,
                    };
                    for token_end in merge.token_ends() {
                        if counted.first_end == 0 {
                            counted.first_end = token_end;
                        }
                        if token_end > trusted {
                            break;
                        }
                        counted.last_start = counted.cut;
                        counted.cut = token_end;
                        counted.tokens += 1;
                    }
                    debug_assert!(!is_last || counted.tokens == tokens);
                    counted
                }
            };
            if let Some((from, to)) = last {
                let first = &piece[start..start + counted.first_end];
                if !self.compatible(&piece[from..to], first, &mut seam, &mut seam_bytes)? {
                    #[cfg(test)]
                    WHOLE_PIECE_FALLBACKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    return HeapMerge::default().run(self, piece);
                }
            }
            total += counted.tokens;
            if is_last {
                return Ok(total);
            }
            if counted.cut == 0 {
                // No token ends before the margin (tokens are far shorter than a window).
                return HeapMerge::default().run(self, piece);
            }
            last = Some((start + counted.last_start, start + counted.cut));
            previous = Some((start, counted));
            start += counted.cut;
        }
    }

    /// Whether the byte-pair encoding of `left` followed by `right` (two tokens) is those two
    /// tokens.
    fn compatible(
        &self,
        left: &[u8],
        right: &[u8],
        merge: &mut HeapMerge,
        bytes: &mut Vec<u8>,
    ) -> Result<bool, OutOfMemory> {
        bytes.clear();
        bytes.try_reserve(left.len() + right.len())?;
        bytes.extend_from_slice(left);
        bytes.extend_from_slice(right);
        let tokens = merge.run(self, bytes)?;
        Ok(tokens == 2 && merge.token_ends().next() == Some(left.len()))
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

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    use super::*;
    use crate::token_count::test_support::Rng;

    #[test]
    fn shipped_vocabularies_are_openais_files() {
        // tiktoken 0.7 `tiktoken_ext/openai_public.py` checks the files it downloads against
        // these hashes.
        for (encoding, sha256, tokens) in [
            (
                Encoding::O200kBase,
                "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
                199_998,
            ),
            (
                Encoding::Cl100kBase,
                "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
                100_256,
            ),
        ] {
            let mut text = Vec::new();
            flate2::read::GzDecoder::new(encoding.compressed_vocabulary())
                .read_to_end(&mut text)
                .unwrap();
            let digest: String = Sha256::digest(&text)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(digest, sha256, "{encoding:?}");
            assert_eq!(encoding.vocabulary().len(), tokens, "{encoding:?}");
        }
    }

    #[test]
    fn vocabulary_is_by_rank() {
        let bpe = &Encoding::O200kBase.tokenizer().bpe;
        // The first 256 ranks are the single bytes, in tiktoken's order ('!' first).
        assert_eq!(bpe.token_bytes(0), b"!");
        assert_eq!(bpe.rank(b"!"), 0);
        for id in [0, 255, 256, 10_000, 199_997] {
            assert_eq!(bpe.rank(bpe.token_bytes(id)), id);
        }
        assert_eq!(bpe.rank(b"no such token in any vocabulary"), u32::MAX);
    }

    #[test]
    fn first_use_from_many_threads_builds_one_tokenizer() {
        let addresses: Vec<usize> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    scope.spawn(|| std::ptr::from_ref(Encoding::Cl100kBase.tokenizer()) as usize)
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(addresses.windows(2).all(|w| w[0] == w[1]));
    }

    #[test]
    fn split_keeps_the_last_space_of_a_run_for_the_next_piece() {
        for encoding in Encoding::ALL {
            let tokenizer = encoding.tokenizer();
            let pieces = |text: &'static str| tokenizer.split(text).collect::<Vec<_>>();
            // `\s+(?!\S)`: a run before a word gives its last space to the word.
            assert_eq!(pieces("a   b"), ["a", "  ", " b"], "{encoding:?}");
            // A run at the end is one piece, a single space before a word joins it.
            assert_eq!(pieces("a b   "), ["a", " b", "   "], "{encoding:?}");
            // A run before a newline ends with it.
            assert_eq!(pieces("x  \n\ny"), ["x", "  \n\n", "y"], "{encoding:?}");
            // The dropped look-ahead character may be more than one byte.
            assert_eq!(
                pieces("a \u{3000}中"),
                ["a", " ", "\u{3000}中"],
                "{encoding:?}"
            );
        }
    }

    #[test]
    fn counts_of_known_texts() {
        // Counts from tiktoken 0.7 `encode_ordinary`.
        for (text, o200k, cl100k) in [
            ("hello world", 2, 2),
            ("tiktoken is great!", 6, 6),
            ("お誕生日おめでとう", 8, 9),
            ("", 0, 0),
        ] {
            assert_eq!(
                Encoding::O200kBase.tokenizer().count(text),
                o200k,
                "{text:?}"
            );
            assert_eq!(
                Encoding::Cl100kBase.tokenizer().count(text),
                cl100k,
                "{text:?}"
            );
        }
    }

    #[test]
    fn scan_and_heap_merges_agree() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1Du64);
        let mut next = move || rng.next();
        let alphabets: [&[u8]; 3] = [b"ab", b"aeinrst th", b"AbCd019+/="];
        for encoding in Encoding::ALL {
            let bpe = &encoding.tokenizer().bpe;
            for round in 0..3000 {
                let alphabet = alphabets[round % alphabets.len()];
                let len = 2 + (next() % (SCAN_MERGE_MAX as u64 - 1)) as usize;
                let piece: Vec<u8> = (0..len)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect();
                assert_eq!(
                    bpe.count_by_scan(&piece),
                    HeapMerge::default().run(bpe, &piece).unwrap(),
                    "{encoding:?} {:?}",
                    String::from_utf8_lossy(&piece)
                );
            }
            // A long run of one letter goes through the heap in n log n.
            let run = vec![b'a'; 1 << 20];
            assert!(bpe.count(&run) < run.len() / 2);
        }
    }

    fn whole(bpe: &BytePairEncoding, piece: &[u8]) -> usize {
        HeapMerge::default().run(bpe, piece).unwrap()
    }

    #[test]
    fn windowed_counts_equal_whole_merges() {
        use std::sync::atomic::Ordering;
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15u64);
        let mut next = move || rng.next();
        let alphabets: [&[u8]; 5] = [b"a", b"ab", b"aeinrst th", b"AbCd019+/=", b"=-"];
        let before = WHOLE_PIECE_FALLBACKS.load(Ordering::Relaxed);
        for encoding in Encoding::ALL {
            let bpe = &encoding.tokenizer().bpe;
            for round in 0..2000 {
                let alphabet = alphabets[round % alphabets.len()];
                let len = 2 + (next() % 600) as usize;
                let mut piece: Vec<u8> = (0..len)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect();
                if round % 7 == 0 {
                    // Random bytes, not UTF-8: the encoder works on bytes.
                    piece.iter_mut().for_each(|b| *b = next() as u8);
                }
                // Small windows and margins: many cuts, and some that are no token boundary.
                for (window, margin) in [(24, 4), (64, 16), (200, 40)] {
                    assert_eq!(
                        bpe.count_long(&piece, window, margin).unwrap(),
                        whole(bpe, &piece),
                        "{encoding:?} window {window} {:?}",
                        String::from_utf8_lossy(&piece)
                    );
                }
            }
        }
        // Both ways were taken: trusted cuts, and cuts that a seam showed to be wrong.
        assert!(WHOLE_PIECE_FALLBACKS.load(Ordering::Relaxed) > before);
    }

    #[test]
    fn long_pieces_are_counted_in_windows_as_a_whole_merge_would() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1Du64);
        let mut next = move || rng.next();
        let random: Vec<u8> = (0..300_000).map(|_| next() as u8).collect();
        let letters: Vec<u8> = (0..300_000)
            .map(|_| b"etaoinshrdlu"[(next() % 12) as usize])
            .collect();
        let cjk = "我们今天去了北京的博物馆看展览".repeat(7000).into_bytes();
        for encoding in Encoding::ALL {
            let bpe = &encoding.tokenizer().bpe;
            for piece in [
                vec![b'a'; 1_000_003],
                vec![b'y'; 300_001],
                vec![b'7'; 200_000],
                random.clone(),
                letters.clone(),
                cjk.clone(),
            ] {
                assert!(piece.len() > LONG_PIECE);
                assert_eq!(
                    bpe.count(&piece),
                    whole(bpe, &piece),
                    "{encoding:?} {}",
                    piece.len()
                );
            }
        }
    }
}
