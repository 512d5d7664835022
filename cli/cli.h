/* cli.h - what the files of the mcpc command line share. */
#ifndef MCPC_CLI_H
#define MCPC_CLI_H

#include <stdio.h>

/* Writes text that may hold server-controlled bytes, escaping control characters
 * (mcpc.c). */
void put_sanitized(FILE *f, const char *s);

#endif
