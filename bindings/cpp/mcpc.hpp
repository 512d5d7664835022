// mcpc.hpp: a header-only C++17 wrapper over mcpc.h, the C ABI of the mcpc
// Model Context Protocol client library.
//
// - Handles are RAII and move-only: Client, Host, Options, OAuth, Result, ToolList, Cancel,
//   Op, Transport, Exchange, InputRequest. A moved-from handle is empty (operator bool
//   is false).
// - Failures throw mcpc::Error (or a subclass, see below) carrying the status, the
//   library's message and, for JSON-RPC errors, the code. ToolError (the tool ran and
//   reported isError) carries the Result.
// - Strings go in as std::string_view and come out as std::string (copies; the
//   library's borrowed pointers never escape this header).
// - Callbacks are std::function. They run on mcpc threads (see mcpc.h). Send,
//   request, token, OAuth authorize and store callbacks, input handlers and a host's
//   resolver may throw: an exception counts as a failure of that message, as "no token",
//   as a cancelled login, as a refused request, as "nothing stored" or as "no value".
//   Every other callback (completions, progress, stderr, notifications, a host's events)
//   must not throw: an exception escaping one calls std::terminate.
//
// The header's doc comments in mcpc.h remain the reference for behaviour, threads
// and ownership; this wrapper adds no behaviour of its own.
#ifndef MCPC_HPP
#define MCPC_HPP

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mcpc.h"

namespace mcpc {

/// The status of an mcpc call; the values are mcpc_status_t's.
enum class Status : int {
    Ok = MCPC_OK,
    InvalidArg = MCPC_ERR_INVALID_ARG,
    InvalidUtf8 = MCPC_ERR_INVALID_UTF8,
    Panic = MCPC_ERR_PANIC,
    Transport = MCPC_ERR_TRANSPORT,
    Protocol = MCPC_ERR_PROTOCOL,
    Handshake = MCPC_ERR_HANDSHAKE,
    Rpc = MCPC_ERR_RPC,
    Tool = MCPC_ERR_TOOL,
    Timeout = MCPC_ERR_TIMEOUT,
    Cancelled = MCPC_ERR_CANCELLED,
    Closed = MCPC_ERR_CLOSED,
    CursorRepeated = MCPC_ERR_CURSOR_REPEATED,
    DuplicateTool = MCPC_ERR_DUPLICATE_TOOL,
    TooManyPages = MCPC_ERR_TOO_MANY_PAGES,
    MessageTooLarge = MCPC_ERR_MESSAGE_TOO_LARGE,
    Spawn = MCPC_ERR_SPAWN,
    WouldDeadlock = MCPC_ERR_WOULD_DEADLOCK,
    InsecureUrl = MCPC_ERR_INSECURE_URL,
    Tls = MCPC_ERR_TLS,
    Http = MCPC_ERR_HTTP,
    Auth = MCPC_ERR_AUTH,
    SessionExpired = MCPC_ERR_SESSION_EXPIRED,
    UnsupportedVersion = MCPC_ERR_UNSUPPORTED_VERSION,
    NotSupported = MCPC_ERR_NOT_SUPPORTED,
    HeaderMismatch = MCPC_ERR_HEADER_MISMATCH,
    MissingCapability = MCPC_ERR_MISSING_CAPABILITY,
    InputRequired = MCPC_ERR_INPUT_REQUIRED,
    LoginRequired = MCPC_ERR_LOGIN_REQUIRED,
    LoginCancelled = MCPC_ERR_LOGIN_CANCELLED,
    AuthServer = MCPC_ERR_AUTH_SERVER,
    ServerExited = MCPC_ERR_SERVER_EXITED,
    AlreadyCompleted = MCPC_ERR_ALREADY_COMPLETED,
    InputInvalid = MCPC_ERR_INPUT_INVALID,
    ProxyAuth = MCPC_ERR_PROXY_AUTH,
    OutputSchema = MCPC_ERR_OUTPUT_SCHEMA,
    Integrity = MCPC_ERR_INTEGRITY,
    TaskDetached = MCPC_ERR_TASK_DETACHED,
    Config = MCPC_ERR_CONFIG,
    UnknownName = MCPC_ERR_UNKNOWN_NAME,
};

/// The status's name, such as "MCPC_ERR_TIMEOUT".
inline std::string status_name(Status s) { return mcpc_status_name(static_cast<int32_t>(s)); }

/// The library's version, "MAJOR.MINOR.PATCH" (equals MCPC_VERSION of the header it was built with).
inline std::string version() { return mcpc_version(); }

class Result;

// ---- errors -------------------------------------------------------------------

/// Any mcpc failure: what(), the status, and the JSON-RPC code when there is one.
class Error : public std::runtime_error {
public:
    Error(Status status, const std::string& message, int64_t rpc_code = 0)
        : std::runtime_error(message), status_(status), rpc_code_(rpc_code) {}
    Status status() const noexcept { return status_; }
    /// The JSON-RPC error code (MCPC_ERR_RPC, or a handshake refused with one); 0 otherwise.
    int64_t rpc_code() const noexcept { return rpc_code_; }

private:
    Status status_;
    int64_t rpc_code_;
};

/// INVALID_ARG, INVALID_UTF8, INSECURE_URL: the call was refused before anything was sent.
class InvalidArgument : public Error { using Error::Error; };
/// TRANSPORT, SPAWN, TLS, HTTP, AUTH, PROXY_AUTH, SESSION_EXPIRED, SERVER_EXITED: the
/// connection failed (SERVER_EXITED: the stdio server is being started again, and
/// the call may be made again).
class TransportError : public Error { using Error::Error; };
/// PROTOCOL, MESSAGE_TOO_LARGE and the listing errors (CURSOR_REPEATED, DUPLICATE_TOOL, TOO_MANY_PAGES).
class ProtocolError : public Error { using Error::Error; };
/// HANDSHAKE, UNSUPPORTED_VERSION.
class HandshakeError : public Error { using Error::Error; };
/// RPC: the server answered with a JSON-RPC error; rpc_code() is its code.
class RpcError : public Error { using Error::Error; };
/// TIMEOUT: notifications/cancelled was sent.
class TimeoutError : public Error { using Error::Error; };
/// CANCELLED: by a Cancel or Op::cancel; notifications/cancelled was sent.
class CancelledError : public Error { using Error::Error; };
/// CLOSED: the client was closed, or its connection had failed before.
class ClosedError : public Error { using Error::Error; };
/// LOGIN_REQUIRED: OAuth needs a login that cannot happen (headless, or no authorize
/// callback or redirect URI).
class LoginRequiredError : public Error { using Error::Error; };
/// LOGIN_CANCELLED: the authorize callback cancelled the login, or the user denied access.
class LoginCancelledError : public Error { using Error::Error; };
/// AUTH_SERVER: the authorization server failed or broke the OAuth rules.
class AuthServerError : public Error { using Error::Error; };
/// CONFIG: a host's configuration file was refused (unreadable, a malformed value, a
/// variable without a value); what() names the file, the server and the field, never a value.
class ConfigError : public Error { using Error::Error; };
/// UNKNOWN_NAME: a host has no tool of that qualified name in its catalog, or no
/// server of that name.
class UnknownNameError : public Error { using Error::Error; };

/// TOOL: the tool ran and reported failure (isError). result() says what went wrong.
class ToolError : public Error {
public:
    ToolError(const std::string& message, std::shared_ptr<const Result> result)
        : Error(Status::Tool, message), result_(std::move(result)) {}
    const Result& result() const noexcept { return *result_; }

private:
    std::shared_ptr<const Result> result_;  // shared: exceptions must be copyable
};

/// OUTPUT_SCHEMA: the result does not fit its tool's outputSchema
/// (Options::validate_output); result() is the result all the same.
class OutputSchemaError : public Error {
public:
    OutputSchemaError(const std::string& message, std::shared_ptr<const Result> result)
        : Error(Status::OutputSchema, message), result_(std::move(result)) {}
    const Result& result() const noexcept { return *result_; }

private:
    std::shared_ptr<const Result> result_;
};

namespace detail {

inline std::string str(const char* s) { return s ? std::string(s) : std::string(); }

/// Throws the exception for a failed status; `result` is the tool result for Status::Tool.
[[noreturn]] inline void throw_status(Status st, const std::string& message, int64_t rpc_code,
                                      std::shared_ptr<const Result> result);

/// A failure of the call just made on this thread: the status, the message and the
/// rpc code come from the thread's last error, read at once.
[[noreturn]] inline void throw_last(mcpc_status_t st) {
    throw_status(static_cast<Status>(st), str(mcpc_last_error_message()), mcpc_last_error_rpc_code(),
                 nullptr);
}

inline void check(mcpc_status_t st) {
    if (st != MCPC_OK) throw_last(st);
}

inline int64_t to_ms(std::chrono::milliseconds d) { return static_cast<int64_t>(d.count()); }

template <class T, void (*Free)(T*)>
struct Deleter {
    void operator()(T* p) const noexcept { Free(p); }
};

}  // namespace detail

// ---- results ------------------------------------------------------------------

/// The result of a tool call. Move-only; readable from any thread.
class Result {
public:
    Result() = default;
    /// Takes ownership of a result from the C API.
    explicit Result(mcpc_result_t* r) noexcept : p_(r) {}
    explicit operator bool() const noexcept { return p_ != nullptr; }

    /// The whole CallToolResult JSON, as the server sent it.
    std::string json() const { return detail::str(mcpc_result_json(p_.get())); }
    /// structuredContent as JSON, or nullopt when the result has none.
    std::optional<std::string> structured_json() const {
        const char* s = mcpc_result_structured_json(p_.get());
        if (!s) return std::nullopt;
        return std::string(s);
    }
    /// The text blocks joined with "\n" (may hold NUL bytes; untrusted server data).
    std::string text() const {
        size_t len = 0;
        const char* s = mcpc_result_text(p_.get(), &len);
        return s ? std::string(s, len) : std::string();
    }
    /// The number of text blocks.
    size_t text_count() const noexcept { return mcpc_result_text_count(p_.get()); }
    /// Text block `i`; throws std::out_of_range past the end.
    std::string text_at(size_t i) const {
        size_t len = 0;
        const char* s = mcpc_result_text_at(p_.get(), i, &len);
        if (!s) throw std::out_of_range("mcpc::Result::text_at: no such text block");
        return std::string(s, len);
    }
    /// All text blocks, in content order.
    std::vector<std::string> texts() const {
        std::vector<std::string> out;
        for (size_t i = 0, n = text_count(); i < n; i++) out.push_back(text_at(i));
        return out;
    }
    /// True when the tool reported failure (isError).
    bool is_error() const noexcept { return mcpc_result_is_error(p_.get()); }

