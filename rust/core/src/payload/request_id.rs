//! Comparing two builds of one request: gemini-cli's `requestId` ends in a random tail
//! (pi-mono 0.58.3 `packages/ai/src/providers/google-gemini-cli.ts`), so two builds of the same
//! request differ there and nowhere else.

/// A body's text (lossy UTF-8) with the value of its first `"requestId":"…"` emptied: the key
/// and the quotes stay, so the rest of the body is compared byte for byte. A body without a
/// `requestId` comes back as it is.
pub fn without_request_id(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body).into_owned();
    let key = "\"requestId\":\"";
    match text.find(key) {
        Some(at) => {
            let value = at + key.len();
            let end = text[value..].find('"').map_or(text.len(), |n| value + n);
            format!("{}{}", &text[..value], &text[end..])
        }
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::without_request_id;

    #[test]
    fn empties_the_request_id_and_keeps_the_rest() {
        let body = br#"{"model":"gemini-2.5-pro","requestId":"pi-1700-a1b2c3","request":{}}"#;
        assert_eq!(
            without_request_id(body),
            r#"{"model":"gemini-2.5-pro","requestId":"","request":{}}"#
        );
    }

    #[test]
    fn a_body_without_one_is_kept_and_an_unclosed_one_is_cut() {
        assert_eq!(without_request_id(br#"{"a":1}"#), r#"{"a":1}"#);
        assert_eq!(
            without_request_id(br#"{"requestId":"abc"#),
            r#"{"requestId":""#
        );
    }
}
