//! The AVX2 kernel: four blocks at a time, and the vector pass of two- and three-byte
//! characters.

use super::*;

/// The base masks of a group of four blocks with AVX2, for [`features_avx2`]: per mask (the
/// `GROUP_*` indices), the byte masks of the eight 32-byte halves, so that the words read as
/// 64-bit lanes are the masks of the four blocks. Ranges are one signed compare of the byte
/// moved so that the range starts at -128.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub(in super::super) fn group_masks_avx2(group: &[u8; 256], words: &mut [[u32; 8]; GROUP_MASKS]) {
    use std::arch::x86_64::{
        __m256i, _mm256_add_epi8, _mm256_cmpeq_epi8, _mm256_cmpgt_epi8, _mm256_loadu_si256,
        _mm256_movemask_epi8, _mm256_or_si256, _mm256_set1_epi8,
    };
    for (half, bytes) in group.chunks_exact(32).enumerate() {
        // SAFETY: the load reads the 32 bytes of `bytes`.
        let v = unsafe { _mm256_loadu_si256(bytes.as_ptr().cast::<__m256i>()) };
        let eq = |c: u8| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(c as i8));
        // `lo..=hi`: `byte + 128 - lo` (wrapping) is below `hi - lo + 1 - 128`.
        let range = |lo: u8, hi: u8| {
            let moved = _mm256_add_epi8(v, _mm256_set1_epi8(128u8.wrapping_sub(lo) as i8));
            _mm256_cmpgt_epi8(
                _mm256_set1_epi8((hi - lo).wrapping_add(1).wrapping_sub(128) as i8),
                moved,
            )
        };
        let mut set = |k: usize, x: __m256i| words[k][half] = _mm256_movemask_epi8(x) as u32;
        set(GROUP_UPPER, range(b'A', b'Z'));
        set(GROUP_LOWER, range(b'a', b'z'));
        set(GROUP_DIGIT, range(b'0', b'9'));
        set(GROUP_SPACE, eq(b' '));
        set(GROUP_TAB, _mm256_or_si256(eq(b'\t'), range(0x0B, 0x0C)));
        set(GROUP_NEWLINE, _mm256_or_si256(eq(b'\n'), eq(b'\r')));
        set(GROUP_HIGH, v);
        // Signed bytes below -64: 0x80..=0xBF.
        set(GROUP_CONT, _mm256_cmpgt_epi8(_mm256_set1_epi8(-64), v));
        set(GROUP_BACKSLASH, eq(b'\\'));
        set(GROUP_PLUS_SLASH, _mm256_or_si256(eq(b'+'), eq(b'/')));
    }
}

/// The masks of [`group_masks_avx2`] (the others are derived from them).
#[cfg(target_arch = "x86_64")]
pub(in super::super) const GROUP_UPPER: usize = 0;
#[cfg(target_arch = "x86_64")]
pub(in super::super) const GROUP_LOWER: usize = 1;
#[cfg(target_arch = "x86_64")]
pub(in super::super) const GROUP_DIGIT: usize = 2;
#[cfg(target_arch = "x86_64")]
pub(in super::super) const GROUP_SPACE: usize = 3;
#[cfg(target_arch = "x86_64")]
pub(in super::super) const GROUP_TAB: usize = 4;
#[cfg(target_arch = "x86_64")]
pub(in super::super) const GROUP_NEWLINE: usize = 5;
#[cfg(target_arch = "x86_64")]
pub(in super::super) const GROUP_HIGH: usize = 6;
#[cfg(target_arch = "x86_64")]
pub(in super::super) const GROUP_CONT: usize = 7;
#[cfg(target_arch = "x86_64")]
pub(in super::super) const GROUP_BACKSLASH: usize = 8;
#[cfg(target_arch = "x86_64")]
pub(in super::super) const GROUP_PLUS_SLASH: usize = 9;
#[cfg(target_arch = "x86_64")]
pub(in super::super) const GROUP_MASKS: usize = 10;

