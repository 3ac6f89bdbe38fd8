//! Refresh: reading what was appended to the file since it was loaded (the hot path of a
//! long session), or loading it again when it was replaced, truncated or rewritten.

use std::fs;
use std::sync::Arc;

use super::super::entry::types;
use super::super::persist::{open_session_file, Access};
use super::super::read::{probe_before, read_at, scan_records, TAIL_PROBE_LEN};
use super::*;
use crate::base::IdSource;
use crate::base::{Error, Result};

/// How [`Session::refresh`] brought the session up to date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefreshMode {
    /// The file had not changed.
    Unchanged,
    /// Only the appended bytes were read.
    Incremental,
    /// The file was loaded again in full.
    Full,
}

impl RefreshMode {
    pub fn as_str(self) -> &'static str {
        match self {
            RefreshMode::Unchanged => "unchanged",
            RefreshMode::Incremental => "incremental",
            RefreshMode::Full => "full",
        }
    }
}

crate::base::python_class! {
    (name = "RefreshReport", module = "clawctx._core.session")
    /// What `Session.refresh()` did (`mode`: "unchanged", "incremental" or "full").
    // What [`Session::refresh`] did. Its Python attributes are the getters in `refresh_py.rs`
    // (`mode` as its name).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct RefreshReport {
        pub mode: RefreshMode,
        /// Entries added (for a full load: all entries).
        pub appended_entries: usize,
        pub bytes_read: u64,
        /// Why a full load was needed.
        pub reason: Option<String>,
    }
}

impl RefreshReport {
    pub(super) fn unchanged() -> Self {
        RefreshReport {
            mode: RefreshMode::Unchanged,
            appended_entries: 0,
            bytes_read: 0,
            reason: None,
        }
    }
}

impl Session {
    pub(super) fn record_tail(
        &mut self,
        tail_start: u64,
        identity: Option<super::super::persist::FileIdentity>,
        probe: &[u8],
    ) {
        self.tail_start = tail_start;
        self.identity = identity;
        // Keep the last bytes before the boundary; an append's probe may be short, so
        // combine it with what was known.
        let mut merged = std::mem::take(&mut self.tail_probe);
        merged.extend_from_slice(probe);
        let keep = merged.len().saturating_sub(TAIL_PROBE_LEN);
        self.tail_probe = merged.split_off(keep);
    }

    /// Reads what was appended to the file since it was loaded (hot path for long sessions).
    ///
    /// Only the bytes after the last complete line read are read and parsed; the index, the
    /// labels and every message's cached facts are kept, and the leaf moves to the newest entry
    /// when entries arrived. Records already held (this session's own appends, a complete
    /// last line that had no `"\n"`) are recognised by id and bytes and not added twice. A file
    /// that was truncated, replaced (another inode) or rewritten (the bytes before the boundary
    /// changed) is loaded again in full. An unsaved migration also forces a full load.
    pub fn refresh(&mut self, ids: &mut dyn IdSource, now_ms: i64) -> Result<RefreshReport> {
        match self.try_refresh(ids, now_ms)? {
            Some(report) => Ok(report),
            None => Err(Error::InvalidArgument(
                "the id source ran short during a reload (use try_refresh)".into(),
            )),
        }
    }

