"""Code that reaches an address by a byte count from ``s_getpc_b64``: no pass may move it.

A disassembled code object branches far, or reaches its data, by an address that ``s_getpc_b64``
gives and a number adds to (``s_getpc_b64 s[66:67]; s_add_i32 s68, 0xc98, 4; s_add_u32 s66, s66,
s68; ...; s_setpc_b64 s[66:67]``): the number counts the bytes between the two. A line added, removed
or changed in size anywhere in between moves the target, and neither the assembler (the number is
not a label difference it works out) nor a validation that compares or runs the code before and after
sees it. :func:`guard` refuses such a rewrite, for every pass, with the line and the reason; a
``s_getpc_b64`` whose offset is a symbol or label difference is fine.
"""
from __future__ import annotations

from .. import FixRefused


def constant_pc_offset(program) -> int | None:
    """The first ``s_getpc_b64`` whose address is moved by a number, not by a symbol or label
    difference the assembler works out: an instruction index, else None."""
    instrs = program.instrs
    for i, ins in enumerate(instrs):
        if ins.opcode != "s_getpc_b64":
            continue
        follow = instrs[i + 1:i + 6]
        if not any(op.kind in ("expr", "label") for f in follow for st in f.stmts for op in st.operands):
            return i
    return None


def refusal(program, what: str) -> FixRefused | None:
    """The refusal for a rewrite that does ``what`` ("adds 3 instructions") to code with a numeric
    ``s_getpc_b64`` offset, else None."""
    at = constant_pc_offset(program)
    if at is None:
        return None
    ins = program.instrs[at]
    return FixRefused(f"{program.path}:{ins.lineno}: s_getpc_b64 with a numeric offset: the rewrite {what}, which "
                      f"would move the address it computes (make the offset a label difference first)")


def guard(program, text: str, name: str) -> None:
    """Raise :class:`FixRefused` when ``text`` (pass ``name``'s output for ``program``) adds, removes
    or changes an instruction of code that reaches an address by a numeric offset from ``s_getpc_b64``."""
    if constant_pc_offset(program) is None or text == program.source.render():
        return
    from .verify import reparse

    before = [ins.text() for ins in program.instrs]
    after = [ins.text() for ins in reparse(text, program.path).program.instrs]
    if before == after:
        return
    if len(after) > len(before):
        what = f"adds {len(after) - len(before)} instruction{'s' if len(after) - len(before) != 1 else ''}"
    elif len(after) < len(before):
        what = f"removes {len(before) - len(after)} instruction{'s' if len(before) - len(after) != 1 else ''}"
    else:
        what = "moves or rewrites instructions"
    raise refusal(program, f"of --{name} {what}")
