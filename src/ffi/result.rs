//! `mcpc_result_t` (a tool call's result) and `mcpc_tool_list_t` (a listing).

use std::ffi::{c_char, CString};
use std::sync::OnceLock;

use super::boundary::{boundary, status};
use super::cstr::string_out;
use super::ptr::{self, Handle, Out};
use crate::error::mcpc_status_t;
use crate::error::Status;
use crate::result::{CallResult, Tool};

/// The result of a tool call. Immutable: any thread may read it, also concurrently.
/// Strings it hands out are borrowed and live until mcpc_result_free.
pub struct mcpc_result_t {
    _private: [u8; 0],
}

pub(crate) struct ResultData {
    inner: CallResult,
    /// C copies of the JSON, made on first use (a caller that reads only the text
    /// never pays for a copy of a large result).
    json: OnceLock<CString>,
    structured: OnceLock<Option<CString>>,
}

impl ResultData {
    pub(crate) fn new(inner: CallResult) -> Self {
        ResultData {
            inner,
            json: OnceLock::new(),
            structured: OnceLock::new(),
        }
    }
}

/// JSON text never holds a raw NUL, so this cannot fail.
fn c_json(s: &str) -> CString {
    CString::new(s).expect("JSON text holds no NUL")
}

impl Handle for mcpc_result_t {
    type Rust = ResultData;
    const NAME: &'static str = "result";
}

/// The whole `CallToolResult` as the server sent it (NUL-terminated JSON; content
/// blocks of every type are kept). NULL if `result` is NULL.
/// Ownership: borrowed; valid until mcpc_result_free.
///
/// # Safety
/// `result` is NULL or a live result.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_result_json(result: *const mcpc_result_t) -> *const c_char {
    // SAFETY: per the contract.
    boundary("mcpc_result_json", || {
        unsafe { ptr::get(result) }.map_or(std::ptr::null(), |r| match r.inner.raw.json_nul() {
            Some(kept) => kept.as_ptr().cast(),
            None => r.json.get_or_init(|| c_json(&r.inner.raw)).as_ptr(),
        })
    })
}

/// The result's `structuredContent` as JSON, or NULL when it has none (or `result` is NULL).
/// Ownership: borrowed; valid until mcpc_result_free.
///
/// # Safety
/// `result` is NULL or a live result.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_result_structured_json(result: *const mcpc_result_t) -> *const c_char {
    boundary("mcpc_result_structured_json", || {
        // SAFETY: per the contract.
        unsafe { ptr::get(result) }
            .ok()
            .and_then(|r| r.structured.get_or_init(|| r.inner.structured().map(c_json)).as_ref())
            .map_or(std::ptr::null(), |s| s.as_ptr())
    })
}

/// The text blocks of the result joined with "\n" ("" when there are none). The text
/// is NUL-terminated, and may also hold NUL bytes of its own, so its length in bytes
/// is stored in `*out_len` when `out_len` is not NULL. NULL if `result` is NULL.
/// Ownership: borrowed; valid until mcpc_result_free. The text is untrusted server data.
///
/// # Safety
/// `result` is NULL or a live result; `out_len` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_result_text(result: *const mcpc_result_t, out_len: *mut usize) -> *const c_char {
    boundary("mcpc_result_text", || {
        // SAFETY: per the contract.
        let Ok(r) = (unsafe { ptr::get(result) }) else {
            return std::ptr::null();
        };
        // SAFETY: per the contract.
        text_out(r.inner.text_nul(), unsafe { Out::optional(out_len) })
    })
}

/// A NUL-terminated text for C, and its length without the NUL through `out_len`.
fn text_out(s: &str, out_len: Option<Out<'_, usize>>) -> *const c_char {
    if let Some(out) = out_len {
        out.set(s.len() - 1);
    }
    s.as_ptr().cast()
}

/// The number of text blocks in the result (0 for NULL).
///
/// # Safety
/// `result` is NULL or a live result.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_result_text_count(result: *const mcpc_result_t) -> usize {
    // SAFETY: per the contract.
    boundary("mcpc_result_text_count", || {
        unsafe { ptr::get(result) }.map_or(0, |r| r.inner.text_count())
    })
}

