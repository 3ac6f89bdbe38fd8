//! `Session`, `SessionContext` and `SkippedLine`.

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::Duration;

use clawctx_core::base::{random_session_id, DrawnIds, IdSource, RandomIds};
use clawctx_core::session::{
    Entry, InvalidHeader, NewEntry, OpenOptions, RefreshReport, Session, SkippedLine, WriteOptions,
};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::Value;

use crate::convert::{from_py, json_text_to_py, py_repr, to_py, Clock, PyIdSource};
use crate::errors::IntoPyResult;
use crate::transcript::PyTranscript;

/// The context built for a leaf (`buildSessionContext`, pi-mono 0.58.3
/// `packages/coding-agent/src/core/session-manager.ts`).
// Kept as a mirror: the core's `SessionContext` is the context builder's working value (extended
// by `leaf_context`, compared whole by the Rust tests) and holds `thinking_level` and `model` as
// JSON values; Python sees them as objects made once by `convert::to_py`, and conversion between
// JSON values and Python objects lives in the binding only (`convert.rs`).
#[pyclass(
    name = "SessionContext",
    module = "clawctx._core.session",
    frozen,
    get_all
)]
pub struct PySessionContext {
    /// The messages on the path, as a `Transcript`.
    pub messages: Py<PyTranscript>,
    /// `"off"` unless a thinking_level_change on the path says otherwise.
    pub thinking_level: Py<PyAny>,
    /// `{"provider": ..., "modelId": ...}` or `None`.
    pub model: Py<PyAny>,
}

impl PySessionContext {
    pub fn from_core(py: Python<'_>, context: clawctx_core::SessionContext) -> PyResult<Self> {
        Ok(PySessionContext {
            messages: Py::new(py, PyTranscript::new(context.messages))?,
            thinking_level: to_py(py, &context.thinking_level)?,
            model: match &context.model {
                Some(m) => to_py(py, m)?,
                None => py.None(),
            },
        })
    }
}

#[pymethods]
impl PySessionContext {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard(|| {
            Ok({
                format!(
                    "SessionContext(messages={}, thinking_level={}, model={})",
                    self.messages.get().inner.len(),
                    self.thinking_level
                        .bind(py)
                        .repr()
                        .map(|r| r.to_string())
                        .unwrap_or_default(),
                    self.model
                        .bind(py)
                        .repr()
                        .map(|r| r.to_string())
                        .unwrap_or_default()
                )
            })
        })
    }
}

/// A `lock_timeout` argument in seconds as a duration: `ValueError` for NaN, an infinity or a
/// negative number; a finite number too large for a `Duration` (above about 5.8e11 years, where
/// `Duration::from_secs_f64` panics) is clamped to the largest one, which waits as long as any
/// timeout could. The lock loop only compares the elapsed time with it, so no sum overflows.
pub fn lock_timeout_duration(seconds: f64) -> PyResult<Duration> {
    if !(seconds.is_finite() && seconds >= 0.0) {
        return Err(PyValueError::new_err(
            "lock_timeout must be a non-negative number of seconds",
        ));
    }
    Ok(Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX))
}

fn write_options(fsync: bool, lock_timeout: f64) -> PyResult<WriteOptions> {
    Ok(WriteOptions {
        fsync,
        lock_timeout: lock_timeout_duration(lock_timeout)?,
    })
}

/// A pi/OpenClaw session: header, entries, tree and leaf, bound to its JSONL file.
///
/// Subclassable: `clawctx.Session` (`clawctx/history/session.py`) extends it with the parts
/// that are Python compositions (`compact`), so the native module never imports the package.
///
/// Safe to share between threads: every call takes an internal lock for its whole duration,
/// so a read sees the state before or after a concurrent append, never a half-made one. The
/// lock is only ever waited for with the GIL released (see [`PySession::lock`]): its holder
/// may need the GIL (building dicts) to finish. The `now_ms` and `id_factory` callbacks are
/// never called with the lock held (issue 33, N5): ids and times are drawn first, so a
/// callback may take application locks or read any session, its own included.
#[pyclass(subclass, frozen, name = "Session", module = "clawctx._core.session")]
pub struct PySession {
    state: Mutex<State>,
    /// [`thread_token`] of the thread holding `state`, 0 when none: a callback that calls
    /// back into the session it was called from would otherwise wait for itself forever.
    owner: AtomicUsize,
}

/// Everything behind the [`PySession`] lock.
pub(crate) struct State {
    inner: Session,
    clock: Clock,
    id_factory: Option<Py<PyAny>>,
    /// The `cwd` given to `open`: the session's `cwd` when the header has none.
    fallback_cwd: Option<String>,
}

/// The held [`PySession`] lock; clears the owner before the lock is released.
pub(crate) struct StateGuard<'a> {
    state: MutexGuard<'a, State>,
    owner: &'a AtomicUsize,
}

impl Drop for StateGuard<'_> {
    fn drop(&mut self) {
        self.owner.store(0, Ordering::Release);
    }
}

impl std::ops::Deref for StateGuard<'_> {
    type Target = State;
    fn deref(&self) -> &State {
        &self.state
    }
}

impl std::ops::DerefMut for StateGuard<'_> {
    fn deref_mut(&mut self) -> &mut State {
        &mut self.state
    }
}

thread_local! {
    static TOKEN: u8 = const { 0 };
}

/// A non-zero number unique among the threads alive now (the address of a thread-local).
fn thread_token() -> usize {
    TOKEN.with(|t| std::ptr::from_ref(t) as usize)
}

impl State {
    fn new(inner: Session, clock: Clock, id_factory: Option<&Bound<'_, PyAny>>) -> Self {
        let id_factory = id_factory
            .filter(|f| !f.is_none())
            .map(|f| f.clone().unbind());
        State {
            inner,
            clock,
            id_factory,
            fallback_cwd: None,
        }
    }

    /// The core session, for the other binding modules (read-only).
    pub(crate) fn core(&self) -> &Session {
        &self.inner
    }

