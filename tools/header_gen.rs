//! Generates include/mcpc.h; shared by build.rs (which writes it) and the header
//! test (which checks that the committed copy is current).
//!
//! cbindgen declares the exports in the order of the Rust modules. This file takes its
//! output apart into items, each with its doc comment, and writes them in the order a
//! user needs them: one group per task, each under a heading ([`GROUPS`]).
//! - Only `mcpc_`/`MCPC_` names reach the header. An unprefixed constant is the crate's
//!   own (cbindgen sees every `pub const`) and is left out; an unprefixed function, type
//!   or enum value fails the build.
//! - [`RULES`] places every name in a group. A name it does not place, or a rule that
//!   places nothing, fails the build, so a new export goes where it is meant to.
//! - A type must be declared before the first item that uses it; an order that breaks
//!   this fails the build.

use std::collections::HashMap;
use std::path::Path;

const ERRORS: usize = 0;
const OPTIONS: usize = 1;
const CONNECTING: usize = 2;
const CALLS: usize = 3;
const RESULTS: usize = 4;
const ASYNC: usize = 5;
const TRANSPORT: usize = 6;
const AUTHORIZATION: usize = 7;
const INPUT: usize = 8;
const HOSTS: usize = 9;

/// The groups in header order: heading and a one-line description.
const GROUPS: [(&str, &str); 10] = [
    (
        "Errors",
        "Status codes, the calling thread's last error, freeing strings, the version.",
    ),
    ("Options", "Client settings: made once, read by each connect function."),
    (
        "Connecting",
        "Starting a client over stdio or HTTP, what the server said of itself, closing.",
    ),
    (
        "Calls",
        "Listing and calling tools, resources and prompts, with per-call settings and cancellation handles.",
    ),
    (
        "Results",
        "Reading a tool list, a tool result and a resource's contents.",
    ),
    (
        "Asynchronous calls",
        "The _async functions, which complete through a callback, and their op handles.",
    ),
    (
        "Transport seam",
        "A transport whose channel the host owns, in stream or request/response form.",
    ),
    (
        "Authorization",
        "OAuth for HTTP endpoints: the settings, the host's login and store callbacks.",
    ),
    (
        "Input for the server",
        "Handlers for the server's elicitation, sampling and roots requests, and answering them.",
    ),
    (
        "Hosts",
        "Many servers behind one handle: configuration files, starting, one catalog, routing.",
    ),
];

