//! Compaction planning (pi-mono 0.58.3 `packages/coding-agent/src/core/compaction/compaction.ts`
//! and `utils.ts`): `CompactionSettings`, `should_compact`, `find_cut_point`, `prepare_compaction`
//! with its `CompactionPreparation` and `SummaryRequest`s, and the prompt texts. Cut points,
//! preparation and serialization run in Rust without the GIL.
//!
//! `Session.compact` is the one piece written in Python: it calls a caller-supplied summarizer
//! that may be sync or async, which only Python code can await. It is a method of the Python
//! subclass `clawctx.Session` (`clawctx/history/session.py`), not of this module's `Session`;
//! the planning and the append it uses are Rust.

use std::sync::Arc;

use clawctx_core::compaction::{
    self, CompactionSettings, CutPoint, Preparation, DEFAULT_RESERVE_TOKENS_FLOOR,
};
use clawctx_core::{Entry, Transcript};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::convert::{from_py, py_repr, to_py};
use crate::errors::IntoPyResult;
use crate::session::PySession;
use crate::transcript::{transcript_arg, PyTranscript};

fn count_arg(name: &str, value: i64) -> PyResult<u64> {
    u64::try_from(value)
        .map_err(|_| PyValueError::new_err(format!("{name} must be a non-negative integer")))
}

/// pi's compaction settings (`DEFAULT_COMPACTION_SETTINGS` in pi-mono's
/// `core/compaction/compaction.ts`): `enabled`, `reserve_tokens` (kept free for the
/// answer; also the summary budget) and `keep_recent_tokens` (recent messages kept verbatim).
/// `reserve_tokens_floor` raises `reserve_tokens` to at least that value, as OpenClaw does with
/// its floor of 20000 (`CompactionSettings.DEFAULT_RESERVE_TOKENS_FLOOR`).
#[pyclass(
    name = "CompactionSettings",
    module = "clawctx._core.compaction",
    frozen
)]
pub struct PyCompactionSettings {
    pub inner: CompactionSettings,
}

#[pymethods]
impl PyCompactionSettings {
    /// OpenClaw's `DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR`.
    #[classattr]
    const DEFAULT_RESERVE_TOKENS_FLOOR: u64 = DEFAULT_RESERVE_TOKENS_FLOOR;

    #[new]
    #[pyo3(signature = (enabled = true, reserve_tokens = 16384, keep_recent_tokens = 20000, *, reserve_tokens_floor = None))]
    fn py_new(
        enabled: bool,
        reserve_tokens: i64,
        keep_recent_tokens: i64,
        reserve_tokens_floor: Option<i64>,
    ) -> PyResult<Self> {
        crate::errors::guard(|| {
            let mut inner = CompactionSettings {
                enabled,
                // Any integer: pi computes `contextWindow - reserveTokens` with a negative one too.
                reserve_tokens,
                keep_recent_tokens: count_arg("keep_recent_tokens", keep_recent_tokens)?,
            };
            if let Some(floor) = reserve_tokens_floor {
                inner = inner.with_reserve_floor(count_arg("reserve_tokens_floor", floor)?);
            }
            Ok(PyCompactionSettings { inner })
        })
    }