    mcpc_result_t* get() const noexcept { return p_.get(); }
    mcpc_result_t* release() noexcept { return p_.release(); }

private:
    std::unique_ptr<mcpc_result_t, detail::Deleter<mcpc_result_t, mcpc_result_free>> p_;
};

/// One entry of a resource read: text, or a blob's decoded bytes.
struct Content {
    std::string uri;
    std::optional<std::string> mime_type;
    /// The text (may hold NUL bytes; untrusted server data), for a text entry.
    std::optional<std::string> text;
    /// The decoded bytes, for a blob entry.
    std::optional<std::vector<uint8_t>> blob;
    /// Its _meta as JSON, when it has one.
    std::optional<std::string> meta_json;
};

/// What read_resource returns: the entries, and the result JSON as the server sent
/// it (blobs still in base64).
struct ResourceContents {
    std::vector<Content> contents;
    std::string json;
};

/// MCP Apps: a view fetched and checked, with the policy to render it under (the
/// HTML is the server's: render it only under `csp`, in a sandboxed frame).
struct UiView {
    std::string html;
    std::string csp;
    /// The frame's `allow` attribute; empty for none.
    std::string allow;
    std::optional<std::string> domain;
    std::optional<bool> prefers_border;
    /// The `_meta.ui` the policy came from, as JSON ("null" for none).
    std::string meta_json;
};

namespace detail {
inline std::optional<std::string> opt_str(const char* s) {
    return s ? std::optional<std::string>(s) : std::nullopt;
}
// Copies a mcpc_contents_t and frees it.
inline ResourceContents take_contents(mcpc_contents_t* raw) {
    std::unique_ptr<mcpc_contents_t, Deleter<mcpc_contents_t, mcpc_contents_free>> c(raw);
    ResourceContents out;
    out.json = str(mcpc_contents_json(c.get()));
    for (size_t i = 0, n = mcpc_contents_count(c.get()); i < n; i++) {
        Content e;
        e.uri = str(mcpc_contents_uri(c.get(), i));
        e.mime_type = opt_str(mcpc_contents_mime_type(c.get(), i));
        e.meta_json = opt_str(mcpc_contents_meta_json(c.get(), i));
        size_t len = 0;
        if (const char* t = mcpc_contents_text(c.get(), i, &len)) e.text = std::string(t, len);
        if (const uint8_t* b = mcpc_contents_blob(c.get(), i, &len)) e.blob = std::vector<uint8_t>(b, b + len);
        out.contents.push_back(std::move(e));
    }
    return out;
}
// Takes an owned string from the C API.
inline std::string take_string(char* s) {
    std::string out = str(s);
    mcpc_string_free(s);
    return out;
}
inline const char* or_null(const std::string& s) { return s.empty() ? nullptr : s.c_str(); }
}  // namespace detail

/// A list of tools in the server's order. Move-only; readable from any thread.
class ToolList {
public:
    ToolList() = default;
    explicit ToolList(mcpc_tool_list_t* l) noexcept : p_(l) {}
    explicit operator bool() const noexcept { return p_ != nullptr; }

    size_t size() const noexcept { return mcpc_tool_list_count(p_.get()); }
    /// The name of tool `i`; throws std::out_of_range past the end.
    std::string name(size_t i) const { return at(mcpc_tool_list_name(p_.get(), i)); }
    /// Tool `i` as JSON, exactly as the server sent it (inputSchema unchanged).
    std::string json(size_t i) const { return at(mcpc_tool_list_json(p_.get(), i)); }
    /// All tool names, in order.
    std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (size_t i = 0, n = size(); i < n; i++) out.push_back(name(i));
        return out;
    }
    /// MCP Apps: the ui:// URI of tool `i`'s view, nullopt when it has none.
    std::optional<std::string> ui_uri(size_t i) const {
        const char* u = mcpc_tool_list_ui_uri(p_.get(), i);
        return u ? std::optional<std::string>(u) : std::nullopt;
    }
    /// MCP Apps: who may see and call tool `i` (MCPC_UI_MODEL, MCPC_UI_APP bits).
    uint32_t ui_visibility(size_t i) const noexcept { return mcpc_tool_list_ui_visibility(p_.get(), i); }
    /// All tools as one JSON array.
    std::string to_json() const {
        char* s = nullptr;
        detail::check(mcpc_tool_list_to_json(p_.get(), &s));
        std::string out(s);
        mcpc_string_free(s);
        return out;
    }

    mcpc_tool_list_t* get() const noexcept { return p_.get(); }
    mcpc_tool_list_t* release() noexcept { return p_.release(); }

private:
    static std::string at(const char* s) {
        if (!s) throw std::out_of_range("mcpc::ToolList: no such tool");
        return std::string(s);
    }
    std::unique_ptr<mcpc_tool_list_t, detail::Deleter<mcpc_tool_list_t, mcpc_tool_list_free>> p_;
};

namespace detail {
[[noreturn]] inline void throw_status(Status st, const std::string& message, int64_t rpc_code,
                                      std::shared_ptr<const Result> result) {
    switch (st) {
    case Status::Tool: throw ToolError(message, result ? std::move(result) : std::make_shared<Result>());
    case Status::OutputSchema:
        throw OutputSchemaError(message, result ? std::move(result) : std::make_shared<Result>());
    case Status::InvalidArg:
    case Status::InvalidUtf8:
    case Status::InsecureUrl: throw InvalidArgument(st, message, rpc_code);
    case Status::Transport:
    case Status::Spawn:
    case Status::Tls:
    case Status::Http:
    case Status::Auth:
    case Status::ProxyAuth:
    case Status::ServerExited:
    case Status::SessionExpired: throw TransportError(st, message, rpc_code);
    case Status::Protocol:
    case Status::MessageTooLarge:
    case Status::CursorRepeated:
    case Status::DuplicateTool:
    case Status::TooManyPages: throw ProtocolError(st, message, rpc_code);
    case Status::Handshake:
    case Status::UnsupportedVersion: throw HandshakeError(st, message, rpc_code);
    case Status::Rpc: throw RpcError(st, message, rpc_code);
    case Status::Timeout: throw TimeoutError(st, message, rpc_code);
    case Status::Cancelled: throw CancelledError(st, message, rpc_code);
    case Status::Closed: throw ClosedError(st, message, rpc_code);
    case Status::LoginRequired: throw LoginRequiredError(st, message, rpc_code);
    case Status::LoginCancelled: throw LoginCancelledError(st, message, rpc_code);
    case Status::AuthServer: throw AuthServerError(st, message, rpc_code);
    case Status::Config: throw ConfigError(st, message, rpc_code);
    case Status::UnknownName: throw UnknownNameError(st, message, rpc_code);
    default: throw Error(st, message, rpc_code);
    }
}
}  // namespace detail

/// The exception for a status, as a std::exception_ptr (for futures and async code).
inline std::exception_ptr make_error(Status st, const std::string& message, int64_t rpc_code = 0,
                                     std::shared_ptr<const Result> result = nullptr) {
    try {
        detail::throw_status(st, message, rpc_code, std::move(result));
    } catch (...) {
        return std::current_exception();
    }
}

// ---- cancellation and operations ------------------------------------------------

/// A cancellation handle: pass it in CallOptions and trigger it from any thread.
/// Once triggered it stays triggered; make a new one for the next call.
class Cancel {
public:
    Cancel() : p_(mcpc_cancel_new()) {
        if (!p_) throw std::bad_alloc();
    }
    void trigger() const noexcept { mcpc_cancel_trigger(p_.get()); }
    bool triggered() const noexcept { return mcpc_cancel_is_triggered(p_.get()); }
    explicit operator bool() const noexcept { return p_ != nullptr; }
    const mcpc_cancel_t* get() const noexcept { return p_.get(); }

private:
    std::unique_ptr<mcpc_cancel_t, detail::Deleter<mcpc_cancel_t, mcpc_cancel_free>> p_;
};

/// An asynchronous operation. Destroying the handle does not cancel it: its
/// completion still runs exactly once.
class Op {
public:
    Op() = default;
    explicit Op(mcpc_op_t* op) noexcept : p_(op) {}
    /// Cancels (idempotent, any thread): the completion reports Status::Cancelled
    /// unless it had already completed.
    void cancel() const noexcept { mcpc_op_cancel(p_.get()); }
    /// True once the completion has run or is about to.
    bool finished() const noexcept { return mcpc_op_is_finished(p_.get()); }
    explicit operator bool() const noexcept { return p_ != nullptr; }
    const mcpc_op_t* get() const noexcept { return p_.get(); }

private:
    std::unique_ptr<mcpc_op_t, detail::Deleter<mcpc_op_t, mcpc_op_free>> p_;
};

/// Progress of a call: progress, total (nullopt when the server gave none), message.
using ProgressFn = std::function<void(double progress, std::optional<double> total,
                                      std::optional<std::string_view> message)>;

/// Whether a call may run as a task (MCPC_TASK_*; see docs/client.md, Tasks).
enum class TaskMode : int32_t {
    Allow = MCPC_TASK_ALLOW,
    Forbid = MCPC_TASK_FORBID,
    Prefer = MCPC_TASK_PREFER,
    Require = MCPC_TASK_REQUIRE,
};

/// A status change of the call's task: its status, the server's message (nullopt when
/// none) and the task's reference (JSON, for Client::resume_task). Return true to stop
/// following the task and leave it running: the call throws Error with
/// Status::TaskDetached. Runs on the thread that follows the task; must not throw.
using TaskFn = std::function<bool(std::string_view status, std::optional<std::string_view> message,
                                  std::string_view reference)>;

/// Per-call settings; the defaults are the client's.
struct CallOptions {
    /// 0: the client's timeout.
    std::chrono::milliseconds timeout{0};
    /// Not owned; must outlive the call.
    const Cancel* cancel = nullptr;
    /// Runs on an mcpc thread; must not throw.
    ProgressFn on_progress;
    /// Each progress notification restarts the timeout...
    bool reset_timeout_on_progress = false;
    /// ...but never past this in total (0: no limit).
    std::chrono::milliseconds max_total{0};
    /// Whether the call may run as a task.
    TaskMode task = TaskMode::Allow;
    /// How long following a task may take in all (0: the timeout covers it).
    std::chrono::milliseconds task_timeout{0};
    /// Each status change of the call's task.
    TaskFn on_task;

    CallOptions& with_timeout(std::chrono::milliseconds t) { timeout = t; return *this; }
    CallOptions& with_cancel(const Cancel& c) { cancel = &c; return *this; }
    CallOptions& with_progress(ProgressFn f) { on_progress = std::move(f); return *this; }
    CallOptions& with_task(TaskMode m) { task = m; return *this; }
    CallOptions& with_task_timeout(std::chrono::milliseconds t) { task_timeout = t; return *this; }
    CallOptions& with_on_task(TaskFn f) { on_task = std::move(f); return *this; }
};

