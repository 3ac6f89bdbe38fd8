//! x86_64: the SSE2 block masks (in the x86_64 baseline), the CPU checks and the `popcnt`
//! build of the generic pass; the AVX2 and AVX-512 kernels in their own files.

mod avx2;
mod avx512;

pub(super) use avx2::*;
pub(super) use avx512::*;

use super::*;

/// [`block_masks`] of a full block: SSE2 compares and byte masks, 16 bytes at a time.
#[cfg(target_arch = "x86_64")]
#[allow(unused_unsafe)]
#[inline(always)]
pub(super) fn full_block_masks(block: &[u8; 64]) -> Masks {
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
    m.derive(plus_slash, u64::MAX);
    m
}

/// Whether the CPU runs [`features_wide`] (Ice Lake and later, Zen 4 and later).
#[cfg(target_arch = "x86_64")]
pub(super) fn wide_features_cpu() -> bool {
    use std::arch::is_x86_feature_detected as has;
    has!("avx512f")
        && has!("avx512bw")
        && has!("avx512vbmi")
        && has!("avx512vbmi2")
        && has!("avx512vpopcntdq")
        && has!("popcnt")
        && has!("bmi1")
        && has!("bmi2")
}

/// Whether the CPU runs [`features_avx2`] (Intel Haswell and later, AMD Zen and later).
#[cfg(target_arch = "x86_64")]
pub(super) fn avx2_features_cpu() -> bool {
    use std::arch::is_x86_feature_detected as has;
    has!("avx2") && has!("popcnt") && has!("bmi1") && has!("bmi2")
}

/// [`features_of`] compiled with `popcnt` and `andn` (not in the x86_64 baseline).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,bmi1")]
pub(super) unsafe fn text_features_popcnt(text: &str, encoding: Encoding) -> [u64; FEATURES] {
    features_of::<true>(text, encoding)
}