    fn entry_dict(&self, py: Python<'_>, entry: &Entry) -> PyResult<Py<PyAny>> {
        json_text_to_py(py, entry.text.as_str())
    }

    fn entry_list<'py>(
        &self,
        py: Python<'py>,
        indices: impl IntoIterator<Item = usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let entries = self.inner.stored_entries();
        let items: PyResult<Vec<Py<PyAny>>> = indices
            .into_iter()
            .map(|i| self.entry_dict(py, &entries[i]))
            .collect();
        PyList::new(py, items?)
    }

    /// Copies of the clock and the id factory, to call with the session lock released.
    fn callbacks(&self, py: Python<'_>) -> (Clock, Option<Py<PyAny>>) {
        (
            self.clock.clone_ref(py),
            self.id_factory.as_ref().map(|f| f.clone_ref(py)),
        )
    }
}

impl PySession {
    /// Appends `entry` under a new id and returns the id.
    ///
    /// The `now_ms` clock and the `id_factory` are user code: they run before the session lock
    /// is taken, never while it is held (issue 33, N5). A callback that waits for an
    /// application lock held by a thread reading this session, or that reads another session
    /// whose own callback reads this one, would otherwise block both threads for good. See
    /// [`PySession::lock_with_free_ids`] for how the id is drawn.
    fn append_entry(&self, py: Python<'_>, entry: NewEntry) -> PyResult<String> {
        let (clock, factory) = self.lock_cold(py)?.callbacks(py);
        let now = clock.now_ms(py)?;
        let (mut state, ids) = self.lock_with_free_ids(py, factory.as_ref(), 1)?;
        let Some(id) = ids.into_iter().next() else {
            return Err(crate::errors::InternalError::new_err(
                "no id was drawn for the new entry",
            ));
        };
        let inner = &mut state.inner;
        // File lock and write (possibly an fsync) without the GIL.
        py.detach(move || inner.append_with_id(entry, id, now))
            .py_err(py)
    }

    /// The session lock, held, and `count` ids that are free under it for new entries.
    ///
    /// With an `id_factory`, the ids are drawn from it with the lock released (issue 33, N5),
    /// then checked under the lock: an id that is empty, already an entry's, in the unread
    /// part of a lazy session's file or drawn twice is drawn again with the lock released, up
    /// to [`ID_ROUNDS`] times (as `generate_entry_id` draws up to 100 times); after that a
    /// random free id stands in. Without a factory the ids are random ones, drawn under the
    /// lock (no user code).
    fn lock_with_free_ids(
        &self,
        py: Python<'_>,
        factory: Option<&Py<PyAny>>,
        count: usize,
    ) -> PyResult<(StateGuard<'_>, Vec<String>)> {
        let mut slots: Vec<Option<String>> = vec![None; count];
        if let Some(factory) = factory {
            for _ in 0..ID_ROUNDS {
                let missing = slots.iter().filter(|slot| slot.is_none()).count();
                let mut drawn = draw_ids(py, factory, missing)?.into_iter();
                for slot in slots.iter_mut().filter(|slot| slot.is_none()) {
                    *slot = drawn.next();
                }
                let mut state = self.lock_cold(py)?;
                let inner = &mut state.inner;
                let slots_ref = &mut slots;
                // The cold check of the unread part of the file reads it: without the GIL.
                let full = py
                    .detach(move || settle_ids(inner, slots_ref, false))
                    .py_err(py)?;
                if full {
                    return Ok((state, slots.into_iter().flatten().collect()));
                }
            }
        }
        let mut state = self.lock_cold(py)?;
        let inner = &mut state.inner;
        let slots_ref = &mut slots;
        py.detach(move || settle_ids(inner, slots_ref, true))
            .py_err(py)?;
        Ok((state, slots.into_iter().flatten().collect()))
    }

    /// `refresh()` with ids from a Python `id_factory`, which is called with the session lock
    /// released (issue 33, N5). Only a full reload of a file that needs migration takes ids,
    /// and how many is known only once the file is read. So each try runs under the lock with
    /// the ids drawn so far ([`DrawnIds`], no user code, without the GIL); a try that ran
    /// short changes nothing, and the missing ids are drawn with the lock released before the
    /// next try. A first try that needs no ids (no reload, or no migration) is the only one.
    /// The last of [`REFRESH_ROUNDS`] tries keeps random ids for any still missing.
    fn refresh_with_factory(
        &self,
        py: Python<'_>,
        factory: &Py<PyAny>,
        now: i64,
    ) -> PyResult<RefreshReport> {
        let mut drawn: Vec<String> = Vec::new();
        for round in 1..REFRESH_ROUNDS {
            let mut ids = DrawnIds::new(drawn.iter().cloned());
            let mut state = self.lock_cold(py)?;
            let inner = &mut state.inner;
            let (result, ids) = py.detach(move || {
                let result = inner.try_refresh(&mut ids, now);
                (result, ids)
            });
            if let Some(report) = result.py_err(py)? {
                return Ok(report);
            }
            drop(state);
            // Exactly the shortfall after the first try (the usual case: every id drawn is
            // free, and the factory is called once per id needed); at least doubling after
            // that, so that a factory that keeps repeating taken ids needs few tries.
            let more = if round == 1 {
                ids.shortfall()
            } else {
                ids.shortfall().max(drawn.len())
            };
            drawn.extend(draw_ids(py, factory, more)?);
        }
        let mut ids = DrawnIds::new(drawn).or_random();
        let mut state = self.lock_cold(py)?;
        let inner = &mut state.inner;
        py.detach(move || inner.refresh(&mut ids, now)).py_err(py)
    }

    fn from_state(state: State) -> Self {
        PySession {
            state: Mutex::new(state),
            owner: AtomicUsize::new(0),
        }
    }

