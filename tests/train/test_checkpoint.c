/* test_checkpoint.c -- the checkpoint file: version 2 round-trips bit for bit and has the
 * documented layout, version-1 files still load, unknown sections are skipped, and damaged,
 * foreign or mismatched files are refused with the right status and a message naming the
 * problem. Files are built byte by byte from the layouts in fg_checkpoint.h, not with the
 * code under test. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <zlib.h>

#include "testutil.h"
#include "graph/fg_graph.h"
#include "train/fg_checkpoint.h"

static char tmpdir[256];

/* A path in the test's directory; a few live at once, so they rotate. */
static const char *path_in(const char *name) {
  static char bufs[4][512];
  static int next = 0;
  char *p = bufs[next];
  next = (next + 1) % 4;
  snprintf(p, sizeof bufs[0], "%s/%s", tmpdir, name);
  return p;
}

/* ---- the test model: 3 layers, odd widths ---- */

enum { LAYERS = 3, NP = (7 + 1) * 5 + (5 + 1) * 3 + (3 + 1) * 3 };
static const int64_t widths[LAYERS + 1] = {7, 5, 3, 3};
static float src_p[NP], src_m[NP], src_v[NP], dst_p[NP], dst_m[NP], dst_v[NP];
static fg_ckpt_state src, dst;
static fg_ckpt_meta src_meta, dst_meta;

static void setup_model(void) {
  const uint32_t nan_bits = 0x7fc01234u, subnormal_bits = 0x00000003u;
  fg_test_fill(src_p, NP, 1, -1.0f, 1.0f);
  fg_test_fill(src_m, NP, 2, -0.1f, 0.1f);
  fg_test_fill(src_v, NP, 3, 0.0f, 0.01f);
  /* values whose bits a careless copy or conversion would change */
  src_p[0] = -0.0f;
  memcpy(&src_p[1], &nan_bits, 4);
  memcpy(&src_v[NP - 1], &subnormal_bits, 4);
  src = (fg_ckpt_state){{.kind = NULL}, LAYERS, widths, NP, src_p, src_m, src_v, NULL, NULL, NULL};
  dst = (fg_ckpt_state){{.kind = NULL}, LAYERS, widths, NP, dst_p, dst_m, dst_v, NULL, NULL, NULL};
  src_meta = (fg_ckpt_meta){.seed = 0xfedcba9876543210ull,
                            .epoch = 17,
                            .adam_t = 17,
                            .best_epoch = 12,
                            .best_valid_acc = 0.8125 + 1e-12,
                            .best_valid_loss = 0.6931471805599453,
                            .best_test_acc = -0.0};
}

/* Read into the destination after scribbling over it, so stale values cannot pass. */
static fg_status read_fresh(const char *path) {
  memset(dst_p, 0xab, sizeof dst_p);
  memset(dst_m, 0xab, sizeof dst_m);
  memset(dst_v, 0xab, sizeof dst_v);
  memset(&dst_meta, 0xab, sizeof dst_meta);
  return fg_checkpoint_read(path, &dst, &dst_meta);
}

/* 1 if the destination equals the source bit for bit. */
static int same_state(void) {
  const fg_ckpt_meta *a = &src_meta, *b = &dst_meta;
  return memcmp(src_p, dst_p, sizeof src_p) == 0 && memcmp(src_m, dst_m, sizeof src_m) == 0 &&
         memcmp(src_v, dst_v, sizeof src_v) == 0 && a->seed == b->seed && a->epoch == b->epoch &&
         a->adam_t == b->adam_t && a->best_epoch == b->best_epoch &&
         memcmp(&a->best_valid_acc, &b->best_valid_acc, 8) == 0 &&
         memcmp(&a->best_valid_loss, &b->best_valid_loss, 8) == 0 &&
         memcmp(&a->best_test_acc, &b->best_test_acc, 8) == 0;
}

/* ---- files byte by byte (the host is little-endian: checked in main) ---- */

typedef struct bytes {
  unsigned char *p;
  size_t n, cap;
} bytes;

static void add(bytes *b, const void *p, size_t n) {
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2;
    b->p = realloc(b->p, b->cap);
    if (!b->p) abort();
  }
  if (n) memcpy(b->p + b->n, p, n);
  b->n += n;
}
static void add_u32(bytes *b, uint32_t v) { add(b, &v, 4); }
static void add_u64(bytes *b, uint64_t v) { add(b, &v, 8); }
static void add_zeros(bytes *b, size_t n) {
  static const unsigned char zeros[8] = {0};
  add(b, zeros, n);
}
static uint32_t crc_of(const unsigned char *p, size_t n) {
  return (uint32_t)crc32(crc32(0L, Z_NULL, 0), p, (uInt)n);
}
static void add_crc(bytes *b) { add_u32(b, crc_of(b->p, b->n)); }
/* After editing a finished file: its last 4 bytes become the CRC of the rest again. */
static void fix_crc(bytes *b) {
  const uint32_t c = crc_of(b->p, b->n - 4);
  memcpy(b->p + b->n - 4, &c, 4);
}

static void put_file(const char *path, const unsigned char *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0) {
    perror(path);
    exit(1);
  }
}

static bytes slurp(const char *path) {
  bytes b = {NULL, 0, 0};
  unsigned char chunk[4096];
  size_t got;
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) add(&b, chunk, got);
  fclose(f);
  return b;
}

/* The version-1 layout of fg_checkpoint.h. */
static bytes build_v1(void) {
  bytes b = {NULL, 0, 0};
  add(&b, "FGCKPT1\n", 8);
  add_u32(&b, 1);
  add_u32(&b, LAYERS);
  add_u64(&b, src_meta.seed);
  add(&b, &src_meta.epoch, 8);
  add(&b, &src_meta.adam_t, 8);
  add_u64(&b, NP);
  add(&b, &src_meta.best_epoch, 8);
  add(&b, &src_meta.best_valid_acc, 8);
  add(&b, &src_meta.best_valid_loss, 8);
  add(&b, &src_meta.best_test_acc, 8);
  add(&b, widths, sizeof widths);
  add(&b, src_p, sizeof src_p);
  add(&b, src_m, sizeof src_m);
  add(&b, src_v, sizeof src_v);
  add_crc(&b);
  return b;
}

/* A version-2 section: its name and payload (payload points into another buffer). */
typedef struct section {
  char name[17];
  const unsigned char *payload;
  uint64_t len;
  size_t at; /* where its header was found (split_v2) */
} section;

/* Split a version-2 file into its sections by the documented layout, checking what the layout
 * promises: headers 8-aligned, zero padding, the sections ending at the CRC, the CRC right.
 * The number of sections, or -1 (with a message) where the file breaks the layout. */
static int split_v2(const bytes *f, section *out, int max) {
  uint32_t version, count, crc;
  size_t off = 16;
  if (f->n < 20 || memcmp(f->p, "FGCKPT1\n", 8) != 0) return -1;
  memcpy(&version, f->p + 8, 4);
  memcpy(&count, f->p + 12, 4);
  if (version != 2 || count > (uint32_t)max) return -1;
  for (uint32_t i = 0; i < count; i++) {
    section *s = &out[i];
    if (off % 8 != 0 || off + 24 > f->n - 4) return -1;
    memcpy(s->name, f->p + off, 16);
    s->name[16] = '\0';
    memcpy(&s->len, f->p + off + 16, 8);
    s->payload = f->p + off + 24;
    s->at = off;
    off += 24;
    if (s->len > f->n - 4 - off) return -1;
    off += (size_t)s->len;
    while (off % 8 != 0) {
      if (off >= f->n - 4 || f->p[off] != 0) return -1;
      off++;
    }
  }
  if (off != f->n - 4) return -1;
  memcpy(&crc, f->p + off, 4);
  return crc_of(f->p, off) == crc ? (int)count : -1;
}

