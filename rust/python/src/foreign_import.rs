//! `read_transcript_bytes`/`read_transcript_file`: Claude Code, Codex and pi transcripts
//! as a `Transcript` of pi messages plus the file's facts, read with the GIL released.
//!
//! Claude Code and Codex are read by the core's `foreign` stage; pi files by the `session`
//! stage (`Session::from_values`), so all three formats come back in the same shape.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use clawctx_core::base::{Error, RandomIds};
use clawctx_core::foreign::{self, Format, ImportError, ImportedTranscript};
use clawctx_core::session::{LeafSelector, Session};
use pyo3::prelude::*;
use serde_json::{Map, Value};

use crate::errors::IntoPyResult;

fn format_arg(format: &str) -> Result<Option<Format>, Error> {
    if format == "auto" {
        return Ok(None);
    }
    Format::parse(format).map(Some).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "format must be \"auto\", \"pi\", \"claude-code\" or \"codex\", not {format:?}"
        ))
    })
}

fn import_error(e: ImportError, path: Option<&Path>) -> Error {
    match (e, path) {
        (e @ ImportError::UnknownFormat { .. }, Some(path)) => {
            Error::InvalidArgument(format!("{}: {e}", path.display()))
        }
        (e @ ImportError::UnknownFormat { .. }, None) => Error::InvalidArgument(e.to_string()),
        (e, _) => e.into(),
    }
}

/// Any of the three formats; pi sessions through the session stage.
fn import_any(
    bytes: &[u8],
    format: Option<Format>,
    path: Option<&Path>,
) -> Result<ImportedTranscript, Error> {
    let format = match format {
        Some(f) => f,
        None => foreign::detect_format(bytes).map_err(|e| import_error(e, path))?,
    };
    match format {
        Format::Pi => Ok(import_pi(bytes)),
        other => foreign::import_bytes(bytes, Some(other)).map_err(|e| import_error(e, path)),
    }
}

/// A pi session's context at its leaf (what `Session.open(path).messages` gives), read from
/// bytes without touching any file.
fn import_pi(bytes: &[u8]) -> ImportedTranscript {
    let mut out = ImportedTranscript {
        format: Format::Pi,
        ..ImportedTranscript::default()
    };
    let mut header: Option<Map<String, Value>> = None;
    let mut entries = Vec::new();
    let text = String::from_utf8_lossy(bytes);
    let mut lines = text.split('\n').peekable();
    while let Some(line) = lines.next() {
        if line.trim().is_empty() {
            continue;
        }
        out.lines += 1;
        match clawctx_core::base::parse_value(line.trim_end_matches('\r')) {
            Ok(Value::Object(object)) => {
                if header.is_none() && object.get("type").and_then(Value::as_str) == Some("session")
                {
                    header = Some(object);
                } else {
                    entries.push(Value::Object(object));
                }
            }
            _ => {
                out.damaged_lines += 1;
                out.torn_last_line = lines.peek().is_none();
            }
        }
    }
    let mut children: HashMap<&str, usize> = HashMap::new();
    let mut stamps: Vec<(i64, &str)> = Vec::new();
    for entry in &entries {
        if let Some(parent) = entry["parentId"].as_str() {
            *children.entry(parent).or_default() += 1;
        }
        if entry["type"] == "compaction" {
            out.compactions += 1;
        }
        if let Some(iso) = entry["timestamp"].as_str() {
            if let Some(ms) = clawctx_core::base::iso_to_ms(iso) {
                stamps.push((ms, iso));
            }
        }
    }
    out.branches = children.values().filter(|&&n| n > 1).count();
    out.first_timestamp = stamps.iter().min().map(|s| s.1.to_owned());
    out.last_timestamp = stamps.iter().max().map(|s| s.1.to_owned());
    let field = |k: &str| {
        header
            .as_ref()
            .and_then(|h| h.get(k))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    out.session_id = field("id");
    out.cwd = field("cwd");
    out.version = header
        .as_ref()
        .and_then(|h| h.get("version"))
        .map(|v| v.as_u64().map_or_else(|| v.to_string(), |n| n.to_string()));
    let session = Session::from_values(header, entries, &mut RandomIds);
    let leaf = session
        .leaf_index()
        .map_or(LeafSelector::Last, LeafSelector::Index);
    let context = session.context(leaf);
    out.model = context
        .model
        .as_ref()
        .and_then(|m| m["modelId"].as_str())
        .map(str::to_owned);
    out.messages = context.messages.into();
    out
}

/// The format of a transcript from its first records: `"pi"`, `"claude-code"` or `"codex"`.
/// Bytes without a single complete record are Claude Code's (the only tool that leaves
/// message-less files). Raises `ValueError` when no early record fits any format.
#[pyfunction]
pub fn detect_transcript_format_bytes(py: Python<'_>, data: &[u8]) -> PyResult<&'static str> {
    crate::errors::guard(|| {
        py.detach(|| foreign::detect_format(data))
            .map(Format::as_str)
            .map_err(|e| import_error(e, None))
            .py_err(py)
    })
}

/// Imports a transcript from its bytes; `format` is `"auto"` (detected), `"pi"`,
/// `"claude-code"` or `"codex"`.
#[pyfunction]
#[pyo3(signature = (data, *, format = "auto"))]
pub fn read_transcript_bytes(
    py: Python<'_>,
    data: &[u8],
    format: &str,
) -> PyResult<ImportedTranscript> {
    crate::errors::guard(|| {
        let format = format_arg(format).py_err(py)?;
        py.detach(|| import_any(data, format, None)).py_err(py)
    })
}

/// Imports the transcript file at `path` (read-only: the file is never written).
#[pyfunction]
#[pyo3(signature = (path, *, format = "auto"))]
pub fn read_transcript_file(
    py: Python<'_>,
    path: PathBuf,
    format: &str,
) -> PyResult<ImportedTranscript> {
    crate::errors::guard(|| {
        let format = format_arg(format).py_err(py)?;
        py.detach(|| {
            let bytes = foreign::read_transcript_file(&path).map_err(Error::from)?;
            import_any(&bytes, format, Some(&path))
        })
        .py_err(py)
    })
}