    /// Takes the lock ([`PySession::lock_cold`]) and, when the session was opened cold
    /// (`Session.open(..., lazy=True)`), loads the file in full first: every caller that
    /// reads entries, the index or the tree gets the whole session.
    pub(crate) fn lock(&self, py: Python<'_>) -> PyResult<StateGuard<'_>> {
        let mut state = self.lock_cold(py)?;
        if state.inner.is_cold() {
            let inner = &mut state.inner;
            py.detach(|| inner.load_past()).py_err(py)?;
        }
        Ok(state)
    }

    /// Takes the lock. It is tried with the GIL held, and when another thread has it, waited
    /// for with the GIL released, then tried again: no thread ever blocks on the lock while
    /// holding the GIL, so a holder that needs the GIL always gets it (no deadlock). A cold
    /// session stays cold: for the methods that need only the end of the file.
    fn lock_cold(&self, py: Python<'_>) -> PyResult<StateGuard<'_>> {
        let me = thread_token();
        if self.owner.load(Ordering::Acquire) == me {
            return Err(PyRuntimeError::new_err(
                "Session is already in use by this thread: code run while one of its calls \
                 held the session's lock (a finalizer, say) called back into it",
            ));
        }
        loop {
            match self.state.try_lock() {
                Ok(state) => {
                    self.owner.store(me, Ordering::Release);
                    return Ok(StateGuard {
                        state,
                        owner: &self.owner,
                    });
                }
                Err(TryLockError::Poisoned(_)) => {
                    return Err(crate::errors::InternalError::new_err(
                        "an earlier call on this Session panicked (a bug in clawctx); its \
                         in-memory state may be inconsistent: open the file again",
                    ))
                }
                Err(TryLockError::WouldBlock) => py.detach(|| {
                    // Only waits for the holder; the lock is taken above, with the GIL.
                    drop(self.state.lock());
                }),
            }
        }
    }
}

/// An instance of `cls` (`Session` or a Python subclass such as `clawctx.Session`) holding
/// `state`. PyO3 0.29 can allocate only the base type from a Rust value, so for a subclass
/// `cls()` allocates the object (through `#[new]`, an empty in-memory session; a subclass
/// `__init__` must accept no arguments) and the built state is moved into it.
fn instance_of<'py>(
    cls: &Bound<'py, pyo3::types::PyType>,
    state: State,
) -> PyResult<Bound<'py, PyAny>> {
    let py = cls.py();
    if cls.is(py.get_type::<PySession>()) {
        return Ok(Bound::new(py, PySession::from_state(state))?.into_any());
    }
    let object = cls.call0()?;
    *object.cast::<PySession>()?.get().lock(py)? = state;
    Ok(object)
}