/* A version-2 file from sections (each padded to 8), with its CRC. */
static bytes emit_v2(uint32_t version, const section *secs, int count) {
  bytes b = {NULL, 0, 0};
  add(&b, "FGCKPT1\n", 8);
  add_u32(&b, version);
  add_u32(&b, (uint32_t)count);
  for (int i = 0; i < count; i++) {
    char field[16] = {0};
    memcpy(field, secs[i].name, strlen(secs[i].name) < 16 ? strlen(secs[i].name) : 16);
    add(&b, field, 16);
    add_u64(&b, secs[i].len);
    add(&b, secs[i].payload, (size_t)secs[i].len);
    add_zeros(&b, (size_t)((8 - secs[i].len % 8) % 8));
  }
  add_crc(&b);
  return b;
}

/* Write b to name, read it, expect status code and a message containing needle. */
static void expect_refused(const char *what, const bytes *b, const char *name, fg_status code,
                           const char *needle) {
  fg_status st;
  put_file(path_in(name), b->p, b->n);
  st = read_fresh(path_in(name));
  EXPECT_MSG(st == code, "%s: status %d, expected %d (%s)", what, (int)st, (int)code,
             fg_last_error());
  EXPECT_MSG(fg_test_error_contains(needle), "%s", what);
  EXPECT_MSG(fg_test_error_contains(name), "%s: the message names the file", what);
}

/* ---- the tests ---- */

/* The file a v2 writer produced, split into its six sections. */
enum { NSEC = 6 };
static bytes written;
static section secs[NSEC];

static void test_round_trip(void) {
  static const char *const names[NSEC] = {"meta", "model", "widths", "params", "adam_m",
                                          "adam_v"};
  static const uint64_t lens[NSEC] = {56, 56, 4 + 8 * (LAYERS + 1), 4 * NP, 4 * NP, 4 * NP};
  /* "gcn", 1 matrix, sym, self loops, no norm, 1 stage, eps fixed at 0, no residual, no label
   * embedding, padding */
  static const unsigned char gcn_model[56] = {'g', 'c', 'n', [16] = 1, [32] = 1};
  uint32_t layers;
  EXPECT_OK(fg_checkpoint_write(path_in("a.ckpt"), &src, &src_meta));
  EXPECT(!fg_test_exists(path_in("a.ckpt.tmp")));
  EXPECT_OK(read_fresh(path_in("a.ckpt")));
  EXPECT_MSG(same_state(), "version 2 does not round-trip bit for bit");

  /* the documented layout, section by section */
  written = slurp(path_in("a.ckpt"));
  EXPECT_MSG(split_v2(&written, secs, NSEC) == NSEC,
             "the written file breaks the version-2 layout");
  for (int i = 0; i < NSEC; i++) {
    EXPECT_MSG(strcmp(secs[i].name, names[i]) == 0 && secs[i].len == lens[i],
               "section %d: \"%s\", %llu bytes", i, secs[i].name,
               (unsigned long long)secs[i].len);
    EXPECT((secs[i].at + 24) % 8 == 0);
  }
  EXPECT(memcmp(secs[0].payload, &src_meta.seed, 8) == 0);
  EXPECT(memcmp(secs[0].payload + 48, &src_meta.best_test_acc, 8) == 0);
  EXPECT(memcmp(secs[1].payload, gcn_model, 56) == 0);
  memcpy(&layers, secs[2].payload, 4);
  EXPECT(layers == LAYERS && memcmp(secs[2].payload + 4, widths, sizeof widths) == 0);
  EXPECT(memcmp(secs[3].payload, src_p, sizeof src_p) == 0);
  EXPECT(memcmp(secs[4].payload, src_m, sizeof src_m) == 0);
  EXPECT(memcmp(secs[5].payload, src_v, sizeof src_v) == 0);
}

static void test_version1(void) {
  bytes b = build_v1();
  int64_t huge = INT64_MAX / 2;
  put_file(path_in("v1.ckpt"), b.p, b.n);
  EXPECT_OK(read_fresh(path_in("v1.ckpt")));
  EXPECT_MSG(same_state(), "a version-1 file does not load bit for bit");
  /* version 1's own refusals still hold */
  b.p[b.n / 2] ^= 0x10;
  expect_refused("v1 flipped byte", &b, "v1flip.ckpt", FG_ERR_FORMAT, "checksum mismatch");
  b.p[b.n / 2] ^= 0x10;
  b.n -= 8;
  fix_crc(&b);
  expect_refused("v1 truncated", &b, "v1short.ckpt", FG_ERR_FORMAT, "truncated");
  free(b.p);
  /* a parameter count whose byte size overflows */
  b = build_v1();
  memcpy(b.p + 40, &huge, 8);
  fix_crc(&b);
  expect_refused("v1 huge count", &b, "v1huge.ckpt", FG_ERR_FORMAT, "truncated or corrupt");
  free(b.p);
}

static void test_unknown_sections(void) {
  static const unsigned char later[13] = "from the fut";
  section more[NSEC + 2];
  bytes b;
  /* one before the known sections, one (odd length: padded) just before the CRC */
  more[0] = (section){"zz.later", later, 0, 0};
  memcpy(more + 1, secs, sizeof secs);
  more[NSEC + 1] = (section){"future", later, sizeof later, 0};
  b = emit_v2(2, more, NSEC + 2);
  put_file(path_in("future.ckpt"), b.p, b.n);
  EXPECT_OK(read_fresh(path_in("future.ckpt")));
  EXPECT_MSG(same_state(), "a file with unknown sections does not load bit for bit");
  free(b.p);
  /* sections in another order are as good */
  more[0] = secs[4];
  more[1] = secs[2];
  more[2] = secs[0];
  more[3] = secs[5];
  more[4] = secs[1];
  more[5] = secs[3];
  b = emit_v2(2, more, NSEC);
  put_file(path_in("order.ckpt"), b.p, b.n);
  EXPECT_OK(read_fresh(path_in("order.ckpt")));
  EXPECT(same_state());
  free(b.p);
  /* without a "model" section (as builds before it wrote): a GCN with the symmetric Â */
  more[0] = secs[0];
  memcpy(more + 1, secs + 2, (NSEC - 2) * sizeof *secs);
  b = emit_v2(2, more, NSEC - 1);
  put_file(path_in("nomodel.ckpt"), b.p, b.n);
  EXPECT_OK(read_fresh(path_in("nomodel.ckpt")));
  EXPECT(same_state());
  free(b.p);
  /* the 32-byte "model" section of builds before GIN (one stage, no epsilon), and the 48-byte
   * one of builds before label propagation */
  for (int k = 0; k < 2; k++) {
    memcpy(more, secs, sizeof secs);
    more[1].len = k ? 48 : 32;
    b = emit_v2(2, more, NSEC);
    put_file(path_in("model32.ckpt"), b.p, b.n);
    EXPECT_OK(read_fresh(path_in("model32.ckpt")));
    EXPECT(same_state());
    free(b.p);
  }
}