namespace detail {

inline void progress_trampoline(void* ud, double progress, double total, const char* message) noexcept {
    auto* fn = static_cast<ProgressFn*>(ud);
    std::optional<double> t;
    if (total >= 0) t = total;
    std::optional<std::string_view> m;
    if (message) m = std::string_view(message);
    (*fn)(progress, t, m);
}

inline int32_t task_trampoline(void* ud, const char* reference, const char* status, const char* message) noexcept {
    auto* fn = static_cast<TaskFn*>(ud);
    std::optional<std::string_view> m;
    if (message) m = std::string_view(message);
    return (*fn)(status, m, reference) ? MCPC_TASK_DETACH : MCPC_TASK_FOLLOW;
}

/// Fills a C call options struct; `progress` and `task` (default: the one in `o`) must
/// outlive the call.
inline mcpc_call_opts_t c_opts(const CallOptions& o, const ProgressFn* progress, const TaskFn* task = nullptr) {
    mcpc_call_opts_t c;
    mcpc_call_opts_init_sized(&c, sizeof c);
    c.timeout_ms = to_ms(o.timeout);
    c.cancel = o.cancel ? o.cancel->get() : nullptr;
    if (progress && *progress) {
        c.on_progress = progress_trampoline;
        c.progress_userdata = const_cast<ProgressFn*>(progress);
    }
    c.reset_timeout_on_progress = o.reset_timeout_on_progress;
    c.max_total_ms = to_ms(o.max_total);
    c.task_mode = static_cast<int32_t>(o.task);
    c.task_timeout_ms = to_ms(o.task_timeout);
    if (!task) task = &o.on_task;
    if (*task) {
        c.on_task = task_trampoline;
        c.task_userdata = const_cast<TaskFn*>(task);
    }
    return c;
}

template <class F>
void delete_fn(void* p) noexcept {
    delete static_cast<F*>(p);
}

/// Writes `v` NUL-terminated into a callback's buffer: 0, or 1 for "none" (no value,
/// or one that does not fit or holds a NUL: refused, never cut).
inline int32_t put_value(const std::optional<std::string>& v, char* buf, size_t len) noexcept {
    if (!v || v->size() + 1 > len || v->find('\0') != std::string::npos) return 1;
    v->copy(buf, v->size());
    buf[v->size()] = '\0';
    return 0;
}

/// The C strings of `argv`, valid as long as it is.
inline std::vector<const char*> c_argv(const std::vector<std::string>& argv) {
    std::vector<const char*> a;
    a.reserve(argv.size());
    for (const auto& s : argv) a.push_back(s.c_str());
    return a;
}

}  // namespace detail

// ---- options ------------------------------------------------------------------

/// How a stdio server's stderr is handled (default: discarded).
enum class StderrMode : int32_t { Discard = MCPC_STDERR_DISCARD, Inherit = MCPC_STDERR_INHERIT };

/// Where OAuth keeps tokens and client registrations between runs. Keys name the
/// server or the authorization server; values are JSON text holding secrets: keep them
/// private. Both run on an mcpc thread; calls for one client never overlap. An
/// exception from load() counts as "nothing stored"; one from save() is dropped.
class OAuthStore {
public:
    virtual ~OAuthStore() = default;
    virtual std::optional<std::string> load(std::string_view key) = 0;
    /// Stores `value` under `key`; nullopt deletes the key.
    virtual void save(std::string_view key, std::optional<std::string_view> value) = 0;
};

/// The OAuth grant: a user logs in (the default), the client authenticates as itself,
/// or a JWT assertion (a workload's identity token, or an ID-JAG) is exchanged.
enum class Grant : int32_t {
    AuthorizationCode = MCPC_OAUTH_AUTHORIZATION_CODE,
    ClientCredentials = MCPC_OAUTH_CLIENT_CREDENTIALS,
    JwtBearer = MCPC_OAUTH_JWT_BEARER,
};

/// OAuth 2.1 settings for HTTP endpoints (mcpc_oauth_t): a builder, for one thread at
/// a time; Options::oauth copies it. Setters throw mcpc::Error on bad input.
class OAuth {
public:
    /// Shows the authorization URL to the user and returns the URL the authorization
    /// server redirected to, or nullopt to cancel. Runs on an mcpc thread and may block
    /// until the login is done; an exception cancels the login.
    using AuthorizeFn = std::function<std::optional<std::string>(std::string_view url)>;
    /// Returns a fresh assertion for Grant::JwtBearer, or nullopt for none (the request
    /// then throws LoginRequiredError). Runs on an mcpc thread before each token request
    /// that needs one and may block; an exception counts as none.
    using AssertionFn = std::function<std::optional<std::string>()>;
    /// Signs for a key the host keeps (an HSM, the OS key store): returns the ES256
    /// signature of `data` (ECDSA P-256 over its SHA-256), raw (r then s) or DER;
    /// empty, or an exception, when it cannot. Runs on an mcpc thread and may block.
    /// mcpc checks each signature against the public key before it sends one.
    using SignFn = std::function<std::string(std::string_view data)>;

    OAuth() : p_(mcpc_oauth_new()) {
        if (!p_) throw std::bad_alloc();
    }
    /// A pre-registered client; no secret for a public client.
    OAuth& client(std::string_view id, std::optional<std::string_view> secret = std::nullopt) {
        std::optional<std::string> s;
        if (secret) s = std::string(*secret);
        detail::check(mcpc_oauth_set_client(p_.get(), std::string(id).c_str(), s ? s->c_str() : nullptr));
        return *this;
    }
    /// Where logins redirect to, for example "http://127.0.0.1:PORT/callback".
    OAuth& redirect_uri(std::string_view uri) {
        detail::check(mcpc_oauth_set_redirect_uri(p_.get(), std::string(uri).c_str()));
        return *this;
    }
    /// The client's ID metadata document, used as its id where the server supports it.
    OAuth& client_metadata_url(std::string_view url) {
        detail::check(mcpc_oauth_set_client_metadata_url(p_.get(), std::string(url).c_str()));
        return *this;
    }
    /// The scope to ask for when neither the server's challenge nor its metadata names one.
    OAuth& scope(std::string_view scope) {
        detail::check(mcpc_oauth_set_scope(p_.get(), std::string(scope).c_str()));
        return *this;
    }
    OAuth& grant(Grant g) {
        detail::check(mcpc_oauth_set_grant(p_.get(), static_cast<int32_t>(g)));
        return *this;
    }
    /// Never log in: stored or refreshed credentials only, else LoginRequiredError.
    OAuth& headless(bool on = true) {
        detail::check(mcpc_oauth_set_headless(p_.get(), on ? 1 : 0));
        return *this;
    }
    /// Authenticates the client (see client()) with private_key_jwt: `pem` is its PKCS#8
    /// P-256 private key, copied.
    OAuth& client_key(std::string_view pem) {
        detail::check(mcpc_oauth_set_client_key(p_.get(), std::string(pem).c_str()));
        return *this;
    }
    /// A fixed assertion (a JWT) for Grant::JwtBearer.
    OAuth& assertion(std::string_view jwt) {
        detail::check(mcpc_oauth_set_assertion(p_.get(), std::string(jwt).c_str()));
        return *this;
    }
    /// Fresh assertions for Grant::JwtBearer (see AssertionFn). The function lives as
    /// long as any client made with it.
    OAuth& on_assertion(AssertionFn fn) {
        auto* f = new AssertionFn(std::move(fn));
        detail::check(mcpc_oauth_set_assertion_callback(p_.get(), &OAuth::assertion_cb, f,
                                                        detail::delete_fn<AssertionFn>));
        return *this;
    }
    /// The assertion is an ID token of the enterprise identity provider at
    /// `token_endpoint` (where this client is `client_id`), exchanged there for an
    /// ID-JAG first.
    OAuth& identity_provider(std::string_view token_endpoint, std::string_view client_id) {
        detail::check(mcpc_oauth_set_identity_provider(p_.get(), std::string(token_endpoint).c_str(),
                                                       std::string(client_id).c_str()));
        return *this;
    }
    /// DPoP-bound tokens where the authorization server offers ES256 (on by default).
    OAuth& dpop(bool on = true) {
        detail::check(mcpc_oauth_set_dpop(p_.get(), on ? 1 : 0));
        return *this;
    }
    /// The DPoP key (PKCS#8 P-256 PEM, copied) instead of a fresh one per client.
    OAuth& dpop_key(std::string_view pem) {
        detail::check(mcpc_oauth_set_dpop_key(p_.get(), std::string(pem).c_str()));
        return *this;
    }
    /// DPoP proofs signed by the host's key (see SignFn) whose public key is
    /// `public_key_pem` (BEGIN PUBLIC KEY). The function lives as long as any client
    /// made with it.
    OAuth& dpop_signer(std::string_view public_key_pem, SignFn fn) {
        auto* f = new SignFn(std::move(fn));
        detail::check(mcpc_oauth_set_dpop_signer(p_.get(), std::string(public_key_pem).c_str(), &OAuth::sign_cb, f,
                                                 detail::delete_fn<SignFn>));
        return *this;
    }
    /// private_key_jwt with assertions signed by the host's key (see SignFn), the
    /// client's registered public key being `public_key_pem`. The function lives as
    /// long as any client made with it.
    OAuth& client_signer(std::string_view public_key_pem, SignFn fn) {
        auto* f = new SignFn(std::move(fn));
        detail::check(mcpc_oauth_set_client_signer(p_.get(), std::string(public_key_pem).c_str(), &OAuth::sign_cb,
                                                   f, detail::delete_fn<SignFn>));
        return *this;
    }
    /// The login (see AuthorizeFn). The function lives as long as any client made with it.
    OAuth& on_authorize(AuthorizeFn fn) {
        auto* f = new AuthorizeFn(std::move(fn));
        detail::check(mcpc_oauth_set_authorize_callback(p_.get(), &OAuth::authorize_cb, f,
                                                        detail::delete_fn<AuthorizeFn>));
        return *this;
    }
    /// The credential store; shared with every client made with these settings.
    OAuth& store(std::shared_ptr<OAuthStore> store) {
        if (!store) throw InvalidArgument(Status::InvalidArg, "store is null");
        using S = std::shared_ptr<OAuthStore>;
        auto* s = new S(std::move(store));
        detail::check(mcpc_oauth_set_store(p_.get(), &OAuth::load_cb, &OAuth::save_cb, s, detail::delete_fn<S>));
        return *this;
    }

    const mcpc_oauth_t* get() const noexcept { return p_.get(); }

private:
    // Completes the request exactly once, whatever the function does.
    static void authorize_cb(void* ud, mcpc_auth_request_t* req) noexcept {
        std::optional<std::string> back;
        try {
            back = (*static_cast<AuthorizeFn*>(ud))(detail::str(mcpc_auth_request_url(req)));
        } catch (...) {
            back.reset();
        }
        if (back && back->find('\0') == std::string::npos)
            mcpc_auth_request_complete(req, back->c_str());
        else
            mcpc_auth_request_cancel(req);
    }
    static int32_t assertion_cb(void* ud, char* buf, size_t len) noexcept {
        try {
            std::optional<std::string> v = (*static_cast<AssertionFn*>(ud))();
            return v && !v->empty() ? detail::put_value(v, buf, len) : 1;
        } catch (...) {
            return 1;
        }
    }
    static int32_t sign_cb(void* ud, const uint8_t* data, size_t len, uint8_t* sig, size_t* sig_len) noexcept {
        try {
            std::string s = (*static_cast<SignFn*>(ud))(std::string_view(reinterpret_cast<const char*>(data), len));
            if (s.empty() || s.size() > *sig_len) return 1;
            s.copy(reinterpret_cast<char*>(sig), s.size());
            *sig_len = s.size();
            return 0;
        } catch (...) {
            return 1;
        }
    }
    static int32_t load_cb(void* ud, const char* key, char* buf, size_t len) noexcept {
        try {
            return detail::put_value((*static_cast<std::shared_ptr<OAuthStore>*>(ud))->load(key), buf, len);
        } catch (...) {
            return 1;
        }
    }
    static void save_cb(void* ud, const char* key, const char* value) noexcept {
        try {
            std::optional<std::string_view> v;
            if (value) v = std::string_view(value);
            (*static_cast<std::shared_ptr<OAuthStore>*>(ud))->save(key, v);
        } catch (...) {
        }
    }

