/* io_npz.c -- the zip container of .npz files (end-of-central-directory record, central
 * directory, zip64 extras, stored and deflated members, CRC-32) and the two .npz layouts:
 * gnn_benchmark's CSR arrays and the dense arrays of the heterophilous-graphs collection. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/fg_io_internal.h"

#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_LOC64 0x07064b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_LOCAL 0x04034b50u

static uint32_t rd16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

void fg_zip_close(fg_zip *z) {
  if (!z) return;
  for (int64_t i = 0; i < z->num_members; i++) free(z->members[i].name);
  free(z->members);
  memset(z, 0, sizeof *z);
}

/* The zip64 extra field (id 1) holds, in order, each of usize, csize, offset that is 0xFFFFFFFF
 * in the fixed fields. */
static fg_status zip64_extra(const unsigned char *x, size_t xlen, const char *name, size_t at,
                             fg_zip_member *m) {
  fg_status st = FG_OK;
  size_t p = 0;
  while (p + 4 <= xlen) {
    uint32_t id = rd16(x + p), sz = rd16(x + p + 2);
    FG_REQUIRE(sz <= xlen - p - 4, FG_ERR_FORMAT,
               "%s: byte %zu: extra field of member '%s' runs past its end", name, at + p,
               m->show);
    if (id == 1) {
      const unsigned char *f = x + p + 4;
      size_t q = 0;
      uint64_t *fields[3] = {&m->usize, &m->csize, &m->local_offset};
      for (int k = 0; k < 3; k++) {
        if (*fields[k] != 0xFFFFFFFFu) continue;
        FG_REQUIRE(q + 8 <= sz, FG_ERR_FORMAT,
                   "%s: byte %zu: zip64 extra field of member '%s' is too short", name,
                   at + p, m->show);
        *fields[k] = rd64(f + q);
        q += 8;
      }
    }
    p += 4 + sz;
  }
cleanup:
  return st;
}

fg_status fg_zip_open(const void *buf, size_t len, const char *name, fg_zip *z) {
  fg_status st = FG_OK;
  const unsigned char *b = buf;
  memset(z, 0, sizeof *z);
  z->buf = b;
  z->len = len;
  z->name = name;
  FG_REQUIRE(len >= 22, FG_ERR_FORMAT,
             "%s: not a zip archive (%zu bytes, too short for an end-of-central-directory record)",
             name, len);
  size_t eocd = SIZE_MAX;
  size_t lo = len - 22 > 65535 ? len - 22 - 65535 : 0;
  for (size_t i = len - 22 + 1; i-- > lo;) {
    if (rd32(b + i) == SIG_EOCD && i + 22 + rd16(b + i + 20) <= len) {
      eocd = i;
      break;
    }
  }
  FG_REQUIRE(eocd != SIZE_MAX, FG_ERR_FORMAT,
             "%s: not a zip archive (no end-of-central-directory record%s)", name,
             rd32(b) == SIG_LOCAL ? "; truncated?" : "");
  uint64_t disk = rd16(b + eocd + 4), cd_disk = rd16(b + eocd + 6);
  uint64_t n = rd16(b + eocd + 10), cd_size = rd32(b + eocd + 12), cd_off = rd32(b + eocd + 16);
  if (eocd >= 20 && rd32(b + eocd - 20) == SIG_LOC64) {
    size_t loc = eocd - 20;
    uint64_t off64 = rd64(b + loc + 8);
    FG_REQUIRE(off64 <= loc && loc - off64 >= 56, FG_ERR_FORMAT,
               "%s: byte %zu: zip64 end-of-central-directory offset %llu out of range", name,
               loc + 8, (unsigned long long)off64);
    const unsigned char *e = b + off64;
    FG_REQUIRE(rd32(e) == SIG_EOCD64, FG_ERR_FORMAT,
               "%s: byte %llu: bad zip64 end-of-central-directory signature", name,
               (unsigned long long)off64);
    disk = rd32(e + 16);
    cd_disk = rd32(e + 20);
    n = rd64(e + 32);
    cd_size = rd64(e + 40);
    cd_off = rd64(e + 48);
    eocd = (size_t)off64;
  }
  FG_REQUIRE(disk == 0 && cd_disk == 0, FG_ERR_UNSUPPORTED,
             "%s: multi-part zip archives are not supported", name);
  FG_REQUIRE(cd_off <= eocd && cd_size <= eocd - cd_off, FG_ERR_FORMAT,
             "%s: byte %zu: central directory (offset %llu, %llu bytes) out of range", name,
             eocd, (unsigned long long)cd_off, (unsigned long long)cd_size);
  FG_REQUIRE(n <= cd_size / 46, FG_ERR_FORMAT,
             "%s: byte %zu: %llu members cannot fit in a central directory of %llu bytes", name,
             eocd, (unsigned long long)n, (unsigned long long)cd_size);
  FG_CALLOC(z->members, n);
  size_t p = (size_t)cd_off, cd_end = (size_t)(cd_off + cd_size);
  for (uint64_t i = 0; i < n; i++) {
    FG_REQUIRE(cd_end - p >= 46 && rd32(b + p) == SIG_CENTRAL, FG_ERR_FORMAT,
               "%s: byte %zu: bad central directory entry %llu", name, p,
               (unsigned long long)i);
    fg_zip_member *m = &z->members[i];
    m->flags = (int)rd16(b + p + 8);
    m->method = (int)rd16(b + p + 10);
    m->crc = rd32(b + p + 16);
    m->csize = rd32(b + p + 20);
    m->usize = rd32(b + p + 24);
    size_t nlen = rd16(b + p + 28), xlen = rd16(b + p + 30), clen = rd16(b + p + 32);
    m->local_offset = rd32(b + p + 42);
    FG_REQUIRE(nlen + xlen + clen <= cd_end - p - 46, FG_ERR_FORMAT,
               "%s: byte %zu: central directory entry %llu runs past the directory", name, p,
               (unsigned long long)i);
    FG_REQUIRE(memchr(b + p + 46, '\0', nlen) == NULL, FG_ERR_FORMAT,
               "%s: byte %zu: member name contains a NUL byte", name, p + 46);
    FG_ALLOC(m->name, nlen + 1);
    memcpy(m->name, b + p + 46, nlen);
    m->name[nlen] = '\0';
    fg_printable(m->name, nlen, m->show, sizeof m->show);
    z->num_members = (int64_t)i + 1;
    FG_CHECK(zip64_extra(b + p + 46 + nlen, xlen, name, p + 46 + nlen, m));
    p += 46 + nlen + xlen + clen;
  }
cleanup:
  if (st != FG_OK) fg_zip_close(z);
  return st;
}

