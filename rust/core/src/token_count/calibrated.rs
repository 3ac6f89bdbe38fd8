//! The calibrated estimator: counts of what the pre-tokenizer would cut, weighed with weights
//! fitted per encoding; no byte-pair encoding runs.

use rayon::prelude::*;

use super::encoding::{decode, Encoding, PARALLEL_MIN_BYTES};
use super::exact::{count_exact, Vocab};

/// The counts the calibrated estimator weighs, in [`text_features`] order. In the names, a
/// "piece" is a letter run cut where a lower-case letter is followed by an upper-case one (as
/// o200k's pre-tokenizer cuts), `offN` counts the letters at offset N or more in their piece
/// (`Σ max(0, length − N)`), "prefixed" pieces follow a character their pre-tokenizer piece
/// starts with, `ws` is spaces and tabs, and the last twelve count non-ASCII characters.
pub const FEATURE_NAMES: [&str; FEATURES] = [
    "letter_pieces",
    "off1",
    "off2",
    "off3",
    "off10",
    "b64_deep",
    "camel",
    "space_prefixed",
    "tab_prefixed",
    "punct_prefixed",
    "bs_long",
    "punct_runs",
    "space_punct",
    "punct_long",
    "digits",
    "digit_runs",
    "digit_off3",
    "newline_runs_free",
    "ws_long_letter",
    "ws_long_other",
    "ws",
    "ws_off1",
    "ws_off15",
    "ws_lone",
    "letters",
    "upper",
    "han",
    "kana",
    "hangul",
    "cjk_punct",
    "other_letters",
    "symbols",
    "astral",
    "cjk_pairs",
    "cjk_multi",
    "high_space",
    "other_multi",
    "repeat",
];

pub const FEATURES: usize = 38;

/// Per-encoding weights of [`FEATURE_NAMES`], fitted by least squares on the training split
/// (`python benches/test_token_count.py fit`).
const O200K_WEIGHTS: [f64; FEATURES] = [
    0.584252486158316,    // letter_pieces
    -0.09875952901244865, // off1
    -0.6208234368325214,  // off2
    0.24808040543924825,  // off3
    0.3562582780482975,   // off10
    0.09898240686798533,  // b64_deep
    -0.48522872194928024, // camel
    -1.3736021831120266,  // space_prefixed
    -1.3738800005481344,  // tab_prefixed
    -1.1108971360640298,  // punct_prefixed
    1.343465546067831,    // bs_long
    1.022128393579902,    // punct_runs
    -0.9176026575378989,  // space_punct
    0.02545532919123324,  // punct_long
    -0.29012739812959515, // digits
    1.7379605257338742,   // digit_runs
    0.6296168706730791,   // digit_off3
    0.8374870424391546,   // newline_runs_free
    1.1134596228153737,   // ws_long_letter
    1.1766224282787674,   // ws_long_other
    1.0304373276188012,   // ws
    -1.1262171068161955,  // ws_off1
    0.11758792160731324,  // ws_off15
    0.1392727809289077,   // ws_lone
    0.4854929571456563,   // letters
    0.11783600985686978,  // upper
    0.9301975314463633,   // han
    0.9377073090681992,   // kana
    0.5752612796526515,   // hangul
    1.260880331059473,    // cjk_punct
    -0.599230226809456,   // other_letters
    0.9230764358222421,   // symbols
    3.197980472453764,    // astral
    -1.0066782496085342,  // cjk_pairs
    1.9740220963019686,   // cjk_multi
    -0.3995696583007836,  // high_space
    4.814549298530936,    // other_multi
    -0.8286419526474629,  // repeat
];

const CL100K_WEIGHTS: [f64; FEATURES] = [
    0.5375969035287071,    // letter_pieces
    0.0021193556265020064, // off1
    -1.004278083177584,    // off2
    0.48786550067037493,   // off3
    0.3384868132486967,    // off10
    0.09355360592712697,   // b64_deep
    -0.4673148550821726,   // camel
    -1.4847270083040742,   // space_prefixed
    -1.5208434290424584,   // tab_prefixed
    -1.158269870054867,    // punct_prefixed
    1.3329718011227334,    // bs_long
    1.0247160036086755,    // punct_runs
    -0.995144103029653,    // space_punct
    0.019672526233393852,  // punct_long
    -0.3454731078026038,   // digits
    1.9021591673138778,    // digit_runs
    0.661048993467182,     // digit_off3
    0.9095530055265728,    // newline_runs_free
    1.0106776375902655,    // ws_long_letter
    1.022497186181942,     // ws_long_other
    1.1542373605194092,    // ws
    -1.2634829740650035,   // ws_off1
    0.131221347155928,     // ws_off15
    0.04191741093907997,   // ws_lone
    0.5397162591555933,    // letters
    0.12107284302434841,   // upper
    1.1774222309579694,    // han
    1.1029692045092938,    // kana
    0.2015132950649967,    // hangul
    0.04182381207496105,   // cjk_punct
    -1.0554404647345674,   // other_letters
    0.1606272011077842,    // symbols
    4.483310220637948,     // astral
    -1.9814949293038548,   // cjk_pairs
    1.0444423575832746,    // cjk_multi
    1.2905070931235434,    // high_space
    0.8038120555839694,    // other_multi
    0.011788220556957774,  // repeat
];

/// The calibrated estimate of the token count of `text` under `encoding`; at least 1 for a
/// non-empty text.
///
/// Texts up to [`EXACT_MAX_BYTES`] are counted exactly. Longer texts get the weighted
/// [`text_features`] (the linear model), checked against the exact count of a sample: a few
/// slices of [`SAMPLE_BYTES`] spread evenly over the text (one per [`SAMPLE_STRIDE`] bytes),
/// each counted both exactly and with the linear model. Where the model is within
/// [`TRUSTED_RATIO`] of the exact count on the sample, its estimate stands; otherwise (text
/// the features do not describe: runs of newlines, spaces, punctuation or one repeated
/// character, emoji, combining marks, scripts other than Latin and CJK) the estimate is
/// corrected by the sample's error, scaled up to the whole text (a difference estimator).
/// That keeps the estimate within 0.8-2 times the exact count on every kind of text the
/// tests generate, at the cost of exactly counting about 1/256 of a long text.
pub fn estimate(text: &str, encoding: Encoding) -> u64 {
    estimate_with(text, encoding, text_features)
}

/// The features of a text, by one of the passes (all give the same counts).
type FeaturePass = fn(&str, Encoding) -> [u64; FEATURES];

/// [`estimate`] with the features counted by `pass` (the tests run it with each pass).
fn estimate_with(text: &str, encoding: Encoding, pass: FeaturePass) -> u64 {
    if text.is_empty() {
        return 0;
    }
    if text.len() <= EXACT_MAX_BYTES {
        return count_exact(text, encoding);
    }
    let features = if text.len() >= PARALLEL_MIN_BYTES {
        parallel_features(text, encoding, pass)
    } else {
        pass(text, encoding)
    };
    let linear = weighed(&features, encoding);
    let total = linear + sample_correction(text, encoding, pass);
    (total.round().max(1.0)) as u64
}

