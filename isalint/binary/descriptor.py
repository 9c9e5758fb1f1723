"""The 64-byte AMDHSA kernel descriptor of a gfx11 kernel, as ``.amdhsa_*`` directives.

Layout and fields per LLVM's AMDGPU usage document, "Kernel Descriptor" (code object v3+) and the
COMPUTE_PGM_RSRC1/2/3 register fields for GFX10/GFX11: byte 0 group segment size, 4 private segment
size, 8 kernarg size, 16 the code entry offset (signed 64-bit), 44 RSRC3, 48 RSRC1, 52 RSRC2, 56 the
kernel code properties. The directives come out in the order ``llvm-objdump`` prints them, so that
the LLVM assembler builds the same 64 bytes from them (the entry offset is a relocation there).
"""
from __future__ import annotations

import struct

SIZE = 64

# (directive, word, low bit, width): word is "rsrc1", "rsrc2", "rsrc3" or "props"
_RSRC1 = (
    (".amdhsa_float_round_mode_32", 12, 2), (".amdhsa_float_round_mode_16_64", 14, 2),
    (".amdhsa_float_denorm_mode_32", 16, 2), (".amdhsa_float_denorm_mode_16_64", 18, 2),
    (".amdhsa_dx10_clamp", 21, 1), (".amdhsa_ieee_mode", 23, 1), (".amdhsa_fp16_overflow", 26, 1),
    (".amdhsa_workgroup_processor_mode", 29, 1), (".amdhsa_memory_ordered", 30, 1),
    (".amdhsa_forward_progress", 31, 1),
)
_RSRC2 = (
    (".amdhsa_enable_private_segment", 0, 1), (".amdhsa_system_sgpr_workgroup_id_x", 7, 1),
    (".amdhsa_system_sgpr_workgroup_id_y", 8, 1), (".amdhsa_system_sgpr_workgroup_id_z", 9, 1),
    (".amdhsa_system_sgpr_workgroup_info", 10, 1), (".amdhsa_system_vgpr_workitem_id", 11, 2),
    (".amdhsa_exception_fp_ieee_invalid_op", 24, 1), (".amdhsa_exception_fp_denorm_src", 25, 1),
    (".amdhsa_exception_fp_ieee_div_zero", 26, 1), (".amdhsa_exception_fp_ieee_overflow", 27, 1),
    (".amdhsa_exception_fp_ieee_underflow", 28, 1), (".amdhsa_exception_fp_ieee_inexact", 29, 1),
    (".amdhsa_exception_int_div_zero", 30, 1),
)
_PROPS = (
    (".amdhsa_user_sgpr_dispatch_ptr", 1, 1), (".amdhsa_user_sgpr_queue_ptr", 2, 1),
    (".amdhsa_user_sgpr_kernarg_segment_ptr", 3, 1), (".amdhsa_user_sgpr_dispatch_id", 4, 1),
    (".amdhsa_user_sgpr_private_segment_size", 6, 1),
)
# RSRC3 on GFX11: SHARED_VGPR_COUNT [3:0], INST_PREF_SIZE [9:4], TRAP_ON_START 10, TRAP_ON_END 11,
# IMAGE_OP 31 (the assembler sets them from other directives or not at all)
_RSRC3 = (("SHARED_VGPR_COUNT", 0, 4), ("INST_PREF_SIZE", 4, 6), ("TRAP_ON_START", 10, 1),
          ("TRAP_ON_END", 11, 1), ("IMAGE_OP", 31, 1))
WAVEFRONT_SIZE32 = 10  # bit of the kernel code properties
USES_DYNAMIC_STACK = 11


