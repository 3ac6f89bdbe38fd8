//! A loaded session (mirrors pi-mono 0.58.3 `packages/coding-agent/src/core/session-manager.ts`,
//! `SessionManager`): header, entries in file order, the id index, the leaf, labels, opening,
//! migration, refresh and appends.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::entry::{types, Entry};
use super::lines::{nested_deeper_than, split_lines, MAX_RECORD_DEPTH};
use super::persist::{
    open_session_file, replace_atomically, write_backup, Access, LockedFile, WriteOptions,
};
use super::read::{
    is_valid_header, probe_before, read_at, read_shared, scan_records, LineAction, SkippedLine,
    TAIL_PROBE_LEN,
};
use super::tree::{path_to_root, IdIndex, Tree};
use crate::base::{generate_entry_id, random_session_id, IdSource};
use crate::base::{is_truthy, js_trim, ms_to_iso, to_js_string, JsonText};
use crate::base::{Error, Result};

/// pi's `CURRENT_SESSION_VERSION`.
pub const CURRENT_SESSION_VERSION: u64 = 3;

/// The session header (first record).
#[derive(Debug, Clone)]
pub struct Header {
    pub text: JsonText,
    pub fields: Map<String, Value>,
    pub line: usize,
    pub modified: bool,
}

impl Header {
    fn from_fields(fields: Map<String, Value>, line: usize, modified: bool) -> Header {
        let text = JsonText::owned(to_js_string(&Value::Object(fields.clone())));
        Header {
            text,
            fields,
            line,
            modified,
        }
    }

    /// The header as read from the file.
    pub(crate) fn from_record(record: Entry) -> Header {
        Header {
            fields: record.fields().cloned().unwrap_or_default(),
            text: record.text,
            line: record.line,
            modified: false,
        }
    }

    pub fn id(&self) -> Option<&str> {
        self.fields.get("id").and_then(Value::as_str)
    }

    /// `header.version ?? 1` as a number (absent or non-numeric ⇒ 1).
    pub fn version(&self) -> u64 {
        match self.fields.get("version") {
            Some(Value::Number(n)) => n
                .as_u64()
                .or_else(|| n.as_f64().map(|f| f.max(0.0) as u64))
                .unwrap_or(1),
            Some(Value::String(s)) => s.trim().parse().unwrap_or(1),
            _ => 1,
        }
    }
}

/// What to do when the file has content but no valid session header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InvalidHeader {
    /// Fail with [`Error::Format`].
    #[default]
    Error,
    /// Start a fresh session in the same file, as pi does (`setSessionFile`), after backing the
    /// original up next to it.
    Reset,
}

/// Options for [`Session::open`].
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    pub on_invalid_header: InvalidHeader,
    pub write: WriteOptions,
    /// Write the migrated file back right away (atomically, with a backup).
    pub rewrite_migrated: bool,
    /// Never write: an empty file is an error instead of getting a header, and appends fail.
    pub read_only: bool,
    /// Id of the session started when the file is empty or reset (default: a random UUID).
    pub fresh_session_id: Option<String>,
    /// `cwd` of a session started fresh (default: the process's working directory, as pi).
    pub fresh_cwd: Option<String>,
}

/// A session: header, entries, index and leaf, optionally bound to a file that appends go to.
#[derive(Debug)]
pub struct Session {
    path: Option<PathBuf>,
    header: Header,
    entries: Vec<Entry>,
    index: IdIndex,
    leaf: Option<usize>,
    /// Labels by target id, built from the label entries on first use and kept up to date
    /// by appends after that (a file of millions of labels holds none until asked).
    labels: std::sync::OnceLock<Map<String, Value>>,
    file_version: u64,
    skipped: Vec<SkippedLine>,
    write: WriteOptions,
    /// File length when loaded or last written by us (save_migrated checks it).
    disk_len: u64,
    /// Lines the file had when loaded or last written by us.
    disk_lines: usize,
    /// Backup written when the file was reset or rewritten.
    backup_path: Option<PathBuf>,
    read_only: bool,
    /// Offset after the last complete line read: where `refresh` continues.
    tail_start: u64,
    /// The file that was read (device, inode), to notice replacement.
    identity: Option<super::persist::FileIdentity>,
    /// Up to 64 bytes before `tail_start` as read, to notice a rewrite of the same file.
    tail_probe: Vec<u8>,
    /// How the session was opened (a full reload reuses it).
    open_options: OpenOptions,
    /// The last context built, extended in place when entries are appended after its leaf.
    context_cache: std::sync::Mutex<Option<CachedContext>>,
    /// Bumped when an appended entry re-points an existing id (parents may resolve differently).
    index_generation: u64,
    /// Set while only the end of the file is held (see [`Session::open_cold`]).
    cold: Option<Box<super::leaf_context::BackReader>>,
    /// Records held inside inert runs beyond one per run (`records_held() - 1` summed), so
    /// that the record count needs no pass over the entries.
    records_in_runs: usize,
}

#[derive(Debug, Clone)]
struct CachedContext {
    state: super::context::ContextState,
    entries_len: usize,
    index_generation: u64,
}

