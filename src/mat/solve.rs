//! `op_solve`'s options (PETSc's spelling) and the native Krylov solvers: CG and restarted
//! GMRES, each with Jacobi or no preconditioner. As PETSc's defaults: a zero initial guess
//! (unless `-ksp_initial_guess_nonzero`), left preconditioning, convergence when the
//! preconditioned residual norm is at most `max(rtol * |B r0|, atol)`, rtol 1e-5, atol 1e-50,
//! at most 10000 iterations, GMRES restart 30.

use crate::core::alloc;
use crate::error::Result;
use crate::op2_bail;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ksp {
    Cg,
    Gmres,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pc {
    Jacobi,
    None,
}

/// Parsed options. `native` is None when some option needs PETSc (it says which).
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub native: std::result::Result<(Ksp, Pc), String>,
    pub rtol: f64,
    pub atol: f64,
    pub max_it: usize,
    pub restart: usize,
    pub nonzero_guess: bool,
    /// The string as given (PETSc gets it whole).
    pub text: String,
}

fn value<'a>(it: &mut std::iter::Peekable<std::str::SplitWhitespace<'a>>, key: &str) -> Result<&'a str> {
    match it.peek() {
        Some(v) if !v.starts_with('-') || v.parse::<f64>().is_ok() => Ok(it.next().unwrap_or_default()),
        _ => op2_bail!(BadConfig, "op_solve: option {key} needs a value"),
    }
}

fn number<T: std::str::FromStr>(v: &str, key: &str) -> Result<T> {
    match v.parse() {
        Ok(x) => Ok(x),
        Err(_) => {
            op2_bail!(BadConfig, "op_solve: option {key} has the value '{v}', which is not a number of the right kind")
        }
    }
}

impl Options {
    /// Parses a PETSc-style option string (`None`: CG + Jacobi, PETSc's other defaults).
    pub fn parse(s: Option<&str>) -> Result<Options> {
        let text = s.unwrap_or("").to_string();
        let mut o = Options {
            native: Ok((Ksp::Cg, Pc::Jacobi)),
            rtol: 1e-5,
            atol: 1e-50,
            max_it: 10000,
            restart: 30,
            nonzero_guess: false,
            text: text.clone(),
        };
        let (mut ksp, mut pc) = ("cg".to_string(), "jacobi".to_string());
        let mut petsc_only: Vec<String> = Vec::new();
        let mut it = text.split_whitespace().peekable();
        while let Some(k) = it.next() {
            if !k.starts_with('-') {
                op2_bail!(BadConfig, "op_solve: '{k}' is not an option (options start with '-', as PETSc's)");
            }
            match k {
                "-ksp_type" => ksp = value(&mut it, k)?.to_string(),
                "-pc_type" => pc = value(&mut it, k)?.to_string(),
                "-ksp_rtol" => o.rtol = number(value(&mut it, k)?, k)?,
                "-ksp_atol" => o.atol = number(value(&mut it, k)?, k)?,
                "-ksp_max_it" => o.max_it = number(value(&mut it, k)?, k)?,
                "-ksp_gmres_restart" => o.restart = number::<usize>(value(&mut it, k)?, k)?.max(1),
                "-ksp_initial_guess_nonzero" => {
                    o.nonzero_guess = match it.peek() {
                        Some(&v) if !v.starts_with('-') => !matches!(it.next(), Some("0" | "false" | "no")),
                        _ => true,
                    }
                }
                "-op2_petsc" => petsc_only.push(k.to_string()),
                _ => {
                    // Anything else is PETSc's business: keep its value with it.
                    let mut opt = k.to_string();
                    if let Some(&v) = it.peek() {
                        if !v.starts_with('-') || v.parse::<f64>().is_ok() {
                            opt = format!("{k} {v}");
                            it.next();
                        }
                    }
                    petsc_only.push(opt);
                }
            }
        }
        let k = match ksp.as_str() {
            "cg" => Some(Ksp::Cg),
            "gmres" => Some(Ksp::Gmres),
            _ => None,
        };
        let p = match pc.as_str() {
            "jacobi" => Some(Pc::Jacobi),
            "none" => Some(Pc::None),
            _ => None,
        };
        if k.is_none() {
            petsc_only.insert(0, format!("-ksp_type {ksp}"));
        }
        if p.is_none() {
            petsc_only.insert(0, format!("-pc_type {pc}"));
        }
        o.native = match (k, p) {
            (Some(k), Some(p)) if petsc_only.is_empty() => Ok((k, p)),
            _ => Err(petsc_only.join(", ")),
        };
        Ok(o)
    }
}

