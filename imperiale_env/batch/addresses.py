"""Many arrays passed to a compiled call as one: their addresses and shapes in a single int64 array.

A compiled call from Python checks and unpacks every array it is given, some 60 ns each: the
batch state's 55 arrays cost more than a whole decision at batch 1.  :func:`header` writes,
once, each array's address and shape into one int64 array (the caller keeps the arrays alive
and never moves them: the batch state holds them, and drops the header with its tuples when a
field gets a new array); inside the compiled code, :func:`arrays_at` rebuilds the arrays from it
as a tuple, in the types the header was made for.  One array crosses the call instead of 55.

The element types and dimensions are frozen into the compiled code, while numba's disk cache
knows only the entry point's own file: so the header starts with a fingerprint of the types
(:func:`fingerprint`), and the code compares it with the one it was compiled for
(:func:`compiled_fingerprint`) before it reads anything, so that a changed state meets no stale
cache.  With ``NUMBA_DISABLE_JIT`` nothing here runs: the callers pass the tuples themselves.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
from llvmlite import ir
from numba import from_dtype, types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

#: The entries of a header before the first array's address: the fingerprint.
PREAMBLE = 1
#: The error of a compiled entry point that finds a header of another layout than its own.
STALE_CACHE = ("numba's disk cache holds code compiled for another batch state layout: delete it (the "
               "__pycache__ folders under imperiale_env/batch, or NUMBA_CACHE_DIR) and run again")


def _layout(arrays: Sequence[np.ndarray]) -> tuple[tuple[str, int], ...]:
    return tuple((a.dtype.str, a.ndim) for a in arrays)


def fingerprint(layout: tuple[tuple[str, int], ...]) -> int:
    """A number that changes with the element types and dimensions of the arrays (63 bits)."""
    return zlib.crc32(repr(layout).encode()) | (len(layout) << 32)


def header(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """The fingerprint, then each array's address and shape, as one int64 array.  The arrays
    must be C-contiguous (their strides are rebuilt from the shape): another is refused."""
    out = [fingerprint(_layout(arrays))]
    for k, a in enumerate(arrays):
        if not a.flags.c_contiguous or not a.flags.aligned:
            raise ValueError(f"array {k} ({a.dtype}{a.shape}) must be C-contiguous and aligned to be passed by "
                             "address; give the state field a contiguous array (np.ascontiguousarray)")
        out += [a.ctypes.data, *a.shape]
    return np.array(out, dtype=np.int64)


def _types(layout: tuple[tuple[str, int], ...]) -> list[types.Array]:
    return [types.Array(from_dtype(np.dtype(dt)), ndim, "C") for dt, ndim in layout]


def arrays_at(layout: tuple[tuple[str, int], ...]):  # noqa: ANN201 - a numba intrinsic
    """An intrinsic ``(header) -> tuple of arrays`` for arrays of ``layout`` (``(dtype.str, ndim)``
    each, as :func:`layout_of` gives it), to call from compiled code on a :func:`header`."""
    array_types = _types(layout)
    tuple_type = types.Tuple(array_types)

    @intrinsic
    def _arrays_at(typingctx, head):  # noqa: ANN001, ANN202 - numba's typing signature
        def codegen(context, builder, sig, args):  # noqa: ANN001, ANN202
            data = make_array(sig.args[0])(context, builder, args[0]).data
            intp = context.get_value_type(types.intp)
            pos = PREAMBLE
            items = []
            for aty in array_types:
                def word(at: int):  # noqa: ANN202
                    return builder.load(builder.gep(data, [ir.Constant(intp, at)]))

                pointer_type = context.get_data_type(aty.dtype).as_pointer()
                pointer = builder.inttoptr(word(pos), pointer_type)
                shape = [word(pos + 1 + d) for d in range(aty.ndim)]
                itemsize = context.get_abi_sizeof(context.get_data_type(aty.dtype))
                strides, stride = [], ir.Constant(intp, itemsize)
                for d in reversed(range(aty.ndim)):
                    strides.insert(0, stride)
                    stride = builder.mul(stride, shape[d])
                ary = make_array(aty)(context, builder)
                populate_array(ary, data=pointer, shape=cgutils.pack_array(builder, shape),
                               strides=cgutils.pack_array(builder, strides), itemsize=ir.Constant(intp, itemsize),
                               meminfo=None)
                items.append(ary._getvalue())
                pos += 1 + aty.ndim
            return context.make_tuple(builder, tuple_type, items)

        return tuple_type(head), codegen

    return _arrays_at


def compiled_fingerprint(layout: tuple[tuple[str, int], ...]):  # noqa: ANN201 - a numba intrinsic
    """An intrinsic ``() -> int64``: the fingerprint of ``layout``, a constant in the compiled code."""
    value = fingerprint(layout)

    @intrinsic
    def _compiled(typingctx):  # noqa: ANN001, ANN202
        def codegen(context, builder, sig, args):  # noqa: ANN001, ANN202
            return context.get_constant(types.int64, value)

        return types.int64(), codegen

    return _compiled


def layout_of(arrays: Sequence[np.ndarray]) -> tuple[tuple[str, int], ...]:
    """The ``(dtype.str, ndim)`` of each array: what :func:`arrays_at` is built for."""
    return _layout(arrays)
