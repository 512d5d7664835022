//! `mcpc_host_t`: many servers behind one handle (docs/host.md): servers from
//! configuration files or one by one, started together, one catalog of their tools
//! under qualified names, calls routed by those names, each server's state reported.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use super::boundary::{boundary, c_message, status};
use super::client::{call_tool_on, close_for_free, control_from, mcpc_call_opts_t, options_of, stdio_args};
use super::cstr::{opt_str_in, str_in, string_out};
use super::options::mcpc_options_t;
use super::ptr::{self, Handle, Out};
use super::result::mcpc_result_t;
use super::userdata::{mcpc_free_cb, Userdata};
use crate::config::HttpMode;
use crate::drive::runtime;
use crate::error::mcpc_status_t;
use crate::error::{Error, Status};
use crate::host::names::NameFormat;
use crate::host::{EnvPolicy, Event, Host, Reach, ServerSpec, Settings, State};

/// Many MCP servers behind one handle. Thread-safe: any number of threads may use
/// it at once.
pub struct mcpc_host_t {
    _private: [u8; 0],
}

impl Handle for mcpc_host_t {
    type Rust = Arc<Host>;
    const NAME: &'static str = "host";
}

/// A server's state, as reported to mcpc_host_event_cb and by mcpc_host_status.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum mcpc_server_state_t {
    /// Added, not started yet.
    MCPC_SERVER_ADDED = 0,
    MCPC_SERVER_STARTING = 1,
    /// Started; its tools are in the catalog.
    MCPC_SERVER_READY = 2,
    /// Did not start, or its connection ended; the detail says why.
    MCPC_SERVER_FAILED = 3,
    /// Its authorization needs a login (MCPC_ERR_LOGIN_REQUIRED).
    MCPC_SERVER_NEEDS_LOGIN = 4,
    /// Disabled in its configuration; never started.
    MCPC_SERVER_DISABLED = 5,
    /// Its process died and is being started again (a restart policy).
    MCPC_SERVER_RESTARTING = 6,
    /// Not started: its tools, from a saved catalog (mcpc_host_load_catalog), are in
    /// the catalog, and its first call starts it (mcpc_host_set_lazy).
    MCPC_SERVER_IDLE = 7,
}

/// What a host reports to mcpc_host_event_cb.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum mcpc_host_event_t {
    /// A server's state changed: `server` names it; `detail` is its error ("STATUS_NAME:
    /// message") or NULL.
    MCPC_HOST_SERVER_STATE = 1,
    /// mcpc_host_start settled: `server` is NULL; `detail` is the summary, JSON
    /// `{"servers": {STATE: COUNT}, "tools": N, "prompts": N, "collisions": N}`; `state`
    /// means nothing.
    MCPC_HOST_SETTLED = 2,
    /// The catalog changed (a server became ready, failed or was removed): `server`
    /// and `detail` are NULL; `state` means nothing.
    MCPC_HOST_CATALOG_CHANGED = 3,
}

/// Receives a host's reports, one call at a time: on an mcpc thread, or on the thread
/// of the host call that caused the report (mcpc_host_start; mcpc_host_load_catalog;
/// mcpc_host_call_tool starting an idle server). The strings are borrowed for the
/// call. Blocking mcpc calls from it return MCPC_ERR_WOULD_DEADLOCK; mcpc_host_status,
/// mcpc_host_tools and the other calls that do not block may be made.
pub type mcpc_host_event_cb = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        event: mcpc_host_event_t,
        server: *const c_char,
        state: mcpc_server_state_t,
        detail: *const c_char,
    ),
>;

/// Gives a value a configuration file asks of the host: `kind` is "input" (VS Code's
/// `${input:ID}`: `reference` is the ID, `prompt` its description from the file's
/// `inputs`) or "secret" (any other scheme, such as `${op://vault/item}`: `reference`
/// is it whole, `prompt` NULL). Write the value NUL-terminated into `buf` (`buf_len`
/// bytes, 8192) and return 0, or return nonzero for "no value" (the file is then
/// refused with MCPC_ERR_CONFIG naming the variable). Runs on the thread that called
/// mcpc_host_add_config, so it may block to ask the user. The value is never logged
/// nor put in any message.
pub type mcpc_host_resolve_cb = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        kind: *const c_char,
        reference: *const c_char,
        prompt: *const c_char,
        buf: *mut c_char,
        buf_len: usize,
    ) -> i32,