    /// Settings from pi's camelCase dict (`enabled`, `reserveTokens`, `keepRecentTokens`;
    /// missing keys take the defaults) or OpenClaw's `agents.defaults.compaction` (its
    /// `reserveTokensFloor` is applied; other keys are ignored).
    #[staticmethod]
    fn from_dict(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Self> {
        crate::errors::guard(|| {
            let inner = CompactionSettings::from_value(&from_py(value)?).py_err(py)?;
            Ok(PyCompactionSettings { inner })
        })
    }

    /// The settings in pi's camelCase shape.
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| to_py(py, &self.inner.to_value()))
    }

    /// A copy with `reserve_tokens` raised to at least `floor` (OpenClaw's
    /// `ensurePiCompactionReserveTokens`).
    #[pyo3(signature = (floor = 20000))]
    fn with_reserve_floor(&self, floor: i64) -> PyResult<Self> {
        crate::errors::guard(|| {
            Ok(PyCompactionSettings {
                inner: self
                    .inner
                    .with_reserve_floor(count_arg("reserve_tokens_floor", floor)?),
            })
        })
    }

    #[getter]
    fn enabled(&self) -> PyResult<bool> {
        crate::errors::guard(|| Ok(self.inner.enabled))
    }
    #[getter]
    fn reserve_tokens(&self) -> PyResult<i64> {
        crate::errors::guard(|| Ok(self.inner.reserve_tokens))
    }
    #[getter]
    fn keep_recent_tokens(&self) -> PyResult<u64> {
        crate::errors::guard(|| Ok(self.inner.keep_recent_tokens))
    }
    /// `max_tokens` of a history summary: `floor(0.8 * reserve_tokens)` (pi's
    /// `generateSummary`).
    #[getter]
    fn summary_max_tokens(&self) -> PyResult<u64> {
        crate::errors::guard(|| Ok(self.inner.summary_max_tokens()))
    }
    /// `max_tokens` of a turn-prefix summary: `floor(0.5 * reserve_tokens)`.
    #[getter]
    fn turn_prefix_max_tokens(&self) -> PyResult<u64> {
        crate::errors::guard(|| Ok(self.inner.turn_prefix_max_tokens()))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard(|| {
            Ok({
                other
                    .cast::<PyCompactionSettings>()
                    .is_ok_and(|o| o.get().inner == self.inner)
            })
        })
    }

    fn __repr__(&self) -> PyResult<String> {
        crate::errors::guard(|| {
            Ok({
                format!(
                    "CompactionSettings(enabled={}, reserve_tokens={}, keep_recent_tokens={})",
                    if self.inner.enabled { "True" } else { "False" },
                    self.inner.reserve_tokens,
                    self.inner.keep_recent_tokens
                )
            })
        })
    }
}

/// The `settings=` argument: `None` (pi's defaults), a `CompactionSettings` or a dict.
fn settings_arg(
    py: Python<'_>,
    settings: Option<&Bound<'_, PyAny>>,
) -> PyResult<CompactionSettings> {
    let Some(settings) = settings.filter(|s| !s.is_none()) else {
        return Ok(CompactionSettings::default());
    };
    if let Ok(s) = settings.cast::<PyCompactionSettings>() {
        return Ok(s.get().inner);
    }
    if settings.is_instance_of::<PyDict>() {
        return CompactionSettings::from_value(&from_py(settings)?).py_err(py);
    }
    Err(PyTypeError::new_err(
        "settings must be a CompactionSettings, a settings dict or None",
    ))
}

/// `shouldCompact` (pi-mono compaction.ts): `settings.enabled` and
/// `context_tokens > context_window - settings.reserve_tokens` (strictly greater).
#[pyfunction]
#[pyo3(signature = (context_tokens, context_window, settings = None))]
pub fn should_compact(
    py: Python<'_>,
    context_tokens: f64,
    context_window: f64,
    settings: Option<&Bound<'_, PyAny>>,
) -> PyResult<bool> {
    crate::errors::guard(|| {
        let settings = settings_arg(py, settings)?;
        Ok(compaction::should_compact(
            context_tokens,
            context_window,
            &settings,
        ))
    })
}

/// Entry dicts as core entries (a plain list stands for the entries it holds, in order).
fn entry_list(entries: &Bound<'_, PyAny>) -> PyResult<Vec<Entry>> {
    let mut out = Vec::new();
    for (i, item) in entries.try_iter()?.enumerate() {
        let value = from_py(&item?)?;
        match Entry::from_value(&value, i + 1) {
            Some(entry) => out.push(entry),
            None => return Err(PyTypeError::new_err("every entry must be a dict")),
        }
    }
    Ok(out)
}