impl Clone for Session {
    fn clone(&self) -> Self {
        Session {
            path: self.path.clone(),
            header: self.header.clone(),
            entries: self.entries.clone(),
            index: self.index.clone(),
            leaf: self.leaf,
            labels: self.labels.clone(),
            file_version: self.file_version,
            skipped: self.skipped.clone(),
            write: self.write,
            disk_len: self.disk_len,
            disk_lines: self.disk_lines,
            backup_path: self.backup_path.clone(),
            read_only: self.read_only,
            tail_start: self.tail_start,
            identity: self.identity,
            tail_probe: self.tail_probe.clone(),
            open_options: self.open_options.clone(),
            context_cache: std::sync::Mutex::new(None),
            index_generation: self.index_generation,
            cold: self.cold.clone(),
            records_in_runs: self.records_in_runs,
        }
    }
}

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

/// What [`Session::refresh`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshReport {
    pub mode: RefreshMode,
    /// Entries added (for a full load: all entries).
    pub appended_entries: usize,
    pub bytes_read: u64,
    /// Why a full load was needed.
    pub reason: Option<String>,
}

impl RefreshReport {
    fn unchanged() -> Self {
        RefreshReport {
            mode: RefreshMode::Unchanged,
            appended_entries: 0,
            bytes_read: 0,
            reason: None,
        }
    }
}

/// A new header, with pi's key order (`SessionManager.newSession`).
pub fn new_header_fields(
    session_id: &str,
    now_ms: i64,
    cwd: &str,
    parent_session: Option<&str>,
) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("type".into(), types::SESSION.into());
    map.insert("version".into(), CURRENT_SESSION_VERSION.into());
    map.insert("id".into(), session_id.into());
    map.insert("timestamp".into(), ms_to_iso(now_ms).into());
    map.insert("cwd".into(), cwd.into());
    if let Some(parent) = parent_session {
        map.insert("parentSession".into(), parent.into());
    }
    map
}

