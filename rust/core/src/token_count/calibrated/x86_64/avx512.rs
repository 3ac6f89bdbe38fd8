//! The AVX-512 kernel: eight blocks at a time, and the vector pass of two- and three-byte
//! characters.

use super::*;

/// [`block_masks`] of a full block with AVX-512: each class is one or two compares of the
/// whole block straight into a 64-bit mask.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
pub(in super::super) fn full_block_masks_avx512(block: &[u8; 64]) -> Masks {
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
    m.derive(eq!(b'+') | eq!(b'/'), u64::MAX);
    m
}

impl MaskLanes for std::arch::x86_64::__m512i {
    #[inline(always)]
    fn and(self, other: Self) -> Self {
        // SAFETY (all four): inlined into the AVX-512 kernel, whose CPU has AVX-512 F and VBMI2.
        unsafe { std::arch::x86_64::_mm512_and_si512(self, other) }
    }
    #[inline(always)]
    fn or(self, other: Self) -> Self {
        unsafe { std::arch::x86_64::_mm512_or_si512(self, other) }
    }
    #[inline(always)]
    fn but(self, other: Self) -> Self {
        unsafe { std::arch::x86_64::_mm512_andnot_si512(other, self) }
    }
    /// One funnel shift with the lanes moved up by one.
    #[inline(always)]
    fn back<const K: i32>(self, prev: Self) -> Self {
        use std::arch::x86_64::{_mm512_alignr_epi64, _mm512_shldi_epi64};
        unsafe { _mm512_shldi_epi64::<K>(self, _mm512_alignr_epi64::<7>(self, prev)) }
    }
}

/// Per ASCII feature (and `high_space` last), the counts so far in eight lanes: vector bit
/// counts.
struct WideAscii([std::arch::x86_64::__m512i; ASCII_FEATURES + 1]);

impl CountBits<std::arch::x86_64::__m512i> for WideAscii {
    #[inline(always)]
    fn count(&mut self, k: usize, mask: std::arch::x86_64::__m512i) {
        use std::arch::x86_64::{_mm512_add_epi64, _mm512_popcnt_epi64};
        // SAFETY: inlined into the AVX-512 kernel, whose CPU has AVX-512 VPOPCNTDQ.
        self.0[k] = unsafe { _mm512_add_epi64(self.0[k], _mm512_popcnt_epi64(mask)) };
    }
}

