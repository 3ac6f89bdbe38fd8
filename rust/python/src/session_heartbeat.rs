//! Bindings of the session stage's heartbeat file guard: the mark / prune pair behind
//! `HeartbeatTranscriptGuard` (`mark_heartbeat_transcript`, `prune_heartbeat_transcript`).

use std::path::PathBuf;
use std::time::Duration;

use clawctx_core::hygiene::DEFAULT_HEARTBEAT_PROMPT;
use clawctx_core::session::{self, ExchangeRule, PruneReport, TranscriptMark, WriteOptions};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::convert::{from_py, Clock};
use crate::errors::IntoPyResult;
use crate::hygiene_heartbeat::matcher;

fn lock_timeout(seconds: f64) -> PyResult<Duration> {
    crate::session::lock_timeout_duration(seconds)
}

/// Records the byte size of a session file under its exclusive lock (as OpenClaw 2026.3.13
/// `src/infra/heartbeat-runner.ts` does before a heartbeat run).
/// Raises `FileNotFoundError` for a missing file and `SessionLockError` on lock timeout.
#[pyfunction]
#[pyo3(signature = (path, *, lock_timeout = 10.0))]
pub fn mark_heartbeat_transcript(
    py: Python<'_>,
    path: PathBuf,
    lock_timeout: f64,
) -> PyResult<TranscriptMark> {
    crate::errors::guard(|| {
        let options = WriteOptions {
            fsync: false,
            lock_timeout: self::lock_timeout(lock_timeout)?,
        };
        py.detach(|| TranscriptMark::capture(&path, options))
            .py_err(py)
    })
}

/// Removes the acknowledged heartbeat exchange written after `mark`, under the session lock
/// (`pruneHeartbeatTranscript` of `src/infra/heartbeat-runner.ts`, safely against other writers).
/// `entries`: the entries appended through the caller's session during the run (dicts with their
/// `id`), which are then exactly what is removed; `None`: the exchange is found by content
/// (heartbeat prompt … acknowledgement).
/// Raises `SessionLockError` on lock timeout; unsafe situations leave the file untouched and
/// report why.
#[pyfunction]
#[pyo3(signature = (mark, *, entries = None, heartbeat_prompt = Some(DEFAULT_HEARTBEAT_PROMPT.to_owned()), transcript_prompt = true, max_ack_chars = None, lock_timeout = 10.0, fsync = true, now_ms = None))]
#[allow(clippy::too_many_arguments)]
pub fn prune_heartbeat_transcript(
    py: Python<'_>,
    mark: &TranscriptMark,
    entries: Option<&Bound<'_, PyAny>>,
    heartbeat_prompt: Option<String>,
    transcript_prompt: bool,
    max_ack_chars: Option<&Bound<'_, PyAny>>,
    lock_timeout: f64,
    fsync: bool,
    now_ms: Option<&Bound<'_, PyAny>>,
) -> PyResult<PruneReport> {
    crate::errors::guard(|| {
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
            None => {
                ExchangeRule::Content(matcher(heartbeat_prompt, transcript_prompt, max_ack_chars)?)
            }
        };
        let options = WriteOptions {
            fsync,
            lock_timeout: self::lock_timeout(lock_timeout)?,
        };
        let now = Clock::from_arg(now_ms)?.now_ms(py)?;
        py.detach(|| session::prune_heartbeat_transcript(mark, &rule, options, now))
            .py_err(py)
    })
}