>;

/// The environment policy (mcpc_host_set_env_policy): everything but variables
/// whose names hold TOKEN, SECRET, PASSWORD, KEY, CREDENTIAL or AUTH (any case),
/// unless the server's `env` names them. The default.
pub const MCPC_ENV_NO_SECRETS: i32 = 0;
/// The environment policy: everything.
pub const MCPC_ENV_PASS_ALL: i32 = 1;
/// The environment policy: only the names given (and the server's own `env`).
pub const MCPC_ENV_ALLOW: i32 = 2;

fn state_out(s: State) -> mcpc_server_state_t {
    use mcpc_server_state_t::*;
    match s {
        State::Added => MCPC_SERVER_ADDED,
        State::Starting => MCPC_SERVER_STARTING,
        State::Ready => MCPC_SERVER_READY,
        State::Failed => MCPC_SERVER_FAILED,
        State::NeedsLogin => MCPC_SERVER_NEEDS_LOGIN,
        State::Disabled => MCPC_SERVER_DISABLED,
        State::Restarting => MCPC_SERVER_RESTARTING,
        State::Idle => MCPC_SERVER_IDLE,
    }
}

/// Makes a host with no servers. `defaults` (NULL: the library's defaults) is what
/// every server added without options of its own starts from: client info,
/// timeouts, handlers of the server's input requests, stderr, restart policy.
/// At most 64 servers start at once (mcpc_host_set_concurrency).
/// Ownership: `defaults` is copied; the caller keeps it. On success `*out_host` is
/// the caller's; free it with mcpc_host_free.
/// Threads: any thread.
/// Errors: MCPC_ERR_INVALID_ARG (NULL `out_host`).
///
/// # Safety
/// `defaults` is NULL or live; `out_host` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_new(
    defaults: *const mcpc_options_t,
    out_host: *mut *mut mcpc_host_t,
) -> mcpc_status_t {
    status("mcpc_host_new", || {
        // SAFETY: per the contract.
        let out = unsafe { Out::new(out_host, "out_host") }?;
        let defaults = options_of(defaults)?;
        out.set_handle(Host::new(Settings {
            defaults,
            env: EnvPolicy::default(),
            concurrency: 64,
            on_event: None,
            lazy: false,
            names: Default::default(),
        }));
        Ok(Status::MCPC_OK)
    })
}

/// Reports the host's events to `cb` (see mcpc_host_event_cb), replacing any
/// callback set before; NULL `cb` removes it. `userdata_free` (may be NULL) runs once,
/// when the host is freed or the callback replaced; it also runs if this call fails.
/// Threads: any thread; reports already under way finish with the old callback.
/// Errors: MCPC_ERR_INVALID_ARG (NULL host).
///
/// # Safety
/// `host` is NULL or live; `cb` may be called from mcpc threads with `userdata`
/// until `userdata_free` runs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_set_event_callback(
    host: *const mcpc_host_t,
    cb: mcpc_host_event_cb,
    userdata: *mut c_void,
    userdata_free: mcpc_free_cb,
) -> mcpc_status_t {
    let ud = Userdata::new(userdata, userdata_free);
    status("mcpc_host_set_event_callback", || {
        // SAFETY: per the contract.
        let h = unsafe { ptr::get(host) }?;
        let Some(cb) = cb else {
            h.configure(|s| s.on_event = None);
            return Ok(Status::MCPC_OK);
        };
        h.configure(|s| {
            s.on_event = Some(Arc::new(
                move |ev: Event, server: Option<&str>, state: State, detail: Option<&str>| {
                    let server = server.map(c_message);
                    let detail = detail.map(c_message);
                    let ev = match ev {
                        Event::ServerState => mcpc_host_event_t::MCPC_HOST_SERVER_STATE,
                        Event::Settled => mcpc_host_event_t::MCPC_HOST_SETTLED,
                        Event::CatalogChanged => mcpc_host_event_t::MCPC_HOST_CATALOG_CHANGED,
                    };
                    let (s, d) = (
                        server.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
                        detail.as_ref().map_or(std::ptr::null(), |d| d.as_ptr()),
                    );
                    // SAFETY: the caller's callback, with borrowed NUL-terminated strings.
                    unsafe { cb(ud.ptr(), ev, s, state_out(state), d) }
                },
            ));
        });
        Ok(Status::MCPC_OK)
    })
}

