//! Durable, concurrent-safe file writes: the advisory lock, appends of whole lines, backups and
//! atomic replacement.
//!
//! Lock: an exclusive `flock` on the session file itself (not a `<file>.lock` sidecar, which
//! OpenClaw uses with create-exclusive semantics of its own and which a long-lived sidecar
//! would block). Whoever replaces the file atomically holds the lock on the old inode, so a
//! writer that waited re-checks after locking that the path still names the inode it locked
//! and starts over when it does not.
//!
//! fsync policy: appends call `fsync` (data) before releasing the lock unless the caller turned
//! it off; atomic replacement always syncs the new file before the rename and the directory
//! after it.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use crate::base::{Error, Result};

/// How writes behave.
#[derive(Debug, Clone, Copy)]
pub struct WriteOptions {
    /// `fsync` each append before the lock is released.
    pub fsync: bool,
    /// How long to wait for another process's lock.
    pub lock_timeout: Duration,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            fsync: true,
            lock_timeout: Duration::from_secs(10),
        }
    }
}

/// An open session file with the exclusive advisory lock held. Dropping it releases the lock.
pub struct LockedFile {
    file: File,
    path: PathBuf,
}

impl LockedFile {
    /// Opens `path` (creating it if `create`) and takes the exclusive lock, waiting up to
    /// `timeout`. Retries when the file was replaced while waiting.
    pub fn open(path: &Path, create: bool, timeout: Duration) -> Result<LockedFile> {
        let started = Instant::now();
        loop {
            let file = OpenOptions::new()
                .read(true)
                .append(true)
                .create(create)
                .open(path)
                .map_err(|e| Error::io(path, e))?;
            lock_with_timeout(&file, path, started, timeout)?;
            if same_file(&file, path) {
                return Ok(LockedFile {
                    file,
                    path: path.to_path_buf(),
                });
            }
            // Replaced while we waited (atomic repair or rewrite): lock the new file instead.
            drop(file);
            if started.elapsed() > timeout {
                return Err(Error::Lock {
                    path: path.to_path_buf(),
                    waited_ms: millis(started.elapsed()),
                });
            }
        }
    }

    pub fn len(&self) -> Result<u64> {
        self.file
            .metadata()
            .map(|m| m.len())
            .map_err(|e| Error::io(&self.path, e))
    }

    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Reads the whole file.
    pub fn read_all(&self) -> Result<Vec<u8>> {
        let mut buf = Vec::new();
        let mut reader = &self.file;
        use std::io::Seek;
        reader
            .seek(io::SeekFrom::Start(0))
            .map_err(|e| Error::io(&self.path, e))?;
        reader
            .read_to_end(&mut buf)
            .map_err(|e| Error::io(&self.path, e))?;
        Ok(buf)
    }

    /// Whether the file is non-empty and does not end with `"\n"` (a torn last line).
    fn lacks_final_newline(&self) -> Result<bool> {
        let len = self.len()?;
        if len == 0 {
            return Ok(false);
        }
        let mut last = [0u8; 1];
        read_exact_at(&self.file, &mut last, len - 1).map_err(|e| Error::io(&self.path, e))?;
        Ok(last[0] != b'\n')
    }

    /// Appends complete lines (`data` must end with `"\n"`) in one write. If the file ends in
    /// an unterminated line, a `"\n"` goes first so the new record never merges into it.
    pub fn append_lines(&mut self, data: &[u8], fsync: bool) -> Result<AppendOutcome> {
        debug_assert!(data.ends_with(b"\n"));
        let start = self.len()?;
        let mut buf = Vec::with_capacity(data.len() + 1);
        let terminated_torn_line = self.lacks_final_newline()?;
        if terminated_torn_line {
            buf.push(b'\n');
        }
        buf.extend_from_slice(data);
        self.file
            .write_all(&buf)
            .map_err(|e| Error::io(&self.path, e))?;
        if fsync {
            self.file
                .sync_data()
                .map_err(|e| Error::io(&self.path, e))?;
        }
        Ok(AppendOutcome {
            start,
            end: start + buf.len() as u64,
            terminated_torn_line,
        })
    }

    /// The locked file's identity (device and inode on Unix).
    pub fn identity(&self) -> Option<FileIdentity> {
        file_identity(&self.file)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Another handle to the locked file (the lock stays with this one).
    pub fn try_clone_file(&self) -> io::Result<File> {
        self.file.try_clone()
    }
}

/// Where an append landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendOutcome {
    /// File length before the write.
    pub start: u64,
    /// File length after it.
    pub end: u64,
    /// A `"\n"` was written first to end a torn last line.
    pub terminated_torn_line: bool,
}

/// Device and inode: what tells a replaced file from the one that was read.
pub type FileIdentity = (u64, u64);

