// Answer a server's elicitation: the handler gets each request as an InputRequest.
#include <iostream>

#include "mcpc.hpp"

int main() {
    try {
        mcpc::Options opts;
        // Runs on an mcpc thread, once per request; it may block (ask a user) or move the
        // request elsewhere and answer it later, from any thread.
        opts.on_elicitation([](mcpc::InputRequest request) {
            std::cout << request.server() << " asks: " << request.message().value_or("") << "\n";
            if (request.kind() == mcpc::InputKind::ElicitForm)
                request.accept(R"({"name":"Ada"})");  // checked against request.schema_json() first
            else
                request.decline();
        });  // a request left unanswered is refused; an exception refuses it with what()
        mcpc::Client client = mcpc::Client::stdio({"python3", "demo/server.py", "--era", "modern"}, opts);
        mcpc::Result result = client.call("wants_input");
        std::cout << "wants_input: " << result.text() << "\n";
    } catch (const mcpc::Error& e) {
        std::cerr << mcpc::status_name(e.status()) << ": " << e.what() << "\n";
        return 1;
    }
    return 0;
}
