//! Foreign transcripts in: the main thread of a Claude Code session file
//! (`~/.claude/projects/<project>/<session>.jsonl`) or an OpenAI Codex CLI rollout
//! (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) as pi AgentMessages (pi-mono 0.58.3
//! `packages/ai/src/types.ts`: `user`, `assistant`, `toolResult`; `text`, `toolCall`,
//! `thinking` and `image` blocks), with the facts a fleet scan reports.
//!
//! Reading only: the bytes are never written back. Lines that are not JSON objects (a torn
//! last line, damage in the middle) are counted and skipped. Pi's own files are recognised by
//! [`detect_format`] but read by the `session` stage, which comes after this one.
//!
//! Files: `records` (line splitting and the pi message builders both formats share), then
//! `detect`, `claude_code` and `codex`.

mod claude_code;
mod codex;
mod detect;
#[cfg(feature = "python")]
mod imported_py;
mod records;

use std::path::{Path, PathBuf};

use crate::transcript::SharedTranscript;

pub use detect::{detect_format, Format};

crate::base::python_class! {
    (name = "ImportedTranscript", module = "clawctx._core.foreign", get_all)
    /// A transcript imported from a file of any of the three formats, and the file's facts.
    // A foreign transcript read into pi messages (the binding also fills one from a pi session).
    // Its Python methods are in `imported_py.rs`.
    #[derive(Debug, Clone, Default)]
    pub struct ImportedTranscript {
        /// `"pi"`, `"claude-code"` or `"codex"`.
        pub format: Format,
        /// The main thread as pi messages, a `Transcript`.
        pub messages: SharedTranscript,
        /// Non-blank lines in the file.
        pub lines: usize,
        /// Non-blank lines that are not a JSON object (skipped), the torn last line included.
        pub damaged_lines: usize,
        /// Whether the last line has no newline and is not a JSON object (a write cut short).
        pub torn_last_line: bool,
        /// Claude Code sub-agent lines (`isSidechain: true`), not part of the main thread.
        pub dropped_sidechain_lines: usize,
        /// Claude Code main-thread lines not on the path from the leaf: abandoned branches
        /// (rewinds, edits) and what a compaction boundary cut off.
        pub off_path_lines: usize,
        /// Compactions the file records (Claude `compact_boundary`/summary lines, Codex
        /// `compacted` lines).
        pub compactions: usize,
        /// Claude Code entries with more than one child (a rewind or an edit started a branch).
        pub branches: usize,
        /// The last model that answered (Claude `message.model`, Codex `turn_context.model`).
        pub model: Option<String>,
        /// The first line's timestamp, as the file writes it.
        pub first_timestamp: Option<String>,
        /// The last line's timestamp, as the file writes it.
        pub last_timestamp: Option<String>,
        /// The session id the file records.
        pub session_id: Option<String>,
        /// The working directory the file records.
        pub cwd: Option<String>,
        /// The writing tool's version (Claude `version`, Codex `cli_version`).
        pub version: Option<String>,
    }
}

/// Why a transcript could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// No record in the first lines looks like any of the three formats.
    #[error("not a Claude Code, Codex or pi transcript: {reason}")]
    UnknownFormat { reason: String },
    /// A pi session was given to the foreign importer (the `session` stage reads those).
    #[error("a pi session file: open it as a session")]
    PiSession,
    #[error("{}: {}", path.display(), crate::base::Error::io_reason(source))]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The path is a directory, FIFO, device or socket: refused before reading.
    #[error("{}: not a transcript file: it is {kind}, not a regular file", path.display())]
    NotAFile { path: PathBuf, kind: &'static str },
}

impl From<ImportError> for crate::base::Error {
    fn from(e: ImportError) -> Self {
        match e {
            ImportError::Io { path, source } => crate::base::Error::io(&path, source),
            ImportError::NotAFile { path, kind } => crate::base::Error::NotAFile { path, kind },
            other => crate::base::Error::InvalidArgument(other.to_string()),
        }
    }
}

/// Imports the bytes of a Claude Code or Codex transcript; `format` `None` detects it.
pub fn import_bytes(
    bytes: &[u8],
    format: Option<Format>,
) -> Result<ImportedTranscript, ImportError> {
    let format = match format {
        Some(f) => f,
        None => detect_format(bytes)?,
    };
    match format {
        Format::ClaudeCode => Ok(claude_code::import(bytes)),
        Format::Codex => Ok(codex::import(bytes)),
        Format::Pi => Err(ImportError::PiSession),
    }
}

/// Reads a whole transcript file (read-only; only regular files are read, so a FIFO never
/// blocks the caller).
pub fn read_transcript_file(path: &Path) -> Result<Vec<u8>, ImportError> {
    let io = |source| ImportError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    let kind = meta.file_type();
    if !kind.is_file() {
        let kind = if kind.is_dir() {
            "a directory"
        } else {
            "not a regular file"
        };
        return Err(ImportError::NotAFile {
            path: path.to_path_buf(),
            kind,
        });
    }
    std::fs::read(path).map_err(io)
}

/// [`import_bytes`] of the file at `path`.
pub fn import_file(path: &Path, format: Option<Format>) -> Result<ImportedTranscript, ImportError> {
    import_bytes(&read_transcript_file(path)?, format)
}
