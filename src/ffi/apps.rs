//! MCP Apps (`io.modelcontextprotocol/ui`) through the C ABI: each listed tool's view
//! and visibility, and a view fetched with the policy to render it under.

use std::ffi::{c_char, CString};

use super::boundary::{boundary, c_message, status};
use super::call_opts::{control_from, mcpc_call_opts_t};
use super::client::mcpc_client_t;
use super::cstr::{str_in, string_out};
use super::ptr::{self, Handle, Out};
use super::result::mcpc_tool_list_t;
use crate::client::apps::View;
use crate::client::Relayed;
use crate::error::{mcpc_status_t, Status};

/// A bit of mcpc_tool_list_ui_visibility: the model may see and call the tool (a host
/// leaves a tool without it out of the model's tool list).
pub const MCPC_UI_MODEL: u32 = 1;
/// A bit of mcpc_tool_list_ui_visibility: the tool's view may call it (through the
/// host, on the same server).
pub const MCPC_UI_APP: u32 = 2;

/// The `ui://` URI of the view of tool `index` (its `_meta.ui.resourceUri`, else the
/// older `_meta["ui/resourceUri"]`), or NULL when it has none, `list` is NULL or
/// `index` is out of range. A URI of another scheme counts as none.
/// Ownership: borrowed; valid until mcpc_tool_list_free.
/// Threads: any thread; the list is read-only.
///
/// # Safety
/// `list` is NULL or a live tool list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_tool_list_ui_uri(list: *const mcpc_tool_list_t, index: usize) -> *const c_char {
    boundary("mcpc_tool_list_ui_uri", || {
        // SAFETY: per the contract.
        unsafe { ptr::get(list) }
            .ok()
            .and_then(|l| l.ui(index))
            .and_then(|(uri, _)| uri.as_ref())
            .map_or(std::ptr::null(), |u| u.as_ptr())
    })
}

/// Who may see and call tool `index`: MCPC_UI_MODEL and MCPC_UI_APP bits, from its
/// `_meta.ui.visibility` (both when it gives none). 0 when `list` is NULL or `index`
/// is out of range, and for a tool whose visibility names neither.
/// Threads: any thread; the list is read-only.
///
/// # Safety
/// `list` is NULL or a live tool list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_tool_list_ui_visibility(list: *const mcpc_tool_list_t, index: usize) -> u32 {
    boundary("mcpc_tool_list_ui_visibility", || {
        // SAFETY: per the contract.
        unsafe { ptr::get(list) }
            .ok()
            .and_then(|l| l.ui(index))
            .map_or(0, |(_, v)| *v)
    })
}

/// A view of MCP Apps, fetched and checked, with the policy to render it under.
/// Immutable: any thread may read it. What it hands out is borrowed and lives until
/// mcpc_ui_view_free.
pub struct mcpc_ui_view_t {
    _private: [u8; 0],
}

pub(crate) struct ViewData {
    html: CString,
    len: usize,
    csp: CString,
    allow: CString,
    domain: Option<CString>,
    prefers_border: Option<bool>,
    meta: CString,
}

impl Handle for mcpc_ui_view_t {
    type Rust = ViewData;
    const NAME: &'static str = "view";
}

impl ViewData {
    fn new(v: View) -> Self {
        let len = v.html.len();
        ViewData {
            // A NUL inside the document is the server's; the length says where it ends.
            html: CString::new(v.html.replace('\0', "\u{FFFD}")).expect("NULs were replaced"),
            len,
            csp: c_message(&v.csp),
            allow: c_message(&v.allow),
            domain: v.domain.as_deref().map(c_message),
            prefers_border: v.prefers_border,
            meta: c_message(&v.meta),
        }
    }
}

