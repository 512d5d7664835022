/*
 * bcryptprimitives.c - ProcessPrng for Wine, which lacks bcryptprimitives.dll (Wine 8):
 * Rust's standard library imports ProcessPrng from it for its random numbers (hash
 * seeds), so without this DLL no Rust program starts under Wine.
 *
 * It is built only into the test folder (build/windows/test/), beside the test
 * programs. Never ship it beside libmcpc.dll or mcpc.exe: a DLL in the program's
 * folder is found before the system's, so on Windows it would shadow the real
 * bcryptprimitives.dll.
 */
#include <windows.h>

/* RtlGenRandom, exported by advapi32 under this name. */
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    /* RtlGenRandom takes a ULONG length: large requests go in pieces. */
    while (len > 0) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!SystemFunction036(data, n))
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
