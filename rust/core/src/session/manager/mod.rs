//! A loaded session (mirrors pi-mono 0.58.3 `packages/coding-agent/src/core/session-manager.ts`,
//! `SessionManager`): header, entries in file order, the id index, the leaf and labels. One
//! file per job: opening and migrating (`open`), refresh (`refresh`), appends and turns
//! (`append`), cold start (`cold`); this file holds the type and what reads it.

mod append;
mod cold;
mod memory;
mod open;
mod refresh;
#[cfg(feature = "python")]
mod refresh_py;

pub use append::{NewEntry, TurnAppend};
pub use memory::join_lines;
pub use refresh::{RefreshMode, RefreshReport};

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::entry::{types, Entry};
use super::header::Header;
use super::persist::{LockedFile, WriteOptions};
use super::read::SkippedLine;
use super::tree::{path_to_root, IdIndex, Tree};
use crate::base::is_truthy;
use crate::base::{Error, Result};

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
    cold: Option<Box<super::tail::BackReader>>,
    /// Records held inside inert runs beyond one per run (`records_held() - 1` summed), so
    /// that the record count needs no pass over the entries.
    records_in_runs: usize,
    /// Set for a session read from bytes held in memory ([`Session::from_memory`]): what
    /// `refresh` reads instead of a file.
    memory: Option<Box<memory::MemorySource>>,
}

#[derive(Debug, Clone)]
struct CachedContext {
    state: super::context::ContextState,
    /// The highest entry index on the state's path.
    path_max: usize,
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
            memory: self.memory.clone(),
        }
    }
}

impl Session {
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
    /// descends from that context's leaf through entries later in the file than any on its path
    /// (the usual case after `refresh` or an append, and when a session's turns are visited in
    /// file order), only those entries are added. A compaction among them, an id re-pointed by
    /// a duplicate, or any other leaf rebuilds from the path.
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
                // Walk back from the leaf to the cached one. Every entry passed must come after
                // all of the cached path in the file: then none of them is on it (a parent
                // cycle through the cached path would otherwise be walked twice), and the new
                // path is the cached one plus them. The length bound stops a cycle among them.
                let mut segment = Vec::new();
                let mut current = Some(leaf_index);
                while let Some(i) = current {
                    if i == c.state.leaf {
                        segment.reverse();
                        return if segment.is_empty() {
                            Some((c.state.clone(), c.path_max))
                        } else {
                            // Every entry passed is above the cached path's highest.
                            let path_max = segment.iter().copied().max().unwrap_or(c.path_max);
                            c.state
                                .extended(&self.entries, &segment)
                                .map(|state| (state, path_max))
                        };
                    }
                    if i <= c.path_max || segment.len() > self.entries.len() {
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
        let (state, path_max) = reused.unwrap_or_else(|| {
            let path = path_to_root(&self.entries, &self.index, leaf_index);
            let path_max = path.iter().copied().max().unwrap_or(leaf_index);
            (ContextState::for_path(&self.entries, &path), path_max)
        });
        let context = state.to_context(&self.entries);
        *cache = Some(CachedContext {
            state,
            path_max,
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
