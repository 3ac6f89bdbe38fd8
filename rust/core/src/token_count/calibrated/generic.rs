//! The generic algorithm: a block's byte-class masks and the block-by-block pass every CPU
//! runs (the reference the vector kernels are checked against).

use super::*;

/// Bit masks of one 64-byte block (bit `i` is byte `i`); in the vector kernels, of a group of
/// blocks, one block's mask per 64-bit lane.
#[derive(Clone, Copy, Default)]
pub(super) struct Masks<V = u64> {
    pub(super) upper: V,
    pub(super) lower: V,
    pub(super) letter: V,
    pub(super) digit: V,
    pub(super) space: V,
    /// Tab, vertical tab, form feed.
    pub(super) tab: V,
    pub(super) newline: V,
    /// Space or tab.
    pub(super) blank: V,
    pub(super) white: V,
    pub(super) punct: V,
    pub(super) high: V,
    /// UTF-8 continuation bytes.
    pub(super) cont: V,
    pub(super) backslash: V,
    /// Letters, digits, `+`, `/`.
    pub(super) b64: V,
}

impl<V: MaskLanes> Masks<V> {
    /// Sets the masks derived from the others: `letter`, `blank`, `white`, `punct` (of the
    /// bytes in `valid`) and `b64` (with `plus_slash`, the `+` and `/` bytes).
    #[inline(always)]
    pub(super) fn derive(&mut self, plus_slash: V, valid: V) {
        self.letter = self.upper.or(self.lower);
        self.blank = self.space.or(self.tab);
        self.white = self.blank.or(self.newline);
        let letter_digit = self.letter.or(self.digit);
        self.punct = valid.but(letter_digit.or(self.white.or(self.high)));
        self.b64 = letter_digit.or(plus_slash);
    }
}

/// The operations of the block pass on masks: a `u64` is one block's mask, the vector kernels'
/// types hold one block's mask per 64-bit lane (lane 0 the first block of the group). Every
/// implementation is `#[inline(always)]` (as memchr's `Vector`), so that it compiles into the
/// kernel with the kernel's target features.
pub(super) trait MaskLanes: Copy {
    fn and(self, other: Self) -> Self;
    fn or(self, other: Self) -> Self;
    /// `self & !other`.
    fn but(self, other: Self) -> Self;
    /// Each lane shifted towards higher positions by `K` (1 to 8), filled from the lane's
    /// previous block (for lane 0, the last lane of `prev`, the previous group): bit `i` of a
    /// lane is the bit `K` bytes earlier, as [`sh`].
    fn back<const K: i32>(self, prev: Self) -> Self;
}

impl MaskLanes for u64 {
    #[inline(always)]
    fn and(self, other: u64) -> u64 {
        self & other
    }
    #[inline(always)]
    fn or(self, other: u64) -> u64 {
        self | other
    }
    #[inline(always)]
    fn but(self, other: u64) -> u64 {
        self & !other
    }
    #[inline(always)]
    fn back<const K: i32>(self, prev: u64) -> u64 {
        sh(self, prev, K as u32)
    }
}

/// Where [`ascii_features`] counts: feature `k` (`ASCII_FEATURES` for `high_space`, `f[NA + 9]`)
/// gains the set bits of `mask`.
pub(super) trait CountBits<V> {
    fn count(&mut self, k: usize, mask: V);
}

