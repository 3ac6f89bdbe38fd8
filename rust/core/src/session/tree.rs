//! The id index and tree of a session's entries (mirrors pi-mono 0.58.3
//! `packages/coding-agent/src/core/session-manager.ts`: `byId`, `getBranch`, `getTree`): what
//! both the loaded session and context building walk.

use std::collections::HashSet;

use super::entry::Entry;

/// The id → entry index map (a later duplicate wins, like `Map.set`). Fx hashing: ids are
/// short and not attacker-chosen, and lookups are on the hot path of every context build.
pub type IdIndex = rustc_hash::FxHashMap<compact_str::CompactString, usize>;

/// Root→leaf entry indices, following `parentId` through `index`. A cyclic file cannot hang
/// the walk: past as many steps as there are entries it must be cycling, and the walk is
/// redone with a visited set to stop at the repeated entry (the rare path).
pub fn path_to_root(entries: &[Entry], index: &IdIndex, leaf: usize) -> Vec<usize> {
    let parent = |i: usize| {
        entries[i]
            .parent_id
            .as_deref()
            .filter(|p| !p.is_empty())
            .and_then(|p| index.get(p).copied())
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
    let mut index = IdIndex::with_capacity_and_hasher(entries.len(), Default::default());
    for (i, entry) in entries.iter().enumerate() {
        if let Some(id) = &entry.id {
            index.insert(id.clone(), i);
        }
    }
    index
}

/// The session tree as flat lists of entry indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    pub roots: Vec<usize>,
    /// `children[i]`: the children of entry `i`, sorted by timestamp.
    pub children: Vec<Vec<usize>>,
}