/// Asks `cb` for the values configuration files take from the host (see
/// mcpc_host_resolve_cb), replacing any resolver set before; NULL `cb` removes it.
/// Each (kind, reference) is asked once per file, however often the file names it.
/// `userdata_free` (may be NULL) runs once, when the host is freed or the resolver
/// replaced; it also runs if this call fails.
/// Threads: any thread. Errors: MCPC_ERR_INVALID_ARG (NULL host).
///
/// # Safety
/// `host` is NULL or live; `cb` may be called with `userdata` until `userdata_free` runs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_set_resolver(
    host: *const mcpc_host_t,
    cb: mcpc_host_resolve_cb,
    userdata: *mut c_void,
    userdata_free: mcpc_free_cb,
) -> mcpc_status_t {
    let ud = Userdata::new(userdata, userdata_free);
    status("mcpc_host_set_resolver", || {
        // SAFETY: per the contract.
        let h = unsafe { ptr::get(host) }?;
        let Some(cb) = cb else {
            h.set_resolver(None);
            return Ok(Status::MCPC_OK);
        };
        h.set_resolver(Some(Arc::new(
            move |kind: &str, reference: &str, prompt: Option<&str>| {
                let (kind, reference, prompt) = (c_message(kind), c_message(reference), prompt.map(c_message));
                let mut buf = zeroize::Zeroizing::new(vec![0u8; 8192]);
                let p = prompt.as_ref().map_or(std::ptr::null(), |p| p.as_ptr());
                // SAFETY: the caller's callback, with borrowed strings and a buffer it may fill.
                let rc = unsafe {
                    cb(
                        ud.ptr(),
                        kind.as_ptr(),
                        reference.as_ptr(),
                        p,
                        buf.as_mut_ptr().cast(),
                        buf.len(),
                    )
                };
                if rc != 0 {
                    return None;
                }
                let end = buf.iter().position(|b| *b == 0)?;
                std::str::from_utf8(&buf[..end]).ok().map(str::to_string)
            },
        )));
        Ok(Status::MCPC_OK)
    })
}

/// Sets a variable configuration files may name as `${NAME}`, such as
/// `workspaceFolder` (`userHome` is $HOME unless set). A host variable comes before
/// the environment's of the same name. Applies to files added later.
/// Threads: any thread. Errors: MCPC_ERR_INVALID_ARG (NULL), MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `host` is NULL or live; the strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_set_variable(
    host: *const mcpc_host_t,
    name: *const c_char,
    value: *const c_char,
) -> mcpc_status_t {
    status("mcpc_host_set_variable", || {
        // SAFETY: per the contract.
        let (h, name, value) = unsafe { (ptr::get(host)?, str_in(name, "name")?, str_in(value, "value")?) };
        h.set_variable(name, value);
        Ok(Status::MCPC_OK)
    })
}

