/* Answer a server's elicitation: the handler gets each request as a handle. */
#include <stdio.h>
#include "mcpc.h"

/* Runs on an mcpc thread, once per request; it may block (ask a user) or keep the
 * handle and answer later, from any thread. */
static void on_elicit(void *userdata, mcpc_input_t *input) {
    (void)userdata;
    printf("%s asks: %s\n", mcpc_input_server(input), mcpc_input_message(input));
    if (mcpc_input_kind(input) == MCPC_INPUT_ELICIT_FORM) {
        /* Checked against mcpc_input_schema_json(input) before it is sent. */
        if (mcpc_input_elicit(input, MCPC_ELICIT_ACCEPT, "{\"name\":\"Ada\"}") != MCPC_OK)
            fprintf(stderr, "answer: %s\n", mcpc_last_error_message());
    } else {
        mcpc_input_elicit(input, MCPC_ELICIT_DECLINE, NULL);
    }
    mcpc_input_free(input); /* always, answered or not */
}

int main(void) {
    const char *argv[] = {"python3", "demo/server.py", "--era", "modern"};
    mcpc_options_t *opts = mcpc_options_new();
    mcpc_options_set_elicitation_handler(opts, MCPC_ELICIT_MODE_FORM, on_elicit, NULL, NULL);
    mcpc_client_t *client = NULL;
    mcpc_status_t st = mcpc_client_connect_stdio(argv, 4, opts, &client);
    mcpc_options_free(opts);
    if (st != MCPC_OK) {
        fprintf(stderr, "connect: %s\n", mcpc_last_error_message());
        return 1;
    }
    mcpc_result_t *result = NULL;
    if (mcpc_client_call_tool(client, "wants_input", NULL, NULL, &result) == MCPC_OK)
        printf("wants_input: %s\n", mcpc_result_text(result, NULL));
    mcpc_result_free(result);
    mcpc_client_free(client);
    return 0;
}
