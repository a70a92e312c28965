//! Arrays from Python: 1-D numpy arrays of scores and labels checked and turned into the `f64`
//! slices the core takes. A contiguous float64 array is borrowed without a copy; float32 and
//! integer scores are converted (exactly); anything else is refused with a `TypeError` or
//! `ValueError` that names the argument.

use numpy::{Element, PyReadonlyArray1, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// A 1-D array of `f64`: borrowed from numpy, or converted.
pub enum Floats<'py> {
    /// A contiguous float64 array, read in place.
    Borrowed(PyReadonlyArray1<'py, f64>),
    /// A converted copy.
    Owned(Vec<f64>),
}

impl Floats<'_> {
    /// The values.
    pub fn as_slice(&self) -> &[f64] {
        match self {
            // Contiguity is checked when the array is taken.
            Floats::Borrowed(a) => a.as_slice().unwrap_or(&[]),
            Floats::Owned(v) => v,
        }
    }
}

/// The array `obj` (the argument `name`) as a numpy array of `ndim` dimensions.
///
/// # Errors
/// `TypeError` for something other than a numpy array, `ValueError` for another number of
/// dimensions, each naming the argument.
pub fn with_ndim<'a, 'py>(
    obj: &'a Bound<'py, PyAny>,
    name: &str,
    ndim: usize,
) -> PyResult<&'a Bound<'py, PyUntypedArray>> {
    let array = obj.cast::<PyUntypedArray>().map_err(|_| {
        let kind = obj
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "?".into());
        PyTypeError::new_err(format!(
            "{name}: a {ndim}-D numpy array is needed, got a {kind} (numpy.asarray converts a \
             list)"
        ))
    })?;
    if array.ndim() != ndim {
        return Err(PyValueError::new_err(format!(
            "{name}: a {ndim}-D array is needed, got shape {:?}",
            array.shape()
        )));
    }
    Ok(array)
}

/// The array `obj` (the argument `name`) as a 1-D numpy array.
fn one_dimensional<'a, 'py>(
    obj: &'a Bound<'py, PyAny>,
    name: &str,
) -> PyResult<&'a Bound<'py, PyUntypedArray>> {
    with_ndim(obj, name, 1)
}

/// Convert a numeric 1-D array of element type `T` to `f64`.
fn converted<T: Element + Copy>(
    array: &Bound<'_, PyUntypedArray>,
    to_f64: impl Fn(T) -> f64,
) -> Option<Vec<f64>> {
    let typed: PyReadonlyArray1<'_, T> = array.extract().ok()?;
    Some(typed.as_array().iter().map(|&v| to_f64(v)).collect())
}

/// The name of an array's dtype.
fn dtype_name(array: &Bound<'_, PyUntypedArray>) -> String {
    array
        .dtype()
        .str()
        .map(|s| s.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// Scores (the argument `name`): float64 (borrowed when contiguous), float32 or integers.
///
/// # Errors
/// `TypeError` for something other than a numpy array or another dtype (float16 among them:
/// its 11-bit mantissa ties scores that differ), `ValueError` for another shape.
pub fn scores<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Floats<'py>> {
    let array = one_dimensional(obj, name)?;
    if let Ok(a) = array.extract::<PyReadonlyArray1<'py, f64>>() {
        if a.as_slice().is_ok() {
            return Ok(Floats::Borrowed(a));
        }
        return Ok(Floats::Owned(a.as_array().iter().copied().collect()));
    }
    let owned = converted::<f32>(array, f64::from)
        .or_else(|| converted::<i64>(array, |v| v as f64))
        .or_else(|| converted::<i32>(array, f64::from))
        .or_else(|| converted::<i16>(array, f64::from))
        .or_else(|| converted::<i8>(array, f64::from))
        .or_else(|| converted::<u8>(array, f64::from))
        .or_else(|| converted::<u16>(array, f64::from))
        .or_else(|| converted::<u32>(array, f64::from));
    owned.map(Floats::Owned).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "{name}: dtype {} is not taken: scores are float64, float32 or integers{}",
            dtype_name(array),
            if dtype_name(array).ends_with("f2") {
                " (float16 ties scores that differ: convert with .astype(numpy.float32))"
            } else {
                ""
            }
        ))
    })
}

/// Binary labels (the argument `name`) as `+1.0` / `-1.0`: bool, integers or floats whose
/// values are 0 / 1 or -1 / +1.
///
/// # Errors
/// `TypeError` for something other than a numpy array or an unsupported dtype, `ValueError`
/// for another shape or a value other than -1, 0, 1 (naming its index).
pub fn labels(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<f64>> {
    let array = one_dimensional(obj, name)?;
    let values = if let Ok(a) = array.extract::<PyReadonlyArray1<'_, bool>>() {
        a.as_array()
            .iter()
            .map(|&b| f64::from(u8::from(b)))
            .collect()
    } else {
        converted::<f64>(array, |v| v)
            .or_else(|| converted::<f32>(array, f64::from))
            .or_else(|| converted::<i64>(array, |v| v as f64))
            .or_else(|| converted::<i32>(array, f64::from))
            .or_else(|| converted::<i16>(array, f64::from))
            .or_else(|| converted::<i8>(array, f64::from))
            .or_else(|| converted::<u8>(array, f64::from))
            .ok_or_else(|| {
                PyTypeError::new_err(format!(
                    "{name}: dtype {} is not taken: labels are bool, integers or floats",
                    dtype_name(array)
                ))
            })?
    };
    signs(values, name)
}

/// Labels in {-1, 0, +1} as `+1.0` / `-1.0`.
fn signs(mut values: Vec<f64>, name: &str) -> PyResult<Vec<f64>> {
    for (index, y) in values.iter_mut().enumerate() {
        *y = if *y == 1.0 {
            1.0
        } else if *y == 0.0 || *y == -1.0 {
            -1.0
        } else {
            return Err(PyValueError::new_err(format!(
                "{name}[{index}] = {y}: labels are 0 / 1, -1 / +1 or bool"
            )));
        };
    }
    Ok(values)
}