fn index_arg(name: &str, value: i64, len: usize) -> PyResult<usize> {
    usize::try_from(value)
        .ok()
        .filter(|&i| i <= len)
        .ok_or_else(|| PyValueError::new_err(format!("{name} must be between 0 and {len}")))
}

/// `findCutPoint(entries, start_index, end_index, keep_recent_tokens)` (pi-mono compaction.ts,
/// upstream quirks included): walking back from `end_index - 1`, sums pi's token estimate of
/// `message` entries until it reaches `keep_recent_tokens`, cuts at the first valid cut point
/// (never a tool result) at or after that entry (or at the first cut point when there is none or
/// the budget is never reached), takes in the non-message entries right before it, and reports the
/// turn start when the cut is not at a user message.
///
/// `entries` is a list of entry dicts (header excluded) or a `Session`, whose entries are taken
/// in file order (the indices of `Session.entries()`). A negative budget counts as 0.
#[pyfunction]
pub fn find_cut_point(
    py: Python<'_>,
    entries: &Bound<'_, PyAny>,
    start_index: i64,
    end_index: i64,
    keep_recent_tokens: i64,
) -> PyResult<CutPoint> {
    crate::errors::guard(|| {
        let keep = keep_recent_tokens.max(0) as u64;
        let run = |list: &[&Entry]| -> PyResult<CutPoint> {
            let start = index_arg("start_index", start_index, list.len())?;
            let end = index_arg("end_index", end_index, list.len())?;
            Ok(py.detach(|| compaction::find_cut_point(list, start, end, keep)))
        };
        if let Ok(session) = entries.cast::<PySession>() {
            let session = session.get().lock(py)?;
            let records = session.core().records();
            let list: Vec<&Entry> = records.iter().collect();
            return run(&list);
        }
        let owned = entry_list(entries)?;
        let list: Vec<&Entry> = owned.iter().collect();
        run(&list)
    })
}

/// What `prepare_compaction` found (pi's `CompactionPreparation`). Indices are positions in
/// the branch path (root → leaf) it was made for.
#[pyclass(
    name = "CompactionPreparation",
    module = "clawctx._core.compaction",
    frozen
)]
pub struct PyCompactionPreparation {
    inner: Arc<Preparation>,
    messages_to_summarize: Py<PyTranscript>,
    turn_prefix_messages: Py<PyTranscript>,
    settings: Py<PyCompactionSettings>,
}