/// Sets which of this process's environment stdio servers started later inherit
/// (MCPC_ENV_NO_SECRETS, MCPC_ENV_PASS_ALL or MCPC_ENV_ALLOW); `names` (`count` of them) are the allowed names for
/// MCPC_ENV_ALLOW and are ignored otherwise. A server's own `env` is always passed.
/// Threads: any thread. Errors: MCPC_ERR_INVALID_ARG (NULL host, another policy,
/// NULL `names` with a nonzero `count`), MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `host` is NULL or live; `names` is NULL or holds `count` NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_set_env_policy(
    host: *const mcpc_host_t,
    policy: i32,
    names: *const *const c_char,
    count: usize,
) -> mcpc_status_t {
    status("mcpc_host_set_env_policy", || {
        // SAFETY: per the contract.
        let h = unsafe { ptr::get(host) }?;
        let p = match policy {
            MCPC_ENV_NO_SECRETS => EnvPolicy::NoSecrets,
            MCPC_ENV_PASS_ALL => EnvPolicy::PassAll,
            MCPC_ENV_ALLOW if count == 0 => EnvPolicy::Allow(Vec::new()),
            // SAFETY: per the contract.
            MCPC_ENV_ALLOW => EnvPolicy::Allow(unsafe { stdio_args(names, count) }?),
            other => {
                return Err(Error::new(
                    Status::MCPC_ERR_INVALID_ARG,
                    format!("no environment policy {other}"),
                ))
            }
        };
        h.configure(|s| s.env = p);
        Ok(Status::MCPC_OK)
    })
}

/// Sets how many servers mcpc_host_start starts at once (at least 1; 64 by default).
/// Threads: any thread. Errors: MCPC_ERR_INVALID_ARG (NULL host, 0).
///
/// # Safety
/// `host` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_set_concurrency(host: *const mcpc_host_t, n: usize) -> mcpc_status_t {
    status("mcpc_host_set_concurrency", || {
        // SAFETY: per the contract.
        let h = unsafe { ptr::get(host) }?;
        if n == 0 {
            return Err(Error::new(Status::MCPC_ERR_INVALID_ARG, "the concurrency is 0"));
        }
        h.configure(|s| s.concurrency = n);
        Ok(Status::MCPC_OK)
    })
}

/// Publishes a catalog saved from an earlier run, as mcpc_host_tools gave it: each
/// entry's tool goes to its server (by the server's name) when that server is added
/// and not started yet, so the catalog is whole before the servers are up; entries
/// of other servers are ignored. A server's listing replaces its saved tools once it
/// starts. `*out_taken` (may be NULL) is set to the number of tools taken.
/// Threads: any thread. Errors: MCPC_ERR_INVALID_ARG (NULL, not a catalog: the
/// message says which entry), MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `host` is NULL or live; `catalog_json` is NULL or NUL-terminated; `out_taken` is
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_load_catalog(
    host: *const mcpc_host_t,
    catalog_json: *const c_char,
    out_taken: *mut usize,
) -> mcpc_status_t {
    status("mcpc_host_load_catalog", || {
        // SAFETY: per the contract.
        let out = unsafe { Out::optional(out_taken) };
        // SAFETY: per the contract.
        let (h, json) = unsafe { (ptr::get(host)?, str_in(catalog_json, "catalog_json")?) };
        let n = h.load_catalog(json)?;
        if let Some(o) = out {
            o.set(n);
        }
        Ok(Status::MCPC_OK)
    })
}

/// With `lazy` nonzero, mcpc_host_start leaves each server that has saved tools
/// (mcpc_host_load_catalog) idle (MCPC_SERVER_IDLE), and its first call starts it
/// (within the server's startup timeout); 0, the default, starts every server.
/// Threads: any thread. Errors: MCPC_ERR_INVALID_ARG (NULL).
///
/// # Safety
/// `host` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_set_lazy(host: *const mcpc_host_t, lazy: i32) -> mcpc_status_t {
    status("mcpc_host_set_lazy", || {
        // SAFETY: per the contract.
        let h = unsafe { ptr::get(host) }?;
        h.configure(|s| s.lazy = lazy != 0);
        Ok(Status::MCPC_OK)
    })
}

/// Sets how tools and prompts are named in the catalog: `format` holds `{name}` (the
/// server's own name for the tool or prompt) once and `{server}` (the server's name in
/// the configuration) at most once, around text of `[A-Za-z0-9_-]` (at most 32
/// characters), for example `mcp__{server}__{name}`; NULL restores the default
/// `{server}__{name}`. The names are sanitized and cut to 64 characters with a stable
/// suffix as with the default. The catalog is made again at once (a
/// MCPC_HOST_CATALOG_CHANGED event when a name changed).
/// Threads: any thread, also from mcpc_host_event_cb. Errors: MCPC_ERR_INVALID_ARG (NULL host, a
/// malformed format, named in the message), MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `host` is NULL or live; `format` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_set_name_format(host: *const mcpc_host_t, format: *const c_char) -> mcpc_status_t {
    status("mcpc_host_set_name_format", || {
        // SAFETY: per the contract.
        let (h, format) = unsafe { (ptr::get(host)?, opt_str_in(format, "format")?) };
        let format = format.map(NameFormat::parse).transpose()?.unwrap_or_default();
        h.set_name_format(format);
        Ok(Status::MCPC_OK)
    })
}

