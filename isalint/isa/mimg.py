"""Operand widths of the image (MIMG) instructions, which depend on their modifiers.

The address (``vaddr``) holds one dword per address component: the extra arguments first (texel
offset ``_o``, LOD bias ``_b``, depth-compare value ``_c``), then the derivatives (``_d``), the
coordinates of the ``dim`` (x, y, z, slice, fragment...), then the LOD, clamp or mip level (``_l``,
``_cl``, ``_mip``). With ``a16`` the coordinates and the LOD/clamp are 16-bit and two share a
dword; with ``_g16`` the derivatives are 16-bit (two per dword, the count rounded up to even). A contiguous ``vaddr`` (``v[4:5]``) of more than 12 dwords is written as 16, and 8
registers are also accepted where 5 to 7 are needed; the non-sequential form (``[v4, v9]``, NSA)
names exactly one register per dword. The ray-tracing ``image_bvh_intersect_ray`` takes 11 dwords
(node pointer, ray extent, origin, direction and inverse direction, three each) and
``image_bvh64_intersect_ray`` 12 (a 64-bit node pointer); with ``a16`` the direction and inverse
direction are 16-bit and share three dwords (8 and 9). The data (``vdata``) holds one dword per
channel of ``dmask`` (4 for ``gather4`` and ``image_msaa_load``, which return one channel of four
texels or samples), halved and rounded up with ``d16``, plus one with ``tfe`` (the fetch status).
With ``lwe`` alone LLVM's code generator allocates the status dword too, but its assembler does not
count it: both widths are taken as written.

Facts: RDNA3 ISA guide, "Image Memory Instructions" (address VGPR ordering, A16, G16, D16, DMASK,
NSA); LLVM AMDGPU (``getAddrSizeMIMGOp``, the per-dim coordinate and gradient counts), whose
assembler applies the same widths.
"""
from __future__ import annotations

from math import ceil

# dim -> (coordinates, derivatives)
DIMS = {"1D": (1, 2), "2D": (2, 4), "3D": (3, 6), "CUBE": (3, 4), "1D_ARRAY": (2, 2), "2D_ARRAY": (3, 4),
        "2D_MSAA": (3, 4), "2D_MSAA_ARRAY": (4, 4)}


def _dim(modifiers: dict) -> tuple[int, int] | None:
    raw = modifiers.get("dim")
    if raw is None:
        return DIMS["1D"]
    name = raw.strip().upper()
    if name.startswith("SQ_RSRC_IMG_"):
        name = name[len("SQ_RSRC_IMG_"):]
    return DIMS.get(name)


# the ray-tracing instructions' address dwords, without and with a16
_BVH = {"image_bvh_intersect_ray": (11, 8), "image_bvh64_intersect_ray": (12, 9)}


def address_dwords(mnemonic: str, modifiers: dict) -> int | None:
    """The dwords of ``vaddr``; None where the ``dim`` is unknown."""
    if mnemonic in _BVH:
        return _BVH[mnemonic]["a16" in modifiers]
    if not mnemonic.startswith("image_") or mnemonic.startswith("image_bvh"):
        return None
    dim = _dim(modifiers)
    if dim is None:
        return None
    coords, grads = dim
    a16 = "a16" in modifiers
    if mnemonic == "image_get_resinfo":
        return 1  # the mip level only
    extra, comps, derivs, g16 = 0, coords, False, False
    if mnemonic.startswith(("image_sample", "image_gather4", "image_get_lod")):
        parts = set(mnemonic.split("_")[2:])
        extra = ("o" in parts) + ("b" in parts) + ("c" in parts)
        comps += ("l" in parts) + ("cl" in parts)
        derivs, g16 = "d" in parts, "g16" in parts
    elif "_mip" in mnemonic:
        comps += 1
    words = extra + (ceil(comps / 2) if a16 else comps)
    if derivs:
        words += (grads // 2 + (grads // 2) % 2) if g16 else grads
    return words


def address_widths(mnemonic: str, modifiers: dict, nsa: bool) -> tuple[int, ...] | None:
    """The register counts a written ``vaddr`` may have (see the module doc)."""
    n = address_dwords(mnemonic, modifiers)
    if n is None:
        return None
    if nsa:
        return (n,)
    if n > 12:
        return (16,)
    return (n, 8) if 5 <= n <= 7 else (n,)


def data_dwords(mnemonic: str, modifiers: dict) -> int | None:
    """The dwords of ``vdata`` (with ``lwe``'s status dword); None for the ``image_bvh*``
    instructions (fixed by the ISA data)."""
    widths = data_widths(mnemonic, modifiers)
    return widths[0] if widths else None


def data_widths(mnemonic: str, modifiers: dict) -> tuple[int, ...] | None:
    """The register counts a written ``vdata`` may have (see the module doc), the widest first."""
    if not mnemonic.startswith("image_") or mnemonic.startswith("image_bvh"):
        return None
    if mnemonic.startswith(("image_gather4", "image_msaa_load")):
        n = 4
    else:
        raw = modifiers.get("dmask")
        try:
            mask = int(raw, 0) & 0xF if raw is not None else 1
        except ValueError:
            return None
        n = max(1, bin(mask).count("1"))
    if "d16" in modifiers:
        n = ceil(n / 2)
    if "tfe" in modifiers:
        return (n + 1,)
    if "lwe" in modifiers:
        return (n + 1, n)
    return (n,)
