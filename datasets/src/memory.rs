//! The one size check every reader and generator of this crate makes before it allocates a
//! dense table whose size comes from its input (a LIBSVM feature index, an IDX header, the `n`
//! and `d` of a synthetic set, a ratings matrix, an image size): the size is computed with
//! checked arithmetic and compared with the memory the machine has available, so that a huge
//! size is an error naming it instead of an overflow panic or an allocation failure that
//! aborts the process.
//!
//! On Linux the available memory is `MemAvailable` of `/proc/meminfo` (`MemTotal` where the
//! kernel does not report it), lowered to what the control group's `memory.max` leaves; elsewhere
//! the check tries to reserve the bytes (`Vec::try_reserve_exact`) and gives them back.

use crate::error::DataError;

/// Check that `rows x cols` values of `bytes_per_value` bytes each can be allocated, and return
/// the number of values (`rows * cols`). `what` names the input in the error (a file, a set).
///
/// # Errors
/// [`DataError::TooLarge`] naming `what`, the rows, the columns and the bytes needed, when the
/// size overflows or exceeds the available memory.
pub fn check_dense(
    rows: usize,
    cols: usize,
    bytes_per_value: usize,
    what: &str,
) -> Result<usize, DataError> {
    let needed = (rows as u128)
        .checked_mul(cols as u128)
        .and_then(|v| v.checked_mul(bytes_per_value as u128));
    let error = |available: Option<u64>| DataError::TooLarge {
        what: what.to_string(),
        rows,
        cols,
        bytes_per_value,
        needed,
        available,
    };
    let values = rows.checked_mul(cols);
    let (Some(values), Some(bytes)) = (values, needed) else {
        return Err(error(None));
    };
    // No allocation may exceed isize::MAX bytes.
    let Ok(bytes) = isize::try_from(bytes) else {
        return Err(error(None));
    };
    let bytes = bytes as u64;
    if bytes == 0 {
        return Ok(values);
    }
    match available_bytes() {
        Some(available) if bytes > available => Err(error(Some(available))),
        Some(_) => Ok(values),
        None => {
            let mut probe: Vec<u8> = Vec::new();
            match probe.try_reserve_exact(bytes as usize) {
                Ok(()) => Ok(values),
                Err(_) => Err(error(None)),
            }
        }
    }
}

/// The bytes of memory this process can still allocate, where the system says (Linux); `None`
/// elsewhere.
pub fn available_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| -> Option<u64> {
        meminfo.lines().find_map(|l| {
            let rest = l.strip_prefix(name)?.strip_prefix(':')?;
            let kb: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
            kb.checked_mul(1024)
        })
    };
    let system = field("MemAvailable").or_else(|| field("MemTotal"))?;
    // A control group's limit (cgroup v2), less what the group already uses.
    let read = |p: &str| -> Option<u64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
    let group = read("/sys/fs/cgroup/memory.max")
        .map(|max| max.saturating_sub(read("/sys/fs/cgroup/memory.current").unwrap_or(0)));
    Some(group.map_or(system, |g| g.min(system)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_sizes_pass_and_huge_ones_name_the_size() {
        assert_eq!(check_dense(10, 20, 8, "t").unwrap(), 200);
        assert_eq!(check_dense(0, usize::MAX, 8, "t").unwrap(), 0);
        let err = check_dense(1_000_000_000_000, 10, 8, "big.svm").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("big.svm")
                && msg.contains("1000000000000 rows x 10 columns")
                && msg.contains("80000000000000 bytes"),
            "{msg}"
        );
        // Overflowing products are errors too, never a panic.
        let msg = check_dense(usize::MAX, usize::MAX, 8, "t")
            .unwrap_err()
            .to_string();
        assert!(msg.contains("more than 2^128 bytes"), "{msg}");
        let msg = check_dense(usize::MAX, 2, 8, "t").unwrap_err().to_string();
        assert!(msg.contains("more than this machine can address"), "{msg}");
    }
}