/// [`features_of`] with AVX-512, eight blocks at a time: lane `j` of a vector holds a mask of
/// block `j` of a group of eight, the look-back into the previous block is one funnel shift
/// with the lanes moved up by one (lane 0 taking the previous group's last lane), and the
/// counts are vector bit counts. The per-character pass then visits the group's blocks in
/// order (blocks whose non-ASCII characters are two or three bytes long with the vector pass,
/// [`NonAscii::block_wide`]). Same counts as
/// [`features_of`] (checked by the tests).
///
/// # Safety
/// The CPU must have the features enabled here.
#[cfg(target_arch = "x86_64")]
#[target_feature(
    enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2,avx512vpopcntdq,popcnt,bmi1,bmi2"
)]
pub(in super::super) unsafe fn features_wide(text: &str, encoding: Encoding) -> [u64; FEATURES] {
    use std::arch::x86_64::*;
    let zero = _mm512_setzero_si512();
    let mut carry = Carry::zero(zero);
    let mut counts = WideAscii([zero; ASCII_FEATURES + 1]);
    let mut f = [0u64; FEATURES];
    let bytes = text.as_bytes();
    let mut chars = NonAscii::new(CjkTables::get(encoding));
    let mut wide_counts = WideCounts::new();
    for (group_index, group) in bytes.chunks(512).enumerate() {
        // The last group is padded with NULs (in no class but punctuation, masked by `valid`);
        // full groups are read in place.
        let padded;
        let data: &[u8] = if group.len() == 512 {
            group
        } else {
            let mut buffer = [0u8; 512];
            buffer[..group.len()].copy_from_slice(group);
            padded = buffer;
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
        let group_masks = Masks {
            upper: lanes(|m| m.upper),
            lower: lanes(|m| m.lower),
            letter: lanes(|m| m.letter),
            digit: lanes(|m| m.digit),
            space: lanes(|m| m.space),
            tab: lanes(|m| m.tab),
            newline: lanes(|m| m.newline),
            blank: lanes(|m| m.blank),
            white: lanes(|m| m.white),
            punct: lanes(|m| m.punct),
            high: lanes(|m| m.high),
            cont: lanes(|m| m.cont),
            backslash: lanes(|m| m.backslash),
            b64: lanes(|m| m.b64),
        };
        // SAFETY: reads the eight words of `valid`.
        let valid_v = unsafe { _mm512_loadu_si512(valid.as_ptr().cast::<__m512i>()) };
        carry = ascii_features(&group_masks, valid_v, &carry, true, &mut counts);
        for (j, m) in ms.iter().enumerate() {
            let leads = m.high & !m.cont;
            if leads == 0 {
                continue;
            }
            let base = group_index * 512 + 64 * j;
            // SAFETY: the CPU has AVX-512 F, BW, VBMI and VBMI2; a block with a lead byte in
            // the first 64 bytes of a group of at least that many is a full block of the text.
            let done = group.len() >= 64 * (j + 1)
                && unsafe { chars.block_wide(bytes, base, leads, &mut wide_counts) };
            if !done {
                chars.block(bytes, base, leads, &mut f);
            }
        }
    }
    wide_counts.add_to(&mut f);
    let mut sums = [0u64; 8];
    for (k, lanes) in counts.0.iter().enumerate() {
        // SAFETY: writes the eight words of `sums`.
        unsafe { _mm512_storeu_si512(sums.as_mut_ptr().cast::<__m512i>(), *lanes) };
        add_ascii_total(&mut f, k, sums.iter().sum());
    }
    f
}

impl NonAscii<'_> {
    /// [`NonAscii::block`] for a block whose non-ASCII characters are all two or three bytes
    /// long (Chinese, Japanese and Korean text, also amid ASCII; Cyrillic, Greek, accented
    /// Latin), sixteen characters per vector instruction: their positions compressed out of
    /// the lead-byte mask, their bytes fetched with byte permutes and decoded, their table
    /// entries and pair bits gathered. Returns false, having counted nothing, when the block
    /// starts a four-byte character.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, BW, VBMI and VBMI2; `bytes[base..base + 64]` must be a block
    /// of valid UTF-8 text and `leads` the mask of its non-ASCII characters' lead bytes.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2,popcnt,bmi1,bmi2")]
    pub(in super::super) unsafe fn block_wide(
        &mut self,
        bytes: &[u8],
        base: usize,
        leads: u64,
        counts: &mut WideCounts,
    ) -> bool {
        use std::arch::x86_64::*;
        let block = &bytes[base..base + 64];
        // SAFETY: reads the 64 bytes of `block`.
        let v0 = unsafe { _mm512_loadu_si512(block.as_ptr().cast::<__m512i>()) };
        if leads == 0 || _mm512_cmpge_epu8_mask(v0, _mm512_set1_epi8(0xF0u8 as i8)) & leads != 0 {
            return false;
        }
        // At most 32 characters of two or more bytes start in 64 bytes: two vectors of 16.
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
        // Byte k: the offset in the block of the k-th lead byte.
        // SAFETY: reads the 64 bytes of `BYTE_OFFSETS`.
        let offsets = unsafe { _mm512_loadu_si512(BYTE_OFFSETS.as_ptr().cast()) };
        let positions = _mm512_maskz_compress_epi8(leads, offsets);
        let two_byte_leads = leads & _mm512_cmplt_epu8_mask(v0, _mm512_set1_epi8(0xE0u8 as i8));
        let tables = self.tables;
        let one = _mm512_set1_epi32(1);
        let mut add = |feature: usize, mask: u16| {
            let lanes = &mut counts.lanes[feature - NA];
            *lanes = _mm512_mask_add_epi32(*lanes, mask, *lanes, one);
        };
        // Lane 15 of the carries: the character before this vector's first, and where it
        // ended relative to the block (-1 if before the block: never adjacent).
        let mut carry_char = _mm512_set1_epi32(self.last_char as i32);
        let mut carry_index = _mm512_set1_epi32((self.last_info >> 20) as i32);
        let last_end = if self.last_end >= base {
            (self.last_end - base) as i32
        } else {
            -1
        };
        let mut carry_end = _mm512_set1_epi32(last_end);
        for (half, spread) in SPREAD_POSITIONS.iter().enumerate().take(n.div_ceil(16)) {
            let chars_here = (n - 16 * half).min(16);
            let valid = ((1u32 << chars_here) - 1) as u16;
            // Lane k: the offsets of the bytes at, at + 1 and at + 2 of character 16 * half + k,
            // lead byte lowest.
            // SAFETY: reads the 64 bytes of `spread`.
            let spread = unsafe { _mm512_loadu_si512(spread.as_ptr().cast()) };
            let index = _mm512_add_epi8(
                _mm512_permutexvar_epi8(spread, positions),
                // (Byte 3 repeats byte 2; the decoding masks it off.)
                _mm512_set1_epi32(0x0202_0100),
            );
            let at = _mm512_and_si512(index, _mm512_set1_epi32(0xFF));
            let w = _mm512_permutex2var_epi8(v0, index, v1);
            let c3 = _mm512_or_si512(
                _mm512_slli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x0F)), 12),
                _mm512_or_si512(
                    _mm512_srli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x3F00)), 2),
                    _mm512_srli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x3F_0000)), 16),
                ),
            );
            let (c, end) = if two_byte_leads == 0 {
                (c3, _mm512_add_epi32(at, _mm512_set1_epi32(3)))
            } else {
                let three = _mm512_cmpge_epu32_mask(
                    _mm512_and_si512(w, _mm512_set1_epi32(0xFF)),
                    _mm512_set1_epi32(0xE0),
                );
                let c2 = _mm512_or_si512(
                    _mm512_slli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x1F)), 6),
                    _mm512_srli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x3F00)), 8),
                );
                let two = _mm512_add_epi32(at, _mm512_set1_epi32(2));
                (
                    _mm512_mask_blend_epi32(three, c2, c3),
                    _mm512_mask_add_epi32(two, three, two, one),
                )
            };
            // SAFETY: every code point is below 0x10000, the length of the table.
            let info = unsafe {
                _mm512_mask_i32gather_epi32::<4>(
                    _mm512_setzero_si512(),
                    valid,
                    c,
                    tables.info.as_ptr().cast(),
                )
            };
            // The class as a one in byte `class` of a pair of words (as the scalar pass counts:
            // shifting by `info & 63`); a shift past 31 makes 0.
            let shift = _mm512_and_si512(info, _mm512_set1_epi32(63));
            for (word, lanes) in counts.class_bytes.iter_mut().enumerate() {
                let here = _mm512_sllv_epi32(
                    one,
                    _mm512_sub_epi32(shift, _mm512_set1_epi32(32 * word as i32)),
                );
                *lanes = _mm512_mask_add_epi32(*lanes, valid, *lanes, here);
            }
            let test =
                |bit: u32| _mm512_mask_test_epi32_mask(valid, info, _mm512_set1_epi32(1 << bit));
            add(NA + 8, test(CJK_MULTI_LANE));
            add(NA + 10, test(OTHER_MULTI_LANE));
            // A character is adjacent to the previous one if that one ended where it starts.
            let adjacent =
                _mm512_mask_cmpeq_epi32_mask(valid, at, _mm512_alignr_epi32(end, carry_end, 15));
            let prev_char = _mm512_alignr_epi32(c, carry_char, 15);
            add(
                NA + 11,
                _mm512_mask_cmpeq_epi32_mask(adjacent, c, prev_char),
            );
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
            add(NA + 7, _mm512_mask_test_epi32_mask(valid, pair_bits, one));
            carry_char = c;
            carry_index = pair_index;
            carry_end = end;
        }
        counts.class_vectors += 2;
        if counts.class_vectors >= 250 {
            counts.flush_classes();
        }
        let last = base + 63 - leads.leading_zeros() as usize;
        let (c, len) = decode(bytes, last);
        (self.last_info, self.last_char, self.last_end) = (tables.info[c as usize], c, last + len);
        true
    }
}

