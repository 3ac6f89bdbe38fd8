//! Heartbeat hygiene (hot-path §7.13, §2.7): `strip_heartbeat_token`,
//! `filter_heartbeat_pairs`, and the mark / prune pair behind `HeartbeatTranscriptGuard`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clawctx_core::hygiene::{self, HeartbeatMatcher, StripMode, DEFAULT_HEARTBEAT_PROMPT};
use clawctx_core::session::{self, ExchangeRule, TranscriptMark, WriteOptions};
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyIterator, PyString, PyTuple};

use crate::convert::{from_py, Clock};
use crate::errors::IntoPyResult;
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

fn lock_timeout(seconds: f64) -> PyResult<Duration> {
    if !(seconds.is_finite() && seconds >= 0.0) {
        return Err(PyValueError::new_err(
            "lock_timeout must be a non-negative number of seconds",
        ));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// `stripHeartbeatToken`'s `{shouldSkip, text, didStrip}`. Also a 3-sequence: it unpacks as
/// `should_skip, text, did_strip = result` and equals the tuple of its fields.
#[pyclass(module = "clawctx._core", frozen, get_all)]
pub struct StripResult {
    /// Deliver nothing: the reply was blank, only the token, or (heartbeat mode) the token with
    /// at most `max_ack_chars` of other text.
    pub should_skip: bool,
    /// What remains to deliver (`""` when skipped).
    pub text: String,
    /// The token was found at an edge and removed.
    pub did_strip: bool,
}

impl StripResult {
    fn as_tuple<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        (self.should_skip, self.text.as_str(), self.did_strip).into_pyobject(py)
    }
}

#[pymethods]
impl StripResult {
    fn __len__(&self) -> usize {
        3
    }

    fn __getitem__<'py>(&self, py: Python<'py>, index: isize) -> PyResult<Bound<'py, PyAny>> {
        let i = if index < 0 { index + 3 } else { index };
        if !(0..3).contains(&i) {
            return Err(PyIndexError::new_err("StripResult index out of range"));
        }
        self.as_tuple(py)?.get_item(i as usize)
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyIterator>> {
        self.as_tuple(py)?.try_iter()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        if let Ok(o) = other.cast::<StripResult>() {
            let o = o.get();
            return (o.should_skip, &o.text, o.did_strip)
                == (self.should_skip, &self.text, self.did_strip);
        }
        other
            .cast::<PyTuple>()
            .ok()
            .and_then(|t| t.extract::<(bool, String, bool)>().ok())
            .is_some_and(|(s, t, d)| (s, &t, d) == (self.should_skip, &self.text, self.did_strip))
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        self.as_tuple(py)?.hash()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let py_bool = |b: bool| if b { "True" } else { "False" };
        Ok(format!(
            "StripResult(should_skip={}, text={}, did_strip={})",
            py_bool(self.should_skip),
            PyString::new(py, &self.text).repr()?,
            py_bool(self.did_strip)
        ))
    }
}

/// `stripHeartbeatToken` (spec §7.13 rule 45), exactly as OpenClaw does it.
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
    let mode = strip_mode(mode)?;
    let limit = ack_max_chars(max_ack_chars)?;
    let r = hygiene::strip_heartbeat_token(text.unwrap_or(""), mode, limit);
    Ok(StripResult {
        should_skip: r.should_skip,
        text: r.text,
        did_strip: r.did_strip,
    })
}

fn matcher(
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

/// `filterHeartbeatPairs` (spec §7.13 rule 46): removes each adjacent user heartbeat prompt +
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
    let matcher = matcher(heartbeat_prompt, transcript_prompt, max_ack_chars)?;
    let input = transcript_arg(messages)?;
    let source = Arc::clone(&input);
    let filtered = py.detach(move || hygiene::filter_heartbeat_pairs(&source, &matcher));
    crate::ops::result_object(py, messages, &input, filtered)
}

/// The size of a session file recorded (under its lock) before a heartbeat run.
#[pyclass(module = "clawctx._core", frozen)]
pub struct HeartbeatMark {
    inner: TranscriptMark,
}

#[pymethods]
impl HeartbeatMark {
    #[getter]
    fn path(&self) -> PathBuf {
        self.inner.path.clone()
    }

    /// The byte size before the run.
    #[getter]
    fn size(&self) -> u64 {
        self.inner.size
    }

    /// Whether the size is at a line boundary (nothing is pruned otherwise).
    #[getter]
    fn at_line_boundary(&self) -> bool {
        self.inner.at_line_boundary
    }

