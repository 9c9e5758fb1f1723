"""Register counts and metadata: make every count a file declares match its code.

Per kernel, only the digits of these fields change (LLVM's conventions: the descriptor counts ``s0..sN``,
the metadata and comments add 2 SGPRs when the code uses VCC):

* ``.amdhsa_next_free_vgpr`` / ``.amdhsa_next_free_sgpr`` (the kernel descriptor the assembler encodes),
* ``.vgpr_count`` / ``.sgpr_count`` in the ``.amdgpu_metadata`` YAML,
* the compiler's ``; NumVgprs:``, ``; NumSgprs:``, ``; NumVGPRsForWavesPerEU:``,
  ``; NumSGPRsForWavesPerEU:``, ``; VGPRBlocks:``, ``; SGPRBlocks:`` and (when the VGPR count changes)
  ``; Occupancy:`` comments.

The values are those META001 checks against (:func:`isalint.model.resources.kernel_resources`).
:func:`rewrite_counts` refuses (FixRefused) when a kernel's register use cannot be known — an
instruction isalint cannot decode, M0-relative register addressing, a call — or names registers that
do not exist. :func:`refresh_counts` is what a pass calls on its output: the same rewrite, and where it
refuses, the VGPR (and SGPR) fields raised to at least the registers the pass knows it added.
"""
from __future__ import annotations

import re

from ...hw.registers import SGPRS, VCC_SGPRS, VGPRS, sgpr_blocks, vgpr_blocks
from ...model.resources import (comment_fields, compiler_is_legacy, descriptor_field, kernel_resources,
                                metadata_fields, occupancy)
from .. import FixRefused
from .edits import Edits


def _targets(kernel, res, comments: dict, meta: dict, legacy: bool):
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
        # the comment is the compiler's count (LLVM's model), kept as the compiler would write it
        if before is not None and after is not None and before.compiler_waves == occ_field.value:
            add(occ_field, after.compiler_waves, "Occupancy")
    return out


def rewrite_counts(analysis) -> tuple[str, list[str]]:
    """The file with every declared count matching the code, and one note per changed kernel
    (``"kern: .amdhsa_next_free_vgpr 32 -> 8, ..."``; none when every count already matches)."""
    program = analysis.program
    comments = comment_fields(program)
    metadata = metadata_fields(program)
    legacy = compiler_is_legacy(program)
    edits = Edits(program)
    notes: list[str] = []
    for kernel in program.kernels:
        if not kernel.descriptor or kernel.first == kernel.last:
            continue  # an empty body: LLVM's counts of no code are left as they are
        res = kernel_resources(program, kernel)
        if res.unknown:
            raise FixRefused(f"kernel {kernel.name}: {res.unknown[0]}, so the registers it uses are unknown")
        if res.vgprs > VGPRS or res.sgprs_used > SGPRS:
            raise FixRefused(f"kernel {kernel.name} uses registers that do not exist "
                             f"(v{res.max_vgpr}, s{res.max_sgpr}): no count can cover them")
        changes = _targets(kernel, res, comments.get(kernel.name, {}), metadata.get(kernel.name, {}), legacy)
        for fld, value, _label in changes:
            edits.replace_span(edits.index_of_line(fld.line), fld.start, fld.end, str(value))
        if changes:
            notes.append(f"{kernel.name}: " + ", ".join(f"{label} {fld.value} -> {value}"
                                                         for fld, value, label in changes))
    return edits.render(), notes


def refresh_counts(text: str, path: str, vgprs: int, sgprs: int | None = None) -> str:
    """The counts of a rewritten file brought up to date with :func:`rewrite_counts`; where it refuses
    (it cannot see every register of some kernel), the VGPR fields it knows raised to at least
    ``vgprs`` and, given ``sgprs``, the SGPR fields to at least ``sgprs`` (plus VCC where the file's
    metadata and comments count it)."""
    from ...analysis import Analysis
    from ...parse.source import parse_text

    try:
        return rewrite_counts(Analysis.from_source(parse_text(text, path)))[0]
    except FixRefused:
        return raise_counts(text, vgprs, sgprs)


def raise_counts(text: str, vgprs: int, sgprs: int | None = None) -> str:
    """Every VGPR count field of ``text`` raised to at least ``vgprs`` (the granulated VGPRBlocks for
    wave32), and with ``sgprs`` every SGPR field to at least it (``.sgpr_count``, ``NumSgprs`` and
    ``SGPRBlocks`` with VCC's 2 when they already exceed the descriptor's count by them)."""

    def at_least(n):
        def sub(m):
            return m.group(1) + str(max(int(m.group(2)), n))
        return sub

    text = re.sub(r"(\.amdhsa_next_free_vgpr\s+)(\d+)", at_least(vgprs), text)
    text = re.sub(r"(\.vgpr_count:\s+)(\d+)", at_least(vgprs), text)
    text = re.sub(r"(;\s*NumVgprs:\s*)(\d+)", at_least(vgprs), text)
    text = re.sub(r"(;\s*NumVGPRsForWavesPerEU:\s*)(\d+)", at_least(vgprs), text)

    def blocks(m):
        old = int(m.group(2))
        return m.group(1) + str(max(old, -(-vgprs // 8) - 1))

    # The granulated count the descriptor encodes: blocks of 8 VGPRs in wave32, minus one.
    text = re.sub(r"(;\s*VGPRBlocks:\s*)(\d+)", blocks, text)
    if sgprs is None:
        return text
    declared = re.search(r"\.amdhsa_next_free_sgpr\s+(\d+)", text)
    counted = re.search(r"\.sgpr_count:\s+(\d+)", text) or re.search(r";\s*NumSgprs:\s*(\d+)", text)
    vcc = VCC_SGPRS if declared and counted and int(counted.group(1)) >= int(declared.group(1)) + VCC_SGPRS else 0
    text = re.sub(r"(\.amdhsa_next_free_sgpr\s+)(\d+)", at_least(sgprs), text)
    text = re.sub(r"(\.sgpr_count:\s+)(\d+)", at_least(sgprs + vcc), text)
    text = re.sub(r"(;\s*NumSgprs:\s*)(\d+)", at_least(sgprs + vcc), text)
    text = re.sub(r"(;\s*NumSGPRsForWavesPerEU:\s*)(\d+)", at_least(sgprs + vcc), text)

    def sblocks(m):
        return m.group(1) + str(max(int(m.group(2)), sgpr_blocks(sgprs + vcc)))

    text = re.sub(r"(;\s*SGPRBlocks:\s*)(\d+)", sblocks, text)
    return text
