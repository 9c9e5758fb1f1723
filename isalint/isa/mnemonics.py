"""How a written mnemonic relates to its opcode: the encoding suffix and the VOPD prefix.

LLVM spells one opcode several ways: ``v_add_f32`` (VOP2), ``v_add_f32_e32``, ``v_add_f32_e64`` (VOP3),
``v_add_f32_dpp`` and ``v_add_f32_e64_dpp`` (DPP16/DPP8 on VOP2 or VOP3), ``v_add_f32_sdwa`` (older
targets), and ``v_dual_add_f32`` for a half of a VOPD pair. Everything that asks "which opcode is
this" goes through :func:`base_mnemonic`.
"""
from __future__ import annotations

# Longest first: "_e64_dpp" must not be read as "_dpp" on "v_x_e64".
ENCODING_SUFFIXES = ("_e64_dpp", "_e32_dpp", "_dpp", "_sdwa", "_e32", "_e64")
DPP_SUFFIXES = frozenset({"_e64_dpp", "_e32_dpp", "_dpp"})
VOPD_PREFIX = "v_dual_"


def split_encoding(mnemonic: str) -> tuple[str, str]:
    """(opcode name, encoding suffix or ""): ``v_add_f32_e64_dpp`` -> (``v_add_f32``, ``_e64_dpp``)."""
    for suffix in ENCODING_SUFFIXES:
        if mnemonic.endswith(suffix):
            return mnemonic[: -len(suffix)], suffix
    return mnemonic, ""


def base_mnemonic(mnemonic: str) -> str:
    """The opcode a mnemonic names, lowercase, without encoding suffix; a VOPD half ``v_dual_X`` is
    ``v_X``."""
    m = mnemonic.lower()
    if m.startswith(VOPD_PREFIX):
        return "v_" + m[len(VOPD_PREFIX):]
    return split_encoding(m)[0]


def is_dpp(mnemonic: str) -> bool:
    """Whether the spelling is a DPP encoding (``_dpp``, ``_e64_dpp``)."""
    return split_encoding(mnemonic.lower())[1] in DPP_SUFFIXES

# DPP controls that make a source read another lane (RDNA3 ISA guide, "DPP"): an instruction with one
# is not a function of its own lane's values.
CROSS_LANE_MODIFIERS = frozenset({"quad_perm", "row_shl", "row_shr", "row_ror", "row_mirror", "row_half_mirror",
                                  "row_bcast", "row_share", "row_xmask", "wave_shl", "wave_shr", "wave_rol",
                                  "wave_ror", "dpp8", "dpp"})
