/* Test scaffolding for the Wine suite only, never shipped: Rust's standard library imports
 * ProcessPrng from bcryptprimitives.dll (Windows 10 and later), which Wine 8.0 lacks. This
 * DLL, put in a test prefix's system32, gives it: random bytes from SystemFunction036
 * (RtlGenRandom, advapi32), as Windows' own does from the same source. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
