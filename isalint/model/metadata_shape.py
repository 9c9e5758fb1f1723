"""Guards on the ``.amdgpu_metadata`` document before and after it is parsed.

Before: a document nested deeper than :data:`MAX_DEPTH` is not handed to a YAML reader (the
recursive readers would exhaust the stack; PyYAML's C loader crashes the process). After: every
field the analyses read is kept only when it has the type and range the AMDGPU metadata format
gives it, so the rules and the emulator never meet ``.args: 5`` or ``.offset: 'x'``.
"""
from __future__ import annotations

import re

MAX_DEPTH = 64
MAX_DOCUMENT_CHARS = 16 * 1024 * 1024
_UINT32 = 1 << 32
_BRACKETS = re.compile(r"[\[\]{}]")
_LEADING_DASHES = re.compile(r"(?:-[ ]+)+")

_INT_FIELDS = frozenset("""
.group_segment_fixed_size .private_segment_fixed_size .kernarg_segment_size .kernarg_segment_align
.wavefront_size .sgpr_count .vgpr_count .agpr_count .sgpr_spill_count .vgpr_spill_count
.max_flat_workgroup_size .uniform_work_group_size .workgroup_processor_mode .uses_dynamic_stack
""".split())
_INT_LIST_FIELDS = frozenset((".reqd_workgroup_size", ".workgroup_size_hint", ".language_version"))
_STR_FIELDS = frozenset((".name", ".symbol", ".language", ".vec_type_hint", ".device_enqueue_symbol", ".kind"))
_ARG_INT_FIELDS = frozenset((".offset", ".size", ".pointee_align"))
_ARG_STR_FIELDS = frozenset((".name", ".type_name", ".value_kind", ".address_space", ".access", ".actual_access"))


def too_deep(text: str) -> bool:
    """Whether the document may nest more than MAX_DEPTH collections (an over-estimate is fine)."""
    indents: list[int] = []
    flow = 0
    for line in text.split("\n"):
        body = line.lstrip(" ")
        if not body:
            continue
        indent = len(line) - len(body)
        while indents and indents[-1] >= indent:
            indents.pop()
        indents.append(indent)
        dashes = _LEADING_DASHES.match(body)
        depth_here = len(indents) + (dashes.group(0).count("-") if dashes else 0)
        if "[" in body or "{" in body or flow:
            for b in _BRACKETS.findall(body):
                flow = flow + 1 if b in "[{" else max(0, flow - 1)
                if depth_here + flow > MAX_DEPTH:
                    return True
        if depth_here + flow > MAX_DEPTH:
            return True
    return False


def kernel_entries(doc) -> dict[str, dict]:
    """{kernel name: its entry, with fields of the wrong shape left out} of a parsed document."""
    out: dict[str, dict] = {}
    if not isinstance(doc, dict):
        return out
    kernels = doc.get("amdhsa.kernels")
    if not isinstance(kernels, list):
        return out
    for entry in kernels:
        if not isinstance(entry, dict):
            continue
        entry = _well_shaped(entry)
        name = entry.get(".name") or entry.get(".symbol", "").removesuffix(".kd")
        out[name] = entry
    return out


def _is_uint32(value) -> bool:
    return isinstance(value, int) and 0 <= value < _UINT32


def _well_shaped(entry: dict) -> dict:
    out = {}
    for key, value in entry.items():
        if key in _INT_FIELDS:
            ok = _is_uint32(value)
        elif key in _INT_LIST_FIELDS:
            ok = isinstance(value, list) and all(_is_uint32(v) and not isinstance(v, bool) for v in value)
        elif key in _STR_FIELDS:
            ok = isinstance(value, str)
        elif key == ".args":
            ok = isinstance(value, list)
            if ok:
                value = [_well_shaped_arg(a) for a in value if isinstance(a, dict)]
        else:
            ok = isinstance(key, str)
        if ok:
            out[key] = value
    return out


def _well_shaped_arg(arg: dict) -> dict:
    out = {}
    for key, value in arg.items():
        if key in _ARG_INT_FIELDS:
            ok = _is_uint32(value) and not isinstance(value, bool)
        elif key in _ARG_STR_FIELDS:
            ok = isinstance(value, str)
        else:
            ok = isinstance(key, str)
        if ok:
            out[key] = value
    return out
