//! How much native stack the current thread has left, so that the recursive conversions of
//! [`crate::convert`] refuse a value before they overflow a small thread stack (issue 33, N6).
//!
//! The depth limit alone does not protect them: a Python thread may run on a stack far smaller
//! than 127 levels of conversion need (`threading.stack_size(64 * 1024)` leaves room for about
//! 60), and an overflow kills the process with SIGSEGV instead of raising.

use std::cell::Cell;

/// The stack a conversion keeps free below it: room for raising the error, dropping what was
/// converted and the Rust work that follows on the same thread (estimates walk the value).
pub const RESERVE: usize = 32 * 1024;

thread_local! {
    /// The lowest address of this thread's stack (0: not known), looked up once per thread.
    static STACK_LOW: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The lowest usable address of the current thread's stack, if the platform tells.
#[cfg(target_os = "linux")]
fn stack_low() -> usize {
    // SAFETY: `attr` is initialised by pthread_getattr_np before it is read and destroyed once;
    // the out-pointers point at live locals.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return 0;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let mut guard: libc::size_t = 0;
        let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0
            && libc::pthread_attr_getguardsize(&attr, &mut guard) == 0;
        libc::pthread_attr_destroy(&mut attr);
        if ok {
            addr as usize + guard
        } else {
            0
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn stack_low() -> usize {
    0
}

/// Bytes of stack left below the caller's frame, or `None` where that is not known.
pub fn remaining() -> Option<usize> {
    let low = STACK_LOW.with(|cell| match cell.get() {
        Some(low) => low,
        None => {
            let low = stack_low();
            cell.set(Some(low));
            low
        }
    });
    if low == 0 {
        return None;
    }
    let marker = 0u8;
    let here = std::ptr::addr_of!(marker) as usize;
    Some(here.saturating_sub(low))
}

/// Whether less than [`RESERVE`] bytes of stack are left (never on a platform that cannot tell).
pub fn too_little_left() -> bool {
    remaining().is_some_and(|left| left < RESERVE)
}
