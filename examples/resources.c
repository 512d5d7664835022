/* Read a resource and get a prompt from the demo server. */
#include <stdio.h>
#include "mcpc.h"

int main(void) {
    const char *argv[] = {"python3", "demo/server.py"};
    mcpc_client_t *client = NULL;
    if (mcpc_client_connect_stdio(argv, 2, NULL, &client) != MCPC_OK) {
        fprintf(stderr, "connect: %s\n", mcpc_last_error_message());
        return 1;
    }

    mcpc_contents_t *contents = NULL;
    mcpc_status_t st = mcpc_client_read_resource(client, "demo://greeting", NULL, &contents);
    if (st == MCPC_OK) {
        for (size_t i = 0; i < mcpc_contents_count(contents); i++) {
            size_t len = 0;
            const char *text = mcpc_contents_text(contents, i, &len);
            if (text) {
                printf("%s (%s): %.*s\n", mcpc_contents_uri(contents, i), mcpc_contents_mime_type(contents, i),
                       (int)len, text);
            } else {
                mcpc_contents_blob(contents, i, &len);
                printf("%s: %zu bytes\n", mcpc_contents_uri(contents, i), len);
            }
        }
        mcpc_contents_free(contents);
    } else {
        fprintf(stderr, "read: %s: %s\n", mcpc_status_name(st), mcpc_last_error_message());
    }

    char *prompt = NULL;
    if (st == MCPC_OK) st = mcpc_client_get_prompt(client, "greet", "{\"who\":\"Ada\"}", NULL, &prompt);
    if (st == MCPC_OK) {
        printf("prompt: %s\n", prompt); /* the GetPromptResult JSON */
        mcpc_string_free(prompt);
    }

    mcpc_client_free(client);
    return st == MCPC_OK ? 0 : 1;
}
