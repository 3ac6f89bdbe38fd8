//! The weights of the calibrated estimator, per encoding.

use super::*;

/// Per-encoding weights of [`FEATURE_NAMES`], fitted by least squares on the training split
/// (`python benches/test_token_count.py fit`).
pub(super) const O200K_WEIGHTS: [f64; FEATURES] = [
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

pub(super) const CL100K_WEIGHTS: [f64; FEATURES] = [
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
