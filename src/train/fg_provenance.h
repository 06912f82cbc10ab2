/* fg_provenance.h -- the run record (provenance.c): one line of JSON saying what ran, from what
 * build, with which options, where and on which data. fg_train writes it as a line of its
 * metrics file, beside every .npy output (NAME.npy.json) and as the "run" section of its
 * checkpoints; fg_last_run_record() hands it to the caller. Its fields: README, "The metrics
 * file". */
#ifndef FG_PROVENANCE_H
#define FG_PROVENANCE_H

#include <stdint.h>
#include <time.h>

#include "core/fg_core.h"
#include "graph/fg_graph.h"

/* What the record says beyond the configuration: facts of the run that fg_train learns from the
 * communicator, the scheme it chose and the model it built. */
typedef struct fg_run_facts {
  int ranks, threads;
  const char *const *hosts;   /* (n_hosts) distinct host names, in rank order of first use */
  int n_hosts;
  const char *scheme;         /* the scheme run (never "auto") */
  const int *grid;            /* a grid scheme's X, Y, Z; NULL for the others */
  int replicate;              /* 1.5d's c; 0 for the others */
  const char *order;          /* the vertex order laid out (NULL: natural) */
  const char *reorder;        /* serial: the locality order applied (NULL: none) */
  const char *model, *adj_norm, *norm; /* the model's effective kind and normalizations */
  int gin_eps_learn;
  double gin_eps;
  int layers;                 /* the model's stack layers */
  const int64_t *widths;      /* (layers + 1): input, hidden..., classes */
  int start_epoch;            /* the checkpoint's epoch on resume, else 0 */
  time_t started;             /* when fg_train began */
  const fg_plan_entry *predicted; /* the performance model's pick, when it chose; else NULL */
  const char *task, *metric;  /* the effective --task and --metric (NULL: multiclass, accuracy) */
  double load_seconds;        /* the caller's load of the dataset (fg_train_config) */
  double setup_seconds;       /* fg_train's entry to its layout, distribution (or each rank's
                                 reads of a prepared directory) and model done, max over ranks */
  const int64_t *setup_peak_rss; /* (ranks) each rank's peak resident bytes then; NULL: none */
} fg_run_facts;

/* The record as one line of JSON ({"run": {...}}, no newline) into *out (malloc'd). ds may be
 * NULL (the dataset's fields are then null). Not collective. */
fg_status fg_run_record_format(const fg_train_config *cfg, const fg_dataset *ds,
                               const fg_run_facts *facts, char **out);

/* Collective: every rank's host name (gethostname), the distinct ones in rank order of first
 * appearance into rank 0's *hosts (n of them; free with fg_run_hosts_free); the other ranks get
 * NULL and 0. */
fg_status fg_run_hosts(MPI_Comm comm, char ***hosts, int *n);
void fg_run_hosts_free(char **hosts, int n);

/* Make record this process's fg_last_run_record() (taking ownership; NULL forgets it). */
void fg_run_record_keep(char *record);

/* s as a JSON string ("..." with quote, backslash and control characters escaped, bytes that
 * are not UTF-8 as \u00XX), appended to the buffer; exposed for the tests. Returns the bytes
 * written, as snprintf would (cap may be 0). */
size_t fg_json_escape(const char *s, char *out, size_t cap);

#endif /* FG_PROVENANCE_H */