/// Where each name goes. A pattern ending in `*` is a prefix; an exact name wins over a
/// prefix, a longer prefix over a shorter one. Within a group, macros come first, then
/// types in cbindgen's order (which declares a type before the types using it), then
/// functions in the order of this table.
const RULES: &[(usize, &str)] = &[
    (ERRORS, "MCPC_VERSION*"),
    (ERRORS, "mcpc_status_t"),
    (ERRORS, "mcpc_last_error_message"),
    (ERRORS, "mcpc_last_error_status"),
    (ERRORS, "mcpc_last_error_rpc_code"),
    (ERRORS, "mcpc_status_name"),
    (ERRORS, "mcpc_string_free"),
    (ERRORS, "mcpc_version"),
    (OPTIONS, "MCPC_STDERR_*"),
    (OPTIONS, "MCPC_NEGOTIATE_*"),
    (OPTIONS, "MCPC_HTTP_*"),
    (OPTIONS, "mcpc_stderr_cb"),
    (OPTIONS, "mcpc_notification_cb"),
    (OPTIONS, "mcpc_log_cb"),
    (OPTIONS, "mcpc_token_cb"),
    (OPTIONS, "mcpc_free_cb"),
    (OPTIONS, "mcpc_options_new"),
    (OPTIONS, "mcpc_options_free"),
    (OPTIONS, "mcpc_options_*"),
    (CONNECTING, "mcpc_client_t"),
    (CONNECTING, "mcpc_client_connect_stdio"),
    (CONNECTING, "mcpc_client_connect_http"),
    (CONNECTING, "mcpc_check_url"),
    (CONNECTING, "mcpc_client_server_info"),
    (CONNECTING, "mcpc_client_server_extensions"),
    (CONNECTING, "mcpc_client_protocol_version"),
    (CONNECTING, "mcpc_client_negotiated_by"),
    (CONNECTING, "mcpc_client_close"),
    (CONNECTING, "mcpc_client_free"),
    // The handles that calls return are declared with the calls; Results reads them.
    (CALLS, "mcpc_tool_list_t"),
    (CALLS, "mcpc_result_t"),
    (CALLS, "mcpc_contents_t"),
    (CALLS, "MCPC_COMPLETE_*"),
    (CALLS, "mcpc_cancel_t"),
    (CALLS, "mcpc_progress_cb"),
    (CALLS, "MCPC_TASK_*"),
    (CALLS, "mcpc_task_cb"),
    (CALLS, "mcpc_call_opts_t"),
    (CALLS, "mcpc_client_list_tools"),
    (CALLS, "mcpc_client_call_tool"),
    (CALLS, "mcpc_check_arguments"),
    (CALLS, "mcpc_client_list_resources"),
    (CALLS, "mcpc_client_list_resource_templates"),
    (CALLS, "mcpc_client_list_prompts"),
    (CALLS, "mcpc_client_forget_lists"),
    (CALLS, "mcpc_client_list_skills"),
    (CALLS, "mcpc_client_get_skill"),
    (CALLS, "mcpc_client_read_skill_file"),
    (CALLS, "mcpc_client_read_skill_directory"),
    (CALLS, "mcpc_client_read_resource"),
    (CALLS, "mcpc_client_subscribe_resource"),
    (CALLS, "mcpc_client_unsubscribe_resource"),
    (CALLS, "mcpc_client_get_prompt"),
    (CALLS, "mcpc_client_complete"),
    (CALLS, "mcpc_client_set_log_level"),
    (CALLS, "mcpc_client_request"),
    (CALLS, "mcpc_client_notify"),
    (CALLS, "mcpc_client_resume_task"),
    (CALLS, "mcpc_ui_view_t"),
    (CALLS, "MCPC_UI_*"),
    (CALLS, "mcpc_client_read_ui_view"),
    (CALLS, "mcpc_client_relay_ui"),
    (CALLS, "mcpc_call_opts_init"),
    (CALLS, "mcpc_call_opts_init_sized"),
    (CALLS, "mcpc_cancel_new"),
    (CALLS, "mcpc_cancel_*"),
    (RESULTS, "mcpc_tool_list_*"),
    (RESULTS, "mcpc_ui_view_*"),
    (RESULTS, "mcpc_result_*"),
    (RESULTS, "mcpc_contents_*"),
    (ASYNC, "mcpc_op_t"),
    (ASYNC, "mcpc_connect_done_cb"),
    (ASYNC, "mcpc_list_done_cb"),
    (ASYNC, "mcpc_call_done_cb"),
    (ASYNC, "mcpc_request_done_cb"),
    (ASYNC, "mcpc_client_connect_stdio_async"),
    (ASYNC, "mcpc_client_connect_http_async"),
    (ASYNC, "mcpc_client_list_tools_async"),
    (ASYNC, "mcpc_client_call_tool_async"),
    (ASYNC, "mcpc_client_request_async"),
    (ASYNC, "mcpc_op_*"),
    // Connecting over the seam needs its transport, declared here.
    (TRANSPORT, "mcpc_transport_new"),
    (TRANSPORT, "mcpc_transport_new_request"),
    (TRANSPORT, "mcpc_transport_*"),
    (TRANSPORT, "mcpc_client_connect_transport"),
    (TRANSPORT, "mcpc_client_connect_transport_async"),
    (TRANSPORT, "mcpc_exchange_*"),
    (AUTHORIZATION, "MCPC_OAUTH_*"),
    (AUTHORIZATION, "mcpc_oauth_t"),
    (AUTHORIZATION, "mcpc_auth_request_t"),
    (AUTHORIZATION, "mcpc_authorize_cb"),
    (AUTHORIZATION, "mcpc_store_load_cb"),
    (AUTHORIZATION, "mcpc_store_save_cb"),
    (AUTHORIZATION, "mcpc_assertion_cb"),
    (AUTHORIZATION, "MCPC_SIGNATURE_MAX"),
    (AUTHORIZATION, "mcpc_sign_cb"),
    (AUTHORIZATION, "mcpc_oauth_new"),
    (AUTHORIZATION, "mcpc_oauth_free"),
    (AUTHORIZATION, "mcpc_oauth_set_*"),
    (AUTHORIZATION, "mcpc_options_set_oauth"),
    (AUTHORIZATION, "mcpc_auth_request_url"),
    (AUTHORIZATION, "mcpc_auth_request_complete"),
    (AUTHORIZATION, "mcpc_auth_request_cancel"),
    (HOSTS, "mcpc_server_state_t"),
    (HOSTS, "mcpc_host_event_t"),
    (HOSTS, "MCPC_ENV_*"),
    (HOSTS, "mcpc_host_t"),
    (HOSTS, "mcpc_host_event_cb"),
    (HOSTS, "mcpc_host_resolve_cb"),
    (HOSTS, "mcpc_host_new"),
    (HOSTS, "mcpc_host_set_*"),
    (HOSTS, "mcpc_host_add_config"),
    (HOSTS, "mcpc_host_load_catalog"),
    (HOSTS, "mcpc_host_add_stdio"),
    (HOSTS, "mcpc_host_add_http"),
    (HOSTS, "mcpc_host_start"),
    (HOSTS, "mcpc_host_tools"),
    (HOSTS, "mcpc_host_status"),
    (HOSTS, "mcpc_host_call_tool"),
    (HOSTS, "mcpc_host_resources"),
    (HOSTS, "mcpc_host_read_resource"),
    (HOSTS, "mcpc_host_prompts"),
    (HOSTS, "mcpc_host_get_prompt"),
    (HOSTS, "mcpc_host_remove"),
    (HOSTS, "mcpc_host_close"),
    (HOSTS, "mcpc_host_free"),
    (INPUT, "MCPC_INPUT_*"),
    (INPUT, "MCPC_ELICIT_*"),
    (INPUT, "MCPC_SAMPLING_*"),
    (INPUT, "mcpc_input_t"),
    (INPUT, "mcpc_input_cb"),
    (INPUT, "mcpc_options_set_elicitation_handler"),
    (INPUT, "mcpc_options_set_sampling_handler"),
    (INPUT, "mcpc_options_set_roots_handler"),
    (INPUT, "mcpc_input_*"),
    (INPUT, "mcpc_client_roots_changed"),
];

