//! Reading a resource (`mcpc_contents_t`), getting a prompt and asking for a
//! completion.

use std::ffi::{c_char, CString};
use std::sync::OnceLock;

use super::boundary::{boundary, status};
use super::client::{control_from, mcpc_call_opts_t, mcpc_client_t};
use super::cstr::{opt_str_in, str_in, string_out};
use super::ptr::{self, Handle, Out};
use crate::client::Reference;
use crate::error::{mcpc_status_t, Error, Status};
use crate::result::{Body, Contents, Text};

/// The contents of a resource read: one or more entries, each text or a blob.
/// Immutable: any thread may read it, also concurrently. What it hands out is
/// borrowed and lives until mcpc_contents_free.
pub struct mcpc_contents_t {
    _private: [u8; 0],
}

/// One entry, with C copies of its strings made when it was read.
struct Entry {
    uri: CString,
    mime_type: Option<CString>,
    /// A text with a trailing NUL, or a blob's bytes.
    body: Vec<u8>,
    is_text: bool,
    meta: Option<CString>,
}

pub(crate) struct ContentsData {
    entries: Vec<Entry>,
    json: Text,
    /// A C copy of the JSON, made on first use: a caller that reads only the
    /// entries never pays for a copy of a large result.
    json_c: OnceLock<CString>,
}

/// A string from the server as C text: a NUL inside it (JSON may escape one) is an
/// error, not a silent cut.
fn c_text(s: String, what: &str) -> crate::error::Result<CString> {
    CString::new(s).map_err(|_| Error::new(Status::MCPC_ERR_PROTOCOL, format!("resources/read: {what} holds a NUL")))
}

impl ContentsData {
    pub(super) fn new(c: Contents) -> crate::error::Result<Self> {
        let mut entries = Vec::with_capacity(c.items.len());
        for item in c.items {
            let (body, is_text) = match item.body {
                // A text may hold NUL (JSON can escape one): C reads it by its length.
                // The reader left room for the NUL, so this does not copy.
                Body::Text(t) => {
                    let mut b = t.into_bytes();
                    b.push(0);
                    (b, true)
                }
                Body::Blob(b) => (b, false),
            };
            entries.push(Entry {
                uri: c_text(item.uri, "a uri")?,
                mime_type: item.mime_type.map(|m| c_text(m, "a mimeType")).transpose()?,
                body,
                is_text,
                meta: item.meta.map(|m| CString::new(m).expect("JSON text holds no NUL")),
            });
        }
        Ok(ContentsData {
            entries,
            json: c.json,
            json_c: OnceLock::new(),
        })
    }
}

impl Handle for mcpc_contents_t {
    type Rust = ContentsData;
    const NAME: &'static str = "contents";
}

/// Reads the resource `uri` (`resources/read`). Each entry of the result is text or a
/// blob; a blob is decoded from base64 and handed out with its length. The call
/// options apply as for mcpc_client_call_tool (timeout, cancel handle, progress).
/// Ownership: `uri` and `opts` are read during the call; on success `*out_contents`
/// is the caller's: free it with mcpc_contents_free.
/// Threads: any thread, concurrently; not from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
/// Errors: MCPC_ERR_INVALID_ARG (NULL, an empty URI), MCPC_ERR_INVALID_UTF8,
/// MCPC_ERR_RPC (a JSON-RPC error, such as -32002 for an unknown resource; its code
/// from mcpc_last_error_rpc_code), MCPC_ERR_PROTOCOL (no `contents`, an entry with
/// neither or both of text and blob, a blob that is not base64), MCPC_ERR_TIMEOUT,
/// MCPC_ERR_CANCELLED, MCPC_ERR_CLOSED, MCPC_ERR_INPUT_REQUIRED.
///
/// # Safety
/// `client` is NULL or live; `uri` is NULL or NUL-terminated; `opts` is NULL or an
/// initialised mcpc_call_opts_t; `out_contents` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_read_resource(
    client: *const mcpc_client_t,
    uri: *const c_char,
    opts: *const mcpc_call_opts_t,
    out_contents: *mut *mut mcpc_contents_t,
) -> mcpc_status_t {
    status("mcpc_client_read_resource", || {
        // SAFETY: per the contract.
        let out = unsafe { Out::new(out_contents, "out_contents") }?;
        // SAFETY: per the contract.
        let (c, uri, ctl) = unsafe { (ptr::get(client)?, str_in(uri, "uri")?, control_from(opts)?) };
        let mut ctl = ctl;
        let cl = c.client_ready(&mut ctl);
        read_resource_on(&cl, uri, &ctl, out)
    })
}

