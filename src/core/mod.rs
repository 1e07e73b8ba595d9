//! The OP2 data model in plain Rust: sets, maps, dats, constants and kernels. No FFI here: the
//! C layer (`api`) converts handles and pointers, this layer validates meaning and owns data.

pub mod alloc;
pub mod buffer;
pub mod clex;
pub mod file;
pub mod output;
pub mod renumber;
pub mod residency;
pub mod types;

use crate::error::{Op2Error, Result};
use crate::op2_bail;
use buffer::AlignedBuf;
pub use types::ElemType;

/// Index of a set in its `Context`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SetId(pub u32);
/// Index of a map in its `Context`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MapId(pub u32);
/// Index of a dat in its `Context`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DatId(pub u32);
/// Index of a kernel in its `Context`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KernelId(pub u32);
/// Index of a matrix in `Mats` (`mat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MatId(pub u32);

/// An iteration set. Local elements are numbered core, owned, exec halo, non-exec halo (the
/// MPI model of `mpi-halos.txt`); on one process everything is core.
#[derive(Debug)]
pub struct Set {
    pub name: String,
    pub size: usize,
    /// End of the core section (elements that touch no halo data).
    pub core_end: usize,
    /// End of the exec halo section (elements executed redundantly); `size` marks the end of
    /// owned elements.
    pub exec_end: usize,
    /// Local elements stored, halos included (`exec_end` plus the non-exec halo): the rows of
    /// every dat on the set. Equal to `size` on one process.
    pub total: usize,
    /// Storage order after `op_renumber` (None: storage is the declared order). Every value
    /// users see (fetch, output, `op_arg_idx`) is in the declared order.
    pub order: Option<renumber::Order>,
}

impl Set {
    pub fn new(name: &str, size: i32) -> Result<Set> {
        if size < 0 {
            op2_bail!(BadSize, "op_decl_set '{name}': size {size} is negative");
        }
        let size = size as usize;
        Ok(Set { name: name.to_string(), size, core_end: size, exec_end: size, total: size, order: None })
    }
}

/// The error of a map entry outside its target set, as `op_decl_map` and `op_decl_map_long`
/// give it: the entry at `pos` of a map of `dim` columns is `v`; positions and values are
/// shown in the caller's index `base`.
pub fn map_entry_out_of_range(
    call: &str,
    name: &str,
    (pos, dim): (usize, usize),
    v: i64,
    to: &Set,
    base: i64,
) -> Op2Error {
    let to_size = to.size;
    crate::op2_err!(
        MapOutOfRange,
        "{call} '{name}': entry {} (element {}, position {}) is {}, outside {} of set '{}'",
        pos as i64 + base,
        (pos / dim) as i64 + base,
        (pos % dim) as i64 + base,
        v.saturating_add(base),
        if base == 0 { format!("[0, {to_size})") } else { format!("{base}..{}", to_size as i64 - 1 + base) },
        to.name
    )
}

/// 64-bit map entries (`op_decl_map_long`) as op2's 32-bit ones, each checked against `to`
/// (its size at most `i32::MAX`, so any entry that fits the set fits an `i32`): the first
/// entry outside it is the error `op_decl_map` gives, named for `call`.
pub fn narrow_map(call: &str, name: &str, dim: usize, values: &[i64], to: &Set, base: i64) -> Result<Vec<i32>> {
    if let Some((pos, &v)) = values.iter().enumerate().find(|(_, &v)| v < 0 || v as u64 >= to.size as u64) {
        return Err(map_entry_out_of_range(call, name, (pos, dim.max(1)), v, to, base));
    }
    let mut out = alloc::with_capacity::<i32>(values.len(), &format!("{call} '{name}'"))?;
    out.extend(values.iter().map(|&v| v as i32));
    Ok(out)
}

/// A map from each element of `from` to `dim` elements of `to`.
#[derive(Debug)]
pub struct Map {
    pub name: String,
    pub from: SetId,
    pub to: SetId,
    pub dim: usize,
    /// Row-major, `from.size * dim` entries, each in `[0, to.size)` (checked at declaration).
    pub values: Vec<i32>,
    /// Number of distinct targets through a column (`Some(c)`) or all columns (`None`),
    /// computed on first use by the bandwidth accounting of `op_timing_output`, per column
    /// asked for (a map may have a huge arity: nothing here is sized by it).
    distinct: std::sync::Mutex<Vec<(Option<usize>, usize)>>,
    /// Where the rows came from, for a map declared from an HDF5 file under MPI before
    /// `op_partition` (which may release it while the partitioner runs and read it again).
    pub source: Option<FileSource>,
}

