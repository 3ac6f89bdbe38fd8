//! Conversion between Python objects and JSON values, and the injectable clock and id source.

use clawctx_core::base::{system_now_ms, IdSource, RandomIds};
use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PyMapping,
    PySequence, PySet, PyString, PyTuple,
};
use pyo3::IntoPyObjectExt;
use serde_json::{Map, Number, Value};

/// The deepest nesting of lists and dicts accepted from Python (the argument itself is level 1).
///
/// The limit of what the readers return, so that what is read is accepted back (issue 33, N3):
/// a session line nests at most 127 levels (`clawctx_core::session::MAX_RECORD_DEPTH`, below
/// the 128th container where serde_json stops; deeper lines are skipped at open), so a message
/// read from a file nests at most 126 and a list of such messages (a transcript) 127. The
/// appends check the line they write against the same 127, so a message or custom data
/// deeper than 126 levels is refused there (`ValueError`) rather than written unreadable.
/// Refusing deeper values here also keeps the recursion of this conversion bounded.
pub const MAX_DEPTH: usize = 127;

/// The deepest JSON value turned into Python objects: well above what serde_json parses (127
/// levels) and [`MAX_DEPTH`], only a guard against a stack overflow on a value built otherwise.
const MAX_TO_PY_DEPTH: usize = 512;

/// A JSON value as Python objects (dict key order kept).
pub fn to_py(py: Python<'_>, value: &Value) -> PyResult<Py<PyAny>> {
    value_to_py(py, value, 0).map(Bound::unbind)
}

fn value_to_py<'py>(py: Python<'py>, value: &Value, depth: usize) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            check_to_py_depth(depth)?;
            check_stack()?;
            let list = PyList::empty(py);
            for item in items {
                list.append(value_to_py(py, item, depth + 1)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            check_to_py_depth(depth)?;
            check_stack()?;
            let dict = PyDict::new(py);
            for (key, item) in map {
                dict.set_item(key, value_to_py(py, item, depth + 1)?)?;
            }
            dict.into_any()
        }
    })
}

/// Refuses to go a level deeper when the thread's stack is nearly used up (issue 33, N6): a
/// thread started with `threading.stack_size(64 * 1024)` overflowed (SIGSEGV) about 60 levels
/// into a value, well within [`MAX_DEPTH`]. Raises `ValueError`, as the depth limit does.
fn check_stack() -> PyResult<()> {
    if crate::stack::too_little_left() {
        return Err(PyValueError::new_err(format!(
            "JSON value is nested too deeply for this thread's stack (less than {} KiB left; \
             run it on a thread with a larger stack, see threading.stack_size)",
            crate::stack::RESERVE / 1024
        )));
    }
    Ok(())
}

fn check_to_py_depth(depth: usize) -> PyResult<()> {
    if depth >= MAX_TO_PY_DEPTH {
        return Err(PyValueError::new_err(format!(
            "JSON value is nested deeper than {MAX_TO_PY_DEPTH} levels"
        )));
    }
    Ok(())
}

/// A Python object (dict, list, str, int, float, bool, None; also tuples, sets, other
/// sequences and mappings, and dataclasses, as `pythonize` reads them) as a JSON value.
///
/// Raises `ValueError` for an object nested deeper than [`MAX_DEPTH`] levels or containing a
/// reference cycle (as the `json` module does), `TypeError` for a value JSON cannot hold.
pub fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    let mut path = Vec::new();
    convert(obj, &mut path)
}

/// [`from_py`] for a value written as given, where `null` in place of a number would change
/// it silently: a non-finite float (`nan`, `inf`; `JSON.stringify` writes `null`) raises
/// `ValueError` instead.
pub fn from_py_finite(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            REJECT_NON_FINITE.with(|flag| flag.set(false));
        }
    }
    REJECT_NON_FINITE.with(|flag| flag.set(true));
    let _reset = Reset;
    from_py(obj)
}

