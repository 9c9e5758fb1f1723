"""The register files a gfx1100 wave addresses, and how their sizes are declared.

Sources:

* RDNA3 ISA guide, chapter 3 "Kernel State": a wave addresses VGPRs v0-v255 and SGPRs s0-s105; VCC is a
  separate 64-bit register (``vcc_lo``/``vcc_hi``); "quad-alignment of SGPRs is required for operation on
  more than 64 bits", and a 64-bit SGPR operand starts at an even register (LLVM's assembler rejects
  ``s[3:4]``).
* LLVM AMDGPUUsage, "Code Object V3+ kernel descriptor": ``GRANULATED_WORKITEM_VGPR_COUNT`` counts blocks of
  8 VGPRs in wave32 (4 in wave64) minus one, ``GRANULATED_WAVEFRONT_SGPR_COUNT`` blocks of 8 SGPRs minus one;
  the ``.sgpr_count`` of the metadata and the compiler's ``NumSgprs`` comment add 2 for VCC when the code
  uses it; "Initial Kernel Execution State": the system SGPRs enabled by the ``.amdhsa_system_sgpr_*``
  fields are loaded right after the user SGPRs.
"""
from __future__ import annotations

VGPRS = 256  # v0-v255
SGPRS = 106  # s0-s105
TTMPS = 16  # ttmp0-ttmp15, the trap handler's SGPRs
VCC_SGPRS = 2  # what the metadata and comments add to the SGPR count for VCC

# The scalar operand numbers after s0-s105 (RDNA3 ISA guide, "Scalar operands": the SSRC encodings)
VCC_LO, VCC_HI = 106, 107
TTMP0 = 108
NULL = 124
M0 = 125
EXEC_LO, EXEC_HI = 126, 127
SCALAR_OPERANDS = 128  # s0-s105, VCC, the TTMPs, NULL, M0 and EXEC: the scalar register numbers

# Descriptor fields that each make the hardware load one system SGPR after the user SGPRs.
SYSTEM_SGPR_FIELDS = (".amdhsa_system_sgpr_workgroup_id_x", ".amdhsa_system_sgpr_workgroup_id_y",
                      ".amdhsa_system_sgpr_workgroup_id_z", ".amdhsa_system_sgpr_workgroup_info")


def sgpr_alignment(count: int) -> int:
    """The register an operand of ``count`` SGPRs must start at a multiple of: 1, 2 (64 bits) or 4."""
    return 1 if count <= 1 else 2 if count == 2 else 4


def vgpr_blocks(vgprs: int, wave_size: int) -> int:
    """The descriptor's granulated VGPR count (blocks of 8 in wave32, 4 in wave64, minus one)."""
    g = 8 if wave_size == 32 else 4
    return -(-max(1, vgprs) // g) - 1


def sgpr_blocks(sgprs: int) -> int:
    """The descriptor's granulated SGPR count (blocks of 8, minus one)."""
    return -(-max(1, sgprs) // 8) - 1
