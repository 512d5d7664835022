//! Newline framing for the stdio transport: one JSON-RPC message per line,
//! with a cap on a line's length so a peer cannot exhaust memory.

use bytes::Bytes;

/// Line buffers up to this size are kept for the next long line; larger ones are freed.
const RETAIN: usize = 256 * 1024;

/// A line longer than the cap: the connection that produced it must fail.
#[derive(Debug, PartialEq, Eq)]
pub struct LineTooLong {
    pub limit: usize,
}

/// Splits a byte stream into lines. Chunks may split lines anywhere; complete
/// lines inside one chunk are handed out without being copied, and the rest of a
/// long line is read straight into the line buffer ([`read_with`](Self::read_with)),
/// so a large message is copied once on its way in.
#[derive(Debug)]
pub struct LineFramer {
    /// `buf[..held]` is an unfinished line; the rest is room (zeroed once, reused).
    buf: Vec<u8>,
    held: usize,
    max: usize,
}

impl LineFramer {
    /// `max` is the longest line accepted, without its line end.
    pub fn new(max: usize) -> Self {
        LineFramer {
            buf: Vec::new(),
            held: 0,
            max,
        }
    }

    /// Feeds one chunk; calls `on_line` for each complete non-empty line, without
    /// its `\n` or `\r\n`. Fails as soon as the current line exceeds the cap. A line
    /// that grew the buffer past [`RETAIN`] comes with the buffer itself, as `Bytes`
    /// holding exactly the line: the reader may keep it (or part of it) instead of
    /// copying, and the framer starts afresh with the next line.
    pub fn feed(
        &mut self,
        mut chunk: &[u8],
        mut on_line: impl FnMut(&[u8], Option<&Bytes>),
    ) -> Result<(), LineTooLong> {
        while let Some(pos) = memchr::memchr(b'\n', chunk) {
            let (head, rest) = (&chunk[..pos], &chunk[pos + 1..]);
            chunk = rest;
            if self.held == 0 {
                emit(self.max, head, None, &mut on_line)?;
            } else {
                self.hold(head)?;
                self.emit_held(&mut on_line)?;
            }
        }
        self.hold(chunk)
    }

    /// Reads once with `read` and hands out the complete lines, as [`feed`](Self::feed).
    /// With no line pending, `read` fills `scratch`; in the middle of a line it fills
    /// the line buffer directly (at most `scratch.len()` bytes). Returns what `read`
    /// returned.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))] // the caller's fast path is Linux's alone
    pub fn read_with<E>(
        &mut self,
        scratch: &mut [u8],
        mut read: impl FnMut(&mut [u8]) -> Result<usize, E>,
        mut on_line: impl FnMut(&[u8], Option<&Bytes>),
    ) -> Result<Result<usize, E>, LineTooLong> {
        if self.held == 0 {
            let n = match read(scratch) {
                Ok(n) => n,
                Err(e) => return Ok(Err(e)),
            };
            self.feed(&scratch[..n], on_line)?;
            return Ok(Ok(n));
        }
        let start = self.held;
        self.reserve(scratch.len());
        let room = (self.buf.len() - start).min(scratch.len());
        let n = match read(&mut self.buf[start..start + room]) {
            Ok(n) => n,
            Err(e) => return Ok(Err(e)),
        };
        match memchr::memchr(b'\n', &self.buf[start..start + n]) {
            None => {
                self.held += n;
                self.check_held()?;
            }
            Some(pos) => {
                // The line ends here; what follows it goes round again from `scratch`.
                let rest = n - pos - 1;
                scratch[..rest].copy_from_slice(&self.buf[start + pos + 1..start + n]);
                self.held += pos;
                self.emit_held(&mut on_line)?;
                self.feed(&scratch[..rest], on_line)?;
            }
        }
        Ok(Ok(n))
    }

    /// Bytes of an unfinished line held back (a stream ending here ends mid-message).
    pub fn pending(&self) -> usize {
        self.held
    }

