"""The bytes a GPU's NVLinks carried, as NVML counts them: a hardware cross-check of the exchange's count.

NVML's field values ``NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX`` / ``_RX`` (138 / 139) are cumulative counts,
in KiB, of the payload a GPU sent and received over all its NVLinks (protocol overhead excluded; the RAW
fields include it). A rank reads them before and after its timed runs; the difference over the number of
runs is what one run moved, beside what the exchange handed to NCCL. Reading them needs ``pynvml`` (the
``nvidia-ml-py`` package) and a driver that exposes the fields; without either, or for GPUs linked by PCIe
only, the table's column stays empty and the JSON says why. How often the driver refreshes the counters
is not documented: take the column as a cross-check, not a timing.
"""

from __future__ import annotations

from typing import Any

DATA_TX, DATA_RX = 138, 139
KIB = 1024


class NvlinkCounters:
    """One GPU's NVLink data counters (``read`` -> (tx bytes, rx bytes)), or ``why`` they cannot be read."""

    def __init__(self, torch: Any, index: int):
        self.why = ""
        self._nvml = None
        self._handle = None
        try:
            import pynvml

            pynvml.nvmlInit()
            self._nvml = pynvml
            self._handle = _handle(pynvml, torch, index)
            if self.read() is None:
                self.why = self.why or "NVML reports no NVLink throughput counters for this GPU"
        except Exception as e:       # no pynvml, no NVML, an old driver
            self.why = f"NVML's NVLink counters are not available ({type(e).__name__}: {str(e)[:120]})"
            self._nvml = None

    def read(self) -> tuple[int, int] | None:
        if self._nvml is None:
            return None
        try:
            values = self._nvml.nvmlDeviceGetFieldValues(self._handle, [DATA_TX, DATA_RX])
        except Exception as e:
            self.why = f"reading NVML's NVLink counters failed ({type(e).__name__})"
            return None
        out = []
        for v in values:
            if getattr(v, "nvmlReturn", 1) != 0:
                self.why = f"NVML answered {v.nvmlReturn} for the NVLink counters"
                return None
            out.append(int(v.value.ullVal) * KIB)
        return out[0], out[1]


def _handle(pynvml: Any, torch: Any, index: int):
    """NVML's handle of CUDA device ``index`` (by PCI address where torch gives it: NVML and CUDA may
    number devices differently)."""
    props = torch.cuda.get_device_properties(index)
    bus = getattr(props, "pci_bus_id", None)
    if bus is not None:
        address = f"{getattr(props, 'pci_domain_id', 0):08X}:{bus:02X}:{getattr(props, 'pci_device_id', 0):02X}.0"
        try:
            return pynvml.nvmlDeviceGetHandleByPciBusId(address)
        except Exception:
            pass
    return pynvml.nvmlDeviceGetHandleByIndex(index)


def per_run(before: tuple[int, int] | None, after: tuple[int, int] | None, runs: int) -> dict | None:
    """Bytes sent and received per run between two readings."""
    if before is None or after is None or runs <= 0:
        return None
    return {"tx": (after[0] - before[0]) / runs, "rx": (after[1] - before[1]) / runs}
