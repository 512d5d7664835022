// Tests of bindings/cpp/mcpc.hpp against the demo server (stdio, the stream seam,
// the request/response seam) and the loopback HTTP fixture. Run from the repository
// root. Ends with "N passed, N failed"; exits nonzero when any test failed.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "mcpc.hpp"

extern char** environ;

using namespace std::chrono_literals;

namespace {

int g_passed = 0;
int g_failed = 0;
int g_checks_failed = 0;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            std::fprintf(stderr, "  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            g_checks_failed++;                                                        \
        }                                                                             \
    } while (0)

#define CHECK_EQ(a, b)                                                                     \
    do {                                                                                   \
        auto va_ = (a);                                                                    \
        auto vb_ = (b);                                                                    \
        if (!(va_ == vb_)) {                                                               \
            std::ostringstream os_;                                                        \
            os_ << "  " << __FILE__ << ":" << __LINE__ << ": CHECK_EQ failed: " #a " == " #b \
                << "\n    left:  " << va_ << "\n    right: " << vb_ << "\n";               \
            std::cerr << os_.str();                                                        \
            g_checks_failed++;                                                             \
        }                                                                                  \
    } while (0)

// Runs `body`; an exception or a failed CHECK fails the test.
void run(const char* name, const std::function<void()>& body) {
    int before = g_checks_failed;
    bool threw = false;
    auto t0 = std::chrono::steady_clock::now();
    try {
        body();
    } catch (const mcpc::Error& e) {
        std::fprintf(stderr, "  uncaught mcpc::Error %s: %s\n", mcpc::status_name(e.status()).c_str(), e.what());
        threw = true;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "  uncaught exception: %s\n", e.what());
        threw = true;
    }
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    if (threw || g_checks_failed != before) {
        std::printf("FAIL %s (%lld ms)\n", name, static_cast<long long>(ms));
        g_failed++;
    } else {
        std::printf("ok   %s (%lld ms)\n", name, static_cast<long long>(ms));
        g_passed++;
    }
    std::fflush(stdout);
}

// Expects `body` to throw exception type E with status `st`.
template <class E>
void expect_throw(mcpc::Status st, const std::function<void()>& body, const std::function<void(const E&)>& more = {}) {
    try {
        body();
        std::fprintf(stderr, "  expected %s, nothing was thrown\n", mcpc::status_name(st).c_str());
        g_checks_failed++;
    } catch (const E& e) {
        if (e.status() != st) {
            std::fprintf(stderr, "  expected %s, got %s: %s\n", mcpc::status_name(st).c_str(),
                         mcpc::status_name(e.status()).c_str(), e.what());
            g_checks_failed++;
        }
        if (more) more(e);
    } catch (const mcpc::Error& e) {
        std::fprintf(stderr, "  expected another exception type for %s, got %s: %s\n",
                     mcpc::status_name(st).c_str(), mcpc::status_name(e.status()).c_str(), e.what());
        g_checks_failed++;
    }
}

// Expects `body` to throw an mcpc::Error (of any type) with status `st`.
void expect_status(mcpc::Status st, const std::function<void()>& body, std::string_view what = {}) {
    try {
        body();
        std::fprintf(stderr, "  expected %s, nothing was thrown\n", mcpc::status_name(st).c_str());
        g_checks_failed++;
    } catch (const mcpc::Error& e) {
        if (e.status() != st) {
            std::fprintf(stderr, "  expected %s, got %s: %s\n", mcpc::status_name(st).c_str(),
                         mcpc::status_name(e.status()).c_str(), e.what());
            g_checks_failed++;
        }
        if (std::string(e.what()).find(what) == std::string::npos) {
            std::fprintf(stderr, "  %s: does not hold %s\n", e.what(), std::string(what).c_str());
            g_checks_failed++;
        }
    }
}

std::string python() {
    const char* p = std::getenv("MCPC_PYTHON");
    return p && *p ? p : "python3";
}

std::vector<std::string> demo(std::vector<std::string> extra = {}) {
    std::vector<std::string> argv{python(), "demo/server.py"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
}

// A child process with pipes to its stdin and from its stdout.
struct Child {
    pid_t pid = -1;
    int to = -1;     // its stdin
    FILE* from = nullptr;  // its stdout

    explicit Child(const std::vector<std::string>& argv) {
        int in[2], out[2];
        if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, in[0], 0);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        std::vector<char*> a;
        for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
        a.push_back(nullptr);
        int rc = posix_spawnp(&pid, a[0], &fa, nullptr, a.data(), environ);
        posix_spawn_file_actions_destroy(&fa);
        close(in[0]);
        close(out[1]);
        if (rc != 0) throw std::runtime_error("posix_spawnp failed");
        to = in[1];
        from = fdopen(out[0], "r");
    }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    bool write_line(std::string_view s) const {
        std::string line(s);
        line += '\n';
        return write(to, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    }
    // One line without its end, or false at EOF.
    bool read_line(std::string& out) const {
        char* buf = nullptr;
        size_t cap = 0;
        ssize_t n = getline(&buf, &cap, from);
        if (n > 0) {
            out.assign(buf, static_cast<size_t>(n));
            if (!out.empty() && out.back() == '\n') out.pop_back();
        }
        std::free(buf);
        return n > 0;
    }
    void close_stdin() {
        if (to >= 0) close(to);
        to = -1;
    }
    int wait() {
        close_stdin();
        int status = 0;
        if (pid > 0) waitpid(pid, &status, 0);
        pid = -1;
        if (from) std::fclose(from);
        from = nullptr;
        return status;
    }
    ~Child() { wait(); }
};

// A loopback fixture (the HTTP one unless `script` names another): prints "PORT n",
// exits when its stdin closes.
struct Fixture {
    std::string log;
    Child child;
    int port = 0;
    static std::vector<std::string> argv(const std::string& log, std::vector<std::string> extra,
                                         const std::string& script) {
        std::vector<std::string> a{python(), script, "--log", log};
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
    explicit Fixture(std::vector<std::string> extra = {}, const std::string& script = "tests/fixtures/http_server.py")
        : log("/tmp/mcpc-cpp-http-" + std::to_string(getpid()) + "-" + std::to_string(counter()) + ".log"),
          child(argv(log, std::move(extra), script)) {
        std::string line;
        if (!child.read_line(line) || std::sscanf(line.c_str(), "PORT %d", &port) != 1)
            throw std::runtime_error("the HTTP fixture did not start");
    }
    ~Fixture() {
        child.wait();
        unlink(log.c_str());
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port) + "/mcp"; }
    std::string log_text() const {
        std::ifstream f(log);
        std::stringstream ss;
        ss << f.rdbuf();
        return ss.str();
    }
    static int counter() {
        static int n = 0;
        return ++n;
    }
};

// Waits for a count to reach a value (completions arrive on mcpc threads).
struct Latch {
    std::mutex m;
    std::condition_variable cv;
    int left;
    explicit Latch(int n) : left(n) {}
    void done() {
        std::lock_guard<std::mutex> g(m);
        left--;
        cv.notify_all();
    }
    bool wait(std::chrono::milliseconds limit = 10s) {
        std::unique_lock<std::mutex> g(m);
        return cv.wait_for(g, limit, [&] { return left <= 0; });
    }
};

bool contains(const std::string& hay, std::string_view needle) { return hay.find(needle) != std::string::npos; }

// A protocol revision the library speaks (which one depends on the server and the
// library's negotiation).
bool known_version(const std::string& v) {
    for (const char* k : {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"})
        if (v == k) return true;
    std::fprintf(stderr, "  unexpected protocol version '%s'\n", v.c_str());
    return false;
}

// The Location of a GET to an http://127.0.0.1:PORT/... URL, as a browser sees it
// before following the redirect; "" when there is none.
std::string get_location(std::string_view url) {
    const std::string_view prefix = "http://127.0.0.1:";
    if (url.substr(0, prefix.size()) != prefix) return "";
    std::string_view rest = url.substr(prefix.size());
    size_t slash = rest.find('/');
    int port = std::atoi(std::string(rest.substr(0, slash)).c_str());
    std::string target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string reply;
    if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
        std::string req = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
        if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
            char buf[4096];
            ssize_t n;
            while ((n = recv(fd, buf, sizeof buf, 0)) > 0) reply.append(buf, static_cast<size_t>(n));
        }
    }
    if (fd >= 0) close(fd);
    size_t at = reply.find("\r\nLocation: ");
    if (at == std::string::npos) return "";
    at += 12;
    return reply.substr(at, reply.find("\r\n", at) - at);
}

// An OAuth store in memory.
struct MemoryStore : mcpc::OAuthStore {
    std::mutex m;
    std::map<std::string, std::string> items;
    std::optional<std::string> load(std::string_view key) override {
        std::lock_guard<std::mutex> g(m);
        auto it = items.find(std::string(key));
        if (it == items.end()) return std::nullopt;
        return it->second;
    }
    void save(std::string_view key, std::optional<std::string_view> value) override {
        std::lock_guard<std::mutex> g(m);
        if (value)
            items[std::string(key)] = std::string(*value);
        else
            items.erase(std::string(key));
    }
};

// The fixture's redirect target is never contacted: the test plays the browser.
const char* const kRedirect = "http://127.0.0.1:9/callback";

// Makes a P-256 key pair with openssl: BASE.pem (private) and BASE.pub; the
// contents of the file BASE + `ext`.
std::string p256_key(const std::string& base, const char* ext) {
    std::string cmd = "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out " + base +
                      ".pem 2>/dev/null && openssl pkey -in " + base + ".pem -pubout -out " + base + ".pub";
    CHECK_EQ(std::system(cmd.c_str()), 0);
    std::ifstream f(base + ext);
    std::stringstream text;
    text << f.rdbuf();
    return text.str();
}

size_t count(const std::string& hay, std::string_view needle) {
    size_t n = 0;
    for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) n++;
    return n;
}

// tests/fixtures/input_server.py, whose tools ask the client for input.
std::vector<std::string> input_server(const char* era) {
    return {python(), "tests/fixtures/input_server.py", std::string("--era=") + era};
}

// What input handlers saw, read by the test thread once `finished` handlers returned.
struct InputLog {
    std::mutex m;
    std::condition_variable cv;
    int finished = 0;
    mcpc::InputKind kind = mcpc::InputKind::None;
    std::string method, server, params;
    std::optional<std::string> host_server, message, schema, url;
    mcpc::Status bad = mcpc::Status::Ok, again = mcpc::Status::Ok;