int64_t fg_zip_find(const fg_zip *z, const char *name) {
  for (int64_t i = 0; i < z->num_members; i++)
    if (strcmp(z->members[i].name, name) == 0) return i;
  return -1;
}

static uint32_t crc_of(const unsigned char *p, size_t n) {
  uLong c = crc32(0L, Z_NULL, 0);
  while (n > 0) {
    uInt k = (uInt)(n > (1u << 30) ? (1u << 30) : n);
    c = crc32(c, p, k);
    p += k;
    n -= k;
  }
  return (uint32_t)c;
}

/* Where member i's data starts: its flags, method and local header checked, its compressed
 * bytes within the archive. */
static fg_status member_start(const fg_zip *z, int64_t i, uint64_t *start_out) {
  fg_status st = FG_OK;
  const fg_zip_member *m = &z->members[i];
  const unsigned char *b = z->buf;
  FG_REQUIRE(!(m->flags & 1), FG_ERR_UNSUPPORTED, "%s: member '%s' is encrypted", z->name,
             m->show);
  FG_REQUIRE(m->method == 0 || m->method == 8, FG_ERR_UNSUPPORTED,
             "%s: member '%s': compression method %d is not supported (only stored and "
             "deflate)", z->name, m->show, m->method);
  uint64_t lo = m->local_offset;
  FG_REQUIRE(lo <= z->len && z->len - lo >= 30 && rd32(b + lo) == SIG_LOCAL, FG_ERR_FORMAT,
             "%s: byte %llu: bad local header of member '%s'", z->name, (unsigned long long)lo,
             m->show);
  uint64_t start = lo + 30 + rd16(b + lo + 26) + rd16(b + lo + 28);
  FG_REQUIRE(start <= z->len && m->csize <= z->len - start, FG_ERR_FORMAT,
             "%s: byte %llu: member '%s' (%llu bytes) runs past the end of the archive "
             "(%zu bytes): truncated?", z->name, (unsigned long long)start, m->show,
             (unsigned long long)m->csize, z->len);
  *start_out = start;
cleanup:
  return st;
}

/* The first min(cap, usize) bytes of deflated member i inflated into out (*got of them): what
 * a .npy header needs, without inflating, or holding, the rest. */
static fg_status zip_prefix(const fg_zip *z, int64_t i, unsigned char *out, size_t cap,
                            size_t *got) {
  fg_status st = FG_OK;
  const fg_zip_member *m = &z->members[i];
  z_stream zs;
  int zs_init = 0;
  uint64_t start = 0;
  *got = 0;
  FG_CHECK(member_start(z, i, &start));
  const size_t want = m->usize < cap ? (size_t)m->usize : cap;
  memset(&zs, 0, sizeof zs);
  int zr = inflateInit2(&zs, -MAX_WBITS);
  FG_REQUIRE(zr == Z_OK, FG_ERR_NOMEM, "%s: cannot start inflate (zlib error %d)", z->name, zr);
  zs_init = 1;
  zs.next_in = (unsigned char *)(uintptr_t)(z->buf + start);
  zs.avail_in = (uInt)(m->csize > (1u << 30) ? (1u << 30) : m->csize);
  zs.next_out = out;
  zs.avail_out = (uInt)want;
  while (zs.avail_out > 0) {
    zr = inflate(&zs, Z_SYNC_FLUSH);
    if (zr == Z_STREAM_END) break;
    FG_REQUIRE(zr == Z_OK, zr == Z_MEM_ERROR ? FG_ERR_NOMEM : FG_ERR_FORMAT,
               "%s: member '%s': %s deflate data near byte %llu (%s)", z->name, m->show,
               zr == Z_BUF_ERROR ? "truncated" : "corrupt",
               (unsigned long long)(start + (uint64_t)(zs.next_in - (z->buf + start))),
               zs.msg ? zs.msg : "inflate failed");
  }
  *got = want - zs.avail_out;
cleanup:
  if (zs_init) inflateEnd(&zs);
  return st;
}