/// Text block `index` (in content order, counting text blocks only), NUL-terminated,
/// with its length in `*out_len` when `out_len` is not NULL. NULL if `result` is NULL
/// or `index` is out of range.
/// Ownership: borrowed; valid until mcpc_result_free.
///
/// # Safety
/// `result` is NULL or a live result; `out_len` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_result_text_at(
    result: *const mcpc_result_t,
    index: usize,
    out_len: *mut usize,
) -> *const c_char {
    boundary("mcpc_result_text_at", || {
        // SAFETY: per the contract.
        let Ok(r) = (unsafe { ptr::get(result) }) else {
            return std::ptr::null();
        };
        r.inner.text_block(index).map_or(std::ptr::null(), |t| {
            // SAFETY: per the contract.
            text_out(t, unsafe { Out::optional(out_len) })
        })
    })
}

/// True when the tool reported failure (`isError: true`). False for NULL.
///
/// # Safety
/// `result` is NULL or a live result.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_result_is_error(result: *const mcpc_result_t) -> bool {
    // SAFETY: per the contract.
    boundary("mcpc_result_is_error", || {
        unsafe { ptr::get(result) }.is_ok_and(|r| r.inner.is_error)
    })
}

/// Frees a result. NULL is a no-op.
/// Threads: any thread, once no other thread reads the result.
///
/// # Safety
/// `result` is NULL or a live result, freed only once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_result_free(result: *mut mcpc_result_t) {
    // SAFETY: per the contract.
    boundary("mcpc_result_free", || drop(unsafe { ptr::take(result) }))
}

/// A list of tools, in the order the server listed them. Immutable: any thread may
/// read it. Strings it hands out are borrowed and live until mcpc_tool_list_free.
pub struct mcpc_tool_list_t {
    _private: [u8; 0],
}

pub(crate) struct ToolListData {
    /// Every name as C text (a NUL inside a name shown as `\0`), each ended by a
    /// NUL, in one buffer: a C string per name cost an allocation a tool.
    names: Vec<u8>,
    /// Where each name starts in `names`.
    starts: Vec<usize>,
    tools: Vec<Tool>,
    /// Each tool's MCP Apps view and visibility, read on first use.
    ui: std::sync::OnceLock<Vec<(Option<CString>, u32)>>,
}

impl ToolListData {
    pub(crate) fn new(tools: Vec<Tool>) -> Self {
        let mut names = Vec::with_capacity(tools.iter().map(|t| t.name.len() + 1).sum());
        let starts = tools
            .iter()
            .map(|t| {
                let start = names.len();
                super::boundary::push_c_text(&mut names, &t.name);
                start
            })
            .collect();
        ToolListData {
            names,
            starts,
            tools,
            ui: std::sync::OnceLock::new(),
        }
    }

    /// Tool `index`'s view URI and visibility (MCP Apps).
    pub(crate) fn ui(&self, index: usize) -> Option<&(Option<CString>, u32)> {
        self.ui
            .get_or_init(|| {
                self.tools
                    .iter()
                    .map(|t| {
                        let ui = crate::client::apps::tool_ui(t.json());
                        (ui.uri.map(|u| super::boundary::c_message(&u)), ui.visibility)
                    })
                    .collect()
            })
            .get(index)
    }

    fn name(&self, index: usize) -> Option<*const c_char> {
        Some(self.names[*self.starts.get(index)?..].as_ptr().cast())
    }
}

impl Handle for mcpc_tool_list_t {
    type Rust = ToolListData;
    const NAME: &'static str = "tool list";
}

/// The number of tools (0 for NULL).
/// Threads: any thread; the list is read-only.
///
/// # Safety
/// `list` is NULL or a live tool list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_tool_list_count(list: *const mcpc_tool_list_t) -> usize {
    // SAFETY: per the contract.
    boundary("mcpc_tool_list_count", || {
        unsafe { ptr::get(list) }.map_or(0, |l| l.tools.len())
    })
}

