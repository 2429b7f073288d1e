/* analysis/calltree.h: slice nesting per track (who encloses whom, with
 * partial overlaps clipped to the parent) and the merged call tree behind the
 * flame graph: CPU stacks per thread with GPU work attached under its launch. */
#ifndef GP_ANALYSIS_CALLTREE_H
#define GP_ANALYSIS_CALLTREE_H
#include "core/error.h"
#include "core/hash.h"
#include "core/strtab.h"
#include "core/vec.h"
#include "trace/trace.h"
#include <stdint.h>

/* ---- nesting ---------------------------------------------------------- */

/* One selected slice in nesting order (ts ascending, longer first). */
typedef struct gp_nest_item {
    uint32_t slice;  /* index into trace->slices */
    uint32_t parent; /* index into gp_nesting.items of the enclosing item, or GP_NO_INDEX */
    int64_t end;     /* end in ns, clipped to the parent's end */
    uint32_t depth;  /* 0 for top-level items */
} gp_nest_item;

typedef struct gp_nesting {
    gp_nest_item *items; /* grouped by track, in track order */
    size_t n;
    size_t *track_first; /* [trace->tracks.n + 1]: items of track k are [first[k], first[k+1]) */
    size_t ntracks;
    uint64_t clipped; /* items whose end was clipped to their parent's */
} gp_nesting;

/* Bit for kind k in a kind mask. */
#define GP_KIND_BIT(k) (1u << (k))
/* CPU-side kinds: everything that is not GPU work nor the profiler's span. */
unsigned gp_kind_mask_cpu(void);
/* GPU work drawn in flame graphs and activity: kernels, copies, sets, CL commands. */
unsigned gp_kind_mask_gpu_work(void);

/* Nests every slice whose kind is in kind_mask (dur >= 0) per track. A slice
 * that starts inside an open one is its child; one that outlives its parent
 * is clipped to the parent's end (counted in ->clipped), so the result is
 * always properly nested. Returns 0 or GP_ENOMEM; free with gp_nesting_free. */
int gp_nesting_build(const gp_trace *t, unsigned kind_mask, gp_nesting *out);
void gp_nesting_free(gp_nesting *n);

/* ---- merged call tree (flame graph) ----------------------------------- */

typedef enum gp_frame_kind {
    GP_FK_ROOT = 0,
    GP_FK_THREAD,  /* a CPU thread, a GPU stream root or a trace file */
    GP_FK_CPU,     /* operators, ranges, python functions */
    GP_FK_RUNTIME, /* runtime/driver API calls (launches) */
    GP_FK_GPU,     /* kernels, copies, memsets on the GPU */
    GP_FK_GROUP,   /* several small GPU frames merged */
} gp_frame_kind;

typedef struct gp_fnode {
    uint32_t name;                      /* id in gp_ftree.names */
    uint32_t parent;                    /* GP_NO_INDEX for the root */
    uint32_t first_child, next_sibling; /* GP_NO_INDEX terminated */
    uint32_t depth;                     /* root 0 */
    uint8_t kind;                       /* gp_frame_kind */
    int64_t self;                       /* weight not in children */
    int64_t total;                      /* self + children (valid after gp_ftree_finish) */
} gp_fnode;

typedef struct gp_ftree {
    gp_strtab *names;
    int owns_names;         /* 0 when names is shared with the tree this one was pruned from */
    GP_VEC(gp_fnode) nodes; /* node 0 is the root; a child's index > its parent's */
    uint64_t *slots;        /* (parent, name, kind) index: (node + 1) << 32 | hash tag */
    size_t cap, used;
    size_t indexed;   /* nodes [1, indexed) are in the index; the rest are added lazily */
    const char *unit; /* "ns" or "samples" (static) */
    uint64_t clipped; /* slices clipped while nesting */
    uint64_t gpu_attached, gpu_unattributed; /* GPU slices under a launch / not */
} gp_ftree;