#[pymethods]
impl PyCompactionPreparation {
    /// The messages summarized and dropped: those after the previous compaction and before
    /// the kept part (or before the split turn).
    #[getter]
    fn messages_to_summarize(&self, py: Python<'_>) -> PyResult<Py<PyTranscript>> {
        crate::errors::guard(|| Ok(self.messages_to_summarize.clone_ref(py)))
    }
    /// The start of a split turn, summarized separately (empty when the turn is not split).
    #[getter]
    fn turn_prefix_messages(&self, py: Python<'_>) -> PyResult<Py<PyTranscript>> {
        crate::errors::guard(|| Ok(self.turn_prefix_messages.clone_ref(py)))
    }
    #[getter]
    fn settings(&self, py: Python<'_>) -> PyResult<Py<PyCompactionSettings>> {
        crate::errors::guard(|| Ok(self.settings.clone_ref(py)))
    }
    #[getter]
    fn first_kept_entry_index(&self) -> PyResult<usize> {
        crate::errors::guard(|| Ok(self.inner.cut.first_kept_entry_index))
    }
    /// -1 when the turn is not split.
    #[getter]
    fn turn_start_index(&self) -> PyResult<i64> {
        crate::errors::guard(|| Ok(self.inner.cut.turn_start_index.map_or(-1, |i| i as i64)))
    }
    #[getter]
    fn is_split_turn(&self) -> PyResult<bool> {
        crate::errors::guard(|| Ok(self.inner.cut.is_split_turn))
    }
    #[getter]
    fn first_kept_entry_id(&self) -> PyResult<String> {
        crate::errors::guard(|| Ok(self.inner.first_kept_entry_id.clone()))
    }
    /// The previous compaction's summary (merged by the update prompt).
    #[getter]
    fn previous_summary(&self) -> PyResult<Option<String>> {
        crate::errors::guard(|| Ok(self.inner.previous_summary.clone()))
    }
    /// Index of the previous compaction (or OpenClaw `reset`, the latest boundary) in the
    /// path.
    #[getter]
    fn previous_compaction_index(&self) -> PyResult<Option<usize>> {
        crate::errors::guard(|| Ok(self.inner.previous_compaction_index))
    }
    /// `estimateContextTokens(...).tokens` from the previous compaction (or the root) on.
    #[getter]
    fn tokens_before(&self) -> PyResult<u64> {
        crate::errors::guard(|| Ok(self.inner.tokens_before))
    }
    /// Files only read (sorted), from the previous compaction and the summarized tool calls.
    #[getter]
    fn read_files(&self) -> PyResult<Vec<String>> {
        crate::errors::guard(|| Ok(self.inner.file_lists().0))
    }
    /// Files written or edited (sorted).
    #[getter]
    fn modified_files(&self) -> PyResult<Vec<String>> {
        crate::errors::guard(|| Ok(self.inner.file_lists().1))
    }
    /// The compaction entry's `details`: `{"readFiles": [...], "modifiedFiles": [...]}`.
    #[getter]
    fn details(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| to_py(py, &self.inner.details()))
    }
    /// Id of the leaf the preparation was made for.
    #[getter]
    fn leaf_id(&self) -> PyResult<Option<String>> {
        crate::errors::guard(|| Ok(self.inner.leaf_id.clone()))
    }

    /// The summarization calls pi makes (`compact`): one `"history"` request, or for a split
    /// turn a `"history"` request (only when there is history) and a `"turn_prefix"` request.
    /// `custom_instructions` becomes the history prompt's "Additional focus".
    #[pyo3(signature = (custom_instructions = None))]
    fn summary_requests(
        slf: &Bound<'_, Self>,
        custom_instructions: Option<String>,
    ) -> PyResult<Vec<PySummaryRequest>> {
        crate::errors::guard(|| {
            let py = slf.py();
            let this = slf.get();
            let inner = Arc::clone(&this.inner);
            let focus = custom_instructions.clone();
            let requests = py.detach(move || inner.summary_requests(focus.as_deref()));
            requests
                .into_iter()
                .map(|r| {
                    let history = r.kind == compaction::SummaryKind::History;
                    Ok(PySummaryRequest {
                        kind: r.kind.as_str().to_owned(),
                        prompt: r.prompt,
                        system_prompt: r.system_prompt.to_owned(),
                        max_tokens: r.max_tokens,
                        messages: if history {
                            this.messages_to_summarize.clone_ref(py)
                        } else {
                            this.turn_prefix_messages.clone_ref(py)
                        },
                        previous_summary: this.inner.previous_summary.clone().filter(|_| history),
                        custom_instructions: custom_instructions.clone().filter(|_| history),
                        preparation: slf.clone().unbind(),
                    })
                })
                .collect()
        })
    }

    /// The final summary (as pi's `compact` composes it) from the summarizer's texts: for a split
    /// turn `history_summary` (or "No prior history." when `None`), the split-turn separator and
    /// `turn_prefix_summary`; then the `<read-files>` / `<modified-files>` sections.
    #[pyo3(signature = (history_summary = None, turn_prefix_summary = None))]
    fn compose_summary(
        &self,
        history_summary: Option<&str>,
        turn_prefix_summary: Option<&str>,
    ) -> PyResult<String> {
        crate::errors::guard(|| {
            Ok({
                self.inner
                    .compose_summary(history_summary, turn_prefix_summary)
            })
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard(|| {
            Ok(format!(
                "CompactionPreparation(first_kept_entry_id={}, is_split_turn={}, messages_to_summarize={}, turn_prefix_messages={}, tokens_before={})",
                py_repr(py, &self.inner.first_kept_entry_id)?,
                py_repr(py, self.inner.cut.is_split_turn)?,
                self.inner.messages_to_summarize.len(),
                self.inner.turn_prefix_messages.len(),
                self.inner.tokens_before
            ))
        })
    }
}

/// One summarization call for the caller's summarizer (pi's `generateSummary`): send `prompt` as a
/// single user message with `system_prompt` and at most `max_tokens` of output (pi asks for
/// reasoning effort "high" when the model supports it), and return the text of the answer
/// (text blocks joined with "\n", as pi does). `kind` is `"history"` or `"turn_prefix"`.
// Kept as a mirror: it points back at its `CompactionPreparation` (`preparation`), a binding
// class, and shares that object's `Transcript`s (`request.messages is
// preparation.messages_to_summarize`); the core's `compaction::SummaryRequest` has neither, nor
// the previous summary and focus a history request carries here.
#[pyclass(
    name = "SummaryRequest",
    module = "clawctx._core.compaction",
    frozen,
    get_all
)]
pub struct PySummaryRequest {
    pub kind: String,
    pub prompt: String,
    pub system_prompt: String,
    pub max_tokens: u64,
    /// The messages `prompt` serializes (a `Transcript`).
    pub messages: Py<PyTranscript>,
    /// The previous summary merged by a history request.
    pub previous_summary: Option<String>,
    /// The additional focus of a history request.
    pub custom_instructions: Option<String>,
    pub preparation: Py<PyCompactionPreparation>,
}