/// Reads `uri` from `cl` and hands out its contents.
pub(super) fn read_resource_on(
    cl: &crate::client::Client,
    uri: &str,
    ctl: &crate::client::Control,
    out: Out<'_, *mut mcpc_contents_t>,
) -> crate::error::Result<Status> {
    let contents = crate::drive::block_on_driven(std::pin::pin!(cl.read_resource(uri, ctl)), cl.driver())??;
    out.set_handle(ContentsData::new(contents)?);
    Ok(Status::MCPC_OK)
}

/// The entry `index` of `contents`, or None.
///
/// # Safety
/// `contents` is NULL or live.
unsafe fn entry<'a>(contents: *const mcpc_contents_t, index: usize) -> Option<&'a Entry> {
    // SAFETY: per the caller's contract.
    unsafe { ptr::get(contents) }.ok()?.entries.get(index)
}

/// The number of entries in `contents` (0 if NULL).
/// Threads: any thread.
///
/// # Safety
/// `contents` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_contents_count(contents: *const mcpc_contents_t) -> usize {
    // SAFETY: per the contract.
    boundary("mcpc_contents_count", || {
        unsafe { ptr::get(contents) }.map_or(0, |c| c.entries.len())
    })
}

/// The `uri` of entry `index`; NULL if `contents` is NULL or `index` out of range.
/// Ownership: borrowed; valid until mcpc_contents_free.
///
/// # Safety
/// `contents` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_contents_uri(contents: *const mcpc_contents_t, index: usize) -> *const c_char {
    // SAFETY: per the contract.
    boundary("mcpc_contents_uri", || {
        unsafe { entry(contents, index) }.map_or(std::ptr::null(), |e| e.uri.as_ptr())
    })
}

/// The `mimeType` of entry `index`; NULL if it has none, `contents` is NULL or
/// `index` is out of range.
/// Ownership: borrowed; valid until mcpc_contents_free.
///
/// # Safety
/// `contents` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_contents_mime_type(contents: *const mcpc_contents_t, index: usize) -> *const c_char {
    // SAFETY: per the contract.
    boundary("mcpc_contents_mime_type", || {
        unsafe { entry(contents, index) }
            .and_then(|e| e.mime_type.as_ref())
            .map_or(std::ptr::null(), |m| m.as_ptr())
    })
}

/// The `text` of entry `index` (NUL-terminated; its length in bytes, without the
/// NUL, in `*out_len` if `out_len` is not NULL: a text may hold NUL bytes). NULL (and length 0) if the entry is
/// a blob, `contents` is NULL or `index` is out of range.
/// Ownership: borrowed; valid until mcpc_contents_free.
///
/// # Safety
/// `contents` is NULL or live; `out_len` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_contents_text(
    contents: *const mcpc_contents_t,
    index: usize,
    out_len: *mut usize,
) -> *const c_char {
    // SAFETY: per the contract.
    boundary("mcpc_contents_text", || {
        let text = unsafe { entry(contents, index) }.filter(|e| e.is_text);
        // SAFETY: per the contract, `out_len` is NULL or writable.
        if let Some(len) = unsafe { out_len.as_mut() } {
            *len = text.map_or(0, |e| e.body.len() - 1);
        }
        text.map_or(std::ptr::null(), |e| e.body.as_ptr().cast())
    })
}