/// [`features_of`] with AVX2, four blocks at a time (for CPUs without the AVX-512 of
/// [`features_wide`], whose scheme it follows): lane `j` of a vector holds a mask of block `j`
/// of a group of four, the look-back into the previous block is a shift of each lane and of
/// the lane below (lane 0 taking the previous group's last lane), and bits are counted per
/// byte with a nibble table (AVX2 has no vector bit count) in byte counters that are summed
/// before they can overflow. The per-character pass then visits the group's blocks in order
/// (blocks of two- and three-byte characters with the vector pass, [`NonAscii::block_avx2`]).
/// Same counts as [`features_of`] (checked by the tests).
///
/// # Safety
/// The CPU must have the features enabled here.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt,bmi1,bmi2")]
pub(in super::super) unsafe fn features_avx2(text: &str, encoding: Encoding) -> [u64; FEATURES] {
    use std::arch::x86_64::*;
    let zero = _mm256_setzero_si256();
    let all_ones = _mm256_set1_epi8(-1);
    let mut carry = Carry::zero(zero);
    let mut counts = Avx2Ascii::new();
    let mut f = [0u64; FEATURES];
    let bytes = text.as_bytes();
    let mut chars = NonAscii::new(CjkTables::get(encoding));
    let mut vector_counts = Avx2Counts::new();
    let mut words = [[0u32; 8]; GROUP_MASKS];
    for (group_index, group) in bytes.chunks(256).enumerate() {
        if group_index % BYTE_COUNT_GROUPS == BYTE_COUNT_GROUPS - 1 {
            counts.sum_bytes();
        }
        // The last group is padded with NULs (in no class but punctuation, masked by `valid`);
        // full groups are read in place.
        let padded;
        let data: &[u8] = if group.len() == 256 {
            group
        } else {
            let mut buffer = [0u8; 256];
            buffer[..group.len()].copy_from_slice(group);
            padded = buffer;
            &padded
        };
        group_masks_avx2(data.try_into().expect("256 bytes"), &mut words);
        // SAFETY: reads the eight words of `words[k]`.
        let lanes = |k: usize| unsafe { _mm256_loadu_si256(words[k].as_ptr().cast::<__m256i>()) };
        let mut m = Masks {
            upper: lanes(GROUP_UPPER),
            lower: lanes(GROUP_LOWER),
            digit: lanes(GROUP_DIGIT),
            space: lanes(GROUP_SPACE),
            tab: lanes(GROUP_TAB),
            newline: lanes(GROUP_NEWLINE),
            high: lanes(GROUP_HIGH),
            cont: lanes(GROUP_CONT),
            backslash: lanes(GROUP_BACKSLASH),
            ..Masks::<__m256i>::zero(zero)
        };
        // Every byte of a full group is valid; only the last group is counted lane by lane.
        let valid_v = if group.len() == 256 {
            all_ones
        } else {
            let valid: [u64; 4] =
                std::array::from_fn(|j| valid_mask(group.len().saturating_sub(64 * j)));
            // SAFETY: reads the four words of `valid`.
            unsafe { _mm256_loadu_si256(valid.as_ptr().cast::<__m256i>()) }
        };
        // (Padding bytes are NUL, which only the punctuation mask would hold.)
        m.derive(lanes(GROUP_PLUS_SLASH), valid_v);
        carry = ascii_features(&m, valid_v, &carry, true, &mut counts);
        // (Most groups of prose, code and JSON have no non-ASCII byte: one test skips them.)
        if _mm256_testz_si256(m.high, m.high) != 0 {
            continue;
        }
        for j in 0..4 {
            let mask =
                |k: usize| u64::from(words[k][2 * j]) | (u64::from(words[k][2 * j + 1]) << 32);
            let leads = mask(GROUP_HIGH) & !mask(GROUP_CONT);
            if leads == 0 {
                continue;
            }
            let base = group_index * 256 + 64 * j;
            // (A block of a few non-ASCII characters, such as an accent in English, is cheaper
            // character by character.)
            // SAFETY: the CPU has AVX2; a block with a lead byte in the first 64 bytes of a
            // group of at least that many is a full block of the text.
            let done = group.len() >= 64 * (j + 1)
                && leads.count_ones() >= AVX2_MIN_CHARS
                && unsafe { chars.block_avx2(bytes, base, leads, &mut vector_counts) };
            if !done {
                chars.block(bytes, base, leads, &mut f);
            }
        }
    }
    vector_counts.add_to(&mut f);
    counts.sum_bytes();
    for (k, &lanes) in counts.sums.iter().enumerate() {
        add_ascii_total(&mut f, k, lane_sum(lanes));
    }
    f
}

