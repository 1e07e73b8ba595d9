//! `OP2_VALIDATE=1` catches a backend bug: a test backend that runs `seq` and then corrupts one
//! value of its output is reported as OP2_ERR_VALIDATE naming the loop, dat, element and both
//! values; the same loop on the honest backend passes.

use op2::arg::{Access, RawArg};
use op2::backend::{host::seq::Seq, Backend, LoopCall};
use op2::config::{BackendKind, Config};
use op2::context::Context;
use op2::core::ElemType;
use op2::error::{ErrorCode, Result};
use op2::exec::chain::par_loop;

/// `seq`, plus one wrong value: element 3 of the first argument's dat, when it is written.
struct Buggy(Seq);

impl Backend for Buggy {
    fn kind(&self) -> BackendKind {
        BackendKind::Threads
    }

    fn compute(&mut self, call: &mut LoopCall, start: usize, end: usize) -> Result<()> {
        self.0.compute(call, start, end)?;
        if start <= 3 && 3 < end {
            // SAFETY: slot 0 is the first dat's base (a double dat of at least 4 elements here).
            unsafe { *(call.slots[0] as *mut f64).add(3) += 1.0 };
        }
        Ok(())
    }
}

fn f64s(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

fn run(buggy: bool) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("op2-validate-test-{}", std::process::id()));
    let tokens = vec![format!("OP2_CACHE_DIR={}", dir.display()), "OP2_VALIDATE=1".to_string()];
    let mut ctx = Context::new(Config::from_env(&tokens, 0)?)?;
    if buggy {
        ctx.backend = Box::new(Buggy(Seq));
    }
    let set = ctx.decl_set(8, "s")?;
    let y = ctx.decl_dat(set, 1, ElemType::Double, Some(&f64s(&[1.0; 8])), "y", "t")?;
    let k = ctx.decl_kernel("void twice(double *y) { y[0] *= 2.0; }", "twice")?;
    par_loop(&mut ctx, k, "twice", set, &[RawArg::Dat { dat: y, map: None, idx: -1, acc: Access::Rw, opt: None }])
}

#[test]
fn validation_catches_an_injected_backend_bug() {
    run(false).unwrap();
    let e = run(true).unwrap_err();
    assert_eq!(e.code, ErrorCode::Validate);
    assert_eq!(
        e.message,
        "op_par_loop 'twice', arg 0 (dat 'y'): element 3 component 0: threads gives 3, seq gives 2 (1 value(s) differ bitwise)"
    );
}
