/* cli_args.c -- option parsing shared by the subcommands. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int parse_args(const cli_command *cmd, int argc, char **argv, const char **pos, int *npos,
                      int loud);

static const cli_opt *find_opt(const cli_command *cmd, const char *name, size_t len) {
  for (int i = 0; i < cmd->nopts; i++)
    if (strlen(cmd->opts[i].name) == len && strncmp(cmd->opts[i].name, name, len) == 0)
      return &cmd->opts[i];
  return NULL;
}

static int parse_value(const cli_command *cmd, const cli_opt *o, const char *v, int loud) {
  char *end = NULL;
  errno = 0;
  switch (o->kind) {
    case OPT_INT: {
      long x = strtol(v, &end, 10);
      if (errno || end == v || *end || x < INT_MIN || x > INT_MAX) goto bad;
      *(int *)o->dest = (int)x;
      return CLI_OK;
    }
    case OPT_DOUBLE: {
      double x = strtod(v, &end);
      if (errno || end == v || *end) goto bad;
      *(double *)o->dest = x;
      return CLI_OK;
    }
    case OPT_U64: {
      unsigned long long x;
      if (*v == '-') goto bad;
      x = strtoull(v, &end, 10);
      if (errno || end == v || *end) goto bad;
      *(uint64_t *)o->dest = (uint64_t)x;
      return CLI_OK;
    }
    case OPT_STRING:
      *(const char **)o->dest = v;
      return CLI_OK;
    case OPT_CHOICE:
      for (int i = 0; o->choices[i]; i++)
        if (strcmp(o->choices[i], v) == 0) {
          *(int *)o->dest = i;
          return CLI_OK;
        }
      if (loud) {
        fprintf(stderr, "fullgraph %s: %s must be one of:", cmd->name, o->name);
        for (int i = 0; o->choices[i]; i++) fprintf(stderr, " %s", o->choices[i]);
        fprintf(stderr, " (got '%s')\n", v);
      }
      return CLI_USAGE;
    case OPT_FLAG:
      break;
  }
bad:
  if (loud)
    fprintf(stderr, "fullgraph %s: %s expects %s, got '%s'\n", cmd->name, o->name,
            o->kind == OPT_INT ? "an integer" : o->kind == OPT_U64 ? "a non-negative integer"
                                                                   : "a number",
            v);
  return CLI_USAGE;
}

/* Option i's value (i < nopts) or positional i - nopts as text, as the run will use it. */
static void option_text(const cli_command *cmd, int i, const char **pos, int npos, char *out,
                        size_t cap) {
  const cli_opt *o;
  if (i >= cmd->nopts) {
    snprintf(out, cap, "%s", i - cmd->nopts < npos ? pos[i - cmd->nopts] : "");
    return;
  }
  o = &cmd->opts[i];
  switch (o->kind) {
    case OPT_FLAG: snprintf(out, cap, "%s", *(const int *)o->dest ? "on" : "off"); break;
    case OPT_INT: snprintf(out, cap, "%d", *(const int *)o->dest); break;
    case OPT_DOUBLE: snprintf(out, cap, "%.17g", *(const double *)o->dest); break;
    case OPT_U64: snprintf(out, cap, "%" PRIu64, *(const uint64_t *)o->dest); break;
    case OPT_CHOICE: snprintf(out, cap, "%s", o->choices[*(const int *)o->dest]); break;
    case OPT_STRING: {
      const char *v = *(const char *const *)o->dest;
      snprintf(out, cap, "%s", v ? v : "(not given)");
      break;
    }
  }
}

