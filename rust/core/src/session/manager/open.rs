//! Opening a session file, starting a fresh one, and migrating v1/v2 files (pi's
//! `setSessionFile`, `_buildIndex` and `migrateToCurrentVersion`).

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::super::entry::{types, Entry};
use super::super::header::{new_header_fields, Header, CURRENT_SESSION_VERSION};
use super::super::lines::split_lines;
use super::super::persist::{
    open_session_file, replace_atomically, write_backup, Access, LockedFile, WriteOptions,
};
use super::super::read::{
    is_valid_header, probe_before, read_shared, scan_records, LineAction, SkippedLine,
};
use super::super::tree::IdIndex;
use super::*;
use crate::base::js_trim;
use crate::base::{generate_entry_id, random_session_id, IdSource};
use crate::base::{Error, Result};

impl Session {
    /// A new in-memory session that is not bound to a file.
    pub fn in_memory(cwd: &str, session_id: Option<&str>, now_ms: i64) -> Session {
        let id = session_id.map_or_else(random_session_id, str::to_owned);
        let header = Header::from_fields(new_header_fields(&id, now_ms, cwd, None), 1, false);
        Session::from_parts(
            None,
            header,
            Vec::new(),
            CURRENT_SESSION_VERSION,
            Vec::new(),
            WriteOptions::default(),
        )
    }

    /// Creates a new session file at `path` and writes its header. Fails if the file exists
    /// and is not empty.
    pub fn create(
        path: &Path,
        cwd: &str,
        session_id: Option<&str>,
        parent_session: Option<&str>,
        now_ms: i64,
        write: WriteOptions,
    ) -> Result<Session> {
        let id = session_id.map_or_else(random_session_id, str::to_owned);
        let header = Header::from_fields(
            new_header_fields(&id, now_ms, cwd, parent_session),
            1,
            false,
        );
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let mut file = LockedFile::open(path, true, write.lock_timeout)?;
        if !file.is_empty()? {
            return Err(Error::AlreadyExists {
                path: path.to_path_buf(),
            });
        }
        let line = format!("{}\n", header.text.as_str());
        file.append_lines(line.as_bytes(), write.fsync)?;
        Ok(Session::with_header_on_disk(path, header, write))
    }

    /// Opens and parses a session file: salvage of damaged lines, header check, in-memory
    /// migration to v3, index and leaf. The file is only written when it is empty (a header is
    /// written, as pi does), when `on_invalid_header` is `Reset`, or with `rewrite_migrated`.
    pub fn open(
        path: &Path,
        options: &OpenOptions,
        ids: &mut dyn IdSource,
        now_ms: i64,
    ) -> Result<Session> {
        if options.read_only
            && (options.rewrite_migrated || options.on_invalid_header == InvalidHeader::Reset)
        {
            return Err(Error::InvalidArgument(
                "a read-only open cannot rewrite or reset the file".into(),
            ));
        }
        if !options.read_only {
            tidy_after_killed_writer(path)?;
        }
        // The identity of the inode read (not of whatever the path names a moment later).
        let (bytes, file) = read_shared(path)?;
        let identity = super::super::persist::file_identity(&file);
        drop(file);
        Session::open_read(path, bytes, identity, options, ids, now_ms)
    }

    /// Parses a session from its bytes (read from an object store or a file object) as
    /// [`Session::open`] does read-only; `name` only labels errors. The session has no path:
    /// it cannot refresh or append.
    pub fn from_bytes(bytes: Arc<[u8]>, name: &Path, ids: &mut dyn IdSource) -> Result<Session> {
        let options = OpenOptions {
            read_only: true,
            ..Default::default()
        };
        let mut session = Session::open_read(name, bytes, None, &options, ids, 0)?;
        session.path = None;
        Ok(session)
    }