/// A new entry to append, with the fields pi writes for it (`SessionManager.append*`).
#[derive(Debug, Clone)]
pub enum NewEntry {
    Message(Value),
    ThinkingLevelChange(String),
    ModelChange {
        provider: String,
        model_id: String,
    },
    Compaction {
        summary: String,
        first_kept_entry_id: String,
        tokens_before: Value,
        details: Option<Value>,
        from_hook: Option<bool>,
    },
    Custom {
        custom_type: String,
        data: Option<Value>,
    },
    CustomMessage {
        custom_type: String,
        content: Value,
        display: bool,
        details: Option<Value>,
    },
    Label {
        target_id: String,
        label: Option<String>,
    },
    SessionInfo {
        name: String,
    },
    /// `branchWithSummary`: a child of `branch_from` (`None` = a new root), with
    /// `fromId` = `branch_from` or `"root"`.
    BranchSummary {
        branch_from: Option<String>,
        summary: String,
        details: Option<Value>,
        from_hook: Option<bool>,
    },
}

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
        let identity = super::persist::file_identity(&file);
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
    fn open_read(
        path: &Path,
        bytes: Arc<[u8]>,
        identity: Option<super::persist::FileIdentity>,
        options: &OpenOptions,
        ids: &mut dyn IdSource,
        now_ms: i64,
    ) -> Result<Session> {
        // A turn cut short at the end (a writable open has removed it already): not read.
        let bytes = match super::turn::cut_short_turn_in(&bytes, true) {
            super::turn::TailTurn::CutShortAt(start) => Arc::from(&bytes[..start]),
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
            .and_then(super::persist::file_identity);
        let probe = probe_before(
            format!("{}\n", session.header.text.as_str()).as_bytes(),
            disk_len as usize,
        );
        session.record_tail(disk_len, identity, &probe);
        session
    }

    fn from_parts(
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
        };
        session.rebuild_index();
        session
    }

    /// `_buildIndex`: id index (a later duplicate wins), leaf = last entry in file
    /// order, labels in file order (last wins; a falsy label clears).
    fn rebuild_index(&mut self) {
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

    fn index_entry(&mut self, i: usize) {
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

    // ---- reading ------------------------------------------------------------------------

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    pub fn session_id(&self) -> Option<&str> {
        self.header.id()
    }

    /// The version the file had before migration.
    pub fn file_version(&self) -> u64 {
        self.file_version
    }

    /// The entries as held: what [`Session::index_of`], [`Session::leaf_index`],
    /// [`Session::path_to`], [`Session::children`] and [`Session::find_latest`] index. Inert
    /// records on consecutive lines are held as one run entry ([`Entry::is_inert`]), which
    /// none of those indices ever names; [`Session::records`] lists every record.
    pub fn stored_entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Every record (header excluded) in file order, as pi's `getEntries` lists them: the
    /// held entries, with inert runs taken apart (borrowed when there are none).
    pub fn records(&self) -> Cow<'_, [Entry]> {
        if self.records_in_runs == 0 {
            return Cow::Borrowed(&self.entries);
        }
        let mut records = Vec::with_capacity(self.record_count());
        for entry in &self.entries {
            match entry.records_held() {
                1 => records.push(entry.clone()),
                _ => records.extend(entry.held_records()),
            }
        }
        Cow::Owned(records)
    }

    /// The number of records (header excluded), as [`Session::records`] lists them.
    pub fn record_count(&self) -> usize {
        self.entries.len() + self.records_in_runs
    }

    /// For each held entry, the position of its first record in [`Session::records`].
    fn record_positions(&self) -> Vec<usize> {
        let mut next = 0;
        self.entries
            .iter()
            .map(|entry| {
                let position = next;
                next += entry.records_held();
                position
            })
            .collect()
    }

    pub fn skipped_lines(&self) -> &[SkippedLine] {
        &self.skipped
    }

    pub fn backup_path(&self) -> Option<&Path> {
        self.backup_path.as_deref()
    }

    /// `buildSessionContext` for a leaf, reusing the last context built: when the leaf
    /// is reached from that context's leaf through entries appended since (the usual case
    /// after `refresh` or an append), only those entries are added. A compaction among them,
    /// an id re-pointed by a duplicate, or any other leaf rebuilds from the path.
    pub fn context(
        &self,
        leaf: super::context::LeafSelector<'_>,
    ) -> super::context::SessionContext {
        use super::context::{resolve_leaf, ContextState, SessionContext};
        let Some(leaf_index) = resolve_leaf(&self.entries, &self.index, leaf) else {
            return SessionContext::empty();
        };
        let mut cache = self
            .context_cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let reused = cache
            .as_ref()
            .filter(|c| c.index_generation == self.index_generation)
            .and_then(|c| {
                if c.state.leaf == leaf_index && c.entries_len == self.entries.len() {
                    return Some(c.state.clone());
                }
                // Walk back from the leaf through entries appended since the cache was built.
                let mut segment = Vec::new();
                let mut current = Some(leaf_index);
                while let Some(i) = current {
                    if i == c.state.leaf {
                        segment.reverse();
                        return if segment.is_empty() {
                            Some(c.state.clone())
                        } else {
                            c.state.extended(&self.entries, &segment)
                        };
                    }
                    if i < c.entries_len {
                        return None;
                    }
                    segment.push(i);
                    current = self.entries[i]
                        .parent_id
                        .as_deref()
                        .filter(|p| !p.is_empty())
                        .and_then(|p| self.index.get(&self.entries, p));
                }
                None
            });
        let state = reused.unwrap_or_else(|| {
            ContextState::for_path(
                &self.entries,
                &path_to_root(&self.entries, &self.index, leaf_index),
            )
        });
        let context = state.to_context(&self.entries);
        *cache = Some(CachedContext {
            state,
            entries_len: self.entries.len(),
            index_generation: self.index_generation,
        });
        context
    }

    /// The id index the session maintains (no need to rebuild it per context).
    pub fn id_index(&self) -> &IdIndex {
        &self.index
    }

    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.index.get(&self.entries, id)
    }

    pub fn get_entry(&self, id: &str) -> Option<&Entry> {
        self.index_of(id).map(|i| &self.entries[i])
    }

    /// Index of the leaf entry (`None` after [`Session::reset_leaf`] or with no entries).
    pub fn leaf_index(&self) -> Option<usize> {
        self.leaf
    }

    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf.and_then(|i| self.entries[i].id.as_deref())
    }

    pub fn labels(&self) -> &Map<String, Value> {
        self.labels.get_or_init(|| {
            let mut labels = Map::new();
            for entry in &self.entries {
                apply_label(&mut labels, entry);
            }
            labels
        })
    }

    pub fn label(&self, id: &str) -> Option<&Value> {
        self.labels().get(id)
    }

    /// `getSessionName`: the name of the latest `session_info` entry with a truthy name.
    pub fn session_name(&self) -> Option<String> {
        self.entries
            .iter()
            .rev()
            .filter(|e| e.is_type(types::SESSION_INFO))
            .find_map(|e| match e.field_uncached("name") {
                Some(Value::String(name)) if !name.is_empty() => Some(name),
                _ => None,
            })
    }

    /// Entry indices from the root to `leaf` (`getBranch`). Stops at a missing
    /// parent, and at a repeated entry so a cyclic file cannot hang it.
    pub fn path_to(&self, leaf: usize) -> Vec<usize> {
        path_to_root(&self.entries, &self.index, leaf)
    }

    /// Indices of the entries whose `parentId` is `id`, in file order.
    pub fn children(&self, id: &str) -> Vec<usize> {
        self.entries
            .iter()
            .enumerate()
            .filter(|(i, e)| {
                e.parent_id.as_deref() == Some(id)
                    && e.id
                        .as_deref()
                        .and_then(|eid| self.index.get(&self.entries, eid))
                        == Some(*i)
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// `getTree`: roots (null parent, self parent or unknown parent) and each
    /// entry's children sorted by timestamp (oldest first; unparsable timestamps first, ties
    /// in file order). Flat, so deep sessions cannot overflow a stack.
    pub fn tree(&self) -> Tree {
        // Indices of the tree are positions in `records()`; parents resolve through the index
        // of held entries, mapped to their records' positions.
        let records = self.records();
        let positions = self.record_positions();
        let mut roots = Vec::new();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); records.len()];
        for (i, entry) in records.iter().enumerate() {
            let parent = match entry.parent_id.as_deref() {
                None => None,
                Some(p) if Some(p) == entry.id.as_deref() => None,
                Some(p) => self.index.get(&self.entries, p).map(|held| positions[held]),
            };
            match parent {
                Some(p) => children[p].push(i),
                None => roots.push(i),
            }
        }
        let stamps: Vec<i64> = records
            .iter()
            .map(|e| e.timestamp_ms().unwrap_or(i64::MIN))
            .collect();
        for list in &mut children {
            list.sort_by_key(|&i| stamps[i]);
        }
        Tree { roots, children }
    }

    // ---- writing ------------------------------------------------------------------------

    /// Moves the leaf to `id` (`branch`). Errors if unknown.
    pub fn branch(&mut self, id: &str) -> Result<()> {
        if self.index_of(id).is_none() {
            self.load_past()?;
        }
        let index = self
            .index_of(id)
            .ok_or_else(|| Error::EntryNotFound(id.to_owned()))?;
        self.leaf = Some(index);
        Ok(())
    }

    /// Sets the leaf to none: the next append starts a new root.
    pub fn reset_leaf(&mut self) {
        self.leaf = None;
    }

    fn record_tail(
        &mut self,
        tail_start: u64,
        identity: Option<super::persist::FileIdentity>,
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
        let Some(path) = self.path.clone() else {
            return Ok(RefreshReport::unchanged());
        };
        let mut file = open_session_file(&path, Access::Read)?;
        let identity = super::persist::file_identity(&file);
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
            return Ok(RefreshReport::unchanged());
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
        if let super::turn::TailTurn::CutShortAt(start) =
            super::turn::cut_short_turn_in(&chunk, true)
        {
            chunk.truncate(start);
        }
        let len = self.tail_start + chunk.len() as u64;
        let chunk: Arc<[u8]> = Arc::from(chunk);
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
        Ok(RefreshReport {
            mode: RefreshMode::Incremental,
            appended_entries: appended,
            bytes_read,
            reason: None,
        })
    }

    fn tail_matches(&self, file: &fs::File) -> Result<bool> {
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
    ) -> Result<RefreshReport> {
        let path = self.path.clone().expect("checked by the caller");
        let options = OpenOptions {
            rewrite_migrated: false,
            on_invalid_header: InvalidHeader::Error,
            ..self.open_options.clone()
        };
        let fresh = Session::open(&path, &options, ids, now_ms)?;
        let appended = fresh.record_count();
        let write = self.write;
        *self = fresh;
        self.write = write;
        Ok(RefreshReport {
            mode: RefreshMode::Full,
            appended_entries: appended,
            bytes_read: len,
            reason: Some(reason.to_owned()),
        })
    }

    fn check_writable(&self) -> Result<()> {
        if self.read_only {
            return Err(Error::InvalidArgument(
                "the session was opened read-only".into(),
            ));
        }
        Ok(())
    }

    /// A fresh entry id not used in this session, drawn from `ids` (`generateId`).
    pub fn next_entry_id(&self, ids: &mut dyn IdSource) -> String {
        generate_entry_id(ids, |c| self.index.contains(&self.entries, c))
    }

    /// Appends an entry as a child of the leaf and moves the leaf to it. The line is written
    /// (under the lock) before the session changes in memory, so memory never runs ahead of
    /// the file. Returns the new id.
    pub fn append(
        &mut self,
        entry: NewEntry,
        ids: &mut dyn IdSource,
        now_ms: i64,
    ) -> Result<String> {
        let id = self.next_free_entry_id(ids)?;
        self.append_with_id(entry, id, now_ms)
    }

    /// [`Session::append`] with an id drawn beforehand by [`Session::next_entry_id`].
    pub fn append_with_id(&mut self, entry: NewEntry, id: String, now_ms: i64) -> Result<String> {
        self.check_writable()?;
        // A label or branch target that a cold session does not hold may be in the past.
        let target = match &entry {
            NewEntry::Label { target_id, .. } => Some(target_id.as_str()),
            NewEntry::BranchSummary {
                branch_from: Some(from),
                ..
            } => Some(from.as_str()),
            _ => None,
        };
        if target.is_some_and(|t| !self.index.contains(&self.entries, t)) {
            self.load_past()?;
        }
        if self.index.contains(&self.entries, id.as_str()) || id.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "entry id {id:?} is empty or already used"
            )));
        }
        let parent = match &entry {
            NewEntry::BranchSummary { branch_from, .. } => branch_from.clone(),
            _ => self.leaf_id().map(str::to_owned),
        };
        match &entry {
            NewEntry::Label { target_id, .. }
                if !self.index.contains(&self.entries, target_id.as_str()) =>
            {
                return Err(Error::EntryNotFound(target_id.clone()));
            }
            NewEntry::BranchSummary {
                branch_from: Some(from),
                ..
            } if !self.index.contains(&self.entries, from.as_str()) => {
                return Err(Error::EntryNotFound(from.clone()));
            }
            NewEntry::Message(message) => validate_message(message)?,
            _ => {}
        }
        if self.header.modified && self.path.is_some() {
            return Err(Error::Conflict {
                path: self.path.clone().unwrap_or_default(),
                reason: format!(
                    "the file is a version {} session; call save_migrated() (or open with rewrite_migrated) before appending",
                    self.file_version
                ),
            });
        }
        let value = entry_value(entry, &id, parent, now_ms);
        let text = to_js_string(&value);
        // Never write a line the readers would skip (issue 33, N3): a message read back from a
        // file nests at most one level less than its line, so it is always accepted again.
        if nested_deeper_than(text.as_bytes(), MAX_RECORD_DEPTH) {
            return Err(Error::InvalidArgument(format!(
                "the entry would be nested deeper than {MAX_RECORD_DEPTH} levels (its message or data deeper than {} levels), which JSON readers cannot read back",
                MAX_RECORD_DEPTH - 1
            )));
        }
        let mut line = self.disk_lines + 1;
        if let Some(path) = &self.path {
            let mut file = LockedFile::open(path, false, self.write.lock_timeout)?;
            let mut bytes = Vec::with_capacity(text.len() + 1);
            bytes.extend_from_slice(text.as_bytes());
            bytes.push(b'\n');
            let outcome = file.append_lines(&bytes, self.write.fsync)?;
            // Advance what counts as read only when nobody else wrote since our last read;
            // otherwise `refresh` reads their lines (and skips ours, already known).
            let nothing_unread = outcome.start == self.disk_len && self.tail_start == self.disk_len;
            if nothing_unread && !outcome.terminated_torn_line {
                self.disk_len = outcome.end;
                self.disk_lines = line;
                let probe = probe_before(&bytes, bytes.len());
                self.record_tail(outcome.end, file.identity(), &probe);
            } else if outcome.terminated_torn_line {
                line += 1;
            }
        } else {
            self.disk_lines = line;
        }
        // The line is on disk already; an entry the reader could not parse back would be
        // missing from memory until the next open, so say so instead of panicking.
        let entry = Entry::parse(JsonText::owned(text), line).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "entry {id:?} was written but cannot be read back; open the session again"
            ))
        })?;
        self.entries.push(entry);
        let i = self.entries.len() - 1;
        self.index_entry(i);
        Ok(id)
    }
}