/// The sum of the four 64-bit lanes of `v`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn lane_sum(v: std::arch::x86_64::__m256i) -> u64 {
    use std::arch::x86_64::*;
    let halves = _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
    _mm_cvtsi128_si64(_mm_add_epi64(halves, _mm_unpackhi_epi64(halves, halves))) as u64
}

/// A byte's count of set bits grows by at most 8 a group: [`Avx2Ascii`] sums its byte counters
/// into 64-bit lanes every this many groups.
const BYTE_COUNT_GROUPS: usize = 31;

impl MaskLanes for std::arch::x86_64::__m256i {
    #[inline(always)]
    fn and(self, other: Self) -> Self {
        // SAFETY (all four): inlined into the AVX2 kernel, whose CPU has AVX2.
        unsafe { std::arch::x86_64::_mm256_and_si256(self, other) }
    }
    #[inline(always)]
    fn or(self, other: Self) -> Self {
        unsafe { std::arch::x86_64::_mm256_or_si256(self, other) }
    }
    #[inline(always)]
    fn but(self, other: Self) -> Self {
        unsafe { std::arch::x86_64::_mm256_andnot_si256(other, self) }
    }
    /// A shift of each lane and of the lane below (lanes [prev 3, self 0, self 1, self 2]).
    /// (The right shift takes its count from a register, as `64 - K` cannot be a constant
    /// argument here; the count is a constant once inlined, and compiles to the immediate
    /// shift.)
    #[inline(always)]
    fn back<const K: i32>(self, prev: Self) -> Self {
        use std::arch::x86_64::*;
        unsafe {
            let below =
                _mm256_alignr_epi8::<8>(self, _mm256_permute2x128_si256::<0x21>(prev, self));
            _mm256_or_si256(
                _mm256_slli_epi64::<K>(self),
                _mm256_srl_epi64(below, _mm_cvtsi32_si128(64 - K)),
            )
        }
    }
}

impl Masks<std::arch::x86_64::__m256i> {
    /// Every mask `zero` (the derived ones are then set by [`Masks::derive`]).
    #[inline(always)]
    fn zero(zero: std::arch::x86_64::__m256i) -> Self {
        Masks {
            upper: zero,
            lower: zero,
            letter: zero,
            digit: zero,
            space: zero,
            tab: zero,
            newline: zero,
            blank: zero,
            white: zero,
            punct: zero,
            high: zero,
            cont: zero,
            backslash: zero,
            b64: zero,
        }
    }
}

/// Per ASCII feature (and `high_space` last), the bit counts of the groups since the last
/// [`Avx2Ascii::sum_bytes`] per byte, and the sums in four 64-bit lanes. Bits are counted per
/// byte with a nibble table (AVX2 has no vector bit count).
struct Avx2Ascii {
    bytes: [std::arch::x86_64::__m256i; ASCII_FEATURES + 1],
    sums: [std::arch::x86_64::__m256i; ASCII_FEATURES + 1],
    nibble_bits: std::arch::x86_64::__m256i,
}

impl Avx2Ascii {
    #[target_feature(enable = "avx2")]
    fn new() -> Avx2Ascii {
        use std::arch::x86_64::*;
        let zero = _mm256_setzero_si256();
        Avx2Ascii {
            bytes: [zero; ASCII_FEATURES + 1],
            sums: [zero; ASCII_FEATURES + 1],
            nibble_bits: _mm256_setr_epi8(
                0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3,
                2, 3, 3, 4,
            ),
        }
    }

    /// Sums the byte counters into the 64-bit lanes.
    #[target_feature(enable = "avx2")]
    fn sum_bytes(&mut self) {
        use std::arch::x86_64::*;
        let zero = _mm256_setzero_si256();
        for (sums, counts) in self.sums.iter_mut().zip(self.bytes.iter_mut()) {
            *sums = _mm256_add_epi64(*sums, _mm256_sad_epu8(*counts, zero));
            *counts = zero;
        }
    }
}

impl CountBits<std::arch::x86_64::__m256i> for Avx2Ascii {
    #[inline(always)]
    fn count(&mut self, k: usize, mask: std::arch::x86_64::__m256i) {
        use std::arch::x86_64::*;
        // SAFETY: inlined into the AVX2 kernel, whose CPU has AVX2.
        unsafe {
            let low_nibbles = _mm256_set1_epi8(0x0F);
            let low = _mm256_shuffle_epi8(self.nibble_bits, _mm256_and_si256(mask, low_nibbles));
            let high = _mm256_shuffle_epi8(
                self.nibble_bits,
                _mm256_and_si256(_mm256_srli_epi16::<4>(mask), low_nibbles),
            );
            self.bytes[k] = _mm256_add_epi8(self.bytes[k], _mm256_add_epi8(low, high));
        }
    }
}

