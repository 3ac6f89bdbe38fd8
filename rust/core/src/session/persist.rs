//! Durable, concurrent-safe file writes: the advisory lock, appends of whole lines, backups and
//! atomic replacement.
//!
//! Lock: an exclusive `flock` on the session file itself (not a `<file>.lock` sidecar, which
//! OpenClaw uses with create-exclusive semantics of its own and which a long-lived sidecar
//! would block). Whoever replaces the file atomically holds the lock on the old inode, so a
//! writer that waited re-checks after locking that the path still names the inode it locked
//! and starts over when it does not.
//!
//! Only regular files are session files: every open goes through [`open_session_file`], which
//! opens without blocking (`O_NONBLOCK`, `O_NOCTTY`: a FIFO or a terminal would otherwise
//! stall the open or the first read) and checks the descriptor's type before a byte is read or
//! written. Replacement and backups resolve a symlink first and act on its target, so the link
//! stays a link.
//!
//! fsync policy: appends call `fsync` (data) before releasing the lock unless the caller turned
//! it off; atomic replacement always syncs the new file before the rename and the directory
//! after it.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use super::read_at::read_exact_at;
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
            let file = open_session_file(path, Access::ReadAppend { create })?;
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
    ///
    /// When the write or its fsync fails (a full disk, a file size limit, an I/O error), the
    /// bytes it did write are cut off again before the error is returned, so a failed append
    /// leaves no torn line. They are cut only when the file past the old end holds exactly a
    /// prefix of ours: a writer that does not take the lock (pi itself) may have appended in
    /// between, and its line is not ours to remove.
    pub fn append_lines(&mut self, data: &[u8], fsync: bool) -> Result<AppendOutcome> {
        debug_assert!(data.ends_with(b"\n"));
        let start = self.len()?;
        let mut buf = Vec::with_capacity(data.len() + 1);
        let terminated_torn_line = self.lacks_final_newline()?;
        if terminated_torn_line {
            buf.push(b'\n');
        }
        buf.extend_from_slice(data);
        let written = (&self.file).write_all(&buf).and_then(|()| {
            if fsync {
                self.file.sync_data()
            } else {
                Ok(())
            }
        });
        if let Err(e) = written {
            self.cut_back_own_bytes(start, &buf);
            return Err(Error::io(&self.path, e));
        }
        Ok(AppendOutcome {
            start,
            end: start + buf.len() as u64,
            terminated_torn_line,
        })
    }

    /// After a failed append of `buf` at `start`: truncates the file back to `start` when what
    /// lies past it is a prefix of `buf` (best effort; the append's error is what is reported).
    fn cut_back_own_bytes(&self, start: u64, buf: &[u8]) {
        let Ok(len) = self.len() else { return };
        let Some(extra) = len
            .checked_sub(start)
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| n > 0 && n <= buf.len())
        else {
            return;
        };
        let mut seen = vec![0u8; extra];
        if read_exact_at(&self.file, &mut seen, start).is_ok() && seen == buf[..extra] {
            let _ = self.file.set_len(start);
            let _ = self.file.sync_data();
        }
    }

    /// Removes a turn a killed writer cut short at the end of the file (see
    /// `session/turn.rs`): the bytes from the start of its first entry are truncated away
    /// and the truncation synced. The lock is held, so no live writer is in the middle of
    /// it. Returns the new length when it cut.
    pub fn cut_short_turn(&self) -> Result<Option<u64>> {
        let len = self.len()?;
        let start = super::turn::cut_short_turn_start(&self.file, len)
            .map_err(|e| Error::io(&self.path, e))?;
        if let Some(start) = start {
            self.file
                .set_len(start)
                .and_then(|()| self.file.sync_data())
                .map_err(|e| Error::io(&self.path, e))?;
        }
        Ok(start)
    }

    /// Writes `data` (complete lines) as the whole file, in place, if the file holds nothing but
    /// whitespace (spaces, tabs, CR, LF) or nothing at all; returns false and writes nothing
    /// otherwise (another writer got there first).
    ///
    /// In place, on the same inode, as pi's `writeFileSync` of a new session's header does
    /// (pi-mono 0.58.3 session-manager.ts `setSessionFile` → `_rewriteFile`): a hard link to
    /// the file stays one file, and an empty file in a directory this process cannot create
    /// files in can still be started. No bytes are at risk: the whitespace cut first carries
    /// no record, and a crash between the cut and the write leaves an empty file, which the
    /// next open starts the same way.
    pub fn write_over_blank(&mut self, data: &[u8], fsync: bool) -> Result<bool> {
        let existing = self.read_all()?;
        if !existing
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        {
            return Ok(false);
        }
        if !existing.is_empty() {
            self.file.set_len(0).map_err(|e| Error::io(&self.path, e))?;
        }
        self.append_lines(data, fsync)?;
        Ok(true)
    }

    /// Removes stale temp files of this file ([`remove_stale_temps`]); the lock is held.
    pub fn remove_stale_temps(&self) {
        if let Ok(target) = replacement_target(&self.path) {
            remove_stale_temps(&target);
        }
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

/// How [`open_session_file`] opens a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    /// Read and append (what the lock holder needs), creating the file if `create`.
    ReadAppend {
        create: bool,
    },
}

