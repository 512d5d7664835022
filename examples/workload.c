/* Hosts with no user: a service's own key (private_key_jwt), a workload's identity
 * token (the JWT bearer grant), or an employee's enterprise ID token exchanged at
 * the company's identity provider (ID-JAG). Tokens are bound to a DPoP key where
 * the server offers it.
 *   workload URL key CLIENT_ID KEY_PEM_FILE
 *   workload URL workload              (MCPC_WORKLOAD_TOKEN holds the JWT)
 *   workload URL enterprise IDP_TOKEN_URL IDP_CLIENT_ID   (MCPC_WORKLOAD_TOKEN: the ID token) */
#include <mcpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Asked before each token request: a fresh token (here from the environment). */
static int32_t identity_token(void *userdata, char *buf, size_t len) {
    (void)userdata;
    const char *jwt = getenv("MCPC_WORKLOAD_TOKEN");
    if (jwt == NULL || strlen(jwt) >= len) return 1; /* none: MCPC_ERR_LOGIN_REQUIRED */
    memcpy(buf, jwt, strlen(jwt) + 1);
    return 0;
}

static char *read_file(const char *path) {
    static char buf[8192];
    FILE *f = fopen(path, "r");
    if (f == NULL) return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s URL key CLIENT_ID KEY_FILE | workload | enterprise IDP_URL IDP_CLIENT\n", argv[0]);
        return 2;
    }
    mcpc_oauth_t *oauth = mcpc_oauth_new();
    mcpc_status_t st = MCPC_ERR_INVALID_ARG;
    if (strcmp(argv[2], "key") == 0 && argc == 5 && read_file(argv[4]) != NULL) {
        mcpc_oauth_set_grant(oauth, MCPC_OAUTH_CLIENT_CREDENTIALS);
        mcpc_oauth_set_client(oauth, argv[3], NULL);
        st = mcpc_oauth_set_client_key(oauth, read_file(argv[4]));
    } else if (strcmp(argv[2], "workload") == 0) {
        mcpc_oauth_set_grant(oauth, MCPC_OAUTH_JWT_BEARER);
        st = mcpc_oauth_set_assertion_callback(oauth, identity_token, NULL, NULL);
    } else if (strcmp(argv[2], "enterprise") == 0 && argc == 5) {
        mcpc_oauth_set_grant(oauth, MCPC_OAUTH_JWT_BEARER);
        mcpc_oauth_set_assertion_callback(oauth, identity_token, NULL, NULL);
        st = mcpc_oauth_set_identity_provider(oauth, argv[3], argv[4]);
    }
    if (st != MCPC_OK) {
        fprintf(stderr, "settings: %s: %s\n", mcpc_status_name(st), mcpc_last_error_message());
        mcpc_oauth_free(oauth);
        return 2;
    }
    mcpc_options_t *opts = mcpc_options_new();
    mcpc_options_set_oauth(opts, oauth);
    mcpc_oauth_free(oauth);

    mcpc_client_t *client = NULL;
    st = mcpc_client_connect_http(argv[1], opts, &client);
    mcpc_options_free(opts);
    if (st != MCPC_OK) {
        fprintf(stderr, "connect: %s: %s\n", mcpc_status_name(st), mcpc_last_error_message());
        return 1;
    }
    mcpc_result_t *result = NULL;
    st = mcpc_client_call_tool(client, "echo", "{\"text\":\"as a service\"}", NULL, &result);
    if (st == MCPC_OK) printf("echo: %s\n", mcpc_result_text(result, NULL));
    mcpc_result_free(result);
    mcpc_client_free(client);
    return st == MCPC_OK ? 0 : 1;
}
