//! An incremental parser for `text/event-stream` (the WHATWG HTML "server-sent
//! events" grammar): correct at every split of the byte stream, with LF, CR and
//! CRLF line ends, multi-line `data`, comments, `id`, `retry`, and a cap on the
//! size of one event.

use std::borrow::Cow;

/// One dispatched event. `data` may be empty (a priming event): never parse it then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The event's type: `message` unless the stream named another (not copied then).
    pub event: Cow<'static, str>,
    pub data: String,
    /// The last event id seen on the stream so far (it persists across events).
    pub id: Option<String>,
}

/// An event (or a line) larger than the cap.
#[derive(Debug, PartialEq, Eq)]
pub struct EventTooLarge {
    pub limit: usize,
}

#[derive(Debug)]
pub struct SseParser {
    line: Vec<u8>,
    /// The previous chunk ended in CR: a LF that starts the next one belongs to it.
    after_cr: bool,
    data: String,
    has_data: bool,
    event: Cow<'static, str>,
    last_id: Option<String>,
    retry_ms: Option<u64>,
    max: usize,
    /// Bytes sure to follow the chunk being fed (see [`SseParser::expect`]).
    expect: usize,
    /// From this length a gathered line grows by `expect`.
    long_line: usize,
}

/// A line gathered across chunks that is at least this long grows by what is
/// known to follow it rather than by doubling (see [`SseParser::expect`]).
const LONG_LINE: usize = 64 * 1024;

impl SseParser {
    /// `max` bounds one event's data plus its current line, in bytes.
    pub fn new(max: usize) -> Self {
        Self::with_long_line(max, LONG_LINE)
    }

    /// The same, with lines long from `long_line` bytes (for the fuzz target, whose
    /// inputs are short).
    pub(crate) fn with_long_line(max: usize, long_line: usize) -> Self {
        SseParser {
            line: Vec::new(),
            after_cr: false,
            data: String::new(),
            has_data: false,
            event: Cow::Borrowed(""),
            last_id: None,
            retry_ms: None,
            max,
            expect: 0,
            long_line,
        }
    }

    /// The last `id` seen (for `Last-Event-ID`).
    pub fn last_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The last valid `retry` value, in milliseconds.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    /// Says that at least `n` more bytes of the stream follow the next chunk fed (the
    /// rest of an HTTP chunk, or of a body of known length). A long line that must
    /// grow then takes room for them at once: grown by doubling, a large message
    /// would move through ever larger blocks, whose pages the heap keeps, and be
    /// copied each time (docs/performance.md).
    pub fn expect(&mut self, n: usize) {
        self.expect = n;
    }

    /// Feeds one chunk, calling `on_event` for each event it completes.
    pub fn feed(&mut self, chunk: &[u8], mut on_event: impl FnMut(Event)) -> Result<(), EventTooLarge> {
        let mut rest = chunk;
        // An empty chunk leaves a pending CR pending.
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if let Some(stripped) = rest.strip_prefix(b"\n") {
                rest = stripped;
            }
        }
        while let Some(pos) = memchr::memchr2(b'\n', b'\r', rest) {
            let ended_by_cr = rest[pos] == b'\r';
            if self.line.is_empty() {
                // The whole line is in this chunk: read it where it is.
                self.check_size(pos)?;
                self.process_line(&rest[..pos], &mut on_event);
            } else {
                self.push_line_bytes(&rest[..pos])?;
                self.process_gathered_line(&mut on_event);
            }
            rest = &rest[pos + 1..];
            if ended_by_cr {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
        }
        self.push_line_bytes(rest)
    }

    fn check_size(&self, more: usize) -> Result<(), EventTooLarge> {
        if self.line.len() + more + self.data.len() > self.max {
            return Err(EventTooLarge { limit: self.max });
        }
        Ok(())
    }

