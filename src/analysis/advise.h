/* analysis/advise.h: the advice rule engine. One table of rules (id, type,
 * thresholds, hint); each rule reads the trace model and, when its trigger
 * holds, yields one piece of advice with evidence, a priority and an
 * estimated improvement. */
#ifndef GP_ANALYSIS_ADVISE_H
#define GP_ANALYSIS_ADVISE_H
#include "trace/trace.h"
#include <stddef.h>
#include <stdint.h>

typedef enum gp_priority {
    GP_PRIO_CRITICAL = 0,
    GP_PRIO_HIGH,
    GP_PRIO_MEDIUM,
    GP_PRIO_LOW,
} gp_priority;

/* "critical", "high", "medium", "low". */
const char *gp_priority_name(gp_priority p);

#define GP_ADV_MAX_PARAMS   4
#define GP_ADV_MAX_EVIDENCE 5

typedef struct gp_adv_param {
    const char *name; /* "min_gap_us" (the unit is the suffix) */
    double def;       /* default value */
    const char *help;
} gp_adv_param;

struct gp_adv_ctx;
struct gp_advice;

typedef struct gp_adv_rule {
    const char *id;                         /* "sync-memcpy" */
    const char *type;                       /* "memory-transfer", "synchronization", ... */
    const char *title;                      /* one line: what the rule looks for */
    const char *hint;                       /* how to fix it */
    gp_adv_param params[GP_ADV_MAX_PARAMS]; /* thresholds, NULL-named after the last */
    /* Returns 1 and fills *a when the trigger holds, 0 when not, or a
     * negative GP_E* code. p[i] is the value of params[i]. */
    int (*check)(struct gp_adv_ctx *c, const double *p, struct gp_advice *a);
} gp_adv_rule;

/* The rule table (static, n rules in *n). */
const gp_adv_rule *gp_adv_rules(size_t *n);

/* The unit of an evidence value. */
typedef enum gp_adv_unit {
    GP_ADV_U_NONE = 0, /* a figure of the source without a known unit (counter values) */
    GP_ADV_U_NS,       /* a duration in ns */
    GP_ADV_U_MS,       /* a duration in ms (latency counters) */
    GP_ADV_U_BYTES,
    GP_ADV_U_PCT,   /* a percentage */
    GP_ADV_U_COUNT, /* a number of things (queue length, blocks, calls in a row) */
} gp_adv_unit;

/* "ns", "ms", "bytes", "pct", "count", or NULL for GP_ADV_U_NONE. */
const char *gp_adv_unit_name(gp_adv_unit u);
/* The value with its unit, as every output shows it ("17.600 us",
 * "8.00 MiB", "0.152 %", "18"); "N/A" when the value is NaN. */
const char *gp_adv_value_str(char *buf, size_t n, double value, gp_adv_unit u);

typedef struct gp_adv_evidence {
    char name[160];   /* operation (or span) the evidence is about, truncated */
    uint64_t count;   /* occurrences */
    int64_t time_ns;  /* time involved (GP_NONE when not a time) */
    double value;     /* rule-specific figure in unit; NaN when none */
    gp_adv_unit unit; /* the unit of value */
    char detail[256]; /* torch-compile rules: the reason (graph break, recompile, failure);
                         "" for the other rules */
} gp_adv_evidence;

typedef struct gp_advice {
    const gp_adv_rule *rule;
    gp_priority priority;
    char finding[256];  /* what was found, one line */
    int64_t time_ns;    /* time involved in total (GP_NONE when not a time) */
    int64_t saving_ns;  /* estimated improvement (GP_NONE when it cannot be estimated) */
    double saving_pct;  /* saving_ns as % of the traced span (NaN when unknown) */
    char estimate[160]; /* the estimate in words */
    gp_adv_evidence ev[GP_ADV_MAX_EVIDENCE];
    size_t nev;
} gp_advice;

typedef struct gp_advise_opts {
    /* values[r][i] overrides parameter i of rule r when set[r][i] is 1;
     * NULL arrays = defaults everywhere. enabled[r] == 0 skips rule r
     * (NULL = all enabled). Arrays are indexed like gp_adv_rules(). */
    const double (*values)[GP_ADV_MAX_PARAMS];
    const unsigned char (*set)[GP_ADV_MAX_PARAMS];
    const unsigned char *enabled;
} gp_advise_opts;

typedef struct gp_advice_list {
    gp_advice *v; /* sorted by priority, then estimated saving / time descending */
    size_t n;
    int64_t span_ns;
} gp_advice_list;

/* Runs every enabled trace rule on t (not the "torch-compile" ones).
 * Returns 0 or GP_ENOMEM; free *out with gp_advice_list_free. */
int gp_advise(const gp_trace *t, const gp_advise_opts *o, gp_advice_list *out);

struct gp_tlog;
/* Runs every enabled "torch-compile" rule on the TORCH_TRACE logs
 * logs[0..n) (analysis/advise_compile.c). Returns 0 or GP_ENOMEM; free *out
 * with gp_advice_list_free. */
int gp_advise_compile(const struct gp_tlog *const *logs, size_t n, const gp_advise_opts *o,
                      gp_advice_list *out);
/* The rule type of the torch.compile rules. */
#define GP_ADV_COMPILE_TYPE "torch-compile"
void gp_advice_list_free(gp_advice_list *l);

/* Finds rule id; returns its index or -1. */
int gp_adv_rule_find(const char *id);
/* Finds parameter name of rule r; returns its index or -1. */
int gp_adv_param_find(const gp_adv_rule *r, const char *name);

/* The option values of `gpuprof advise` and the server's /api/advise, one
 * parser for both. A comma list of rule ids: mark[r] = val for each (0, or
 * -1 with msg "unknown rule 'X' (see --list-rules)"). */
int gp_adv_parse_rules(const char *list, unsigned char *mark, unsigned char val, char *msg,
                       size_t mn);
/* "RULE.PARAM=VALUE" (VALUE a non-negative number): values[r][p] = VALUE,
 * set[r][p] = 1 (0, or -1 with msg). */
int gp_adv_parse_set(const char *arg, double (*values)[GP_ADV_MAX_PARAMS],
                     unsigned char (*set)[GP_ADV_MAX_PARAMS], char *msg, size_t mn);

#endif