/// Fetches the view `uri` (`resources/read` of a `ui://` URI) and builds its policy:
/// the read must hold one content of MIME type `text/html;profile=mcp-app`, its text
/// or decoded blob UTF-8 HTML of at most 8 MiB. The view's `_meta.ui` is the read
/// content's, else the `resources/list` entry's for `uri` (listed only then, and only
/// if the server lists it). From it, the Content-Security-Policy (the specification's
/// restrictive default when it declares no `csp`) and the frame's `allow` attribute;
/// each declared CSP source must be an origin (`http`, `https`, `ws`, `wss`; a host
/// whose first label may be `*`; a port): anything else, which could widen or break
/// out of the policy, refuses the view. The call options apply as for any call.
/// Ownership: `uri` and `opts` are read during the call; on success `*out_view` is the
/// caller's: free it with mcpc_ui_view_free.
/// Threads: any thread, concurrently; not from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
/// Errors: MCPC_ERR_INVALID_ARG (NULL, a URI not `ui://`), MCPC_ERR_INVALID_UTF8,
/// MCPC_ERR_PROTOCOL (not one content, another MIME type, not UTF-8, a refused CSP
/// source or domain), MCPC_ERR_MESSAGE_TOO_LARGE (over 8 MiB), MCPC_ERR_RPC, and those
/// of mcpc_client_read_resource.
///
/// # Safety
/// `client` is NULL or live; `uri` is NULL or NUL-terminated; `opts` is NULL or an
/// initialised mcpc_call_opts_t; `out_view` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_read_ui_view(
    client: *const mcpc_client_t,
    uri: *const c_char,
    opts: *const mcpc_call_opts_t,
    out_view: *mut *mut mcpc_ui_view_t,
) -> mcpc_status_t {
    status("mcpc_client_read_ui_view", || {
        // SAFETY: per the contract.
        let out = unsafe { Out::new(out_view, "out_view") }?;
        // SAFETY: per the contract.
        let (c, uri, ctl) = unsafe { (ptr::get(client)?, str_in(uri, "uri")?, control_from(opts)?) };
        let mut ctl = ctl;
        let cl = c.client_ready(&mut ctl);
        let view = crate::drive::block_on_driven(std::pin::pin!(cl.read_view(uri, &ctl)), cl.driver())??;
        out.set_handle(ViewData::new(view));
        Ok(Status::MCPC_OK)
    })
}

/// Relays one JSON-RPC message of a view (`message_json`, as the view sent it) to the
/// client's server, and gives the reply to hand back to the view. Only what a view
/// may ask goes to the server: `tools/call` of a tool this server lists with an `app`
/// visibility (mcpc_tool_list_ui_visibility; the tools are listed first when no list
/// is kept), `resources/read`, `ping`, and the notification `notifications/message`.
/// Any other request is answered with a JSON-RPC error (-32601; -32602 for a tool the
/// view may not call) that never reaches the server. A request the server fails, or
/// that times out or is cancelled, is answered with a JSON-RPC error too (the
/// server's code, else -32603). The call options apply to the relayed request as to
/// any call: timeout, cancel handle, task preference.
/// On MCPC_OK `*out_reply_json` is the reply (a JSON-RPC response with the view's
/// id), owned by the caller (free with mcpc_string_free), or NULL for a notification
/// passed on.
/// Threads: any thread, concurrently; not from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
/// Errors: MCPC_ERR_INVALID_ARG (NULL; a message that is not one JSON-RPC request or
/// notification: not JSON, a batch, a response, a bad id, over 1 MiB),
/// MCPC_ERR_INVALID_UTF8, MCPC_ERR_NOT_SUPPORTED (a message whose method starts with `ui/`, which is the
/// host's own to answer, or a notification that is not relayed), MCPC_ERR_CLOSED.
///
/// # Safety
/// `client` is NULL or live; `message_json` is NULL or NUL-terminated; `opts` is NULL
/// or an initialised mcpc_call_opts_t; `out_reply_json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_relay_ui(
    client: *const mcpc_client_t,
    message_json: *const c_char,
    opts: *const mcpc_call_opts_t,
    out_reply_json: *mut *mut c_char,
) -> mcpc_status_t {
    status("mcpc_client_relay_ui", || {
        // SAFETY: per the contract.
        let out = unsafe { Out::new(out_reply_json, "out_reply_json") }?;
        // SAFETY: per the contract.
        let (c, message, ctl) = unsafe {
            (
                ptr::get(client)?,
                str_in(message_json, "message_json")?,
                control_from(opts)?,
            )
        };
        let mut ctl = ctl;
        let cl = c.client_ready(&mut ctl);
        let relayed = crate::drive::block_on_driven(std::pin::pin!(cl.relay_ui(message, &ctl)), cl.driver())??;
        match relayed {
            Relayed::Reply(r) => out.set(string_out(&r)),
            Relayed::Passed => {}
            Relayed::Host => {
                return Err(crate::error::Error::new(
                    Status::MCPC_ERR_NOT_SUPPORTED,
                    "a message whose method starts with ui/ is the host's own to answer",
                ))
            }
        }
        Ok(Status::MCPC_OK)
    })
}

