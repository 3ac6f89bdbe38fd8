//! The id index and tree of a session's entries (mirrors pi-mono 0.58.3
//! `packages/coding-agent/src/core/session-manager.ts`: `byId`, `getBranch`, `getTree`): what
//! both the loaded session and context building walk.

use std::collections::HashSet;

use super::entry::Entry;

/// The id → entry index map (a later duplicate wins, like `Map.set`), over a list of entries
/// it does not own: the table holds only entry positions (4 bytes, against 32 for a copy of
/// the id and a position), and every lookup compares against the entries' own ids, so each
/// call takes the list the index was built over. Fx hashing: ids are short, and lookups are
/// on the hot path of every context build.
#[derive(Debug, Clone, Default)]
pub struct IdIndex {
    table: hashbrown::HashTable<u32>,
}

fn hash_id(id: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(id)
}

fn id_of(entries: &[Entry], position: u32) -> &str {
    entries[position as usize].id.as_deref().unwrap_or_default()
}

impl IdIndex {
    /// An empty index with room for `entries` ids.
    pub fn with_capacity(entries: usize) -> IdIndex {
        IdIndex {
            table: hashbrown::HashTable::with_capacity(entries),
        }
    }

    /// The position of the entry with `id`.
    pub fn get(&self, entries: &[Entry], id: &str) -> Option<usize> {
        self.table
            .find(hash_id(id), |&p| id_of(entries, p) == id)
            .map(|&p| p as usize)
    }

    pub fn contains(&self, entries: &[Entry], id: &str) -> bool {
        self.get(entries, id).is_some()
    }

    /// Points the id of `entries[i]` (if it has one) at `i`; with `replace`, an id already
    /// held moves to `i` (a later duplicate wins), otherwise the first stays. Returns whether
    /// the id was held already.
    pub fn insert(&mut self, entries: &[Entry], i: usize, replace: bool) -> bool {
        let Some(id) = entries[i].id.as_deref() else {
            return false;
        };
        let position = u32::try_from(i).expect("fewer than 4G entries");
        let hash = hash_id(id);
        match self.table.find_mut(hash, |&p| id_of(entries, p) == id) {
            Some(held) => {
                if replace {
                    *held = position;
                }
                true
            }
            None => {
                self.table
                    .insert_unique(hash, position, |&p| hash_id(id_of(entries, p)));
                false
            }
        }
    }

    /// Room for `more` ids without growing (growing rehashes into a table twice as large
    /// while the old one is held).
    pub fn reserve(&mut self, entries: &[Entry], more: usize) {
        self.table.reserve(more, |&p| hash_id(id_of(entries, p)));
    }

    pub fn clear(&mut self) {
        self.table.clear();
    }
}

/// Root→leaf entry indices, following `parentId` through `index`. A cyclic file cannot hang
/// the walk: past as many steps as there are entries it must be cycling, and the walk is
/// redone with a visited set to stop at the repeated entry (the rare path).
pub fn path_to_root(entries: &[Entry], index: &IdIndex, leaf: usize) -> Vec<usize> {
    let parent = |i: usize| {
        entries[i]
            .parent_id
            .as_deref()
            .filter(|p| !p.is_empty())
            .and_then(|p| index.get(entries, p))
    };
    let mut path = Vec::new();
    let mut current = Some(leaf);
    while let Some(i) = current {
        if path.len() > entries.len() {
            return path_to_root_with_cycle(leaf, parent);
        }
        path.push(i);
        current = parent(i);
    }
    path.reverse();
    path
}

fn path_to_root_with_cycle(leaf: usize, parent: impl Fn(usize) -> Option<usize>) -> Vec<usize> {
    let mut path = Vec::new();
    let mut seen = HashSet::new();
    let mut current = Some(leaf);
    while let Some(i) = current {
        if !seen.insert(i) {
            break;
        }
        path.push(i);
        current = parent(i);
    }
    path.reverse();
    path
}

/// The id index of a list of entries (a later duplicate wins, like `Map.set`).
pub fn index_entries(entries: &[Entry]) -> IdIndex {
    let mut index = IdIndex::with_capacity(entries.len());
    for i in 0..entries.len() {
        index.insert(entries, i, true);
    }
    index
}

/// The session tree as flat lists of record indices (positions in `Session::records`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    pub roots: Vec<usize>,
    /// `children[i]`: the children of entry `i`, sorted by timestamp.
    pub children: Vec<Vec<usize>>,
}