const CPP_OPEN: &str = "#ifdef __cplusplus\nextern \"C\" {\n#endif // __cplusplus\n";
const CPP_CLOSE: &str = "#ifdef __cplusplus\n}  // extern \"C\"\n#endif  // __cplusplus\n";
const GUARD_END: &str = "#endif  /* MCPC_H */\n";

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Kind {
    Macro,
    Type,
    Function,
}

/// One declaration with its doc comment.
struct Item {
    name: String,
    kind: Kind,
    /// The doc comment and the declaration, as cbindgen wrote them.
    text: String,
    /// The declaration without comments.
    code: String,
}

/// The header for the crate at `crate_dir`, with version macros for `version`
/// ("MAJOR.MINOR.PATCH").
pub fn generate(crate_dir: &Path, version: &str) -> String {
    arrange(&cbindgen_output(crate_dir), version)
}

/// What cbindgen writes for the crate at `crate_dir`, before [`arrange`].
pub fn cbindgen_output(crate_dir: &Path) -> String {
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("read cbindgen.toml");
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen failed")
        .write(&mut out);
    String::from_utf8(out).expect("cbindgen writes UTF-8")
}

/// Regroups cbindgen's header `raw` (see the module doc).
pub fn arrange(raw: &str, version: &str) -> String {
    let (preamble, body) = split_preamble(raw);
    let mut items = version_macros(version);
    items.extend(split_items(&body));
    let items: Vec<Item> = items.into_iter().filter(keep).collect();
    let placed = place(&items);
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| {
        let (group, rule) = placed[i];
        let item = &items[i];
        // Types keep cbindgen's order, the others follow the table.
        let rule = if item.kind == Kind::Type { 0 } else { rule };
        (group, item.kind, rule, i)
    });
    check_declared_before_use(order.iter().map(|&i| &items[i]));

    let mut header = preamble;
    header.push('\n');
    header.push_str(CPP_OPEN);
    let mut group = usize::MAX;
    for &i in &order {
        if placed[i].0 != group {
            group = placed[i].0;
            let (title, about) = GROUPS[group];
            header.push_str(&format!("\n/* ===== {title} ===== */\n/* {about} */\n"));
        }
        header.push('\n');
        header.push_str(&items[i].text);
    }
    header.push('\n');
    header.push_str(CPP_CLOSE);
    header.push('\n');
    header.push_str(GUARD_END);
    header
}