/// A solve that did not converge: where it stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct NotConverged {
    pub iterations: usize,
    pub residual: f64,
}

/// Sums a process's partial dot products over all processes, in place (one collective for
/// all of them; nothing on one process).
pub type GlobalSum<'a> = &'a mut dyn FnMut(&mut [f64]);

/// Dot products of pairs of vectors, summed over the processes together.
type Dots<'a> = &'a mut dyn FnMut(&[(&[f64], &[f64])]) -> Vec<f64>;

fn local_dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Solves `A x = b` natively; `mult(x, y)` computes `y = A x`, `diag` is A's diagonal (for
/// Jacobi). `x` holds the initial guess (used only with `nonzero_guess`) and, on return, the
/// solution or the last iterate. Returns the iteration count (the inner result: whether the
/// solver's own test was met; `op_solve` then checks the true residual). The outer error:
/// working memory refused (`core::alloc`). Under MPI the vectors are this process's owned rows
/// and `gsum` sums dot products over the processes.
#[allow(clippy::too_many_arguments)]
pub fn solve(
    ksp: Ksp,
    pc: Pc,
    o: &Options,
    mult: &mut dyn FnMut(&[f64], &mut [f64]),
    gsum: GlobalSum,
    diag: &[f64],
    b: &[f64],
    x: &mut [f64],
) -> Result<std::result::Result<usize, NotConverged>> {
    let mut inv: Vec<f64> = alloc::with_capacity(b.len(), WHAT)?;
    match pc {
        // PETSc's Jacobi uses 1 where the diagonal is zero.
        Pc::Jacobi => inv.extend(diag.iter().map(|&d| if d == 0.0 { 1.0 } else { 1.0 / d })),
        Pc::None => inv.resize(b.len(), 1.0),
    }
    if !o.nonzero_guess {
        x.iter_mut().for_each(|v| *v = 0.0);
    }
    let mut dots = |pairs: &[(&[f64], &[f64])]| -> Vec<f64> {
        let mut v: Vec<f64> = pairs.iter().map(|(a, b)| local_dot(a, b)).collect();
        gsum(&mut v);
        v
    };
    match ksp {
        Ksp::Cg => cg(o, mult, &mut dots, &inv, b, x),
        Ksp::Gmres => gmres(o, mult, &mut |a, b| dots(&[(a, b)])[0], &inv, b, x),
    }
}

/// What working memory is for, in allocation errors.
const WHAT: &str = "op_solve: the native solver's work vectors";

fn cg(
    o: &Options,
    mult: &mut dyn FnMut(&[f64], &mut [f64]),
    dots: Dots,
    inv: &[f64],
    b: &[f64],
    x: &mut [f64],
) -> Result<std::result::Result<usize, NotConverged>> {
    let n = b.len();
    let mut r: Vec<f64> = alloc::zeroed(n, WHAT)?;
    let mut q: Vec<f64> = alloc::zeroed(n, WHAT)?;
    let mut z: Vec<f64> = alloc::zeroed(n, WHAT)?;
    mult(x, &mut q);
    for i in 0..n {
        r[i] = b[i] - q[i];
        z[i] = r[i] * inv[i];
    }
    let mut p = alloc::copy_of(&z, WHAT)?;
    // Dot products needed together are summed over the processes together.
    let d = dots(&[(&r, &z), (&z, &z)]);
    let mut rz = d[0];
    let norm0 = d[1].sqrt();
    let target = (o.rtol * norm0).max(o.atol);
    let mut norm = norm0;
    if norm <= target {
        return Ok(Ok(0));
    }
    for it in 1..=o.max_it {
        mult(&p, &mut q);
        let pq = dots(&[(&p, &q)])[0];
        if pq == 0.0 || !pq.is_finite() {
            return Ok(Err(NotConverged { iterations: it, residual: norm }));
        }
        let alpha = rz / pq;
        for i in 0..n {
            x[i] += alpha * p[i];
            r[i] -= alpha * q[i];
            z[i] = r[i] * inv[i];
        }
        let d = dots(&[(&z, &z), (&r, &z)]);
        norm = d[0].sqrt();
        if norm <= target {
            return Ok(Ok(it));
        }
        let rz_new = d[1];
        let beta = rz_new / rz;
        rz = rz_new;
        for i in 0..n {
            p[i] = z[i] + beta * p[i];
        }
    }
    Ok(Err(NotConverged { iterations: o.max_it, residual: norm }))
}

