/* cli_args.c -- option parsing shared by the subcommands. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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

int cli_parse(const cli_command *cmd, int argc, char **argv, const char **pos, int *npos,
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

void cli_print_help(const cli_command *cmd, FILE *out) {
  fprintf(out, "usage: fullgraph %s\n\n%s\n\noptions:\n", cmd->synopsis, cmd->summary);
  for (int i = 0; i < cmd->nopts; i++) {
    const cli_opt *o = &cmd->opts[i];
    char left[64];
    snprintf(left, sizeof left, "%s%s%s", o->name, o->metavar ? " " : "",
             o->metavar ? o->metavar : "");
    fprintf(out, "  %-28s %s", left, o->help);
    if (o->kind == OPT_CHOICE) {
      fprintf(out, " [");
      for (int j = 0; o->choices[j]; j++) fprintf(out, "%s%s", j ? "|" : "", o->choices[j]);
      fprintf(out, "]");
    }
    fputc('\n', out);
  }
  fprintf(out, "  %-28s %s\n", "--help", "show this help");
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

const char *const cli_reorder_choices[] = {"auto", "none", "degree", "rcm", NULL};
