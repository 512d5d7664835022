// Many servers behind one host: a configuration file's servers started together,
// one catalog of their tools under qualified names, calls routed by those names.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "mcpc.hpp"

using namespace std::chrono_literals;

int main() {
    const std::string path = "/tmp/mcpc-hosts-" + std::to_string(getpid()) + ".json";
    std::ofstream(path) << R"({"mcpServers": {
        "calc": {"command": "python3", "args": ["demo/server.py"], "includeTools": ["add"]},
        "notes": {"command": "python3", "args": ["demo/server.py"], "env": {"NOTES_TOKEN": "${op://vault/notes-token}"}},
        "broken": {"command": "/nonexistent/mcp-server"}}})";
    int status = 0;
    try {
        mcpc::Options defaults;  // every server's, unless added with options of its own
        defaults.timeout(10s);
        mcpc::Host host(defaults);
        host.on_event([](mcpc::HostEvent event, std::optional<std::string_view> server, mcpc::ServerState state,
                         std::optional<std::string_view>) {
            if (event == mcpc::HostEvent::StateChanged && state == mcpc::ServerState::Failed)
                std::cout << "failed: " << *server << "\n";
        });
        host.resolver([](std::string_view, std::string_view reference,
                         std::optional<std::string_view>) -> std::optional<std::string> {
            if (reference == "op://vault/notes-token") return "s3cr3t";  // ask the user or a secret store
            return std::nullopt;                                          // refuses the file
        });
        std::cout << "added: " << host.add_config(path) << "\n";
        host.start();  // together; the broken one leaves the others running
        std::string catalog = host.tools();  // JSON: {"tools": [{"name", "server", "tool"}], "collisions": [...]}
        std::cout << "listed: " << (catalog.find(R"("name":"calc__add")") != std::string::npos) << "\n";
        std::cout << "sum: " << host.call("calc__add", R"({"a":2,"b":3})").structured_json().value_or("none") << "\n";
        try {
            host.call("broken__echo", R"({"text":"x"})");
        } catch (const mcpc::UnknownNameError& e) {
            std::cout << "unknown: " << e.what() << "\n";
        }
    } catch (const mcpc::Error& e) {
        std::cerr << mcpc::status_name(e.status()) << ": " << e.what() << "\n";
        status = 1;
    }
    std::remove(path.c_str());
    return status;  // ~Host closes every server
}