    void seen(const mcpc::InputRequest& r) {
        std::lock_guard<std::mutex> g(m);
        kind = r.kind();
        method = r.method();
        server = r.server();
        params = r.params_json();
        host_server = r.host_server();
        message = r.message();
        schema = r.schema_json();
        url = r.url();
    }
    void done(mcpc::Status b, mcpc::Status a) {
        std::lock_guard<std::mutex> g(m);
        bad = b;
        again = a;
        finished++;
        cv.notify_all();
    }
    void wait(int n) {
        std::unique_lock<std::mutex> g(m);
        cv.wait(g, [&] { return finished >= n; });
    }
};

mcpc::Options quick() {
    mcpc::Options o;
    o.timeout(10s).close_grace(2000ms, 2000ms);
    return o;
}

// Writes `text` to a file named after this process and `name`; returns its path.
std::string write_temp(const std::string& name, const std::string& text) {
    std::string path = "/tmp/mcpc-cpp-" + std::to_string(getpid()) + "-" + name;
    std::ofstream(path) << text;
    return path;
}

// A configuration file's entry for the demo server with `args` after its path.
std::string demo_entry(const std::string& args = "", const std::string& more = "") {
    return R"({"command": ")" + python() + R"(", "args": ["demo/server.py")" + args + "]" + more + "}";
}

}  // namespace