/// The decoded bytes of the blob of entry `index` (its length in `*out_len` if
/// `out_len` is not NULL; an empty blob gives a non-NULL pointer and length 0).
/// NULL (and length 0) if the entry is text, `contents` is NULL or `index` is out
/// of range.
/// Ownership: borrowed; valid until mcpc_contents_free.
///
/// # Safety
/// `contents` is NULL or live; `out_len` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_contents_blob(
    contents: *const mcpc_contents_t,
    index: usize,
    out_len: *mut usize,
) -> *const u8 {
    // SAFETY: per the contract.
    boundary("mcpc_contents_blob", || {
        let blob = unsafe { entry(contents, index) }.filter(|e| !e.is_text);
        // SAFETY: per the contract, `out_len` is NULL or writable.
        if let Some(len) = unsafe { out_len.as_mut() } {
            *len = blob.map_or(0, |e| e.body.len());
        }
        // An empty Vec's pointer is dangling but non-NULL: never read for length 0.
        blob.map_or(std::ptr::null(), |e| e.body.as_ptr())
    })
}

/// The `_meta` of entry `index` as JSON; NULL if it has none, `contents` is NULL or
/// `index` is out of range.
/// Ownership: borrowed; valid until mcpc_contents_free.
///
/// # Safety
/// `contents` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_contents_meta_json(contents: *const mcpc_contents_t, index: usize) -> *const c_char {
    // SAFETY: per the contract.
    boundary("mcpc_contents_meta_json", || {
        unsafe { entry(contents, index) }
            .and_then(|e| e.meta.as_ref())
            .map_or(std::ptr::null(), |m| m.as_ptr())
    })
}

/// The whole `ReadResourceResult` as the server sent it (blobs still in base64);
/// NULL if `contents` is NULL.
/// Ownership: borrowed; valid until mcpc_contents_free.
///
/// # Safety
/// `contents` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_contents_json(contents: *const mcpc_contents_t) -> *const c_char {
    // SAFETY: per the contract.
    boundary("mcpc_contents_json", || {
        unsafe { ptr::get(contents) }.map_or(std::ptr::null(), |c| {
            c.json_c
                .get_or_init(|| CString::new(&*c.json).expect("JSON text holds no NUL"))
                .as_ptr()
        })
    })
}

/// Frees `contents` and everything it handed out. NULL is a no-op.
/// Threads: any thread, once no other thread reads it.
///
/// # Safety
/// `contents` is NULL or live, and is not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_contents_free(contents: *mut mcpc_contents_t) {
    // SAFETY: per the contract.
    boundary("mcpc_contents_free", || drop(unsafe { ptr::take(contents) }));
}

fn subscribe(
    name: &str,
    on: bool,
    client: *const mcpc_client_t,
    uri: *const c_char,
    opts: *const mcpc_call_opts_t,
) -> mcpc_status_t {
    status(name, || {
        // SAFETY: the exports' contract: `client` NULL or live, `uri` NULL or
        // NUL-terminated, `opts` NULL or initialised.
        let (c, uri, ctl) = unsafe { (ptr::get(client)?, str_in(uri, "uri")?, control_from(opts)?) };
        let mut ctl = ctl;
        let cl = c.client_ready(&mut ctl);
        crate::drive::block_on_driven(std::pin::pin!(cl.subscribe_resource(uri, on, &ctl)), cl.driver())??;
        Ok(Status::MCPC_OK)
    })
}

