"""``isalint fix --metadata``: make every declared register count match the code.

Rewrites, per kernel, only the digits of

* ``.amdhsa_next_free_vgpr`` / ``.amdhsa_next_free_sgpr`` (the kernel descriptor the
  assembler encodes),
* ``.vgpr_count`` / ``.sgpr_count`` in the ``.amdgpu_metadata`` YAML,
* the compiler's ``; NumVgprs:``, ``; NumSgprs:``, ``; NumVGPRsForWavesPerEU:``,
  ``; NumSGPRsForWavesPerEU:``, ``; VGPRBlocks:``, ``; SGPRBlocks:`` and (when the
  VGPR count changes) ``; Occupancy:`` comments,

with the values META001 computes (LLVM's conventions: the descriptor counts
``s0..sN``, the metadata and comments add 2 SGPRs for VCC). Every other byte of the
file is kept. Refuses when a kernel's register use cannot be known: an instruction
isalint cannot decode, M0-relative register addressing (``v_movrel*``,
``s_movrel*``), or a call.
"""
from __future__ import annotations

from ..hw.registers import SGPRS, VGPRS, sgpr_blocks, vgpr_blocks
from ..model.resources import (comment_fields, compiler_is_legacy, descriptor_field, kernel_resources, metadata_fields,
                               occupancy)
from . import FixRefused, FixResult


def _targets(program, kernel, res, comments: dict, meta: dict, legacy: bool):
    """[(Field, new value, label)] for one kernel."""
    vg, sg = res.vgprs, res.sgprs
    total_s = sg + res.extra_sgprs
    out = []

    def add(fld, value, label):
        if fld is not None and fld.value != value:
            if fld.end == 0:
                raise FixRefused(f"kernel {kernel.name}: {label} is in a metadata document isalint cannot edit in "
                                 "place (not in the compiler's block style)")
            out.append((fld, value, label))

    old_v = None
    nfv = descriptor_field(kernel, ".amdhsa_next_free_vgpr")
    if nfv is not None:
        old_v = nfv.value
        add(nfv, vg, ".amdhsa_next_free_vgpr")
    add(descriptor_field(kernel, ".amdhsa_next_free_sgpr"), sg, ".amdhsa_next_free_sgpr")
    add(meta.get(".vgpr_count"), vg, ".vgpr_count")
    add(meta.get(".sgpr_count"), total_s, ".sgpr_count")
    num_v = comments.get("NumVgprs")
    num_s = comments.get("NumSgprs")
    add(num_v, vg, "NumVgprs")
    add(num_s, total_s, "NumSgprs")
    # the *ForWavesPerEU counts equal the plain ones unless an attribute raised them: keep a raise
    for key, plain, value in (("NumVGPRsForWavesPerEU", num_v, vg), ("NumSGPRsForWavesPerEU", num_s, total_s)):
        fld = comments.get(key)
        if fld is not None and (plain is None or fld.value == plain.value or fld.value < value):
            add(fld, value, key)
    add(comments.get("VGPRBlocks"), vgpr_blocks(vg, kernel.wave_size), "VGPRBlocks")
    add(comments.get("SGPRBlocks"), sgpr_blocks(total_s), "SGPRBlocks")
    occ_field = comments.get("Occupancy")
    if occ_field is not None and old_v is not None and old_v != vg:
        before = occupancy(kernel, vgprs=old_v, legacy=legacy)
        after = occupancy(kernel, vgprs=vg, legacy=legacy)
        if before is not None and after is not None and before.waves == occ_field.value:
            add(occ_field, after.waves, "Occupancy")
    return out


def apply(analysis, options: dict | None = None) -> FixResult:
    program = analysis.program
    source = program.source
    comments = comment_fields(program)
    metadata = metadata_fields(program)
    legacy = compiler_is_legacy(program)
    edits: dict[int, list[tuple[int, int, str]]] = {}
    notes: list[str] = []
    for kernel in program.kernels:
        if not kernel.descriptor:
            continue
        res = kernel_resources(program, kernel)
        if res.unknown:
            raise FixRefused(f"kernel {kernel.name}: {res.unknown[0]}, so the registers it uses are unknown")
        if res.vgprs > VGPRS or res.sgprs_used > SGPRS:
            raise FixRefused(f"kernel {kernel.name} uses registers that do not exist "
                             f"(v{res.max_vgpr}, s{res.max_sgpr}): no count can cover them")
        changes = _targets(program, kernel, res, comments.get(kernel.name, {}), metadata.get(kernel.name, {}),
                           legacy)
        for fld, value, label in changes:
            edits.setdefault(fld.line.number, []).append((fld.start, fld.end, str(value)))
            notes.append(f"{label} {fld.value} -> {value}")
        if changes:
            notes[-len(changes):] = [f"{kernel.name}: " + ", ".join(notes[-len(changes):])]
    if not edits:
        return FixResult(source.render(), "metadata: every count already matches the code")
    parts: list[str] = []
    for line in source.lines:
        text = line.text
        for start, end, new in sorted(edits.get(line.number, ()), reverse=True):
            text = text[:start] + new + text[end:]
        parts.append(text + line.eol)
    return FixResult("".join(parts), "metadata: " + "; ".join(notes))
