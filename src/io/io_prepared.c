/* io_prepared.c -- the prepared dataset's manifest and files: encode, parse and check, write
 * atomically, read whole or by pread. See fg_prepared.h; the format is in the README. */
#define _POSIX_C_SOURCE 200809L /* pread, strnlen */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/fg_io_internal.h"
#include "io/fg_prepared.h"

/* ---- little-endian fields ------------------------------------------------------------------ */

static void put_u32(unsigned char *p, uint32_t v) {
  for (int k = 0; k < 4; k++) p[k] = (unsigned char)(v >> (8 * k));
}
static void put_u64(unsigned char *p, uint64_t v) {
  for (int k = 0; k < 8; k++) p[k] = (unsigned char)(v >> (8 * k));
}
static uint32_t get_u32(const unsigned char *p) {
  uint32_t v = 0;
  for (int k = 3; k >= 0; k--) v = (v << 8) | p[k];
  return v;
}
static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int k = 7; k >= 0; k--) v = (v << 8) | p[k];
  return v;
}
static int64_t get_i64(const unsigned char *p) { return (int64_t)get_u64(p); }

/* zlib's crc32 over any length (it counts in uInt) */
static uint32_t crc_update(uint32_t c, const void *data, size_t len) {
  const unsigned char *p = data;
  while (len > 0) {
    const uInt k = len > (1u << 30) ? (1u << 30) : (uInt)len;
    c = (uint32_t)crc32(c, p, k);
    p += k;
    len -= k;
  }
  return c;
}

