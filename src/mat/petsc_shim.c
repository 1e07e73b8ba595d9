/* op2's bridge to PETSc (cargo feature `petsc`): hands one CSR matrix and two vectors to a
 * PETSc KSP, with options inserted under a prefix private to this solve. Compiled by build.rs
 * against `pkg-config PETSc` (and OpenMPI's headers, which PETSc's .pc does not name).
 *
 * PETSc is initialised on first use if the program has not done so (and then finalised at exit);
 * a PETSc the program initialised is used as it is and never finalised here. Errors never print
 * or abort: a private error handler records PETSc's first message, and every function returns
 * PETSc's error code (0: success) with the message in `msg`. */
#include <petscksp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char op2_petsc_msg[1024];

static PetscErrorCode op2_petsc_handler(MPI_Comm comm, int line, const char *fun, const char *file,
                                        PetscErrorCode n, PetscErrorType p, const char *mess, void *ctx)
{
  (void)comm;
  (void)ctx;
  if (op2_petsc_msg[0] == '\0' || p == PETSC_ERROR_INITIAL)
    snprintf(op2_petsc_msg, sizeof op2_petsc_msg, "%s (in %s, %s:%d)", mess ? mess : "", fun ? fun : "?",
             file ? file : "?", line);
  return n;
}

/* PETSc was initialised here (so it is finalised here: by op_exit before op2 frees its
 * communicator, or at exit). */
static int op2_petsc_ours;

/* Finalises a PETSc that op2 initialised (once; nothing otherwise). */
void op2_petsc_finalize_ours(void)
{
  PetscBool init = PETSC_FALSE, fin = PETSC_FALSE;
  int mpifin = 0;
  if (!op2_petsc_ours) return;
  op2_petsc_ours = 0;
  MPI_Finalized(&mpifin);
  if (mpifin) return; /* too late: MPI is gone (a program that ended MPI before exit) */
  PetscInitialized(&init);
  PetscFinalized(&fin);
  if (init && !fin) PetscFinalize();
}

static void op2_petsc_finalize(void) { op2_petsc_finalize_ours(); }

/* Copies the recorded message (or PETSc's text for `code`) into msg. */
static void op2_petsc_message(PetscErrorCode code, char *msg, int msglen)
{
  const char *text = NULL;
  if (op2_petsc_msg[0] == '\0') {
    PetscErrorMessage(code, &text, NULL);
    snprintf(msg, (size_t)msglen, "%s", text ? text : "unknown PETSc error");
  } else {
    snprintf(msg, (size_t)msglen, "%s", op2_petsc_msg);
  }
}

#define OP2_TRY(call)                                                                            \
  do {                                                                                           \
    ierr = (call);                                                                               \
    if (ierr) goto done;                                                                         \
  } while (0)

/* Solves A x = b with KSP. rowptr/colidx: CSR of n rows (32-bit PetscInt), vals: n x n values.
 * fcomm: the Fortran handle of op2's communicator (-1: none); set_world: a PETSc initialised
 * here runs on it (PETSC_COMM_WORLD; op2 initialised MPI and finalises PETSc before it). nglobal < 0: one process, a SeqAIJ on n x n sharing the arrays.
 * nglobal >= 0: this process's n rows of an nglobal x nglobal MPIAIJ on fcomm (columns global,
 * sorted within rows), b and x its n owned entries.
 * options: PETSc options already carrying `prefix` (e.g. "-op2_3_ksp_type cg"). On return:
 * *its iterations, *rnorm the residual norm, *reason KSP's converged reason and `reason_text`
 * its name (as KSPConvergedReasons), `ksp_type`/`pc_type` the types used. */
