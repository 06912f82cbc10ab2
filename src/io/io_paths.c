/* io_paths.c -- the paths a run reads and writes, checked before any data is read: an output's
 * directory exists and is writable, a directory or an empty path is never an output, an input
 * is a readable file, and no output lands on the path of another use (two outputs, or an
 * output over an input). A typo in a directory name fails in a fraction of a second, not after
 * the last epoch. */
#define _DEFAULT_SOURCE /* realpath */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fg_core.h"
#include "fullgraph.h"

/* The directory part of path ("." for a bare name) into out. */
static void dir_of(const char *path, char *out, size_t cap) {
  const char *slash = strrchr(path, '/');
  if (!slash) {
    snprintf(out, cap, ".");
  } else if (slash == path) {
    snprintf(out, cap, "/");
  } else {
    snprintf(out, cap, "%.*s", (int)(slash - path), path);
  }
}

static int writes(const fg_path_use *u) {
  return u->kind == FG_PATH_OUTPUT || u->kind == FG_PATH_CHECKPOINT;
}

/* A sharded checkpoint's directory (a checkpoint path ending in '/'): an existing directory we
 * may write in, or a new one whose parent exists and lets us make it (it is made at the first
 * checkpoint, not here). */
static fg_status check_checkpoint_dir(const fg_path_use *u) {
  fg_status st = FG_OK;
  struct stat sb;
  char name[PATH_MAX], dir[PATH_MAX];
  size_t n = strlen(u->path);
  if (stat(u->path, &sb) == 0) {
    FG_REQUIRE(S_ISDIR(sb.st_mode), FG_ERR_INVALID_ARG, "%s %s: is not a directory", u->flag,
               u->path);
    FG_REQUIRE(access(u->path, W_OK | X_OK) == 0, FG_ERR_IO, "%s %s: cannot write in it: %s",
               u->flag, u->path, strerror(errno));
    return FG_OK;
  }
  FG_REQUIRE(errno == ENOENT, FG_ERR_IO, "%s %s: %s", u->flag, u->path, strerror(errno));
  while (n > 1 && u->path[n - 1] == '/') n--;
  FG_REQUIRE(n < sizeof name, FG_ERR_INVALID_ARG, "%s %s: the name is too long", u->flag,
             u->path);
  snprintf(name, sizeof name, "%.*s", (int)n, u->path);
  dir_of(name, dir, sizeof dir);
  FG_REQUIRE(stat(dir, &sb) == 0, FG_ERR_IO, "%s %s: directory %s: %s", u->flag, u->path, dir,
             strerror(errno));
  FG_REQUIRE(S_ISDIR(sb.st_mode), FG_ERR_IO, "%s %s: %s is not a directory", u->flag, u->path,
             dir);
  FG_REQUIRE(access(dir, W_OK | X_OK) == 0, FG_ERR_IO, "%s %s: cannot make it in %s: %s",
             u->flag, u->path, dir, strerror(errno));
cleanup:
  return st;
}

static fg_status check_output(const fg_path_use *u) {
  fg_status st = FG_OK;
  struct stat sb;
  char dir[PATH_MAX];
  FG_REQUIRE(u->path[0] != '\0', FG_ERR_INVALID_ARG, "%s: the path is empty", u->flag);
  if (u->kind == FG_PATH_CHECKPOINT && u->path[strlen(u->path) - 1] == '/')
    return check_checkpoint_dir(u);
  if (stat(u->path, &sb) == 0) {
    FG_REQUIRE(!S_ISDIR(sb.st_mode), FG_ERR_INVALID_ARG, "%s %s: is a directory; name a file in "
               "it%s", u->flag, u->path, u->kind == FG_PATH_CHECKPOINT
                   ? ", or end the name with '/' for a sharded checkpoint in it" : "");
    /* a device or a pipe is written through, never replaced; a regular file must be writable
     * (it is replaced by a new file, so it is its directory that must let us) */
    if (!S_ISREG(sb.st_mode)) {
      FG_REQUIRE(access(u->path, W_OK) == 0, FG_ERR_IO, "%s %s: cannot write: %s", u->flag,
                 u->path, strerror(errno));
      return FG_OK;
    }
  } else {
    FG_REQUIRE(errno == ENOENT, FG_ERR_IO, "%s %s: %s", u->flag, u->path, strerror(errno));
  }
  dir_of(u->path, dir, sizeof dir);
  FG_REQUIRE(stat(dir, &sb) == 0, FG_ERR_IO, "%s %s: directory %s: %s", u->flag, u->path, dir,
             strerror(errno));
  FG_REQUIRE(S_ISDIR(sb.st_mode), FG_ERR_IO, "%s %s: %s is not a directory", u->flag, u->path,
             dir);
  FG_REQUIRE(access(dir, W_OK | X_OK) == 0, FG_ERR_IO, "%s %s: cannot write in %s: %s", u->flag,
             u->path, dir, strerror(errno));
cleanup:
  return st;
}