/* Initialises an empty tree with its root; returns 0 or GP_ENOMEM. Free with gp_ftree_fini. */
int gp_ftree_init(gp_ftree *f, const char *unit);
void gp_ftree_fini(gp_ftree *f);
/* Returns the child of parent named name[0..n) of the given kind, creating
 * it when absent; GP_NO_INDEX on out of memory. */
uint32_t gp_ftree_child(gp_ftree *f, uint32_t parent, const char *name, size_t n, int kind);
/* Computes totals (and depths) from self weights. */
void gp_ftree_finish(gp_ftree *f);
static inline const char *gp_ftree_name(const gp_ftree *f, uint32_t node)
{
    return gp_strtab_get(f->names, f->nodes.v[node].name);
}

/* Adds the call tree of trace t: one frame per CPU thread with its nested
 * slices (weights: self time in ns), and every GPU work slice under the
 * runtime call with the same correlation id (weight: its GPU duration), or
 * under "GPU <device> stream <id>" when no launch is found. `prefix` (may be
 * NULL) adds a frame above the threads (used to tell traces apart).
 * Call gp_ftree_finish afterwards. Returns 0 or GP_ENOMEM. */
int gp_ftree_add_trace(gp_ftree *f, const gp_trace *t, const char *prefix);

/* Initialises f (unit ns) and adds the call trees of the n traces, each
 * under a frame named by its file's base name when n > 1, then finishes it.
 * Returns 0 or GP_ENOMEM (f is then released). */
int gp_ftree_build_traces(gp_ftree *f, gp_trace *const *t, size_t n);

/* Adds folded stacks ("a;b;c 123" lines, as written by stackcollapse-*,
 * perf, py-spy, flamegraph.pl) from data[0..n). Count may have a fraction,
 * which is rounded. Blank lines and lines starting with '#' are skipped.
 * The whole input is parsed first (frames interned once), so on an error the
 * tree is unchanged. Lines are then sorted by their frames (name order) and
 * merged with prefix reuse: new frames are appended in pre-order with each
 * node's new children in name order, without hashing.
 * Returns 0, or GP_EPARSE with err "NAME:LINE: ..." / GP_ENOMEM. */
int gp_ftree_add_folded(gp_ftree *f, const char *data, size_t n, const char *name, gp_err *err);

typedef struct gp_ftree_prune_opts {
    int64_t min_total;       /* frames with total below this fold into their parent */
    uint32_t max_depth;      /* frames deeper fold into their ancestor (0 = no limit) */
    int64_t group_gpu_below; /* GPU frames below this merge into one group (0 = off) */
} gp_ftree_prune_opts;

/* Builds in *out (initialised here) a copy of finished tree `in` with the
 * pruning applied; weight is never lost (it moves to the ancestor kept).
 * out shares in's name table (in must outlive out; a group name may be
 * added to it). Returns 0 or GP_ENOMEM. out is finished. */
int gp_ftree_prune(gp_ftree *in, const gp_ftree_prune_opts *o, gp_ftree *out);

/* The smallest total weight such that at most max_nodes frames have a total
 * at least that large (0 when the tree has no more than max_nodes frames). */
int64_t gp_ftree_threshold_for(const gp_ftree *f, size_t max_nodes);

/* The tree to draw: `tree` itself when no pruning option is set, else the
 * pruned copy built in *prt; its children are sorted. *use is set to tree
 * or prt (the caller calls gp_ftree_fini(prt) when *use == prt). Returns 0
 * or GP_ENOMEM (nothing to release then). */
int gp_ftree_select(gp_ftree *tree, const gp_ftree_prune_opts *o, gp_ftree *prt, gp_ftree **use);

/* Sorts every node's children by name, then kind (flamegraph.pl order);
 * lists already in order are left as they are. Returns 0 or GP_ENOMEM. */
int gp_ftree_sort_children(gp_ftree *f);

#endif
