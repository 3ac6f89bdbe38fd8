//! Cutting a pre-tokenizer piece where no token of the vocabulary can cross, so that the
//! byte-pair encoder runs on short segments (most of them a single character or a two-character
//! word in Chinese and Japanese text) instead of the whole piece.
//!
//! Why the cut is exact: every merge of byte-pair encoding joins two adjacent parts into a
//! token, so the merged bytes are a token occurring in the piece. If no token occurs in the
//! piece across a position, no merge ever joins the parts on its two sides, and the merges on
//! each side happen in the same order as they would if that side were encoded alone (the
//! lowest-ranked pair of the whole piece is the lowest-ranked pair of its side). So the
//! encoding of the piece is the encodings of the two sides, one after the other.
//!
//! Which positions no token crosses is told from the characters around the position alone: a
//! token that crosses the boundary between characters `a` and `b` holds the end of `a`
//! (all of it, or a tail of its bytes if the token starts inside `a`) followed by the start of
//! `b` (all of it, or a head of its bytes if the token ends inside `b`). [`TokenBoundaries`]
//! records that pair of parts for every character boundary inside every token; a boundary of
//! the piece whose pairs of parts are not recorded is crossed by no token.

use rustc_hash::FxHashSet;

/// The pairs of character parts that meet inside some token of one vocabulary.
pub(super) struct TokenBoundaries {
    /// Two ASCII characters meeting inside a token: one bit per (left, right) pair.
    ascii_pairs: Box<[u64; 128 * 128 / 64]>,
    /// Two whole characters meeting inside a token, not both ASCII, as [`whole_pair_key`]s in
    /// an open-addressing table of `2^(64 - shift)` slots ([`EMPTY`]: free).
    whole_pairs: Box<[u64]>,
    whole_shift: u32,
    /// A tail or head of a character (a token starting or ending inside it) meeting another
    /// part inside a token: (left part, right part), each as [`part_key`].
    partial_pairs: FxHashSet<(u64, u64)>,
    /// One bit per (last byte of the left part, first byte of the right part) of
    /// `partial_pairs`, to skip looking there at nearly every boundary.
    partial_filter: Box<[u64; 256 * 256 / 64]>,
}

/// No key: it would need the byte 0xFF, which UTF-8 never holds.
const EMPTY: u64 = u64::MAX;

