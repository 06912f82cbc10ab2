/* io_atomic.c -- output files that replace their path whole or not at all (fg_out, fg_io.h).
 *
 * A regular file (or a new one) is written to a temporary file beside it, named
 * ".NAME.tmp.PID.K", created with O_EXCL so that two writers never share one; commit flushes and
 * fsyncs it, renames it over the path and fsyncs the directory, so a reader sees either the
 * previous file or the whole new one, also after a crash. On any failure the temporary file is
 * removed and the previous file is left as it was. A symbolic link to a regular file keeps the
 * link: its target is replaced.
 *
 * A path that exists and is not a regular file or a directory (a device such as /dev/null or
 * /dev/full, a fifo, a socket) is written through: opened for writing as it is, never renamed
 * over, every write, flush and close checked (fsync where the object supports it). A directory
 * and an empty path are refused. */
#define _XOPEN_SOURCE 700 /* realpath, with POSIX 2008 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/fg_io.h"

/* At most this many bytes of the file's name go into its temporary's name (NAME_MAX is 255 on
 * the usual file systems; the rest of the temporary's name takes at most 40). */
#define OUT_NAME_KEEP 200
/* Temporary names tried before giving up (each taken one means another writer is there). */
#define OUT_TRIES 100

static void out_reset(fg_out *o) {
  free(o->target);
  free(o->tmp);
  memset(o, 0, sizeof *o);
}

/* fsync errors that mean "this object cannot be synced", not "the data was lost": pipes,
 * character devices and some file systems answer these. */
static int sync_unsupported(int err) {
  return err == EINVAL || err == EROFS || err == ENOTSUP
#if defined(EOPNOTSUPP) && EOPNOTSUPP != ENOTSUP
         || err == EOPNOTSUPP
#endif
      ;
}

/* The directory part of path ("." when it has none) into a malloc'ed string. */
static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  char *d;
  size_t n;
  if (!slash) return strdup(".");
  n = slash == path ? 1 : (size_t)(slash - path); /* "/name": the root */
  d = malloc(n + 1);
  if (d) {
    memcpy(d, path, n);
    d[n] = '\0';
  }
  return d;
}

