//! How the core declares a report type that `clawctx._core` exposes as a Python class.

/// Declares a struct that, with the `python` feature, is itself a frozen class of
/// `clawctx._core` (no mirror struct in the binding). The parenthesised head holds the class's
/// own `pyo3::pyclass` options: its `name`, its `module` (`clawctx._core.<stage>`), `get_all`
/// where every field is an attribute. Every such class is `frozen` (a report does not change
/// once made) and `skip_from_py_object` (Python never hands one back to Rust by value).
///
/// The struct's `///` docs are the stub's docstrings (`scripts/stub_docs.py` reads this
/// macro's head as the class's `#[pyclass(...)]`); its methods, where it has any, are in the
/// stage's `*_py.rs` file. Without the feature the struct is plain Rust.
macro_rules! python_class {
    (($($option:tt)*) $(#[$meta:meta])* $vis:vis struct $name:ident $($body:tt)*) => {
        $(#[$meta])*
        #[cfg_attr(
            feature = "python",
            pyo3::pyclass($($option)*, frozen, skip_from_py_object)
        )]
        $vis struct $name $($body)*
    };
}

pub(crate) use python_class;