    /// Room for `more` bytes after the held ones, growing the buffer geometrically.
    fn reserve(&mut self, more: usize) {
        let need = self.held + more;
        if need > self.buf.len() {
            // Never past the longest line that can still be accepted (`\r\n`
            // included).
            let len = need.min(self.max + 2).max(self.buf.len());
            let cap = self.buf.capacity();
            if len > cap {
                // Half as much again each time, not twice: a 16 MiB line's buffer then
                // stays below 32 MiB, above which glibc maps every allocation afresh
                // (and the kernel faults in its pages for every message;
                // docs/performance.md).
                let grown = (cap + cap / 2).clamp(len, (self.max + 2).max(len));
                self.buf.reserve_exact(grown - self.buf.len());
            }
            // Only as far as needed, so untouched room costs no memory.
            self.buf.resize(len, 0);
        }
    }

    fn hold(&mut self, bytes: &[u8]) -> Result<(), LineTooLong> {
        // `+ 1` leaves room for a `\r` whose `\n` is still to come.
        if self.held + bytes.len() > self.max + 1 {
            return Err(LineTooLong { limit: self.max });
        }
        self.reserve(bytes.len());
        self.buf[self.held..self.held + bytes.len()].copy_from_slice(bytes);
        self.held += bytes.len();
        Ok(())
    }

    #[cfg_attr(not(target_os = "linux"), allow(dead_code))] // the caller's fast path is Linux's alone
    fn check_held(&self) -> Result<(), LineTooLong> {
        if self.held > self.max + 1 {
            return Err(LineTooLong { limit: self.max });
        }
        Ok(())
    }

    fn emit_held(&mut self, on_line: &mut impl FnMut(&[u8], Option<&Bytes>)) -> Result<(), LineTooLong> {
        let held = std::mem::replace(&mut self.held, 0);
        if self.buf.len() <= RETAIN {
            return emit(self.max, &self.buf[..held], None, on_line);
        }
        // A large message: its buffer goes with it (not held here for good).
        let mut buf = std::mem::take(&mut self.buf);
        buf.truncate(held);
        let whole = Bytes::from(buf);
        emit(self.max, &whole, Some(&whole), on_line)
    }
}

