//! The I/O-free half of HTTP/1.1: response heads, body framing and the limits on
//! both, from bytes already read. The same steps whatever pieces the stream
//! arrives in (the `http1` fuzz target checks it).

use std::io;
use std::mem::MaybeUninit;

use bytes::{Buf, Bytes, BytesMut};
use http::header::{CONNECTION, CONTENT_LENGTH, TRANSFER_ENCODING};
use http::{Method, StatusCode};

pub use crate::transport::net::Failure;

/// The most a response head (status line and fields, each 1xx head on its own),
/// a chunk-size line or a trailer field may take.
pub(super) const MAX_LINE: usize = 256 * 1024;
/// The most fields a response head may have.
pub(super) const MAX_FIELDS: usize = 100;
/// The fields a response head is first parsed with room for (see `parse_head`).
pub(super) const FEW_FIELDS: usize = 16;
/// The least a read asks the socket for.
pub(super) const READ_SIZE: usize = 8 * 1024;
/// The room a read of a whole body asks for at least (see [`Reply::rest`]).
pub(super) const GROW_STEP: usize = 64 * 1024;
/// The room a read of a body's next piece asks for at least (see `Conn::next_piece`).
pub(super) const PIECE_READ: usize = 64 * 1024;
/// A piece of body up to this size is copied out of the read buffer, which then
/// serves the next read from its start; a larger one is split off it, not copied.
pub(super) const COPY_MAX: usize = 16 * 1024;
/// A connection goes back to the pool with its read buffer when the buffer is at
/// most this large (a larger one is freed).
pub(super) const KEEP_BUF: usize = 64 * 1024;

pub(super) fn invalid(msg: impl Into<String>) -> Failure {
    Failure::Http(io::Error::new(io::ErrorKind::InvalidData, msg.into()))
}

pub(super) fn closed_early(what: &str) -> Failure {
    Failure::Http(io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("the connection closed {what}"),
    ))
}

/// How a response body comes (RFC 9112, section 6.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Framing {
    /// This many bytes are left.
    Length(u64),
    /// In chunks; where the decoder is.
    Chunked(Chunk),
    /// Until the server closes the connection.
    UntilClose,
    /// Read to its end.
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Chunk {
    /// A chunk-size line is next.
    Size,
    /// This many bytes of the current chunk are left.
    Data(u64),
    /// The CRLF after a chunk's data is next.
    DataEnd,
    /// The trailer fields (ignored) up to an empty line.
    Trailers,
}

/// A response head.
pub(super) struct Head {
    pub(super) status: StatusCode,
    pub(super) fields: Fields,
    pub(super) framing: Framing,
    /// The connection may carry another request after this response.
    pub(super) keep_alive: bool,
}

/// A response head's fields: the head's bytes, copied out of the read buffer once,
/// then where each field's name and value lie in them, in one allocation. A header
/// map would cost four allocations a response (its two tables and a copy of each
/// value). Where the fields lie is not kept beside the pointer: a reply moves
/// through several awaits, and with room for eight fields in it (136 bytes) each
/// move would be a `memcpy` call.
pub(super) struct Fields {
    /// The head, then four u32 (native order) a field: name start and length,
    /// value start and length, all in the head (at most `MAX_LINE` long).
    pub(super) all: Box<[u8]>,
    /// The head's length: where the table starts.
    pub(super) head_len: u32,
}

impl Fields {
    /// The fields of the head `head`, with `fields` in it.
    pub(super) fn new<'h>(head: &'h [u8], fields: &[httparse::Header<'h>]) -> Fields {
        let mut all = Vec::with_capacity(head.len() + 16 * fields.len());
        all.extend_from_slice(head);
        let base = head.as_ptr() as usize;
        // Both fit in u32: the head is at most MAX_LINE long.
        let mut at = |b: &[u8]| {
            all.extend_from_slice(&((b.as_ptr() as usize - base) as u32).to_ne_bytes());
            all.extend_from_slice(&(b.len() as u32).to_ne_bytes());
        };
        for f in fields {
            at(f.name.as_bytes());
            at(f.value);
        }
        Fields {
            all: all.into_boxed_slice(),
            head_len: head.len() as u32,
        }
    }