/// Per-lane counts of the non-ASCII features `NA..NA + 12` by [`NonAscii::block_wide`] (32
/// bits a lane: a lane counts at most one character in 16, so it cannot overflow before the
/// text's length does).
#[cfg(target_arch = "x86_64")]
pub(in super::super) struct WideCounts {
    pub(in super::super) lanes: [std::arch::x86_64::__m512i; 12],
    /// The classes (`NA..NA + 6`) in bytes of two words (classes 0-3, 4-5), flushed into
    /// `lanes` before a byte can overflow: `class_vectors` counts the vectors added since
    /// (at most one per lane each).
    pub(in super::super) class_bytes: [std::arch::x86_64::__m512i; 2],
    pub(in super::super) class_vectors: u32,
}

#[cfg(target_arch = "x86_64")]
impl WideCounts {
    #[target_feature(enable = "avx512f")]
    pub(in super::super) fn new() -> WideCounts {
        let zero = std::arch::x86_64::_mm512_setzero_si512();
        WideCounts {
            lanes: [zero; 12],
            class_bytes: [zero; 2],
            class_vectors: 0,
        }
    }

    #[target_feature(enable = "avx512f")]
    pub(in super::super) fn flush_classes(&mut self) {
        use std::arch::x86_64::*;
        for class in 0..6 {
            let bytes = self.class_bytes[class / 4];
            let count = _mm512_and_si512(
                _mm512_srlv_epi32(bytes, _mm512_set1_epi32(8 * (class % 4) as i32)),
                _mm512_set1_epi32(0xFF),
            );
            self.lanes[class] = _mm512_add_epi32(self.lanes[class], count);
        }
        self.class_bytes = [_mm512_setzero_si512(); 2];
        self.class_vectors = 0;
    }

