/* SPDX-License-Identifier: MIT
 *
 * Helpers shared by the libFuzzer targets in fuzz/ (see fuzz/README.md): the input as a NUL-terminated string
 * (the parsers take text the kernel hands back, which is NUL-terminated by fs_read), a selector byte that
 * picks one parser of a family, and a sample with every registered table for the parsers that append rows.
 */
#ifndef JOBSCOPE_FUZZ_H
#define JOBSCOPE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* fuzz_text: a malloc'd NUL-terminated copy of data[0..size) (the caller frees). Aborts when out of memory.
 */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *t = malloc(size + 1);
    if (!t)
        abort();
    if (size)
        memcpy(t, data, size);
    t[size] = '\0';
    return t;
}

/* FUZZ_CHECK: an invariant of the code under test; a violation is a finding (abort, so libFuzzer saves it).
 */
#define FUZZ_CHECK(c)                                                                                        \
    do {                                                                                                     \
        if (!(c))                                                                                            \
            abort();                                                                                         \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#endif