/// Reads a configuration file (`mcpServers`, VS Code's `servers` with `inputs`,
/// Zed's `context_servers`, or mcp.json's root map; docs/host.md lists the fields
/// and variables) and adds its servers, not started. All or none: a malformed
/// value, an unresolved variable or a name already added adds nothing.
/// `*out_added` (may be NULL) is set to the number of servers added.
/// Threads: any thread; the resolver runs on this one.
/// Errors: MCPC_ERR_INVALID_ARG (NULL, a name already added), MCPC_ERR_INVALID_UTF8,
/// MCPC_ERR_CONFIG (unreadable file, malformed value, unresolved variable: the
/// message names the file, the server and the field, never a value).
///
/// # Safety
/// `host` is NULL or live; `path` is NULL or NUL-terminated; `out_added` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_add_config(
    host: *const mcpc_host_t,
    path: *const c_char,
    out_added: *mut usize,
) -> mcpc_status_t {
    status("mcpc_host_add_config", || {
        // SAFETY: per the contract.
        let out = unsafe { Out::optional(out_added) };
        // SAFETY: per the contract.
        let (h, path) = unsafe { (ptr::get(host)?, str_in(path, "path")?) };
        let n = h.add_file(path)?;
        if let Some(o) = out {
            o.set(n);
        }
        Ok(Status::MCPC_OK)
    })
}

fn spec(name: &str, reach: Reach) -> ServerSpec {
    ServerSpec {
        name: name.to_string(),
        reach,
        enabled: true,
        required: false,
        startup_timeout: None,
        call_timeout: None,
        include: None,
        exclude: Vec::new(),
        oauth: None,
    }
}

/// Adds a stdio server named `name` that runs `argv` (as mcpc_client_connect_stdio),
/// with `opts` (NULL: the host's defaults), not started.
/// Ownership: the strings and `opts` are read during the call.
/// Threads: any thread. Errors: MCPC_ERR_INVALID_ARG (NULL, argc 0, empty or taken
/// name), MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `host` is NULL or live; `name` is NULL or NUL-terminated; `argv` is NULL or holds
/// `argc` NUL-terminated strings; `opts` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_add_stdio(
    host: *const mcpc_host_t,
    name: *const c_char,
    argv: *const *const c_char,
    argc: usize,
    opts: *const mcpc_options_t,
) -> mcpc_status_t {
    status("mcpc_host_add_stdio", || {
        // SAFETY: per the contract.
        let (h, name) = unsafe { (ptr::get(host)?, str_in(name, "name")?) };
        if argv.is_null() || argc == 0 {
            return Err(Error::new(Status::MCPC_ERR_INVALID_ARG, "argv is NULL or argc is 0"));
        }
        // SAFETY: per the contract.
        let mut args = unsafe { stdio_args(argv, argc) }?;
        let command = args.remove(0);
        let own = if opts.is_null() { None } else { Some(options_of(opts)?) };
        let reach = Reach::Stdio {
            command,
            args,
            env: Vec::new(),
            cwd: None,
        };
        h.add(spec(name, reach), own)?;
        Ok(Status::MCPC_OK)
    })
}

