"""Keep freed memory in the process instead of handing it back to the operating system after every free.

Speed, not maths. A forward pass of the real model allocates and frees tens of megabytes per layer (the
scores, the feed-forward hidden layer, their temporaries). glibc serves blocks above 128 KiB with fresh
pages from the kernel and returns them on free, so every layer paid for page faults again: 10 to 25 %
of a 256-token run on this machine. PyTorch's own allocator keeps freed memory for reuse; this asks glibc
to do the same, up to a bound, once per process. Elsewhere than glibc it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters
M_MMAP_THRESHOLD = -3
KEEP_BYTES = 256 << 20  # keep up to 256 MiB of freed memory; blocks above 64 MiB still come from mmap
MMAP_BYTES = 64 << 20


@functools.cache
def keep_freed_memory() -> bool:
    """Ask glibc (once per process) to keep freed memory for reuse; True if it agreed."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        mallopt = libc.mallopt if libc is not None else None
    except (OSError, AttributeError):  # not glibc: nothing to tune
        return False
    if mallopt is None:
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_BYTES)) and bool(mallopt(M_TRIM_THRESHOLD, KEEP_BYTES))