/// The number of tools: an alias of mcpc_tool_list_count (every count is `_count`),
/// kept until 1.0.
///
/// # Safety
/// `list` is NULL or a live tool list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_tool_list_len(list: *const mcpc_tool_list_t) -> usize {
    // SAFETY: the same contract.
    boundary("mcpc_tool_list_len", || unsafe { mcpc_tool_list_count(list) })
}

/// The name of tool `index`, or NULL if `list` is NULL or `index` is out of range.
/// Ownership: borrowed; valid until mcpc_tool_list_free.
///
/// # Safety
/// `list` is NULL or a live tool list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_tool_list_name(list: *const mcpc_tool_list_t, index: usize) -> *const c_char {
    boundary("mcpc_tool_list_name", || {
        // SAFETY: per the contract.
        unsafe { ptr::get(list) }
            .ok()
            .and_then(|l| l.name(index))
            .unwrap_or(std::ptr::null())
    })
}

/// Tool `index` as JSON, exactly as the server sent it (its `inputSchema` is the
/// model-facing parameter schema, unchanged), or NULL if `list` is NULL or `index` is
/// out of range. Ownership: borrowed; valid until mcpc_tool_list_free.
///
/// # Safety
/// `list` is NULL or a live tool list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_tool_list_json(list: *const mcpc_tool_list_t, index: usize) -> *const c_char {
    boundary("mcpc_tool_list_json", || {
        // SAFETY: per the contract.
        unsafe { ptr::get(list) }
            .ok()
            .and_then(|l| l.tools.get(index))
            .map_or(std::ptr::null(), |t| t.json_nul().as_ptr().cast())
    })
}

/// All tools as one JSON array, each as the server sent it.
/// Ownership: on success `*out_json` is owned by the caller; free with mcpc_string_free.
/// Errors: MCPC_ERR_INVALID_ARG (NULL).
///
/// # Safety
/// `list` is NULL or a live tool list; `out_json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_tool_list_to_json(
    list: *const mcpc_tool_list_t,
    out_json: *mut *mut c_char,
) -> mcpc_status_t {
    status("mcpc_tool_list_to_json", || {
        // SAFETY: per the contract.
        let out_json = unsafe { Out::new(out_json, "out_json") }?;
        // SAFETY: per the contract.
        let l = unsafe { ptr::get(list) }?;
        let mut s = String::with_capacity(l.tools.iter().map(|t| t.json_nul().len()).sum::<usize>() + 2);
        s.push('[');
        for (i, t) in l.tools.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str(t.json());
        }
        s.push(']');
        out_json.set(string_out(&s));
        Ok(Status::MCPC_OK)
    })
}

/// Frees a tool list. NULL is a no-op.
///
/// # Safety
/// `list` is NULL or a live tool list, freed only once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_tool_list_free(list: *mut mcpc_tool_list_t) {
    // SAFETY: per the contract.
    boundary("mcpc_tool_list_free", || drop(unsafe { ptr::take(list) }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    /// Names share one buffer: each is its own C string, a NUL inside a name shows as
    /// `\0`, and an index past the end gives NULL.
    #[test]
    fn tool_list_names() {
        let page =
            crate::result::parse_page(r#"{"tools":[{"name":"echo"},{"name":"a\u0000b"},{"name":"é"}]}"#).unwrap();
        let list = ptr::into_raw::<mcpc_tool_list_t>(ToolListData::new(page.tools));
        // SAFETY: a live list, freed once below; the names live as long as it does.
        unsafe {
            let names: Vec<_> = (0..4).map(|i| mcpc_tool_list_name(list, i)).collect();
            assert_eq!(mcpc_tool_list_count(list), 3);
            assert_eq!(mcpc_tool_list_len(list), 3);
            assert_eq!(CStr::from_ptr(names[0]).to_str(), Ok("echo"));
            assert_eq!(CStr::from_ptr(names[1]).to_str(), Ok("a\\0b"));
            assert_eq!(CStr::from_ptr(names[2]).to_str(), Ok("é"));
            assert!(names[3].is_null());
            mcpc_tool_list_free(list);
        }
    }
}