#[pymethods]
impl PySummaryRequest {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard(|| {
            Ok(format!(
                "SummaryRequest(kind={}, max_tokens={}, prompt=<{} chars>)",
                py_repr(py, &self.kind)?,
                self.max_tokens,
                self.prompt.chars().count()
            ))
        })
    }
}

/// `prepareCompaction` (pi-mono compaction.ts) on a `Session`'s current branch (root → leaf),
/// or on a list of path entry dicts. Returns `None` when there is nothing to do: the last
/// entry is a compaction (or an OpenClaw `reset`), the path is empty, or the first kept entry
/// has no id. A `reset` bounds the history as a compaction does, without a previous summary.
#[pyfunction]
#[pyo3(signature = (session, settings = None))]
pub fn prepare_compaction(
    py: Python<'_>,
    session: &Bound<'_, PyAny>,
    settings: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<PyCompactionPreparation>> {
    crate::errors::guard(|| {
        let core_settings = settings_arg(py, settings)?;
        let prepared = if let Ok(s) = session.cast::<PySession>() {
            let s = s.get().lock(py)?;
            let core = s.core();
            py.detach(|| compaction::prepare_session_compaction(core, &core_settings))
        } else {
            let owned = entry_list(session)?;
            py.detach(|| {
                let path: Vec<&Entry> = owned.iter().collect();
                compaction::prepare_compaction(&path, &core_settings)
            })
        };
        let Some(prepared) = prepared else {
            return Ok(None);
        };
        let transcript = |t: &Transcript| Py::new(py, PyTranscript::new(t.clone()));
        let settings = match settings.and_then(|s| s.cast::<PyCompactionSettings>().ok()) {
            Some(s) => s.clone().unbind(),
            None => Py::new(
                py,
                PyCompactionSettings {
                    inner: core_settings,
                },
            )?,
        };
        Ok(Some(PyCompactionPreparation {
            messages_to_summarize: transcript(&prepared.messages_to_summarize)?,
            turn_prefix_messages: transcript(&prepared.turn_prefix_messages)?,
            settings,
            inner: Arc::new(prepared),
        }))
    })
}

/// `serializeConversation(convertToLlm(messages))` (pi-mono compaction/utils.ts): `[User]: `,
/// `[Assistant thinking]: `, `[Assistant]: `, `[Assistant tool calls]: ` and `[Tool result]: `
/// parts joined by blank lines; tool results cut to 2000 characters. LLM messages pass the
/// conversion unchanged, so both agent and LLM messages can be given.
#[pyfunction]
pub fn serialize_conversation(py: Python<'_>, messages: &Bound<'_, PyAny>) -> PyResult<String> {
    crate::errors::guard(|| {
        let transcript = transcript_arg(messages)?;
        Ok(py.detach(move || compaction::serialize_conversation(&transcript)))
    })
}

/// The summarization prompt (pi's `generateSummary`). `messages_or_text` is the conversation as
/// messages (serialized with `serialize_conversation`) or as already serialized text.
/// `kind="history"`: the conversation, the `previous_summary` if non-empty, and pi's initial or
/// update instructions plus "Additional focus: " and `custom_instructions` if non-empty.
/// `kind="turn_prefix"`: the conversation and the turn-prefix instructions (which take no
/// previous summary or custom instructions).
#[pyfunction]
#[pyo3(signature = (messages_or_text, previous_summary = None, custom_instructions = None, *, kind = "history"))]
pub fn build_compaction_prompt(
    py: Python<'_>,
    messages_or_text: &Bound<'_, PyAny>,
    previous_summary: Option<&str>,
    custom_instructions: Option<&str>,
    kind: &str,
) -> PyResult<String> {
    crate::errors::guard(|| {
        if !matches!(kind, "history" | "turn_prefix") {
            return Err(PyValueError::new_err(format!(
                "kind must be \"history\" or \"turn_prefix\", not {kind:?}"
            )));
        }
        if kind == "turn_prefix" && (previous_summary.is_some() || custom_instructions.is_some()) {
            return Err(PyValueError::new_err(
                "a turn-prefix prompt takes no previous_summary or custom_instructions",
            ));
        }
        let conversation = match messages_or_text.cast::<PyString>() {
            Ok(text) => text.to_str()?.to_owned(),
            Err(_) => {
                let transcript = transcript_arg(messages_or_text)?;
                py.detach(move || compaction::serialize_conversation(&transcript))
            }
        };
        Ok(match kind {
            "history" => {
                compaction::history_prompt(&conversation, previous_summary, custom_instructions)
            }
            _ => compaction::turn_prefix_prompt(&conversation),
        })
    })
}

/// pi's exact compaction texts (compaction.ts, utils.ts) by constant name (private:
/// `clawctx.compaction` exposes them as constants): `SUMMARIZATION_SYSTEM_PROMPT`,
/// `SUMMARIZATION_PROMPT`, `UPDATE_SUMMARIZATION_PROMPT`, `TURN_PREFIX_SUMMARIZATION_PROMPT`,
/// `NO_PRIOR_HISTORY` and `TURN_CONTEXT_SEPARATOR`.
#[pyfunction(name = "_compaction_texts")]
pub fn compaction_texts(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    crate::errors::guard(|| {
        let texts = PyDict::new(py);
        for (name, text) in [
            (
                "SUMMARIZATION_SYSTEM_PROMPT",
                compaction::SUMMARIZATION_SYSTEM_PROMPT,
            ),
            ("SUMMARIZATION_PROMPT", compaction::SUMMARIZATION_PROMPT),
            (
                "UPDATE_SUMMARIZATION_PROMPT",
                compaction::UPDATE_SUMMARIZATION_PROMPT,
            ),
            (
                "TURN_PREFIX_SUMMARIZATION_PROMPT",
                compaction::TURN_PREFIX_SUMMARIZATION_PROMPT,
            ),
            ("NO_PRIOR_HISTORY", compaction::NO_PRIOR_HISTORY),
            ("TURN_CONTEXT_SEPARATOR", compaction::TURN_CONTEXT_SEPARATOR),
        ] {
            texts.set_item(name, text)?;
        }
        Ok(texts)
    })
}
