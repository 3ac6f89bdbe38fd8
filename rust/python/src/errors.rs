//! Python exception classes and the mapping from core errors to them.

use clawctx_core::Error;
use pyo3::create_exception;
use pyo3::exceptions::{
    PyException, PyFileExistsError, PyFileNotFoundError, PyKeyError, PyOSError, PyValueError,
};
use pyo3::prelude::*;

create_exception!(
    clawctx._core,
    ClawctxError,
    PyException,
    "Base class of every clawctx error."
);
create_exception!(
    clawctx._core,
    SessionFormatError,
    ClawctxError,
    "The file is not a usable session file. Attributes: path, line (1-based; 0 when the file has no record), reason."
);
create_exception!(
    clawctx._core,
    NotASessionFileError,
    SessionFormatError,
    "The path names a FIFO, device, directory or socket, not a regular file; refused before anything is read or written (nothing blocks, nothing is replaced). Attributes as SessionFormatError (line is 0)."
);
create_exception!(
    clawctx._core,
    SessionLockError,
    ClawctxError,
    "The advisory lock on a session file could not be taken in time (another process holds it)."
);
create_exception!(
    clawctx._core,
    RepairError,
    ClawctxError,
    "Rewriting a damaged session file failed; the original file is untouched."
);

create_exception!(
    clawctx._core,
    InternalError,
    ClawctxError,
    "A bug in clawctx: a native call failed in a way it never should (a Rust panic). The message holds the panic's text; please report it."
);

/// What the panic hook recorded about the last panic on this thread.
struct PanicRecord {
    /// `file:line:column` of the `panic!`.
    location: String,
    /// The stack at the panic, rendered.
    backtrace: String,
}

thread_local! {
    static LAST_PANIC: std::cell::RefCell<Option<PanicRecord>> = const { std::cell::RefCell::new(None) };
}

/// Replaces the default panic hook (which prints the message and, with `RUST_BACKTRACE`, a
/// backtrace to stderr) with one that records them for [`guard`]: a caught panic reaches the
/// caller as an `InternalError` that carries the text, the location and the backtrace, and
/// nothing is written to the host's stderr (issue 33, "Coverage"). The hook is process-wide
/// for this library's copy of the Rust runtime only; installed once, at module import.
pub fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let location = info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
                .unwrap_or_default();
            // Panics are bugs and rare: the backtrace is always taken (not only with
            // `RUST_BACKTRACE`), so a report has it.
            let backtrace = std::backtrace::Backtrace::force_capture().to_string();
            // `try_with`: a panic while the thread-local is being torn down records nothing.
            let _ = LAST_PANIC.try_with(|slot| {
                if let Ok(mut slot) = slot.try_borrow_mut() {
                    *slot = Some(PanicRecord {
                        location,
                        backtrace,
                    });
                }
            });
        }));
    });
}

/// Runs the body of a binding, turning a panic into `InternalError`.
///
/// PyO3 raises a panic as `PanicException`, a `BaseException` that `except Exception` does not
/// catch, so every `#[pyfunction]` and `#[pymethods]` body runs inside this as a last resort.
/// The release profile must keep `panic = "unwind"` (the default) for this to see the panic.
/// The exception's `location` and `backtrace` attributes hold what [`install_panic_hook`]
/// recorded (`None` when the panic happened on another thread, e.g. a worker of a parallel
/// scan whose panic was carried over).
pub fn guard<T>(body: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        // A failed allocation while counting tokens travels as this payload (the counters
        // are infallible functions): it is the caller's `MemoryError`, not a bug.
        if let Some(oom) = payload.downcast_ref::<clawctx_core::token_count::OutOfMemory>() {
            return Err(pyo3::exceptions::PyMemoryError::new_err(oom.to_string()));
        }
        let text = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".to_owned());
        let record = LAST_PANIC
            .try_with(|slot| slot.try_borrow_mut().ok().and_then(|mut s| s.take()))
            .ok()
            .flatten();
        let at = record
            .as_ref()
            .map(|r| format!(" (at {})", r.location))
            .unwrap_or_default();
        let err = InternalError::new_err(format!(
            "internal error in clawctx (a bug, please report it): {text}{at}"
        ));
        Python::attach(|py| {
            let value = err.value(py);
            let (location, backtrace) = match record {
                Some(r) => (Some(r.location), Some(r.backtrace)),
                None => (None, None),
            };
            let _ = value.setattr("location", location);
            let _ = value.setattr("backtrace", backtrace);
        });
        Err(err)
    })
}

/// Panics with `message`: the only way to check from Python that a panic reaches the caller
/// as `InternalError` (nothing else in the API is meant to panic).
#[pyfunction]
pub fn _panic_for_tests(message: String) -> PyResult<()> {
    guard(|| panic!("{message}"))
}

/// Converts a core error into the matching Python exception.
pub fn to_py(py: Python<'_>, err: Error) -> PyErr {
    let message = err.to_string();
    match err {
        Error::Format { path, line, reason } => {
            let e = SessionFormatError::new_err(message);
            let value = e.value(py);
            let _ = value.setattr("path", path.to_string_lossy().into_owned());
            let _ = value.setattr("line", line);
            let _ = value.setattr("reason", reason);
            e
        }
        Error::NotAFile { path, kind } => {
            let e = NotASessionFileError::new_err(message);
            let value = e.value(py);
            let _ = value.setattr("path", path.to_string_lossy().into_owned());
            let _ = value.setattr("line", 0);
            let _ = value.setattr("reason", format!("it is {kind}, not a regular file"));
            e
        }
        Error::Lock { .. } => SessionLockError::new_err(message),
        Error::NotFound { path } => PyFileNotFoundError::new_err((
            2,
            "no such session file",
            path.to_string_lossy().into_owned(),
        )),
        Error::AlreadyExists { path } => PyFileExistsError::new_err((
            17,
            "session file already exists and is not empty",
            path.to_string_lossy().into_owned(),
        )),
        Error::Conflict { .. } => ClawctxError::new_err(message),
        Error::EntryNotFound(_) => PyKeyError::new_err(message),
        Error::InvalidArgument(_) => PyValueError::new_err(message),
        Error::RepairFailed { .. } => RepairError::new_err(message),
        // With an errno, Python renders `[Errno N] <reason>: '<path>'` itself: pass the reason
        // alone so the path is named once.
        Error::Io { source, path } => match source.raw_os_error() {
            Some(code) => PyOSError::new_err((
                code,
                Error::io_reason(&source),
                path.to_string_lossy().into_owned(),
            )),
            None => PyOSError::new_err(message),
        },
    }
}

/// `Result` mapping for use with `?`.
pub trait IntoPyResult<T> {
    fn py_err(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for Result<T, Error> {
    fn py_err(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, e))
    }
}