thread_local! {
    /// Set while [`from_py_finite`] converts (the conversion is recursive; a flag is cheaper
    /// than a parameter through every level).
    static REJECT_NON_FINITE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Converts `obj`; `path` holds the ids of the containers being converted around it.
fn convert(obj: &Bound<'_, PyAny>, path: &mut Vec<usize>) -> PyResult<Value> {
    // Cheap exact-type checks first, in the order pythonize checks them.
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(int) = obj.cast::<PyInt>() {
        if let Ok(i) = int.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = int.extract::<u64>() {
            return Ok(Value::from(u));
        }
        return scalar(obj);
    }
    if let Ok(list) = obj.cast::<PyList>() {
        if list.is_exact_instance_of::<PyList>() {
            return enter(obj, path, |path| {
                list.iter()
                    .map(|item| convert(&item, path))
                    .collect::<PyResult<Vec<_>>>()
                    .map(Value::Array)
            });
        }
        return sequence(obj, path);
    }
    if obj.is_instance_of::<PyTuple>() {
        return sequence(obj, path);
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        if dict.is_exact_instance_of::<PyDict>() {
            return enter(obj, path, |path| {
                let mut map = Map::with_capacity(dict.len());
                for (key, value) in dict.iter() {
                    map.insert(key_string(&key)?, convert(&value, path)?);
                }
                Ok(Value::Object(map))
            });
        }
        if is_dataclass(obj) {
            return dataclass(obj, path);
        }
        return mapping(obj, path);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        if let Ok(s) = s.to_cow() {
            return Ok(Value::String(s.into_owned()));
        }
        return scalar(obj);
    }
    if obj.is_instance_of::<PyBytes>() || obj.is_instance_of::<PyByteArray>() {
        return scalar(obj);
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        let value = f.value();
        if !value.is_finite() && REJECT_NON_FINITE.with(std::cell::Cell::get) {
            return Err(PyValueError::new_err(format!(
                "not JSON-serializable: the float {value} (JSON has no NaN or infinity)"
            )));
        }
        return Ok(Number::from_f64(value).map_or(Value::Null, Value::Number));
    }
    if obj.is_instance_of::<PySet>() || obj.is_instance_of::<PyFrozenSet>() {
        return enter(obj, path, |path| {
            obj.try_iter()?
                .map(|item| convert(&item?, path))
                .collect::<PyResult<Vec<_>>>()
                .map(Value::Array)
        });
    }
    if obj.cast::<PySequence>().is_ok() {
        return sequence(obj, path);
    }
    if obj.cast::<PyMapping>().is_ok() {
        return mapping(obj, path);
    }
    if is_dataclass(obj) {
        return dataclass(obj, path);
    }
    scalar(obj)
}

/// Converts the contents of the container `obj` with `f`, one level deeper on the path.
fn enter(
    obj: &Bound<'_, PyAny>,
    path: &mut Vec<usize>,
    f: impl FnOnce(&mut Vec<usize>) -> PyResult<Value>,
) -> PyResult<Value> {
    let id = obj.as_ptr() as usize;
    if path.contains(&id) {
        return Err(PyValueError::new_err(
            "JSON value contains a reference cycle (a container inside itself)",
        ));
    }
    if path.len() >= MAX_DEPTH {
        return Err(PyValueError::new_err(format!(
            "JSON value is nested deeper than {MAX_DEPTH} levels"
        )));
    }
    check_stack()?;
    path.push(id);
    let result = f(path);
    path.pop();
    result
}

fn sequence(obj: &Bound<'_, PyAny>, path: &mut Vec<usize>) -> PyResult<Value> {
    enter(obj, path, |path| {
        let seq = obj.cast::<PySequence>()?;
        let len = seq.len()?;
        let mut items = Vec::with_capacity(len);
        for i in 0..len {
            items.push(convert(&seq.get_item(i)?, path)?);
        }
        Ok(Value::Array(items))
    })
}

fn mapping(obj: &Bound<'_, PyAny>, path: &mut Vec<usize>) -> PyResult<Value> {
    enter(obj, path, |path| {
        let m = obj.cast::<PyMapping>()?;
        let keys = m.keys()?;
        let values = m.values()?;
        let mut map = Map::with_capacity(keys.len());
        for (key, value) in keys.iter().zip(values.iter()) {
            map.insert(key_string(&key)?, convert(&value, path)?);
        }
        Ok(Value::Object(map))
    })
}

fn is_dataclass(obj: &Bound<'_, PyAny>) -> bool {
    obj.getattr_opt(intern!(obj.py(), "__dataclass_fields__"))
        .ok()
        .flatten()
        .is_some()
}

fn dataclass(obj: &Bound<'_, PyAny>, path: &mut Vec<usize>) -> PyResult<Value> {
    enter(obj, path, |path| {
        let py = obj.py();
        let fields = obj.getattr(intern!(py, "__dataclass_fields__"))?;
        let fields = fields.cast::<PyDict>()?.keys();
        let attrs = obj.getattr(intern!(py, "__dict__"))?;
        let attrs = attrs.cast::<PyDict>()?;
        let mut map = Map::with_capacity(fields.len());
        for key in fields.iter() {
            let value = attrs
                .get_item(&key)?
                .ok_or_else(|| PyKeyError::new_err(key.clone().unbind()))?;
            map.insert(key_string(&key)?, convert(&value, path)?);
        }
        Ok(Value::Object(map))
    })
}

/// A dict key, which must be a `str`.
fn key_string(key: &Bound<'_, PyAny>) -> PyResult<String> {
    match key.cast::<PyString>().map(|s| s.to_cow()) {
        Ok(Ok(s)) => Ok(s.into_owned()),
        _ => pythonize::depythonize::<String>(key).map_err(not_serializable),
    }
}

/// A value that is not a container, through pythonize (its error for what JSON cannot hold).
fn scalar(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    pythonize::depythonize(obj).map_err(not_serializable)
}

fn not_serializable(e: pythonize::PythonizeError) -> PyErr {
    PyTypeError::new_err(format!("not JSON-serializable: {e}"))
}

/// Python's `repr()` of a Rust value (`'text'`, `None`, `12`), for the native classes' reprs.
pub fn py_repr<'py, T>(py: Python<'py>, value: T) -> PyResult<String>
where
    T: IntoPyObject<'py>,
{
    let object = value.into_bound_py_any(py)?;
    Ok(object.repr()?.to_string())
}