    fn __repr__(&self) -> String {
        format!(
            "HeartbeatMark(path={:?}, size={}, at_line_boundary={})",
            self.inner.path.display().to_string(),
            self.inner.size,
            if self.inner.at_line_boundary {
                "True"
            } else {
                "False"
            }
        )
    }
}

/// Records the byte size of a session file under its exclusive lock (spec §2.7 rule 22).
/// Raises `FileNotFoundError` for a missing file and `SessionLockError` on lock timeout.
#[pyfunction]
#[pyo3(signature = (path, *, lock_timeout = 10.0))]
pub fn mark_heartbeat_transcript(
    py: Python<'_>,
    path: PathBuf,
    lock_timeout: f64,
) -> PyResult<HeartbeatMark> {
    let options = WriteOptions {
        fsync: false,
        lock_timeout: self::lock_timeout(lock_timeout)?,
    };
    let mark = py
        .detach(|| TranscriptMark::capture(&path, options))
        .py_err(py)?;
    Ok(HeartbeatMark { inner: mark })
}

/// What `prune_heartbeat_transcript` did. `action`: `"truncated"`, `"rewritten"` or
/// `"unchanged"` (then `reason` says why).
#[pyclass(module = "clawctx._core", frozen, get_all)]
pub struct HeartbeatPruneReport {
    pub action: String,
    pub removed_lines: usize,
    pub removed_bytes: u64,
    pub removed_ids: Vec<String>,
    pub kept_lines: usize,
    pub reason: Option<String>,
}

#[pymethods]
impl HeartbeatPruneReport {
    /// Whether lines were removed.
    #[getter]
    fn pruned(&self) -> bool {
        self.action != "unchanged"
    }

    fn __repr__(&self) -> String {
        format!(
            "HeartbeatPruneReport(action={:?}, removed_lines={}, removed_bytes={}, kept_lines={}, reason={:?})",
            self.action, self.removed_lines, self.removed_bytes, self.kept_lines, self.reason
        )
    }
}

/// Removes the acknowledged heartbeat exchange written after `mark`, under the session lock
/// (spec §2.7, safely against other writers). `entries`: the entries appended through the
/// caller's session during the run (dicts with their `id`), which are then exactly what is
/// removed; `None`: the exchange is found by content (heartbeat prompt … acknowledgement).
/// Raises `SessionLockError` on lock timeout; unsafe situations leave the file untouched and
/// report why.
#[pyfunction]
#[pyo3(signature = (mark, *, entries = None, heartbeat_prompt = Some(DEFAULT_HEARTBEAT_PROMPT.to_owned()), transcript_prompt = true, max_ack_chars = None, lock_timeout = 10.0, fsync = true, now_ms = None))]
#[allow(clippy::too_many_arguments)]
pub fn prune_heartbeat_transcript(
    py: Python<'_>,
    mark: &HeartbeatMark,
    entries: Option<&Bound<'_, PyAny>>,
    heartbeat_prompt: Option<String>,
    transcript_prompt: bool,
    max_ack_chars: Option<&Bound<'_, PyAny>>,
    lock_timeout: f64,
    fsync: bool,
    now_ms: Option<&Bound<'_, PyAny>>,
) -> PyResult<HeartbeatPruneReport> {
    let rule = match entries.filter(|e| !e.is_none()) {
        Some(list) => {
            let mut values = Vec::new();
            for item in list.try_iter()? {
                let value = from_py(&item?)?;
                if !value.get("id").is_some_and(serde_json::Value::is_string) {
                    return Err(PyValueError::new_err(
                        "every entry must be a dict with a string \"id\"",
                    ));
                }
                values.push(value);
            }
            ExchangeRule::Entries(values)
        }
        None => ExchangeRule::Content(matcher(heartbeat_prompt, transcript_prompt, max_ack_chars)?),
    };
    let options = WriteOptions {
        fsync,
        lock_timeout: self::lock_timeout(lock_timeout)?,
    };
    let now = Clock::from_arg(now_ms)?.now_ms(py)?;
    let mark = &mark.inner;
    let report = py
        .detach(|| session::prune_heartbeat_transcript(mark, &rule, options, now))
        .py_err(py)?;
    Ok(HeartbeatPruneReport {
        action: report.action.as_str().to_owned(),
        removed_lines: report.removed_lines,
        removed_bytes: report.removed_bytes,
        removed_ids: report.removed_ids,
        kept_lines: report.kept_lines,
        reason: report.reason,
    })
}
