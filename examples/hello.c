/* Connect to the demo server over stdio, list its tools, call one. */
#include <stdio.h>
#include "mcpc.h"

int main(void) {
    const char *argv[] = {"python3", "demo/server.py"};
    mcpc_client_t *client = NULL;
    if (mcpc_client_connect_stdio(argv, 2, NULL, &client) != MCPC_OK) {
        fprintf(stderr, "connect: %s\n", mcpc_last_error_message());
        return 1;
    }

    mcpc_tool_list_t *tools = NULL;
    if (mcpc_client_list_tools(client, NULL, &tools) == MCPC_OK) {
        for (size_t i = 0; i < mcpc_tool_list_count(tools); i++) {
            printf("tool: %s\n", mcpc_tool_list_name(tools, i));
        }
        mcpc_tool_list_free(tools);
    }

    mcpc_call_opts_t opts;
    mcpc_call_opts_init_sized(&opts, sizeof opts);
    opts.timeout_ms = 5000;
    mcpc_result_t *result = NULL;
    mcpc_status_t st = mcpc_client_call_tool(client, "add", "{\"a\":2,\"b\":3}", &opts, &result);
    if (st == MCPC_OK) {
        printf("structured: %s\n", mcpc_result_structured_json(result));
    } else if (st == MCPC_ERR_TOOL) {
        printf("tool failed: %s\n", mcpc_result_text(result, NULL));
    } else {
        fprintf(stderr, "call: %s: %s\n", mcpc_status_name(st), mcpc_last_error_message());
    }
    mcpc_result_free(result);

    mcpc_client_free(client); /* closes: stops and reaps the server */
    return st == MCPC_OK ? 0 : 1;
}
