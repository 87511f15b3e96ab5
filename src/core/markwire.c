/* SPDX-License-Identifier: MIT
 *
 * Encoding and decoding of mark packets (see markwire.h).
 */
#include "core/markwire.h"

#include <errno.h>
#include <string.h>

static void put16(unsigned char *p, uint16_t v)
{
    memcpy(p, &v, sizeof(v));
}

static void put32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, sizeof(v));
}

static void put64(unsigned char *p, int64_t v)
{
    memcpy(p, &v, sizeof(v));
}

static uint16_t get16(const unsigned char *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static int64_t get64(const unsigned char *p)
{
    int64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

int markwire_encode(const markwire_t *m, unsigned char *buf, size_t cap)
{
    if (m->kind < 0 || m->kind >= MARKWIRE_KIND_MAX || !m->name || m->name_len == 0 ||
        m->name_len > MARKWIRE_NAME_MAX || m->data_len > MARKWIRE_DATA_MAX ||
        m->host_len > MARKWIRE_HOST_MAX || (m->data_len && !m->data) || (m->host_len && !m->host))
        return -EINVAL;
    size_t len = MARKWIRE_HDR + m->name_len + m->host_len + m->data_len;
    if (len > cap)
        return -EINVAL;
    buf[0] = 'J';
    buf[1] = 'S';
    buf[2] = MARKWIRE_VERSION;
    buf[3] = (unsigned char)m->kind;
    put32(buf + 4, (uint32_t)m->rank);
    put64(buf + 8, m->t_mono_ns);
    put64(buf + 16, m->t_unix_ns);
    put32(buf + 24, m->tid);
    put32(buf + 28, m->dropped);
    put16(buf + 32, (uint16_t)m->name_len);
    put16(buf + 34, (uint16_t)m->data_len);
    buf[36] = (unsigned char)m->host_len;
    buf[37] = buf[38] = buf[39] = 0;
    unsigned char *p = buf + MARKWIRE_HDR;
    memcpy(p, m->name, m->name_len);
    p += m->name_len;
    if (m->host_len)
        memcpy(p, m->host, m->host_len);
    p += m->host_len;
    if (m->data_len)
        memcpy(p, m->data, m->data_len);
    return (int)len;
}

int markwire_decode(const unsigned char *p, size_t len, markwire_t *ret)
{
    if (len < MARKWIRE_HDR || p[0] != 'J' || p[1] != 'S' || p[2] != MARKWIRE_VERSION ||
        p[3] >= MARKWIRE_KIND_MAX)
        return -EPROTO;
    size_t nl = get16(p + 32), dl = get16(p + 34), hl = p[36];
    if (nl == 0 || nl > MARKWIRE_NAME_MAX || dl > MARKWIRE_DATA_MAX || MARKWIRE_HDR + nl + hl + dl != len)
        return -EPROTO;
    const char *s = (const char *)p + MARKWIRE_HDR;
    if (memchr(s, '\0', nl + hl + dl)) /* the strings are stored as text */
        return -EPROTO;
    ret->kind = p[3];
    ret->rank = (int32_t)get32(p + 4);
    ret->t_mono_ns = get64(p + 8);
    ret->t_unix_ns = get64(p + 16);
    ret->tid = get32(p + 24);
    ret->dropped = get32(p + 28);
    ret->name = s;
    ret->name_len = nl;
    ret->host = s + nl;
    ret->host_len = hl;
    ret->data = s + nl + hl;
    ret->data_len = dl;
    return 0;
}

const char *markwire_kind_name(int kind)
{
    static const char *const names[MARKWIRE_KIND_MAX] = {"begin", "end", "event"};
    return kind >= 0 && kind < MARKWIRE_KIND_MAX ? names[kind] : NULL;
}
