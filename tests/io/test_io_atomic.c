/* test_io_atomic.c -- output files (fg_out, io_atomic.c) and the writers that use them: a
 * regular file is replaced whole or not at all (a failure anywhere, a write cut short by the
 * file size limit included, leaves the previous file as it was and no temporary behind), keeps
 * its permissions and its symbolic link; a device or fifo is written through and stays what it
 * is (/dev/full's error reported); a directory or an empty name is refused, nothing created. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/fg_io.h"
#include "testutil.h"

static char tmpdir[256];

static const char *path_in(const char *name) {
  static char bufs[4][512];
  static int next = 0;
  char *p = bufs[next];
  next = (next + 1) % 4;
  snprintf(p, sizeof bufs[0], "%s/%s", tmpdir, name);
  return p;
}

static void put_text(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
    perror(path);
    exit(1);
  }
}

/* 1 if path holds exactly text */
static int holds(const char *path, const char *text) {
  char buf[256] = {0};
  FILE *f = fopen(path, "rb");
  size_t got;
  if (!f) return 0;
  got = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  return got == strlen(text) && memcmp(buf, text, got) == 0;
}

/* Entries of the test directory (. and .. not counted); *hidden: those starting with a dot,
 * which is how a temporary file would show. */
static int entries(int *hidden) {
  DIR *d = opendir(tmpdir);
  struct dirent *e;
  int n = 0;
  *hidden = 0;
  if (!d) return -1;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    n++;
    if (e->d_name[0] == '.') ++*hidden;
  }
  closedir(d);
  return n;
}

static fg_status write_text(const char *path, const char *text) {
  fg_status st;
  fg_out o;
  st = fg_out_open(&o, path);
  if (st != FG_OK) return st;
  if (fputs(text, o.f) < 0) {
    fg_out_abort(&o);
    return FG_ERR_IO;
  }
  return fg_out_commit(&o);
}

static void test_regular(void) {
  struct stat sb;
  int hidden;
  mode_t mask = umask(022);
  fg_out o;
  /* a new file: whole, no temporary left, 0666 less the umask */
  EXPECT_OK(write_text(path_in("new.txt"), "first"));
  EXPECT(holds(path_in("new.txt"), "first"));
  EXPECT(stat(path_in("new.txt"), &sb) == 0 && (sb.st_mode & 0777) == 0644);
  EXPECT(entries(&hidden) == 1 && hidden == 0);
  /* replaced: the new content, the old file's permissions */
  EXPECT(chmod(path_in("new.txt"), 0600) == 0);
  EXPECT_OK(write_text(path_in("new.txt"), "second"));
  EXPECT(holds(path_in("new.txt"), "second"));
  EXPECT(stat(path_in("new.txt"), &sb) == 0 && (sb.st_mode & 0777) == 0600);
  /* while it is being written, the old file is there as it was; abort leaves it so */
  EXPECT_OK(fg_out_open(&o, path_in("new.txt")));
  EXPECT(o.tmp && !o.through);
  fputs("half of a thi", o.f);
  fflush(o.f);
  EXPECT(holds(path_in("new.txt"), "second"));
  EXPECT(entries(&hidden) == 2 && hidden == 1); /* the temporary, beside it, hidden */
  fg_out_abort(&o);
  EXPECT(holds(path_in("new.txt"), "second"));
  EXPECT(entries(&hidden) == 1 && hidden == 0);
  fg_out_abort(&o); /* twice is harmless */
  /* a symbolic link keeps being a link; its target is replaced */
  EXPECT(symlink("new.txt", path_in("link.txt")) == 0);
  EXPECT_OK(write_text(path_in("link.txt"), "through the link"));
  EXPECT(lstat(path_in("link.txt"), &sb) == 0 && S_ISLNK(sb.st_mode));
  EXPECT(holds(path_in("new.txt"), "through the link"));
  unlink(path_in("link.txt"));
  unlink(path_in("new.txt"));
  umask(mask);
}

static void test_refused(void) {
  int hidden;
  EXPECT(mkdir(path_in("dir"), 0700) == 0);
  EXPECT(write_text(path_in("dir"), "x") == FG_ERR_IO);
  EXPECT(fg_test_error_contains("dir: is a directory"));
  EXPECT(fg_out_check(path_in("dir")) == FG_ERR_IO);
  EXPECT(write_text(path_in("nothing/"), "x") == FG_ERR_IO);
  EXPECT(fg_test_error_contains("nothing/: is a directory"));
  EXPECT(write_text("", "x") == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("empty output file name"));
  EXPECT(write_text(path_in("none/x.npy"), "x") == FG_ERR_IO);
  EXPECT(fg_test_error_contains("none/x.npy: cannot create: No such file or directory"));
  /* what a run checks before its first epoch: a new file's directory is there too */
  EXPECT(fg_out_check(path_in("none/x.npy")) == FG_ERR_IO);
  EXPECT(fg_test_error_contains("none/x.npy: cannot create: No such file or directory"));
  EXPECT(fg_out_check(path_in("dir/x.npy")) == FG_OK && fg_out_check("x.npy") == FG_OK);
  put_text(path_in("plain"), "");
  EXPECT(fg_out_check(path_in("plain/x.npy")) == FG_ERR_IO);
  unlink(path_in("plain"));
  /* nothing was created: the directory alone */
  EXPECT(entries(&hidden) == 1 && hidden == 0);
  rmdir(path_in("dir"));
}