static int host_little_endian(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

/* ---- layout ------------------------------------------------------------------------------ */

void fg_prep_manifest_free(fg_prep_manifest *m) {
  if (!m) return;
  free(m->offs);
  free(m->block_nnz);
  free(m->files);
  memset(m, 0, sizeof *m);
}

fg_status fg_prep_manifest_init(fg_prep_manifest *m, uint32_t flags, int64_t n, int64_t nnz,
                                int64_t F, int64_t C, int64_t T, int64_t B, uint64_t seed,
                                const char *order, int64_t id_span) {
  fg_status st = FG_OK;
  memset(m, 0, sizeof *m);
  m->version = FG_PREP_VERSION;
  m->flags = flags;
  m->n = n;
  m->nnz = nnz;
  m->F = F;
  m->C = C;
  m->T = T;
  m->B = B;
  m->seed = seed;
  snprintf(m->order, sizeof m->order, "%s", order);
  m->id_span = id_span;
  FG_ALLOC(m->offs, B + 1);
  FG_CALLOC(m->block_nnz, B * B);
cleanup:
  if (st != FG_OK) fg_prep_manifest_free(m);
  return st;
}

void fg_prep_node_sections(const fg_prep_manifest *m, int64_t rows, int64_t sec[6]) {
  const int ids = (m->flags & FG_PREP_HAS_IDS) != 0;
  sec[FG_PREP_SEC_FEAT] = 0;
  sec[FG_PREP_SEC_INDEX] = sec[FG_PREP_SEC_FEAT] + 4 * rows * m->F;
  sec[FG_PREP_SEC_IDS] = sec[FG_PREP_SEC_INDEX] + 8 * rows;
  sec[FG_PREP_SEC_LABELS] = sec[FG_PREP_SEC_IDS] + (ids ? 8 * rows : 0);
  sec[FG_PREP_SEC_SPLIT] = sec[FG_PREP_SEC_LABELS] + (m->T > 0 ? m->T : 4) * rows;
  sec[FG_PREP_SEC_END] = sec[FG_PREP_SEC_SPLIT] + rows;
}

int64_t fg_prep_node_row_bytes(const fg_prep_manifest *m) {
  int64_t sec[6];
  fg_prep_node_sections(m, 1, sec);
  return sec[FG_PREP_SEC_END];
}

int64_t fg_prep_block_bytes(const fg_prep_manifest *m, int64_t i, int64_t j) {
  return 8 * (m->offs[i + 1] - m->offs[i] + 1) + 4 * m->block_nnz[i * m->B + j];
}

void fg_prep_node_name(int64_t i, char *out) {
  /* i < FG_PREP_MAX_BLOCKS: the mask only tells the compiler the name fits; the name is
   * NUL-padded, as the manifest stores it */
  memset(out, 0, FG_PREP_NAME_BYTES);
  snprintf(out, FG_PREP_NAME_BYTES, "nodes-%04d.bin", (int)(i & 0xffff));
}

void fg_prep_deg_name(int64_t i, char *out) {
  memset(out, 0, FG_PREP_NAME_BYTES);
  snprintf(out, FG_PREP_NAME_BYTES, "deg-%04d.bin", (int)(i & 0xffff));
}

void fg_prep_block_name(int64_t i, int64_t j, char *out) {
  memset(out, 0, FG_PREP_NAME_BYTES);
  snprintf(out, FG_PREP_NAME_BYTES, "adj-%04d-%04d.bin", (int)(i & 0xffff), (int)(j & 0xffff));
}

int64_t fg_prep_block_file(const fg_prep_manifest *m, int64_t i, int64_t j) {
  int64_t k = 2 * m->B;
  if (m->block_nnz[i * m->B + j] == 0) return -1;
  for (int64_t b = 0; b < i * m->B + j; b++) k += m->block_nnz[b] > 0;
  return k;
}

/* ---- the manifest -------------------------------------------------------------------------- */

fg_status fg_prep_manifest_encode(const fg_prep_manifest *m, unsigned char **buf, size_t *len) {
  fg_status st = FG_OK;
  unsigned char *b = NULL, *p;
  const int64_t B = m->B;
  const size_t size = FG_PREP_HEADER_BYTES + 8 * (size_t)(B + 1) + 8 * (size_t)(B * B) +
                      FG_PREP_ENTRY_BYTES * (size_t)m->nfiles + 4;
  *buf = NULL;
  *len = 0;
  FG_CALLOC(b, size);
  memcpy(b, FG_PREP_MAGIC, 8);
  put_u32(b + 8, m->version);
  put_u32(b + 12, m->flags);
  put_u64(b + 16, (uint64_t)m->n);
  put_u64(b + 24, (uint64_t)m->nnz);
  put_u64(b + 32, (uint64_t)m->F);
  put_u64(b + 40, (uint64_t)m->C);
  put_u64(b + 48, (uint64_t)m->T);
  put_u64(b + 56, (uint64_t)B);
  put_u64(b + 64, m->seed);
  memcpy(b + 72, m->order, strnlen(m->order, 15));
  put_u64(b + 88, (uint64_t)m->id_span);
  put_u64(b + 96, (uint64_t)m->fp_nodes);
  put_u64(b + 104, (uint64_t)m->fp_entries);
  put_u64(b + 112, (uint64_t)m->fp_features);
  put_u64(b + 120, (uint64_t)m->fp_classes);
  put_u64(b + 128, m->fp_graph);
  put_u64(b + 136, m->fp_feature_hash);
  put_u64(b + 144, m->fp_labels);
  put_u64(b + 152, m->fp_split);
  put_u64(b + 160, (uint64_t)m->nfiles);
  p = b + FG_PREP_HEADER_BYTES;
  for (int64_t i = 0; i <= B; i++, p += 8) put_u64(p, (uint64_t)m->offs[i]);
  for (int64_t i = 0; i < B * B; i++, p += 8) put_u64(p, (uint64_t)m->block_nnz[i]);
  for (int64_t k = 0; k < m->nfiles; k++, p += FG_PREP_ENTRY_BYTES) {
    memcpy(p, m->files[k].name, strnlen(m->files[k].name, FG_PREP_NAME_BYTES - 1));
    put_u64(p + 32, m->files[k].size);
    put_u32(p + 40, m->files[k].crc);
  }
  put_u32(p, crc_update((uint32_t)crc32(0L, Z_NULL, 0), b, size - 4));
  *buf = b;
  *len = size;
  b = NULL;
cleanup:
  free(b);
  return st;
}

fg_status fg_prep_manifest_parse(const void *buf, size_t len, const char *name,
                                 fg_prep_manifest *out) {
  fg_status st = FG_OK;
  const unsigned char *b = buf, *p;
  fg_prep_manifest m;
  char txt[64];
  int64_t sum = 0, nonempty = 0, B;
  memset(&m, 0, sizeof m);
  memset(out, 0, sizeof *out);
  FG_REQUIRE(len >= FG_PREP_HEADER_BYTES + 4, FG_ERR_FORMAT,
             "%s: %zu bytes, shorter than a manifest's %d-byte header", name, len,
             FG_PREP_HEADER_BYTES + 4);
  FG_REQUIRE(memcmp(b, FG_PREP_MAGIC, 8) == 0, FG_ERR_FORMAT,
             "%s: not a prepared dataset's manifest (its first 8 bytes are \"%s\")", name,
             fg_printable((const char *)b, 8, txt, sizeof txt));
  m.version = get_u32(b + 8);
  FG_REQUIRE(m.version == FG_PREP_VERSION, FG_ERR_FORMAT,
             "%s: format version %u, but this build reads version %d (prepare the dataset "
             "again with this fullgraph)",
             name, m.version, FG_PREP_VERSION);
  {
    const uint32_t want = get_u32(b + len - 4);
    const uint32_t got = crc_update((uint32_t)crc32(0L, Z_NULL, 0), b, len - 4);
    FG_REQUIRE(want == got, FG_ERR_FORMAT,
               "%s: CRC-32 mismatch (the manifest records %08x, its bytes give %08x): the file "
               "is damaged",
               name, want, got);
  }
  m.flags = get_u32(b + 12);
  m.n = get_i64(b + 16);
  m.nnz = get_i64(b + 24);
  m.F = get_i64(b + 32);
  m.C = get_i64(b + 40);
  m.T = get_i64(b + 48);
  m.B = B = get_i64(b + 56);
  m.seed = get_u64(b + 64);
  memcpy(m.order, b + 72, 16);
  m.id_span = get_i64(b + 88);
  m.fp_nodes = get_i64(b + 96);
  m.fp_entries = get_i64(b + 104);
  m.fp_features = get_i64(b + 112);
  m.fp_classes = get_i64(b + 120);
  m.fp_graph = get_u64(b + 128);
  m.fp_feature_hash = get_u64(b + 136);
  m.fp_labels = get_u64(b + 144);
  m.fp_split = get_u64(b + 152);
  m.nfiles = get_i64(b + 160);
  FG_REQUIRE((m.flags & ~FG_PREP_FLAGS_KNOWN) == 0, FG_ERR_FORMAT,
             "%s: unknown flags 0x%x", name, m.flags);
  FG_REQUIRE(m.n >= 0 && m.n <= FG_IO_MAX_NODES, FG_ERR_FORMAT, "%s: %" PRId64 " nodes", name,
             m.n);
  FG_REQUIRE(m.nnz >= 0 && m.nnz <= (int64_t)1 << 40, FG_ERR_FORMAT, "%s: %" PRId64 " entries",
             name, m.nnz);
  FG_REQUIRE(m.F >= 0 && m.F <= (int64_t)1 << 24, FG_ERR_FORMAT, "%s: feature width %" PRId64,
             name, m.F);
  FG_REQUIRE(m.T >= 0 && m.T <= FG_IO_MAX_CLASSES, FG_ERR_FORMAT, "%s: %" PRId64 " tasks", name,
             m.T);
  FG_REQUIRE(m.C >= 1 && m.C <= FG_IO_MAX_CLASSES && (m.T == 0 || m.C == m.T), FG_ERR_FORMAT,
             "%s: %" PRId64 " classes for %" PRId64 " tasks", name, m.C, m.T);
  FG_REQUIRE(B >= 1 && B <= FG_PREP_MAX_BLOCKS && B <= (m.n > 0 ? m.n : 1), FG_ERR_FORMAT,
             "%s: %" PRId64 " blocks for %" PRId64 " nodes (1 to min(nodes, %d))", name, B, m.n,
             FG_PREP_MAX_BLOCKS);
  {
    const char *z = memchr(m.order, '\0', 16);
    int padded = z != NULL && m.order[0] != '\0';
    for (const char *q = z; padded && q < m.order + 16; q++) padded = *q == '\0';
    FG_REQUIRE(padded, FG_ERR_FORMAT, "%s: the order's name is not a NUL-padded string", name);
  }
  FG_REQUIRE(((m.flags & FG_PREP_HAS_IDS) != 0) == (m.id_span > 0) && m.id_span >= 0,
             FG_ERR_FORMAT, "%s: id span %" PRId64 " disagrees with the flags", name, m.id_span);
  FG_REQUIRE(m.nfiles >= 2 * B && m.nfiles <= 2 * B + B * B, FG_ERR_FORMAT,
             "%s: %" PRId64 " files for %" PRId64 " blocks", name, m.nfiles, B);
  {
    const size_t want = FG_PREP_HEADER_BYTES + 8 * (size_t)(B + 1) + 8 * (size_t)(B * B) +
                        FG_PREP_ENTRY_BYTES * (size_t)m.nfiles + 4;
    FG_REQUIRE(len == want, FG_ERR_FORMAT,
               "%s: %zu bytes, but %" PRId64 " blocks and %" PRId64 " files make %zu", name, len,
               B, m.nfiles, want);
  }
  FG_ALLOC(m.offs, B + 1);
  FG_ALLOC(m.block_nnz, B * B);
  FG_CALLOC(m.files, m.nfiles);
  p = b + FG_PREP_HEADER_BYTES;
  for (int64_t i = 0; i <= B; i++, p += 8) m.offs[i] = get_i64(p);
  FG_REQUIRE(m.offs[0] == 0 && m.offs[B] == m.n, FG_ERR_FORMAT,
             "%s: row blocks run from %" PRId64 " to %" PRId64 ", not 0 to %" PRId64, name,
             m.offs[0], m.offs[B], m.n);
  for (int64_t i = 0; i < B; i++)
    FG_REQUIRE(m.offs[i] <= m.offs[i + 1], FG_ERR_FORMAT,
               "%s: row block %" PRId64 " ends (%" PRId64 ") before it starts (%" PRId64 ")",
               name, i, m.offs[i + 1], m.offs[i]);
  for (int64_t i = 0; i < B * B; i++, p += 8) {
    const int64_t bi = i / B, bj = i % B;
    const int64_t cap = (m.offs[bi + 1] - m.offs[bi]) * (m.offs[bj + 1] - m.offs[bj]);
    m.block_nnz[i] = get_i64(p);
    FG_REQUIRE(m.block_nnz[i] >= 0 && m.block_nnz[i] <= m.nnz, FG_ERR_FORMAT,
               "%s: block (%" PRId64 ", %" PRId64 ") holds %" PRId64 " entries", name, bi, bj,
               m.block_nnz[i]);
    /* duplicates (--keep-duplicates) may exceed rows x columns, but not an empty side */
    FG_REQUIRE(cap > 0 || m.block_nnz[i] == 0, FG_ERR_FORMAT,
               "%s: block (%" PRId64 ", %" PRId64 ") of no rows or columns holds %" PRId64
               " entries",
               name, bi, bj, m.block_nnz[i]);
    sum += m.block_nnz[i];
    nonempty += m.block_nnz[i] > 0;
  }
  FG_REQUIRE(sum == m.nnz, FG_ERR_FORMAT,
             "%s: the blocks hold %" PRId64 " entries, the header says %" PRId64, name, sum,
             m.nnz);
  FG_REQUIRE(m.nfiles == 2 * B + nonempty, FG_ERR_FORMAT,
             "%s: %" PRId64 " files listed, but %" PRId64 " node and degree files and %" PRId64
             " nonempty blocks make %" PRId64,
             name, m.nfiles, 2 * B, nonempty, 2 * B + nonempty);
  {
    const int64_t row = fg_prep_node_row_bytes(&m);
    int64_t k = 0;
    char want[FG_PREP_NAME_BYTES];
    for (int64_t e = 0; e < m.nfiles; e++, p += FG_PREP_ENTRY_BYTES) {
      fg_prep_file *f = &m.files[e];
      uint64_t size;
      memcpy(f->name, p, FG_PREP_NAME_BYTES);
      f->size = get_u64(p + 32);
      f->crc = get_u32(p + 40);
      if (e < B) {
        fg_prep_node_name(e, want);
        size = (uint64_t)(row * (m.offs[e + 1] - m.offs[e]));
      } else if (e < 2 * B) {
        fg_prep_deg_name(e - B, want);
        size = (uint64_t)(FG_PREP_DEG_ROW_BYTES * (m.offs[e - B + 1] - m.offs[e - B]));
      } else {
        while (k < B * B && m.block_nnz[k] == 0) k++;
        fg_prep_block_name(k / B, k % B, want);
        size = (uint64_t)fg_prep_block_bytes(&m, k / B, k % B);
        k++;
      }
      /* names are checked, never trusted: no path can leave the directory */
      FG_REQUIRE(memcmp(f->name, want, FG_PREP_NAME_BYTES) == 0, FG_ERR_FORMAT,
                 "%s: file %" PRId64 " of the table is \"%s\", expected %s", name, e,
                 fg_printable(f->name, strnlen(f->name, FG_PREP_NAME_BYTES), txt, sizeof txt),
                 want);
      FG_REQUIRE(f->size == size, FG_ERR_FORMAT,
                 "%s: %s is listed at %" PRIu64 " bytes, but its rows make %" PRIu64, name, want,
                 f->size, size);
      FG_REQUIRE(get_u32(p + 44) == 0, FG_ERR_FORMAT, "%s: %s: reserved bytes are not zero",
                 name, want);
    }
  }
  *out = m;
  memset(&m, 0, sizeof m);
cleanup:
  fg_prep_manifest_free(&m);
  return st;
}

static char *join(const char *dir, const char *name) {
  const size_t a = strlen(dir), b = strlen(name);
  char *s = malloc(a + b + 2);
  if (!s) return NULL;
  memcpy(s, dir, a);
  s[a] = '/';
  memcpy(s + a + 1, name, b + 1);
  return s;
}

int fg_prep_is_dir(const char *dir) {
  struct stat sb;
  char *path = join(dir, FG_PREP_MANIFEST);
  int yes = path && stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
  free(path);
  return yes;
}

fg_status fg_prep_manifest_read(const char *dir, fg_prep_manifest *out) {
  fg_status st = FG_OK;
  unsigned char *buf = NULL;
  size_t len = 0;
  char *path = join(dir, FG_PREP_MANIFEST);
  memset(out, 0, sizeof *out);
  FG_REQUIRE(path, FG_ERR_NOMEM, "out of memory");
  FG_CHECK(fg_file_slurp(path, &buf, &len));
  FG_CHECK(fg_prep_manifest_parse(buf, len, path, out));
cleanup:
  free(buf);
  free(path);
  return st;
}

fg_status fg_prep_manifest_write(const char *dir, const fg_prep_manifest *m) {
  fg_status st = FG_OK;
  unsigned char *buf = NULL;
  size_t len = 0;
  char *path = join(dir, FG_PREP_MANIFEST);
  fg_out o;
  memset(&o, 0, sizeof o);
  FG_REQUIRE(path, FG_ERR_NOMEM, "out of memory");
  FG_CHECK(fg_prep_manifest_encode(m, &buf, &len));
  FG_CHECK(fg_out_open(&o, path));
  if (fwrite(buf, 1, len, o.f) != len) {
    fg_out_abort(&o);
    FG_FAIL(FG_ERR_IO, "%s: write error: %s", path, strerror(errno));
  }
  FG_CHECK(fg_out_commit(&o));
cleanup:
  free(buf);
  free(path);
  return st;
}

fg_status fg_prep_check_fits(const char *dir, double bytes) {
  fg_status st = FG_OK;
  FG_REQUIRE(!fg_io_over_limit(bytes), FG_ERR_MEMLIMIT,
             "%s: loading it whole needs about %.0f MB, beyond the load's limit (%s)", dir,
             bytes / 1e6, fg_io_limit_text());
cleanup:
  return st;
}

fg_status fg_prep_check_layout(const fg_prep_manifest *m, const char *dir, int ranks, int rep,
                               const char *scheme) {
  fg_status st = FG_OK;
  char fit[256];
  size_t len = 0;
  const int64_t K = rep >= 1 ? ranks / rep : ranks;
  fit[0] = '\0';
  for (int64_t k = 1; k <= m->B && len + 24 < sizeof fit; k++)
    if (m->B % k == 0)
      len += (size_t)snprintf(fit + len, sizeof fit - len, "%s%" PRId64, len ? ", " : "",
                              k * (rep >= 1 ? rep : 1));
  FG_REQUIRE(K >= 1 && m->B % K == 0, FG_ERR_INVALID_ARG,
             "%s has %" PRId64 " row blocks: %s on %d ranks lays out %" PRId64 " blocks, which "
             "must divide them (ranks that fit: %s); or prepare it again with --blocks a "
             "multiple of %" PRId64,
             dir, m->B, scheme ? scheme : "the scheme", ranks, K, fit, K);
cleanup:
  return st;
}

void fg_prep_grids_that_fit(const fg_prep_manifest *m, int64_t P, char *out, size_t cap) {
  size_t len = 0;
  if (cap == 0) return;
  out[0] = '\0';
  /* every X x Y x Z = P whose dimensions divide B, X then Y ascending (fg_grid_enumerate's) */
  for (int64_t x = 1; x <= P; x++)
    for (int64_t y = 1; P % x == 0 && y <= P / x; y++) {
      const int64_t z = P / x / y;
      if ((P / x) % y || m->B % x || m->B % y || m->B % z || len + 40 >= cap) continue;
      len += (size_t)snprintf(out + len, cap - len, "%s%" PRId64 "x%" PRId64 "x%" PRId64,
                              len ? ", " : "", x, y, z);
    }
  if (len == 0) snprintf(out, cap, "none");
}

fg_status fg_prep_check_grid(const fg_prep_manifest *m, const char *dir, const int g[3]) {
  fg_status st = FG_OK;
  char fit[256];
  const int64_t P = (int64_t)g[0] * g[1] * g[2];
  int64_t l = 1; /* the least common multiple of the dimensions: a B that fits this grid */
  for (int d = 0; d < 3; d++) {
    const int64_t gd = g[d] >= 1 ? g[d] : 1;
    int64_t a = l, b = gd;
    while (b) {
      const int64_t t = a % b;
      a = b;
      b = t;
    }
    l = l / a * gd;
  }
  fg_prep_grids_that_fit(m, P, fit, sizeof fit);
  FG_REQUIRE(g[0] >= 1 && g[1] >= 1 && g[2] >= 1 && m->B % g[0] == 0 && m->B % g[1] == 0 &&
                 m->B % g[2] == 0,
             FG_ERR_INVALID_ARG,
             "%s has %" PRId64 " row blocks: 3d's grid %dx%dx%d needs each dimension to divide "
             "them (grids of %" PRId64 " ranks that fit: %s); or prepare it again with --blocks "
             "a multiple of %" PRId64,
             dir, m->B, g[0], g[1], g[2], P, fit, l);
cleanup:
  return st;
}

/* ---- data files -------------------------------------------------------------------------- */

fg_status fg_prep_file_write(const char *dir, const char *name, const void *const *parts,
                             const size_t *lens, int nparts, uint64_t *size, uint32_t *crc) {
  fg_status st = FG_OK;
  char *path = join(dir, name);
  uint32_t c = (uint32_t)crc32(0L, Z_NULL, 0);
  uint64_t total = 0;
  fg_out o;
  memset(&o, 0, sizeof o);
  FG_REQUIRE(path, FG_ERR_NOMEM, "out of memory");
  FG_REQUIRE(host_little_endian(), FG_ERR_UNSUPPORTED,
             "%s: prepared datasets are little-endian; this host is not", path);
  FG_CHECK(fg_out_open(&o, path));
  for (int k = 0; k < nparts; k++) {
    if (lens[k] == 0) continue;
    if (fwrite(parts[k], 1, lens[k], o.f) != lens[k]) {
      fg_out_abort(&o);
      FG_FAIL(FG_ERR_IO, "%s: write error: %s", path, strerror(errno));
    }
    c = crc_update(c, parts[k], lens[k]);
    total += lens[k];
  }
  FG_CHECK(fg_out_commit(&o));
  *size = total;
  *crc = c;
cleanup:
  free(path);
  return st;
}

fg_status fg_prep_reader_open(fg_prep_reader *r, const char *dir, const fg_prep_manifest *m,
                              int64_t k) {
  fg_status st = FG_OK;
  struct stat sb;
  memset(r, 0, sizeof *r);
  r->fd = -1;
  FG_REQUIRE(k >= 0 && k < m->nfiles, FG_ERR_INTERNAL, "prepared file %" PRId64 " of %" PRId64,
             k, m->nfiles);
  r->path = join(dir, m->files[k].name);
  FG_REQUIRE(r->path, FG_ERR_NOMEM, "out of memory");
  r->fd = open(r->path, O_RDONLY | O_CLOEXEC);
  FG_REQUIRE(r->fd >= 0, FG_ERR_IO, "%s: cannot open: %s (the manifest lists it)", r->path,
             strerror(errno));
  FG_REQUIRE(fstat(r->fd, &sb) == 0 && S_ISREG(sb.st_mode), FG_ERR_IO,
             "%s: not a regular file", r->path);
  FG_REQUIRE((uint64_t)sb.st_size == m->files[k].size, FG_ERR_FORMAT,
             "%s: %lld bytes, but the manifest lists %" PRIu64 "%s", r->path,
             (long long)sb.st_size, m->files[k].size,
             (uint64_t)sb.st_size < m->files[k].size ? " (truncated)" : "");
  r->size = m->files[k].size;
cleanup:
  if (st != FG_OK) fg_prep_reader_close(r);
  return st;
}

fg_status fg_prep_reader_pread(fg_prep_reader *r, void *dst, size_t len, uint64_t off) {
  fg_status st = FG_OK;
  unsigned char *p = dst;
  FG_REQUIRE(off <= r->size && len <= r->size - off, FG_ERR_INTERNAL,
             "%s: a read of %zu bytes at %" PRIu64 " passes its end", r->path, len, off);
  while (len > 0) {
    const size_t want = len > ((size_t)1 << 30) ? ((size_t)1 << 30) : len;
    const ssize_t got = pread(r->fd, p, want, (off_t)off);
    if (got < 0 && errno == EINTR) continue;
    FG_REQUIRE(got > 0, FG_ERR_IO, "%s: read error at byte %" PRIu64 ": %s", r->path, off,
               got < 0 ? strerror(errno) : "unexpected end of file");
    p += got;
    off += (uint64_t)got;
    len -= (size_t)got;
    r->bytes_read += (uint64_t)got;
  }
cleanup:
  return st;
}

void fg_prep_reader_close(fg_prep_reader *r) {
  if (!r) return;
  if (r->fd >= 0) close(r->fd);
  free(r->path);
  memset(r, 0, sizeof *r);
  r->fd = -1;
}

fg_status fg_prep_file_read(const char *dir, const fg_prep_manifest *m, int64_t k,
                            unsigned char **buf) {
  fg_status st = FG_OK;
  fg_prep_reader r;
  unsigned char *b = NULL;
  *buf = NULL;
  FG_CHECK(fg_prep_reader_open(&r, dir, m, k));
  FG_REQUIRE(!fg_io_over_limit((double)r.size), FG_ERR_MEMLIMIT,
             "%s: %" PRIu64 " bytes do not fit the load's limit (%s)", r.path, r.size,
             fg_io_limit_text());
  FG_ALLOC(b, r.size > 0 ? r.size : 1);
  FG_CHECK(fg_prep_reader_pread(&r, b, (size_t)r.size, 0));
  {
    const uint32_t got = crc_update((uint32_t)crc32(0L, Z_NULL, 0), b, (size_t)r.size);
    FG_REQUIRE(got == m->files[k].crc, FG_ERR_FORMAT,
               "%s: CRC-32 mismatch (the manifest records %08x, the file gives %08x): the file "
               "is damaged",
               r.path, m->files[k].crc, got);
  }
  *buf = b;
  b = NULL;
cleanup:
  free(b);
  fg_prep_reader_close(&r);
  return st;
}
