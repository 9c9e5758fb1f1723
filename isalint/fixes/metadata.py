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
``s_movrel*``), or a call. The work is :func:`isalint.fixes.toolkit.counts.rewrite_counts`,
which every pass that changes register use also runs on its output.
"""
from __future__ import annotations

from . import FixResult
from .toolkit.counts import rewrite_counts

ONLY_METADATA = True


def apply(analysis, options: dict | None = None) -> FixResult:
    text, notes = rewrite_counts(analysis)
    if not notes:
        return FixResult(text, "metadata: every count already matches the code")
    return FixResult(text, "metadata: " + "; ".join(notes))