fg_status fg_zip_extract(const fg_zip *z, int64_t i, double held, const unsigned char **data,
                         size_t *len, unsigned char **owned) {
  fg_status st = FG_OK;
  const fg_zip_member *m = &z->members[i];
  const unsigned char *b = z->buf;
  unsigned char *out = NULL;
  z_stream zs;
  int zs_init = 0;
  uint64_t start = 0;
  *data = NULL;
  *len = 0;
  *owned = NULL;
  FG_CHECK(member_start(z, i, &start));
  const unsigned char *src = b + start;
  if (m->method == 0) {
    FG_REQUIRE(m->csize == m->usize, FG_ERR_FORMAT,
               "%s: member '%s' is stored but its sizes differ (%llu vs %llu)", z->name,
               m->show, (unsigned long long)m->csize, (unsigned long long)m->usize);
  } else {
    /* Deflate cannot expand by more than about 1032:1, so a larger claim is corrupt; checked
     * before allocating the output. */
    FG_REQUIRE(m->usize <= m->csize * 1040u + 1024u, FG_ERR_FORMAT,
               "%s: member '%s' claims %llu bytes from %llu compressed bytes: impossible for "
               "deflate", z->name, m->show, (unsigned long long)m->usize,
               (unsigned long long)m->csize);
    FG_REQUIRE(m->usize < SIZE_MAX, FG_ERR_NOMEM, "%s: member '%s' too large", z->name, m->show);
    {
      char all[32];
      const double need = held + (double)m->usize + 1.0;
      FG_REQUIRE(!fg_io_over_limit(need), FG_ERR_MEMLIMIT,
                 "%s: member '%s' inflates to %llu bytes, %s in all with what the read holds "
                 "(the archive, its inflated members and arrays), but %s",
                 z->name, m->show, (unsigned long long)m->usize,
                 fg_format_bytes(need, all, sizeof all), fg_io_limit_text());
    }
    FG_ALLOC(out, (size_t)m->usize + 1);
    memset(&zs, 0, sizeof zs);
    int zr = inflateInit2(&zs, -MAX_WBITS);
    FG_REQUIRE(zr == Z_OK, FG_ERR_NOMEM, "%s: cannot start inflate (zlib error %d)", z->name, zr);
    zs_init = 1;
    const unsigned char *in = src;
    uint64_t in_left = m->csize, out_done = 0;
    /* One spare output byte: data beyond the declared size is detected, not truncated. */
    uint64_t out_cap = m->usize + 1;
    for (;;) {
      if (zs.avail_in == 0 && in_left > 0) {
        uInt k = (uInt)(in_left > (1u << 30) ? (1u << 30) : in_left);
        zs.next_in = (unsigned char *)(uintptr_t)in;
        zs.avail_in = k;
        in += k;
        in_left -= k;
      }
      if (zs.avail_out == 0) {
        uint64_t room = out_cap - out_done;
        if (room == 0) break;
        zs.next_out = out + out_done;
        zs.avail_out = (uInt)(room > (1u << 30) ? (1u << 30) : room);
      }
      uInt before = zs.avail_out;
      zr = inflate(&zs, Z_NO_FLUSH);
      out_done += before - zs.avail_out;
      if (zr == Z_STREAM_END) break;
      if (zr == Z_BUF_ERROR && zs.avail_in == 0 && in_left == 0)
        FG_FAIL(FG_ERR_FORMAT, "%s: member '%s': truncated deflate data (%llu of %llu bytes "
                "inflated)", z->name, m->show, (unsigned long long)out_done,
                (unsigned long long)m->usize);
      FG_REQUIRE(zr == Z_OK || zr == Z_BUF_ERROR, zr == Z_MEM_ERROR ? FG_ERR_NOMEM : FG_ERR_FORMAT,
                 "%s: member '%s': corrupt deflate data near byte %llu (%s)", z->name, m->show,
                 (unsigned long long)(start + (uint64_t)(zs.next_in - src)),
                 zs.msg ? zs.msg : "inflate failed");
    }
    FG_REQUIRE(zr == Z_STREAM_END && out_done == m->usize, FG_ERR_FORMAT,
               "%s: member '%s' inflates to %s%llu bytes, but the directory says %llu", z->name,
               m->show, zr == Z_STREAM_END ? "" : "more than ", (unsigned long long)out_done,
               (unsigned long long)m->usize);
  }
  const unsigned char *bytes = m->method == 0 ? src : out;
  uint32_t crc = crc_of(bytes, (size_t)m->usize);
  FG_REQUIRE(crc == m->crc, FG_ERR_FORMAT,
             "%s: member '%s': CRC-32 mismatch (computed %08x, stored %08x): corrupt archive",
             z->name, m->show, (unsigned)crc, (unsigned)m->crc);
  *data = bytes;
  *len = (size_t)m->usize;
  *owned = out;
  out = NULL;
cleanup:
  if (zs_init) inflateEnd(&zs);
  free(out);
  return st;
}

/* ---- .npz layouts ------------------------------------------------------------------------- */

/* fg_npz (fg_io_internal.h) is this context: readers of layouts built on .npz archives
 * (io_scipy.c) use it through the fg_npz_* functions at the end of this file. */
typedef struct fg_npz {
  const char *path;
  fg_zip zip;
  unsigned char *owned[16];
  int nowned;
  char label[16][256]; /* "path[member]" for messages */
  double held;         /* bytes the read holds: the archive, inflated members, arrays */
} npz_ctx;

/* Count `bytes` more against the reader's budget before allocating them, or fail naming the
 * array (label) and what it is for. */
static fg_status npz_hold(npz_ctx *c, double bytes, const char *label, const char *what) {
  fg_status st = FG_OK;
  char more[32], all[32];
  FG_REQUIRE(!fg_io_over_limit(c->held + bytes), FG_ERR_MEMLIMIT,
             "%s: %s needs %s, %s in all with what the read holds (the archive, its inflated "
             "members and arrays), but %s",
             label, what, fg_format_bytes(bytes, more, sizeof more),
             fg_format_bytes(c->held + bytes, all, sizeof all), fg_io_limit_text());
  c->held += bytes;
cleanup:
  return st;
}

static void npz_release(npz_ctx *c, double bytes) { c->held -= bytes; }

/* Index of member base.npy, else of member base, else -1. */
static int64_t npz_find(const npz_ctx *c, const char *base) {
  char full[128];
  snprintf(full, sizeof full, "%s.npy", base);
  int64_t i = fg_zip_find(&c->zip, full);
  return i >= 0 ? i : fg_zip_find(&c->zip, base);
}

static int npz_has(const npz_ctx *c, const char *base) {
  return npz_find(c, base) >= 0;
}

/* The bytes of member base(.npy), kept to the end of the read. *label: "path[member]" for
 * messages, or NULL if the member is absent (then *data is NULL). */