/// Subscribes to changes of the resource `uri`: the server then sends
/// `notifications/resources/updated` with its `uri`, which reach the notification
/// callback (mcpc_options_set_notification_callback); read the resource again to see
/// what changed. Before 2026-07-28 this is `resources/subscribe`. Under it the client
/// keeps one `subscriptions/listen` open carrying every subscribed URI (and, with a
/// notification callback, the `list_changed` kinds): a change sends it anew and waits
/// for the server's acknowledgement; a listen the server ends or drops is sent again
/// with a backoff (100 ms doubling to 30 s) until mcpc_client_close. Subscribing to a
/// URI already subscribed sends nothing. The call options apply as for
/// mcpc_client_call_tool (the timeout bounds the wait for the acknowledgement).
/// Threads: any thread, concurrently (changes go one at a time); not from mcpc
/// callbacks (MCPC_ERR_WOULD_DEADLOCK).
/// Errors: MCPC_ERR_INVALID_ARG (NULL, an empty URI), MCPC_ERR_INVALID_UTF8,
/// MCPC_ERR_NOT_SUPPORTED (under 2026-07-28: the acknowledgement left `uri` out, so it
/// is not subscribed), MCPC_ERR_RPC (the server refused; -32601 when it offers no
/// subscriptions), MCPC_ERR_TIMEOUT, MCPC_ERR_CANCELLED, MCPC_ERR_CLOSED.
///
/// # Safety
/// `client` is NULL or live; `uri` is NULL or NUL-terminated; `opts` is NULL or an
/// initialised mcpc_call_opts_t.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_subscribe_resource(
    client: *const mcpc_client_t,
    uri: *const c_char,
    opts: *const mcpc_call_opts_t,
) -> mcpc_status_t {
    subscribe("mcpc_client_subscribe_resource", true, client, uri, opts)
}

/// Ends a subscription of mcpc_client_subscribe_resource: `resources/unsubscribe`
/// before 2026-07-28; under it the listen is sent anew without `uri` (the last URI out
/// ends it, and a URI not subscribed sends nothing). Otherwise as
/// mcpc_client_subscribe_resource.
///
/// # Safety
/// As for mcpc_client_subscribe_resource.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_unsubscribe_resource(
    client: *const mcpc_client_t,
    uri: *const c_char,
    opts: *const mcpc_call_opts_t,
) -> mcpc_status_t {
    subscribe("mcpc_client_unsubscribe_resource", false, client, uri, opts)
}

/// Gets the prompt `name` (`prompts/get`) with `arguments_json` (a JSON object whose
/// values are strings; NULL for none). `*out_json` is the `GetPromptResult` as the
/// server sent it: `description` and every message with its content of any type
/// (text, image, audio, resource links, embedded resources) verbatim; mcpc checks
/// that each message has a `role` and a typed `content`. The call options apply as
/// for mcpc_client_call_tool.
/// Ownership: the strings and `opts` are read during the call; on success
/// `*out_json` is the caller's: free it with mcpc_string_free.
/// Threads: any thread, concurrently; not from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
/// Errors: MCPC_ERR_INVALID_ARG (NULL, an empty name, arguments that are not an object
/// of strings), MCPC_ERR_INVALID_UTF8, MCPC_ERR_RPC (a JSON-RPC error, such as -32602
/// for an unknown prompt), MCPC_ERR_PROTOCOL (no `messages`, a malformed message),
/// MCPC_ERR_TIMEOUT, MCPC_ERR_CANCELLED, MCPC_ERR_CLOSED, MCPC_ERR_INPUT_REQUIRED.
///
/// # Safety
/// `client` is NULL or live; the strings are NULL or NUL-terminated; `opts` is NULL or
/// an initialised mcpc_call_opts_t; `out_json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_get_prompt(
    client: *const mcpc_client_t,
    name: *const c_char,
    arguments_json: *const c_char,
    opts: *const mcpc_call_opts_t,
    out_json: *mut *mut c_char,
) -> mcpc_status_t {
    status("mcpc_client_get_prompt", || {
        // SAFETY: per the contract.
        let out = unsafe { Out::new(out_json, "out_json") }?;
        // SAFETY: per the contract.
        let (c, name, args, ctl) = unsafe {
            (
                ptr::get(client)?,
                str_in(name, "name")?,
                opt_str_in(arguments_json, "arguments_json")?,
                control_from(opts)?,
            )
        };
        let mut ctl = ctl;
        let cl = c.client_ready(&mut ctl);
        get_prompt_on(&cl, name, args, &ctl, out)
    })
}

