/*
 * client.h - from a parsed command line to a connected client (connect.c), and
 * the command run on it (commands.c).
 */
#ifndef MCPC_CLI_CLIENT_H
#define MCPC_CLI_CLIENT_H

#include "mcpc.h"

#include "cli.h"
#include "options.h"
#include "store.h"

/* What the library can check without starting or connecting to anything: the URL
 * policy and the call's arguments. Returns -1 to go on, or EXIT_USAGE. */
int check_before_start(const struct config *cfg);

/* Builds the client options, with the OAuth settings of --oauth, which take the
 * store (*store is NULL then). Returns -1 with *out set, or an exit status. */
int make_options(const struct config *cfg, struct store **store, mcpc_options_t **out);

/* Connects as configured; returns -1 with *out_client set, or an exit status. */
int connect_client(const struct config *cfg, const struct words *server_argv,
                   const mcpc_options_t *opts, mcpc_client_t **out_client);

/* The skills commands (skills.c). */
int cmd_skills(const mcpc_client_t *client, const mcpc_call_opts_t *call_opts);
int cmd_skill(const mcpc_client_t *client, const mcpc_call_opts_t *call_opts, const char *name,
              const char *file);

/* Tasks (tasks.c): the call options of --task, --task-timeout and --detach (with the
 * callback that shows each status change on stderr); for a call that ended with `st`,
 * the reference printed after --detach (its exit status), or -1 to report `st` as
 * usual; and the resume command. */
void task_options(mcpc_call_opts_t *opts, const struct config *cfg);
int task_detached(mcpc_status_t st);
int cmd_resume(const mcpc_client_t *client, const mcpc_call_opts_t *call_opts, const char *reference);

/* MCP Apps (apps.c): the tools' views, and one view with its policy; add_tool_ui
 * appends tool i's {"view": URI or null, "visibility": [...]} (false when out of
 * memory). */
bool add_tool_ui(struct buf *b, const mcpc_tool_list_t *list, size_t i);
int cmd_views(const mcpc_client_t *client, const mcpc_call_opts_t *call_opts);
int cmd_view(const mcpc_client_t *client, const mcpc_call_opts_t *call_opts, const char *uri);

/* Prints a tool call's result (or reports its failure) and frees it; returns the exit status. */
int print_call_result(mcpc_status_t st, mcpc_result_t *result);

/* --config without --server (host.c): every server of the file behind one host, and
 * cfg->command (tools, call or status) on it; returns the exit status. */
int run_host(const struct config *cfg, const mcpc_options_t *opts, const mcpc_call_opts_t *call_opts);

/* Runs cfg->command on the client and prints its result; returns the exit status. */
int run_command(const mcpc_client_t *client, const mcpc_call_opts_t *call_opts, const struct config *cfg);

#endif