/// `Name(field=repr(obj.field), ...)`: one definition, in the core's Python glue.
pub use clawctx_core::python::fields_repr;

/// JSON text parsed into Python objects.
pub fn json_text_to_py(py: Python<'_>, text: &str) -> PyResult<Py<PyAny>> {
    let value =
        clawctx_core::base::parse_value(text).map_err(|e| PyValueError::new_err(e.to_string()))?;
    to_py(py, &value)
}

/// The `now_ms=` argument: `None` (system clock), a fixed int, or a callable returning an int.
#[derive(Debug)]
pub enum Clock {
    System,
    Fixed(i64),
    Callable(Py<PyAny>),
}

impl Clock {
    pub fn from_arg(arg: Option<&Bound<'_, PyAny>>) -> PyResult<Clock> {
        match arg {
            None => Ok(Clock::System),
            Some(obj) if obj.is_none() => Ok(Clock::System),
            Some(obj) if obj.is_callable() => Ok(Clock::Callable(obj.clone().unbind())),
            Some(obj) => obj.extract::<i64>().map(Clock::Fixed).map_err(|_| {
                PyTypeError::new_err("now_ms must be an int (milliseconds since the epoch) or a callable returning one")
            }),
        }
    }

    /// A copy (the callable shared), for calling the clock with no lock held.
    pub fn clone_ref(&self, py: Python<'_>) -> Clock {
        match self {
            Clock::System => Clock::System,
            Clock::Fixed(ms) => Clock::Fixed(*ms),
            Clock::Callable(f) => Clock::Callable(f.clone_ref(py)),
        }
    }

    pub fn now_ms(&self, py: Python<'_>) -> PyResult<i64> {
        match self {
            Clock::System => Ok(system_now_ms()),
            Clock::Fixed(ms) => Ok(*ms),
            Clock::Callable(f) => f.call0(py)?.extract::<i64>(py),
        }
    }
}

/// The `id_factory=` argument as an [`IdSource`]: a Python callable returning `str`, or pi's
/// random ids. A Python error is kept and raised after the core call returns.
pub struct PyIdSource<'py> {
    py: Python<'py>,
    factory: Option<&'py Py<PyAny>>,
    pub error: Option<PyErr>,
}

impl<'py> PyIdSource<'py> {
    pub fn new(py: Python<'py>, factory: Option<&'py Py<PyAny>>) -> Self {
        PyIdSource {
            py,
            factory,
            error: None,
        }
    }

    pub fn finish(self) -> PyResult<()> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl IdSource for PyIdSource<'_> {
    fn next_id(&mut self) -> String {
        let Some(factory) = self.factory else {
            return RandomIds.next_id();
        };
        if self.error.is_some() {
            return RandomIds.next_id();
        }
        match factory.call0(self.py).and_then(|v| {
            v.bind(self.py)
                .cast::<PyString>()
                .map_err(PyErr::from)
                .and_then(|s| s.to_str().map(str::to_owned))
        }) {
            Ok(id) => id,
            Err(e) => {
                self.error = Some(e);
                RandomIds.next_id()
            }
        }
    }
}
