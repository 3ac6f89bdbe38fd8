//! The request guard over generated broken transcripts (the `request_guard` fuzz target's
//! decoder and checks, run by proptest on stable): for every payload API its output is valid,
//! a second guard changes nothing, and the payload builds.

#[path = "common/guard_input.rs"]
mod guard_input;

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn the_guard_gives_valid_idempotent_requests(data in proptest::collection::vec(any::<u8>(), 0..160)) {
        guard_input::check(&data);
    }
}

/// The fuzz target's selected check picks each payload API and both prompt settings: the last
/// byte's twelve values over one transcript reach every combination `check` runs.
#[test]
fn the_fuzz_targets_selector_reaches_every_api() {
    let mut data = vec![1, 0, 3, 0, 19, 0, 4, 1];
    for selector in 0..12u8 {
        *data.last_mut().unwrap() = selector;
        guard_input::check_selected(&data);
    }
    assert_eq!(guard_input::selected_target(11), (5, true));
    assert_eq!(guard_input::selected_target(6), (0, true));
    assert_eq!(guard_input::selected_target(5), (5, false));
}

#[test]
fn the_fuzz_seeds_pass() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/request_guard");
    for entry in std::fs::read_dir(dir).expect("seeds") {
        let seed = std::fs::read(entry.expect("entry").path()).expect("seed");
        guard_input::check(&seed);
        guard_input::check_selected(&seed);
    }
}

#[test]
fn a_run_of_model_turns_before_a_gemini_call_turn_is_merged_whole() {
    // Found by the property above: two plain model turns (and an empty one) before a call turn.
    guard_input::check(&[
        159, 0, 19, 124, 0, 7, 0, 0, 49, 0, 72, 0, 3, 0, 19, 164, 0, 91, 0, 0, 129, 0,
    ]);
}
