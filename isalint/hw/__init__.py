"""The target's facts: what gfx1100 (RDNA3, wave32) does, independent of any program.

One module per concern, each naming its sources (the RDNA3 ISA guide, LLVM, or the worklog's
measurements when a number is calibrated rather than documented):

* :mod:`.registers` — the register files a wave addresses (v0-v255, s0-s105, VCC), SGPR alignment,
  the descriptor's granulated register counts, the system SGPRs the hardware loads.
* :mod:`.vopd` — VOPD (dual-issue) legality of a pair of VALU halves, as LLVM's assembler enforces it.
* :mod:`.vgpr_banks` — the 4 VGPR banks and their operand caches, instruction by instruction
  (calibrated to the worklog's kernel 5 and kernel 6).
* :mod:`.lds_banks` — LDS banks: the conflict degree of one DS access and the padding that removes it.
* :mod:`.occupancy` — waves per SIMD from VGPRs, LDS and workgroup size (LLVM's occupancy model).
* :mod:`.timing` — the Radeon 7900 XTX as the throughput model of ``isalint estimate`` sees it: clock,
  compute units, latencies and bandwidths, each with its source or marked as calibrated.
* :mod:`.gpus` — the RDNA3 parts ``estimate --gpu`` knows (7900 XTX to Strix Halo): CUs, clocks,
  memory bandwidth, VGPR file, each from its AMD product page, and the peaks per data type.

Nothing here imports the program model, a rule or a pass; the layers above pass plain numbers or
parsed statements in.
"""