    std::unique_ptr<mcpc_oauth_t, detail::Deleter<mcpc_oauth_t, mcpc_oauth_free>> p_;
};

// ---- input for the server -------------------------------------------------------

/// What a server's input request asks for.
enum class InputKind : int32_t {
    None = 0,  ///< an empty (moved-from) request
    ElicitForm = MCPC_INPUT_ELICIT_FORM,
    ElicitUrl = MCPC_INPUT_ELICIT_URL,
    Sampling = MCPC_INPUT_SAMPLING,
    Roots = MCPC_INPUT_ROOTS,
};

/// One request from the server for input (elicitation, sampling, roots), given to the
/// handler set with Options::on_elicitation, on_sampling or on_roots. Move-only; answer
/// it exactly once, now or later, from any thread: accept/decline/cancel (an
/// elicitation), complete (any kind) or fail. Destroying it unanswered refuses it.
/// An answer that cannot be given throws (Status::InputInvalid: the content does not
/// fit the schema and the request stays open; AlreadyCompleted; TimeoutError;
/// ClosedError).
class InputRequest {
public:
    InputRequest() = default;
    /// Shares ownership of a request (the handler's wrapper keeps one reference so that
    /// it can still refuse the request when the handler throws).
    explicit InputRequest(std::shared_ptr<mcpc_input_t> input) noexcept : p_(std::move(input)) {}
    InputRequest(InputRequest&&) noexcept = default;
    InputRequest& operator=(InputRequest&&) noexcept = default;
    InputRequest(const InputRequest&) = delete;
    InputRequest& operator=(const InputRequest&) = delete;

    explicit operator bool() const noexcept { return p_ != nullptr; }

    InputKind kind() const noexcept { return static_cast<InputKind>(mcpc_input_kind(p_.get())); }
    /// "elicitation/create", "sampling/createMessage" or "roots/list".
    std::string method() const { return detail::str(mcpc_input_method(p_.get())); }
    /// Who asks (the title or name the server gave itself): show it to the user.
    std::string server() const { return detail::str(mcpc_input_server(p_.get())); }
    /// The host's name for the server that asks; nullopt for a client outside a Host.
    std::optional<std::string> host_server() const { return opt(mcpc_input_host_server(p_.get())); }
    /// The params JSON as the server sent them ("{}" when none).
    std::string params_json() const { return detail::str(mcpc_input_params_json(p_.get())); }
    /// An elicitation's message to the user; nullopt for other kinds.
    std::optional<std::string> message() const { return opt(mcpc_input_message(p_.get())); }
    /// A form elicitation's requested schema JSON; nullopt for other kinds.
    std::optional<std::string> schema_json() const { return opt(mcpc_input_schema_json(p_.get())); }
    /// A URL elicitation's URL: show it in full, never open it without consent.
    std::optional<std::string> url() const { return opt(mcpc_input_url(p_.get())); }

    /// Accepts an elicitation: a form with its content (a JSON object; fields left out
    /// get the schema's defaults), a URL with none (empty).
    void accept(std::string_view content_json = {}) const { elicit(MCPC_ELICIT_ACCEPT, content_json); }
    /// The user explicitly declined the elicitation.
    void decline() const { elicit(MCPC_ELICIT_DECLINE, {}); }
    /// The user dismissed the elicitation without choosing.
    void cancel() const { elicit(MCPC_ELICIT_CANCEL, {}); }
    /// Answers with the whole result JSON: a CreateMessageResult for sampling,
    /// {"roots":[...]} for roots, an ElicitResult for elicitation.
    void complete(std::string_view result_json) const {
        detail::check(mcpc_input_complete(p_.get(), std::string(result_json).c_str()));
    }
    /// Refuses the request, naming why.
    void fail(std::string_view message) const { detail::check(mcpc_input_fail(p_.get(), std::string(message).c_str())); }

    const mcpc_input_t* get() const noexcept { return p_.get(); }

private:
    static std::optional<std::string> opt(const char* s) {
        if (!s) return std::nullopt;
        return std::string(s);
    }
    void elicit(int32_t action, std::string_view content_json) const {
        std::string c(content_json);
        detail::check(mcpc_input_elicit(p_.get(), action, content_json.empty() ? nullptr : c.c_str()));
    }
    std::shared_ptr<mcpc_input_t> p_;
};

/// Handles one input request; runs on an mcpc blocking-pool thread and may block (ask
/// the user) or keep the request and answer it later from another thread. An exception
/// from it refuses the request with its what() (unless it was answered already).
using InputFn = std::function<void(InputRequest request)>;

namespace detail {

inline void input_trampoline(void* ud, mcpc_input_t* input) noexcept {
    // The trampoline keeps a reference of its own: the handler's InputRequest is gone by
    // the time its exception is caught here, and the request must not wait for a timeout.
    std::shared_ptr<mcpc_input_t> keep;
    try {
        keep.reset(input, mcpc_input_free);  // on bad_alloc it frees (refuses) the request
        (*static_cast<InputFn*>(ud))(InputRequest(keep));
    } catch (const std::exception& e) {
        if (keep) mcpc_input_fail(keep.get(), e.what());
    } catch (...) {
        if (keep) mcpc_input_fail(keep.get(), "the input handler threw");
    }
}

/// `s` as a JSON string literal.
inline std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (char ch : s) {
        unsigned char c = static_cast<unsigned char>(ch);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += ch;
        } else if (c < 0x20) {
            static const char hex[] = "0123456789abcdef";
            out += "\\u00";
            out += hex[c >> 4];
            out += hex[c & 15];
        } else {
            out += ch;
        }
    }
    return out + "\"";
}

}  // namespace detail

/// Client settings: a builder, for one thread at a time. A connect function copies
/// it, so one Options may make many clients. Setters throw mcpc::Error on bad input.
class Options {
public:
    Options() : p_(mcpc_options_new()) {
        if (!p_) throw std::bad_alloc();
    }
    /// Default timeout for connecting, each listing and each call.
    Options& timeout(std::chrono::milliseconds t) {
        detail::check(mcpc_options_set_timeout_ms(p_.get(), detail::to_ms(t)));
        return *this;
    }
    Options& client_info(std::string_view name, std::string_view version) {
        detail::check(mcpc_options_set_client_info(p_.get(), std::string(name).c_str(), std::string(version).c_str()));
        return *this;
    }
    /// Pins the protocol version asked for ("2024-11-05" ... "2025-11-25").
    Options& protocol_version(std::string_view v) {
        detail::check(mcpc_options_set_protocol_version(p_.get(), std::string(v).c_str()));
        return *this;
    }
    Options& max_pages(size_t n) {
        detail::check(mcpc_options_set_max_pages(p_.get(), n));
        return *this;
    }
    Options& max_message_size(size_t bytes) {
        detail::check(mcpc_options_set_max_message_size(p_.get(), bytes));
        return *this;
    }
    /// Starts a stdio server again when it dies, at most `times` times, the first after
    /// `backoff` and each next after twice the wait before (see mcpc_options_set_restart).
    Options& restart(uint32_t times, std::chrono::milliseconds backoff) {
        detail::check(mcpc_options_set_restart(p_.get(), times, detail::to_ms(backoff)));
        return *this;
    }
    Options& close_grace(std::chrono::milliseconds after_stdin, std::chrono::milliseconds after_term) {
        detail::check(mcpc_options_set_close_grace_ms(p_.get(), detail::to_ms(after_stdin), detail::to_ms(after_term)));
        return *this;
    }
    /// Sets a variable in a stdio server's environment.
    Options& env(std::string_view name, std::string_view value) {
        detail::check(mcpc_options_set_env(p_.get(), std::string(name).c_str(), std::string(value).c_str()));
        return *this;
    }
    /// Removes a variable from a stdio server's environment.
    Options& unset_env(std::string_view name) {
        detail::check(mcpc_options_set_env(p_.get(), std::string(name).c_str(), nullptr));
        return *this;
    }
    /// Starts a stdio server from an empty environment (env() still applies).
    Options& clear_env() {
        detail::check(mcpc_options_clear_env(p_.get()));
        return *this;
    }
    Options& cwd(std::string_view dir) {
        detail::check(mcpc_options_set_cwd(p_.get(), std::string(dir).c_str()));
        return *this;
    }
    Options& stderr_mode(StderrMode m) {
        detail::check(mcpc_options_set_stderr(p_.get(), static_cast<int32_t>(m)));
        return *this;
    }
    /// Each stderr line of a stdio server (any bytes, no line end). Runs on an mcpc thread; must not throw.
    Options& on_stderr(std::function<void(std::string_view line)> fn) {
        using F = std::function<void(std::string_view)>;
        auto* f = new F(std::move(fn));
        detail::check(mcpc_options_set_stderr_callback(
            p_.get(),
            [](void* ud, const char* line, size_t len) noexcept { (*static_cast<F*>(ud))(std::string_view(line, len)); },
            f, detail::delete_fn<F>));
        return *this;
    }
    /// Server notifications the client does not handle itself: the method and the
    /// params JSON (nullopt when absent). Runs on an mcpc thread; must not throw.
    /// The server log level to ask for ("debug" ... "emergency").
    Options& log_level(std::string_view level) {
        detail::check(mcpc_options_set_log_level(p_.get(), std::string(level).c_str()));
        return *this;
    }
    /// Gets each server log message: its level, logger (nullopt when none) and data
    /// JSON. Runs on an mcpc thread; must not throw.
    Options& on_log(
        std::function<void(std::string_view level, std::optional<std::string_view> logger, std::string_view data)> fn) {
        using F = std::function<void(std::string_view, std::optional<std::string_view>, std::string_view)>;
        auto* f = new F(std::move(fn));
        detail::check(mcpc_options_set_log_callback(
            p_.get(),
            [](void* ud, const char* level, const char* logger, const char* data) noexcept {
                std::optional<std::string_view> l;
                if (logger) l = std::string_view(logger);
                (*static_cast<F*>(ud))(std::string_view(level ? level : ""), l, std::string_view(data ? data : ""));
            },
            f, detail::delete_fn<F>));
        return *this;
    }
    Options& on_notification(std::function<void(std::string_view method, std::optional<std::string_view> params)> fn) {
        using F = std::function<void(std::string_view, std::optional<std::string_view>)>;
        auto* f = new F(std::move(fn));
        detail::check(mcpc_options_set_notification_callback(
            p_.get(),
            [](void* ud, const char* method, const char* params) noexcept {
                std::optional<std::string_view> p;
                if (params) p = std::string_view(params);
                (*static_cast<F*>(ud))(std::string_view(method ? method : ""), p);
            },
            f, detail::delete_fn<F>));
        return *this;
    }
    /// Declares the extension `id` with its settings (a JSON object; "{}" by default),
    /// sent in the client's capabilities.extensions.
    Options& extension(std::string_view id, std::string_view settings_json = "{}") {
        detail::check(mcpc_options_add_extension(p_.get(), std::string(id).c_str(),
                                                 std::string(settings_json).c_str()));
        return *this;
    }
    /// Adds a header to every HTTP request.
    Options& header(std::string_view name, std::string_view value) {
        detail::check(mcpc_options_add_header(p_.get(), std::string(name).c_str(), std::string(value).c_str()));
        return *this;
    }
    /// Sends "Authorization: Bearer <token>" on every HTTP request.
    Options& bearer(std::string_view token) {
        detail::check(mcpc_options_set_bearer_token(p_.get(), std::string(token).c_str()));
        return *this;
    }
    /// Asked for the first token (www_authenticate nullopt) and again after a 401 (with
    /// the server's WWW-Authenticate value). Return nullopt for "no token". Runs on an
    /// mcpc thread and may block; an exception means "no token".
    Options& token_callback(
        std::function<std::optional<std::string>(std::optional<std::string_view> www_authenticate)> fn) {
        using F = std::function<std::optional<std::string>(std::optional<std::string_view>)>;
        auto* f = new F(std::move(fn));
        detail::check(mcpc_options_set_token_callback(
            p_.get(),
            [](void* ud, const char* www, char* buf, size_t len) noexcept -> int32_t {
                try {
                    std::optional<std::string_view> w;
                    if (www) w = std::string_view(www);
                    return detail::put_value((*static_cast<F*>(ud))(w), buf, len);
                } catch (...) {
                    return 1;
                }
            },
            f, detail::delete_fn<F>));
        return *this;
    }
    /// Trusts the CA certificates in this PEM file (besides the system's roots).
    Options& ca_file(std::string_view path) {
        detail::check(mcpc_options_add_ca_file(p_.get(), std::string(path).c_str()));
        return *this;
    }
    /// Checks each result's structuredContent against its listed tool's outputSchema.
    Options& validate_output(bool on = true) {
        detail::check(mcpc_options_set_validate_output(p_.get(), on));
        return *this;
    }
    /// The HTTP transport: MCPC_HTTP_AUTO (Streamable HTTP, then the HTTP+SSE
    /// transport of 2024-11-05 when the server refuses the POST), MCPC_HTTP_STREAMABLE
    /// or MCPC_HTTP_SSE.
    Options& http_transport(int32_t mode) {
        detail::check(mcpc_options_set_http_transport(p_.get(), mode));
        return *this;
    }
    /// The HTTP versions: MCPC_HTTP_VERSION_AUTO (HTTP/2 for https:// when the
    /// server offers it by ALPN, else HTTP/1.1), MCPC_HTTP_VERSION_1_1 (HTTP/2 off)
    /// or MCPC_HTTP_VERSION_2_PRIOR_KNOWLEDGE (h2c for http://; only h2 over TLS).
    Options& http_version(int32_t version) {
        detail::check(mcpc_options_set_http_version(p_.get(), version));
        return *this;
    }
    /// The HTTP proxy for every endpoint outside no_proxy() ("none": no proxy),
    /// overriding the environment's https_proxy, http_proxy and all_proxy.
    Options& proxy(std::string_view url) {
        detail::check(mcpc_options_set_proxy(p_.get(), std::string(url).c_str()));
        return *this;
    }
    /// The hosts reached directly (curl's NO_PROXY list), replacing the environment's.
    Options& no_proxy(std::string_view list) {
        detail::check(mcpc_options_set_no_proxy(p_.get(), std::string(list).c_str()));
        return *this;
    }
    /// Basic credentials for the proxy, overriding any in its URL.
    Options& proxy_credentials(std::string_view user, std::string_view password) {
        detail::check(
            mcpc_options_set_proxy_credentials(p_.get(), std::string(user).c_str(), std::string(password).c_str()));
        return *this;
    }
    /// Trusts the CA certificates in this PEM text.
    Options& ca_pem(std::string_view pem) {
        detail::check(mcpc_options_add_ca_pem(p_.get(), pem.data(), pem.size()));
        return *this;
    }
    /// Opens the optional standalone GET stream for server notifications (HTTP).
    Options& standalone_stream(bool on) {
        detail::check(mcpc_options_set_standalone_stream(p_.get(), on));
        return *this;
    }
    /// Authorizes with OAuth 2.1 when an HTTP server asks for it (a copy of `o` is
    /// taken); replaces bearer() and token_callback().
    Options& oauth(const OAuth& o) {
        detail::check(mcpc_options_set_oauth(p_.get(), o.get()));
        return *this;
    }