impl Map {
    /// Validates and copies a map; `from_set`/`to_set` are the resolved sets. `base` is the
    /// caller's index base (0 in C, 1 in Fortran), for messages only: values are 0-based.
    pub fn new(name: &str, from: (SetId, &Set), to: (SetId, &Set), dim: i32, values: &[i32], base: i64) -> Result<Map> {
        let dim = Map::check(name, from.1, to.1, dim, values, base)?;
        let values = alloc::copy_of(values, &format!("op_decl_map '{name}'"))?;
        Ok(Map::checked(name, (from.0, to.0), dim, values))
    }

    /// As `new`, keeping `values` as the map's storage instead of copying them (a map read
    /// from a file: one copy of its block, not two).
    pub fn from_vec(
        name: &str,
        from: (SetId, &Set),
        to: (SetId, &Set),
        dim: i32,
        values: Vec<i32>,
        base: i64,
    ) -> Result<Map> {
        let dim = Map::check(name, from.1, to.1, dim, &values, base)?;
        Ok(Map::checked(name, (from.0, to.0), dim, values))
    }

    /// A map of checked `values`.
    fn checked(name: &str, (from, to): (SetId, SetId), dim: usize, values: Vec<i32>) -> Map {
        Map { name: name.to_string(), from, to, dim, values, distinct: std::sync::Mutex::new(Vec::new()), source: None }
    }

    /// Checks a map's dim, length and entries; its dim as a usize.
    fn check(name: &str, from: &Set, to: &Set, dim: i32, values: &[i32], base: i64) -> Result<usize> {
        if dim < 1 {
            op2_bail!(BadSize, "op_decl_map '{name}': dim {dim} is less than 1");
        }
        let dim = dim as usize;
        let expected = from.size * dim;
        if values.len() != expected {
            op2_bail!(
                BadSize,
                "op_decl_map '{name}': {} entries given, {} needed ({} elements of set '{}' x dim {dim})",
                values.len(),
                expected,
                from.size,
                from.name
            );
        }
        let to_size = to.size;
        if let Some((pos, &v)) = values.iter().enumerate().find(|(_, &v)| v < 0 || v as usize >= to_size) {
            return Err(map_entry_out_of_range("op_decl_map", name, (pos, dim), v as i64, to, base));
        }
        Ok(dim)
    }

    /// Distinct targets reached through column `idx`, or through all columns for `None`.
    pub fn distinct_targets(&self, idx: Option<usize>, to_size: usize) -> usize {
        let idx = idx.filter(|&c| c < self.dim);
        let mut known = self.distinct.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&(_, n)) = known.iter().find(|(c, _)| *c == idx) {
            return n;
        }
        // One bit per target, allocated fallibly: without the memory (the map is the mesh's
        // size) the count is the upper bound, visits capped by the target set, not cached.
        let mut seen: Vec<u64> = Vec::new();
        let visits = self.values.len() / self.dim * if idx.is_some() { 1 } else { self.dim };
        if seen.try_reserve_exact(to_size.div_ceil(64)).is_err() {
            return visits.min(to_size);
        }
        seen.resize(to_size.div_ceil(64), 0);
        let mut n = 0;
        for row in self.values.chunks_exact(self.dim) {
            let cols: &[i32] = match idx {
                Some(c) => &row[c..c + 1],
                None => row,
            };
            for &t in cols {
                let (w, bit) = (t as usize / 64, 1u64 << (t as usize % 64));
                if seen[w] & bit == 0 {
                    seen[w] |= bit;
                    n += 1;
                }
            }
        }
        known.push((idx, n));
        n
    }
}

/// Data on a set: `dim` values of `ty` per element, element-major.
pub struct Dat {
    pub name: String,
    pub set: SetId,
    pub dim: usize,
    pub ty: ElemType,
    pub data: AlignedBuf,
    /// Whether the halo copy is out of date (the MPI layer exchanges only dirty halos).
    pub halo_dirty: bool,
    /// Which copies are current (device backends only; see `residency`).
    pub residency: residency::Residency,
    /// Bytes copied host to device and device to host since declaration (`op_dat_transfers`).
    pub to_device: u64,
    pub to_host: u64,
    /// Declared by `op_decl_dat_temp_char` (only those may be freed).
    pub temp: bool,
    /// Freed by `op_free_dat_temp_char`: its data is gone and its handle is stale.
    pub freed: bool,
    /// Where the rows came from, for a dat declared from an HDF5 file under MPI before
    /// `op_partition` (which may then read them again instead of migrating them).
    pub source: Option<FileSource>,
}