static fg_status npz_bytes(npz_ctx *c, const char *base, int required, const unsigned char **data,
                           size_t *len, const char **label) {
  fg_status st = FG_OK;
  unsigned char *own = NULL;
  *label = NULL;
  *data = NULL;
  *len = 0;
  int64_t i = npz_find(c, base);
  if (i < 0) {
    FG_REQUIRE(!required, FG_ERR_FORMAT, "%s: member %s.npy is missing", c->path, base);
    goto cleanup;
  }
  FG_REQUIRE(c->nowned < 16, FG_ERR_INTERNAL, "too many .npz members in use");
  int k = c->nowned;
  snprintf(c->label[k], sizeof c->label[k], "%s[%s]", c->path, c->zip.members[i].show);
  FG_CHECK(fg_zip_extract(&c->zip, i, c->held, data, len, &own));
  if (own) c->held += (double)*len + 1.0; /* inflated: kept to the end of the read */
  c->nowned++;
  c->owned[k] = own;
  own = NULL;
  *label = c->label[k];
cleanup:
  free(own);
  return st;
}

/* Parse member base(.npy). *label: "path[member]" for messages, or NULL if the member is
 * absent (then a is untouched). */
static fg_status npz_get(npz_ctx *c, const char *base, int required, fg_npy *a,
                         const char **label) {
  fg_status st = FG_OK;
  const unsigned char *data = NULL;
  size_t len = 0;
  const char *l = NULL;
  *label = NULL;
  FG_CHECK(npz_bytes(c, base, required, &data, &len, &l));
  if (!l) goto cleanup;
  FG_CHECK(fg_npy_parse(data, len, l, a));
  *label = l;
cleanup:
  return st;
}

/* The array as int64 (8 bytes an element held: npz_release them when freeing *out). */
static fg_status npz_ints(npz_ctx *c, const fg_npy *a, const char *label, int64_t **out) {
  fg_status st = FG_OK;
  int64_t *v = NULL;
  FG_REQUIRE(a->kind == 'i' || a->kind == 'u', FG_ERR_FORMAT,
             "%s: expected an integer array, got dtype '%s'", label, a->descr);
  FG_CHECK(npz_hold(c, 8.0 * (double)a->count, label, "converting it to int64"));
  FG_ALLOC(v, a->count);
  FG_CHECK(fg_npy_to_i64(a, label, v));
  *out = v;
  v = NULL;
cleanup:
  if (v) npz_release(c, 8.0 * (double)a->count);
  free(v);
  return st;
}

/* Multi-label targets: an (n, T) array of 0/1 (bool or integers; -1 marks a missing target)
 * into r->targets, r->num_tasks = T. */
static fg_status npz_targets(npz_ctx *c, const fg_npy *a, const char *label, int64_t n,
                             fg_raw *r) {
  fg_status st = FG_OK;
  int64_t *v = NULL;
  const int64_t T = a->shape[1];
  FG_REQUIRE(T >= 1, FG_ERR_FORMAT, "%s: multi-label targets of shape (%lld, 0): no tasks",
             label, (long long)n);
  FG_REQUIRE(a->kind == 'b' || a->kind == 'i' || a->kind == 'u', FG_ERR_FORMAT,
             "%s: multi-label targets must be bool or integers (0, 1; -1 missing), got dtype "
             "'%s'", label, a->descr);
  /* (bool too, which npz_ints refuses: a mask's conversion) */
  FG_CHECK(npz_hold(c, 8.0 * (double)a->count, label, "converting it to int64"));
  FG_ALLOC(v, a->count);
  FG_CHECK(fg_npy_to_i64(a, label, v));
  FG_CHECK(npz_hold(c, (double)n * (double)T, label, "the targets"));
  FG_ALLOC(r->targets, n * T);
  for (int64_t i = 0; i < n * T; i++) {
    FG_REQUIRE(v[i] >= -1 && v[i] <= 1, FG_ERR_FORMAT,
               "%s: node %lld, task %lld: target %lld is not 0 or 1 (or -1 when missing)", label,
               (long long)(i / T), (long long)(i % T), (long long)v[i]);
    r->targets[i] = (int8_t)v[i];
  }
  r->num_tasks = T;
cleanup:
  if (v) npz_release(c, 8.0 * (double)a->count);
  free(v);
  return st;
}

/* One class id a node (n,), or multi-label targets (n, T): npz_targets. */
static fg_status npz_labels(npz_ctx *c, const fg_npy *a, const char *label, int64_t n,
                            fg_raw *r) {
  fg_status st = FG_OK;
  int64_t *v = NULL;
  if (a->ndim == 2 && a->shape[0] == n) return npz_targets(c, a, label, n, r);
  FG_REQUIRE(a->ndim == 1 && a->shape[0] == n, FG_ERR_FORMAT,
             "%s: labels must have shape (%lld,) (a class id a node) or (%lld, T) (0/1 targets "
             "of T tasks), got %d dimension(s) with %lld elements", label,
             (long long)n, (long long)n, a->ndim, (long long)a->count);
  FG_CHECK(npz_ints(c, a, label, &v));
  FG_CHECK(npz_hold(c, 4.0 * (double)n, label, "the labels"));
  FG_ALLOC(r->labels, n);
  int64_t mx = -1;
  for (int64_t i = 0; i < n; i++) {
    FG_REQUIRE(v[i] >= -1 && v[i] < FG_IO_MAX_CLASSES, FG_ERR_FORMAT,
               "%s: element %lld: label %lld out of range (0 <= label < %lld, or -1 for none)",
               label, (long long)i, (long long)v[i], (long long)FG_IO_MAX_CLASSES);
    r->labels[i] = (int32_t)v[i];
    if (v[i] > mx) mx = v[i];
  }
  r->num_classes = mx + 1;
  FG_CHECK(fg_raw_check_classes(r, label, 0));
cleanup:
  if (v) npz_release(c, 8.0 * (double)a->count);
  free(v);
  return st;
}

/* A CSR index pointer of n + 1 entries: starts at 0, never decreases, ends at nnz. */
static fg_status check_indptr(const int64_t *ip, int64_t n, int64_t nnz, const char *label) {
  fg_status st = FG_OK;
  FG_REQUIRE(ip[0] == 0, FG_ERR_FORMAT, "%s: element 0 is %lld, expected 0", label,
             (long long)ip[0]);
  for (int64_t i = 0; i < n; i++)
    FG_REQUIRE(ip[i + 1] >= ip[i], FG_ERR_FORMAT, "%s: element %lld (%lld) is smaller than "
               "element %lld (%lld)", label, (long long)i + 1, (long long)ip[i + 1],
               (long long)i, (long long)ip[i]);
  FG_REQUIRE(ip[n] == nnz, FG_ERR_FORMAT, "%s: last element is %lld, expected %lld (the number "
             "of indices)", label, (long long)ip[n], (long long)nnz);
cleanup:
  return st;
}

