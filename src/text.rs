//! Text kept for the caller: owned, or a slice of the buffer a message arrived in
//! (shared, not copied), with the NUL that C reads it by.

/// JSON text kept for the caller: a copy of its own, or, for a large result that
/// came in a message the transport handed over whole, a slice of that message. The
/// slice saves a copy of the result (1 MiB for a 1 MiB echo) and its memory.
#[derive(Debug)]
pub enum Text {
    Own(Box<str>),
    /// Boxed: a result is moved through several hands, and this keeps it small.
    Shared(Box<SharedStr>),
    /// The JSON (its length given), a NUL, then a call result's one text block and
    /// its NUL, in one allocation (see [`call_result_read`]).
    Joint(Box<str>, u32),
}

/// Bytes known to be UTF-8: made only from a `&str` (see [`Text::shared`]).
#[derive(Debug)]
pub struct SharedStr(bytes::Bytes);

impl Text {
    /// `part`, a slice of `owner`'s bytes, shared with `owner` (no copy). Panics if
    /// `part` does not lie within `owner`.
    pub(crate) fn shared(owner: &bytes::Bytes, part: &str) -> Text {
        Text::Shared(Box::new(SharedStr(owner.slice_ref(part.as_bytes()))))
    }

    /// `owner` (a whole message handed over), when `part`, a slice of it, is at
    /// least half of it: worth keeping as a slice, which keeps all of `owner`.
    pub(crate) fn worth_sharing<'o>(owner: Option<&'o bytes::Bytes>, part: &str) -> Option<&'o bytes::Bytes> {
        owner.filter(|owner| part.len() >= owner.len() / 2)
    }

    /// `part` kept as a slice of `owner` when [worth it](Self::worth_sharing),
    /// else copied.
    pub(crate) fn kept(owner: Option<&bytes::Bytes>, part: &str) -> Text {
        match Self::worth_sharing(owner, part) {
            Some(owner) => Text::shared(owner, part),
            None => Text::Own(part.into()),
        }
    }

    /// The text as a `String` (a copy only when shared).
    pub(crate) fn into_string(self) -> String {
        match self {
            Text::Own(s) => s.into_string(),
            Text::Shared(s) => s.to_string(),
            Text::Joint(s, json) => {
                let mut s = s.into_string();
                s.truncate(json as usize);
                s
            }
        }
    }

    /// The JSON followed by a NUL, when it is kept so (C can borrow it as it is).
    pub fn json_nul(&self) -> Option<&str> {
        match self {
            Text::Joint(s, json) => Some(&s[..*json as usize + 1]),
            _ => None,
        }
    }

    /// The text block kept after the JSON, with its NUL (see [`Text::Joint`]).
    pub(crate) fn joint_text(&self) -> Option<&str> {
        match self {
            Text::Joint(s, json) => Some(&s[*json as usize + 1..]),
            _ => None,
        }
    }
}

impl std::ops::Deref for SharedStr {
    type Target = str;
    fn deref(&self) -> &str {
        #[allow(unsafe_code)]
        // SAFETY: a SharedStr holds the bytes of a `&str` (see `Text::shared`), which
        // are UTF-8, and `Bytes` never changes what it holds.
        unsafe {
            std::str::from_utf8_unchecked(&self.0)
        }
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            Text::Own(s) => s,
            Text::Shared(s) => s,
            Text::Joint(s, json) => &s[..*json as usize],
        }
    }
}

impl From<Box<str>> for Text {
    fn from(s: Box<str>) -> Self {
        Text::Own(s)
    }
}