#[cfg(unix)]
pub fn file_identity(file: &File) -> Option<FileIdentity> {
    use std::os::unix::fs::MetadataExt;
    file.metadata().ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
pub fn file_identity(_file: &File) -> Option<FileIdentity> {
    None
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn lock_with_timeout(file: &File, path: &Path, started: Instant, timeout: Duration) -> Result<()> {
    let mut pause = Duration::from_millis(1);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(fs::TryLockError::WouldBlock) => {
                if started.elapsed() >= timeout {
                    return Err(Error::Lock {
                        path: path.to_path_buf(),
                        waited_ms: millis(started.elapsed()),
                    });
                }
                thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(fs::TryLockError::Error(e)) => return Err(Error::io(path, e)),
        }
    }
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &File, path: &Path) -> bool {
    path.exists()
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, offset)
}

#[cfg(not(unix))]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    use std::io::Seek;
    let mut f = file;
    f.seek(io::SeekFrom::Start(offset))?;
    f.read_exact(buf)
}

/// Writes a backup of `path` next to it as `<path>.bak-<pid>-<ms>` (OpenClaw's name). A hard
/// link when possible (instant, and the original inode survives the replacement untouched),
/// otherwise a copy with the original's permissions.
pub fn write_backup(path: &Path, now_ms: i64) -> io::Result<PathBuf> {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".bak-{}-{}", std::process::id(), now_ms));
    let backup = PathBuf::from(name);
    if fs::hard_link(path, &backup).is_err() {
        fs::copy(path, &backup)?;
    }
    Ok(backup)
}

/// Replaces `path` with new contents atomically: a temp file in the same directory
/// (`.<name>.<tag>-<pid>-<ms>.tmp`), written by `write`, given the original's permissions,
/// fsynced, renamed over `path`, then the directory fsynced. On any failure the temp file is
/// removed and `path` is untouched.
pub fn replace_atomically(
    path: &Path,
    tag: &str,
    now_ms: i64,
    write: impl FnOnce(&mut io::BufWriter<&File>) -> io::Result<()>,
) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let base = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(".{base}.{tag}-{}-{now_ms}.tmp", std::process::id()));
    // A name that is taken is not ours to remove: fail before the cleanup below applies.
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)?;
    let result = (|| {
        {
            let mut writer = io::BufWriter::with_capacity(1 << 20, &file);
            write(&mut writer)?;
            writer.flush()?;
        }
        if let Ok(meta) = fs::metadata(path) {
            fs::set_permissions(&temp, meta.permissions())?;
        }
        file.sync_all()?;
        fs::rename(&temp, path)?;
        sync_dir(dir);
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

fn sync_dir(dir: &Path) {
    // Best effort: not every platform or filesystem lets a directory be opened and synced.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_adds_newline_after_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        fs::write(&p, b"{\"a\":1}\n{\"torn").unwrap();
        let mut f = LockedFile::open(&p, false, Duration::from_secs(1)).unwrap();
        f.append_lines(b"{\"b\":2}\n", false).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"{\"a\":1}\n{\"torn\n{\"b\":2}\n");
    }

    #[test]
    fn lock_times_out_while_held() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        fs::write(&p, b"").unwrap();
        let _held = LockedFile::open(&p, false, Duration::from_secs(1)).unwrap();
        // flock locks belong to the open file description, so a second open conflicts even
        // within one process.
        let err = LockedFile::open(&p, false, Duration::from_millis(30))
            .err()
            .unwrap();
        assert!(matches!(err, Error::Lock { .. }), "{err}");
    }

    #[test]
    fn replace_keeps_mode_and_cleans_up_on_failure() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        fs::write(&p, b"old\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
        }
        replace_atomically(&p, "t", 1, |w| w.write_all(b"new\n")).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                fs::metadata(&p).unwrap().permissions().mode() & 0o777,
                0o640
            );
        }
        let err = replace_atomically(&p, "t", 2, |_| Err(io::Error::other("boom")));
        assert!(err.is_err());
        assert_eq!(fs::read(&p).unwrap(), b"new\n");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        // A file already at the temp name is someone else's: left alone, replace fails.
        let taken = dir
            .path()
            .join(format!(".s.jsonl.t-{}-3.tmp", std::process::id()));
        fs::write(&taken, b"theirs").unwrap();
        assert!(replace_atomically(&p, "t", 3, |w| w.write_all(b"x\n")).is_err());
        assert_eq!(fs::read(&taken).unwrap(), b"theirs");
        assert_eq!(fs::read(&p).unwrap(), b"new\n");
    }

    #[test]
    fn backup_has_original_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        fs::write(&p, b"orig\n").unwrap();
        let b = write_backup(&p, 7).unwrap();
        replace_atomically(&p, "t", 8, |w| w.write_all(b"new\n")).unwrap();
        assert_eq!(fs::read(&b).unwrap(), b"orig\n");
        assert!(b.to_string_lossy().contains(".bak-"));
    }
}
