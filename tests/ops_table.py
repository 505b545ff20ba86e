"""The ops and variants of src/table/ops.def, and the C library's names of
src/table/libc_names.def, for the Python test scripts: the tables are
read, never copied."""
import os
import re

_DEF = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src", "table", "ops.def")


def _rows(macro):
    rows = []
    for line in open(_DEF):
        m = re.match(r"\s*" + macro + r"\((.*?)\)\s*(//.*)?$", line)
        if m:
            rows.append([a.strip() for a in m.group(1).split(",")])
    return rows


def libc_names():
    """The C library's names uarch serves, as [(name, op, form)] in table order."""
    path = os.path.join(os.path.dirname(_DEF), "libc_names.def")
    return [tuple(a.strip() for a in m.group(1).split(","))
            for m in (re.match(r"UARCH_LIBC_NAME\((.*?)\)\s*$", line) for line in open(path)) if m]


def ops():
    """Every op in order, as uarch_impl() takes it: bound ops, then policy ops."""
    names = []
    for line in open(_DEF):
        m = re.match(r"\s*UARCH_(?:POLICY_)?OP\((\w+)", line)
        if m:
            names.append(m.group(1))
    return names


def impl_names():
    """Variant names as uarch_impl() prints them, keyed by their C++ name."""
    return {r[0]: r[1].strip('"') for r in _rows("UARCH_IMPL")}


def variant_symbol(op, impl, arch):
    """The function of variant impl (its C++ name) of op on arch ("x86_64",
    "aarch64"): its own row, else the row for any architecture; or None."""
    rows = {(r[0], r[1], r[2]): r[4] for r in _rows("UARCH_VARIANT")}
    return rows.get((op, impl, arch)) or rows.get((op, impl, "any"))


OPS = ops()
