//! Reading a file at an offset, for the writer (`persist.rs`) and the turn check (`turn.rs`)
//! alike: both look at bytes near the end of a session file without moving a cursor that
//! another part of the session relies on.

use std::fs::File;
use std::io;

/// `buf.len()` bytes of `file` from `offset`, the file's cursor left alone where the platform
/// reads at an offset.
#[cfg(unix)]
pub(super) fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, offset)
}

#[cfg(not(unix))]
pub(super) fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    use std::io::{Read, Seek};
    let mut f = file;
    f.seek(io::SeekFrom::Start(offset))?;
    f.read_exact(buf)
}