/// Restarted GMRES, left-preconditioned. Memory grows with the iterations actually made: the
/// Krylov basis (at most `restart + 1` vectors, reserved once through `core::alloc`, so an
/// impossible restart is a named error) and the Hessenberg matrix column by column.
fn gmres(
    o: &Options,
    mult: &mut dyn FnMut(&[f64], &mut [f64]),
    dot: &mut dyn FnMut(&[f64], &[f64]) -> f64,
    inv: &[f64],
    b: &[f64],
    x: &mut [f64],
) -> Result<std::result::Result<usize, NotConverged>> {
    let n = b.len();
    let m = o.restart.max(1);
    let mut w: Vec<f64> = alloc::zeroed(n, WHAT)?;
    let mut u: Vec<f64> = alloc::zeroed(n, WHAT)?;
    // The preconditioned residual B (b - A x).
    let residual = |mult: &mut dyn FnMut(&[f64], &mut [f64]), x: &[f64], out: &mut [f64], w: &mut [f64]| {
        mult(x, w);
        for i in 0..n {
            out[i] = (b[i] - w[i]) * inv[i];
        }
    };
    let mut r: Vec<f64> = alloc::zeroed(n, WHAT)?;
    residual(mult, x, &mut r, &mut w);
    let norm0 = dot(&r, &r).sqrt();
    let target = (o.rtol * norm0).max(o.atol);
    let mut norm = norm0;
    if norm <= target {
        return Ok(Ok(0));
    }
    let mut its = 0;
    // Basis vector j is basis[j * n..(j + 1) * n]; h[k] is column k of H (k + 2 entries).
    let words = m.checked_add(1).and_then(|v| v.checked_mul(n)).unwrap_or(usize::MAX);
    let mut basis: Vec<f64> = alloc::with_capacity(words, "op_solve: the GMRES Krylov basis (-ksp_gmres_restart)")?;
    let mut h: Vec<Vec<f64>> = alloc::with_capacity(m, WHAT)?;
    let (mut cs, mut sn): (Vec<f64>, Vec<f64>) = (alloc::zeroed(m, WHAT)?, alloc::zeroed(m, WHAT)?);
    let mut g: Vec<f64> = alloc::zeroed(m + 1, WHAT)?;
    while its < o.max_it {
        basis.clear();
        h.clear();
        basis.extend(r.iter().map(|a| a / norm));
        g.iter_mut().for_each(|a| *a = 0.0);
        g[0] = norm;
        let mut k = 0;
        let mut breakdown = false;
        while k < m && its < o.max_it {
            its += 1;
            mult(&basis[k * n..(k + 1) * n], &mut w);
            for i in 0..n {
                u[i] = w[i] * inv[i];
            }
            let mut col: Vec<f64> = alloc::zeroed(k + 2, WHAT)?;
            for (j, c) in col.iter_mut().enumerate().take(k + 1) {
                let vj = &basis[j * n..(j + 1) * n];
                *c = dot(&u, vj);
                for i in 0..n {
                    u[i] -= *c * vj[i];
                }
            }
            let hk1 = dot(&u, &u).sqrt();
            col[k + 1] = hk1;
            for j in 0..k {
                let t = cs[j] * col[j] + sn[j] * col[j + 1];
                col[j + 1] = -sn[j] * col[j] + cs[j] * col[j + 1];
                col[j] = t;
            }
            let d = (col[k] * col[k] + col[k + 1] * col[k + 1]).sqrt();
            if d == 0.0 || !d.is_finite() {
                return Ok(Err(NotConverged { iterations: its, residual: norm }));
            }
            cs[k] = col[k] / d;
            sn[k] = col[k + 1] / d;
            col[k] = d;
            col[k + 1] = 0.0;
            g[k + 1] = -sn[k] * g[k];
            g[k] *= cs[k];
            norm = g[k + 1].abs();
            h.push(col);
            k += 1;
            if norm <= target {
                break;
            }
            if hk1 == 0.0 {
                // The Krylov space is invariant: nothing more to find in it.
                breakdown = true;
                break;
            }
            basis.extend(u.iter().map(|a| a / hk1));
        }
        // x += V y, with H y = g (upper triangular, k x k; H[i][j] is h[j][i]).
        let mut y: Vec<f64> = alloc::zeroed(k, WHAT)?;
        for i in (0..k).rev() {
            let mut s = g[i];
            for j in i + 1..k {
                s -= h[j][i] * y[j];
            }
            y[i] = s / h[i][i];
        }
        for (j, yj) in y.iter().enumerate() {
            for i in 0..n {
                x[i] += yj * basis[j * n + i];
            }
        }
        if norm <= target {
            return Ok(Ok(its));
        }
        if breakdown {
            return Ok(Err(NotConverged { iterations: its, residual: norm }));
        }
        residual(mult, x, &mut r, &mut w);
        norm = dot(&r, &r).sqrt();
        if norm <= target {
            return Ok(Ok(its));
        }
    }
    Ok(Err(NotConverged { iterations: its, residual: norm }))
}

