//! The core's error type. The binding crate maps each variant to a Python exception class.

use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file is not a usable session file (missing or invalid header, …).
    #[error("{}: line {line}: {reason}", path.display())]
    Format {
        path: PathBuf,
        line: usize,
        reason: String,
    },

    /// The advisory lock on a session file could not be taken in time.
    #[error("could not lock {} within {waited_ms} ms (another process holds it)", path.display())]
    Lock { path: PathBuf, waited_ms: u64 },

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
    #[error("repair failed for {}: {source}", path.display())]
    RepairFailed { path: PathBuf, source: io::Error },

    #[error("{}: {source}", path.display())]
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

pub type Result<T, E = Error> = std::result::Result<T, E>;
