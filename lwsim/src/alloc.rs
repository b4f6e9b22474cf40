//! A global allocator for simulated programs ([`LineAligned`]): each block on lines of its own,
//! so that the coherence model's per-line charges do not depend on where earlier allocations
//! landed.

/// A global allocator for simulated programs: the system allocator with every block aligned to a
/// 64-byte line.
///
/// The coherence model charges by line, so two allocations that share a line contend (false
/// sharing) or not depending on where the allocator put them, which depends on everything the
/// process allocated before: a simulated point would not repeat. With every block starting on a
/// line of its own, each object's lines depend only on its own layout, and the same point gives
/// the same counters in any process and after any earlier run. A harness declares it with
/// `#[global_allocator]` (lwbench does in `--cfg lwsim` builds); the cost is up to 63 bytes per
/// allocation.
#[derive(Debug, Default, Clone, Copy)]
pub struct LineAligned;

impl LineAligned {
    fn widen(layout: std::alloc::Layout) -> std::alloc::Layout {
        // A power-of-two alignment at least as large as the original: always valid, and the size
        // rounds up to the new alignment so no two blocks share a line.
        std::alloc::Layout::from_size_align(layout.size(), layout.align().max(64))
            .map(|l| l.pad_to_align())
            .unwrap_or(layout)
    }
}

// SAFETY: every call forwards to the system allocator with a layout whose alignment is at least
// the requested one (so the block satisfies the caller's layout), and `dealloc` recomputes the
// same widened layout from the caller's layout, so System sees matching alloc/dealloc pairs.
unsafe impl std::alloc::GlobalAlloc for LineAligned {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: `widen` keeps the size non-zero if it was (the caller's precondition).
        unsafe { std::alloc::System.alloc(Self::widen(layout)) }
    }
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        unsafe { std::alloc::System.alloc_zeroed(Self::widen(layout)) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: `ptr` came from `alloc`/`alloc_zeroed` (or the default `realloc`, which
        // allocates through `alloc`) with this same caller layout, hence the same widened one.
        unsafe { std::alloc::System.dealloc(ptr, Self::widen(layout)) }
    }
}