    /// Each field's name and value, in order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        let (head, table) = self.all.split_at(self.head_len as usize);
        let bytes = move |at: &[u8]| {
            let n = |i: usize| u32::from_ne_bytes([at[i], at[i + 1], at[i + 2], at[i + 3]]) as usize;
            &head[n(0)..n(0) + n(4)]
        };
        table.chunks_exact(16).map(move |f| (bytes(&f[..8]), bytes(&f[8..])))
    }

    /// The value of the first field named `name` (in any case).
    pub(super) fn get(&self, name: &str) -> Option<&[u8]> {
        self.iter().find(|(n, _)| same_text(n, name.as_bytes())).map(|(_, v)| v)
    }
}

/// The fields of a response head that say how its body comes and whether its
/// connection may be used again, gathered as the head is read (one pass, no lookup
/// afterwards).
#[derive(Default)]
pub(super) struct BodyFields {
    /// `Content-Length`, when every value given agrees.
    pub(super) length: Option<u64>,
    /// A `Content-Length` that is not a number, or two that differ.
    pub(super) length_error: Option<&'static str>,
    /// `Transfer-Encoding` was given; whether its last coding is `chunked`.
    pub(super) chunked: Option<bool>,
    /// `Connection: close`.
    pub(super) close: bool,
}

/// True if `text`, a field's name or value as httparse passed it (no control
/// bytes but tab), is `lower` in any case. `lower` holds only lowercase letters,
/// digits and `-` `.` `/`: a byte of `text` with bit 0x20 set is one of those
/// only if it is that character in either case (the other bytes that map to them,
/// from 0x0D to 0x19, are control bytes), so setting it is an exact comparison,
/// done for all bytes at once. `eq_ignore_ascii_case` is dearer, byte by byte, and
/// a response's head is checked against four names.
pub(crate) fn same_text(text: &[u8], lower: &[u8]) -> bool {
    debug_assert!(lower
        .iter()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-./".contains(b)));
    text.len() == lower.len() && text.iter().zip(lower).fold(0, |diff, (t, l)| diff | ((t | 0x20) ^ l)) == 0
}

/// The comma-separated items of a field value, trimmed, empty ones left out.
pub(super) fn items(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value
        .split(|&b| b == b',')
        .map(<[u8]>::trim_ascii)
        .filter(|t| !t.is_empty())
}

impl BodyFields {
    pub(super) fn note(&mut self, name: &[u8], value: &[u8]) {
        if same_text(name, CONTENT_LENGTH.as_str().as_bytes()) {
            for item in value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                // Digits only (no sign, no space), and no overflow.
                let n = (!item.is_empty()).then_some(item).and_then(|digits| {
                    digits.iter().try_fold(0u64, |n, &d| {
                        let d = d.is_ascii_digit().then(|| u64::from(d - b'0'))?;
                        n.checked_mul(10)?.checked_add(d)
                    })
                });
                match n {
                    None => self.length_error = Some("the response's Content-Length is not a number"),
                    Some(n) if self.length.is_some_and(|l| l != n) => {
                        self.length_error = Some("the response has two different Content-Length values")
                    }
                    Some(n) => self.length = Some(n),
                }
            }
        } else if same_text(name, TRANSFER_ENCODING.as_str().as_bytes()) {
            // Only the last coding of the last field counts.
            if let Some(last) = items(value).last() {
                self.chunked = Some(last.eq_ignore_ascii_case(b"chunked"));
            } else {
                self.chunked.get_or_insert(false);
            }
        } else if same_text(name, CONNECTION.as_str().as_bytes()) {
            self.close |= items(value).any(|t| t.eq_ignore_ascii_case(b"close"));
        }
    }

    /// How the body of a response to `method` with this status comes, and whether
    /// the connection may be used again (RFC 9112, section 6.3).
    pub(super) fn framing(&self, method: &Method, status: StatusCode) -> Result<(Framing, bool), Failure> {
        let keep_alive = !self.close;
        if method == Method::HEAD || status == StatusCode::NO_CONTENT || status == StatusCode::NOT_MODIFIED {
            return Ok((Framing::Done, keep_alive));
        }
        match self.chunked {
            // A length beside chunks is ignored, and the connection not used again.
            Some(true) => {
                let beside = self.length.is_some() || self.length_error.is_some();
                return Ok((Framing::Chunked(Chunk::Size), keep_alive && !beside));
            }
            Some(false) => return Ok((Framing::UntilClose, false)),
            None => {}
        }
        if let Some(e) = self.length_error {
            return Err(invalid(e));
        }
        Ok(match self.length {
            Some(0) => (Framing::Done, keep_alive),
            Some(n) => (Framing::Length(n), keep_alive),
            None => (Framing::UntilClose, false),
        })
    }
}

