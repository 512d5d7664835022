//! A response whose body is still to be read, and the ways to read it.

use std::sync::Arc;

use bytes::{Buf, Bytes, BytesMut};
use http::StatusCode;

use super::conn::*;
use super::parse::*;

/// A response whose body is still to be read; it holds its connection until then.
pub struct Reply {
    pub(super) status: StatusCode,
    pub(super) fields: Fields,
    pub(super) framing: Framing,
    pub(super) length: Option<u64>,
    /// Boxed, as it moves between the pool and replies, and a reply through awaits.
    pub(super) conn: Option<Box<Conn>>,
    /// The body's bytes at the front of the connection's buffer, lent by `rest`.
    pub(super) lent: usize,
    pub(super) pool: Arc<Pool>,
}

impl Reply {
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The value of the first field named `name` (in any case), as sent.
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.fields.get(name)
    }

    /// The same, when it is text (visible ASCII or UTF-8).
    pub fn header_str(&self, name: &str) -> Option<&str> {
        self.header(name).and_then(|v| std::str::from_utf8(v).ok())
    }

    /// How many bytes of the body are sure to follow what has been read, in one
    /// piece: what is left of a body of known length, or of the current chunk.
    pub fn piece_left(&self) -> u64 {
        match self.framing {
            Framing::Length(n) | Framing::Chunked(Chunk::Data(n)) => n,
            _ => 0,
        }
    }

    /// The body's length, when the server gave one.
    pub fn content_length(&self) -> Option<u64> {
        self.length
    }

    /// The body read to its end: the connection goes back to the pool (if it may).
    pub(super) fn finish(&mut self) {
        self.framing = Framing::Done;
        if let Some(mut c) = self.conn.take() {
            let lent = std::mem::take(&mut self.lent);
            c.buf.advance(lent);
            if lent > KEEP_BUF && c.buf.is_empty() {
                // What is left of it says nothing of its size. Bytes after the body
                // stay, so that the pool refuses the connection.
                c.buf = BytesMut::new();
            }
            self.pool.put(c);
        }
    }

    /// A reply's connection, its buffer moved past what was `lent` (by `rest` or
    /// `chunk_lent`): None once it is back in the pool or gone. (Of the fields, not
    /// of the reply: its framing is borrowed beside it.)
    fn past_lent<'c>(conn: &'c mut Option<Box<Conn>>, lent: &mut usize) -> Option<&'c mut Conn> {
        let conn = conn.as_mut()?;
        conn.buf.advance(std::mem::take(lent));
        Some(conn)
    }

    /// The next piece of the body; `None` at its end.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, Failure> {
        let Some(conn) = Self::past_lent(&mut self.conn, &mut self.lent) else {
            return Ok(None);
        };
        match conn.next_piece(&mut self.framing).await {
            Ok(piece) => {
                let piece = piece.map(|n| take(&mut conn.buf, n));
                if self.framing == Framing::Done {
                    self.finish();
                }
                Ok(piece)
            }
            Err(e) => {
                self.conn = None; // unusable
                Err(e)
            }
        }
    }

    /// The same, lent from the connection's buffer until the next call or the
    /// reply's end, for a reader that uses each piece at once (an SSE stream's):
    /// a piece taken out would be copied first, into an allocation of its own. With
    /// the piece, how many bytes are sure to follow it in one piece (as
    /// [`Reply::piece_left`]).
    pub async fn chunk_lent(&mut self) -> Result<Option<(&[u8], u64)>, Failure> {
        let Some(conn) = Self::past_lent(&mut self.conn, &mut self.lent) else {
            return Ok(None);
        };
        match conn.next_piece(&mut self.framing).await {
            Ok(Some(n)) => {
                self.lent = n;
                let left = self.piece_left();
                let conn = self.conn.as_ref().expect("the connection read the piece");
                Ok(Some((&conn.buf[..n], left)))
            }
            Ok(None) => {
                self.finish();
                Ok(None)
            }
            Err(e) => {
                self.conn = None; // unusable
                Err(e)
            }
        }
    }

    /// The rest of a body whose length the server gave (`content_length`), read
    /// into the connection's buffer and lent from there, as a stdio line is: a
    /// large body is neither gathered from pieces nor copied out. Room for the
    /// whole body is made before it comes, so the caller checks the length against
    /// its limit first.
    pub async fn rest(&mut self) -> Result<&[u8], Failure> {
        let Some(conn) = self.conn.as_mut() else {
            return Ok(&[]);
        };
        let Framing::Length(left) = self.framing else {
            return Err(invalid("the response body's length is not known"));
        };
        let left = usize::try_from(left).map_err(|_| invalid("the response body is too large"))?;
        if left > GROW_STEP && conn.buf.len() < left && conn.buf.capacity() < left + READ_SIZE {
            // A large body gets a buffer of its own, made at once at its length (and
            // a last read's room) on the thread that reads it. Grown as it came, by
            // `realloc`, it would stay in the heap of whichever thread first made the
            // connection's buffer (a runtime thread) and leave the growth's holes
            // there (docs/performance.md).
            let mut whole = BytesMut::with_capacity(left + READ_SIZE);
            whole.extend_from_slice(&conn.buf);
            conn.buf = whole;
        }
        while conn.buf.len() < left {
            let want = (left - conn.buf.len()).min(GROW_STEP);
            match conn.read_more(want).await {
                Ok(0) => {
                    self.conn = None;
                    return Err(closed_early("before the response body's end"));
                }
                Ok(_) => {}
                Err(e) => {
                    self.conn = None;
                    return Err(Failure::Http(e));
                }
            }
        }
        self.framing = Framing::Done;
        self.lent = left;
        let conn = self.conn.as_ref().expect("the connection read the body");
        Ok(&conn.buf[..left])
    }

    /// The body that [`rest`](Self::rest) lent, taken out of the connection's buffer
    /// whole (no copy), for a reader that keeps it; bytes after it stay the
    /// connection's.
    pub fn take_rest(&mut self) -> Bytes {
        let lent = std::mem::take(&mut self.lent);
        let Some(conn) = self.conn.as_mut() else {
            return Bytes::new();
        };
        let mut body = std::mem::take(&mut conn.buf);
        if body.len() > lent {
            conn.buf = body.split_off(lent);
        }
        body.freeze()
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        // A body read to its end (or an empty one) leaves the connection reusable;
        // one dropped half-read closes it.
        if self.framing == Framing::Done {
            self.finish();
        }
    }
}

/// The response head (for tests and logs).
impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reply")
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}
