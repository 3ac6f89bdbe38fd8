//! Where new entry ids come from (pi-mono 0.58.3
//! `packages/coding-agent/src/core/session-manager.ts`, `generateId`). Injectable so tests and
//! replays are reproducible; the default draws random UUIDs like pi does.

use std::collections::VecDeque;

/// A source of candidate entry ids. Collisions are handled by [`generate_entry_id`].
pub trait IdSource {
    fn next_id(&mut self) -> String;

    /// Whether the source was asked for more ids than it had and handed out stand-ins (see
    /// [`DrawnIds`]): work that can be undone (a refresh's reload) is then undone, so that the
    /// caller can draw the missing ids and try again.
    fn ran_short(&self) -> bool {
        false
    }
}

/// pi's ids: the first 8 hex characters of a random v4 UUID.
#[derive(Debug, Default, Clone, Copy)]
pub struct RandomIds;

impl IdSource for RandomIds {
    fn next_id(&mut self) -> String {
        let mut id = uuid::Uuid::new_v4().simple().to_string();
        id.truncate(8);
        id
    }
}

/// Draws ids until one is free, up to 100 times, then falls back to a full random UUID
/// (pi's `generateId`). Unlike pi's v1 migration, the caller always passes the real set of
/// taken ids, so migrated files cannot get duplicate ids.
pub fn generate_entry_id(source: &mut dyn IdSource, is_taken: impl Fn(&str) -> bool) -> String {
    for _ in 0..100 {
        let id = source.next_id();
        if !id.is_empty() && !is_taken(&id) {
            return id;
        }
    }
    random_session_id()
}

/// A new session id: a random v4 UUID in its hyphenated form.
pub fn random_session_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A deterministic source for tests: `prefix` + a counter as 8 hex digits in total.
#[derive(Debug, Clone)]
pub struct SequentialIds {
    next: u32,
}

impl SequentialIds {
    pub fn new(start: u32) -> Self {
        SequentialIds { next: start }
    }
}

impl IdSource for SequentialIds {
    fn next_id(&mut self) -> String {
        let id = format!("{:08x}", self.next);
        self.next = self.next.wrapping_add(1);
        id
    }
}

/// Ids drawn beforehand, handed out in order. The binding draws a Python `id_factory`'s ids
/// with no session lock held (issue 33, N5) and hands them to the core through this. Once they
/// run out it hands out random ids and counts them ([`DrawnIds::shortfall`]): the caller can
/// draw that many more and try again, or, after [`DrawnIds::or_random`], keep the random ones.
#[derive(Debug, Default, Clone)]
pub struct DrawnIds {
    ids: VecDeque<String>,
    shortfall: usize,
    keep_random: bool,
}

impl DrawnIds {
    pub fn new(ids: impl IntoIterator<Item = String>) -> Self {
        DrawnIds {
            ids: ids.into_iter().collect(),
            shortfall: 0,
            keep_random: false,
        }
    }

    /// The same ids, but running out is not reported ([`IdSource::ran_short`] stays false):
    /// random ids stand in for the missing ones for good.
    pub fn or_random(mut self) -> Self {
        self.keep_random = true;
        self
    }

    /// How many ids were asked for after the drawn ones ran out.
    pub fn shortfall(&self) -> usize {
        self.shortfall
    }
}

impl IdSource for DrawnIds {
    fn next_id(&mut self) -> String {
        match self.ids.pop_front() {
            Some(id) => id,
            None => {
                self.shortfall += 1;
                RandomIds.next_id()
            }
        }
    }

    fn ran_short(&self) -> bool {
        self.shortfall > 0 && !self.keep_random
    }
}

/// Milliseconds since the Unix epoch from the system clock.
pub fn system_now_ms() -> i64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_ids_are_8_hex() {
        let id = RandomIds.next_id();
        assert_eq!(id.len(), 8);
        assert!(id
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    }

    #[test]
    fn collisions_are_redrawn_then_fall_back_to_uuid() {
        let mut seq = SequentialIds::new(0);
        let id = generate_entry_id(&mut seq, |id| id == "00000000");
        assert_eq!(id, "00000001");
        struct Always;
        impl IdSource for Always {
            fn next_id(&mut self) -> String {
                "aaaaaaaa".into()
            }
        }
        let id = generate_entry_id(&mut Always, |id| id == "aaaaaaaa");
        assert_eq!(id.len(), 36);
    }

    #[test]
    fn drawn_ids_come_in_order_then_random_ones_are_counted() {
        let mut drawn = DrawnIds::new(["a".to_owned(), "b".to_owned()]);
        assert_eq!(drawn.next_id(), "a");
        assert_eq!(drawn.next_id(), "b");
        assert!(!drawn.ran_short());
        assert_eq!(drawn.next_id().len(), 8);
        assert_eq!(drawn.next_id().len(), 8);
        assert!(drawn.ran_short());
        assert_eq!(drawn.shortfall(), 2);
        let mut kept = DrawnIds::new([]).or_random();
        assert_eq!(kept.next_id().len(), 8);
        assert!(!kept.ran_short());
        assert_eq!(kept.shortfall(), 1);
        assert!(!RandomIds.ran_short());
    }
}