/// Splits cbindgen's output into the part up to its last include (the comment, the
/// guard, the includes) and the declarations, without the `extern "C"` lines and the
/// end of the guard.
fn split_preamble(raw: &str) -> (String, String) {
    let shape = "cbindgen's output changed shape; update tools/header_gen.rs";
    let last_include = raw.rfind("\n#include <").expect(shape) + 1;
    let end = last_include + raw[last_include..].find('\n').expect(shape) + 1;
    let preamble = raw[..end].to_string();
    let mut body = raw[end..].strip_suffix(GUARD_END).expect(shape).to_string();
    for marker in [CPP_OPEN, CPP_CLOSE] {
        assert_eq!(body.matches(marker).count(), 1, "{shape}");
        body = body.replacen(marker, "", 1);
    }
    (preamble, body)
}

/// The version macros, placed among the errors like the other items.
fn version_macros(version: &str) -> Vec<Item> {
    let mut parts = version.split(['.', '-', '+']);
    let mut next = || parts.next().unwrap_or("0").to_string();
    let (major, minor, patch) = (next(), next(), next());
    // One number that grows with each version, for the preprocessor's comparisons.
    let byte = |p: &str| p.parse::<u8>().expect("each part of the version is at most 255");
    let num = format!("0x{:02x}{:02x}{:02x}", byte(&major), byte(&minor), byte(&patch));
    let doc = "/**\n * The version of this header; mcpc_version() gives the library's.\n * \
               MCPC_VERSION_NUM is 0xMMmmpp (major, minor, patch; two hex digits each), for\n * \
               `#if MCPC_VERSION_NUM >= 0x000200` checks.\n */\n";
    let lines = [
        ("MCPC_VERSION_MAJOR", major),
        ("MCPC_VERSION_MINOR", minor),
        ("MCPC_VERSION_PATCH", patch),
        ("MCPC_VERSION_NUM", num),
        ("MCPC_VERSION", format!("\"{version}\"")),
    ];
    let code: String = lines
        .iter()
        .map(|(name, value)| format!("#define {name} {value}\n"))
        .collect();
    vec![Item {
        name: "MCPC_VERSION".to_string(),
        kind: Kind::Macro,
        text: format!("{doc}{code}"),
        code,
    }]
}

fn is_comment(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("/*") || t.starts_with('*') || t.starts_with("//")
}

/// Takes the declarations apart: each item is an optional doc comment and one
/// declaration (a `#define` line, or lines up to a `;` outside braces).
fn split_items(body: &str) -> Vec<Item> {
    let mut items = Vec::new();
    let mut lines = body.lines().peekable();
    loop {
        while lines.next_if(|l| l.trim().is_empty()).is_some() {}
        let Some(first) = lines.peek() else { break };
        let mut text = String::new();
        if first.starts_with("/*") {
            for line in lines.by_ref() {
                text.push_str(line);
                text.push('\n');
                if line.trim_end().ends_with("*/") {
                    break;
                }
            }
        }
        let mut code = String::new();
        let mut depth = 0i32;
        loop {
            let line = lines
                .next()
                .unwrap_or_else(|| panic!("a declaration does not end:\n{text}{code}"));
            assert!(
                !line.trim().is_empty() || depth > 0,
                "a doc comment without a declaration:\n{text}{code}"
            );
            text.push_str(line);
            text.push('\n');
            if is_comment(line) {
                continue;
            }
            code.push_str(line);
            code.push('\n');
            depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
            if depth == 0 && (code.starts_with("#define") || line.trim_end().ends_with(';')) {
                break;
            }
        }
        let (name, kind) = name_of(&code);
        items.push(Item { name, kind, text, code });
    }
    items
}