// ---- turns: several messages appended in one write, once --------------------------------

/// What [`Session::append_turn`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnAppend {
    /// The ids of the turn's entries, in order.
    pub ids: Vec<String>,
    /// The turn was on the branch already (same key): nothing was written.
    pub duplicate: bool,
}

impl Session {
    /// The ids of the turn with this key on the leaf's branch, searched from the leaf back to
    /// `since` (an entry id, excluded: where the turn was to be appended) or the root. A cold
    /// session reads back only when the branch leaves the part it holds.
    pub fn find_turn(&mut self, key: &str, since: Option<&str>) -> Result<Option<Vec<String>>> {
        'walk: loop {
            // Entries from the leaf back, newest first.
            let mut newer: Vec<&str> = Vec::new();
            let mut at = self.leaf;
            let mut steps = 0usize;
            while let Some(i) = at {
                let entry = &self.entries[i];
                let Some(id) = entry.id.as_deref() else { break };
                if since == Some(id) || steps > self.entries.len() {
                    break; // reached `since`, or a cycle
                }
                steps += 1;
                if let Some(mark) = super::TurnMark::of_text(entry.text.as_str()) {
                    if mark.part == 1 && mark.key.as_deref() == Some(key) {
                        let later = usize::try_from(mark.of - 1).unwrap_or(usize::MAX);
                        let mut ids = vec![id.to_owned()];
                        ids.extend(newer.iter().rev().take(later).map(|s| (*s).to_owned()));
                        return Ok(Some(ids));
                    }
                }
                newer.push(id);
                at = match entry.parent_id.as_deref() {
                    None => None,
                    Some(parent) if parent == id => None,
                    Some(parent) => match self.index_of(parent) {
                        Some(p) => Some(p),
                        None if self.cold.is_some() => {
                            self.load_past()?;
                            continue 'walk;
                        }
                        None => None,
                    },
                };
            }
            return Ok(None);
        }
    }

    /// Appends `messages` as one turn: children of the leaf in order, the leaf moved to the
    /// last. Every message is checked and every line built before the file is touched; the
    /// lines go out in one locked write with one fsync, and memory changes only after it
    /// succeeded (a failed write is cut back off the file). `ids` are the new ids, one per
    /// message (drawn with [`Session::next_entry_id`]). With a `key`, a turn with that key
    /// already on the branch (see [`Session::find_turn`]) is not written again: its ids come
    /// back with `duplicate`. Entries of a turn of two or more carry the turn mark (see
    /// `session/turn.rs`), which lets an open drop a turn a crash cut short.
    pub fn append_turn(
        &mut self,
        messages: Vec<Value>,
        key: Option<&str>,
        since: Option<&str>,
        ids: Vec<String>,
        now_ms: i64,
    ) -> Result<TurnAppend> {
        self.check_writable()?;
        if ids.len() != messages.len() {
            return Err(Error::InvalidArgument(
                "one new id is needed per message".into(),
            ));
        }
        for (i, message) in messages.iter().enumerate() {
            validate_message(message).map_err(|e| match e {
                Error::InvalidArgument(reason) => {
                    Error::InvalidArgument(format!("message {i} of the turn: {reason}"))
                }
                other => other,
            })?;
        }
        if let Some(key) = key {
            if key.is_empty() {
                return Err(Error::InvalidArgument("the turn key is empty".into()));
            }
            if let Some(found) = self.find_turn(key, since)? {
                return Ok(TurnAppend {
                    ids: found,
                    duplicate: true,
                });
            }
        }
        if messages.is_empty() {
            return Ok(TurnAppend {
                ids: Vec::new(),
                duplicate: false,
            });
        }
        let mut seen = HashSet::new();
        for id in &ids {
            if id.is_empty() || self.index.contains(&self.entries, id.as_str()) || !seen.insert(id)
            {
                return Err(Error::InvalidArgument(format!(
                    "entry id {id:?} is empty or already used"
                )));
            }
        }
        if self.header.modified && self.path.is_some() {
            return Err(Error::Conflict {
                path: self.path.clone().unwrap_or_default(),
                reason: format!(
                    "the file is a version {} session; call save_migrated() (or open with rewrite_migrated) before appending",
                    self.file_version
                ),
            });
        }
        let count = messages.len() as u64;
        let mut parent = self.leaf_id().map(str::to_owned);
        let mut texts = Vec::with_capacity(messages.len());
        let mut bytes = Vec::new();
        for (i, (message, id)) in messages.into_iter().zip(&ids).enumerate() {
            let mut value = entry_value(NewEntry::Message(message), id, parent.take(), now_ms);
            if count > 1 || key.is_some() {
                let mark = super::TurnMark {
                    key: (i == 0).then(|| key.map(str::to_owned)).flatten(),
                    part: i as u64 + 1,
                    of: count,
                };
                if let Value::Object(map) = &mut value {
                    map.insert(super::TURN_FIELD.to_owned(), mark.to_value());
                }
            }
            let text = to_js_string(&value);
            bytes.extend_from_slice(text.as_bytes());
            bytes.push(b'\n');
            texts.push(text);
            parent = Some(id.clone());
        }
        // Parsed before the write: an entry that could not be read back fails the turn here.
        let mut entries = Vec::with_capacity(texts.len());
        for (i, text) in texts.into_iter().enumerate() {
            let entry = Entry::parse(JsonText::owned(text), 0).ok_or_else(|| {
                Error::InvalidArgument(format!("message {i} of the turn cannot be read back"))
            })?;
            entries.push(entry);
        }
        let mut line = self.disk_lines + 1;
        if let Some(path) = &self.path {
            let mut file = LockedFile::open(path, false, self.write.lock_timeout)?;
            // A turn a killed writer left cut short goes before ours follows it.
            file.cut_short_turn()?;
            let outcome = file.append_lines(&bytes, self.write.fsync)?;
            let nothing_unread = outcome.start == self.disk_len && self.tail_start == self.disk_len;
            if nothing_unread && !outcome.terminated_torn_line {
                self.disk_len = outcome.end;
                self.disk_lines += entries.len();
                let probe = probe_before(&bytes, bytes.len());
                self.record_tail(outcome.end, file.identity(), &probe);
            } else if outcome.terminated_torn_line {
                line += 1;
            }
        } else {
            self.disk_lines += entries.len();
        }
        for mut entry in entries {
            entry.line = line;
            line += 1;
            self.entries.push(entry);
            let i = self.entries.len() - 1;
            self.index_entry(i);
        }
        Ok(TurnAppend {
            ids,
            duplicate: false,
        })
    }
}

