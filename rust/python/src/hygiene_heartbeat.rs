//! Bindings of the hygiene stage's heartbeat rules: `strip_heartbeat_token` and
//! `filter_heartbeat_pairs` (the file side is in `session_heartbeat.rs`).

use std::sync::Arc;

use clawctx_core::hygiene::{
    self, HeartbeatMatcher, StripMode, StripResult, DEFAULT_HEARTBEAT_PROMPT,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyString};

use crate::transcript::{transcript_arg, PyTranscript};

/// `maxAckChars` as upstream reads it: a number, or a numeric string (JavaScript `Number`);
/// anything non-finite, and `None`, is the default.
fn ack_max_chars(arg: Option<&Bound<'_, PyAny>>) -> PyResult<f64> {
    let value = match arg {
        None => None,
        Some(obj) if obj.is_none() => None,
        // typeof true !== "number": the default.
        Some(obj) if obj.is_instance_of::<PyBool>() => None,
        Some(obj) if obj.is_instance_of::<PyString>() => {
            Some(hygiene::js_number(obj.cast::<PyString>()?.to_str()?))
        }
        Some(obj) => Some(obj.extract::<f64>().map_err(|_| {
            PyTypeError::new_err("max_ack_chars must be a number, a numeric string or None")
        })?),
    };
    Ok(hygiene::resolve_ack_max_chars(value))
}

fn strip_mode(mode: &str) -> PyResult<StripMode> {
    match mode {
        "heartbeat" => Ok(StripMode::Heartbeat),
        "message" => Ok(StripMode::Message),
        other => Err(PyValueError::new_err(format!(
            "mode must be \"heartbeat\" or \"message\", not {other:?}"
        ))),
    }
}

/// `stripHeartbeatToken` (OpenClaw 2026.3.13 `src/auto-reply/heartbeat.ts`), exactly as OpenClaw
/// does it.
///
/// Blank text is a skip. Markup is normalized on a copy (HTML tags and `&nbsp;` become spaces,
/// leading/trailing runs of `*`, `` ` ``, `~`, `_` go); without the token in either, the text is
/// kept. The token is stripped repeatedly from the start, and from the end when at most 4
/// non-word UTF-16 units follow it (`"done HEARTBEAT_OK."` becomes `"done."`); whitespace is
/// collapsed. The raw text's result wins when it stripped and left text (so `"**HEARTBEAT_OK**"`
/// leaves `"****"` in message mode, as upstream). In `"heartbeat"` mode a remainder of at most
/// `max_ack_chars` UTF-16 units is still a skip. `max_ack_chars` may be a numeric string
/// (JavaScript `Number`); `None` or non-finite means 300, negative means 0.
#[pyfunction]
#[pyo3(signature = (text, *, mode = "message", max_ack_chars = None))]
pub fn strip_heartbeat_token(
    text: Option<&str>,
    mode: &str,
    max_ack_chars: Option<&Bound<'_, PyAny>>,
) -> PyResult<StripResult> {
    crate::errors::guard(|| {
        let mode = strip_mode(mode)?;
        let limit = ack_max_chars(max_ack_chars)?;
        Ok(hygiene::strip_heartbeat_token(
            text.unwrap_or(""),
            mode,
            limit,
        ))
    })
}

pub(crate) fn matcher(
    heartbeat_prompt: Option<String>,
    transcript_prompt: bool,
    max_ack_chars: Option<&Bound<'_, PyAny>>,
) -> PyResult<HeartbeatMatcher> {
    Ok(HeartbeatMatcher {
        heartbeat_prompt,
        transcript_prompt,
        ack_max_chars: ack_max_chars(max_ack_chars)?,
    })
}

/// `filterHeartbeatPairs` (later OpenClaw `src/auto-reply/heartbeat-filter.ts`, not in
/// 2026.3.13): removes each adjacent user heartbeat prompt +
/// acknowledging assistant reply. Returns the input object itself when nothing is removed.
#[pyfunction]
#[pyo3(signature = (messages, *, heartbeat_prompt = Some(DEFAULT_HEARTBEAT_PROMPT.to_owned()), transcript_prompt = true, max_ack_chars = None))]
pub fn filter_heartbeat_pairs(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    heartbeat_prompt: Option<String>,
    transcript_prompt: bool,
    max_ack_chars: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| {
        let matcher = matcher(heartbeat_prompt, transcript_prompt, max_ack_chars)?;
        let input = transcript_arg(messages)?;
        let source = Arc::clone(&input);
        let filtered = py.detach(move || hygiene::filter_heartbeat_pairs(&source, &matcher));
        crate::transcript_ops::result_object(py, messages, &input, filtered)
    })
}