/* A 1-D integer array of two elements, e.g. adj_shape. */
static fg_status npz_shape2(npz_ctx *c, const char *base, int64_t sh[2]) {
  fg_status st = FG_OK;
  fg_npy a;
  const char *label = NULL;
  int64_t *v = NULL;
  FG_CHECK(npz_get(c, base, 1, &a, &label));
  FG_REQUIRE(a.ndim == 1 && a.count == 2, FG_ERR_FORMAT, "%s: expected 2 elements, got %lld",
             label, (long long)a.count);
  FG_CHECK(npz_ints(c, &a, label, &v));
  sh[0] = v[0];
  sh[1] = v[1];
cleanup:
  if (v) npz_release(c, 16.0);
  free(v);
  return st;
}

/* indptr (n + 1) and indices of a CSR matrix with n rows and `cols` columns. */
static fg_status npz_csr(npz_ctx *c, const char *pfx, int64_t n, int64_t cols, int64_t **indptr,
                         int64_t **indices, int64_t *nnz, const char *what) {
  fg_status st = FG_OK;
  fg_npy a;
  const char *label = NULL, *lptr = NULL;
  char base[64];
  int64_t *ip = NULL, *ix = NULL;
  snprintf(base, sizeof base, "%s_indptr", pfx);
  FG_CHECK(npz_get(c, base, 1, &a, &lptr));
  FG_REQUIRE(a.ndim == 1 && a.count == n + 1, FG_ERR_FORMAT,
             "%s: expected %lld elements (rows + 1), got %lld", lptr, (long long)n + 1,
             (long long)a.count);
  FG_CHECK(npz_ints(c, &a, lptr, &ip));
  snprintf(base, sizeof base, "%s_indices", pfx);
  FG_CHECK(npz_get(c, base, 1, &a, &label));
  FG_REQUIRE(a.ndim == 1, FG_ERR_FORMAT, "%s: expected a 1-D array", label);
  FG_CHECK(npz_ints(c, &a, label, &ix));
  FG_CHECK(check_indptr(ip, n, a.count, lptr));
  for (int64_t k = 0; k < a.count; k++)
    FG_REQUIRE(ix[k] >= 0 && ix[k] < cols, FG_ERR_FORMAT,
               "%s: element %lld: %s %lld out of range [0, %lld)", label, (long long)k, what,
               (long long)ix[k], (long long)cols);
  *nnz = a.count;
  *indptr = ip;
  *indices = ix;
  ip = ix = NULL;
cleanup:
  if (ip) npz_release(c, 8.0 * (double)(n + 1));
  if (ix) npz_release(c, 8.0 * (double)a.count);
  free(ip);
  free(ix);
  return st;
}

/* An n x f float32 feature matrix: its size overflow-checked, then held against the budget. */
static fg_status hold_dense(npz_ctx *c, const char *label, int64_t n, int64_t f) {
  fg_status st = FG_OK;
  char what[96];
  FG_REQUIRE(f >= 0 && f < FG_IO_MAX_NODES, FG_ERR_FORMAT, "%s: feature width %lld out of range",
             label, (long long)f);
  FG_REQUIRE(f == 0 || n <= INT64_MAX / 4 / f, FG_ERR_FORMAT, "%s: %lld x %lld features overflow",
             label, (long long)n, (long long)f);
  snprintf(what, sizeof what, "a dense %lld x %lld feature matrix (%lld bytes)", (long long)n,
           (long long)f, (long long)(n * f * 4));
  FG_CHECK(npz_hold(c, 4.0 * (double)n * (double)f, label, what));
cleanup:
  return st;
}

