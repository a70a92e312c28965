//! Reading a text file whole: its bytes, checked to be UTF-8 (an error naming the file and the
//! line of the first invalid byte otherwise), a leading byte-order mark dropped.

use std::path::Path;

use crate::error::DataError;

/// The text of `path` (data files, and `rankrisk train`'s config files).
///
/// # Errors
/// [`DataError::Io`] for an unreadable file, [`DataError::NotUtf8`] for bytes that are not
/// UTF-8.
pub fn read_text(path: &Path) -> Result<String, DataError> {
    let bytes = std::fs::read(path).map_err(|source| DataError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    text_of(path, bytes)
}

/// `bytes` of the file `path` as text (see [`read_text`]).
pub(crate) fn text_of(path: &Path, bytes: Vec<u8>) -> Result<String, DataError> {
    match String::from_utf8(bytes) {
        Ok(mut text) => {
            if text.starts_with('\u{feff}') {
                text.remove(0);
            }
            Ok(text)
        }
        Err(e) => {
            let offset = e.utf8_error().valid_up_to();
            let bytes = e.as_bytes();
            let line = 1 + bytes[..offset].iter().filter(|&&b| b == b'\n').count();
            Err(DataError::NotUtf8 {
                path: path.to_path_buf(),
                line,
                offset,
                utf16: bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_bytes_name_the_line_and_a_bom_is_dropped() {
        let p = Path::new("f.csv");
        let err = text_of(p, b"a,b\n1,2\n3,\xff\n".to_vec()).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("f.csv, line 3")
                && msg.contains("not UTF-8")
                && !msg.contains("Utf8Error"),
            "{msg}"
        );
        assert!(
            text_of(p, b"\xff\xfea\0".to_vec())
                .unwrap_err()
                .to_string()
                .contains("UTF-16")
        );
        assert_eq!(text_of(p, b"\xef\xbb\xbf1,2\n".to_vec()).unwrap(), "1,2\n");
    }
}
