//! The CUDA code of `OP2_INC=stage` and `OP2_INC=blocks` run without a GPU: the generated
//! source is compiled as host C++ against a small emulation of what it uses (thread and block
//! indices, `__syncthreads` as a barrier of real threads, dynamic shared memory per block), and
//! each launch runs its thread blocks one after the other, each as `blockDim` threads. A
//! res_calc-like loop (two READs of one dat through one map, two INCs of another, a direct READ)
//! over an irregular mesh must give what a plain sequential loop gives, to rounding (the order
//! of increments differs). This checks the packed plan, the staging arrays and the generated
//! code together, as far as a host can: the ordering and barriers a GPU's warps add are not
//! modelled. Needs a C++20 compiler (`c++`, or `CXX`); skipped with a message without one.

use op2::arg::{Access, ArgDesc, DatAccess};
use op2::backend::cuda::codegen::{generate, generate_staged, IncStrategy};
use op2::backend::device::pack_staged;
use op2::codegen::LoopSignature;
use op2::core::ElemType;
use op2::plan::{needs_colouring, IndirectArg, IndirectDesc, MapIdx, Plan, PlanRequest};
use std::path::Path;
use std::process::Command;

const NE: usize = 5000;
const NN: usize = 1400;
const PART: usize = 128;
const THREADS: usize = 64;

const KERNEL: &str = "void res(const double *q, const double *x0, const double *x1, double *r0, double *r1)\n{\n  double f = q[0] * (x0[0] - x1[0]) + q[1] * (x0[1] + x1[1]);\n  for (int k = 0; k < 4; k++) {\n    r0[k] += f * (k + 1) + q[k];\n    r1[k] -= f * (k + 1) - q[k];\n  }\n}\n";

const EMU: &str = r#"// What the generated CUDA uses, on the host.
#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
struct dim3 { unsigned x, y, z; };
thread_local dim3 threadIdx, blockIdx;
dim3 blockDim, gridDim;
#define __global__
#define __device__
#define __constant__ static
#define __shared__
#define __restrict__
static std::barrier<> *op2_emu_bar;
static void __syncthreads() { op2_emu_bar->arrive_and_wait(); }
unsigned long long op2_sh[1 << 16], op2_shm[1 << 16];
"#;

const MAIN: &str = r#"
static std::vector<char> slurp(const char *path)
{
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); exit(2); }
  std::vector<char> v;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) v.insert(v.end(), buf, buf + n);
  fclose(f);
  return v;
}
template <class T> static std::vector<T> load(const char *path)
{
  std::vector<char> b = slurp(path);
  std::vector<T> v(b.size() / sizeof(T));
  for (size_t i = 0; i < v.size(); i++) v[i] = ((T *)b.data())[i];
  return v;
}
int main(int argc, char **argv)
{
  (void)argc;
  std::vector<double> q = load<double>(argv[1]), x = load<double>(argv[2]);
  std::vector<int> map = load<int>(argv[3]), elems = load<int>(argv[4]), ranges = load<int>(argv[5]);
  std::vector<double> r(atoi(argv[7]) * 4, 0.0);
  unsigned threads = (unsigned)atoi(argv[8]);
  for (size_t c = 0; c + 1 < ranges.size(); c += 2) {
    int first = ranges[c], count = ranges[c + 1];
    if (count == 0) continue;
    blockDim = {threads, 1, 1};
    gridDim = {(unsigned)count, 1, 1};
    for (int b = 0; b < count; b++) {
      std::barrier<> bar((std::ptrdiff_t)threads);
      op2_emu_bar = &bar;
      std::vector<std::thread> ts;
      for (unsigned t = 0; t < threads; t++)
        ts.emplace_back([&, t, b] {
          threadIdx = {t, 0, 0};
          blockIdx = {(unsigned)b, 0, 0};
          op2_kernel(first, count, 0, elems.data(), nullptr, q.data(), x.data(), map.data(), x.data(), map.data(),
                     r.data(), map.data(), r.data(), map.data());
        });
      for (auto &th : ts) th.join();
    }
  }
  FILE *f = fopen(argv[6], "wb");
  fwrite(r.data(), sizeof(double), r.size(), f);
  fclose(f);
  return 0;
}
"#;

fn bytes<T: Copy>(v: &[T]) -> Vec<u8> {
    // SAFETY: plain-old-data values, read as their bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }.to_vec()
}

fn cxx() -> Option<String> {
    let c = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    let ok = Command::new(&c).arg("--version").output().map(|o| o.status.success()).unwrap_or(false);
    ok.then_some(c)
}

/// Runs the generated `source` over the packed plan (`elems`) launch by launch (`ranges`:
/// (first entry of blkmap, blocks) per colour) and returns r.
/// The mesh's data: q (per edge), x (per node) and the edge-to-node map.
struct Mesh<'a> {
    q: &'a [f64],
    x: &'a [f64],
    map: &'a [i32],
}

