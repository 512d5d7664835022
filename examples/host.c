/* Many servers behind one host: a configuration file as hosts write it, the servers
 * started together, one catalog under qualified names, a call routed by its name. */
#include <stdio.h>
#include "mcpc.h"

static void on_event(void *ud, mcpc_host_event_t event, const char *server, mcpc_server_state_t state,
                     const char *detail) {
    (void)ud;
    if (event == MCPC_HOST_SERVER_STATE && state == MCPC_SERVER_FAILED)
        printf("%s failed: %s\n", server, detail ? detail : "");
    else if (event == MCPC_HOST_SETTLED)
        printf("settled\n");
}

int main(void) {
    FILE *f = fopen("build/example-host.json", "w");
    if (f == NULL)
        return 1;
    fputs("{\"mcpServers\": {\n"
          "  \"demo\": {\"command\": \"python3\", \"args\": [\"demo/server.py\"]},\n"
          "  \"modern\": {\"command\": \"python3\", \"args\": [\"demo/server.py\", \"--era=modern\"],\n"
          "             \"includeTools\": [\"add\"]},\n"
          "  \"gone\": {\"command\": \"/nonexistent/server\"}}}\n", f);
    fclose(f);

    mcpc_host_t *host = NULL;
    if (mcpc_host_new(NULL, &host) != MCPC_OK)
        return 1;
    mcpc_host_set_event_callback(host, on_event, NULL, NULL);
    mcpc_status_t st = mcpc_host_add_config(host, "build/example-host.json", NULL);
    if (st == MCPC_OK)
        st = mcpc_host_start(host); /* returns once each server is ready or failed */
    if (st != MCPC_OK) {
        fprintf(stderr, "host: %s: %s\n", mcpc_status_name(st), mcpc_last_error_message());
        mcpc_host_free(host);
        return 1;
    }

    mcpc_result_t *result = NULL;
    st = mcpc_host_call_tool(host, "modern__add", "{\"a\":2,\"b\":3}", NULL, &result);
    if (st == MCPC_OK)
        printf("modern__add: %s\n", mcpc_result_structured_json(result));
    mcpc_result_free(result);

    char *status = NULL; /* [{"name", "state", "tools", ...}] */
    if (mcpc_host_status(host, &status) == MCPC_OK)
        printf("status: %s\n", status);
    mcpc_string_free(status);
    mcpc_host_free(host); /* closes every server */
    return st == MCPC_OK ? 0 : 1;
}
