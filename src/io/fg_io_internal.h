/* fg_io_internal.h -- pieces shared by the readers in src/io/ (not part of the public API):
 * a line reader over plain or gzip files and memory buffers, number parsing, the .npy parser
 * and the zip (.npz) container. */
#ifndef FG_IO_INTERNAL_H
#define FG_IO_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <zlib.h>

#include "core/fg_core.h"
#include "io/fg_io.h"

/* Most nodes a graph may have: num_nodes < 2^31 (the CSR keeps 32-bit column ids), so node
 * ids are < FG_IO_MAX_NODES. */
#define FG_IO_MAX_NODES INT64_C(2147483647)
/* Class ids must be below this (a model allocates num_nodes x num_classes logits). */
#define FG_IO_MAX_CLASSES INT64_C(1048576)

/* ---- line reader ---------------------------------------------------------------------- */

/* Reads lines from a file (plain or gzip, told apart by zlib) or from a memory buffer (plain,
 * or gzip when it starts with the gzip magic). Lines are NUL-terminated in place, without the
 * '\n' or a trailing '\r', and stay valid until the next call. */
typedef struct fg_lines {
  const char *name;           /* for messages; not owned */
  gzFile gz;                  /* file source */
  const unsigned char *mem;   /* memory source */
  size_t mem_len, mem_pos;
  z_stream zs;                /* memory gzip source */
  int zs_active, zs_done;
  char *buf;                  /* buffered bytes [pos, end); buf[cap - 1] is room for a NUL */
  size_t cap, pos, end, scan; /* scan: bytes in [pos, scan) hold no '\n' */
  int eof;
  int64_t lineno;             /* number of the line last returned (1-based) */
  int gzip;                   /* the source is gzip data */
  double source_bytes;        /* bytes of the file or buffer as stored (compressed for gzip);
                                 < 0: unknown (a pipe) */
} fg_lines;

/* Open path for reading lines; L->name = path (the caller keeps it alive). */
fg_status fg_lines_open(fg_lines *L, const char *path);
/* Read lines from buf[0, len); gzip data is inflated. */
fg_status fg_lines_open_mem(fg_lines *L, const void *buf, size_t len, const char *name);
/* The most bytes the lines can amount to: the source's size, or for gzip data the most that
 * deflate can expand it to (1032:1); 1e300 when the source has no size. */
double fg_lines_max_bytes(const fg_lines *L);
/* Next line in *line (length *len unless len is NULL), or *line = NULL at the end. */
fg_status fg_lines_next(fg_lines *L, char **line, size_t *len);
void fg_lines_close(fg_lines *L);

/* Read a whole regular file into memory (*buf is malloc'ed, free it). */
fg_status fg_file_slurp(const char *path, unsigned char **buf, size_t *len);

/* Append name (fg_printable), item i of a comma-separated list, to out[cap] (cut at cap). */
void fg_list_append(char *out, size_t cap, int64_t i, const char *name);
/* Remove a partly written output, but only a regular file (never a device such as /dev/full). */
void fg_remove_partial(const char *path);

/* The reader's budget (fg_io_set_budget): its limit in bytes (0 = none), whether `bytes` in all
 * would pass it, the bytes an edge costs the load (>= 16), and the limit as messages name it
 * ("--mem-limit is 1.00 GB"). */
double fg_io_limit(void);
int fg_io_over_limit(double bytes);
double fg_io_edge_bytes(void);
const char *fg_io_limit_text(void);
/* How many items of item_bytes each fit beside `held` bytes (INT64_MAX without a limit, 0 when
 * none fit). */
int64_t fg_io_items_allowed(double held, double item_bytes);

/* ---- numbers ---------------------------------------------------------------------------- */

/* Decimal integer at p (leading blanks skipped, optional sign). *end: first byte after the
 * digits. Returns 0 on success, 1 if no digits, 2 on overflow. */
int fg_parse_i64(const char *p, const char **end, int64_t *v);
/* Real number at p (as strtod, with an exact fast path for short decimals). Returns 0 on
 * success, 1 if it is not a number. NaN and Inf are returned as such. */
int fg_parse_f64(const char *p, const char **end, double *v);
/* The token starting at p (up to a byte of stops or the end) through fg_printable into out, for
 * messages. */
const char *fg_token_text(const char *p, const char *stops, char *out, size_t cap);

/* ---- .npy --------------------------------------------------------------------------------- */

#define FG_NPY_MAX_DIMS 8

/* A parsed .npy: a view of the data inside the caller's buffer. */
typedef struct fg_npy {
  char kind;                      /* 'f' float, 'i' signed, 'u' unsigned, 'b' bool */
  int itemsize;                   /* bytes per element */
  int fortran;                    /* column-major storage */
  int ndim;
  int64_t shape[FG_NPY_MAX_DIMS];
  int64_t count;                  /* product of the shape */
  const unsigned char *data;      /* count * itemsize bytes, little-endian */
  size_t data_offset;             /* where data starts in the .npy (for messages) */
  char descr[32];                 /* the dtype string as written, e.g. "<f4" (fg_printable) */
} fg_npy;

/* Parse a .npy held in buf[0, len): header, dtype and every size against the bytes present. */
fg_status fg_npy_parse(const void *buf, size_t len, const char *name, fg_npy *a);
/* Convert to int64 in C order (integer and bool dtypes only). */
fg_status fg_npy_to_i64(const fg_npy *a, const char *name, int64_t *dst);
/* Convert to float32 in C order (any numeric dtype); NaN/Inf (also after narrowing) rejected. */
fg_status fg_npy_to_f32(const fg_npy *a, const char *name, float *dst);
/* The m edges (ev[2e], ev[2e + 1]) of an (E x 2) array into r->src and r->dst (allocated here),
 * every id in [0, n); sets r->num_edges = m and r->num_nodes = the largest id + 1. */
fg_status fg_raw_edge_pairs(const int64_t *ev, int64_t m, int64_t n, const char *name, fg_raw *r);

/* ---- zip (.npz) --------------------------------------------------------------------------- */

typedef struct fg_zip_member {
  char *name;
  char show[72]; /* the name through fg_printable: what messages quote */
  uint64_t csize, usize, local_offset;
  uint32_t crc;
  int method, flags;
} fg_zip_member;

typedef struct fg_zip {
  const unsigned char *buf;
  size_t len;
  const char *name;
  fg_zip_member *members;
  int64_t num_members;
} fg_zip;

/* Parse the end-of-central-directory record (zip64 too) and the central directory. */
fg_status fg_zip_open(const void *buf, size_t len, const char *name, fg_zip *z);
/* Index of the member called name (or -1). */
int64_t fg_zip_find(const fg_zip *z, const char *name);
/* Bytes of member i (stored: a view into the archive, *owned = NULL; deflated: inflated into
 * *owned, which the caller frees). The CRC-32 is verified. A deflated member's declared size,
 * with the held bytes the caller has already, is checked against the reader's budget before
 * anything is allocated (fg_io_set_budget). */
fg_status fg_zip_extract(const fg_zip *z, int64_t i, double held, const unsigned char **data,
                         size_t *len, unsigned char **owned);
void fg_zip_close(fg_zip *z);

#endif /* FG_IO_INTERNAL_H */