/// Blocks with fewer non-ASCII characters than this take [`NonAscii::block`] in
/// [`features_avx2`].
#[cfg(target_arch = "x86_64")]
pub(in super::super) const AVX2_MIN_CHARS: u32 = 4;

impl NonAscii<'_> {
    /// [`NonAscii::block`] for a block whose non-ASCII characters are all two or three bytes
    /// long, eight characters per vector instruction (for CPUs with AVX2 but not the AVX-512
    /// of [`NonAscii::block_wide`]): their positions listed eight lead bits at a time from a
    /// table, their first four bytes, table entries and pair bits gathered. Returns false,
    /// having counted nothing, when the block starts a four-byte character or the text ends
    /// less than three bytes past the block (the gathers read four bytes at each lead).
    ///
    /// # Safety
    /// The CPU must have AVX2; `bytes[base..base + 64]` must be a block of valid UTF-8 text
    /// and `leads` the mask of its non-ASCII characters' lead bytes.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,popcnt,bmi1,bmi2")]
    pub(in super::super) unsafe fn block_avx2(
        &mut self,
        bytes: &[u8],
        base: usize,
        leads: u64,
        counts: &mut Avx2Counts,
    ) -> bool {
        use std::arch::x86_64::*;
        if leads == 0 || bytes.len() < base + 67 {
            return false;
        }
        let block = &bytes[base..base + 67];
        // SAFETY: the loads read the first 64 bytes of `block`.
        let (v0, v1) = unsafe {
            (
                _mm256_loadu_si256(block.as_ptr().cast::<__m256i>()),
                _mm256_loadu_si256(block.as_ptr().add(32).cast::<__m256i>()),
            )
        };
        // Lead bytes of four-byte characters (0xF0 and up) and of two-byte ones (below 0xE0).
        // (Macros rather than closures, which are not always inlined here.)
        macro_rules! at_least {
            ($b:expr) => {{
                let bound = _mm256_set1_epi8($b as i8);
                let (lo, hi) = (
                    _mm256_cmpeq_epi8(_mm256_max_epu8(v0, bound), v0),
                    _mm256_cmpeq_epi8(_mm256_max_epu8(v1, bound), v1),
                );
                u64::from(_mm256_movemask_epi8(lo) as u32)
                    | (u64::from(_mm256_movemask_epi8(hi) as u32) << 32)
            }};
        }
        if at_least!(0xF0u8) & leads != 0 {
            return false;
        }
        let two_byte_leads = leads & !at_least!(0xE0u8);
        // Byte k: the offset in the block of the k-th lead byte (the bytes past the last are
        // offsets in the block too, so their gathers stay in bounds).
        let mut positions = [0u8; 72];
        let mut n = 0usize;
        for (k, &byte) in leads.to_le_bytes().iter().enumerate() {
            let word = LEAD_OFFSETS[usize::from(byte)] + 0x0808_0808_0808_0808 * k as u64;
            // SAFETY: `n` counts the set bits of the bytes before: at most 56, so the eight
            // bytes written are in `positions`.
            unsafe {
                positions
                    .as_mut_ptr()
                    .add(n)
                    .cast::<u64>()
                    .write_unaligned(word)
            };
            n += byte.count_ones() as usize;
        }
        let tables = self.tables;
        let one = _mm256_set1_epi32(1);
        macro_rules! mask32 {
            ($bits:expr) => {
                _mm256_set1_epi32($bits as i32)
            };
        }
        // Lane k takes lane k - 1 of `cur`, lane 0 lane 7 of `carry`.
        let up = _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6);
        macro_rules! lane_up {
            ($cur:expr, $carry:expr) => {
                _mm256_blend_epi32::<1>(
                    _mm256_permutevar8x32_epi32($cur, up),
                    _mm256_permutevar8x32_epi32($carry, up),
                )
            };
        }
        // Lane 7 of the carries: the character before this vector's first, and where it ended
        // relative to the block (-1 if before the block: never adjacent).
        let mut carry_char = _mm256_set1_epi32(self.last_char as i32);
        let mut carry_index = _mm256_set1_epi32((self.last_info >> 20) as i32);
        let last_end = match self.last_end.checked_sub(base) {
            Some(end) if end < 64 => end as i32,
            _ => -1,
        };
        let mut carry_end = _mm256_set1_epi32(last_end);
        for eighth in 0..n.div_ceil(8) {
            let chars_here = (n - 8 * eighth).min(8) as i32;
            let valid = _mm256_cmpgt_epi32(
                _mm256_set1_epi32(chars_here),
                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
            );
            // SAFETY: reads 8 bytes of `positions` (`8 * eighth + 8 <= 72`).
            let at = _mm256_cvtepu8_epi32(unsafe {
                _mm_loadl_epi64(positions.as_ptr().add(8 * eighth).cast::<__m128i>())
            });
            // SAFETY: every offset is below 64 and `block` has 67 bytes: the four bytes read
            // at each are in it.
            let w = unsafe { _mm256_i32gather_epi32::<1>(block.as_ptr().cast::<i32>(), at) };
            let c3 = _mm256_or_si256(
                _mm256_slli_epi32::<12>(_mm256_and_si256(w, mask32!(0x0F))),
                _mm256_or_si256(
                    _mm256_srli_epi32::<2>(_mm256_and_si256(w, mask32!(0x3F00))),
                    _mm256_srli_epi32::<16>(_mm256_and_si256(w, mask32!(0x3F_0000))),
                ),
            );
            let (c, end) = if two_byte_leads == 0 {
                (c3, _mm256_add_epi32(at, _mm256_set1_epi32(3)))
            } else {
                let three = _mm256_cmpgt_epi32(_mm256_and_si256(w, mask32!(0xFF)), mask32!(0xDF));
                let c2 = _mm256_or_si256(
                    _mm256_slli_epi32::<6>(_mm256_and_si256(w, mask32!(0x1F))),
                    _mm256_srli_epi32::<8>(_mm256_and_si256(w, mask32!(0x3F00))),
                );
                (
                    _mm256_blendv_epi8(c2, c3, three),
                    // (`three` is -1 where true.)
                    _mm256_sub_epi32(_mm256_add_epi32(at, _mm256_set1_epi32(2)), three),
                )
            };
            // SAFETY: every code point decoded from two or three bytes is below 0x10000, the
            // length of the table.
            let info =
                unsafe { _mm256_i32gather_epi32::<4>(tables.info.as_ptr().cast::<i32>(), c) };
            // The class as a one in byte `class` of a pair of words (as the scalar pass counts:
            // shifting by `info & 63`); a shift past 31 makes 0.
            let shift = _mm256_and_si256(info, mask32!(63));
            let class_low = _mm256_sllv_epi32(one, shift);
            let class_high = _mm256_sllv_epi32(one, _mm256_sub_epi32(shift, mask32!(32)));
            counts.class_bytes[0] =
                _mm256_add_epi32(counts.class_bytes[0], _mm256_and_si256(valid, class_low));
            counts.class_bytes[1] =
                _mm256_add_epi32(counts.class_bytes[1], _mm256_and_si256(valid, class_high));
            // A character is adjacent to the previous one if that one ended where it starts.
            let adjacent = _mm256_cmpeq_epi32(at, lane_up!(end, carry_end));
            let repeat = _mm256_and_si256(adjacent, _mm256_cmpeq_epi32(c, lane_up!(c, carry_char)));
            let pair_index = _mm256_srli_epi32::<20>(info);
            let prev_index = _mm256_and_si256(adjacent, lane_up!(pair_index, carry_index));
            let bit = _mm256_or_si256(
                _mm256_slli_epi32::<{ PAIR_INDEX_BITS as i32 }>(prev_index),
                pair_index,
            );
            // SAFETY: `bit` is below 2^(2 * PAIR_INDEX_BITS), the bitmap's length in bits;
            // the gather reads its 32-bit word.
            let word = unsafe {
                _mm256_i32gather_epi32::<4>(
                    tables.pairs.as_ptr().cast::<i32>(),
                    _mm256_srli_epi32::<5>(bit),
                )
            };
            let pair = _mm256_and_si256(
                _mm256_srlv_epi32(word, _mm256_and_si256(bit, mask32!(31))),
                one,
            );
            // Repeats in byte 0, the two multi flags in bytes 1 and 2 (where the table has
            // them), pairs in byte 3.
            let others = _mm256_or_si256(
                _mm256_or_si256(
                    _mm256_and_si256(repeat, one),
                    _mm256_and_si256(
                        info,
                        mask32!((1 << CJK_MULTI_LANE) | (1 << OTHER_MULTI_LANE)),
                    ),
                ),
                _mm256_slli_epi32::<24>(pair),
            );
            counts.others = _mm256_add_epi32(counts.others, _mm256_and_si256(valid, others));
            carry_char = c;
            carry_index = pair_index;
            carry_end = end;
        }
        counts.vectors += 4;
        if counts.vectors >= 250 {
            counts.flush();
        }
        let last = base + 63 - leads.leading_zeros() as usize;
        let (c, len) = decode(bytes, last);
        (self.last_info, self.last_char, self.last_end) = (tables.info[c as usize], c, last + len);
        true
    }
}