/// Adds an HTTP server named `name` at `url` (Streamable HTTP, falling back to the
/// HTTP+SSE transport as mcpc_client_connect_http does), with `opts` (NULL: the
/// host's defaults), not started. The URL is checked when the server starts.
/// Threads: any thread. Errors: MCPC_ERR_INVALID_ARG (NULL, empty or taken name),
/// MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `host` is NULL or live; the strings are NULL or NUL-terminated; `opts` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_add_http(
    host: *const mcpc_host_t,
    name: *const c_char,
    url: *const c_char,
    opts: *const mcpc_options_t,
) -> mcpc_status_t {
    status("mcpc_host_add_http", || {
        // SAFETY: per the contract.
        let (h, name, url) = unsafe { (ptr::get(host)?, str_in(name, "name")?, str_in(url, "url")?) };
        let own = if opts.is_null() { None } else { Some(options_of(opts)?) };
        let mode = own.as_ref().map_or(HttpMode::Auto, |o| o.http_transport);
        let reach = Reach::Http {
            url: url.to_string(),
            headers: Vec::new(),
            mode,
        };
        h.add(spec(name, reach), own)?;
        Ok(Status::MCPC_OK)
    })
}

/// Starts every added server not started yet, at most the concurrency at once (64), each
/// within its startup timeout (its configuration's, else its options' timeout), and
/// waits until each is ready or failed. Each change is reported (mcpc_host_event_cb),
/// then the summary (MCPC_HOST_SETTLED). A failed server leaves the others running.
/// Threads: any thread except mcpc's own.
/// Errors: MCPC_ERR_INVALID_ARG (NULL), MCPC_ERR_WOULD_DEADLOCK, and the error of the
/// first server marked `required` that did not start (its message names it).
///
/// # Safety
/// `host` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_start(host: *const mcpc_host_t) -> mcpc_status_t {
    status("mcpc_host_start", || {
        // SAFETY: per the contract.
        let h = unsafe { ptr::get(host) }?.clone();
        runtime::block_on(async move { h.start().await })??;
        Ok(Status::MCPC_OK)
    })
}

/// The catalog: JSON `{"tools": [{"name": QUALIFIED, "server": NAME, "tool": {...as
/// listed}}], "collisions": [{"name", "kept", "renamed", "renamedTo"}]}`. A qualified
/// name is `SERVER__TOOL` in `[A-Za-z0-9_-]`, at most 64 characters (cut, with a stable
/// hash suffix, when longer; the same suffix renames the later of two tools that would
/// share a name, and the collision is listed). Only ready servers' tools, after their
/// include and exclude lists.
/// Ownership: `*out_json` is the caller's; free with mcpc_string_free.
/// Threads: any thread, also from mcpc_host_event_cb. Errors: MCPC_ERR_INVALID_ARG (NULL).
///
/// # Safety
/// `host` is NULL or live; `out_json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_tools(host: *const mcpc_host_t, out_json: *mut *mut c_char) -> mcpc_status_t {
    status("mcpc_host_tools", || {
        // SAFETY: per the contract.
        let out = unsafe { Out::new(out_json, "out_json") }?;
        // SAFETY: per the contract.
        let h = unsafe { ptr::get(host) }?;
        out.set(string_out(&h.catalog().to_json()));
        Ok(Status::MCPC_OK)
    })
}

/// Every server's state: JSON `[{"name", "state", "tools": N, "error": {"status",
/// "message"}, "stderr": [last lines]}]` in the order added (`tools`: as the server
/// listed them, before its include and exclude lists); `state` is one of
/// "added", "starting", "ready", "failed", "needs_login", "disabled", "restarting";
/// `error` and `stderr` appear for a server that failed.
/// Ownership: `*out_json` is the caller's; free with mcpc_string_free.
/// Threads: any thread, also from mcpc_host_event_cb. Errors: MCPC_ERR_INVALID_ARG (NULL).
///
/// # Safety
/// `host` is NULL or live; `out_json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_status(host: *const mcpc_host_t, out_json: *mut *mut c_char) -> mcpc_status_t {
    status("mcpc_host_status", || {
        // SAFETY: per the contract.
        let out = unsafe { Out::new(out_json, "out_json") }?;
        // SAFETY: per the contract.
        let h = unsafe { ptr::get(host) }?;
        out.set(string_out(&h.status_json()));
        Ok(Status::MCPC_OK)
    })
}