class Descriptor:
    """The fields of one kernel descriptor."""

    def __init__(self, raw: bytes):
        if len(raw) != SIZE:
            raise ValueError(f"a kernel descriptor is {SIZE} bytes, not {len(raw)}")
        self.raw = bytes(raw)
        (self.group_segment, self.private_segment, self.kernarg_size, _r0, self.entry_offset) = \
            struct.unpack_from("<IIIIq", raw, 0)
        self.rsrc3, self.rsrc1, self.rsrc2 = struct.unpack_from("<III", raw, 44)
        self.props, = struct.unpack_from("<H", raw, 56)

    @property
    def wave64(self) -> bool:
        return not (self.props >> WAVEFRONT_SIZE32) & 1

    @property
    def next_free_vgpr(self) -> int:
        """GRANULATED_WORKITEM_VGPR_COUNT (RSRC1 [5:0]) in registers: blocks of 8 in wave32 and 4 in
        wave64 on GFX10+."""
        return ((self.rsrc1 & 0x3F) + 1) * (4 if self.wave64 else 8)

    @property
    def next_free_sgpr(self) -> int:
        """GRANULATED_WAVEFRONT_SGPR_COUNT (RSRC1 [9:6]) in registers (LLVM writes 0 on GFX10+: every
        wave has all its SGPRs)."""
        return ((self.rsrc1 >> 6 & 0xF) + 1) * 8

    @property
    def user_sgpr_count(self) -> int:
        return self.rsrc2 >> 1 & 0x1F

    def implied_user_sgprs(self) -> int:
        """The user SGPRs the enabled inputs take (dispatch, queue and kernarg pointers and the
        dispatch id two each, the private segment size one), as the assembler counts them."""
        p = self.props
        return 2 * ((p >> 1 & 1) + (p >> 2 & 1) + (p >> 3 & 1) + (p >> 4 & 1)) + (p >> 6 & 1)

    def directives(self, name: str, next_free_sgpr: int | None = None, reserve_vcc: bool = False,
                   next_free_vgpr: int | None = None) -> list[str]:
        """The ``.amdhsa_kernel NAME`` block, one line per entry. The SGPR count is not in a GFX10+
        descriptor: ``next_free_sgpr`` and ``reserve_vcc`` give it (from the metadata and the code)."""
        out = [f".amdhsa_kernel {name}",
               f"\t.amdhsa_group_segment_fixed_size {self.group_segment}",
               f"\t.amdhsa_private_segment_fixed_size {self.private_segment}",
               f"\t.amdhsa_kernarg_size {self.kernarg_size}"]
        if self.user_sgpr_count != self.implied_user_sgprs():
            out.append(f"\t.amdhsa_user_sgpr_count {self.user_sgpr_count}")
        for field, lo, width in _RSRC3:
            value = self.rsrc3 >> lo & ((1 << width) - 1)
            if field == "SHARED_VGPR_COUNT" and value:
                out.append(f"\t.amdhsa_shared_vgpr_count {value}")
            elif field == "INST_PREF_SIZE" and value:
                out.append(f"\t.amdhsa_inst_pref_size {value}")
            else:
                out.append(f"\t; {field} {value}")
        vgprs = self.next_free_vgpr
        granule = 4 if self.wave64 else 8
        if next_free_vgpr is not None and 0 < next_free_vgpr <= vgprs and vgprs - next_free_vgpr < granule:
            vgprs = next_free_vgpr  # the exact count the descriptor's blocks were rounded up from
        out += [f"\t.amdhsa_next_free_vgpr {vgprs}",
                f"\t.amdhsa_reserve_vcc {int(reserve_vcc)}",
                "\t.amdhsa_reserve_xnack_mask 0",
                f"\t.amdhsa_next_free_sgpr {self.next_free_sgpr if next_free_sgpr is None else next_free_sgpr}"]
        out += [f"\t{d} {self.rsrc1 >> lo & ((1 << w) - 1)}" for d, lo, w in _RSRC1]
        out += [f"\t{d} {self.rsrc2 >> lo & ((1 << w) - 1)}" for d, lo, w in _RSRC2]
        out += [f"\t{d} {self.props >> lo & ((1 << w) - 1)}" for d, lo, w in _PROPS]
        out.append(f"\t.amdhsa_wavefront_size32 {0 if self.wave64 else 1}")
        if self.props >> USES_DYNAMIC_STACK & 1:
            out.append("\t.amdhsa_uses_dynamic_stack 1")
        for field, value in self.unwritten():
            out.append(f"\t; {field} {value}: in the descriptor, but no directive writes it on gfx11")
        out.append(".end_amdhsa_kernel")
        return out

    def unwritten(self) -> list[tuple[str, int]]:
        """Nonzero descriptor fields the assembler's directives cannot set on GFX10+ (clang's object
        writer fills GRANULATED_WAVEFRONT_SGPR_COUNT, which the ISA reserves there): the bytes a
        re-assembled listing differs in."""
        out = []
        for field, lo, width in (("GRANULATED_WAVEFRONT_SGPR_COUNT", 6, 4), ("PRIORITY", 10, 2), ("PRIV", 20, 1),
                                 ("DEBUG_MODE", 22, 1), ("BULKY", 24, 1), ("CDBG_USER", 25, 1)):
            value = self.rsrc1 >> lo & ((1 << width) - 1)
            if value:
                out.append((field, value))
        return out
