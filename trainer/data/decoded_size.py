"""What arrow data decodes to, dictionaries expanded, measured without decoding it.

`RecordBatch.nbytes` counts a dictionary column's values once, however many rows point
at them: 1,500 rows that all refer to one 1 MiB string measure 1 MiB, and become 1.5 GiB
the moment anything turns them into Python values or plain arrow strings. Here every row
is charged for what it refers to. The sizes are computed on lengths (one integer per
value), never on the values themselves: a dictionary column's size is the length of each
dictionary value, taken by the row's index, summed.

A row's decoded size is what it would take as a plain (dictionary-free) arrow array:
the bytes of its strings and binaries, the width of its fixed-size values, and an offset
per string and per list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa

OFFSET_BYTES = 4  # one per string or list value, as `nbytes` counts a plain array's offsets


def decoded_bytes(data: pa.RecordBatch | pa.Table | pa.Array | pa.ChunkedArray) -> int:
    """Everything in `data`, dictionaries expanded."""
    import pyarrow.compute as pc

    return int(pc.sum(decoded_bytes_per_row(data)).as_py() or 0)


def decoded_bytes_per_row(data: pa.RecordBatch | pa.Table | pa.Array | pa.ChunkedArray) -> pa.Array:
    """What each row of `data` decodes to (int64, no nulls), dictionaries expanded."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(data, (pa.RecordBatch, pa.Table)):
        total = _repeat(0, data.num_rows)
        for column in data.columns:
            total = pc.add(total, decoded_bytes_per_row(column))
        return total
    if isinstance(data, pa.ChunkedArray):
        sizes = [_per_row(chunk) for chunk in data.chunks]
        return pa.concat_arrays(sizes) if sizes else _repeat(0, 0)
    return _per_row(data)


def _repeat(value: int, count: int) -> pa.Array:
    import pyarrow as pa

    return pa.repeat(pa.scalar(value, type=pa.int64()), count)


def _per_row(array: pa.Array) -> pa.Array:
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    if pa.types.is_dictionary(kind):
        # Each row costs its value's size, taken by index. A reader may hand every batch
        # the whole dictionary read so far, so only the referenced entries are measured.
        null_size = _per_row(pa.nulls(1, type=kind.value_type))[0]  # as in a plain array
        return pc.fill_null(_referenced_sizes(array), null_size)
    if _is_text(kind):
        lengths = pc.fill_null(pc.binary_length(array).cast(pa.int64()), 0)
        return pc.add(lengths, OFFSET_BYTES)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_map(kind):
        # `values` is the whole child array and `offsets` index into it, slice included.
        return pc.add(_segment_sums(_per_row(array.values), array.offsets), OFFSET_BYTES)
    if pa.types.is_fixed_size_list(kind):
        size = kind.list_size
        first = array.offset * size
        bounds = pa.array(range(first, first + (len(array) + 1) * size, size), type=pa.int64())
        return _segment_sums(_per_row(array.values), bounds)
    if pa.types.is_struct(kind):
        total = _repeat(0, len(array))
        for field in array.flatten():  # the struct's slice and nulls applied
            total = pc.add(total, _per_row(field))
        return total
    return _repeat(_fixed_width(kind, array), len(array))


def _referenced_sizes(array: pa.DictionaryArray) -> pa.Array:
    """The decoded size of the dictionary entry each row refers to (null for a null)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    values, indices = array.dictionary, array.indices.cast(pa.int64())
    kind = values.type
    if _is_text(kind) and hasattr(values, "offsets"):  # a length is two offsets apart
        offsets = values.offsets.cast(pa.int64())
        ends = pc.take(offsets, pc.add(indices, 1))
        return pc.add(pc.subtract(ends, pc.take(offsets, indices)), OFFSET_BYTES)
    if not (pa.types.is_nested(kind) or _is_text(kind)):  # fixed width: no lookup needed
        width = _fixed_width(kind, values)
        return pc.if_else(pc.is_null(indices), pa.scalar(None, pa.int64()), width)
    return pc.take(_per_row(values), indices)


def _is_text(kind: pa.DataType) -> bool:
    import pyarrow as pa

    checks = ("is_string", "is_large_string", "is_binary", "is_large_binary")
    views = ("is_string_view", "is_binary_view")  # newer pyarrow only
    return any(getattr(pa.types, name, lambda _: False)(kind) for name in checks + views)


def _fixed_width(kind: pa.DataType, array: pa.Array) -> int:
    """Bytes per value of a fixed-width type (a bool counts as one byte); for anything
    else (a type parquet does not produce), the array's average."""
    try:
        return max(1, kind.bit_width // 8)
    except ValueError:
        return -(-array.nbytes // max(1, len(array)))


def _segment_sums(per_child: pa.Array, offsets: pa.Array) -> pa.Array:
    """For each [offsets[i], offsets[i+1]) range of children, the sum of their sizes."""
    import pyarrow as pa
    import pyarrow.compute as pc

    running = pc.cumulative_sum(per_child) if len(per_child) else per_child
    running = pa.concat_arrays([pa.array([0], type=pa.int64()), running.cast(pa.int64())])
    offsets = offsets.cast(pa.int64())
    ends = pc.take(running, offsets.slice(1))
    starts = pc.take(running, offsets.slice(0, len(offsets) - 1))
    return pc.subtract(ends, starts)


def longest_text_in(array: pa.Array) -> int:
    """The longest string in an arrow array, nested lists, structs and dictionaries
    included, counted by pyarrow without making Python strings. A dictionary's values
    count only where a row refers to them."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    if pa.types.is_dictionary(kind):
        referenced = pc.unique(pc.drop_null(array.indices))
        return longest_text_in(array.dictionary.take(referenced))
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        longest = pc.max(pc.utf8_length(array)).as_py()
        return int(longest or 0)
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        longest = pc.max(pc.binary_length(array)).as_py()
        return int(longest or 0)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return longest_text_in(array.flatten())
    if pa.types.is_struct(kind):
        return max((longest_text_in(array.field(i)) for i in range(kind.num_fields)), default=0)
    if pa.types.is_map(kind):
        return max(longest_text_in(array.keys), longest_text_in(array.items))
    return 0
