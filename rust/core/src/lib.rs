//! clawctx-core: the pure-Rust hot path of clawctx.
//!
//! Pipeline stages, one module each, named after the spec (`../shared/spec/hot-path.md`):
//! - [`lines`]: splitting files into lines, salvaging records from damaged lines;
//! - [`entry`], [`session`]: parsing, migration, index, tree and appends (§1.1–§1.4, §1.9);
//! - [`context`]: `buildSessionContext` (§1.6); [`leaf_context`]: the same for the last entry,
//!   reading the file from its end only as far as needed; [`convert`]: `convertToLlm` (§1.7);
//! - [`repair`]: session file repair (§2);
//! - [`transcript`]: the in-memory message list; [`json`]: JSON/JavaScript compatibility;
//! - [`persist`]: locking, appends, backups and atomic replacement.

pub mod compaction;
pub mod context;
pub mod convert;
pub mod entry;
pub mod error;
pub mod facts;
pub mod heartbeat;
pub mod history;
pub mod hygiene;
pub mod ids;
pub mod images;
pub mod json;
pub mod leaf_context;
pub mod lines;
pub mod message;
pub mod pairing;
pub mod persist;
pub mod policy;
pub mod pruning;
pub mod repair;
pub mod scan;
pub mod session;
pub mod token_count;
pub mod tokens;
pub mod tool_call_ids;
pub mod tool_call_inputs;
pub mod transcript;
pub mod validate;

pub use context::{build_session_context, LeafSelector, SessionContext};
pub use convert::convert_to_llm;
pub use entry::Entry;
pub use error::{Error, Result};
pub use repair::{repair_session_file, RepairOptions, RepairReport};
pub use session::{Session, SkippedLine};
pub use transcript::Transcript;
