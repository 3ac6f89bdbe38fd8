//! A read-only session over bytes held in memory instead of a file: an OpenClaw store's rows
//! handed over by the caller (`clawctx.history.store`). `refresh` reads the bytes handed over
//! since ([`Session::push_memory`]) as a file session reads the bytes appended to its file, with
//! the same [`RefreshReport`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::super::turn::{cut_short_turn_in, TailTurn};
use super::*;
use crate::base::IdSource;
use crate::base::{Error, Result};

/// The bytes a memory session ([`Session::from_memory`]) reads in place of a file.
#[derive(Debug, Clone)]
pub(super) struct MemorySource {
    /// Labels errors in place of a path.
    name: PathBuf,
    /// Every byte handed over, in order (the open's buffer, then each pushed chunk): the
    /// "file". The entries borrow the chunks they were parsed from, so holding them costs no
    /// second copy.
    chunks: Vec<Arc<[u8]>>,
    /// The total length of `chunks`.
    len: u64,
}

impl MemorySource {
    /// The bytes `start..self.len`: the chunk itself when the range is exactly one chunk (the
    /// usual refresh: the rows pushed since), else a copy.
    fn tail(&self, start: u64) -> Arc<[u8]> {
        let mut offset = self.len;
        let mut first = self.chunks.len();
        while first > 0 && offset > start {
            first -= 1;
            offset -= self.chunks[first].len() as u64;
        }
        if offset == start && first + 1 == self.chunks.len() {
            return Arc::clone(&self.chunks[first]);
        }
        let skip = (start - offset) as usize;
        let mut bytes = Vec::with_capacity((self.len - start) as usize);
        for (k, chunk) in self.chunks[first..].iter().enumerate() {
            bytes.extend_from_slice(if k == 0 { &chunk[skip..] } else { chunk });
        }
        Arc::from(bytes)
    }
}

/// `lines` joined as JSONL bytes, each followed by `"\n"`, in one buffer allocated once (the
/// rows of a store handed over as they were fetched, without a join in the caller): the
/// buffer [`Session::from_memory`] and [`Session::push_memory`] take without copying again.
pub fn join_lines(lines: &[&[u8]]) -> Arc<[u8]> {
    let total = lines.iter().map(|line| line.len() + 1).sum();
    // Written in place, not built in a Vec: a Vec turned into an `Arc<[u8]>` is copied again.
    let mut buf = Arc::<[u8]>::new_uninit_slice(total);
    let target = Arc::get_mut(&mut buf).expect("a new Arc is unique");
    let mut at = 0;
    for line in lines {
        // SAFETY: `at + line.len() < total` (a newline follows each line), and a fresh
        // allocation does not overlap `line`.
        unsafe {
            std::ptr::copy_nonoverlapping(
                line.as_ptr(),
                target.as_mut_ptr().add(at).cast::<u8>(),
                line.len(),
            );
        }
        at += line.len();
        target[at].write(b'\n');
        at += 1;
    }
    // SAFETY: every byte of the `total` was written above (the lines and their newlines).
    unsafe { buf.assume_init() }
}

impl Session {
    /// Parses a session from bytes held in memory, as [`Session::open`] parses a file opened
    /// read-only (salvage, header check, migration in memory, index and leaf); `name` labels
    /// errors. The session has no path and never writes; its [`Session::refresh`] reads the
    /// bytes handed over by [`Session::push_memory`] since, as a file session reads the bytes
    /// appended to its file. `bytes` is not copied: the entries borrow it.
    pub fn from_memory(
        bytes: Arc<[u8]>,
        name: &Path,
        ids: &mut dyn IdSource,
        now_ms: i64,
    ) -> Result<Session> {
        let options = OpenOptions {
            read_only: true,
            ..Default::default()
        };
        let len = bytes.len() as u64;
        let mut session =
            Session::open_read(name, Arc::clone(&bytes), None, &options, ids, now_ms)?;
        session.path = None;
        session.memory = Some(Box::new(MemorySource {
            name: name.to_path_buf(),
            chunks: vec![bytes],
            len,
        }));
        Ok(session)
    }

    /// Whether the session reads bytes held in memory ([`Session::from_memory`]).
    pub fn is_memory(&self) -> bool {
        self.memory.is_some()
    }

    /// Hands `bytes` (complete lines, as appended to a file) to a memory session; the next
    /// [`Session::refresh`] reads them. Nothing is parsed here.
    pub fn push_memory(&mut self, bytes: Arc<[u8]>) -> Result<()> {
        let Some(memory) = self.memory.as_mut() else {
            return Err(Error::InvalidArgument(
                "only a session read from memory takes bytes to refresh from".into(),
            ));
        };
        if !bytes.is_empty() {
            memory.len += bytes.len() as u64;
            memory.chunks.push(bytes);
        }
        Ok(())
    }

    /// [`Session::try_refresh`] of a memory session: what a file refresh does when the file
    /// grew by the bytes pushed (it is never replaced, truncated or rewritten).
    pub(super) fn refresh_memory(
        &mut self,
        ids: &mut dyn IdSource,
        now_ms: i64,
    ) -> Result<Option<RefreshReport>> {
        let memory = self.memory.as_deref().expect("checked by the caller");
        if self.header.modified {
            return self.reload_memory(ids, now_ms, "the session has an unsaved migration");
        }
        if memory.len == self.disk_len {
            return Ok(Some(RefreshReport::unchanged()));
        }
        let chunk = memory.tail(self.tail_start);
        let bytes_read = chunk.len() as u64;
        // As a file refresh: a turn cut short at the end is read whole by a later refresh.
        let chunk = match cut_short_turn_in(&chunk, true) {
            TailTurn::CutShortAt(start) => Arc::from(&chunk[..start]),
            _ => chunk,
        };
        Ok(Some(self.read_appended(chunk, bytes_read, None)))
    }

