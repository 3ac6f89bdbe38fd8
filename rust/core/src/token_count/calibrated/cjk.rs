//! The tables of the non-ASCII features (classes, single-token characters, CJK pairs) and
//! their per-character pass.

use super::*;
use crate::token_count::encoding::build_on_roomy_stack;

/// Per-encoding table of the BMP for the non-ASCII features: per code point, its class (the
/// feature slot it counts in), whether it is a token by itself, and its index among the
/// characters that are half of a two-character CJK token; and the set of those pairs.
pub(super) struct CjkTables {
    /// Per BMP code point, laid out so the per-character pass needs no arithmetic on it:
    /// `index << 20 | other_multi << 16 | cjk_multi << 8 | 8 * class`, where `index` is its
    /// index among the pair characters (0: in no pair), the two flags tell a character that is
    /// not a token by itself in a CJK class or another class (bits already at their lanes in
    /// [`NonAscii::block`]'s counters), and `class` is 0 Han, 1 kana, 2 Hangul,
    /// 3 CJK punctuation, 4 other letter, 5 other symbol.
    pub(super) info: Box<[u32; 0x10000]>,
    /// Bit `a << PAIR_INDEX_BITS | b`: the characters of indices `a` and `b` form a token
    /// (row and column 0 are empty).
    pub(super) pairs: Box<[u64; PAIR_WORDS]>,
    pub(super) vocab: &'static Vocab,
}

/// Pair characters are numbered 1 to [`MAX_PAIR_INDEX`] (characters past that are in no pair).
pub(super) const PAIR_INDEX_BITS: u32 = 11;
pub(super) const MAX_PAIR_INDEX: u16 = (1 << PAIR_INDEX_BITS) - 1;
/// Words of the pair bitmap: one bit per pair of indices.
pub(super) const PAIR_WORDS: usize = (1 << (2 * PAIR_INDEX_BITS)) / 64;

pub(super) static CJK_O200K: std::sync::OnceLock<CjkTables> = std::sync::OnceLock::new();
pub(super) static CJK_CL100K: std::sync::OnceLock<CjkTables> = std::sync::OnceLock::new();

pub(super) const CLASS_HAN: u16 = 0;
pub(super) const CLASS_KANA: u16 = 1;
pub(super) const CLASS_HANGUL: u16 = 2;
pub(super) const CLASS_CJK_PUNCT: u16 = 3;
pub(super) const CLASS_OTHER_LETTER: u16 = 4;
pub(super) const CLASS_SYMBOL: u16 = 5;

pub(super) fn bmp_class(c: u32) -> u16 {
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
    pub(super) fn get(encoding: Encoding) -> &'static CjkTables {
        let cell = match encoding {
            Encoding::O200kBase => &CJK_O200K,
            Encoding::Cl100kBase => &CJK_CL100K,
        };
        cell.get_or_init(|| build_on_roomy_stack(|| CjkTables::build(encoding)))
    }

    pub(super) fn build(encoding: Encoding) -> CjkTables {
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
pub(super) const NA: usize = ASCII_FEATURES;

/// The 8-bit lanes of [`NonAscii::block`]'s second counter word (`astral` is lane 0).
pub(super) const CJK_MULTI_LANE: u32 = 8;
pub(super) const OTHER_MULTI_LANE: u32 = 16;
pub(super) const PAIR_LANE: u32 = 24;
pub(super) const REPEAT_LANE: u32 = 32;

/// The per-character pass over non-ASCII characters.
pub(super) struct NonAscii<'t> {
    pub(super) tables: &'t CjkTables,
    /// The previous non-ASCII character (its info, 0 for an astral one) and the byte offset
    /// just after it.
    pub(super) last_info: u32,
    pub(super) last_char: u32,
    pub(super) last_end: usize,
}

impl<'t> NonAscii<'t> {
    pub(super) fn new(tables: &'t CjkTables) -> Self {
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
    pub(super) fn block(
        &mut self,
        bytes: &[u8],
        base: usize,
        mut leads: u64,
        f: &mut [u64; FEATURES],
    ) {
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