/// The masks of `block` (at most 64 bytes; missing bytes are in no class).
#[inline(always)]
pub(super) fn block_masks(block: &[u8]) -> Masks {
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

/// [`block_masks`] of a full block, byte by byte.
#[cfg(not(target_arch = "x86_64"))]
pub(super) fn full_block_masks(block: &[u8; 64]) -> Masks {
    portable_block_masks(block)
}

/// [`block_masks`] of a full block from a table of byte classes (the reference for the SSE2
/// version).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
pub(super) fn portable_block_masks(block: &[u8; 64]) -> Masks {
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

pub(super) const F_UPPER: u16 = 1;
pub(super) const F_LOWER: u16 = 2;
pub(super) const F_DIGIT: u16 = 4;
pub(super) const F_SPACE: u16 = 8;
pub(super) const F_TAB: u16 = 16;
pub(super) const F_NEWLINE: u16 = 32;
pub(super) const F_PUNCT: u16 = 64;
pub(super) const F_HIGH: u16 = 128;
pub(super) const F_CONT: u16 = 256;
pub(super) const F_BACKSLASH: u16 = 512;
pub(super) const F_B64: u16 = 1024;

pub(super) const fn byte_flags() -> [u16; 256] {
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

pub(super) static BYTE_FLAGS: [u16; 256] = byte_flags();

/// `cur` shifted towards higher positions by `k` (1..=63), filled from the previous block: bit
/// `i` of the result is the bit `k` bytes earlier.
#[inline(always)]
pub(super) fn sh(cur: u64, prev: u64, k: u32) -> u64 {
    (cur << k) | (prev >> (64 - k))
}

/// The previous block's (or group's) masks that the ASCII features look back at: base masks
/// and masks derived by [`ascii_features`].
#[derive(Clone, Copy)]
pub(super) struct Carry<V> {
    pub(super) letter: V,
    pub(super) lower: V,
    pub(super) b64: V,
    pub(super) space: V,
    pub(super) punct: V,
    pub(super) tab: V,
    pub(super) digit: V,
    pub(super) newline: V,
    pub(super) blank: V,
    pub(super) white: V,
    pub(super) backslash: V,
    pub(super) starts: V,
    pub(super) cont: V,
    pub(super) a2: V,
    pub(super) a4: V,
    pub(super) x1: V,
    pub(super) x2: V,
    pub(super) x4: V,
    pub(super) w2: V,
    pub(super) w4: V,
    pub(super) w8: V,
}

impl<V: Copy> Carry<V> {
    /// Every mask `zero`: what comes before the text, or after a block without ASCII bytes.
    #[inline(always)]
    pub(super) fn zero(zero: V) -> Carry<V> {
        Carry {
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
        }
    }
}

/// The ASCII features (and `high_space`) of a block, or of a group of blocks lane by lane,
/// into `counts`; returns what the next block looks back at. `valid`: the bytes of the text
/// (the last block may be padded). `rare`: whether to count the features about digits,
/// backslashes and tabs (a caller may skip them in a block where they count nothing).
#[inline(always)]
pub(super) fn ascii_features<V: MaskLanes>(
    m: &Masks<V>,
    valid: V,
    carry: &Carry<V>,
    rare: bool,
    counts: &mut impl CountBits<V>,
) -> Carry<V> {
    let prev_letter = m.letter.back::<1>(carry.letter);
    let camel = m.upper.and(m.lower.back::<1>(carry.lower));
    let starts = m.letter.but(prev_letter).or(camel);
    let cont = m.letter.but(starts);
    counts.count(0, starts);
    // offN: letters with N-1 letters of the same piece before them (doubling runs).
    let a2 = cont.and(cont.back::<1>(carry.cont));
    let a3 = a2.and(cont.back::<2>(carry.cont));
    let a4 = a2.and(a2.back::<2>(carry.a2));
    let a8 = a4.and(a4.back::<4>(carry.a4));
    let a10 = a8.and(a2.back::<8>(carry.a2));
    counts.count(1, cont);
    counts.count(2, a2);
    counts.count(3, a3);
    counts.count(4, a10);
    // Letters, digits, `+` and `/` with 15 of them before: base64 and other long runs.
    let x1 = m.b64.and(m.b64.back::<1>(carry.b64));
    let x2 = x1.and(x1.back::<2>(carry.x1));
    let x4 = x2.and(x2.back::<4>(carry.x2));
    let x8 = x4.and(x4.back::<8>(carry.x4));
    counts.count(5, x8);
    counts.count(6, camel);
    let prev_space = m.space.back::<1>(carry.space);
    let prev_punct = m.punct.back::<1>(carry.punct);
    counts.count(7, starts.and(prev_space));
    let prev2_punct = m.punct.back::<2>(carry.punct);
    let prev2_space = m.space.back::<2>(carry.space);
    counts.count(9, starts.and(prev_punct).but(prev2_punct).but(prev2_space));
    let punct_starts = m.punct.but(prev_punct);
    counts.count(11, punct_starts);
    counts.count(12, punct_starts.and(prev_space));
    counts.count(13, m.punct.and(prev_punct).and(prev2_punct));
    let prev_newline = m.newline.back::<1>(carry.newline);
    counts.count(17, m.newline.but(prev_newline).but(prev_punct));
    let prev_blank = m.blank.back::<1>(carry.blank);
    let prev2_blank = m.blank.back::<2>(carry.blank);
    let after_two_blanks = prev_blank.and(prev2_blank);
    counts.count(18, m.letter.and(after_two_blanks));
    counts.count(19, valid.and(after_two_blanks).but(m.letter).but(m.white));
    counts.count(20, m.blank);
    // Blanks with 1 and 15 blanks before them.
    let w2 = m.blank.and(prev_blank);
    let w4 = w2.and(w2.back::<2>(carry.w2));
    let w8 = w4.and(w4.back::<4>(carry.w4));
    let w16 = w8.and(w8.back::<8>(carry.w8));
    counts.count(21, w2);
    counts.count(22, w16);
    // A lone blank before a digit or a non-ASCII character, or a lone tab before punctuation:
    // a piece of its own.
    let prev2_white = m.white.back::<2>(carry.white);
    let leads = m.high.but(m.cont);
    if rare {
        let prev_tab = m.tab.back::<1>(carry.tab);
        counts.count(8, starts.and(prev_tab));
        counts.count(
            10,
            cont.and(starts.back::<1>(carry.starts))
                .and(m.backslash.back::<2>(carry.backslash)),
        );
        let prev_digit = m.digit.back::<1>(carry.digit);
        counts.count(14, m.digit);
        counts.count(15, m.digit.but(prev_digit));
        counts.count(
            16,
            m.digit
                .and(prev_digit)
                .and(m.digit.back::<2>(carry.digit))
                .and(m.digit.back::<3>(carry.digit)),
        );
        // (Digits, lead bytes and punctuation are disjoint: one count for the three terms.)
        counts.count(
            23,
            m.digit
                .or(leads)
                .and(prev_blank)
                .or(m.punct.and(prev_tab))
                .but(prev2_white),
        );
    } else {
        counts.count(23, leads.and(prev_blank).but(prev2_white));
    }
    counts.count(24, m.letter);
    counts.count(25, m.upper);
    counts.count(ASCII_FEATURES, leads.and(prev_space));
    Carry {
        letter: m.letter,
        lower: m.lower,
        b64: m.b64,
        space: m.space,
        punct: m.punct,
        tab: m.tab,
        digit: m.digit,
        newline: m.newline,
        blank: m.blank,
        white: m.white,
        backslash: m.backslash,
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
    }
}

/// Counts of the ASCII features (and `high_space` last), four to a word in 16-bit lanes (a lane
/// grows by at most 64 per block), moved into `f` every [`FLUSH_BLOCKS`] blocks.
pub(super) struct BlockCounts([u64; (ASCII_FEATURES + 1).div_ceil(4)]);

impl CountBits<u64> for BlockCounts {
    #[inline(always)]
    fn count(&mut self, k: usize, mask: u64) {
        self.0[k / 4] += u64::from(mask.count_ones()) << (16 * (k % 4));
    }
}

impl BlockCounts {
    pub(super) fn flush(&mut self, f: &mut [u64; FEATURES]) {
        for k in 0..=ASCII_FEATURES {
            add_ascii_total(f, k, (self.0[k / 4] >> (16 * (k % 4))) & 0xFFFF);
        }
        self.0 = [0; (ASCII_FEATURES + 1).div_ceil(4)];
    }
}

/// Adds a total of [`CountBits`] feature `k` to `f`.
#[inline(always)]
pub(super) fn add_ascii_total(f: &mut [u64; FEATURES], k: usize, total: u64) {
    if k < ASCII_FEATURES {
        f[k] += total;
    } else {
        f[NA + 9] += total;
    }
}

/// The features block by block (64 bytes). `SHORTCUTS`: blocks of non-ASCII bytes only skip
/// the ASCII features, and blocks without digits, backslashes and tabs the features about
/// those (off only in tests, to check the shortcuts give the same counts).
#[inline(always)]
pub(super) fn features_of<const SHORTCUTS: bool>(
    text: &str,
    encoding: Encoding,
) -> [u64; FEATURES] {
    let mut f = [0u64; FEATURES];
    let bytes = text.as_bytes();
    let mut carry = Carry::zero(0u64);
    let mut chars = NonAscii::new(CjkTables::get(encoding));
    let mut counts = BlockCounts([0; (ASCII_FEATURES + 1).div_ceil(4)]);
    for (index, block) in bytes.chunks(64).enumerate() {
        if index % FLUSH_BLOCKS == FLUSH_BLOCKS - 1 {
            counts.flush(&mut f);
        }
        let m = block_masks(block);
        if SHORTCUTS && m.high == u64::MAX {
            // CJK text: a block without ASCII bytes. Every ASCII mask is empty, so of the
            // ASCII features only those that look back at blanks ending the previous block
            // can count here (the same terms as in `ascii_features`, with the empty masks
            // folded in).
            let leads = !m.cont;
            let prev_blank = 0.back::<1>(carry.blank);
            let prev2_blank = 0.back::<2>(carry.blank);
            counts.count(19, prev_blank & prev2_blank);
            counts.count(23, leads & prev_blank & !0.back::<2>(carry.white));
            counts.count(ASCII_FEATURES, leads & 0.back::<1>(carry.space));
            chars.block(bytes, index * 64, leads, &mut f);
            carry = Carry::zero(0);
            continue;
        }
        // Digits, backslashes and tabs are rare in prose. Their features count nothing in a
        // block without any (when the previous block does not end in a backslash or a tab,
        // which they look back at), so such a block skips them.
        let rare = !SHORTCUTS
            || (m.digit | m.backslash | m.tab | (carry.backslash >> 62) | (carry.tab >> 63)) != 0;
        carry = ascii_features(&m, valid_mask(block.len()), &carry, rare, &mut counts);
        let leads = m.high & !m.cont;
        if leads != 0 {
            chars.block(bytes, index * 64, leads, &mut f);
        }
    }
    counts.flush(&mut f);
    f
}

/// The ASCII features come first in [`FEATURE_NAMES`].
pub(super) const ASCII_FEATURES: usize = 26;
pub(super) const FLUSH_BLOCKS: usize = 256;

/// The mask of the first `len` bytes of a block (all of it from 64 bytes on).
pub(super) fn valid_mask(len: usize) -> u64 {
    if len >= 64 {
        u64::MAX
    } else {
        (1u64 << len) - 1
    }
}