// ---- cold start: the end of the file first, the rest when something asks for it ----------

impl Session {
    /// Opens a session from the end of its file: the header and the entries read backwards
    /// until the last entry's messages are settled (as [`super::LeafContextReader`] reads
    /// them), usually the last few MB of a long compacted session. The session then refreshes
    /// and appends as an opened one does (appends go to the same lock, with the leaf as
    /// parent); [`Session::leaf_context`], [`Session::find_entry`] and
    /// [`Session::find_latest`] read further back only as far as they need, and
    /// [`Session::load_past`] (called by anything that needs every entry) opens the file in
    /// full. While cold, [`Session::records`], the index, labels, tree, skipped lines and
    /// line numbers cover only the part held.
    ///
    /// Files a full open must handle (migration, a header that is missing, invalid, damaged or
    /// shares its line, an empty file) and files whose messages need every line are opened in
    /// full, as [`Session::open`] does.
    pub fn open_cold(
        path: &Path,
        options: &OpenOptions,
        ids: &mut dyn IdSource,
        now_ms: i64,
    ) -> Result<Session> {
        Session::open_cold_with(path, options, &super::TailOptions::default(), ids, now_ms)
    }

    /// [`Session::open_cold`] with the chunk sizes of the backward read.
    pub(super) fn open_cold_with(
        path: &Path,
        options: &OpenOptions,
        tail: &super::TailOptions,
        ids: &mut dyn IdSource,
        now_ms: i64,
    ) -> Result<Session> {
        let start = if options.read_only
            && (options.rewrite_migrated || options.on_invalid_header == InvalidHeader::Reset)
        {
            None // `open` says why this is refused
        } else {
            super::leaf_context::cold_start(path, tail)?
        };
        let Some(start) = start else {
            return Session::open(path, options, ids, now_ms);
        };
        // A turn cut short at the end: `open` removes it (writable) or reads around it.
        if start
            .entries
            .last()
            .and_then(|e| super::TurnMark::of_text(e.text.as_str()))
            .is_some_and(|mark| mark.part < mark.of)
        {
            return Session::open(path, options, ids, now_ms);
        }
        if !options.read_only {
            tidy_after_killed_writer(path)?;
        }
        let header = Header::from_record(start.header);
        let file_version = header.version();
        let mut session = Session::from_parts(
            Some(path.to_path_buf()),
            header,
            start.entries,
            file_version,
            Vec::new(),
            options.write,
        );
        session.disk_len = start.file_len;
        session.read_only = options.read_only;
        session.open_options = options.clone();
        session.record_tail(start.complete_len, start.identity, &start.probe);
        session.cold = Some(Box::new(start.reader));
        Ok(session)
    }