#[pymethods]
impl PySession {
    /// Opens a session file (`SessionManager.open`): damaged lines are salvaged or skipped (see
    /// `skipped_lines`), the header is checked, v1/v2 files are migrated to v3 in memory (the
    /// file is rewritten only with `rewrite_migrated=True` or `save_migrated()`).
    ///
    /// Raises `FileNotFoundError` for a missing file and `SessionFormatError` for a file with
    /// content but no valid header, unless `on_invalid_header="reset"`, which backs the file up
    /// and starts a fresh session in it as pi does. An empty file gets a new header, except with
    /// `read_only=True`, which never writes (an empty file is then a `SessionFormatError` and
    /// appends raise `ValueError`). `session_id` and `cwd` are used for a session started
    /// fresh (empty file or reset): by default a random UUID and the process's directory;
    /// `cwd` is also the session's `cwd` when the header has none.
    ///
    /// Runs without the GIL; files of 4 MB and more are read, validated and parsed on all
    /// cores (rayon's pool; `RAYON_NUM_THREADS=1` keeps it to one).
    ///
    /// `lazy=True` reads the file from its end only as far as the last entry's messages reach,
    /// and loads the rest when something asks for it (see `clawctx.Session` for what does).
    #[classmethod]
    #[pyo3(signature = (path, *, on_invalid_header = "error", rewrite_migrated = false, read_only = false, fsync = true, lock_timeout = 10.0, now_ms = None, id_factory = None, session_id = None, cwd = None, lazy = false))]
    #[allow(clippy::too_many_arguments)]
    fn open<'py>(
        cls: &Bound<'py, pyo3::types::PyType>,
        py: Python<'py>,
        path: PathBuf,
        on_invalid_header: &str,
        rewrite_migrated: bool,
        read_only: bool,
        fsync: bool,
        lock_timeout: f64,
        now_ms: Option<&Bound<'_, PyAny>>,
        id_factory: Option<&Bound<'_, PyAny>>,
        session_id: Option<String>,
        cwd: Option<String>,
        lazy: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::errors::guard(|| {
            let open = if lazy {
                Session::open_cold
            } else {
                Session::open
            };
            let on_invalid_header = match on_invalid_header {
                "error" => InvalidHeader::Error,
                "reset" => InvalidHeader::Reset,
                other => {
                    return Err(PyValueError::new_err(format!(
                        "on_invalid_header must be \"error\" or \"reset\", not {other:?}"
                    )))
                }
            };
            let options = OpenOptions {
                on_invalid_header,
                write: write_options(fsync, lock_timeout)?,
                rewrite_migrated,
                read_only,
                fresh_session_id: session_id,
                fresh_cwd: cwd.clone(),
            };
            let clock = Clock::from_arg(now_ms)?;
            let now = clock.now_ms(py)?;
            let inner = open_with_ids(py, id_factory, |ids| open(&path, &options, ids, now))?;
            let mut state = State::new(inner, clock, id_factory);
            state.fallback_cwd = cwd;
            instance_of(cls, state)
        })
    }

    /// A read-only session parsed from `lines` (a list of `bytes`, one JSONL line each
    /// without its `"\n"`) held in memory instead of read from a file, as `open(...,
    /// read_only=True)` parses a file of those lines: the lines are copied once into the
    /// buffer the entries borrow, with the GIL released. `name` labels errors; `path` is
    /// `None`. `refresh()` reads the lines handed over by `_push_lines` since, as a file
    /// session reads appended bytes (same `RefreshReport`). For OpenClaw stores
    /// (`clawctx.history.store.StoreSession`).
    #[classmethod]
    #[pyo3(signature = (lines, name, *, now_ms = None, id_factory = None))]
    fn _from_lines<'py>(
        cls: &Bound<'py, pyo3::types::PyType>,
        py: Python<'py>,
        lines: &Bound<'py, PyList>,
        name: PathBuf,
        now_ms: Option<&Bound<'_, PyAny>>,
        id_factory: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::errors::guard(|| {
            let bytes = crate::session_memory::join_line_list(py, lines)?;
            let clock = Clock::from_arg(now_ms)?;
            let now = clock.now_ms(py)?;
            let inner = open_with_ids(py, id_factory, |ids| {
                Session::from_memory(bytes, &name, ids, now)
            })?;
            instance_of(cls, State::new(inner, clock, id_factory))
        })
    }

    /// Hands `lines` (a list of `bytes`, one line each without its `"\n"`) to a session made
    /// by `_from_lines`; the next `refresh()` reads them. `ValueError` for any other session.
    fn _push_lines(&self, py: Python<'_>, lines: &Bound<'_, PyList>) -> PyResult<()> {
        crate::errors::guard(|| {
            let bytes = crate::session_memory::join_line_list(py, lines)?;
            let mut s = self.lock_cold(py)?;
            s.inner.push_memory(bytes).py_err(py)
        })
    }

    /// Creates a new session file with a v3 header (written immediately). Fails with
    /// `FileExistsError` if the file exists and is not empty.
    #[classmethod]
    #[pyo3(signature = (path, *, cwd, session_id = None, parent_session = None, fsync = true, lock_timeout = 10.0, now_ms = None, id_factory = None))]
    #[allow(clippy::too_many_arguments)]
    fn create<'py>(
        cls: &Bound<'py, pyo3::types::PyType>,
        py: Python<'py>,
        path: PathBuf,
        cwd: String,
        session_id: Option<String>,
        parent_session: Option<String>,
        fsync: bool,
        lock_timeout: f64,
        now_ms: Option<&Bound<'_, PyAny>>,
        id_factory: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::errors::guard(|| {
            let clock = Clock::from_arg(now_ms)?;
            let now = clock.now_ms(py)?;
            let write = write_options(fsync, lock_timeout)?;
            let inner = py
                .detach(|| {
                    Session::create(
                        &path,
                        &cwd,
                        session_id.as_deref(),
                        parent_session.as_deref(),
                        now,
                        write,
                    )
                })
                .py_err(py)?;
            instance_of(cls, State::new(inner, clock, id_factory))
        })
    }

    /// A session that lives only in memory (appends write nothing).
    #[classmethod]
    #[pyo3(signature = (*, cwd = None, session_id = None, now_ms = None, id_factory = None))]
    fn in_memory<'py>(
        cls: &Bound<'py, pyo3::types::PyType>,
        py: Python<'py>,
        cwd: Option<String>,
        session_id: Option<String>,
        now_ms: Option<&Bound<'_, PyAny>>,
        id_factory: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::errors::guard(|| {
            let state = in_memory_state(py, cwd, session_id, now_ms, id_factory)?;
            instance_of(cls, state)
        })
    }

    /// `Session()` is `Session.in_memory()`: an empty session that lives only in memory. It
    /// exists so that `open`, `create` and `in_memory` can return instances of a subclass
    /// (see [`instance_of`]).
    #[new]
    #[pyo3(signature = (*, cwd = None, session_id = None, now_ms = None, id_factory = None))]
    fn py_new(
        py: Python<'_>,
        cwd: Option<String>,
        session_id: Option<String>,
        now_ms: Option<&Bound<'_, PyAny>>,
        id_factory: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        crate::errors::guard(|| {
            in_memory_state(py, cwd, session_id, now_ms, id_factory).map(PySession::from_state)
        })
    }

    /// The file this session reads and appends to (`None` for in-memory sessions).
    #[getter]
    fn path(&self, py: Python<'_>) -> PyResult<Option<PathBuf>> {
        crate::errors::guard(|| Ok(self.lock_cold(py)?.inner.path().map(PathBuf::from)))
    }

    /// The header as a dict (after in-memory migration; unknown fields kept).
    #[getter]
    fn header(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| {
            let fields = self.lock_cold(py)?.inner.header().fields.clone();
            to_py(py, &Value::Object(fields))
        })
    }

    /// The session's working directory, as pi-mono 0.58.3 `session-manager.ts` (`getCwd`)
    /// gives it: the header's `cwd` unless it is missing or null, else the `cwd` given to
    /// `open`, else the process's working directory.
    #[getter]
    fn cwd(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| {
            let s = self.lock_cold(py)?;
            match s.inner.header().fields.get("cwd") {
                Some(value) if !value.is_null() => to_py(py, value),
                _ => {
                    let fallback = match &s.fallback_cwd {
                        Some(cwd) => cwd.clone(),
                        None => std::env::current_dir()
                            .map(|d| d.to_string_lossy().into_owned())
                            .unwrap_or_default(),
                    };
                    to_py(py, &Value::from(fallback))
                }
            }
        })
    }

    /// The header's version in memory (3 after migration).
    #[getter]
    fn version(&self, py: Python<'_>) -> PyResult<u64> {
        crate::errors::guard(|| Ok(self.lock_cold(py)?.inner.header().version()))
    }

    /// The version the file has on disk (1 when the header has none).
    #[getter]
    fn file_version(&self, py: Python<'_>) -> PyResult<u64> {
        crate::errors::guard(|| Ok(self.lock_cold(py)?.inner.file_version()))
    }

    /// True when the file is an older version migrated in memory and not yet saved.
    #[getter]
    fn needs_migration(&self, py: Python<'_>) -> PyResult<bool> {
        crate::errors::guard(|| Ok(self.lock_cold(py)?.inner.needs_migration_rewrite()))
    }

    /// The header's `id` (the session id), or `None` when the header has none.
    #[getter]
    fn session_id(&self, py: Python<'_>) -> PyResult<Option<String>> {
        crate::errors::guard(|| Ok(self.lock_cold(py)?.inner.session_id().map(str::to_owned)))
    }

    /// The current leaf's id (the last entry in file order after opening).
    #[getter]
    fn leaf_id(&self, py: Python<'_>) -> PyResult<Option<String>> {
        crate::errors::guard(|| Ok(self.lock_cold(py)?.inner.leaf_id().map(str::to_owned)))
    }

    /// The session name from the latest `session_info` entry with a name.
    #[getter]
    fn name(&self, py: Python<'_>) -> PyResult<Option<String>> {
        crate::errors::guard(|| Ok(self.lock(py)?.inner.session_name()))
    }

    /// Resolved labels: `{target_id: label}`.
    #[getter]
    fn labels(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| {
            let labels = self.lock(py)?.inner.labels().clone();
            to_py(py, &Value::Object(labels))
        })
    }

    /// Lines the loader could not take as they were.
    #[getter]
    fn skipped_lines(&self, py: Python<'_>) -> PyResult<Vec<SkippedLine>> {
        crate::errors::guard(|| Ok(self.lock(py)?.inner.skipped_lines().to_vec()))
    }

    /// The backup written by a reset or `save_migrated()`, if any.
    #[getter]
    fn backup_path(&self, py: Python<'_>) -> PyResult<Option<PathBuf>> {
        crate::errors::guard(|| Ok(self.lock_cold(py)?.inner.backup_path().map(PathBuf::from)))
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        crate::errors::guard(|| Ok(self.lock(py)?.inner.record_count()))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard(|| {
            let s = self.lock(py)?;
            let path = s.inner.path().map(|p| p.display().to_string());
            Ok(format!(
                "Session(path={}, entries={}, leaf={})",
                py_repr(py, path)?,
                s.inner.record_count(),
                py_repr(py, s.inner.leaf_id())?,
            ))
        })
    }

    /// Every entry (header excluded) as dicts, in file order.
    fn entries<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard(|| {
            let s = self.lock(py)?;
            let records = s.inner.records();
            let items: PyResult<Vec<Py<PyAny>>> =
                records.iter().map(|e| s.entry_dict(py, e)).collect();
            PyList::new(py, items?)
        })
    }

    /// The newest `custom` entry whose `customType` is one of `custom_types` (and, with
    /// `numeric_data_key`, whose `data[numeric_data_key]` is a number), as a dict or `None`.
    /// Scans from the end without building other entries.
    #[pyo3(signature = (custom_types, *, numeric_data_key = None))]
    fn latest_custom_entry(
        &self,
        py: Python<'_>,
        custom_types: Vec<String>,
        numeric_data_key: Option<&str>,
    ) -> PyResult<Option<Py<PyAny>>> {
        crate::errors::guard(|| {
            let mut s = self.lock_cold(py)?;
            let inner = &mut s.inner;
            let found = py
                .detach(|| {
                    inner.find_latest(|e| {
                        e.is_type(clawctx_core::session::types::CUSTOM)
                            && e.str_field("customType")
                                .is_some_and(|t| custom_types.iter().any(|c| c == t))
                            && numeric_data_key.is_none_or(|key| {
                                e.field("data")
                                    .and_then(|d| d.get(key))
                                    .is_some_and(Value::is_number)
                            })
                    })
                })
                .py_err(py)?;
            found
                .map(|i| s.entry_dict(py, &s.inner.stored_entries()[i]))
                .transpose()
        })
    }

    /// The `type` of every entry in file order (no dicts built).
    fn entry_types(&self, py: Python<'_>) -> PyResult<Vec<Option<String>>> {
        crate::errors::guard(|| {
            Ok(self
                .lock(py)?
                .inner
                .records()
                .iter()
                .map(|e| e.entry_type().map(Cow::into_owned))
                .collect())
        })
    }

    /// The entry with this id as a dict, or `None`.
    fn get_entry(&self, py: Python<'_>, id: &str) -> PyResult<Option<Py<PyAny>>> {
        crate::errors::guard(|| {
            let mut s = self.lock_cold(py)?;
            let inner = &mut s.inner;
            let found = py.detach(|| inner.find_entry(id)).py_err(py)?;
            found
                .map(|i| s.entry_dict(py, &s.inner.stored_entries()[i]))
                .transpose()
        })
    }

    /// The label of an entry, or `None`.
    fn get_label(&self, py: Python<'_>, id: &str) -> PyResult<Option<Py<PyAny>>> {
        crate::errors::guard(|| {
            let s = self.lock(py)?;
            s.inner.label(id).map(|v| to_py(py, v)).transpose()
        })
    }

    /// Entries from the root to `leaf_id` (default: the current leaf), as dicts.
    #[pyo3(signature = (leaf_id = None))]
    fn branch_path<'py>(
        &self,
        py: Python<'py>,
        leaf_id: Option<&str>,
    ) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard(|| {
            let s = self.lock(py)?;
            let leaf = match leaf_id {
                Some(id) => s.inner.index_of(id),
                None => s.inner.leaf_index(),
            };
            match leaf {
                Some(i) => s.entry_list(py, s.inner.path_to(i)),
                None => Ok(PyList::empty(py)),
            }
        })
    }

    /// The entries whose parent is `id`, in file order.
    fn children<'py>(&self, py: Python<'py>, id: &str) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard(|| {
            let s = self.lock(py)?;
            s.entry_list(py, s.inner.children(id))
        })
    }

    /// The tree (pi's `getTree`): a list of root nodes `{"entry", "children", "label"}`, children
    /// sorted by timestamp. Built without recursion, so any depth works.
    fn tree<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard(|| {
            let s = self.lock(py)?;
            let tree = s.inner.tree();
            let entries = s.inner.records();
            let mut nodes = Vec::with_capacity(entries.len());
            let mut child_lists = Vec::with_capacity(entries.len());
            for entry in entries.iter() {
                let node = PyDict::new(py);
                node.set_item("entry", s.entry_dict(py, entry)?)?;
                let children = PyList::empty(py);
                node.set_item("children", &children)?;
                let label = match entry.id.as_deref().and_then(|id| s.inner.label(id)) {
                    Some(v) => to_py(py, v)?,
                    None => py.None(),
                };
                node.set_item("label", label)?;
                nodes.push(node);
                child_lists.push(children);
            }
            for (parent, kids) in tree.children.iter().enumerate() {
                for &kid in kids {
                    child_lists[parent].append(&nodes[kid])?;
                }
            }
            PyList::new(py, tree.roots.iter().map(|&r| nodes[r].clone()))
        })
    }

    /// `buildSessionContext` for `leaf_id` (default: the current leaf; an unknown id falls
    /// back to the last entry, as in pi).
    #[pyo3(signature = (leaf_id = None))]
    fn context(&self, py: Python<'_>, leaf_id: Option<&str>) -> PyResult<PySessionContext> {
        crate::errors::guard(|| {
            let mut s = self.lock_cold(py)?;
            let inner = &mut s.inner;
            let context = py
                .detach(|| inner.leaf_context(leaf_id, false))
                .py_err(py)?;
            drop(s);
            PySessionContext::from_core(py, context)
        })
    }

    /// The messages of `context(leaf_id)`, without the thinking level and model: on a
    /// session opened with `lazy=True`, the file is read backwards only as far as the
    /// messages reach (a thinking level set at the start of a session would need all of it).
    #[pyo3(signature = (leaf_id = None))]
    fn context_messages(&self, py: Python<'_>, leaf_id: Option<&str>) -> PyResult<PyTranscript> {
        crate::errors::guard(|| {
            let mut s = self.lock_cold(py)?;
            let inner = &mut s.inner;
            let context = py.detach(|| inner.leaf_context(leaf_id, true)).py_err(py)?;
            Ok(PyTranscript::new(context.messages))
        })
    }

    /// Whether only the end of the file is held (opened with `lazy=True` and not loaded in
    /// full since).
    #[getter]
    fn is_lazy(&self, py: Python<'_>) -> PyResult<bool> {
        crate::errors::guard(|| Ok(self.lock_cold(py)?.inner.is_cold()))
    }

    /// Bytes read from the end of the file while lazy (`None` once loaded in full).
    #[getter]
    fn lazy_bytes_read(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        crate::errors::guard(|| Ok(self.lock_cold(py)?.inner.cold_bytes_read()))
    }

    /// Whether the session has any entry (`len(session) > 0`, without loading a lazy
    /// session: it holds at least its last entry).
    fn has_entries(&self, py: Python<'_>) -> PyResult<bool> {
        crate::errors::guard(|| Ok(!self.lock_cold(py)?.inner.stored_entries().is_empty()))
    }

    /// Loads a lazy session's file in full now (what any method that needs the past does
    /// by itself). Returns whether it was lazy.
    fn load_in_full(&self, py: Python<'_>) -> PyResult<bool> {
        crate::errors::guard(|| {
            let mut s = self.lock_cold(py)?;
            let inner = &mut s.inner;
            py.detach(|| inner.load_past()).py_err(py)
        })
    }

    /// Reads what was appended to the file since it was loaded: only the new bytes are read and
    /// parsed; the index and every message's cached token facts are kept; the leaf moves to the
    /// newest entry when entries arrived. A truncated, replaced or rewritten file is loaded
    /// again in full (`mode == "full"`, `reason` says why). Runs without the GIL.
    ///
    /// `now_ms` and `id_factory` are called with the session lock released: when a reloaded
    /// file needs migration, the ids it needs are counted under the lock, drawn after it, and
    /// the reload is made again with them; an exception from the factory leaves the session
    /// as it was.
    fn refresh(&self, py: Python<'_>) -> PyResult<RefreshReport> {
        crate::errors::guard(|| {
            // The clock and the id factory are user code: called with the session lock
            // released (issue 33, N5).
            let (clock, factory) = self.lock_cold(py)?.callbacks(py);
            let now = clock.now_ms(py)?;
            let report = match &factory {
                Some(factory) => self.refresh_with_factory(py, factory, now)?,
                None => {
                    let mut s = self.lock_cold(py)?;
                    let inner = &mut s.inner;
                    py.detach(move || inner.refresh(&mut RandomIds, now))
                        .py_err(py)?
                }
            };
            Ok(report)
        })
    }

    /// Writes the in-memory migration back to the file (atomically, after a backup). Returns
    /// the backup path, or `None` when the file needed no migration.
    fn save_migrated(&self, py: Python<'_>) -> PyResult<Option<PathBuf>> {
        crate::errors::guard(|| {
            // The clock is user code: called with the session lock released (issue 33, N5).
            let (clock, _) = self.lock_cold(py)?.callbacks(py);
            let now = clock.now_ms(py)?;
            let mut s = self.lock_cold(py)?;
            let inner = &mut s.inner;
            py.detach(move || inner.save_migrated(now)).py_err(py)
        })
    }

    // ---- appends (pi's SessionManager.append*): each returns the new entry id -------------
    // Arguments are converted before the lock is taken: converting runs arbitrary Python
    // (`__iter__`, `__getitem__`), which may itself use this session.

    /// Appends a message (user, assistant, toolResult, bashExecution, custom, …).
    fn append_message(&self, py: Python<'_>, message: &Bound<'_, PyAny>) -> PyResult<String> {
        crate::errors::guard(|| {
            let value = from_py(message)?;
            self.append_entry(py, NewEntry::Message(value))
        })
    }

    /// Appends `messages` (pi messages: dicts with a `role`) as one turn and returns their new
    /// entry ids: each a child of the one before, the first a child of the leaf, the leaf moved
    /// to the last. All of them or none: every message is converted (a value JSON cannot hold,
    /// `nan` and `inf` included, raises before anything is written) and checked, every line
    /// built, then the lines go out in one locked write with one fsync; a failed write is cut
    /// back off the file and the session is unchanged.
    ///
    /// `turn_key` makes the turn idempotent: when a turn with that key is on the leaf's branch
    /// already (searched from the leaf back to the entry `since`, excluded, or to the root),
    /// nothing is written and its ids are returned. The key is stored on the turn's first
    /// entry (`"clawctxTurn": {"key", "part", "of"}`, an entry field pi ignores), so it is
    /// found again after a restart. Entries of a turn of two or more carry `part`/`of`: an
    /// open drops a turn that a crash (`kill -9` during the write) cut short.
    ///
    /// `now_ms` and `id_factory` are called before the session lock is taken (one id per
    /// message; an id found taken, empty or repeated is drawn again with the lock released).
    #[pyo3(signature = (messages, *, turn_key = None, since = None))]
    fn append_messages(
        &self,
        py: Python<'_>,
        messages: &Bound<'_, PyAny>,
        turn_key: Option<String>,
        since: Option<String>,
    ) -> PyResult<Vec<String>> {
        crate::errors::guard(|| {
            if messages.is_instance_of::<pyo3::types::PyString>()
                || messages.is_instance_of::<pyo3::types::PyDict>()
            {
                return Err(PyTypeError::new_err(
                    "messages must be a list of message dicts",
                ));
            }
            let mut values = Vec::new();
            for (i, item) in messages.try_iter()?.enumerate() {
                let value = crate::convert::from_py_finite(&item?).map_err(|e| {
                    let kind = e.get_type(py);
                    PyErr::from_type(kind, format!("message {i} of the turn: {}", e.value(py)))
                })?;
                values.push(value);
            }
            // The clock and the id factory are user code: called with the session lock
            // released (issue 33, N5); the ids come back checked under the lock, held.
            let (clock, factory) = self.lock_cold(py)?.callbacks(py);
            let now = clock.now_ms(py)?;
            let (mut s, drawn) = self.lock_with_free_ids(py, factory.as_ref(), values.len())?;
            let inner = &mut s.inner;
            let key = turn_key.as_deref();
            let since = since.as_deref();
            let done = py
                .detach(move || inner.append_turn(values, key, since, drawn, now))
                .py_err(py)?;
            Ok(done.ids)
        })
    }

    /// The ids of the turn appended with `turn_key` (see `append_messages`) when it is on the
    /// leaf's branch, searched from the leaf back to the entry `since` (excluded) or the root;
    /// otherwise `None`.
    #[pyo3(signature = (turn_key, *, since = None))]
    fn find_turn(
        &self,
        py: Python<'_>,
        turn_key: &str,
        since: Option<&str>,
    ) -> PyResult<Option<Vec<String>>> {
        crate::errors::guard(|| {
            let mut s = self.lock_cold(py)?;
            let inner = &mut s.inner;
            py.detach(|| inner.find_turn(turn_key, since)).py_err(py)
        })
    }

    /// Appends a `thinking_level_change` entry (`thinkingLevel`, e.g. "off", "low", "high");
    /// the context of a leaf after it reports that level.
    fn append_thinking_level_change(
        &self,
        py: Python<'_>,
        thinking_level: String,
    ) -> PyResult<String> {
        crate::errors::guard(|| {
            self.append_entry(py, NewEntry::ThinkingLevelChange(thinking_level))
        })
    }

    /// Appends a `model_change` entry (`provider`, `modelId`); the context of a leaf after it
    /// reports that model.
    fn append_model_change(
        &self,
        py: Python<'_>,
        provider: String,
        model_id: String,
    ) -> PyResult<String> {
        crate::errors::guard(|| self.append_entry(py, NewEntry::ModelChange { provider, model_id }))
    }

    /// Appends a `compaction` entry: `summary` replaces the history before
    /// `first_kept_entry_id` in the context of every leaf below it. `tokens_before` (a number)
    /// is the context size it was made at; `details` (JSON-serializable) and `from_hook` are
    /// stored as given.
    #[pyo3(signature = (summary, first_kept_entry_id, tokens_before, details = None, from_hook = None))]
    fn append_compaction(
        &self,
        py: Python<'_>,
        summary: String,
        first_kept_entry_id: String,
        tokens_before: &Bound<'_, PyAny>,
        details: Option<&Bound<'_, PyAny>>,
        from_hook: Option<bool>,
    ) -> PyResult<String> {
        crate::errors::guard(|| {
            let tokens_before = from_py(tokens_before)?;
            if !tokens_before.is_number() {
                return Err(PyTypeError::new_err("tokens_before must be a number"));
            }
            let details = details.map(from_py).transpose()?;
            self.append_entry(
                py,
                NewEntry::Compaction {
                    summary,
                    first_kept_entry_id,
                    tokens_before,
                    details,
                    from_hook,
                },
            )
        })
    }

    /// Appends a `custom` entry (`customType`, optional JSON-serializable `data`): extension
    /// state, never part of the LLM context.
    #[pyo3(signature = (custom_type, data = None))]
    fn append_custom_entry(
        &self,
        py: Python<'_>,
        custom_type: String,
        data: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        crate::errors::guard(|| {
            let data = data.map(from_py).transpose()?;
            self.append_entry(py, NewEntry::Custom { custom_type, data })
        })
    }

    /// Appends a `custom_message` entry: `content` (a str or a list of text/image blocks)
    /// enters the LLM context as a user message; `display` says whether a UI shows it;
    /// `details` (JSON-serializable) is stored as given.
    #[pyo3(signature = (custom_type, content, display, details = None))]
    fn append_custom_message(
        &self,
        py: Python<'_>,
        custom_type: String,
        content: &Bound<'_, PyAny>,
        display: bool,
        details: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        crate::errors::guard(|| {
            let content = from_py(content)?;
            if !(content.is_string() || content.is_array()) {
                return Err(PyTypeError::new_err(
                    "content must be a str or a list of text/image blocks",
                ));
            }
            let details = details.map(from_py).transpose()?;
            self.append_entry(
                py,
                NewEntry::CustomMessage {
                    custom_type,
                    content,
                    display,
                    details,
                },
            )
        })
    }

    /// Sets (or with `None`/`""` clears) the label of an existing entry.
    #[pyo3(signature = (target_id, label = None))]
    fn append_label(
        &self,
        py: Python<'_>,
        target_id: String,
        label: Option<String>,
    ) -> PyResult<String> {
        crate::errors::guard(|| self.append_entry(py, NewEntry::Label { target_id, label }))
    }

    /// Appends a `session_info` entry naming the session (`name`, see the `name` property).
    fn append_session_info(&self, py: Python<'_>, name: String) -> PyResult<String> {
        crate::errors::guard(|| self.append_entry(py, NewEntry::SessionInfo { name }))
    }

    /// Moves the leaf to an existing entry; the next append branches from there.
    fn branch(&self, py: Python<'_>, entry_id: &str) -> PyResult<()> {
        crate::errors::guard(|| {
            let mut s = self.lock_cold(py)?;
            let inner = &mut s.inner;
            py.detach(|| inner.branch(entry_id)).py_err(py)
        })
    }

    /// Sets the leaf to none: the next append starts a new root.
    fn reset_leaf(&self, py: Python<'_>) -> PyResult<()> {
        crate::errors::guard(|| {
            self.lock_cold(py)?.inner.reset_leaf();
            Ok(())
        })
    }

    /// Moves the leaf to `branch_from_id` (`None`: before the first entry) and appends a
    /// `branch_summary` there (`fromId` = the id, or `"root"`).
    #[pyo3(signature = (branch_from_id, summary, details = None, from_hook = None))]
    fn branch_with_summary(
        &self,
        py: Python<'_>,
        branch_from_id: Option<String>,
        summary: String,
        details: Option<&Bound<'_, PyAny>>,
        from_hook: Option<bool>,
    ) -> PyResult<String> {
        crate::errors::guard(|| {
            let details = details.map(from_py).transpose()?;
            self.append_entry(
                py,
                NewEntry::BranchSummary {
                    branch_from: branch_from_id,
                    summary,
                    details,
                    from_hook,
                },
            )
        })
    }
}