/// Gets prompt `name` on `cl`, blocking, into `out` (shared with the host's routed get).
pub(super) fn get_prompt_on(
    cl: &crate::client::Client,
    name: &str,
    args: Option<&str>,
    ctl: &crate::client::Control,
    out: Out<'_, *mut c_char>,
) -> crate::error::Result<Status> {
    let json = crate::drive::block_on_driven(std::pin::pin!(cl.get_prompt(name, args, ctl)), cl.driver())??;
    out.set(string_out(&json));
    Ok(Status::MCPC_OK)
}

/// mcpc_client_complete's reference: a prompt, by name (`ref/prompt`).
pub const MCPC_COMPLETE_PROMPT: i32 = 0;
/// mcpc_client_complete's reference: a resource template, by its URI template
/// (`ref/resource`).
pub const MCPC_COMPLETE_RESOURCE: i32 = 1;

/// Asks for completions of the argument `argument` whose value so far is `value`
/// (`completion/complete`), for the prompt named `reference` (`kind`
/// MCPC_COMPLETE_PROMPT) or the resource template `reference` (MCPC_COMPLETE_RESOURCE).
/// `context_json` holds the arguments already chosen (a JSON object of strings; NULL
/// for none). `*out_json` is the `CompleteResult` as the server sent it; mcpc checks
/// that `completion.values` holds at most 100 strings and that `total` and `hasMore`
/// have their types. The call options apply as for mcpc_client_call_tool.
/// Ownership: the strings and `opts` are read during the call; on success
/// `*out_json` is the caller's: free it with mcpc_string_free.
/// Threads: any thread, concurrently; not from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
/// Errors: MCPC_ERR_INVALID_ARG (NULL, an unknown `kind`, an empty reference or
/// argument name, a context that is not an object of strings), MCPC_ERR_INVALID_UTF8,
/// MCPC_ERR_RPC (a JSON-RPC error; -32601 when the server has no completions),
/// MCPC_ERR_PROTOCOL (a malformed completion), MCPC_ERR_TIMEOUT, MCPC_ERR_CANCELLED,
/// MCPC_ERR_CLOSED, MCPC_ERR_INPUT_REQUIRED.
///
/// # Safety
/// `client` is NULL or live; the strings are NULL or NUL-terminated (`value` may be
/// empty); `opts` is NULL or an initialised mcpc_call_opts_t; `out_json` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_complete(
    client: *const mcpc_client_t,
    kind: i32,
    reference: *const c_char,
    argument: *const c_char,
    value: *const c_char,
    context_json: *const c_char,
    opts: *const mcpc_call_opts_t,
    out_json: *mut *mut c_char,
) -> mcpc_status_t {
    status("mcpc_client_complete", || {
        // SAFETY: per the contract.
        let out = unsafe { Out::new(out_json, "out_json") }?;
        // SAFETY: per the contract.
        let (c, reference, argument, value, context, ctl) = unsafe {
            (
                ptr::get(client)?,
                str_in(reference, "reference")?,
                str_in(argument, "argument")?,
                str_in(value, "value")?,
                opt_str_in(context_json, "context_json")?,
                control_from(opts)?,
            )
        };
        let reference = match kind {
            MCPC_COMPLETE_PROMPT => Reference::Prompt(reference),
            MCPC_COMPLETE_RESOURCE => Reference::Resource(reference),
            other => {
                return Err(Error::new(
                    Status::MCPC_ERR_INVALID_ARG,
                    format!("unknown completion reference kind {other}"),
                ))
            }
        };
        let mut ctl = ctl;
        let cl = c.client_ready(&mut ctl);
        let json = crate::drive::block_on_driven(
            std::pin::pin!(cl.complete(reference, argument, value, context, &ctl)),
            cl.driver(),
        )??;
        out.set(string_out(&json));
        Ok(Status::MCPC_OK)
    })
}