/// The file a dat's or map's declared block was read from (`op_decl_dat_hdf5`,
/// `op_decl_map_hdf5`), and what the block held then: `op_partition` releases such a block
/// and reads it again from the file only while both still match (a program may write through the dat's data
/// pointer, or rewrite the file, in between).
#[derive(Clone, Debug)]
pub struct FileSource {
    /// The file's absolute path and the dataset's name in it.
    pub path: std::path::PathBuf,
    pub dataset: String,
    /// The file's identity when it was read: (device, inode, size, modification time in ns).
    pub identity: (u64, u64, u64, i128),
    /// A hash of the declared block's bytes as read (`block_hash`).
    pub hash: u64,
}

impl FileSource {
    /// The identity of the file at `path` now (None where it cannot be had).
    pub fn identity_of(path: &std::path::Path) -> Option<(u64, u64, u64, i128)> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let m = std::fs::metadata(path).ok()?;
            Some((m.dev(), m.ino(), m.size(), m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128))
        }
        #[cfg(not(unix))]
        {
            let _ = path;
            None
        }
    }

    /// A hash of a map's block (its values' bytes, as `block_hash`).
    pub fn values_hash(values: &[i32]) -> u64 {
        FileSource::block_hash(buffer::as_bytes(values))
    }

    /// A hash of a block's bytes (SipHash: any change a program makes through the data pointer
    /// changes it but by a 2^-64 chance; the same within a process, which is all it is used for).
    pub fn block_hash(bytes: &[u8]) -> u64 {
        use std::hash::Hasher;
        let mut h = FileSource::hasher();
        h.write(bytes);
        h.finish()
    }

    /// The hasher of `block_hash`, for a block that comes in pieces: `write` of consecutive
    /// pieces gives the hash of their concatenation (SipHash buffers a partial word; nothing
    /// is added between writes).
    pub fn hasher() -> std::hash::DefaultHasher {
        std::hash::DefaultHasher::new()
    }
}

impl Dat {
    /// A newly declared dat holding `data` on the host: halo clean, nothing transferred, not a
    /// temporary.
    pub fn new(name: &str, set: SetId, dim: usize, ty: ElemType, data: AlignedBuf) -> Dat {
        Dat {
            name: name.to_string(),
            set,
            dim,
            ty,
            data,
            halo_dirty: false,
            residency: residency::Residency::Host,
            to_device: 0,
            to_host: 0,
            temp: false,
            freed: false,
            source: None,
        }
    }

    /// Row size in bytes.
    pub fn elem_bytes(&self) -> usize {
        self.dim * self.ty.size()
    }
}

/// A named constant visible to every kernel.
#[derive(Debug, Clone)]
pub struct Const {
    pub name: String,
    pub dim: usize,
    pub ty: ElemType,
    pub data: Vec<u8>,
}

/// A Fortran module variable: (lower-case name, type, dim, assembler name).
pub type ModuleVar = (String, ElemType, usize, String);

/// A user kernel: ISO C source defining a function called `name`.
#[derive(Debug)]
pub struct Kernel {
    pub name: String,
    pub source: String,
    /// The file the source was read from (`op_decl_kernel_file`): generated code should name it
    /// in `#line 1 "<file>"` so compiler messages point into the user's file. None for
    /// `op_decl_kernel` (messages then name `kernel:NAME`).
    pub file: Option<String>,
    /// Identifiers appearing in the source (to find which constants it uses).
    pub identifiers: std::collections::BTreeSet<String>,
    /// The kernel function's parameters as written (for the type check against arguments).
    pub definition: clex::Definition,
    /// A Fortran kernel's module variables of types op2 maps, lower-case name to (type, dim,
    /// assembler name): `op_decl_const` values of those names are copied there.
    pub fortran_vars: Vec<ModuleVar>,
}

impl Kernel {
    pub fn new(source: &str, name: &str) -> Result<Kernel> {
        if !is_c_identifier(name) || name.starts_with("op2_") {
            op2_bail!(
                BadKernel,
                "op_decl_kernel '{name}': the name is not a C identifier (or is a C keyword, or uses the prefix op2_ reserved for generated code)"
            );
        }
        let Some(definition) = clex::find_definition(source, name) else {
            op2_bail!(BadKernel, "op_decl_kernel '{name}': no function named '{name}' is defined in the source");
        };
        Ok(Kernel {
            name: name.to_string(),
            source: source.to_string(),
            file: None,
            identifiers: identifiers(source).into_iter().map(str::to_string).collect(),
            definition,
            fortran_vars: Vec::new(),
        })
    }
}