    /// Answers the server's elicitation requests with `fn`, in `modes`
    /// (MCPC_ELICIT_MODE_FORM and/or MCPC_ELICIT_MODE_URL), which the client then
    /// declares. Without a handler elicitation is not declared. Replaces an earlier one.
    Options& on_elicitation(InputFn fn, uint32_t modes = MCPC_ELICIT_MODE_FORM) {
        auto* f = new InputFn(std::move(fn));
        detail::check(mcpc_options_set_elicitation_handler(p_.get(), modes, detail::input_trampoline, f,
                                                           detail::delete_fn<InputFn>));
        return *this;
    }
    /// Answers sampling/createMessage with `fn` (complete it with a CreateMessageResult);
    /// `tools`: requests may carry tools.
    Options& on_sampling(InputFn fn, bool tools = false) {
        auto* f = new InputFn(std::move(fn));
        detail::check(mcpc_options_set_sampling_handler(p_.get(), tools ? MCPC_SAMPLING_TOOLS : 0u,
                                                        detail::input_trampoline, f, detail::delete_fn<InputFn>));
        return *this;
    }
    /// Answers roots/list with `fn` (complete it with {"roots":[{"uri":"file:///...",
    /// "name":"..."}]}); see Client::roots_changed.
    Options& on_roots(InputFn fn) {
        auto* f = new InputFn(std::move(fn));
        detail::check(
            mcpc_options_set_roots_handler(p_.get(), detail::input_trampoline, f, detail::delete_fn<InputFn>));
        return *this;
    }
    /// Answers roots/list with these file:// URIs, always the same.
    Options& roots(const std::vector<std::string>& uris) {
        std::string json = "{\"roots\":[";
        for (size_t i = 0; i < uris.size(); i++)
            json += (i ? ",{\"uri\":" : "{\"uri\":") + detail::json_string(uris[i]) + "}";
        json += "]}";
        return on_roots([json](InputRequest r) { r.complete(json); });
    }

    const mcpc_options_t* get() const noexcept { return p_.get(); }

private:
    std::unique_ptr<mcpc_options_t, detail::Deleter<mcpc_options_t, mcpc_options_free>> p_;
};

// ---- the caller-supplied transport --------------------------------------------

/// One outgoing message of a request/response transport. Complete or fail it exactly
/// once, from any thread; an Exchange destroyed untouched fails its message.
class Exchange {
public:
    Exchange() = default;
    explicit Exchange(mcpc_exchange_t* e) noexcept : p_(e) {}
    Exchange(Exchange&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
    Exchange& operator=(Exchange&& o) noexcept {
        if (this != &o) {
            reset();
            p_ = std::exchange(o.p_, nullptr);
        }
        return *this;
    }
    Exchange(const Exchange&) = delete;
    Exchange& operator=(const Exchange&) = delete;
    ~Exchange() { reset(); }

    explicit operator bool() const noexcept { return p_ != nullptr; }
    /// True for a request (the body must hold its response); false for notifications
    /// and answers to server requests (complete them with no body).
    bool expects_response() const noexcept { return mcpc_exchange_expects_response(p_); }
    /// Completes with the response body (JSON-RPC messages, one per line). Consumes the
    /// exchange even when it throws.
    void complete(std::string_view body = {}) {
        mcpc_exchange_t* e = std::exchange(p_, nullptr);
        if (!e) throw Error(Status::InvalidArg, "mcpc::Exchange::complete: the exchange was already consumed");
        detail::check(mcpc_exchange_complete(e, body.data(), body.size()));
    }
    /// Fails the exchange: its request fails with Status::Transport naming `reason`.
    void fail(std::string_view reason) noexcept {
        mcpc_exchange_t* e = std::exchange(p_, nullptr);
        std::string r(reason);
        mcpc_exchange_fail(e, r.c_str());
    }

private:
    void reset() noexcept {
        if (p_) mcpc_exchange_fail(std::exchange(p_, nullptr), "the host dropped the exchange");
    }
    mcpc_exchange_t* p_ = nullptr;
};

/// A transport whose channel the host owns: the stream form (send each message;
/// deliver what arrives) or the request/response form (complete each Exchange).
/// Callbacks run on an mcpc thread, one at a time, in order; send and request may
/// throw (the message fails, not the connection). Free the Transport (destroy it)
/// only after the client is closed and the host stopped delivering.
class Transport {
public:
    using SendFn = std::function<void(std::string_view message)>;
    using RequestFn = std::function<void(Exchange exchange, std::string_view message)>;
    using CloseFn = std::function<void()>;

    Transport() = default;

    /// Stream form: `send` gets each outgoing message (one JSON object, no line end);
    /// `close` (optional) runs once when the client closes.
    static Transport stream(SendFn send, CloseFn close = {}) {
        auto* st = new State{std::move(send), {}, std::move(close)};
        mcpc_transport_t* t = nullptr;
        detail::check(mcpc_transport_new(
            [](void* ud, const char* data, size_t len) noexcept -> int32_t {
                try {
                    static_cast<State*>(ud)->send(std::string_view(data, len));
                    return 0;
                } catch (...) {
                    return 1;
                }
            },
            close_cb, st, detail::delete_fn<State>, &t));
        return Transport(t);
    }

    /// Request/response form: `request` gets each outgoing message with its Exchange,
    /// to complete now or later, from any thread.
    static Transport request(RequestFn request, CloseFn close = {}) {
        auto* st = new State{{}, std::move(request), std::move(close)};
        mcpc_transport_t* t = nullptr;
        detail::check(mcpc_transport_new_request(
            [](void* ud, mcpc_exchange_t* ex, const char* data, size_t len) noexcept -> int32_t {
                Exchange e(ex);
                try {
                    static_cast<State*>(ud)->request(std::move(e), std::string_view(data, len));
                    return 0;
                } catch (...) {
                    // If the exchange was handed on, its owner completes or fails it;
                    // if it is still here, it fails on destruction below. Either way
                    // it is consumed, so the message counts as handed over.
                    return 0;
                }
            },
            close_cb, st, detail::delete_fn<State>, &t));
        return Transport(t);
    }

    /// Delivers one message from the server (exactly one JSON-RPC message). Any thread.
    /// Throws ClosedError after the client closed the transport.
    void deliver(std::string_view message) const {
        detail::check(mcpc_transport_deliver(p_.get(), message.data(), message.size()));
    }
    /// As deliver, returning the status instead of throwing (for read loops).
    Status try_deliver(std::string_view message) const noexcept {
        return static_cast<Status>(mcpc_transport_deliver(p_.get(), message.data(), message.size()));
    }
    /// The channel ended: calls in flight and later calls fail with Status::Transport.
    void end(std::string_view reason) const noexcept {
        std::string r(reason);
        mcpc_transport_end(p_.get(), r.c_str());
    }

