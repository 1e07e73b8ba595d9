// jac_res (edges): the edge's matrix entry times u at its column node, scaled by the global
// beta (op_arg_gbl OP_READ), added to du at its row node (OP_INC through the map).
inline void jac_res(const double *A, const double *u, double *du, const double *beta) {
  *du += (*beta) * (*A) * (*u);
}
