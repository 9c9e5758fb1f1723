"""Lines of gfx1100 syntax whose widths depend on modifiers, held to LLVM 19's assembler.

Image instructions of every dim, sampling variant, ``a16`` and address width (and register lists,
NSA) are assembled in one batch by ``llvm-mc-19``; no line it accepts may be opaque to the model
(a PARSE001 error on correct code). Skipped without ``llvm-mc-19``.
"""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from isalint.model.program import build_program
from isalint.parse import parse_text

MNEMONICS = ["image_sample", "image_sample_lz", "image_sample_c_d_cl_o", "image_sample_d_g16", "image_sample_b",
             "image_gather4_c_lz_o", "image_load", "image_load_mip", "image_store_mip", "image_get_resinfo",
             "image_get_lod", "image_msaa_load", "image_atomic_add", "image_sample_c_d", "image_sample_d_cl"]
DIMS = ["1D", "2D", "3D", "CUBE", "1D_ARRAY", "2D_ARRAY", "2D_MSAA", "2D_MSAA_ARRAY"]


def _lines() -> list[str]:
    out = []
    for m in MNEMONICS:
        samp = ", s[8:11]" if ("sample" in m or "gather" in m or "get_lod" in m) else ""
        vd, dm = ("v0", "dmask:0x1") if "atomic" in m else ("v[20:23]", "dmask:0xf")
        for d in DIMS:
            for a16 in ("", " a16"):
                for n in [*range(1, 14), 16]:
                    va = "v4" if n == 1 else f"v[4:{3 + n}]"
                    out.append(f"\t{m} {vd}, {va}, s[0:7]{samp} {dm} dim:SQ_RSRC_IMG_{d}{a16}")
            for n in range(2, 6):
                nsa = ", ".join(f"v{30 + 2 * i}" for i in range(n))
                out.append(f"\t{m} {vd}, [{nsa}], s[0:7]{samp} {dm} dim:SQ_RSRC_IMG_{d}")
    for mask, vd in (("0x1", "v0"), ("0x3", "v[0:1]"), ("0x7", "v[0:2]"), ("0x5", "v[0:1]")):
        for extra in ("", " tfe", " d16"):
            out.append(f"\timage_load {vd}, v[4:5], s[0:7] dmask:{mask} dim:SQ_RSRC_IMG_2D{extra}")
    out.append("\timage_load v[0:2], v[4:5], s[0:7] dmask:0x3 dim:SQ_RSRC_IMG_2D tfe")
    out.append("\timage_load v0, v[4:5], s[0:7] dmask:0x3 dim:SQ_RSRC_IMG_2D d16")
    return out


@pytest.mark.skipif(shutil.which("llvm-mc-19") is None, reason="llvm-mc-19 not installed")
def test_no_image_line_llvm_accepts_is_opaque(tmp_path):
    lines = _lines()
    text = "\n".join(lines) + "\n"
    src = tmp_path / "image.s"
    src.write_text(text)
    run = subprocess.run(["llvm-mc-19", "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1100", str(src), "-o", "/dev/null"],
                         capture_output=True, text=True, timeout=120)
    rejected = {int(n) for n in re.findall(r"image\.s:(\d+):\d+: error", run.stderr)}
    program = build_program(parse_text(text))
    opaque = {ins.lineno for ins in program.instrs if ins.opaque}
    accepted = [n for n in range(1, len(lines) + 1) if n not in rejected]
    assert len(accepted) > 200  # the batch holds real instructions, not only rejected ones
    refused = [f"{lines[n - 1].strip()}: {program.instrs[n - 1].problem}" for n in accepted if n in opaque]
    assert not refused, "\n".join(refused[:20])