static void test_refusals(void) {
  section edit[NSEC + 1];
  bytes b;
  const uint64_t huge = UINT64_MAX - 3;
  const uint32_t many = 0xffffffffu;
  int64_t other_widths[LAYERS + 1] = {7, 5, 4, 3};
  fg_status st;

  /* truncated, anywhere: every shorter prefix is refused */
  b = written;
  b.n -= 10;
  expect_refused("truncated", &b, "short.ckpt", FG_ERR_FORMAT, "truncated");
  {
    int accepted = 0;
    for (size_t n = 0; n < written.n; n++) {
      put_file(path_in("prefix.ckpt"), written.p, n);
      if (read_fresh(path_in("prefix.ckpt")) != FG_ERR_FORMAT) accepted++;
    }
    EXPECT_MSG(accepted == 0, "%d truncated prefixes not refused as FG_ERR_FORMAT", accepted);
  }

  /* a flipped byte in a payload: only the CRC can tell */
  b = (bytes){malloc(written.n), written.n, written.n};
  memcpy(b.p, written.p, written.n);
  b.p[secs[4].at + 24 + 5] ^= 0x40;
  expect_refused("flipped byte", &b, "flip.ckpt", FG_ERR_FORMAT, "checksum mismatch");
  memcpy(b.p, written.p, written.n);

  /* magic and version */
  b.p[0] = 'X';
  expect_refused("bad magic", &b, "magic.ckpt", FG_ERR_FORMAT, "bad magic");
  b.p[0] = 'F';
  free(b.p);
  b = emit_v2(9, secs, NSEC);
  expect_refused("version 9", &b, "v9.ckpt", FG_ERR_UNSUPPORTED, "version 9");
  EXPECT(fg_test_error_contains("reads versions 1 and 2"));
  free(b.p);

  /* a required section missing, a section twice */
  memcpy(edit, secs, sizeof secs);
  edit[3] = secs[5];
  b = emit_v2(2, edit, NSEC - 1);
  expect_refused("no params", &b, "noparams.ckpt", FG_ERR_FORMAT, "no \"params\" section");
  free(b.p);
  memcpy(edit, secs, sizeof secs);
  edit[NSEC] = secs[0];
  b = emit_v2(2, edit, NSEC + 1);
  expect_refused("meta twice", &b, "dup.ckpt", FG_ERR_FORMAT, "duplicate section \"meta\"");
  free(b.p);

  /* lengths past the end, including one that overflows when rounded up, and a section count
   * the file has no room for; each with a right CRC, so the layout check is what refuses */
  b = (bytes){malloc(written.n), written.n, written.n};
  memcpy(b.p, written.p, written.n);
  {
    const uint64_t longer = secs[5].len + 64;
    memcpy(b.p + secs[5].at + 16, &longer, 8);
  }
  fix_crc(&b);
  expect_refused("length past the end", &b, "past.ckpt", FG_ERR_FORMAT, "runs past the end");
  EXPECT(fg_test_error_contains("\"adam_v\""));
  memcpy(b.p, written.p, written.n);
  memcpy(b.p + secs[2].at + 16, &huge, 8);
  fix_crc(&b);
  expect_refused("huge length", &b, "huge.ckpt", FG_ERR_FORMAT, "runs past the end");
  memcpy(b.p, written.p, written.n);
  memcpy(b.p + 12, &many, 4);
  fix_crc(&b);
  expect_refused("section count", &b, "count.ckpt", FG_ERR_FORMAT, "sections declared");
  memcpy(b.p, written.p, written.n);
  b.p[secs[3].at + 3] = ' ';
  fix_crc(&b);
  expect_refused("bad name", &b, "name.ckpt", FG_ERR_FORMAT, "malformed name");
  free(b.p);

  /* payload lengths that contradict the layout: params one float short, meta short */
  memcpy(edit, secs, sizeof secs);
  edit[3].len -= 4;
  b = emit_v2(2, edit, NSEC);
  expect_refused("params length", &b, "plen.ckpt", FG_ERR_FORMAT, "imply 70 float32");
  EXPECT(fg_test_error_contains("\"params\""));
  free(b.p);
  memcpy(edit, secs, sizeof secs);
  edit[0].len = 48;
  b = emit_v2(2, edit, NSEC);
  expect_refused("meta length", &b, "mlen.ckpt", FG_ERR_FORMAT, "expected 56");
  free(b.p);
  /* a model section of another length, or with a count out of range */
  memcpy(edit, secs, sizeof secs);
  edit[1].len = 24;
  b = emit_v2(2, edit, NSEC);
  expect_refused("model length", &b, "modlen.ckpt", FG_ERR_FORMAT, "\"model\"");
  free(b.p);
  b = (bytes){malloc(written.n), written.n, written.n};
  memcpy(b.p, written.p, written.n);
  b.p[secs[1].at + 24 + 16] = 0; /* 0 matrices a layer */
  fix_crc(&b);
  expect_refused("model matrices", &b, "modmats.ckpt", FG_ERR_FORMAT, "0 matrices a layer");
  free(b.p);
  b = (bytes){malloc(written.n), written.n, written.n};
  memcpy(b.p, written.p, written.n);
  b.p[secs[1].at + 24 + 28] = 3; /* norm 3: none, layer and batch are 0 to 2 */
  fix_crc(&b);
  expect_refused("model norm", &b, "modnorm.ckpt", FG_ERR_FORMAT, "no self loops 0, norm 3,");
  free(b.p);

  /* a file sound in itself that belongs to another model */
  dst.widths = other_widths;
  st = read_fresh(path_in("a.ckpt"));
  EXPECT(st == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("checkpoint layer width 2 is 3, the model's is 4"));
  dst.widths = widths;
  dst.layers = 2;
  st = read_fresh(path_in("a.ckpt"));
  EXPECT(st == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("checkpoint has 3 layers, the model has 2"));
  st = read_fresh(path_in("v1.ckpt"));
  EXPECT(st == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("checkpoint has 3 layers, the model has 2"));
  dst.layers = LAYERS;
  dst.n_params = NP - 1;
  st = read_fresh(path_in("a.ckpt"));
  EXPECT(st == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("checkpoint has 70 parameters, the model 69"));
  dst.n_params = NP;
}

/* Every single-byte change, with the CRC made right again, is loaded or refused, never read
 * out of bounds (run under AddressSanitizer to see that). */
static void test_mutations(void) {
  static const unsigned char flips[3] = {0x01, 0x80, 0xff};
  bytes b = {malloc(written.n), written.n, written.n};
  int odd = 0;
  for (size_t i = 0; i + 4 < written.n; i++) {
    for (int k = 0; k < 3; k++) {
      fg_status st;
      memcpy(b.p, written.p, written.n);
      b.p[i] ^= flips[k];
      fix_crc(&b);
      put_file(path_in("mutant.ckpt"), b.p, b.n);
      st = read_fresh(path_in("mutant.ckpt"));
      if (st != FG_OK && st != FG_ERR_FORMAT && st != FG_ERR_UNSUPPORTED &&
          st != FG_ERR_INVALID_ARG)
        odd++;
    }
  }
  EXPECT_MSG(odd == 0, "%d mutants gave an unexpected status", odd);
  free(b.p);
}

/* Hidden entries of the test directory: where a temporary file would show. */
static int hidden_entries(void) {
  DIR *d = opendir(tmpdir);
  struct dirent *e;
  int n = 0;
  if (!d) return -1;
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] == '.' && strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(d);
  return n;
}

