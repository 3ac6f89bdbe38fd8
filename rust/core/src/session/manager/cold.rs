//! Cold start: the end of the file first, the rest when something asks for it.

use std::path::Path;

use serde_json::Value;

use super::super::entry::Entry;
use super::super::header::Header;
use super::super::persist::{open_session_file, Access};
use super::*;
use crate::base::to_js_string;
use crate::base::{random_session_id, IdSource};
use crate::base::{Error, Result};

impl Session {
    /// Opens a session from the end of its file: the header and the entries read backwards
    /// until the last entry's messages are settled (as [`super::super::LeafContextReader`] reads
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
        Session::open_cold_with(
            path,
            options,
            &super::super::TailOptions::default(),
            ids,
            now_ms,
        )
    }

    /// [`Session::open_cold`] with the chunk sizes of the backward read.
    pub(in crate::session) fn open_cold_with(
        path: &Path,
        options: &OpenOptions,
        tail: &super::super::TailOptions,
        ids: &mut dyn IdSource,
        now_ms: i64,
    ) -> Result<Session> {
        let start = if options.read_only
            && (options.rewrite_migrated || options.on_invalid_header == InvalidHeader::Reset)
        {
            None // `open` says why this is refused
        } else {
            super::super::tail::cold_start(path, tail)?
        };
        let Some(start) = start else {
            return Session::open(path, options, ids, now_ms);
        };
        // A turn cut short at the end: `open` removes it (writable) or reads around it.
        if start
            .entries
            .last()
            .and_then(|e| super::super::TurnMark::of_text(e.text.as_str()))
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
        let identity = super::super::persist::file_identity(&file);
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
    ) -> Result<super::super::context::SessionContext> {
        use super::super::context::{resolve_leaf, LeafSelector, SessionContext};
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
            let walk = super::super::tail::LoadedPath::walk(&self.entries, &self.index, leaf);
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