int op2_petsc_solve(int fcomm, int set_world, int nglobal, int n, const int *rowptr, const int *colidx, const double *vals,
                    const double *b, double *x, const char *options, const char *prefix, int *its, double *rnorm, int *reason,
                    char *reason_text, char *ksp_type, char *pc_type, char *msg, int msglen)
{
  PetscErrorCode ierr = 0;
  PetscBool init = PETSC_FALSE;
  Mat A = NULL;
  Vec vb = NULL, vx = NULL;
  KSP ksp = NULL;
  PC pc;
  PetscInt it = 0;
  PetscReal rn = 0;
  KSPConvergedReason why = KSP_CONVERGED_ITERATING;
  KSPType kt = NULL;
  PCType pt = NULL;
  int pushed = 0;
  MPI_Comm comm;

  op2_petsc_msg[0] = '\0';
  msg[0] = '\0';
  if (sizeof(PetscInt) != sizeof(int) || sizeof(PetscScalar) != sizeof(double)) {
    snprintf(msg, (size_t)msglen, "this PETSc has %d-byte PetscInt and %d-byte PetscScalar; op2 needs 4 and 8",
             (int)sizeof(PetscInt), (int)sizeof(PetscScalar));
    return 1;
  }
  ierr = PetscInitialized(&init);
  if (ierr) goto done;
  if (nglobal >= 0 && fcomm < 0) {
    snprintf(msg, (size_t)msglen, "a distributed solve needs op2's communicator");
    return 1;
  }
  comm = nglobal >= 0 ? MPI_Comm_f2c(fcomm) : PETSC_COMM_SELF;
  if (!init) {
    if (fcomm >= 0 && set_world) PETSC_COMM_WORLD = MPI_Comm_f2c(fcomm);
    ierr = PetscInitializeNoArguments();
    if (ierr) {
      snprintf(msg, (size_t)msglen, "PetscInitializeNoArguments failed with code %d", (int)ierr);
      return (int)ierr;
    }
    if (!op2_petsc_ours) atexit(op2_petsc_finalize);
    op2_petsc_ours = 1;
  }
  ierr = PetscPushErrorHandler(op2_petsc_handler, NULL);
  if (ierr) goto done;
  pushed = 1;
  OP2_TRY(PetscOptionsInsertString(NULL, options));
  if (nglobal < 0) {
    OP2_TRY(MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, n, n, (PetscInt *)rowptr, (PetscInt *)colidx,
                                      (PetscScalar *)vals, &A));
    OP2_TRY(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, n, b, &vb));
    OP2_TRY(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, n, x, &vx));
  } else {
    /* Copies the rows (PETSc splits them into its diagonal and off-diagonal blocks). */
    OP2_TRY(MatCreateMPIAIJWithArrays(comm, n, n, nglobal, nglobal, rowptr, colidx, vals, &A));
    OP2_TRY(VecCreateMPIWithArray(comm, 1, n, nglobal, b, &vb));
    OP2_TRY(VecCreateMPIWithArray(comm, 1, n, nglobal, x, &vx));
  }
  OP2_TRY(KSPCreate(comm, &ksp));
  OP2_TRY(KSPSetOptionsPrefix(ksp, prefix));
  OP2_TRY(KSPSetOperators(ksp, A, A));
  OP2_TRY(KSPGetPC(ksp, &pc));
  OP2_TRY(KSPSetType(ksp, KSPCG));
  OP2_TRY(PCSetType(pc, PCJACOBI));
  OP2_TRY(KSPSetFromOptions(ksp));
  OP2_TRY(KSPSolve(ksp, vb, vx));
  OP2_TRY(KSPGetIterationNumber(ksp, &it));
  OP2_TRY(KSPGetResidualNorm(ksp, &rn));
  OP2_TRY(KSPGetConvergedReason(ksp, &why));
  OP2_TRY(KSPGetType(ksp, &kt));
  OP2_TRY(PCGetType(pc, &pt));
  *its = (int)it;
  *rnorm = (double)rn;
  *reason = (int)why;
  snprintf(reason_text, 64, "%s", KSPConvergedReasons[why]);
  snprintf(ksp_type, 64, "%s", kt ? kt : "?");
  snprintf(pc_type, 64, "%s", pt ? pt : "?");
done:
  if (ierr) op2_petsc_message(ierr, msg, msglen);
  /* Clean-up errors are not reported over the first one. */
  if (ksp) KSPDestroy(&ksp);
  if (vx) VecDestroy(&vx);
  if (vb) VecDestroy(&vb);
  if (A) MatDestroy(&A);
  if (pushed) PetscPopErrorHandler();
  return (int)ierr;
}

/* Removes one option set by a solve (so options do not pile up across solves). */
void op2_petsc_clear_option(const char *name) { PetscOptionsClearValue(NULL, name); }
