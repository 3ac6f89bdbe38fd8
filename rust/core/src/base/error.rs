//! The core's error type. The binding crate maps each variant to a Python exception class.

use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file is not a usable session file (missing or invalid header, …).
    /// Line 0 is the file as a whole (empty, no JSON record): the message then names no line.
    #[error("{}: {}{reason}", path.display(), line_prefix(*line))]
    Format {
        path: PathBuf,
        line: usize,
        reason: String,
    },

    /// The advisory lock on a session file could not be taken in time.
    #[error("could not lock {} within {waited_ms} ms (another process holds it)", path.display())]
    Lock { path: PathBuf, waited_ms: u64 },

    /// The path names something other than a regular file (a FIFO, a device, a directory, a
    /// socket): refused before a byte is read or written, so nothing blocks and nothing is
    /// replaced.
    #[error("{}: not a session file: it is {kind}, not a regular file", path.display())]
    NotAFile { path: PathBuf, kind: &'static str },

    /// A file that must exist does not.
    #[error("no such session file: {}", path.display())]
    NotFound { path: PathBuf },

    /// A file that must not exist does.
    #[error("session file already exists and is not empty: {}", path.display())]
    AlreadyExists { path: PathBuf },

    /// The file changed on disk in a way that makes the requested write unsafe.
    #[error("{}: {reason}", path.display())]
    Conflict { path: PathBuf, reason: String },

    /// An entry id that does not exist in the session.
    #[error("Entry {0} not found")]
    EntryNotFound(String),

    /// A caller-supplied value that cannot be stored or used.
    #[error("{0}")]
    InvalidArgument(String),

    /// Rewriting a damaged session file failed; the original is untouched.
    #[error("repair failed for {}: {}", path.display(), Error::io_reason(source))]
    RepairFailed { path: PathBuf, source: io::Error },

    #[error("{}: {}", path.display(), Error::io_reason(source))]
    Io { path: PathBuf, source: io::Error },
}

impl Error {
    pub fn io(path: &Path, source: io::Error) -> Self {
        if source.kind() == io::ErrorKind::NotFound {
            Error::NotFound {
                path: path.to_path_buf(),
            }
        } else {
            Error::Io {
                path: path.to_path_buf(),
                source,
            }
        }
    }
}

impl Error {
    /// The reason an I/O error gives, without std's `" (os error N)"` suffix (the errno is
    /// carried separately where the caller needs it, e.g. Python's `OSError.errno`).
    pub fn io_reason(source: &io::Error) -> String {
        let text = source.to_string();
        match source.raw_os_error() {
            Some(code) => text
                .strip_suffix(&format!(" (os error {code})"))
                .map_or_else(|| text.clone(), str::to_owned),
            None => text,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `"line N: "` for a line of the file; nothing for line 0, the file as a whole.
fn line_prefix(line: usize) -> String {
    if line == 0 {
        String::new()
    } else {
        format!("line {line}: ")
    }
}
