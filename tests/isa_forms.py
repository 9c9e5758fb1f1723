"""Instruction lines synthesized from isalint's ISA data, every operand form per opcode.

Used by ``test_isa_coverage.py`` (LLVM's assembler as the oracle) and runnable on its own to
print the per-family figures: ``python tests/isa_forms.py`` (needs an LLVM that knows gfx1100).

Each form is a :class:`Form`: the opcode family (the encoding, or a family of spellings such as
``VOP3 DPP`` and ``alias``), the line, and whether it is a wave64 line. Registers are picked to
the widths the data gives (aligned as LLVM wants SGPR tuples); the forms cover what the syntax
lets a writer vary: ``_e32``/``_e64``/bare spellings, DPP16 and DPP8 on ``_dpp`` and
``_e64_dpp``, VOPC without its ``vcc_lo``, FLAT/GLOBAL/SCRATCH address modes and returning
atomics, MUBUF/MTBUF ``off``/``offen``/``idxen``/both and ``tfe``, MTBUF formats, hwreg
spellings, wave64 lane masks, and every alias of the alias table with its opcode's operands.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from isalint import isa
from isalint.isa import aliases

# Image instructions: vaddr/vdata widths follow dim/dmask/a16/d16, which the data does not
# model; compute GEMMs do not use them.
SKIPPED_ENCODINGS = {"MIMG": "image instructions (vaddr/vdata widths follow dim/dmask/a16/d16)"}

DPP16 = " quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0xf"
DPP8 = " dpp8:[7,6,5,4,3,2,1,0]"


@dataclass(frozen=True)
class Form:
    family: str
    line: str
    wave64: bool = False


class _Regs:
    def __init__(self):
        self.v, self.s = 10, 4

    def vgpr(self, n: int) -> str:
        r = f"v{self.v}" if n == 1 else f"v[{self.v}:{self.v + n - 1}]"
        self.v += n + 1
        return r

    def sgpr(self, n: int) -> str:
        align = 1 if n == 1 else (2 if n == 2 else 4)
        self.s = (self.s + align - 1) // align * align
        r = f"s{self.s}" if n == 1 else f"s[{self.s}:{self.s + n - 1}]"
        self.s += n
        return r


def _operands(info: isa.OpInfo, fixed: dict[str, str] | None = None, wave64: bool = False) -> list[str]:
    regs, out = _Regs(), []
    has_addr = any(o.name == "addr" for o in info.operands)
    for o in info.operands:
        if fixed and o.name in fixed:
            out.append(fixed[o.name])
        elif o.kind == "other":
            out.append({"tgt": "mrt0", "attr": "attr0.x", "vcc_lo": "vcc" if wave64 else "vcc_lo"}.get(o.name, o.name))
        elif o.kind == "label":
            out.append(".Ltarget")
        elif o.kind == "imm":
            out.append("0x1234" if o.name == "simm32" else "0")
        elif info.encoding in ("GLOBAL", "SCRATCH") and o.name == "saddr" and has_addr:
            out.append("off")
        elif info.klass == "waitcnt" and o.kind == "sgpr":
            out.append("null")
        elif o.kind in ("vgpr", "src"):
            out.append(regs.vgpr(o.regs))
        else:
            out.append(regs.sgpr(2 if (o.mask and wave64) else o.regs))
    return out


def _line(mn: str, ops: list[str], tail: str = "") -> str:
    return f"{mn} {', '.join(ops)}{tail}".rstrip()


def _family(info: isa.OpInfo, mn: str) -> str:
    if mn.endswith("_e64_dpp"):
        return "VOP3 DPP"
    if mn.endswith("_dpp"):
        return "DPP"
    return info.encoding


def _valu(mn: str, info: isa.OpInfo) -> list[Form]:
    fam = _family(info, mn)
    ops = _operands(info)
    if mn.endswith("_dpp"):
        forms = [Form(fam, _line(mn, ops, DPP16)), Form(fam, _line(mn, ops, DPP8))]
    else:
        forms = [Form(fam, _line(mn, ops))]
    if info.encoding == "VOPC" and any(o.optional for o in info.operands):
        required = [t for o, t in zip(info.operands, ops) if not o.optional]
        forms.append(Form(fam, _line(mn, required, DPP16 if mn.endswith("_dpp") else "")))
    if any(o.mask for o in info.operands) or (info.encoding in ("VOP2", "VOPC") and
                                               any(o.kind == "other" for o in info.operands)):
        tail = DPP16 if mn.endswith("_dpp") else ""
        forms.append(Form(fam + " wave64", _line(mn, _operands(info, wave64=True), tail), True))
    return forms


def _vopd(mn: str, info: isa.OpInfo) -> list[Form]:
    # VOPD bank rules: X and Y sources in different banks (reg % 4), destinations of opposite parity
    mov = isa.lookup("v_dual_mov_b32")
    if info.vopd == "xy":
        x = _operands(info, {"vdst": "v0", "src0": "v1", "vsrc1": "v2"})
        return [Form("VOPD", f"{_line(mn, x)} :: {_line('v_dual_mov_b32', ['v3', 'v6'])}")]
    y = _operands(info, {"vdst": "v3", "src0": "v6", "vsrc1": "v7"})
    return [Form("VOPD", f"{_line('v_dual_mov_b32', ['v0', 'v1'])} :: {_line(mn, y)}")]


def _flat(mn: str, info: isa.OpInfo) -> list[Form]:
    enc = info.encoding
    ret = " glc" if info.klass == "vmem_atomic" else ""
    specs = info.operands_for(len(info.operands) - 1) if ret else None
    forms = [Form(enc, _line(mn, _operands(info), ret))]
    if specs is not None:  # the atomic without a return register
        noret = isa.OpInfo(**{**info.__dict__, "operands": specs})
        forms.append(Form(enc, _line(mn, _operands(noret))))
    names = [o.name for o in info.operands]
    if "saddr" in names:
        # an SGPR-pair base with a 32-bit VGPR offset; scratch: an SGPR base, and no address at all
        if enc == "GLOBAL":
            forms.append(Form(enc, _line(mn, _operands(info, {"addr": "v30", "saddr": "s[40:41]"}), ret)))
        else:
            forms.append(Form(enc, _line(mn, _operands(info, {"addr": "v30", "saddr": "s40"}))))
            forms.append(Form(enc, _line(mn, _operands(info, {"addr": "off", "saddr": "s40"}))))
            forms.append(Form(enc, _line(mn, _operands(info, {"addr": "off", "saddr": "off"}), " offset:16")))
    return forms


def _buffer(mn: str, info: isa.OpInfo) -> list[Form]:
    # LLVM's order: format, then idxen/offen, then offset, then the cache policy
    enc = info.encoding
    fmt = " format:[BUF_FMT_32_FLOAT]" if enc == "MTBUF" else ""
    glc = " glc" if info.klass == "vmem_atomic" else ""
    forms = []
    for vaddr, mods in (("off", ""), ("v30", " offen"), ("v30", " idxen"), ("v[30:31]", " idxen offen")):
        forms.append(Form(enc, _line(mn, _operands(info, {"vaddr": vaddr}), fmt + mods + " offset:16" + glc)))
    vdata = next((o for o in info.operands if o.name == "vdata"), None)
    if info.klass == "vmem_load" and vdata is not None and enc == "MUBUF":  # LLVM has no MTBUF tfe
        wide = f"v[{40}:{40 + vdata.regs}]"
        forms.append(Form(enc, _line(mn, _operands(info, {"vdata": wide, "vaddr": "v30"}), fmt + " offen tfe")))
    if enc == "MTBUF":
        forms.append(Form(enc, _line(mn, _operands(info, {"vaddr": "off"}),
                                     " format:[BUF_DATA_FORMAT_32, BUF_NUM_FORMAT_FLOAT]")))
    return forms


def _sopk_hwreg(mn: str, info: isa.OpInfo) -> list[Form]:
    spellings = ("hwreg(HW_REG_MODE)", "hwreg(HW_REG_MODE, 0, 4)", "hwreg(1, 2, 3)", "{id: 1, offset: 0, size: 4}")
    return [Form(info.encoding, _line(mn, _operands(info, {"simm16": h}))) for h in spellings]


def forms_of(mn: str) -> list[Form]:
    info = isa.lookup(mn)
    if info.encoding in SKIPPED_ENCODINGS:
        return []
    if info.encoding == "VOPD":
        return _vopd(mn, info)
    if info.klass in ("valu", "trans"):
        return _valu(mn, info)
    if info.encoding in ("FLAT", "GLOBAL", "SCRATCH"):
        return _flat(mn, info)
    if info.encoding in ("MUBUF", "MTBUF") and any(o.name == "vaddr" for o in info.operands):
        return _buffer(mn, info)
    if any(o.name == "simm16" and o.kind == "imm" for o in info.operands) and mn.startswith(("s_getreg", "s_setreg")):
        return _sopk_hwreg(mn, info)
    tail = ""
    if info.encoding == "DS":
        tail = " gds" if re.search(r"gws|gs_reg|ordered_count", mn) else " offset:16"
        if "2addr" in mn:
            tail = " offset0:1 offset1:2"
    elif info.klass == "vmem_atomic":
        tail = " glc"
    return [Form(info.encoding, _line(mn, _operands(info), tail))]


def _alias_forms() -> list[Form]:
    out = []
    for alias, real in sorted(aliases.table().items()):
        for form in forms_of(real):
            head, _, rest = form.line.partition(" ")
            out.append(Form("alias", f"{alias} {rest}".rstrip(), form.wave64))
            break
        if isa.lookup(real + "_e32") is not None and isa.lookup(real + "_e64") is not None:
            form = forms_of(real + "_e64")[0]
            out.append(Form("alias", f"{alias}_e64 {form.line.partition(' ')[2]}"))
    return out


def all_forms() -> list[Form]:
    """Every synthesized line: each mnemonic of the data in all its forms, then the aliases."""
    out: list[Form] = []
    for mn in isa.all_mnemonics():
        out.extend(forms_of(mn))
    out.extend(_alias_forms())
    return out


if __name__ == "__main__":
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_isa_coverage import measure, report

    print(report(measure()))