/// A whole head from the front of `buf` (taken off it), None if it is not all
/// there yet. 1xx heads are skipped (101 is an error: nothing asked to switch).
pub(super) fn parse_head(buf: &mut BytesMut, method: &Method) -> Result<Option<Head>, Failure> {
    loop {
        // Room for a few fields on the stack; a head with more is parsed again with
        // room for all it may have, on the heap. (On a blocked caller's thread this
        // runs at the deepest point of its call, and every page of stack a thread
        // reaches stays its own: docs/performance.md.)
        let mut few = [const { MaybeUninit::uninit() }; FEW_FIELDS];
        let parsed = match read_fields(buf, &mut few) {
            Err(httparse::Error::TooManyHeaders) => {
                let mut all = Vec::new();
                all.resize_with(MAX_FIELDS, MaybeUninit::uninit);
                read_fields(buf, &mut all)
            }
            other => other,
        };
        let (used, code, http10, fields, body) = match parsed {
            Ok(Some(p)) => p,
            Ok(None) if buf.len() < MAX_LINE => return Ok(None),
            Ok(None) => return Err(invalid(format!("the response head is over {} KiB", MAX_LINE / 1024))),
            Err(e) => return Err(invalid(format!("the response head is not valid HTTP/1.1 ({e})"))),
        };
        let status = code
            .and_then(|c| StatusCode::from_u16(c).ok())
            .ok_or_else(|| invalid("the response's status code is not valid"))?;
        buf.advance(used);
        if status == StatusCode::SWITCHING_PROTOCOLS {
            return Err(invalid("the server switched protocols unasked (101)"));
        }
        if status.is_informational() {
            continue;
        }
        let (framing, keep_alive) = body.framing(method, status)?;
        return Ok(Some(Head {
            status,
            fields,
            framing,
            keep_alive: keep_alive && !http10,
        }));
    }
}

/// What [`read_fields`] found: the head's length, its status code, whether it is
/// HTTP/1.0, its fields and what says how the body is framed.
pub(super) type HeadParts = (usize, Option<u16>, bool, Fields, BodyFields);

/// Parses a head at the front of `buf` with room for `room.len()` fields: `None`
/// while it is not all there (or is over `MAX_LINE`).
pub(super) fn read_fields<'b>(
    buf: &'b [u8],
    room: &mut [MaybeUninit<httparse::Header<'b>>],
) -> Result<Option<HeadParts>, httparse::Error> {
    let mut resp = httparse::Response::new(&mut []);
    let used = match httparse::ParserConfig::default().parse_response_with_uninit_headers(&mut resp, buf, room)? {
        httparse::Status::Complete(n) if n <= MAX_LINE => n,
        _ => return Ok(None),
    };
    // httparse has checked them: names are tokens, values visible text.
    let mut body = BodyFields::default();
    for f in resp.headers.iter() {
        body.note(f.name.as_bytes(), f.value);
    }
    let fields = Fields::new(&buf[..used], resp.headers);
    Ok(Some((used, resp.code, resp.version == Some(0), fields, body)))
}

/// `n` bytes off the front of `buf`.
pub(super) fn take(buf: &mut BytesMut, n: usize) -> Bytes {
    if n <= COPY_MAX {
        let piece = Bytes::copy_from_slice(&buf[..n]);
        buf.advance(n);
        piece
    } else {
        buf.split_to(n).freeze()
    }
}

/// What reading a body needs next.
pub(super) enum Step {
    /// A piece of the body: this many bytes at the buffer's front (the caller takes
    /// them off it).
    Piece(usize),
    /// More bytes from the connection (at its end, the body ends if it is framed by
    /// the end, and is cut short otherwise).
    More,
    /// The body's end.
    End,
}