/* Devices and fifos are written through and stay what they are. The devices are made here
 * (mknod: root only) rather than touching /dev. */
static void test_through(void) {
  struct stat sb;
  float x[1000] = {0};
  int64_t ids[3] = {1, 2, 3};
  pid_t pid;
  int status = -1;
  if (mknod(path_in("full"), S_IFCHR | 0666, makedev(1, 7)) == 0) {
    EXPECT(fg_npy_write_f32(path_in("full"), x, 1000, 1) == FG_ERR_IO);
    EXPECT(fg_test_error_contains("full: write error: No space left on device"));
    EXPECT(fg_npy_write_i64(path_in("full"), ids, 3) == FG_ERR_IO); /* caught at the flush */
    EXPECT(fg_test_error_contains("No space left on device"));
    EXPECT(fg_write_snap(path_in("full"), ids, ids, 3, NULL) == FG_ERR_IO);
    EXPECT(stat(path_in("full"), &sb) == 0 && S_ISCHR(sb.st_mode));
    unlink(path_in("full"));
  }
  if (mknod(path_in("null"), S_IFCHR | 0666, makedev(1, 3)) == 0) {
    EXPECT_OK(fg_npy_write_f32(path_in("null"), x, 1000, 1));
    EXPECT_OK(fg_write_snap(path_in("null"), ids, ids, 3, "c"));
    EXPECT(stat(path_in("null"), &sb) == 0 && S_ISCHR(sb.st_mode));
    unlink(path_in("null"));
  }
  /* a fifo: a child reads what goes through and exits with the byte count's low bits */
  EXPECT(mkfifo(path_in("fifo"), 0600) == 0);
  fflush(NULL);
  pid = fork();
  if (pid == 0) {
    char buf[4096];
    size_t got, total = 0;
    FILE *f = fopen(path_in("fifo"), "rb");
    if (!f) _exit(255);
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) total += got;
    fclose(f);
    _exit((int)(total == 128 + 4000 ? 0 : 1));
  }
  EXPECT(pid > 0);
  EXPECT_OK(fg_npy_write_f32(path_in("fifo"), x, 1000, 1)); /* 128-byte header, 4000 bytes */
  EXPECT(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT(stat(path_in("fifo"), &sb) == 0 && S_ISFIFO(sb.st_mode));
  unlink(path_in("fifo"));
}

/* A write that fails midway (the file size limit: EFBIG, as a full disk would fail it) leaves
 * the previous file whole and no temporary, for each writer. */
static void test_failed_rewrite(void) {
  enum { N = 20000 };
  static float x[N];
  static int64_t s[N], d[N];
  static const char *const names[4] = {"p.npy", "i.npy", "e.txt", "e.txt.gz"};
  struct rlimit old, small;
  int hidden;
  for (int i = 0; i < N; i++) {
    x[i] = (float)i;
    s[i] = i;
    d[i] = (i * 7919) % N;
  }
  for (int k = 0; k < 4; k++) put_text(path_in(names[k]), "the previous, good file");
  EXPECT(getrlimit(RLIMIT_FSIZE, &old) == 0);
  small = old;
  small.rlim_cur = 4096; /* bytes: each write below needs more */
  signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails with EFBIG instead of a signal */
  EXPECT(setrlimit(RLIMIT_FSIZE, &small) == 0);
  EXPECT(fg_npy_write_f32(path_in(names[0]), x, N, 1) == FG_ERR_IO);
  EXPECT(fg_test_error_contains("p.npy: write error: File too large"));
  EXPECT(fg_npy_write_i64(path_in(names[1]), s, N) == FG_ERR_IO);
  EXPECT(fg_write_snap(path_in(names[2]), s, d, N, NULL) == FG_ERR_IO);
  EXPECT(fg_write_snap(path_in(names[3]), s, d, N, NULL) == FG_ERR_IO);
  EXPECT(setrlimit(RLIMIT_FSIZE, &old) == 0);
  signal(SIGXFSZ, SIG_DFL);
  for (int k = 0; k < 4; k++) {
    EXPECT_MSG(holds(path_in(names[k]), "the previous, good file"), "%s", names[k]);
    unlink(path_in(names[k]));
  }
  EXPECT(entries(&hidden) == 0);
  /* the same writes without the limit succeed */
  EXPECT_OK(fg_npy_write_f32(path_in(names[0]), x, N, 1));
  EXPECT_OK(fg_write_snap(path_in(names[3]), s, d, N, NULL));
  unlink(path_in(names[0]));
  unlink(path_in(names[3]));
}

int main(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/fg_test_atomic_XXXXXX");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  test_regular();
  test_refused();
  test_through();
  test_failed_rewrite();
  rmdir(tmpdir);
  EXPECT_MSG(!fg_test_exists(tmpdir), "files left in %s", tmpdir);
  return fg_test_finish("test_io_atomic");
}