fg_status fg_out_check(const char *path) {
  fg_status st = FG_OK;
  struct stat sb;
  char *dir = NULL;
  size_t len;
  FG_REQUIRE(path && path[0], FG_ERR_INVALID_ARG, "an empty output file name");
  len = strlen(path);
  FG_REQUIRE(path[len - 1] != '/', FG_ERR_IO, "%s: is a directory, not a file", path);
  if (stat(path, &sb) == 0) {
    FG_REQUIRE(!S_ISDIR(sb.st_mode), FG_ERR_IO, "%s: is a directory, not a file", path);
  } else {
    FG_REQUIRE(errno == ENOENT, FG_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    /* a new file: its directory must be there to hold it */
    dir = dir_of(path);
    FG_REQUIRE(dir, FG_ERR_NOMEM, "out of memory");
    FG_REQUIRE(stat(dir, &sb) == 0, FG_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    FG_REQUIRE(S_ISDIR(sb.st_mode), FG_ERR_IO, "%s: cannot create: %s is not a directory", path,
               dir);
  }
cleanup:
  free(dir);
  return st;
}

fg_status fg_out_open(fg_out *o, const char *path) {
  fg_status st = FG_OK;
  struct stat sb, lsb;
  int fd = -1, exists = 0;
  memset(o, 0, sizeof *o);
  FG_CHECK(fg_out_check(path));
  o->path = path;
  if (stat(path, &sb) == 0) exists = 1;

  if (exists && !S_ISREG(sb.st_mode)) {
    /* a device, fifo or socket: write through it (O_TRUNC means nothing to these) */
    fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    FG_REQUIRE(fd >= 0, FG_ERR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
    o->through = 1;
  } else {
    const char *base;
    char *dir = NULL;
    size_t cap;
    /* a link to a regular file: replace the target, keep the link */
    if (exists && lstat(path, &lsb) == 0 && S_ISLNK(lsb.st_mode)) {
      o->target = realpath(path, NULL);
      FG_REQUIRE(o->target, FG_ERR_IO, "%s: cannot resolve the link: %s", path,
                 strerror(errno));
    } else {
      o->target = strdup(path);
      FG_REQUIRE(o->target, FG_ERR_NOMEM, "out of memory");
    }
    dir = dir_of(o->target);
    FG_REQUIRE(dir, FG_ERR_NOMEM, "out of memory");
    base = strrchr(o->target, '/');
    base = base ? base + 1 : o->target;
    cap = strlen(dir) + OUT_NAME_KEEP + 64;
    o->tmp = malloc(cap);
    if (!o->tmp) free(dir);
    FG_REQUIRE(o->tmp, FG_ERR_NOMEM, "out of memory");
    for (int k = 0; k < OUT_TRIES && fd < 0; k++) {
      snprintf(o->tmp, cap, "%s/.%.*s.tmp.%ld.%d", dir, OUT_NAME_KEEP, base, (long)getpid(), k);
      fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd < 0 && errno != EEXIST) break;
    }
    free(dir);
    if (fd < 0) {
      free(o->tmp);
      o->tmp = NULL; /* nothing of ours to remove */
      FG_FAIL(FG_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    }
    /* the replacement keeps the permissions of the file it replaces (a new one gets 0666 less
     * the umask, as open gave it) */
    if (exists) (void)fchmod(fd, sb.st_mode & 07777);
  }
  o->f = fdopen(fd, "wb");
  FG_REQUIRE(o->f, FG_ERR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
  fd = -1;
cleanup:
  if (st != FG_OK) {
    if (fd >= 0) close(fd);
    if (o->tmp) unlink(o->tmp);
    out_reset(o);
  }
  return st;
}

fg_status fg_out_commit(fg_out *o) {
  fg_status st = FG_OK;
  const char *path = o->path;
  int rc, fd = -1;
  FG_REQUIRE(o->f, FG_ERR_INTERNAL, "fg_out_commit: not open");
  FG_REQUIRE(!ferror(o->f), FG_ERR_IO, "%s: write error", path);
  FG_REQUIRE(fflush(o->f) == 0, FG_ERR_IO, "%s: write error: %s", path, strerror(errno));
  if (fsync(fileno(o->f)) != 0)
    FG_REQUIRE(o->through && sync_unsupported(errno), FG_ERR_IO, "%s: cannot sync: %s", path,
               strerror(errno));
  rc = fclose(o->f);
  o->f = NULL;
  FG_REQUIRE(rc == 0, FG_ERR_IO, "%s: write error on close: %s", path, strerror(errno));
  if (o->through) goto cleanup;

  FG_REQUIRE(rename(o->tmp, o->target) == 0, FG_ERR_IO, "cannot rename %s to %s: %s", o->tmp,
             o->target, strerror(errno));
  free(o->tmp);
  o->tmp = NULL; /* it is the file now: nothing to remove */
  {
    /* the rename is durable once the directory is */
    char *dir = dir_of(o->target);
    FG_REQUIRE(dir, FG_ERR_NOMEM, "out of memory");
    fd = open(dir, O_RDONLY | O_CLOEXEC);
    free(dir);
  }
  if (fd >= 0 && fsync(fd) != 0 && !sync_unsupported(errno))
    FG_FAIL(FG_ERR_IO, "%s: written, but its directory cannot be synced: %s", path,
            strerror(errno));
cleanup:
  if (fd >= 0) close(fd);
  if (st != FG_OK) fg_out_abort(o);
  else out_reset(o);
  return st;
}

void fg_out_abort(fg_out *o) {
  if (o->f) fclose(o->f);
  if (o->tmp) unlink(o->tmp);
  out_reset(o);
}