    /// Parses every byte handed over again (the memory twin of a file's full reload).
    fn reload_memory(
        &mut self,
        ids: &mut dyn IdSource,
        now_ms: i64,
        reason: &str,
    ) -> Result<Option<RefreshReport>> {
        let memory = self.memory.as_deref().expect("checked by the caller");
        let all = memory.tail(0);
        let name = memory.name.clone();
        let fresh = Session::from_memory(all, &name, ids, now_ms)?;
        if ids.ran_short() {
            return Ok(None);
        }
        let appended = fresh.record_count();
        let len = fresh.memory.as_deref().map_or(0, |m| m.len);
        *self = fresh;
        Ok(Some(RefreshReport {
            mode: RefreshMode::Full,
            appended_entries: appended,
            bytes_read: len,
            reason: Some(reason.to_owned()),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::RandomIds;

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#;

    fn message(n: usize) -> String {
        let parent = if n == 0 {
            "null".to_owned()
        } else {
            format!("\"m{}\"", n - 1)
        };
        format!(
            r#"{{"type":"message","id":"m{n}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"hi {n}","timestamp":1}}}}"#
        )
    }

    fn lines(range: std::ops::Range<usize>) -> String {
        range.map(|n| message(n) + "\n").collect()
    }

    #[test]
    fn a_memory_session_refreshes_from_pushed_bytes_as_a_file_session_does() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl");
        let start = format!("{HEADER}\n{}", lines(0..3));
        std::fs::write(&file, &start).unwrap();
        let options = OpenOptions {
            read_only: true,
            ..Default::default()
        };
        let mut on_disk = Session::open(&file, &options, &mut RandomIds, 0).unwrap();
        let bytes: Arc<[u8]> = Arc::from(start.as_bytes());
        let mut held = Session::from_memory(bytes, Path::new("mem"), &mut RandomIds, 0).unwrap();
        assert!(held.is_memory() && held.path().is_none());
        assert_eq!(held.records().len(), 3);
        let unchanged = held.refresh(&mut RandomIds, 0).unwrap();
        assert_eq!(unchanged, on_disk.refresh(&mut RandomIds, 0).unwrap());
        assert_eq!(unchanged.mode, RefreshMode::Unchanged);
        for more in [lines(3..5), "{broken\n".to_owned(), lines(5..9)] {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&file)
                .unwrap();
            f.write_all(more.as_bytes()).unwrap();
            held.push_memory(Arc::from(more.as_bytes())).unwrap();
            let report = held.refresh(&mut RandomIds, 0).unwrap();
            assert_eq!(report, on_disk.refresh(&mut RandomIds, 0).unwrap());
            assert_eq!(report.mode, RefreshMode::Incremental);
            let texts = |s: &Session| -> Vec<String> {
                s.records()
                    .iter()
                    .map(|e| e.text.as_str().to_owned())
                    .collect()
            };
            assert_eq!(texts(&held), texts(&on_disk));
            assert_eq!(held.skipped_lines(), on_disk.skipped_lines());
            assert_eq!(held.leaf_index(), on_disk.leaf_index());
        }
        assert_eq!(held.records().len(), 9);
        assert_eq!(held.skipped_lines()[0].line, 7);
        // Two pushes read by one refresh (copied together), then nothing new.
        held.push_memory(Arc::from(lines(9..10).as_bytes()))
            .unwrap();
        held.push_memory(Arc::from(lines(10..11).as_bytes()))
            .unwrap();
        let report = held.refresh(&mut RandomIds, 0).unwrap();
        assert_eq!(report.appended_entries, 2);
        assert_eq!(report.bytes_read, lines(9..11).len() as u64);
        assert_eq!(
            held.refresh(&mut RandomIds, 0).unwrap().mode,
            RefreshMode::Unchanged
        );
        // A file session takes no pushed bytes.
        assert!(on_disk.push_memory(Arc::from(&b"x\n"[..])).is_err());
    }

    #[test]
    fn lines_are_joined_with_a_newline_each() {
        assert_eq!(&*join_lines(&[b"a", b"", b"bc"]), b"a\n\nbc\n");
        assert!(join_lines(&[]).is_empty());
    }

    #[test]
    fn a_migrated_memory_session_reloads_in_full_as_a_file_session_does() {
        let v2 = r#"{"type":"session","version":2,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#;
        let start = format!("{v2}\n{}", lines(0..2));
        let mut held = Session::from_memory(
            Arc::from(start.as_bytes()),
            Path::new("m"),
            &mut RandomIds,
            0,
        )
        .unwrap();
        assert!(held.needs_migration_rewrite());
        held.push_memory(Arc::from(lines(2..3).as_bytes())).unwrap();
        let report = held.refresh(&mut RandomIds, 0).unwrap();
        assert_eq!(report.mode, RefreshMode::Full);
        assert_eq!(report.appended_entries, 3);
        assert_eq!(report.bytes_read, (start.len() + lines(2..3).len()) as u64);
        assert!(held.is_memory());
    }
}
