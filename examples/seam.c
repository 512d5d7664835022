/* Carry MCP over a channel the host owns: here, pipes to a server process that the
 * host started itself. mcpc calls send() for each outgoing message; the host
 * delivers each message it reads with mcpc_transport_deliver, from its own thread. */
#define _GNU_SOURCE
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "mcpc.h"

extern char **environ;

struct channel {
    int to_server;
    FILE *from_server;
    mcpc_transport_t *transport;
};

static int32_t on_send(void *userdata, const char *data, size_t len) {
    struct channel *ch = userdata;
    /* This channel frames messages by lines. */
    if (write(ch->to_server, data, len) != (ssize_t)len || write(ch->to_server, "\n", 1) != 1) return 1;
    return 0;
}

static void on_close(void *userdata) {
    struct channel *ch = userdata;
    close(ch->to_server);
}

static void *read_loop(void *arg) {
    struct channel *ch = arg;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, ch->from_server)) > 0) {
        mcpc_transport_deliver(ch->transport, line, (size_t)n - 1);
    }
    mcpc_transport_end(ch->transport, "server closed the channel");
    free(line);
    return NULL;
}

int main(void) {
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) return 1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addclose(&fa, in[1]);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    char *argv[] = {"python3", "demo/server.py", NULL};
    pid_t pid;
    if (posix_spawnp(&pid, "python3", &fa, NULL, argv, environ) != 0) return 1;
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);

    struct channel ch = {in[1], fdopen(out[0], "r"), NULL};
    mcpc_transport_new(on_send, on_close, &ch, NULL, &ch.transport);
    pthread_t reader;
    pthread_create(&reader, NULL, read_loop, &ch);

    mcpc_client_t *client = NULL;
    if (mcpc_client_connect_transport(ch.transport, NULL, &client) == MCPC_OK) {
        mcpc_result_t *result = NULL;
        if (mcpc_client_call_tool(client, "echo", "{\"text\":\"over the seam\"}", NULL, &result) == MCPC_OK) {
            printf("echo: %s\n", mcpc_result_text(result, NULL));
        }
        mcpc_result_free(result);
    } else {
        fprintf(stderr, "connect: %s\n", mcpc_last_error_message());
    }
    mcpc_client_free(client);     /* runs on_close: the server sees EOF and exits */
    waitpid(pid, NULL, 0);
    pthread_join(reader, NULL);
    fclose(ch.from_server);
    mcpc_transport_free(ch.transport);
    return client ? 0 : 1;
}
