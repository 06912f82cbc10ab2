/* cli.h -- shared pieces of the fullgraph command-line tool (public API only). */
#ifndef FG_CLI_H
#define FG_CLI_H

#include <stdio.h>

#include "fullgraph.h"

/* The program's whole command line ("fullgraph", "train", ...), as main received it: what a
 * run records (fg_train_config.argc, argv). */
extern int cli_argc;
extern char **cli_argv;

/* Exit codes of the program. */
enum {
  CLI_OK = 0,
  CLI_FAILED = 1,
  CLI_USAGE = 2,
  CLI_STOPPED = 75 /* stopped early on a signal after writing the checkpoint: run it again with
                      --resume (sysexits.h's EX_TEMPFAIL: a temporary failure, to be retried) */
};

typedef enum { OPT_FLAG, OPT_INT, OPT_DOUBLE, OPT_STRING, OPT_U64, OPT_CHOICE } cli_kind;

typedef struct cli_opt {
  const char *name;    /* "--epochs" */
  cli_kind kind;
  void *dest;          /* int* for FLAG/INT/CHOICE, double*, const char**, uint64_t* */
  const char *metavar; /* "N" */
  const char *help;
  const char *const *choices; /* OPT_CHOICE: NULL-terminated names; dest gets the index */
} cli_opt;

/* The --reorder names of train and info (fg_reorder_parse takes them), NULL-terminated. */
extern const char *const cli_reorder_choices[];

typedef struct cli_command {
  const char *name;
  const char *synopsis;   /* "train DATA [options]" */
  const char *summary;
  const cli_opt *opts;
  int nopts;
  int min_pos, max_pos;
} cli_command;

/* Parse argv (after the subcommand). Returns CLI_OK, or CLI_USAGE after printing a message
 * (only when loud), or -1 when --help was printed. Positionals go to pos[0..*npos).
 * Collective over MPI_COMM_WORLD: the ranks compare every option's value and positional, and a
 * rank that differs fails them all (CLI_USAGE, one message from rank 0 naming the option). */
int cli_parse(const cli_command *cmd, int argc, char **argv, const char **pos, int *npos,
              int loud);
/* The --help text of cmd (tools/cli_man.c: under `fullgraph man`, its manual page as roff). */
void cli_print_help(const cli_command *cmd, FILE *out);

/* A subcommand: `fullgraph NAME` runs run(argc, argv, rank) on the arguments after NAME;
 * brief is the NAME line of its manual page. */
typedef struct cli_entry {
  const char *name;
  int (*run)(int argc, char **argv, int rank);
  const char *brief;
} cli_entry;

/* The hidden `fullgraph man [--output FILE] [--date DATE] [COMMAND]`: the manual page of the
 * program (the commands cmds[0..ncmds) listed) or of one command, as roff made from the
 * commands' option tables; `fullgraph man --list` prints the names. Collective. */
int cli_man(int argc, char **argv, int rank, const cli_entry *cmds, int ncmds);

/* Options every command that reads a dataset shares. */
#define CLI_LOAD_OPTS(cfg, directed, keepdup, noloops)                                         \
  {"--directed", OPT_FLAG, &(directed), NULL, "keep edges directed (default: add reverse edges)", NULL}, \
  {"--keep-duplicates", OPT_FLAG, &(keepdup), NULL, "keep duplicate edges of a directed graph", NULL},  \
  {"--no-self-loops", OPT_FLAG, &(noloops), NULL, "do not add a self loop to every node", NULL},        \
  {"--keep-ids", OPT_FLAG, &(cfg).keep_ids, NULL, "SNAP edge list: node i = id i, absent ids as isolated nodes (default: renumber the ids present)", NULL}, \
  {"--split-index", OPT_INT, &(cfg).split_index, "K", "split column K of a multi-split .npz (default 0)", NULL}, \
  {"--split", OPT_STRING, &(cfg).split_name, "NAME", "OGB split folder under split/ (default: the only one)", NULL}, \
  {"--gen-features", OPT_INT, &(cfg).gen_features, "F", "random feature width for graph-only inputs (default 128)", NULL}, \
  {"--gen-classes", OPT_INT, &(cfg).gen_classes, "C", "degree-quantile classes for graph-only inputs (default 32)", NULL}, \
  {"--train-frac", OPT_DOUBLE, &(cfg).train_frac, "X", "generated split: training fraction (default 0.6)", NULL}, \
  {"--valid-frac", OPT_DOUBLE, &(cfg).valid_frac, "X", "generated split: validation fraction (default 0.2)", NULL}

/* "64,32" -> widths[0..n) and *layers = n + 1; prints a message (when loud) and returns
 * CLI_USAGE on anything but positive integers separated by commas. */
int cli_parse_widths(const char *cmd, const char *arg, int *widths, int max, int *layers,
                     int loud);

/* Apply the three negated load flags. */
void cli_apply_load_flags(fg_load_config *cfg, int directed, int keepdup, int noloops);

/* Rank 0 loads; all ranks agree on the outcome. Returns the status; *ds only on rank 0. */
fg_status cli_load(MPI_Comm comm, const char *path, const fg_load_config *cfg, fg_dataset **ds);

/* The exit code of a check made before loading: CLI_USAGE for a bad option (FG_ERR_INVALID_ARG,
 * FG_ERR_UNSUPPORTED), CLI_FAILED for anything else (a path that cannot be written). */
int cli_check_exit_code(fg_status st);
/* --threads N: CLI_OK when 1 <= N <= fg_max_threads_allowed(), else CLI_USAGE (message when
 * loud). */
int cli_check_threads(const char *cmd, int threads, int loud);
/* SIGUSR1 and SIGTERM ask a training run to stop after its epoch (fg_request_stop); a second
 * signal of the same kind ends the process. cli_stop_signals_block, called before any other
 * thread starts (before MPI_Init), blocks them in every thread and starts the one thread that
 * takes them; cli_catch_stop_signals arms it (without it: installs a handler). */
void cli_stop_signals_block(void);
void cli_catch_stop_signals(void);

/* Print "fullgraph: error: ..." for a failed status (rank 0 only). */
void cli_report(int rank, const char *what, fg_status st);

int cmd_train(int argc, char **argv, int rank);
int cmd_info(int argc, char **argv, int rank);
int cmd_generate(int argc, char **argv, int rank);
int cmd_prepare(int argc, char **argv, int rank);
int cmd_bench(int argc, char **argv, int rank);
int cmd_plan(int argc, char **argv, int rank);
int cmd_report(int argc, char **argv, int rank);

#endif /* FG_CLI_H */
