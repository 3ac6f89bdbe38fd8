//! Token counting: exact BPE counts and the calibrated estimate of arbitrary text, and the
//! per-message count of arbitrary message JSON, in the encoding and with the estimator the last
//! byte selects (one of four per execution, so the fuzzer reaches all four at a quarter of the
//! cost). Nothing may panic, and an exact count never exceeds the text's UTF-8 byte length
//! (every byte is in the vocabulary).
#![no_main]

use clawctx_core::token_count::{base64_image_tokens, Encoding, Estimator, TokenCounter};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let selector = usize::from(data.last().copied().unwrap_or(0));
    let encoding = Encoding::ALL[selector % Encoding::ALL.len()];
    let estimator = Estimator::ALL[selector / Encoding::ALL.len() % Estimator::ALL.len()];
    let counter = TokenCounter::new(encoding, estimator);
    let count = counter.text(&text);
    if estimator == Estimator::Exact {
        assert!(
            count as usize <= text.len(),
            "{count} tokens for {} bytes",
            text.len()
        );
        assert_eq!(count == 0, text.is_empty());
    }
    let _ = counter.message(&text);
    let _ = base64_image_tokens(&text);
});
