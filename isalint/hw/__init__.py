"""The target's facts: what gfx1100 (RDNA3, wave32) does, independent of any program.

One module per concern, each naming its sources:

* :mod:`.timing` — the Radeon 7900 XTX as the throughput model of ``isalint estimate`` sees it:
  clock, compute units, latencies and bandwidths, each with its source or marked as calibrated.

Nothing here imports the program model, a rule or a pass.
"""
