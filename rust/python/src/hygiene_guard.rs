//! The request guard (`clawctx_core::hygiene::guard_request`): clawctx's safe default, which
//! returns a transcript unchanged when the request built from it is valid for the target and
//! otherwise rewrites it into the canonical shape every provider accepts.

use clawctx_core::base::system_now_ms;
use clawctx_core::hygiene::{self, GuardTarget, Violation};
use pyo3::prelude::*;

use crate::convert::Clock;
use crate::transcript::PyTranscript;
use crate::transcript_ops::result_object;

/// The guarded transcript and what changed, as `(kind, count)` pairs.
type Guarded = (Py<PyTranscript>, Vec<(&'static str, usize)>);

/// `messages` as the provider accepts them, and what was changed as `(kind, count)` pairs
/// (empty, with the input itself returned, when nothing needed changing). `provider`,
/// `model_api` and `model_id` name the target (a turn of another model gets its tool-call ids
/// normalised as pi-ai does); `followed_by_user` says a user message (the prompt) comes after
/// these, so a last turn's unanswered calls are answered at send time. `now_ms` stamps the
/// synthetic results. `verbatim_ids`: the writer sends ids as stored (no normalisation).
#[pyfunction]
#[pyo3(signature = (
    messages, *, provider = None, model_api = None, model_id = None, followed_by_user = false,
    now_ms = None, verbatim_ids = false
))]
#[allow(clippy::too_many_arguments)]
pub fn guard_request(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    provider: Option<String>,
    model_api: Option<String>,
    model_id: Option<String>,
    followed_by_user: bool,
    now_ms: Option<&Bound<'_, PyAny>>,
    verbatim_ids: bool,
) -> PyResult<Guarded> {
    crate::errors::guard(|| {
        let now = match now_ms {
            None => system_now_ms(),
            Some(arg) => Clock::from_arg(Some(arg))?.now_ms(py)?,
        };
        let input = crate::transcript::transcript_arg(messages)?;
        let source = std::sync::Arc::clone(&input);
        let (output, report) = py.detach(move || {
            let target = GuardTarget {
                provider: provider.as_deref(),
                api: model_api.as_deref(),
                model_id: model_id.as_deref(),
                verbatim_ids,
            };
            hygiene::guard_request(&source, target, followed_by_user, now)
        });
        let result = result_object(py, messages, &input, output)?;
        Ok((result, report.counts()))
    })
}

/// Why a request built from `messages` for the target would be rejected (the guard's check):
/// an empty list when it is valid. Same target arguments as `guard_request`.
#[pyfunction]
#[pyo3(signature = (
    messages, *, provider = None, model_api = None, model_id = None, followed_by_user = false,
    verbatim_ids = false
))]
#[allow(clippy::too_many_arguments)]
pub fn request_issues(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    provider: Option<String>,
    model_api: Option<String>,
    model_id: Option<String>,
    followed_by_user: bool,
    verbatim_ids: bool,
) -> PyResult<Vec<Violation>> {
    crate::errors::guard(|| {
        let input = crate::transcript::transcript_arg(messages)?;
        let found = py.detach(move || {
            let target = GuardTarget {
                provider: provider.as_deref(),
                api: model_api.as_deref(),
                model_id: model_id.as_deref(),
                verbatim_ids,
            };
            hygiene::request_issues(&input, target, followed_by_user)
        });
        Ok(found
            .into_iter()
            .map(|v| Violation {
                index: v.index,
                rule: v.rule,
                detail: v.detail,
            })
            .collect())
    })
}
