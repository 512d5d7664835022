/* Start calls without blocking; completions arrive on an mcpc thread. */
#include <pthread.h>
#include <stdio.h>
#include "mcpc.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int pending = 2;

static void on_done(void *userdata, mcpc_status_t status, mcpc_result_t *result, const char *error) {
    const char *label = userdata;
    if (status == MCPC_OK) {
        printf("%s: %s\n", label, mcpc_result_text(result, NULL));
    } else {
        printf("%s: %s\n", label, mcpc_status_name(status));
        fprintf(stderr, "%s: %s\n", label, error);
    }
    mcpc_result_free(result); /* the callback owns the result; NULL is fine */
    pthread_mutex_lock(&lock);
    pending--;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
}

int main(void) {
    const char *argv[] = {"python3", "demo/server.py"};
    mcpc_client_t *client = NULL;
    if (mcpc_client_connect_stdio(argv, 2, NULL, &client) != MCPC_OK) {
        fprintf(stderr, "connect: %s\n", mcpc_last_error_message());
        return 1;
    }
    mcpc_op_t *slow = NULL;
    mcpc_client_call_tool_async(client, "slow", "{\"ms\":60000}", NULL, on_done, "slow", &slow);
    mcpc_client_call_tool_async(client, "echo", "{\"text\":\"hi\"}", NULL, on_done, "echo", NULL);
    mcpc_op_cancel(slow); /* from any thread; the server gets notifications/cancelled */
    mcpc_op_free(slow);   /* freeing the handle does not cancel; the callback still runs once */

    pthread_mutex_lock(&lock);
    while (pending > 0) pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    mcpc_client_free(client);
    return 0;
}
