//! The committed `include/op2.h` must be exactly what cbindgen generates from the sources, and
//! its error-code list must match `ErrorCode`. Regenerate with `OP2_BLESS=1 cargo test --test
//! header` (or `make header`).

use std::path::PathBuf;

fn generate() -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut out = Vec::new();
    cbindgen::Builder::new().with_crate(&root).with_config(config).generate().expect("cbindgen failed").write(&mut out);
    String::from_utf8(out).expect("utf-8 header")
}

#[test]
fn header_is_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include/op2.h");
    let fresh = generate();
    if std::env::var_os("OP2_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("write include/op2.h");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(committed == fresh, "include/op2.h is stale: run `make header` and commit it");
}

#[test]
fn header_error_codes_match_rust() {
    let header = generate();
    for code in op2::ErrorCode::ALL {
        let n = code.as_i32();
        assert!(
            header.lines().any(|l| l.starts_with("#define OP2_ERR_") && l.ends_with(&format!(" {n}"))),
            "error code {n} ({code:?}) is missing from op2.h"
        );
    }
    let defined = header.lines().filter(|l| l.starts_with("#define OP2_ERR_")).count();
    assert_eq!(defined, op2::ErrorCode::ALL.len(), "op2.h defines codes that ErrorCode lacks");
}

#[test]
fn every_function_is_documented() {
    let header = generate();
    let lines: Vec<&str> = header.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        if l.contains('(')
            && !l.starts_with(' ')
            && !l.starts_with('#')
            && !l.starts_with('/')
            && !l.starts_with('*')
            && l.ends_with(';')
        {
            assert!(i > 0 && lines[i - 1].trim_start().starts_with("*/"), "undocumented declaration: {l}");
        }
    }
}
