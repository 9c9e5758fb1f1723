"""Assembly for another processor: what a file is when it holds no gfx11 instruction but is not
prose either. ``hipcc --save-temps`` writes the host's x86-64 ``.s`` beside the device's, so a
``*.s`` glob (a pre-commit hook) meets both; isalint skips the host file instead of failing."""
from __future__ import annotations

import re

# (what it is, a pattern found in its instruction or directive lines), most specific first
_MARKERS = (
    ("x86-64 assembly", re.compile(r"%(?:r(?:[a-d]x|[sd]i|[sb]p|\d{1,2}[dwb]?|ip)|e(?:[a-d]x|[sd]i|[sb]p)"
                                   r"|[xyz]mm\d+)\b|^\s*\.(?:intel|att)_syntax\b"
                                   r"|^\s*(?:pushq|popq|movq|leaq|callq|retq|endbr64)\b", re.M)),
    ("AArch64 assembly", re.compile(r"^\s*(?:stp|ldp)\s+x29\b|^\s*\.arch\s+armv8|^\s*\.aarch64\b", re.M)),
    ("ARM assembly", re.compile(r"^\s*\.(?:syntax\s+unified|arm|thumb|fpu)\b|^\s*\.cpu\s+cortex", re.M)),
    ("NVIDIA PTX", re.compile(r"^\s*\.target\s+sm_\d+|^\s*\.version\s+\d+\.\d+", re.M)),
    ("host assembly", re.compile(r"^\s*\.cfi_startproc\b", re.M)),
)
_AMDGPU = re.compile(r"\.amdgcn_target|\.amdhsa_kernel|amdgcn-amd-amdhsa")


def other_processor(source) -> str | None:
    """What the file is (``x86-64 assembly``) when it is assembly for a processor other than an
    AMD GPU, else None."""
    text = "\n".join(line.text for line in source.lines[:20000])
    if _AMDGPU.search(text):
        return None
    for what, pattern in _MARKERS:
        if pattern.search(text):
            return what
    return None