/// How many times ids drawn from an `id_factory` are checked under the session lock and drawn
/// again with it released before random ids stand in ([`PySession::lock_with_free_ids`]).
const ID_ROUNDS: usize = 100;

/// Opens a native session with the ids it may mint while migrating: a Python `id_factory`
/// is called back, so that open holds the GIL; with pi's random ids the GIL is released.
fn open_with_ids(
    py: Python<'_>,
    id_factory: Option<&Bound<'_, PyAny>>,
    open: impl FnOnce(&mut dyn IdSource) -> clawctx_core::base::Result<Session> + Send,
) -> PyResult<Session> {
    match id_factory.filter(|f| !f.is_none()) {
        Some(factory) => {
            let factory = factory.clone().unbind();
            let mut ids = PyIdSource::new(py, Some(&factory));
            let session = open(&mut ids).py_err(py)?;
            ids.finish()?;
            Ok(session)
        }
        None => py.detach(|| open(&mut RandomIds)).py_err(py),
    }
}

/// How many times `refresh()` tries a reload with ids drawn from an `id_factory` beforehand
/// ([`PySession::refresh_with_factory`]); the last try keeps random ids for any missing.
const REFRESH_ROUNDS: usize = 8;

/// Calls the Python `id_factory` `count` times (stopping at the first error, which is raised).
/// Called with the session lock released (issue 33, N5).
fn draw_ids(py: Python<'_>, factory: &Py<PyAny>, count: usize) -> PyResult<Vec<String>> {
    let mut source = PyIdSource::new(py, Some(factory));
    let mut ids = Vec::with_capacity(count);
    for _ in 0..count {
        let id = source.next_id();
        if source.error.is_some() {
            break;
        }
        ids.push(id);
    }
    source.finish()?;
    Ok(ids)
}