/* gnn_benchmark: adj_* (CSR, directed), attr_* (CSR) or attr_matrix (dense), labels. */
static fg_status npz_read_csr_layout(npz_ctx *c, fg_raw *r) {
  fg_status st = FG_OK;
  int64_t sh[2], *ip = NULL, *ix = NULL, nnz = 0;
  float *vals = NULL;
  fg_npy a;
  const char *label = NULL;

  FG_CHECK(npz_shape2(c, "adj_shape", sh));
  FG_REQUIRE(sh[0] == sh[1], FG_ERR_FORMAT, "%s[adj_shape.npy]: adjacency is %lld x %lld, not "
             "square", c->path, (long long)sh[0], (long long)sh[1]);
  FG_REQUIRE(sh[0] > 0 && sh[0] <= FG_IO_MAX_NODES, FG_ERR_FORMAT,
             "%s[adj_shape.npy]: number of nodes %lld out of range [1, %lld]", c->path,
             (long long)sh[0], (long long)FG_IO_MAX_NODES);
  int64_t n = sh[0];
  FG_CHECK(npz_csr(c, "adj", n, n, &ip, &ix, &nnz, "node id"));
  FG_CHECK(npz_get(c, "adj_data", 0, &a, &label));
  FG_REQUIRE(!label || (a.ndim == 1 && a.count == nnz), FG_ERR_FORMAT,
             "%s: expected %lld elements (one per index), got %lld", label, (long long)nnz,
             (long long)a.count);
  r->num_nodes = n;
  r->num_edges = nnz;
  r->directed = 1;
  {
    char what[80], lind[512];
    snprintf(what, sizeof what, "the edge list of its %lld entries, and their graph build",
             (long long)nnz);
    snprintf(lind, sizeof lind, "%s[adj_indices.npy]", c->path);
    FG_CHECK(npz_hold(c, (double)nnz * fg_io_edge_bytes(), lind, what));
  }
  FG_ALLOC(r->src, nnz);
  FG_ALLOC(r->dst, nnz);
  for (int64_t i = 0; i < n; i++)
    for (int64_t k = ip[i]; k < ip[i + 1]; k++) {
      r->src[k] = i;
      r->dst[k] = ix[k];
    }
  free(ip);
  free(ix);
  ip = ix = NULL;
  npz_release(c, 8.0 * (double)(n + 1 + nnz));

  if (npz_has(c, "attr_indptr") || npz_has(c, "attr_indices") || npz_has(c, "attr_data") ||
      npz_has(c, "attr_shape")) {
    FG_CHECK(npz_shape2(c, "attr_shape", sh));
    FG_REQUIRE(sh[0] == n, FG_ERR_FORMAT, "%s[attr_shape.npy]: %lld feature rows for %lld nodes",
               c->path, (long long)sh[0], (long long)n);
    int64_t f = sh[1];
    char lshape[512];
    snprintf(lshape, sizeof lshape, "%s[attr_shape.npy]", c->path);
    FG_CHECK(hold_dense(c, lshape, n, f));
    FG_CHECK(npz_csr(c, "attr", n, f, &ip, &ix, &nnz, "column"));
    FG_CHECK(npz_get(c, "attr_data", 1, &a, &label));
    FG_REQUIRE(a.ndim == 1 && a.count == nnz, FG_ERR_FORMAT,
               "%s: expected %lld elements (one per index), got %lld", label, (long long)nnz,
               (long long)a.count);
    FG_CHECK(npz_hold(c, 4.0 * (double)nnz, label, "its values as float32"));
    FG_ALLOC(vals, nnz);
    FG_CHECK(fg_npy_to_f32(&a, label, vals));
    FG_CALLOC(r->features, n * f);
    for (int64_t i = 0; i < n; i++)
      for (int64_t k = ip[i]; k < ip[i + 1]; k++) r->features[i * f + ix[k]] += vals[k];
    for (int64_t i = 0; i < n; i++) /* duplicates are summed (as scipy does): recheck */
      for (int64_t k = ip[i]; k < ip[i + 1]; k++)
        FG_REQUIRE(isfinite(r->features[i * f + ix[k]]), FG_ERR_NUMERIC,
                   "%s: row %lld, column %lld: duplicate entries sum to a non-finite value",
                   label, (long long)i, (long long)ix[k]);
    r->num_features = f;
    free(ip);
    free(ix);
    free(vals);
    ip = ix = NULL;
    vals = NULL;
    npz_release(c, 8.0 * (double)(n + 1 + nnz) + 4.0 * (double)nnz);
  } else {
    FG_CHECK(npz_get(c, "attr_matrix", 0, &a, &label));
    if (label) {
      FG_REQUIRE(a.ndim == 2 && a.shape[0] == n, FG_ERR_FORMAT,
                 "%s: expected shape (%lld, F), got %d dimension(s)", label, (long long)n,
                 a.ndim);
      FG_CHECK(hold_dense(c, label, n, a.shape[1]));
      FG_ALLOC(r->features, a.count);
      FG_CHECK(fg_npy_to_f32(&a, label, r->features));
      r->num_features = a.shape[1];
    }
  }
  FG_CHECK(npz_get(c, "labels", 0, &a, &label));
  if (label) FG_CHECK(npz_labels(c, &a, label, n, r));
cleanup:
  free(ip);
  free(ix);
  free(vals);
  return st;
}

/* One boolean mask: shape (K, n), (n, K) or (n,); column k. */
static fg_status npz_mask(npz_ctx *c, const char *base, int64_t n, int k, int64_t *splits,
                          int8_t *mask) {
  fg_status st = FG_OK;
  fg_npy a;
  const char *label = NULL;
  int64_t *v = NULL;
  FG_CHECK(npz_get(c, base, 1, &a, &label));
  FG_REQUIRE(a.kind == 'b' || a.kind == 'i' || a.kind == 'u', FG_ERR_FORMAT,
             "%s: expected a boolean mask, got dtype '%s'", label, a.descr);
  int64_t nk, stride_node = 1, stride_split = 0;
  if (a.ndim == 1 && a.shape[0] == n) {
    nk = 1;
  } else if (a.ndim == 2 && a.shape[1] == n) {
    nk = a.shape[0];
    stride_split = n;
  } else if (a.ndim == 2 && a.shape[0] == n) {
    nk = a.shape[1];
    stride_node = nk;
    stride_split = 1;
  } else {
    FG_FAIL(FG_ERR_FORMAT, "%s: expected shape (K, %lld) or (%lld,), got %d dimension(s) with "
            "%lld elements", label, (long long)n, (long long)n, a.ndim, (long long)a.count);
  }
  FG_REQUIRE(k >= 0 && k < nk, FG_ERR_INVALID_ARG,
             "%s: split index %d out of range [0, %lld) (the file has %lld splits)", label, k,
             (long long)nk, (long long)nk);
  FG_REQUIRE(*splits < 0 || *splits == nk, FG_ERR_FORMAT,
             "%s: %lld splits, but the other masks have %lld", label, (long long)nk,
             (long long)*splits);
  *splits = nk;
  FG_CHECK(npz_hold(c, 8.0 * (double)a.count, label, "converting it to int64"));
  FG_ALLOC(v, a.count);
  FG_CHECK(fg_npy_to_i64(&a, label, v));
  for (int64_t i = 0; i < n; i++) {
    int64_t x = v[(int64_t)k * stride_split + i * stride_node];
    FG_REQUIRE(x == 0 || x == 1, FG_ERR_FORMAT, "%s: node %lld: mask value %lld is not 0 or 1",
               label, (long long)i, (long long)x);
    mask[i] = (int8_t)x;
  }
cleanup:
  if (v) npz_release(c, 8.0 * (double)a.count);
  free(v);
  return st;
}

