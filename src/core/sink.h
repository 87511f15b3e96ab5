/* SPDX-License-Identifier: MIT
 *
 * Live sinks: everything a running monitor hands each sample to, in order, after the model has consumed it —
 * the SQLite recording, the terminal status line, the Prometheus endpoint and textfile, and the phases'
 * listeners. A sink sees the raw sample and the model (its derived views are built on demand, model/part.h).
 * A sink must return quickly: work that can block (network clients, a slow disk) runs on the sink's own
 * thread, fed from a copy made here. A failing sink is counted and keeps being called; it never stops
 * sampling or the other sinks. Marks (phases and events, sent by the job) reach every sink that takes them.
 */
#ifndef JOBSCOPE_SINK_H
#define JOBSCOPE_SINK_H

#include "core/sample.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct js_model js_model_t;

/* A mark sent by the monitored job (jobscope mark, libjobscope, the Python module). Its kinds have the
 * values of the wire protocol (core/markwire.h). */
typedef enum {
    JS_MARK_BEGIN, /* a phase begins */
    JS_MARK_END,   /* a phase ends */
    JS_MARK_EVENT, /* a point event */
    JS_MARK_KIND_MAX
} js_mark_kind_t;

typedef struct {
    js_mark_kind_t kind;
    int64_t t_mono_ns, t_unix_ns; /* when the sender made it */
    int64_t seq;                  /* the sample it falls before (the next sample's number) */
    int32_t pid;                  /* sender's PID (as the monitor sees it, from the kernel), 0 if unknown */
    int32_t tid;                  /* sender's thread, as the sender says */
    uint32_t uid;                 /* sender's UID (from the kernel) */
    int32_t rank;                 /* MPI rank from the sender's environment, -1 if none */
    uint32_t sender_dropped;      /* marks the sender dropped before this one (its queue was full) */
    const char *name;             /* phase or event name, as sent (escaped on output), NUL-terminated */
    const char *host;             /* sender's host name, or NULL */
    const char *data; /* valid JSON given with it (text that was not JSON: as a JSON string), or NULL */
} js_mark_t;

/* One sample, as a sink receives it. */
typedef struct {
    int64_t seq;
    const js_sample_t *sample; /* raw rows of every table */
    js_model_t *model;         /* derived figures; model_view() builds views on demand */
    bool final;                /* the closing sample */
} js_sink_sample_t;

typedef struct js_live_sink {
    const char *name;
    /* durable: this sink is the recording; its write time and failures are what the `self` source records */
    bool durable;
    /* sample: take one sample. Returns 0 or -errno (counted; the sink keeps being called). */
    int (*sample)(void *state, const js_sink_sample_t *ev);
    /* mark: take one mark (may be NULL). Returns 0 or -errno. */
    int (*mark)(void *state, const js_mark_t *mark);
    /* stop: monitoring has ended; flush what is buffered (may be NULL). The owner frees the state. */
    int (*stop)(void *state);
    /* lost: samples the sink took and then could not keep (may be NULL: its failed calls): the recording
     * commits a second's samples together, and a commit that fails loses them all */
    uint64_t (*lost)(void *state);
} js_live_sink_t;

#define JS_SINKS_MAX 8

/* A sink attached to a monitor, with its running figures. */
typedef struct {
    const js_live_sink_t *sink;
    void *state;     /* borrowed from the caller */
    int64_t last_ns; /* duration of its last sample() */
    uint64_t errors; /* failed calls */
    int first_rc;    /* the first failure, 0 if none */
} js_sink_slot_t;

#endif