fn identifiers(code: &str) -> impl Iterator<Item = &str> {
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|t| !t.is_empty())
}

/// The name a declaration declares, and its kind.
fn name_of(code: &str) -> (String, Kind) {
    fn fail<T>(code: &str) -> T {
        panic!("cannot tell what this declares:\n{code}")
    }
    if let Some(rest) = code.strip_prefix("#define ") {
        return (
            identifiers(rest).next().unwrap_or_else(|| fail(code)).to_string(),
            Kind::Macro,
        );
    }
    if code.starts_with("typedef") {
        if let Some(at) = code.find("(*") {
            let name = identifiers(&code[at..]).next().unwrap_or_else(|| fail(code));
            return (name.to_string(), Kind::Type);
        }
        let end = code.rfind(';').unwrap_or_else(|| fail(code));
        return (
            identifiers(&code[..end])
                .last()
                .unwrap_or_else(|| fail(code))
                .to_string(),
            Kind::Type,
        );
    }
    let paren = code.find('(').unwrap_or_else(|| fail(code));
    (
        identifiers(&code[..paren])
            .last()
            .unwrap_or_else(|| fail(code))
            .to_string(),
        Kind::Function,
    )
}

fn prefixed(name: &str) -> bool {
    name.starts_with("mcpc_") || name.starts_with("MCPC_")
}

/// Whether an item belongs in the header: an unprefixed constant is left out, any other
/// unprefixed name fails the build.
fn keep(item: &Item) -> bool {
    if item.code.starts_with("typedef enum") {
        let body = &item.code[item.code.find('{').unwrap() + 1..item.code.rfind('}').unwrap()];
        for value in body.split(',').filter_map(|v| identifiers(v).next()) {
            assert!(
                prefixed(value),
                "enum value {value} in {} lacks the MCPC_ prefix",
                item.name
            );
        }
    }
    if prefixed(&item.name) {
        return true;
    }
    assert!(
        item.kind == Kind::Macro,
        "{} lacks the mcpc_ prefix: every exported function and type carries it",
        item.name
    );
    false
}

/// The group and rule index of each item; fails on a name no rule places and on a rule
/// that places nothing.
fn place(items: &[Item]) -> Vec<(usize, usize)> {
    let mut used = vec![false; RULES.len()];
    let mut unplaced = Vec::new();
    let placed = items
        .iter()
        .map(|item| {
            let best = RULES
                .iter()
                .enumerate()
                .filter_map(|(i, &(_, pattern))| match pattern.strip_suffix('*') {
                    Some(prefix) if item.name.starts_with(prefix) => Some((prefix.len(), i)),
                    None if item.name == pattern => Some((usize::MAX, i)),
                    _ => None,
                })
                .max();
            match best {
                Some((_, i)) => {
                    used[i] = true;
                    (RULES[i].0, i)
                }
                None => {
                    unplaced.push(item.name.clone());
                    (0, 0)
                }
            }
        })
        .collect();
    assert!(
        unplaced.is_empty(),
        "no group for {unplaced:?}: add them to RULES in tools/header_gen.rs"
    );
    let unused: Vec<&str> = RULES.iter().zip(&used).filter(|(_, &u)| !u).map(|(r, _)| r.1).collect();
    assert!(
        unused.is_empty(),
        "RULES in tools/header_gen.rs place nothing for {unused:?}"
    );
    placed
}

/// Fails when an item uses an mcpc type declared after it.
fn check_declared_before_use<'a>(items: impl Iterator<Item = &'a Item> + Clone) {
    let types: HashMap<&str, usize> = items
        .clone()
        .enumerate()
        .filter(|(_, item)| item.kind == Kind::Type)
        .map(|(at, item)| (item.name.as_str(), at))
        .collect();
    for (at, item) in items.enumerate() {
        for name in identifiers(&item.code) {
            if let Some(&declared) = types.get(name) {
                assert!(
                    declared <= at,
                    "{} uses {name} before its declaration: fix RULES in tools/header_gen.rs",
                    item.name
                );
            }
        }
    }
}