/// One step of reading a body framed by `framing` from the front of `buf`, which it
/// moves on. No I/O: the same steps whatever pieces the stream arrives in (the
/// `http1` fuzz target checks it).
pub(super) fn body_step(buf: &mut BytesMut, framing: &mut Framing) -> Result<Step, Failure> {
    let too_long = |what: &str| invalid(format!("the response's {what} is over {} KiB", MAX_LINE / 1024));
    loop {
        match framing {
            Framing::Done => return Ok(Step::End),
            Framing::Length(left) | Framing::Chunked(Chunk::Data(left)) => {
                if buf.is_empty() {
                    return Ok(Step::More);
                }
                let n = usize::try_from(*left).unwrap_or(usize::MAX).min(buf.len());
                *left -= n as u64;
                if *left == 0 {
                    *framing = match framing {
                        Framing::Length(_) => Framing::Done,
                        _ => Framing::Chunked(Chunk::DataEnd),
                    };
                }
                return Ok(Step::Piece(n));
            }
            Framing::UntilClose => {
                if buf.is_empty() {
                    return Ok(Step::More);
                }
                return Ok(Step::Piece(buf.len()));
            }
            Framing::Chunked(Chunk::Size) => match httparse::parse_chunk_size(buf) {
                Ok(httparse::Status::Complete((used, _))) if used > MAX_LINE => {
                    return Err(too_long("chunk size line"))
                }
                Ok(httparse::Status::Complete((used, size))) => {
                    buf.advance(used);
                    *framing = Framing::Chunked(if size == 0 { Chunk::Trailers } else { Chunk::Data(size) });
                }
                Ok(httparse::Status::Partial) if buf.len() >= MAX_LINE => return Err(too_long("chunk size line")),
                Ok(httparse::Status::Partial) => return Ok(Step::More),
                Err(_) => return Err(invalid("a chunk size in the response is not valid")),
            },
            Framing::Chunked(Chunk::DataEnd) => {
                if buf.len() < 2 {
                    return Ok(Step::More);
                }
                if &buf[..2] != b"\r\n" {
                    return Err(invalid("a chunk in the response does not end where its size says"));
                }
                buf.advance(2);
                *framing = Framing::Chunked(Chunk::Size);
            }
            Framing::Chunked(Chunk::Trailers) => match memchr::memmem::find(buf, b"\r\n") {
                Some(i) if i >= MAX_LINE => return Err(too_long("trailer")),
                Some(0) => {
                    buf.advance(2);
                    *framing = Framing::Done;
                }
                Some(i) => buf.advance(i + 2), // a trailer field, not used
                // The line's end may start at the last byte (a CR): over the limit only
                // once more than that is here, whatever the reads.
                None if buf.len() > MAX_LINE => return Err(too_long("trailer")),
                None => return Ok(Step::More),
            },
        }
    }
}

/// What a response read from a stream comes to: its status, its fields, its body,
/// whether its connection could carry another request, and how many bytes followed
/// it.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) type Read = (u16, Vec<(Vec<u8>, Vec<u8>)>, Vec<u8>, bool, usize);

/// Reads a response to a POST from `reads`, each as if one read from the socket
/// (for the `http1` fuzz target, which checks that any split reads the same).
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn read_from(reads: &[&[u8]]) -> Result<Read, String> {
    let mut buf = BytesMut::new();
    let mut reads = reads.iter();
    let head = loop {
        match parse_head(&mut buf, &Method::POST).map_err(|e| e.to_string())? {
            Some(head) => break head,
            None => match reads.next() {
                Some(r) => buf.extend_from_slice(r),
                None => return Err("the stream ended in the head".into()),
            },
        }
    };
    let mut framing = head.framing;
    let mut body = Vec::new();
    loop {
        match body_step(&mut buf, &mut framing).map_err(|e| e.to_string())? {
            Step::Piece(n) => {
                body.extend_from_slice(&buf[..n]);
                buf.advance(n);
            }
            Step::End => break,
            Step::More => match reads.next() {
                Some(r) => buf.extend_from_slice(r),
                None if framing == Framing::UntilClose => break,
                None => return Err("the stream ended in the body".into()),
            },
        }
    }
    let fields = head.fields.iter().map(|(n, v)| (n.to_vec(), v.to_vec())).collect();
    let after = buf.len() + reads.map(|r| r.len()).sum::<usize>();
    Ok((head.status.as_u16(), fields, body, head.keep_alive, after))
}