/// Counts of the non-ASCII features by [`NonAscii::block_avx2`], in bytes of eight 32-bit
/// lanes (a lane counts at most one character a vector, at most four vectors a block), summed
/// into `totals` (`NA..NA + 12`) before a byte can overflow.
#[cfg(target_arch = "x86_64")]
pub(in super::super) struct Avx2Counts {
    /// The classes `NA..NA + 6` in bytes of two words (classes 0-3, 4-5).
    pub(in super::super) class_bytes: [std::arch::x86_64::__m256i; 2],
    /// `repeat`, `cjk_multi`, `other_multi` and `cjk_pairs` in bytes 0 to 3.
    pub(in super::super) others: std::arch::x86_64::__m256i,
    /// Vectors added (at most, per lane) since the last flush.
    pub(in super::super) vectors: u32,
    pub(in super::super) totals: [u64; 12],
}

#[cfg(target_arch = "x86_64")]
impl Avx2Counts {
    #[target_feature(enable = "avx2")]
    pub(in super::super) fn new() -> Avx2Counts {
        let zero = std::arch::x86_64::_mm256_setzero_si256();
        Avx2Counts {
            class_bytes: [zero; 2],
            others: zero,
            vectors: 0,
            totals: [0; 12],
        }
    }

    #[target_feature(enable = "avx2")]
    pub(in super::super) fn flush(&mut self) {
        use std::arch::x86_64::*;
        let zero = _mm256_setzero_si256();
        // Byte `byte` of the eight 32-bit lanes of `v`, summed (each below 256: flushed every
        // 250 vectors): the bytes isolated, summed per 64-bit lane, the lanes added.
        let byte_sum = |v: __m256i, byte: i32| {
            let bytes = _mm256_and_si256(
                _mm256_srl_epi32(v, _mm_cvtsi32_si128(8 * byte)),
                _mm256_set1_epi32(0xFF),
            );
            lane_sum(_mm256_sad_epu8(bytes, zero))
        };
        let (low, high, others) = (self.class_bytes[0], self.class_bytes[1], self.others);
        for class in 0..4 {
            self.totals[class] += byte_sum(low, class as i32);
        }
        for class in 4..6 {
            self.totals[class] += byte_sum(high, class as i32 - 4);
        }
        // `f[NA + k]`: repeat 11, cjk_multi 8, other_multi 10, cjk_pairs 7.
        for (byte, feature) in [11, 8, 10, 7].into_iter().enumerate() {
            self.totals[feature] += byte_sum(others, byte as i32);
        }
        (self.class_bytes, self.others, self.vectors) = ([zero; 2], zero, 0);
    }

    /// Adds the counts to `f`.
    #[target_feature(enable = "avx2")]
    pub(in super::super) fn add_to(&mut self, f: &mut [u64; FEATURES]) {
        self.flush();
        for (slot, total) in f[NA..NA + 12].iter_mut().zip(self.totals) {
            *slot += total;
        }
    }
}

/// Per byte of a lead-byte mask: the offsets of its set bits, lowest first, in the bytes of a
/// word (the rest 0).
#[cfg(target_arch = "x86_64")]
pub(in super::super) static LEAD_OFFSETS: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut byte = 0;
    while byte < 256 {
        let (mut word, mut n, mut bit) = (0u64, 0, 0);
        while bit < 8 {
            if byte & (1 << bit) != 0 {
                word |= (bit as u64) << (8 * n);
                n += 1;
            }
            bit += 1;
        }
        table[byte] = word;
        byte += 1;
    }
    table
};
