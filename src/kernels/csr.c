/* csr.c -- CSR housekeeping: free and transpose. */
#include <string.h>

#include "kernels/fg_kernels.h"

void fg_csr_free(fg_csr *A) {
  if (!A) return;
  free(A->rowptr);
  free(A->col);
  free(A->val);
  memset(A, 0, sizeof *A);
}

fg_status fg_csr_transpose(const fg_csr *A, fg_csr *B) {
  fg_status st = FG_OK;
  fg_csr T = {.nrows = A->ncols, .ncols = A->nrows, .nnz = A->nnz}; /* T = A^T */
  int64_t *next = NULL; // (ncols) fill position per row of T
  assert(A != B);
  FG_REQUIRE(A->nrows >= 0 && A->ncols >= 0 && A->nnz >= 0, FG_ERR_INVALID_ARG,
             "csr transpose: negative shape %lld x %lld, nnz %lld", (long long)A->nrows,
             (long long)A->ncols, (long long)A->nnz);
  FG_REQUIRE(A->nrows <= INT32_MAX, FG_ERR_UNSUPPORTED,
             "csr transpose: %lld rows do not fit 32-bit column ids", (long long)A->nrows);
  FG_REQUIRE(A->rowptr || (A->nrows == 0 && A->nnz == 0), FG_ERR_INVALID_ARG,
             "csr transpose: no row offsets for %lld rows", (long long)A->nrows);
  const int64_t base = A->rowptr ? A->rowptr[0] : 0;
  for (int64_t r = 0; r < A->nrows; r++)
    FG_REQUIRE(A->rowptr[r + 1] >= A->rowptr[r], FG_ERR_INVALID_ARG,
               "csr transpose: rowptr decreases at row %lld (%lld < %lld)", (long long)r,
               (long long)A->rowptr[r + 1], (long long)A->rowptr[r]);
  const int64_t span = A->rowptr ? A->rowptr[A->nrows] - base : 0;
  FG_REQUIRE(span == A->nnz, FG_ERR_INVALID_ARG,
             "csr transpose: rowptr spans %lld entries but nnz is %lld", (long long)span,
             (long long)A->nnz);
  FG_CALLOC(T.rowptr, T.nrows + 1);
  FG_ALLOC(T.col, T.nnz);
  if (A->val) FG_ALLOC(T.val, T.nnz);
  FG_ALLOC(next, T.nrows);

  for (int64_t k = base; k < base + A->nnz; k++) {
    const int32_t c = A->col[k];
    FG_REQUIRE(c >= 0 && c < A->ncols, FG_ERR_INVALID_ARG,
               "csr transpose: entry %lld has column %d out of range [0, %lld)",
               (long long)(k - base), c, (long long)A->ncols);
    T.rowptr[c + 1]++;
  }
  for (int64_t c = 0; c < T.nrows; c++) T.rowptr[c + 1] += T.rowptr[c];
  if (T.nrows > 0) memcpy(next, T.rowptr, (size_t)T.nrows * sizeof *next);
  /* rows of A in increasing order, so the columns within each row of T come out sorted */
  for (int64_t r = 0; r < A->nrows; r++) {
    for (int64_t k = A->rowptr[r]; k < A->rowptr[r + 1]; k++) {
      const int64_t dst = next[A->col[k]]++;
      T.col[dst] = (int32_t)r;
      if (T.val) T.val[dst] = A->val[k];
    }
  }
  *B = T;
  T = (fg_csr){0};
cleanup:
  fg_csr_free(&T);
  free(next);
  return st;
}
