//! The Rust half of image sanitization (OpenClaw 2026.3.13
//! `src/agents/pi-embedded-helpers/images.ts` and `src/agents/tool-images.ts`): finding image
//! blocks without the GIL and writing sanitized blocks back. The image work itself is
//! `clawctx.images` (Pillow).

use std::sync::Arc;

use clawctx_core::hygiene::{self, BlockEdit, BlockReplacement};
use clawctx_core::Transcript;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString, PyTuple};
use serde_json::Value;

use crate::convert::{from_py, py_repr};
use crate::errors::IntoPyResult;
use crate::transcript::{transcript_arg, PyTranscript};

/// An image block that `sanitizeSessionMessagesImages` sanitizes: where it is, its `data` and
/// `mimeType`, and the per-result limit overrides of a tool result (`details.imageSanitization`).
// Kept as a mirror: the core's `hygiene::ImageBlockRef<'a>` borrows `role`, `data` and
// `mime_type` from the transcript it scans (a Python class cannot hold a borrow), and `data`
// (base64, up to megabytes) is held here as one Python `str`, made once, so that every read of
// `block.data` returns it without a copy.
#[pyclass(
    name = "ImageBlockRef",
    module = "clawctx._core.hygiene",
    frozen,
    get_all
)]
pub struct PyImageBlockRef {
    pub message_index: usize,
    pub block_index: usize,
    /// `toolResult`, `user` or `assistant`.
    pub role: String,
    /// The block's `data`, untrimmed.
    pub data: Py<PyString>,
    pub mime_type: String,
    /// `details.imageSanitization.maxDimensionPx` of a tool result, if a number.
    pub max_dimension_px: Option<f64>,
    /// `details.imageSanitization.maxBytes` of a tool result, if a number.
    pub max_bytes: Option<f64>,
}

#[pymethods]
impl PyImageBlockRef {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard(|| {
            Ok(format!(
                "ImageBlockRef(message_index={}, block_index={}, role={}, mime_type={}, data=<{} chars>, max_dimension_px={}, max_bytes={})",
                self.message_index,
                self.block_index,
                py_repr(py, &self.role)?,
                py_repr(py, &self.mime_type)?,
                self.data.bind(py).to_str().map_or(0, |s| s.chars().count()),
                py_repr(py, self.max_dimension_px)?,
                py_repr(py, self.max_bytes)?,
            ))
        })
    }
}

/// The image blocks (`type: "image"` with string `data` and `mimeType`) that
/// `sanitizeSessionMessagesImages` (images.ts) hands to image sanitization: in tool results,
/// user messages with array content, errored assistants and other assistants with array
/// content. Messages without an image block are skipped from their cached facts; the scan runs
/// without the GIL and builds Python objects for the found blocks only.
///
/// With `skip_within_limits=True`, blocks that `resizeImageBase64IfNeeded` (tool-images.ts) keeps
/// exactly as they are under the given limits (a tool result's overrides replace the first two) are
/// left out: plain base64 with nothing to trim, the inferred mime type equal to the block's, and a
/// PNG, GIF, JPEG or WebP header within `max_dimension_px` with a decoded size within `max_bytes`
/// (and an estimated size within `max_input_bytes`).
#[pyfunction]
#[pyo3(signature = (messages, *, skip_within_limits = false, max_dimension_px = 1200.0, max_bytes = 5_242_880.0, max_input_bytes = 67_108_864.0))]
pub fn find_image_blocks(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    skip_within_limits: bool,
    max_dimension_px: f64,
    max_bytes: f64,
    max_input_bytes: f64,
) -> PyResult<Vec<PyImageBlockRef>> {
    crate::errors::guard(|| {
        let input = transcript_arg(messages)?;
        let limits = skip_within_limits.then_some(hygiene::KeepLimits {
            max_dimension_px,
            max_bytes,
            max_input_bytes,
        });
        let transcript: &Transcript = &input;
        let found =
            py.detach(|| hygiene::find_image_blocks_to_sanitize(transcript, limits.as_ref()));
        found
            .into_iter()
            .map(|b| {
                Ok(PyImageBlockRef {
                    message_index: b.message_index,
                    block_index: b.block_index,
                    role: b.role.to_owned(),
                    data: PyString::new(py, &b.data).unbind(),
                    mime_type: b.mime_type.into_owned(),
                    max_dimension_px: b.max_dimension_px,
                    max_bytes: b.max_bytes,
                })
            })
            .collect()
    })
}

/// `(width, height, decoded_size)` read from the header of a PNG, GIF, JPEG or WebP image given
/// as plain base64 (alphabet characters, then at most two `=`), decoding only the header
/// bytes; `None` for anything else.
#[pyfunction]
pub fn probe_base64_image(py: Python<'_>, data: &str) -> PyResult<Option<(u32, u32, usize)>> {
    crate::errors::guard(|| {
        Ok({
            py.detach(|| hygiene::probe_base64_image(data))
                .map(|p| (p.width, p.height, p.decoded_len))
        })
    })
}

/// Decodes an image's base64 payload the way Node's `Buffer.from(data, "base64")` does
/// (URL-safe characters accepted, other characters outside the alphabet skipped, decoding
/// stops at the first `=`), without holding the GIL.
#[pyfunction]
pub fn decode_image_base64<'py>(py: Python<'py>, data: &str) -> PyResult<Bound<'py, PyBytes>> {
    crate::errors::guard(|| {
        Ok({
            let decoded = py.detach(|| hygiene::decode_base64_lenient(data));
            PyBytes::new(py, &decoded)
        })
    })
}

/// One `(message_index, block_index, block[, merge])` item.
fn replacement(item: &Bound<'_, PyAny>) -> PyResult<BlockReplacement> {
    let bad = || {
        PyTypeError::new_err(
            "each replacement must be a tuple (message_index, block_index, block) or (message_index, block_index, block, merge)",
        )
    };
    let tuple = item.cast::<PyTuple>().map_err(|_| bad())?;
    if !(3..=4).contains(&tuple.len()) {
        return Err(bad());
    }
    let message_index: usize = tuple.get_item(0)?.extract()?;
    let block_index: usize = tuple.get_item(1)?.extract()?;
    let block = from_py(&tuple.get_item(2)?)?;
    let merge = if tuple.len() == 4 {
        tuple.get_item(3)?.extract::<bool>()?
    } else {
        false
    };
    let edit = if merge {
        match block {
            Value::Object(fields) => BlockEdit::Merge(fields),
            _ => return Err(PyTypeError::new_err("a merged block must be a dict")),
        }
    } else {
        BlockEdit::Replace(block)
    };
    Ok(BlockReplacement {
        message_index,
        block_index,
        edit,
    })
}

/// A transcript with content blocks rewritten: each replacement
/// `(message_index, block_index, block)` sets `content[block_index]` to `block`;
/// `(message_index, block_index, fields, True)` sets those fields on the block object, keeping
/// its other fields (`{...block, ...fields}`). Unchanged messages keep their exact text; edited
/// ones are written like `JSON.stringify`. Returns the input `Transcript` itself when there is
/// nothing to replace. Bad indices raise `ValueError`.
#[pyfunction]
pub fn replace_content_blocks(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    replacements: &Bound<'_, PyAny>,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| {
        let input = transcript_arg(messages)?;
        let mut edits = Vec::new();
        for item in replacements.try_iter()? {
            edits.push(replacement(&item?)?);
        }
        let source = Arc::clone(&input);
        let replaced = py
            .detach(move || hygiene::replace_content_blocks(&source, edits))
            .py_err(py)?;
        crate::transcript_ops::result_object(py, messages, &input, replaced)
    })
}