/// Opens a session file without blocking and refuses anything that is not a regular file
/// ([`Error::NotAFile`]) before a byte is read or written: a FIFO would block the open or the
/// read forever, a device (`/dev/null`) reads as an empty file that a writable open would
/// replace, a directory or socket cannot hold a session.
pub fn open_session_file(path: &Path, access: Access) -> Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    if let Access::ReadAppend { create } = access {
        options.append(true).create(create);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) => {
            // A directory (EISDIR), a socket (ENXIO), …: name what the path is.
            if let Ok(meta) = fs::metadata(path) {
                if !meta.is_file() {
                    return Err(not_a_file(path, &meta));
                }
            }
            return Err(Error::io(path, e));
        }
    };
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(not_a_file(path, &meta));
    }
    Ok(file)
}

fn not_a_file(path: &Path, meta: &fs::Metadata) -> Error {
    Error::NotAFile {
        path: path.to_path_buf(),
        kind: file_kind(meta.file_type()),
    }
}

/// What a non-regular file is, for the error message.
fn file_kind(file_type: fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        } else if file_type.is_char_device() {
            return "a character device";
        } else if file_type.is_block_device() {
            return "a block device";
        } else if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}

/// The file a write to `path` must replace: the target when `path` is a symlink (replacing
/// the link itself would split it from the file it names), otherwise `path`.
pub fn replacement_target(path: &Path) -> io::Result<PathBuf> {
    if fs::symlink_metadata(path)?.file_type().is_symlink() {
        fs::canonicalize(path)
    } else {
        Ok(path.to_path_buf())
    }
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

/// Writes a backup of `path` next to it as `<path>.bak-<pid>-<ms>` (OpenClaw's name). A hard
/// link when possible (instant, and the original inode survives the replacement untouched),
/// otherwise a copy with the original's permissions. For a symlink, the backup is of its
/// target and lies next to the target.
pub fn write_backup(path: &Path, now_ms: i64) -> io::Result<PathBuf> {
    let path = &replacement_target(path)?;
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".bak-{}-{}", std::process::id(), now_ms));
    let backup = PathBuf::from(name);
    if fs::hard_link(path, &backup).is_err() {
        fs::copy(path, &backup)?;
    }
    Ok(backup)
}

/// Replaces `path` with new contents atomically: a temp file in the same directory
/// (`.<name>.clawctx-<tag>-<pid>-<ms>.tmp`), written by `write`, given the original's
/// permissions, fsynced, renamed over `path`, then the directory fsynced. On any failure the
/// temp file is removed and `path` is untouched. A symlink is resolved first: its target is
/// replaced and the link stays. The caller holds the lock, so stale temp files of this file
/// (left by a killed writer) are removed first; see [`remove_stale_temps`].
pub fn replace_atomically(
    path: &Path,
    tag: &str,
    now_ms: i64,
    write: impl FnOnce(&mut io::BufWriter<&File>) -> io::Result<()>,
) -> io::Result<()> {
    let path = &replacement_target(path)?;
    remove_stale_temps(path);
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let base = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(
        ".{base}.{TEMP_MARK}{tag}-{}-{now_ms}.tmp",
        std::process::id()
    ));
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