/* heterophilous-graphs: node_features, node_labels, edges (E x 2), {train,val,test}_masks. */
static fg_status npz_read_dense_layout(npz_ctx *c, int split_index, fg_raw *r) {
  fg_status st = FG_OK;
  fg_npy feat, lab, edges;
  const char *lf = NULL, *ll = NULL, *le = NULL; /* NULL: no such member */
  int64_t *ev = NULL;
  int8_t *mask = NULL;
  static const char *const mask_names[3] = {"train_masks", "val_masks", "test_masks"};

  FG_CHECK(npz_get(c, "node_features", 0, &feat, &lf));
  FG_CHECK(npz_get(c, "node_labels", 0, &lab, &ll));
  FG_CHECK(npz_get(c, "edges", 1, &edges, &le));
  FG_REQUIRE(!lf || feat.ndim == 2, FG_ERR_FORMAT, "%s: expected shape (N, F), got %d dimension(s)",
             lf, feat.ndim);
  FG_REQUIRE(!ll || lab.ndim == 1 || lab.ndim == 2, FG_ERR_FORMAT,
             "%s: expected shape (N,) or (N, T), got %d dimension(s)", ll, lab.ndim);
  FG_REQUIRE(edges.ndim == 2 && edges.shape[1] == 2, FG_ERR_FORMAT,
             "%s: expected shape (E, 2), got %d dimension(s)", le, edges.ndim);
  int64_t n = lf ? feat.shape[0] : ll ? lab.shape[0] : -1;
  FG_REQUIRE(!lf || !ll || lab.shape[0] == n, FG_ERR_FORMAT,
             "%s: %lld labels for %lld feature rows", ll, (long long)lab.shape[0], (long long)n);
  int64_t m = edges.shape[0];
  FG_CHECK(npz_ints(c, &edges, le, &ev));
  if (n < 0) { /* no per-node arrays: the largest id decides */
    for (int64_t i = 0; i < 2 * m; i++)
      if (ev[i] + 1 > n && ev[i] < FG_IO_MAX_NODES) n = ev[i] + 1;
  }
  FG_REQUIRE(n > 0 && n <= FG_IO_MAX_NODES, FG_ERR_FORMAT,
             "%s: number of nodes %lld out of range [1, %lld]", c->path, (long long)n,
             (long long)FG_IO_MAX_NODES);
  {
    char what[80];
    snprintf(what, sizeof what, "the edge list of its %lld edges, and their graph build",
             (long long)m);
    FG_CHECK(npz_hold(c, (double)m * fg_io_edge_bytes(), le, what));
  }
  FG_CHECK(fg_raw_edge_pairs(ev, m, n, le, r));
  free(ev);
  ev = NULL;
  npz_release(c, 16.0 * (double)m);
  r->num_nodes = n;
  r->directed = 0;
  if (lf) {
    FG_CHECK(hold_dense(c, lf, n, feat.shape[1]));
    FG_ALLOC(r->features, feat.count);
    FG_CHECK(fg_npy_to_f32(&feat, lf, r->features));
    r->num_features = feat.shape[1];
  }
  if (ll) FG_CHECK(npz_labels(c, &lab, ll, n, r));

  int nmasks = 0;
  for (int k = 0; k < 3; k++) nmasks += npz_has(c, mask_names[k]);
  if (nmasks > 0) {
    int64_t splits = -1;
    FG_REQUIRE(nmasks == 3, FG_ERR_FORMAT, "%s: member %s.npy is missing (the other masks are "
               "present)", c->path, !npz_has(c, "train_masks") ? "train_masks" :
               !npz_has(c, "val_masks") ? "val_masks" : "test_masks");
    FG_REQUIRE(ll, FG_ERR_FORMAT, "%s: split masks but no node_labels.npy", c->path);
    FG_CHECK(npz_hold(c, 2.0 * (double)n, c->path, "the split and a mask"));
    FG_ALLOC(r->split, n);
    memset(r->split, FG_SPLIT_NONE, (size_t)n);
    FG_ALLOC(mask, n);
    for (int k = 0; k < 3; k++) {
      FG_CHECK(npz_mask(c, mask_names[k], n, split_index, &splits, mask));
      for (int64_t i = 0; i < n; i++) {
        if (!mask[i]) continue;
        FG_REQUIRE(r->split[i] == FG_SPLIT_NONE, FG_ERR_FORMAT,
                   "%s[%s.npy]: node %lld of split %d is also in %s", c->path, mask_names[k],
                   (long long)i, split_index, mask_names[r->split[i]]);
        int labelled = r->labels && r->labels[i] >= 0;
        for (int64_t t = 0; !labelled && r->targets && t < r->num_tasks; t++)
          labelled = r->targets[i * r->num_tasks + t] >= 0;
        FG_REQUIRE(labelled, FG_ERR_FORMAT, "%s[%s.npy]: node %lld of split %d has no label%s",
                   c->path, mask_names[k], (long long)i, split_index,
                   r->targets ? " (every target missing)" : "");
        r->split[i] = (int8_t)k;
      }
    }
  }
cleanup:
  free(ev);
  free(mask);
  return st;
}

fg_status fg_read_npz_mem(const void *buf, size_t len, const char *name, int split_index,
                          fg_raw *out) {
  fg_status st = FG_OK;
  npz_ctx *c = NULL;
  fg_raw r = {0};
  memset(out, 0, sizeof *out);
  FG_CALLOC(c, 1);
  c->path = name ? name : "(buffer)";
  c->held = (double)len; /* the archive itself, in memory for the whole read */
  FG_CHECK(fg_zip_open(buf, len, c->path, &c->zip));
  if (npz_has(c, "adj_indptr") || npz_has(c, "adj_indices")) {
    FG_CHECK(npz_read_csr_layout(c, &r));
  } else if (npz_has(c, "edges")) {
    FG_CHECK(npz_read_dense_layout(c, split_index, &r));
  } else if (npz_has(c, "format") && npz_has(c, "shape")) {
    FG_CHECK(fg_npz_scipy_sparse(c, &r)); /* scipy.sparse.save_npz: the graph alone */
  } else if (npz_has(c, "feature") && npz_has(c, "node_types")) {
    FG_FAIL(FG_ERR_FORMAT, "%s: the features of a Reddit pair (reddit_data.npz: feature, label, "
            "node_types) without its graph: give the folder that holds it and "
            "reddit_graph.npz, or either file's path beside the other", c->path);
  } else {
    char list[1024] = "";
    for (int64_t i = 0; i < c->zip.num_members; i++)
      fg_list_append(list, sizeof list, i, c->zip.members[i].name);
    FG_FAIL(FG_ERR_FORMAT, "%s: unknown .npz layout (expected adj_indptr/adj_indices/adj_shape "
            "or edges/node_features/node_labels, or scipy.sparse's format/shape/indptr/indices "
            "or format/shape/row/col); members: %s", c->path,
            c->zip.num_members ? list : "none");
  }
  *out = r;
  memset(&r, 0, sizeof r);
cleanup:
  if (c) {
    for (int i = 0; i < c->nowned; i++) free(c->owned[i]);
    fg_zip_close(&c->zip);
    free(c);
  }
  fg_raw_free(&r);
  return st;
}

