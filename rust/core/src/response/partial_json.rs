//! Tool-call arguments read from streamed JSON as pi-ai reads them: `parseStreamingJson`
//! (pi-mono 0.58.3 `packages/ai/src/utils/json-parse.ts`) tries `JSON.parse`, then the
//! `partial-json` npm package 0.1.7 (promplate/partial-json-parser-js `src/index.ts`, with
//! `Allow.ALL`), and falls back to `{}`.
//!
//! The partial parser below follows that package step by step, quirks included (an object or
//! array swallows any error inside it and returns what it has; trailing text after the first
//! value is ignored; a number is cut back at the last `e` of the whole text), because the
//! arguments pi-ai stores are whatever that code returns. All the characters it tests are
//! ASCII, so working on UTF-8 bytes gives the same cut points as its UTF-16 indexes.

use serde_json::{Map, Value};

use crate::base::parse_value;

/// `parseStreamingJson(text)`: the arguments pi-ai keeps for a tool call's accumulated JSON.
pub fn parse_streaming_json(text: &str) -> Value {
    if text.is_empty() || js_trim(text).is_empty() {
        return Value::Object(Map::new());
    }
    if let Ok(v) = parse_value(text) {
        return v;
    }
    match partial_parse(text) {
        Ok(Value::Null) | Err(()) => Value::Object(Map::new()),
        Ok(v) => v,
    }
}

fn js_trim(text: &str) -> &str {
    text.trim_matches(crate::base::is_js_whitespace)
}

/// `JSON.parse` of a slice: `Err` where JavaScript throws.
fn json_parse(text: &str) -> Result<Value, ()> {
    parse_value(text).map_err(|_| ())
}

/// `partial-json`'s `parse(text, Allow.ALL)`; `Err` where it throws (partial or malformed).
pub fn partial_parse(text: &str) -> Result<Value, ()> {
    let trimmed = js_trim(text);
    if trimmed.is_empty() {
        return Err(());
    }
    let mut parser = Parser {
        s: trimmed,
        b: trimmed.as_bytes(),
        i: 0,
    };
    parser.any()
}

struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn at(&self, i: usize) -> Option<u8> {
        self.b.get(i).copied()
    }

    fn skip_blank(&mut self) {
        while matches!(self.at(self.i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.i += 1;
        }
    }

    /// `substring(a, b)`: JavaScript swaps reversed bounds and clamps them to the text.
    fn substring(&self, a: usize, b: usize) -> &str {
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        let hi = hi.min(self.b.len());
        let lo = lo.min(hi);
        &self.s[lo..hi]
    }

    /// `lastIndexOf(c)` clamped as `substring` clamps -1 (to 0).
    fn last_index_of(&self, c: u8) -> usize {
        self.b.iter().rposition(|&x| x == c).unwrap_or(0)
    }

    /// A literal (`null`, `true`, …) whole, or cut short at the end of the text.
    fn literal(&mut self, word: &str) -> bool {
        let rest = &self.b[self.i..];
        if rest.starts_with(word.as_bytes())
            || (rest.len() < word.len() && word.as_bytes().starts_with(rest))
        {
            self.i += word.len();
            return true;
        }
        false
    }

    fn any(&mut self) -> Result<Value, ()> {
        self.skip_blank();
        if self.i >= self.b.len() {
            return Err(());
        }
        match self.b[self.i] {
            b'"' => return self.string(),
            b'{' => return Ok(self.object()),
            b'[' => return Ok(self.array()),
            _ => {}
        }
        if self.literal("null") {
            return Ok(Value::Null);
        }
        if self.literal("true") {
            return Ok(Value::Bool(true));
        }
        if self.literal("false") {
            return Ok(Value::Bool(false));
        }
        // Infinity, -Infinity and NaN parse to numbers that JSON.stringify writes as null.
        if self.literal("Infinity") || self.literal("-Infinity") || self.literal("NaN") {
            return Ok(Value::Null);
        }
        self.number()
    }

    fn string(&mut self) -> Result<Value, ()> {
        let start = self.i;
        let mut escape = false;
        self.i += 1;
        while self.i < self.b.len()
            && (self.b[self.i] != b'"' || (escape && self.b[self.i - 1] == b'\\'))
        {
            escape = if self.b[self.i] == b'\\' {
                !escape
            } else {
                false
            };
            self.i += 1;
        }
        if self.at(self.i) == Some(b'"') {
            self.i += 1;
            return json_parse(self.substring(start, self.i));
        }
        // Unterminated: close it, dropping a dangling backslash; if an escape is cut inside
        // (`\u00`), cut back to the last backslash of the whole text.
        let end = self.i - usize::from(escape);
        let closed = format!("{}\"", self.substring(start, end));
        if let Ok(v) = json_parse(&closed) {
            return Ok(v);
        }
        let cut = self.b.iter().rposition(|&x| x == b'\\');
        let closed = match cut {
            Some(at) => format!("{}\"", self.substring(start, at)),
            // lastIndexOf returned -1: substring(start, -1) is substring(0, start).
            None => format!("{}\"", self.substring(start, 0)),
        };
        json_parse(&closed)
    }

    fn object(&mut self) -> Value {
        self.i += 1;
        self.skip_blank();
        let mut obj = Map::new();
        while self.at(self.i) != Some(b'}') {
            self.skip_blank();
            if self.i >= self.b.len() {
                return Value::Object(obj);
            }
            let Ok(key) = self.string() else {
                return Value::Object(obj);
            };
            // A key that parsed to something else cannot happen: string() only returns strings.
            let key = match key {
                Value::String(k) => k,
                other => other.to_string(),
            };
            self.skip_blank();
            self.i += 1; // the colon, unchecked, as upstream does
            match self.any() {
                Ok(value) => {
                    obj.insert(key, value);
                }
                Err(()) => return Value::Object(obj),
            }
            self.skip_blank();
            if self.at(self.i) == Some(b',') {
                self.i += 1;
            }
        }
        self.i += 1;
        Value::Object(obj)
    }

    fn array(&mut self) -> Value {
        self.i += 1;
        let mut arr = Vec::new();
        while self.at(self.i) != Some(b']') {
            match self.any() {
                Ok(v) => arr.push(v),
                Err(()) => return Value::Array(arr),
            }
            self.skip_blank();
            if self.at(self.i) == Some(b',') {
                self.i += 1;
            }
        }
        self.i += 1;
        Value::Array(arr)
    }

    fn number(&mut self) -> Result<Value, ()> {
        if self.i == 0 {
            if self.s == "-" {
                return Err(());
            }
            if let Ok(v) = json_parse(self.s) {
                return Ok(v);
            }
            let cut = if self.b.last() == Some(&b'.') {
                self.last_index_of(b'.')
            } else {
                self.last_index_of(b'e')
            };
            return json_parse(self.substring(0, cut));
        }
        let start = self.i;
        if self.at(self.i) == Some(b'-') {
            self.i += 1;
        }
        while let Some(c) = self.at(self.i) {
            if matches!(c, b',' | b']' | b'}') {
                break;
            }
            self.i += 1;
        }
        if let Ok(v) = json_parse(self.substring(start, self.i)) {
            return Ok(v);
        }
        if self.substring(start, self.i) == "-" {
            return Err(());
        }
        json_parse(self.substring(start, self.last_index_of(b'e')))
    }
}

#[cfg(test)]
mod tests {
    use super::parse_streaming_json as p;
    use serde_json::json;

    #[test]
    fn completes_what_pi_ai_completes() {
        assert_eq!(
            p(r#"{"path": "a.txt", "mode": tru"#),
            json!({"path": "a.txt", "mode": true})
        );
        assert_eq!(p(r#"{"path": "a.txt"}}"#), json!({"path": "a.txt"}));
        assert_eq!(p(r#"{"a": [1, 2"#), json!({"a": [1, 2]}));
        assert_eq!(p("not json"), json!({}));
        assert_eq!(p("  "), json!({}));
        assert_eq!(p(""), json!({}));
        assert_eq!(p(r#"{"s": "ab\u00"#), json!({"s": "ab"}));
        assert_eq!(p(r#"{"s": "ab\"#), json!({"s": "ab"}));
        assert_eq!(p(r#"{"n": 1.5"#), json!({"n": 1.5}));
        assert_eq!(p(r#"{"n": 12, "k"#), json!({"n": 12}));
        // `JSON.parse("null")` succeeds, so pi-ai keeps its `null`.
        assert_eq!(p("null"), serde_json::Value::Null);
    }
}