    /// [`Session::open`] once the file's bytes are read.
    pub(super) fn open_read(
        path: &Path,
        bytes: Arc<[u8]>,
        identity: Option<super::super::persist::FileIdentity>,
        options: &OpenOptions,
        ids: &mut dyn IdSource,
        now_ms: i64,
    ) -> Result<Session> {
        // A turn cut short at the end (a writable open has removed it already): not read.
        let bytes = match super::super::turn::cut_short_turn_in(&bytes, true) {
            super::super::turn::TailTurn::CutShortAt(start) => Arc::from(&bytes[..start]),
            _ => bytes,
        };
        let disk_len = bytes.len() as u64;
        let scan_probe_source = Arc::clone(&bytes);
        let scan = scan_records(bytes, 1, false);
        let tail_probe = probe_before(&scan_probe_source, scan.complete_len);
        drop(scan_probe_source);
        let first = scan.records.first();
        if first.is_none_or(|entry| !is_valid_header(entry)) {
            if !scan.has_content && options.read_only {
                return Err(Error::Format {
                    path: path.to_path_buf(),
                    line: 0,
                    reason: "the file is empty".into(),
                });
            }
            if !scan.has_content {
                // An empty (or blank) file: nothing to lose, so start it as pi does, in place.
                return Session::start_in_place(path, options, ids, now_ms);
            }
            let (line, reason) = match first {
                None => (0, "no valid JSON record in the file".to_owned()),
                Some(entry) => (entry.line, describe_bad_header(entry)),
            };
            return match options.on_invalid_header {
                InvalidHeader::Error => Err(Error::Format {
                    path: path.to_path_buf(),
                    line,
                    reason,
                }),
                InvalidHeader::Reset => {
                    let backup = write_backup(path, now_ms).map_err(|e| Error::io(path, e))?;
                    Session::start_fresh(path, Some(backup), options, now_ms)
                }
            };
        }
        // Filter in place: a second vector of entries would hold every entry twice at the peak.
        let mut entries = scan.records;
        let header = Header::from_record(entries.remove(0));
        let mut skipped = scan.skipped;
        entries.retain(|entry| {
            if entry.is_type(types::SESSION) {
                skipped.push(SkippedLine {
                    line: entry.line,
                    action: LineAction::Ignored,
                    reason: "a second session header".into(),
                    records: 1,
                });
                false
            } else {
                true
            }
        });
        let file_version = header.version();
        let mut session = Session::from_parts(
            Some(path.to_path_buf()),
            header,
            entries,
            file_version,
            skipped,
            options.write,
        );
        session.disk_len = disk_len;
        session.disk_lines = scan.complete_lines;
        session.read_only = options.read_only;
        session.open_options = options.clone();
        session.record_tail(scan.complete_len as u64, identity, &tail_probe);
        session.migrate(ids);
        if options.rewrite_migrated {
            session.save_migrated(now_ms)?;
        }
        Ok(session)
    }

    /// Builds a session from entries given as values (no file).
    pub fn from_values(
        header: Option<Map<String, Value>>,
        entries: Vec<Value>,
        ids: &mut dyn IdSource,
    ) -> Session {
        let header = header.unwrap_or_else(|| new_header_fields("", 0, "", None));
        let header = Header::from_fields(header, 1, false);
        let file_version = header.version();
        let entries: Vec<Entry> = entries
            .iter()
            .enumerate()
            .filter_map(|(i, v)| Entry::from_value(v, i + 2))
            .collect();
        let mut session = Session::from_parts(
            None,
            header,
            entries,
            file_version,
            Vec::new(),
            WriteOptions::default(),
        );
        session.migrate(ids);
        session
    }

    /// Starts an empty (or blank) file with a new header written in place under the lock
    /// ([`LockedFile::write_over_blank`]), not by replacing the file (issue 33, N7). When
    /// another writer filled the file meanwhile, it is opened again as it now is.
    fn start_in_place(
        path: &Path,
        options: &OpenOptions,
        ids: &mut dyn IdSource,
        now_ms: i64,
    ) -> Result<Session> {
        let (header, line) = Session::fresh_header(options, now_ms);
        let written = {
            let mut file = LockedFile::open(path, false, options.write.lock_timeout)?;
            file.write_over_blank(line.as_bytes(), options.write.fsync)?
        };
        if !written {
            return Session::open(path, options, ids, now_ms);
        }
        Ok(Session::with_header_on_disk(path, header, options.write))
    }

