//! The generic algorithm: a block's byte-class masks and the block-by-block pass every CPU
//! runs (the reference the vector kernels are checked against).

use super::*;

/// Bit masks of one 64-byte block (bit `i` is byte `i`).
#[derive(Clone, Copy, Default)]
pub(super) struct Masks {
    pub(super) upper: u64,
    pub(super) lower: u64,
    pub(super) letter: u64,
    pub(super) digit: u64,
    pub(super) space: u64,
    /// Tab, vertical tab, form feed.
    pub(super) tab: u64,
    pub(super) newline: u64,
    /// Space or tab.
    pub(super) blank: u64,
    pub(super) white: u64,
    pub(super) punct: u64,
    pub(super) high: u64,
    /// UTF-8 continuation bytes.
    pub(super) cont: u64,
    pub(super) backslash: u64,
    /// Letters, digits, `+`, `/`.
    pub(super) b64: u64,
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

/// Masks derived from the base masks that later blocks look back into.
#[derive(Clone, Copy, Default)]
pub(super) struct Derived {
    pub(super) starts: u64,
    pub(super) cont: u64,
    pub(super) a2: u64,
    pub(super) a4: u64,
    pub(super) x1: u64,
    pub(super) x2: u64,
    pub(super) x4: u64,
    pub(super) w2: u64,
    pub(super) w4: u64,
    pub(super) w8: u64,
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
pub(super) const ASCII_FEATURES: usize = 26;
pub(super) const FLUSH_BLOCKS: usize = 256;

/// Adds the number of bits of `mask` to feature `k`'s lane.
#[inline(always)]
pub(super) fn add(acc: &mut [u64; ASCII_FEATURES.div_ceil(4)], k: usize, mask: u64) {
    acc[k / 4] += u64::from(mask.count_ones()) << (16 * (k % 4));
}

pub(super) fn flush(acc: &mut [u64; ASCII_FEATURES.div_ceil(4)], f: &mut [u64; FEATURES]) {
    for (k, slot) in f.iter_mut().enumerate().take(ASCII_FEATURES) {
        *slot += (acc[k / 4] >> (16 * (k % 4))) & 0xFFFF;
    }
    *acc = [0; ASCII_FEATURES.div_ceil(4)];
}

/// The mask of the first `len` bytes of a block (all of it from 64 bytes on).
pub(super) fn valid_mask(len: usize) -> u64 {
    if len >= 64 {
        u64::MAX
    } else {
        (1u64 << len) - 1
    }
}
