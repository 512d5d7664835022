/* A workload with no user: its platform's identity token is exchanged for an
 * access token (the JWT bearer grant), bound to a DPoP key where the server offers
 * it. Usage: MCPC_WORKLOAD_TOKEN=<jwt> workload URL */
#include <mcpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Asked before each token request: a fresh identity token (here from the environment). */
static int32_t workload_token(void *userdata, char *buf, size_t len) {
    (void)userdata;
    const char *jwt = getenv("MCPC_WORKLOAD_TOKEN");
    if (jwt == NULL || strlen(jwt) >= len) return 1; /* none: MCPC_ERR_LOGIN_REQUIRED */
    memcpy(buf, jwt, strlen(jwt) + 1);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s URL\n", argv[0]);
        return 2;
    }
    mcpc_oauth_t *oauth = mcpc_oauth_new();
    mcpc_oauth_set_grant(oauth, MCPC_OAUTH_JWT_BEARER);
    mcpc_oauth_set_assertion_callback(oauth, workload_token, NULL, NULL);
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
    mcpc_result_t *result = NULL;
    st = mcpc_client_call_tool(client, "echo", "{\"text\":\"as a workload\"}", NULL, &result);
    if (st == MCPC_OK) printf("echo: %s\n", mcpc_result_text(result, NULL));
    mcpc_result_free(result);
    mcpc_client_free(client);
    return st == MCPC_OK ? 0 : 1;
}