static fg_status check_input(const fg_path_use *u) {
  fg_status st = FG_OK;
  struct stat sb;
  FG_REQUIRE(u->path[0] != '\0', FG_ERR_INVALID_ARG, "%s: the path is empty", u->flag);
  FG_REQUIRE(stat(u->path, &sb) == 0, FG_ERR_IO, "%s %s: %s", u->flag, u->path, strerror(errno));
  if (u->kind == FG_PATH_RESUME && S_ISDIR(sb.st_mode)) {
    /* a sharded checkpoint: a directory is one only when it holds a manifest */
    char m[PATH_MAX];
    const size_t n = strlen(u->path);
    FG_REQUIRE((size_t)snprintf(m, sizeof m, "%s%smanifest", u->path,
                                u->path[n - 1] == '/' ? "" : "/") < sizeof m,
               FG_ERR_INVALID_ARG, "%s %s: the name is too long", u->flag, u->path);
    FG_REQUIRE(stat(m, &sb) == 0 && S_ISREG(sb.st_mode), FG_ERR_INVALID_ARG,
               "%s %s: a directory without a manifest, not a checkpoint", u->flag, u->path);
    FG_REQUIRE(access(m, R_OK) == 0, FG_ERR_IO, "%s %s: cannot read: %s", u->flag, m,
               strerror(errno));
    return FG_OK;
  }
  FG_REQUIRE(u->kind == FG_PATH_INPUT || !S_ISDIR(sb.st_mode), FG_ERR_INVALID_ARG,
             "%s %s: is a directory, not a file", u->flag, u->path);
  FG_REQUIRE(access(u->path, R_OK) == 0, FG_ERR_IO, "%s %s: cannot read: %s", u->flag, u->path,
             strerror(errno));
cleanup:
  return st;
}

/* 1 when a and b name one file: the same inode where both exist, else the same directory
 * (compared by inode) and the same last component. */
static int same_file(const char *a, const char *b) {
  struct stat sa, sb;
  char da[PATH_MAX], db[PATH_MAX];
  const char *ba = strrchr(a, '/'), *bb = strrchr(b, '/');
  const int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
  /* a device or pipe is written through, not replaced: several outputs may share /dev/null */
  if (ea && eb) return S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (ea != eb) return 0;
  ba = ba ? ba + 1 : a;
  bb = bb ? bb + 1 : b;
  if (strcmp(ba, bb) != 0) return 0;
  dir_of(a, da, sizeof da);
  dir_of(b, db, sizeof db);
  if (stat(da, &sa) != 0 || stat(db, &sb) != 0) return strcmp(da, db) == 0;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* 1 when `path` names an existing file inside the directory tree `dir` (a dataset's folder). */
static int inside_dir(const char *dir, const char *path) {
  char rd[PATH_MAX], rp[PATH_MAX];
  struct stat sb;
  size_t n;
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) return 0;
  if (!realpath(dir, rd) || !realpath(path, rp)) return 0;
  n = strlen(rd);
  return strncmp(rd, rp, n) == 0 && (rp[n] == '/' || (n == 1 && rd[0] == '/'));
}

fg_status fg_check_paths(const fg_path_use *uses, int n) {
  fg_status st = FG_OK;
  for (int i = 0; i < n; i++) {
    const fg_path_use *u = &uses[i];
    if (!u->path) continue;
    if (writes(u))
      FG_CHECK(check_output(u));
    else
      FG_CHECK(check_input(u));
  }
  /* an output may not share its file with any other use (a checkpoint may be the file it
   * resumes from: FG_PATH_RESUME against FG_PATH_CHECKPOINT is the one pair allowed) */
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      const fg_path_use *u = &uses[i], *v = &uses[j];
      const int allowed = (u->kind == FG_PATH_CHECKPOINT && v->kind == FG_PATH_RESUME) ||
                          (u->kind == FG_PATH_RESUME && v->kind == FG_PATH_CHECKPOINT);
      if (!u->path || !v->path || allowed) continue;
      if (!writes(u) && !writes(v)) continue;
      FG_REQUIRE(!same_file(u->path, v->path), FG_ERR_INVALID_ARG,
                 "%s and %s name the same file (%s): one would overwrite the other", u->flag,
                 v->flag, u->path);
      FG_REQUIRE(!(writes(v) && u->kind == FG_PATH_INPUT && inside_dir(u->path, v->path)) &&
                     !(writes(u) && v->kind == FG_PATH_INPUT && inside_dir(v->path, u->path)),
                 FG_ERR_INVALID_ARG, "%s %s would overwrite a file of %s %s",
                 writes(u) ? u->flag : v->flag, writes(u) ? u->path : v->path,
                 writes(u) ? v->flag : u->flag, writes(u) ? v->path : u->path);
    }
cleanup:
  return st;
}
