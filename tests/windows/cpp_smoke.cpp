// The C++ binding (bindings/cpp/mcpc.hpp) on Windows: built with mingw-w64's g++
// (its posix thread model, which std::future needs) and run under Wine against the
// fake server beside it: a listing, a call, a tool error, a future and a cancel.
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <cstdio>
#include <future>
#include <string>

#include "mcpc.hpp"

static int failures;

#define EXPECT(cond)                                                             \
    do {                                                                         \
        if (!(cond)) {                                                           \
            std::fprintf(stderr, "  EXPECT failed at line %d: %s\n", __LINE__, #cond); \
            failures++;                                                          \
        }                                                                        \
    } while (0)

int main() {
    char self[MAX_PATH];
    DWORD n = GetModuleFileNameA(nullptr, self, MAX_PATH);
    std::string dir(self, n);
    dir.erase(dir.find_last_of('\\') + 1);
    try {
        mcpc::Client client = mcpc::Client::stdio({dir + "fake_server.exe"});
        mcpc::ToolList tools = client.list_tools();
        EXPECT(tools.size() >= 5);
        EXPECT(client.call("echo", R"({"text":"hi from C++"})").text() == "hi from C++");
        bool tool_error = false;
        try {
            client.call("fail");
        } catch (const mcpc::ToolError&) {
            tool_error = true;
        }
        EXPECT(tool_error);
        std::future<mcpc::Result> echo = client.call_future("echo", R"({"text":"future"})");
        EXPECT(echo.get().text() == "future");
        std::promise<mcpc::Status> done;
        mcpc::Op slow = client.call_async("slow", R"({"ms":30000})",
                                          [&done](mcpc::Status status, mcpc::Result, const std::string&) {
                                              done.set_value(status);
                                          });
        slow.cancel();
        EXPECT(done.get_future().get() == mcpc::Status::Cancelled);
    } catch (const mcpc::Error& e) {
        std::fprintf(stderr, "  %s: %s\n", mcpc::status_name(e.status()).c_str(), e.what());
        failures++;
    }
    std::printf("cpp_smoke: %s\n", failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