/// The true residual norm `|b - A x|` (summed over the processes with `gsum`) and `|b|`: what
/// `op_solve` checks before it reports success, whatever the solver's own test said.
pub fn true_residual(
    mult: &mut dyn FnMut(&[f64], &mut [f64]),
    gsum: GlobalSum,
    b: &[f64],
    x: &[f64],
) -> Result<(f64, f64)> {
    let mut ax: Vec<f64> = alloc::zeroed(b.len(), WHAT)?;
    mult(x, &mut ax);
    let mut s = [0.0, local_dot(b, b)];
    s[0] = b.iter().zip(&ax).map(|(bi, ai)| (bi - ai) * (bi - ai)).sum();
    gsum(&mut s);
    Ok((s[0].sqrt(), s[1].sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 1D Laplacian (2, -1) of size n, and a non-symmetric variant.
    fn lap(n: usize, skew: f64) -> impl FnMut(&[f64], &mut [f64]) {
        move |x: &[f64], y: &mut [f64]| {
            for i in 0..n {
                let l = if i > 0 { x[i - 1] } else { 0.0 };
                let r = if i + 1 < n { x[i + 1] } else { 0.0 };
                y[i] = (2.0 + i as f64 * 0.01) * x[i] - (1.0 + skew) * l - (1.0 - skew) * r;
            }
        }
    }

    #[test]
    fn options() {
        let o = Options::parse(None).unwrap();
        assert_eq!(o.native, Ok((Ksp::Cg, Pc::Jacobi)));
        let o = Options::parse(Some("-ksp_type gmres -pc_type none -ksp_rtol 1e-10 -ksp_max_it 5")).unwrap();
        assert_eq!((o.native, o.rtol, o.max_it), (Ok((Ksp::Gmres, Pc::None)), 1e-10, 5));
        let o = Options::parse(Some("-pc_type gamg -ksp_monitor")).unwrap();
        assert_eq!(o.native, Err("-pc_type gamg, -ksp_monitor".to_string()));
        assert!(Options::parse(Some("-ksp_rtol x")).is_err());
        assert!(Options::parse(Some("cg")).is_err());
        assert!(Options::parse(Some("-ksp_atol")).is_err());
        let o = Options::parse(Some("-ksp_initial_guess_nonzero -ksp_atol 1e-3")).unwrap();
        assert!(o.nonzero_guess && o.atol == 1e-3);
    }

    #[test]
    fn cg_and_gmres_solve() {
        let n = 50;
        let diag: Vec<f64> = (0..n).map(|i| 2.0 + i as f64 * 0.01).collect();
        let want: Vec<f64> = (0..n).map(|i| (i as f64 * 0.3).sin()).collect();
        for (ksp, skew) in [(Ksp::Cg, 0.0), (Ksp::Gmres, 0.0), (Ksp::Gmres, 0.3)] {
            let mut a = lap(n, skew);
            let mut b = vec![0.0; n];
            a(&want, &mut b);
            for pc in [Pc::Jacobi, Pc::None] {
                let o = Options::parse(Some("-ksp_rtol 1e-12 -ksp_gmres_restart 10")).unwrap();
                let mut x = vec![1.0; n];
                let its = solve(ksp, pc, &o, &mut a, &mut |_| {}, &diag, &b, &mut x).unwrap().unwrap();
                assert!(its > 1 && its < 400, "{ksp:?} {pc:?} {its}");
                let err = x.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
                assert!(err < 1e-9, "{ksp:?} {pc:?}: {err}");
            }
            let o = Options::parse(Some("-ksp_rtol 1e-12 -ksp_max_it 3")).unwrap();
            let mut x = vec![0.0; n];
            let e = solve(ksp, Pc::Jacobi, &o, &mut a, &mut |_| {}, &diag, &b, &mut x).unwrap().unwrap_err();
            assert_eq!(e.iterations, 3);
            assert!(e.residual > 0.0);
        }
    }

    /// The path graph Laplacian (singular) with b = e_0 (no solution): GMRES's own estimate
    /// can claim convergence; the true residual cannot be below 1/sqrt(n).
    #[test]
    fn true_residual_sees_what_the_estimate_misses() {
        let n = 40;
        let mut a = move |x: &[f64], y: &mut [f64]| {
            for i in 0..n {
                let d = if i == 0 || i == n - 1 { 1.0 } else { 2.0 };
                let l = if i > 0 { x[i - 1] } else { 0.0 };
                let r = if i + 1 < n { x[i + 1] } else { 0.0 };
                y[i] = d * x[i] - l - r;
            }
        };
        let diag: Vec<f64> = (0..n).map(|i| if i == 0 || i == n - 1 { 1.0 } else { 2.0 }).collect();
        let mut b = vec![0.0; n];
        b[0] = 1.0;
        let o = Options::parse(Some("-ksp_type gmres -ksp_gmres_restart 40")).unwrap();
        let mut x = vec![0.0; n];
        let _ = solve(Ksp::Gmres, Pc::Jacobi, &o, &mut a, &mut |_| {}, &diag, &b, &mut x).unwrap();
        let (r, bn) = true_residual(&mut a, &mut |_| {}, &b, &x).unwrap();
        assert_eq!(bn, 1.0);
        assert!(r.is_nan() || r >= 0.999 / (n as f64).sqrt(), "{r}");
    }

    /// A restart no memory can hold is a named error, not an abort.
    #[test]
    fn impossible_restart_is_an_error() {
        let n = 8;
        let mut a = |x: &[f64], y: &mut [f64]| y.copy_from_slice(x);
        let mut o = Options::parse(Some("-ksp_type gmres")).unwrap();
        o.restart = usize::MAX / 4;
        let (b, mut x) = (vec![1.0; n], vec![0.0; n]);
        let e = solve(Ksp::Gmres, Pc::None, &o, &mut a, &mut |_| {}, &[1.0; 8], &b, &mut x).unwrap_err();
        assert!(matches!(e.code, crate::error::ErrorCode::BadSize | crate::error::ErrorCode::OutOfMemory), "{e:?}");
    }
}