    /// The header of a new session started by an open, and its line.
    fn fresh_header(options: &OpenOptions, now_ms: i64) -> (Header, String) {
        let id = options
            .fresh_session_id
            .clone()
            .unwrap_or_else(random_session_id);
        let cwd = options.fresh_cwd.clone().unwrap_or_else(|| {
            std::env::current_dir()
                .map(|d| d.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        let header = Header::from_fields(new_header_fields(&id, now_ms, &cwd, None), 1, false);
        let line = format!("{}\n", header.text.as_str());
        (header, line)
    }

    fn start_fresh(
        path: &Path,
        backup: Option<PathBuf>,
        options: &OpenOptions,
        now_ms: i64,
    ) -> Result<Session> {
        let write = options.write;
        let (header, line) = Session::fresh_header(options, now_ms);
        {
            let _lock = LockedFile::open(path, true, write.lock_timeout)?;
            replace_atomically(path, "reset", now_ms, |w| w.write_all(line.as_bytes()))
                .map_err(|e| Error::io(path, e))?;
        }
        let mut session = Session::with_header_on_disk(path, header, write);
        session.backup_path = backup;
        Ok(session)
    }

    /// A new session whose file holds exactly its header line.
    fn with_header_on_disk(path: &Path, header: Header, write: WriteOptions) -> Session {
        let disk_len = header.text.len() as u64 + 1;
        let mut session = Session::from_parts(
            Some(path.to_path_buf()),
            header,
            Vec::new(),
            CURRENT_SESSION_VERSION,
            Vec::new(),
            write,
        );
        session.disk_len = disk_len;
        session.disk_lines = 1;
        let identity = open_session_file(path, Access::Read)
            .ok()
            .as_ref()
            .and_then(super::super::persist::file_identity);
        let probe = probe_before(
            format!("{}\n", session.header.text.as_str()).as_bytes(),
            disk_len as usize,
        );
        session.record_tail(disk_len, identity, &probe);
        session
    }

    pub(super) fn from_parts(
        path: Option<PathBuf>,
        header: Header,
        entries: Vec<Entry>,
        file_version: u64,
        skipped: Vec<SkippedLine>,
        write: WriteOptions,
    ) -> Session {
        let mut session = Session {
            path,
            header,
            entries,
            index: IdIndex::default(),
            leaf: None,
            labels: std::sync::OnceLock::new(),
            file_version,
            skipped,
            write,
            disk_len: 0,
            disk_lines: 0,
            backup_path: None,
            read_only: false,
            tail_start: 0,
            identity: None,
            tail_probe: Vec::new(),
            open_options: OpenOptions::default(),
            context_cache: std::sync::Mutex::new(None),
            index_generation: 0,
            cold: None,
            records_in_runs: 0,
            memory: None,
        };
        session.rebuild_index();
        session
    }

    /// `_buildIndex`: id index (a later duplicate wins), leaf = last entry in file
    /// order, labels in file order (last wins; a falsy label clears).
    pub(super) fn rebuild_index(&mut self) {
        self.index.clear();
        self.labels = std::sync::OnceLock::new();
        self.leaf = None;
        self.records_in_runs = 0;
        // Sized once: growing rehashes into a table twice as large while the old one is held.
        self.index.reserve(&self.entries, self.entries.len());
        for i in 0..self.entries.len() {
            self.index_entry(i);
        }
    }

    pub(super) fn index_entry(&mut self, i: usize) {
        let entry = &self.entries[i];
        self.records_in_runs += entry.records_held() - 1;
        if self.index.insert(&self.entries, i, true) {
            self.index_generation += 1;
        }
        self.leaf = Some(i);
        if let Some(labels) = self.labels.get_mut() {
            apply_label(labels, &self.entries[i]);
        }
    }

    /// Migration v1→v2→v3 in memory (`migrateToCurrentVersion`). Marks changed entries `modified`.
    fn migrate(&mut self, ids: &mut dyn IdSource) {
        let version = self.header.version();
        if version >= CURRENT_SESSION_VERSION {
            return;
        }
        // Migration gives every record an id (v1) and rewrites records one by one.
        if self.records_in_runs > 0 {
            self.entries = self.records().into_owned();
            self.rebuild_index();
        }
        let mut header = self.header.fields.clone();
        let mut values: Vec<Option<Map<String, Value>>> = vec![None; self.entries.len()];
        if version < 2 {
            header.insert("version".into(), 2.into());
            let original_ids: Vec<Option<String>> = self
                .entries
                .iter()
                .map(|e| e.id.as_deref().map(str::to_owned))
                .collect();
            let mut taken: HashSet<String> = HashSet::new();
            let mut new_ids: Vec<String> = Vec::with_capacity(self.entries.len());
            let mut prev: Option<String> = None;
            for (i, entry) in self.entries.iter().enumerate() {
                let mut map = match entry.to_value() {
                    Value::Object(map) => map,
                    _ => continue,
                };
                let id = generate_entry_id(ids, |c| taken.contains(c));
                taken.insert(id.clone());
                map.insert("id".into(), id.clone().into());
                map.insert(
                    "parentId".into(),
                    prev.clone().map_or(Value::Null, Value::from),
                );
                if entry.is_type(types::COMPACTION) {
                    if let Some(index) = map.get("firstKeptEntryIndex").and_then(Value::as_f64) {
                        // The index counts the header as 0. As in pi-mono 0.58.3
                        // `session-manager.ts` (`migrateV1ToV2`), this entry already has its
                        // new id when the index points at it; a later target still has its
                        // pre-migration id (usually none).
                        if index.fract() == 0.0 && index >= 1.0 {
                            let target = index as usize - 1;
                            let target_id = if target < i {
                                new_ids.get(target).cloned()
                            } else if target == i {
                                Some(id.clone())
                            } else {
                                original_ids.get(target).cloned().flatten()
                            };
                            if let Some(target_id) = target_id {
                                map.insert("firstKeptEntryId".into(), target_id.into());
                            }
                        }
                        map.shift_remove("firstKeptEntryIndex");
                    } else if map.get("firstKeptEntryIndex").is_some_and(Value::is_number) {
                        map.shift_remove("firstKeptEntryIndex");
                    }
                }
                new_ids.push(id.clone());
                prev = Some(id);
                values[i] = Some(map);
            }
        }
        header.insert("version".into(), CURRENT_SESSION_VERSION.into());
        for (i, entry) in self.entries.iter().enumerate() {
            let is_hook = entry
                .message()
                .is_some_and(|m| m.role.as_deref() == Some("hookMessage"));
            if !is_hook {
                continue;
            }
            let map = values[i].get_or_insert_with(|| match entry.to_value() {
                Value::Object(map) => map,
                _ => Map::new(),
            });
            if let Some(Value::Object(message)) = map.get_mut("message") {
                message.insert("role".into(), "custom".into());
            }
        }
        for (i, value) in values.into_iter().enumerate() {
            if let Some(map) = value {
                let line = self.entries[i].line;
                if let Some(mut entry) = Entry::from_value(&Value::Object(map), line) {
                    entry.modified = true;
                    self.entries[i] = entry;
                }
            }
        }
        self.header = Header::from_fields(header, self.header.line, true);
        self.rebuild_index();
    }

    /// Whether the in-memory session differs from the file by migration.
    pub fn needs_migration_rewrite(&self) -> bool {
        self.header.modified
    }

    /// Writes the migrated session back (pi's `_rewriteFile`, only when asked): a backup of the original,
    /// then an atomic replacement in which every line migration changed is rewritten, blank
    /// lines are left out and every other line (damaged ones too) keeps its bytes. Returns the
    /// backup path,
    /// or `None` when there was nothing to write.
    pub fn save_migrated(&mut self, now_ms: i64) -> Result<Option<PathBuf>> {
        if !self.header.modified {
            return Ok(None);
        }
        let path = self
            .path
            .clone()
            .ok_or_else(|| Error::InvalidArgument("session is not bound to a file".into()))?;
        let lock = LockedFile::open(&path, false, self.write.lock_timeout)?;
        let bytes = lock.read_all()?;
        if bytes.len() as u64 != self.disk_len {
            return Err(Error::Conflict { path, reason: "the file changed since it was loaded; open it again before saving the migration".into() });
        }
        let mut replaced: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
        replaced
            .entry(self.header.line)
            .or_default()
            .push(self.header.text.as_str());
        for entry in &self.entries {
            if entry.modified {
                replaced
                    .entry(entry.line)
                    .or_default()
                    .push(entry.text.as_str());
            }
        }
        let backup = write_backup(&path, now_ms).map_err(|e| Error::io(&path, e))?;
        replace_atomically(&path, "migrate", now_ms, |w| {
            for line in split_lines(&bytes) {
                match replaced.get(&line.number) {
                    Some(texts) => {
                        for text in texts {
                            w.write_all(text.as_bytes())?;
                            w.write_all(b"\n")?;
                        }
                    }
                    // A blank line holds nothing: pi-mono 0.58.3 rewrites a migrated file
                    // from its entries only, so blank lines go.
                    None if js_trim(&String::from_utf8_lossy(line.bytes)).is_empty() => {}
                    None => {
                        w.write_all(line.bytes)?;
                        w.write_all(b"\n")?;
                    }
                }
            }
            Ok(())
        })
        .map_err(|e| Error::io(&path, e))?;
        drop(lock);
        self.disk_len = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        self.header.modified = false;
        for entry in &mut self.entries {
            entry.modified = false;
        }
        self.file_version = CURRENT_SESSION_VERSION;
        self.backup_path = Some(backup.clone());
        Ok(Some(backup))
    }
}

fn describe_bad_header(entry: &Entry) -> String {
    match entry.entry_type().as_deref() {
        Some(types::SESSION) => "session header has no string \"id\"".to_owned(),
        Some(t) => format!("first record is a {t:?} entry, not a session header"),
        None => "first record has no \"type\"; expected a session header".to_owned(),
    }
}