    explicit operator bool() const noexcept { return p_ != nullptr; }
    const mcpc_transport_t* get() const noexcept { return p_.get(); }

private:
    struct State {
        SendFn send;
        RequestFn request;
        CloseFn close;
    };
    static void close_cb(void* ud) noexcept {
        auto* st = static_cast<State*>(ud);
        if (st->close) st->close();
    }
    explicit Transport(mcpc_transport_t* t) noexcept : p_(t) {}
    std::unique_ptr<mcpc_transport_t, detail::Deleter<mcpc_transport_t, mcpc_transport_free>> p_;
};

// ---- the client ---------------------------------------------------------------

namespace detail {
/// A tool call's outcome: the Result, or the exception for its status; ToolError and
/// OutputSchemaError carry the result the call handed out.
inline Result call_result(mcpc_status_t st, mcpc_result_t* r) {
    if (st == MCPC_ERR_TOOL) throw ToolError(str(mcpc_last_error_message()), std::make_shared<Result>(r));
    if (st == MCPC_ERR_OUTPUT_SCHEMA)
        throw OutputSchemaError(str(mcpc_last_error_message()), std::make_shared<Result>(r));
    check(st);
    return Result(r);
}
}  // namespace detail

class Client;

/// Completion of call_async: the status, the result (also for Status::Tool; empty
/// otherwise) and the error message ("" on success). Runs exactly once on an mcpc
/// thread; must not throw.
using CallDoneFn = std::function<void(Status status, Result result, const std::string& error)>;
/// Completion of list_tools_async.
using ListDoneFn = std::function<void(Status status, ToolList tools, const std::string& error)>;
/// Completion of the connect_*_async functions.
using ConnectDoneFn = std::function<void(Status status, Client client, const std::string& error)>;

/// A connected MCP client. Thread-safe: any number of threads may call it at once.
/// Move-only; the destructor closes it (for stdio: stops and reaps the server).
class Client {
public:
    Client() = default;
    /// Takes ownership of a client from the C API.
    explicit Client(mcpc_client_t* c) noexcept : p_(c) {}

    /// Starts `argv[0]` with the rest as arguments and connects over stdio.
    static Client stdio(const std::vector<std::string>& argv, const Options* opts = nullptr) {
        std::vector<const char*> a = detail::c_argv(argv);
        mcpc_client_t* c = nullptr;
        detail::check(mcpc_client_connect_stdio(a.data(), a.size(), opts ? opts->get() : nullptr, &c));
        return Client(c);
    }
    static Client stdio(const std::vector<std::string>& argv, const Options& opts) { return stdio(argv, &opts); }

    /// Connects to a Streamable HTTP endpoint (https://, or http:// on loopback).
    static Client http(std::string_view url, const Options* opts = nullptr) {
        mcpc_client_t* c = nullptr;
        detail::check(mcpc_client_connect_http(std::string(url).c_str(), opts ? opts->get() : nullptr, &c));
        return Client(c);
    }
    static Client http(std::string_view url, const Options& opts) { return http(url, &opts); }

    /// Connects over a caller-supplied transport (which must outlive the client).
    static Client connect(const Transport& t, const Options* opts = nullptr) {
        mcpc_client_t* c = nullptr;
        detail::check(mcpc_client_connect_transport(t.get(), opts ? opts->get() : nullptr, &c));
        return Client(c);
    }
    static Client connect(const Transport& t, const Options& opts) { return connect(t, &opts); }

    /// As stdio(), without blocking: `done` gets the client (or the error) once.
    static Op stdio_async(const std::vector<std::string>& argv, const Options* opts, ConnectDoneFn done) {
        std::vector<const char*> a = detail::c_argv(argv);
        auto* f = new ConnectDoneFn(std::move(done));
        mcpc_op_t* op = nullptr;
        mcpc_status_t st = mcpc_client_connect_stdio_async(a.data(), a.size(), opts ? opts->get() : nullptr,
                                                           connect_done, f, &op);
        return started(st, f, op);
    }
    /// As http(), without blocking.
    static Op http_async(std::string_view url, const Options* opts, ConnectDoneFn done) {
        auto* f = new ConnectDoneFn(std::move(done));
        mcpc_op_t* op = nullptr;
        mcpc_status_t st = mcpc_client_connect_http_async(std::string(url).c_str(), opts ? opts->get() : nullptr,
                                                          connect_done, f, &op);
        return started(st, f, op);
    }
    /// As connect(), without blocking.
    static Op connect_async(const Transport& t, const Options* opts, ConnectDoneFn done) {
        auto* f = new ConnectDoneFn(std::move(done));
        mcpc_op_t* op = nullptr;
        mcpc_status_t st =
            mcpc_client_connect_transport_async(t.get(), opts ? opts->get() : nullptr, connect_done, f, &op);
        return started(st, f, op);
    }

    explicit operator bool() const noexcept { return p_ != nullptr; }

    /// The server's initialize result JSON (protocolVersion, capabilities, serverInfo, instructions).
    std::string server_info() const {
        char* s = nullptr;
        detail::check(mcpc_client_server_info(p_.get(), &s));
        std::string out(s);
        mcpc_string_free(s);
        return out;
    }
    /// The extensions the server offers (its capabilities.extensions JSON, as sent),
    /// or nullopt when it declared none.
    std::optional<std::string> server_extensions() const {
        char* s = nullptr;
        detail::check(mcpc_client_server_extensions(p_.get(), &s));
        if (!s) return std::nullopt;
        std::string out(s);
        mcpc_string_free(s);
        return out;
    }
    /// The protocol version in use, such as "2025-11-25".
    std::string protocol_version() const { return detail::str(mcpc_client_protocol_version(p_.get())); }

    /// Lists all tools, following every page.
    ToolList list_tools(const CallOptions& o = {}) const {
        mcpc_call_opts_t c = detail::c_opts(o, &o.on_progress);
        mcpc_tool_list_t* l = nullptr;
        detail::check(mcpc_client_list_tools(p_.get(), &c, &l));
        return ToolList(l);
    }

    /// Drops the lists the client keeps between listings: the next ones ask the server.
    void forget_lists() const { detail::check(mcpc_client_forget_lists(p_.get())); }
    /// Every resource (resources/list, all pages) as one JSON array.
    std::string list_resources(const CallOptions& o = {}) const {
        return json_call([&](mcpc_call_opts_t* c, char** out) { return mcpc_client_list_resources(p_.get(), c, out); }, o);
    }
    /// Every resource template (resources/templates/list) as one JSON array.
    std::string list_resource_templates(const CallOptions& o = {}) const {
        return json_call(
            [&](mcpc_call_opts_t* c, char** out) { return mcpc_client_list_resource_templates(p_.get(), c, out); }, o);
    }
    /// Every prompt (prompts/list, all pages) as one JSON array.
    std::string list_prompts(const CallOptions& o = {}) const {
        return json_call([&](mcpc_call_opts_t* c, char** out) { return mcpc_client_list_prompts(p_.get(), c, out); }, o);
    }
    /// Reads the resource `uri` (resources/read): its entries, blobs decoded.
    ResourceContents read_resource(std::string_view uri, const CallOptions& o = {}) const {
        mcpc_call_opts_t c = detail::c_opts(o, &o.on_progress);
        mcpc_contents_t* r = nullptr;
        detail::check(mcpc_client_read_resource(p_.get(), std::string(uri).c_str(), &c, &r));
        return detail::take_contents(r);
    }
    /// The server's skills (skills/list, all pages): one JSON array of the entries that
    /// passed their checks, as sent. No file is fetched.
    std::string list_skills(const CallOptions& o = {}) const {
        return json_call([&](mcpc_call_opts_t* c, char** out) { return mcpc_client_list_skills(p_.get(), c, out); }, o);
    }
    /// The entry of the skill whose SKILL.md is `uri` (skills/get), checked, as JSON.
    std::string get_skill(std::string_view uri, const CallOptions& o = {}) const {
        std::string u(uri);
        return json_call([&](mcpc_call_opts_t* c, char** out) { return mcpc_client_get_skill(p_.get(), u.c_str(), c, out); },
                         o);
    }
    /// Reads a file of a listed skill, handed out only once verified (size, sha256
    /// digest, a SKILL.md's frontmatter); a failure throws Error with Status::Integrity.
    ResourceContents read_skill_file(std::string_view uri, const CallOptions& o = {}) const {
        mcpc_call_opts_t c = detail::c_opts(o, &o.on_progress);
        mcpc_contents_t* r = nullptr;
        detail::check(mcpc_client_read_skill_file(p_.get(), std::string(uri).c_str(), &c, &r));
        return detail::take_contents(r);
    }
    /// The children of a directory of a listed skill (resources/directory/read) as one
    /// JSON array, where the server declared directoryRead.
    std::string read_skill_directory(std::string_view uri, const CallOptions& o = {}) const {
        std::string u(uri);
        return json_call(
            [&](mcpc_call_opts_t* c, char** out) { return mcpc_client_read_skill_directory(p_.get(), u.c_str(), c, out); },
            o);
    }
    /// Subscribes to changes of `uri` (under 2026-07-28 through one
    /// `subscriptions/listen` for the whole set, kept open and sent again when it
    /// drops; a URI the server leaves out of its acknowledgement throws
    /// MCPC_ERR_NOT_SUPPORTED); the updates reach the
    /// notification callback.
    void subscribe_resource(std::string_view uri, const CallOptions& o = {}) const {
        mcpc_call_opts_t c = detail::c_opts(o, &o.on_progress);
        detail::check(mcpc_client_subscribe_resource(p_.get(), std::string(uri).c_str(), &c));
    }
    /// Ends a subscription of subscribe_resource.
    void unsubscribe_resource(std::string_view uri, const CallOptions& o = {}) const {
        mcpc_call_opts_t c = detail::c_opts(o, &o.on_progress);
        detail::check(mcpc_client_unsubscribe_resource(p_.get(), std::string(uri).c_str(), &c));
    }
    /// Gets the prompt `name` with `arguments_json` (a JSON object of strings; empty
    /// for none): the GetPromptResult JSON as the server sent it.
    std::string get_prompt(std::string_view name, std::string_view arguments_json = {},
                           const CallOptions& o = {}) const {
        std::string n(name), args(arguments_json);
        return json_call([&](mcpc_call_opts_t* c, char** out) {
            return mcpc_client_get_prompt(p_.get(), n.c_str(), detail::or_null(args), c, out);
        }, o);
    }
    /// Completions of `argument` (typed so far: `value`) of a prompt (`kind`
    /// MCPC_COMPLETE_PROMPT, `reference` its name) or a resource template
    /// (MCPC_COMPLETE_RESOURCE, its URI template), with the arguments already chosen
    /// in `context_json` (empty for none): the CompleteResult JSON.
    std::string complete(int32_t kind, std::string_view reference, std::string_view argument,
                         std::string_view value, std::string_view context_json = {},
                         const CallOptions& o = {}) const {
        std::string r(reference), a(argument), v(value), ctx(context_json);
        return json_call([&](mcpc_call_opts_t* c, char** out) {
            return mcpc_client_complete(p_.get(), kind, r.c_str(), a.c_str(), v.c_str(), detail::or_null(ctx), c, out);
        }, o);
    }
    /// Sends the request `method` with `params_json` (a JSON object; empty for none)
    /// and returns its result JSON as the server sent it.
    std::string request(std::string_view method, std::string_view params_json = {}, const CallOptions& o = {}) const {
        std::string m(method), params(params_json);
        return json_call([&](mcpc_call_opts_t* c, char** out) {
            return mcpc_client_request(p_.get(), m.c_str(), detail::or_null(params), c, out);
        }, o);
    }
    /// MCP Apps: fetches the view `uri` (ui://) with its policy; a view of another MIME
    /// type, too large, or with a CSP source that is not an origin throws.
    UiView read_ui_view(std::string_view uri, const CallOptions& o = {}) const {
        mcpc_call_opts_t c = detail::c_opts(o, &o.on_progress);
        mcpc_ui_view_t* v = nullptr;
        detail::check(mcpc_client_read_ui_view(p_.get(), std::string(uri).c_str(), &c, &v));
        std::unique_ptr<mcpc_ui_view_t, detail::Deleter<mcpc_ui_view_t, mcpc_ui_view_free>> owned(v);
        size_t len = 0;
        const char* html = mcpc_ui_view_html(v, &len);
        int32_t border = mcpc_ui_view_prefers_border(v);
        UiView out;
        out.html.assign(html ? html : "", html ? len : 0);
        out.csp = mcpc_ui_view_csp(v);
        out.allow = mcpc_ui_view_allow(v);
        out.domain = detail::opt_str(mcpc_ui_view_domain(v));
        if (border >= 0) out.prefers_border = border == 1;
        out.meta_json = mcpc_ui_view_meta_json(v);
        return out;
    }
    /// MCP Apps: relays one JSON-RPC message of a view to this server; the reply to hand
    /// back, or nullopt for a notification passed on. A ui/ method throws (Status::NotSupported).
    std::optional<std::string> relay_ui(std::string_view message, const CallOptions& o = {}) const {
        mcpc_call_opts_t c = detail::c_opts(o, &o.on_progress);
        char* out = nullptr;
        detail::check(mcpc_client_relay_ui(p_.get(), std::string(message).c_str(), &c, &out));
        if (!out) return std::nullopt;
        return detail::take_string(out);
    }
    /// Follows a task to its end from its reference (given to a TaskFn, kept by the
    /// host, perhaps from another process): the original request's result as JSON.
    std::string resume_task(std::string_view reference, const CallOptions& o = {}) const {
        std::string r(reference);
        return json_call([&](mcpc_call_opts_t* c, char** out) { return mcpc_client_resume_task(p_.get(), r.c_str(), c, out); },
                         o);
    }
    /// Changes the server log level (empty: under 2026-07-28, none).
    void set_log_level(std::string_view level, const CallOptions& o = {}) const {
        mcpc_call_opts_t c = detail::c_opts(o, &o.on_progress);
        std::string l(level);
        detail::check(mcpc_client_set_log_level(p_.get(), detail::or_null(l), &c));
    }
    /// Tells the server the roots changed (notifications/roots/list_changed; nothing is
    /// sent under 2026-07-28, where the server asks each time). Needs a roots handler:
    /// Status::NotSupported otherwise. Does not block.
    void roots_changed() const { detail::check(mcpc_client_roots_changed(p_.get())); }
    /// Sends the notification `method` with `params_json` (empty for none).
    void notify(std::string_view method, std::string_view params_json = {}) const {
        std::string m(method), params(params_json);
        detail::check(mcpc_client_notify(p_.get(), m.c_str(), detail::or_null(params)));
    }