impl Kernel {
    /// The file name generated code gives the kernel in its `#line 1 <origin>` directive, as a
    /// C string literal (quotes included): the kernel file's path for `op_decl_kernel_file`, so
    /// compiler messages name the user's file and its lines; `"kernel:NAME"` otherwise.
    pub fn line_origin(&self) -> String {
        let name = match &self.file {
            Some(f) => f.clone(),
            None => format!("kernel:{}", self.name),
        };
        let mut s = String::with_capacity(name.len() + 2);
        s.push('"');
        for c in name.chars() {
            match c {
                '"' => s.push_str("\\\""),
                '\\' => s.push_str("\\\\"),
                '\n' => s.push_str("\\n"),
                c if (c as u32) < 0x20 => s.push('?'),
                c => s.push(c),
            }
        }
        s.push('"');
        s
    }
}

/// C99 keywords (and the `bool` of `<stdbool.h>`, which kernels see): not usable as names of
/// constants or kernels.
const C_KEYWORDS: &[&str] = &[
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "_Bool",
    "_Complex",
    "_Imaginary",
    "bool",
    "true",
    "false",
];

/// Whether `s` is a valid C identifier (and not a keyword).
pub fn is_c_identifier(s: &str) -> bool {
    if C_KEYWORDS.contains(&s) {
        return false;
    }
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Identifier tokens of C source, skipping comments, string and character literals.
pub fn identifiers(src: &str) -> Vec<&str> {
    clex::tokens(src).into_iter().filter(|t| t.kind == clex::TokKind::Ident).map(|t| t.text).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// op_partition hashes a dat's block read again in pieces of any size and compares it with
    /// the hash of the whole block taken at the declaration; a map's values hash as their
    /// bytes; any changed byte changes the hash.
    #[test]
    fn block_hash_of_pieces_is_the_whole_blocks() {
        use std::hash::Hasher;
        let block: Vec<u8> = (0..10_007u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        let whole = FileSource::block_hash(&block);
        for piece in [1, 3, 7, 8, 64, 1000, 4096, 10_007] {
            let mut h = FileSource::hasher();
            block.chunks(piece).for_each(|c| h.write(c));
            h.write(&[]);
            assert_eq!(h.finish(), whole, "pieces of {piece} bytes");
        }
        let mut changed = block.clone();
        changed[5000] ^= 1;
        assert_ne!(FileSource::block_hash(&changed), whole);
        let values = [3i32, -1, 70000, 0];
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
        assert_eq!(FileSource::values_hash(&values), FileSource::block_hash(&bytes));
    }

    #[test]
    fn kernel_definition_detection() {
        assert!(Kernel::new("void k(double *a) { a[0] = 1; }", "k").is_ok());
        assert!(Kernel::new("static inline void k (double *a)\n{\n}", "k").is_ok());
        let e = Kernel::new("void kk(double *a) { }", "k").unwrap_err();
        assert_eq!(e.code, crate::error::ErrorCode::BadKernel);
        assert!(e.message.contains("no function named 'k'"));
        assert!(Kernel::new("void k(double *a);", "k").is_err());
        assert!(Kernel::new("void k(double *a) {}", "1k").is_err());
    }

    #[test]
    fn kernel_line_origin_is_a_c_string() {
        let mut k = Kernel::new("void k(double *a) { }", "k").unwrap();
        assert_eq!(k.line_origin(), "\"kernel:k\"");
        k.file = Some("dir/my \"k\"\\x.h".to_string());
        assert_eq!(k.line_origin(), "\"dir/my \\\"k\\\"\\\\x.h\"");
    }

    #[test]
    fn identifiers_skip_comments_and_literals() {
        let ids = identifiers("x = gam /* qinf */ + 1e5f; // eps\n s = \"cfl\"; y2");
        assert_eq!(ids, vec!["x", "gam", "s", "y2"]);
    }

    #[test]
    fn map_range_check_names_everything() {
        let a = Set::new("edges", 2).unwrap();
        let b = Set::new("nodes", 3).unwrap();
        let e = Map::new("pedge", (SetId(0), &a), (SetId(1), &b), 2, &[0, 1, 2, 3], 0).unwrap_err();
        assert_eq!(e.code, crate::error::ErrorCode::MapOutOfRange);
        assert_eq!(
            e.message,
            "op_decl_map 'pedge': entry 3 (element 1, position 1) is 3, outside [0, 3) of set 'nodes'"
        );
        // Fortran's view of the same error: 1-based positions, elements and values.
        let e = Map::new("pedge", (SetId(0), &a), (SetId(1), &b), 2, &[0, 1, 2, 3], 1).unwrap_err();
        assert_eq!(e.message, "op_decl_map 'pedge': entry 4 (element 2, position 2) is 4, outside 1..3 of set 'nodes'");
        let m = Map::new("pedge", (SetId(0), &a), (SetId(1), &b), 2, &[0, 1, 1, 2], 0).unwrap();
        assert_eq!(m.distinct_targets(Some(0), 3), 2);
        assert_eq!(m.distinct_targets(None, 3), 3);
        assert!(Set::new("s", -1).is_err());
    }
}
