/* Connect to an HTTP server that requires OAuth: mcpc discovers its authorization
 * server, registers, and asks the host to show the login; the host hands back the
 * URL the browser was redirected to. Here the user is asked to paste it. */
#include <stdio.h>
#include <string.h>
#include "mcpc.h"

static void show_login(void *userdata, mcpc_auth_request_t *login) {
    (void)userdata;
    fprintf(stderr, "open: %s\n", mcpc_auth_request_url(login));
    char redirect[8192];
    if (fgets(redirect, sizeof redirect, stdin)) {
        redirect[strcspn(redirect, "\r\n")] = 0;
        mcpc_auth_request_complete(login, redirect);
    } else {
        mcpc_auth_request_cancel(login);
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s URL\n", argv[0]);
        return 2;
    }
    mcpc_oauth_t *oauth = mcpc_oauth_new();
    mcpc_oauth_set_redirect_uri(oauth, "http://127.0.0.1:8976/callback");
    mcpc_oauth_set_authorize_callback(oauth, show_login, NULL, NULL);
    mcpc_options_t *opts = mcpc_options_new();
    mcpc_options_set_oauth(opts, oauth);
    mcpc_oauth_free(oauth);

    mcpc_client_t *client = NULL;
    mcpc_status_t st = mcpc_client_connect_http(argv[1], opts, &client);
    mcpc_options_free(opts);
    if (st != MCPC_OK) {
        fprintf(stderr, "connect: %s: %s\n", mcpc_status_name(st), mcpc_last_error_message());
        return 1;
    }
    mcpc_tool_list_t *tools = NULL;
    if (mcpc_client_list_tools(client, NULL, &tools) == MCPC_OK) {
        for (size_t i = 0; i < mcpc_tool_list_count(tools); i++) {
            printf("tool: %s\n", mcpc_tool_list_name(tools, i));
        }
        mcpc_tool_list_free(tools);
    }
    mcpc_client_free(client);
    return 0;
}
