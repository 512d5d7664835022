//! Newline framing for the stdio transport: one JSON-RPC message per line,
//! with a cap on a line's length so a peer cannot exhaust memory.

/// A line longer than the cap: the connection that produced it must fail.
#[derive(Debug, PartialEq, Eq)]
pub struct LineTooLong {
    pub limit: usize,
}

/// Splits a byte stream into lines. Chunks may split lines anywhere; complete
/// lines inside one chunk are handed out without being copied.
#[derive(Debug)]
pub struct LineFramer {
    buf: Vec<u8>,
    max: usize,
}

impl LineFramer {
    /// `max` is the longest line accepted, without its line end.
    pub fn new(max: usize) -> Self {
        LineFramer { buf: Vec::new(), max }
    }

    /// Feeds one chunk; calls `on_line` for each complete non-empty line, without
    /// its `\n` or `\r\n`. Fails as soon as the current line exceeds the cap.
    pub fn feed(&mut self, mut chunk: &[u8], mut on_line: impl FnMut(&[u8])) -> Result<(), LineTooLong> {
        while let Some(pos) = memchr::memchr(b'\n', chunk) {
            let (head, rest) = (&chunk[..pos], &chunk[pos + 1..]);
            chunk = rest;
            if self.buf.is_empty() {
                self.emit(head, &mut on_line)?;
            } else {
                if self.buf.len() + head.len() > self.max + 1 {
                    return Err(LineTooLong { limit: self.max });
                }
                let mut line = std::mem::take(&mut self.buf);
                line.extend_from_slice(head);
                self.emit(&line, &mut on_line)?;
                line.clear();
                self.buf = line;
            }
        }
        // `+ 1` leaves room for a `\r` whose `\n` is still to come.
        if self.buf.len() + chunk.len() > self.max + 1 {
            return Err(LineTooLong { limit: self.max });
        }
        self.buf.extend_from_slice(chunk);
        Ok(())
    }

    /// Bytes of an unfinished line held back (a stream ending here ends mid-message).
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    fn emit(&self, line: &[u8], on_line: &mut impl FnMut(&[u8])) -> Result<(), LineTooLong> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > self.max {
            return Err(LineTooLong { limit: self.max });
        }
        if !line.iter().all(u8::is_ascii_whitespace) {
            on_line(line);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(chunks: &[&[u8]], max: usize) -> Result<Vec<Vec<u8>>, LineTooLong> {
        let mut f = LineFramer::new(max);
        let mut out = Vec::new();
        for c in chunks {
            f.feed(c, |l| out.push(l.to_vec()))?;
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

    #[test]
    fn partial_line_is_held() {
        let mut f = LineFramer::new(100);
        let mut n = 0;
        f.feed(b"{\"a\":", |_| n += 1).unwrap();
        assert_eq!((n, f.pending()), (0, 5));
        f.feed(b"1}\n", |_| n += 1).unwrap();
        assert_eq!((n, f.pending()), (1, 0));
    }
}
