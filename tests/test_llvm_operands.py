"""The registers isalint says each instruction writes and reads agree with LLVM.

Every distinct instruction of the shared kernel5.s and of the fixture kernels is
assembled in one batch with ``-show-inst``; LLVM's MCInst lists the outputs
first, then the inputs, with a tied input repeated (``v_fmac_f32``'s
accumulator). We compare, per instruction, the VGPR/SGPR/TTMP registers of
LLVM's outputs with our defs and the multiset of all its register operands
with ours (a ``defuse`` operand counted twice). Named special registers (vcc,
exec, m0, scc) are implicit in LLVM's e32 forms and are left out of the
comparison. This needs an LLVM that prints register names (the ziglang
build does); it is skipped otherwise.
"""
from __future__ import annotations

import re
from collections import Counter

import pytest
from conftest import all_real_kernels

from isalint.analysis import Analysis
from isalint.parse import read_file

_NAMED = re.compile(r"(VGPR|SGPR|TTMP)(\d+)")


def _toolchain_with_names():
    from isalint.validate.toolchain import ToolchainError, find_toolchain

    for kind in ("zig", None):
        try:
            tc = find_toolchain(kind, need_linker=False)
        except ToolchainError:
            continue
        probe = tc.show_inst(["v_mov_b32 v1, v2"])
        if probe and any(_NAMED.search(op.value) for op in probe[0].operands if op.kind == "Reg"):
            return tc
    pytest.skip("no gfx1100 assembler that prints register names (pip install ziglang)")


def _llvm_regs(value: str) -> list[str]:
    prefix = {"VGPR": "v", "SGPR": "s", "TTMP": "ttmp"}
    return [prefix[k] + n for k, n in _NAMED.findall(value)]


def _ours(ins):
    defs, regs = [], []
    for stmt_slots in ins.slots:
        for slot in stmt_slots:
            plain = [r for r in slot.regs if _NAMED.match(_upper(r))]
            if slot.role in ("def", "defuse"):
                defs.extend(plain)
            regs.extend(plain)
            if slot.role == "defuse":
                regs.extend(plain)
    return defs, regs


def _upper(reg: str) -> str:
    for short, long in (("ttmp", "TTMP"), ("v", "VGPR"), ("s", "SGPR")):
        if reg.startswith(short) and reg[len(short):].isdigit():
            return long + reg[len(short):]
    return reg


def _def_slot_count(ins) -> int:
    return sum(1 for stmt_slots in ins.slots for s in stmt_slots if s.role in ("def", "defuse")
               and (s.regs or s.operand.text == "null") and not (s.operand.kind == "special" and s.operand.text != "null"))


def test_defs_and_uses_agree_with_llvm():
    files = all_real_kernels()
    if not files:
        pytest.skip("no kernels")
    tc = _toolchain_with_names()
    instrs = {}
    for path in files:
        analysis = Analysis.from_source(read_file(str(path)))
        if analysis.program.wave64:
            continue  # the batch is assembled in wave32; wave64 lines need -mattr=+wavefrontsize64
        for ins in analysis.program.instrs:
            instrs.setdefault(ins.text(), ins)
    texts = list(instrs)
    results = tc.show_inst(texts)
    assert len(results) == len(texts)
    problems = []
    for text, res in zip(texts, results):
        ins = instrs[text]
        assert not ins.opaque, f"{text}: {ins.problem}"
        if not res.accepted:
            problems.append(f"{text}: LLVM rejects it: {res.error}")
            continue
        reg_ops = [op for op in res.operands if op.kind == "Reg"]
        llvm_all = Counter(r for op in reg_ops for r in _llvm_regs(op.value))
        defs, regs = _ours(ins)
        if "_d16" in ins.opcode and Counter(regs) - llvm_all == Counter(defs) and not llvm_all - Counter(regs):
            # a D16 load keeps the other half of its destination, so isalint reads it too; LLVM's
            # MCInst for these loads lists the destination once, without a tied input
            regs = list(llvm_all.elements())
        if llvm_all != Counter(regs):
            problems.append(f"{text}: registers LLVM {sorted(llvm_all.elements())} vs isalint {sorted(regs)}")
            continue
        n_out = _def_slot_count(ins)
        llvm_defs = [r for op in reg_ops[:n_out] for r in _llvm_regs(op.value)]
        if Counter(llvm_defs) != Counter(defs):
            problems.append(f"{text}: outputs LLVM {llvm_defs} vs isalint {defs}")
    assert not problems, f"{len(problems)} of {len(texts)} disagree:\n" + "\n".join(problems[:40])
    assert len(texts) > 100
