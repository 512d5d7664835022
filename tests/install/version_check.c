/* mcpc_version() equals the header's MCPC_VERSION macros and Cargo.toml's version
 * (passed as CARGO_VERSION by tests/install/test_install.sh). */
#include <stdio.h>
#include <string.h>
#include "mcpc.h"

#define STR2(x) #x
#define STR(x) STR2(x)

int main(void) {
    const char *lib = mcpc_version();
    const char *joined = STR(MCPC_VERSION_MAJOR) "." STR(MCPC_VERSION_MINOR) "." STR(MCPC_VERSION_PATCH);
    int bad = 0;
    if (strcmp(lib, MCPC_VERSION) != 0) {
        printf("mcpc_version() %s != MCPC_VERSION %s\n", lib, MCPC_VERSION);
        bad = 1;
    }
    if (strcmp(lib, joined) != 0) {
        printf("mcpc_version() %s != MAJOR.MINOR.PATCH %s\n", lib, joined);
        bad = 1;
    }
    if (strcmp(lib, CARGO_VERSION) != 0) {
        printf("mcpc_version() %s != Cargo.toml %s\n", lib, CARGO_VERSION);
        bad = 1;
    }
    if (!bad) printf("version %s\n", lib);
    return bad;
}
