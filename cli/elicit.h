/* elicit.h - --elicit and --elicit-json: a server's elicitation answered on this
 * terminal (prompts on stderr, answers from stdin). */
#ifndef MCPC_CLI_ELICIT_H
#define MCPC_CLI_ELICIT_H

#include "mcpc.h"

/* The elicitation handler of --elicit: a form asked field by field, a URL shown and
 * consent asked. `userdata` is unused. Consumes `input`. */
void elicit_by_field(void *userdata, mcpc_input_t *input);

/* The handler of --elicit-json: a form answered with one JSON object on one line
 * (for scripts), a URL as with --elicit. Consumes `input`. */
void elicit_json_line(void *userdata, mcpc_input_t *input);

#endif
