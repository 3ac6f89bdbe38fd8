//! The payload writers' two paths (stored bytes, value trees) over generated damaged
//! transcripts, on stable: the `payload_paths` fuzz target's check run by proptest over random
//! decision bytes, over its committed seeds and recorded regressions, and for every model.

#[path = "common/payload_paths.rs"]
mod payload_paths;
#[allow(dead_code)]
#[path = "common/transcript_checks.rs"]
mod transcript_checks;

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn both_paths_write_the_same_body(data in proptest::collection::vec(any::<u8>(), 0..400)) {
        let text = transcript_checks::structured(&data);
        payload_paths::check(&text, data.last().copied().unwrap_or(0));
    }
}

/// Each seed and recorded regression, for every model, with and without the guard and the
/// simple-options mapping (the fuzz target runs one of these per execution).
#[test]
fn seeds_and_regressions_agree_for_every_setting() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let mut inputs = 0;
    for dir in ["seeds/payload_paths", "regressions/payload_paths"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for entry in entries {
            let data = std::fs::read(entry.unwrap().path()).unwrap();
            let text = transcript_checks::structured(&data);
            for selector in 0..=u8::MAX {
                payload_paths::check(&text, selector);
            }
            inputs += 1;
        }
    }
    assert!(inputs >= 4, "only {inputs} seeds");
}

/// The comparison is not vacuous: over random decision streams the bytes path writes the body
/// for a good share of the transcripts that parse, for every builder that has one.
#[test]
fn the_bytes_path_is_taken_on_generated_transcripts() {
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut taken = vec![0usize; payload_paths::MODELS.len()];
    let mut parsed = 0;
    for _ in 0..200 {
        let data: Vec<u8> = (0..256)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        let text = transcript_checks::structured(&data);
        let Ok(transcript) = clawctx_core::Transcript::from_json(&text) else {
            continue;
        };
        parsed += 1;
        for (model, count) in taken.iter_mut().enumerate() {
            *count += usize::from(payload_paths::check_transcript(
                &transcript,
                model,
                false,
                false,
            ));
        }
    }
    for (model, count) in taken.iter().enumerate() {
        eprintln!(
            "{:?}: bytes path {count} of {parsed}",
            payload_paths::MODELS[model]
        );
    }
    assert!(parsed >= 150);
    for count in taken {
        assert!(
            count * 4 >= parsed,
            "the bytes path wrote only {count} of {parsed}"
        );
    }
}

/// The selector reaches every model and both settings of each flag.
#[test]
fn the_selector_reaches_every_setting() {
    let mut seen = std::collections::HashSet::new();
    for selector in 0..=u8::MAX {
        seen.insert(payload_paths::selected(selector));
    }
    assert_eq!(seen.len(), payload_paths::MODELS.len() * 4);
}