/// The view's field, or None for NULL.
///
/// # Safety
/// `view` is NULL or live.
unsafe fn field<'a, T>(view: *const mcpc_ui_view_t, f: impl FnOnce(&'a ViewData) -> T) -> Option<T> {
    // SAFETY: per the caller's contract.
    unsafe { ptr::get(view) }.ok().map(f)
}

/// The view's HTML document (NUL-terminated; its length in bytes in `*out_len` if
/// `out_len` is not NULL), or NULL for NULL. It is the server's: render it only under
/// mcpc_ui_view_csp, in a sandboxed frame. Ownership: borrowed; valid until
/// mcpc_ui_view_free.
///
/// # Safety
/// `view` is NULL or live; `out_len` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_ui_view_html(view: *const mcpc_ui_view_t, out_len: *mut usize) -> *const c_char {
    boundary("mcpc_ui_view_html", || {
        // SAFETY: per the contract.
        let got = unsafe { field(view, |v| (v.html.as_ptr(), v.len)) };
        // SAFETY: per the contract, `out_len` is NULL or writable.
        if let Some(len) = unsafe { out_len.as_mut() } {
            *len = got.map_or(0, |(_, l)| l);
        }
        got.map_or(std::ptr::null(), |(p, _)| p)
    })
}

/// The Content-Security-Policy to render the view under (for a
/// `Content-Security-Policy` header or `<meta http-equiv>`), or NULL for NULL.
/// Ownership: borrowed; valid until mcpc_ui_view_free.
///
/// # Safety
/// `view` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_ui_view_csp(view: *const mcpc_ui_view_t) -> *const c_char {
    // SAFETY: per the contract.
    boundary("mcpc_ui_view_csp", || {
        unsafe { field(view, |v| v.csp.as_ptr()) }.unwrap_or(std::ptr::null())
    })
}

/// The frame's `allow` attribute for the permissions the view asks for (such as
/// "microphone; clipboard-write"); "" when it asks for none (leave the attribute out);
/// NULL for NULL. A host may grant less. Ownership: borrowed; valid until
/// mcpc_ui_view_free.
///
/// # Safety
/// `view` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_ui_view_allow(view: *const mcpc_ui_view_t) -> *const c_char {
    // SAFETY: per the contract.
    boundary("mcpc_ui_view_allow", || {
        unsafe { field(view, |v| v.allow.as_ptr()) }.unwrap_or(std::ptr::null())
    })
}

/// The dedicated origin the view asks for (`domain`, a host name), or NULL when it
/// asks for none (or for NULL). Its format is the host's to define and check.
/// Ownership: borrowed; valid until mcpc_ui_view_free.
///
/// # Safety
/// `view` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_ui_view_domain(view: *const mcpc_ui_view_t) -> *const c_char {
    boundary("mcpc_ui_view_domain", || {
        // SAFETY: per the contract.
        unsafe { field(view, |v| v.domain.as_ref().map(|d| d.as_ptr())) }
            .flatten()
            .unwrap_or(std::ptr::null())
    })
}

/// The view's `prefersBorder`: 1 (a border and background), 0 (none), -1 when it gives
/// none or for NULL.
///
/// # Safety
/// `view` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_ui_view_prefers_border(view: *const mcpc_ui_view_t) -> i32 {
    boundary("mcpc_ui_view_prefers_border", || {
        // SAFETY: per the contract.
        unsafe { field(view, |v| v.prefers_border) }
            .flatten()
            .map_or(-1, i32::from)
    })
}

/// The view's `_meta.ui` the policy was built from, as JSON (`null` when it has
/// none), or NULL for NULL. It is the server's: check what you read. Ownership:
/// borrowed; valid until mcpc_ui_view_free.
///
/// # Safety
/// `view` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_ui_view_meta_json(view: *const mcpc_ui_view_t) -> *const c_char {
    // SAFETY: per the contract.
    boundary("mcpc_ui_view_meta_json", || {
        unsafe { field(view, |v| v.meta.as_ptr()) }.unwrap_or(std::ptr::null())
    })
}

/// Frees `view` and everything it handed out. NULL is a no-op.
/// Threads: any thread, once no other thread reads it.
///
/// # Safety
/// `view` is NULL or live, and is not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_ui_view_free(view: *mut mcpc_ui_view_t) {
    // SAFETY: per the contract.
    boundary("mcpc_ui_view_free", || drop(unsafe { ptr::take(view) }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::apps;

    #[test]
    fn visibility_bits_are_the_cores() {
        assert_eq!(MCPC_UI_MODEL, apps::MODEL);
        assert_eq!(MCPC_UI_APP, apps::APP);
    }
}