fg_status fg_read_npz(const char *path, int split_index, fg_raw *out) {
  fg_status st = FG_OK;
  unsigned char *buf = NULL;
  size_t len = 0;
  memset(out, 0, sizeof *out);
  FG_REQUIRE(path, FG_ERR_INVALID_ARG, "fg_read_npz: path is NULL");
  FG_CHECK(fg_file_slurp(path, &buf, &len));
  FG_CHECK(fg_read_npz_mem(buf, len, path, split_index, out));
cleanup:
  free(buf);
  return st;
}

/* ---- the context for other readers (fg_io_internal.h) --------------------------------------- */

fg_status fg_npz_open(const void *buf, size_t len, const char *name, double held, fg_npz **out) {
  fg_status st = FG_OK;
  npz_ctx *c = NULL;
  *out = NULL;
  FG_CALLOC(c, 1);
  c->path = name ? name : "(buffer)";
  c->held = held + (double)len;
  FG_CHECK(fg_zip_open(buf, len, c->path, &c->zip));
  *out = c;
  c = NULL;
cleanup:
  free(c);
  return st;
}

void fg_npz_close(fg_npz *c) {
  if (!c) return;
  for (int i = 0; i < c->nowned; i++) free(c->owned[i]);
  fg_zip_close(&c->zip);
  free(c);
}

const char *fg_npz_path(const fg_npz *c) { return c->path; }
double fg_npz_held(const fg_npz *c) { return c->held; }
int fg_npz_has(const fg_npz *c, const char *base) { return npz_has(c, base); }

fg_status fg_npz_get(fg_npz *c, const char *base, int required, fg_npy *a, const char **label) {
  return npz_get(c, base, required, a, label);
}

fg_status fg_npz_get_header(fg_npz *c, const char *base, int required, fg_npy *a,
                            const char **label) {
  fg_status st = FG_OK;
  unsigned char *head = NULL;
  size_t got = 0;
  *label = NULL;
  int64_t i = npz_find(c, base);
  if (i < 0 || c->zip.members[i].method != 8) { /* absent, or stored: viewed in place */
    FG_CHECK(npz_get(c, base, required, a, label));
    if (*label) a->data = NULL;
    goto cleanup;
  }
  FG_REQUIRE(c->nowned < 16, FG_ERR_INTERNAL, "too many .npz members in use");
  const int k = c->nowned++; /* the label's slot; nothing owned */
  c->owned[k] = NULL;
  snprintf(c->label[k], sizeof c->label[k], "%s[%s]", c->path, c->zip.members[i].show);
  enum { AHEAD = 65536 + 16 }; /* a v1.0 header is at most 10 + 65535 bytes */
  FG_ALLOC(head, AHEAD);
  FG_CHECK(zip_prefix(&c->zip, i, head, AHEAD, &got));
  {
    const fg_zip_member *m = &c->zip.members[i];
    FG_REQUIRE(m->usize <= m->csize * 1040u + 1024u && m->usize < SIZE_MAX, FG_ERR_FORMAT,
               "%s: member '%s' claims %llu bytes from %llu compressed bytes: impossible for "
               "deflate", c->path, m->show, (unsigned long long)m->usize,
               (unsigned long long)m->csize);
  }
  FG_CHECK(fg_npy_parse_header(head, got, (size_t)c->zip.members[i].usize, c->label[k], a));
  *label = c->label[k];
cleanup:
  free(head);
  return st;
}

fg_status fg_npz_get_text(fg_npz *c, const char *base, char *out, size_t cap, fg_npy *a,
                          const char **label) {
  fg_status st = FG_OK;
  const unsigned char *data = NULL;
  size_t len = 0;
  FG_CHECK(npz_bytes(c, base, 1, &data, &len, label));
  FG_CHECK(fg_npy_read_text(data, len, *label, out, cap, a));
cleanup:
  return st;
}

fg_status fg_npz_hold(fg_npz *c, double bytes, const char *label, const char *what) {
  return npz_hold(c, bytes, label, what);
}

void fg_npz_release(fg_npz *c, double bytes) { npz_release(c, bytes); }

fg_status fg_npz_ints(fg_npz *c, const fg_npy *a, const char *label, int64_t **out) {
  return npz_ints(c, a, label, out);
}

fg_status fg_npz_labels(fg_npz *c, const fg_npy *a, const char *label, int64_t n, fg_raw *r) {
  return npz_labels(c, a, label, n, r);
}

fg_status fg_npz_hold_dense(fg_npz *c, const char *label, int64_t n, int64_t f) {
  return hold_dense(c, label, n, f);
}

fg_status fg_check_indptr(const int64_t *ip, int64_t n, int64_t nnz, const char *label) {
  return check_indptr(ip, n, nnz, label);
}

void fg_npz_member_list(const fg_npz *c, char *out, size_t cap) {
  out[0] = '\0';
  for (int64_t i = 0; i < c->zip.num_members; i++)
    fg_list_append(out, cap, i, c->zip.members[i].name);
  if (c->zip.num_members == 0) snprintf(out, cap, "none");
}