    /// Calls a tool with `arguments_json` (a JSON object; empty for none) and returns
    /// its result. A tool that reports failure throws ToolError carrying the result.
    Result call(std::string_view name, std::string_view arguments_json = {}, const CallOptions& o = {}) const {
        mcpc_call_opts_t c = detail::c_opts(o, &o.on_progress);
        mcpc_result_t* r = nullptr;
        std::string args(arguments_json);
        mcpc_status_t st = mcpc_client_call_tool(p_.get(), std::string(name).c_str(), detail::or_null(args), &c, &r);
        return detail::call_result(st, r);
    }

    /// As call(), without blocking: `done` runs exactly once on an mcpc thread. A
    /// progress callback in `o` is kept alive until then.
    Op call_async(std::string_view name, std::string_view arguments_json, CallDoneFn done,
                  const CallOptions& o = {}) const {
        auto* st = new CallState{std::move(done), o.on_progress, o.on_task};
        mcpc_call_opts_t c = detail::c_opts(o, &st->progress, &st->task);
        std::string args(arguments_json);
        mcpc_op_t* op = nullptr;
        mcpc_status_t s = mcpc_client_call_tool_async(p_.get(), std::string(name).c_str(),
                                                      arguments_json.empty() ? nullptr : args.c_str(), &c,
                                                      call_done, st, &op);
        return started(s, st, op);
    }

    /// As call(), returning a future: get() gives the Result or throws the mapped
    /// exception (ToolError for a tool failure).
    std::future<Result> call_future(std::string_view name, std::string_view arguments_json = {},
                                    const CallOptions& o = {}, Op* out_op = nullptr) const {
        auto promise = std::make_shared<std::promise<Result>>();
        std::future<Result> fut = promise->get_future();
        Op op = call_async(
            name, arguments_json,
            [promise](Status s, Result r, const std::string& error) {
                if (s == Status::Ok) {
                    promise->set_value(std::move(r));
                } else {
                    std::shared_ptr<const Result> res;
                    if (r) res = std::make_shared<Result>(std::move(r));
                    promise->set_exception(make_error(s, error, mcpc_last_error_rpc_code(), res));
                }
            },
            o);
        if (out_op) *out_op = std::move(op);
        return fut;
    }

    /// As list_tools(), without blocking.
    Op list_tools_async(ListDoneFn done, const CallOptions& o = {}) const {
        auto* st = new ListState{std::move(done), o.on_progress};
        mcpc_call_opts_t c = detail::c_opts(o, &st->progress);
        mcpc_op_t* op = nullptr;
        mcpc_status_t s = mcpc_client_list_tools_async(p_.get(), &c, list_done, st, &op);
        return started(s, st, op);
    }

    /// Closes the client: calls in flight fail with Status::Closed, async operations
    /// complete, the server is stopped. Idempotent; the handle stays valid.
    void close() const { detail::check(mcpc_client_close(p_.get())); }

    mcpc_client_t* get() const noexcept { return p_.get(); }
    mcpc_client_t* release() noexcept { return p_.release(); }

private:
    template <class F>
    std::string json_call(F f, const CallOptions& o) const {
        mcpc_call_opts_t c = detail::c_opts(o, &o.on_progress);
        char* out = nullptr;
        detail::check(f(&c, &out));
        return detail::take_string(out);
    }

    struct CallState {
        CallDoneFn done;
        ProgressFn progress;
        TaskFn task;
    };
    struct ListState {
        ListDoneFn done;
        ProgressFn progress;
    };

    template <class S>
    static Op started(mcpc_status_t st, S* state, mcpc_op_t* op) {
        if (st != MCPC_OK) {
            std::string message = detail::str(mcpc_last_error_message());
            int64_t rpc_code = mcpc_last_error_rpc_code();
            delete state;  // no callback will run
            detail::throw_status(static_cast<Status>(st), message, rpc_code, nullptr);
        }
        return Op(op);
    }
    static void connect_done(void* ud, mcpc_status_t st, mcpc_client_t* c, const char* err) noexcept {
        std::unique_ptr<ConnectDoneFn> f(static_cast<ConnectDoneFn*>(ud));
        (*f)(static_cast<Status>(st), Client(c), detail::str(err));
    }
    static void call_done(void* ud, mcpc_status_t st, mcpc_result_t* r, const char* err) noexcept {
        std::unique_ptr<CallState> s(static_cast<CallState*>(ud));
        s->done(static_cast<Status>(st), Result(r), detail::str(err));
    }
    static void list_done(void* ud, mcpc_status_t st, mcpc_tool_list_t* l, const char* err) noexcept {
        std::unique_ptr<ListState> s(static_cast<ListState*>(ud));
        s->done(static_cast<Status>(st), ToolList(l), detail::str(err));
    }

    std::unique_ptr<mcpc_client_t, detail::Deleter<mcpc_client_t, mcpc_client_free>> p_;
};

// ---- hosts --------------------------------------------------------------------

/// A server's state in a Host (mcpc_server_state_t).
enum class ServerState : int {
    Added = MCPC_SERVER_ADDED,
    Starting = MCPC_SERVER_STARTING,
    Ready = MCPC_SERVER_READY,
    Failed = MCPC_SERVER_FAILED,
    NeedsLogin = MCPC_SERVER_NEEDS_LOGIN,
    Disabled = MCPC_SERVER_DISABLED,
    Restarting = MCPC_SERVER_RESTARTING,
    /// Not started: its saved tools are in the catalog, and its first call starts it.
    Idle = MCPC_SERVER_IDLE,
};

/// What a Host reports to its event function (mcpc_host_event_t).
enum class HostEvent : int {
    /// A server's state changed: the server, its state, and its error as the detail.
    StateChanged = MCPC_HOST_SERVER_STATE,
    /// start() settled: the detail is the summary, JSON
    /// {"servers": {STATE: COUNT}, "tools": N, "collisions": N}.
    Settled = MCPC_HOST_SETTLED,
    /// The catalog changed (a server became ready, failed or was removed).
    CatalogChanged = MCPC_HOST_CATALOG_CHANGED,
};

/// Which of this process's environment a Host's stdio servers inherit.
enum class EnvPolicy : int32_t {
    /// All but the names holding TOKEN, SECRET, PASSWORD, KEY, CREDENTIAL or AUTH (the default).
    NoSecrets = MCPC_ENV_NO_SECRETS,
    PassAll = MCPC_ENV_PASS_ALL,
    /// Only the names given.
    Allow = MCPC_ENV_ALLOW,
};

namespace detail {
/// Why the resolver refused a value on this thread, for add_config's error: the C
/// API hears only "no value".
inline std::string& resolver_note() {
    thread_local std::string note;
    return note;
}
}  // namespace detail

/// Many MCP servers behind one handle (mcpc_host_t, docs/host.md): servers from
/// configuration files or one by one, started together, their tools in one catalog
/// under qualified names (SERVER__TOOL), each call routed by that name. Thread-safe;
/// move-only; the destructor closes every server (no call on the host may still be
/// running then).
class Host {
public:
    /// A report: the event, the server (nullopt for Settled and CatalogChanged), its
    /// state (meaningful for StateChanged only) and the detail (a failed server's
    /// error, or Settled's summary JSON). Runs one report at a time, on the thread in
    /// start() or an mcpc thread; may call tools() and status(); a blocking call from it
    /// throws WouldDeadlock. Must not throw.
    using EventFn = std::function<void(HostEvent event, std::optional<std::string_view> server, ServerState state,
                                       std::optional<std::string_view> detail)>;
    /// Gives a value a configuration file asks of the host: `kind` "input" (${input:ID}:
    /// `reference` the ID, `prompt` its description) or "secret" (${op://...}: the whole
    /// reference, no prompt); nullopt (or an exception) for none. Runs on the thread in
    /// add_config and may block to ask the user. A value of 8 KiB or more, or one holding
    /// a NUL, is refused, never cut: add_config's ConfigError then says so.
    using ResolveFn = std::function<std::optional<std::string>(std::string_view kind, std::string_view reference,
                                                               std::optional<std::string_view> prompt)>;