/// Empties every slot whose id may not name a new entry of `session` ([`Session::id_is_free`])
/// or repeats an earlier slot's, and returns whether every slot still holds an id. With
/// `fill_random`, empty slots then get random free ids (no user code), so every slot has one.
fn settle_ids(
    session: &Session,
    slots: &mut [Option<String>],
    fill_random: bool,
) -> clawctx_core::Result<bool> {
    let mut seen: HashSet<String> = HashSet::with_capacity(slots.len());
    let mut full = true;
    for slot in slots.iter_mut() {
        let free = match slot.as_deref() {
            Some(id) => !seen.contains(id) && session.id_is_free(id)?,
            None => false,
        };
        match slot {
            Some(id) if free => {
                seen.insert(id.clone());
            }
            _ => {
                *slot = None;
                full = false;
            }
        }
    }
    if !fill_random || full {
        return Ok(full);
    }
    for slot in slots.iter_mut().filter(|slot| slot.is_none()) {
        let mut id = session.next_free_entry_id(&mut RandomIds)?;
        for _ in 0..ID_ROUNDS {
            if !seen.contains(&id) {
                break;
            }
            id = session.next_free_entry_id(&mut RandomIds)?;
        }
        if seen.contains(&id) {
            id = random_session_id();
        }
        seen.insert(id.clone());
        *slot = Some(id);
    }
    Ok(true)
}

fn in_memory_state(
    py: Python<'_>,
    cwd: Option<String>,
    session_id: Option<String>,
    now_ms: Option<&Bound<'_, PyAny>>,
    id_factory: Option<&Bound<'_, PyAny>>,
) -> PyResult<State> {
    let clock = Clock::from_arg(now_ms)?;
    let now = clock.now_ms(py)?;
    let inner = Session::in_memory(cwd.as_deref().unwrap_or(""), session_id.as_deref(), now);
    Ok(State::new(inner, clock, id_factory))
}
