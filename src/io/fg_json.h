/* fg_json.h -- a small strict JSON reader for the readers in src/io/ (GraphSAINT's class_map.json
 * and role.json), not part of the public API.
 *
 * It is a pull parser over a byte stream: a file is read in 64 KiB chunks (never whole, so a
 * 100 MB class_map holds 64 KiB of text at a time; what the caller builds from it is the
 * caller's to weigh against the budget), or a memory buffer (fuzzing). The caller walks the
 * document with begin/next/string/number/skip and decides what each value must be. RFC 8259,
 * strictly: no comments, no trailing commas, no NaN or Infinity, no leading zeros or '+', no
 * control bytes or invalid UTF-8 in strings, nothing after the document but whitespace;
 * containers nest at most FG_JSON_MAX_DEPTH deep. Every failure names "file:line:column"
 * (1-based, the column counted in bytes) and what was wrong, e.g.
 *   "data/yelp/class_map.json:1:3145: expected ',' or '}' after a member, found ']'".
 */
#ifndef FG_JSON_H
#define FG_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/fg_core.h"

#define FG_JSON_MAX_DEPTH 64
/* longest number token taken (digits, sign, point, exponent) */
#define FG_JSON_MAX_NUMBER 64

typedef struct fg_json {
  const char *name;         /* for messages; not owned */
  FILE *f;                  /* file source, or NULL */
  unsigned char *chunk;     /* the file's bytes [p, end) are in here */
  const unsigned char *p, *end;
  int eof;                  /* the source has no bytes after end */
  int64_t line, col;        /* position of *p (1-based) */
  int depth;                /* containers open */
} fg_json;

/* A number as written: is_int when it has no fraction or exponent and fits int64 (then i is
 * its value); d is its value as a double in every case. text holds the token (printable). */
typedef struct fg_json_num {
  int is_int;
  int64_t i;
  double d;
  char text[FG_JSON_MAX_NUMBER + 8];
} fg_json_num;

fg_status fg_json_open(fg_json *J, const char *path);
fg_status fg_json_open_mem(fg_json *J, const void *buf, size_t len, const char *name);
void fg_json_close(fg_json *J);

/* The next byte after whitespace, not consumed (-1 at the end of the input). */
fg_status fg_json_peek(fg_json *J, int *c);
/* "file:line:column" of the next byte after whitespace (or of the end), into out. */
const char *fg_json_where(fg_json *J, char *out, size_t cap);
/* The same position as numbers, for a message that may follow (cheaper than formatting it for
 * every value of a 100 MB file). */
typedef struct fg_json_pos {
  int64_t line, col;
} fg_json_pos;
fg_status fg_json_mark(fg_json *J, fg_json_pos *at);

/* Consume '{' or '[' (open), what naming the value expected in a message ("an object of node
 * ids"). Counts against FG_JSON_MAX_DEPTH. */
fg_status fg_json_begin(fg_json *J, int open, const char *what);
/* In the container begun with `open`: *more = 1 when another element follows (after its
 * comma; for an object the member's key comes next), 0 when the container closed here.
 * *count: elements seen so far (start it at 0; next increments it). */
fg_status fg_json_next(fg_json *J, int open, int64_t *count, int *more);
/* A string into out[cap] (decoded, NUL-terminated; *len its length without the NUL, may be
 * NULL). out == NULL: the string is checked and dropped, whatever its length; otherwise a
 * string longer than cap - 1 bytes fails naming `what`. */
fg_status fg_json_string(fg_json *J, char *out, size_t cap, size_t *len, const char *what);
/* A member's key (a string) and its ':'. */
fg_status fg_json_key(fg_json *J, char *out, size_t cap, const char *what);
/* A number (what names it in a message when the value is something else). */
fg_status fg_json_number(fg_json *J, fg_json_num *n, const char *what);
/* Any one value, checked and dropped. */
fg_status fg_json_skip(fg_json *J);
/* Nothing but whitespace is left. */
fg_status fg_json_end(fg_json *J);

#endif /* FG_JSON_H */