/// Up to four bytes as one word, first byte lowest.
fn word(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

/// Two whole UTF-8 characters as one key: a character's length is in its first byte, so the
/// key names the pair.
fn whole_pair_key(left: &[u8], right: &[u8]) -> u64 {
    word(left) | (word(right) << 32)
}

/// A part of a character (1-4 bytes, maybe not starting at a lead byte) with its length.
fn part_key(part: &[u8]) -> u64 {
    word(part) | ((part.len() as u64) << 32)
}

fn filter_bit(left_last: u8, right_first: u8) -> usize {
    usize::from(left_last) << 8 | usize::from(right_first)
}

#[inline(always)]
fn whole_slot(key: u64, shift: u32) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

/// Whether `b` starts a character (is not a UTF-8 continuation byte).
#[inline(always)]
fn starts_char(b: u8) -> bool {
    (b as i8) >= -0x40
}

/// The length of the UTF-8 character whose first byte is `lead`.
#[inline(always)]
fn char_len(lead: u8) -> usize {
    match lead {
        0..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

impl TokenBoundaries {
    /// Records every character boundary inside every token of `tokens`.
    pub(super) fn build<'a>(tokens: impl Iterator<Item = &'a [u8]>) -> TokenBoundaries {
        let mut ascii_pairs = Box::new([0u64; 128 * 128 / 64]);
        let mut whole = FxHashSet::default();
        let mut partial_pairs = FxHashSet::default();
        let mut partial_filter = Box::new([0u64; 256 * 256 / 64]);
        let mut starts = Vec::new();
        for token in tokens {
            starts.clear();
            starts.extend((1..token.len()).filter(|&i| starts_char(token[i])));
            let mut left_start = 0;
            for (n, &at) in starts.iter().enumerate() {
                let right_end = starts.get(n + 1).copied().unwrap_or(token.len());
                let (left, right) = (&token[left_start..at], &token[at..right_end]);
                left_start = at;
                if left.len() > 4 || right.len() > 4 {
                    // Not UTF-8 (a lead byte with too many continuation bytes): such a token
                    // never occurs in text.
                    continue;
                }
                let left_whole = starts_char(left[0]) && char_len(left[0]) == left.len();
                let right_whole = char_len(right[0]) == right.len();
                if left_whole && right_whole {
                    if left.len() == 1 && right.len() == 1 {
                        let bit = usize::from(left[0]) << 7 | usize::from(right[0]);
                        ascii_pairs[bit / 64] |= 1 << (bit % 64);
                    } else {
                        whole.insert(whole_pair_key(left, right));
                    }
                } else {
                    partial_pairs.insert((part_key(left), part_key(right)));
                    let bit = filter_bit(left[left.len() - 1], right[0]);
                    partial_filter[bit / 64] |= 1 << (bit % 64);
                }
            }
        }
        // At most half full: a miss ends at the first free slot, soon.
        let size = (whole.len() * 2).next_power_of_two().max(2);
        let whole_shift = 64 - size.trailing_zeros();
        let mut whole_pairs = vec![EMPTY; size].into_boxed_slice();
        for key in whole {
            let mut i = whole_slot(key, whole_shift);
            while whole_pairs[i] != EMPTY {
                i = (i + 1) & (size - 1);
            }
            whole_pairs[i] = key;
        }
        TokenBoundaries {
            ascii_pairs,
            whole_pairs,
            whole_shift,
            partial_pairs,
            partial_filter,
        }
    }

    /// Whether some token of the vocabulary, occurring in text, can cross the boundary between
    /// the whole characters `left` and `right`.
    #[inline]
    fn crossed(&self, left: &[u8], right: &[u8]) -> bool {
        if left.len() == 1 && right.len() == 1 {
            let bit = usize::from(left[0]) << 7 | usize::from(right[0]);
            return self.ascii_pairs[bit / 64] & (1 << (bit % 64)) != 0;
        }
        let key = whole_pair_key(left, right);
        let mask = self.whole_pairs.len() - 1;
        let mut i = whole_slot(key, self.whole_shift);
        loop {
            match self.whole_pairs[i] {
                slot if slot == key => return true,
                EMPTY => break,
                _ => i = (i + 1) & mask,
            }
        }
        let bit = filter_bit(left[left.len() - 1], right[0]);
        if self.partial_filter[bit / 64] & (1 << (bit % 64)) == 0 {
            return false;
        }
        (0..left.len()).any(|from| {
            (1..=right.len()).any(|to| {
                (from, to) != (0, right.len())
                    && self
                        .partial_pairs
                        .contains(&(part_key(&left[from..]), part_key(&right[..to])))
            })
        })
    }

    /// Cuts `piece` (whole UTF-8 characters) at every character boundary no token crosses and
    /// hands each segment to `count_segment`, returning the sum of its counts.
    pub(super) fn count_segments(
        &self,
        piece: &[u8],
        mut count_segment: impl FnMut(&[u8]) -> u64,
    ) -> u64 {
        let mut total = 0;
        let mut segment_start = 0;
        let mut left_start = 0;
        let mut at = char_len(piece[0]);
        while at < piece.len() {
            let right_end = (at + char_len(piece[at])).min(piece.len());
            if !self.crossed(&piece[left_start..at], &piece[at..right_end]) {
                total += count_segment(&piece[segment_start..at]);
                segment_start = at;
            }
            left_start = at;
            at = right_end;
        }
        total + count_segment(&piece[segment_start..])
    }
}
