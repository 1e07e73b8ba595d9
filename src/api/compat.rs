//! What OP2's own headers (`op_seq.h`, `op_lib_cpp.h`, ...) need beyond op2's API: constants
//! declared by address, as OP2's three-argument `op_decl_const(dim, type, &variable)` declares
//! them. (OP2's `op_par_loop(kernel, ...)` is `op_par_loop_fn`, with the other loops.)

use super::{boundary, c_str};
use crate::op2_bail;
use std::ffi::{c_char, c_int, c_void};

/// Declares the constant at `data` (`dim` values of `type`, `size` bytes each; 0: the type's
/// size) under the name of the program variable that starts at that address, read from the
/// symbol table of the executable or library holding it: OP2's three-argument
/// `op_decl_const(dim, type, &gam)` (`op_lib_cpp.h`), after which kernels compiled by op2 see
/// `gam` as with `op_decl_const(dim, type, &gam, "gam")`. Where no variable starts there (a
/// local variable, a variable inside a namespace, a stripped program) or its size is not
/// `dim` values, nothing is declared and `OP2_DIAGNOSTICS=1` says so: OP2's reference build
/// needs no name (its kernels read the variable itself), and a kernel that uses such a
/// variable takes the call-per-element tier of `op_par_loop_fn`. The value is copied now, as
/// by `op_decl_const`: a later change to the variable reaches op2's loops at the next
/// `op_decl_const` of it.
/// Errors: OP2_ERR_NOT_INITIALISED, OP2_ERR_NULL_ARGUMENT (type, data), OP2_ERR_BAD_SIZE,
/// OP2_ERR_BAD_TYPE. Collective under MPI.
#[no_mangle]
pub extern "C" fn op_decl_const_addr(dim: c_int, r#type: *const c_char, size: c_int, data: *const c_void) {
    const CALL: &str = "op_decl_const_addr";
    boundary(CALL, (), |st| {
        st.ctx_lazy(CALL)?;
        if data.is_null() {
            op2_bail!(NullArgument, "{CALL}: data is NULL");
        }
        let ty = crate::core::ElemType::parse(c_str(r#type, CALL, "type")?, CALL, "")?;
        if dim < 1 {
            op2_bail!(BadSize, "{CALL}: dim {dim} is less than 1");
        }
        let addr = data as usize;
        let named = match st.const_names.iter().find(|(a, _)| *a == addr) {
            Some((_, n)) => n.clone(),
            None => {
                let bytes = dim as u64 * ty.size() as u64;
                let n = variable_name(addr, bytes);
                st.const_names.push((addr, n.clone()));
                n
            }
        };
        let size = if size == 0 { None } else { Some(size) };
        match named {
            Ok(name) => super::decl::decl_const_in(st, CALL, dim, r#type, size, data, Ok(&name)),
            Err(why) => {
                let ctx = st.ctx_lazy(CALL)?;
                if ctx.config.diags >= 1 && ctx.comm.rank() == 0 {
                    crate::core::output::print_after_c_stdio(&format!(
                        "op2: op_decl_const({dim}, \"{}\", {addr:#x}): not declared: {why}; loops compiled by op2 cannot name it (kernels using it take the call-per-element tier)\n",
                        ty.api_name()
                    ));
                }
                Ok(())
            }
        }
    })
}

/// The name of the program variable of `bytes` bytes starting at `addr`, or why there is none.
fn variable_name(addr: usize, bytes: u64) -> Result<String, String> {
    if crate::io::elf::loaded_object(addr as u64).is_none() {
        return Err("the address is in no loaded program or library (a local or heap variable?)".to_string());
    }
    let found = crate::io::elf::symbol_near(addr as u64, crate::io::elf::variable_at);
    let Some((name, len)) = found else {
        return Err("no variable starts at this address in its program's symbol table (a local variable, or a stripped program?)".to_string());
    };
    // A C++ `static` variable's symbol is mangled (`_ZL3gam`); its name is the identifier.
    let name = if name.starts_with("_ZL") { crate::io::elf::c_function_name(&name).unwrap_or(name) } else { name };
    if !crate::core::is_c_identifier(&name) || name.starts_with("op2_") {
        return Err(format!("the variable there is '{name}', which is not a C identifier kernels can use"));
    }
    if len != bytes {
        return Err(format!("the variable there, '{name}', has {len} bytes, not the {bytes} declared"));
    }
    Ok(name)
}

/// `size` bytes of memory aligned to 64 bytes, as OP2's `op_malloc` hands it out (OP2's
/// programs allocate their mesh arrays with it); `op_free` or C's `free` releases it. NULL when
/// the memory cannot be had (never an error: it needs no op2 session).
#[no_mangle]
pub extern "C" fn op_malloc(size: usize) -> *mut c_void {
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: posix_memalign writes an address (or nothing) into `p`; 64 is a power of two and
    // a multiple of the pointer size.
    let rc = unsafe { libc::posix_memalign(&mut p, 64, size.max(1)) };
    if rc == 0 {
        p
    } else {
        std::ptr::null_mut()
    }
}

/// Releases memory from `op_malloc` (or C's `malloc`); NULL does nothing.
#[no_mangle]
pub extern "C" fn op_free(ptr: *mut c_void) {
    // SAFETY: the caller passes NULL or memory from op_malloc/malloc not yet freed (free's
    // contract).
    unsafe { libc::free(ptr) }
}
