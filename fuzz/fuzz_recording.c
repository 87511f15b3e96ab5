/* SPDX-License-Identifier: MIT
 *
 * libFuzzer target: the recording reader (src/sinks/sqlite.c, recording_*) and the summary path behind
 * `jobscope summary` (src/api/replay.c, the model, summary.c) on damaged recordings. The input describes the
 * damage to a real recording (fuzz/seeds/recording.db, written by `jobscope run`): bytes 0..3 (little endian)
 * the length to truncate it to (taken modulo its size + 1, so every length is reachable), then 5-byte records
 * (a 32-bit offset modulo the size, a byte XORed in there). The result is opened, replayed into the model and
 * summarised as JSON and text; it must be read or refused with an error, never crash, hang or leak.
 */
#include "fuzz.h"

#include "api/replay.h"
#include "core/json.h"
#include "model/summary.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static unsigned char *base;
static size_t base_len;
static char path[96];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *seed = getenv("FUZZ_RECORDING_SEED");
    if (!seed)
        seed = FUZZ_SEED_DIR "/recording.db";
    FILE *f = fopen(seed, "rb");
    if (!f)
        abort();
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (n <= 0 || !(base = malloc((size_t)n)) || fread(base, 1, (size_t)n, f) != (size_t)n)
        abort();
    fclose(f);
    base_len = (size_t)n;
    const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(path, sizeof(path), "%s/jobscope-fuzz-rec-%d.db", tmp, (int)getpid());
    return 0;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned char *img;
    if (!img && !(img = malloc(base_len)))
        abort();
    memcpy(img, base, base_len);
    size_t len = base_len;
    if (size >= 4) {
        len = le32(data) % (base_len + 1);
        for (size_t i = 4; i + 5 <= size; i += 5)
            img[le32(data + i) % base_len] ^= data[i + 4];
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || (len && write(fd, img, len) != (ssize_t)len))
        abort();
    close(fd);
    js_recording_t *r = NULL;
    js_model_t *m = NULL;
    char err[1024];
    if (replay_open(path, &r, &m, NULL, NULL, err, sizeof(err)) == 0) {
        js_summary_t su;
        js_run_info_t info;
        replay_summarize(r, path, m, &info, &su);
        js_buf_t b = {0};
        if (summary_json(&b, &info, &su, m) == 0)
            FUZZ_CHECK(b.p != NULL);
        b.len = 0;
        summary_text(&b, &info, &su, m, JS_SUMMARY_FULL);
        b.len = 0;
        summary_text(&b, &info, &su, m, JS_SUMMARY_SHORT);
        buf_free(&b);
        model_free(m);
        recording_close(r);
    } else
        FUZZ_CHECK(err[0] != '\0'); /* a refusal always says why */
    unlink(path);
    return 0;
}