/// Calls the tool with qualified name `qualified` (see mcpc_host_tools) on its server,
/// with that server's timeout unless `opts` sets one, and waits for its result, as
/// mcpc_client_call_tool does.
/// Ownership: as mcpc_client_call_tool's. Threads: any thread, concurrently; not from
/// mcpc callbacks.
/// An idle server (mcpc_host_set_lazy), or one still starting, is started or waited
/// for first.
/// Errors: MCPC_ERR_UNKNOWN_NAME (no such tool in the catalog: never listed, excluded,
/// or its server failed), the error of a server that did not start, MCPC_ERR_CLOSED,
/// and those of mcpc_client_call_tool.
///
/// # Safety
/// `host` is NULL or live; strings are NULL or NUL-terminated; `opts` is NULL or
/// initialised; `out_result` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_call_tool(
    host: *const mcpc_host_t,
    qualified: *const c_char,
    arguments_json: *const c_char,
    opts: *const mcpc_call_opts_t,
    out_result: *mut *mut mcpc_result_t,
) -> mcpc_status_t {
    status("mcpc_host_call_tool", || {
        // SAFETY: per the contract.
        let out_result = unsafe { Out::new(out_result, "out_result") }?;
        // SAFETY: per the contract.
        let (h, q, args, ctl) = unsafe {
            (
                ptr::get(host)?,
                str_in(qualified, "qualified")?,
                opt_str_in(arguments_json, "arguments_json")?,
                control_from(opts)?,
            )
        };
        let (member, tool) = h.route(q)?;
        let client = h.client_blocking(member)?;
        call_tool_on(&client, &tool, args, &ctl, out_result)
    })
}

/// Stops server `name` and removes it; its tools leave the catalog.
/// Threads: any thread except mcpc's own. Errors: MCPC_ERR_INVALID_ARG (NULL),
/// MCPC_ERR_INVALID_UTF8, MCPC_ERR_UNKNOWN_NAME, MCPC_ERR_WOULD_DEADLOCK.
///
/// # Safety
/// `host` is NULL or live; `name` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_remove(host: *const mcpc_host_t, name: *const c_char) -> mcpc_status_t {
    status("mcpc_host_remove", || {
        // SAFETY: per the contract.
        let (h, name) = unsafe { (ptr::get(host)?.clone(), str_in(name, "name")?.to_string()) };
        runtime::block_on(async move { h.remove(&name).await })??;
        Ok(Status::MCPC_OK)
    })
}

/// Closes every server (each as mcpc_client_close): calls in flight return
/// MCPC_ERR_CLOSED, and so do later starts, adds and calls; no report is made once this
/// has begun, and a report under way on another thread is waited for. Idempotent. The
/// handle stays valid until mcpc_host_free.
/// Threads: any thread, also while other threads use the host; not from mcpc
/// callbacks (MCPC_ERR_WOULD_DEADLOCK; use mcpc_host_free there).
/// Errors: MCPC_ERR_INVALID_ARG (NULL), MCPC_ERR_WOULD_DEADLOCK.
///
/// # Safety
/// `host` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_close(host: *const mcpc_host_t) -> mcpc_status_t {
    status("mcpc_host_close", || {
        // SAFETY: per the contract.
        let h = unsafe { ptr::get(host) }?.clone();
        runtime::block_on(async move { h.close().await })?;
        Ok(Status::MCPC_OK)
    })
}

/// Closes every server (as mcpc_host_close) and frees the host. NULL is a no-op. A
/// report under way on another thread is waited for, so no callback uses the host
/// once this returns. Called from an mcpc callback it does not block on the servers:
/// their close finishes on an mcpc thread (the callback must not use the host after).
/// Threads: any thread, once no other thread is calling the host.
///
/// # Safety
/// `host` is NULL or live, freed only once, with no call on it still running.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_free(host: *mut mcpc_host_t) {
    boundary("mcpc_host_free", || {
        // SAFETY: per the contract.
        let Some(b) = (unsafe { ptr::take(host) }) else {
            return;
        };
        // Before the handle's memory goes: a callback under way may still read it.
        b.quiesce();
        let h: Arc<Host> = *b;
        close_for_free(async move { h.close().await });
    })
}