    /// Whether only the end of the file is held (opened by [`Session::open_cold`] and not
    /// loaded in full since).
    pub fn is_cold(&self) -> bool {
        self.cold.is_some()
    }

    /// Bytes read backwards while cold (`None` once loaded in full).
    pub fn cold_bytes_read(&self) -> Option<u64> {
        self.cold.as_ref().map(|r| r.bytes_read())
    }

    /// Opens the file in full when the session is cold (returns whether it did). When the
    /// file is as it was last read or written, a leaf moved by `branch` or `reset_leaf` is
    /// kept; otherwise the leaf is the last entry, as after a full `refresh`. Entries another
    /// writer appended since the last `refresh` are loaded too.
    pub fn load_past(&mut self) -> Result<bool> {
        if self.cold.is_none() {
            return Ok(false);
        }
        let path = self.path.clone().expect("a cold session has a file");
        let file = open_session_file(&path, Access::Read)?;
        let identity = super::persist::file_identity(&file);
        let len = file.metadata().map_err(|e| Error::io(&path, e))?.len();
        let same_file = identity.is_none() || self.identity.is_none() || identity == self.identity;
        let unchanged = same_file && len == self.disk_len && self.tail_matches(&file)?;
        drop(file);
        let moved_leaf = (self.leaf != self.entries.len().checked_sub(1))
            .then(|| self.leaf.and_then(|i| self.entries[i].id.clone()));
        let options = OpenOptions {
            rewrite_migrated: false,
            on_invalid_header: InvalidHeader::Error,
            ..self.open_options.clone()
        };
        let fresh = Session::open(&path, &options, &mut crate::base::RandomIds, 0)?;
        let write = self.write;
        *self = fresh;
        self.write = write;
        if let (true, Some(leaf)) = (unchanged, moved_leaf) {
            self.leaf = leaf.and_then(|id| self.index_of(&id));
        }
        Ok(true)
    }

