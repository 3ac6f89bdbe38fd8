//! [`SharedTranscript`]: the transcript a report hands back, behind an `Arc`. With the `python`
//! feature it also holds the Python object that shows it (a `clawctx._core.Transcript`), made
//! on first read or set by the binding, so that a report's `messages` can be the very object
//! the caller passed in when nothing changed, and the report type needs no mirror in the
//! binding (issue 29, item 1). Its Python half is `shared_py.rs`.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use super::list::Transcript;

/// A transcript held by a report (reads as a [`Transcript`] through `Deref`).
pub struct SharedTranscript {
    transcript: Arc<Transcript>,
    /// The Python object showing `transcript`: set by the binding (the caller's own object) or
    /// made on first read from Python (`shared_py.rs`).
    #[cfg(feature = "python")]
    pub(super) object: pyo3::sync::PyOnceLock<pyo3::Py<pyo3::PyAny>>,
}

impl SharedTranscript {
    pub fn new(transcript: Transcript) -> Self {
        Self::from_arc(Arc::new(transcript))
    }

    /// Shares `transcript` without copying it.
    pub fn from_arc(transcript: Arc<Transcript>) -> Self {
        SharedTranscript {
            transcript,
            #[cfg(feature = "python")]
            object: pyo3::sync::PyOnceLock::new(),
        }
    }

    /// The shared transcript.
    pub fn arc(&self) -> &Arc<Transcript> {
        &self.transcript
    }

    /// The transcript as an owned value (a copy of the message list only when it is shared).
    pub fn into_transcript(self) -> Transcript {
        Arc::unwrap_or_clone(self.transcript)
    }
}

impl Deref for SharedTranscript {
    type Target = Transcript;
    fn deref(&self) -> &Transcript {
        &self.transcript
    }
}

impl Default for SharedTranscript {
    fn default() -> Self {
        SharedTranscript::new(Transcript::default())
    }
}

impl From<Transcript> for SharedTranscript {
    fn from(transcript: Transcript) -> Self {
        SharedTranscript::new(transcript)
    }
}

/// A clone shares the messages; its Python object is made afresh on first read.
impl Clone for SharedTranscript {
    fn clone(&self) -> Self {
        SharedTranscript::from_arc(Arc::clone(&self.transcript))
    }
}

impl fmt::Debug for SharedTranscript {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.transcript.fmt(f)
    }
}

/// Equal when the messages are (the Python object plays no part).
impl PartialEq for SharedTranscript {
    fn eq(&self, other: &Self) -> bool {
        *self.transcript == *other.transcript
    }
}

impl Eq for SharedTranscript {}

impl PartialEq<Transcript> for SharedTranscript {
    fn eq(&self, other: &Transcript) -> bool {
        *self.transcript == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::JsonText;

    fn transcript(texts: &[&str]) -> Transcript {
        Transcript::new(
            texts
                .iter()
                .map(|t| JsonText::owned((*t).to_owned()))
                .collect(),
        )
    }

    #[test]
    fn reads_as_its_transcript_and_compares_by_messages() {
        let t = transcript(&[r#"{"role":"user","content":"a"}"#]);
        let shared = SharedTranscript::new(t.clone());
        assert_eq!(shared.len(), 1);
        assert!(shared == t);
        assert_eq!(shared.clone(), shared);
        assert!(SharedTranscript::default() != shared);
        assert_eq!(shared.into_transcript(), t);
    }

    #[test]
    fn a_clone_shares_the_messages() {
        let shared = SharedTranscript::new(transcript(&[r#"{"role":"user","content":"a"}"#]));
        let copy = shared.clone();
        assert!(Arc::ptr_eq(shared.arc(), copy.arc()));
    }
}