fn run(
    dir: &Path,
    tag: &str,
    cxx: &str,
    source: &str,
    elems: &[i32],
    ranges: &[(usize, usize)],
    mesh: &Mesh,
) -> Vec<f64> {
    let d = dir.join(tag);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("k.cpp"), format!("{EMU}\n{source}\n{MAIN}")).unwrap();
    let flat: Vec<i32> = ranges.iter().flat_map(|&(f, c)| [f as i32, c as i32]).collect();
    let Mesh { q, x, map } = mesh;
    for (name, b) in
        [("q", bytes(q)), ("x", bytes(x)), ("map", bytes(map)), ("elems", bytes(elems)), ("ranges", bytes(&flat))]
    {
        std::fs::write(d.join(name), b).unwrap();
    }
    let exe = d.join("k");
    let out = Command::new(cxx)
        .args(["-std=c++20", "-O1", "-pthread", "-w", "-o"])
        .arg(&exe)
        .arg(d.join("k.cpp"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{tag}: the generated code does not build as host C++:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status = Command::new(&exe)
        .args(["q", "x", "map", "elems", "ranges", "r"].map(|f| d.join(f)))
        .arg(NN.to_string())
        .arg(THREADS.to_string())
        .status()
        .unwrap();
    assert!(status.success(), "{tag}: the emulated launches failed");
    let r = std::fs::read(d.join("r")).unwrap();
    r.chunks_exact(8).map(|c| f64::from_ne_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn staged_and_two_level_blocks_match_a_sequential_loop() {
    let Some(cxx) = cxx() else {
        eprintln!("cuda_emulated: no C++ compiler (c++ or CXX): skipped");
        return;
    };
    // An irregular mesh: edge e joins two different nodes, some nodes shared by many edges.
    let map: Vec<i32> = (0..NE)
        .flat_map(|e| {
            let a = (e * 7 + e / 3) % NN;
            let b = (a + 1 + (e * 13) % (NN - 1)) % NN;
            [a as i32, b as i32]
        })
        .collect();
    let q: Vec<f64> = (0..NE * 4).map(|i| ((i * 37) % 101) as f64 / 7.0 - 3.0).collect();
    let x: Vec<f64> = (0..NN * 2).map(|i| ((i * 53) % 97) as f64 / 11.0).collect();
    let mut want = vec![0.0f64; NN * 4];
    for e in 0..NE {
        let (a, b) = (map[2 * e] as usize, map[2 * e + 1] as usize);
        let qe = &q[4 * e..4 * e + 4];
        let f = qe[0] * (x[2 * a] - x[2 * b]) + qe[1] * (x[2 * a + 1] + x[2 * b + 1]);
        for k in 0..4 {
            want[4 * a + k] += f * (k + 1) as f64 + qe[k];
            want[4 * b + k] -= f * (k + 1) as f64 - qe[k];
        }
    }

    let dat = |dim, acc, how| ArgDesc::Dat { ty: ElemType::Double, dim, acc, how, optional: false };
    let args = vec![
        dat(4, Access::Read, DatAccess::Direct),
        dat(2, Access::Read, DatAccess::Indirect { map_dim: 2, idx: 0 }),
        dat(2, Access::Read, DatAccess::Indirect { map_dim: 2, idx: 1 }),
        dat(4, Access::Inc, DatAccess::Indirect { map_dim: 2, idx: 0 }),
        dat(4, Access::Inc, DatAccess::Indirect { map_dim: 2, idx: 1 }),
    ];
    let ind = |dat: u64, bytes: usize, col: u32, acc: Access| IndirectArg {
        desc: IndirectDesc {
            dat,
            elem_bytes: bytes,
            map: 5,
            map_dim: 2,
            idx: MapIdx::Col(col),
            target_size: NN,
            colour: needs_colouring(acc, true),
        },
        map_values: &map,
    };
    let pargs = [
        ind(10, 16, 0, Access::Read),
        ind(10, 16, 1, Access::Read),
        ind(11, 32, 0, Access::Inc),
        ind(11, 32, 1, Access::Inc),
    ];
    let req = PlanRequest { set: 1, set_size: NE, start: 0, end: NE, part_size: PART, staging: true, args: &pargs };
    let plan = Plan::build(&req).expect("plan");
    assert!(plan.ncolours > 1 && plan.max_nthrcol > 1, "the mesh should need both levels of colouring");
    let staged = pack_staged(&plan, &args, &[1, 2, 3, 4], 0).expect("the loop can be staged");
    assert_eq!(staged.pattern.npairs, 2);
    let sig = LoopSignature {
        loop_name: "res",
        kernel_name: "res",
        kernel_source: KERNEL,
        kernel_origin: "\"res.c\"",
        args: &args,
        consts: &[],
    };
    let dir = std::env::temp_dir().join(format!("op2-cuda-emulated-{}", std::process::id()));
    let mesh = Mesh { q: &q, x: &x, map: &map };
    let check = |tag: &str, got: &[f64]| {
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "{tag}: r[{i}] = {g}, want {w}");
        }
    };
    // Staged in shared memory.
    let src = generate_staged(&sig, &[], false, staged.pattern);
    let got = run(&dir, "stage", &cxx, &src, &staged.packed, &staged.ranges, &mesh);
    check("stage", &got);
    // The two-level blocks without staging, from the same plan's packed arrays.
    let mut packed = vec![plan.nelems.len() as i32, 0];
    for a in [&plan.blkmap, &plan.offset, &plan.nelems, &plan.nthrcol, &plan.thrcol] {
        packed.extend_from_slice(a);
    }
    let src = generate(&sig, &[], false, IncStrategy::TwoLevel, false);
    let got = run(&dir, "blocks", &cxx, &src, &packed, &staged.ranges, &mesh);
    check("blocks", &got);
    let _ = std::fs::remove_dir_all(&dir);
}