    /// Adds the counts to `f` (summing the lanes in 64 bits).
    #[target_feature(enable = "avx512f")]
    pub(in super::super) fn add_to(&mut self, f: &mut [u64; FEATURES]) {
        use std::arch::x86_64::*;
        self.flush_classes();
        for (slot, lanes) in f[NA..NA + 12].iter_mut().zip(&self.lanes) {
            let low = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(*lanes));
            let high = _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64::<1>(*lanes));
            *slot += _mm512_reduce_add_epi64(_mm512_add_epi64(low, high)) as u64;
        }
    }
}

/// Byte `4k + j` of vector `h`: `16h + k`, to copy the position of character `16h + k` into
/// the four bytes of lane `k`.
#[cfg(target_arch = "x86_64")]
pub(in super::super) static SPREAD_POSITIONS: [[u8; 64]; 2] = {
    let mut spread = [[0u8; 64]; 2];
    let mut i = 0;
    while i < 128 {
        spread[i / 64][i % 64] = (16 * (i / 64) + (i % 64) / 4) as u8;
        i += 1;
    }
    spread
};

/// 0, 1, ..., 63: byte offsets in a block, compressed by a mask into the positions of its set
/// bits.
#[cfg(target_arch = "x86_64")]
pub(in super::super) static BYTE_OFFSETS: [u8; 64] = {
    let mut offsets = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        offsets[i] = i as u8;
        i += 1;
    }
    offsets
};