static void test_write_failures(void) {
  fg_ckpt_state bad = src;
  fg_ckpt_meta odd = src_meta;
  struct rlimit old, small;
  struct stat sb;
  bytes before, after;
  /* a state whose widths do not imply its parameter count: unreadable, so not written */
  bad.n_params = NP + 1;
  EXPECT(fg_checkpoint_write(path_in("bad.ckpt"), &bad, &src_meta) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("widths imply 70"));
  EXPECT(!fg_test_exists(path_in("bad.ckpt")));
  /* nor a meta the reader would refuse */
  odd.adam_t = -1;
  EXPECT(fg_checkpoint_write(path_in("bad.ckpt"), &src, &odd) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("Adam step count -1, but epoch 17"));
  EXPECT(!fg_test_exists(path_in("bad.ckpt")));
  /* no directory to write in */
  EXPECT(fg_checkpoint_write(path_in("none/x.ckpt"), &src, &src_meta) == FG_ERR_IO);
  EXPECT(fg_test_error_contains("none/x.ckpt: cannot create"));
  /* a directory or an empty name: refused by name, nothing left behind */
  EXPECT(mkdir(path_in("dir"), 0700) == 0);
  EXPECT(fg_checkpoint_write(path_in("dir"), &src, &src_meta) == FG_ERR_IO);
  EXPECT(fg_test_error_contains("dir: is a directory"));
  EXPECT(fg_checkpoint_write("", &src, &src_meta) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("empty output file name"));
  EXPECT(!fg_test_exists(".tmp") && !fg_test_exists(path_in("dir.tmp")));
  EXPECT(hidden_entries() == 0);
  rmdir(path_in("dir"));
  /* a device is written through, never replaced: a full one reports it (made here: root) */
  if (mknod(path_in("full"), S_IFCHR | 0666, makedev(1, 7)) == 0) {
    EXPECT(fg_checkpoint_write(path_in("full"), &src, &src_meta) == FG_ERR_IO);
    EXPECT(fg_test_error_contains("full: write error: No space left on device"));
    EXPECT(stat(path_in("full"), &sb) == 0 && S_ISCHR(sb.st_mode));
    unlink(path_in("full"));
  }
  /* a rewrite that fails midway (the file size limit: EFBIG, as a full disk) leaves the
   * previous checkpoint whole and no temporary */
  EXPECT_OK(fg_checkpoint_write(path_in("keep.ckpt"), &src, &src_meta));
  before = slurp(path_in("keep.ckpt"));
  odd = src_meta;
  odd.epoch = odd.adam_t = odd.best_epoch = 18;
  EXPECT(getrlimit(RLIMIT_FSIZE, &old) == 0);
  small = old;
  small.rlim_cur = 100;
  signal(SIGXFSZ, SIG_IGN);
  EXPECT(setrlimit(RLIMIT_FSIZE, &small) == 0);
  EXPECT(fg_checkpoint_write(path_in("keep.ckpt"), &src, &odd) == FG_ERR_IO);
  EXPECT(fg_test_error_contains("keep.ckpt: write error: File too large"));
  EXPECT(setrlimit(RLIMIT_FSIZE, &old) == 0);
  signal(SIGXFSZ, SIG_DFL);
  after = slurp(path_in("keep.ckpt"));
  EXPECT(before.n == after.n && memcmp(before.p, after.p, before.n) == 0);
  EXPECT(hidden_entries() == 0);
  EXPECT_OK(read_fresh(path_in("keep.ckpt")));
  EXPECT(dst_meta.epoch == 17);
  free(before.p);
  free(after.p);
}

/* The reader takes regular files only, and says what it was given instead. */
static void test_read_paths(void) {
  EXPECT(mkdir(path_in("rdir"), 0700) == 0);
  EXPECT(read_fresh(path_in("rdir")) == FG_ERR_IO);
  EXPECT(fg_test_error_contains("rdir: is a directory"));
  rmdir(path_in("rdir"));
  EXPECT(mkfifo(path_in("fifo"), 0600) == 0); /* (reading it would wait for a writer) */
  EXPECT(read_fresh(path_in("fifo")) == FG_ERR_IO);
  EXPECT(fg_test_error_contains("fifo: not a regular file"));
  unlink(path_in("fifo"));
  EXPECT(read_fresh(path_in("absent.ckpt")) == FG_ERR_IO);
  EXPECT(fg_test_error_contains("absent.ckpt: cannot open checkpoint: No such file"));
  EXPECT(fg_checkpoint_read("", &dst, &dst_meta) == FG_ERR_INVALID_ARG);
  /* the bytes alone, as the fuzz target reads them */
  EXPECT_OK(fg_checkpoint_read_mem(written.p, written.n, "mem", &dst, &dst_meta));
  EXPECT(same_state());
  EXPECT(fg_checkpoint_read_mem(written.p, 10, "mem", &dst, &dst_meta) == FG_ERR_FORMAT);
  EXPECT(fg_test_error_contains("mem: not a fullgraph checkpoint (10 bytes, too short)"));
  EXPECT(fg_checkpoint_read_mem(NULL, 0, "mem", &dst, &dst_meta) == FG_ERR_FORMAT);
  {
    fg_ckpt_info info;
    EXPECT_OK(fg_checkpoint_inspect_mem(written.p, written.n, "mem", &info));
    EXPECT(strcmp(info.model.kind, "gcn") == 0 && info.layers == LAYERS && info.n_params == NP);
    EXPECT(info.widths && memcmp(info.widths, widths, sizeof widths) == 0);
    EXPECT(info.meta.epoch == 17 && !info.has_options && !info.has_dataset);
    fg_ckpt_info_free(&info);
  }
}

/* A file sound in structure and checksum whose meta says nonsense is refused, naming the field
 * (each edit below is made with the CRC right again). */
static void edit_meta(const char *what, size_t off, const void *val, const char *needle) {
  bytes b = {malloc(written.n), written.n, written.n};
  memcpy(b.p, written.p, written.n);
  memcpy(b.p + secs[0].at + 24 + off, val, 8);
  fix_crc(&b);
  expect_refused(what, &b, "meta.ckpt", FG_ERR_FORMAT, needle);
  EXPECT_MSG(fg_test_error_contains("section \"meta\""), "%s", what);
  free(b.p);
}

static void test_header_ranges(void) {
  const int64_t minus5 = -5, big = INT64_C(1) << 62, minus1 = -1, e18 = 18, zero = 0;
  const double nan_v = NAN, half_more = 1.5, neg = -0.25, inf = INFINITY;
  bytes b;
  edit_meta("epoch -5", 8, &minus5, "epoch -5 out of range [0, 2^31 - 1)");
  edit_meta("epoch 2^62", 8, &big, "epoch 4611686018427387904 out of range");
  edit_meta("Adam step -1", 16, &minus1, "Adam step count -1, but epoch 17");
  edit_meta("Adam step 18", 16, &e18, "Adam step count 18, but epoch 17");
  edit_meta("best epoch 18", 24, &e18, "best epoch 18 out of range [1, 17]");
  edit_meta("best epoch 0", 24, &zero, "best epoch 0 out of range [1, 17]");
  edit_meta("best epoch -1", 24, &minus1, "best epoch -1 out of range");
  edit_meta("NaN accuracy", 32, &nan_v, "best validation accuracy nan out of range [0, 1]");
  edit_meta("accuracy 1.5", 32, &half_more, "best validation accuracy 1.5 out of range");
  edit_meta("NaN loss", 40, &nan_v, "validation loss at the best epoch nan is not >= 0");
  edit_meta("negative loss", 40, &neg, "validation loss at the best epoch -0.25");
  edit_meta("test accuracy -0.25", 48, &neg, "test accuracy at the best epoch -0.25 out of range");
  edit_meta("NaN test accuracy", 48, &nan_v, "test accuracy at the best epoch nan");
  /* an infinite validation loss is a loss a run can have: accepted */
  b = (bytes){malloc(written.n), written.n, written.n};
  memcpy(b.p, written.p, written.n);
  memcpy(b.p + secs[0].at + 24 + 40, &inf, 8);
  fix_crc(&b);
  put_file(path_in("infloss.ckpt"), b.p, b.n);
  EXPECT_OK(read_fresh(path_in("infloss.ckpt")));
  /* a width that is not positive */
  memcpy(b.p, written.p, written.n);
  memcpy(b.p + secs[2].at + 24 + 4 + 8, &minus5, 8);
  fix_crc(&b);
  expect_refused("width -5", &b, "width.ckpt", FG_ERR_FORMAT, "layer 0 is 7 x -5 (corrupt)");
  free(b.p);
  /* version 1 is held to the same ranges */
  b = build_v1();
  memcpy(b.p + 24, &minus5, 8);
  fix_crc(&b);
  expect_refused("v1 epoch -5", &b, "v1meta.ckpt", FG_ERR_FORMAT, "header: epoch -5 out of range");
  free(b.p);
}