/// What names a temp file as clawctx's: `.<name>.clawctx-<tag>-<pid>-<ms>.tmp`.
const TEMP_MARK: &str = "clawctx-";

/// A temp file whose writer is alive is stale anyway after this long (its pid may have been
/// reused by another process; no replacement takes an hour).
const STALE_TEMP_AGE: Duration = Duration::from_secs(3600);

/// Removes the temp files a killed replacement of `path` (already resolved) left next to it:
/// those whose writer process is gone, or older than an hour. Each is about the size of the
/// file. The caller holds the lock on `path`, so no live writer of this file has one in
/// progress; the pid and age checks are a second guard. Best effort: errors are ignored.
pub fn remove_stale_temps(path: &Path) {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let Some(base) = path.file_name().and_then(|n| n.to_str()) else {
        return;
    };
    let prefix = format!(".{base}.{TEMP_MARK}");
    let Ok(listing) = fs::read_dir(dir) else {
        return;
    };
    for item in listing.flatten() {
        let name = item.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|n| n.strip_suffix(".tmp"))
            .and_then(temp_writer_pid)
        else {
            continue;
        };
        let Ok(meta) = item.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        let old = meta
            .modified()
            .ok()
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age > STALE_TEMP_AGE);
        if old || (pid != std::process::id() && !process_alive(pid)) {
            let _ = fs::remove_file(item.path());
        }
    }
}

/// The pid in a temp name's `<tag>-<pid>-<ms>` part.
fn temp_writer_pid(rest: &str) -> Option<u32> {
    let mut parts = rest.rsplitn(3, '-');
    let ms = parts.next()?;
    let pid = parts.next()?;
    let tag = parts.next()?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(ms) && !tag.is_empty()).then_some(())?;
    pid.parse().ok()
}

#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    // Unknown: only the age rule applies.
    true
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
            .join(format!(".s.jsonl.clawctx-t-{}-3.tmp", std::process::id()));
        fs::write(&taken, b"theirs").unwrap();
        assert!(replace_atomically(&p, "t", 3, |w| w.write_all(b"x\n")).is_err());
        assert_eq!(fs::read(&taken).unwrap(), b"theirs");
        assert_eq!(fs::read(&p).unwrap(), b"new\n");
    }

    #[test]
    fn failed_append_cuts_back_only_its_own_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        fs::write(&p, b"{\"a\":1}\n").unwrap();
        let f = LockedFile::open(&p, false, Duration::from_secs(1)).unwrap();
        // Our partial bytes after the old end: removed.
        fs::write(&p, b"{\"a\":1}\n{\"b\":").unwrap();
        f.cut_back_own_bytes(8, b"{\"b\":2}\n");
        assert_eq!(fs::read(&p).unwrap(), b"{\"a\":1}\n");
        // Someone else's line (a writer without the lock): kept.
        fs::write(&p, b"{\"a\":1}\n{\"c\":3}\n").unwrap();
        f.cut_back_own_bytes(8, b"{\"b\":2}\n");
        assert_eq!(fs::read(&p).unwrap(), b"{\"a\":1}\n{\"c\":3}\n");
    }

    #[cfg(unix)]
    #[test]
    fn special_files_are_refused_unopened_for_writing() {
        let dir = tempfile::tempdir().unwrap();
        for access in [Access::Read, Access::ReadAppend { create: true }] {
            let err = open_session_file(dir.path(), access).err().unwrap();
            assert!(
                matches!(
                    err,
                    Error::NotAFile {
                        kind: "a directory",
                        ..
                    }
                ),
                "{err}"
            );
            let err = open_session_file(Path::new("/dev/null"), access)
                .err()
                .unwrap();
            assert!(
                matches!(
                    err,
                    Error::NotAFile {
                        kind: "a character device",
                        ..
                    }
                ),
                "{err}"
            );
        }
    }

    #[test]
    fn temp_names_carry_the_writer_pid() {
        assert_eq!(temp_writer_pid("repair-123-456"), Some(123));
        assert_eq!(temp_writer_pid("reset-1-2"), Some(1));
        assert_eq!(temp_writer_pid("repair-x-456"), None);
        assert_eq!(temp_writer_pid("123-456"), None);
        assert_eq!(temp_writer_pid("repair-123-"), None);
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
