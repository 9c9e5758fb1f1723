"""Run code objects on a real AMD GPU through the HIP module API (ctypes on libamdhip64).

Only what validation needs: load a ``.hsaco`` (hipModuleLoadData), find the kernel
(hipModuleGetFunction), copy buffers, launch with a packed kernarg buffer
(hipModuleLaunchKernel with HIP_LAUNCH_PARAM_BUFFER_POINTER), time launches with events.
:class:`NoDevice` is raised (one line) when the runtime or a GPU is missing.
"""
from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass

import numpy as np

_LIB_NAMES = ("libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5")
_H2D, _D2H = 1, 2
_PARAM_BUFFER_POINTER, _PARAM_BUFFER_SIZE, _PARAM_END = 1, 2, 3


class HipError(RuntimeError):
    pass


class NoDevice(HipError):
    """No HIP runtime or no AMD GPU on this machine."""


def _load():
    paths = list(_LIB_NAMES)
    rocm = os.environ.get("ROCM_PATH", "/opt/rocm")
    paths = [os.path.join(rocm, "lib", n) for n in _LIB_NAMES] + paths
    last = None
    for p in paths:
        try:
            return ctypes.CDLL(p)
        except OSError as exc:
            last = exc
    raise NoDevice(f"no HIP runtime (libamdhip64) could be loaded: {last}")


class Hip:
    def __init__(self):
        self.lib = _load()
        self.lib.hipGetErrorString.restype = ctypes.c_char_p
        rc = self.lib.hipInit(0)
        n = ctypes.c_int(0)
        rc2 = self.lib.hipGetDeviceCount(ctypes.byref(n))
        if rc2 != 0 or n.value < 1:
            why = self._err(rc2 if rc2 else rc)
            raise NoDevice(f"no AMD GPU available to HIP ({why}); use --device emu")
        name = ctypes.create_string_buffer(256)
        self.device_name = ""
        if self.lib.hipDeviceGetName(name, 256, 0) == 0:
            self.device_name = name.value.decode(errors="replace")

    def _err(self, rc: int) -> str:
        s = self.lib.hipGetErrorString(rc)
        return s.decode() if s else f"error {rc}"

    def check(self, rc: int, what: str) -> None:
        if rc != 0:
            raise HipError(f"{what} failed: {self._err(rc)}")

    def malloc(self, nbytes: int) -> int:
        p = ctypes.c_void_p()
        self.check(self.lib.hipMalloc(ctypes.byref(p), ctypes.c_size_t(max(nbytes, 4))), "hipMalloc")
        return p.value

    def free(self, ptr: int) -> None:
        self.lib.hipFree(ctypes.c_void_p(ptr))

    def upload(self, ptr: int, data: np.ndarray) -> None:
        buf = np.ascontiguousarray(data)
        self.check(self.lib.hipMemcpy(ctypes.c_void_p(ptr), buf.ctypes.data_as(ctypes.c_void_p),
                                      ctypes.c_size_t(buf.nbytes), _H2D), "hipMemcpy to device")

    def download(self, ptr: int, nbytes: int) -> np.ndarray:
        out = np.empty(nbytes, dtype=np.uint8)
        self.check(self.lib.hipMemcpy(out.ctypes.data_as(ctypes.c_void_p), ctypes.c_void_p(ptr),
                                      ctypes.c_size_t(nbytes), _D2H), "hipMemcpy to host")
        return out

    def load_module(self, image: bytes):
        mod = ctypes.c_void_p()
        self._image = ctypes.create_string_buffer(image, len(image))
        self.check(self.lib.hipModuleLoadData(ctypes.byref(mod), self._image), "hipModuleLoadData")
        return mod

    def function(self, module, name: str):
        fn = ctypes.c_void_p()
        self.check(self.lib.hipModuleGetFunction(ctypes.byref(fn), module, name.encode()), "hipModuleGetFunction")
        return fn

    def launch(self, fn, grid, block, kernarg: bytes, lds: int = 0) -> None:
        arg = ctypes.create_string_buffer(kernarg, len(kernarg))
        size = ctypes.c_size_t(len(kernarg))
        extra = (ctypes.c_void_p * 5)(ctypes.c_void_p(_PARAM_BUFFER_POINTER), ctypes.cast(arg, ctypes.c_void_p),
                                      ctypes.c_void_p(_PARAM_BUFFER_SIZE),
                                      ctypes.cast(ctypes.pointer(size), ctypes.c_void_p), ctypes.c_void_p(_PARAM_END))
        dims = [ctypes.c_uint(x) for x in (*grid, *block)]
        self.check(self.lib.hipModuleLaunchKernel(fn, *dims, ctypes.c_uint(lds), None, None, extra),
                   "hipModuleLaunchKernel")

    def synchronize(self) -> None:
        self.check(self.lib.hipDeviceSynchronize(), "hipDeviceSynchronize")

    def time_launches(self, fn, grid, block, kernarg: bytes, repeats: int = 10) -> list[float]:
        """Milliseconds of each of ``repeats`` launches, measured with HIP events."""
        start, stop = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(self.lib.hipEventCreate(ctypes.byref(start)), "hipEventCreate")
        self.check(self.lib.hipEventCreate(ctypes.byref(stop)), "hipEventCreate")
        out = []
        try:
            for _ in range(repeats):
                self.check(self.lib.hipEventRecord(start, None), "hipEventRecord")
                self.launch(fn, grid, block, kernarg)
                self.check(self.lib.hipEventRecord(stop, None), "hipEventRecord")
                self.check(self.lib.hipEventSynchronize(stop), "hipEventSynchronize")
                ms = ctypes.c_float()
                self.check(self.lib.hipEventElapsedTime(ctypes.byref(ms), start, stop), "hipEventElapsedTime")
                out.append(ms.value)
        finally:
            self.lib.hipEventDestroy(start)
            self.lib.hipEventDestroy(stop)
        return out


@dataclass
class DeviceRun:
    buffers: dict[str, np.ndarray]
    times_ms: list[float]

    @property
    def median_ms(self) -> float:
        return float(np.median(self.times_ms)) if self.times_ms else float("nan")


def run_on_device(hip: Hip, hsaco: bytes, kernel, launch, repeats: int = 10) -> DeviceRun:
    """Run ``launch`` (an emulator :class:`Launch`) of the compiled ``kernel`` on the GPU.

    The buffers are uploaded, the kernel launched once for the results (buffers read back), then
    re-uploaded and launched ``repeats`` times for timing.
    """
    ptrs = {}
    try:
        for name, arr in launch.buffers.items():
            ptrs[name] = hip.malloc(np.asarray(arr).nbytes)
            hip.upload(ptrs[name], arr)
        kernarg = kernel.build_kernarg(None, launch, ptrs)
        module = hip.load_module(hsaco)
        fn = hip.function(module, kernel.kernel.name)
        hip.launch(fn, launch.grid, launch.block, kernarg)
        hip.synchronize()
        out = {name: hip.download(p, np.asarray(launch.buffers[name]).nbytes) for name, p in ptrs.items()}
        times = hip.time_launches(fn, launch.grid, launch.block, kernarg, repeats) if repeats else []
        return DeviceRun(out, times)
    finally:
        for p in ptrs.values():
            hip.free(p)
