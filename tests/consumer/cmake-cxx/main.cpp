// A small op2 program in C++, built outside the op2 repository against an installed op2: the
// header must work from C++ (extern "C", OP_PAR_LOOP). Silent on success; usage: main BACKEND.
#include <op2.h>

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
  const int n = 50;
  std::string token = std::string("OP2_BACKEND=") + (argc > 1 ? argv[1] : "seq");
  std::vector<char *> args = {argv[0], &token[0], nullptr};
  op_init(2, args.data(), 0);

  std::vector<double> v(2 * n), out(2 * n);
  for (int i = 0; i < n; i++) {
    v[2 * i] = i;
    v[2 * i + 1] = -i;
  }
  op_set cells = op_decl_set(n, "cells");
  op_dat dv = op_decl_dat(cells, 2, "double", v.data(), "v");
  op_kernel swap = op_decl_kernel(
      "void swap(double *v, double *mx) { double t = v[0]; v[0] = v[1]; v[1] = t;"
      " if (t > *mx) *mx = t; }",
      "swap");
  double mx = -1.0;
  OP_PAR_LOOP(swap, "swap", cells, op_arg_dat(dv, -1, OP_ID, 2, "double", OP_RW),
              op_arg_gbl(&mx, 1, "double", OP_MAX));
  op_fetch_data(dv, out.data());

  int failures = 0;
  for (int i = 0; i < n; i++)
    if (out[2 * i] != -i || out[2 * i + 1] != i) failures++;
  if (mx != n - 1) failures++;
  if (op_last_error_code() != 0) failures++;
  if (failures) std::fprintf(stderr, "consumer_cxx: %d checks failed\n", failures);
  op_exit();
  return failures ? 1 : 0;
}