    /// [`Session::refresh`], except that a full load whose migration asked `ids` for more ids
    /// than it had ([`IdSource::ran_short`], e.g. a [`crate::base::DrawnIds`]) is dropped:
    /// `None`, and the session is as it was. The binding uses it to call a Python
    /// `id_factory` with no session lock held (issue 33, N5): a first try finds how many ids
    /// the migration needs, the caller draws them, and the next try uses them.
    pub fn try_refresh(
        &mut self,
        ids: &mut dyn IdSource,
        now_ms: i64,
    ) -> Result<Option<RefreshReport>> {
        if self.memory.is_some() {
            return self.refresh_memory(ids, now_ms);
        }
        let Some(path) = self.path.clone() else {
            return Ok(Some(RefreshReport::unchanged()));
        };
        let mut file = open_session_file(&path, Access::Read)?;
        let identity = super::super::persist::file_identity(&file);
        let len = file.metadata().map_err(|e| Error::io(&path, e))?.len();
        let replaced = identity.is_some() && self.identity.is_some() && identity != self.identity;
        let shrank = len < self.tail_start;
        let rewritten = !replaced && !shrank && !self.tail_matches(&file)?;
        if replaced || shrank || rewritten || self.header.modified {
            let reason = if replaced {
                "the file was replaced"
            } else if shrank {
                "the file was truncated"
            } else if rewritten {
                "the file was rewritten"
            } else {
                "the session has an unsaved migration"
            };
            return self.reload(ids, now_ms, reason, len);
        }
        if len == self.disk_len {
            return Ok(Some(RefreshReport::unchanged()));
        }
        use std::io::{Read, Seek, SeekFrom};
        file.seek(SeekFrom::Start(self.tail_start))
            .map_err(|e| Error::io(&path, e))?;
        let mut chunk = Vec::with_capacity(usize::try_from(len - self.tail_start).unwrap_or(0));
        (&mut file)
            .take(len - self.tail_start)
            .read_to_end(&mut chunk)
            .map_err(|e| Error::io(&path, e))?;
        let bytes_read = chunk.len() as u64;
        // A turn still being written (or cut short by a killed writer) is not read yet: the
        // next refresh reads it whole, or never when a writable open removes it.
        if let super::super::turn::TailTurn::CutShortAt(start) =
            super::super::turn::cut_short_turn_in(&chunk, true)
        {
            chunk.truncate(start);
        }
        Ok(Some(self.read_appended(
            Arc::from(chunk),
            bytes_read,
            identity,
        )))
    }

    /// Parses `chunk`, the bytes after `tail_start` (less a turn cut short at its end), and
    /// adds its records: the incremental half of a refresh, from a file or from memory.
    pub(super) fn read_appended(
        &mut self,
        chunk: Arc<[u8]>,
        bytes_read: u64,
        identity: Option<super::super::persist::FileIdentity>,
    ) -> RefreshReport {
        let len = self.tail_start + chunk.len() as u64;
        let probe_source = Arc::clone(&chunk);
        let scan = scan_records(chunk, self.disk_lines + 1, true);
        let before = self.record_count();
        for entry in scan.records {
            if entry.is_type(types::SESSION) {
                continue;
            }
            let known = entry
                .id
                .as_deref()
                .and_then(|id| self.index.get(&self.entries, id))
                .is_some_and(|i| self.entries[i].text == entry.text);
            if known {
                continue;
            }
            self.entries.push(entry);
            let i = self.entries.len() - 1;
            self.index_entry(i);
        }
        // Lines past the old boundary (an unterminated tail seen before) were read again.
        let boundary = self.disk_lines;
        self.skipped.retain(|s| s.line <= boundary);
        self.skipped.extend(scan.skipped);
        let appended = self.record_count() - before;
        let complete = self.tail_start + scan.complete_len as u64;
        let probe = probe_before(&probe_source, scan.complete_len);
        self.disk_len = len;
        self.disk_lines = scan.complete_lines;
        self.record_tail(complete, identity, &probe);
        RefreshReport {
            mode: RefreshMode::Incremental,
            appended_entries: appended,
            bytes_read,
            reason: None,
        }
    }

    pub(super) fn tail_matches(&self, file: &fs::File) -> Result<bool> {
        if self.tail_probe.is_empty() {
            return Ok(true);
        }
        let start = self.tail_start - self.tail_probe.len() as u64;
        let mut seen = vec![0u8; self.tail_probe.len()];
        match read_at(file, &mut seen, start) {
            Ok(()) => Ok(seen == self.tail_probe),
            Err(_) => Ok(false),
        }
    }

    fn reload(
        &mut self,
        ids: &mut dyn IdSource,
        now_ms: i64,
        reason: &str,
        len: u64,
    ) -> Result<Option<RefreshReport>> {
        let path = self.path.clone().expect("checked by the caller");
        let options = OpenOptions {
            rewrite_migrated: false,
            on_invalid_header: InvalidHeader::Error,
            ..self.open_options.clone()
        };
        let fresh = Session::open(&path, &options, ids, now_ms)?;
        if ids.ran_short() {
            return Ok(None);
        }
        let appended = fresh.record_count();
        let write = self.write;
        *self = fresh;
        self.write = write;
        Ok(Some(RefreshReport {
            mode: RefreshMode::Full,
            appended_entries: appended,
            bytes_read: len,
            reason: Some(reason.to_owned()),
        }))
    }
}