/// Hands out `line` (of `whole`, when given) without its `\r`, unless it is blank.
fn emit(
    max: usize,
    line: &[u8],
    whole: Option<&Bytes>,
    on_line: &mut impl FnMut(&[u8], Option<&Bytes>),
) -> Result<(), LineTooLong> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.len() > max {
        return Err(LineTooLong { limit: max });
    }
    if !line.iter().all(u8::is_ascii_whitespace) {
        match whole {
            Some(whole) => on_line(line, Some(&whole.slice_ref(line))),
            None => on_line(line, None),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(chunks: &[&[u8]], max: usize) -> Result<Vec<Vec<u8>>, LineTooLong> {
        let mut f = LineFramer::new(max);
        let mut out = Vec::new();
        for c in chunks {
            f.feed(c, |l, _| out.push(l.to_vec()))?;
        }
        Ok(out)
    }

    #[test]
    fn every_split_gives_the_same_lines() {
        let input: &[u8] = b"{\"a\":1}\n\r\n{\"b\":2}\r\n  \n{\"c\":3}\n";
        let want = vec![b"{\"a\":1}".to_vec(), b"{\"b\":2}".to_vec(), b"{\"c\":3}".to_vec()];
        for i in 0..=input.len() {
            for j in i..=input.len() {
                let got = lines_of(&[&input[..i], &input[i..j], &input[j..]], 64).unwrap();
                assert_eq!(got, want, "split at {i},{j}");
            }
        }
    }

    #[test]
    fn over_long_line_fails_at_every_split() {
        let input = [b'x'; 40];
        for i in 0..=input.len() {
            let r = lines_of(&[&input[..i], &input[i..], b"\n"], 16);
            assert_eq!(r, Err(LineTooLong { limit: 16 }));
        }
        // A line exactly at the limit passes, with LF or CRLF.
        assert_eq!(lines_of(&[&[b'y'; 16], b"\r\n"], 16).unwrap().len(), 1);
    }

    /// Reading through `read_with`, in reads of every size, gives the same lines as
    /// `feed`, and the same errors.
    #[test]
    fn read_with_matches_feed() {
        let long = "x".repeat(300);
        let input = format!("{{\"a\":1}}\n{long}\r\n\n{{\"b\":2}}\n{long}{long}\n{{\"c\"");
        let want = lines_of(&[input.as_bytes()], 1000).unwrap();
        for size in [1, 2, 7, 64, 299, 300, 301, 1000] {
            let mut f = LineFramer::new(1 << 20);
            let mut scratch = vec![0u8; size];
            let mut got = Vec::new();
            let mut at = 0;
            while at < input.len() {
                let read = |dst: &mut [u8]| -> Result<usize, ()> {
                    let n = dst.len().min(input.len() - at);
                    dst[..n].copy_from_slice(&input.as_bytes()[at..at + n]);
                    Ok(n)
                };
                let n = f
                    .read_with(&mut scratch, read, |l, _| got.push(l.to_vec()))
                    .unwrap()
                    .unwrap();
                at += n;
            }
            assert_eq!(got, want, "reads of {size}");
            assert_eq!(f.pending(), 4, "reads of {size}");
            assert!(
                f.buf.len() <= 2048,
                "reads of {size}: the buffer grew to {}",
                f.buf.len()
            );
            // A line over the cap fails, however it is read.
            let mut f = LineFramer::new(100);
            let mut at = 0;
            let err = loop {
                let read = |dst: &mut [u8]| -> Result<usize, ()> {
                    let n = dst.len().min(long.len() - at);
                    dst[..n].copy_from_slice(&long.as_bytes()[at..at + n]);
                    Ok(n)
                };
                match f.read_with(&mut scratch, read, |_, _| {}) {
                    Err(e) => break e,
                    Ok(n) => at += n.unwrap(),
                }
                assert!(at < long.len(), "reads of {size}: no error");
            };
            assert_eq!(err, LineTooLong { limit: 100 });
        }
    }

    /// A line of a little over 16 MiB (a 16 MiB text with its envelope), read in
    /// 64 KiB pieces, leaves its buffer below 32 MiB (glibc maps anything larger
    /// afresh each time; doubling went to 32 MiB), and the line comes out whole.
    #[test]
    fn a_large_line_grows_its_buffer_by_half() {
        let mut f = LineFramer::new(40 << 20);
        let piece = vec![b'x'; 64 << 10];
        let mut scratch = vec![0u8; 64 << 10];
        let mut lines = Vec::new();
        for _ in 0..257 {
            let mut from = &piece[..];
            let got = f.read_with(
                &mut scratch,
                |dst| std::io::Read::read(&mut from, dst),
                |l, _| lines.push(l.len()),
            );
            assert!(matches!(got, Ok(Ok(n)) if n > 0));
        }
        assert_eq!(f.pending(), (16 << 20) + (64 << 10));
        assert!(f.buf.capacity() < 32 << 20, "capacity {}", f.buf.capacity());
        // The line comes with its buffer, which holds exactly the line (its `\r` too
        // is left out), and the framer starts afresh.
        let mut whole = None;
        f.feed(b"\r\n{}\n", |l, w| {
            lines.push(l.len());
            whole.get_or_insert(w.map(|w| (w.len(), w.as_ptr() == l.as_ptr())));
        })
        .unwrap();
        assert_eq!(lines, vec![(16 << 20) + (64 << 10), 2]);
        assert_eq!(whole, Some(Some(((16 << 20) + (64 << 10), true))));
        assert_eq!((f.buf.capacity(), f.pending()), (0, 0));
    }

    #[test]
    fn partial_line_is_held() {
        let mut f = LineFramer::new(100);
        let mut n = 0;
        f.feed(b"{\"a\":", |_, _| n += 1).unwrap();
        assert_eq!((n, f.pending()), (0, 5));
        f.feed(b"1}\n", |_, whole| n += 1 + usize::from(whole.is_some()))
            .unwrap();
        assert_eq!((n, f.pending()), (1, 0), "a short line comes without its buffer");
    }
}
