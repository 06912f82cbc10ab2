/* fg_registry.h -- the one table of parallel schemes (registry.c): for each, its name, its
 * constructor, the options it accepts, when it is the default, and the functions with which
 * the performance model predicts it. train, info, plan, the memory check and --scheme auto all
 * read it; nothing else compares a scheme's name.
 *
 * Adding a scheme: its file in src/schemes/ (a constructor that fills fg_scheme_ops) and one row
 * in registry.c. A row without a predictor trains and is listed, but `plan` and --scheme auto
 * leave it out.
 */
#ifndef FG_REGISTRY_H
#define FG_REGISTRY_H

#include <stdint.h>

#include "schemes/fg_layouts.h"
#include "schemes/fg_scheme.h"

/* Options a scheme may accept: a bit each. */
enum {
  FG_SOPT_ORDER_RANDOM = 1u << 0,   /* --order random */
  FG_SOPT_ORDER_METIS = 1u << 1,    /* --order metis */
  FG_SOPT_OVERLAP = 1u << 2,        /* --overlap */
  FG_SOPT_REORDER = 1u << 3,        /* --reorder degree|rcm */
  FG_SOPT_AGG_LAST = 1u << 4,       /* --agg-order last */
  FG_SOPT_GRID = 1u << 5,           /* --grid */
  FG_SOPT_DOUBLE_PERM = 1u << 6,    /* --double-perm */
  FG_SOPT_AGG_BLOCKS = 1u << 7,     /* --agg-blocks N > 1 */
  FG_SOPT_LEARN_FEATURES = 1u << 8, /* --learn-features */
  FG_SOPT_AGGREGATION = 1u << 9,    /* --aggregation pre|post|hybrid */
  FG_SOPT_QUANTIZE = 1u << 10,      /* --quantize int8|int4|int2 */
  FG_SOPT_LABEL_PROP = 1u << 11,    /* --label-prop */
  FG_SOPT_REPLICATE = 1u << 12,     /* --replicate c */
  FG_SOPT_COUNT = 13
};

typedef struct fg_scheme_info fg_scheme_info;

/* Predict the epoch time and per-rank memory of one configuration (one entry), or of every
 * grid of a grid scheme, appending to out[*count], on the run's layouts (lay: built there when
 * missing, so the scheme distributes the very layout the model saw). widths: (layers + 1). Not
 * collective. */
typedef fg_status (*fg_scheme_predict_fn)(const fg_dataset *ds, const fg_plan_config *cfg,
                                          const fg_calibration *cal, const int64_t *widths,
                                          const fg_scheme_info *self, fg_layouts *lay,
                                          fg_plan_entry *out, int *count);

/* Rank r's aggregation traffic on a 1D layout (comm_plan.c): rows it sends and receives per
 * aggregation, and messages, given the halo counts. NULL: the scheme has no 1D volume model. */
typedef enum fg_volume_kind {
  FG_VOLUME_NONE = 0, /* no exchange (one process) */
  FG_VOLUME_BCAST,    /* staged broadcasts of whole blocks (1d) */
  FG_VOLUME_HALO,     /* only the referenced rows (1d-sa) */
  FG_VOLUME_COVER     /* a vertex cover of each cut, pre/post/hybrid (halo; fg_halo.h) */
} fg_volume_kind;

struct fg_scheme_info {
  const char *name;
  const char *summary;      /* one line for --help and `plan` */
  fg_status (*create)(fg_dist *d, const fg_dataset *ds, const fg_scheme_config *cfg,
                      fg_scheme **out);
  unsigned options;         /* FG_SOPT_* it accepts */
  int max_ranks;            /* 0: any number */
  int (*is_default)(int ranks); /* the scheme a run with no --scheme takes (NULL: never) */
  fg_scheme_predict_fn predict; /* NULL: not modelled */
  int grid;                 /* its layout is a 3D grid (fg_plan_entry.grid) */
  int replicate;            /* its block rows are replicated c times (fg_plan_entry.replicate):
                               the planner picks c when --replicate is not given */
  fg_volume_kind volume;    /* 1D layouts: how fg_comm_plan counts it */
  int borrows_features;     /* on one process it reads the dataset's features in place (unless
                               they are normalized): the memory budget counts them once */
  int rows16;               /* its aggregation completes rows in one pass (aggregate16_rows;
                               1d-sa not with --overlap): a bf16 model fuses its epilogues
                               there (fg_model_fuse16) */
  int plan_min_ranks;       /* plan and --scheme auto consider it from this many ranks (1d on one
                               rank is serial with copies) */
  const char *default_order; /* the vertex order when --order is not given (NULL: natural);
                               taken only where it is available (METIS found at build time) */
};

int fg_scheme_registry_size(void);
const fg_scheme_info *fg_scheme_registry_at(int i);
/* A row's bit in a mask of rows (1 << its index; 0 for NULL). */
uint32_t fg_scheme_bit(const fg_scheme_info *e);
/* The row called name, or NULL. */
const fg_scheme_info *fg_scheme_lookup(const char *name);
/* "serial, 1d, 1d-sa, 3d": every name, for messages. */
const char *fg_scheme_names(void);

/* The order a run of row e lays its vertices out in: the one given, else the row's default when
 * this build has it, else NULL (natural). */
const char *fg_scheme_order(const fg_scheme_info *e, const char *given);

/* The options a training configuration uses (FG_SOPT_* bits). */
unsigned fg_scheme_options_of(const fg_train_config *cfg);
/* The flag of one option bit ("--grid"). */
const char *fg_scheme_option_flag(unsigned bit);

/* The scheme a run of cfg on `ranks` ranks asks for: its row (NULL for auto) and, for auto,
 * the mask of rows (bit i = row i) that accept every option given and run on that many ranks.
 * Refuses an unknown name, a scheme that does not take a given flag (naming both), a scheme
 * that does not run on that many ranks, and an auto run that no scheme can make. Not
 * collective. */
fg_status fg_scheme_resolve(const char *name, unsigned options, int ranks,
                            const fg_scheme_info **out, uint32_t *candidates);

/* Collective: lay ds out with the scheme cfg->name names (NULL: the default for the ranks of
 * d), ds on rank 0. */
fg_status fg_scheme_create(fg_dist *d, const fg_dataset *ds, const fg_scheme_config *cfg,
                           fg_scheme **out);

#endif /* FG_REGISTRY_H */
