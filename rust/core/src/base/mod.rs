//! Leaf utilities every stage uses and that use no other stage: the error type, entry-id
//! sources, JSON with JavaScript's serialization rules, JavaScript string lengths, and
//! `python_class!`, which declares the report types `clawctx._core` exposes.

mod error;
mod exposed;
mod ids;
mod js;
mod json;

pub use error::{Error, Result};
pub(crate) use exposed::python_class;
pub use ids::{
    generate_entry_id, random_session_id, system_now_ms, DrawnIds, IdSource, RandomIds,
    SequentialIds,
};
pub use js::{sanitize_id_chars, utf16_len, utf16_prefix_owned};
pub use json::{
    is_js_whitespace, is_truthy, iso_to_ms, js_string, js_trim, ms_to_iso, object, parse_value,
    raw_as_str, replace_lone_surrogate_escapes, rewrite_lone_surrogate_escapes, to_js_string,
    write_js, JsonText, RawObject,
};
