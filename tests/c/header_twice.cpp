// The header compiles as C++ and survives a double include.
#include "mcpc.h"
#include "mcpc.h"

int main() {
    mcpc_call_opts_t opts;
    mcpc_call_opts_init(&opts);
    return mcpc_status_name(MCPC_OK) == nullptr ? 1 : 0;
}
