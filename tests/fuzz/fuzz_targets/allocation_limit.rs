//! The fuzz targets' allocation limit: any single allocation over [`LIMIT_BYTES`] aborts the run, and libFuzzer
//! keeps the input that caused it in `artifacts/<target>/`, as for a panic.
//!
//! libFuzzer's own `-malloc_limit_mb` needs a sanitizer's malloc hooks. The targets are built without a sanitizer
//! (AddressSanitizer was a third of CI's fuzz build, and the code under test has no `unsafe` of its own), so the
//! limit is enforced here, in the allocator every Rust allocation goes through. `-rss_limit_mb` still bounds the
//! whole process.

use std::alloc::{GlobalAlloc, Layout, System};

/// 512 MB: no input of the targets' `-max_len` (at most 128 KB) has any business asking for more at once.
pub const LIMIT_BYTES: usize = 512 << 20;

/// [`System`], refusing (by aborting) any one allocation over [`LIMIT_BYTES`].
pub struct Limited;

impl Limited {
    fn check(size: usize) {
        if size > LIMIT_BYTES {
            // Formatting a usize allocates nothing, and stderr is unbuffered.
            eprintln!(
                "==allocation_limit== an allocation of {size} bytes, over the limit of {LIMIT_BYTES}"
            );
            std::process::abort();
        }
    }
}

// SAFETY: every call is passed on to `System` unchanged; the check only reads the requested size.
unsafe impl GlobalAlloc for Limited {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::check(layout.size());
        // SAFETY: the caller's contract for `alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::check(layout.size());
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Self::check(new_size);
        // SAFETY: the caller's contract for `realloc`, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}