static uint64_t text_hash(const char *s) { /* FNV-1a, 64 bits */
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Collective over MPI_COMM_WORLD: every rank must have parsed the same command line (an MPMD
 * launch `mpirun -n 2 fullgraph … : -n 2 fullgraph …` can give ranks different options, which
 * would corrupt a run or hang it). Returns rc when all agree, else CLI_USAGE everywhere with one
 * message from rank 0 naming the option. */
static int agree_on_options(const cli_command *cmd, int rc, const char **pos, int npos) {
  int rank = 0, size = 1, n = cmd->nopts + cmd->max_pos, code = rc == CLI_OK ? 0 : rc == -1 ? 1 : 2;
  struct { int value, rank; } mine, lo, hi;
  uint64_t *h0 = NULL;
  char text[512];
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) return rc; /* a command run without MPI (report, started alone) */
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size == 1) return rc;
  mine.value = code;
  mine.rank = rank;
  MPI_Allreduce(&mine, &lo, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &hi, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
  if (lo.value != hi.value) {
    if (rank == 0)
      fprintf(stderr, "fullgraph %s: error: the ranks were started with different command lines "
              "(rank %d's %s, rank %d's %s); start every rank with the same options\n",
              cmd->name, lo.rank, lo.value == 0 ? "parses" : "asks for --help", hi.rank,
              hi.value == 2 ? "does not parse" : "asks for --help");
    return CLI_USAGE;
  }
  if (code != 0) return rc;
  h0 = malloc((size_t)n * sizeof *h0);
  if (!h0) MPI_Abort(MPI_COMM_WORLD, CLI_FAILED);
  for (int i = 0; i < n; i++) {
    option_text(cmd, i, pos, npos, text, sizeof text);
    h0[i] = text_hash(text);
  }
  MPI_Bcast(h0, n, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  mine.value = INT_MAX;
  for (int i = 0; i < n && mine.value == INT_MAX; i++) {
    option_text(cmd, i, pos, npos, text, sizeof text);
    if (text_hash(text) != h0[i]) mine.value = i;
  }
  free(h0);
  MPI_Allreduce(&mine, &lo, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
  if (lo.value == INT_MAX) return CLI_OK;
  /* the lowest rank that differs sends its text of the first option that differs to rank 0 */
  if (rank == lo.rank) {
    option_text(cmd, lo.value, pos, npos, text, sizeof text);
    MPI_Send(text, (int)sizeof text, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
  } else if (rank == 0) {
    char mine_text[sizeof text];
    MPI_Recv(text, (int)sizeof text, MPI_CHAR, lo.rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    text[sizeof text - 1] = '\0';
    option_text(cmd, lo.value, pos, npos, mine_text, sizeof mine_text);
    if (lo.value < cmd->nopts)
      fprintf(stderr, "fullgraph %s: error: the ranks disagree on %s: rank 0 has '%s', rank %d "
              "has '%s'; start every rank with the same options\n", cmd->name,
              cmd->opts[lo.value].name, mine_text, lo.rank, text);
    else
      fprintf(stderr, "fullgraph %s: error: the ranks disagree on argument %d: rank 0 has '%s', "
              "rank %d has '%s'; start every rank with the same options\n", cmd->name,
              lo.value - cmd->nopts + 1, mine_text, lo.rank, text);
  }
  return CLI_USAGE;
}

int cli_parse(const cli_command *cmd, int argc, char **argv, const char **pos, int *npos,
              int loud) {
  const int rc = parse_args(cmd, argc, argv, pos, npos, loud);
  return agree_on_options(cmd, rc, pos, *npos);
}

static int parse_args(const cli_command *cmd, int argc, char **argv, const char **pos, int *npos,
                      int loud) {
  *npos = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      if (loud) cli_print_help(cmd, stdout);
      return -1;
    }
    if (strncmp(a, "--", 2) == 0 && a[2]) {
      const char *eq = strchr(a, '=');
      size_t len = eq ? (size_t)(eq - a) : strlen(a);
      const cli_opt *o = find_opt(cmd, a, len);
      const char *v;
      int rc;
      if (!o) {
        if (loud)
          fprintf(stderr, "fullgraph %s: unknown option '%.*s' (see 'fullgraph %s --help')\n",
                  cmd->name, (int)len, a, cmd->name);
        return CLI_USAGE;
      }
      if (o->kind == OPT_FLAG) {
        if (eq) {
          if (loud) fprintf(stderr, "fullgraph %s: %s takes no value\n", cmd->name, o->name);
          return CLI_USAGE;
        }
        *(int *)o->dest = 1;
        continue;
      }
      if (eq) {
        v = eq + 1;
      } else {
        if (i + 1 >= argc) {
          if (loud)
            fprintf(stderr, "fullgraph %s: %s needs a value (%s)\n", cmd->name, o->name,
                    o->metavar ? o->metavar : "VALUE");
          return CLI_USAGE;
        }
        v = argv[++i];
      }
      rc = parse_value(cmd, o, v, loud);
      if (rc != CLI_OK) return rc;
      continue;
    }
    if (a[0] == '-' && a[1] && a[1] != '-' ) {
      if (loud)
        fprintf(stderr, "fullgraph %s: unknown option '%s' (see 'fullgraph %s --help')\n",
                cmd->name, a, cmd->name);
      return CLI_USAGE;
    }
    if (*npos >= cmd->max_pos) {
      if (loud)
        fprintf(stderr, "fullgraph %s: unexpected argument '%s' (see 'fullgraph %s --help')\n",
                cmd->name, a, cmd->name);
      return CLI_USAGE;
    }
    pos[(*npos)++] = a;
  }
  if (*npos < cmd->min_pos) {
    if (loud)
      fprintf(stderr, "fullgraph %s: missing argument; usage: fullgraph %s\n", cmd->name,
              cmd->synopsis);
    return CLI_USAGE;
  }
  return CLI_OK;
}

int cli_parse_widths(const char *cmd, const char *arg, int *widths, int max, int *layers,
                     int loud) {
  const char *s = arg;
  int n = 0;
  while (*s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < 1 || v > (1 << 24) || n >= max) break;
    widths[n++] = (int)v;
    s = end;
    if (*s == ',' && s[1]) s++;
    else if (*s) break;
  }
  if (*s || n == 0) {
    if (loud)
      fprintf(stderr, "fullgraph %s: --widths expects positive integers like 64,32, got '%s'\n",
              cmd, arg);
    return CLI_USAGE;
  }
  *layers = n + 1;
  return CLI_OK;
}

void cli_apply_load_flags(fg_load_config *cfg, int directed, int keepdup, int noloops) {
  if (directed) cfg->undirected = 0;
  if (keepdup) cfg->dedup = 0;
  if (noloops) cfg->self_loops = 0;
}

fg_status cli_load(MPI_Comm comm, const char *path, const fg_load_config *cfg, fg_dataset **ds) {
  int rank = 0;
  fg_status st = FG_OK;
  MPI_Comm_rank(comm, &rank);
  *ds = NULL;
  if (rank == 0) st = fg_dataset_load(path, cfg, ds);
  return fg_agree(comm, st);
}

void cli_report(int rank, const char *what, fg_status st) {
  if (rank != 0 || st == FG_OK) return;
  fprintf(stderr, "fullgraph %s: error: %s\n", what, fg_last_error());
  if (getenv("FULLGRAPH_TRACE"))
    fprintf(stderr, "  (%s; raised at %s)\n", fg_status_string(st), fg_last_error_trace());
}

int cli_check_exit_code(fg_status st) {
  return st == FG_OK                                               ? CLI_OK
         : st == FG_ERR_INVALID_ARG || st == FG_ERR_UNSUPPORTED ? CLI_USAGE
                                                                   : CLI_FAILED;
}

int cli_check_threads(const char *cmd, int threads, int loud) {
  if (threads >= 1 && threads <= fg_max_threads_allowed()) return CLI_OK;
  if (loud)
    fprintf(stderr, "fullgraph %s: --threads must be in [1, %d] on this machine, got %d\n", cmd,
            fg_max_threads_allowed(), threads);
  return CLI_USAGE;
}

/* SIGTERM and SIGUSR1 are taken by one thread of their own, never by a computing one: a signal
 * delivered asynchronously to a thread inside an optimized kernel (oneDNN's sgemm, seen in
 * faults_test about one run in ten) corrupted the heap, which a handler that only sets a flag
 * cannot cause unless the interrupted code keeps data below its stack pointer. Blocked in main
 * before MPI and OpenMP start any thread, the signals stay blocked in every thread they start;
 * stop_signal_waiter alone takes them with sigwait. Until cmd_train arms it a signal ends the
 * process as it would have; armed, the first of a kind asks for a stop and the second ends. */
static sigset_t stop_signals;
static _Atomic int stop_armed, stop_waiting;

static void end_by_signal(int sig) {
  sigset_t one;
  signal(sig, SIG_DFL);
  sigemptyset(&one);
  sigaddset(&one, sig);
  pthread_sigmask(SIG_UNBLOCK, &one, NULL);
  raise(sig); /* the default action: the process ends */
}

static void *stop_signal_waiter(void *arg) {
  int seen_term = 0, seen_usr1 = 0, sig = 0;
  (void)arg;
  for (;;) {
    if (sigwait(&stop_signals, &sig) != 0) continue;
    int *seen = sig == SIGTERM ? &seen_term : &seen_usr1;
    if (!stop_armed || *seen) end_by_signal(sig);
    *seen = 1;
    fg_request_stop();
  }
  return NULL;
}

void cli_stop_signals_block(void) {
  pthread_t t;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGUSR1);
  if (pthread_sigmask(SIG_BLOCK, &stop_signals, NULL) != 0) return;
  if (pthread_create(&t, NULL, stop_signal_waiter, NULL) != 0) {
    pthread_sigmask(SIG_UNBLOCK, &stop_signals, NULL); /* cli_catch_stop_signals handles them */
    return;
  }
  pthread_detach(t);
  stop_waiting = 1;
}

static void on_stop_signal(int sig) {
  (void)sig;
  fg_request_stop();
}

void cli_catch_stop_signals(void) {
  struct sigaction sa;
  if (stop_waiting) {
    stop_armed = 1;
    return;
  }
  /* no waiting thread (a caller that skipped cli_stop_signals_block): a handler */
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  /* SA_RESETHAND: a second signal of the same kind ends the process as it would have */
  sa.sa_flags = SA_RESTART | SA_RESETHAND;
  sigaction(SIGUSR1, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

const char *const cli_reorder_choices[] = {"auto", "none", "degree", "rcm", NULL};