int main() {
    run("version equals the header's macros", [] {
        CHECK_EQ(mcpc::version(), std::string(MCPC_VERSION));
        std::string expect = std::to_string(MCPC_VERSION_MAJOR) + "." + std::to_string(MCPC_VERSION_MINOR) + "." +
                             std::to_string(MCPC_VERSION_PATCH);
        CHECK_EQ(mcpc::version(), expect);
        CHECK_EQ(mcpc::status_name(mcpc::Status::Timeout), std::string("MCPC_ERR_TIMEOUT"));
    });

    run("skills: listed, read only once verified", [] {
        mcpc::Client c = mcpc::Client::stdio(demo(), quick());
        CHECK(contains(c.list_skills(), "\"skill://demo-greeting/SKILL.md\""));
        mcpc::ResourceContents r = c.read_skill_file("skill://demo-greeting/references/names.md");
        CHECK(r.contents.size() == 1 && r.contents[0].text && *r.contents[0].text == "Ada\nGrace\n");
        bool refused = false;
        try {
            c.read_skill_file("skill://demo-greeting/scripts/run.sh");
        } catch (const mcpc::Error& e) {
            refused = e.status() == mcpc::Status::Integrity;
        }
        CHECK(refused);
    });

    run("tasks: followed, detached and resumed", [] {
        for (const char* era : {"--era=legacy", "--era=modern"}) {
            mcpc::Options o = quick();
            o.extension("io.modelcontextprotocol/tasks");
            mcpc::Client c = mcpc::Client::stdio(demo({"--tasks", era}), o);
            std::string statuses;
            mcpc::CallOptions co;
            co.with_task(mcpc::TaskMode::Prefer).with_on_task(
                [&](std::string_view status, std::optional<std::string_view>, std::string_view) {
                    statuses += std::string(status) + ",";
                    return false;
                });
            mcpc::Result r = c.call("task_report", "{\"topic\":\"cpp\",\"ms\":100}", co);
            CHECK_EQ(r.text(), std::string("report on cpp"));
            CHECK_EQ(statuses, std::string("working,completed,"));
            std::string reference;
            mcpc::CallOptions detach;
            detach.with_task(mcpc::TaskMode::Prefer).with_on_task(
                [&](std::string_view, std::optional<std::string_view>, std::string_view ref) {
                    reference = std::string(ref);
                    return true;
                });
            bool detached = false;
            try {
                c.call("task_report", "{\"topic\":\"later\",\"ms\":100}", detach);
            } catch (const mcpc::Error& e) {
                detached = e.status() == mcpc::Status::TaskDetached;
            }
            CHECK(detached);
            CHECK(contains(c.resume_task(reference), "report on later"));
        }
    });

    run("MCP Apps: views, visibility, a view's policy", [] {
        mcpc::Options o = quick();
        o.extension("io.modelcontextprotocol/ui", "{\"mimeTypes\":[\"text/html;profile=mcp-app\"]}");
        mcpc::Client c = mcpc::Client::stdio(demo({"--apps"}), o);
        mcpc::ToolList tools = c.list_tools();
        bool seen = false;
        for (size_t i = 0; i < tools.size(); i++) {
            if (tools.name(i) == "clock_tick") {
                seen = true;
                CHECK(tools.ui_uri(i) == std::optional<std::string>("ui://demo/clock.html"));
                CHECK_EQ(tools.ui_visibility(i), uint32_t{MCPC_UI_APP});
            }
            if (tools.name(i) == "echo") CHECK(!tools.ui_uri(i));
        }
        CHECK(seen);
        mcpc::UiView v = c.read_ui_view("ui://demo/clock.html");
        CHECK(contains(v.html, "Demo clock"));
        CHECK(contains(v.csp, "connect-src 'self' wss://live.example.com"));
        CHECK_EQ(v.allow, std::string("clipboard-write"));
        CHECK(v.prefers_border == std::optional<bool>(true));
        std::optional<std::string> reply =
            c.relay_ui("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"clock_tick\"}}");
        CHECK(reply && contains(*reply, "12:01"));
        bool refused = false;
        try {
            c.read_ui_view("ui://demo/inject.html");
        } catch (const mcpc::Error& e) {
            refused = e.status() == mcpc::Status::Protocol;
        }
        CHECK(refused);
    });

    run("extensions: declared, and the server's as sent", [] {
        mcpc::Options o = quick();
        o.extension("io.modelcontextprotocol/tasks").extension("dev.example/x", "{\"a\":[3]}");
        bool refused = false;
        try {
            o.extension("dev.example/y", "[1]");
        } catch (const mcpc::Error& e) {
            refused = e.status() == mcpc::Status::InvalidArg;
        }
        CHECK(refused);
        mcpc::Client c = mcpc::Client::stdio(demo(), o);
        std::optional<std::string> ext = c.server_extensions();
        CHECK(ext.has_value());
        CHECK(ext && contains(*ext, "\"dev.mcpc/demo\""));
        CHECK(ext && contains(c.server_info(), *ext));
    });

    run("stdio: info, tools with schemas, structured and text results", [] {
        mcpc::Client c = mcpc::Client::stdio(demo(), quick());
        CHECK(static_cast<bool>(c));
        CHECK(known_version(c.protocol_version()));
        CHECK(contains(c.server_info(), "\"mcpc-demo\""));
        mcpc::ToolList tools = c.list_tools();
        CHECK_EQ(tools.size(), size_t{25});
        CHECK_EQ(tools.name(0), std::string("echo"));
        CHECK_EQ(tools.name(24), std::string("item_19"));
        CHECK(contains(tools.json(1), "\"outputSchema\""));
        CHECK(contains(tools.json(1), "\"inputSchema\""));
        CHECK_EQ(tools.names().size(), size_t{25});
        CHECK_EQ(tools.to_json().front(), '[');
        bool threw = false;
        try {
            (void)tools.name(25);
        } catch (const std::out_of_range&) {
            threw = true;
        }
        CHECK(threw);

        mcpc::Result add = c.call("add", R"({"a":2,"b":3})");
        CHECK_EQ(add.structured_json().value_or("none"), std::string(R"({"sum":5})"));
        CHECK_EQ(add.text(), std::string(R"({"sum":5})"));
        CHECK(!add.is_error());
        CHECK(contains(add.json(), "\"structuredContent\""));

        mcpc::Result echo = c.call("echo", R"({"text":"héllo"})");
        CHECK_EQ(echo.text(), std::string("héllo"));
        CHECK(!echo.structured_json().has_value());

        mcpc::Result multi = c.call("multi");
        CHECK_EQ(multi.text_count(), size_t{2});
        CHECK_EQ(multi.text_at(1), std::string("two"));
        CHECK_EQ(multi.text(), std::string("one\ntwo"));
        CHECK(contains(multi.json(), "\"image\""));
    });

    run("resources, prompts, completions and requests by method", [] {
        mcpc::Client c = mcpc::Client::stdio({python(), "tests/fixtures/input_server.py", "--era=modern"}, quick());
        CHECK(contains(c.list_resources(), "\"res://2\""));
        expect_throw<mcpc::ProtocolError>(mcpc::Status::CursorRepeated, [&] { c.list_resource_templates(); });
        expect_throw<mcpc::ProtocolError>(mcpc::Status::DuplicateTool, [&] { c.list_prompts(); });
        mcpc::ResourceContents two = c.read_resource("res://two");
        CHECK_EQ(two.contents.size(), size_t{2});
        CHECK(two.contents[0].blob.has_value() && two.contents[0].blob->size() == 256 && (*two.contents[0].blob)[255] == 255);
        CHECK(!two.contents[0].text.has_value());
        CHECK_EQ(two.contents[1].text.value_or(""), std::string("second"));
        CHECK_EQ(c.read_resource("res://1").contents[0].meta_json.value_or(""), std::string(R"({"k":1})"));
        expect_throw<mcpc::ProtocolError>(mcpc::Status::Protocol, [&] { c.read_resource("res://notb64"); });
        CHECK(contains(c.get_prompt("greet", R"({"who":"ada"})"), "hello ada"));
        CHECK(contains(c.complete(MCPC_COMPLETE_PROMPT, "greet", "who", "al"), R"(["alice", "albert"])"));
        CHECK(contains(c.request("tools/list"), "\"caps\""));
        c.notify("notifications/custom");
        CHECK(contains(c.call("seen").text(), "notifications/custom"));
        {
            mcpc::Options v = quick();
            v.validate_output();
            mcpc::Client checked =
                mcpc::Client::stdio({python(), "tests/fixtures/input_server.py", "--era=legacy"}, v);
            (void)checked.list_tools();
            expect_throw<mcpc::OutputSchemaError>(mcpc::Status::OutputSchema, [&] { checked.call("misshaped"); },
                                                  [](const mcpc::OutputSchemaError& e) {
                                                      CHECK(contains(e.result().json(), "\"one\""));
                                                  });
            CHECK_EQ(checked.call("shaped").text(), std::string("shaped"));
        }
        c.set_log_level("error");
        CHECK_EQ(c.call("log").text(), std::string("logged 1"));
        expect_throw<mcpc::InvalidArgument>(mcpc::Status::InvalidArg, [&] { c.set_log_level("loud"); });
    });

    run("proxy settings are checked", [] {
        mcpc::Options o;
        o.proxy("http://127.0.0.1:3128").no_proxy("localhost, 10.0.0.0/8").proxy_credentials("u", "pw").proxy("none");
        bool refused = false;
        try {
            o.proxy("socks5://127.0.0.1:1");
        } catch (const mcpc::Error& e) {
            refused = e.status() == mcpc::Status::NotSupported;
        }
        CHECK(refused);
        expect_throw<mcpc::InvalidArgument>(mcpc::Status::InvalidArg, [&] { o.proxy_credentials("a:b", "c"); });
    });

    run("errors map to exception types", [] {
        mcpc::Client c = mcpc::Client::stdio(demo(), quick());
        expect_throw<mcpc::ToolError>(mcpc::Status::Tool, [&] { c.call("fail", R"({"message":"boom"})"); },
                                      [](const mcpc::ToolError& e) {
                                          CHECK(e.result().is_error());
                                          CHECK_EQ(e.result().text(), std::string("boom"));
                                      });
        expect_throw<mcpc::RpcError>(mcpc::Status::Rpc, [&] { c.call("nope", "{}"); },
                                     [](const mcpc::RpcError& e) {
                                         CHECK_EQ(e.rpc_code(), int64_t{-32602});
                                         CHECK(contains(e.what(), "Unknown tool"));
                                     });
        expect_throw<mcpc::InvalidArgument>(mcpc::Status::InvalidArg, [&] { c.call("echo", "[1,2]"); });
        expect_throw<mcpc::InvalidArgument>(mcpc::Status::InvalidArg, [&] { c.call("echo", "{not json"); });
        expect_throw<mcpc::InvalidArgument>(mcpc::Status::InvalidArg, [] { mcpc::Options().timeout(0ms); });
        expect_throw<mcpc::InvalidArgument>(mcpc::Status::InvalidArg,
                                            [] { mcpc::Options().protocol_version("1999-01-01"); });
        // Every exception is an mcpc::Error and a std::runtime_error.
        try {
            c.call("nope", "{}");
        } catch (const std::runtime_error& e) {
            CHECK(dynamic_cast<const mcpc::Error*>(&e) != nullptr);
        }
        // The client is still usable after each error.
        CHECK_EQ(c.call("echo", R"({"text":"still here"})").text(), std::string("still here"));
    });

    run("connect failures: spawn, handshake, insecure URL", [] {
        expect_throw<mcpc::TransportError>(mcpc::Status::Spawn,
                                           [] { mcpc::Client::stdio({"/nonexistent/mcpc-server"}, quick()); });
        expect_throw<mcpc::HandshakeError>(mcpc::Status::Handshake,
                                           [] { mcpc::Client::stdio(demo({"--fault", "init-error"}), quick()); });
        expect_throw<mcpc::InvalidArgument>(mcpc::Status::InsecureUrl,
                                            [] { mcpc::Client::http("http://example.com/mcp"); });
        expect_throw<mcpc::InvalidArgument>(mcpc::Status::InvalidArg, [] { mcpc::Client::stdio({}); });
    });

    run("timeout, Cancel from another thread, progress", [] {
        mcpc::Client c = mcpc::Client::stdio(demo(), quick());
        auto t0 = std::chrono::steady_clock::now();
        expect_throw<mcpc::TimeoutError>(mcpc::Status::Timeout, [&] {
            c.call("slow", R"({"ms":10000})", mcpc::CallOptions().with_timeout(200ms));
        });
        CHECK(std::chrono::steady_clock::now() - t0 < 3s);

        mcpc::Cancel cancel;
        CHECK(!cancel.triggered());
        std::thread canceller([&] {
            std::this_thread::sleep_for(100ms);
            cancel.trigger();
        });
        expect_throw<mcpc::CancelledError>(mcpc::Status::Cancelled, [&] {
            c.call("slow", R"({"ms":10000})", mcpc::CallOptions().with_cancel(cancel));
        });
        canceller.join();
        CHECK(cancel.triggered());

        std::atomic<int> calls{0};
        std::atomic<double> last_total{0};
        mcpc::Result r = c.call("slow", R"({"ms":200})",
                                mcpc::CallOptions().with_progress([&](double, std::optional<double> total,
                                                                      std::optional<std::string_view>) {
                                    calls++;
                                    last_total = total.value_or(-1);
                                }));
        CHECK_EQ(calls.load(), 4);
        CHECK_EQ(last_total.load(), 4.0);
        CHECK(contains(r.structured_json().value_or(""), "\"slept_ms\":200"));
    });

    run("async: call_async, op cancel, call_future, list_tools_async", [] {
        mcpc::Client c = mcpc::Client::stdio(demo(), quick());
        Latch latch(2);
        std::mutex m;
        std::string echo_text, slow_status;
        mcpc::Op echo = c.call_async("echo", R"({"text":"async hi"})",
                                     [&](mcpc::Status s, mcpc::Result r, const std::string& err) {
                                         std::lock_guard<std::mutex> g(m);
                                         echo_text = s == mcpc::Status::Ok ? r.text() : "error: " + err;
                                         latch.done();
                                     });
        mcpc::Op slow = c.call_async("slow", R"({"ms":60000})",
                                     [&](mcpc::Status s, mcpc::Result r, const std::string& err) {
                                         std::lock_guard<std::mutex> g(m);
                                         slow_status = mcpc::status_name(s);
                                         CHECK(!r);
                                         CHECK(!err.empty());
                                         latch.done();
                                     });
        slow.cancel();
        slow.cancel();  // idempotent
        CHECK(latch.wait());
        CHECK(slow.finished());
        CHECK_EQ(echo_text, std::string("async hi"));
        CHECK_EQ(slow_status, std::string("MCPC_ERR_CANCELLED"));

        std::future<mcpc::Result> f = c.call_future("add", R"({"a":40,"b":2})");
        CHECK_EQ(f.get().structured_json().value_or(""), std::string(R"({"sum":42})"));
        std::future<mcpc::Result> bad = c.call_future("fail", R"({"message":"async boom"})");
        expect_throw<mcpc::ToolError>(mcpc::Status::Tool, [&] { bad.get(); },
                                      [](const mcpc::ToolError& e) {
                                          CHECK_EQ(e.result().text(), std::string("async boom"));
                                      });
        std::future<mcpc::Result> rpc = c.call_future("nope", "{}");
        expect_throw<mcpc::RpcError>(mcpc::Status::Rpc, [&] { rpc.get(); },
                                     [](const mcpc::RpcError& e) { CHECK_EQ(e.rpc_code(), int64_t{-32602}); });

        mcpc::Op op;
        std::future<mcpc::Result> cancelled = c.call_future("slow", R"({"ms":60000})", {}, &op);
        op.cancel();
        expect_throw<mcpc::CancelledError>(mcpc::Status::Cancelled, [&] { cancelled.get(); });

        Latch listed(1);
        size_t n = 0;
        mcpc::Op l = c.list_tools_async([&](mcpc::Status s, mcpc::ToolList t, const std::string&) {
            if (s == mcpc::Status::Ok) n = t.size();
            listed.done();
        });
        CHECK(listed.wait());
        CHECK_EQ(n, size_t{25});

        // Errors found at once throw, and no callback runs.
        bool ran = false;
        expect_throw<mcpc::InvalidArgument>(mcpc::Status::InvalidArg, [&] {
            c.call_async("echo", "[]", [&](mcpc::Status, mcpc::Result, const std::string&) { ran = true; });
        });
        CHECK(!ran);
    });

    run("async: connect and close completes what is in flight", [] {
        Latch connected(1);
        mcpc::Client client;
        mcpc::Options opts = quick();
        mcpc::Op op = mcpc::Client::stdio_async(demo(), &opts, [&](mcpc::Status s, mcpc::Client c, const std::string&) {
            if (s == mcpc::Status::Ok) client = std::move(c);
            connected.done();
        });
        CHECK(connected.wait());
        CHECK(static_cast<bool>(client));
        Latch done(1);
        mcpc::Status status = mcpc::Status::Ok;
        mcpc::Op slow = client.call_async("slow", R"({"ms":60000})", [&](mcpc::Status s, mcpc::Result, const std::string&) {
            status = s;
            done.done();
        });
        client.close();
        CHECK(done.wait(0ms));  // completed before close returned
        CHECK_EQ(mcpc::status_name(status), std::string("MCPC_ERR_CLOSED"));
        expect_throw<mcpc::ClosedError>(mcpc::Status::Closed, [&] { client.call("echo", R"({"text":"x"})"); });
        expect_throw<mcpc::ClosedError>(mcpc::Status::Closed, [&] {
            client.call_async("echo", R"({"text":"x"})", [](mcpc::Status, mcpc::Result, const std::string&) {});
        });
        client.close();  // idempotent
    });

    run("move-only handles", [] {
        mcpc::Client a = mcpc::Client::stdio(demo(), quick());
        mcpc::Client b = std::move(a);
        CHECK(!a);  // NOLINT(bugprone-use-after-move): a moved-from handle is empty
        CHECK(static_cast<bool>(b));
        CHECK_EQ(b.call("echo", R"({"text":"moved"})").text(), std::string("moved"));
        mcpc::Result r = b.call("add", R"({"a":1,"b":1})");
        mcpc::Result r2 = std::move(r);
        CHECK(!r);
        CHECK_EQ(r2.text(), std::string(R"({"sum":2})"));
        static_assert(!std::is_copy_constructible_v<mcpc::Client>);
        static_assert(!std::is_copy_constructible_v<mcpc::Result>);
        static_assert(!std::is_copy_constructible_v<mcpc::ToolList>);
        static_assert(!std::is_copy_constructible_v<mcpc::Options>);
        static_assert(!std::is_copy_constructible_v<mcpc::Cancel>);
        static_assert(!std::is_copy_constructible_v<mcpc::Op>);
        static_assert(!std::is_copy_constructible_v<mcpc::Transport>);
        static_assert(!std::is_copy_constructible_v<mcpc::Exchange>);
        static_assert(std::is_nothrow_move_constructible_v<mcpc::Client>);
        static_assert(std::is_copy_constructible_v<mcpc::ToolError>);
    });

    run("stderr and notification callbacks, env", [] {
        std::atomic<int> lines{0};
        std::mutex m;
        std::vector<std::string> methods;
        std::string params;
        mcpc::Options o = quick();
        o.on_stderr([&](std::string_view line) {
             if (line.substr(0, 12) == "stderr flood") lines++;
         })
            .on_notification([&](std::string_view method, std::optional<std::string_view> p) {
                std::lock_guard<std::mutex> g(m);
                methods.emplace_back(method);
                if (method == "notifications/message" && p) params = std::string(*p);
            })
            .env("MCPC_DEMO_FAULT", "stderr-flood");
        {
            mcpc::Client c = mcpc::Client::stdio(demo(), o);
            c.call("echo", R"({"text":"x"})");
        }
        CHECK_EQ(lines.load(), 1024 * 1024 / 64);
        mcpc::Options n = quick();
        n.on_notification([&](std::string_view method, std::optional<std::string_view> p) {
            std::lock_guard<std::mutex> g(m);
            methods.emplace_back(method);
            if (method == "notifications/message" && p) params = std::string(*p);
        });
        mcpc::Client c = mcpc::Client::stdio(demo({"--fault", "notify-during-call"}), n);
        c.call("echo", R"({"text":"x"})");
        c.close();
        std::lock_guard<std::mutex> g(m);
        CHECK_EQ(methods.size(), size_t{2});
        CHECK(contains(params, "\"hello\""));
    });

    run("seam, stream form: pipes to a server the host started", [] {
        Child server(demo());
        std::atomic<bool> closed{false};
        mcpc::Transport t = mcpc::Transport::stream(
            [&](std::string_view msg) {
                if (!server.write_line(msg)) throw std::runtime_error("write failed");
            },
            [&] {
                closed = true;
                server.close_stdin();
            });
        std::thread reader([&] {
            std::string line;
            while (server.read_line(line)) {
                if (t.try_deliver(line) == mcpc::Status::Closed) break;
            }
            t.end("server closed the channel");
        });
        {
            mcpc::Client c = mcpc::Client::connect(t, quick());
            CHECK_EQ(c.call("echo", R"({"text":"over the seam"})").text(), std::string("over the seam"));
            CHECK_EQ(c.list_tools().size(), size_t{25});
            expect_throw<mcpc::ToolError>(mcpc::Status::Tool, [&] { c.call("fail"); });
            expect_throw<mcpc::TimeoutError>(mcpc::Status::Timeout, [&] {
                c.call("slow", R"({"ms":5000})", mcpc::CallOptions().with_timeout(100ms));
            });
        }
        CHECK(closed.load());
        reader.join();
        server.wait();
    });

    run("seam, stream form: a failing send fails its request only", [] {
        std::atomic<bool> fail_next{false};
        Child server(demo());
        mcpc::Transport t = mcpc::Transport::stream(
            [&](std::string_view msg) {
                if (contains(std::string(msg), "\"tools/call\"") && fail_next.exchange(false))
                    throw std::runtime_error("refused");
                server.write_line(msg);
            },
            [&] { server.close_stdin(); });
        std::thread reader([&] {
            std::string line;
            while (server.read_line(line)) t.try_deliver(line);
        });
        {
            mcpc::Client c = mcpc::Client::connect(t);
            fail_next = true;
            expect_throw<mcpc::TransportError>(mcpc::Status::Transport, [&] { c.call("echo", R"({"text":"a"})"); });
            CHECK_EQ(c.call("echo", R"({"text":"b"})").text(), std::string("b"));
        }
        reader.join();
        server.wait();
    });

    run("seam, request/response form", [] {
        // Each request is one exchange: write it, read lines up to its response.
        Child server(demo());
        std::atomic<int> exchanges{0};
        mcpc::Transport t = mcpc::Transport::request(
            [&](mcpc::Exchange ex, std::string_view msg) {
                exchanges++;
                server.write_line(msg);
                if (!ex.expects_response()) {
                    ex.complete();
                    return;
                }
                std::string body, line;
                while (server.read_line(line)) {
                    body += line + "\n";
                    if (!contains(line, "\"method\"")) break;  // the response
                }
                ex.complete(body);
            },
            [&] { server.close_stdin(); });
        {
            mcpc::Client c = mcpc::Client::connect(t, quick());
            CHECK_EQ(c.call("add", R"({"a":1,"b":2})").structured_json().value_or(""), std::string(R"({"sum":3})"));
            std::atomic<int> progress{0};
            c.call("slow", R"({"ms":100})",
                   mcpc::CallOptions().with_progress([&](double, std::optional<double>, std::optional<std::string_view>) {
                       progress++;
                   }));
            CHECK_EQ(progress.load(), 4);
            CHECK_EQ(c.list_tools().size(), size_t{25});
        }
        CHECK(exchanges.load() >= 9);  // initialize, initialized, add, slow, 5 pages
        server.wait();
    });

    run("seam, request/response form: a dropped exchange fails its request", [] {
        Child server(demo());
        std::atomic<bool> drop{false};
        mcpc::Transport t = mcpc::Transport::request(
            [&](mcpc::Exchange ex, std::string_view msg) {
                // ex destroyed untouched: failed. (Only a call: notifications/initialized
                // may still be on its way after connect returned.)
                if (contains(std::string(msg), "\"tools/call\"") && drop.exchange(false)) return;
                server.write_line(msg);
                if (!ex.expects_response()) {
                    ex.complete();
                    return;
                }
                std::string line;
                server.read_line(line);
                ex.complete(line);
            },
            [&] { server.close_stdin(); });
        mcpc::Client c = mcpc::Client::connect(t, quick());
        drop = true;
        expect_throw<mcpc::TransportError>(mcpc::Status::Transport, [&] { c.call("echo", R"({"text":"a"})"); });
        CHECK_EQ(c.call("echo", R"({"text":"b"})").text(), std::string("b"));
        c.close();
        server.wait();
    });

    run("http: JSON replies, headers, bearer, a session", [] {
        Fixture fx;
        mcpc::Options o = quick();
        o.header("X-Mcpc-Test", "cpp").bearer("secret-token");
        {
            mcpc::Client c = mcpc::Client::http(fx.url(), o);
            CHECK_EQ(c.list_tools().size(), size_t{25});
            CHECK_EQ(c.call("add", R"({"a":2,"b":3})").structured_json().value_or(""), std::string(R"({"sum":5})"));
            expect_throw<mcpc::ToolError>(mcpc::Status::Tool, [&] { c.call("fail", R"({"message":"x"})"); });
            expect_throw<mcpc::RpcError>(mcpc::Status::Rpc, [&] { c.call("nope", "{}"); });
        }
        std::string log = fx.log_text();
        CHECK(contains(log, "\"x-mcpc-test\":\"cpp\""));
        CHECK(contains(log, "\"authorization\":\"Bearer secret-token\""));
        CHECK(contains(log, "\"session-deleted\""));
    });

    run("http: SSE replies and a token callback refreshed after 401", [] {
        Fixture fx({"--mode", "sse", "--fault", "auth"});
        std::vector<std::string> asked;
        std::mutex m;
        mcpc::Options o = quick();
        o.token_callback([&](std::optional<std::string_view> www) -> std::optional<std::string> {
            std::lock_guard<std::mutex> g(m);
            asked.push_back(www ? std::string(*www) : std::string("(first)"));
            return www ? "good-token" : "stale-token";
        });
        mcpc::Client c = mcpc::Client::http(fx.url(), o);
        std::atomic<int> progress{0};
        mcpc::Result r = c.call("slow", R"({"ms":100})",
                                mcpc::CallOptions().with_progress(
                                    [&](double, std::optional<double>, std::optional<std::string_view>) { progress++; }));
        CHECK(contains(r.text(), "slept 100 ms"));
        CHECK_EQ(progress.load(), 4);
        std::lock_guard<std::mutex> g(m);
        CHECK(asked.size() >= 2);
        if (asked.size() >= 2) {
            CHECK_EQ(asked[0], std::string("(first)"));
            CHECK(contains(asked[1], "invalid_token"));
        }
    });

    run("http: a 401 with no way to refresh is an auth error", [] {
        Fixture fx({"--fault", "auth"});
        mcpc::Options o = quick();
        o.bearer("wrong");
        expect_throw<mcpc::TransportError>(mcpc::Status::Auth, [&] { mcpc::Client::http(fx.url(), o); });
    });

    run("http: connect_async", [] {
        Fixture fx;
        Latch l(1);
        std::string version;
        mcpc::Options o = quick();
        mcpc::Op op = mcpc::Client::http_async(fx.url(), &o, [&](mcpc::Status s, mcpc::Client c, const std::string&) {
            if (s == mcpc::Status::Ok) version = c.protocol_version();
            l.done();  // c is freed here, on the mcpc thread
        });
        CHECK(l.wait());
        CHECK(known_version(version));
    });

    run("oauth: a login, then a headless client on the stored tokens", [] {
        Fixture fx({}, "tests/fixtures/oauth_fixture.py");
        auto store = std::make_shared<MemoryStore>();
        std::atomic<int> shown{0};
        mcpc::OAuth login;
        login.redirect_uri(kRedirect).store(store).on_authorize([&](std::string_view url) -> std::optional<std::string> {
            shown++;
            return get_location(url);
        });
        mcpc::Options o = quick();
        o.oauth(login);
        {
            mcpc::Client c = mcpc::Client::http(fx.url(), o);
            CHECK_EQ(c.call("echo", R"({"text":"hi"})").text(), std::string("hi"));
        }
        CHECK_EQ(shown.load(), 1);
        mcpc::OAuth headless;
        headless.headless().store(store);
        mcpc::Options h = quick();
        h.oauth(headless);
        {
            mcpc::Client c = mcpc::Client::http(fx.url(), h);
            CHECK_EQ(c.list_tools().size(), size_t{1});
        }
        CHECK_EQ(count(fx.log_text(), "\"event\": \"authorize\""), size_t{1});
    });

    run("oauth: headless without credentials needs a login", [] {
        Fixture fx({}, "tests/fixtures/oauth_fixture.py");
        mcpc::Options o = quick();
        o.oauth(mcpc::OAuth().headless());
        expect_throw<mcpc::LoginRequiredError>(mcpc::Status::LoginRequired, [&] { mcpc::Client::http(fx.url(), o); });
    });

    run("oauth: nullopt or an exception from authorize cancels the login", [] {
        Fixture fx({}, "tests/fixtures/oauth_fixture.py");
        for (bool raise : {false, true}) {
            mcpc::OAuth a;
            a.redirect_uri(kRedirect).on_authorize([raise](std::string_view) -> std::optional<std::string> {
                if (raise) throw std::runtime_error("the user closed the window");
                return std::nullopt;
            });
            mcpc::Options o = quick();
            o.oauth(a);
            expect_throw<mcpc::LoginCancelledError>(mcpc::Status::LoginCancelled,
                                                    [&] { mcpc::Client::http(fx.url(), o); });
        }
    });

    run("oauth: the client credentials grant, and a wrong secret", [] {
        Fixture fx({"--client", "cc-client", "cc-secret"}, "tests/fixtures/oauth_fixture.py");
        mcpc::Options o = quick();
        o.oauth(mcpc::OAuth().client("cc-client", "cc-secret").grant(mcpc::Grant::ClientCredentials));
        CHECK_EQ(mcpc::Client::http(fx.url(), o).call("echo", R"({"text":"cc"})").text(), std::string("cc"));
        mcpc::Options w = quick();
        w.oauth(mcpc::OAuth().client("cc-client", "wrong-secret").grant(mcpc::Grant::ClientCredentials));
        expect_throw<mcpc::AuthServerError>(mcpc::Status::AuthServer, [&] { mcpc::Client::http(fx.url(), w); },
                                            [](const mcpc::AuthServerError& e) {
                                                CHECK(!contains(e.what(), "wrong-secret"));
                                            });
    });

    // No user: the fixture verifies private_key_jwt's ES256 signatures, accepts one
    // assertion, exchanges one ID token for an ID-JAG at its identity provider, and
    // offers DPoP (verifying its proofs).
    run("oauth: private_key_jwt, the JWT bearer grant and the ID-JAG flow", [] {
        const std::string base = "/tmp/mcpc-cpp-key-" + std::to_string(getpid());
        const std::string key = p256_key(base, ".pem");
        const std::string a = "eyJhbGciOiJSUzI1NiJ9.wif-cpp.sig", idt = "eyJhbGciOiJSUzI1NiJ9.idt-cpp.sig";
        Fixture fx({"--key-client", "key-client", base + ".pub", "--assertion", a, "--id-token", idt, "--dpop"},
                   "tests/fixtures/oauth_fixture.py");
        unlink((base + ".pem").c_str());
        unlink((base + ".pub").c_str());

        mcpc::Options k = quick();
        k.oauth(mcpc::OAuth().client("key-client").client_key(key).grant(mcpc::Grant::ClientCredentials).dpop(false));
        CHECK_EQ(mcpc::Client::http(fx.url(), k).call("echo", R"({"text":"key"})").text(), std::string("key"));
        CHECK_EQ(count(fx.log_text(), "\"auth\": \"private_key_jwt\", \"dpop\": false"), size_t{1});
        CHECK_EQ(count(fx.log_text(), "\"method\": \"tools/call\", \"scheme\": \"Bearer\""), size_t{1});

        mcpc::Options f = quick();
        f.oauth(mcpc::OAuth().grant(mcpc::Grant::JwtBearer).assertion(a));
        CHECK_EQ(mcpc::Client::http(fx.url(), f).call("echo", R"({"text":"f"})").text(), std::string("f"));
        std::atomic<int> asked{0};
        mcpc::Options cb = quick();
        cb.oauth(mcpc::OAuth().grant(mcpc::Grant::JwtBearer).on_assertion([&]() -> std::optional<std::string> {
            asked++;
            return a;
        }));
        CHECK_EQ(mcpc::Client::http(fx.url(), cb).call("echo", R"({"text":"cb"})").text(), std::string("cb"));
        CHECK_EQ(asked.load(), 1);
        CHECK_EQ(count(fx.log_text(), "\"method\": \"tools/call\", \"scheme\": \"DPoP\""), size_t{2});

        const size_t tokens = count(fx.log_text(), "\"event\": \"token\"");
        for (bool raise : {false, true}) {
            mcpc::Options none = quick();
            none.oauth(mcpc::OAuth().grant(mcpc::Grant::JwtBearer).on_assertion([raise]() -> std::optional<std::string> {
                if (raise) throw std::runtime_error("no workload identity here");
                return std::nullopt;
            }));
            expect_throw<mcpc::LoginRequiredError>(mcpc::Status::LoginRequired,
                                                   [&] { mcpc::Client::http(fx.url(), none); });
        }
        CHECK_EQ(count(fx.log_text(), "\"event\": \"token\""), tokens);

        const std::string idp = "http://127.0.0.1:" + std::to_string(fx.port) + "/idp/token";
        mcpc::Options e = quick();
        e.oauth(mcpc::OAuth().grant(mcpc::Grant::JwtBearer).on_assertion([&] { return std::optional<std::string>(idt); })
                    .identity_provider(idp, "idp-client"));
        CHECK_EQ(mcpc::Client::http(fx.url(), e).call("echo", R"({"text":"sso"})").text(), std::string("sso"));
        CHECK_EQ(count(fx.log_text(), "\"event\": \"idp-exchange\", \"ok\": true"), size_t{1});

        expect_throw<mcpc::InvalidArgument>(mcpc::Status::InvalidArg, [] { mcpc::OAuth().client_key("not a key"); });
        expect_throw<mcpc::InvalidArgument>(mcpc::Status::InvalidArg, [] { mcpc::OAuth().dpop_key("not a key"); });
    });

    run("restart: a dead stdio server is started again", [] {
        mcpc::Options o = quick();
        o.restart(1, std::chrono::milliseconds(20));
        mcpc::Client c = mcpc::Client::stdio(demo({"--fault=exit-on-crash"}), o);
        const std::string first = c.call("echo", R"({"text":"pid"})").text();
        expect_throw<mcpc::TransportError>(mcpc::Status::ServerExited,
                                           [&] { c.call("echo", R"({"text":"crash"})"); });
        CHECK(c.call("echo", R"({"text":"pid"})").text() != first);
        expect_throw<mcpc::TransportError>(mcpc::Status::Transport, [&] { c.call("echo", R"({"text":"crash"})"); });
    });

    // A key kept outside the process, as an HSM keeps it: openssl signs with it.
    run("oauth: the host's signer for private_key_jwt and DPoP", [] {
        const std::string base = "/tmp/mcpc-cpp-signer-" + std::to_string(getpid());
        const std::string pub = p256_key(base, ".pub");
        std::atomic<int> signs{0};
        std::mutex files;  // signatures may be asked for from two threads at once
        auto sign = [&](std::string_view data) {
            std::lock_guard<std::mutex> hold(files);
            signs++;
            std::ofstream(base + ".in", std::ios::binary) << data;
            std::string c = "openssl dgst -sha256 -sign " + base + ".pem -out " + base + ".sig " + base + ".in";
            if (std::system(c.c_str()) != 0) return std::string();
            std::ifstream sf(base + ".sig", std::ios::binary);
            return std::string(std::istreambuf_iterator<char>(sf), {});
        };
        Fixture fx({"--key-client", "key-client", base + ".pub", "--dpop"}, "tests/fixtures/oauth_fixture.py");
        mcpc::Options o = quick();
        o.oauth(mcpc::OAuth().client("key-client").grant(mcpc::Grant::ClientCredentials)
                    .client_signer(pub, sign).dpop_signer(pub, sign));
        CHECK_EQ(mcpc::Client::http(fx.url(), o).call("echo", R"({"text":"hsm"})").text(), std::string("hsm"));
        CHECK_EQ(count(fx.log_text(), "\"auth\": \"private_key_jwt\", \"dpop\": true"), size_t{1});
        CHECK_EQ(count(fx.log_text(), "\"method\": \"tools/call\", \"scheme\": \"DPoP\""), size_t{1});
        CHECK(signs.load() >= 3);
        mcpc::Options bad = quick();
        bad.oauth(mcpc::OAuth().client("key-client").grant(mcpc::Grant::ClientCredentials)
                      .client_signer(pub, [](std::string_view) -> std::string { throw std::runtime_error("unplugged"); }));
        expect_throw<mcpc::TransportError>(mcpc::Status::Auth, [&] { mcpc::Client::http(fx.url(), bad); });
        CHECK_EQ(count(fx.log_text(), "\"event\": \"token\""), size_t{1});
        expect_throw<mcpc::InvalidArgument>(mcpc::Status::InvalidArg, [] {
            mcpc::OAuth().dpop_signer("not a key", [](std::string_view) { return std::string(); });
        });
        for (const char* ext : {".pem", ".pub", ".in", ".sig"}) unlink((base + ext).c_str());
    });

    run("host: a config's servers started together, the catalog, routed calls, events", [] {
        std::string cfg = write_temp("host.json", R"({"mcpServers": {"a": )" + demo_entry("", R"(, "excludeTools": ["fail"])") +
                                                      R"(, "x.y": )" + demo_entry("", R"(, "includeTools": ["echo"])") +
                                                      R"(, "x_y": )" + demo_entry("", R"(, "includeTools": ["echo", "add"])") +
                                                      R"(, "missing": {"command": "/nonexistent/mcpc-no-such-server"}}})");
        std::mutex m;
        std::vector<std::string> seen;
        mcpc::Host host(quick());
        host.on_event([&](mcpc::HostEvent ev, std::optional<std::string_view> server, mcpc::ServerState state,
                          std::optional<std::string_view> detail) {
            std::lock_guard<std::mutex> g(m);
            if (ev == mcpc::HostEvent::StateChanged && state == mcpc::ServerState::Ready) seen.push_back("ready " + std::string(*server));
            if (ev == mcpc::HostEvent::StateChanged && state == mcpc::ServerState::Failed) seen.push_back("failed " + std::string(*server));
            if (ev == mcpc::HostEvent::Settled) seen.push_back("settled " + std::string(detail.value_or("")));
        });
        CHECK_EQ(host.add_config(cfg), size_t{4});
        host.start();
        {
            std::lock_guard<std::mutex> g(m);
            CHECK_EQ(seen.size(), size_t{5});
            CHECK(std::find(seen.begin(), seen.end(), "failed missing") != seen.end());
            CHECK(std::find(seen.begin(), seen.end(), "ready x.y") != seen.end());
            CHECK(!seen.empty() && contains(seen.back(), R"("tools":27)") && contains(seen.back(), R"("failed":1)"));
        }
        std::string tools = host.tools();
        CHECK(contains(tools, R"("name":"a__echo")") && !contains(tools, R"("name":"a__fail")"));
        CHECK(contains(tools, R"("collisions":[{"kept":"x.y","name":"x_y__echo","renamed":"x_y")"));
        CHECK(!contains(tools, "missing__"));
        std::string status = host.status();
        CHECK(contains(status, R"("name":"missing","state":"failed")") && contains(status, "MCPC_ERR_SPAWN"));
        CHECK_EQ(host.call("a__add", R"({"a":2,"b":3})").structured_json().value_or(""), std::string(R"({"sum":5})"));
        CHECK_EQ(host.call("x_y__echo_" + tools.substr(tools.find("x_y__echo_") + 10, 8), R"({"text":"renamed"})").text(),
                 std::string("renamed"));
        expect_throw<mcpc::TimeoutError>(mcpc::Status::Timeout, [&] {
            host.call("a__slow", R"({"ms":5000})", mcpc::CallOptions().with_timeout(200ms));
        });
        expect_throw<mcpc::UnknownNameError>(mcpc::Status::UnknownName, [&] { host.call("a__fail", "{}"); });
        expect_throw<mcpc::UnknownNameError>(mcpc::Status::UnknownName, [&] { host.call("missing__echo", "{}"); });
        host.remove("a");
        expect_throw<mcpc::UnknownNameError>(mcpc::Status::UnknownName, [&] { host.remove("a"); });
        expect_throw<mcpc::UnknownNameError>(mcpc::Status::UnknownName, [&] { host.call("a__echo", R"({"text":"x"})"); });
        CHECK_EQ(host.call("x_y__add", R"({"a":1,"b":1})").structured_json().value_or(""), std::string(R"({"sum":2})"));
        mcpc::Host moved = std::move(host);
        CHECK(!host && moved);
        unlink(cfg.c_str());
    });

    run("host: a saved catalog, and a server started by its first call", [] {
        std::string cfg = write_temp("lazy.json", R"({"mcpServers": {"a": )" + demo_entry("", "") + "}}");
        std::string saved;
        {
            mcpc::Host host(quick());
            host.add_config(cfg);
            host.start();
            saved = host.tools();
        }
        mcpc::Host host(quick());
        host.lazy().add_config(cfg);
        CHECK_EQ(host.load_catalog(saved), size_t{25});
        host.start();
        CHECK(contains(host.status(), R"("state":"idle")"));
        CHECK_EQ(host.tools(), saved);
        CHECK_EQ(host.call("a__add", R"({"a":2,"b":2})").structured_json().value_or(""), std::string(R"({"sum":4})"));
        CHECK(contains(host.status(), R"("state":"ready")"));
        expect_throw<mcpc::InvalidArgument>(mcpc::Status::InvalidArg, [&] { host.load_catalog("[1]"); });
        host.close();
        expect_throw<mcpc::ClosedError>(mcpc::Status::Closed, [&] { host.call("a__add", R"({"a":1,"b":1})"); });
        unlink(cfg.c_str());
    });

    run("host: malformed configs, settings, servers added one by one", [] {
        mcpc::Host host;
        std::string bad = write_temp("bad.json", R"({"mcpServers": {"w": )" + demo_entry("", R"(, "timeout": "soon")") + "}}");
        expect_throw<mcpc::ConfigError>(mcpc::Status::Config, [&] { host.add_config(bad); },
                                        [&](const mcpc::ConfigError& e) {
                                            CHECK(contains(e.what(), bad) && contains(e.what(), R"(server "w")") &&
                                                  contains(e.what(), R"(field "timeout")"));
                                        });
        expect_throw<mcpc::ConfigError>(mcpc::Status::Config, [&] { host.add_config("/nonexistent/mcp.json"); });
        expect_throw<mcpc::InvalidArgument>(mcpc::Status::InvalidArg, [&] { host.concurrency(0); });
        host.concurrency(2).env_policy(mcpc::EnvPolicy::Allow, {"PATH", "HOME"}).env_policy(mcpc::EnvPolicy::NoSecrets);
        std::string ws = write_temp("ws.json", R"({"servers": {"w": {"type": "stdio", "command": ")" + python() +
                                                   R"(", "args": ["${workspaceFolder}/server.py"]}}})");
        host.variable("workspaceFolder", "demo");
        CHECK_EQ(host.add_config(ws), size_t{1});
        mcpc::Options own = quick();
        std::atomic<int> notes{0};
        own.on_notification([&](std::string_view, std::optional<std::string_view>) { notes++; });
        host.add_stdio("own", demo({"--fault", "notify-during-call"}), own);
        host.add_stdio("plain", demo());
        expect_throw<mcpc::InvalidArgument>(mcpc::Status::InvalidArg, [&] { host.add_stdio("plain", demo()); });
        host.add_http("far", "http://127.0.0.1:9/mcp", quick());
        host.start();
        CHECK_EQ(host.call("w__echo", R"({"text":"ws"})").text(), std::string("ws"));
        CHECK_EQ(host.call("own__echo", R"({"text":"own"})").text(), std::string("own"));
        CHECK(notes.load() >= 1);
        expect_throw<mcpc::ToolError>(mcpc::Status::Tool, [&] { host.call("plain__fail", R"({"message":"routed"})"); },
                                      [](const mcpc::ToolError& e) { CHECK_EQ(e.result().text(), std::string("routed")); });
        CHECK(contains(host.status(), R"("name":"far","state":"failed")"));
        for (const std::string& f : {bad, ws}) unlink(f.c_str());
    });

    run("host: prompts under the host's name format, resources routed by URI", [] {
        std::atomic<int> changes{0};
        mcpc::Host host(quick());
        host.on_event([&](mcpc::HostEvent ev, std::optional<std::string_view>, mcpc::ServerState,
                          std::optional<std::string_view>) {
            if (ev == mcpc::HostEvent::CatalogChanged) changes++;
        });
        host.add_stdio("a", demo({"--apps"}));
        host.add_stdio("b", demo({"--apps", "--era=modern"}));  // the same URIs and names
        host.add_stdio("plain", demo());
        expect_throw<mcpc::InvalidArgument>(
            mcpc::Status::InvalidArg, [&] { host.name_format("a.{name}"); },
            [](const mcpc::InvalidArgument& e) { CHECK(contains(e.what(), "[A-Za-z0-9_-]")); });
        expect_throw<mcpc::InvalidArgument>(mcpc::Status::InvalidArg, [&] { host.name_format("{server}"); });
        host.name_format("mcp__{server}__{name}").start();

        std::string prompts = host.prompts();
        CHECK(contains(prompts, R"({"name":"mcp__a__greet","server":"a","prompt":{"name":"greet")"));
        CHECK(contains(prompts, R"("name":"mcp__b__greet")") && contains(prompts, R"("collisions":[])"));
        CHECK(contains(host.tools(), R"("name":"mcp__b__echo")"));
        CHECK(contains(host.get_prompt("mcp__b__greet", R"({"who":"C++"})"), "Say hello to C++."));
        expect_throw<mcpc::UnknownNameError>(
            mcpc::Status::UnknownName, [&] { host.get_prompt("a__greet"); },
            [](const mcpc::UnknownNameError& e) { CHECK(contains(e.what(), "no prompt named")); });
        expect_throw<mcpc::InvalidArgument>(mcpc::Status::InvalidArg, [&] { host.get_prompt("mcp__a__greet", "[]"); });
        int before = changes.load();
        host.name_format("{name}");  // bare names: b's prompt is renamed, and listed
        CHECK_EQ(changes.load(), before + 1);
        prompts = host.prompts();
        CHECK(contains(prompts, R"({"name":"greet","server":"a")"));
        CHECK(contains(prompts, R"("kept":"a","name":"greet","renamed":"b","renamedTo":"greet_)"));
        CHECK_EQ(host.call("echo", R"({"text":"bare"})").text(), std::string("bare"));
        host.name_format(std::nullopt);
        CHECK(contains(host.get_prompt("a__greet"), "Say hello to"));

        std::string resources = host.resources();
        CHECK(contains(resources, R"({"uri":"ui://demo/clock.html","server":"a","resource":{)"));
        CHECK(contains(resources, R"({"dropped":"b","kept":"a","uri":"ui://demo/clock.html"})"));
        CHECK(!contains(resources, R"("server":"plain")"));
        mcpc::ResourceContents r = host.read_resource("ui://demo/clock.html");
        CHECK(r.contents.size() == 1 && r.contents[0].uri == "ui://demo/clock.html" && r.contents[0].text);
        expect_throw<mcpc::UnknownNameError>(mcpc::Status::UnknownName, [&] { host.read_resource("res://nobody"); });
        host.close();
        expect_throw<mcpc::ClosedError>(mcpc::Status::Closed, [&] { host.get_prompt("a__greet"); });
    });

    run("host: the resolver's value reaches the server, never a message", [] {
        Fixture fx;
        const std::string log = "/tmp/mcpc-cpp-" + std::to_string(getpid()) + "-resolved.log";
        const std::string secret = "s3cr3t-from-the-resolver";
        std::vector<std::string> asked;
        mcpc::Host host(quick());
        host.resolver([&](std::string_view kind, std::string_view ref,
                          std::optional<std::string_view> prompt) -> std::optional<std::string> {
            asked.push_back(std::string(kind) + " " + std::string(ref) + " " + std::string(prompt.value_or("-")));
            if (ref == "logfile") return log;
            if (ref == "op://vault/token") return secret;
            if (ref == "op://vault/long") return std::string(9000, 'x');
            if (ref == "op://vault/throws") throw std::runtime_error("locked");
            return std::nullopt;
        });
        std::string vscode = write_temp("vscode.json", R"({"servers": {"w": {"type": "stdio", "command": ")" + python() +
                                                           R"(", "args": ["demo/server.py", "--log", "${input:logfile}"]}},
            "inputs": [{"id": "logfile", "description": "Where the server logs"}]})");
        std::string remote = write_temp("remote.json", R"({"mcpServers": {"h": {"url": ")" + fx.url() +
                                                           R"(", "headers": {"Authorization": "Bearer ${op://vault/token}"}}}})");
        CHECK_EQ(host.add_config(vscode), size_t{1});
        CHECK_EQ(host.add_config(remote), size_t{1});
        CHECK_EQ(asked.size(), size_t{2});
        if (asked.size() == 2) {
            CHECK_EQ(asked[0], std::string("input logfile Where the server logs"));
            CHECK_EQ(asked[1], std::string("secret op://vault/token -"));
        }
        host.start();
        CHECK_EQ(host.call("w__echo", R"({"text":"logged"})").text(), std::string("logged"));
        CHECK_EQ(host.call("h__echo", R"({"text":"authorized"})").text(), std::string("authorized"));
        std::ifstream lf(log);
        CHECK(contains(std::string(std::istreambuf_iterator<char>(lf), {}), "\"logged\""));
        CHECK(contains(fx.log_text(), "\"authorization\":\"Bearer " + secret + "\""));
        std::string bad = write_temp("secret-bad.json", R"({"mcpServers": {"b": {"url": ")" + fx.url() +
                                                            R"(", "headers": {"Authorization": "Bearer ${op://vault/token}"},
            "timeout": "soon"}}})");
        expect_throw<mcpc::ConfigError>(mcpc::Status::Config, [&] { host.add_config(bad); },
                                        [&](const mcpc::ConfigError& e) {
                                            CHECK(contains(e.what(), R"(field "timeout")") && !contains(e.what(), secret));
                                        });
        std::string refused = write_temp("refused.json", R"({"mcpServers": {"l": )" + demo_entry(R"(, "${op://vault/long}")") + "}}");
        expect_throw<mcpc::ConfigError>(mcpc::Status::Config, [&] { host.add_config(refused); },
                                        [](const mcpc::ConfigError& e) {
                                            CHECK(contains(e.what(), "${op://vault/long} is 9000 bytes, more than the 8191"));
                                            CHECK(!contains(e.what(), "xxxxxxxx"));
                                        });
        std::string throws = write_temp("throws.json", R"({"mcpServers": {"t": )" + demo_entry(R"(, "${op://vault/throws}")") + "}}");
        expect_throw<mcpc::ConfigError>(mcpc::Status::Config, [&] { host.add_config(throws); },
                                        [](const mcpc::ConfigError& e) {
                                            CHECK(contains(e.what(), "the resolver threw for ${op://vault/throws}"));
                                        });
        for (const std::string& f : {vscode, remote, bad, refused, throws, log}) unlink(f.c_str());
    });

    run("input: form elicitation accepted, checked and declined, in both eras", [] {
        for (const char* era : {"modern", "legacy"}) {
            InputLog log;
            bool decline = false;
            mcpc::Options o = quick();
            o.on_elicitation(
                [&](mcpc::InputRequest r) {
                    log.seen(r);
                    mcpc::Status bad = mcpc::Status::Ok, again = mcpc::Status::Ok;
                    if (decline) {
                        r.decline();
                    } else {
                        try {
                            r.accept(R"({"name":5})");  // not the schema's: nothing sent, still open
                        } catch (const mcpc::Error& e) {
                            bad = e.status();
                        }
                        r.accept(R"({"name":"Ann"})");
                    }
                    try {
                        r.cancel();
                    } catch (const mcpc::Error& e) {
                        again = e.status();
                    }
                    log.done(bad, again);
                },
                MCPC_ELICIT_MODE_FORM | MCPC_ELICIT_MODE_URL);
            mcpc::Client c = mcpc::Client::stdio(input_server(era), o);
            CHECK(contains(c.call("caps").text(), R"("elicitation": {"form": {}, "url": {}})"));
            CHECK(!contains(c.call("caps").text(), "sampling") && !contains(c.call("caps").text(), "roots"));
            // The default of the field left out was filled in.
            CHECK(contains(c.call("form").text(), R"("action": "accept", "content": {"age": 7, "name": "Ann"})"));
            log.wait(1);  // the call may return before its handler does
            {
                std::lock_guard<std::mutex> g(log.m);
                CHECK(log.kind == mcpc::InputKind::ElicitForm);
                CHECK_EQ(log.method, std::string("elicitation/create"));
                CHECK_EQ(log.server, std::string("input-server"));
                CHECK_EQ(log.message.value_or(""), std::string("Who are you?"));
                CHECK(log.schema && !log.url && !log.host_server);
                CHECK(log.bad == mcpc::Status::InputInvalid && log.again == mcpc::Status::AlreadyCompleted);
            }
            decline = true;
            CHECK(contains(c.call("form").text(), R"("action": "decline")"));
            log.wait(2);
            CHECK(contains(c.call("url").text(), R"("action": "decline")"));
            log.wait(3);
            std::lock_guard<std::mutex> g(log.m);
            CHECK(log.kind == mcpc::InputKind::ElicitUrl && log.url == "https://example.com/consent");
        }
    });

    run("input: a handler that throws refuses the request with its message", [] {
        for (const char* era : {"modern", "legacy"}) {
            mcpc::Options o = quick();
            o.on_elicitation([](mcpc::InputRequest) { throw std::runtime_error("no forms today"); });
            mcpc::Client c = mcpc::Client::stdio(input_server(era), o);
            if (std::string(era) == "legacy") {  // the server got the error and says so
                std::string t = c.call("form").text();
                CHECK(contains(t, R"("code": -1)") && contains(t, "no forms today"));
            } else {  // under 2026-07-28 the call that carried the request fails
                expect_status(mcpc::Status::InputRequired, [&] { c.call("form"); },
                              "refused elicitation/create (\"k\"): no forms today");
            }
            CHECK(contains(c.call("caps").text(), "elicitation"));  // the client goes on
        }
    });

    run("input: a request kept and answered later from another thread", [] {
        for (const char* era : {"modern", "legacy"}) {
            std::mutex m;
            std::condition_variable cv;
            mcpc::InputRequest kept;
            mcpc::Options o = quick();
            o.on_elicitation([&](mcpc::InputRequest r) {  // returns unanswered
                std::lock_guard<std::mutex> g(m);
                kept = std::move(r);
                cv.notify_all();
            });
            mcpc::Client c = mcpc::Client::stdio(input_server(era), o);
            std::thread answerer([&] {
                std::unique_lock<std::mutex> g(m);
                cv.wait(g, [&] { return static_cast<bool>(kept); });
                mcpc::InputRequest r = std::move(kept);
                g.unlock();
                r.accept(R"({"name":"Later","age":3})");
            });
            std::string t = c.call("form").text();
            answerer.join();
            CHECK(contains(t, R"("content": {"age": 3, "name": "Later"})"));
        }
    });

    run("input: sampling answered, with tools declared", [] {
        for (const char* era : {"modern", "legacy"}) {
            InputLog log;
            mcpc::Options o = quick();
            o.on_sampling(
                [&](mcpc::InputRequest r) {
                    log.seen(r);
                    r.complete(R"({"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m"})");
                    log.done(mcpc::Status::Ok, mcpc::Status::Ok);
                },
                true);
            mcpc::Client c = mcpc::Client::stdio(input_server(era), o);
            std::string caps = c.call("caps").text();
            CHECK(contains(caps, R"("sampling": {"tools": {}})") && !contains(caps, "elicitation"));
            CHECK(contains(c.call("sampling").text(), "Paris"));
            log.wait(1);
            std::lock_guard<std::mutex> g(log.m);
            CHECK(log.kind == mcpc::InputKind::Sampling && log.method == "sampling/createMessage");
            CHECK(contains(log.params, "messages") && !log.message && !log.schema);
        }
    });

    run("input: roots listed, and roots_changed", [] {
        for (const char* era : {"modern", "legacy"}) {
            mcpc::Client none = mcpc::Client::stdio(input_server(era), quick());
            expect_status(mcpc::Status::NotSupported, [&] { none.roots_changed(); });
            mcpc::Options o = quick();
            o.roots({"file:///tmp", "file:///srv/a \"b\""});
            mcpc::Client c = mcpc::Client::stdio(input_server(era), o);
            std::string t = c.call("roots").text();
            CHECK(contains(t, "file:///tmp") && contains(t, R"(file:///srv/a \"b\")"));
            c.roots_changed();
            std::string seen = c.call("seen").text();  // stdio keeps order: the notification came first
            if (std::string(era) == "legacy")
                CHECK(contains(seen, "notifications/roots/list_changed"));
            else
                CHECK(!contains(seen, "roots"));  // the server asks each time: nothing to send
        }
    });

    run("host: an input request names the server that asked", [] {
        mcpc::Options defaults = quick();
        std::mutex m;
        std::vector<std::string> asked;
        defaults.on_elicitation([&](mcpc::InputRequest r) {
            std::string who = r.host_server().value_or("?");
            {
                std::lock_guard<std::mutex> g(m);
                asked.push_back(who);
            }
            r.accept(R"({"name":")" + who + R"("})");
        });
        mcpc::Host host(defaults);
        host.add_stdio("first", demo({"--era=modern"}));
        host.add_stdio("second", demo({"--era=modern"}));
        host.start();
        CHECK_EQ(host.call("second__wants_input", "{}").text(), std::string("hello second"));
        CHECK_EQ(host.call("first__wants_input", "{}").text(), std::string("hello first"));
        std::lock_guard<std::mutex> g(m);
        CHECK(asked == (std::vector<std::string>{"second", "first"}));
    });

    std::printf("test-cpp: %d passed, %d failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