    fn push_line_bytes(&mut self, bytes: &[u8]) -> Result<(), EventTooLarge> {
        self.check_size(bytes.len())?;
        let len = self.line.len();
        if len >= self.long_line && self.line.capacity() - len < bytes.len() {
            // Never past the cap (check_size: len + bytes + data <= max).
            let more = self.expect.min(self.max - len - bytes.len() - self.data.len());
            self.line.reserve_exact(bytes.len() + more);
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    /// A line gathered across chunks. When it is the event's first `data` line (a
    /// large message, usually), its buffer becomes the event's data: no copy.
    fn process_gathered_line(&mut self, on_event: &mut impl FnMut(Event)) {
        let mut line = std::mem::take(&mut self.line);
        if self.data.is_empty() {
            let (field, start) = field_and_value(&line);
            if field == b"data" {
                line.drain(..start);
                self.data = utf8_lossy_owned(line);
                self.data.push('\n');
                self.has_data = true;
                return;
            }
        }
        self.process_line(&line, on_event);
        line.clear();
        self.line = line;
    }

    fn process_line(&mut self, line: &[u8], on_event: &mut impl FnMut(Event)) {
        if line.is_empty() {
            self.dispatch(on_event);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, start) = field_and_value(line);
        let value = &line[start..];
        match field {
            // The type MCP uses is kept without a copy of its own.
            b"event" if value == b"message" => self.event = Cow::Borrowed("message"),
            b"event" => self.event = Cow::Owned(utf8_lossy(value).into_owned()),
            b"data" => {
                let value = utf8_lossy(value);
                // Room for the line end too: grown for it, the text would be copied again.
                self.data.reserve(value.len() + 1);
                self.data.push_str(&value);
                self.data.push('\n');
                self.has_data = true;
            }
            b"id" if !value.contains(&0) => self.last_id = Some(utf8_lossy(value).into_owned()),
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                self.retry_ms = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, on_event: &mut impl FnMut(Event)) {
        let event = std::mem::take(&mut self.event);
        if !self.has_data {
            self.data.clear();
            return;
        }
        self.has_data = false;
        let mut data = std::mem::take(&mut self.data);
        if data.ends_with('\n') {
            data.pop();
        }
        on_event(Event {
            event: if event.is_empty() {
                Cow::Borrowed("message")
            } else {
                event
            },
            data,
            id: self.last_id.clone(),
        });
    }
}

/// A line's field name, and where its value starts: after the first colon and
/// one space, if there is one; the line's end when there is no colon.
fn field_and_value(line: &[u8]) -> (&[u8], usize) {
    match memchr::memchr(b':', line) {
        Some(i) => (&line[..i], if line.get(i + 1) == Some(&b' ') { i + 2 } else { i + 1 }),
        None => (line, line.len()),
    }
}

/// The bytes as text, invalid UTF-8 replaced by U+FFFD. The check comes first:
/// `String::from_utf8_lossy` walks valid text far more slowly.
fn utf8_lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match crate::jsonrpc::utf8(bytes) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

fn utf8_lossy_owned(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long line told what follows grows once to hold it, not by doubling; told
    /// more than the cap allows, it still stops at the cap.
    #[test]
    fn long_line_grows_by_what_follows() {
        let text = "x".repeat(300_000);
        let stream = format!("data: {text}\n\n");
        for (max, told) in [
            (1 << 20, 0usize),
            (1 << 20, usize::MAX / 2),
            (stream.len() + 8, usize::MAX / 2),
        ] {
            let mut p = SseParser::new(max);
            let mut got = Vec::new();
            let mut at = 0;
            for piece in stream.as_bytes().chunks(64 * 1024) {
                at += piece.len();
                p.expect((stream.len() - at).max(told));
                p.feed(piece, |e| got.push(e)).unwrap();
            }
            assert_eq!(got.len(), 1);
            assert_eq!(got[0].data, text);
            if told == 0 {
                // told exactly what follows: no room beyond the line
                assert!(got[0].data.capacity() <= stream.len(), "{}", got[0].data.capacity());
            } else {
                assert!(got[0].data.capacity() <= max, "{} > {max}", got[0].data.capacity());
            }
        }
    }

    /// The events, the last id and the retry value a stream gives.
    type Parsed = (Vec<Event>, Option<String>, Option<u64>);

    fn parse_all(chunks: &[&[u8]], max: usize) -> Result<Parsed, EventTooLarge> {
        let mut p = SseParser::new(max);
        let mut out = Vec::new();
        for c in chunks {
            p.feed(c, |e| out.push(e))?;
        }
        Ok((out, p.last_id().map(str::to_string), p.retry_ms()))
    }

    fn ev(event: &str, data: &str, id: Option<&str>) -> Event {
        Event {
            event: event.to_owned().into(),
            data: data.into(),
            id: id.map(Into::into),
        }
    }

    /// Every stream, split at every pair of positions, gives the same events.
    fn check_every_split(input: &[u8], want: &[Event], want_id: Option<&str>, want_retry: Option<u64>) {
        let whole = parse_all(&[input], 1 << 20).unwrap();
        assert_eq!(whole.0, want, "whole stream");
        assert_eq!(whole.1.as_deref(), want_id);
        assert_eq!(whole.2, want_retry);
        for i in 0..=input.len() {
            for j in i..=input.len() {
                let got = parse_all(&[&input[..i], &input[i..j], &input[j..]], 1 << 20).unwrap();
                assert_eq!(got.0, want, "split at {i},{j}");
                assert_eq!(got.1.as_deref(), want_id, "split at {i},{j}");
            }
        }
    }

    #[test]
    fn line_ends_lf_cr_crlf() {
        let want = vec![
            ev("message", "{\"a\":1}", None),
            ev("message", "{\"b\":2}", None),
            ev("message", "{\"c\":3}", None),
        ];
        check_every_split(
            b"data: {\"a\":1}\n\ndata: {\"b\":2}\r\rdata: {\"c\":3}\r\n\r\n",
            &want,
            None,
            None,
        );
    }

    #[test]
    fn multi_line_data_comments_event_and_id() {
        let input = b": keep-alive\nevent: message\nid: 7\ndata: {\"a\":\ndata:  1}\n\n:x\nevent: other\ndata: two\n\n";
        let want = vec![ev("message", "{\"a\":\n 1}", Some("7")), ev("other", "two", Some("7"))];
        check_every_split(input, &want, Some("7"), None);
    }

    #[test]
    fn priming_event_and_retry() {
        // An id with empty data (a priming event) dispatches "", keeps its id; retry applies.
        let input = b"id: p1\nretry: 250\ndata: \n\nretry: 12x\nid: p2\n\ndata: {}\n\n";
        let want = vec![ev("message", "", Some("p1")), ev("message", "{}", Some("p2"))];
        check_every_split(input, &want, Some("p2"), Some(250));
    }

    #[test]
    fn events_without_data_are_not_dispatched_but_ids_count() {
        let input = b"id: 5\n\nevent: x\n\ndata\n\n";
        // `data` with no colon is a data field with an empty value.
        let want = vec![ev("message", "", Some("5"))];
        check_every_split(input, &want, Some("5"), None);
    }

    #[test]
    fn utf8_split_across_chunks() {
        let input = "data: {\"t\":\"héllo ✓ 😀\"}\n\n".as_bytes();
        let want = vec![ev("message", "{\"t\":\"héllo ✓ 😀\"}", None)];
        check_every_split(input, &want, None, None);
    }

    #[test]
    fn id_with_nul_is_ignored_and_unfinished_event_is_held() {
        let (events, id, _) = parse_all(&[b"id: a\0b\ndata: x\n\ndata: y\n"], 1024).unwrap();
        assert_eq!(events, vec![ev("message", "x", None)]);
        assert_eq!(id, None);
    }

    #[test]
    fn a_cr_then_an_empty_chunk_then_its_lf_end_one_line() {
        // Found by the fuzzer: an empty chunk between the CR and the LF of one line
        // end made the LF a second, empty line, which dispatched the event early.
        let input = b"data: x\r\nid: 1\n";
        check_every_split(input, &[], Some("1"), None);
        let (events, _, _) = parse_all(&[b"data: x\r", b"", b"\n"], 1024).unwrap();
        assert_eq!(events, vec![]);
    }

    #[test]
    fn data_field_forms_and_invalid_utf8() {
        // The first data line of an event, gathered across chunks, becomes its data in
        // place; the forms of the field must read the same there as anywhere else.
        let input = b"data:ab\ndata\ndata: c\n\ndata\n\ndatum: x\ndata:  two\n\ndata: a\xffb\n\n";
        let want = vec![
            ev("message", "ab\n\nc", None),
            ev("message", "", None),
            ev("message", " two", None),
            ev("message", "a\u{FFFD}b", None),
        ];
        check_every_split(input, &want, None, None);
    }

    #[test]
    fn cap_on_one_event() {
        let big = format!("data: {}\n", "x".repeat(100));
        assert_eq!(parse_all(&[big.as_bytes()], 64), Err(EventTooLarge { limit: 64 }));
        // Many small data lines in one event add up.
        let lines = "data: xxxxxxxxxx\n".repeat(10);
        assert!(parse_all(&[lines.as_bytes()], 64).is_err());
        // Small events, many of them: fine.
        let many = "data: xxxxxxxxxx\n\n".repeat(100);
        assert_eq!(parse_all(&[many.as_bytes()], 64).unwrap().0.len(), 100);
    }
}
