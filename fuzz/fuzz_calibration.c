/* fuzz_calibration.c -- libFuzzer target: the calibration file (plan and train --calibration),
 * through its memory variant. A file it takes gives coefficients within their ranges, and the
 * model's predictions with them stay finite for the largest graphs the CLI takes; a refusal's
 * message quotes no control byte. */
#include <string.h>

#include "fuzz_check.h"
#include "plan/fg_plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fg_calibration c;
  fuzz_init();
  memset(&c, 0, sizeof c);
  if (fg_calibration_parse((const char *)data, size, "fuzz.cal", &c) != FG_OK) {
    fuzz_check_message();
    return 0;
  }
  for (int i = 0; i < 6; i++) FUZZ_ASSERT(c.spmm[i] >= 0 && c.spmm[i] <= 1);
  const double secs[] = {c.dropout_elem, c.softmax_elem, c.alpha_intra,
                         c.beta_intra,   c.alpha_inter,  c.beta_inter};
  for (size_t i = 0; i < sizeof secs / sizeof secs[0]; i++)
    FUZZ_ASSERT(secs[i] >= 0 && secs[i] <= 1);
  const double big[] = {c.cache_bytes, c.llc_bytes, c.gemm_flops, c.stream_bytes};
  for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
    FUZZ_ASSERT(big[i] >= 1 && big[i] <= 1e18);
  FUZZ_ASSERT(c.threads >= 0 && c.ranks >= 0 && c.ranks_per_node >= 0);
  /* 2^31 nodes, ~2^40 nonzeros, 2^16 features; 2^20 ranks moving a petabyte */
  const double n = 2147483648.0, nnz = 1099511627776.0, f = 65536.0;
  const double t[] = {fg_cost_spmm(&c, nnz, n, n, f), fg_cost_spmm(&c, 1, 1, 1, 1),
                      fg_cost_allreduce(c.alpha_inter, c.beta_inter, 1 << 20, 1e15),
                      fg_cost_allgather(c.alpha_intra, c.beta_intra, 1 << 20, 1e15),
                      2 * n * f * f / c.gemm_flops, 3 * 4 * n * f / c.stream_bytes};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) FUZZ_ASSERT(isfinite(t[i]) && t[i] >= 0);
  return 0;
}