/* The "options" and "dataset" sections: written when the state has them, read back, compared
 * with the run's (a difference refused naming it), range-checked; files without them (older
 * builds) still load; a fingerprint of an unknown kind is not compared. */
static void test_run_sections(void) {
  const fg_ckpt_options opts = {.lr = 0.01, .dropout = 0.5, .weight_decay = 5e-4,
                                .label_prop = 0, .weight_decay_layers = FG_WD_FIRST,
                                .normalize_features = 1};
  const fg_ds_fingerprint fp = {.nodes = 2708, .entries = 13264, .features = 1433,
                                .classes = 7, .graph = 0x1111, .feature_hash = 0x2222,
                                .labels = 0x3333, .split = 0x4444};
  fg_ckpt_options o2 = opts;
  fg_ds_fingerprint f2 = fp;
  fg_ckpt_state s2 = src;
  section got[NSEC + 2];
  bytes b;
  fg_ckpt_info info;
  s2.options = &opts;
  s2.dataset = &fp;
  EXPECT_OK(fg_checkpoint_write(path_in("run.ckpt"), &s2, &src_meta));
  b = slurp(path_in("run.ckpt"));
  EXPECT(split_v2(&b, got, NSEC + 2) == NSEC + 2);
  /* the documented layout: after "model", "options" (40 bytes) and "dataset" (72 bytes) */
  EXPECT(strcmp(got[2].name, "options") == 0 && got[2].len == 40);
  EXPECT(strcmp(got[3].name, "dataset") == 0 && got[3].len == 72);
  EXPECT(strcmp(got[4].name, "widths") == 0);
  if (got[2].len == 40 && got[3].len == 72) {
    double d[4];
    uint32_t u[2];
    int64_t sizes[4];
    uint64_t hashes[4];
    memcpy(d, got[2].payload, 32);
    memcpy(u, got[2].payload + 32, 8);
    EXPECT(d[0] == 0.01 && d[1] == 0.5 && d[2] == 5e-4 && d[3] == 0 && u[0] == 0 && u[1] == 1);
    memcpy(u, got[3].payload, 8);
    memcpy(sizes, got[3].payload + 8, 32);
    memcpy(hashes, got[3].payload + 40, 32);
    EXPECT(u[0] == FG_FINGERPRINT_KIND && u[1] == 0);
    EXPECT(sizes[0] == 2708 && sizes[1] == 13264 && sizes[2] == 1433 && sizes[3] == 7);
    EXPECT(hashes[0] == 0x1111 && hashes[1] == 0x2222 && hashes[2] == 0x3333 &&
           hashes[3] == 0x4444);
  }
  EXPECT_OK(fg_checkpoint_inspect_mem(b.p, b.n, "run", &info));
  EXPECT(info.has_options && info.has_dataset && info.options.dropout == 0.5 &&
         info.dataset.labels == 0x3333);
  fg_ckpt_info_free(&info);

  /* the same run resumes; the older file (no sections) resumes under the checks too */
  dst.options = &o2;
  dst.dataset = &f2;
  EXPECT_OK(read_fresh(path_in("run.ckpt")));
  EXPECT(same_state());
  EXPECT_OK(read_fresh(path_in("a.ckpt")));
  /* what differs is named */
  o2.dropout = 0.3;
  EXPECT(read_fresh(path_in("run.ckpt")) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("run.ckpt: --dropout 0.5 in the checkpoint, 0.3 in this run"));
  o2 = opts;
  o2.lr = 0.001;
  EXPECT(read_fresh(path_in("run.ckpt")) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("--lr 0.01 in the checkpoint, 0.001 in this run"));
  o2 = opts;
  o2.weight_decay_layers = FG_WD_ALL;
  EXPECT(read_fresh(path_in("run.ckpt")) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("--weight-decay-layers first in the checkpoint, all in this run"));
  o2 = opts;
  o2.normalize_features = 0;
  EXPECT(read_fresh(path_in("run.ckpt")) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("made with --normalize-features, this run is without it"));
  o2 = opts;
  f2.labels = 0x3334;
  EXPECT(read_fresh(path_in("run.ckpt")) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("another dataset of the same sizes: the labels differ "
                                "(hash 0000000000003333 in the checkpoint, 0000000000003334"));
  f2 = fp;
  f2.classes = 8;
  EXPECT(read_fresh(path_in("run.ckpt")) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("made on a dataset of 2708 nodes, 13264 adjacency entries, "
                                "1433 features and 7 classes; this run's has 2708, 13264, "
                                "1433 and 8"));
  f2 = fp;
  /* out of range in the file: refused as damage, naming the field */
  {
    static const struct {
      int sec;       /* 2 options, 3 dataset */
      size_t off;
      uint64_t bits;
      const char *needle;
    } bad[] = {
        {2, 8, 0x3ff8000000000000ull, "--dropout 1.5 out of range [0, 1)"},
        {2, 0, 0x7ff8000000000000ull, "--lr nan is not > 0"},
        {2, 16, 0xbff0000000000000ull, "--weight-decay -1 is not >= 0"},
        {2, 24, 0x3ff0000000000000ull, "--label-prop 1 is neither 0 nor in (0, 1)"},
        {2, 32, 7, "--weight-decay-layers 7 is neither"},
        {3, 8, 0, "section \"dataset\": 0 nodes"},
        {3, 24, 0xffffffffffffffffull, "-1 features"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
      bytes e = {malloc(b.n), b.n, b.n};
      memcpy(e.p, b.p, b.n);
      memcpy(e.p + got[bad[k].sec].at + 24 + bad[k].off, &bad[k].bits, 8);
      fix_crc(&e);
      expect_refused(bad[k].needle, &e, "range.ckpt", FG_ERR_FORMAT, bad[k].needle);
      free(e.p);
    }
  }
  /* a later fingerprint kind is not compared (this build cannot), the rest still is */
  {
    bytes e = {malloc(b.n), b.n, b.n};
    const uint32_t kind2 = 2;
    memcpy(e.p, b.p, b.n);
    memcpy(e.p + got[3].at + 24, &kind2, 4);
    fix_crc(&e);
    put_file(path_in("kind2.ckpt"), e.p, e.n);
    f2.labels = 0x9999;
    EXPECT_OK(read_fresh(path_in("kind2.ckpt")));
    f2 = fp;
    free(e.p);
  }
  /* a wrong length */
  {
    section edit[NSEC + 2];
    bytes e;
    memcpy(edit, got, sizeof edit);
    edit[2].len = 32;
    e = emit_v2(2, edit, NSEC + 2);
    expect_refused("options length", &e, "olen.ckpt", FG_ERR_FORMAT, "expected 40");
    free(e.p);
  }
  /* the writer refuses options the reader would */
  o2.dropout = 1;
  s2.options = &o2;
  EXPECT(fg_checkpoint_write(path_in("badopt.ckpt"), &s2, &src_meta) == FG_ERR_INVALID_ARG);
  EXPECT(!fg_test_exists(path_in("badopt.ckpt")));
  dst.options = NULL;
  dst.dataset = NULL;
  free(b.p);
}

/* The fuzz target's seeds (tests/corpus/ckpt, made by make_ckpt.sh with the fullgraph program)
 * are checkpoints this build reads (one a sharded checkpoint's manifest), and shard files. */
static void test_corpus(void) {
  DIR *d = opendir(FG_CORPUS "/ckpt");
  struct dirent *e;
  int n = 0;
  EXPECT_MSG(d, "%s/ckpt: missing", FG_CORPUS);
  while (d && (e = readdir(d)) != NULL) {
    char path[1024];
    bytes b;
    fg_ckpt_info info;
    if (strstr(e->d_name, ".shard")) { /* a sharded checkpoint's shard file: sound on its own */
      snprintf(path, sizeof path, "%s/ckpt/%s", FG_CORPUS, e->d_name);
      b = slurp(path);
      EXPECT_MSG(fg_ckpt_shard_check_mem(b.p, b.n, path, NULL, 0, 0, 0) == FG_OK, "%s",
                 fg_last_error());
      free(b.p);
      continue;
    }
    if (!strstr(e->d_name, ".ckpt")) continue;
    snprintf(path, sizeof path, "%s/ckpt/%s", FG_CORPUS, e->d_name);
    b = slurp(path);
    EXPECT_MSG(fg_checkpoint_inspect_mem(b.p, b.n, path, &info) == FG_OK, "%s", fg_last_error());
    EXPECT_MSG(info.has_options && info.has_dataset, "%s: no options or dataset", path);
    fg_ckpt_info_free(&info);
    free(b.p);
    n++;
  }
  if (d) closedir(d);
  EXPECT_MSG(n >= 3, "%d seeds in %s/ckpt", n, FG_CORPUS);
}

/* The model section: a SAGE model (two matrices a layer, its own normalization) round-trips,
 * and a checkpoint is refused by a run of another model or another operator, naming both. */
static void test_models(void) {
  enum { NPS = (2 * 7 + 1) * 5 + (2 * 5 + 1) * 3 + (2 * 3 + 1) * 3 };
  static float sp[NPS], sm[NPS], sv[NPS], dp[NPS], dm[NPS], dv[NPS];
  const fg_ckpt_model sage = {.kind = "sage", .mats = 2, .adj_norm = FG_ADJ_MEAN,
                              .no_self_loops = 1};
  fg_ckpt_state a = {sage, LAYERS, widths, NPS, sp, sm, sv, NULL, NULL, NULL};
  fg_ckpt_state b = {sage, LAYERS, widths, NPS, dp, dm, dv, NULL, NULL, NULL};
  fg_ckpt_meta m2;
  fg_test_fill(sp, NPS, 4, -1.0f, 1.0f);
  fg_test_fill(sm, NPS, 5, -1.0f, 1.0f);
  fg_test_fill(sv, NPS, 6, 0.0f, 1.0f);
  a.n_params = NPS - 1;
  EXPECT(fg_checkpoint_write(path_in("sage.ckpt"), &a, &src_meta) == FG_ERR_INVALID_ARG);
  a.n_params = NPS;
  EXPECT_OK(fg_checkpoint_write(path_in("sage.ckpt"), &a, &src_meta));
  EXPECT_OK(fg_checkpoint_read(path_in("sage.ckpt"), &b, &m2));
  EXPECT(memcmp(sp, dp, sizeof sp) == 0 && memcmp(sm, dm, sizeof sm) == 0 &&
         memcmp(sv, dv, sizeof sv) == 0 && m2.adam_t == src_meta.adam_t);
  /* a GCN run reading the SAGE file, and the other way round */
  EXPECT(read_fresh(path_in("sage.ckpt")) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("the checkpoint is of a sage model, this run trains gcn"));
  EXPECT(fg_checkpoint_read(path_in("a.ckpt"), &b, &m2) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("the checkpoint is of a gcn model, this run trains sage"));
  /* the same kind with another operator */
  b.model.adj_norm = FG_ADJ_SUM;
  EXPECT(fg_checkpoint_read(path_in("sage.ckpt"), &b, &m2) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("--adj-norm mean without self loops, this run with sum"));
}

/* A BatchNorm model: each hidden layer has four vectors besides b (scale, shift, running mean
 * and variance), the file says norm 2, the state round-trips, and a run with another norm is
 * refused naming both. */
static void test_batchnorm(void) {
  enum { NPB = (7 + 5) * 5 + (5 + 5) * 3 + (3 + 1) * 3, NPL = NPB - 2 * (5 + 3) };
  static float sp[NPB], sm[NPB], sv[NPB], dp[NPB], dm[NPB], dv[NPB];
  const fg_ckpt_model bn = {.kind = "gcn", .mats = 1, .adj_norm = FG_ADJ_SYM, .norm = 2};
  fg_ckpt_state a = {bn, LAYERS, widths, NPL, sp, sm, sv, NULL, NULL, NULL};
  fg_ckpt_state b = {bn, LAYERS, widths, NPB, dp, dm, dv, NULL, NULL, NULL};
  fg_ckpt_meta m2;
  bytes f;
  fg_test_fill(sp, NPB, 7, -1.0f, 1.0f);
  fg_test_fill(sm, NPB, 8, -1.0f, 1.0f);
  fg_test_fill(sv, NPB, 9, 0.0f, 1.0f);
  /* LayerNorm's count of parameters is not a BatchNorm model's */
  EXPECT(fg_checkpoint_write(path_in("bn.ckpt"), &a, &src_meta) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("its widths imply 102"));
  a.n_params = NPB;
  EXPECT_OK(fg_checkpoint_write(path_in("bn.ckpt"), &a, &src_meta));
  f = slurp(path_in("bn.ckpt"));
  {
    section bs[NSEC];
    uint32_t norm = 0;
    EXPECT(split_v2(&f, bs, NSEC) == NSEC);
    memcpy(&norm, bs[1].payload + 28, 4);
    EXPECT_MSG(norm == 2, "the model section says norm %u", norm);
  }
  free(f.p);
  EXPECT_OK(fg_checkpoint_read(path_in("bn.ckpt"), &b, &m2));
  EXPECT(memcmp(sp, dp, sizeof sp) == 0 && memcmp(sm, dm, sizeof sm) == 0 &&
         memcmp(sv, dv, sizeof sv) == 0);
  b.model.norm = 1;
  EXPECT(fg_checkpoint_read(path_in("bn.ckpt"), &b, &m2) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("the checkpoint's gcn model has --norm batch, this run layer"));
}

/* GIN: two stack layers a model layer, a learned epsilon after the first one's b; refused by a
 * run with a fixed epsilon, and a fixed epsilon by a run with another. */
static void test_gin(void) {
  static const int64_t w4[5] = {7, 5, 5, 3, 3};
  enum { NPG = (7 + 1) * 5 + 1 + (5 + 1) * 5 + (5 + 1) * 3 + 1 + (3 + 1) * 3 };
  static float sp[NPG], sm[NPG], sv[NPG], dp[NPG], dm[NPG], dv[NPG];
  const fg_ckpt_model gin = {.kind = "gin", .mats = 1, .adj_norm = FG_ADJ_SUM,
                             .no_self_loops = 1, .stages = 2, .eps_learn = 1};
  fg_ckpt_state a = {gin, 4, w4, NPG, sp, sm, sv, NULL, NULL, NULL};
  fg_ckpt_state b = {gin, 4, w4, NPG, dp, dm, dv, NULL, NULL, NULL};
  fg_ckpt_meta m2;
  fg_test_fill(sp, NPG, 7, -1.0f, 1.0f);
  fg_test_fill(sm, NPG, 8, -1.0f, 1.0f);
  fg_test_fill(sv, NPG, 9, 0.0f, 1.0f);
  a.n_params = NPG - 2; /* without the two epsilons */
  EXPECT(fg_checkpoint_write(path_in("gin.ckpt"), &a, &src_meta) == FG_ERR_INVALID_ARG);
  a.n_params = NPG;
  a.layers = 3; /* not a whole number of GIN layers */
  EXPECT(fg_checkpoint_write(path_in("gin.ckpt"), &a, &src_meta) == FG_ERR_INVALID_ARG);
  a.layers = 4;
  EXPECT_OK(fg_checkpoint_write(path_in("gin.ckpt"), &a, &src_meta));
  EXPECT_OK(fg_checkpoint_read(path_in("gin.ckpt"), &b, &m2));
  EXPECT(memcmp(sp, dp, sizeof sp) == 0 && memcmp(sm, dm, sizeof sm) == 0 &&
         memcmp(sv, dv, sizeof sv) == 0);
  b.model.eps_learn = 0;
  b.n_params = NPG - 2;
  EXPECT(fg_checkpoint_read(path_in("gin.ckpt"), &b, &m2) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("has --gin-eps learn from 0, this run 0"));
  /* fixed epsilons: equal ones read, different ones are refused */
  a.model.eps_learn = 0;
  a.model.eps = 0.5f;
  a.n_params = NPG - 2;
  EXPECT_OK(fg_checkpoint_write(path_in("gin.ckpt"), &a, &src_meta));
  b.model.eps = 0.5f;
  EXPECT_OK(fg_checkpoint_read(path_in("gin.ckpt"), &b, &m2));
  b.model.eps = 0.0f;
  EXPECT(fg_checkpoint_read(path_in("gin.ckpt"), &b, &m2) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("has --gin-eps 0.5, this run 0"));
}

/* --residual: a projection matrix more in the first stack layer of every block that changes the
 * width (widths 7 -> 5 -> 5 -> 3: block 0 projects, block 1 is the identity, the last layer has
 * none); refused by a run without residual connections, naming both. */
static void test_residual(void) {
  static const int64_t wr[4] = {7, 5, 5, 3};
  enum { NPR = (2 * 7 + 1) * 5 + (5 + 1) * 5 + (5 + 1) * 3 };
  static float sp[NPR], sm[NPR], sv[NPR], dp[NPR], dm[NPR], dv[NPR];
  const fg_ckpt_model res = {.kind = "gcn", .residual = 1};
  fg_ckpt_state a = {res, 3, wr, NPR, sp, sm, sv, NULL, NULL, NULL};
  fg_ckpt_state b = {res, 3, wr, NPR, dp, dm, dv, NULL, NULL, NULL};
  fg_ckpt_meta m2;
  fg_test_fill(sp, NPR, 10, -1.0f, 1.0f);
  fg_test_fill(sm, NPR, 11, -1.0f, 1.0f);
  fg_test_fill(sv, NPR, 12, 0.0f, 1.0f);
  a.n_params = NPR - 7 * 5; /* without the projection */
  EXPECT(fg_checkpoint_write(path_in("res.ckpt"), &a, &src_meta) == FG_ERR_INVALID_ARG);
  a.n_params = NPR;
  EXPECT_OK(fg_checkpoint_write(path_in("res.ckpt"), &a, &src_meta));
  EXPECT_OK(fg_checkpoint_read(path_in("res.ckpt"), &b, &m2));
  EXPECT(memcmp(sp, dp, sizeof sp) == 0 && memcmp(sm, dm, sizeof sm) == 0 &&
         memcmp(sv, dv, sizeof sv) == 0);
  b.model.residual = 0;
  b.n_params = NPR - 7 * 5;
  EXPECT(fg_checkpoint_read(path_in("res.ckpt"), &b, &m2) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("model is with residual connections, this run without"));
}

/* A label embedding (--label-prop: classes x features after the layers) round-trips; the
 * widths imply it; a run without one refuses the file, naming the difference. */
static void test_label_embed(void) {
  static const int64_t wl[3] = {7, 5, 3};
  enum { NPL = (7 + 1) * 5 + (5 + 1) * 3 + 3 * 7 };
  static float sp[NPL], sm[NPL], sv[NPL], dp[NPL], dm[NPL], dv[NPL];
  const fg_ckpt_model lp = {.kind = "gcn", .label_embed = 1};
  fg_ckpt_state a = {lp, 2, wl, NPL, sp, sm, sv, NULL, NULL, NULL};
  fg_ckpt_state b = {lp, 2, wl, NPL, dp, dm, dv, NULL, NULL, NULL};
  fg_ckpt_meta m2;
  fg_test_fill(sp, NPL, 20, -1.0f, 1.0f);
  fg_test_fill(sm, NPL, 21, -1.0f, 1.0f);
  fg_test_fill(sv, NPL, 22, 0.0f, 1.0f);
  a.n_params = NPL - 3 * 7; /* without the embedding */
  EXPECT(fg_checkpoint_write(path_in("lp.ckpt"), &a, &src_meta) == FG_ERR_INVALID_ARG);
  a.n_params = NPL;
  EXPECT_OK(fg_checkpoint_write(path_in("lp.ckpt"), &a, &src_meta));
  EXPECT_OK(fg_checkpoint_read(path_in("lp.ckpt"), &b, &m2));
  EXPECT(memcmp(sp, dp, sizeof sp) == 0 && memcmp(sm, dm, sizeof sm) == 0 &&
         memcmp(sv, dv, sizeof sv) == 0);
  b.model.label_embed = 0;
  b.n_params = NPL - 3 * 7;
  EXPECT(fg_checkpoint_read(path_in("lp.ckpt"), &b, &m2) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("model is with a label embedding (--label-prop), this run without"));
}

/* ---- sharded checkpoints: a shard file's bytes as documented, the manifest's checks ---- */

static uint64_t u64_at(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}
static uint32_t get_u32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

static void test_sharded_format(void) {
  /* pieces out of order, two of them contiguous in both index and position */
  const int64_t idx[4] = {5, 3, 4, 10}, pos[4] = {0, 1, 2, 3};
  const float vals[3][4] = {{0.5f, 1.5f, 2.5f, 3.5f}, {-1, -2, -3, -4}, {7, 8, 9, 10}};
  const float *const arrays[3] = {vals[0], vals[1], vals[2]};
  fg_ckpt_runs runs;
  fg_ckpt_shard_entry e, bad;
  fg_ckpt_manifest mf;
  fg_ckpt_meta m2;
  fg_ckpt_info info;
  char dir[600], path[700], name[64];
  bytes b;
  EXPECT_OK(fg_ckpt_runs_build(4, idx, pos, 1, &runs));
  /* sorted: 3 (at 1) and 4 (at 2) merge; 5 is at 0, 10 at 3 */
  EXPECT_MSG(runs.n == 3 && runs.start[0] == 3 && runs.len[0] == 2 && runs.pos[0] == 1 &&
                 runs.start[1] == 5 && runs.pos[1] == 0 && runs.start[2] == 10 &&
                 runs.elements == 4,
             "runs: %lld of them", (long long)runs.n);
  snprintf(dir, sizeof dir, "%s/sh/", tmpdir);
  mkdir(dir, 0777);
  fg_ckpt_shard_name(name, sizeof name, FG_CKPT_WEIGHTS, 1, 2, 7);
  EXPECT(strcmp(name, "shard-1-of-2.g7.ckpt") == 0);
  snprintf(path, sizeof path, "%s%s", dir, name);
  memset(&e, 0, sizeof e);
  EXPECT_OK(fg_ckpt_shard_write(path, 1, 2, FG_CKPT_WEIGHTS, 7, 11, &runs, arrays, &e));
  b = slurp(path);
  /* header 16, "shard" 24 + 32, "ranges" 24 + 48, three arrays 24 + 16, the CRC */
  EXPECT_MSG(b.n == 16 + 56 + 72 + 3 * 40 + 4 && e.size == b.n, "shard file of %zu bytes",
             b.n);
  if (b.n == 16 + 56 + 72 + 3 * 40 + 4) {
    const unsigned char *p = b.p;
    EXPECT(memcmp(p, "FGCKPT1\n", 8) == 0 && get_u32(p + 8) == 2 && get_u32(p + 12) == 5);
    EXPECT(strcmp((const char *)p + 16, "shard") == 0 && u64_at(p + 32) == 32);
    EXPECT(get_u32(p + 40) == 1 && get_u32(p + 44) == 2 && get_u32(p + 48) == 0 &&
           get_u32(p + 52) == 0 && u64_at(p + 56) == 7 && u64_at(p + 64) == 11);
    EXPECT(strcmp((const char *)p + 72, "ranges") == 0 && u64_at(p + 88) == 48);
    EXPECT(u64_at(p + 96) == 3 && u64_at(p + 104) == 2 && u64_at(p + 112) == 5 &&
           u64_at(p + 120) == 1 && u64_at(p + 128) == 10 && u64_at(p + 136) == 1);
    for (int a = 0; a < 3; a++) {
      const unsigned char *sec = p + 144 + 40 * a;
      float v[4];
      static const char *const names[3] = {"values", "adam_m", "adam_v"};
      memcpy(v, sec + 24, 16);
      EXPECT(strcmp((const char *)sec, names[a]) == 0 && u64_at(sec + 16) == 16);
      /* in index order: 3, 4, 5, 10 are at positions 1, 2, 0, 3 */
      EXPECT(v[0] == vals[a][1] && v[1] == vals[a][2] && v[2] == vals[a][0] &&
             v[3] == vals[a][3]);
    }
    EXPECT(e.crc == get_u32(p + b.n - 4) && e.crc == crc_of(p, b.n - 4));
    EXPECT(e.elements == 4 && e.lo == 3 && e.hi == 10 && e.rank == 1 && e.family == 0);
    EXPECT_OK(fg_ckpt_shard_check_mem(b.p, b.n, path, &e, 2, 7, 11));
    bad = e;
    bad.rank = 0;
    EXPECT(fg_ckpt_shard_check_mem(b.p, b.n, path, &bad, 2, 7, 11) == FG_ERR_FORMAT);
    EXPECT(fg_test_error_contains("the manifest lists rank 0 of 2"));
    EXPECT(fg_ckpt_shard_check_mem(b.p, b.n, path, &e, 2, 8, 11) == FG_ERR_FORMAT);
    /* ranges out of order: refused even with the checksum made right */
    memcpy(b.p + 112, (const int64_t[]){2}, 8);
    fix_crc(&b);
    EXPECT(fg_ckpt_shard_check_mem(b.p, b.n, path, NULL, 0, 0, 0) == FG_ERR_FORMAT);
    EXPECT(fg_test_error_contains("unsorted, overlapping"));
  }
  free(b.p);
  unlink(path);
  fg_ckpt_runs_free(&runs);

  /* a manifest of one rank whose one file must hold all NP parameters */
  memset(&mf, 0, sizeof mf);
  mf.ranks = 1;
  mf.generation = 1;
  snprintf(mf.scheme, sizeof mf.scheme, "serial");
  mf.n_shards = 1;
  mf.shards = &bad;
  memset(&bad, 0, sizeof bad);
  fg_ckpt_shard_name(bad.name, sizeof bad.name, FG_CKPT_WEIGHTS, 0, 1, 1);
  bad.size = 16 + 56 + 40 + 3 * (24 + 4 * NP) + 4;
  bad.elements = NP;
  bad.lo = 0;
  bad.hi = NP - 1;
  EXPECT_OK(fg_ckpt_manifest_write(dir, &src, &src_meta, &mf));
  EXPECT_OK(fg_checkpoint_inspect(dir, &info)); /* a directory: its manifest */
  EXPECT(info.sharded && info.manifest.n_shards == 1 && info.manifest.shards[0].elements == NP &&
         strcmp(info.manifest.scheme, "serial") == 0 && info.n_params == NP);
  fg_ckpt_info_free(&info);
  snprintf(path, sizeof path, "%smanifest", dir);
  EXPECT(read_fresh(path) == FG_ERR_INVALID_ARG); /* no single file */
  EXPECT(fg_test_error_contains("a sharded checkpoint's manifest, not a checkpoint file"));
  /* the shard it lists is missing: refused naming it */
  {
    int64_t z = 0, n = NP;
    fg_ckpt_runs all = {1, &z, &z, &n, NP};
    fg_ckpt_manifest rd;
    float *const big[3] = {dst_p, dst_m, dst_v};
    int files = 0;
    EXPECT_OK(fg_ckpt_manifest_read(dir, &dst, &m2, &rd));
    EXPECT(fg_ckpt_shards_load(dir, &rd, FG_CKPT_WEIGHTS, 0, NP, &all, big, &files) ==
           FG_ERR_IO);
    EXPECT(fg_test_error_contains("shard-0-of-1.g1.ckpt: a shard the manifest lists"));
    fg_ckpt_manifest_free(&rd);
  }
  /* counts that do not cover the model, a name that is a path: damage */
  bad.elements = NP - 1;
  EXPECT_OK(fg_ckpt_manifest_write(dir, &src, &src_meta, &mf));
  EXPECT(fg_checkpoint_inspect(dir, &info) == FG_ERR_FORMAT);
  EXPECT(fg_test_error_contains("the weights' files hold"));
  fg_ckpt_info_free(&info);
  bad.elements = NP;
  snprintf(bad.name, sizeof bad.name, "../../etc/passwd");
  EXPECT_OK(fg_ckpt_manifest_write(dir, &src, &src_meta, &mf));
  EXPECT(fg_checkpoint_inspect(dir, &info) == FG_ERR_FORMAT);
  EXPECT(fg_test_error_contains("expected shard-0-of-1.g1.ckpt"));
  fg_ckpt_info_free(&info);
  unlink(path);
  /* a directory without a manifest is not a checkpoint */
  EXPECT(fg_checkpoint_inspect(dir, &info) == FG_ERR_FORMAT);
  EXPECT(fg_test_error_contains("a directory without a manifest, not a checkpoint"));
  fg_ckpt_info_free(&info);
  rmdir(dir);
}

static void remove_tmpdir(void) {
  DIR *d = opendir(tmpdir);
  struct dirent *e;
  if (!d) return;
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) remove(path_in(e->d_name));
  closedir(d);
  rmdir(tmpdir);
}

int main(void) {
  const uint16_t one = 1;
  if (*(const uint8_t *)&one != 1) fg_test_skip("checkpoints are little-endian; this host is not");
  snprintf(tmpdir, sizeof tmpdir, "/tmp/fg_test_checkpoint_XXXXXX");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  setup_model();
  test_round_trip();
  if (split_v2(&written, secs, NSEC) == NSEC) {
    test_version1();
    test_unknown_sections();
    test_refusals();
    test_mutations();
  }
  test_write_failures();
  test_read_paths();
  if (secs[2].len == 4 + 8 * (LAYERS + 1)) { /* (the layout test_round_trip checked) */
    test_header_ranges();
    test_run_sections();
  }
  test_corpus();
  test_models();
  test_batchnorm();
  test_gin();
  test_residual();
  test_label_embed();
  test_sharded_format();
  free(written.p);
  remove_tmpdir();
  return fg_test_finish("test_checkpoint");
}
