"""Every gfx1100 line LLVM accepts is understood by the model, and the other way round.

The lines are synthesized from isalint's ISA data (``isa_forms.py``: each opcode in all its
operand forms, wave32 and wave64, and every alias of the alias table). LLVM's assembler is the
oracle, in one batch per wave size. A line is *understood* when the model matches all its
operands (no PARSE001), names the opcode LLVM prints, and agrees with LLVM on its registers: on
every register when the assembler prints register names (the ziglang build), on the number of
register operands otherwise. The share of LLVM-accepted lines the model understands must be at
least 99.5%; lines the model understands but LLVM rejects are counted the other way.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import pytest
from isa_forms import SKIPPED_ENCODINGS, Form, all_forms

from isalint.model.program import build_program
from isalint.parse import parse_text

_NAMED = re.compile(r"(VGPR|SGPR|TTMP)(\d+)")
_SUFFIX = re.compile(r"(_e64_dpp|_e32|_e64|_dpp)$")
GOAL = 0.995
# Opcodes of AMD's tables that LLVM 19 does not assemble for gfx1100 (the model reads them as the
# ISA defines them): the LDS-loading global/scratch forms, FLAT's csub, the bf16 VOPD dot
# product and s_endpgm_ordered_ps_done; and v_mov_b16/v_swap_b16, which LLVM 19 spells with
# 16-bit register halves.
# LLVM 22 (the ziglang build) differs from 19 here: it also drops the MUBUF LDS loads, DPP on
# v_pk_fmac_f16 and the aliases v_add_i16/v_sub_i16.
LLVM_GAPS = re.compile(r"^(global_load_lds_|scratch_load_lds_|flat_atomic_csub_u32 |v_dual_dot2acc_f32_bf16 |"
                       r"s_endpgm_ordered_ps_done|v_mov_b16(_e32|_e64)? |v_swap_b16(_e32)? |"
                       r"buffer_load_lds_|v_pk_fmac_f16_dpp |v_(add|sub)_i16 )")


def _toolchain():
    from isalint.validate.toolchain import ToolchainError, find_toolchain

    for kind in ("llvm", "zig", "rocm"):
        try:
            tc = find_toolchain(kind, need_linker=False)
        except ToolchainError:
            continue
        if tc.knows_gfx1100():
            return tc
    return None


@dataclass
class Figures:
    assembler: str = ""
    by_family: dict = field(default_factory=lambda: defaultdict(Counter))
    misses: list = field(default_factory=list)      # LLVM accepts, the model does not understand
    extras: list = field(default_factory=list)      # the model understands, LLVM rejects
    newer: int = 0                                   # RDNA3.5-only opcodes, not counted

    def total(self, key: str) -> int:
        return sum(c[key] for c in self.by_family.values())


def _base(name: str) -> str:
    return _SUFFIX.sub("", name.lower())


def _agrees(ins, res) -> str | None:
    """Why the model's reading of an accepted line differs from LLVM's, or None."""
    if ins is None:
        return "not an instruction line"
    if ins.opaque:
        return ins.problem
    llvm_names = (res.text or "").split("::")
    ours = ins.canonical.split(" :: ")
    if len(llvm_names) == len(ours):
        for theirs, mine in zip(llvm_names, ours):
            if _base(theirs.split()[0]) != _base(mine):
                return f"LLVM reads it as {theirs.split()[0]}, the model as {mine}"
    reg_ops = [op for op in res.operands if op.kind == "Reg"]
    if any(_NAMED.search(op.value) for op in reg_ops):
        prefix = {"VGPR": "v", "SGPR": "s", "TTMP": "ttmp"}
        theirs = {prefix[k] + n for op in reg_ops for k, n in _NAMED.findall(op.value)}
        mine = {r for slots in ins.slots for s in slots for r in s.regs if re.fullmatch(r"(v|s|ttmp)\d+", r)}
        if theirs != mine:
            return f"registers: LLVM {sorted(theirs)}, model {sorted(mine)}"
        return None
    # the VCC that LLVM's e32 syntax writes out is implicit in the MCInst (slot name vcc_lo)
    slots = [s for st_slots in ins.slots for s in st_slots if s.name != "vcc_lo"]
    n = sum(1 for s in slots if s.regs or s.operand.text == "null")
    ties = sum(1 for s in slots if s.role == "defuse" and s.regs)
    ties += sum(st.mnemonic.endswith("_dpp") for st in ins.stmts)
    if not n <= len(reg_ops) <= n + ties:
        return f"register operands: LLVM {len(reg_ops)}, model {n} (+{ties} tied)"
    return None


def _model(forms: list[Form], wave64: bool):
    text = "\n".join("\t" + f.line for f in forms) + "\n.Ltarget:\n\ts_endpgm\n"
    if wave64:
        text += ".amdhsa_kernel k\n\t.amdhsa_wavefront_size32 0\n.end_amdhsa_kernel\n"
    program = build_program(parse_text(text, "<forms>"))
    by_line = {ins.lineno: ins for ins in program.instrs}
    return [by_line.get(i + 1) for i in range(len(forms))]


def measure(tc=None) -> Figures:
    tc = tc or _toolchain()
    figs = Figures(assembler=" ".join(tc.assembler))
    forms = all_forms()
    for wave64 in (False, True):
        batch = [f for f in forms if f.wave64 == wave64]
        results = tc.show_inst([f.line for f in batch], mattr="+wavefrontsize64" if wave64 else None)
        newer_idx = [i for i, r in enumerate(results) if not r.accepted and "not supported on this GPU" in (r.error or "")]
        newer = set()
        if newer_idx:
            again = tc.show_inst([batch[i].line for i in newer_idx], mcpu="gfx1151")
            newer = {i for i, r in zip(newer_idx, again) if r.accepted}
        figs.newer += len(newer)
        instrs = _model(batch, wave64)
        for i, (form, res, ins) in enumerate(zip(batch, results, instrs)):
            if i in newer:
                continue
            c = figs.by_family[form.family]
            c["lines"] += 1
            if res.accepted:
                c["accepted"] += 1
                why = _agrees(ins, res)
                if why is None:
                    c["understood"] += 1
                else:
                    figs.misses.append(f"{form.line}    <- {why}")
            elif ins is not None and not ins.opaque:
                c["extra"] += 1
                c["known gap"] += bool(LLVM_GAPS.match(form.line))
                figs.extras.append(f"{form.line}    <- LLVM: {res.error}")
    return figs


def report(figs: Figures) -> str:
    rows = [f"assembler: {figs.assembler}",
            f"{'family':<16}{'lines':>7}{'LLVM ok':>9}{'understood':>12}{'share':>8}{'model only':>12}"]
    for fam in sorted(figs.by_family):
        c = figs.by_family[fam]
        share = c["understood"] / c["accepted"] if c["accepted"] else 1.0
        rows.append(f"{fam:<16}{c['lines']:>7}{c['accepted']:>9}{c['understood']:>12}{share:>8.1%}{c['extra']:>12}")
    acc, und = figs.total("accepted"), figs.total("understood")
    rows.append(f"{'all':<16}{figs.total('lines'):>7}{acc:>9}{und:>12}{und / acc:>8.2%}{figs.total('extra'):>12}")
    rows.append(f"not counted: {figs.newer} RDNA3.5-only lines; skipped: " + "; ".join(
        f"{k} ({v})" for k, v in SKIPPED_ENCODINGS.items()))
    return "\n".join(rows)


@pytest.fixture(scope="module")
def figures():
    tc = _toolchain()
    if tc is None:
        pytest.skip("no assembler that knows gfx1100 (llvm-mc-19, ROCm, or pip install ziglang)")
    return measure(tc)


def test_accepted_lines_are_understood(figures):
    print("\n" + report(figures))
    acc, und = figures.total("accepted"), figures.total("understood")
    assert acc > 4000
    assert und / acc >= GOAL, f"{und}/{acc} understood; misses:\n" + "\n".join(figures.misses[:60])


def test_understood_lines_are_accepted(figures):
    """The other direction: what the model reads as valid, LLVM assembles, but for the opcodes
    LLVM 19 lacks."""
    unexplained = [e for e in figures.extras if not LLVM_GAPS.match(e)]
    assert not unexplained, f"{len(unexplained)} lines the model understands are rejected:\n" + \
        "\n".join(unexplained[:60])


def test_every_alias_is_an_llvm_alias(figures):
    c = figures.by_family["alias"]
    assert c["lines"] >= 250
    # every alias of the table assembles (but the two LLVM 22 dropped) and means its opcode
    assert c["lines"] - c["accepted"] == c["known gap"], "\n".join(figures.extras)
    assert c["understood"] == c["accepted"], "\n".join(figures.misses)