/// Texts up to this many bytes are counted exactly by [`estimate`] (a few microseconds; the
/// linear model cannot be within a factor of two of counts of one or two tokens).
pub const EXACT_MAX_BYTES: usize = 1024;
/// The length of one sample slice of [`estimate`] (long enough that a run of newlines or
/// spaces, which the pre-tokenizer keeps whole, shows its tokens per byte).
const SAMPLE_BYTES: usize = 1024;
/// One sample slice per this many bytes of text (at least one).
const SAMPLE_STRIDE: usize = 1 << 18;
/// The linear model stands when the sample's exact count is within this factor of its
/// estimate (either way).
const TRUSTED_RATIO: f64 = 1.15;

/// The weighted sum of `features` (the linear model, unrounded).
fn weighed(features: &[u64; FEATURES], encoding: Encoding) -> f64 {
    features
        .iter()
        .zip(encoding.weights())
        .map(|(&f, &w)| f as f64 * w)
        .sum()
}

/// The sample slices of `text` (longer than [`EXACT_MAX_BYTES`]): `max(1, len /
/// SAMPLE_STRIDE)` slices of about [`SAMPLE_BYTES`], centred in equal strata of the text and
/// cut at character boundaries.
fn sample_slices(text: &str) -> Vec<&str> {
    let len = text.len();
    let count = (len / SAMPLE_STRIDE).max(1);
    let floor = |mut at: usize| {
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    (0..count)
        .map(|i| {
            let centre = len * (2 * i + 1) / (2 * count);
            let start = floor(centre.saturating_sub(SAMPLE_BYTES / 2));
            let end = floor((start + SAMPLE_BYTES).min(len));
            &text[start..end]
        })
        .filter(|slice| !slice.is_empty())
        .collect()
}

/// The correction [`estimate`] adds to the linear model's estimate of `text`: 0 where the
/// model is within [`TRUSTED_RATIO`] of the exact count on the sample slices, else their
/// total error (exact minus model) times the text's length over theirs.
fn sample_correction(text: &str, encoding: Encoding, pass: FeaturePass) -> f64 {
    let slices = sample_slices(text);
    let measure = |slice: &&str| {
        let model = weighed(&pass(slice, encoding), encoding);
        (count_exact(slice, encoding) as f64, model, slice.len())
    };
    let measured: Vec<(f64, f64, usize)> = if slices.len() >= 8 {
        slices.par_iter().map(measure).collect()
    } else {
        slices.iter().map(measure).collect()
    };
    let (mut exact, mut model, mut bytes) = (0.0, 0.0, 0usize);
    for (e, m, b) in measured {
        exact += e;
        model += m;
        bytes += b;
    }
    if bytes == 0 || (exact <= model * TRUSTED_RATIO && model <= exact * TRUSTED_RATIO) {
        return 0.0;
    }
    (exact - model) * text.len() as f64 / bytes as f64
}

/// [`text_features`] of a long text, summed over chunks counted on all cores (the chunks are
/// cut at character boundaries; a piece cut in two is counted as two, which moves the estimate
/// by a token per core at most).
fn parallel_features(text: &str, encoding: Encoding, pass: FeaturePass) -> [u64; FEATURES] {
    let threads = rayon::current_num_threads();
    let mut chunks = Vec::with_capacity(threads);
    let mut start = 0;
    for i in 1..=threads {
        let mut end = text.len() * i / threads;
        while !text.is_char_boundary(end) {
            end += 1;
        }
        if end > start {
            chunks.push(&text[start..end]);
            start = end;
        }
    }
    chunks.par_iter().map(|chunk| pass(chunk, encoding)).reduce(
        || [0u64; FEATURES],
        |mut total, f| {
            total.iter_mut().zip(f).for_each(|(t, v)| *t += v);
            total
        },
    )
}

/// Bit masks of one 64-byte block (bit `i` is byte `i`).
#[derive(Clone, Copy, Default)]
struct Masks {
    upper: u64,
    lower: u64,
    letter: u64,
    digit: u64,
    space: u64,
    /// Tab, vertical tab, form feed.
    tab: u64,
    newline: u64,
    /// Space or tab.
    blank: u64,
    white: u64,
    punct: u64,
    high: u64,
    /// UTF-8 continuation bytes.
    cont: u64,
    backslash: u64,
    /// Letters, digits, `+`, `/`.
    b64: u64,
}

/// The masks of `block` (at most 64 bytes; missing bytes are in no class).
#[inline(always)]
fn block_masks(block: &[u8]) -> Masks {
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

/// [`block_masks`] of a full block: SSE2 compares and byte masks, 16 bytes at a time.
#[cfg(target_arch = "x86_64")]
#[allow(unused_unsafe)]
#[inline(always)]
fn full_block_masks(block: &[u8; 64]) -> Masks {
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
    m.letter = m.upper | m.lower;
    m.blank = m.space | m.tab;
    m.white = m.blank | m.newline;
    m.punct = !(m.letter | m.digit | m.white | m.high);
    m.b64 = m.letter | m.digit | plus_slash;
    m
}

/// [`block_masks`] of a full block with AVX-512: each class is one or two compares of the
/// whole block straight into a 64-bit mask.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
fn full_block_masks_avx512(block: &[u8; 64]) -> Masks {
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
    m.letter = m.upper | m.lower;
    m.blank = m.space | m.tab;
    m.white = m.blank | m.newline;
    m.punct = !(m.letter | m.digit | m.white | m.high);
    m.b64 = m.letter | m.digit | eq!(b'+') | eq!(b'/');
    m
}

/// The base masks of a group of four blocks with AVX2, for [`features_avx2`]: per mask (the
/// `GROUP_*` indices), the byte masks of the eight 32-byte halves, so that the words read as
/// 64-bit lanes are the masks of the four blocks. Ranges are one signed compare of the byte
/// moved so that the range starts at -128.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn group_masks_avx2(group: &[u8; 256], words: &mut [[u32; 8]; GROUP_MASKS]) {
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
const GROUP_UPPER: usize = 0;
#[cfg(target_arch = "x86_64")]
const GROUP_LOWER: usize = 1;
#[cfg(target_arch = "x86_64")]
const GROUP_DIGIT: usize = 2;
#[cfg(target_arch = "x86_64")]
const GROUP_SPACE: usize = 3;
#[cfg(target_arch = "x86_64")]
const GROUP_TAB: usize = 4;
#[cfg(target_arch = "x86_64")]
const GROUP_NEWLINE: usize = 5;
#[cfg(target_arch = "x86_64")]
const GROUP_HIGH: usize = 6;
#[cfg(target_arch = "x86_64")]
const GROUP_CONT: usize = 7;
#[cfg(target_arch = "x86_64")]
const GROUP_BACKSLASH: usize = 8;
#[cfg(target_arch = "x86_64")]
const GROUP_PLUS_SLASH: usize = 9;
#[cfg(target_arch = "x86_64")]
const GROUP_MASKS: usize = 10;

/// [`block_masks`] of a full block, byte by byte.
#[cfg(not(target_arch = "x86_64"))]
fn full_block_masks(block: &[u8; 64]) -> Masks {
    portable_block_masks(block)
}

/// [`block_masks`] of a full block from a table of byte classes (the reference for the SSE2
/// version).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn portable_block_masks(block: &[u8; 64]) -> Masks {
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

const F_UPPER: u16 = 1;
const F_LOWER: u16 = 2;
const F_DIGIT: u16 = 4;
const F_SPACE: u16 = 8;
const F_TAB: u16 = 16;
const F_NEWLINE: u16 = 32;
const F_PUNCT: u16 = 64;
const F_HIGH: u16 = 128;
const F_CONT: u16 = 256;
const F_BACKSLASH: u16 = 512;
const F_B64: u16 = 1024;

const fn byte_flags() -> [u16; 256] {
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

static BYTE_FLAGS: [u16; 256] = byte_flags();

/// `cur` shifted towards higher positions by `k` (1..=63), filled from the previous block: bit
/// `i` of the result is the bit `k` bytes earlier.
#[inline(always)]
fn sh(cur: u64, prev: u64, k: u32) -> u64 {
    (cur << k) | (prev >> (64 - k))
}

/// Masks derived from the base masks that later blocks look back into.
#[derive(Clone, Copy, Default)]
struct Derived {
    starts: u64,
    cont: u64,
    a2: u64,
    a4: u64,
    x1: u64,
    x2: u64,
    x4: u64,
    w2: u64,
    w4: u64,
    w8: u64,
}

/// The feature counts of `text` for the calibrated estimator, in [`FEATURE_NAMES`] order.
pub fn text_features(text: &str, encoding: Encoding) -> [u64; FEATURES] {
    #[cfg(target_arch = "x86_64")]
    if wide_features_cpu() {
        // SAFETY: the CPU has the instructions.
        return unsafe { features_wide(text, encoding) };
    }
    #[cfg(target_arch = "x86_64")]
    if avx2_features_cpu() {
        // SAFETY: the CPU has the instructions.
        return unsafe { features_avx2(text, encoding) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") && std::arch::is_x86_feature_detected!("bmi1")
    {
        // SAFETY: the CPU has the instructions.
        return unsafe { text_features_popcnt(text, encoding) };
    }
    features_of::<true>(text, encoding)
}

/// Whether the CPU runs [`features_wide`] (Ice Lake and later, Zen 4 and later).
#[cfg(target_arch = "x86_64")]
fn wide_features_cpu() -> bool {
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
fn avx2_features_cpu() -> bool {
    use std::arch::is_x86_feature_detected as has;
    has!("avx2") && has!("popcnt") && has!("bmi1") && has!("bmi2")
}

/// [`features_of`] compiled with `popcnt` and `andn` (not in the x86_64 baseline).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,bmi1")]
unsafe fn text_features_popcnt(text: &str, encoding: Encoding) -> [u64; FEATURES] {
    features_of::<true>(text, encoding)
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
unsafe fn features_wide(text: &str, encoding: Encoding) -> [u64; FEATURES] {
    use std::arch::x86_64::*;
    /// The previous group's vectors of everything the features look back at.
    #[derive(Clone, Copy)]
    struct Carry {
        letter: __m512i,
        lower: __m512i,
        b64: __m512i,
        space: __m512i,
        punct: __m512i,
        tab: __m512i,
        digit: __m512i,
        newline: __m512i,
        blank: __m512i,
        white: __m512i,
        backslash: __m512i,
        starts: __m512i,
        cont: __m512i,
        a2: __m512i,
        a4: __m512i,
        x1: __m512i,
        x2: __m512i,
        x4: __m512i,
        w2: __m512i,
        w4: __m512i,
        w8: __m512i,
    }
    let zero = _mm512_setzero_si512();
    let mut carry = Carry {
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
    };
    // Per ASCII feature (and `high_space` last), the counts so far in eight lanes.
    let mut acc = [zero; ASCII_FEATURES + 1];
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
        let (upper, lower, letter) = (lanes(|m| m.upper), lanes(|m| m.lower), lanes(|m| m.letter));
        let (digit, space, tab) = (lanes(|m| m.digit), lanes(|m| m.space), lanes(|m| m.tab));
        let (newline, blank, white) =
            (lanes(|m| m.newline), lanes(|m| m.blank), lanes(|m| m.white));
        let (punct, high, cont_bytes) = (lanes(|m| m.punct), lanes(|m| m.high), lanes(|m| m.cont));
        let (backslash, b64) = (lanes(|m| m.backslash), lanes(|m| m.b64));
        // SAFETY: reads the eight words of `valid`.
        let valid_v = unsafe { _mm512_loadu_si512(valid.as_ptr().cast::<__m512i>()) };
        // `x` of each lane's previous block, shifted by `K` bits: the look-back of the
        // scalar pass (`sh`).
        macro_rules! p {
            ($cur:expr, $old:expr, $k:literal) => {
                _mm512_shldi_epi64::<$k>($cur, _mm512_alignr_epi64::<7>($cur, $old))
            };
        }
        let and = |a: __m512i, b: __m512i| _mm512_and_si512(a, b);
        let or = |a: __m512i, b: __m512i| _mm512_or_si512(a, b);
        // `a & !b`
        let but = |a: __m512i, b: __m512i| _mm512_andnot_si512(b, a);
        let mut count = |k: usize, mask: __m512i| {
            acc[k] = _mm512_add_epi64(acc[k], _mm512_popcnt_epi64(mask));
        };
        let prev_letter = p!(letter, carry.letter, 1);
        let camel = and(upper, p!(lower, carry.lower, 1));
        let starts = or(but(letter, prev_letter), camel);
        let cont = but(letter, starts);
        count(0, starts);
        let a2 = and(cont, p!(cont, carry.cont, 1));
        let a3 = and(a2, p!(cont, carry.cont, 2));
        let a4 = and(a2, p!(a2, carry.a2, 2));
        let a8 = and(a4, p!(a4, carry.a4, 4));
        let a10 = and(a8, p!(a2, carry.a2, 8));
        count(1, cont);
        count(2, a2);
        count(3, a3);
        count(4, a10);
        let x1 = and(b64, p!(b64, carry.b64, 1));
        let x2 = and(x1, p!(x1, carry.x1, 2));
        let x4 = and(x2, p!(x2, carry.x2, 4));
        let x8 = and(x4, p!(x4, carry.x4, 8));
        count(5, x8);
        count(6, camel);
        let prev_space = p!(space, carry.space, 1);
        let prev_punct = p!(punct, carry.punct, 1);
        let prev_tab = p!(tab, carry.tab, 1);
        count(7, and(starts, prev_space));
        count(8, and(starts, prev_tab));
        let prev2_punct = p!(punct, carry.punct, 2);
        let prev2_space = p!(space, carry.space, 2);
        count(
            9,
            but(but(and(starts, prev_punct), prev2_punct), prev2_space),
        );
        count(
            10,
            and(
                and(cont, p!(starts, carry.starts, 1)),
                p!(backslash, carry.backslash, 2),
            ),
        );
        let punct_starts = but(punct, prev_punct);
        count(11, punct_starts);
        count(12, and(punct_starts, prev_space));
        count(13, and(and(punct, prev_punct), prev2_punct));
        let prev_digit = p!(digit, carry.digit, 1);
        count(14, digit);
        count(15, but(digit, prev_digit));
        count(
            16,
            and(
                and(and(digit, prev_digit), p!(digit, carry.digit, 2)),
                p!(digit, carry.digit, 3),
            ),
        );
        let prev_newline = p!(newline, carry.newline, 1);
        count(17, but(but(newline, prev_newline), prev_punct));
        let prev_blank = p!(blank, carry.blank, 1);
        let prev2_blank = p!(blank, carry.blank, 2);
        let after_two_blanks = and(prev_blank, prev2_blank);
        count(18, and(letter, after_two_blanks));
        count(19, but(but(and(valid_v, after_two_blanks), letter), white));
        count(20, blank);
        let w2 = and(blank, prev_blank);
        let w4 = and(w2, p!(w2, carry.w2, 2));
        let w8 = and(w4, p!(w4, carry.w4, 4));
        let w16 = and(w8, p!(w8, carry.w8, 8));
        count(21, w2);
        count(22, w16);
        let prev2_white = p!(white, carry.white, 2);
        let leads = but(high, cont_bytes);
        // (Digits, lead bytes and punctuation are disjoint: one count for the three terms.)
        count(
            23,
            but(
                or(and(or(digit, leads), prev_blank), and(punct, prev_tab)),
                prev2_white,
            ),
        );
        count(24, letter);
        count(25, upper);
        count(ASCII_FEATURES, and(leads, prev_space));
        carry = Carry {
            letter,
            lower,
            b64,
            space,
            punct,
            tab,
            digit,
            newline,
            blank,
            white,
            backslash,
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
    for (k, lanes) in acc.iter().enumerate() {
        // SAFETY: writes the eight words of `sums`.
        unsafe { _mm512_storeu_si512(sums.as_mut_ptr().cast::<__m512i>(), *lanes) };
        let total: u64 = sums.iter().sum();
        if k < ASCII_FEATURES {
            f[k] += total;
        } else {
            f[NA + 9] += total;
        }
    }
    f
}

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
unsafe fn features_avx2(text: &str, encoding: Encoding) -> [u64; FEATURES] {
    use std::arch::x86_64::*;
    /// The previous group's vectors of everything the features look back at.
    #[derive(Clone, Copy)]
    struct Carry {
        letter: __m256i,
        lower: __m256i,
        b64: __m256i,
        space: __m256i,
        punct: __m256i,
        tab: __m256i,
        digit: __m256i,
        newline: __m256i,
        blank: __m256i,
        white: __m256i,
        backslash: __m256i,
        starts: __m256i,
        cont: __m256i,
        a2: __m256i,
        a4: __m256i,
        x1: __m256i,
        x2: __m256i,
        x4: __m256i,
        w2: __m256i,
        w4: __m256i,
        w8: __m256i,
    }
    /// A byte's count of set bits grows by at most 8 a group: the byte counters are summed
    /// into 64-bit lanes every this many groups.
    const BYTE_COUNT_GROUPS: usize = 31;
    let zero = _mm256_setzero_si256();
    let mut carry = Carry {
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
    };
    // Per ASCII feature (and `high_space` last), the bit counts of the groups since the last
    // sum per byte, and the sums in four 64-bit lanes.
    let mut bytes_acc = [zero; ASCII_FEATURES + 1];
    let mut acc = [zero; ASCII_FEATURES + 1];
    let nibble_bits = _mm256_setr_epi8(
        0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3,
        3, 4,
    );
    let low_nibbles = _mm256_set1_epi8(0x0F);
    let mut f = [0u64; FEATURES];
    let bytes = text.as_bytes();
    let mut chars = NonAscii::new(CjkTables::get(encoding));
    let mut vector_counts = Avx2Counts::new();
    let mut words = [[0u32; 8]; GROUP_MASKS];
    for (group_index, group) in bytes.chunks(256).enumerate() {
        if group_index % BYTE_COUNT_GROUPS == BYTE_COUNT_GROUPS - 1 {
            for (sums, counts) in acc.iter_mut().zip(bytes_acc.iter_mut()) {
                *sums = _mm256_add_epi64(*sums, _mm256_sad_epu8(*counts, zero));
                *counts = zero;
            }
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
        let valid: [u64; 4] =
            std::array::from_fn(|j| valid_mask(group.len().saturating_sub(64 * j)));
        macro_rules! lanes {
            ($k:expr) => {
                // SAFETY: reads the eight words of `words[$k]`.
                unsafe { _mm256_loadu_si256(words[$k].as_ptr().cast::<__m256i>()) }
            };
        }
        let (upper, lower, digit) = (
            lanes!(GROUP_UPPER),
            lanes!(GROUP_LOWER),
            lanes!(GROUP_DIGIT),
        );
        let (space, tab, newline) = (
            lanes!(GROUP_SPACE),
            lanes!(GROUP_TAB),
            lanes!(GROUP_NEWLINE),
        );
        let (high, cont_bytes) = (lanes!(GROUP_HIGH), lanes!(GROUP_CONT));
        let (backslash, plus_slash) = (lanes!(GROUP_BACKSLASH), lanes!(GROUP_PLUS_SLASH));
        // SAFETY: reads the four words of `valid`.
        let valid_v = unsafe { _mm256_loadu_si256(valid.as_ptr().cast::<__m256i>()) };
        // `x` of each lane's previous block, shifted by `K` bits: the look-back of the
        // scalar pass (`sh`). The lanes below: [old 3, cur 0, cur 1, cur 2].
        macro_rules! p {
            ($cur:expr, $old:expr, $k:literal) => {{
                let below =
                    _mm256_alignr_epi8::<8>($cur, _mm256_permute2x128_si256::<0x21>($old, $cur));
                _mm256_or_si256(
                    _mm256_slli_epi64::<$k>($cur),
                    _mm256_srli_epi64::<{ 64 - $k }>(below),
                )
            }};
        }
        // (Macros: closures are not always inlined here.)
        macro_rules! and {
            ($a:expr, $b:expr $(,)?) => {
                _mm256_and_si256($a, $b)
            };
        }
        macro_rules! or {
            ($a:expr, $b:expr $(,)?) => {
                _mm256_or_si256($a, $b)
            };
        }
        // `a & !b`
        macro_rules! but {
            ($a:expr, $b:expr $(,)?) => {
                _mm256_andnot_si256($b, $a)
            };
        }
        macro_rules! count {
            ($k:expr, $mask:expr $(,)?) => {{
                let mask = $mask;
                let low = _mm256_shuffle_epi8(nibble_bits, and!(mask, low_nibbles));
                let high = _mm256_shuffle_epi8(
                    nibble_bits,
                    and!(_mm256_srli_epi16::<4>(mask), low_nibbles),
                );
                bytes_acc[$k] = _mm256_add_epi8(bytes_acc[$k], _mm256_add_epi8(low, high));
            }};
        }
        let letter = or!(upper, lower);
        let blank = or!(space, tab);
        let white = or!(blank, newline);
        // (Padding bytes are NUL, which only the punctuation mask would hold.)
        let punct = but!(valid_v, or!(or!(letter, digit), or!(white, high)));
        let b64 = or!(or!(letter, digit), plus_slash);
        let prev_letter = p!(letter, carry.letter, 1);
        let camel = and!(upper, p!(lower, carry.lower, 1));
        let starts = or!(but!(letter, prev_letter), camel);
        let cont = but!(letter, starts);
        count!(0, starts);
        let a2 = and!(cont, p!(cont, carry.cont, 1));
        let a3 = and!(a2, p!(cont, carry.cont, 2));
        let a4 = and!(a2, p!(a2, carry.a2, 2));
        let a8 = and!(a4, p!(a4, carry.a4, 4));
        let a10 = and!(a8, p!(a2, carry.a2, 8));
        count!(1, cont);
        count!(2, a2);
        count!(3, a3);
        count!(4, a10);
        let x1 = and!(b64, p!(b64, carry.b64, 1));
        let x2 = and!(x1, p!(x1, carry.x1, 2));
        let x4 = and!(x2, p!(x2, carry.x2, 4));
        let x8 = and!(x4, p!(x4, carry.x4, 8));
        count!(5, x8);
        count!(6, camel);
        let prev_space = p!(space, carry.space, 1);
        let prev_punct = p!(punct, carry.punct, 1);
        let prev_tab = p!(tab, carry.tab, 1);
        count!(7, and!(starts, prev_space));
        count!(8, and!(starts, prev_tab));
        let prev2_punct = p!(punct, carry.punct, 2);
        let prev2_space = p!(space, carry.space, 2);
        count!(
            9,
            but!(but!(and!(starts, prev_punct), prev2_punct), prev2_space),
        );
        count!(
            10,
            and!(
                and!(cont, p!(starts, carry.starts, 1)),
                p!(backslash, carry.backslash, 2),
            ),
        );
        let punct_starts = but!(punct, prev_punct);
        count!(11, punct_starts);
        count!(12, and!(punct_starts, prev_space));
        count!(13, and!(and!(punct, prev_punct), prev2_punct));
        let prev_digit = p!(digit, carry.digit, 1);
        count!(14, digit);
        count!(15, but!(digit, prev_digit));
        count!(
            16,
            and!(
                and!(and!(digit, prev_digit), p!(digit, carry.digit, 2)),
                p!(digit, carry.digit, 3),
            ),
        );
        let prev_newline = p!(newline, carry.newline, 1);
        count!(17, but!(but!(newline, prev_newline), prev_punct));
        let prev_blank = p!(blank, carry.blank, 1);
        let prev2_blank = p!(blank, carry.blank, 2);
        let after_two_blanks = and!(prev_blank, prev2_blank);
        count!(18, and!(letter, after_two_blanks));
        count!(
            19,
            but!(but!(and!(valid_v, after_two_blanks), letter), white)
        );
        count!(20, blank);
        let w2 = and!(blank, prev_blank);
        let w4 = and!(w2, p!(w2, carry.w2, 2));
        let w8 = and!(w4, p!(w4, carry.w4, 4));
        let w16 = and!(w8, p!(w8, carry.w8, 8));
        count!(21, w2);
        count!(22, w16);
        let prev2_white = p!(white, carry.white, 2);
        let leads = but!(high, cont_bytes);
        // (Digits, lead bytes and punctuation are disjoint: one count for the three terms.)
        count!(
            23,
            but!(
                or!(and!(or!(digit, leads), prev_blank), and!(punct, prev_tab)),
                prev2_white,
            ),
        );
        count!(24, letter);
        count!(25, upper);
        count!(ASCII_FEATURES, and!(leads, prev_space));
        carry = Carry {
            letter,
            lower,
            b64,
            space,
            punct,
            tab,
            digit,
            newline,
            blank,
            white,
            backslash,
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
    let mut sums = [0u64; 4];
    for (k, (lanes, counts)) in acc.iter().zip(&bytes_acc).enumerate() {
        let lanes = _mm256_add_epi64(*lanes, _mm256_sad_epu8(*counts, zero));
        // SAFETY: writes the four words of `sums`.
        unsafe { _mm256_storeu_si256(sums.as_mut_ptr().cast::<__m256i>(), lanes) };
        let total: u64 = sums.iter().sum();
        if k < ASCII_FEATURES {
            f[k] += total;
        } else {
            f[NA + 9] += total;
        }
    }
    f
}

/// Blocks with fewer non-ASCII characters than this take [`NonAscii::block`] in
/// [`features_avx2`].
#[cfg(target_arch = "x86_64")]
const AVX2_MIN_CHARS: u32 = 4;

/// The features block by block (64 bytes). `SHORTCUTS`: blocks of non-ASCII bytes only skip
/// the ASCII features, and blocks without digits, backslashes and tabs the features about
/// those (off only in tests, to check the shortcuts give the same counts).
#[inline(always)]
fn features_of<const SHORTCUTS: bool>(text: &str, encoding: Encoding) -> [u64; FEATURES] {
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
const ASCII_FEATURES: usize = 26;
const FLUSH_BLOCKS: usize = 256;

/// Adds the number of bits of `mask` to feature `k`'s lane.
#[inline(always)]
fn add(acc: &mut [u64; ASCII_FEATURES.div_ceil(4)], k: usize, mask: u64) {
    acc[k / 4] += u64::from(mask.count_ones()) << (16 * (k % 4));
}

fn flush(acc: &mut [u64; ASCII_FEATURES.div_ceil(4)], f: &mut [u64; FEATURES]) {
    for (k, slot) in f.iter_mut().enumerate().take(ASCII_FEATURES) {
        *slot += (acc[k / 4] >> (16 * (k % 4))) & 0xFFFF;
    }
    *acc = [0; ASCII_FEATURES.div_ceil(4)];
}

/// The mask of the first `len` bytes of a block (all of it from 64 bytes on).
fn valid_mask(len: usize) -> u64 {
    if len >= 64 {
        u64::MAX
    } else {
        (1u64 << len) - 1
    }
}

/// Per-encoding table of the BMP for the non-ASCII features: per code point, its class (the
/// feature slot it counts in), whether it is a token by itself, and its index among the
/// characters that are half of a two-character CJK token; and the set of those pairs.
struct CjkTables {
    /// Per BMP code point, laid out so the per-character pass needs no arithmetic on it:
    /// `index << 20 | other_multi << 16 | cjk_multi << 8 | 8 * class`, where `index` is its
    /// index among the pair characters (0: in no pair), the two flags tell a character that is
    /// not a token by itself in a CJK class or another class (bits already at their lanes in
    /// [`NonAscii::block`]'s counters), and `class` is 0 Han, 1 kana, 2 Hangul,
    /// 3 CJK punctuation, 4 other letter, 5 other symbol.
    info: Box<[u32; 0x10000]>,
    /// Bit `a << PAIR_INDEX_BITS | b`: the characters of indices `a` and `b` form a token
    /// (row and column 0 are empty).
    pairs: Box<[u64; PAIR_WORDS]>,
    vocab: &'static Vocab,
}

/// Pair characters are numbered 1 to [`MAX_PAIR_INDEX`] (characters past that are in no pair).
const PAIR_INDEX_BITS: u32 = 11;
const MAX_PAIR_INDEX: u16 = (1 << PAIR_INDEX_BITS) - 1;
/// Words of the pair bitmap: one bit per pair of indices.
const PAIR_WORDS: usize = (1 << (2 * PAIR_INDEX_BITS)) / 64;

static CJK_O200K: std::sync::OnceLock<CjkTables> = std::sync::OnceLock::new();
static CJK_CL100K: std::sync::OnceLock<CjkTables> = std::sync::OnceLock::new();

const CLASS_HAN: u16 = 0;
const CLASS_KANA: u16 = 1;
const CLASS_HANGUL: u16 = 2;
const CLASS_CJK_PUNCT: u16 = 3;
const CLASS_OTHER_LETTER: u16 = 4;
const CLASS_SYMBOL: u16 = 5;

fn bmp_class(c: u32) -> u16 {
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
    fn get(encoding: Encoding) -> &'static CjkTables {
        let cell = match encoding {
            Encoding::O200kBase => &CJK_O200K,
            Encoding::Cl100kBase => &CJK_CL100K,
        };
        cell.get_or_init(|| CjkTables::build(encoding))
    }

    fn build(encoding: Encoding) -> CjkTables {
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
const NA: usize = ASCII_FEATURES;

/// The 8-bit lanes of [`NonAscii::block`]'s second counter word (`astral` is lane 0).
const CJK_MULTI_LANE: u32 = 8;
const OTHER_MULTI_LANE: u32 = 16;
const PAIR_LANE: u32 = 24;
const REPEAT_LANE: u32 = 32;

/// The per-character pass over non-ASCII characters.
struct NonAscii<'t> {
    tables: &'t CjkTables,
    /// The previous non-ASCII character (its info, 0 for an astral one) and the byte offset
    /// just after it.
    last_info: u32,
    last_char: u32,
    last_end: usize,
}

impl<'t> NonAscii<'t> {
    fn new(tables: &'t CjkTables) -> Self {
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
    fn block(&mut self, bytes: &[u8], base: usize, mut leads: u64, f: &mut [u64; FEATURES]) {
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
    unsafe fn block_wide(
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
struct WideCounts {
    lanes: [std::arch::x86_64::__m512i; 12],
    /// The classes (`NA..NA + 6`) in bytes of two words (classes 0-3, 4-5), flushed into
    /// `lanes` before a byte can overflow: `class_vectors` counts the vectors added since
    /// (at most one per lane each).
    class_bytes: [std::arch::x86_64::__m512i; 2],
    class_vectors: u32,
}

#[cfg(target_arch = "x86_64")]
impl WideCounts {
    #[target_feature(enable = "avx512f")]
    fn new() -> WideCounts {
        let zero = std::arch::x86_64::_mm512_setzero_si512();
        WideCounts {
            lanes: [zero; 12],
            class_bytes: [zero; 2],
            class_vectors: 0,
        }
    }

    #[target_feature(enable = "avx512f")]
    fn flush_classes(&mut self) {
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
    fn add_to(&mut self, f: &mut [u64; FEATURES]) {
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
static SPREAD_POSITIONS: [[u8; 64]; 2] = {
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
static BYTE_OFFSETS: [u8; 64] = {
    let mut offsets = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        offsets[i] = i as u8;
        i += 1;
    }
    offsets
};

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
    unsafe fn block_avx2(
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
struct Avx2Counts {
    /// The classes `NA..NA + 6` in bytes of two words (classes 0-3, 4-5).
    class_bytes: [std::arch::x86_64::__m256i; 2],
    /// `repeat`, `cjk_multi`, `other_multi` and `cjk_pairs` in bytes 0 to 3.
    others: std::arch::x86_64::__m256i,
    /// Vectors added (at most, per lane) since the last flush.
    vectors: u32,
    totals: [u64; 12],
}

#[cfg(target_arch = "x86_64")]
impl Avx2Counts {
    #[target_feature(enable = "avx2")]
    fn new() -> Avx2Counts {
        let zero = std::arch::x86_64::_mm256_setzero_si256();
        Avx2Counts {
            class_bytes: [zero; 2],
            others: zero,
            vectors: 0,
            totals: [0; 12],
        }
    }

    #[target_feature(enable = "avx2")]
    fn flush(&mut self) {
        use std::arch::x86_64::{__m256i, _mm256_setzero_si256, _mm256_storeu_si256};
        let words = |v: __m256i| {
            let mut words = [0u32; 8];
            // SAFETY: writes the eight words of `words`.
            unsafe { _mm256_storeu_si256(words.as_mut_ptr().cast::<__m256i>(), v) };
            words
        };
        let byte_sum = |words: &[u32; 8], byte: usize| {
            words
                .iter()
                .map(|w| u64::from((w >> (8 * byte)) & 0xFF))
                .sum::<u64>()
        };
        let (low, high, others) = (
            words(self.class_bytes[0]),
            words(self.class_bytes[1]),
            words(self.others),
        );
        for class in 0..4 {
            self.totals[class] += byte_sum(&low, class);
        }
        for class in 4..6 {
            self.totals[class] += byte_sum(&high, class - 4);
        }
        // `f[NA + k]`: repeat 11, cjk_multi 8, other_multi 10, cjk_pairs 7.
        for (byte, feature) in [11, 8, 10, 7].into_iter().enumerate() {
            self.totals[feature] += byte_sum(&others, byte);
        }
        let zero = _mm256_setzero_si256();
        (self.class_bytes, self.others, self.vectors) = ([zero; 2], zero, 0);
    }

    /// Adds the counts to `f`.
    #[target_feature(enable = "avx2")]
    fn add_to(&mut self, f: &mut [u64; FEATURES]) {
        self.flush();
        for (slot, total) in f[NA..NA + 12].iter_mut().zip(self.totals) {
            *slot += total;
        }
    }
}

/// Per byte of a lead-byte mask: the offsets of its set bits, lowest first, in the bytes of a
/// word (the rest 0).
#[cfg(target_arch = "x86_64")]
static LEAD_OFFSETS: [u64; 256] = {
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

impl Encoding {
    fn weights(self) -> &'static [f64; FEATURES] {
        match self {
            Encoding::O200kBase => &O200K_WEIGHTS,
            Encoding::Cl100kBase => &CL100K_WEIGHTS,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token_count::exact::count_exact;
    use crate::token_count::test_support::*;

    #[test]
    fn token_count_sse2_masks_match_the_table() {
        assert_masks_match_the_table(full_block_masks);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn token_count_avx512_masks_match_the_table() {
        if !wide_features_cpu() {
            eprintln!("skipped: this CPU lacks an AVX-512 extension the wide pass needs");
            return;
        }
        // SAFETY: checked just above.
        assert_masks_match_the_table(|block| unsafe { full_block_masks_avx512(block) });
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn token_count_avx2_masks_match_the_table() {
        if !avx2_features_cpu() {
            eprintln!("skipped: this CPU lacks AVX2");
            return;
        }
        let mut rng = Rng(11);
        for _ in 0..500 {
            let mut group = [0u8; 256];
            group.iter_mut().for_each(|b| *b = rng.next() as u8);
            // SAFETY: checked above.
            let mut words = [[0u32; 8]; GROUP_MASKS];
            unsafe { group_masks_avx2(&group, &mut words) };
            for j in 0..4 {
                let m = portable_block_masks(group[64 * j..64 * j + 64].try_into().unwrap());
                let mask =
                    |k: usize| u64::from(words[k][2 * j]) | (u64::from(words[k][2 * j + 1]) << 32);
                let plus_slash = m.b64 & !(m.letter | m.digit);
                assert_eq!(
                    [
                        m.upper,
                        m.lower,
                        m.digit,
                        m.space,
                        m.tab,
                        m.newline,
                        m.high,
                        m.cont,
                        m.backslash,
                        plus_slash
                    ],
                    std::array::from_fn::<u64, GROUP_MASKS, _>(mask)
                );
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn token_count_features_wide_match_the_block_pass() {
        if !wide_features_cpu() {
            eprintln!("skipped: this CPU lacks an AVX-512 extension the wide pass needs");
            return;
        }
        // SAFETY: checked above.
        assert_group_pass_matches_the_block_pass(
            |text, encoding| unsafe { features_wide(text, encoding) },
            512,
        );
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn token_count_features_avx2_match_the_block_pass() {
        if !avx2_features_cpu() {
            eprintln!("skipped: this CPU lacks AVX2");
            return;
        }
        // SAFETY: checked above.
        assert_group_pass_matches_the_block_pass(
            |text, encoding| unsafe { features_avx2(text, encoding) },
            256,
        );
    }

    /// `pass`, which takes the text in groups of `group` bytes, counts what the block pass
    /// counts.
    #[cfg(target_arch = "x86_64")]
    fn assert_group_pass_matches_the_block_pass(pass: FeaturePass, group: usize) {
        let mut rng = Rng(47);
        let alphabets: [&[&str]; 3] = [
            ASCII_ALPHABET,
            MIXED_ALPHABET,
            &[
                "中", "文", "字", "日本", "한", " ", "\n", "a", "7", "😀", "é", "\t", "\\",
            ],
        ];
        for round in 0..900 {
            let alphabet = alphabets[round % alphabets.len()];
            // Up to 1,800 bytes (four groups of 512, seven of 256), so every lane and group
            // boundary is crossed; in a third of the texts, runs of one character up to 40 long, for the features
            // about long runs (blanks, letters, digits, base64).
            let text = if round % 3 == 2 {
                let mut text = String::new();
                while text.len() < (rng.next() % 1800) as usize {
                    let item = alphabet[(rng.next() % alphabet.len() as u64) as usize];
                    text.push_str(&item.repeat((rng.next() % 40 + 1) as usize));
                }
                text
            } else {
                rng.text(alphabet, 1500)
            };
            for encoding in Encoding::ALL {
                assert_eq!(
                    pass(&text, encoding),
                    features_of::<false>(&text, encoding),
                    "{text:?}"
                );
            }
        }
        // Every run length at every offset across a block boundary within a group and across
        // a group boundary, for the features that look back 1 to 16 characters.
        let runs = [
            "a", "aB", "Ab", "x9+/", " ", "\t ", "7", "\\a", "\\ab", ".,", "\n", " \n", "中",
        ];
        for run in runs {
            for len in 1..=24 {
                for offset in (40..=70).chain(group - 22..=group + 8) {
                    let text = format!("{}{}.", "-".repeat(offset), run.repeat(len));
                    let blocks = features_of::<false>(&text, Encoding::O200kBase);
                    assert_eq!(pass(&text, Encoding::O200kBase), blocks, "{text:?}");
                }
            }
        }
        // Long texts of two- and three-byte characters amid ASCII (Korean, Chinese with
        // punctuation and newlines, Cyrillic, Greek): the vector pass's per-lane counters of
        // classes are flushed before they overflow, which short texts never reach.
        let long_alphabets: [&[&str]; 3] = [
            &[
                "한", "국", "어", " ", "는", "。", "的", "是", "\n", "中", "国", "了", "我们",
            ],
            &["я", "Ω", "ß", "é", "ü", " ", "中", "の", "、", "x", "1"],
            &[
                "日本", "語", "の", "テ", "キ", "ス", "ト", "。", "\n\n", "中文", "字",
            ],
        ];
        for (seed, alphabet) in long_alphabets.iter().enumerate() {
            let mut rng = Rng(seed as u64 + 100);
            let mut text = String::new();
            while text.len() < 200_000 {
                text.push_str(alphabet[(rng.next() % alphabet.len() as u64) as usize]);
            }
            for encoding in Encoding::ALL {
                assert_eq!(
                    pass(&text, encoding),
                    features_of::<false>(&text, encoding),
                    "alphabet {seed}"
                );
            }
        }
        for encoding in Encoding::ALL {
            assert_eq!(pass("", encoding), [0; FEATURES]);
        }
    }

    #[test]
    fn token_count_features_of_blocks_without_digits_take_a_correct_shortcut() {
        // Digits, tabs and backslashes now and then, at every distance from a block's end.
        let mut rng = Rng(31);
        let words = ["the", "Word", " ", "\n", ". ", "x"];
        let rare = ["1", "42", "\t", "\\", "\\n", "\t\t", "a1"];
        for _ in 0..300 {
            let mut text = String::new();
            while text.len() < (rng.next() % 700) as usize {
                if rng.next().is_multiple_of(16) {
                    text.push_str(rare[(rng.next() % rare.len() as u64) as usize]);
                } else {
                    text.push_str(words[(rng.next() % words.len() as u64) as usize]);
                }
            }
            for encoding in Encoding::ALL {
                assert_eq!(
                    features_of::<true>(&text, encoding),
                    features_of::<false>(&text, encoding),
                    "{text:?}"
                );
            }
        }
    }

    #[test]
    fn token_count_features_of_non_ascii_blocks_take_a_correct_shortcut() {
        // Long runs of CJK (whole blocks without ASCII) after blanks, tabs, newlines and
        // letters at every alignment: the shortcut must count exactly what the full pass does.
        let mut rng = Rng(23);
        let runs = [
            "中文字符",
            "日本語のテキスト",
            "한국어",
            "😀",
            "\u{3000}",
            "今今",
            "是的",
            "这个问题",
            "é",
            "中é中",
            "語😀語",
        ];
        let glue = [" ", "  ", "\t ", " \n", "a ", "ab", "1 ", "'", ""];
        for _ in 0..300 {
            let mut text = String::new();
            for _ in 0..rng.next() % 12 + 1 {
                text.push_str(glue[(rng.next() % glue.len() as u64) as usize]);
                let run = runs[(rng.next() % runs.len() as u64) as usize];
                text.push_str(&run.repeat((rng.next() % 60) as usize));
            }
            for encoding in Encoding::ALL {
                let full = features_of::<false>(&text, encoding);
                assert_eq!(features_of::<true>(&text, encoding), full, "{text:?}");
                // The vector pass over blocks of three-byte characters (where the CPU has it):
                // every alignment of the first lead, two-byte and astral characters in the
                // runs, repeats, and characters that end past the block or the text.
                #[cfg(target_arch = "x86_64")]
                if wide_features_cpu() {
                    // SAFETY: checked just above.
                    let wide = unsafe { features_wide(&text, encoding) };
                    assert_eq!(wide, full, "{text:?}");
                }
                #[cfg(target_arch = "x86_64")]
                if avx2_features_cpu() {
                    // SAFETY: checked just above.
                    let avx2 = unsafe { features_avx2(&text, encoding) };
                    assert_eq!(avx2, full, "{text:?}");
                }
            }
        }
    }

    fn assert_masks_match_the_table(masks: impl Fn(&[u8; 64]) -> Masks) {
        let mut rng = Rng(5);
        for _ in 0..2000 {
            let mut block = [0u8; 64];
            block.iter_mut().for_each(|b| *b = rng.next() as u8);
            let (fast, slow) = (masks(&block), portable_block_masks(&block));
            let fields = |m: &Masks| {
                [
                    m.upper,
                    m.lower,
                    m.letter,
                    m.digit,
                    m.space,
                    m.tab,
                    m.newline,
                    m.blank,
                    m.white,
                    m.punct,
                    m.high,
                    m.cont,
                    m.backslash,
                    m.b64,
                ]
            };
            assert_eq!(fields(&fast), fields(&slow));
        }
    }

    /// Deterministic texts of about `chars` characters of every kind the estimate's 0.8-2x
    /// guarantee covers (the Python test has the same kinds, plus 1 MB texts of each).
    fn kind_texts(chars: usize, seed: u64) -> Vec<(&'static str, String)> {
        let mut rng = Rng(seed);
        let repeat = |unit: &str| unit.chars().cycle().take(chars).collect::<String>();
        let mut pick = |alphabet: &[char]| -> String {
            (0..chars)
                .map(|_| alphabet[(rng.next() % alphabet.len() as u64) as usize])
                .collect()
        };
        let span = |a: u32, b: u32| (a..=b).filter_map(char::from_u32).collect::<Vec<_>>();
        let ascii = |s: &str| s.chars().collect::<Vec<_>>();
        vec![
            ("newlines", "\n".repeat(chars)),
            ("crlf", repeat("\r\n")),
            ("spaces", " ".repeat(chars)),
            ("tabs", "\t".repeat(chars)),
            ("whitespace", pick(&ascii(" \t\n"))),
            ("dots", ".".repeat(chars)),
            (
                "punctuation",
                pick(&ascii("!@#$%^&*()-=+[]{};:'\",.<>/?\\|`~")),
            ),
            ("control", pick(&ascii("\0\x01\x02\x1b"))),
            ("han", pick(&span(0x4E00, 0x9FA5))),
            ("han repeated", "中".repeat(chars)),
            (
                "chinese",
                repeat("这是一个测试。我们正在检查估计器的准确性，"),
            ),
            ("kana", pick(&span(0x3041, 0x3096))),
            (
                "japanese",
                repeat("日本語のテキストです。これはテストです。"),
            ),
            ("hangul", pick(&span(0xAC00, 0xD7A3))),
            ("korean", repeat("안녕하세요 반갑습니다 ")),
            ("combining", repeat("a\u{301}\u{302}\u{303}e\u{300}")),
            ("lone combining", "\u{301}".repeat(chars)),
            ("emoji", pick(&span(0x1F600, 0x1F64F))),
            ("emoji zwj", repeat("👨\u{200d}👩\u{200d}👧\u{200d}👦")),
            ("flags", repeat("🇺🇸🇯🇵")),
            (
                "base64",
                pick(&ascii(
                    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
                )),
            ),
            ("hex", pick(&ascii("0123456789abcdef"))),
            ("one letter", "a".repeat(chars)),
            (
                "python",
                repeat("def foo(x, y):\n    return [i * 2 for i in range(x)]\n\n"),
            ),
            (
                "rust",
                repeat("fn main() {\n    let v: Vec<u32> = (0..10).collect();\n}\n"),
            ),
            (
                "json",
                repeat("{\n  \"key\": [1, 2.5, \"v\"],\n  \"nested\": {\"a\": null}\n}"),
            ),
            (
                "minified js",
                repeat("function(a,b){return a&&b?a.map(function(c){return c*2}):null};"),
            ),
            (
                "english",
                repeat("The quick brown fox jumps over the lazy dog. "),
            ),
            (
                "german",
                repeat("Größere Übungen für Straßenbahnfahrer sind schön. "),
            ),
            (
                "russian",
                repeat("Съешь же ещё этих мягких французских булок, да выпей чаю. "),
            ),
            ("arabic", repeat("مرحبا بكم في هذا الاختبار للتقدير. ")),
            ("hindi", repeat("यह एक परीक्षण वाक्य है। ")),
            ("thai", repeat("นี่คือประโยคทดสอบภาษาไทย ")),
            ("mixed", {
                let items = [
                    "hello ", "世界", "\n", "😀", "123", "...", "  ", "é", "\t", "{}",
                ];
                let mut text = String::new();
                while text.chars().count() < chars {
                    text.push_str(items[(rng.next() % items.len() as u64) as usize]);
                }
                text
            }),
        ]
    }

    /// Every feature pass this CPU runs: the portable block pass, the block pass with POPCNT
    /// and BMI1, and the AVX-512 and AVX2 passes, where present.
    fn passes() -> Vec<(&'static str, FeaturePass)> {
        let mut passes: Vec<(&'static str, FeaturePass)> =
            vec![("block pass", features_of::<true> as FeaturePass)];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt")
            && std::arch::is_x86_feature_detected!("bmi1")
        {
            // SAFETY: only pushed where the CPU has the instructions.
            passes.push(("POPCNT pass", |text, encoding| unsafe {
                text_features_popcnt(text, encoding)
            }));
        }
        #[cfg(target_arch = "x86_64")]
        if wide_features_cpu() {
            // SAFETY: only pushed where the CPU has the instructions.
            passes.push(("AVX-512 pass", |text, encoding| unsafe {
                features_wide(text, encoding)
            }));
        } else {
            eprintln!("AVX-512 pass skipped: this CPU lacks an extension it needs");
        }
        #[cfg(target_arch = "x86_64")]
        if avx2_features_cpu() {
            // SAFETY: only pushed where the CPU has the instructions.
            passes.push(("AVX2 pass", |text, encoding| unsafe {
                features_avx2(text, encoding)
            }));
        } else {
            eprintln!("AVX2 pass skipped: this CPU lacks AVX2");
        }
        passes
    }

    #[test]
    fn token_count_estimate_within_band_on_every_kind_of_text() {
        let encoding = Encoding::O200kBase;
        for (pass_name, pass) in passes() {
            for chars in [1, 2, 3, 7, 30, 100, 1_500, 70_000] {
                for (kind, text) in kind_texts(chars, chars as u64) {
                    let exact = count_exact(&text, encoding);
                    let estimate = estimate_with(&text, encoding, pass);
                    assert!(
                        estimate * 5 >= exact * 4 && estimate <= 2 * exact,
                        "{pass_name} {kind} {chars}: exact {exact}, estimate {estimate}"
                    );
                }
            }
            // Long texts (counted on all cores) of the kinds the features missed worst.
            for (kind, text) in kind_texts(1_100_000, 9) {
                if ![
                    "newlines",
                    "han repeated",
                    "lone combining",
                    "emoji zwj",
                    "russian",
                ]
                .contains(&kind)
                {
                    continue;
                }
                let exact = count_exact(&text, encoding);
                let estimate = estimate_with(&text, encoding, pass);
                assert!(
                    estimate * 5 >= exact * 4 && estimate <= 2 * exact,
                    "{pass_name} {kind}: exact {exact}, estimate {estimate}"
                );
            }
        }
    }

    #[test]
    fn token_count_estimate_basics() {
        for encoding in Encoding::ALL {
            assert_eq!(estimate("", encoding), 0);
            assert!(estimate("a", encoding) >= 1);
            // A sanity check only: the ±10% bound is checked on held-out real text in
            // tests/history/test_token_count.py.
            let text = "The quick brown fox jumps over the lazy dog. ".repeat(50);
            let (exact, est) = (count_exact(&text, encoding), estimate(&text, encoding));
            assert!(est.abs_diff(exact) * 4 <= exact, "{exact} {est}");
        }
        let f = text_features("Hello 世界 123\n", Encoding::O200kBase);
        assert_eq!(f[0], 1); // letter pieces
        assert_eq!(f[14], 3); // digits
        assert_eq!(f[NA], 2); // han
        assert_eq!(f[NA + 9], 1); // non-ASCII after a space
    }
}
