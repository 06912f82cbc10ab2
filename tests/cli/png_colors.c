/* png_colors.c -- what a screenshot shows, for report_test.sh: reads an 8-bit RGB or RGBA PNG
 * (non-interlaced, what headless Chromium writes), checks every chunk's CRC, inflates and
 * unfilters the image, and prints
 *
 *   WIDTH HEIGHT COLOURS NON_BACKGROUND_PERMILLE [COUNT_OF_EACH_RRGGBB_ASKED]
 *
 * COLOURS: distinct RGB values (counted up to 65536); the background is the top-left pixel's
 * colour. A blank page gives 1 colour and 0 permille.
 *
 * usage: png_colors FILE.png [RRGGBB ...]        exit 0, or 1 with a message */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum { MAX_SIDE = 20000, SET_BITS = 17, MAX_COUNT = 65536, MAX_ASK = 16 };

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int die(const char *path, const char *what) {
  fprintf(stderr, "png_colors: %s: %s\n", path, what);
  return 1;
}

/* The Paeth predictor of the PNG specification (filter type 4). */
static int paeth(int a, int b, int c) {
  const int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

int main(int argc, char **argv) {
  static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  FILE *f;
  unsigned char *file = NULL, *idat = NULL, *raw = NULL;
  size_t size = 0, cap = 0, nidat = 0, at = 8;
  uint32_t w = 0, h = 0;
  int bpp = 0, rc = 1;
  if (argc < 2 || argc > 2 + MAX_ASK) {
    fprintf(stderr, "usage: png_colors FILE.png [RRGGBB ...]\n");
    return 2;
  }
  if (!(f = fopen(argv[1], "rb"))) return die(argv[1], "cannot open");
  for (;;) { /* the whole file */
    if (size == cap) {
      unsigned char *nf = realloc(file, cap = cap ? cap * 2 : 1 << 16);
      if (!nf) return die(argv[1], "out of memory");
      file = nf;
    }
    const size_t got = fread(file + size, 1, cap - size, f);
    size += got;
    if (got == 0) break;
  }
  fclose(f);
  if (size < 8 || memcmp(file, sig, 8) != 0) {
    rc = die(argv[1], "not a PNG file (no signature)");
    goto done;
  }
  for (;;) { /* the chunks: length, type, data, CRC over type and data */
    if (at + 12 > size) {
      rc = die(argv[1], "truncated chunk");
      goto done;
    }
    const uint32_t len = be32(file + at);
    const unsigned char *type = file + at + 4, *data = file + at + 8;
    if (len > size - at - 12) {
      rc = die(argv[1], "a chunk runs past the end of the file");
      goto done;
    }
    if (crc32(crc32(0L, Z_NULL, 0), type, len + 4) != be32(data + len)) {
      rc = die(argv[1], "a chunk's CRC does not match");
      goto done;
    }
    if (memcmp(type, "IHDR", 4) == 0) {
      if (len != 13) {
        rc = die(argv[1], "bad IHDR");
        goto done;
      }
      w = be32(data);
      h = be32(data + 4);
      if (data[8] != 8 || (data[9] != 2 && data[9] != 6) || data[12] != 0 || w == 0 || h == 0 ||
          w > MAX_SIDE || h > MAX_SIDE) {
        rc = die(argv[1], "only 8-bit RGB or RGBA, non-interlaced, up to 20000 pixels a side");
        goto done;
      }
      bpp = data[9] == 6 ? 4 : 3;
    } else if (memcmp(type, "IDAT", 4) == 0) {
      unsigned char *ni = realloc(idat, nidat + len + 1);
      if (!ni) {
        rc = die(argv[1], "out of memory");
        goto done;
      }
      idat = ni;
      memcpy(idat + nidat, data, len);
      nidat += len;
    } else if (memcmp(type, "IEND", 4) == 0) {
      break;
    }
    at += 12 + (size_t)len;
  }
  if (!bpp || !nidat) {
    rc = die(argv[1], "no IHDR or no IDAT");
    goto done;
  }
  {
    const size_t stride = (size_t)w * (size_t)bpp, want = (stride + 1) * h;
    uLongf out = (uLongf)want;
    uint32_t *set = calloc((size_t)1 << SET_BITS, sizeof *set); /* RGB + 1; 0 = empty */
    uint32_t ask[MAX_ASK];
    long count[MAX_ASK] = {0};
    long colours = 0, nonbg = 0;
    uint32_t bg = 0;
    int nask = argc - 2;
    raw = malloc(want);
    if (!raw || !set) {
      free(set);
      rc = die(argv[1], "out of memory");
      goto done;
    }
    if (uncompress(raw, &out, idat, (uLong)nidat) != Z_OK || out != want) {
      free(set);
      rc = die(argv[1], "the image data does not inflate to its size");
      goto done;
    }
    for (int k = 0; k < nask; k++) ask[k] = (uint32_t)strtoul(argv[2 + k], NULL, 16);
    for (uint32_t y = 0; y < h; y++) { /* unfilter in place, row by row */
      unsigned char *row = raw + y * (stride + 1) + 1;
      const unsigned char *up = y ? row - (stride + 1) : NULL;
      const int ft = row[-1];
      if (ft > 4) {
        free(set);
        rc = die(argv[1], "an unknown row filter");
        goto done;
      }
      for (size_t i = 0; i < stride; i++) {
        const int a = i >= (size_t)bpp ? row[i - (size_t)bpp] : 0, b = up ? up[i] : 0;
        const int c = up && i >= (size_t)bpp ? up[i - (size_t)bpp] : 0;
        const int pred = ft == 0 ? 0 : ft == 1 ? a : ft == 2 ? b : ft == 3 ? (a + b) / 2
                                                                         : paeth(a, b, c);
        row[i] = (unsigned char)(row[i] + pred);
      }
      for (uint32_t x = 0; x < w; x++) {
        const unsigned char *p = row + (size_t)x * (size_t)bpp;
        const uint32_t rgb = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
        if (x == 0 && y == 0) bg = rgb;
        nonbg += rgb != bg;
        for (int k = 0; k < nask; k++) count[k] += rgb == ask[k];
        if (colours < MAX_COUNT) { /* open addressing on a multiplicative hash */
          uint32_t slot = (rgb * 2654435761u) >> (32 - SET_BITS);
          while (set[slot] && set[slot] != rgb + 1) slot = (slot + 1) & ((1u << SET_BITS) - 1);
          if (!set[slot]) {
            set[slot] = rgb + 1;
            colours++;
          }
        }
      }
    }
    printf("%u %u %ld %ld", w, h, colours, (long)(1000.0 * (double)nonbg / ((double)w * h)));
    for (int k = 0; k < nask; k++) printf(" %ld", count[k]);
    printf("\n");
    free(set);
    rc = 0;
  }
done:
  free(file);
  free(idat);
  free(raw);
  return rc;
}
