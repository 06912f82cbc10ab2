/* core.c -- status messages, allocation, clocks. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include "core/fg_core.h"
#include "core/fg_build_info.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#ifndef FG_VERSION
#define FG_VERSION "0.1.0"
#endif

static _Thread_local char fg_err_msg[2048];
static _Thread_local char fg_err_trace[1024];
static _Thread_local int fg_err_adopted;

const char *fg_status_string(fg_status st) {
  switch (st) {
    case FG_OK: return "ok";
    case FG_ERR_INVALID_ARG: return "invalid argument";
    case FG_ERR_IO: return "I/O error";
    case FG_ERR_FORMAT: return "malformed input";
    case FG_ERR_NOMEM: return "out of memory";
    case FG_ERR_UNSUPPORTED: return "unsupported";
    case FG_ERR_MPI: return "MPI error";
    case FG_ERR_NUMERIC: return "numerical error";
    case FG_ERR_INTERNAL: return "internal error";
    case FG_ERR_MEMLIMIT: return "memory limit exceeded";
    case FG_ERR_REMOTE: return "failure on another rank";
    case FG_STOPPED: return "stopped on request";
  }
  return "unknown status";
}

const char *fg_last_error(void) { return fg_err_msg; }
const char *fg_last_error_trace(void) { return fg_err_trace; }
const char *fg_version_string(void) { return FG_VERSION; }
const char *fg_build_commit(void) { return fg_build_commit_text; }
int fg_build_dirty(void) { return fg_build_dirty_flag; }
const char *fg_build_options(void) {
  return "openmp "
#ifdef _OPENMP
         "on"
#else
         "off"
#endif
         ", metis "
#ifdef FG_HAVE_METIS
         "on"
#else
         "off"
#endif
         ", zoltan "
#ifdef FG_HAVE_ZOLTAN
         "on"
#else
         "off"
#endif
      ;
}

fg_status fg_error_set(fg_status code, const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(fg_err_msg, sizeof fg_err_msg, fmt, ap);
  va_end(ap);
  snprintf(fg_err_trace, sizeof fg_err_trace, "%s:%d", file, line);
  fg_err_adopted = 0;
  return code;
}

void fg_error_trace(const char *file, int line) {
  size_t used = strlen(fg_err_trace);
  if (used + 8 < sizeof fg_err_trace)
    snprintf(fg_err_trace + used, sizeof fg_err_trace - used, " <- %s:%d", file, line);
}

void fg_error_clear(void) {
  fg_err_msg[0] = '\0';
  fg_err_trace[0] = '\0';
  fg_err_adopted = 0;
}

void fg_error_adopt(fg_status code, const char *msg) {
  snprintf(fg_err_msg, sizeof fg_err_msg, "%s", msg);
  fg_err_adopted = 1;
}

int fg_error_is_adopted(void) { return fg_err_adopted; }

/* Bytes fg_printable writes for byte b. */
static size_t printable_width(unsigned char b) {
  return b == '\\' ? 2 : b >= 0x20 && b < 0x7f ? 1 : 4;
}

const char *fg_printable(const char *s, size_t n, char *out, size_t cap) {
  static const char hex[] = "0123456789abcdef";
  static const char ellipsis[] = "\xe2\x80\xa6"; /* U+2026 in UTF-8 */
  const size_t dots = sizeof ellipsis - 1;
  size_t total = 0, used = 0;
  if (cap == 0) return out;
  for (size_t i = 0; i < n && total < cap; i++) total += printable_width((unsigned char)s[i]);
  const int cut = total > cap - 1;
  /* what the characters may take: all of it, or what leaves room for the ellipsis */
  const size_t limit = cut && cap - 1 >= dots ? cap - 1 - dots : cap - 1;
  for (size_t i = 0; i < n; i++) {
    const unsigned char b = (unsigned char)s[i];
    const size_t len = printable_width(b);
    if (used + len > limit) break;
    if (len == 1) {
      out[used] = (char)b;
    } else if (len == 2) {
      out[used] = out[used + 1] = '\\';
    } else {
      out[used] = '\\';
      out[used + 1] = 'x';
      out[used + 2] = hex[b >> 4];
      out[used + 3] = hex[b & 15];
    }
    used += len;
  }
  if (cut && cap - 1 >= dots) {
    memcpy(out + used, ellipsis, dots);
    used += dots;
  }
  out[used] = '\0';
  return out;
}

void *fg_malloc_array(size_t n, size_t size) {
  return n == 0 || size == 0 || n > SIZE_MAX / size ? NULL : malloc(n * size);
}

void *fg_calloc_array(size_t n, size_t size) {
  return n == 0 || size == 0 ? NULL : calloc(n, size);
}

void *fg_malloc_aligned(size_t bytes) {
  void *p = NULL;
  return bytes > 0 && posix_memalign(&p, 64, bytes) == 0 ? p : NULL;
}

void fg_free_aligned(void *p) { free(p); }

#define FG_HUGE_MIN_BYTES ((size_t)8 << 20)
#define FG_HUGE_ALIGN ((size_t)2 << 20)

void *fg_malloc_huge(size_t bytes) {
  if (bytes == 0) bytes = 1;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= FG_HUGE_MIN_BYTES) {
    void *p = NULL;
    if (bytes > SIZE_MAX - FG_HUGE_ALIGN) return NULL;
    const size_t rounded = (bytes + FG_HUGE_ALIGN - 1) / FG_HUGE_ALIGN * FG_HUGE_ALIGN;
    if (posix_memalign(&p, FG_HUGE_ALIGN, rounded) != 0) return NULL;
    (void)madvise(p, rounded, MADV_HUGEPAGE); /* a hint: failure changes nothing */
    return p;
  }
#endif
  return fg_malloc_aligned(bytes);
}

int64_t fg_cache_bytes(void) {
  long l3 = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
  l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
  return l3 > 0 ? FG_MIN((int64_t)l3, FG_CACHE_MAX_BYTES) : FG_CACHE_MAX_BYTES;
}

double fg_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int64_t fg_peak_rss_bytes(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return (int64_t)ru.ru_maxrss * 1024; /* Linux reports kilobytes */
}

int64_t fg_available_memory(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  char line[256];
  long long kb = -1;
  if (!f) return -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1) break;
  fclose(f);
  return kb < 0 ? -1 : (int64_t)kb * 1024;
}

const char *fg_format_bytes(double bytes, char *buf, size_t len) {
  static const char *const unit[] = {"B", "kB", "MB", "GB", "TB"};
  int u = 0;
  while (u < 4 && bytes >= 1000.0) {
    bytes /= 1000.0;
    u++;
  }
  snprintf(buf, len, u == 0 ? "%.0f %s" : bytes < 10 ? "%.2f %s" : bytes < 100 ? "%.1f %s"
                                                                            : "%.0f %s",
           bytes, unit[u]);
  return buf;
}

int fg_max_threads(void) {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

int fg_max_threads_allowed(void) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  return 16 * (int)(cpus >= 1 && cpus <= 65536 ? cpus : 1);
}

/* fg_request_stop's flag: written by the CLI's signal thread (or a handler: a lock-free atomic
 * is safe in one), read at each epoch's end */
static _Atomic int stop_requested = 0;
void fg_request_stop(void) { stop_requested = 1; }
int fg_stop_requested(void) { return stop_requested != 0; }
void fg_stop_clear(void) { stop_requested = 0; }

void fg_set_threads(int n) {
#ifdef _OPENMP
  if (n > 0) omp_set_num_threads(n);
#endif
}