    /// Reads one more chunk of a cold session's file backwards (the whole rest, in full, when
    /// it would reach the header). Indices of the entries held shift; the leaf stays put.
    fn read_back(&mut self) -> Result<()> {
        let Some(reader) = self.cold.as_mut() else {
            return Ok(());
        };
        if reader.next_reaches_header() {
            self.load_past()?;
            return Ok(());
        }
        let older = reader.read_chunk()?;
        let shift = older.len();
        if shift == 0 {
            return Ok(());
        }
        let leaf = self.leaf;
        self.entries.splice(0..0, older);
        self.rebuild_index();
        self.leaf = leaf.map(|i| i + shift);
        self.index_generation += 1;
        *self
            .context_cache
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = None;
        Ok(())
    }

    /// `buildSessionContext` for `leaf_id` (`None`: the session's leaf, or the empty context
    /// after `reset_leaf`; an unknown id falls back to the last entry, as in pi). On a cold
    /// session, reads backwards only as far as the context needs: with `messages_only`, its
    /// messages (the thinking level and model of the result are then not meant to be read).
    pub fn leaf_context(
        &mut self,
        leaf_id: Option<&str>,
        messages_only: bool,
    ) -> Result<super::context::SessionContext> {
        use super::context::{resolve_leaf, LeafSelector, SessionContext};
        loop {
            let selector = match (leaf_id, self.leaf) {
                (Some(id), _) => LeafSelector::Id(id),
                (None, Some(i)) => LeafSelector::Index(i),
                (None, None) => LeafSelector::Null,
            };
            if self.cold.is_none() {
                return Ok(self.context(selector));
            }
            if leaf_id.is_some_and(|id| !id.is_empty() && !self.index.contains(&self.entries, id)) {
                self.load_past()?;
                continue;
            }
            let Some(leaf) = resolve_leaf(&self.entries, &self.index, selector) else {
                return Ok(SessionContext::empty());
            };
            let walk = super::leaf_context::LoadedPath::walk(&self.entries, &self.index, leaf);
            if walk.settled(messages_only) {
                return Ok(walk.to_context(&self.entries));
            }
            self.read_back()?;
        }
    }

    /// The index of the entry with this id, loading the past when a cold session does not
    /// hold it.
    pub fn find_entry(&mut self, id: &str) -> Result<Option<usize>> {
        if self.index_of(id).is_none() {
            self.load_past()?;
        }
        Ok(self.index_of(id))
    }

    /// The index of the newest entry that `matches`, reading a cold session backwards until
    /// one is found.
    pub fn find_latest(&mut self, matches: impl Fn(&Entry) -> bool) -> Result<Option<usize>> {
        let mut searched_from = self.entries.len();
        loop {
            if let Some(i) = self.entries[..searched_from].iter().rposition(&matches) {
                return Ok(Some(i));
            }
            if self.cold.is_none() {
                return Ok(None);
            }
            let held = self.entries.len();
            self.read_back()?;
            // After a chunk only its entries (now in front) are new; after a full load,
            // search them all.
            searched_from = if self.cold.is_some() {
                self.entries.len() - held
            } else {
                self.entries.len()
            };
        }
    }

    /// Whether `id` (as a JSON string) occurs in the part of a cold session's file not read
    /// yet: an id drawn for an append must not repeat an old one (`generateId` checks the
    /// whole index). A byte search over the unread part, no parsing; a match inside other
    /// text only costs another draw. An old id written with JSON escapes is not recognised.
    pub fn unread_holds_id(&self, id: &str) -> Result<bool> {
        match &self.cold {
            None => Ok(false),
            Some(reader) => reader.unread_contains(to_js_string(&Value::from(id)).as_bytes()),
        }
    }

    /// Whether `id` may name a new entry: not empty, not an entry's id, and (cold session)
    /// not in the part of the file not read yet.
    pub fn id_is_free(&self, id: &str) -> Result<bool> {
        if id.is_empty() || self.index.contains(&self.entries, id) {
            return Ok(false);
        }
        Ok(!self.unread_holds_id(id)?)
    }

    /// [`Session::next_entry_id`], also free in the unread part of a cold session.
    pub fn next_free_entry_id(&self, ids: &mut dyn IdSource) -> Result<String> {
        for _ in 0..100 {
            let id = self.next_entry_id(ids);
            if !self.unread_holds_id(&id)? {
                return Ok(id);
            }
        }
        Ok(random_session_id())
    }
}

