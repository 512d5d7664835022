// Connect to the demo server over stdio, list its tools, call some, and make
// asynchronous calls: one awaited through a future, one cancelled through its Op.
#include <chrono>
#include <future>
#include <iostream>

#include "mcpc.hpp"

using namespace std::chrono_literals;

int main() {
    try {
        mcpc::Options opts;
        opts.timeout(10s);
        mcpc::Client client = mcpc::Client::stdio({"python3", "demo/server.py"}, opts);

        mcpc::ToolList tools = client.list_tools();
        std::cout << tools.size() << " tools, the first: " << tools.name(0) << "\n";

        mcpc::Result sum = client.call("add", R"({"a":2,"b":3})");
        std::cout << "structured: " << sum.structured_json().value_or("none") << "\n";

        try {
            client.call("fail", R"({"message":"no luck"})");
        } catch (const mcpc::ToolError& e) {  // the tool ran and reported failure
            std::cout << "tool failed: " << e.result().text() << "\n";
        }
        try {
            client.call("slow", R"({"ms":5000})", mcpc::CallOptions().with_timeout(200ms));
        } catch (const mcpc::TimeoutError& e) {
            std::cout << "timed out: " << e.what() << "\n";
        }

        // A future: get() returns the result or throws the mapped exception.
        std::future<mcpc::Result> echo = client.call_future("echo", R"({"text":"hi"})");
        std::cout << "echo: " << echo.get().text() << "\n";

        // A completion callback (on an mcpc thread), and a cancel from this one.
        std::promise<mcpc::Status> done;
        mcpc::Op slow = client.call_async("slow", R"({"ms":60000})",
                                          [&done](mcpc::Status status, mcpc::Result, const std::string&) {
                                              done.set_value(status);
                                          });
        slow.cancel();  // the server is sent notifications/cancelled
        std::cout << "slow: " << mcpc::status_name(done.get_future().get()) << "\n";
    } catch (const mcpc::Error& e) {
        std::cerr << mcpc::status_name(e.status()) << ": " << e.what() << "\n";
        return 1;
    }
    return 0;  // ~Client closes: the server is stopped and reaped
}