    /// A host with no servers, whose servers start from the library's defaults.
    Host() : Host(nullptr) {}
    /// A host whose servers start from `defaults` (copied) unless added with options of their own.
    explicit Host(const Options& defaults) : Host(&defaults) {}
    explicit Host(const Options* defaults) {
        mcpc_host_t* h = nullptr;
        detail::check(mcpc_host_new(defaults ? defaults->get() : nullptr, &h));
        p_.reset(h);
    }

    explicit operator bool() const noexcept { return p_ != nullptr; }

    /// Reports to `fn` from now on, replacing the function set before.
    Host& on_event(EventFn fn) {
        auto* f = new EventFn(std::move(fn));
        detail::check(mcpc_host_set_event_callback(p_.get(), &Host::event_cb, f, detail::delete_fn<EventFn>));
        return *this;
    }
    /// Asks `fn` for the values of configuration files added later.
    Host& resolver(ResolveFn fn) {
        auto* f = new ResolveFn(std::move(fn));
        detail::check(mcpc_host_set_resolver(p_.get(), &Host::resolve_cb, f, detail::delete_fn<ResolveFn>));
        return *this;
    }
    /// A variable files added later may name as ${NAME}, such as workspaceFolder; it
    /// comes before the environment's of that name.
    Host& variable(std::string_view name, std::string_view value) {
        detail::check(mcpc_host_set_variable(p_.get(), std::string(name).c_str(), std::string(value).c_str()));
        return *this;
    }
    /// What stdio servers started later inherit; `names` for EnvPolicy::Allow. A server's
    /// own env is always passed.
    Host& env_policy(EnvPolicy policy, const std::vector<std::string>& names = {}) {
        std::vector<const char*> n = detail::c_argv(names);
        detail::check(mcpc_host_set_env_policy(p_.get(), static_cast<int32_t>(policy), n.data(), n.size()));
        return *this;
    }
    /// How many servers start at once (at least 1; 64 by default).
    Host& concurrency(size_t n) {
        detail::check(mcpc_host_set_concurrency(p_.get(), n));
        return *this;
    }
    /// With `on`, start() leaves each server that has saved tools (load_catalog) idle,
    /// and its first call starts it.
    Host& lazy(bool on = true) {
        detail::check(mcpc_host_set_lazy(p_.get(), on ? 1 : 0));
        return *this;
    }
    /// How tools and prompts are named in the catalog: `fmt` holds {name} (the server's
    /// own name for it) once and {server} at most once, around text of [A-Za-z0-9_-] (at
    /// most 32 characters), such as "mcp__{server}__{name}"; nullopt restores the default
    /// "{server}__{name}". The catalog is made again at once. A malformed format throws
    /// InvalidArgument saying what is wrong.
    Host& name_format(std::optional<std::string_view> fmt) {
        std::string f(fmt.value_or(""));
        detail::check(mcpc_host_set_name_format(p_.get(), fmt ? f.c_str() : nullptr));
        return *this;
    }
    /// Closes every server: calls in flight and later ones throw ClosedError; no event
    /// is reported after this returns. The object stays valid until destroyed.
    void close() { detail::check(mcpc_host_close(p_.get())); }
    /// Publishes a catalog saved from an earlier run (the JSON tools() gave): each tool
    /// goes to its server while that server is not started. Returns how many were taken.
    size_t load_catalog(std::string_view saved) {
        size_t taken = 0;
        detail::check(mcpc_host_load_catalog(p_.get(), std::string(saved).c_str(), &taken));
        return taken;
    }

    /// Reads a configuration file (mcpServers, VS Code's servers with inputs, Zed's
    /// context_servers, mcp.json's root map) and adds its servers, not started: all or
    /// none. Returns how many. Throws ConfigError naming the file, the server and the field.
    size_t add_config(std::string_view path) {
        size_t added = 0;
        detail::resolver_note().clear();
        mcpc_status_t st = mcpc_host_add_config(p_.get(), std::string(path).c_str(), &added);
        if (st != MCPC_OK) {
            std::string message = detail::str(mcpc_last_error_message());
            std::string& why = detail::resolver_note();
            if (!why.empty()) message += " (" + std::exchange(why, std::string()) + ")";
            detail::throw_status(static_cast<Status>(st), message, 0, nullptr);
        }
        return added;
    }
    /// Adds a stdio server `name` running `argv`, not started; with options of its own
    /// (which replace the host's defaults), or the host's.
    void add_stdio(std::string_view name, const std::vector<std::string>& argv, const Options* opts = nullptr) {
        std::vector<const char*> a = detail::c_argv(argv);
        detail::check(mcpc_host_add_stdio(p_.get(), std::string(name).c_str(), a.data(), a.size(),
                                          opts ? opts->get() : nullptr));
    }
    void add_stdio(std::string_view name, const std::vector<std::string>& argv, const Options& opts) {
        add_stdio(name, argv, &opts);
    }
    /// Adds an HTTP server `name` at `url`, not started (the URL is checked when it starts).
    void add_http(std::string_view name, std::string_view url, const Options* opts = nullptr) {
        detail::check(mcpc_host_add_http(p_.get(), std::string(name).c_str(), std::string(url).c_str(),
                                         opts ? opts->get() : nullptr));
    }
    void add_http(std::string_view name, std::string_view url, const Options& opts) { add_http(name, url, &opts); }

    /// Starts every server added and not started yet, together, and returns once each
    /// is ready or failed. A failed server leaves the others running, unless it is
    /// `required`: then this throws its error.
    void start() { detail::check(mcpc_host_start(p_.get())); }

    /// The catalog, JSON: {"tools": [{"name": QUALIFIED, "server", "tool"}], "collisions":
    /// [{"name", "kept", "renamed", "renamedTo"}]}.
    std::string tools() const { return json(mcpc_host_tools); }
    /// Every server, JSON: [{"name", "state", "tools", "error", "stderr"}] in the order added.
    std::string status() const { return json(mcpc_host_status); }

    /// Calls the tool of this qualified name on its server (its timeout unless `o` sets
    /// one). As Client::call; UnknownNameError for a name not in the catalog.
    Result call(std::string_view qualified, std::string_view arguments_json = {}, const CallOptions& o = {}) const {
        mcpc_call_opts_t c = detail::c_opts(o, &o.on_progress);
        mcpc_result_t* r = nullptr;
        std::string args(arguments_json);
        mcpc_status_t st = mcpc_host_call_tool(p_.get(), std::string(qualified).c_str(), detail::or_null(args), &c, &r);
        return detail::call_result(st, r);
    }

    /// Every resource and resource template of the servers that declare resources, JSON:
    /// {"resources": [{"uri", "server", "resource"}], "templates": [{"server", "template"}],
    /// "collisions": [{"uri", "kept", "dropped"}]} (a URI two servers listed is read from
    /// the one added first).
    std::string resources() const { return json(mcpc_host_resources); }
    /// Reads `uri` from the server that listed it, else from the server whose template's
    /// literal start (before its first '{') is the longest start of `uri`. As
    /// Client::read_resource; UnknownNameError when no server listed it or has a template
    /// it fits.
    ResourceContents read_resource(std::string_view uri, const CallOptions& o = {}) const {
        mcpc_call_opts_t c = detail::c_opts(o, &o.on_progress);
        mcpc_contents_t* r = nullptr;
        detail::check(mcpc_host_read_resource(p_.get(), std::string(uri).c_str(), &c, &r));
        return detail::take_contents(r);
    }
    /// The prompts of the servers that declare prompts, under qualified names (named as
    /// tools are, see name_format), JSON: {"prompts": [{"name": QUALIFIED, "server",
    /// "prompt"}], "collisions": [{"name", "kept", "renamed", "renamedTo"}]}.
    std::string prompts() const { return json(mcpc_host_prompts); }
    /// Gets the prompt of this qualified name from its server (its timeout unless `o`
    /// sets one). As Client::get_prompt; UnknownNameError for a name not in the catalog.
    std::string get_prompt(std::string_view qualified, std::string_view arguments_json = {},
                           const CallOptions& o = {}) const {
        mcpc_call_opts_t c = detail::c_opts(o, &o.on_progress);
        char* out = nullptr;
        std::string q(qualified), args(arguments_json);
        detail::check(mcpc_host_get_prompt(p_.get(), q.c_str(), detail::or_null(args), &c, &out));
        return detail::take_string(out);
    }

    /// Stops the server `name` and removes it; its tools leave the catalog.
    void remove(std::string_view name) { detail::check(mcpc_host_remove(p_.get(), std::string(name).c_str())); }

    const mcpc_host_t* get() const noexcept { return p_.get(); }
    mcpc_host_t* release() noexcept { return p_.release(); }

private:
    std::string json(mcpc_status_t (*fn)(const mcpc_host_t*, char**)) const {
        char* out = nullptr;
        detail::check(fn(p_.get(), &out));
        return detail::take_string(out);
    }
    static void event_cb(void* ud, mcpc_host_event_t ev, const char* server, mcpc_server_state_t state,
                         const char* detail) noexcept {
        std::optional<std::string_view> s, d;
        if (server) s = std::string_view(server);
        if (detail) d = std::string_view(detail);
        (*static_cast<EventFn*>(ud))(static_cast<HostEvent>(ev), s, static_cast<ServerState>(state), d);
    }
    static int32_t resolve_cb(void* ud, const char* kind, const char* reference, const char* prompt, char* buf,
                              size_t len) noexcept {
        std::string var = (std::string_view(kind) == "input" ? "${input:" : "${") + std::string(reference) + "}";
        try {
            std::optional<std::string_view> p;
            if (prompt) p = std::string_view(prompt);
            std::optional<std::string> v = (*static_cast<ResolveFn*>(ud))(kind, reference, p);
            int32_t refused = detail::put_value(v, buf, len);
            if (v && refused && v->find('\0') != std::string::npos)
                note("the resolver's value for " + var + " holds a NUL");
            else if (v && refused)
                note("the resolver's value for " + var + " is " + std::to_string(v->size()) + " bytes, more than the " +
                     std::to_string(len - 1) + " that fit");
            return refused;
        } catch (...) {
            note("the resolver threw for " + var);
            return 1;
        }
    }
    static void note(const std::string& why) {
        std::string& n = detail::resolver_note();
        n += (n.empty() ? "" : "; ") + why;
    }

    std::unique_ptr<mcpc_host_t, detail::Deleter<mcpc_host_t, mcpc_host_free>> p_;
};

}  // namespace mcpc

#endif  // MCPC_HPP