/// A label entry's effect on the labels (`_buildIndex`): its target gets the label, moved to
/// the end of the order; a falsy label clears the target's.
fn apply_label(labels: &mut Map<String, Value>, entry: &Entry) {
    if !entry.is_type(types::LABEL) {
        return;
    }
    // Read without keeping the entry's parsed fields (one map per label otherwise).
    if let Some(Value::String(target)) = entry.field_uncached("targetId") {
        labels.shift_remove(&target);
        match entry.field_uncached("label") {
            Some(label) if is_truthy(&label) => {
                labels.insert(target, label);
            }
            _ => {}
        }
    }
}

/// What a writable open does first, when nobody holds the lock (a holder may be writing):
/// removes the temp files a killed replacement left and a turn a killed writer cut short.
fn tidy_after_killed_writer(path: &Path) -> Result<()> {
    if let Ok(lock) = LockedFile::open(path, false, std::time::Duration::ZERO) {
        lock.remove_stale_temps();
        lock.cut_short_turn()?;
    }
    Ok(())
}

fn describe_bad_header(entry: &Entry) -> String {
    match entry.entry_type().as_deref() {
        Some(types::SESSION) => "session header has no string \"id\"".to_owned(),
        Some(t) => format!("first record is a {t:?} entry, not a session header"),
        None => "first record has no \"type\"; expected a session header".to_owned(),
    }
}

fn validate_message(message: &Value) -> Result<()> {
    let Some(obj) = message.as_object() else {
        return Err(Error::InvalidArgument("a message must be an object".into()));
    };
    match obj.get("role").and_then(Value::as_str).map(js_trim) {
        Some("branchSummary" | "compactionSummary") => Err(Error::InvalidArgument(
            "branchSummary and compactionSummary messages are synthesized from entries; use branch_with_summary() or append_compaction()".into(),
        )),
        Some(role) if !role.is_empty() => Ok(()),
        _ => Err(Error::InvalidArgument("a message needs a non-empty string \"role\"".into())),
    }
}

/// The entry object with pi's key order for each type (session-manager.ts).
fn entry_value(entry: NewEntry, id: &str, parent: Option<String>, now_ms: i64) -> Value {
    let head = |ty: &str| -> Vec<(&'static str, Option<Value>)> {
        vec![
            ("type", Some(Value::from(ty))),
            ("id", Some(Value::from(id))),
            (
                "parentId",
                Some(parent.clone().map_or(Value::Null, Value::from)),
            ),
            ("timestamp", Some(Value::from(ms_to_iso(now_ms)))),
        ]
    };
    let build = |fields: Vec<(&'static str, Option<Value>)>| -> Value {
        let mut map = Map::new();
        for (k, v) in fields {
            if let Some(v) = v {
                map.insert(k.to_owned(), v);
            }
        }
        Value::Object(map)
    };
    match entry {
        NewEntry::Message(message) => {
            build([head(types::MESSAGE), vec![("message", Some(message))]].concat())
        }
        NewEntry::ThinkingLevelChange(level) => build(
            [
                head(types::THINKING_LEVEL_CHANGE),
                vec![("thinkingLevel", Some(level.into()))],
            ]
            .concat(),
        ),
        NewEntry::ModelChange { provider, model_id } => build(
            [
                head(types::MODEL_CHANGE),
                vec![
                    ("provider", Some(provider.into())),
                    ("modelId", Some(model_id.into())),
                ],
            ]
            .concat(),
        ),
        NewEntry::Compaction {
            summary,
            first_kept_entry_id,
            tokens_before,
            details,
            from_hook,
        } => build(
            [
                head(types::COMPACTION),
                vec![
                    ("summary", Some(summary.into())),
                    ("firstKeptEntryId", Some(first_kept_entry_id.into())),
                    ("tokensBefore", Some(tokens_before)),
                    ("details", details),
                    ("fromHook", from_hook.map(Value::from)),
                ],
            ]
            .concat(),
        ),
        NewEntry::BranchSummary {
            branch_from,
            summary,
            details,
            from_hook,
        } => build(
            [
                head(types::BRANCH_SUMMARY),
                vec![
                    (
                        "fromId",
                        Some(branch_from.unwrap_or_else(|| "root".to_owned()).into()),
                    ),
                    ("summary", Some(summary.into())),
                    ("details", details),
                    ("fromHook", from_hook.map(Value::from)),
                ],
            ]
            .concat(),
        ),
        // custom and custom_message put their own fields before id/parentId/timestamp.
        NewEntry::Custom { custom_type, data } => {
            let mut fields = vec![
                ("type", Some(Value::from(types::CUSTOM))),
                ("customType", Some(custom_type.into())),
                ("data", data),
            ];
            fields.extend(head(types::CUSTOM).into_iter().skip(1));
            build(fields)
        }
        NewEntry::CustomMessage {
            custom_type,
            content,
            display,
            details,
        } => {
            let mut fields = vec![
                ("type", Some(Value::from(types::CUSTOM_MESSAGE))),
                ("customType", Some(custom_type.into())),
                ("content", Some(content)),
                ("display", Some(display.into())),
                ("details", details),
            ];
            fields.extend(head(types::CUSTOM_MESSAGE).into_iter().skip(1));
            build(fields)
        }
        NewEntry::Label { target_id, label } => build(
            [
                head(types::LABEL),
                vec![
                    ("targetId", Some(target_id.into())),
                    ("label", label.map(Value::from)),
                ],
            ]
            .concat(),
        ),
        NewEntry::SessionInfo { name } => build(
            [
                head(types::SESSION_INFO),
                vec![("name", Some(js_trim(&name).to_owned().into()))],
            ]
            .concat(),
        ),
    }
}
